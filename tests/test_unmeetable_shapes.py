"""A domain shape no result can meet is refused before any tool acts.

``sh:minCount 1`` on a property nothing declares, no tool's effect writes and the world does
not hold: the gate rejects every result landing on a node the shape targets — after the tool
has acted (a queue assigned, a charge sent), again on every instance. ``validate`` without a
world warned of it; ``run`` let the tools act. Beside a world (``run``, ``validate --world``)
it is an error at the shape's ``sh:path``, and ``run`` calls no tool.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from forked import horismos_forked

ROOT = Path(__file__).resolve().parent.parent
TRIAGE_WF = ROOT / "workflows" / "triage.ttl"
EHR = ROOT / "ontologies" / "ehr.ttl"
WORLD = ROOT / "examples" / "triage" / "world.ttl"

COUNTED_TOOLS = f"""
import sys
sys.path.insert(0, {str(ROOT / "examples" / "triage")!r})
import ehr_client


def _counted(fn):
    def call(*args, **kwargs):
        with open("calls.log", "a") as log:
            log.write(fn.__name__ + "\\n")
        return fn(*args, **kwargs)
    call.__name__ = fn.__name__
    return call


assign_queue = _counted(ehr_client.assign_queue)
notify_nurse = _counted(ehr_client.notify_nurse)
"""


def horismos(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return horismos_forked(cwd, *args, timeout=120)


def world_triaging(tmp_path: Path, node: str) -> Path:
    """The triage world with ``node`` stating ``:triagedAt``: a world where some nodes hold
    what the shape requires."""
    world = tmp_path / "world.ttl"
    world.write_text(WORLD.read_text(encoding="utf-8")
                     + f'\n{node} :triagedAt "2026-01-01T00:00:00Z"^^'
                     '<http://www.w3.org/2001/XMLSchema#dateTime> .\n', encoding="utf-8")
    return world


def ehr_requiring(tmp_path: Path, constraint: str) -> tuple[Path, int]:
    """ehr.ttl with ``:PatientShape`` also requiring ``:triagedAt`` (``constraint``), and the
    line of that ``sh:path``."""
    old = "    sh:targetClass :Patient ;\n"
    text = EHR.read_text(encoding="utf-8")
    assert text.count(old) == 1
    new = old + f"    sh:property [ sh:path :triagedAt ; {constraint} ] ;\n"
    path = tmp_path / EHR.name
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path, text[: text.index(old)].count("\n") + 2


@pytest.mark.parametrize(("constraint", "fix"), [
    ("sh:minCount 1", "give the property shape sh:minCount 0"),
    ("sh:hasValue true", "drop its sh:hasValue"),
    ("sh:qualifiedValueShape [ sh:datatype xsd:dateTime ] ; sh:qualifiedMinCount 1",
     "give the property shape sh:qualifiedMinCount 0"),
])
def test_run_refuses_a_shape_no_result_can_meet_and_calls_no_tool(
        tmp_path: Path, constraint: str, fix: str) -> None:
    ehr, line = ehr_requiring(tmp_path, constraint)
    (tmp_path / "tools.py").write_text(COUNTED_TOOLS)
    p = horismos("run", str(TRIAGE_WF), str(ehr), "--world", str(WORLD), "--tools", "tools.py",
                 "--focus", ":patient42", cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert not (tmp_path / "calls.log").exists(), (tmp_path / "calls.log").read_text()
    said = f"ehr.ttl:{line}: error: :PatientShape: sh:path names :triagedAt, which no loaded "
    said += "ontology declares"
    assert said in p.stderr, p.stderr
    assert "every result of :ehr.assign_queue" in p.stderr
    assert "after the tool has acted" in p.stderr
    assert f"{fix}, or declare :triagedAt and have a tool's effect write it" in p.stderr
    assert "Traceback" not in p.stderr
    # the world among the files (no --world): it is the world, and holds no :triagedAt
    p = horismos("run", str(TRIAGE_WF), str(ehr), str(WORLD), "--tools", "tools.py",
                 "--focus", ":patient42", cwd=tmp_path)
    assert p.returncode == 2 and not (tmp_path / "calls.log").exists(), p.stderr
    # quiet says no warnings, but refuses all the same, in the same words, a world given or not
    for world in (["--world", str(WORLD)], [str(WORLD)]):
        p = horismos("run", str(TRIAGE_WF), str(ehr), *world, "--tools", "tools.py",
                     "--focus", ":patient42", "-q", cwd=tmp_path)
        assert p.returncode == 2 and not (tmp_path / "calls.log").exists(), p.stderr
        assert said in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_validate_with_a_world_refuses_it_and_without_one_warns_what_the_world_decides(
        tmp_path: Path) -> None:
    ehr, line = ehr_requiring(tmp_path, "sh:minCount 1")
    p = horismos("validate", str(TRIAGE_WF), str(ehr), "--world", str(WORLD), cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert f"ehr.ttl:{line}: error: :PatientShape: sh:path names :triagedAt" in p.stdout, p.stdout
    assert "the world does not hold" in p.stdout
    p = horismos("validate", str(TRIAGE_WF), str(ehr), cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"ehr.ttl:{line}: warning: :PatientShape: sh:path names :triagedAt" in p.stdout, p.stdout
    assert "every result of :ehr.assign_queue" in p.stdout and "--world" in p.stdout
    # a world where some nodes hold it: the gate passes those, so it is the world's to decide
    world = world_triaging(tmp_path, ":patient42")
    p = horismos("validate", str(TRIAGE_WF), str(ehr), "--world", str(world), cwd=tmp_path)
    assert p.returncode == 0 and "triagedAt" not in p.stdout, p.stdout + p.stderr


def test_a_misspelt_required_property_is_refused_with_the_one_a_tool_writes(
        tmp_path: Path) -> None:
    """:queueRf for :queueRef, which assign_queue writes: the did-you-mean names it."""
    old = "    sh:targetClass :Patient ;\n"
    text = EHR.read_text(encoding="utf-8")
    ehr = tmp_path / EHR.name
    ehr.write_text(text.replace(old, old + "    sh:property [ sh:path :queueRf ; "
                                "sh:minCount 1 ] ;\n"), encoding="utf-8")
    p = horismos("validate", str(TRIAGE_WF), str(ehr), "--world", str(WORLD), cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "error: :PatientShape: sh:path names :queueRf" in p.stdout
    assert "did you mean :queueRef, or give the property shape sh:minCount 0" in p.stdout


def test_a_declared_property_no_tool_writes_is_warned_of_beside_a_world_that_lacks_it(
        tmp_path: Path) -> None:
    """Declared, so world data or another system (an import, an operator's answer) may bring
    it between runs and steps: a warning, and only beside a world that states it nowhere.
    It was said nowhere: the run called ehr.assign_queue and the gate rejected the patient."""
    ehr, line = ehr_requiring(tmp_path, "sh:minCount 1")
    ehr.write_text(ehr.read_text(encoding="utf-8") + "\n:triagedAt a owl:DatatypeProperty ; "
                   "rdfs:domain :Patient ; rdfs:range xsd:dateTime .\n", encoding="utf-8")
    said = (f"ehr.ttl:{line}: warning: :PatientShape: sh:path names :triagedAt, which no tool's "
            "effect writes and the world holds no statement of, so its sh:minCount 1 fails every "
            ":Patient: every result of :ehr.assign_queue")
    p = horismos("validate", str(TRIAGE_WF), str(ehr), "--world", str(WORLD), cwd=tmp_path)
    assert p.returncode == 0 and said in p.stdout, p.stdout + p.stderr
    assert "load the data that holds :triagedAt" in p.stdout
    (tmp_path / "tools.py").write_text(COUNTED_TOOLS)
    p = horismos("run", str(TRIAGE_WF), str(ehr), "--world", str(WORLD), "--tools", "tools.py",
                 "--focus", ":patient42", cwd=tmp_path)
    assert said in p.stderr, p.stderr  # said as the run begins; the tool is still called
    # no world given: the files are all there is, and validate of files holds no data to them
    p = horismos("validate", str(TRIAGE_WF), str(ehr), cwd=tmp_path)
    assert p.returncode == 0 and "triagedAt" not in p.stdout, p.stdout
    world = world_triaging(tmp_path, ":patient43")
    p = horismos("validate", str(TRIAGE_WF), str(ehr), "--world", str(world), cwd=tmp_path)
    assert p.returncode == 0 and "triagedAt" not in p.stdout, p.stdout + p.stderr
