"""``horis:inline true``: a quick sync Python tool called on the run's own thread.

What a modeler relies on: the step lands exactly as it would through a worker thread (same
world, same trace but for timings); a call past its ``horis:timeout`` is a ToolTimeout once it
returns, its answer discarded and nothing landed (a tool that is not idempotent: its outcome
unknown); a replay of that trace agrees; the property is refused where it cannot hold (not a
boolean, not a python: binding, an async function) before any tool has acted.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import itertools
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import EX, TRIAGE, facts, step_events
from rdflib import Literal

from horismos import (
    AuthoringError,
    OutcomeUnknown,
    ToolError,
    ToolTimeout,
    load_definitions,
    replay,
)
from horismos._environment import Environment

ROOT = Path(__file__).resolve().parent.parent


def _triage(timeout: str = "2s", extra: str = "") -> str:
    return TRIAGE.replace('horis:timeout "2s"', f'horis:timeout "{timeout}"{extra}')


INLINE = " ;\n    horis:inline true"


class _Fixed(Environment):
    """A clock and ids the test sets, so two runs trace the same values."""

    def __init__(self) -> None:
        super().__init__()
        self._ids = itertools.count()

    def now(self) -> dt.datetime:
        at = dt.datetime(2026, 5, 4, 9, 0, tzinfo=dt.UTC)
        self.note("clock", at.isoformat())
        return at

    def new_id(self) -> str:
        return self.note("ids", f"{next(self._ids):032x}")


def _without_timings(event: dict[str, Any]) -> dict[str, Any]:
    """A step event but for what two runs may differ in besides the call: its timings, the
    hash chain over them, and the order a fresh store lists a node's triples in."""
    return {k: v for k, v in event.items() if k not in ("timings", "hash", "prev", "reads")}


def test_an_inline_tool_runs_on_the_runs_thread_and_lands_as_a_threaded_one(build):
    """A differential check: inline or on a worker thread, the same step events and world."""
    seen: list[threading.Thread] = []

    def assign(patient, queue):
        seen.append(threading.current_thread())
        return {"ref": f"R-{str(patient)[-1]}"}

    outcomes = []
    for extra in ("", INLINE):
        agent, world = build(_triage(extra=extra), tools={"assign": assign})
        run = asyncio.run(agent.arun(world, all=True, env=_Fixed()))
        assert run.status == "blocked", [str(i.error) for i in run.instances]  # :p3 has no acuity
        events = [_without_timings(e) for e in run.trace.events if e["type"] == "step"]
        outcomes.append((events, world.canonical()))
    threaded, inline = seen[:2], seen[2:]
    assert all(t is not threading.main_thread() for t in threaded)
    assert inline == [threading.main_thread()] * 2
    assert outcomes[0] == outcomes[1]


def test_an_inline_tool_past_its_timeout_is_refused_once_it_returns(build):
    finished = []

    def assign(patient, queue):
        time.sleep(0.1)
        finished.append(patient)
        return {"ref": "R-99"}  # one the shape allows: discarded all the same

    agent, world = build(_triage("20ms", INLINE), tools={"assign": assign})
    before = facts(world)

    run = agent.run(world, focus=str(EX.p1))

    assert finished == [EX.p1]  # it could not be abandoned: it ran to the end
    (record,) = run.steps
    assert record.status == "timed_out"
    # sent and never answered in time: a non-idempotent tool's outcome is unknown
    assert isinstance(record.error, OutcomeUnknown)
    assert isinstance(record.error.cause, ToolTimeout)
    assert "past its horis:timeout of 0.02s" in str(record.error)
    assert "horis:inline" in str(record.error)
    assert run.status == "failed"
    assert facts(world) == before  # the late answer never lands
    (event,) = step_events(run)
    assert event["outcomes"] == [
        {
            "error": "ToolTimeout",
            "message": str(record.error.cause),
            "tool_error": True,
            "answered": False,
        }
    ]


def test_a_late_error_of_an_inline_tool_is_a_timeout_too(build):
    def assign(patient, queue):
        time.sleep(0.1)
        raise ConnectionError("EHR hiccup")

    agent, world = build(_triage("20ms", INLINE), tools={"assign": assign})

    run = agent.run(world, focus=str(EX.p1))

    (record,) = run.steps
    assert record.status == "timed_out"
    assert isinstance(record.error.cause, ToolTimeout)  # type: ignore[union-attr]


def test_an_idempotent_inline_tool_late_once_is_retried(build):
    calls = []

    def assign(patient, queue):
        calls.append(patient)
        if len(calls) == 1:
            time.sleep(0.1)
        return {"ref": f"R-{len(calls)}"}

    extra = INLINE + " ;\n    horis:idempotent true ;\n    horis:retries 1"
    agent, world = build(_triage("50ms", extra), tools={"assign": assign})

    run = agent.run(world, focus=str(EX.p1))

    assert run.status == "completed"
    assert len(calls) == 2
    (record,) = run.steps
    assert record.attempts == 2
    assert (EX.p1, EX.ref, Literal("R-2")) in world.graph
    assert (EX.p1, EX.ref, Literal("R-1")) not in world.graph


@pytest.mark.parametrize("late", [False, True])
def test_a_run_with_inline_tools_replays_without_divergence(build, tmp_path, late):
    def assign(patient, queue):
        if late:
            time.sleep(0.1)
        return {"ref": "R-1"}

    agent, world = build(_triage("50ms", INLINE), tools={"assign": assign})
    trace = tmp_path / "inline.jsonl"
    run = agent.run(world, all=True, trace=trace)
    assert run.steps[0].status == ("timed_out" if late else "completed")

    report = replay(trace, agent)

    assert not report.diverged, str(report)


def test_a_failing_inline_tool_fails_its_step_as_a_threaded_one_does(build):
    def assign(patient, queue):
        raise SystemExit(3)

    agent, world = build(_triage(extra=INLINE), tools={"assign": assign})

    run = agent.run(world, focus=str(EX.p1))

    (record,) = run.steps
    assert record.status == "failed"
    assert "the tool raised SystemExit(3)" in str(record.error)


def test_an_async_function_may_not_be_inline(build):
    called = []

    async def assign(patient, queue):
        called.append(patient)
        return {"ref": "R-1"}

    agent, world = build(_triage(extra=INLINE), tools={"assign": assign})
    before = facts(world)

    with pytest.raises(ToolError, match="horis:inline is for sync functions"):
        agent.run(world, focus=str(EX.p1))
    assert called == []
    assert facts(world) == before


def _broken(tmp_path: Path, old: str, new: str) -> Path:
    text = (ROOT / "workflows" / "triage.ttl").read_text(encoding="utf-8")
    assert text.count(old) == 1
    path = tmp_path / "triage.ttl"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


def _line(path: Path, text: str) -> int:
    (line,) = [
        i for i, t in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if text in t
    ]
    return line


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ('"yes"', "horis:inline must be true or false"),
        ('"true"', "horis:inline takes one boolean"),  # a quoted boolean: the shapes' word
    ],
)
def test_a_non_boolean_inline_is_an_error_at_its_line(tmp_path, value, said):
    path = _broken(
        tmp_path,
        '    horis:timeout "5s" ;',
        f'    horis:timeout "5s" ;\n    horis:inline {value} ;',
    )
    with pytest.raises(AuthoringError) as raised:
        load_definitions([path, ROOT / "ontologies" / "ehr.ttl"])
    (p,) = [p for p in raised.value.problems if said in p.message]
    assert (p.file, p.line, p.node) == (str(path), _line(path, "horis:inline"), ":ehr.assign_queue")


def test_inline_on_a_binding_other_than_python_is_an_error_at_its_line(tmp_path):
    path = _broken(
        tmp_path,
        '    horis:binding "python:ehr_client.assign_queue" ;',
        '    horis:binding "https://ehr.example.org/assign" ;\n    horis:inline true ;',
    )
    with pytest.raises(AuthoringError) as raised:
        load_definitions([path, ROOT / "ontologies" / "ehr.ttl"])
    (p,) = raised.value.problems
    assert (p.file, p.line, p.node) == (str(path), _line(path, "horis:inline"), ":ehr.assign_queue")
    assert "only a python: function" in p.message
    assert p.hint is not None and "remove horis:inline" in p.hint

