"""An instance is created by its first commit: no write of its own before its first step.

The first step's commit (or the intent a non-idempotent first tool announces) lands the
instance's type, workflow and focus with its state; it expects no version, the instance IRI
being fresh. The world after the run is what a separate creation commit gave; a process that
stops before the first commit leaves the world as it was, and running again starts it.
"""

from __future__ import annotations

import os
import socket
from typing import Any

import pytest
from conftest import EX, TRIAGE, facts
from rdflib import RDF, Literal, URIRef

from horismos import HORIS, World
from horismos._world import INSTANCES

IDEMPOTENT = TRIAGE.replace('horis:timeout "2s" .', 'horis:timeout "2s" ; horis:idempotent true .')


def _state(world: World) -> set[tuple[Any, ...]]:
    """The instance state graph's triples."""
    return {(s, p, o) for s, p, o, g in world.store.quads() if g == INSTANCES}


def _started_by(iid: URIRef) -> set[tuple[Any, ...]]:
    """What the instance's creation says of the process that started it: this one, by the
    Python API (no lane)."""
    return {(iid, HORIS.startedBy, Literal(f"{socket.gethostname()}:{os.getpid()}"))}


def _run_watched(build, defs: str) -> tuple[Any, World, set, list[set]]:
    """A run on :p1 whose tool notes the instance state while it is called (before the
    step's commit): the run, its world, the state before the run, and what the tool saw."""
    seen: list[set] = []
    worlds: list[World] = []

    def assign(patient: Any, queue: Any) -> dict[str, str]:
        seen.append(_state(worlds[0]))
        return {"ref": "R-1"}

    agent, world = build(defs, tools={"assign": assign})
    worlds.append(world)
    before = _state(world)
    return agent.run(world, focus=str(EX.p1)), world, before, seen


def test_the_first_steps_commit_creates_the_instance(build) -> None:
    run, world, before, seen = _run_watched(build, IDEMPOTENT)

    assert run.status == "completed"
    assert seen == [before]  # no instance yet while its first tool runs
    iid = run.instance
    # what a creation and a first commit left, version 1 guarding the next commit
    assert _state(world) - before == {
        (iid, RDF.type, HORIS.Instance),
        (iid, HORIS.workflow, EX.Triage),
        (iid, HORIS.focus, EX.p1),
        (iid, HORIS.status, HORIS.Completed),
        (iid, HORIS.version, Literal(1)),
        *_started_by(iid),
    }
    assert world.store.digest() == world.store.recompute_digest()


def test_a_non_idempotent_first_tools_intent_creates_the_instance(build) -> None:
    run, world, before, seen = _run_watched(build, TRIAGE)

    assert run.status == "completed"
    iid = run.instance
    during = seen[0] - before
    # running at its first step, version 0, with the announced intent: as a separate
    # creation and an intent left it
    assert {
        (iid, RDF.type, HORIS.Instance),
        (iid, HORIS.workflow, EX.Triage),
        (iid, HORIS.focus, EX.p1),
        (iid, HORIS.status, HORIS.Running),
        (iid, HORIS.version, Literal(0)),
        (iid, HORIS.currentStep, EX.Queue),
    } <= during
    intent = URIRef(f"{iid}:intent")
    assert (intent, HORIS.step, EX.Queue) in during
    after = _state(world) - before
    assert not any(s == intent for s, _, _ in after)  # the step's commit removed it
    assert (iid, HORIS.version, Literal(1)) in after
    assert world.store.digest() == world.store.recompute_digest()


def test_a_blocked_first_step_creates_the_instance_blocked(build) -> None:
    agent, world = build(TRIAGE, tools={"assign": lambda **_: {"ref": "R"}})
    run = agent.run(world, focus=str(EX.p3))  # :p3 has no acuity

    assert run.status == "blocked"
    state = _state(world)
    assert (run.instance, HORIS.status, HORIS.Blocked) in state
    assert (run.instance, HORIS.version, Literal(1)) in state
    assert (run.instance, RDF.type, HORIS.Instance) in state
    assert world.store.digest() == world.store.recompute_digest()


@pytest.mark.parametrize("store_name", ["oxigraph"], indirect=True)
def test_a_run_stopped_before_the_first_commit_leaves_no_instance_and_a_rerun_starts_it(
    build, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent, world = build(IDEMPOTENT, tools={"assign": lambda **_: {"ref": "R-1"}})
    before, digest = facts(world), world.store.digest()
    state = _state(world)

    class Stopped(BaseException):
        """The process stopping at its first commit."""

    def stop(change: Any) -> Any:
        raise Stopped

    monkeypatch.setattr(world.store, "apply", stop)
    with pytest.raises(Stopped):
        agent.run(world, focus=str(EX.p1))
    monkeypatch.undo()

    assert _state(world) == state and facts(world) == before  # the world as it was
    assert world.store.digest() == digest
    run = agent.run(world, focus=str(EX.p1))
    assert run.status == "completed" and len(run.steps) == 1
    instances = {s for s, p, o in _state(world) if o == HORIS.Instance}
    assert instances == {run.instance}
