"""A domain shape's ``sh:class`` on a property an effect writes as a node of a class
unrelated to it: ``horis:asserts [ horis:property :assignedNurse ; horis:type :Nurse ]``
judged by ``sh:path :assignedNurse ; sh:class :AcuityLevel``. validate said nothing; the
gate took the nurse only if the world typed it an acuity level too, so every page was sent
and its result rejected. Now a warning at the assertion (a node may be of both classes)."""

from __future__ import annotations

from pathlib import Path

import pytest
from workflow_edits import TRIAGE, ontology_edited, problems

SHAPE = "    sh:targetClass :Patient ;\n"
NURSE = "    sh:property [ sh:path :assignedNurse ; sh:class {} ] ;\n"


def test_a_class_the_effects_class_is_unrelated_to_is_a_warning_at_the_assertion(
    tmp_path: Path,
) -> None:
    ontology, _ = ontology_edited(tmp_path, SHAPE, SHAPE + NURSE.format(":AcuityLevel"))
    [found] = [p for p in problems(TRIAGE[0], TRIAGE, ontology) if "sh:class" in p.message]
    text = TRIAGE[0].read_text(encoding="utf-8")
    line = text[: text.index("horis:property :assignedNurse")].count("\n") + 1
    assert (found.severity, found.node, found.line) == ("warning", ":ehr.notify_nurse", line)
    assert found.message == (
        "the effect writes :assignedNurse as a node of :Nurse, but shape :PatientShape requires "
        "sh:class :AcuityLevel, a class :Nurse is unrelated to (unless the world types each "
        "value of both): the gate would reject every call of :ehr.notify_nurse that writes it, "
        "after the tool has acted"
    )
    assert found.hint == (
        "write horis:type :AcuityLevel in the effect, or sh:class :Nurse in the shape"
    )


@pytest.mark.parametrize("cls", [":Nurse", ":Person"])
def test_the_effects_class_or_a_superclass_of_it_is_said_nothing_of(
    tmp_path: Path, cls: str
) -> None:
    ontology, _ = ontology_edited(tmp_path, SHAPE, SHAPE + NURSE.format(cls))
    assert problems(TRIAGE[0], TRIAGE, ontology) == []
