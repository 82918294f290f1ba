"""A catalog call of a tool that is not idempotent is made at most once, whatever fails.

A workflow step has its instance's intent for that (tests/test_durable.py); a catalog call
keeps its intent under the tool and its subject, so the *next* call there — a person, a
script or an agent calling again after a crash, a lost lease or a call that never answered —
is refused until someone clears it with ``tools reconcile``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import PREFIXES, Build
from rdflib import URIRef

from horismos import UsageError, World
from horismos._world import INSTANCES

ALLOW = ["ReadOnly", "HostStateWrite", "ExternalCommit"]

CHARGE = """
:t.charge a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [
        horis:subject "patient" ;
        horis:asserts [ horis:property :ref ; horis:type xsd:string ]
    ] ;
    horis:binding "python:charge" ;
    horis:timeout "1s" ;
    horis:idempotent false .
"""


def intents(world: World) -> list[URIRef]:
    """The call intents the store holds."""
    return sorted({
        s for s, _, _ in world.graph.graph(INSTANCES).triples((None, None, None))
        if str(s).startswith("urn:horismos:call-intent:")
    })


class Charger:
    """A charge that acts (counted), answers, fails or never answers, as the test says."""

    def __init__(self) -> None:
        self.acted: list[str] = []
        self.mode = "answer"

    def __call__(self, patient: Any) -> dict[str, str]:
        self.acted.append(str(patient))
        if self.mode == "hang":
            time.sleep(1.5)  # past horis:timeout: sent, never answered
        if self.mode == "raise":
            raise RuntimeError("card declined")
        return {"ref": f"R-{len(self.acted)}"}


def test_a_call_that_never_answered_is_not_made_again_until_reconciled(build: Build) -> None:
    charge = Charger()
    agent, world = build(CHARGE, tools={"charge": charge})
    args = {"patient": ":p1"}

    charge.mode = "hang"
    first = agent.catalog.call("t.charge", args, world, allow=ALLOW)
    assert first.status == "timed_out" and first.error is not None
    assert first.error["kind"] == "outcome_unknown"
    assert "tools reconcile t.charge" in first.error["message"]
    assert len(intents(world)) == 1

    charge.mode = "answer"
    again = agent.catalog.call("t.charge", args, world, allow=ALLOW)
    assert again.status == "refused" and again.error is not None
    assert again.error["kind"] == "outcome_unknown"
    assert "may already have acted on :p1" in again.error["message"]
    assert charge.acted == ["http://example.org/clinic#p1"]  # not called the second time

    # another subject is not held back by p1's call in doubt
    other = agent.catalog.call("t.charge", {"patient": ":p2"}, world, allow=ALLOW)
    assert other.status == "completed"

    cleared = agent.catalog.reconcile("t.charge", args, world)
    assert cleared is not None and "p1" in cleared.args
    assert intents(world) == []
    assert agent.catalog.reconcile("t.charge", args, world) is None

    after = agent.catalog.call("t.charge", args, world, allow=ALLOW)
    assert after.status == "completed"
    assert len(charge.acted) == 3 and intents(world) == []


def test_a_call_that_answers_leaves_nothing_in_doubt(build: Build) -> None:
    charge = Charger()
    agent, world = build(CHARGE, tools={"charge": charge})
    before = world.digest()

    charge.mode = "raise"  # the tool answered, with an error: its outcome is known
    failed = agent.catalog.call("t.charge", {"patient": ":p1"}, world, allow=ALLOW)
    assert failed.status == "failed" and failed.error is not None
    assert failed.error["kind"] == "tool_error"
    assert intents(world) == [] and world.digest() == before

    charge.mode = "answer"
    done = agent.catalog.call("t.charge", {"patient": ":p1"}, world, allow=ALLOW)
    assert done.status == "completed" and intents(world) == []
    assert len(charge.acted) == 2


def test_reconcile_refuses_what_it_cannot_mean(build: Build) -> None:
    agent, world = build(CHARGE + """
        :t.look a horis:Tool ;
            horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
            horis:binding "python:charge" ; horis:idempotent true .
    """, tools={"charge": Charger()})
    with pytest.raises(UsageError, match="idempotent"):
        agent.catalog.reconcile("t.look", {"patient": ":p1"}, world)
    with pytest.raises(UsageError, match='unknown argument "who"'):
        agent.catalog.reconcile("t.charge", {"who": ":p1"}, world)


# -- the command line, killed mid-call -------------------------------------------------------

CLI_TOOLS = """
import os, time
from pathlib import Path

def charge(patient):
    ledger = Path(os.environ["LEDGER"])
    with open(ledger, "a") as f:
        f.write(f"charge {patient}\\n")
        f.flush()
        os.fsync(f.fileno())
    if os.environ.get("HOLD"):
        (ledger.parent / "acted").write_text("here")
        time.sleep(600)
    return {"ref": "R-1"}
"""


def _env(cwd: Path, hold: bool) -> dict[str, str]:
    env = dict(os.environ, LEDGER=str(cwd / "ledger.txt"))
    env.pop("HOLD", None)
    if hold:
        env["HOLD"] = "1"
    return env


def _cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "horismos", *args], cwd=cwd,
                          env=_env(cwd, False), capture_output=True, text=True, timeout=300)


def test_a_call_killed_mid_call_is_not_made_again_until_reconciled(tmp_path: Path) -> None:
    (tmp_path / "defs.ttl").write_text(PREFIXES + ":Patient a owl:Class .\n" + CHARGE)
    (tmp_path / "world.ttl").write_text(PREFIXES + ":p1 a :Patient .\n")
    (tmp_path / "tools.py").write_text(CLI_TOOLS)
    loaded = _cli(tmp_path, "load", "defs.ttl", "world.ttl", "--store", "oxigraph:store")
    assert loaded.returncode == 0, loaded.stderr
    call = ["tools", "call", "t.charge", "defs.ttl", "--store", "oxigraph:store",
            "--tools", "tools.py", "--allow", ",".join(ALLOW), "--args", '{"patient": ":p1"}',
            "--format", "json"]

    proc = subprocess.Popen([sys.executable, "-m", "horismos", *call], cwd=tmp_path,
                            env=_env(tmp_path, True), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not (tmp_path / "acted").exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the call did not reach the tool"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    ledger = tmp_path / "ledger.txt"
    assert ledger.read_text().splitlines() == ["charge http://example.org/clinic#p1"]

    again = _cli(tmp_path, *call)
    assert again.returncode == 5, again.stdout + again.stderr
    assert json.loads(again.stdout)["error"]["kind"] == "outcome_unknown"
    assert len(ledger.read_text().splitlines()) == 1  # the tool was not called again

    reconcile = ["tools", "reconcile", "t.charge", "defs.ttl", "--store", "oxigraph:store",
                 "--args", '{"patient": ":p1"}']
    cleared = _cli(tmp_path, *reconcile)
    assert cleared.returncode == 0, cleared.stdout + cleared.stderr
    assert "cleared the call of t.charge in doubt" in cleared.stdout
    assert _cli(tmp_path, *reconcile).returncode == 1  # nothing left to clear

    after = _cli(tmp_path, *call)
    assert after.returncode == 0, after.stdout + after.stderr
    assert len(ledger.read_text().splitlines()) == 2

    in_memory = _cli(tmp_path, "tools", "reconcile", "t.charge", "defs.ttl", "--store",
                     "memory", "--args", '{"patient": ":p1"}')
    assert in_memory.returncode == 2 and "Traceback" not in in_memory.stderr
    assert "a world in memory holds no call in doubt" in in_memory.stderr
