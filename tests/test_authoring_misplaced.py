"""Definitions written one level off: a tool's ``horis:arg`` outside its ``horis:takes``, a
proposal's query given to ``horis:candidates`` as the string itself, a count on a node shape,
an action step typed a decision step. Each was said only by what followed from it (a bind
told to "use one of: " and nothing, a second error at ``<graph>`` named by the whole query,
pySHACL's words at the shape's line, "add horis:otherwise" to a step meant to act); each is
now one error at the line of the slip, saying what was meant.

Each test edits one place of a shipped workflow or ontology (found by its text) and loads it
as ``horismos validate`` does.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from forked import horismos_forked
from workflow_edits import REBOOKING, TRIAGE, edited, ontology_edited, problems, the_error

ASSIGN_TAKES = """    horis:takes [
        horis:arg [ horis:name "patient" ; horis:type :Patient ] ;
        horis:arg [ horis:name "queue"   ; horis:type :AcuityLevel ]
    ] ;
"""
ASSIGN_EFFECT = """    horis:effect [
        horis:subject "patient" ;
        horis:asserts [ horis:property :queuedAt ; horis:value horis:now ] ;
        horis:asserts [ horis:property :queueRef ; horis:type xsd:string ]
    ] ;
"""
CANDIDATES = """    horis:candidates [ horis:query \"\"\"
        ?this :flight ?old .
        ?old :status :Cancelled ; :destination ?dest .
        ?option a :Flight ; :status :Scheduled ; :destination ?dest ; :seatsLeft ?seats .
        FILTER (?seats > 0 && ?option != ?old)\"\"\" ] ;
"""
SHAPE = "    sh:targetClass :Patient ;\n"


# -- a tool's arguments outside horis:takes --------------------------------------------------


def test_an_argument_written_on_the_tool_itself_is_one_error_saying_where_it_goes(
        tmp_path: Path) -> None:
    """``horis:arg`` on the tool was read as no argument: the effect's subject "is not an
    argument of the tool (arguments: none)" and the step was told to "use one of: " with
    nothing after. Its arguments are read all the same, so neither follows."""
    path, line = edited(tmp_path, TRIAGE, ASSIGN_TAKES,
                        '    horis:arg [ horis:name "patient" ; horis:type :Patient ] ;\n'
                        '    horis:arg [ horis:name "queue"   ; horis:type :AcuityLevel ] ;\n')

    p = the_error(problems(path, TRIAGE))

    assert (p.file, p.line, p.node) == (str(path), line, ":ehr.assign_queue")
    assert p.message == ("2 horis:arg are written on the tool itself; a tool's arguments are "
                         "read inside its horis:takes [ … ] only, so as written it takes none")
    assert (p.hint or "").startswith("put them inside horis:takes: horis:takes [ horis:arg [")


def test_takes_naming_a_node_declared_nowhere_says_so_and_nothing_it_causes(
        tmp_path: Path) -> None:
    """``horis:takes :PatientArgs`` with :PatientArgs declared nowhere gave the same two
    consequences and never named :PatientArgs."""
    path, line = edited(tmp_path, TRIAGE, ASSIGN_TAKES, "    horis:takes :PatientArgs ;\n")

    p = the_error(problems(path, TRIAGE))

    assert (p.file, p.line, p.node) == (str(path), line, ":ehr.assign_queue")
    assert p.message == ("horis:takes :PatientArgs holds no horis:arg: :PatientArgs is declared "
                         "nowhere, so the tool's arguments are unknown")
    assert (p.hint or "").endswith("or declare :PatientArgs horis:arg [ … ]")


def test_takes_naming_a_node_that_holds_the_arguments_is_read(tmp_path: Path) -> None:
    """The arguments may be written on a named node: that is no slip."""
    path, _ = edited(tmp_path, TRIAGE, ASSIGN_TAKES, "    horis:takes :PatientArgs ;\n")
    with path.open("a", encoding="utf-8") as f:
        f.write('\n:PatientArgs horis:arg [ horis:name "patient" ; horis:type :Patient ] ;\n'
                '    horis:arg [ horis:name "queue" ; horis:type :AcuityLevel ] .\n')

    assert [p for p in problems(path, TRIAGE) if p.severity == "error"] == []


def test_binding_an_argument_of_a_tool_that_takes_none_says_it_takes_none(
        tmp_path: Path) -> None:
    """The hint listed the arguments to use: for a tool of none it read "use one of: "."""
    path, _ = edited(tmp_path, TRIAGE, ASSIGN_TAKES + ASSIGN_EFFECT, "")
    found = [p for p in problems(path, TRIAGE) if 'names argument "patient"' in p.message]

    (p,) = found or [problems(path, TRIAGE)]
    assert p.message == ('horis:bind names argument "patient", which :ehr.assign_queue does not '
                         "take")
    assert p.hint == ("it takes no arguments: remove the horis:bind, or declare the argument in "
                      ":ehr.assign_queue's horis:takes [ horis:arg [ … ] ]")
    assert "use one of" not in (p.hint or "")


# -- a proposal's query as the value of horis:candidates -------------------------------------


def test_candidates_given_the_query_string_is_one_error_at_its_line(tmp_path: Path) -> None:
    """Besides the step's error, the authoring shapes judged the string itself as the
    candidates node: a second error at ``<graph>``, with no file or line, named by the whole
    query text."""
    path, line = edited(tmp_path, REBOOKING, CANDIDATES,
                        CANDIDATES.replace("horis:candidates [ horis:query", "horis:candidates")
                        .replace('""" ] ;', '""" ;'))

    p = the_error(problems(path, REBOOKING))

    assert (p.file, p.line, p.node) == (str(path), line, ":ProposeFlight")
    assert p.message == ("horis:candidates is given the query itself, as a string; it takes a "
                         "node that holds the query as its horis:query")
    assert p.hint == ('write horis:candidates [ horis:query """…""" ]: the same pattern (or '
                      "SELECT), in brackets after horis:query")


def test_a_short_candidates_string_is_shown_in_the_fix(tmp_path: Path) -> None:
    path, _ = edited(tmp_path, REBOOKING, CANDIDATES,
                     '    horis:candidates "?this :flight ?old . ?option :replaces ?old ." ;\n')

    p = the_error(problems(path, REBOOKING))

    assert (p.hint or "").startswith(
        'write horis:candidates [ horis:query "?this :flight ?old . ?option :replaces ?old ." ]')


def test_candidates_without_a_query_tells_a_graph_pattern_will_do(tmp_path: Path) -> None:
    """The shapes' fix said the query was "a SPARQL SELECT string", where a graph pattern
    binding the options is what workflows/rebooking.ttl writes."""
    path, _ = edited(tmp_path, REBOOKING, CANDIDATES,
                     '    horis:candidates [ horis:rankBy "none" ] ;\n')

    found = [p for p in problems(path, REBOOKING) if "horis:query" in p.message]

    assert found, "\n".join(map(str, problems(path, REBOOKING)))
    assert all("SELECT string" not in p.message for p in found), found
    assert any("a graph pattern binding the options, or a SELECT of them" in p.message
               for p in found), found


# -- a constraint on a path's values written on the node shape ------------------------------


@pytest.mark.parametrize(("constraint", "does", "fix"), [
    pytest.param("sh:maxCount 1", "sh:maxCount counts the values of a path",
                 "sh:property [ sh:path … ; sh:maxCount 1 ]", id="maxCount"),
    pytest.param("sh:minCount 1", "sh:minCount counts the values of a path",
                 "sh:property [ sh:path … ; sh:minCount 1 ]", id="minCount"),
    pytest.param("sh:uniqueLang true", "sh:uniqueLang compares the language tags of a path's "
                 "values", "sh:property [ sh:path … ; sh:uniqueLang true ]", id="uniqueLang"),
    pytest.param("sh:lessThan :notifiedAt", "sh:lessThan compares the values of a path with "
                 "another property's", "sh:property [ sh:path … ; sh:lessThan :notifiedAt ]",
                 id="lessThan"),
    pytest.param("sh:qualifiedValueShape [ sh:class :Nurse ]", "sh:qualifiedValueShape counts "
                 "the values of a path that conform to a shape",
                 "sh:property [ sh:path … ; sh:qualifiedValueShape [ … ] ]", id="qualified"),
])
def test_a_path_constraint_on_a_node_shape_is_said_at_its_line(
        tmp_path: Path, constraint: str, does: str, fix: str) -> None:
    """pySHACL's "MaxCountConstraintComponent can only be present on a PropertyShape, not a
    NodeShape", at the shape's first line, with "write the constraint as SHACL defines it"."""
    ontology, line = ontology_edited(tmp_path, SHAPE, SHAPE + f"    {constraint} ;\n")

    p = the_error(problems(TRIAGE[0], TRIAGE, ontology))

    assert (p.file, p.line, p.node) == (str(ontology), line + 1, ":PatientShape")
    assert p.message == (f"{does}, and a node shape has none (it judges the node itself), so "
                         "no SHACL engine can load the shape")
    assert p.hint == f"move it into a property shape: {fix}"


def test_validate_says_a_count_on_a_node_shape_once_in_its_own_words(tmp_path: Path) -> None:
    ontology, line = ontology_edited(tmp_path, SHAPE, SHAPE + "    sh:maxCount 1 ;\n")

    done = horismos_forked(tmp_path, "validate", str(TRIAGE[0]), str(ontology), timeout=120)

    out = done.stdout.splitlines()
    assert out == [
        f"{ontology}:{line + 1}: error: :PatientShape: sh:maxCount counts the values of a "
        "path, and a node shape has none (it judges the node itself), so no SHACL engine can "
        "load the shape — move it into a property shape: sh:property [ sh:path … ; "
        "sh:maxCount 1 ]",
        "invalid: 1 error",
    ], done.stdout + done.stderr


def test_a_count_in_a_property_shape_says_nothing(tmp_path: Path) -> None:
    ontology, _ = ontology_edited(tmp_path, SHAPE, SHAPE + "    sh:property [ sh:path :acuity ;"
                                  " sh:maxCount 1 ] ;\n")

    assert [p for p in problems(TRIAGE[0], TRIAGE, ontology) if p.severity == "error"] == []


# -- an action step typed a decision step ------------------------------------------------------


def test_an_action_step_typed_a_decision_step_is_asked_if_it_meant_an_action_step(
        tmp_path: Path) -> None:
    """It was told it "has no horis:otherwise … add horis:otherwise", with a warning that
    each of its horis:tool, horis:requires and horis:bind "does nothing"."""
    path, line = edited(tmp_path, TRIAGE, ":NotifyNurse a horis:ActionStep ;",
                        ":NotifyNurse a horis:DecisionStep ;")

    found = problems(path, TRIAGE)

    assert len(found) == 1, "\n".join(map(str, found))
    p = found[0]
    assert (p.severity, p.file, p.line, p.node) == ("error", str(path), line, ":NotifyNurse")
    assert p.message == ("the step is declared a horis:DecisionStep, but it is written as an "
                         "action step (it names horis:tool, and has no horis:when rule nor "
                         "horis:otherwise)")
    assert p.hint == "did you mean `:NotifyNurse a horis:ActionStep`?"


def test_a_decision_step_with_rules_and_a_stray_tool_keeps_its_warning(tmp_path: Path) -> None:
    """A decision step written as one (its rules) that also names a tool is a decision step:
    its horis:tool is what does nothing."""
    path, _ = edited(tmp_path, TRIAGE, ":NotifyNurse a horis:ActionStep ;",
                     ":NotifyNurse a horis:DecisionStep ;\n"
                     '    horis:when [ horis:requires "?this :queueRef ?r" ; horis:next '
                     ":QueuePatient ] ;\n    horis:otherwise :QueuePatient ;")

    found = problems(path, TRIAGE)

    assert not any("did you mean `:NotifyNurse a" in (p.hint or "") for p in found), found
    assert any(p.message.startswith("horis:tool is a property of an action step") for p in found)
