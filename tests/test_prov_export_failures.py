"""``trace export`` of steps that went wrong: when they really ended, and what the gate said.

The PROV-O export wrote a failed step's ``prov:endedAtTime`` equal to its start (a failed
step takes one clock value), though its tool had been waited on, and left out the gate's
messages: a reviewer's PROV tools saw a rejected step end the instant it began, refused for
no reason they could query. Now the end is the start plus the time the step recorded, and
the gate's report is a ``sh:ValidationReport`` the activity generated, one
``sh:ValidationResult`` per message. A real run, its real trace, the command line's export.
"""

from __future__ import annotations

import datetime as dt
import subprocess
from pathlib import Path

from forked import horismos_forked
from rdflib import RDF, RDFS, Graph, Literal, Namespace, URIRef

ROOT = Path(__file__).resolve().parent.parent
TRIAGE = [str(ROOT / "workflows" / "triage.ttl"), str(ROOT / "ontologies" / "ehr.ttl")]
WORLD = ["--world", str(ROOT / "examples" / "triage" / "world.ttl")]
EX = Namespace("http://example.org/ehr#")
PROV = Namespace("http://www.w3.org/ns/prov#")
SH = Namespace("http://www.w3.org/ns/shacl#")
HORIS = Namespace("https://w3id.org/horismos#")

# :patient43's queue service answers after 0.3 s with an error; :patient42's pager names a
# nurse as text, which the effect's class refuses
CLIENT = '''
import time

def assign_queue(patient, queue):
    if str(patient).endswith("43"):
        time.sleep(0.3)
        raise ConnectionError("queue service down")
    return {"queueRef": "Q-URGENT-1"}

def notify_nurse(patient, nurse, ref):
    if str(patient).endswith("42"):
        return {"assignedNurse": "not a nurse"}
    return {"assignedNurse": nurse}
'''


def horismos(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return horismos_forked(cwd, *args, timeout=120)


def exported(tmp_path: Path, *definitions: str) -> Graph:
    (tmp_path / "client").mkdir(exist_ok=True)
    (tmp_path / "client" / "ehr_client.py").write_text(CLIENT)
    if not (tmp_path / "run.jsonl").exists():
        ran = horismos(tmp_path, "run", *TRIAGE, *WORLD, "--tools", "client/ehr_client.py",
                       "--all", "--trace", "run.jsonl")
        assert ran.returncode == 1, ran.stdout + ran.stderr  # failed beats blocked
    out = tmp_path / ("with.ttl" if definitions else "without.ttl")
    done = horismos(tmp_path, "trace", "export", "run.jsonl", *definitions, "-o", str(out))
    assert done.returncode == 0, done.stderr
    return Graph().parse(out, format="turtle")


def activity(g: Graph, label: str) -> URIRef:
    (act,) = g.subjects(RDFS.label, Literal(label))
    return act  # type: ignore[return-value]


def when(g: Graph, act: URIRef, prop: URIRef) -> dt.datetime:
    value = g.value(act, prop)
    assert isinstance(value, Literal), (act, prop)
    return dt.datetime.fromisoformat(str(value))


def test_a_failed_step_ends_when_its_tool_gave_up_not_when_it_began(tmp_path: Path) -> None:
    g = exported(tmp_path)
    failed = activity(g, "QueuePatient: failed")
    assert (g.value(failed, HORIS.step), g.value(failed, HORIS.error)) != (None, None)
    took = when(g, failed, PROV.endedAtTime) - when(g, failed, PROV.startedAtTime)
    assert dt.timedelta(seconds=0.3) <= took < dt.timedelta(seconds=30), took
    # the run (its failed instance storing since when, horis:failedAt) replays as it ran
    replayed = horismos(tmp_path, "replay", "run.jsonl", *TRIAGE)
    assert replayed.returncode == 0 and replayed.stdout.startswith("same"), replayed.stdout
    # a completed step's end is still the time its effects landed at, as recorded
    done = [a for a in g.subjects(RDFS.label, Literal("QueuePatient: completed"))]
    assert done and all(
        when(g, a, PROV.endedAtTime) >= when(g, a, PROV.startedAtTime) for a in done)


def test_the_gate_s_messages_are_a_report_the_rejected_step_generated(tmp_path: Path) -> None:
    exported(tmp_path)  # the run, once
    g = exported(tmp_path, *TRIAGE)  # with the definitions: every recorded name an IRI
    rejected = activity(g, "NotifyNurse: rejected")
    (report,) = g.objects(rejected, PROV.generated)
    assert (report, RDF.type, PROV.Entity) in g and (report, RDF.type, SH.ValidationReport) in g
    assert (report, PROV.wasGeneratedBy, rejected) in g
    assert g.value(report, SH.conforms) == Literal(False)
    (result,) = g.objects(report, SH.result)
    assert g.value(result, SH.focusNode) == EX.patient42
    assert g.value(result, SH.resultPath) == EX.assignedNurse
    assert g.value(result, SH.value) == Literal("not a nurse")
    assert str(g.value(result, SH.resultMessage)) == ":assignedNurse must be a node of class :Nurse"
    assert g.value(result, SH.resultSeverity) == SH.Violation
    # without the definitions: the focus is the step's argument of that name; the path, a
    # CURIE of prefixes the trace does not record, is left to the message as printed
    bare = exported(tmp_path)
    (result,) = bare.objects(None, SH.result)
    assert bare.value(result, SH.focusNode) == EX.patient42
    assert bare.value(result, SH.resultPath) is None
    assert str(bare.value(result, RDFS.label)) == (
        ":patient42 :assignedNurse: :assignedNurse must be a node of class :Nurse")
    # the steps the gate let through (three completed) have none: one report in the run
    assert len(list(bare.subjects(RDF.type, SH.ValidationReport))) == 1
