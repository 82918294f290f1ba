"""``tools reconcile`` records who cleared which call in doubt, when, and on what finding.

It removed the doubt and kept nothing: a reviewer who found a tool that is not idempotent
called a second time could not tell who had let it be called again, when, or whether they
had found the first call had acted. The commit that clears it now adds a record with human
provenance (:mod:`horismos._reconciled`), and ``horismos instances`` shows it on the instance
whose call it was. A call in doubt made the ordinary way: a tool that is not idempotent
answers what the domain shape refuses (it may have acted; nothing landed).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
from pathlib import Path

import pytest
from forked import horismos_forked
from in_process import horismos_load

from horismos import Agent, World
from horismos._errors import UsageError

ROOT = Path(__file__).resolve().parent.parent
TRIAGE = [str(ROOT / "workflows" / "triage.ttl"), str(ROOT / "ontologies" / "ehr.ttl")]
ARGS = '{"patient": ":patient42", "queue": ":urgent"}'

CLIENT = '''
def assign_queue(patient, queue):  # "patient42": not a queue reference the shape allows
    return {"queueRef": str(patient).rsplit("#", 1)[1]}

def notify_nurse(patient, nurse, ref):
    return {"assignedNurse": nurse}
'''


def horismos(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return horismos_forked(cwd, *args, env={**os.environ, **env}, timeout=120)


@pytest.fixture
def in_doubt(tmp_path: Path) -> list[str]:
    """A store where :patient42's queue call is held in doubt; the arguments that name it."""
    (tmp_path / "client").mkdir()
    (tmp_path / "client" / "ehr_client.py").write_text(CLIENT)
    store = ["--store", f"oxigraph:{tmp_path / 'st'}"]
    horismos_load(tmp_path, store[1], str(ROOT / "examples" / "triage" / "world.ttl"))
    ran = horismos(tmp_path, "run", *TRIAGE, *store, "--tools", "client/ehr_client.py",
                   "--focus", ":patient42")
    assert ran.returncode == 1 and "held in doubt" in ran.stdout, ran.stdout + ran.stderr
    return store


def test_reconcile_records_operator_time_and_verdict_and_instances_shows_them(
        tmp_path: Path, in_doubt: list[str]) -> None:
    before = dt.datetime.now(dt.UTC)
    cleared = horismos(tmp_path, "tools", "reconcile", "ehr.assign_queue", *TRIAGE, *in_doubt,
                       "--args", ARGS, "--verdict", "acted", "--operator", "dr.okafor")
    assert cleared.returncode == 0, cleared.stdout + cleared.stderr
    assert ("recorded in the world: cleared by dr.okafor (verdict: acted); `horismos "
            "instances` shows it on its instance") in cleared.stdout

    listed = horismos(tmp_path, "instances", *TRIAGE, *in_doubt)
    (row,) = [r for r in listed.stdout.splitlines() if ":patient42" in r]
    assert "failed" in row and "call in doubt cleared by dr.okafor at " in row, row
    assert ("(verdict: acted); gate_rejected: the result of ehr.assign_queue breaks the "
            "domain shapes") in row
    as_json = json.loads(horismos(tmp_path, "instances", *in_doubt, "--format", "json").stdout)
    (record,) = as_json[0]["reconciled"]
    assert record["operator"] == "dr.okafor" and record["verdict"] == "acted"
    assert record["tool"] == "http://example.org/ehr#ehr.assign_queue"
    assert record["args"] == [{"patient": "<http://example.org/ehr#patient42>",
                               "queue": "<http://example.org/ehr#urgent>"}]
    assert before <= dt.datetime.fromisoformat(record["at"]) <= dt.datetime.now(dt.UTC)

    # in the world: its own graph, human provenance, the operator a prov:Person
    with World.open(in_doubt[1]) as world:
        rows = world.store.select(
            """SELECT ?g ?who WHERE { GRAPH ?g { ?r a horis:Reconciliation ;
                   horis:provenance horis:HumanProvenance ; prov:wasAssociatedWith ?p .
                   ?p a prov:Person ; rdfs:label ?who } }""",
            {}, {"horis": "https://w3id.org/horismos#", "prov": "http://www.w3.org/ns/prov#",
                 "rdfs": "http://www.w3.org/2000/01/rdf-schema#"})
    assert [str(r["who"]) for r in rows] == ["dr.okafor"]
    assert str(rows[0]["g"]).startswith("urn:horismos:reconciled:")


def test_without_operator_the_os_user_is_recorded_and_no_verdict_is_said_so(
        tmp_path: Path, in_doubt: list[str]) -> None:
    cleared = horismos(tmp_path, "tools", "reconcile", "ehr.assign_queue", *TRIAGE, *in_doubt,
                       "--args", ARGS, LOGNAME="nightshift")
    assert cleared.returncode == 0, cleared.stdout + cleared.stderr
    assert "cleared by nightshift (no --verdict given)" in cleared.stdout
    listed = horismos(tmp_path, "instances", *in_doubt)
    assert "call in doubt cleared by nightshift at " in listed.stdout
    assert "(no verdict given)" in listed.stdout
    (data,) = json.loads(horismos(tmp_path, "instances", *in_doubt, "--format", "json").stdout)
    assert data["reconciled"][0]["verdict"] is None


def test_a_verdict_that_is_not_one_is_refused_and_clears_nothing(
        tmp_path: Path, in_doubt: list[str]) -> None:
    refused = horismos(tmp_path, "tools", "reconcile", "ehr.assign_queue", *TRIAGE, *in_doubt,
                       "--args", ARGS, "--verdict", "maybe")
    assert refused.returncode == 2 and "invalid choice: 'maybe'" in refused.stderr
    agent = Agent.from_files(*TRIAGE)
    with World.open(in_doubt[1]) as world:
        with pytest.raises(UsageError, match="verdict 'maybe': give one of acted, not-acted"):
            agent.catalog.reconcile("ehr.assign_queue", json.loads(ARGS), world,
                                    verdict="maybe")
        # still in doubt, and cleared from Python with the same record
        assert agent.catalog.reconcile("ehr.assign_queue", json.loads(ARGS), world,
                                       verdict="not-acted", operator="api") is not None
    (data,) = json.loads(horismos(tmp_path, "instances", *in_doubt, "--format", "json").stdout)
    assert [(r["operator"], r["verdict"]) for r in data["reconciled"]] == [("api", "not-acted")]


def test_reconcile_help_says_what_leaving_out_the_verdict_does(tmp_path: Path) -> None:
    """--verdict is optional (the test above clears without one): the help said what it
    records, not that it may be left out, nor what the record then says."""
    shown = horismos(tmp_path, "tools", "reconcile", "--help")
    assert shown.returncode == 0, shown.stderr
    said = " ".join(shown.stdout.split())
    assert "left out, it clears all the same and the record says no verdict given" in said
