"""Replay: the live runner, fed a recorded trace, checked event by event against it.

There is no second engine. :func:`replay` runs the same :class:`~horismos._runner.Runner` a live
run uses, driving the instances the trace records (started, continued or resumed, in the
recorded order), with three things swapped in:

- a :class:`ReplayEnvironment`, which hands out the recorded clock values and ids and answers
  tool calls with their recorded outcomes (a non-idempotent tool is never invoked; an
  idempotent one is re-executed only when asked to, and its outcome is then compared);
- the world: a trace records the answer to every read the run made of the world
  (:mod:`horismos._reads`), and a :class:`~horismos._reads.ReplayedStore` serves those answers
  back; a read the recording does not hold — changed definitions asking the world something
  the recorded run never asked — is a divergence. A trace recorded with an embedded snapshot
  of a small world replays against that world instead, so changed definitions are decided
  against the real facts, and the final world digest is checked;
- a :class:`ReplayTrace`, which instead of writing each event compares it with the recorded
  event at the same position and raises :class:`~horismos.Divergence` at the first difference.

Everything the runner decides — which step, which tool, the arguments read from the graph,
the preconditions, the gate's verdict, the status — is decided again; only what came from
outside the runtime is taken from the record. docs/replay.md says what this can and cannot
detect.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rdflib import XSD, Literal, URIRef

from ._bindings import Binding
from ._catalog import types_in
from ._definitions import same_definitions
from ._environment import Environment
from ._errors import (
    Divergence,
    GateRejected,
    LeaseLost,
    NotSent,
    ToolError,
    TraceError,
    TraceVersionError,
    UsageError,
)
from ._event_shape import reading
from ._loop import not_in_running_loop
from ._model import ProposalStep, Tool
from ._model_clients import ModelClients
from ._outcomes import play
from ._policy import DEFAULT_ALLOW, Policy, side_effect
from ._process_identity import recorded_ran_by
from ._proposal import RankRequest, Reply
from ._reads import ReplayedStore, term
from ._stored_instances import StoredInstance
from ._stores import Conflict
from ._trace import READ_VERSIONS, Trace, iter_trace, version_message
from ._traceview import bracketed
from ._waits import parse_facts, prepare
from ._world import World

if TYPE_CHECKING:
    from ._agent import Agent

__all__ = ["Recorded", "ReplayEnvironment", "ReplayReport", "ReplayTrace", "load_events", "replay"]

# Fields compared first, in this order, so a divergence names its cause rather than a
# consequence (a precondition that no longer holds also empties the arguments).
_FIRST = (
    "type",
    "step",
    "kind",
    "tool",
    "instance",
    "workflow",
    "focus",
    "precondition",
    "args",
    "outcomes",
    "gate",
    "status",
    "error",
    "effects",
    "next",
    "world_digest",
)
# Fields that legitimately differ between a run and its replay. Beyond _FIRST, a field is
# compared only when the recording has it: one this runtime added since is not a divergence.
# ``result`` repeated each call's return value, which ``outcomes`` holds: older traces have it.
_SKIP = frozenset(
    {"seq", "prev", "hash", "sig", "timings", "definitions_digest", "store", "reads", "result"}
)
_NOT_REST = _SKIP | set(_FIRST)
_SETS = frozenset({"effects", "narrowed", "facts"})
"""Fields whose members have no order: compared as sets (a tool's answer may list its fields,
a store its triples, in any order)."""


class Recorded:
    """The recorded events, read from the trace as the replay reaches them.

    A replay works towards one event at a time, in order, so it holds the header, the event
    after it (a resume), and the few around its position — not the whole run, whose events in
    memory were ~7x its file (a 63 MB trace held ~460 MB). The events are checked as they are
    read (:func:`~horismos.iter_trace`): an edit raises :class:`~horismos.TraceTampered` when
    the replay reaches it."""

    _WINDOW = 4
    """Events kept behind the newest one read: the replay's position trails it by one."""

    def __init__(self, events: Iterable[dict[str, Any]]) -> None:
        self._rest = iter(events)
        self._kept: dict[int, dict[str, Any]] = {}
        self._read = 0
        self._last: dict[str, Any] | None = None
        self.focus: dict[Any, Any] = {}
        """Each instance's focus, from its instance event (a divergence names it)."""
        self.header = self.get(0) or {}

    def get(self, index: int) -> dict[str, Any] | None:
        """The event at ``index``, or None past the last one."""
        while self._read <= index:
            event = next(self._rest, None)
            if event is None:
                return None
            if event.get("type") == "instance":
                self.focus[event.get("instance")] = event.get("focus")
            self._kept[self._read] = self._last = event
            if self._read - self._WINDOW > 1:  # the header and a resume stay
                self._kept.pop(self._read - self._WINDOW, None)
            self._read += 1
        try:
            return self._kept[index]
        except KeyError:
            raise AssertionError(
                f"replay went back to event {index}, which it had passed"
            ) from None

    def ended(self) -> bool:
        """Whether the last event is the end event: the recording ran to its end. Read on to
        it (the replay asks once it is there)."""
        while self.get(self._read) is not None:
            pass
        return self._last is not None and self._last.get("type") == "end"

    def close(self) -> None:
        """Stop reading the trace's file, wherever the replay stopped."""
        close = getattr(self._rest, "close", None)
        if close is not None:
            close()


class ReplayTrace(Trace):
    """A trace that compares each event the runner emits with the recorded one, in order."""

    def __init__(
        self,
        recorded: Recorded,
        source: str = "<trace>",
        name: Callable[[str], str] = bracketed,
    ) -> None:
        super().__init__()
        self.recorded = recorded
        self.source = source
        self.name = name
        """How a divergence names a step and its focus: as the definitions' CURIE
        (``:NotifyNurse``), as every other command does; ``<IRI>`` when none are given."""
        self.steps = 0
        self.against_world = False
        """Reads are answered by a world (the trace's snapshot), not compared with the record."""

    @property
    def position(self) -> int:
        """The index of the next event the runner will emit."""
        return self._count

    def expected(self) -> dict[str, Any]:
        """The recorded event the runner's next event must match (empty past the end)."""
        return self.recorded.get(self.position) or {}

    def past_end(self) -> bool:
        """Whether the runner has emitted every recorded event."""
        return self.recorded.get(self.position) is None

    def emit(
        self, type: str, fields: Mapping[str, Any] | None = None, /, **more: Any
    ) -> dict[str, Any]:
        """As :meth:`Trace.emit <horismos._trace.Trace.emit>`, compared with the recording."""
        index = self.position
        if self.past_end() and not self.recorded.ended():
            raise _Stopped
        event = {"type": type, "seq": index, **(fields or {}), **more}
        recorded = self.expected()
        for key in [*_FIRST, *sorted(recorded.keys() - _NOT_REST)]:
            now, then = event.get(key), recorded.get(key)
            if now == then:
                continue
            now = _json(now)
            if key in _SETS and isinstance(now, list) and isinstance(then, list):
                if _sorted(now) != _sorted(then):  # a set: its order means nothing
                    raise self.divergence(index, key, then, now, sets=True)
            elif key == "gate" and isinstance(now, dict) and isinstance(then, dict):
                if {**now, "messages": _sorted(now.get("messages") or [])} != {
                    **then,
                    "messages": _sorted(then.get("messages") or []),
                }:
                    raise self.divergence(index, key, then, now)
            elif now != then:
                raise self.divergence(index, key, then, now)
        self._count += 1
        if type == "step":
            self.steps += 1
        # the next event is read (and its hash checked) here, not first by whatever asks for
        # it: a tool call's clock, say, where an edit must not pass for the tool's failure
        self.recorded.get(self._count)
        return event

    def read_divergence(self, recorded: Any, now: Any) -> Exception:
        """The run now reads the world other than the recording did at this point; or it
        reads on past the end of a trace whose recording stopped."""
        if self.past_end() and not self.recorded.ended():
            return _Stopped()
        return self.divergence(
            self.position, "reads", recorded[:-1] if isinstance(recorded, list) else recorded, now
        )

    def divergence(
        self, index: int, field: str, recorded: Any, now: Any, *, sets: bool = False
    ) -> Divergence:
        event = self.recorded.get(index) or {}
        where = f"event {index} (line {index + 1})"
        if not event:
            where += ", past the end of the trace"
        elif event.get("type") == "step":
            focus = self.recorded.focus.get(event.get("instance"))
            where += f", step {self.name(str(event.get('step')))}"
            if focus:
                where += f" for {self.name(str(focus))}"
        else:
            where += f", {event.get('type')}"
        if sets:  # name what differs, not two long lists cut off
            then_, now_ = ({json.dumps(e, sort_keys=True): e for e in v} for v in (recorded, now))
            added = [now_[k] for k in sorted(now_.keys() - then_.keys())]
            missing = [then_[k] for k in sorted(then_.keys() - now_.keys())]
            what = "; ".join(
                part
                for part in (
                    f"{len(added)} now that were not recorded: {_show(added, 600)}"
                    if added
                    else "",
                    f"{len(missing)} recorded that are not now: {_show(missing, 600)}"
                    if missing
                    else "",
                )
                if part
            )
            return Divergence(
                f"{self.source}: {where}: {field} differ: {what}",
                event=index,
                field=field,
                recorded=recorded,
                now=now,
            )
        if field == "workflow" and now is None:  # not "is null now": say what to give
            return Divergence(
                f"{self.source}: {where}: the trace runs the workflow {_show(recorded)}, which "
                "the definitions given do not declare; give the files that declare it",
                event=index,
                field=field,
                recorded=recorded,
                now=now,
            )
        return Divergence(
            f"{self.source}: {where}: {field} was {_show(recorded)} when recorded, "
            f"is {_show(now)} now",
            event=index,
            field=field,
            recorded=recorded,
            now=now,
        )


class _Stopped(Exception):
    """The runner went on past the last event of a trace whose recording never ended."""


def _may_reexecute(tool: Tool) -> bool:
    """Whether ``--reexecute-idempotent`` calls ``tool`` again: idempotent, needing no approval,
    and inside the policy a run has unasked. An approval was good for the one call it was given
    for, and whoever replays a trace has not widened the policy the run was given."""
    return tool.idempotent and not tool.requires_approval and side_effect(tool) in DEFAULT_ALLOW


class ReplayEnvironment(Environment):
    """Recorded clock values, ids and tool outcomes, handed out per event in recorded order.

    Each recorded event lists what was handed out for it (``clock``, ``ids``, ``outcomes``);
    this environment serves those lists back while the runner works towards that event.
    A proposal's model is never asked again: :meth:`_rank` serves the recorded reply
    (``rankings``), and the runner judges it as it did live.
    """

    def __init__(self, trace: ReplayTrace, *, reexecute_idempotent: bool = False) -> None:
        super().__init__()
        self.trace = trace
        self.reexecute_idempotent = reexecute_idempotent
        self.substituted = 0
        self.reexecuted = 0
        self._at = -1
        self._taken: dict[str, int] = {}
        self._used: set[tuple[str, int]] = set()
        self._last_clock = "1970-01-01T00:00:00+00:00"
        self._unrecorded = 0

    def _here(self) -> None:
        if self._at != self.trace.position:
            self._at, self._taken, self._used = self.trace.position, {}, set()

    def take(self, kind: str) -> Any | None:
        """The next recorded value of ``kind`` for the event the runner works towards."""
        self._here()
        values = self.trace.expected().get(kind) or ()
        n = self._taken.get(kind, 0)
        if n >= len(values):
            return None
        self._taken[kind] = n + 1
        return values[n]

    def take_where(self, kind: str, match: Callable[[Any], bool]) -> Any | None:
        """The first recorded value of ``kind`` for that event that ``match``es and was not
        taken yet."""
        self._here()
        event = self.trace.expected()
        with reading(event, self.trace.position, self.trace.source, kind):  # once, not a value
            for i, value in enumerate(event.get(kind) or ()):
                if (kind, i) not in self._used and match(value):
                    self._used.add((kind, i))
                    return value
        return None

    def now(self) -> dt.datetime:
        # Past what was recorded the replay is already diverging; the event comparison says
        # where. Until then it gets the last recorded time, so it stays deterministic.
        value = self.take("clock") or self._last_clock
        with reading(self.trace.expected(), self.trace.position, self.trace.source, "clock"):
            now = dt.datetime.fromisoformat(value)
        self._last_clock = value
        self.note("clock", value)
        return now

    def new_id(self) -> str:
        value = self.take("ids")
        if value is None:
            self._unrecorded += 1
            value = f"unrecorded-{self._unrecorded}"
        return self.note("ids", value)

    def call_order(self, args: list[dict[str, Any]]) -> list[int] | None:
        """The recorded order of a step's calls, when the world a replay reads (a snapshot,
        loaded into another store than the run's) gave the same calls in another order: a
        SPARQL engine may order solutions as it likes, and outcomes are handed out in the
        order the calls were made."""
        recorded = self.trace.expected().get("args")
        if not isinstance(recorded, list) or recorded == args:
            return None
        texts = [json.dumps(a, sort_keys=True) for a in args]
        wanted = [json.dumps(a, sort_keys=True) for a in recorded]
        if sorted(texts) != sorted(wanted):
            return None  # other calls: the step event says how they differ
        left = list(range(len(texts)))
        return [left.pop(next(j for j, i in enumerate(left) if texts[i] == w)) for w in wanted]

    async def _invoke(
        self,
        tool: Tool,
        binding: Callable[[], Binding],
        args: Mapping[str, Any],
        deadline: asyncio.Timeout | None = None,
    ) -> Any:
        """The recorded outcome; the binding is neither resolved nor opened (no server is
        started), but for a call ``--reexecute-idempotent`` makes again."""
        entry = self.take("outcomes")
        if self.reexecute_idempotent and _may_reexecute(tool):
            self.reexecuted += 1
            try:
                return await super()._invoke(tool, binding, args, deadline)
            finally:  # a different answer is the cause of what follows: say so first
                now = self._handed["outcomes"][-1]
                if _json(now) != entry:
                    raise self.trace.divergence(
                        self.trace.position, "outcomes", [entry], [_json(now)]
                    )
        if entry is None:
            self.note("outcomes", {"unrecorded": True})
            raise ToolError(
                f"replay: the trace records no outcome for this call of {tool.name}, "
                "so it is not made"
            )
        self.substituted += 1
        self.note("outcomes", entry)
        return play(entry)

    async def remote(self, send: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
        """A commit to a system of record is never sent again: the recorded answer, or the
        recorded failure (a timeout after sending stays an unknown outcome)."""
        entry = self.take("remote")
        if entry is None:
            self.note("remote", {"unrecorded": True})
            raise NotSent("replay: the trace records no answer for this commit, so it is not sent")
        self.substituted += 1
        self.note("remote", entry)
        return play(entry)

    def _code(self, binding: Callable[[], Binding]) -> str | None:
        """The code behind the tool, as recorded (a trace of an earlier build records none:
        its approvals held whatever the code, and replay so)."""
        code = self.take("code")
        return None if code is None else self.note("code", code)

    async def held_by(
        self, read: Callable[[], Awaitable[list[list[list[str]]]]]
    ) -> list[list[list[str]]]:
        """Who held the step's doubt nodes, as recorded: other processes decided it."""
        return self.note("holders", self.take("holders") or [])

    async def _rank(self, step: ProposalStep, request: RankRequest, clients: ModelClients) -> Reply:
        entry = self.take("rankings")
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

    against_world: bool = False
    """The trace embedded its world, so reads were answered by that world (and the final
    digest checked); otherwise they were answered from the recording."""

    stopped_by: str | None = None
    """Of a run another writer stopped mid-way (its trace's ``stopped`` event), what stopped
    it: the replay stopped at the same place, as the recording did."""

    reexecute_withheld: bool = False
    """Re-execution was asked for and not done: the definitions changed since recording, so
    which tools were idempotent then is not known (one declared idempotent since, and not
    idempotent when it ran, must not be called again)."""

    def __str__(self) -> str:
        changed = " (definitions changed since recording)" if self.definitions_changed else ""
        if self.reexecute_withheld:
            changed = (
                " (definitions changed since recording: no tool was re-executed, since which "
                "were idempotent when it ran is not known; replay with the definitions it was "
                "recorded with to re-execute)"
            )
        if self.first_divergence is not None:
            hint = ""
            if self.first_divergence.field == "reads" and self.definitions_changed:
                hint = (
                    "; the definitions now read the world other than the recorded run did, "
                    "and the trace holds only what that run read (record with "
                    "--trace-snapshot to replay changed definitions against the world)"
                )
            elif self.first_divergence.field == "reads":  # not the definitions: the runtime
                hint = (
                    "; the definitions are those it was recorded with, so this runtime "
                    "read the world other than the recorded run did (another Horismos "
                    "release, or a fault of replay's: report it with the trace)"
                )
            return f"DIVERGED  {self.first_divergence}{hint}{changed}"
        calls = f"{self.substituted} tool call(s) substituted"
        if self.reexecuted:
            calls += f", {self.reexecuted} re-executed"
        if not self.complete and self.stopped_by is not None:
            return (
                f"STOPPED   {self.trace}: {self.steps} step(s) replayed the same ({calls}) "
                f"up to where the recorded run was stopped, as it was again: {self.stopped_by}; "
                f"the final world digest is not checked{changed}"
            )
        if not self.complete:
            return (
                f"STOPPED   {self.trace}: {self.steps} step(s) replayed the same ({calls}) "
                "up to where the trace ends; it has no end event, so the recording process "
                f"stopped there and the final world digest is not checked{changed}"
            )
        world = (
            "the final world digest matches the recorded one"
            if self.against_world
            else "every read of the world was answered as recorded"
        )
        return f"same      {self.trace}: {self.steps} step(s) replayed ({calls}); {world}{changed}"


def load_events(trace: str | Path | Trace, *, checked_first: bool = False) -> tuple[Recorded, str]:
    """The events of ``trace`` as JSON values, read as the replay reaches them, and a name
    for messages. An edit is found when the replay reaches it; ``checked_first``: before
    anything is replayed (the file is read twice), for a replay that calls tools again."""
    if isinstance(trace, Trace):
        events = [json.loads(json.dumps(e, default=str)) for e in trace.events]
        if not events:
            raise TraceError("the trace is empty")
        if events[0].get("trace_version") not in READ_VERSIONS:
            raise TraceVersionError(version_message("the trace", events[0].get("trace_version")))
        return Recorded(events), "<trace>"
    if checked_first:
        for _ in iter_trace(trace):
            pass
    recorded = Recorded(iter_trace(trace))
    if not recorded.header:
        raise TraceError(f"{trace}: the trace is empty")
    return recorded, str(trace)


def replay(
    trace: str | Path | Trace, agent: Agent, *, reexecute_idempotent: bool = False
) -> ReplayReport:
    """Replay a recorded run with ``agent``'s definitions; report the first divergence.

    Raises :class:`~horismos.TraceTampered` or :class:`~horismos.TraceVersionError` for a
    trace that cannot be trusted or read; a divergence is reported, not raised. From a
    coroutine, run it in a thread (``await asyncio.to_thread(replay, trace, agent)``): called
    there it raises UsageError.
    """
    not_in_running_loop(
        "replay()", "run it in a thread from there, `await asyncio.to_thread(replay, trace, agent)`"
    )
    return asyncio.run(_replay(trace, agent, reexecute_idempotent))


async def _replay(
    trace: str | Path | Trace, agent: Agent, reexecute_idempotent: bool
) -> ReplayReport:
    # re-executed calls act: none is made on a trace with an edit further on
    events, source = load_events(trace, checked_first=reexecute_idempotent)
    try:
        return await _replay_events(events, source, agent, reexecute_idempotent)
    finally:
        events.close()


async def _replay_events(
    events: Recorded, source: str, agent: Agent, reexecute_idempotent: bool
) -> ReplayReport:
    header = events.header
    if "call" in header:
        raise TraceError(call_trace(source))
    second = events.get(1)
    if second is not None and second.get("type") == "refused":
        raise TraceError(refused_run(source, second))
    recorder = ReplayTrace(events, source, lambda iri: agent.definitions.name(URIRef(iri)))
    changed = not same_definitions(agent.definitions, header.get("definitions_digest"))
    # which tools were idempotent when the run was recorded is known only from the definitions
    # it was recorded with: a tool declared idempotent since would be called again
    env = ReplayEnvironment(recorder, reexecute_idempotent=reexecute_idempotent and not changed)
    snapshot = (header.get("snapshot") or {}).get("data")
    world = World.from_snapshot(snapshot) if snapshot is not None else None
    recorder.against_world = world is not None
    with reading(header, 0, source):
        workflow = URIRef(header["workflow"])
    divergence: Divergence | None = None
    stopped = False
    stopped_by = None
    try:
        if workflow not in agent.definitions.workflows:
            raise recorder.divergence(0, "workflow", str(workflow), None)
        await _drive(agent, recorder, env, world, events)
    except Divergence as d:
        divergence = d
    except _Stopped:
        stopped = True
    except (Conflict, LeaseLost):
        said = recorder.expected()
        if said.get("type") == "stopped":  # the recorded run stopped on this too, and said so
            stopped_by = f"{said.get('kind')}: {said.get('message')}"
        elif not recorder.past_end() or events.ended():
            raise
        stopped = True  # the recorded run stopped on this too: its trace has no end
    end = not stopped and (
        divergence is None
        or (
            divergence.field == "world_digest"
            and (events.get(divergence.event) or {}).get("type") == "end"
        )
    )
    return ReplayReport(
        trace=source,
        workflow=str(workflow),
        diverged=divergence is not None,
        first_divergence=divergence,
        steps=recorder.steps,
        definitions_changed=changed,
        reexecute_withheld=reexecute_idempotent and changed,
        final_digest_matches=(divergence is None) if end and world is not None else None,
        substituted=env.substituted,
        reexecuted=env.reexecuted,
        complete=not stopped,
        stopped_by=stopped_by,
        against_world=world is not None,
    )


async def _drive(
    agent: Agent,
    recorder: ReplayTrace,
    env: ReplayEnvironment,
    world: World | None,
    events: Recorded,
) -> None:
    """Emit what the recorded run emitted, by running what it ran, in its order."""
    defs = agent.definitions
    header = events.header
    with reading(header, 0, recorder.source, "policy"):
        rules = Policy(frozenset(header.get("policy", {}).get("allow", DEFAULT_ALLOW)))  # as run
    if world is not None:
        runner = agent._runner(world, recorder, env, types_in(agent, world), policy=rules)
    else:
        runner = agent._runner(
            World(ReplayedStore(env, recorder.read_divergence)),
            recorder,
            env,
            recorded=False,
            policy=rules,
        )
    # a trace from before calls were held in doubt made none of those reads and commits
    runner.calls_in_doubt = int(header.get("calls_in_doubt") or 0)  # ``true`` is 1
    runner.approvals_bound = int(header.get("approvals_bound") or 0)  # ``true`` is 1
    runner.names_shapes = bool(header.get("names_shapes"))
    runner.blocked_at = bool(header.get("blocked_at"))  # else stored no horis:blockedAt
    runner.failed_at = bool(header.get("failed_at"))  # else stored no horis:failedAt
    runner.error_kinds = bool(header.get("error_kinds"))  # else stored no horis:errorKind
    runner.block_kinds = bool(header.get("block_kinds"))  # nor on a blocked instance
    runner.blocks_unreached = bool(header.get("blocks_unreached"))  # else it failed there
    runner.holds_settled = int(header.get("holds_settled") or 0)  # its holders read, as recorded
    runner.trace_version = header["trace_version"]  # its steps' activities written as recorded
    runner.ran_by = recorded_ran_by(header)  # its instances' record of who started them
    try:
        second = events.get(1)
        resumed = second if second is not None and second.get("type") == "resume" else None
        waiting = None
        if resumed is not None:  # the recorded facts answer the same wait again
            with reading(resumed, 1, recorder.source):
                facts = "\n".join(resumed.get("facts") or ()) or None
                instance = URIRef(resumed["instance"])
            try:
                waiting = prepare(
                    defs,
                    agent._gate,
                    runner.world,
                    instance,
                    parse_facts(defs, facts),
                    runner.store.types,
                )
            except (UsageError, GateRejected) as e:
                raise recorder.divergence(1, "facts", resumed.get("facts"), str(e)) from None
            # who answered, as recorded (a trace from before answers named one names none)
            waiting.operator = resumed.get("operator")
        workflow = defs.workflows[URIRef(header["workflow"])]
        runner.header(
            workflow,
            [URIRef(f) for f in header.get("focus", [])],
            world_digest=world.digest() if world is not None else header.get("world_digest"),
            snapshot=(header.get("snapshot") or {}).get("data"),
        )
        if waiting is not None:
            await runner.resume_instance(waiting)
        while (event := recorder.expected()).get("type") == "instance":
            with reading(event, recorder.position, recorder.source):
                named, focus = URIRef(event["workflow"]), URIRef(event["focus"])
                step = event.get("step")
                stored = (
                    StoredInstance(
                        URIRef(event["instance"]),
                        named,
                        focus,
                        event.get("status", "running"),
                        URIRef(step) if step else None,
                        int(event["continued_at"]),
                        {k: term(v) for k, v in (event.get("variables") or {}).items()},
                        event.get("blocked_by"),
                        blocked_at=_blocked_at(event.get("blocked_at")),
                        error_kind=event.get("error_kind"),
                    )
                    if "continued_at" in event
                    else None
                )
            wf = defs.workflows.get(named)
            if wf is None:
                raise recorder.divergence(recorder.position, "workflow", str(named), None)
            if stored is not None:
                await runner.continue_instance(stored)
            else:
                await runner.run_instance(wf, focus)
    finally:
        await runner.aclose()
    recorded_end = recorder.expected()
    runner.end(
        world_digest=world.digest() if world is not None else recorded_end.get("world_digest")
    )
    if not recorder.past_end():
        raise recorder.divergence(recorder.position, "type", recorder.expected().get("type"), None)


def call_trace(source: str) -> str:
    """Why a catalog call's trace is not replayed, and what to read it with instead. Replay
    decides a run's steps again (which fires, on what the world held, with which arguments)
    to show where today's definitions part from the recorded run; a call has none of those
    decisions to make again, its caller having named the tool and its arguments, and making
    it again to see would act again (a call of a tool that is not idempotent is made at most
    once). Its record is read as it is: the timeline, its hash chain checked as it is read."""
    return (
        f"{source}: this trace records a direct tool call (horismos tools call), not a "
        "workflow run: replay decides a run's steps again, and a call has no step to decide "
        "(its caller named the tool and its arguments), so it is not replayed; read it with "
        f"`horismos trace show {source} FILE_OR_DIR…` (its hash chain is checked as it is "
        "read) or `horismos trace export`"
    )


def refused_run(source: str, refused: Mapping[str, Any]) -> str:
    """Why the trace of a run refused before its first step (another run drove its focus:
    a duplicate delivery; or another process held its store open) is not replayed: nothing
    ran, so there is nothing to decide again."""
    held = "its store" if refused.get("kind") == "store_held" else "the focus"
    why = (
        "another process held its store open"
        if held == "its store"
        else ("another run drove its focus")
    )
    return (
        f"{source}: this trace records a run refused before its first step "
        f"({refused.get('kind')}: {why}), so nothing ran and there is "
        f"nothing to replay; `horismos trace show` says which process held {held}, and that "
        "process's trace records what ran"
    )


def _blocked_at(text: str | None) -> Literal | None:
    """A continued blocked instance's ``horis:blockedAt`` as its ``instance`` event wrote it:
    its state is replaced by the quads it was stored as."""
    return Literal(text, datatype=XSD.dateTime) if text else None


def _sorted(entries: list[Any]) -> list[Any]:
    """A set-valued field's members in one order, whatever order they were listed in."""
    return sorted(_json(entries), key=lambda e: json.dumps(e, sort_keys=True))


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
