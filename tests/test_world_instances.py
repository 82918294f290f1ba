"""``world.instances()``: the instances a world holds, from Python, as ``horismos instances``
lists them.

A service running one instance per event had no way to list them from Python (which wait,
which blocked, since when) but to run the command line, or import ``horismos._instances``;
the listing is now one reading shared by both.
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import sys
from pathlib import Path

import pytest
from forked import horismos_forked
from rdflib import Namespace

from horismos import Agent, InstanceSummary, UsageError, World

ROOT = Path(__file__).resolve().parent.parent
EX = Namespace("http://example.org/ehr#")
TRIAGE = [str(ROOT / "workflows" / "triage.ttl"), str(ROOT / "ontologies" / "ehr.ttl")]


def _ehr_tools() -> dict[str, object]:
    sys.path.insert(0, str(ROOT / "examples" / "triage"))
    try:
        import ehr_client
    finally:
        sys.path.pop(0)
    return {
        "ehr_client.assign_queue": ehr_client.assign_queue,
        "ehr_client.notify_nurse": ehr_client.notify_nurse,
    }


def test_a_world_lists_its_instances_as_the_command_line_does(tmp_path: Path) -> None:
    store = f"oxigraph:{tmp_path / 'store'}"
    with World.open(store) as world:
        world.load(ROOT / "examples" / "triage" / "world.ttl")
        agent = Agent.from_files(*TRIAGE, tools=_ehr_tools())
        run = agent.run(world, all=True)  # 42 and 43 complete, 44 (no acuity) blocks
        listed = world.instances()
        blocked = world.instances("blocked")
    assert {(i.focus, i.status) for i in listed} == {
        (EX.patient42, "completed"),
        (EX.patient43, "completed"),
        (EX.patient44, "blocked"),
    }
    assert {i.instance for i in listed} == {i.instance for i in run.instances}
    (stuck,) = blocked
    assert isinstance(stuck, InstanceSummary)
    assert stuck.focus == EX.patient44 and stuck.current is not None and stuck.since
    with pytest.raises(dataclasses.FrozenInstanceError):
        stuck.status = "completed"  # type: ignore[misc]
    # what `horismos instances --format json` prints is the same reading
    p = horismos_forked(tmp_path, "instances", "--store", store, "--format", "json", timeout=120)
    assert p.returncode == 0, p.stderr
    printed = json.loads(p.stdout)
    assert printed == [
        {
            "instance": str(i.instance),
            "workflow": str(i.workflow),
            "focus": str(i.focus),
            "status": i.status,
            "step": str(i.current) if i.current else None,
            "since": i.since,
            "why": i.why,  # the blocked one's pattern
            "error_kind": i.error_kind,  # none failed
            "started_by": i.started_by,  # this process, on this host (no lane: not a command)
            "live": None,  # none is running
            "reconciled": [],  # no call in doubt cleared by hand
            "in_doubt": [],  # nor any held
        }
        for i in listed
    ]
    assert stuck.why and "?this :acuity ?queue" in stuck.why
    assert {i.started_by for i in listed} == {f"{socket.gethostname()}:{os.getpid()}"}


def test_a_status_not_known_is_refused_naming_those_that_are() -> None:
    with World.open("memory") as world:
        assert world.instances() == []
        with pytest.raises(UsageError, match="running, waiting, blocked, failed, completed"):
            world.instances("stuck")  # type: ignore[arg-type]
