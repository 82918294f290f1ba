"""A domain shape's mistakes, caught before anything runs, at the line that makes them.

A shape that names what nothing declares checks nothing, silently: a misspelt target never
applies, a misspelt path or class reads what no node has, a ``sh:node`` or ``horis:shape``
naming no shape is skipped, ``sh:deactivated "false"`` switches the shape off. A constraint
no SHACL engine can load (``sh:maxCount "one"``, an invalid ``sh:pattern``) surfaced as a
traceback from the gate, after the step's tool had been called. Each is reported by
``horismos validate`` and refused by ``Agent``/``horismos run`` with its file and line.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from forked import horismos_forked
from workflow_edits import TRIAGE, edited, ontology_edited, problems

from horismos import Agent, AuthoringError, Problem

ONTOLOGY = TRIAGE[1]


def loaded(tmp_path: Path, ontology: Path, workflow: Path = TRIAGE[0]) -> list[Problem]:
    """What loading the definitions, then building an agent on them, reports."""
    found = problems(workflow, TRIAGE, ontology)
    if any(p.severity == "error" for p in found):
        return found
    try:
        Agent.from_files(workflow, ontology)
    except AuthoringError as e:
        return [*found, *e.problems]
    return found


@pytest.mark.parametrize(("old", "new", "severity", "said", "hint"), [
    ("sh:targetClass :Patient ;", "sh:targetClass :Patinet ;", "warning",
     "sh:targetClass :Patinet is declared by no loaded ontology", "did you mean :Patient?"),
    ("sh:targetClass :Patient ;", "sh:targetSubjectsOf :queueRf ;", "warning",
     "sh:targetSubjectsOf :queueRf is declared by no loaded ontology and used by no loaded "
     "data, so the shape never applies", "did you mean :queueRef?"),
    ("sh:targetClass :Patient ;", "sh:targetObjectsOf :asignedNurse ;", "warning",
     "sh:targetObjectsOf :asignedNurse is declared by no loaded ontology",
     "did you mean :assignedNurse?"),
    ("sh:path :queueRef ;", "sh:path :queueRf ;", "warning",
     "sh:path names :queueRf", "did you mean :queueRef?"),
    ("sh:maxCount 1 ;", "sh:maxCount 1 ; sh:datatype xsd:strng ;", "error",
     "sh:datatype xsd:strng is not an XML Schema datatype", "did you mean xsd:string?"),
    # a datatype of the ontology's own namespace that it never declares: said nowhere
    ("sh:maxCount 1 ;", "sh:maxCount 1 ; sh:datatype :QueueCode ;", "warning",
     "sh:datatype :QueueCode is declared by no loaded ontology (as :QueueCode a "
     "rdfs:Datatype) and used by no loaded data, so no value is of it", "declare it"),
    ("sh:targetClass :Patient ;", 'sh:targetClass :Patient ; sh:deactivated "false" ;', "error",
     'sh:deactivated "false" is not a boolean', "without quotes"),
    ("sh:targetClass :Patient ;", "sh:targetClass :Patient ; sh:node :PatientShap ;", "error",
     "sh:node :PatientShap names no shape", "did you mean :PatientShape?"),
    ("sh:maxCount 1 ;", 'sh:maxCount 1 ; sh:in "Q-URGENT-1" ;', "error",
     'sh:in takes a list, and "Q-URGENT-1" is none', "sh:in ( … )"),
    ("sh:path :queueRef ;", "", "error",
     "a property shape names no sh:path", "sh:path :queueRef"),
    # values of the other kind than the property's: every result landing on a patient that
    # holds it was rejected by the gate, after its tool had acted
    ("sh:targetClass :Patient ;", 'sh:targetClass :Patient ; sh:property [ sh:path :acuity ; '
     'sh:in ( "urgent" "routine" ) ] ;', "error", 'sh:in lists "urgent", "routine", but :acuity '
     "is an owl:ObjectProperty: its values are nodes, so no value of :acuity is in the list",
     "write the nodes: sh:in ( :urgent :routine )"),
    ("sh:targetClass :Patient ;", 'sh:targetClass :Patient ; sh:property [ sh:path :onDuty ; '
     'sh:in ( "true" ) ] ;', "error", 'sh:in lists "true", but :onDuty has rdfs:range '
     "xsd:boolean, so no value of :onDuty is in the list", "write sh:in ( true )"),
    ("sh:targetClass :Patient ;", 'sh:targetClass :Patient ; sh:property [ sh:path :onDuty ; '
     'sh:in ( true "yes" ) ] ;', "warning", 'sh:in lists "yes", but :onDuty has rdfs:range '
     "xsd:boolean, so no value of it equals that one", "write values of xsd:boolean"),
    # a required property nothing declares or writes fails every node, not "checks a property
    # no node has": every result the gate judges by it is rejected, after its tool has acted
    ("sh:targetClass :Patient ;", "sh:targetClass :Patient ; sh:property [ sh:path :triagedAt ; "
     "sh:minCount 1 ] ;", "warning", "sh:path names :triagedAt, which no loaded ontology "
     "declares, no tool's effect writes and no loaded data uses, so its sh:minCount 1 fails "
     "every :Patient: every result of :ehr.assign_queue, :ehr.notify_nurse on a :Patient would be "
     "rejected by the gate, after the tool has acted, unless the world holds :triagedAt "
     "(`horismos validate FILES --world DATA` decides)", "sh:minCount 0"),
    # members the shape's own constraints refuse: no value meets both, or a listed one never
    # lands (the gate judged by the pattern a value the list allowed)
    ("sh:maxCount 1 ;", 'sh:maxCount 1 ; sh:in ( "urgent" "routine" ) ;', "error",
     'sh:in lists "urgent", "routine", and sh:pattern "^Q-[A-Z]+-[0-9]+$" refuses each, so no '
     "value of :queueRef is in the list and meets the shape: the gate rejects",
     'list only values that meet sh:pattern "^Q-[A-Z]+-[0-9]+$"'),
    ("sh:maxCount 1 ;", 'sh:maxCount 1 ; sh:in ( "Q-URGENT-1" "routine" ) ;', "warning",
     'sh:in lists "routine", which sh:pattern "^Q-[A-Z]+-[0-9]+$" refuses, so a value of '
     ":queueRef equal to it breaks the shape though the list allows it", "or correct sh:pattern"),
    ("sh:maxCount 1 ;", 'sh:maxCount 1 ; sh:in ( "Q-URGENT-10" ) ; sh:maxLength 10 ;', "error",
     'sh:in lists "Q-URGENT-10", and sh:maxLength 10 refuses it', "sh:maxLength 10"),
    ("sh:maxCount 1 ;", 'sh:maxCount 1 ; sh:hasValue "urgent" ;', "error",
     'sh:hasValue "urgent" is refused by sh:pattern "^Q-[A-Z]+-[0-9]+$" of the same shape: '
     "every node must hold the value and none may, so no node conforms", "write the value meant"),
    ("sh:maxCount 1 ;", 'sh:maxCount 1 ; sh:hasValue "Q-URGENT-1" ; sh:in ( "Q-ROUTINE-1" ) ;',
     "error", 'sh:hasValue "Q-URGENT-1" is refused by sh:in ( "Q-ROUTINE-1" ) of the same shape',
     'or correct sh:in ( "Q-ROUTINE-1" )'),
    ("sh:maxCount 1 ;", 'sh:maxCount "one" ;', "error",
     'sh:maxCount "one" is not an integer, so no SHACL engine can load the shape',
     "write sh:maxCount with a whole number"),
    ('sh:pattern "^Q-[A-Z]+-[0-9]+$" ;', 'sh:pattern "^Q-([A-Z]+-[0-9]+$" ;', "error",
     'sh:pattern "^Q-([A-Z]+-[0-9]+$" is no regular expression (missing ), unterminated '
     "subpattern", "correct the expression"),
])
def test_a_domain_shapes_mistake_is_reported_at_its_line(
    tmp_path: Path, old: str, new: str, severity: str, said: str, hint: str
) -> None:
    ontology, line = ontology_edited(tmp_path, old, new)
    found = [p for p in loaded(tmp_path, ontology) if said in p.message]
    assert len(found) == 1, "\n".join(map(str, loaded(tmp_path, ontology)))
    (p,) = found
    assert p.severity == severity and hint in (p.hint or "")
    assert p.file.endswith(ONTOLOGY.name) and line - 3 <= (p.line or 0) <= line, p


@pytest.mark.parametrize(("old", "new", "said", "hint"), [
    ("sh:maxCount 1 ;", 'sh:maxCount 1 ; sh:minCount "1" ;',
     'sh:minCount "1" is not an integer', "write sh:minCount 1 without quotes"),
    ("sh:maxCount 1 ;", 'sh:maxCount 1 ; sh:maxLength "3" ;',
     'sh:maxLength "3" is not an integer', "write sh:maxLength 3 without quotes"),
    ("sh:maxCount 1 ;", "sh:maxCount 1.5 ;", "sh:maxCount 1.5 is not an integer",
     "write sh:maxCount with a whole number, e.g. sh:maxCount 1"),
    ("sh:path :queueRef ;", 'sh:path "queueRef" ;', 'sh:path "queueRef" is a string',
     "write the property IRI, e.g. sh:path :queueRef"),
    ("sh:targetClass :Patient ;", 'sh:targetClass "Patient" ;',
     'sh:targetClass "Patient" is a string, not a class, so the shape never applies',
     "sh:targetClass names a class: write sh:targetClass :Patient without quotes"),
    ("sh:maxCount 1 ;", 'sh:maxCount 1 ; sh:class "Nurse" ;', 'sh:class "Nurse" is a string',
     "write sh:class :Nurse without quotes"),
])
def test_a_shape_parameter_written_as_a_string_is_one_error_at_its_statement(
    tmp_path: Path, old: str, new: str, said: str, hint: str
) -> None:
    """sh:targetClass "Patient" switched the shape off without a word; sh:minCount "1" was
    said at the property shape's opening line, as "[] under :PatientShape cannot be checked",
    with a hint to read the SHACL specification."""
    ontology, line = ontology_edited(tmp_path, old, new)
    found = loaded(tmp_path, ontology)
    assert len(found) == 1, "\n".join(map(str, found))
    (p,) = found
    assert (p.severity, p.file, p.line, p.node) == ("error", str(ontology), line,
                                                    ":PatientShape"), p
    assert said in p.message and hint in (p.hint or ""), p


@pytest.mark.parametrize(("old", "level", "shape"), [
    ("sh:maxCount 1 ;", "sh:Warning", "the :queueRef property shape of :PatientShape"),
    ("sh:targetClass :Patient ;", "sh:Info", ":PatientShape"),
])
def test_a_severity_below_violation_is_a_warning_that_the_gate_blocks_anyway(
    tmp_path: Path, old: str, level: str, shape: str
) -> None:
    """A modeler wrote sh:severity sh:Warning to mean "report, do not block"; the gate rejects
    a result on any finding, so every malformed queue reference was rejected after the tool
    had acted, as before."""
    ontology, line = ontology_edited(tmp_path, old, f"{old}\n        sh:severity {level} ;")
    found = loaded(tmp_path, ontology)
    assert len(found) == 1, "\n".join(map(str, found))
    (p,) = found
    assert (p.severity, p.file, p.line, p.node) == ("warning", str(ontology), line + 1,
                                                    ":PatientShape"), p
    assert p.message.startswith(f"sh:severity {level} on {shape} does not let its findings "
                                "through: the gate rejects the result on any finding"), p
    assert "remove the constraint if it should not block the step" in (p.hint or "")
    ontology, _ = ontology_edited(tmp_path, old, f"{old} sh:severity sh:Violation ;")
    assert loaded(tmp_path, ontology) == []


@pytest.mark.parametrize(("new", "said", "hint"), [
    ("horis:shape :PatientShap ;", "horis:shape :PatientShap names no shape",
     "did you mean :PatientShape?"),
    ("horis:shape :Patient ;", "horis:shape :Patient names no shape", "did you mean"),
    ("horis:shape [ a <http://www.w3.org/ns/shacl#NodeShape> ] ;",
     "horis:shape names a shape written in place",
     "declare the shape with an IRI"),
])
def test_an_effect_shape_that_is_no_shape_is_an_error(
    tmp_path: Path, new: str, said: str, hint: str
) -> None:
    """Ignored before: the result landed unchecked by the shape the modeler meant."""
    anchor = "horis:asserts [ horis:property :queuedAt ; horis:value horis:now ] ;"
    workflow, line = edited(tmp_path, TRIAGE, anchor, f"{anchor} {new}")
    found = [p for p in problems(workflow, TRIAGE) if said in p.message]
    assert len(found) == 1 and found[0].severity == "error", problems(workflow, TRIAGE)
    assert hint in (found[0].hint or "") and found[0].line == line


def test_run_refuses_a_shape_it_cannot_load_with_its_line_and_no_traceback(tmp_path: Path) -> None:
    ontology, _ = ontology_edited(tmp_path, 'sh:pattern "^Q-[A-Z]+-[0-9]+$" ;',
                                  'sh:pattern "^Q-([A-Z]+-[0-9]+$" ;')
    (tmp_path / "w.ttl").write_text("@prefix : <http://example.org/ehr#> .\n:p a :Patient .\n")
    run = horismos_forked(tmp_path, "run", str(TRIAGE[0]), str(ontology), "--world", "w.ttl",
                          "--all")
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert f"{ONTOLOGY.name}:" in run.stderr and "unterminated subpattern" in run.stderr
    assert Agent.from_files(*TRIAGE).definitions.tools  # the shipped ones load as before


@pytest.mark.parametrize(("old", "new", "said"), [
    pytest.param("sh:maxCount 1 ;", "sh:maxCount 1 ;\n        sh:datatype xsd:strng ;",
                 "sh:datatype xsd:strng is not an XML Schema datatype, so no value can conform "
                 "— did you mean xsd:string?", id="misspelt-datatype"),
    pytest.param('sh:pattern "^Q-[A-Z]+-[0-9]+$" ;', 'sh:pattern "^Q-(A-Z]+-[0-9]+$" ;',
                 'sh:pattern "^Q-(A-Z]+-[0-9]+$" is no regular expression (missing ), '
                 "unterminated subpattern at position 3), so the shape cannot be checked — "
                 "correct the expression: a ( or [ opened and not closed, or a bracket meant "
                 r"literally and not escaped (\( \[)", id="invalid-pattern"),
    # numbers listed for a string: said at the shape, and not again at the effect it rejects
    pytest.param("sh:maxCount 1 ;", "sh:maxCount 1 ; sh:in ( 1 2 ) ;",
                 "sh:in lists 1, 2, but :queueRef has rdfs:range xsd:string, so no value of "
                 ":queueRef is in the list and every node holding it breaks the shape: the gate "
                 "rejects the result of every tool that lands a node the shape judges, after the "
                 "tool has acted "
                 '— write sh:in ( "1" "2" )', id="in-of-other-kind"),
])
def test_a_shapes_slip_is_one_error_at_its_own_line_pointing_the_right_way(
        tmp_path: Path, old: str, new: str, said: str) -> None:
    # A misspelt sh:datatype also made the effect "contradict" the shape, with the hint
    # "write horis:type xsd:strng in the effect" (the typo, spread); an invalid sh:pattern
    # was "[] under :PatientShape cannot be checked: missing ), …", at the sh:property line.
    ontology, line = ontology_edited(tmp_path, old, new)
    p = horismos_forked(tmp_path, "validate", str(TRIAGE[0]), ontology.name, timeout=120)
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stdout.splitlines() == [
        f"{ontology.name}:{line + new.count(chr(10))}: error: :PatientShape: {said}",
        "invalid: 1 error",
    ], p.stdout


def pattern_said(tmp_path: Path, pattern: str) -> tuple[list[Problem], int]:
    """What loading the ontology with ``pattern`` (as Turtle writes it) as the patient shape's
    ``sh:pattern`` says of patterns, and the line it is written at."""
    ontology, line = ontology_edited(tmp_path, 'sh:pattern "^Q-[A-Z]+-[0-9]+$" ;',
                                     f'sh:pattern "{pattern}" ;')
    return [p for p in loaded(tmp_path, ontology) if "sh:pattern" in p.message], line


@pytest.mark.parametrize(("pattern", "hint"), [
    # each refusal its own advice: the open bracket's was given for every one of them
    (r"^Q-\\k[A-Z]+$", r'a backslash meant literally is \\ in the expression, written "\\\\"'),
    ("^Q-**$", r"a quantifier (* + ? {n,m}) follows nothing it can repeat; one meant literally "
     r"is escaped (\* \+ \?)"),
    ("^Q-[A-Z]{5,2}$", "a {n,m} repeats n to m times, the smaller first"),
    ("^Q-[Z-A]+$", "a range in [ ] runs from its lower character to its higher"),
    ("^Q-(?<level>[A-Z]+)$", "SHACL's regular expressions (XPath's) have no (?…) groups but "
     "(?:…)"),
    (r"^Q-([A-Z]+)-\\2$", r"a back-reference \N names a ( ) group before it, counted from \1"),
])
def test_a_pattern_that_is_no_regular_expression_says_what_to_change_for_its_fault(
        tmp_path: Path, pattern: str, hint: str) -> None:
    (p,), line = pattern_said(tmp_path, pattern)
    assert "is no regular expression" in p.message and p.line == line and hint in (p.hint or ""), p
    assert ("opened and not closed" in (p.hint or "")) is False, p


def test_a_groups_flags_other_than_case_are_not_told_to_write_the_letters_both_ways(
        tmp_path: Path) -> None:
    (p,), _ = pattern_said(tmp_path, "^(?s:Q.)-[A-Z]+-[0-9]+$")
    assert "inline flags" in p.message and "both ways" not in (p.hint or ""), p


@pytest.mark.parametrize(("pattern", "uses", "hint"), [
    ("^Q-(?=[A-Z])[A-Z]+-[0-9]+$", "a lookaround", "write the pattern without it"),
    ("^Q-[A-Z]+-(?!0)[0-9]+$", "a negative lookaround", "sh:not [ sh:path … ; sh:pattern … ]"),
    (r"\\bQ-[A-Z]+-[0-9]+$", r"\b", r"write the characters around the word"),
    (r"\\AQ-[A-Z]+-[0-9]+\\Z", r"\A and \Z", r"for \A, write ^; for \Z, write $"),
    ("(?i)^q-[a-z]+-[0-9]+$", "inline flags, (?i)", 'write them in sh:flags, e.g. sh:flags "i"'),
    ("^(?i:q)-[A-Z]+-[0-9]+$", "a group's inline flags, (?i:…)", "both ways ([Qq])"),
    ("^Q-(?P<level>[A-Z]+)-[0-9]+$", "a named group", r"write (…) and refer to it as \1"),
    ("^Q-[A-Z]++-[0-9]+$", "a possessive quantifier", "drop the + after the quantifier"),
    ("^Q-(?>[A-Z]+)-[0-9]+$", "an atomic group", "write (?:…) or (…)"),
])
def test_a_pattern_in_pythons_dialect_and_not_shacls_is_warned_of_at_its_line(
        tmp_path: Path, pattern: str, uses: str, hint: str) -> None:
    # the gate judges by Python's re, and took these; an engine keeping to XPath's expressions,
    # as sh:pattern is defined, refuses them or matches otherwise
    (p,), line = pattern_said(tmp_path, pattern)
    assert p.severity == "warning" and p.line == line, p
    value = pattern.replace("\\\\", "\\")  # the literal's value, its Turtle escapes read
    assert f'sh:pattern "{value}" uses {uses}' in p.message, p
    assert hint in (p.hint or ""), p


@pytest.mark.parametrize("pattern", [
    "^Q-[A-Z]+?-[0-9]+$", "^Q-(?:[A-Z]+)-[0-9]{1,3}$", r"^Q-([A-Z])\\1*-[0-9]+$",
])
def test_a_pattern_xpath_reads_too_is_not_warned_of(tmp_path: Path, pattern: str) -> None:
    assert pattern_said(tmp_path, pattern)[0] == []


@pytest.mark.parametrize(("pattern", "uses", "hint"), [
    (r"^Q-\\p{Lu}+-[0-9]+$", r"\p{…}, a Unicode category or block", "[A-Z] for \\p{Lu}"),
    (r"^Q-\\i\\c*$", r"\i, XML's name-start characters", "[A-Za-z_:][A-Za-z0-9._:-]*"),
])
def test_a_pattern_in_shacls_dialect_that_python_cannot_read_says_so_not_that_it_is_wrong(
        tmp_path: Path, pattern: str, uses: str, hint: str) -> None:
    # it was "is no regular expression (bad escape \p …)", with the advice for an open bracket
    (p,), line = pattern_said(tmp_path, pattern)
    assert p.severity == "error" and p.line == line, p
    assert f"uses {uses} at position 3, which SHACL's regular expressions" in p.message, p
    assert "no regular expression" not in p.message and hint in (p.hint or ""), p


# -- an effect its domain shapes forbid ---------------------------------------------------------

QUEUE_REF = "horis:asserts [ horis:property :queueRef ; horis:type xsd:string ]"


@pytest.mark.parametrize(("old", "new", "requires", "hint"), [
    ("sh:maxCount 1 ;", "sh:maxCount 1 ; sh:datatype xsd:token ;", "sh:datatype xsd:token",
     "write horis:type xsd:token in the effect, or sh:datatype xsd:string in the shape"),
    # one declared nowhere: the effect was told to write horis:type :QueueCode, a datatype
    # no literal has
    ("sh:maxCount 1 ;", "sh:maxCount 1 ; sh:datatype :QueueCode ;", "sh:datatype :QueueCode",
     "write sh:datatype xsd:string in the shape: :QueueCode is no datatype the files declare"),
    ("sh:maxCount 1 ;", "sh:maxCount 1 ; sh:nodeKind sh:IRI ;", "sh:nodeKind sh:IRI",
     "correct the shape"),
    ("sh:maxCount 1 ;", "sh:maxCount 0 ;", "sh:maxCount 0", "drop the property"),
])
def test_an_effect_its_domain_shape_forbids_is_an_error_at_the_assertion(
    tmp_path: Path, old: str, new: str, requires: str, hint: str
) -> None:
    """It validated; every run called :ehr.assign_queue — which acted — and then the gate
    rejected what it returned, on every call."""
    ontology, _ = ontology_edited(tmp_path, old, new)
    line = TRIAGE[0].read_text(encoding="utf-8").splitlines().index(f"        {QUEUE_REF}") + 1
    found = [p for p in loaded(tmp_path, ontology) if "the gate would reject" in p.message]
    assert len(found) == 1, "\n".join(map(str, loaded(tmp_path, ontology)))
    (p,) = found
    assert p.severity == "error" and p.line == line and p.file.endswith(TRIAGE[0].name), p
    assert p.message.startswith(
        "the effect writes :queueRef as a literal of xsd:string, but shape :PatientShape "
        f"requires {requires}: the gate would reject every call of :ehr.assign_queue")
    assert hint in (p.hint or "")


def test_an_sh_class_on_what_the_effect_writes_as_a_literal_is_an_error_at_the_constraint(
        tmp_path: Path) -> None:
    """It validated, and the gate rejected every call: a literal is an instance of no class,
    so sh:class xsd:string on :queueRef (returned as a string) holds for no value."""
    ontology, line = ontology_edited(tmp_path, "sh:maxCount 1 ;",
                                     "sh:maxCount 1 ; sh:class xsd:string ;")
    found = [p for p in loaded(tmp_path, ontology) if "the gate would reject" in p.message]
    assert len(found) == 1, "\n".join(map(str, loaded(tmp_path, ontology)))
    (p,) = found
    assert (p.severity, p.file, p.line) == ("error", str(ontology), line), p
    assert ("the effect writes :queueRef as a literal of xsd:string, but shape :PatientShape "
            "requires sh:class xsd:string") in p.message
    assert "write sh:datatype xsd:string instead of sh:class xsd:string" in (p.hint or "")


def test_a_fixed_value_outside_the_shapes_list_is_an_error_and_one_inside_is_not(
        tmp_path: Path) -> None:
    ontology, _ = ontology_edited(  # its own property shape: :queueRef's sh:pattern stays
        tmp_path, "sh:targetClass :Patient ;",
        'sh:targetClass :Patient ; '
        'sh:property [ sh:path :triageState ; sh:in ( "queued" "seen" ) ] ;')
    for value, rejected in (('"queud"', True), ('"queued"', False)):
        workflow, line = edited(tmp_path, TRIAGE, QUEUE_REF,
                                f"{QUEUE_REF} ; horis:asserts [ horis:property :triageState ; "
                                f"horis:value {value} ]")
        found = [p for p in loaded(tmp_path, ontology, workflow)
                 if "the gate would reject" in p.message]
        assert bool(found) is rejected, found
        if rejected:
            assert 'requires sh:in ("queued" "seen")' in found[0].message
            assert found[0].line == line


PATTERN = 'sh:pattern "^Q-[A-Z]+-[0-9]+$" ;'


@pytest.mark.parametrize(("constraint", "value", "requires"), [
    (PATTERN, '"pending"', 'sh:pattern "^Q-[A-Z]+-[0-9]+$"'),
    ('sh:pattern "^q-[a-z]+-[0-9]+$" ;', '"Q-URGENT-7"', 'sh:pattern "^q-[a-z]+-[0-9]+$"'),
    ('sh:minLength 12 ;', '"Q-URGENT-7"', "sh:minLength 12"),
    ('sh:maxLength 5 ;', '"Q-URGENT-7"', "sh:maxLength 5"),
    ('sh:maxInclusive "Q-B" ;', '"Q-URGENT-7"', 'sh:maxInclusive "Q-B"'),
    ('sh:minExclusive "Q-URGENT-7" ;', '"Q-URGENT-7"', 'sh:minExclusive "Q-URGENT-7"'),
    ('sh:hasValue "Q-URGENT-1" ;', '"Q-URGENT-7"', 'sh:hasValue "Q-URGENT-1" with sh:maxCount 1'),
    ('sh:languageIn ( "en" ) ;', '"Q-URGENT-7"', 'sh:languageIn ("en")'),
])
def test_a_fixed_value_a_constraint_of_its_shape_refuses_is_an_error_naming_both(
    tmp_path: Path, constraint: str, value: str, requires: str
) -> None:
    """horis:value "pending" for :queueRef under sh:pattern "^Q-…" validated; the gate then
    rejected every call of :ehr.assign_queue, after the tool had acted."""
    ontology, _ = ontology_edited(tmp_path, PATTERN, constraint)
    workflow, line = edited(tmp_path, TRIAGE, QUEUE_REF,
                            f"horis:asserts [ horis:property :queueRef ; horis:value {value} ]")
    found = loaded(tmp_path, ontology, workflow)
    assert len(found) == 1, "\n".join(map(str, found))
    (p,) = found
    assert (p.severity, p.file, p.line) == ("error", str(workflow), line), p
    assert p.message.startswith(
        f"the effect writes :queueRef as {value}, but shape :PatientShape requires {requires}: "
        "the gate would reject every call of :ehr.assign_queue"), p
    assert "write a horis:value that meets it" in (p.hint or "")


@pytest.mark.parametrize(("constraint", "value"), [
    (PATTERN, '"Q-URGENT-7"'),
    ('sh:pattern "^q-[a-z]+-[0-9]+$" ; sh:flags "i" ;', '"Q-URGENT-7"'),
    ('sh:maxLength 10 ;', '"Q-URGENT-7"'),
    ('sh:maxInclusive "Q-V" ;', '"Q-URGENT-7"'),
    ('sh:hasValue "Q-URGENT-7" ;', '"Q-URGENT-7"'),
    ('sh:languageIn ( "en" ) ;', '"Q-URGENT-7"@en-GB'),
])
def test_a_fixed_value_its_shape_allows_says_nothing(
    tmp_path: Path, constraint: str, value: str
) -> None:
    ontology, _ = ontology_edited(tmp_path, PATTERN, constraint)
    workflow, _ = edited(tmp_path, TRIAGE, QUEUE_REF,
                         f"horis:asserts [ horis:property :queueRef ; horis:value {value} ]")
    assert not [p for p in loaded(tmp_path, ontology, workflow)
                if "the gate would reject" in p.message]


def test_sh_has_value_is_left_to_the_gate_where_the_world_may_hold_it_beside(
        tmp_path: Path) -> None:
    """Without sh:maxCount 1 the node may already hold "Q-URGENT-1", which the shape then
    finds beside the value written: not every call is rejected."""
    ontology, _ = ontology_edited(tmp_path, f"sh:maxCount 1 ;\n        {PATTERN}",
                                  'sh:hasValue "Q-URGENT-1" ;')
    workflow, _ = edited(tmp_path, TRIAGE, QUEUE_REF,
                         'horis:asserts [ horis:property :queueRef ; horis:value "Q-URGENT-7" ]')
    assert not [p for p in loaded(tmp_path, ontology, workflow)
                if "the gate would reject" in p.message]


def test_sh_language_in_on_what_carries_no_language_tag_is_an_error(tmp_path: Path) -> None:
    """A literal of xsd:string has no language tag, so sh:languageIn refused every value the
    tool returned; horis:now, a time stamp, is judged by its datatype, as the same."""
    ontology, _ = ontology_edited(tmp_path, PATTERN, 'sh:languageIn ( "en" ) ;')
    line = TRIAGE[0].read_text(encoding="utf-8").splitlines().index(f"        {QUEUE_REF}") + 1
    (p,) = [p for p in loaded(tmp_path, ontology) if "the gate would reject" in p.message]
    assert (p.severity, p.line) == ("error", line), p
    assert ('the effect writes :queueRef as a literal of xsd:string, but shape :PatientShape '
            'requires sh:languageIn ("en") (a language-tagged string; a literal of xsd:string '
            "carries no language tag)") in p.message
    assert "take sh:languageIn out of the shape" in (p.hint or "")
    ontology, _ = ontology_edited(tmp_path, "sh:path :queueRef ;",
                                  'sh:path :queuedAt ; sh:languageIn ( "en" ) ;')
    (p,) = [p for p in loaded(tmp_path, ontology) if "the gate would reject" in p.message]
    assert "writes :queuedAt as a literal of xsd:dateTime" in p.message, p


def test_a_time_stamp_is_judged_by_its_datatype_alone(tmp_path: Path) -> None:
    """horis:now is no value the loader knows: a range is the gate's to judge (it hangs on
    when the call is made), and so is a pattern its text can match. A pattern it never matches
    is judged: test_authoring_now_pattern.py."""
    ontology, _ = ontology_edited(
        tmp_path, "sh:path :queueRef ;",
        'sh:path :queuedAt ; sh:maxExclusive "2020-01-01T00:00:00Z"^^xsd:dateTime ; '
        'sh:pattern "^[0-9]{4}-" ] ; sh:property [ sh:path :queueRef ;')
    assert not [p for p in loaded(tmp_path, ontology) if "the gate would reject" in p.message]


def test_a_time_stamp_of_another_datatype_is_told_to_mend_the_shape(tmp_path: Path) -> None:
    """``sh:datatype xsd:date`` on the property horis:now writes: told "write a horis:value of
    xsd:date", a fixed date for the time of the call; the clock writes a date-time only."""
    ontology, _ = ontology_edited(tmp_path, "sh:path :queueRef ;",
                                  "sh:path :queuedAt ; sh:datatype xsd:date ;")
    (p,) = [p for p in loaded(tmp_path, ontology) if "the gate would reject" in p.message]
    assert "writes :queuedAt as a literal of xsd:dateTime" in p.message, p
    assert p.hint == ("write sh:datatype xsd:dateTime in the shape: horis:now writes the time "
                      "of the call as xsd:dateTime"), p.hint


def test_a_shape_that_does_not_judge_the_subject_or_is_deactivated_says_nothing(
        tmp_path: Path) -> None:
    for old, new in (("sh:targetClass :Patient ;", "sh:targetClass :Nurse ;"),
                     ("sh:targetClass :Patient ;",
                      "sh:targetClass :Patient ; sh:deactivated true ;"),
                     ("sh:maxCount 1 ;", "sh:maxCount 1 ; sh:datatype xsd:string ;")):
        ontology, _ = ontology_edited(tmp_path, old, new)
        assert not [p for p in loaded(tmp_path, ontology)
                    if "the gate would reject" in p.message], (old, new)


def test_an_optional_assertion_a_shape_forbids_is_a_warning(tmp_path: Path) -> None:
    ontology, _ = ontology_edited(tmp_path, "sh:maxCount 1 ;", "sh:maxCount 0 ;")
    workflow, _ = edited(tmp_path, TRIAGE, QUEUE_REF,
                         QUEUE_REF.replace("xsd:string ]", "xsd:string ; horis:optional true ]"))
    found = [p for p in loaded(tmp_path, ontology, workflow)
             if "the gate would reject" in p.message]
    assert [p.severity for p in found] == ["warning"], found


def test_the_vocabulary_lent_to_the_authoring_shapes_is_given_back() -> None:
    """The authoring shapes read the definitions with the horis: vocabulary (its subclasses)
    added in place for the while, not a copy of both: afterwards the definitions hold what
    their files say and nothing more (their digest, and so every trace's, depends on it)."""
    from rdflib import RDFS, Graph

    from horismos import HORIS, load_definitions

    written = Graph()
    for path in TRIAGE:
        written.parse(path)
    defs = load_definitions(TRIAGE)
    assert (HORIS.ActionStep, RDFS.subClassOf, HORIS.Step) not in defs.graph
    assert len(defs.graph) == len(written)


def test_a_property_a_shape_requires_that_a_later_step_writes_is_warned_of_at_the_earlier(
        tmp_path: Path) -> None:
    """sh:minCount 1 on :assignedNurse, which only :NotifyNurse writes: the gate judges the
    patient as :QueuePatient leaves it, so it rejects the queue assignment — after the tool
    has assigned the queue — on every patient the world does not already give a nurse.
    `validate` said "valid"."""
    ontology, _ = ontology_edited(
        tmp_path, "    sh:property [\n        sh:path :queueRef ;",
        "    sh:property [ sh:path :assignedNurse ; sh:minCount 1 ] ;\n"
        "    sh:property [\n        sh:path :queueRef ;")
    found = [p for p in loaded(tmp_path, ontology) if "sh:minCount" in p.message]
    assert [(p.severity, p.node) for p in found] == [("warning", ":QueuePatient")], found
    text = TRIAGE[0].read_text(encoding="utf-8")
    assert found[0].line == text[: text.index(":QueuePatient a")].count("\n") + 1
    assert ":PatientShape requires :assignedNurse" in found[0].message
    assert "only later, at :NotifyNurse" in found[0].message
    assert "sh:minCount 0" in (found[0].hint or "")
    # the step that writes it, and a property only the world's data brings, say nothing
    ontology, _ = ontology_edited(
        tmp_path, "    sh:property [\n        sh:path :queueRef ;",
        "    sh:property [ sh:path :queueRef ; sh:minCount 1 ] ;\n"
        "    sh:property [ sh:path :acuity ; sh:minCount 1 ] ;\n"
        "    sh:property [\n        sh:path :queueRef ;")
    assert not [p for p in loaded(tmp_path, ontology) if "sh:minCount" in p.message]


def test_a_shape_requiring_what_is_written_after_a_wait_is_warned_at_the_wait(
        tmp_path: Path) -> None:
    # sh:minCount 1 on :rebookedOn, which the workflow writes after the operator answers:
    # every answer (":booking2 :operatorChoice :VS3 .") was refused by the shape, and the
    # wait could never end by its horis:until.
    from workflow_edits import REBOOKING

    text = REBOOKING[1].read_text(encoding="utf-8")
    old = "        sh:path :rebookedOn ;\n        sh:class :Flight ;\n"
    assert text.count(old) == 1
    ontology = tmp_path / "travel.ttl"
    ontology.write_text(text.replace(old, old + "        sh:minCount 1 ;\n"), encoding="utf-8")
    (w,) = problems(REBOOKING[0], REBOOKING, ontology)
    assert w.severity == "warning" and w.node == ":AskOperator"
    assert "the facts that answer this wait are about the instance's :Booking" in w.message
    line = REBOOKING[0].read_text().splitlines()[(w.line or 0) - 1]
    assert "horis:until" in line


# -- a property the shapes allow one value of, written twice ------------------------------------

NOTIFIED_AT = "horis:asserts [ horis:property :notifiedAt ; horis:value horis:now ]"
TRIAGE_STATUS = """
:TriageStatus a owl:Class .
:triageStatus a owl:ObjectProperty ; rdfs:domain :Patient ; rdfs:range :TriageStatus .
:Queued a :TriageStatus . :NurseNotified a :TriageStatus .
"""


def status_written_twice(tmp_path: Path, queued: str, notified: str,
                         limit: str = "sh:maxCount 1") -> tuple[Path, Path, int]:
    """ehr.assign_queue and :ehr.notify_nurse each assert :triageStatus on the patient, which
    :PatientShape limits by ``limit``: the workflow, the ontology and the second one's line."""
    ontology, _ = ontology_edited(
        tmp_path, "    sh:property [\n        sh:path :queueRef ;",
        f"    sh:property [ sh:path :triageStatus ; {limit} ] ;\n"
        "    sh:property [\n        sh:path :queueRef ;")
    ontology.write_text(ontology.read_text(encoding="utf-8") + TRIAGE_STATUS, encoding="utf-8")
    workflow, _ = edited(tmp_path, TRIAGE, QUEUE_REF,
                         f"{QUEUE_REF} ;\n        horis:asserts [ horis:property :triageStatus ; "
                         f"horis:value {queued} ]")
    text = workflow.read_text(encoding="utf-8")
    assert text.count(NOTIFIED_AT) == 1
    workflow.write_text(text.replace(NOTIFIED_AT, f"{NOTIFIED_AT} ;\n        horis:asserts [ "
                                     f"horis:property :triageStatus ; horis:value {notified} ]"),
                        encoding="utf-8")
    return workflow, ontology, text[: text.index(NOTIFIED_AT)].count("\n") + 2


def test_a_single_valued_property_two_steps_write_on_one_path_is_warned_of_at_the_second(
        tmp_path: Path) -> None:
    """:QueuePatient wrote :triageStatus :Queued, then :NotifyNurse :NurseNotified: an effect
    adds a value, so the gate rejected the nurse's page — after it was sent — on every
    patient, "More than 1 values". `validate` said "valid"."""
    workflow, ontology, line = status_written_twice(tmp_path, ":Queued", ":NurseNotified")
    found = [p for p in loaded(tmp_path, ontology, workflow) if "sh:maxCount 1" in p.message]
    assert [(p.severity, p.node, p.file, p.line) for p in found] == [
        ("warning", ":ehr.notify_nurse", str(workflow), line)], found
    assert found[0].message == (
        "at :NotifyNurse this writes :triageStatus on the instance's :Patient, which "
        ":QueuePatient (:ehr.assign_queue) wrote before it on the same path, and shape "
        ":PatientShape allows one value of :triageStatus (sh:maxCount 1): an effect adds a "
        "value, never replaces one, so the gate rejects what :ehr.notify_nurse returns at "
        ":NotifyNurse every time — after the tool has acted")
    assert found[0].hint == (
        "write each stage under a property of its own (one at :QueuePatient, another at "
        ":NotifyNurse), or drop sh:maxCount 1 on :triageStatus from :PatientShape")


@pytest.mark.parametrize(("queued", "notified", "limit"), [
    (":Queued", ":Queued", "sh:maxCount 1"),          # one value, written twice: one triple
    (":Queued", ":NurseNotified", "sh:maxCount 2"),   # room for both
    (":Queued", ":NurseNotified", "sh:maxCount 1 ; sh:deactivated true"),
])
def test_a_second_write_the_shape_allows_says_nothing(
        tmp_path: Path, queued: str, notified: str, limit: str) -> None:
    workflow, ontology, _ = status_written_twice(tmp_path, queued, notified, limit)
    assert loaded(tmp_path, ontology, workflow) == []


LAB_STATUS = """
@prefix sh: <http://www.w3.org/ns/shacl#> .
:ReviewStatus a owl:Class .
:reviewStatus a owl:ObjectProperty ; rdfs:domain :LabResult ; rdfs:range :ReviewStatus .
:Escalated a :ReviewStatus . :Filed a :ReviewStatus .
:LabResultShape a sh:NodeShape ; sh:targetClass :LabResult ;
    sh:property [ sh:path :reviewStatus ; sh:maxCount 1 ] .
"""


def test_steps_on_two_branches_of_a_decision_are_not_on_one_path(tmp_path: Path) -> None:
    """:IsCritical goes to :Escalate or to :File, never both: each writes :reviewStatus once.
    Once :Escalate goes on to :File, both run."""
    from workflow_edits import LAB

    ontology = tmp_path / LAB[1].name
    ontology.write_text(LAB[1].read_text(encoding="utf-8") + LAB_STATUS, encoding="utf-8")
    text = LAB[0].read_text(encoding="utf-8")
    for old, new in (
        ("horis:asserts [ horis:property :escalatedAt ; horis:value horis:now ]",
         "horis:asserts [ horis:property :escalatedAt ; horis:value horis:now ] ;\n"
         "        horis:asserts [ horis:property :reviewStatus ; horis:value :Escalated ]"),
        ("horis:asserts [ horis:property :filedAt ; horis:value horis:now ]",
         "horis:asserts [ horis:property :filedAt ; horis:value horis:now ] ;\n"
         "        horis:asserts [ horis:property :reviewStatus ; horis:value :Filed ]"),
    ):
        assert text.count(old) == 1
        text = text.replace(old, new)
    workflow = tmp_path / LAB[0].name
    workflow.write_text(text, encoding="utf-8")
    assert problems(workflow, LAB, ontology) == []

    workflow.write_text(text + ":Escalate horis:next :File .\n", encoding="utf-8")
    (p,) = problems(workflow, LAB, ontology)
    assert p.node == ":lab.file_result" and p.message.startswith(
        "at :File this writes :reviewStatus on the instance's :LabResult, which :Escalate "
        "(:lab.escalate) wrote before it on the same path"), p


def test_a_functional_property_written_twice_says_nothing_the_gate_does_not_enforce_it(
        tmp_path: Path) -> None:
    """No part of Horismos rejects a second value of an owl:FunctionalProperty (the gate
    judges shapes): both steps complete, so there is nothing to warn of."""
    workflow, ontology, _ = status_written_twice(tmp_path, ":Queued", ":NurseNotified",
                                                 "sh:minCount 0")
    text = ontology.read_text(encoding="utf-8")
    ontology.write_text(text.replace(":triageStatus a owl:ObjectProperty",
                                     ":triageStatus a owl:ObjectProperty, owl:FunctionalProperty"),
                        encoding="utf-8")
    assert loaded(tmp_path, ontology, workflow) == []


def test_many_values_of_a_property_a_shape_allows_one_of_is_a_warning_at_the_assertion(
        tmp_path: Path) -> None:
    """:queueRef horis:many true, judged by sh:maxCount 1: the gate rejected every call that
    returned two references, after the tool had queued the patient. One passes: a warning,
    as for an optional assertion a shape forbids."""
    workflow, line = edited(tmp_path, TRIAGE, QUEUE_REF,
                            QUEUE_REF.replace("xsd:string ]", "xsd:string ; horis:many true ]"))
    found = [p for p in loaded(tmp_path, ONTOLOGY, workflow) if "horis:many" in p.message]
    assert [(p.severity, p.node, p.line) for p in found] == [
        ("warning", ":ehr.assign_queue", line)], found
    assert found[0].message == (
        "the effect writes :queueRef as horis:many (a list of values), but shape :PatientShape "
        "allows one (sh:maxCount 1): the gate would reject every call of :ehr.assign_queue "
        "that returns more than one, after the tool has acted")
    assert found[0].hint == ("drop horis:many if the tool returns one value, or raise "
                             "sh:maxCount for :queueRef in the shape")
    ontology, _ = ontology_edited(tmp_path, "sh:maxCount 1 ;", "sh:maxCount 2 ;")
    assert loaded(tmp_path, ontology, workflow) == []


@pytest.mark.parametrize(("target", "warned"), [
    ("sh:targetSubjectsOf :triageStatus", True),   # the focus has it once the first step ran
    ("sh:targetSubjectsOf :queueRef", True),       # written on the focus by :QueuePatient
    ("sh:targetSubjectsOf :escalatedTo", False),   # nothing writes it on the focus
])
def test_a_single_valued_property_of_a_shape_targeting_subjects_is_warned_of_too(
        tmp_path: Path, target: str, warned: bool) -> None:
    """The shape judged the focus by sh:targetSubjectsOf, not sh:targetClass: the second
    write was rejected all the same, after the nurse was paged, and validate said "valid"."""
    workflow, ontology, line = status_written_twice(tmp_path, ":Queued", ":NurseNotified")
    text = ontology.read_text(encoding="utf-8")
    assert text.count("sh:targetClass :Patient ;") == 1
    ontology.write_text(text.replace("sh:targetClass :Patient ;", f"{target} ;"),
                        encoding="utf-8")
    found = [p for p in loaded(tmp_path, ontology, workflow) if "sh:maxCount 1" in p.message]
    if not warned:
        assert found == []
        return
    assert [(p.severity, p.node, p.file, p.line) for p in found] == [
        ("warning", ":ehr.notify_nurse", str(workflow), line)], found
    assert found[0].message.startswith(
        "at :NotifyNurse this writes :triageStatus on the instance's :Patient, which "
        ":QueuePatient (:ehr.assign_queue) wrote before it on the same path, and shape "
        ":PatientShape allows one value of :triageStatus (sh:maxCount 1)")


def test_a_member_of_the_wrong_kind_for_its_property_is_said_once(tmp_path: Path) -> None:
    """"yes" listed for :onDuty (rdfs:range xsd:boolean) beside sh:datatype xsd:boolean: the
    range check says it; the shape's own sh:datatype refusing it too is not said again."""
    ontology, line = ontology_edited(
        tmp_path, "sh:targetClass :Patient ;", "sh:targetClass :Patient ; sh:property [ sh:path "
        ':onDuty ; sh:datatype xsd:boolean ; sh:in ( true "yes" ) ] ;')
    found = [p for p in loaded(tmp_path, ontology) if "sh:in" in p.message]
    assert len(found) == 1, "\n".join(map(str, found))
    assert found[0].message.startswith('sh:in lists "yes", but :onDuty has rdfs:range')
    assert found[0].line == line, found[0]


def test_an_invalid_pattern_is_said_beside_a_slip_that_stops_the_shapes_loading(
        tmp_path: Path) -> None:
    # A sh:maxCount "one" stopped the load, and the broken expression beside it was said only
    # once that was mended: a second round of validate for a mistake already written
    text = ONTOLOGY.read_text(encoding="utf-8")
    for old, new in (("sh:maxCount 1 ;", 'sh:maxCount "one" ;'),
                     ('sh:pattern "^Q-[A-Z]+-[0-9]+$" ;', 'sh:pattern "^Q-([A-Z]+-[0-9]+$" ;')):
        assert text.count(old) == 1
        text = text.replace(old, new)
    ontology = tmp_path / ONTOLOGY.name
    ontology.write_text(text, encoding="utf-8")
    p = horismos_forked(tmp_path, "validate", str(TRIAGE[0]), ontology.name, timeout=120)
    assert p.returncode == 1, p.stdout + p.stderr
    said = p.stdout.splitlines()
    assert said[-1] == "invalid: 2 errors", p.stdout
    assert any('sh:maxCount "one" is not an integer' in line for line in said), p.stdout
    assert any(f"{ontology.name}:" in line and 'sh:pattern "^Q-([A-Z]+-[0-9]+$" is no regular '
               "expression" in line for line in said), p.stdout


def test_a_second_write_its_own_guard_forbids_is_said_blocked_not_rejected(
        tmp_path: Path) -> None:
    """:File guarded by FILTER NOT EXISTS { ?this :reviewStatus ?s }, reached after :Escalate
    wrote one. The warning said the gate rejects what lab.file_result returns, after it has
    acted, and to drop sh:maxCount 1 (onboarding: a decision's otherwise looping back to the
    bundle decision, each bundle step guarded so) — but the guard blocks :File before its tool
    is called, and dropping the shape's limit changes nothing. It says so now."""
    from workflow_edits import LAB

    ontology = tmp_path / LAB[1].name
    ontology.write_text(LAB[1].read_text(encoding="utf-8") + LAB_STATUS, encoding="utf-8")
    text = LAB[0].read_text(encoding="utf-8")
    for old, new in (
        ("horis:asserts [ horis:property :escalatedAt ; horis:value horis:now ]",
         "horis:asserts [ horis:property :escalatedAt ; horis:value horis:now ] ;\n"
         "        horis:asserts [ horis:property :reviewStatus ; horis:value :Escalated ]"),
        ("horis:asserts [ horis:property :filedAt ; horis:value horis:now ]",
         "horis:asserts [ horis:property :filedAt ; horis:value horis:now ] ;\n"
         "        horis:asserts [ horis:property :reviewStatus ; horis:value :Filed ]"),
        (""":File a horis:ActionStep ;
    horis:tool :lab.file_result ;""", """:File a horis:ActionStep ;
    horis:tool :lab.file_result ;
    horis:requires "FILTER NOT EXISTS { ?this :reviewStatus ?s }" ;"""),
    ):
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    workflow = tmp_path / LAB[0].name
    workflow.write_text(text + ":Escalate horis:next :File .\n", encoding="utf-8")
    (p,) = [p for p in problems(workflow, LAB, ontology) if ":reviewStatus" in p.message]
    assert p.node == ":lab.file_result" and p.message == (
        ":File comes after :Escalate (:lab.escalate) on one path, each writing :reviewStatus on "
        "the instance's :LabResult, and :File's own horis:requires forbids :reviewStatus "
        "there: an instance coming that way is blocked at :File, its tool never called"), p
    assert "sh:maxCount" not in p.message + p.hint, p
