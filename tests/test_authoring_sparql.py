"""SPARQL in a pattern that rdflib parses but that is wrong all the same, caught by
``horismos validate`` (and so before ``horismos run``'s first step): the file, the line and
what to write instead — never a traceback at the step, never a FILTER that is quietly false.

Each test edits one line of a shipped workflow (:mod:`workflow_edits`).
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
from pathlib import Path
from typing import cast

import pytest
from forked import horismos_forked
from workflow_edits import LAB, REBOOKING, ROOT, TRIAGE, edited, problems, the_error

from horismos import Agent, AuthoringError, World, load_definitions
from horismos._model import DecisionStep
from horismos._store_syntax import Refusal

LAB_FILTER = "FILTER (?v > ?limit)"
TRIAGE_QUEUE = "?this :acuity ?queue .\n"


def _run(path: Path, pair: tuple[Path, Path], example: str, tools: str,
         *extra: str) -> subprocess.CompletedProcess[str]:
    examples = ROOT / "examples" / example
    return horismos_forked(path.parent, "run", str(path), str(pair[1]), "--world",
                           str(examples / "world.ttl"), "--tools", str(examples / tools), "--all",
                           *extra, timeout=120)


# -- functions no store has ---------------------------------------------------------------


@pytest.mark.parametrize(("filter_", "said", "hint"), [
    pytest.param("FILTER (xsd:decmal(?v) > ?limit)", "calls xsd:decmal(…), which is no XSD cast",
                 "did you mean xsd:decimal?", id="cast-typo"),
    pytest.param("FILTER (:foo(?v))", "calls :foo(…), a function no store Horismos runs on has",
                 "call SPARQL's built-in functions (regex, str,", id="custom"),
])
@pytest.mark.parametrize("store", ["oxigraph", "memory"])
def test_a_function_no_store_has_is_an_error_at_its_line_before_the_run(
        tmp_path: Path, filter_: str, said: str, hint: str, store: str) -> None:
    """It validated; the run died with Oxigraph's RuntimeError as a 49-line traceback, and
    on the in-memory store the FILTER was silently false: a critical result filed."""
    path, line = edited(tmp_path, LAB, LAB_FILTER, filter_)
    p = _run(path, LAB, "lab", "lab_client.py", "--store", store)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stdout + p.stderr
    assert f"{path.name}:{line}: error: :IsCritical: horis:requires {said}" in p.stderr, p.stderr
    assert hint in p.stderr
    err = the_error(problems(path, LAB))
    assert (err.file, err.line) == (str(path), line)


@pytest.mark.parametrize(("new", "var", "offset"), [
    pytest.param("?this :acuity ?queue .\n                       BIND(:urgent AS ?queue)\n",
                 "queue", 1, id="bound-by-a-triple"),
    pytest.param('?this :acuity ?queue . BIND("x" AS ?this)\n', "this", 0, id="this"),
    pytest.param("?this :acuity ?queue . ?this :acuity ?q2 . BIND(?q2 AS ?q2)\n", "q2", 0,
                 id="itself"),
    pytest.param("?this :acuity ?queue .\n FILTER EXISTS { ?this :acuity ?q2 .\n"
                 "  BIND(:urgent AS ?q2) }\n", "q2", 2, id="in-exists"),
])
def test_a_bind_of_a_variable_already_bound_is_an_error_at_its_line(
        tmp_path: Path, new: str, var: str, offset: int) -> None:
    """SPARQL forbids it; rdflib parsed it, and the run died with Oxigraph's 'SyntaxError:
    error at 5:2: expected one of GRAPH, MINUS, [_]' as a traceback."""
    path, line = edited(tmp_path, TRIAGE, TRIAGE_QUEUE, new)
    p = _run(path, TRIAGE, "triage", "ehr_client.py")
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stdout + p.stderr
    assert (f"{path.name}:{line + offset}: error: :QueuePatient: horis:requires: BIND(… AS "
            f"?{var}) binds ?{var}, which the pattern has already bound before it: SPARQL "
            "forbids binding a variable already in scope") in p.stderr, p.stderr
    assert f"FILTER(?{var} = …) with the value instead of the BIND" in p.stderr


def test_other_sparql_the_store_refuses_is_an_error_in_its_words(tmp_path: Path) -> None:
    """A grouped subquery that selects a variable it does not group by: rdflib parses it,
    Oxigraph refuses it. Its message is the store's, never mistaken for a BIND."""
    path, line = edited(tmp_path, TRIAGE, TRIAGE_QUEUE, "?this :acuity ?queue .\n"
                        "  { SELECT ?this WHERE { ?this :acuity ?q } GROUP BY ?q }\n")
    err = the_error(problems(path, TRIAGE))
    assert err.file == str(path) and line <= (err.line or 0) <= line + 2, err
    assert err.message.startswith(
        "horis:requires is SPARQL the store does not evaluate (Oxigraph: error at "), err
    assert err.hint == "write it as SPARQL 1.1 allows inside WHERE { … }"


def test_a_query_the_store_refuses_at_run_fails_the_step_not_the_run() -> None:
    """What validate cannot judge the store may still refuse: the step fails with the
    store's reason, typed (a RunError the instance fails with), never a traceback."""
    agent = Agent.from_files(*LAB, tools={
        "lab_client.escalate": lambda result, clinician: {"escalatedTo": clinician},
        "lab_client.file_result": lambda result: {"archiveRef": "ARCH-1"}})
    step = cast(DecisionStep, agent.definitions.steps[agent.definitions.expand(":IsCritical")])
    pre = step.rules[0].requires
    refused = dataclasses.replace(pre, _plan=None, select_text=pre.select_text.replace(
        "?v > ?limit", "<http://example.org/lab#foo>(?v)"))
    object.__setattr__(step.rules[0], "requires", refused)
    k1 = agent.definitions.expand(":k1", exists=lambda _: True)
    run = agent.run(World.from_files(ROOT / "examples" / "lab" / "world.ttl",
                                     store="oxigraph"), focus=k1)
    assert run.status == "failed"
    assert "the store refused the query: The custom function <http://example.org/lab#foo> " \
        "is not supported" in str(run.error)


# -- a regular expression the store cannot read -------------------------------------------


@pytest.mark.parametrize(("call", "said"), [
    pytest.param('regex(?ref, "^Q-(URGENT")', 'the regular expression "^Q-(URGENT" cannot be '
                 "read (missing ), unterminated subpattern at position 3)", id="unclosed"),
    pytest.param('regex(?ref, "^Q-URGENT", "z")', 'the regular expression "^Q-URGENT" (flags '
                 '"z") cannot be read ("z" is not a flag of regex (i, m, s, x, q))', id="flag"),
])
def test_a_regex_the_store_cannot_read_is_an_error_at_its_line(
        tmp_path: Path, call: str, said: str) -> None:
    """It validated; every run was 'blocked: FILTER(regex(...)) does not hold for ?ref =
    "Q-URGENT-1"', blaming the data."""
    path, line = edited(tmp_path, TRIAGE, "?this :queueRef ?ref .\n",
                        f"?this :queueRef ?ref .\n FILTER({call})\n")
    p = _run(path, TRIAGE, "triage", "ehr_client.py")
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stdout + p.stderr
    assert f"{path.name}:{line + 1}: error: :NotifyNurse: horis:requires: {said}, so regex() " \
        "is an error for every value and the FILTER is never true" in p.stderr, p.stderr
    assert "close each group and class it opens, or escape a ( or [ meant literally" in p.stderr


def test_a_regex_the_store_reads_validates(tmp_path: Path) -> None:
    """Oxigraph, which evaluates it, is the judge, not Python's ``re``: an XPath class
    escape (a backslash, then p{Lu}) is one Python refuses and the store reads."""
    path, _ = edited(tmp_path, TRIAGE, "?this :queueRef ?ref .\n",
                     '?this :queueRef ?ref . FILTER(regex(?ref, "^\\\\\\\\p{Lu}-[0-9]", "i"))\n')
    assert "\\\\\\\\p{Lu}" in path.read_text(encoding="utf-8")
    assert [p for p in problems(path, TRIAGE) if p.severity == "error"] == []


# -- a candidates SELECT that drops the options ---------------------------------------------

CANDIDATES = ('horis:candidates [ horis:query """\n', '?option != ?old)""" ]')


def _candidates_select(tmp_path: Path, select: str, old: str = "?option") -> tuple[Path, int]:
    """rebooking.ttl's candidates pattern as ``SELECT … WHERE { … }``, ``?option`` in the
    WHERE renamed ``old``."""
    text = REBOOKING[0].read_text(encoding="utf-8")
    start, end = text.index(CANDIDATES[0]), text.index(CANDIDATES[1]) + len(CANDIDATES[1])
    body = text[start + len(CANDIDATES[0]): end - len('""" ]')].replace("?option", old)
    path = tmp_path / REBOOKING[0].name
    path.write_text(text[:start] + f'horis:candidates [ horis:query """{select} WHERE {{\n'
                    + body + ' }""" ]' + text[end:], encoding="utf-8")
    return path, text[:start].count("\n") + 1


def test_a_candidates_select_that_does_not_select_the_option_is_an_error(
        tmp_path: Path) -> None:
    """``SELECT ?flight WHERE { … ?option a :Flight … }`` validated, and every run found
    "no candidates": each row was empty."""
    path, line = _candidates_select(tmp_path, "SELECT ?flight")
    p = horismos_forked(".", "validate", str(path), str(REBOOKING[1]), timeout=120)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stdout + p.stderr
    out = p.stdout + p.stderr
    assert (f"{path}:{line}: error: :ProposeFlight: the horis:candidates SELECT gives "
            "?flight, not ?option, the variable the options are read from (horis:as), which "
            "its WHERE binds") in out, out
    assert "the query must select ?option, the options" in out


@pytest.mark.parametrize(("select", "old"), [
    ("SELECT ?option", "?option"), ("SELECT DISTINCT ?option", "?option"),
    ("SELECT ?flight", "?flight"),  # one column the WHERE binds is read as the options
])
def test_a_candidates_select_that_gives_the_options_validates(
        tmp_path: Path, select: str, old: str) -> None:
    path, _ = _candidates_select(tmp_path, select, old)
    assert [p for p in problems(path, REBOOKING) if p.severity == "error"] == []


# -- terms in property paths ----------------------------------------------------------------


@pytest.mark.parametrize(("pair", "old", "new", "node", "term", "meant"), [
    pytest.param(LAB, "?clinician a :Clinician ;", "?clinician a/rdfs:subClassOf* :Clinicain ;",
                 ":Escalate", ":Clinicain", ":Clinician", id="class-test"),
    pytest.param(TRIAGE, TRIAGE_QUEUE, "?this :acuity ?queue ; :assignedNurse/:onDutyy ?d .\n",
                 ":QueuePatient", ":onDutyy", ":onDuty", id="sequence"),
    pytest.param(TRIAGE, TRIAGE_QUEUE, "?this :acuity ?queue . ?d ^:onDutyy ?this .\n",
                 ":QueuePatient", ":onDutyy", ":onDuty", id="inverse"),
    pytest.param(TRIAGE, TRIAGE_QUEUE, "?this :acuity ?queue ; :onDuty|:onDutyy ?d .\n",
                 ":QueuePatient", ":onDutyy", ":onDuty", id="alternative"),
    pytest.param(TRIAGE, TRIAGE_QUEUE, "?this :acutiy* ?queue .\n",
                 ":QueuePatient", ":acutiy", ":acuity", id="repeated"),
    pytest.param(TRIAGE, "FILTER NOT EXISTS { ?this :assignedNurse ?n }",
                 "FILTER NOT EXISTS { ?this :assignedNurse/:onDutyy ?n }",
                 ":NotifyNurse", ":onDutyy", ":onDuty", id="not-exists"),
])
def test_a_term_in_a_property_path_declared_nowhere_is_a_warning_with_a_did_you_mean(
        tmp_path: Path, pair: tuple[Path, Path], old: str, new: str, node: str, term: str,
        meant: str) -> None:
    """``?this :acutiy ?queue`` was told "did you mean :acuity?"; the same typo in a path
    was never looked at, and the pattern never matched."""
    path, line = edited(tmp_path, pair, old, new)
    p = horismos_forked(".", "validate", str(path), str(pair[1]), timeout=120)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stdout + p.stderr
    out = p.stdout + p.stderr
    so = ("so its FILTER NOT EXISTS never finds it and never holds the step back"
          if "NOT EXISTS" in new else "so the pattern cannot match")
    assert (f"{path}:{line}: warning: {node}: horis:requires uses {term}, which no loaded "
            f"ontology declares and no loaded data uses, {so} — did you mean {meant}?") in out, out


def test_declared_terms_in_property_paths_validate_clean(tmp_path: Path) -> None:
    path, _ = edited(tmp_path, TRIAGE, TRIAGE_QUEUE,
                     "?this :acuity ?queue ; :assignedNurse/:onDuty ?d .\n"
                     " ?n a/rdfs:subClassOf* :Nurse ; ^:assignedNurse ?this .\n")
    path.write_text("@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
                    + path.read_text(encoding="utf-8"), encoding="utf-8")
    assert problems(path, TRIAGE) == []


# -- a prefix the file does not declare -------------------------------------------------------


@pytest.mark.parametrize(("new", "hint"), [
    # the term is the ontology's, written with a prefix borrowed from another file
    pytest.param("?this ehr:acuity ?queue .\n", "did you mean :acuity? Or declare it at the top "
                 "of the file: @prefix ehr: <…> .", id="known-term"),
    pytest.param("?this fhir:severity ?queue .\n", "declare it at the top of the file: "
                 "@prefix fhir: <…> .", id="unknown-term"),
])
def test_a_pattern_prefix_its_file_does_not_declare_says_which_term_was_meant(
        tmp_path: Path, new: str, hint: str) -> None:
    """The hint was the shape of a pattern ("write triple patterns and FILTERs as inside
    WHERE { … }"), which was right; the prefix was what was wrong."""
    path, line = edited(tmp_path, TRIAGE, TRIAGE_QUEUE, new)
    p = the_error(problems(path, TRIAGE))
    assert (p.file, p.line, p.node) == (str(path), line, ":QueuePatient")
    prefix = new.split()[1].split(":")[0]
    assert p.message == ("horis:requires is not a valid SPARQL group graph pattern: it uses the "
                         f"prefix {prefix}:, which its file does not declare")
    assert p.hint == hint


TRIAGE_GUARD = '''    horis:requires """ ?this :acuity ?queue .
                       FILTER NOT EXISTS { ?this :queuedAt ?t } """ ;'''


@pytest.mark.parametrize(("written", "lost"), [
    ('    horis:requires "?this :acuity ?queue . # not queued yet FILTER NOT EXISTS '
     '{ ?this :queuedAt ?t }" ;', "`FILTER NOT EXISTS { ?this :queuedAt ?t }` is not read"),
    ('    horis:requires "?this :acuity ?queue . # ?this :queuedAt ?t" ;',
     "`?this :queuedAt ?t` is not read"),
])
def test_a_hash_commenting_out_the_rest_of_a_one_line_pattern_is_warned_at_its_line(
        tmp_path: Path, written: str, lost: str) -> None:
    """The guard was dropped without a word: the pattern parsed, validate said "valid", and
    the step fired on every patient, queued or not."""
    path, line = edited(tmp_path, TRIAGE, TRIAGE_GUARD, written)
    found = problems(path, TRIAGE)
    (p,) = found or [None]
    assert p is not None and p.severity == "warning" and p.line == line, found
    assert "is written on one line, and SPARQL reads from # to the end of the line" in p.message
    assert lost in p.message and "triple quotes" in (p.hint or "")


@pytest.mark.parametrize("written", [
    '    horis:requires "?this :acuity ?queue . # the patient\'s level" ;',  # a remark
    '    horis:requires """ ?this :acuity ?queue .  # the level\n'
    '                       FILTER NOT EXISTS { ?this :queuedAt ?t } """ ;',  # its own line
    '    horis:requires "?this :acuity ?queue . FILTER (?queue != <http://example.org/ehr#x>)" ;',
])
def test_a_remark_a_comment_ended_by_its_line_and_an_iri_fragment_say_nothing(
        tmp_path: Path, written: str) -> None:
    path, _ = edited(tmp_path, TRIAGE, TRIAGE_GUARD, written)
    assert [p for p in problems(path, TRIAGE) if "#" in p.message] == []


@pytest.mark.parametrize(("written", "said"), [
    pytest.param("horis:requires :QueueGuard ;", "horis:requires :QueueGuard is a node",
                 id="iri"),
    pytest.param('horis:requires [ rdfs:comment "?this :acuity ?queue ." ] ;',
                 "horis:requires [ … ] is a node", id="blank-node"),
])
def test_a_pattern_written_as_a_node_is_said_to_be_one(
        tmp_path: Path, written: str, said: str) -> None:
    """Its IRI was read as SPARQL: "example (line 1 of the pattern) is not a SPARQL term"."""
    path, line = edited(tmp_path, TRIAGE, 'horis:requires """ ?this :queueRef ?ref .\n',
                        f"{written}\n    rdfs:comment \"\"\" ?this :queueRef ?ref .\n")
    p = the_error(problems(path, TRIAGE))
    assert (p.line, p.node) == (line, ":NotifyNurse"), str(p)
    assert said + ", not a pattern: a pattern is SPARQL written in a string" in p.message
    assert "example" not in p.message and p.hint is not None
    assert p.hint.startswith('write horis:requires """ ?this'), str(p)


# -- a GRAPH block ----------------------------------------------------------------------------

GUARD_LINE = "                       FILTER NOT EXISTS { ?this :queuedAt ?t } \"\"\" ;"
"""The second line of :QueuePatient's pattern, where each GRAPH below is written."""


@pytest.mark.parametrize(("graph", "said"), [
    pytest.param("GRAPH ?g { ?this :acuity ?queue }", "reads GRAPH ?g { … }, which matches "
                 "only facts in named graphs, where steps' effects land, never those the "
                 "world's files load", id="variable"),
    pytest.param("GRAPH <http://example.org/ehr#ward> { ?this :acuity ?queue }",
                 "reads GRAPH :ward { … }, which matches only facts in the named graph :ward",
                 id="iri"),
    pytest.param("FILTER NOT EXISTS { GRAPH ?tx { ?this :acuity :urgent } }",
                 "reads GRAPH ?tx { … }", id="in-a-guard"),
])
def test_a_graph_block_is_warned_at_its_line(tmp_path: Path, graph: str, said: str) -> None:
    """Loaded facts are in the default graph: GRAPH ?g { ?this :acuity ?queue } has no
    solution for any patient the world file holds, so every instance was blocked at the
    step ("has no solution for ?this = :patient42"), and validate said "valid"."""
    path, line = edited(tmp_path, TRIAGE, GUARD_LINE,
                        f"                       {graph}\n{GUARD_LINE}")
    found = problems(path, TRIAGE)
    (p,) = found or [None]
    assert p is not None and p.severity == "warning" and p.line == line, found
    assert said in p.message and p.node == ":QueuePatient", str(p)
    assert p.hint is not None and p.hint.startswith("drop GRAPH "), str(p)


def test_a_blocked_run_is_what_the_graph_block_warns_of(tmp_path: Path) -> None:
    path, _ = edited(tmp_path, TRIAGE, TRIAGE_QUEUE, "GRAPH ?g { ?this :acuity ?queue }\n")
    p = _run(path, TRIAGE, "triage", "ehr_client.py")
    assert "reads GRAPH ?g" in p.stderr, p.stdout + p.stderr
    assert "3 instances: 3 blocked" in p.stdout, p.stdout + p.stderr


@pytest.mark.parametrize("graph", [
    pytest.param("GRAPH ?g { ?this :acuity ?queue } ?g :ward ?w .", id="graph-read-after"),
    pytest.param("GRAPH <urn:horismos:instances> { ?i ?p ?this }", id="horismos-own-graph"),
])
def test_a_graph_block_asked_about_or_of_horismos_says_nothing(
        tmp_path: Path, graph: str) -> None:
    path, _ = edited(tmp_path, TRIAGE, GUARD_LINE, f"                       {graph}\n{GUARD_LINE}")
    assert [p for p in problems(path, TRIAGE) if "GRAPH" in p.message] == []


# -- a bare word ------------------------------------------------------------------------------

BARE = "?this :acuity ?queue .\n"
"""The line of :QueuePatient's pattern the FILTER is written after."""


@pytest.mark.parametrize(("declared", "hint"), [
    pytest.param(True, 'did you mean :urgent? For a string, write "urgent"', id="declared"),
    pytest.param(False, 'write a node with its prefix (:urgent) or a string in quotes '
                 '("urgent")', id="undeclared"),
])
def test_a_bare_word_in_a_filter_is_said_to_be_no_term_at_its_line(
        tmp_path: Path, declared: bool, hint: str) -> None:
    """It said "unexpected 'FILTER' on line 2 of the pattern": the word was not named."""
    path, line = edited(tmp_path, TRIAGE, BARE,
                        "?this :acuity ?queue .\n                       "
                        "FILTER (?queue = urgent)\n")
    files = [path, TRIAGE[1], *([ROOT / "examples/triage/world.ttl"] if declared else [])]
    p = horismos_forked(tmp_path, "validate", *map(str, files), timeout=120)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stdout + p.stderr
    assert p.stdout.splitlines()[0] == (
        f"{path}:{line + 1}: error: :QueuePatient: horis:requires is not a valid SPARQL group "
        "graph pattern: urgent (line 2 of the pattern) is not a SPARQL term: a name with no ?, "
        f"no prefix and no quotes is neither a variable, a node nor a string — {hint}"), p.stdout


@pytest.mark.parametrize(("new", "said"), [
    pytest.param('?this :acuity ?queue .. FILTER (?queue != "urgent" && true)\n',
                 "unexpected '.' on line 1 of the pattern", id="word-in-a-string"),
    pytest.param("?this :acuity ?queue .. # urgent, say\n",
                 "unexpected '.' on line 1 of the pattern", id="word-in-a-comment"),
    pytest.param("?this :acuity ?queue .. FILTER (?queue IN (<http://x/urgent>, :urgent))\n",
                 "unexpected '.' on line 1 of the pattern", id="word-in-an-iri"),
    pytest.param("?this :acuity ?queue .\n FILTER (?queue = :urgent && true)\n", None,
                 id="a-node-and-a-keyword"),
    pytest.param('?this :acuity ?queue ; rdfs:label ?l .\n'
                 ' FILTER (lang(?l) = "en" || ?l = "x"@en-GB)\n',
                 None, id="a-function-and-a-language-tag"),
    pytest.param('?this :acuity ?queue .\n FILTER (?queue != "urgent)\n',
                 "the string opened with '\"' on line", id="an-open-string"),
])
def test_a_word_that_is_part_of_a_term_is_not_called_bare(
        tmp_path: Path, new: str, said: str | None) -> None:
    """A word inside a string, comment or IRI, a keyword, a prefixed name, a function and a
    language tag are SPARQL: a slip elsewhere is said as before, and no slip is no error."""
    path, _ = edited(tmp_path, TRIAGE, BARE, new)
    errors = [p for p in problems(path, TRIAGE) if p.severity == "error"]
    if said is None:
        assert errors == [], errors
    else:
        assert len(errors) == 1 and said in errors[0].message, errors
        assert "not a SPARQL term" not in errors[0].message


@pytest.mark.parametrize("written", [
    "FILTER (?score >= 0,25)",
    "FILTER (0,25 <= ?score)",
    "FILTER (?score IN (1,2) && ?score > 0,25)",
])
def test_a_number_with_a_decimal_comma_is_said_at_its_line_with_the_point_to_write(
        tmp_path: Path, written: str) -> None:
    """``FILTER (?rate >= 0,25)`` said "unexpected 'FILTER'" and to write the pattern "as
    inside WHERE { … }", which it was: the comma was not named."""
    path, line = edited(tmp_path, TRIAGE, BARE,
                        "?this :acuity ?queue ; :score ?score .\n                       "
                        f"{written}\n")
    (e,) = [p for p in problems(path, TRIAGE) if p.severity == "error"]
    assert (e.line, e.node) == (line + 1, ":QueuePatient"), str(e)
    assert e.message == ("horis:requires is not a valid SPARQL group graph pattern: 0,25 is "
                         "written with a decimal comma, which SPARQL does not read"), str(e)
    assert e.hint == "write 0.25: a point, not a comma, before the decimals", str(e)


@pytest.mark.parametrize(("written", "form"), [
    pytest.param('    horis:requires "ASK { ?this :acuity ?queue }" ;', "ASK … { … }", id="ask"),
    pytest.param('    horis:requires "ask where { ?this :acuity ?queue }" ;', "ASK … { … }",
                 id="ask-lower-case"),
    pytest.param('    horis:requires "WHERE { ?this :acuity ?queue }" ;', "WHERE { … }",
                 id="where"),
    pytest.param('    horis:requires "CONSTRUCT { ?this :x ?q } WHERE { ?this :acuity ?q }" ;',
                 "CONSTRUCT … { … }", id="construct"),
])
def test_a_pattern_written_as_a_whole_query_is_told_to_keep_what_is_inside(
        tmp_path: Path, written: str, form: str) -> None:
    """``ASK { … }`` was told "ASK is not a SPARQL term … write :ASK or "ASK"", and ``WHERE
    { … }`` that 'WHERE' was unexpected."""
    path, line = edited(tmp_path, TRIAGE, TRIAGE_GUARD, written)
    p = the_error(problems(path, TRIAGE))
    assert (p.file, p.line, p.node) == (str(path), line, ":QueuePatient")
    assert p.message == (f"horis:requires is not a valid SPARQL group graph pattern: it is "
                         f"written as a query ({form}), where horis:requires is what goes "
                         "inside WHERE { … }")
    assert p.hint == 'write only what is inside the braces, e.g. "?this :acuity ?queue ."'


def test_a_pattern_with_a_word_like_a_query_keyword_is_still_a_bare_word(
        tmp_path: Path) -> None:
    """Only a pattern that opens with the keyword is a query: ``selected`` inside one is the
    bare word it was."""
    path, _ = edited(tmp_path, TRIAGE, TRIAGE_GUARD,
                     '    horis:requires "?this :acuity ?queue . selected :x ?y" ;')
    assert "selected (line 1 of the pattern) is not a SPARQL term" in the_error(
        problems(path, TRIAGE)).message


@pytest.mark.parametrize(("new", "offset", "said", "hint"), [
    pytest.param('?this :acuity ?queue . ?this :acuity "urgent" .\n', 0,
                 'the pattern matches it with "urgent", a literal, which no node equals, so the '
                 "pattern never holds", "write the node :urgent, without quotes",
                 id="triple"),
    pytest.param('?this :acuity ?queue .\n FILTER (?queue = "urgent")\n', 1,
                 'the FILTER compares ?queue (its value) with "urgent", a literal, which no node '
                 "equals, so the FILTER is never true", "write the node :urgent, without quotes",
                 id="filter-equal"),
    # beside the pattern's FILTER NOT EXISTS: the two FILTERs are one &&, which this alone
    # does not make true
    pytest.param('?this :acuity ?queue .\n FILTER (?queue != "Routine")\n', 1,
                 'so ?queue != "Routine" is always true',
                 "write the node :routine, without quotes", id="filter-not-equal-world-node"),
    pytest.param('?this :acuity ?queue .\n FILTER (?queue IN ("urgent", :routine))\n', 1,
                 'the FILTER compares ?queue (its value) with "urgent", a literal, which no node '
                 "equals, so that comparison never holds", "write the node :urgent, without quotes",
                 id="filter-in"),
    pytest.param('?this :acuity ?queue .\n FILTER (?queue NOT IN ("routine"))\n', 1,
                 'so ?queue != "routine" is always true',
                 "write the node :routine, without quotes", id="filter-not-in"),
    pytest.param('?this :acuity ?queue .\n FILTER (str(?queue) = "urgent")\n', 1,
                 'the FILTER compares str(?queue), the text of its IRI, with "urgent", which is '
                 "no IRI, so the FILTER is never true",
                 "compare ?queue itself with the node: ?queue = :urgent", id="filter-str"),
    pytest.param('?this :acuity ?queue .\n FILTER (STR(?queue) != "Routine")\n', 1,
                 'so str(?queue) != "Routine" is always true',
                 "compare ?queue itself with the node: ?queue != :routine",
                 id="filter-str-not-equal"),
    pytest.param('?this :acuity ?queue .\n FILTER (?queue = :urgent || ?queue = "routine")\n', 1,
                 'the FILTER compares ?queue (its value) with "routine", a literal, which no node '
                 "equals, so that comparison never holds",
                 "write the node :routine, without quotes", id="filter-one-side-of-or"),
    pytest.param('?this :acuity ?queue .\n FILTER (!(?queue = "routine"))\n', 1,
                 "so that comparison never holds", "write the node :routine, without quotes",
                 id="filter-under-not"),
])
def test_a_literal_for_a_property_whose_values_are_nodes_is_a_warning_at_its_line(
        tmp_path: Path, new: str, offset: int, said: str, hint: str) -> None:
    """``FILTER (?queue = "urgent")`` where :acuity is an owl:ObjectProperty validated, and
    every patient was blocked at QueuePatient; with ``!=`` the filter let every one through.
    The node meant is the one of that name the files type with the range, in any case."""
    path, line = edited(tmp_path, TRIAGE, BARE, new)
    world = ROOT / "examples/triage/world.ttl"
    try:
        found = load_definitions([path, TRIAGE[1], world]).warnings
    except AuthoringError as e:
        found = e.problems
    (p,) = [p for p in found if "values are nodes" in p.message]
    assert (p.severity, p.file, p.line, p.node) == ("warning", str(path), line + offset,
                                                    ":QueuePatient")
    assert p.message.startswith("horis:requires: :acuity's values are nodes, but "), p.message
    assert p.message.endswith(said), p.message
    assert p.hint == hint


SINGLE = '    horis:requires """?this :acuity ?queue .\n FILTER ({})""" ;'
""":QueuePatient's pattern with one FILTER, of what is written in its braces."""


@pytest.mark.parametrize(("written", "said"), [
    pytest.param('?queue != "routine"', '?queue != "routine" is always true and the FILTER '
                 "excludes nothing", id="not-equal"),
    pytest.param('?queue NOT IN ("routine")', '?queue != "routine" is always true and the '
                 "FILTER excludes nothing", id="not-in-one"),
    pytest.param('?queue != "routine" || ?queue = :urgent', '?queue != "routine" is always '
                 "true and the FILTER excludes nothing", id="one-side-of-or-not-equal"),
    pytest.param('?queue NOT IN ("routine", :urgent)', '?queue != "routine" is always true',
                 id="not-in-two"),
    pytest.param('?queue != "routine" && ?queue != :urgent', '?queue != "routine" is always '
                 "true", id="one-side-of-and-not-equal"),
    pytest.param('?queue IN ("urgent")', "the FILTER is never true", id="in-one"),
    pytest.param('?queue IN ("urgent", :routine)', "that comparison never holds", id="in-two"),
])
def test_what_a_comparison_no_node_meets_does_to_its_filter_is_said_as_it_is(
        tmp_path: Path, written: str, said: str) -> None:
    """``IN ("urgent", :routine)`` was said never true, and holds for :routine;
    ``NOT IN ("routine", :urgent)`` and ``!= "routine" && != :urgent`` were said to exclude
    nothing, and exclude :urgent (review). Only through ``&&`` alone can one comparison make
    a FILTER never true, and through ``||`` alone make it exclude nothing."""
    path, line = edited(tmp_path, TRIAGE, TRIAGE_GUARD, SINGLE.format(written))
    (p,) = [p for p in problems(path, TRIAGE) if "values are nodes" in p.message]
    assert (p.line, p.node) == (line + 1, ":QueuePatient"), str(p)
    assert p.message.endswith(f"so {said}"), p.message


@pytest.mark.parametrize(("written", "said"), [
    pytest.param("?ref != 5", ["?ref != 5 is always true and the FILTER excludes nothing"],
                 id="not-equal"),
    pytest.param("?ref NOT IN (5, 6)", ["?ref != 5 is always true", "?ref != 6 is always true"],
                 id="not-in"),
    pytest.param('?ref IN ("Q-A-1", 5)', ["that comparison never holds"], id="in-with-a-string"),
    pytest.param("?ref = 5", ["the FILTER is never true"], id="equal"),
])
def test_a_literal_a_string_range_refuses_is_said_by_its_operator(
        tmp_path: Path, written: str, said: list[str]) -> None:
    """``FILTER (?ref != 5)`` where :queueRef takes strings was said never true: it is always
    true (review)."""
    path, line = edited(tmp_path, TRIAGE, TRIAGE_GUARD, SINGLE.format(
        written).replace("?queue .", "?queue . ?this :queueRef ?ref ."))
    found = [p for p in problems(path, TRIAGE) if "rdfs:range xsd:string" in p.message]
    assert [p.line for p in found] == [line + 1] * len(said), "\n".join(map(str, found))
    assert sorted(p.message.split(", so ")[-1] for p in found) == said, found


@pytest.mark.parametrize(("call", "shown", "hint"), [
    pytest.param('regex(?queue, "urgent")', "regex(?queue, …)",
                 "write regex(str(?queue), …) to read the text of its IRI", id="regex"),
    pytest.param('STRSTARTS(?queue, "urg")', "STRSTARTS(?queue, …)",
                 "write STRSTARTS(str(?queue), …)", id="strstarts"),
    pytest.param('lcase(?queue) = "urgent"', "LCASE(?queue)", "write LCASE(str(?queue))",
                 id="lcase"),
])
def test_a_string_function_of_a_node_is_a_warning_at_its_line(
        tmp_path: Path, call: str, shown: str, hint: str) -> None:
    """``FILTER regex(?queue, "urgent")`` where :acuity's values are nodes validated: a string
    function given an IRI is an error in both stores, so every patient was blocked."""
    path, line = edited(tmp_path, TRIAGE, BARE, f"?this :acuity ?queue .\n FILTER ({call})\n")
    (p,) = [p for p in problems(path, TRIAGE) if "reads a string" in p.message]
    assert (p.severity, p.file, p.line, p.node) == ("warning", str(path), line + 1,
                                                    ":QueuePatient")
    assert p.message == (f"horis:requires: {shown} reads a string, but ?queue is a node "
                         "(:acuity's values are nodes): the call is an error for every value, "
                         "so what it tests is never true"), p.message
    assert p.hint is not None and p.hint.startswith(hint), p.hint


UNION_BIND = "{{ ?this :acuity ?queue }} UNION {{ ?this :queueRef ?r {} }}\n"
"""?queue bound through :acuity, a node, in one branch, and given a string in the other."""


@pytest.mark.parametrize("new", [
    pytest.param(UNION_BIND.format("BIND (?r AS ?queue)")
                 + ' FILTER (STRSTARTS(?queue, "Q-") || ?queue = "Q-1")\n', id="bind"),
    pytest.param(UNION_BIND.format('VALUES ?queue { "Q-1" }')
                 + ' FILTER (STRSTARTS(?queue, "Q-") || ?queue = "Q-1")\n', id="values"),
    pytest.param(UNION_BIND.format("{ SELECT ?this (?r AS ?queue) WHERE { ?this :queueRef ?r } }")
                 + ' FILTER (STRSTARTS(?queue, "Q-") || ?queue = "Q-1")\n', id="subquery"),
])
def test_a_variable_a_group_also_binds_otherwise_is_not_judged_by_its_property(
        tmp_path: Path, new: str) -> None:
    """``BIND (?r AS ?queue)`` in a UNION's other branch gives ?queue strings: a string
    function of it, or a string compared with it, was warned of as of :acuity's nodes alone
    (review)."""
    path, _ = edited(tmp_path, TRIAGE, BARE, new)
    found = problems(path, TRIAGE)
    assert not [p for p in found if "values are nodes" in p.message or "reads a string"
                in p.message], "\n".join(map(str, found))


@pytest.mark.parametrize("new", [
    pytest.param('?this :acuity ?queue .\n FILTER regex(str(?queue), "urgent")\n', id="str"),
    pytest.param('?this :queueRef ?ref .\n FILTER regex(?ref, "^Q-")\n', id="a-string"),
])
def test_a_string_function_of_a_string_says_nothing(tmp_path: Path, new: str) -> None:
    path, _ = edited(tmp_path, TRIAGE, BARE, new)
    assert not [p for p in problems(path, TRIAGE) if "reads a string" in p.message]


@pytest.mark.parametrize("new", [
    pytest.param("?this :acuity ?queue .\n FILTER (?queue = :urgent)\n", id="a-node"),
    pytest.param('?this :acuity ?queue . ?this :queueRef ?ref .\n FILTER (?ref != "Q-1")\n',
                 id="a-literal-range"),
    pytest.param('?this :acuity ?queue .\n'
                 ' FILTER (str(?queue) = "http://example.org/ehr#urgent")\n', id="str-an-iri"),
    pytest.param('?this :acuity ?queue .\n FILTER (STRENDS(str(?queue), "urgent"))\n',
                 id="str-in-a-function"),
    pytest.param('?this :acuity ?queue . ?this :queueRef ?ref .\n FILTER (str(?ref) = "Q-1")\n',
                 id="str-of-a-literal"),
])
def test_a_pattern_comparing_a_property_with_its_kind_of_value_says_nothing(
        tmp_path: Path, new: str) -> None:
    path, _ = edited(tmp_path, TRIAGE, BARE, new)
    assert not [p for p in problems(path, TRIAGE) if "values are nodes" in p.message]


# -- a slip the parser gives up after: a bracket left open, a keyword misspelt, True ---------

NURSE_GUARD = 'FILTER NOT EXISTS { ?this :assignedNurse ?n } """'
""":NotifyNurse's guard, the third line of its pattern."""


def test_an_unclosed_parenthesis_is_named_at_the_line_it_opens(tmp_path: Path) -> None:
    """It said "unexpected 'FILTER' on line 2 of the pattern — write triple patterns and
    FILTERs as inside WHERE { … }", and never that a ')' was missing."""
    path, line = edited(tmp_path, TRIAGE, TRIAGE_GUARD,
                        '    horis:requires """ ?this :acuity ?queue .\n'
                        '                       FILTER (!BOUND(?t) """ ;')
    p = the_error(problems(path, TRIAGE))
    assert (p.file, p.line, p.node) == (str(path), line + 1, ":QueuePatient"), str(p)
    assert p.message == ("horis:requires is not a valid SPARQL group graph pattern: the '(' "
                         f"after FILTER on line {line + 1} is never closed"), str(p)
    assert p.hint == "close it with ')'"


@pytest.mark.parametrize(("new", "said", "hint"), [
    pytest.param('FILTER NOT EXISTS { ?this :assignedNurse ?n """', "the '{' after EXISTS on "
                 "line {line} is never closed", "close it with '}'", id="brace"),
    pytest.param('FILTER NOT EXISTS { ?this :assignedNurse ?n . FILTER (?n != ?nurse } """',
                 "the '(' after FILTER on line {line} is never closed: a '}' comes first",
                 "close it with ')' before that '}'", id="closed-by-the-wrong-bracket"),
    pytest.param('FILTER NOT EXISTS { ?this :assignedNurse ?n } } """',
                 "the '}' on line {line} closes nothing: no '{' is open before it",
                 "drop it, or open what it closes with '{'", id="a-closer-too-many"),
])
def test_an_unclosed_brace_is_named_at_its_own_line_not_the_strings(
        tmp_path: Path, new: str, said: str, hint: str) -> None:
    """It said "it ends before every '{', '(' and string is closed" at the line the Turtle
    string opens, two lines above the '{', and did not say which bracket."""
    path, line = edited(tmp_path, TRIAGE, NURSE_GUARD, new)
    p = the_error(problems(path, TRIAGE))
    assert (p.file, p.line, p.node) == (str(path), line, ":NotifyNurse"), str(p)
    assert p.message == ("horis:requires is not a valid SPARQL group graph pattern: "
                         + said.replace("{line}", str(line))), str(p)
    assert p.hint == hint


def test_an_unclosed_brace_in_a_candidates_query_is_named_at_its_line(tmp_path: Path) -> None:
    path, line = edited(tmp_path, REBOOKING, "FILTER (?seats > 0 && ?option != ?old)",
                        "FILTER (?seats > 0 && ?option != ?old")
    p = the_error(problems(path, REBOOKING))
    assert (p.line, p.node) == (line, ":ProposeFlight"), str(p)
    assert p.message == (f"the horis:candidates query does not parse: the '(' after FILTER on "
                         f"line {line} is never closed"), str(p)
    assert p.hint == "close it with ')'"


@pytest.mark.parametrize(("old", "new", "word", "meant"), [
    pytest.param("FILTER NOT EXISTS {", "FILTER NOT EXIST {", "EXIST", "NOT EXISTS",
                 id="not-exist"),
    pytest.param("FILTER NOT EXISTS {", "OPTINAL {", "OPTINAL", "OPTIONAL", id="optional"),
])
def test_a_misspelt_keyword_is_said_to_be_the_keyword(
        tmp_path: Path, old: str, new: str, word: str, meant: str) -> None:
    """``FILTER NOT EXIST { … }`` was told "EXIST … is not a SPARQL term … write a node with
    its prefix (:EXIST) or a string in quotes"."""
    path, line = edited(tmp_path, TRIAGE, NURSE_GUARD, NURSE_GUARD.replace(old, new))
    p = the_error(problems(path, TRIAGE))
    assert (p.file, p.line, p.node) == (str(path), line, ":NotifyNurse"), str(p)
    assert p.message == ("horis:requires is not a valid SPARQL group graph pattern: "
                         f"{word} (line 3 of the pattern) is not a SPARQL keyword, nor a "
                         "variable, a node or a string"), str(p)
    assert p.hint == f"did you mean {meant}?"


@pytest.mark.parametrize("word", ["kind", "grape", "under", "onion"])
def test_a_word_one_slip_from_a_keyword_where_a_value_stands_is_no_keyword(
        tmp_path: Path, word: str) -> None:
    """``FILTER (?queue != kind)`` was told "did you mean BIND?" (``grape``: GRAPH): only a
    word where a keyword can stand (in capitals, before ``{`` or ``(``, after ``NOT``) is
    taken for a misspelt one."""
    path, _ = edited(tmp_path, TRIAGE, BARE,
                     f"?this :acuity ?queue .\n                       FILTER (?queue != {word})\n")
    p = the_error(problems(path, TRIAGE))
    assert f"{word} (line 2 of the pattern) is not a SPARQL term" in p.message, str(p)
    assert p.hint == f'write a node with its prefix (:{word}) or a string in quotes ("{word}")'


@pytest.mark.parametrize(("old", "new", "word", "offset"), [
    pytest.param(":onDuty true .", ":onDuty True .", "True", 0, id="object"),
    pytest.param(TRIAGE_QUEUE, "?this :acuity ?queue .\n FILTER (?queue != FALSE)\n", "FALSE", 1,
                 id="in-a-filter"),
])
def test_a_boolean_in_capitals_is_said_to_be_lower_case_not_the_stores_ranges(
        tmp_path: Path, old: str, new: str, word: str, offset: int) -> None:
    """rdflib reads ``True``; Oxigraph refused it, and the message was its parser's, five
    lines of Unicode ranges ("expected one of ".", ":", ['-' | '0' ..= '9' | '\\u{00B7}' …")."""
    path, line = edited(tmp_path, TRIAGE, old, new)
    p = the_error(problems(path, TRIAGE))
    assert (p.file, p.line) == (str(path), line + offset), str(p)
    assert p.message.startswith(f"horis:requires writes {word}, which is no SPARQL boolean: "
                                "SPARQL's booleans are true and false, in lower case"), str(p)
    assert "\\u{" not in p.message and "expected one of" not in p.message
    assert p.hint == f"write {word.lower()}"


def test_the_stores_character_ranges_are_summarised() -> None:
    """What else Oxigraph's parser refuses is said in its words, without its ranges."""
    said = Refusal(
        "error at 3:54: expected one of \".\", \":\", \"[\", ['-' | '0' ..= '9' | "
        "'\\u{00B7}' |\n'\\u{203F}'..='\\u{2040}'], ['A' ..= 'Z' | 'a' ..= 'z'\n| "
        "'\\u{00F8}'..='\\u{02FF}'], ['_']", syntax=True).said
    assert said == 'error at 3:54: expected one of ".", ":", "[", a character of a name'


@pytest.mark.parametrize(("query", "said"), [
    pytest.param("SELECT * WHERE { ?s <http://a> True }",
                 'expected one of ".", ":", a character of a name', id="ranges"),
    pytest.param("SELECT * WHERE { FILTER(?x = 1 2) }", "expected one of GROUP_CONCAT, [_]",
                 id="any-character"),
])
def test_a_refusal_of_the_stores_parser_keeps_what_is_not_a_name(query: str, said: str) -> None:
    """Oxigraph's ``[_]`` (any character) was told "a character of a name" too."""
    import pyoxigraph as ox

    with pytest.raises(SyntaxError) as refused:
        ox.Store().query(query)
    assert Refusal(str(refused.value), syntax=True).said.endswith(said)


# -- a VALUES, a sameTerm, a BOUND, an IN list no value can meet --------------------------


def _says_nothing_of(path: Path, words: str) -> None:
    """The edited triage workflow loads with no problem whose message has ``words``."""
    found = problems(path, TRIAGE)
    assert not [p for p in found if words in p.message], "\n".join(map(str, found))


@pytest.mark.parametrize(("new", "offset", "said", "hint"), [
    pytest.param('?this :acuity ?queue .\n VALUES ?queue { "urgent" }\n', 1,
                 ':acuity\'s values are nodes, but VALUES gives ?queue only "urgent", a literal, '
                 "which no node equals, so … :acuity ?queue never matches it and the pattern "
                 "never holds", "write the nodes meant, without quotes: VALUES ?queue { :urgent }",
                 id="a-literal-for-nodes"),
    pytest.param('?this :acuity ?queue .\n VALUES ?queue { "urgent" "routine" }\n', 1,
                 ':acuity\'s values are nodes, but VALUES gives ?queue only "urgent", "routine", '
                 "literals, which no node equals, so … :acuity ?queue never matches them and the "
                 "pattern never holds",
                 "write the nodes meant, without quotes: VALUES ?queue { :urgent :routine }",
                 id="literals-for-nodes"),
    pytest.param("?this :acuity ?queue . ?this :queueRef ?ref .\n VALUES ?ref { :High }\n", 1,
                 ":queueRef's values are literals, but VALUES gives ?ref only :High, a node, "
                 "which no literal equals, so … :queueRef ?ref never matches it and the pattern "
                 "never holds",
                 "write the literal meant, quoted, or bind ?ref by a property whose values are "
                 "nodes", id="a-node-for-literals"),
    pytest.param('?this :acuity ?queue .\n OPTIONAL { ?this :assignedNurse ?n .\n'
                 '  VALUES ?n { "ann" } }\n', 2,
                 ':assignedNurse\'s values are nodes, but VALUES gives ?n only "ann", a literal, '
                 "which no node equals, so … :assignedNurse ?n never matches it and the group it "
                 "is in (an OPTIONAL, a UNION's branch…) never matches",
                 "write the nodes meant, without quotes: VALUES ?n { :ann }", id="in-an-optional"),
])
def test_a_values_of_the_other_kind_than_its_property_is_a_warning_at_its_line(
        tmp_path: Path, new: str, offset: int, said: str, hint: str) -> None:
    """``?this :acuity ?queue . VALUES ?queue { "urgent" }`` validated, where the FILTER
    ``?queue = "urgent"`` was warned of: the join never matches, and every patient was
    blocked at QueuePatient (review)."""
    path, line = edited(tmp_path, TRIAGE, BARE, new)
    (p,) = [p for p in problems(path, TRIAGE) if "VALUES gives" in p.message]
    assert (p.severity, p.file, p.line, p.node) == ("warning", str(path), line + offset,
                                                    ":QueuePatient"), str(p)
    assert p.message == f"horis:requires: {said}", p.message
    assert p.hint == hint


@pytest.mark.parametrize("new", [
    pytest.param("?this :acuity ?queue .\n VALUES ?queue { :urgent :routine }\n", id="nodes"),
    pytest.param('?this :acuity ?queue .\n VALUES ?queue { :urgent "routine" }\n',
                 id="one-of-its-kind"),
    pytest.param('?this :acuity ?queue .\n VALUES ?queue { UNDEF "x" }\n', id="undef"),
    pytest.param('?this :acuity ?queue . ?this :queueRef ?ref .\n VALUES ?ref { "Q-1" }\n',
                 id="a-literal-for-literals"),
    pytest.param('{ ?this :acuity ?queue } UNION { ?this :queueRef ?queue }\n'
                 ' VALUES ?queue { "Q-1" }\n', id="bound-in-union-branches"),
    pytest.param('?this :acuity ?queue .\n { SELECT ?this WHERE { ?this :acuity ?q .'
                 ' VALUES ?queue { "x" } } }\n', id="a-subselect-of-its-own"),
])
def test_a_values_a_join_can_meet_says_nothing(tmp_path: Path, new: str) -> None:
    _says_nothing_of(edited(tmp_path, TRIAGE, BARE, new)[0], "VALUES gives")


MIDNIGHT = ('write "2026-12-01T00:00:00"^^xsd:dateTime (an xsd:dateTime needs a time of day: '
            "midnight here, or the time it happened), or make the rdfs:range xsd:date")
"""The fix for a date where a date-time goes: ``"2026-12-01"^^xsd:dateTime`` was said, which the
stores refuse as no date-time."""


@pytest.mark.parametrize(("new", "said", "hint"), [
    pytest.param('?this :acuity ?queue .\n VALUES ?queue { :urgent "routine" }\n',
                 ':acuity\'s values are nodes, but the VALUES of ?queue also lists "routine", a '
                 "literal, which no node equals, so … :acuity ?queue never matches that row: only "
                 "the others can hold",
                 "write the nodes meant, without quotes: VALUES ?queue { :urgent :routine }",
                 id="a-literal-among-nodes"),
    pytest.param('?this :acuity ?queue . ?this :queueRef ?ref .\n'
                 ' VALUES ?ref { "Q-1" :High :Low }\n',
                 ":queueRef's values are literals, but the VALUES of ?ref also lists :High, :Low, "
                 "nodes, which no literal equals, so … :queueRef ?ref never matches those rows: "
                 "only the others can hold", "write the literals meant, quoted, or drop the rows",
                 id="nodes-among-literals"),
    pytest.param('?this :acuity ?queue . ?this :queuedAt ?t .\n VALUES ?t { "2026-12-01" }\n',
                 ':queuedAt has rdfs:range xsd:dateTime, but the VALUES of ?t gives it only '
                 '"2026-12-01", a string, which no value of :queuedAt equals, so … :queuedAt ?t '
                 "never matches it and the pattern never holds",
                 MIDNIGHT, id="every-row-outside-the-range"),
    pytest.param('?this :acuity ?queue . ?this :queuedAt ?t .\n'
                 ' VALUES ?t { "2026-12-01T09:30:00Z"^^xsd:dateTime "2026-12-01" }\n',
                 ':queuedAt has rdfs:range xsd:dateTime, but the VALUES of ?t also lists '
                 '"2026-12-01", a string, which no value of :queuedAt equals, so … :queuedAt ?t '
                 "never matches that row: only the others can hold",
                 MIDNIGHT, id="one-row-outside-the-range"),
])
def test_a_values_row_no_value_of_its_property_equals_is_a_warning_at_its_line(
        tmp_path: Path, new: str, said: str, hint: str) -> None:
    """``VALUES ?queue { :urgent "routine" }`` beside ``?this :acuity ?queue``, and ``VALUES
    ?t { "2026-12-01" }`` beside ``?this :queuedAt ?t`` (range xsd:dateTime), validated
    without a word, where the same literal in a triple pattern was warned of: such a row never
    matches (the ``"routine"`` row reads as a second queue)."""
    path, line = edited(tmp_path, TRIAGE, BARE, new)
    (p,) = [p for p in problems(path, TRIAGE) if "but the VALUES of" in p.message]
    assert (p.severity, p.file, p.line, p.node) == ("warning", str(path), line + 1,
                                                     ":QueuePatient"), str(p)
    assert p.message == f"horis:requires: {said}", p.message
    assert p.hint == hint


@pytest.mark.parametrize(("written", "with_ref", "said"), [
    pytest.param('sameTerm(?queue, "urgent")', False,
                 ':acuity\'s values are nodes, but the FILTER compares ?queue (its value) with '
                 '"urgent", a literal, which no node equals, so the FILTER is never true',
                 id="a-literal-for-nodes"),
    pytest.param("sameTerm(?ref, :urgent)", True,
                 ":queueRef's values are literals, but the FILTER compares ?ref (its value) with "
                 ":urgent, a node, which no literal equals, so the FILTER is never true",
                 id="a-node-for-literals"),
    pytest.param("?ref != :urgent", True,
                 ":queueRef's values are literals, but the FILTER compares ?ref (its value) with "
                 ":urgent, a node, which no literal equals, so ?ref != :urgent is always true and "
                 "the FILTER excludes nothing", id="not-equal-a-node-for-literals"),
])
def test_a_same_term_no_value_meets_is_a_warning_at_its_line(
        tmp_path: Path, written: str, with_ref: bool, said: str) -> None:
    """``FILTER (sameTerm(?queue, "urgent"))`` with :acuity's values nodes, and
    ``sameTerm(?ref, :urgent)`` with :queueRef's literals, validated: never true (review)."""
    single = SINGLE.format(written)
    if with_ref:
        single = single.replace("?queue .", "?queue . ?this :queueRef ?ref .")
    path, line = edited(tmp_path, TRIAGE, TRIAGE_GUARD, single)
    (p,) = [p for p in problems(path, TRIAGE) if "values are" in p.message]
    assert (p.severity, p.line, p.node) == ("warning", line + 1, ":QueuePatient"), str(p)
    assert p.message == f"horis:requires: {said}", p.message


@pytest.mark.parametrize(("written", "binds"), [
    pytest.param("sameTerm(?queue, :urgent)", "", id="a-node-for-nodes"),
    pytest.param('sameTerm(?ref, "Q-1")', "?this :queueRef ?ref .", id="a-literal-for-literals"),
    pytest.param("sameTerm(?x, :urgent)", "{ ?this :queueRef ?x } UNION { ?this :acuity ?x }",
                 id="a-node-for-literals-or-nodes"),
])
def test_a_same_term_its_values_can_meet_says_nothing(
        tmp_path: Path, written: str, binds: str) -> None:
    single = SINGLE.format(written).replace("?queue .", f"?queue . {binds}")
    _says_nothing_of(edited(tmp_path, TRIAGE, TRIAGE_GUARD, single)[0], "values are")


@pytest.mark.parametrize(("written", "severity", "said"), [
    pytest.param("BOUND(?queu)", "error",
                 "BOUND(?queu) is always false and the FILTER is never true", id="bound"),
    pytest.param("!BOUND(?queu)", "warning",
                 "!BOUND(?queu) is always true and the FILTER excludes nothing", id="not-bound"),
    pytest.param("!BOUND(?queu) && ?queue != :urgent", "warning", "!BOUND(?queu) is always true",
                 id="not-bound-beside-another-test"),
])
def test_a_bound_test_of_a_variable_nothing_binds_is_said_at_its_line(
        tmp_path: Path, written: str, severity: str, said: str) -> None:
    """``FILTER (!BOUND(?queu))``, a guard meant for ?queue, validated: it excluded nothing;
    ``FILTER (BOUND(?queu))`` blocked every patient (review)."""
    path, line = edited(tmp_path, TRIAGE, TRIAGE_GUARD, SINGLE.format(written))
    (p,) = [p for p in problems(path, TRIAGE) if "BOUND" in p.message]
    assert (p.severity, p.line, p.node) == (severity, line + 1, ":QueuePatient"), str(p)
    assert p.message == ("horis:requires: ?queu in a FILTER is bound by no pattern of its "
                         f"group, so {said}"), p.message
    assert p.hint is not None and p.hint.startswith("did you mean ?queue? "), p.hint


@pytest.mark.parametrize("written", [
    pytest.param("BOUND(?queue)", id="bound-by-a-triple"),
    pytest.param("!BOUND(?this)", id="given-by-the-run"),
    pytest.param("?queue = :urgent || !BOUND(?ref)", id="an-optionals"),
])
def test_a_bound_test_of_a_variable_the_pattern_binds_says_nothing(
        tmp_path: Path, written: str) -> None:
    single = SINGLE.format(written).replace("?queue .",
                                            "?queue . OPTIONAL { ?this :queueRef ?ref }")
    _says_nothing_of(edited(tmp_path, TRIAGE, TRIAGE_GUARD, single)[0], "BOUND")


@pytest.mark.parametrize(("written", "said"), [
    pytest.param('?queue IN ("urgent", "routine")', "so the FILTER is never true", id="in"),
    pytest.param('?queue IN ("urgent", "routine") || ?queue = :stat',
                 '?queue IN ("urgent", "routine") never holds', id="in-one-side-of-or"),
    pytest.param('?queue NOT IN ("urgent", "routine")',
                 '?queue NOT IN ("urgent", "routine") is always true and the FILTER excludes '
                 "nothing", id="not-in"),
])
def test_an_in_list_of_literals_only_for_nodes_is_said_once(
        tmp_path: Path, written: str, said: str) -> None:
    """``?queue IN ("urgent", "routine")`` was said member by member, each "that comparison
    never holds", as if the other could: the list never holds (review)."""
    path, line = edited(tmp_path, TRIAGE, TRIAGE_GUARD, SINGLE.format(written))
    (p,) = [p for p in problems(path, TRIAGE) if "values are nodes" in p.message]
    assert (p.severity, p.line, p.node) == ("warning", line + 1, ":QueuePatient"), str(p)
    assert p.message.startswith(
        "horis:requires: :acuity's values are nodes, but the FILTER compares ?queue (its value) "
        'with "urgent", "routine", literals, which no node equals, so '), p.message
    assert p.message.endswith(said), p.message
    assert p.hint == "write the nodes meant, without quotes: ?queue IN (:urgent, :routine)"


@pytest.mark.parametrize(("written", "said"), [
    pytest.param("?ref IN (:urgent, :routine)", "so the FILTER is never true", id="in"),
    pytest.param("?ref IN (:urgent, :routine) || ?queue = :stat",
                 "?ref IN (:urgent, :routine) never holds", id="in-one-side-of-or"),
    pytest.param("?ref NOT IN (:urgent, :routine)",
                 "?ref NOT IN (:urgent, :routine) is always true and the FILTER excludes nothing",
                 id="not-in"),
])
def test_an_in_list_of_nodes_only_for_literals_is_said_once(
        tmp_path: Path, written: str, said: str) -> None:
    """``?ref IN (:urgent, :routine)`` where :queueRef's values are literals was said member
    by member, each "that comparison never holds", as if the other could: the list never
    holds, as the mirror (literals for nodes) says."""
    single = SINGLE.format(written).replace("?queue .", "?queue . ?this :queueRef ?ref .")
    path, line = edited(tmp_path, TRIAGE, TRIAGE_GUARD, single)
    (p,) = [p for p in problems(path, TRIAGE) if "values are literals" in p.message]
    assert (p.severity, p.line, p.node) == ("warning", line + 1, ":QueuePatient"), str(p)
    assert p.message.startswith(
        "horis:requires: :queueRef's values are literals, but the FILTER compares ?ref (its "
        "value) with :urgent, :routine, nodes, which no literal equals, so "), p.message
    assert p.message.endswith(said), p.message
    assert p.hint == ("compare ?ref with a literal, or bind ?ref by a property whose values are "
                      "nodes")


@pytest.mark.parametrize(("new", "said"), [
    pytest.param('?this :acuity ?queue .\n OPTIONAL { ?this :queueRef ?ref }\n'
                 ' FILTER (?ref != 5)\n', "?ref != 5 holds wherever ?ref is bound, and is an "
                 "error where it is not (only an OPTIONAL or a UNION's branch binds it): the "
                 "FILTER only drops the solutions without ?ref, as BOUND(?ref) would",
                 id="a-literal-range"),
    pytest.param('?this :queueRef ?ref .\n OPTIONAL { ?this :acuity ?q }\n'
                 ' FILTER (?q != "urgent")\n', '?q != "urgent" holds wherever ?q is bound, and '
                 "is an error where it is not (only an OPTIONAL or a UNION's branch binds it): "
                 "the FILTER only drops the solutions without ?q, as BOUND(?q) would",
                 id="a-node-range"),
])
def test_a_not_equal_of_an_optional_variable_is_not_said_always_true(
        tmp_path: Path, new: str, said: str) -> None:
    """``OPTIONAL { ?this :queueRef ?ref } FILTER (?ref != 5)`` was said "always true": where
    the OPTIONAL binds nothing, ``!=`` is an error and the FILTER drops the patient (review)."""
    path, line = edited(tmp_path, TRIAGE, BARE, new)
    (p,) = [p for p in problems(path, TRIAGE) if "FILTER compares" in p.message]
    assert (p.severity, p.line) == ("warning", line + 2), str(p)
    assert p.message.endswith(f", so {said}"), p.message
    assert "always true" not in p.message


def test_a_not_equal_of_an_optional_variable_drops_what_the_warning_says(tmp_path: Path) -> None:
    """What the warning above says, asked of a store: a patient with no :queueRef is left
    out by ``FILTER (?ref != 5)``, one with a :queueRef kept."""
    world = tmp_path / "world.ttl"
    world.write_text('@prefix : <http://example.org/ehr#> .\n:p1 :acuity :urgent .\n'
                     ':p2 :acuity :urgent ; :queueRef "Q-2" .\n', encoding="utf-8")
    rows = World.from_files(world).store.select(
        "SELECT ?this WHERE { ?this :acuity ?queue . OPTIONAL { ?this :queueRef ?ref } "
        "FILTER (?ref != 5) }", {}, {"": "http://example.org/ehr#"})
    assert [str(r["this"]) for r in rows] == ["http://example.org/ehr#p2"]


def test_a_pattern_using_the_empty_prefix_its_file_does_not_declare_names_it_so(
        tmp_path: Path) -> None:
    """rdflib names the empty prefix None: the message said "it uses the prefix None:" and
    the hint "@prefix None: <…> .", a prefix no file could declare."""
    text = TRIAGE[0].read_text(encoding="utf-8").replace(
        "@prefix :      <", "@prefix ehr: <")
    text = re.sub(r"(^|[\s\[(,;]):(?=[A-Za-z])", r"\1ehr:", text, flags=re.M)
    text = text.replace("?this ehr:acuity", "?this :acuity", 1)
    path = tmp_path / "triage.ttl"
    path.write_text(text, encoding="utf-8")
    p = the_error(problems(path, TRIAGE))
    assert p.message.endswith("it uses the prefix :, which its file does not declare"), p
    assert p.hint is not None and p.hint.endswith("@prefix : <…> ."), p
