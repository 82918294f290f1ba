"""A closed shape judging the subject of an effect that writes a property the shape does not
list: ``:PatientShape sh:closed true`` listing ``:acuity``, ``:queueRef`` and the rest, but
not ``:queuedAt``, the time stamp the queueing tool writes. validate said nothing (only a
closed shape refusing ``rdf:type`` was said); every call acted — the patient queued — and
the gate then rejected its result, on every call. Now an error at the shape's ``sh:closed``,
naming the tool and the property to add."""

from __future__ import annotations

from pathlib import Path

import pytest
from forked import horismos_forked
from workflow_edits import ROOT, TRIAGE

from horismos import AuthoringError, load_definitions

CLOSED = """    sh:closed true ;
    sh:ignoredProperties ( <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> rdfs:label ) ;
    sh:property [ sh:path :acuity ] ;
    sh:property [ sh:path :assignedNurse ] ;
    sh:property [ sh:path :notifiedAt ] ;
"""
SHAPE = "    sh:targetClass :Patient ;\n"


def _ontology(tmp_path: Path, closed: str) -> tuple[Path, int]:
    text = TRIAGE[1].read_text(encoding="utf-8")
    assert text.count(SHAPE) == 1
    path = tmp_path / "ehr.ttl"
    path.write_text(text.replace(SHAPE, SHAPE + closed), encoding="utf-8")
    return path, text[: text.index(SHAPE)].count("\n") + 2


def test_a_property_an_effect_writes_that_a_closed_shape_leaves_out_is_an_error_at_it(
    tmp_path: Path,
) -> None:
    path, line = _ontology(tmp_path, CLOSED)
    with pytest.raises(AuthoringError) as e:
        load_definitions([TRIAGE[0], path])
    [found] = e.value.problems
    assert (found.severity, found.node, found.file, found.line) == (
        "error", ":ehr.assign_queue", str(path), line
    ), found
    assert found.message == (
        "the effect writes :queuedAt as a literal of xsd:dateTime, but shape :PatientShape "
        "requires only the properties its sh:property shapes name (sh:closed true), and none "
        "names :queuedAt: the gate would reject every call of :ehr.assign_queue that writes "
        "it, after the tool has acted"
    )
    assert found.hint == (
        "add sh:property [ sh:path :queuedAt ] to shape :PatientShape (or list it in its "
        "sh:ignoredProperties), or drop :queuedAt from the effect"
    )


@pytest.mark.parametrize("closed", [
    pytest.param(
        CLOSED.replace(":notifiedAt ]", ":notifiedAt ] ; sh:property [ sh:path :queuedAt ]"),
        id="listed",
    ),
    pytest.param(CLOSED.replace("rdfs:label )", "rdfs:label :queuedAt )"), id="ignored"),
    pytest.param(CLOSED.replace("sh:closed true", "sh:closed false"), id="not-closed"),
])
def test_a_closed_shape_allowing_what_the_effects_write_is_no_error(
    tmp_path: Path, closed: str
) -> None:
    path, _ = _ontology(tmp_path, closed)
    assert not [p for p in load_definitions([TRIAGE[0], path]).warnings if "sh:closed" in p.message]


def test_run_refuses_it_before_queueing_anyone(tmp_path: Path) -> None:
    path, line = _ontology(tmp_path, CLOSED)
    world = ROOT / "examples" / "triage" / "world.ttl"
    client = ROOT / "examples" / "triage" / "ehr_client.py"
    ran = horismos_forked(tmp_path, "run", str(TRIAGE[0]), str(path), "--world", str(world),
                          "--tools", str(client), "--focus", ":patient42")
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert f"ehr.ttl:{line}: error: :ehr.assign_queue: the effect writes :queuedAt" in ran.stderr
    assert ":QueuePatient" not in ran.stdout  # no step ran
