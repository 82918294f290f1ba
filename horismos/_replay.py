"""Replay: the live runner, fed a recorded trace, checked event by event against it.

There is no second engine. :func:`replay` starts a world from the snapshot in the trace's
header and runs the same :class:`~horismos._runner.Runner` a live run uses, with two things
swapped in:

- a :class:`ReplayEnvironment`, which hands out the recorded clock values and ids and answers
  tool calls with their recorded outcomes (a non-idempotent tool is never invoked; an
  idempotent one is re-executed only when asked to, and its outcome is then compared);
- a :class:`ReplayTrace`, which instead of writing each event compares it with the recorded
  event at the same position and raises :class:`~horismos.Divergence` at the first difference.

Everything the runner decides — which step, which tool, the arguments read from the graph,
the preconditions, the gate's verdict, the status — is decided again; only what came from
outside the runtime is taken from the record.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rdflib import URIRef

from ._bindings import Binding
from ._errors import (
    Divergence,
    GateRejected,
    ToolError,
    TraceError,
    TraceVersionError,
    UsageError,
)
from ._model import ProposalStep, Tool
from ._outcomes import play
from ._proposal import RankRequest, Reply
from ._runner import Environment
from ._trace import TRACE_VERSION, Trace, read_trace
from ._traceview import short
from ._world import World

if TYPE_CHECKING:
    from ._agent import Agent

__all__ = ["ReplayEnvironment", "ReplayReport", "ReplayTrace", "load_events", "replay"]

# Fields compared first, in this order, so a divergence names its cause rather than a
# consequence (a precondition that no longer holds also empties the arguments).
_FIRST = ("type", "step", "kind", "tool", "instance", "workflow", "focus", "precondition",
          "args", "outcomes", "gate", "status", "error", "effects", "next", "world_digest")
# Fields that legitimately differ between a run and its replay. Beyond _FIRST, a field is
# compared only when the recording has it: one this runtime added since is not a divergence.
# ``result`` repeated each call's return value, which ``outcomes`` holds: older traces have it.
_SKIP = frozenset({"seq", "prev", "hash", "sig", "timings", "definitions_digest", "result"})
_NOT_REST = _SKIP | set(_FIRST)


class ReplayTrace(Trace):
    """A trace that compares each event the runner emits with the recorded one, in order."""

    def __init__(self, recorded: list[dict[str, Any]], source: str = "<trace>") -> None:
        super().__init__()
        self.recorded = recorded
        self.source = source
        self.steps = 0
        self._focus = {e.get("instance"): e.get("focus") for e in recorded
                       if e.get("type") == "instance"}
        self.ended = recorded[-1].get("type") == "end"
        """Whether the recording ran to its end event; if not, its process stopped mid-run."""

    @property
    def position(self) -> int:
        """The index of the next event the runner will emit."""
        return len(self._events)

    def expected(self) -> dict[str, Any]:
        """The recorded event the runner's next event must match (empty past the end)."""
        return self.recorded[self.position] if self.position < len(self.recorded) else {}

    def emit(self, type: str, **fields: Any) -> dict[str, Any]:
        index = self.position
        if index == len(self.recorded) and not self.ended:
            raise _Stopped
        event = {"type": type, "seq": index, **fields}
        recorded = self.expected()
        for key in [*_FIRST, *sorted(recorded.keys() - _NOT_REST)]:
            now, then = event.get(key), recorded.get(key)
            if now != then and _json(now) != then:
                raise self.divergence(index, key, then, _json(now))
        self._events.append(event)
        if type == "step":
            self.steps += 1
        return event

    def divergence(self, index: int, field: str, recorded: Any, now: Any) -> Divergence:
        event = self.recorded[index] if index < len(self.recorded) else {}
        where = f"event {index} (line {index + 1})"
        if not event:
            where += ", past the end of the trace"
        elif event.get("type") == "step":
            focus = self._focus.get(event.get("instance"))
            where += f", step {short(event.get('step'))}"
            if focus:
                where += f" for {short(focus)}"
        else:
            where += f", {event.get('type')}"
        return Divergence(f"{self.source}: {where}: {field} was {_show(recorded)} when recorded, "
                          f"is {_show(now)} now", event=index, field=field, recorded=recorded,
                          now=now)


class _Stopped(Exception):
    """The runner went on past the last event of a trace whose recording never ended."""


class ReplayEnvironment(Environment):
    """Recorded clock values, ids and tool outcomes, handed out per event in recorded order.

    Each recorded event lists what was handed out for it (``clock``, ``ids``, ``outcomes``);
    this environment serves those lists back while the runner works towards that event.
    A proposal's model is never asked again: :meth:`rank` serves the recorded reply
    (``rankings``), and the runner judges it as it did live.
    """

    replaying = True

    def __init__(self, trace: ReplayTrace, *, reexecute_idempotent: bool = False) -> None:
        super().__init__()
        self.trace = trace
        self.reexecute_idempotent = reexecute_idempotent
        self.substituted = 0
        self.reexecuted = 0
        self._at = -1
        self._taken: dict[str, int] = {}
        self._last_clock = "1970-01-01T00:00:00+00:00"
        self._unrecorded = 0

    def _take(self, kind: str) -> Any | None:
        if self._at != self.trace.position:
            self._at, self._taken = self.trace.position, {}
        values = self.trace.expected().get(kind) or ()
        n = self._taken.get(kind, 0)
        if n >= len(values):
            return None
        self._taken[kind] = n + 1
        return values[n]

    def now(self) -> dt.datetime:
        # Past what was recorded the replay is already diverging; the event comparison says
        # where. Until then it gets the last recorded time, so it stays deterministic.
        value = self._take("clock") or self._last_clock
        self._last_clock = value
        self.note("clock", value)
        return dt.datetime.fromisoformat(value)

    def new_id(self) -> str:
        value = self._take("ids")
        if value is None:
            self._unrecorded += 1
            value = f"unrecorded-{self._unrecorded}"
        return self.note("ids", value)

    async def invoke(self, tool: Tool, binding: Callable[[], Binding],
                     args: Mapping[str, Any]) -> Any:
        entry = self._take("outcomes")
        if self.reexecute_idempotent and tool.idempotent:
            self.reexecuted += 1
            return await super().invoke(tool, binding, args)
        if entry is None:
            self.note("outcomes", {"unrecorded": True})
            raise ToolError(f"replay: the trace records no outcome for this call of {tool.name}, "
                            "so it is not made")
        self.substituted += 1
        self.note("outcomes", entry)
        return play(entry)

    async def rank(self, step: ProposalStep, request: RankRequest) -> Reply:
        entry = self._take("rankings")
        if entry is None:
            entry = {"error": "replay: the trace records no model reply for this proposal"}
        self.note("rankings", entry)
        return Reply.from_json(entry)


@dataclass(frozen=True)
class ReplayReport:
    """What a replay found; ``str(report)`` is one line, as ``horismos replay`` prints it."""

    trace: str
    workflow: str
    diverged: bool
    first_divergence: Divergence | None
    steps: int
    """Step events replayed the same as recorded (the diverging one not included)."""
    definitions_changed: bool
    """The definitions in force differ from those the trace was recorded with."""
    final_digest_matches: bool | None
    """The world after replay has the recorded final digest; ``None`` if replay stopped early."""
    substituted: int
    reexecuted: int
    complete: bool = True
    """The trace runs to its end event; ``False`` when its recording process stopped mid-run
    (replay then goes as far as it was recorded, and the final digest is not checked)."""

    def __str__(self) -> str:
        changed = " (definitions changed since recording)" if self.definitions_changed else ""
        if self.first_divergence is not None:
            return f"DIVERGED  {self.first_divergence}{changed}"
        calls = f"{self.substituted} tool call(s) substituted"
        if self.reexecuted:
            calls += f", {self.reexecuted} re-executed"
        if not self.complete:
            return (f"STOPPED   {self.trace}: {self.steps} step(s) replayed the same ({calls}) "
                    "up to where the trace ends; it has no end event, so the recording process "
                    f"stopped there and the final world digest is not checked{changed}")
        return (f"same      {self.trace}: {self.steps} step(s) replayed ({calls}); the final "
                f"world digest matches the recorded one{changed}")


def load_events(trace: str | Path | Trace) -> tuple[list[dict[str, Any]], str]:
    """The events of ``trace`` as JSON values, and a name for messages."""
    if isinstance(trace, Trace):
        events = [json.loads(json.dumps(e, default=str)) for e in trace.events]
        if not events:
            raise TraceError("the trace is empty")
        if events[0].get("trace_version") != TRACE_VERSION:
            raise TraceVersionError(f"trace_version {events[0].get('trace_version')!r} is not "
                                    f"one this runtime reads (it reads {TRACE_VERSION})")
        return events, "<trace>"
    return read_trace(trace), str(trace)


def replay(trace: str | Path | Trace, agent: Agent, *,
           reexecute_idempotent: bool = False) -> ReplayReport:
    """Replay a recorded run with ``agent``'s definitions; report the first divergence.

    Raises :class:`~horismos.TraceTampered` or :class:`~horismos.TraceVersionError` for a
    trace that cannot be trusted or read; a divergence is reported, not raised.
    """
    return asyncio.run(_replay(trace, agent, reexecute_idempotent))


async def _replay(trace: str | Path | Trace, agent: Agent,
                  reexecute_idempotent: bool) -> ReplayReport:
    events, source = load_events(trace)
    header = events[0]
    if "call" in header:
        raise TraceError(f"{source}: this trace records a direct tool call (horismos tools "
                         "call), not a workflow run; replay replays runs")
    recorder = ReplayTrace(events, source)
    env = ReplayEnvironment(recorder, reexecute_idempotent=reexecute_idempotent)
    world = World.from_snapshot(header["snapshot"]["data"])
    workflow = URIRef(header["workflow"])
    focus: list[str] = header.get("focus", [])
    divergence: Divergence | None = None
    stopped = False
    try:
        if workflow not in agent.definitions.workflows:
            raise recorder.divergence(0, "workflow", str(workflow), None)
        resumed = events[1] if len(events) > 1 and events[1].get("type") == "resume" else None
        try:
            if resumed is not None:  # a resume: the recorded facts answer the same wait again
                await agent.aresume(world, URIRef(resumed["instance"]),
                                    "\n".join(resumed.get("facts") or ()) or None,
                                    trace=recorder, env=env)
            else:
                await agent.arun(world, workflow, URIRef(focus[0]) if len(focus) == 1 else None,
                                 all=len(focus) != 1, trace=recorder, env=env)
        except (UsageError, GateRejected) as e:
            if recorder.position:
                raise
            field = "focus" if resumed is None else "facts"
            raise recorder.divergence(0 if resumed is None else 1, field,
                                      focus if resumed is None else resumed.get("facts"),
                                      str(e)) from None
        if recorder.position < len(events):
            raise recorder.divergence(recorder.position, "type",
                                      events[recorder.position].get("type"), None)
    except Divergence as d:
        divergence = d
    except _Stopped:
        stopped = True
    end = not stopped and (divergence is None or (
        divergence.field == "world_digest" and events[divergence.event].get("type") == "end"))
    return ReplayReport(
        trace=source, workflow=str(workflow), diverged=divergence is not None,
        first_divergence=divergence, steps=recorder.steps,
        definitions_changed=header.get("definitions_digest") != agent.definitions.digest,
        final_digest_matches=(divergence is None) if end else None,
        substituted=env.substituted, reexecuted=env.reexecuted, complete=not stopped)


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def _show(value: Any, limit: int = 240) -> str:
    """``value`` as compact JSON on one line (whitespace in strings collapsed), cut at ``limit``."""
    text = json.dumps(_compact(value), default=str, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "…"


def _compact(value: Any) -> Any:
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, dict):
        return {k: _compact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_compact(v) for v in value]
    return value
