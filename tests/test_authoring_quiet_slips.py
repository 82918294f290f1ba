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
    p = the_one(problems(path, TRIAGE), "error")
    text = path.read_text(encoding="utf-8")
    opens = text.index('horis:requires """ ?this :queueRef' if '"""' in new else new)
    assert (p.file, p.line, p.node) == (str(path), text[:opens].count("\n") + 1, node)
    assert p.message.startswith(said), p.message
    assert p.hint == hint


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
    assert "horis:forEach calls ehr.notify_nurse once per solution" in p.message


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
        "least, so no value of :queueRef conforms"), p.message
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
    p = the_one(problems(TRIAGE[0], TRIAGE, onto), "warning")
    assert (p.file, p.line, p.node) == (str(onto), line, ":PatientShape")
    assert p.message.startswith(said), p.message
    assert p.hint == hint


@pytest.mark.parametrize("flags", ["i", "Im"])
def test_the_flags_the_gate_reads_say_nothing(tmp_path: Path, flags: str) -> None:
    onto, _ = ontology_edited(tmp_path, "sh:maxCount 1 ;", f'sh:maxCount 1 ; sh:flags "{flags}" ;')
    assert problems(TRIAGE[0], TRIAGE, onto) == []
