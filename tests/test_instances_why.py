"""``horismos instances`` says why: a failed instance's error, a blocked one's pattern, and
whether a running one is being run now or was left running by a process that is gone.

An operator listing a world after an incident read ``failed`` with no reason (it was in the
world, ``horis:error``, and in the run's output long scrolled away), and an instance whose
process was killed mid-step read ``running`` exactly as one a live process drives: nothing
said it needed someone to continue it. Real processes, killed with SIGKILL, on an on-disk
store and on a real SPARQL server.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from forked import Popen, horismos_forked
from in_process import horismos_load
from oxigraph_server import OxigraphServer

from horismos import InstanceSummary, World

ROOT = Path(__file__).resolve().parent.parent
TRIAGE = [str(ROOT / "workflows" / "triage.ttl"), str(ROOT / "ontologies" / "ehr.ttl")]

WORLD = """@prefix : <http://example.org/ehr#> .
:urgent a :AcuityLevel .
:routine a :AcuityLevel .
:nurse7 a :Nurse ; :onDuty true .
:patient42 a :Patient ; :acuity :urgent .
:patient43 a :Patient ; :acuity :routine .
:patient44 a :Patient .
:patient45 a :Patient ; :acuity :urgent .
"""

# the example's client, but the queue service refuses :patient43, and :patient45's call
# hangs (after saying so in a file) until the process is killed
CLIENT = '''
import time
from pathlib import Path

def assign_queue(patient, queue):
    if str(patient).endswith("43"):
        raise ConnectionError("EHR refused the connection: queue service down")
    if str(patient).endswith("45"):
        Path("at-call").write_text("")
        time.sleep(600)
    return {"queueRef": "Q-URGENT-1"}

def notify_nurse(patient, nurse, ref):
    return {"assignedNurse": nurse}
'''


def ward(tmp_path: Path) -> list[str]:
    (tmp_path / "client").mkdir()
    (tmp_path / "client" / "ehr_client.py").write_text(CLIENT)
    (tmp_path / "world.ttl").write_text(WORLD)
    return ["--tools", "client/ehr_client.py"]


def horismos(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return horismos_forked(cwd, *args, timeout=120)


def listed(cwd: Path, store: str) -> tuple[dict[str, list[str]], dict[str, dict]]:
    """The text table's rows and the JSON rows, each by focus local name."""
    text = horismos(cwd, "instances", *TRIAGE, "--store", store)
    assert text.returncode == 0, text.stderr
    header, *rows = text.stdout.splitlines()
    assert header.split() == ["id", "workflow", "focus", "status", "step", "since", "by", "why"]
    # each row without its "by" (the process that started it), as the columns were before it
    by_focus = {r.split()[2].lstrip(":"): [*r.split(None, 7)[:6], *r.split(None, 7)[7:]]
                for r in rows}
    as_json = horismos(cwd, "instances", "--store", store, "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    return by_focus, {r["focus"].rsplit("#", 1)[1]: r for r in json.loads(as_json.stdout)}


def hang_then_kill(
        cwd: Path, tools: list[str], store: str, **env: str) -> subprocess.Popen[bytes]:
    """``run --focus :patient45`` as a process of its own, inside its tool's call."""
    proc = Popen(
        [sys.executable, "-m", "horismos", "run", *TRIAGE, *tools, "--store", store,
         "--focus", ":patient45"], cwd=cwd, env={**os.environ, **env},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not (cwd / "at-call").exists():
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    return proc


def test_instances_says_why_each_failed_or_blocked_and_which_run_no_process_drives(
        tmp_path: Path) -> None:
    tools = ward(tmp_path)
    store = f"oxigraph:{tmp_path / 'st'}"
    horismos_load(tmp_path, store, "world.ttl")
    started = dt.datetime.now(dt.UTC)
    ran = horismos(tmp_path, "run", *TRIAGE, *tools, "--store", store, "--focus", ":patient43")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    ran = horismos(tmp_path, "run", *TRIAGE, *tools, "--store", store, "--focus", ":patient44")
    assert ran.returncode == 4, ran.stdout + ran.stderr
    proc = hang_then_kill(tmp_path, tools, store)
    proc.send_signal(signal.SIGKILL)
    proc.wait()

    rows, data = listed(tmp_path, store)
    assert rows["patient43"][3] == "failed"
    # since when: its failing step's start (it landed nothing, and said "-")
    assert data["patient43"]["since"] and rows["patient43"][5] == data["patient43"]["since"][:19]
    assert dt.datetime.fromisoformat(data["patient43"]["since"]) > started
    assert rows["patient43"][6].endswith(
        "ehr.assign_queue raised ConnectionError: EHR refused the connection: queue service down")
    # the row says the kind the failing commit stored first, as the JSON gives it
    assert data["patient43"]["error_kind"] == "tool_error"
    assert rows["patient43"][6].split("  ")[-1].strip() == (
        f"tool_error: {data['patient43']['why']}")
    assert data["patient44"]["error_kind"] == "precondition"  # a blocked one's kind: why
    assert rows["patient44"][3] == "blocked"
    assert "precondition: ?this :acuity ?queue ." in rows["patient44"][6]
    # killed mid-call: no process drives it (none other could open this store), and the row
    # says what continues it
    sid = rows["patient45"][0]
    assert rows["patient45"][3] == "interrupted", rows["patient45"]
    assert f"`horismos resume … --instance {sid}` continues it" in rows["patient45"][6]
    assert data["patient45"]["status"] == "running" and data["patient45"]["live"] is False
    assert data["patient43"]["live"] is None

    # the advice followed: the call that may have acted is not made again, the instance
    # fails with the doubt, and the listing says so
    resumed = horismos(tmp_path, "resume", *TRIAGE, *tools, "--store", store, "--instance", sid)
    assert resumed.returncode == 1, resumed.stdout + resumed.stderr
    rows, data = listed(tmp_path, store)
    assert rows["patient45"][3] == "failed" and data["patient45"]["live"] is None
    assert "not called again" in data["patient45"]["why"], data["patient45"]
    # a call held in doubt, for `tools reconcile`: said by its kind, in JSON and the table
    assert data["patient45"]["error_kind"] == "outcome_unknown", data["patient45"]
    assert rows["patient45"][6].startswith("outcome_unknown: "), rows["patient45"]
    kinds = {r.focus.rsplit("#", 1)[1]: r.error_kind for r in _instances(store)}
    assert kinds == {"patient43": "tool_error", "patient44": "precondition",
                     "patient45": "outcome_unknown"}, kinds


def _instances(store: str) -> list[InstanceSummary]:
    """``World.instances()`` of ``store``, the Python listing the JSON is made from."""
    world = World.open(store)
    try:
        return world.instances()
    finally:
        world.close()


def test_on_a_shared_world_a_run_is_running_and_a_killed_one_interrupted_once_its_lease_lapses(
        tmp_path: Path) -> None:
    server = OxigraphServer(tmp_path / "db")
    try:
        tools = ward(tmp_path)
        store = f"sparql:{server.url}"
        horismos_load(tmp_path, store, "world.ttl")
        proc = hang_then_kill(tmp_path, tools, store, HORISMOS_LEASE="1")
        try:
            rows, data = listed(tmp_path, store)
            assert rows["patient45"][3] == "running", rows["patient45"]
            assert data["patient45"]["live"] is True
            assert "a process with a live lease is running it now" in rows["patient45"][6]
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        deadline = time.monotonic() + 30  # its lease lapses a second after its last renewal
        while True:
            rows, data = listed(tmp_path, store)
            if rows["patient45"][3] != "running" or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        assert rows["patient45"][3] == "interrupted", rows["patient45"]
        assert data["patient45"]["live"] is False
        assert "no live process holds its claim" in rows["patient45"][6]
        assert "`horismos run … --focus :patient45` continues it" in rows["patient45"][6]
    finally:
        server.stop()
