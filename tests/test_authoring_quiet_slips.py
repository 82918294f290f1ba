"""Slips that loaded without a word, or with words about something else: a language tag on a
Horismos string, a quoted ``horis:forEach``, a property declared of one kind over a range of
the other, and a ``sh:maxLength`` its own ``sh:pattern`` cannot fit in. Each is said at its
file and line with what to write, and the correct neighbour of each says nothing.

Each test edits one line of ``workflows/triage.ttl`` or ``ontologies/ehr.ttl`` (found by its
text) and loads it as ``horismos validate`` does.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from workflow_edits import TRIAGE, edited, ontology_edited, problems, the_one

from horismos import Problem


def said_once(found: list[Problem], where: tuple[str, str, int, str], said: str,
              hint: str) -> None:
    """``found`` is one problem, at ``where`` (severity, file, line, node), opening with
    ``said``, with ``hint``."""
    assert len(found) == 1, "\n".join(map(str, found))
    p = found[0]
    assert (p.severity, p.file, p.line, p.node) == where
    assert p.message.startswith(said), p.message
    assert p.hint == hint

# -- a language tag where a plain string goes ------------------------------------------------


@pytest.mark.parametrize(("old", "new", "node", "said", "hint"), [
    pytest.param('horis:name "ref"     ;', 'horis:name "ref"@en   ;', ":ehr.notify_nurse",
                 'horis:name "ref"@en carries the language tag @en',
                 'write horis:name "ref", without @en', id="argument-name"),
    pytest.param('horis:timeout "5s"', 'horis:timeout "5s"@en', ":ehr.assign_queue",
                 'horis:timeout "5s"@en carries the language tag @en',
                 'write horis:timeout "5s", without @en', id="or-of-string"),
    pytest.param('FILTER NOT EXISTS { ?this :assignedNurse ?n } """ ;',
                 'FILTER NOT EXISTS { ?this :assignedNurse ?n } """@en ;', ":NotifyNurse",
                 'horis:requires "…"@en carries the language tag @en',
                 "delete the @en after the closing quotes", id="long-text"),
])
def test_a_language_tag_on_a_horismos_string_is_one_error_naming_the_tag(
        tmp_path: Path, old: str, new: str, node: str, said: str, hint: str) -> None:
    """``horis:name "ref"@en`` gave two errors ("needs exactly one horis:name, a string"),
    one of them for the horis:takes around it, and the name they showed read "ref"."""
    path, _ = edited(tmp_path, TRIAGE, old, new)
    text = path.read_text(encoding="utf-8")
    opens = text.index('horis:requires """ ?this :queueRef' if '"""' in new else new)
    line = text[:opens].count("\n") + 1
    said_once(problems(path, TRIAGE), ("error", str(path), line, node), said, hint)


def test_a_tag_beside_another_mistake_of_the_argument_leaves_that_one_said(
        tmp_path: Path) -> None:
    """Only what the tag caused is dropped: the argument's missing horis:type is still said."""
    path, _ = edited(tmp_path, TRIAGE, 'horis:name "ref"     ; horis:type xsd:string',
                     'horis:name "ref"@en')
    said = sorted(p.message.split(":")[0] for p in problems(path, TRIAGE))
    assert len(said) == 2, said
    assert any("horis:type" in p.message for p in problems(path, TRIAGE))


def test_a_tagged_label_loads_without_a_word(tmp_path: Path) -> None:
    """rdfs:label "…"@en is what labels are for."""
    path, _ = edited(tmp_path, TRIAGE, 'rdfs:label "Triage a patient"',
                     'rdfs:label "Triage a patient"@en')
    assert problems(path, TRIAGE) == []


# -- a quoted horis:forEach ------------------------------------------------------------------


def test_a_quoted_for_each_is_its_error_alone(tmp_path: Path) -> None:
    """``horis:forEach "true"`` was read as true: beside the error, a warning that every call
    of the step writes the focus's one value once per solution — of a step that is no loop."""
    path, line = edited(tmp_path, TRIAGE, "horis:tool :ehr.notify_nurse ;",
                        'horis:tool :ehr.notify_nurse ; horis:forEach "true" ;')
    p = the_one(problems(path, TRIAGE), "error")
    assert (p.file, p.line) == (str(path), line)
    assert "horis:forEach takes one boolean" in p.message


def test_a_for_each_written_true_keeps_its_warning(tmp_path: Path) -> None:
    path, _ = edited(tmp_path, TRIAGE, "horis:tool :ehr.notify_nurse ;",
                     "horis:tool :ehr.notify_nurse ; horis:forEach true ;")
    p = the_one(problems(path, TRIAGE), "warning")
    assert "horis:forEach calls :ehr.notify_nurse once per solution" in p.message


# -- a property declared of one kind over a range of the other -------------------------------


@pytest.mark.parametrize(("old", "new", "said", "hint"), [
    pytest.param(":onDuty a owl:DatatypeProperty", ":onDuty a owl:ObjectProperty",
                 ":onDuty is an owl:ObjectProperty, whose values are nodes, but its rdfs:range "
                 "xsd:boolean is a datatype", "declare :onDuty a owl:DatatypeProperty if its "
                 "values are literals, or give it the class of its values as rdfs:range",
                 id="object-over-datatype"),
    pytest.param(":acuity a owl:ObjectProperty ; rdfs:domain :Patient ; rdfs:range :AcuityLevel",
                 ":acuity a owl:ObjectProperty ; rdfs:domain :Patient ; rdfs:range rdfs:Literal",
                 ":acuity is an owl:ObjectProperty, whose values are nodes, but its rdfs:range "
                 "rdfs:Literal is a datatype", "declare :acuity a owl:DatatypeProperty if its "
                 "values are literals, or give it the class of its values as rdfs:range",
                 id="object-over-literal"),
    pytest.param(":notifiedAt a owl:DatatypeProperty ; rdfs:domain :Patient ; "
                 "rdfs:range xsd:dateTime",
                 ":notifiedAt a owl:DatatypeProperty ; rdfs:domain :Patient ; rdfs:range :Nurse",
                 ":notifiedAt is an owl:DatatypeProperty, whose values are literals, but its "
                 "rdfs:range :Nurse is a class", "declare :notifiedAt a owl:ObjectProperty if "
                 "its values are nodes, or give it the datatype of its values as rdfs:range "
                 "(xsd:string, …)",
                 id="datatype-over-class"),
])
def test_a_property_of_one_kind_over_a_range_of_the_other_is_a_warning_at_the_range(
        tmp_path: Path, old: str, new: str, said: str, hint: str) -> None:
    """``:onDuty a owl:ObjectProperty ; rdfs:range xsd:boolean`` loaded silently when no tool
    wrote it; a world's ``:onDuty true`` and a pattern's were then read by two rules."""
    onto, line = ontology_edited(tmp_path, old, new)
    found = [p for p in problems(TRIAGE[0], TRIAGE, onto) if "whose values are" in p.message]
    said_once(found, ("warning", str(onto), line, said.split()[0]), said, hint)


@pytest.mark.parametrize(("old", "new"), [
    pytest.param(":queueRef a owl:DatatypeProperty ; rdfs:domain :Patient ; "
                 "rdfs:range xsd:string .",
                 ":queueRef a owl:DatatypeProperty ; rdfs:domain :Patient ; "
                 "rdfs:range :QueueCode .\n:QueueCode a rdfs:Datatype .", id="declared-datatype"),
    pytest.param(":assignedNurse a owl:ObjectProperty ; rdfs:domain :Patient ; rdfs:range :Nurse",
                 ":assignedNurse a owl:ObjectProperty ; rdfs:domain :Patient ; rdfs:range :Nurse",
                 id="object-over-class"),
    pytest.param(":onDuty a owl:DatatypeProperty", ":onDuty a owl:DatatypeProperty, "
                 "owl:ObjectProperty", id="punned"),
])
def test_a_range_of_the_kind_declared_says_nothing(tmp_path: Path, old: str, new: str) -> None:
    """A datatype the ontology declares is a datatype; a class range is an ObjectProperty's;
    a property declared both kinds is not judged."""
    onto, _ = ontology_edited(tmp_path, old, new)
    assert not [p for p in problems(TRIAGE[0], TRIAGE, onto) if "whose values are" in p.message]


# -- a sh:maxLength below what its sh:pattern needs ------------------------------------------


def test_a_max_length_below_the_shortest_match_of_the_pattern_is_an_error(
        tmp_path: Path) -> None:
    """``sh:pattern "^Q-[A-Z]+-[0-9]+$" ; sh:maxLength 4``: the shortest reference the pattern
    takes is Q-A-1, five characters, so the gate rejected every queue reference."""
    onto, line = ontology_edited(tmp_path, "sh:maxCount 1 ;", "sh:maxCount 1 ; sh:maxLength 4 ;")
    p = the_one(problems(TRIAGE[0], TRIAGE, onto), "error")
    assert (p.file, p.line, p.node) == (str(onto), line, ":PatientShape")
    assert p.message.startswith(
        'sh:maxLength 4 is below the 5 characters sh:pattern "^Q-[A-Z]+-[0-9]+$" needs at the '
        "least (one short enough is too short to match), so no value of :queueRef conforms: "
        "the gate rejects the result of every tool"), p.message
    assert p.hint == "write sh:maxLength 5 or more, or the pattern meant"


def test_a_max_length_the_shortest_match_fits_in_says_nothing(tmp_path: Path) -> None:
    onto, _ = ontology_edited(tmp_path, "sh:maxCount 1 ;", "sh:maxCount 1 ; sh:maxLength 5 ;")
    assert problems(TRIAGE[0], TRIAGE, onto) == []


# -- sh:flags the gate does not read ---------------------------------------------------------


@pytest.mark.parametrize(("flags", "said", "hint"), [
    pytest.param("z", 'sh:flags "z" has z, which the gate ignores', "delete sh:flags", id="z"),
    pytest.param("is", 'sh:flags "is" has s, which the gate ignores',
                 'for s, write [\\s\\S] where . should match a line break; write sh:flags "i"',
                 id="xpath-s"),
])
def test_a_flag_other_than_i_and_m_is_a_warning_at_the_flags(
        tmp_path: Path, flags: str, said: str, hint: str) -> None:
    """pyshacl and the gate read "i" and "m" only: ``sh:flags "s"`` checked the pattern
    without it, and a value the modeler meant to pass was rejected after the tool acted."""
    onto, line = ontology_edited(tmp_path, "sh:maxCount 1 ;",
                                 f'sh:maxCount 1 ; sh:flags "{flags}" ;')
    said_once(problems(TRIAGE[0], TRIAGE, onto), ("warning", str(onto), line, ":PatientShape"),
              said, hint)


@pytest.mark.parametrize("flags", ["i", "Im"])
def test_the_flags_the_gate_reads_say_nothing(tmp_path: Path, flags: str) -> None:
    onto, _ = ontology_edited(tmp_path, "sh:maxCount 1 ;", f'sh:maxCount 1 ; sh:flags "{flags}" ;')
    assert problems(TRIAGE[0], TRIAGE, onto) == []


# -- a shape asking for the other kind of value than its property's --------------------------


@pytest.mark.parametrize(("new", "said", "hint"), [
    pytest.param("sh:path :onDuty ; sh:class :Nurse ;",
                 "sh:class :Nurse asks for nodes of a class, but :onDuty's values are literals "
                 "of xsd:boolean, its rdfs:range, so no value conforms",
                 "write sh:datatype xsd:boolean, or drop sh:class", id="class-on-literals"),
    pytest.param("sh:path :acuity ; sh:datatype xsd:string ;",
                 "sh:datatype xsd:string asks for literals, but :acuity's values are nodes",
                 "write sh:class :AcuityLevel", id="datatype-on-nodes"),
    pytest.param('sh:path :onDuty ; sh:hasValue "yes" ;',
                 'sh:hasValue "yes" asks for a literal of xsd:string, but :onDuty\'s values are '
                 "literals of xsd:boolean",
                 "write true or false, without quotes, or correct the rdfs:range",
                 id="has-value-of-another-datatype"),
    pytest.param('sh:path :acuity ; sh:hasValue "urgent" ;',
                 'sh:hasValue "urgent" asks for a literal, but :acuity\'s values are nodes',
                 "write the node meant, without quotes", id="has-value-literal-for-nodes"),
    pytest.param("sh:path :queueRef ; sh:minInclusive 3 ;",
                 "sh:minInclusive 3 asks for values that compare with numbers, but :queueRef's "
                 "values are literals of xsd:string",
                 'write the bound in quotes ("…"), or sh:minLength / sh:maxLength for a length',
                 id="number-bound-on-text"),
])
def test_a_shape_asking_for_the_other_kind_than_its_property_takes_is_an_error(
        tmp_path: Path, new: str, said: str, hint: str) -> None:
    """``sh:path :onDuty ; sh:class :Nurse`` validated, and every nurse landed was rejected:
    a literal is of no class. No tool writes :onDuty, so no effect check saw it."""
    onto, line = ontology_edited(tmp_path, "sh:path :queueRef ;", new)
    found = [  # not the shape's sh:pattern, on booleans once the path is :onDuty: its own
        p for p in problems(TRIAGE[0], TRIAGE, onto)
        if p.severity == "error" and "is on booleans" not in p.message
    ]
    said_once(found, ("error", str(onto), line, ":PatientShape"), said, hint)


@pytest.mark.parametrize("new", [
    pytest.param("sh:path :assignedNurse ; sh:class :Nurse ;", id="class-on-nodes"),
    pytest.param("sh:path :onDuty ; sh:datatype xsd:boolean ;", id="datatype-on-literals"),
    pytest.param("sh:path :onDuty ; sh:hasValue true ;", id="has-value-of-the-range"),
    pytest.param("sh:path :acuity ; sh:hasValue :urgent ;", id="has-value-node"),
    pytest.param('sh:path :queuedAt ; sh:minInclusive "2026-01-01T00:00:00Z"^^xsd:dateTime ;',
                 id="date-time-bound"),
    pytest.param('sh:path :queuedAt ; sh:minInclusive "2026-01-01"^^xsd:date ;',
                 id="date-bound-on-date-times-is-the-engines"),
])
def test_a_shape_asking_for_its_propertys_kind_says_nothing(tmp_path: Path, new: str) -> None:
    onto, _ = ontology_edited(tmp_path, "sh:path :queueRef ;", new)
    text = onto.read_text(encoding="utf-8")  # the pattern is :queueRef's, not these
    onto.write_text(text.replace('sh:pattern "^Q-[A-Z]+-[0-9]+$" ;', ""), encoding="utf-8")
    assert [p for p in problems(TRIAGE[0], TRIAGE, onto) if p.severity == "error"] == []


# -- a property named where a class goes -----------------------------------------------------


@pytest.mark.parametrize(("old", "new", "node", "said", "hint"), [
    pytest.param(":onDuty a owl:DatatypeProperty ; rdfs:domain :Nurse",
                 ":onDuty a owl:DatatypeProperty ; rdfs:domain :acuity", ":onDuty",
                 "rdfs:domain :acuity names a property, not a class",
                 "write the class meant after rdfs:domain", id="domain"),
    pytest.param(":assignedNurse a owl:ObjectProperty ; rdfs:domain :Patient ; rdfs:range :Nurse",
                 ":assignedNurse a owl:ObjectProperty ; rdfs:domain :Patient ; "
                 "rdfs:range :acuity", ":assignedNurse",
                 "rdfs:range :acuity names a property, not a class",
                 "write rdfs:range :AcuityLevel, the rdfs:range of :acuity", id="range"),
    pytest.param(":Patient a owl:Class ; rdfs:subClassOf :Person",
                 ":Patient a owl:Class ; rdfs:subClassOf :acuity", ":Patient",
                 "rdfs:subClassOf :acuity names a property, not a class",
                 "write the class meant after rdfs:subClassOf", id="superclass"),
    pytest.param("sh:targetClass :Patient ;", "sh:targetClass :queueRef ;", ":PatientShape",
                 "sh:targetClass :queueRef names a property, not a class: no node is one, so "
                 "the shape never applies",
                 "write sh:targetSubjectsOf :queueRef to judge the nodes holding it",
                 id="target-class"),
])
def test_a_property_where_a_class_goes_is_a_warning_at_its_statement(
        tmp_path: Path, old: str, new: str, node: str, said: str, hint: str) -> None:
    """``sh:targetClass :queueRef`` loaded, and the shape judged nothing; ``rdfs:domain
    :acuity`` gave the property a domain no node is of."""
    onto, line = ontology_edited(tmp_path, old, new)
    found = [p for p in problems(TRIAGE[0], TRIAGE, onto) if "names a property" in p.message]
    said_once(found, ("warning", str(onto), line, node), said, hint)


def test_a_term_declared_both_class_and_property_where_a_class_goes_says_nothing(
        tmp_path: Path) -> None:
    """OWL 2 punning: a term the files declare both is not judged."""
    onto, _ = ontology_edited(tmp_path, ":onDuty a owl:DatatypeProperty ; rdfs:domain :Nurse",
                              ":onDuty a owl:DatatypeProperty ; rdfs:domain :acuity .\n"
                              ":acuity a owl:Class .\n:onDuty rdfs:comment \"x\"")
    assert not [p for p in problems(TRIAGE[0], TRIAGE, onto) if "names a property" in p.message]


# -- a shape that judges nothing -------------------------------------------------------------


def test_a_shape_with_no_target_that_nothing_names_is_a_warning_at_it(tmp_path: Path) -> None:
    """Without its sh:targetClass the queue reference shape loaded and checked nothing: every
    malformed reference was committed."""
    onto, _ = ontology_edited(tmp_path, "sh:targetClass :Patient ;", "")
    line = onto.read_text(encoding="utf-8").splitlines().index(":PatientShape a sh:NodeShape ;")
    said_once(problems(TRIAGE[0], TRIAGE, onto), ("warning", str(onto), line + 1, ":PatientShape"),
              "the shape has no target (sh:targetClass, sh:targetNode, sh:targetSubjectsOf, "
              "sh:targetObjectsOf) and no shape or effect names it",
              "add sh:targetClass with the class of the nodes it judges")


@pytest.mark.parametrize("new", [
    pytest.param("a owl:Class ;", id="a-class-targets-its-instances"),
    pytest.param(".\n:NurseShape a sh:NodeShape ; sh:targetClass :Nurse ; "
                 "sh:node :PatientShape .\n:PatientShape", id="named-by-sh-node"),
])
def test_a_shape_without_a_target_of_its_own_that_is_reached_says_nothing(
        tmp_path: Path, new: str) -> None:
    onto, _ = ontology_edited(tmp_path, "sh:targetClass :Patient ;", new)
    assert not [p for p in problems(TRIAGE[0], TRIAGE, onto) if "no target" in p.message]


# -- a language-tagged sh:hasValue (review) --------------------------------------------------

_NICKNAME = (":nickname a owl:DatatypeProperty ; rdfs:domain :Patient ; "
             "rdfs:range <http://www.w3.org/1999/02/22-rdf-syntax-ns#langString> .\n")


def test_a_tagged_has_value_on_a_lang_string_property_says_nothing(tmp_path: Path) -> None:
    """``sh:hasValue "Bob"@en`` on a property of rdf:langString was read as an xsd:string and
    refused, with the hint ``"Bob"^^rdf:langString``, which is no literal at all (review)."""
    onto, _ = ontology_edited(tmp_path, ":PatientShape a sh:NodeShape ;",
                              _NICKNAME + ":PatientShape a sh:NodeShape ;\n"
                              '    sh:property [ sh:path :nickname ; sh:hasValue "Bob"@en ] ;')
    assert [p for p in problems(TRIAGE[0], TRIAGE, onto) if p.severity == "error"] == []


def test_an_untagged_has_value_on_a_lang_string_property_hints_a_tag(tmp_path: Path) -> None:
    onto, _ = ontology_edited(tmp_path, ":PatientShape a sh:NodeShape ;",
                              _NICKNAME + ":PatientShape a sh:NodeShape ;\n"
                              '    sh:property [ sh:path :nickname ; sh:hasValue "Bob" ] ;')
    p = the_one(problems(TRIAGE[0], TRIAGE, onto), "error")
    assert p.message.startswith('sh:hasValue "Bob" asks for a literal of xsd:string'), p.message
    assert p.hint == 'write "Bob" with its language tag, e.g. "Bob"@en'


# -- a shape inside sh:or, sh:xone or sh:not (review) ----------------------------------------


@pytest.mark.parametrize("new", [
    pytest.param("sh:or ( [ sh:path :onDuty ; sh:datatype xsd:boolean ]\n"
                 "        [ sh:path :onDuty ; sh:class :Nurse ] ) ;", id="or-kind"),
    pytest.param("sh:xone ( [ sh:path :onDuty ; sh:datatype xsd:boolean ]\n"
                 "          [ sh:path :onDuty ; sh:class :Nurse ] ) ;", id="xone-kind"),
    pytest.param("sh:or ( [ sh:property [ sh:path :onDuty ; sh:class :Nurse ] ]\n"
                 "        [ sh:path :onDuty ; sh:datatype xsd:boolean ] ) ;",
                 id="or-member-property"),
    pytest.param('sh:not [ sh:path :acuity ; sh:hasValue "urgent" ] ;', id="not-kind"),
    pytest.param('sh:not [ sh:path :queueRef ; sh:maxLength 3 ; sh:pattern "^Q-[A-Z]+-[0-9]+$" ]'
                 " ;", id="not-max-length"),
    pytest.param('sh:or ( [ sh:path :queueRef ; sh:maxLength 3 ; sh:pattern "^Q-[A-Z]+-[0-9]+$" ]'
                 "\n        [ sh:path :queueRef ; sh:maxLength 3 ] ) ;", id="or-max-length"),
    pytest.param("sh:not [ sh:path :queueRef ; sh:minLength 5 ; sh:maxLength 3 ] ;",
                 id="not-crossed-bounds"),
    pytest.param("sh:or ( [ sh:path :queueRef ; sh:minLength 5 ; sh:maxLength 3 ]\n"
                 "        [ sh:path :queueRef ; sh:maxLength 9 ] ) ;", id="or-crossed-bounds"),
    pytest.param('sh:or ( [ sh:path :acuity ; sh:in ( "urgent" "routine" ) ]\n'
                 "        [ sh:path :acuity ] ) ;", id="or-in-of-the-other-kind"),
])
def test_a_shape_a_node_may_fail_and_conform_is_no_error(tmp_path: Path, new: str) -> None:
    """A branch of ``sh:or`` no value meets was an error that every result was rejected; the
    other branch took them. The object of ``sh:not`` is meant never to hold (review)."""
    onto, _ = ontology_edited(tmp_path, "sh:targetClass :Patient ;",
                              "sh:targetClass :Patient ;\n    " + new)
    assert [p for p in problems(TRIAGE[0], TRIAGE, onto) if p.severity == "error"] == []


@pytest.mark.parametrize(("new", "said"), [
    pytest.param("sh:xone ( [ sh:path :onDuty ; sh:datatype xsd:boolean ]\n"
                 "          [ sh:path :onDuty ; sh:class :Nurse ] ) ;",
                 "sh:class :Nurse asks for nodes of a class, but :onDuty's values are literals "
                 "of xsd:boolean, its rdfs:range, so no value conforms: as a branch of sh:xone, "
                 "it never holds where it applies, and only the other branches can take such a "
                 "node", id="xone-kind"),
    pytest.param('sh:not [ sh:path :acuity ; sh:hasValue "urgent" ] ;',
                 'sh:hasValue "urgent" asks for a literal, but :acuity\'s values are nodes, so no '
                 "value conforms: as the shape of a sh:not, it never holds where it applies, so "
                 "the sh:not excludes no such node", id="not-kind"),
    pytest.param("sh:or ( [ sh:path :queueRef ; sh:minLength 5 ; sh:maxLength 3 ]\n"
                 "        [ sh:path :queueRef ; sh:maxLength 9 ] ) ;",
                 "sh:minLength 5 is above sh:maxLength 3, so no value of :queueRef conforms: as "
                 "a branch of sh:or, it never holds", id="or-crossed-bounds"),
    pytest.param('sh:not [ sh:path :queueRef ; sh:maxLength 3 ; sh:pattern "^Q-[A-Z]+-[0-9]+$" ]'
                 " ;", "so no value of :queueRef conforms: as the shape of a sh:not",
                 id="not-max-length"),
])
def test_a_shape_no_value_meets_inside_a_branch_is_a_warning_that_it_never_holds(
        tmp_path: Path, new: str, said: str) -> None:
    """Each was silent (review had made them no error): ``sh:not [ sh:path :acuity ;
    sh:hasValue "urgent" ]`` excluded no patient, as ``FILTER (?q != "urgent")`` did not,
    and a branch of ``sh:or`` no value meets leaves the others to take every result. One
    wording for each check, as the ``sh:in`` one had."""
    onto, line = ontology_edited(tmp_path, "sh:targetClass :Patient ;",
                                 "sh:targetClass :Patient ;\n    " + new)
    p = the_one(problems(TRIAGE[0], TRIAGE, onto), "warning")
    assert (p.file, p.node) == (str(onto), ":PatientShape") and p.line in (line + 1, line + 2)
    assert said in p.message, p.message


@pytest.mark.parametrize(("nots", "severity", "said"), [
    pytest.param(2, "error", "so no value conforms: the gate rejects the result of every tool",
                 id="two"),
    pytest.param(3, "warning", "so no value conforms: as the shape of a sh:not, it never holds "
                 "where it applies, so the sh:not excludes no such node", id="three"),
])
def test_a_shape_no_value_meets_under_sh_not_twice_must_hold(
        tmp_path: Path, nots: int, severity: str, said: str) -> None:
    """``sh:not [ sh:not [ … ] ]`` holds where its innermost shape does: one no value meets
    there rejects every node, and was warned of as a sh:not excluding nothing (review)."""
    inner = '[ sh:path :acuity ; sh:hasValue "urgent" ]'
    for _ in range(nots):
        inner = f"[ sh:not {inner} ]"
    onto, line = ontology_edited(tmp_path, "sh:targetClass :Patient ;",
                                 "sh:targetClass :Patient ;\n    sh:node " + inner + " ;")
    p = the_one(problems(TRIAGE[0], TRIAGE, onto), severity)
    assert (p.file, p.line, p.node) == (str(onto), line + 1, ":PatientShape"), str(p)
    assert said in p.message, p.message


def test_a_property_declared_of_both_kinds_is_not_judged_in_a_pattern(tmp_path: Path) -> None:
    """``:assignedNurse a owl:ObjectProperty , owl:DatatypeProperty`` may take literals:
    ``FILTER (?n = "y")`` and ``regex(?n, "x")`` were warned of as of nodes (review)."""
    old = ":assignedNurse a owl:ObjectProperty ;"
    onto, _ = ontology_edited(tmp_path, old, ":assignedNurse a owl:ObjectProperty , "
                              "owl:DatatypeProperty ;")
    path, _ = edited(tmp_path, TRIAGE, 'horis:requires """ ?this :acuity ?queue .',
                     'horis:requires """ ?this :acuity ?queue . ?this :assignedNurse ?n '
                     'FILTER (?n = "y" || regex(?n, "x") || str(?n) = "z")')
    found = problems(path, TRIAGE, onto)
    assert not [p for p in found if "?n" in p.message], "\n".join(map(str, found))


def test_an_in_list_of_the_other_kind_inside_an_or_is_a_warning_that_says_so(
        tmp_path: Path) -> None:
    """Its branch never holds, which is worth saying, but not that every result is rejected:
    the other branch takes them."""
    onto, _ = ontology_edited(
        tmp_path, "sh:targetClass :Patient ;",
        'sh:targetClass :Patient ;\n    sh:or ( [ sh:path :acuity ; sh:in ( "urgent" ) ]'
        " [ sh:path :acuity ] ) ;")
    p = the_one(problems(TRIAGE[0], TRIAGE, onto), "warning")
    assert p.message.startswith('sh:in lists "urgent", but :acuity'), p.message
    assert p.message.endswith(
        "breaks the shape: as a branch of sh:or, it never holds where it applies, and only "
        "the other branches can take such a node"), p.message


def test_a_property_shape_of_a_targeted_shape_beside_an_or_is_still_judged(
        tmp_path: Path) -> None:
    onto, line = ontology_edited(
        tmp_path, "sh:targetClass :Patient ;",
        "sh:targetClass :Patient ; sh:property [ sh:path :onDuty ; sh:class :Nurse ] ;\n"
        "    sh:or ( [ sh:path :onDuty ; sh:datatype xsd:boolean ] [ sh:path :acuity ] ) ;")
    p = the_one(problems(TRIAGE[0], TRIAGE, onto), "error")
    assert (p.line, p.node) == (line, ":PatientShape")
    assert p.message.startswith("sh:class :Nurse asks for nodes of a class"), p.message


# -- a FILTER's variable a UNION binds through properties of both kinds (review) -------------


@pytest.mark.parametrize(("union", "warned"), [
    pytest.param("{ ?this :acuity ?v } UNION { ?this :queueRef ?v }", False,
                 id="node-or-string"),
    pytest.param("{ ?this :acuity ?v } UNION { ?this :assignedNurse ?v }", True,
                 id="nodes-both"),
    pytest.param("{ ?this :acuity ?v } UNION { ?this ?p ?v }", False, id="any-property"),
])
def test_a_filter_variable_is_judged_by_every_property_binding_it(
        tmp_path: Path, union: str, warned: bool) -> None:
    """``{ ?this :acuity ?v } UNION { ?this :acuityCode ?v } FILTER (?v = "urgent")`` was
    warned "never true", though a patient with :acuityCode "urgent" takes the step (review)."""
    path, _ = edited(tmp_path, TRIAGE, 'horis:requires """ ?this :acuity ?queue .',
                     f'horis:requires """ ?this :acuity ?queue . {union} FILTER (?v = "urgent")')
    found = [p for p in problems(path, TRIAGE) if "FILTER compares ?v" in p.message]
    assert len(found) == (2 if warned else 0), "\n".join(map(str, found))


# -- a quoted boolean where the authoring shapes are absent (review) -------------------------


@pytest.mark.parametrize("shapes", [True, False], ids=["with-shapes", "without-shapes"])
def test_a_quoted_requires_approval_is_one_error_with_or_without_the_shapes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shapes: bool) -> None:
    """``horis:requiresApproval "true"`` was read as no value, leaving the refusal to the
    authoring shapes: without them it loaded as false, and the tool ran unapproved (review)."""
    if not shapes:
        import horismos._definitions as definitions

        monkeypatch.setattr(definitions, "authoring_shapes", lambda: None)
    path, line = edited(tmp_path, TRIAGE, "    horis:idempotent false .",
                        '    horis:idempotent false ; horis:requiresApproval "true" .')
    p = the_one(problems(path, TRIAGE), "error")
    assert (p.file, p.line, p.node) == (str(path), line, ":ehr.assign_queue")
    assert p.message.startswith('horis:requiresApproval takes one boolean, not "true"'), p.message
    assert p.hint == "write horis:requiresApproval true, without quotes"


def test_a_property_under_another_by_sub_class_of_is_hinted_sub_property_of(
        tmp_path: Path) -> None:
    """``:p a owl:ObjectProperty ; rdfs:subClassOf :q`` of two properties was told to write
    "the class meant", where rdfs:subPropertyOf was (review)."""
    old = ":assignedNurse a owl:ObjectProperty ; rdfs:domain :Patient ; rdfs:range :Nurse"
    onto, line = ontology_edited(tmp_path, old, old + " ; rdfs:subClassOf :acuity")
    found = [p for p in problems(TRIAGE[0], TRIAGE, onto) if "names a property" in p.message]
    said_once(found, ("warning", str(onto), line, ":assignedNurse"),
              "rdfs:subClassOf :acuity names a property, not a class",
              "write rdfs:subPropertyOf :acuity: :assignedNurse is a property too")
