"""Modeler mistakes a third round found still reaching a tool, or said without a place.

Each loads in every SHACL engine, and ``validate`` said "valid": the gate then rejected the
result of every call landing a patient, after the tool had acted (bounds no count or value
meets, a closed shape that forbids ``rdf:type``), or the shape checked nothing
(``sh:targetNode`` naming a class). A ``sh:path`` on a node shape was refused as ``<graph>:``,
with no file or line; ``horis:subject :patient`` was said as an argument named by a full IRI.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from forked import horismos_forked
from workflow_edits import TRIAGE, edited, ontology_edited, problems

ROOT = Path(__file__).resolve().parent.parent
ONTOLOGY = TRIAGE[1]
WORLD = ROOT / "examples" / "triage" / "world.ttl"
SHAPE = "    sh:targetClass :Patient ;\n"


@pytest.mark.parametrize(("old", "new", "severity", "said", "hint"), [
    pytest.param("sh:maxCount 1 ;", "sh:maxCount 1 ; sh:minCount 2 ;", "error",
                 "sh:minCount 2 is above sh:maxCount 1, so no node conforms",
                 "write sh:minCount no higher than sh:maxCount", id="counts"),
    pytest.param("sh:maxCount 1 ;", "sh:maxCount 1 ; sh:minLength 12 ; sh:maxLength 3 ;",
                 "error", "sh:minLength 12 is above sh:maxLength 3, so no value of :queueRef "
                 "conforms", "write sh:minLength no higher than sh:maxLength", id="lengths"),
    pytest.param(SHAPE, SHAPE + "    sh:property [ sh:path :queuedAt ; sh:minExclusive "
                 '"2030-01-01T00:00:00Z"^^xsd:dateTime ; sh:maxExclusive '
                 '"2030-01-01T00:00:00Z"^^xsd:dateTime ] ;\n', "error",
                 "is not below sh:maxExclusive", "write sh:minExclusive below sh:maxExclusive",
                 id="exclusive-bounds"),
    pytest.param(SHAPE, SHAPE + "    sh:closed true ;\n", "error",
                 "sh:closed true allows only the properties of its sh:property shapes, and "
                 "every :Patient it targets holds rdf:type :Patient, so no node conforms",
                 "add sh:ignoredProperties ( rdf:type )", id="closed"),
    pytest.param("sh:targetClass :Patient ;", "sh:targetNode :Patient ;", "warning",
                 "sh:targetNode :Patient names a class: the shape checks the node :Patient "
                 "itself", "write sh:targetClass :Patient", id="target-node-class"),
    pytest.param(SHAPE, SHAPE + "    sh:path :queueRef ; sh:maxCount 1 ;\n", "error",
                 "a sh:NodeShape has no sh:path", "sh:property [ sh:path :queueRef ; … ]",
                 id="path-on-node-shape"),
    pytest.param(SHAPE, SHAPE + '    sh:property [ sh:path :onDuty ; sh:pattern "^(yes|no)$" ] ;\n',
                 "error", 'sh:pattern "^(yes|no)$" is on booleans, which it reads as their '
                 "text, true or false, and it matches neither, so no value of :onDuty conforms",
                 "drop sh:pattern, or write sh:in ( true )", id="pattern-on-booleans"),
    pytest.param(SHAPE, SHAPE + '    sh:or ( [ sh:path :onDuty ; sh:pattern "^yes$" ]\n'
                 "            [ sh:path :queueRef ; sh:minCount 1 ] ) ;\n", "warning",
                 "matches neither, so no value of :onDuty conforms: as a branch of sh:or, it never "
                 "holds where it applies",
                 "drop sh:pattern", id="pattern-on-booleans-in-a-branch"),
    # the stores write "1"^^xsd:boolean as true: no boolean reaches the gate as 1
    pytest.param(SHAPE, SHAPE + "    sh:property [ sh:path :flagged ; sh:datatype xsd:boolean ;"
                 ' sh:pattern "^(1|0)$" ] ;\n', "error", "it matches neither",
                 "drop sh:pattern, or write sh:in ( true ) or sh:in ( false ) for the value meant",
                 id="pattern-on-booleans-as-digits"),
    # once for the shape, its patterns together: each was said to match neither, three times
    pytest.param(SHAPE, SHAPE + '    sh:property [ sh:path :onDuty ; sh:pattern "^(true|false)$" '
                 ';\n        sh:pattern "^true$" ; sh:pattern "^false$" ] ;\n', "error",
                 'sh:pattern "^(true|false)$" sh:pattern "^false$" sh:pattern "^true$" are on '
                 "booleans, which they read as their text, true or false, and together they "
                 "match neither", "drop sh:pattern", id="patterns-on-booleans"),
])
def test_a_shape_no_result_can_meet_is_said_at_its_line(
        tmp_path: Path, old: str, new: str, severity: str, said: str, hint: str) -> None:
    ontology, line = ontology_edited(tmp_path, old, new)
    found = problems(TRIAGE[0], TRIAGE, ontology)
    assert [p for p in found if p.file is None] == [], "\n".join(map(str, found))
    (p,) = [p for p in found if said in p.message] or ["\n".join(map(str, found))]
    assert p.severity == severity and hint in (p.hint or ""), str(p)
    assert p.file.endswith(ONTOLOGY.name) and line <= (p.line or 0) <= line + 1, str(p)


@pytest.mark.parametrize("new", [
    # and every property the tools write on a patient: one left out is an error of its own
    # (tests/test_authoring_closed_shapes.py)
    SHAPE + "    sh:closed true ; sh:ignoredProperties "
    "( <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> rdfs:label :acuity "
    ":queuedAt :assignedNurse :notifiedAt ) ;\n",
    SHAPE + "    sh:property [ sh:path :queuedAt ; sh:minInclusive "
    '"2020-01-01T00:00:00Z"^^xsd:dateTime ; sh:maxInclusive '
    '"2020-01-01T00:00:00Z"^^xsd:dateTime ] ;\n',
    SHAPE + '    sh:property [ sh:path :onDuty ; sh:pattern "^(true|false|1|0)$" ] ;\n',
    SHAPE + '    sh:property [ sh:path :onDuty ; sh:pattern "^(true|1)$" ] ;\n',
    SHAPE + '    sh:property [ sh:path :onDuty ; sh:pattern "^true$" ] ;\n',
    SHAPE + '    sh:property [ sh:path :onDuty ; sh:pattern "^TRUE$" ; sh:flags "i" ] ;\n',
    SHAPE + "    sh:property [ sh:path :onDuty ; sh:datatype xsd:boolean ;"
    ' sh:pattern "^(true|false)$" ] ;\n',
    # a pattern the clock's stamps meet ("Z$" never does: tests/test_authoring_now_pattern.py)
    SHAPE + '    sh:property [ sh:path :queuedAt ; sh:pattern "^20" ] ;\n',
])
def test_bounds_that_meet_and_a_closed_shape_allowing_its_type_say_nothing(
        tmp_path: Path, new: str) -> None:
    ontology, _ = ontology_edited(tmp_path, SHAPE, new)
    assert problems(TRIAGE[0], TRIAGE, ontology) == []


def test_run_refuses_crossed_counts_before_the_tool_acts(tmp_path: Path) -> None:
    """It called ehr.assign_queue (a queue assigned), then the gate rejected the patient."""
    ontology, line = ontology_edited(tmp_path, "sh:maxCount 1 ;",
                                     "sh:maxCount 1 ; sh:minCount 2 ;")
    (tmp_path / "tools.py").write_text(
        f"import sys\nsys.path.insert(0, {str(WORLD.parent)!r})\nimport ehr_client\n\n\n"
        "def assign_queue(*args, **kwargs):\n"
        "    open('calls.log', 'a').write('assign_queue\\n')\n"
        "    return ehr_client.assign_queue(*args, **kwargs)\n\n\n"
        "notify_nurse = ehr_client.notify_nurse\n", encoding="utf-8")
    workflow = tmp_path / "triage.ttl"
    workflow.write_text(TRIAGE[0].read_text(encoding="utf-8").replace(
        "python:ehr_client.", "python:tools."), encoding="utf-8")
    p = horismos_forked(tmp_path, "run", str(workflow), str(ontology), "--world", str(WORLD),
                        "--tools", "tools.py", "--focus", ":patient42", timeout=120)
    assert p.returncode == 2, p.stdout + p.stderr
    assert f"ehr.ttl:{line}: error: :PatientShape: sh:minCount 2 is above" in p.stderr
    assert not (tmp_path / "calls.log").exists()


def test_an_effect_subject_written_as_a_node_is_told_to_name_the_argument(
        tmp_path: Path) -> None:
    old = '        horis:subject "patient" ;\n        horis:asserts [ horis:property :queuedAt'
    workflow, line = edited(tmp_path, TRIAGE, old, old.replace('"patient"', ":patient"))
    (p,) = problems(workflow, TRIAGE)
    assert p.severity == "error" and p.line == line and p.node == ":ehr.assign_queue", str(p)
    assert "horis:subject :patient is a node" in p.message
    assert "http://" not in p.message
    assert p.hint == 'write horis:subject "patient"'


@pytest.mark.parametrize(("bounds", "said"), [
    pytest.param('sh:path :queuedAt ; sh:minInclusive "2026-03-01T09:00:00+01:00"^^xsd:dateTime ;'
                 ' sh:maxInclusive "2026-03-01T07:30:00Z"^^xsd:dateTime',
                 'sh:minInclusive "2026-03-01T09:00:00+01:00"^^xsd:dateTime is above '
                 'sh:maxInclusive "2026-03-01T07:30:00Z"^^xsd:dateTime', id="date-times"),
    pytest.param("sh:path :acuityScore ; sh:minInclusive 10.50 ; sh:maxInclusive 002.0",
                 "sh:minInclusive 10.50 is above sh:maxInclusive 002.0", id="decimals"),
    pytest.param('sh:path :acuityScore ; sh:minExclusive "+07"^^xsd:integer ;\n'
                 "        sh:maxExclusive 1.0e0", 'sh:minExclusive "+07"^^xsd:integer is not '
                 "below sh:maxExclusive 1.0e0", id="across-lines"),
])
def test_crossed_bounds_are_quoted_as_written(tmp_path: Path, bounds: str, said: str) -> None:
    """rdflib keeps a value's normal form: the message showed "2026-03-01T07:30:00+00:00"
    and "2.0", text the file did not hold, where the modeler wrote …Z and 002.0."""
    ontology, _ = ontology_edited(tmp_path, SHAPE, SHAPE + f"    sh:property [ {bounds} ] ;\n")
    found = problems(TRIAGE[0], TRIAGE, ontology)
    assert [p for p in found if said in p.message], "\n".join(map(str, found))


@pytest.mark.parametrize(("bounds", "said"), [
    pytest.param("sh:datatype xsd:integer ; sh:minExclusive 5 ; sh:maxExclusive 6",
                 "sh:minExclusive 5 and sh:maxExclusive 6 leave no integer between them",
                 id="integer"),
    pytest.param("sh:datatype xsd:nonNegativeInteger ; sh:minExclusive 0 ;\n"
                 "        sh:maxExclusive 1", "leave no integer between them", id="derived"),
    pytest.param("sh:datatype xsd:decimal ; sh:minExclusive 5 ; sh:maxExclusive 6", None,
                 id="decimals-between"),
    pytest.param("sh:datatype xsd:integer ; sh:minExclusive 5 ; sh:maxExclusive 7", None,
                 id="six-between"),
    pytest.param("sh:datatype xsd:integer ; sh:minInclusive 5 ; sh:maxExclusive 6", None,
                 id="five-alone"),
])
def test_exclusive_bounds_one_apart_on_integers_are_an_error(
        tmp_path: Path, bounds: str, said: str | None) -> None:
    """``sh:minExclusive 5 ; sh:maxExclusive 6`` on integers validated: the bounds are not
    crossed, yet no integer lies between them, and the gate rejected every value."""
    ontology, line = ontology_edited(
        tmp_path, SHAPE, SHAPE + f"    sh:property [ sh:path :acuityScore ; {bounds} ] ;\n")
    found = problems(TRIAGE[0], TRIAGE, ontology)
    if said is None:
        assert not [p for p in found if "between" in p.message], "\n".join(map(str, found))
        return
    (p,) = [p for p in found if said in p.message] or ["\n".join(map(str, found))]
    assert p.severity == "error" and "so no value of :acuityScore conforms" in p.message, str(p)
    assert p.hint is not None and "bounds further apart" in p.hint, str(p)
    assert line + 1 <= (p.line or 0) <= line + 2, str(p)


def test_a_sparql_constraint_naming_a_prefix_it_does_not_declare_is_said_at_its_shape(
        tmp_path: Path) -> None:
    """SHACL-SPARQL reads prefixes only from ``sh:prefixes``, not the Turtle's: rdflib's SPARQL
    parser raised "Unknown namespace prefix", which reached ``validate`` and every command
    building an agent as a Python traceback."""
    constraint = ('    sh:sparql [ sh:select "SELECT $this WHERE { $this :queueRef ?a, ?b '
                  'FILTER (?a != ?b) }" ] ;\n')
    ontology, _ = ontology_edited(tmp_path, SHAPE, SHAPE + constraint)
    for command in (["validate"], ["run", "--world", str(WORLD), "--focus", ":patient42"]):
        p = horismos_forked(tmp_path, command[0], str(TRIAGE[0]), str(ontology), *command[1:],
                            timeout=120)
        said = p.stdout + p.stderr
        assert p.returncode in (1, 2) and "Traceback" not in said, said
        assert f"{ontology.name}:" in said and "cannot be checked: Unknown namespace" in said
        hint = "declare : for the shape's SPARQL with sh:prefixes (a node with sh:declare [ "
        assert hint + 'sh:prefix "" ;' in said, said


@pytest.mark.parametrize(("written", "said"), [
    pytest.param('[ rdf:first "Q-A-1" ]', 'no rdf:rest, so the list never reaches rdf:nil',
                 id="no-rest"),
    pytest.param('[ rdf:first "Q-A-1" ; rdf:rest :elsewhere ]',
                 "leads to <http://example.org/ehr#elsewhere>, which is neither a cell nor "
                 "rdf:nil", id="rest-to-no-cell"),
    pytest.param('[ rdf:first "Q-A-1" ; rdf:rest ( "Q-B-2" ) ; rdf:rest rdf:nil ]',
                 "2 rdf:rest", id="two-rests"),
    pytest.param('[ rdf:first "Q-A-1" , "Q-B-2" ; rdf:rest rdf:nil ]', "holds 2 rdf:first",
                 id="two-firsts"),
    # rdflib's own walk raised on it: a traceback, where the line was to be told
    pytest.param(":cell", 'it comes back to <http://example.org/ehr#cell> and never ends',
                 id="a-cycle"),
])
def test_a_list_written_by_hand_and_broken_is_an_error_at_its_line(
        tmp_path: Path, written: str, said: str) -> None:
    """``sh:in [ rdf:first "Q-A-1" ]`` (no ``rdf:rest``) validated; an engine read it as it
    could, and the gate rejected every value, showing the shape's message for the pattern
    beside it."""
    ontology, line = ontology_edited(
        tmp_path, SHAPE,
        SHAPE + f"    sh:property [ sh:path :queueRef ; sh:in {written} ] ;\n")
    text = ontology.read_text(encoding="utf-8")
    if "@prefix rdf:" not in text:
        ontology.write_text(
            "@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .\n" + text,
            encoding="utf-8")
        line += 1
    if written == ":cell":
        with ontology.open("a", encoding="utf-8") as f:
            f.write('\n:cell rdf:first "Q-A-1" ; rdf:rest :cell .\n')
    found = problems(TRIAGE[0], TRIAGE, ontology)
    (p,) = [p for p in found if "its list is broken" in p.message] or [
        "\n".join(map(str, found))]
    assert p.severity == "error" and said in p.message, str(p)
    assert p.line == line + 1 and p.file.endswith("ehr.ttl"), str(p)
