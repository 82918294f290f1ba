"""The runner: moves workflow instances step by step; the runtime, never a model, fires tools.

One path for live runs and replay: where time, ids and tool outcomes come from is the
:class:`Environment`'s business; replay passes one that reads them from a trace.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import re
import threading
import time
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from functools import lru_cache
from typing import Any, cast

from rdflib import RDF, RDFS, XSD, Literal, URIRef
from rdflib.term import Node

from ._adapter_step import AdapterCommit, check_scopes
from ._attempt import Attempt
from ._bindings import Binding, McpSessions, resolve
from ._bindings.reach import hosts_of
from ._definitions import Definitions
from ._errors import (
    ArgumentTypeError,
    CallInFlight,
    GateRejected,
    InstanceFailed,
    NotSent,
    OutcomeUnknown,
    PreconditionError,
    RunError,
    StepBudgetExceeded,
    ToolError,
    ToolTimeout,
)
from ._gate import Gate, Verdict
from ._hazards import cycle_through
from ._intents import (
    Intent,
    announce,
    calling,
    doubt_key,
    doubt_marks,
    doubt_message,
    doubt_node,
    held,
    holder,
    holds,
    in_flight_message,
    key_at,
    open_intent,
    outlast,
    read_intent,
    settling_at,
    yields_to,
)
from ._literals import INTEGER_TYPES, well_formed
from ._model import (
    ActionStep,
    Arg,
    DecisionStep,
    McpServer,
    ProposalStep,
    Step,
    Tool,
    WaitStep,
    Workflow,
)
from ._outcomes import Expired, encode, outcome_of
from ._policy import Pending, Policy, given_keyed, pending, refusal, side_effect
from ._prechecks import Prechecks
from ._proposal import RankRequest, Reply, ask, propose, refused_model
from ._reads import text
from ._records import InstanceRun, StepRecord
from ._stores import Change, Conflict
from ._stores.base import QueryRefused, ReadAhead
from ._stores.oxigraph import datetime_literal
from ._terms import is_iri, unfit_terms
from ._trace import TRACE_VERSION, Trace
from ._vocab import HORIS, PROV
from ._waits import StoredInstance, Waiting, read_instance, short_id_quad, wait_step
from ._world import INSTANCES, World

__all__ = ["Environment", "Runner"]

# looked up once: rdflib answers RDF.type and PROV.x through __getattr__ each time (µs apiece)
_TYPE, _LABEL = RDF.type, RDFS.label
_ENTITY, _ACTIVITY, _GENERATED_BY = PROV.Entity, PROV.Activity, PROV.wasGeneratedBy
_ASSOCIATED_WITH, _STARTED, _ENDED = (PROV.wasAssociatedWith, PROV.startedAtTime, PROV.endedAtTime)
_VERSION, _STATUS_OF, _CURRENT, _INSTANCE = (
    HORIS.version,
    HORIS.status,
    HORIS.currentStep,
    HORIS.instance,
)
_BLOCKED_AT = HORIS.blockedAt
_IS_VERSION = str(_VERSION).__eq__  # str's own comparison: rdflib's __eq__ is Python
_IS_TYPE = str(_TYPE).__eq__  # so is a predicate rdf:type (predicates are IRIs)
_STATUS = {
    "running": HORIS.Running,
    "completed": HORIS.Completed,
    "waiting": HORIS.Waiting,
    "blocked": HORIS.Blocked,
    "failed": HORIS.Failed,
}


class Environment:
    """Where the clock, fresh ids and tool outcomes come from in a live run.

    Every value handed out is noted until the runner takes it (:meth:`handed`) into the trace
    event it belongs to, so replay can hand the same values back in the same order.
    """

    def __init__(self) -> None:
        self._handed: dict[str, list[Any]] = {}
        self._said: tuple[dt.datetime, str] | None = None  # the last time now() handed out

    def now(self) -> dt.datetime:
        value = dt.datetime.now(dt.UTC)
        self._said = (value, self.note("clock", value.isoformat()))
        return value

    def text(self, value: dt.datetime) -> str:
        """``value.isoformat()``: as noted, when it is the time :meth:`now` last handed out
        (a step's stamps are; serialising it again cost ~4 µs a stamp)."""
        said = self._said
        return said[1] if said is not None and said[0] is value else value.isoformat()

    def new_id(self) -> str:
        """A fresh id: a random (version 4) UUID's 32 hex digits, as ``uuid.uuid4().hex``
        writes them, without building a ``UUID`` object (~4 µs an id)."""
        raw = bytearray(os.urandom(16))
        raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
        raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
        return self.note("ids", raw.hex())

    def call_order(self, args: list[dict[str, Any]]) -> list[int] | None:
        """The order to make a step's calls in (``args`` as the trace writes them), when not
        the order their precondition's solutions came in: a live run takes those as they
        come."""
        return None

    async def invoke(
        self, tool: Tool, binding: Callable[[], Binding], args: Mapping[str, Any]
    ) -> Any:
        try:
            result = await binding().call(args)
        except (asyncio.CancelledError, Exception) as e:
            self.note("outcomes", outcome_of(e, own_timeouts=True))
            raise
        self.note("outcomes", {"returned": encode(result)})
        return result

    async def remote(self, send: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
        """Send one commit to a system of record; its answer (or how it failed) is recorded
        as ``remote``, so a replay hands it back instead of sending (see _adapter_step)."""
        try:
            answer = await send()
        except (asyncio.CancelledError, Exception) as e:
            self.note("remote", outcome_of(e))
            raise
        self.note("remote", {"returned": encode(answer)})
        return answer

    async def held_by(
        self, read: Callable[[], Awaitable[list[list[list[str]]]]]
    ) -> list[list[list[str]]]:
        """Who holds each of a step's doubt nodes once its hold has settled on a shared world
        (other processes decide it), recorded as ``holders``: a replay hands it back."""
        return self.note("holders", await read())

    async def rank(self, step: ProposalStep, request: RankRequest) -> Reply:
        """Ask the step's model to rank the candidates; replay hands back the recorded reply."""
        reply = await ask(request)
        self.note("rankings", reply.to_json())
        return reply

    def note(self, kind: str, value: Any) -> Any:
        """Note ``value`` as handed out (~9 a step: no empty list made for each, as
        ``setdefault`` would)."""
        handed = self._handed.get(kind)
        if handed is None:
            self._handed[kind] = [value]
        else:
            handed.append(value)
        return value

    def handed(self) -> dict[str, list[Any]]:
        """What was handed out since the last call (``clock``, ``ids``, ``outcomes``)."""
        out, self._handed = self._handed, {}
        return out


class Runner:
    """Runs instances of the workflows in ``defs`` against a world, writing one trace."""

    def __init__(
        self,
        defs: Definitions,
        gate: Gate,
        *,
        world: World,
        trace: Trace,
        registry: Mapping[str, Callable[..., Any]],
        env: Environment,
        mcp_servers: Mapping[str, McpServer] | None = None,
        policy: Policy | None = None,
        prechecks: Prechecks | None = None,
    ) -> None:
        """``world`` is the world as this run reads it: a live run's store records every
        answer in the trace (:class:`~horismos._reads.RecordingStore`), a replay's serves the
        recorded ones (:class:`~horismos._reads.ReplayedStore`). ``policy``: what its steps
        may call (:mod:`._policy`). ``prechecks``: the agent's answers to the checks before
        a first step that depend on its definitions alone (:mod:`._prechecks`)."""
        self.defs = defs
        self.prechecks = prechecks if prechecks is not None else Prechecks(defs)
        self.policy = policy or Policy()  # side effects allowed, approvals given (_policy)
        self.gate = gate
        self.world = world
        self.store = world.store
        self.trace = trace
        self.registry = registry
        self.env = env
        self._bindings: dict[URIRef, Binding] = {}
        self.mcp = McpSessions.for_definitions(defs, mcp_servers)  # one session a server a run
        # per instance while it is driven, dropped when it stops: a batch stays flat in memory
        self._pending: dict[URIRef, list[tuple]] = {}
        self._dropped: dict[URIRef, list[tuple]] = {}  # projections an adapter commit replaces
        self._state: dict[URIRef, list[tuple]] = {}
        # a new instance's type, workflow and focus, until its first commit lands them
        self._fresh: dict[URIRef, list[tuple]] = {}
        self._recovered: set[URIRef] = set()  # instances whose state was read from the store
        self._intent_at: dict[URIRef, URIRef] = {}  # a catalog call's intent node (call_tool)
        self._keyed: dict[URIRef, list[tuple]] = {}  # a catalog call's idempotency key record
        self.calls_in_doubt = 2
        """Which rules hold calls of a tool that is not idempotent in doubt (see _intents), as
        a trace's header says: 2, a call that may have acted and never landed — sent and never
        answered, or answered and its result not landed (the gate rejected it, a later call of
        its horis:forEach failed) — and a step holds the node it acts on while it calls; 1
        (``true``), recorded before answered calls were held: only a step never answered, all
        of its calls; 0 (absent), recorded before any was. A replay follows the trace's, or
        its commits and reads would not be the recorded ones."""
        self.approvals_bound = 3
        """Whether an approval holds only for the tool's definition it was given for (see
        :func:`._policy.implementation`), as a trace's header says: 3, its MCP server's
        declaration included, and a request records how many approvals each payload asks
        for (``horis:approvalsAsked``); 2, recorded before requests counted them; 1
        (``true``), before the server counted; 0 (absent), before approvals were bound at
        all: made none of those reads, and its requests recorded none."""
        self.names_shapes = True
        """Whether a rejection by the domain shapes says so, as a trace's header says; one
        recorded before said the result broke the tool's declared effect, and an instance it
        failed holds those words (``horis:error``), which its replay must write again."""
        self.blocked_at = True
        """Whether a blocked instance stores since when (``horis:blockedAt``), as a trace's
        header says; one recorded before stored no time, and its replay must not either."""
        self.settled_holders: (
            Callable[[list[URIRef], float, URIRef], Awaitable[list[list[list[str]]]]] | None
        )
        self.settled_holders = None
        """On a world other processes share: who holds each doubt node, read once every hold
        that raced with this step's (landed at the time given) has landed too, and which of
        them decided to call (:meth:`._claims.Worker.settled_holders`); see
        :func:`._intents.yields_to`."""
        self.keep_subject: Callable[[URIRef], Callable[[], None]] | None = None
        """On a world other processes share: hold a subject, as a catalog call being made
        does, until what this returns is called (:func:`._claims.keep_subject`): a step's call
        abandoned at its timeout keeps its subject so while its function acts on."""
        self.holds_settled = 0
        """Which holds a step settles, then asks who else holds (a live run on a shared world,
        or the replay of one, as its header says; the answers are recorded): 4, as 3, and a
        step that goes first reads its preconditions again before it calls
        (:meth:`_gone_since_read`); 3, those on any node but its focus, and those on its
        focus too when the tool is called by steps of several workflows (each run holds only
        its own workflow's claim on the focus) or by a step on a node that need not be its
        focus (whose hold settles, while the run whose focus it is holds only its claim
        there); 2, recorded before the latter; 1 (``true``), before the focus was: any node
        but its focus; 0, none."""
        self.trace_version = TRACE_VERSION
        """Which quads a step's activity writes, as a trace's header says: 3, the eight that
        say something (:func:`_activity`); 2, recorded before, four more that the vocabulary
        entails or another quad repeats (:func:`_activity_v2`), which its replay must write
        again to reach its recorded digests."""
        self._types_of = self.store.types
        self._aheads: dict[URIRef, ReadAhead] = {}
        self._policies: dict[URIRef, dict[str, Any]] = {}
        self.counts: dict[str, int] = {}
        """How many instances this run left in each status."""
        self.on_step: Callable[[InstanceRun, StepRecord], None] | None = None
        """Called with each step's record once it has landed (``horismos run`` prints it)."""

    # -- run lifecycle ------------------------------------------------------------------

    def header(
        self,
        workflow: Workflow,
        focus: list[URIRef],
        *,
        world_digest: str | None,
        snapshot: str | None = None,
    ) -> None:
        """The first event: what runs, on which world (its digest; its N-Quads only when
        ``snapshot`` is given), under which definitions."""
        fields: dict[str, Any] = {}
        if snapshot is not None:
            fields["snapshot"] = {"format": "application/n-quads", "data": snapshot}
        self._emit(
            "header",
            trace_version=self.trace_version,
            workflow=str(workflow.iri),
            focus=[str(f) for f in focus],
            definitions_digest=self.defs.digest,
            world_digest=world_digest,
            store=self.store.name,
            policy=self.policy.to_json(),
            started=self.env.now().isoformat(),
            **({"calls_in_doubt": self.calls_in_doubt} if self.calls_in_doubt else {}),
            **({"approvals_bound": self.approvals_bound} if self.approvals_bound else {}),
            **({"names_shapes": True} if self.names_shapes else {}),
            **({"blocked_at": True} if self.blocked_at else {}),
            **({"holds_settled": self.holds_settled} if self.holds_settled else {}),
            **fields,
        )

    def end(self, *, world_digest: str | None) -> None:
        """The last event: how the run's instances ended, and the world's digest after it."""
        order = ["failed", "blocked", "waiting", "completed"]
        status = next((s for s in order if self.counts.get(s)), "completed")
        self._emit(
            "end",
            status=status,
            instances=dict(sorted(self.counts.items())),
            world_digest=world_digest,
        )
        self.trace.close()

    def finished(self, inst: InstanceRun) -> None:
        self.counts[inst.status] = self.counts.get(inst.status, 0) + 1

    def binding(self, tool: Tool) -> Binding:
        b = self._bindings.get(tool.iri)
        if b is None:
            b = self._bindings[tool.iri] = resolve(tool, self.registry, self.mcp)
        return b

    async def check_before_first_step(
        self, workflow: Workflow, world: World, landing: Collection[Node] = ()
    ) -> None:
        """Refuse, before any step fires, definitions ``validate --world`` refuses beside
        ``world`` (:meth:`~._prechecks.Prechecks.refuse_unrunnable`, ``landing`` the
        properties of facts landing first), then :meth:`check_bindings`."""
        self.prechecks.refuse_unrunnable(world, landing)
        await self.check_bindings(workflow)

    async def check_bindings(self, workflow: Workflow) -> None:
        """Resolve every binding ``workflow`` can reach, and let each refuse (an MCP tool
        whose schema does not fit the declared arguments). Other workflows' tools are not
        this run's concern. A Python function found to fit on an earlier run of the agent is
        not inspected again (:mod:`._prechecks`). A proposal step's model, asked over HTTP,
        is held to the host policy first, as an HTTP binding is."""
        hosts = hosts_of(self.registry)
        for step in self.prechecks.proposals(workflow):
            unasked = refused_model(step, hosts, self.defs.name(step.iri))
            if unasked is not None:
                raise unasked
        for tool in self.prechecks.tools(workflow):
            known = self.prechecks.fitting(tool, self.registry)
            if known is not None:
                self._bindings.setdefault(tool.iri, known)
                continue
            binding = None
            try:
                binding = self.binding(tool)
                await binding.check()
            except ToolError as e:
                # a function that is not there or does not fit, a server nobody declares, a
                # tool the server lacks or whose schema does not fit: said where the binding
                # (or horis:takes) is written, as validate says it (a server that is down is
                # not a line's fault)
                refused = binding.refused_at() if binding is not None else None
                at = (
                    (tool.iri, HORIS.binding, Literal(tool.binding))
                    if refused in (None, HORIS.binding)
                    else (tool.iri, HORIS.takes, None)
                )
                file, line = self.defs.sources.locate_statement(*at)
                address = tool.mcp_address
                declared = (
                    tool.binding.startswith("python:")
                    or (address is not None and address[0] not in self.mcp.servers)
                    or refused is not None
                )
                if declared and file is not None and e.args:
                    e.args = (f"{file}:{line}: {e.args[0]}", *e.args[1:])
                raise
            self.prechecks.fits(binding, self.registry)

    async def aclose(self) -> None:
        for b in self._bindings.values():
            await b.aclose()
        await self.mcp.aclose()

    async def call_tool(
        self,
        tool: Tool,
        args: Mapping[str, Node],
        intent: URIRef | None = None,
        keyed: Sequence[tuple] = (),
        answer: Callable[[StepRecord], list[tuple]] | None = None,
    ) -> StepRecord:
        """One invocation of ``tool`` outside any workflow: the catalog's guarded call.

        It takes an ActionStep's path, a one-off ``urn:horismos:call:ID`` standing for step and
        instance: the same argument types, tool preconditions, binding, gate, one committed
        effect graph and one ``step`` event (kind ``ToolCall``). Nothing lands unless it
        completes; no instance state is written. A tool that is not idempotent announces its
        call at ``intent`` first (see _intents); the call's commit removes it, unless the
        outcome is unknown: then it stays, and the next call there is refused.

        ``keyed``: the record of the call's idempotency key (see _idempotency), landing with
        its intent, else with its effects, in a commit that requires it absent; ``answer``:
        what to record there of what the call answered, with its final commit (none for a
        call left in doubt, nor for one never made). The key of a call never made (blocked),
        or of an idempotent tool's call that got no answer (never sent, timed out), is not
        recorded: a retry with it calls again.
        """
        call = URIRef(f"urn:horismos:call:{self.env.new_id()}")
        if intent is not None and not tool.idempotent:
            self._state[call], self._intent_at[call] = [], intent
            if keyed:
                self._keyed[call] = list(keyed)
        try:
            rec, _ = await self._action(
                InstanceRun(call, call, call), ActionStep(call, tool=tool), dict(args)
            )
        finally:
            announced = self._state.pop(call, [])
            self._intent_at.pop(call, None)
            self._keyed.pop(call, None)
        rec.kind = "ToolCall"
        pending = self._pending.pop(call, None) or []
        dropped = self._dropped.pop(call, [])
        in_doubt = self.left_in_doubt(rec, tool)
        if not in_doubt:
            dropped = [*dropped, *announced]  # else it may have acted: the intent stays
        elif intent is not None:  # in doubt now, no longer being made
            dropped = [*dropped, calling(intent)]
        # an approval given on the command line is used once, and a key names one call
        used = tuple(q for q in pending if q[1] == HORIS.usedUp)
        if keyed and used and tool.idempotent:
            # its approvals' use names its key: should it get no answer, its retry with the
            # key may use them again (see _call), the key being left free below
            pending = [*pending, *given_keyed(used, keyed[0][0])]
        # an idempotent tool's call that got no answer (never sent, timed out) is made again
        # by a retry with its key, safely: recorded, the key answered "timed_out" for ever
        lost = tool.idempotent and getattr(rec.error, "unanswered", False)
        if keyed and rec.status != "blocked" and not lost:  # blocked: never made, key free
            if not announced:  # a tool that announced no intent: the key lands now
                pending, used = [*pending, *keyed], (*used, keyed[0])
            if answer is not None and not (in_doubt and announced):
                pending = [*pending, *answer(rec)]
        elif keyed and announced:
            dropped = [*dropped, *keyed]
        if pending or dropped:
            self.world.commit(Change(add=pending, remove=dropped, absent=used))
        self._emit_step(rec)
        return rec

    async def run_instance(self, workflow: Workflow, focus: URIRef) -> InstanceRun:
        """Start an instance of ``workflow`` on ``focus`` and drive it.

        The instance is not committed on its own: its type, workflow and focus land with its
        first commit (the first step's, or the intent a non-idempotent first tool announces),
        which then expects nothing, its IRI being fresh. That saves a commit an instance (an
        update request on ``sparql:URL``). Until then it exists in no store: a process that
        stops before leaves the world as it was, and a rerun starts the instance anew.
        """
        iid = URIRef(f"urn:horismos:instance:{self.env.new_id()}")
        inst = InstanceRun(iid, workflow.iri, focus, "completed", workflow.start)
        self._fresh[iid] = [
            (iid, _TYPE, HORIS.Instance, INSTANCES),
            (iid, HORIS.workflow, workflow.iri, INSTANCES),
            (iid, HORIS.focus, focus, INSTANCES),
            short_id_quad(iid),
        ]
        self._emit("instance", instance=str(iid), workflow=str(workflow.iri), focus=str(focus))
        inst.variables["this"] = focus
        return await self.drive(inst, workflow.start, 0)

    async def resume_instance(self, waiting: Waiting) -> InstanceRun:
        """Land the facts answering a waiting instance and move it on from its wait; or go on
        with an instance whose process died mid-run, from its stored step."""
        inst = waiting.instance_run()
        self._state_quads(inst, waiting.stored.status, waiting.version, inst.current)
        self._recovered.add(inst.instance)
        self._emit("resume", **waiting.land(self))
        return await self.drive(inst, inst.current, waiting.version)

    async def continue_instance(self, stored: StoredInstance) -> InstanceRun:
        """Drive an instance on from its stored step and version: a running one another
        process left (it died, or its worker's lease ran out), or a blocked one a rerun
        tries again."""
        inst = InstanceRun(
            stored.instance,
            stored.workflow,
            stored.focus,
            "completed",
            stored.current,
            variables=dict(stored.variables),
        )
        self._state_quads(
            inst,
            stored.status,
            stored.version,
            stored.current,  # to replace
            stored.blocked_by,
            stored.error,
            stored.blocked_at,
        )
        self._recovered.add(inst.instance)
        # the state it went on from, so a replay goes on from the same place
        extra = {
            k: v
            for k, v in (
                ("status", stored.status),
                ("blocked_by", stored.blocked_by),
                ("blocked_at", str(stored.blocked_at) if stored.blocked_at else None),
            )
            if v is not None and v != "running"
        }
        self._emit(
            "instance",
            instance=str(inst.instance),
            workflow=str(inst.workflow),
            focus=str(inst.focus),
            continued_at=stored.version,
            step=str(stored.current) if stored.current else None,
            variables={k: text(v) for k, v in sorted(stored.variables.items())},
            **extra,
        )
        return await self.drive(inst, stored.current, stored.version)

    async def drive(self, inst: InstanceRun, current: URIRef | None, version: int) -> InstanceRun:
        """Move ``inst`` on; a commit another writer beat lands nothing (:class:`Conflict`).

        Then the instance is read back: still running at the step that lost, that step runs
        again, its preconditions re-checked against the world as it now is (three tries);
        moved on by the other writer, this process stops driving it and the Conflict is raised.
        """
        try:
            for _ in range(3):
                try:
                    await self._drive(inst, current, version)
                    self.finished(inst)
                    return inst
                except Conflict as e:
                    conflict = e
                    current, version = self._after_conflict(inst, e)
            raise conflict
        finally:
            self._pending.pop(inst.instance, None)
            self._dropped.pop(inst.instance, None)
            self._state.pop(inst.instance, None)
            self._fresh.pop(inst.instance, None)
            self._recovered.discard(inst.instance)

    def _after_conflict(self, inst: InstanceRun, e: Conflict) -> tuple[URIRef | None, int]:
        """Where to go on after a commit another writer beat: the step that lost, again."""
        # the step that lost: its record if it got one (a landed record has its "trace"
        # timing), else the one its intent was being announced for
        landed = not inst.steps or "trace" in inst.steps[-1].timings
        tried = inst.current if landed else inst.steps.pop().step
        self._pending.pop(inst.instance, None)
        self._dropped.pop(inst.instance, None)
        # what was handed to the step that lost stays noted: it goes into the next event,
        # so a replay hands out the same values in the same order
        stored = read_instance(self.store, inst.instance)
        if stored is None or stored.status != "running" or stored.current != tried:
            where = (
                f"{stored.status} at {stored.current}, version {stored.version}"
                if stored
                else "gone"
            )
            raise Conflict(
                f"instance {inst.instance} was moved on by another writer "
                f"(now {where}); this process stopped driving it",
                expected=e.expected,
            ) from None
        inst.variables.clear()
        inst.variables.update(stored.variables)
        inst.current = stored.current
        self._state_quads(inst, "running", stored.version, stored.current)
        self._recovered.add(inst.instance)
        return stored.current, stored.version

    async def _drive(self, inst: InstanceRun, current: URIRef | None, version: int) -> InstanceRun:
        """Move ``inst`` from ``current`` until it completes, blocks, fails or waits."""
        variables = inst.variables
        visits: dict[URIRef, int] = {}  # step -> steps that had acted when it was last entered
        acted = 0
        budget = self.defs.workflows[inst.workflow].max_steps  # the version counts its steps
        task = asyncio.current_task()
        while current is not None:
            if task is not None and task.cancelling():
                # Ctrl-C (or a caller) asked the run to stop: a cancellation reaches a task
                # only where it waits, and steps whose tools are inline never wait, so a
                # `run --all` of them went on calling tools to its end (20,000 instances,
                # 48 s after the Ctrl-C). Stopped here, between two steps: nothing half-done
                raise asyncio.CancelledError
            step = self.defs.steps[current]
            version += 1
            stopped = True  # by the run, not by the step: it says so when the instance fails
            if version > budget:
                record, nxt = self._over_budget(inst, step, budget), None
            elif visits.get(current) == acted:
                record, nxt = self._livelock(inst, step), None
            else:
                visits[current], stopped = acted, False
                try:
                    record, nxt = await self._step(inst, step, variables)
                except QueryRefused as e:  # a pattern validate could not judge: the step fails
                    record, nxt = self._refused(inst, step, e), step.on_error
            if record.status == "completed" and record.kind != "DecisionStep":
                acted += 1
            inst.steps.append(record)
            if record.status == "waiting":
                inst.status, inst.current, inst.brief = "waiting", current, record.brief
                self._finish_step(inst, record, version, "waiting", current)
                return inst
            if record.status == "blocked":
                inst.status, inst.blocked_by, inst.current = "blocked", record.blocked_by, current
                inst.error = record.error  # a typed reason (PolicyRefused), if not a pattern
                self._finish_step(inst, record, version, "blocked", current)
                return inst
            if record.error is not None and nxt is None:
                failure = InstanceFailed(
                    self._failed_at(inst, step.iri, record.error, stopped),
                    cause=record.error,
                    step=str(step.iri),
                    tool=str(record.tool) if record.tool else None,
                )
                inst.status, inst.error, inst.current = "failed", failure, current
                self._finish_step(inst, record, version, "failed", current)
                return inst
            inst.current = nxt
            self._finish_step(inst, record, version, "running" if nxt else "completed", nxt)
            current = nxt
        inst.status = "completed"
        return inst

    def _failed_at(self, inst: InstanceRun, at: URIRef, error: RunError, stopped: bool) -> str:
        """Why the instance failed at ``at``, whose record is the last of ``inst.steps``. A
        step that failed with nowhere to go declares no horis:onError; one the run
        ``stopped`` (a loop that would never end, the step budget) did not fail itself, and
        may declare one — entered by a failed step's horis:onError (its own, say), that is
        what the instance failed of."""
        name = self.defs.name
        if not stopped:
            return f"{name(at)} failed and declares no horis:onError: {error}"
        before = inst.steps[-2] if len(inst.steps) > 1 else None
        if (
            before is not None
            and before.error is not None
            and before.next == at == self.defs.steps[before.step].on_error
        ):
            return (
                f"{name(before.step)} failed and its horis:onError went to {name(at)}, where "
                f"the run stopped the instance: {error}"
            )
        return f"the run stopped the instance at {name(at)}: {error}"

    # -- steps ----------------------------------------------------------------------------

    def _livelock(self, inst: InstanceRun, step: Step) -> StepRecord:
        """A loop back to a step with nothing done since its last visit would never end."""
        err = RunError(
            f"the instance came back to {self.defs.name(step.iri)} and no step has acted since "
            "it was last here, so it would loop forever; make the loop's horis:requires depend "
            "on something a step in the loop writes, or end the loop",
            step=str(step.iri),
        )
        return _failed(inst, step, err)

    def _refused(self, inst: InstanceRun, step: Step, e: QueryRefused) -> StepRecord:
        """The store's query engine refused one of the step's queries: a mistake in the
        definitions, not in the world, so the step fails (to its horis:onError) with the
        engine's reason rather than a traceback ending the run and every other instance."""
        err = RunError(
            f"{e}; `horismos validate` names the pattern and how to fix it",
            step=str(step.iri),
        )
        return _failed(inst, step, err)

    def _over_budget(self, inst: InstanceRun, step: Step, budget: int) -> StepRecord:
        """The instance ran the steps its workflow allows: the loop it is in is named."""
        ran = [r.step for r in inst.steps]
        back = next((i for i in range(len(ran) - 1, -1, -1) if ran[i] == step.iri), None)
        # what it went round in this process; resumed just now, the flow's loop through here
        cycle = (
            [*ran[back:], step.iri]
            if back is not None
            else cycle_through(self.defs.steps, step.iri)
        )
        shown = " → ".join(self.defs.name(s) for s in cycle)
        why = (
            f"going round {shown}; a loop ends when its horis:requires stops holding — make it "
            "depend on something a step in the loop writes, or raise horis:maxSteps if the "
            "work needs more steps"
            if len(cycle) > 1
            else "on no loop: the workflow takes more steps than that to its end — raise "
            "horis:maxSteps"
        )
        err = StepBudgetExceeded(
            f"the instance ran the {budget} steps its workflow allows (horis:maxSteps of "
            f"{self.defs.name(inst.workflow)}) and is stopped at {self.defs.name(step.iri)}, "
            + why,
            cycle=[str(s) for s in cycle],
            max_steps=budget,
            step=str(step.iri),
        )
        return _failed(inst, step, err)

    def _step(
        self,
        inst: InstanceRun,
        step: Step,
        variables: dict[str, Node],
    ) -> Awaitable[tuple[StepRecord, URIRef | None]]:
        """Run ``step``: its record and where the instance goes next. An action step is
        awaited as its own coroutine, not through one more layer around it (every step)."""
        if isinstance(step, ActionStep):
            return self._action(inst, step, variables)
        return self._other_step(inst, step, variables)

    async def _other_step(
        self,
        inst: InstanceRun,
        step: Step,
        variables: dict[str, Node],
    ) -> tuple[StepRecord, URIRef | None]:
        """A decision, proposal or wait step (:meth:`_step`)."""
        if isinstance(step, DecisionStep):
            return self._decision(inst, step, variables)
        if isinstance(step, ProposalStep):
            rec, nxt, quads = await propose(self, inst, step, variables)
        else:
            assert isinstance(step, WaitStep)
            rec, nxt, quads = wait_step(self, inst, step, variables)
        self._pending[inst.instance] = quads
        return rec, nxt

    def _decision(
        self,
        inst: InstanceRun,
        step: DecisionStep,
        variables: dict[str, Node],
    ) -> tuple[StepRecord, URIRef | None]:
        t0 = time.perf_counter()
        chosen = step.otherwise
        rule_index = None
        # the later rules' solutions come with the first's, in one request where that saves some
        ahead = ReadAhead(also=tuple(r.requires for r in step.rules[1:]))
        for i, rule in enumerate(step.rules):
            if self.store.solutions(
                rule.requires, variables, ahead if i == 0 and ahead.also else None
            ):
                chosen, rule_index = rule.next, i
                break
        rec = StepRecord(
            step.iri,
            "DecisionStep",
            "completed",
            inst.instance,
            next=chosen,
            timings={"precondition": time.perf_counter() - t0},
        )
        rec.result = [{"rule": rule_index}]
        return rec, chosen

    async def _action(
        self,
        inst: InstanceRun,
        step: ActionStep,
        variables: dict[str, Node],
    ) -> tuple[StepRecord, URIRef | None]:
        tool = step.tool
        assert tool is not None
        rec = StepRecord(step.iri, "ActionStep", "completed", inst.instance, tool=tool.iri)
        timings = rec.timings
        started = rec.started = self.env.now()
        t0 = time.perf_counter()
        # 0. a call announced and never settled: the process stopped mid-call (see _intents)
        # Only an instance read back from the store can hold one; look once, not every step.
        stale = None
        if inst.instance in self._recovered:
            self._recovered.discard(inst.instance)
            stale = open_intent(self.store, inst.instance)
        if stale is not None:
            self._state[inst.instance].extend(stale.quads)  # this step's commit removes it
            called = self.defs.tools.get(stale.tool)
            doubted = bool(self.calls_in_doubt) and called is not None and not called.idempotent
            if called is not None and doubted:
                # in doubt for every lane, not only this instance (announced at another step
                # too: the definitions changed since, and the call may have acted)
                self._pending.setdefault(inst.instance, []).extend(
                    doubt_marks(inst.instance, stale.step, called, stale.started, stale.args)
                )
                # what it held there becomes part of that: replaced, not counted again
                self._state[inst.instance].extend(self._still_held(inst.instance, called, stale))
            if stale.step == step.iri and not tool.idempotent:
                rec.status = "failed"  # named as what was called, held where it was
                rec.error = stale.unknown(
                    called or tool, self.defs.name(step.iri), self.defs.name, doubted
                )
                return rec, step.on_error
        # 1. preconditions: the step's, then the tool's own
        if step.requires is not None:
            solutions = self.store.solutions(step.requires, variables, self._ahead(step, tool))
            if not solutions:
                rec.status = "blocked"
                rec.blocked_by = self.store.failing(step.requires, variables)
                timings["precondition"] = time.perf_counter() - t0
                return rec, None
        else:
            solutions = [dict(variables)]
        t1 = time.perf_counter()
        timings["precondition"] = t1 - t0
        try:
            calls = self._arguments(step, tool, solutions)
            timings["arguments"] = time.perf_counter() - t1
            tool_blocks = self._tool_refuses(tool, calls)
            if tool_blocks is not None:
                rec.status, rec.blocked_by = "blocked", tool_blocks
                return rec, None
            rec.args = [{k: _n3(v) for k, v in a.items()} for a in calls]
            order = self.env.call_order(rec.args) if len(calls) > 1 else None
            if order is not None:
                calls, rec.args = [calls[i] for i in order], [rec.args[i] for i in order]
            # the policy in force, then an approval of each exact payload (see _policy)
            refused = refusal(self.policy, tool)
            # the step's start as a literal, built from its value (parsing text cost ~15 µs)
            began = self._stamp(started)
            prints, waiting, used = pending(
                self.policy,
                self.store,
                inst.instance,
                step,
                tool,
                calls,
                began,
                self.approvals_bound,
                self.mcp.servers,
            )
            rec.detail["policy"] = {
                **self._policy_of(tool),
                "approvals": prints if tool.requires_approval else None,
            }
            if refused is not None:
                refused.step = str(step.iri)
                rec.status, rec.error, rec.blocked_by = "blocked", refused, str(refused)
                return rec, None
            if tool.adapter is not None:  # refused before the tool is asked, let alone sent
                check_scopes(tool, step)
            if waiting is not None:
                return self._await_approval(inst, rec, waiting, started), None
            # an intent guards a real call (a replay commits it too, to the same effect:
            # the commits a replay makes are the recorded run's, in the same order)
            # the approvals this call takes are used up whatever comes of the call: a person
            # approved one call, not every pass of a loop. A call that is not idempotent uses
            # them up with its intent, before it is sent: a process that dies mid-call leaves
            # them used, so the loop back after its call in doubt is cleared asks again
            if not tool.idempotent and (
                inst.instance in self._state or inst.instance in self._fresh
            ):
                try:
                    holding = self._announce(inst, step, tool, began, rec.args, used)
                except Conflict as e:
                    if not e.present or inst.instance in self._intent_at:
                        raise  # the instance moved on elsewhere; a catalog call says why
                    return self._held_elsewhere(rec, step, tool, cast(URIRef, e.present[0][0]))
                if holding and self.holds_settled:  # it landed just now: settled from here
                    ahead = await self._contested(inst, holding, time.monotonic())
                    if ahead is not None:  # it yields, never called: its approvals are back
                        self._dropped.setdefault(inst.instance, []).extend(used)
                        node, by = ahead
                        return self._in_flight(rec, step, tool, node, by)
                    gone = (
                        self._gone_since_read(step, tool, variables, calls)
                        if self.holds_settled > 3
                        else None
                    )
                    if gone is not None:  # another process made the call meanwhile
                        self._dropped.setdefault(inst.instance, []).extend(used)
                        rec.status, rec.blocked_by = "blocked", gone
                        return rec, None
            elif used:  # with the step's commit
                self._pending.setdefault(inst.instance, []).extend(used)
            if tool.adapter is not None:
                return await self._adapter_action(inst, rec, step, tool, calls, started)
            effects, fixed_now = await self._invoke_and_gate(rec, step, tool, calls, began)
        except RunError as e:
            if (
                not tool.idempotent
                and self.calls_in_doubt
                and inst.instance not in self._intent_at  # a catalog call keeps its own
            ):  # what may have acted: in doubt for every lane until someone reconciles it
                acted = self._acted(rec, e, tool)
                if acted:
                    self._pending.setdefault(inst.instance, []).extend(
                        doubt_marks(inst.instance, step.iri, tool, began, acted)
                    )
                running = e.running if isinstance(e, OutcomeUnknown) else None
                if acted and running is not None:  # abandoned at its timeout, acting still:
                    # reconcile leaves it be until its thread returns, as for a call's: here,
                    # and on a shared world elsewhere too (its subject held meanwhile)
                    key = doubt_key(tool, acted[-1])
                    held = (  # on a thread: it may wait up to a lease for another holder
                        await asyncio.to_thread(self.keep_subject, key)
                        if self.keep_subject is not None and isinstance(key, URIRef)
                        else None
                    )
                    outlast(running, doubt_node(tool.iri, key), held)
            if isinstance(e, ToolTimeout) or isinstance(getattr(e, "cause", None), ToolTimeout):
                rec.status = "timed_out"
            elif isinstance(e, GateRejected):
                rec.status, rec.messages = "rejected", e.messages
            else:
                rec.status = "failed"
            rec.error = e
            return rec, step.on_error
        t4 = time.perf_counter()
        graph = URIRef(f"urn:horismos:effect:{self.env.new_id()}")
        rec.effects, rec.graph = effects, graph
        self._pending.setdefault(inst.instance, []).extend(
            self._effect_quads(inst, step, tool, graph, effects, started, fixed_now)
        )
        timings["commit"] = time.perf_counter() - t4  # completed in _finish_step
        return rec, step.next

    async def _adapter_action(
        self,
        inst: InstanceRun,
        rec: StepRecord,
        step: ActionStep,
        tool: Tool,
        calls: list[dict[str, Node]],
        started: dt.datetime,
    ) -> tuple[StepRecord, URIRef | None]:
        """An adapter-bound tool: each call decides, its decision is committed to the system of
        record, and only what it accepted lands (see _adapter_step)."""
        graph = URIRef(f"urn:horismos:effect:{self.env.new_id()}")
        activity = URIRef(str(graph).replace("urn:horismos:effect:", "urn:horismos:activity:"))
        commit = AdapterCommit(self, tool, step, hosts_of(self.registry), activity)
        for i, args in enumerate(calls):
            py_args = commit.arguments(
                {a.name: _python(args[a.name]) for a in tool.args if a.sent and a.name in args}
            )
            try:
                decided = await self._call(rec, step, tool, py_args)
            except RunError as e:
                if len(calls) == 1:
                    raise
                commit.outcome.errors.append(e)
                continue
            rec.result.append(decided)
            t0 = time.perf_counter()
            await commit.commit(decided, i)
            rec.timings["remote"] = rec.timings.get("remote", 0.0) + time.perf_counter() - t0
        outcome = commit.outcome
        rec.receipts = [r.to_json() for r in outcome.receipts]
        error = outcome.error(tool, step)
        if outcome.add:
            rec.effects = [(s, p, o) for s, p, o, _ in outcome.add]
            rec.graph = graph
            meta = self._effect_quads(
                inst,
                step,
                tool,
                graph,
                [],
                started,
                self._stamp(started),
            )
            meta = [
                (s, p, HORIS.AdapterProvenance if p == HORIS.provenance else o, g)
                for s, p, o, g in meta
            ]
            self._pending.setdefault(inst.instance, []).extend([*outcome.add, *meta])
            self._dropped.setdefault(inst.instance, []).extend(outcome.remove)
        if error is None:
            return rec, step.next
        rec.error = error
        if outcome.accepted:
            rec.status = "partial"
            return rec, step.on_partial or step.on_error
        rec.status = "timed_out" if isinstance(error, OutcomeUnknown) else "failed"
        return rec, step.on_error

    def now(self) -> dt.datetime:
        """The run's clock (an adapter step's receipts are timed by it)."""
        return self.env.now()

    def judge_resource(self, subject: Node, triples: list[tuple[Node, Node, Node]]) -> Verdict:
        """An adapter step's decided resource against the domain shapes, before it is sent."""
        return self.gate.domain(subject, triples, (), self._types_of, world=self.store)

    async def remote(self, send: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
        return await self.env.remote(send)

    def _await_approval(
        self, inst: InstanceRun, rec: StepRecord, waiting: Pending, started: dt.datetime
    ) -> StepRecord:
        """Stop the instance at this step until a person approves each exact payload."""
        graph = URIRef(f"urn:horismos:approval:{self.env.new_id()}")
        brief = waiting.brief(self.defs.name, inst.instance, inst.workflow, inst.focus)
        rec.status, rec.brief, rec.graph = "waiting", brief, graph
        rec.detail["approval"] = {
            "payloads": [p for p, _ in waiting.calls],
            "fingerprints": [f for _, f in waiting.calls],
        }
        self._pending[inst.instance] = waiting.quads(
            graph, inst.instance, self._stamp(started), brief
        )
        return rec

    def _announce(
        self,
        inst: InstanceRun,
        step: ActionStep,
        tool: Tool,
        started: Literal,
        args: list[dict[str, Any]],
        spent: Sequence[tuple] = (),
    ) -> list[URIRef]:
        """Commit the intent to call a non-idempotent tool before calling it (see _intents);
        the doubt nodes the step holds meanwhile. ``spent``: the quads using up the approvals
        the call takes, in the same commit (they stay: the step's commit removes the intent).

        At a new instance's first step the intent creates the instance too, running at this
        step at version 0, as a commit of its own would have left it; nothing to expect."""
        at = self._intent_at.get(inst.instance)
        quads = list(announce(inst.instance, step.iri, tool.iri, started, args, at).quads)
        settling: list[URIRef] = []  # the doubt nodes whose hold settles (settling_at)
        if at is not None:  # a catalog call's intent is at its doubt node: nobody else's there
            quads.append(calling(at))
            absent: tuple[tuple, ...] = (held(at),)
            keyed = self._keyed.get(inst.instance)
            if keyed:  # its idempotency key lands with it, one call a key
                spent, absent = [*spent, *keyed], (*absent, keyed[0])
            if self.holds_settled > 2 and tool.iri in self.defs.tools_off_focus:
                # a step on a node not its focus may hold it too, and reads back: so does this
                settling.append(at)
        elif self.calls_in_doubt:  # a step's call holds the doubt node it acts on meanwhile
            holding = holds(inst.instance, tool, args)
            quads += holding
            absent = tuple(q for q in holding if _IS_TYPE(q[1]))  # held(node) of each node
            if self.holds_settled:  # on a node its focus's claim does not keep others off
                shared = (self.holds_settled > 1 and tool.iri in self.defs.tools_in_several) or (
                    self.holds_settled > 2 and tool.iri in self.defs.tools_off_focus
                )
                settling = [
                    doubt_node(tool.iri, key)
                    for key in dict.fromkeys(doubt_key(tool, a) for a in args)
                    if key != inst.focus or shared
                ]
        else:
            absent = ()
        quads += [settling_at(node, inst.instance) for node in settling]
        if spent:  # an approval given on the command line is used once: its use, absent too
            absent += tuple(q for q in spent if q[1] == HORIS.usedUp)
        created = self._fresh.get(inst.instance)
        if created is not None:
            state = self._state_quads(inst, "running", 0, step.iri)
            try:
                self.world.commit(Change(add=[*created, *state, *quads, *spent], absent=absent))
            except Conflict:
                del self._state[inst.instance]  # not created: the step's commit creates it
                raise
            del self._fresh[inst.instance]
        else:
            state = self._state[inst.instance]
            self.world.commit(Change(add=[*quads, *spent], expect=_guard(state), absent=absent))
        state.extend(quads)  # the step's final commit removes them
        return settling

    async def _contested(
        self, inst: InstanceRun, nodes: list[URIRef], landed: float
    ) -> tuple[URIRef, URIRef] | None:
        """Another holder this step yields to at one of ``nodes``, once every hold that raced
        with its own has landed; None when it holds them alone or goes first.

        A shared SPARQL store judges an update's ``FILTER NOT EXISTS`` on a snapshot: two
        steps holding one doubt node at once both landed, and both called a tool that is not
        idempotent. A step on its instance's focus is kept off by the focus's claim; one on
        another node (``nodes``, marked :func:`settling_at`) settles, then reads who holds it:
        it yields to any holder that did not mark (a step on its own focus, a catalog call,
        which do not read back), and of those that did the least goes first, as all of them
        read the same — once it has marked that it calls and seen no other's mark
        (:func:`._intents.yields_to`). A hold landing later sees these in its snapshot and is
        refused as before. What the step loses it gives up, leaving the mark the winner wrote
        too; the step is then blocked, to be tried again."""
        read = self.settled_holders

        async def settled() -> list[list[list[str]]]:
            return await read(nodes, landed, inst.instance) if read is not None else []

        me = str(inst.instance)
        lost: list[tuple[URIRef, URIRef]] = []
        shared: set[tuple] = set()  # the marks others wrote too: theirs, kept
        for node, holders in zip(nodes, await self.env.held_by(settled), strict=False):
            if any(by != me for by, _ in holders):
                shared.add(held(node))
            first = yields_to(holders, me)
            if first is not None:
                lost.append((node, URIRef(first)))
        if not lost:
            return None
        self._state[inst.instance] = [q for q in self._state[inst.instance] if q not in shared]
        return lost[0]

    def _gone_since_read(
        self,
        step: ActionStep,
        tool: Tool,
        variables: dict[str, Node],
        calls: list[dict[str, Node]],
    ) -> str | None:
        """Why the step no longer makes ``calls``, read again once its hold has settled (what
        it is blocked by); None when its precondition and the tool's still give each of them.

        On a world other processes share, the step read its precondition before its hold
        landed. Meanwhile another process's step may have held the node, called and let go:
        the hold then landed on a node nobody held, read no other holder, and the call was
        made a second time on what was read before (a patient charged twice, as rounds of
        two processes drifted apart on a loaded machine). Read now, the precondition sees
        that call's effect, which landed with the release this hold came after; a hold that
        landed first is the other step's to see (:meth:`_contested`)."""
        if step.requires is not None:
            solutions = self.store.solutions(step.requires, variables)
            if not solutions:
                return self.store.failing(step.requires, variables)
            for args in calls:
                if not any(
                    all(sol.get(step.var_for(k)) == v for k, v in args.items()) for sol in solutions
                ):
                    given = ", ".join(f"{k}={self.defs.name(v)}" for k, v in args.items())
                    return (
                        f"the precondition of {self.defs.name(step.iri)} no longer gives the "
                        f"call of {tool.name} with {given}: the world changed after it was "
                        "read (another process acted there)"
                    )
        return self._tool_refuses(tool, calls)

    def _tool_refuses(self, tool: Tool, calls: list[dict[str, Node]]) -> str | None:
        """What part of the tool's own ``horis:requires`` fails for one of ``calls`` (what
        the step is blocked by); None when it holds for each, or the tool has none."""
        if tool.requires is not None:
            for args in calls:
                pre_vars = {k: v for k, v in args.items() if isinstance(v, Node)}
                if not self.store.solutions(tool.requires, pre_vars):
                    return self.store.failing(tool.requires, pre_vars)
        return None

    def left_in_doubt(self, rec: StepRecord, tool: Tool) -> bool:
        """Whether a call of ``tool`` (a catalog call's record) may have acted and nothing of
        it landed: its intent then stays, in doubt."""
        return rec.status != "completed" and bool(self._acted(rec, rec.error, tool))

    def _acted(self, rec: StepRecord, error: BaseException | None, tool: Tool) -> list[Any]:
        """The arguments of the calls of a failed step that may have acted: those that
        answered (their results never landed), and the one that failed if it was sent and
        never answered, or answered and was refused (too large; a command killed at its
        quota). An adapter-bound tool's answers are decisions, not acts: only its commits
        act, and an unknown one is an OutcomeUnknown."""
        unknown = isinstance(error, OutcomeUnknown)
        if self.calls_in_doubt < 2 or tool.adapter is not None:  # every call, if unanswered
            return rec.args if unknown else []
        last = unknown or getattr(error, "may_have_acted", False)
        return rec.args[: len(rec.result) + last]

    def _still_held(self, instance: URIRef, tool: Tool, stale: Intent) -> list[tuple]:
        """What ``instance``'s step holds for the call its process stopped in, as stored (an
        intent announced before steps held their nodes holds none)."""
        quads = holds(instance, tool, json.loads(stale.args))
        return [q for q in quads if holder(self.store, cast(URIRef, q[0])) == instance]

    def _held_elsewhere(
        self, rec: StepRecord, step: ActionStep, tool: Tool, node: URIRef
    ) -> tuple[StepRecord, URIRef | None]:
        """A step whose call another holds: in doubt there (it fails, taking horis:onError),
        or being made by another instance's step (it is blocked, and tried again later)."""
        key = key_at(tool, node, rec.args)
        earlier = read_intent(self.store, node)
        if earlier is not None and not earlier.in_flight:
            rec.status, rec.error = "failed", self._doubted(step, tool, key, earlier)
            return rec, step.on_error
        by = earlier.instance if earlier is not None else holder(self.store, node) or node
        return self._in_flight(rec, step, tool, node, by)

    def _in_flight(
        self, rec: StepRecord, step: ActionStep, tool: Tool, node: URIRef, by: URIRef
    ) -> tuple[StepRecord, URIRef | None]:
        """The step is blocked while ``by`` calls ``tool`` at ``node``: tried again later."""
        key = key_at(tool, node, rec.args)
        rec.error = CallInFlight(
            in_flight_message(tool, key, self.defs.name, by),
            holder=str(by),
            step=str(step.iri),
            tool=str(tool.iri),
        )
        rec.status, rec.blocked_by = "blocked", str(rec.error)
        return rec, None

    def _doubted(self, step: ActionStep, tool: Tool, key: Node, earlier: Intent) -> RunError:
        """Why a step does not call a tool an earlier call left in doubt on the same subject."""
        return OutcomeUnknown(
            doubt_message(tool, key, self.defs.name, earlier)
            + " (horis:onError is where the workflow goes on from)",
            step=str(step.iri),
            tool=str(tool.iri),
        )

    def _policy_of(self, tool: Tool) -> dict[str, Any]:
        """What a step event says of the policy and the tool's side effect: the same for
        every call of the tool in this run, so built once (a sort and a name a step)."""
        known = self._policies.get(tool.iri)
        if known is None:
            known = self._policies[tool.iri] = {
                **self.policy.to_json(),
                "side_effect": side_effect(tool),
            }
        return known

    def _ahead(self, step: ActionStep, tool: Tool) -> ReadAhead:
        """What the step reads right after its precondition: its class-typed arguments' types
        (typing) and its effect subject's triples and types (the gate), fetched with the
        solutions by a store that pays per request."""
        ahead = self._aheads.get(step.iri)
        if ahead is None:
            subject = [step.var_for(tool.effect.subject)] if tool.effect else []
            ahead = self._aheads[step.iri] = ReadAhead(
                types=frozenset(
                    [*(step.var_for(a.name) for a in tool.args if a.is_class), *subject]
                ),
                outgoing=frozenset(subject),
                predicates=self.gate.first_reads(tool) if subject else None,
            )
        return ahead

    def _arguments(
        self,
        step: ActionStep,
        tool: Tool,
        solutions: list[dict[str, Node]],
    ) -> list[dict[str, Node]]:
        calls: list[dict[str, Node]] = []
        seen: set[tuple] = set()
        # two solutions that differ only in what the tool is not sent (a horis:sent false
        # argument its own precondition reads) are one call: the same payload on the same
        # subject, which a tool that is not idempotent would carry out twice
        acting: set[str] = set()
        if len(solutions) > 1:
            subject = tool.effect.subject if tool.effect else None
            acting = {a.name for a in tool.args if a.sent or a.name == subject}
        for sol in solutions:
            args: dict[str, Node] = {}
            for arg in tool.args:
                value = sol.get(step.var_for(arg.name))
                if value is None:
                    if arg.optional:
                        continue
                    raise PreconditionError(
                        f'argument "{arg.name}" of {tool.name} is not bound: the step\'s '
                        f"patterns give no ?{step.var_for(arg.name)}",
                        step=str(step.iri),
                        tool=str(tool.iri),
                    )
                args[arg.name] = value
            if len(solutions) > 1:  # one solution is one call: nothing to tell apart
                key = tuple(sorted((k, v) for k, v in args.items() if k in acting))
                if key in seen:
                    continue
                seen.add(key)
            calls.append(args)
        if len(calls) > 1 and not step.for_each:
            shown = "; ".join(
                ", ".join(f"{k}={self.defs.name(v)}" for k, v in c.items()) for c in calls[:3]
            )
            raise PreconditionError(
                f"{len(calls)} solutions for the arguments of {tool.name} ({shown}"
                f"{'; …' if len(calls) > 3 else ''}); narrow horis:requires to one, or declare "
                "horis:forEach true to fire once per solution",
                step=str(step.iri),
                tool=str(tool.iri),
            )
        for args in calls:
            for arg in tool.args:  # the order args were bound in: the first misfit is named
                value = args.get(arg.name)
                if value is not None:
                    self._check_type(step, tool, arg, value)
        return calls

    def _check_type(self, step: ActionStep, tool: Tool, arg: Arg, value: Node) -> None:
        name = arg.name
        if arg.is_class:
            ok = isinstance(value, URIRef) and bool(
                self._types_of(value) & self.defs.classes_of(arg.type)
            )
        else:
            ok = isinstance(value, Literal) and _literal_fits(value, arg.type)
        if not ok:  # the type's name is looked up only for the message: it is slow per step
            kind = "a node of class" if arg.is_class else "a literal of datatype"
            what = f"{kind} {self.defs.name(arg.type)}"
            raise ArgumentTypeError(
                f'argument "{name}" of {tool.name} must be {what}; the graph gives {value.n3()}',
                arg=name,
                value=value.n3(),
                expected=str(arg.type),
                step=str(step.iri),
                tool=str(tool.iri),
            )

    async def _invoke_and_gate(
        self,
        rec: StepRecord,
        step: ActionStep,
        tool: Tool,
        calls: list[dict[str, Node]],
        now: Literal,
    ) -> tuple[list[tuple[Node, Node, Node]], Literal]:
        effects: list[tuple[Node, Node, Node]] = []
        subject_arg = tool.effect.subject if tool.effect else None
        for args in calls:
            # horis:sent false: the runtime read it from the graph (the effect's subject, say);
            # the binding never gets it, whatever its kind
            py_args = {
                a.name: _python(args[a.name]) for a in tool.args if a.sent and a.name in args
            }
            t2 = time.perf_counter()
            result = await self._call(rec, step, tool, py_args)
            t3 = time.perf_counter()
            rec.timings["tool"] = rec.timings.get("tool", 0.0) + t3 - t2
            rec.result.append(result)
            if result is not None and type(result) is not dict and not isinstance(result, Mapping):
                raise ToolError(
                    f"{tool.name} returned {type(result).__name__}; a tool returns a mapping "
                    "from declared property to value, or None",
                    step=str(step.iri),
                    tool=str(tool.iri),
                )
            subject = args[subject_arg] if subject_arg else None
            if subject is None:
                if result:
                    raise GateRejected(
                        f"{tool.name} declares no horis:effect but returned a result",
                        messages=(),
                        step=str(step.iri),
                        tool=str(tool.iri),
                    )
                continue
            result, malformed = well_formed(
                tool, result, subject, self.defs.name, self.gate.declared_types(tool)
            )
            if malformed:  # bytes, NUL, NaN as a decimal, a set in a value: never a literal
                raise GateRejected(
                    f"the result of {tool.name} holds values RDF cannot carry: "
                    + "; ".join(str(m) for m in malformed),
                    messages=malformed,
                    step=str(step.iri),
                    tool=str(tool.iri),
                )
            returned = self.gate.triples(tool, subject, result)
            unfit = unfit_terms(returned)  # no store could hold them: this step's rejection
            if unfit:
                raise GateRejected(
                    f"the result of {tool.name} cannot be written: "
                    + "; ".join(str(m) for m in unfit),
                    messages=unfit,
                    step=str(step.iri),
                    tool=str(tool.iri),
                )
            fixed = self.gate.fixed(tool, subject, now)
            # with horis:forEach, earlier calls' effects on this node are part of its after-view
            before = [
                *self._judged(tool, subject, [*returned, *fixed, *effects]),
                *(t for t in effects if t[0] == subject),
            ]
            verdict = self.gate.judge(
                tool, subject, returned, fixed, before, self._types_of, self.store
            )
            rec.timings["gate"] = rec.timings.get("gate", 0.0) + time.perf_counter() - t3
            if not verdict.conforms:
                shapes = verdict.against == "shapes" and self.names_shapes
                broke = "the domain shapes" if shapes else "its declared effect"
                raise GateRejected(
                    f"the result of {tool.name} breaks {broke}: "
                    + "; ".join(str(m) for m in verdict.messages),
                    messages=verdict.messages,
                    step=str(step.iri),
                    tool=str(tool.iri),
                )
            rec.messages = verdict.messages
            effects.extend(returned)
            effects.extend(fixed)
        return effects, now

    def _judged(
        self, tool: Tool, subject: Node, added: list[tuple[Node, Node, Node]]
    ) -> list[tuple[Node, Node, Node]]:
        """The subject's triples the gate judges it by: those whose predicate a shape that
        judges it names (:meth:`Gate.reads`), not everything it holds. Read for its class as
        declared, then, should its types (with any the step adds) call for more, the rest."""
        guess = self.gate.first_reads(tool)
        if guess is not None:
            found = list(self.store.outgoing(subject, guess))
            types = {o for _, p, o in found if _IS_TYPE(p)}
            types.update(o for s, p, o in added if _IS_TYPE(p) and (s is subject or s == subject))
            need = self.gate.reads(tool, subject, types)
            if need is not None:
                if not need <= guess:
                    found += self.store.outgoing(subject, need - guess)
                return found
        return list(self.store.outgoing(subject))  # a shape may read any of its triples

    async def _call(
        self, rec: StepRecord, step: ActionStep, tool: Tool, args: dict[str, Any]
    ) -> Any:
        """Call the tool, retrying up to ``horis:retries`` times; a tool that is not idempotent
        only while its calls provably never reached it (see _attempt)."""
        attempts = 1 + tool.retries
        last: ToolError | None = None
        for _ in range(attempts):
            rec.attempts += 1
            deadline = None
            with Attempt() as attempt:
                try:
                    if tool.inline:  # never awaits: its binding judges the timeout (_bindings)
                        return await self.env.invoke(tool, lambda: self.binding(tool), args)
                    # in this task, not a new one as wait_for makes: ~90 µs a call on a busy
                    # machine, for every step
                    async with asyncio.timeout(tool.timeout) as deadline:
                        return await self.env.invoke(tool, lambda: self.binding(tool), args)
                except TimeoutError as e:
                    if isinstance(e, Expired) or (deadline is not None and deadline.expired()):
                        last = ToolTimeout(
                            f"{tool.name} did not answer within {tool.timeout:g}s (horis:timeout)",
                            step=str(step.iri),
                            tool=str(tool.iri),
                        )
                    else:  # the tool's own: a request of its that timed out, say
                        last = ToolError(
                            f"{tool.name} raised TimeoutError: {e}",
                            step=str(step.iri),
                            tool=str(tool.iri),
                        )
                except ToolError as e:
                    e.step, e.tool = str(step.iri), str(tool.iri)
                    last = e
                except Exception as e:
                    last = ToolError(
                        f"{tool.name} raised {type(e).__name__}: {e}",
                        step=str(step.iri),
                        tool=str(tool.iri),
                    )
            # never sent, or sent and no answer came back: an idempotent call's key stays free
            last.unanswered = isinstance(last, NotSent) or not attempt.answered
            if getattr(last, "terminal", False):  # a quota breach, a full disk: not retried
                break
            if not tool.idempotent and attempt.sent and not isinstance(last, NotSent):
                if not attempt.answered:
                    last = _unknown(tool, step, last, attempt.running)
                break  # it may have acted: never sent again
        assert last is not None
        raise last

    # -- commits --------------------------------------------------------------------------

    def _effect_quads(
        self,
        inst: InstanceRun,
        step: ActionStep,
        tool: Tool,
        graph: URIRef,
        effects: list[tuple[Node, Node, Node]],
        started: dt.datetime,
        now: Literal,
    ) -> list[tuple]:
        """The effect graph's quads: ``effects``, then what its activity says. Each quad is
        built once, in its graph: built as triples and copied into quads, a step's ~13 were
        made twice (~2 µs)."""
        activity = URIRef(str(graph).replace("urn:horismos:effect:", "urn:horismos:activity:"))
        if self.trace_version == TRACE_VERSION:
            described = _activity(step.iri, tool.iri)
        else:  # replaying a version-2 trace: what its run wrote
            described = _activity_v2(step.iri, tool.iri, tool.name)
            effects = [*effects, (graph, _TYPE, _ENTITY)]
        return [
            *[(s, p, o, graph) for s, p, o in effects],
            (graph, _GENERATED_BY, activity, graph),
            *[(activity, p, o, graph) for p, o in described],
            (activity, _INSTANCE, inst.instance, graph),
            (activity, _STARTED, now, graph),
            (activity, _ENDED, self._stamp(self.env.now()), graph),
        ]

    def _state_quads(
        self,
        inst: InstanceRun,
        status: str,
        version: int,
        current: URIRef | None = None,
        blocked_by: str | None = None,
        error: str | None = None,
        blocked_at: Literal | None = None,
    ) -> list[tuple]:
        """The instance's state as quads, each built in its graph once (not as a triple
        copied into one: every step writes it)."""
        iid, graph = inst.instance, INSTANCES
        quads: list[tuple] = [
            (iid, _STATUS_OF, _STATUS[status], graph),
            (iid, _VERSION, _version(version), graph),
        ]
        if current is not None:
            quads.append((iid, _CURRENT, current, graph))
        if blocked_by:
            quads.append((iid, HORIS.blockedBy, Literal(blocked_by), graph))
        if blocked_at is not None:
            quads.append((iid, _BLOCKED_AT, blocked_at, graph))
        if error:
            quads.append((iid, HORIS.error, Literal(error), graph))
        for name, value in sorted(inst.variables.items()):
            if name != "this":  # the focus is stored as horis:focus
                var = URIRef(f"{iid}:variable:{name}")
                quads += [
                    (iid, HORIS.variable, var, graph),
                    (var, HORIS.name, Literal(name), graph),
                    (var, HORIS.value, value, graph),
                ]
        self._state[iid] = quads
        return quads

    def _finish_step(
        self, inst: InstanceRun, rec: StepRecord, version: int, status: str, current: URIRef | None
    ) -> None:
        """Commit the step's effects and the instance's new state as one change, then trace.

        A new instance's first commit also creates it (:meth:`run_instance`): it replaces no
        state, so it expects no version."""
        t0 = time.perf_counter()
        old = self._state.get(inst.instance, [])
        created = self._fresh.pop(inst.instance, ())
        new = self._state_quads(
            inst,
            status,
            version,
            current,
            rec.blocked_by,
            str(rec.error) if status == "failed" and rec.error else None,
            self._blocked_since(old, rec, current)
            if status == "blocked" and self.blocked_at
            else None,
        )
        pending = self._pending.pop(inst.instance, [])
        dropped = self._dropped.pop(inst.instance, [])  # projections replaced by an adapter
        guard = _guard(old)  # lands only on that version
        self.world.commit(
            Change(
                add=[*created, *pending, *new],
                remove=[*old, *dropped],
                expect=guard,
                fresh=(rec.graph,) if rec.graph is not None else (),
            )
        )
        t1 = time.perf_counter()
        rec.timings["commit"] = rec.timings.get("commit", 0.0) + t1 - t0
        rec.next = rec.next or (current if status == "running" else None)
        self._emit_step(rec)
        rec.timings["trace"] = time.perf_counter() - t1
        if self.on_step is not None:  # landed and traced: safe to report as it happens
            self.on_step(inst, rec)

    def _blocked_since(self, old: list[tuple], rec: StepRecord, current: URIRef | None) -> Literal:
        """Since when the instance is blocked: as its old state says, when it was blocked at
        this step already (a rerun that finds it still blocked: stuck since the first time),
        else when this step began."""
        if any(q[1] == _CURRENT and q[2] == current for q in old):
            since = next((q[2] for q in old if q[1] == _BLOCKED_AT), None)
            if since is not None:
                return cast(Literal, since)
        return self._stamp(rec.started or self.env.now())

    def _stamp(self, value: dt.datetime) -> Literal:
        """A time the clock handed out as the literal a commit writes, from the text the
        clock already wrote (:mod:`._stamps`)."""
        return datetime_literal(value, self.env.text(value))

    def _emit(self, type: str, **fields: Any) -> None:
        """Trace an event with the clock values, ids and tool outcomes handed out for it."""
        fields.update(self.env.handed())
        self.trace.emit(type, fields)

    def _emit_step(self, rec: StepRecord) -> None:
        """Trace a step's event. Its members are built as one dict, handed to the trace as it
        is (as keywords it was copied twice more); what most steps leave empty (what the
        binding narrowed away, gate messages, an error) is written without building it."""
        err = rec.error
        result = rec.result
        narrowed = (
            sorted({k for r in result for k in getattr(r, "narrowed", ())})
            if any(type(r) is not dict for r in result)  # a plain dict narrowed nothing
            else []
        )
        blocked_by = rec.blocked_by
        messages = rec.messages
        fields = {
            "instance": str(rec.instance),
            "step": str(rec.step),
            "kind": rec.kind,
            "tool": str(rec.tool) if rec.tool else None,
            "status": rec.status,
            "args": rec.args,
            "attempts": rec.attempts,  # what the tool returned: in ``outcomes``
            "narrowed": narrowed,
            "precondition": {
                "holds": blocked_by is None or err is not None,
                "failing": blocked_by if err is None else None,
            },
            "effects": [[_n3(s), _n3(p), _n3(o)] for s, p, o in rec.effects],
            "graph": str(rec.graph) if rec.graph else None,
            "gate": {
                "conforms": rec.status != "rejected",
                "messages": [m.to_json() for m in messages] if messages else [],
            },
            "error": {"kind": err.kind, "type": type(err).__name__, "message": str(err)}
            if err
            else None,
            "next": str(rec.next) if rec.next else None,
            "timings": {k: round(v, 6) for k, v in rec.timings.items()},
        }
        if rec.receipts:  # an adapter commit's
            fields["receipts"] = rec.receipts
        fields.update(rec.detail)
        fields.update(self.env.handed())
        self.trace.emit("step", fields)


def _guard(state: list[tuple]) -> tuple[tuple, ...]:
    """The instance state's ``horis:version`` quad: what a commit replacing that state
    expects (predicates are IRIs, so their text decides)."""
    return tuple(q for q in state if _IS_VERSION(q[1]))


def _unknown(
    tool: Tool, step: ActionStep, seen: ToolError, running: threading.Event | None = None
) -> OutcomeUnknown:
    """A non-idempotent call that was sent and never answered: it may have acted (and, in a
    thread of this process, may go on acting until ``running`` is set)."""
    retried = " (horis:retries repeats only calls that never reached it)" if tool.retries else ""
    return OutcomeUnknown(
        f"{seen} — the call was sent and no answer came back, so it may have acted; "
        f"{tool.name} is not idempotent, so it is not called again{retried}: check with the "
        "system it acts on whether the call took effect, and record the outcome in the world "
        "(horis:onError is where the workflow goes on from)",
        cause=seen,
        running=None if running is None or running.is_set() else running,
        step=str(step.iri),
        tool=str(tool.iri),
    )


_NOT_IN_N3_IRI = re.compile(r'[<>" {}|\\^`]')  # what rdflib's URIRef.n3 refuses
_ESCAPED_IN_N3 = re.compile(r'[\n\r"\\]')  # what rdflib's Literal.n3 escapes or triple-quotes
# a value of these may be INF or NaN, which rdflib's Literal.n3 respells
_INF_NAN = frozenset({XSD.float, XSD.double, XSD.decimal})


_IRI_TEXT: dict[URIRef, str] = {}
"""The N3 of the IRIs written lately (:func:`_n3`): a step writes its subject three times or
more (its arguments, each effect) and the same few properties every time (~0.5 µs each)."""
_IRI_TEXTS = 4096  # kept at most: every subject is new to a run over many, so it starts over


def _n3(term: Node) -> str:
    """``term.n3()``, written without rdflib where one regular expression says rdflib would
    write it plainly: an IRI without the characters it refuses (rdflib checks ten characters
    one by one; the IRIs written lately are kept, :data:`_IRI_TEXT`), a literal with nothing
    to escape (~6 µs in rdflib); anything else by rdflib. ``tests/test_step_terms.py`` holds
    it to ``n3()`` on drawn terms."""
    kind = type(term)
    if kind is URIRef:
        text = _IRI_TEXT.get(cast(URIRef, term))
        if text is not None:
            return text
        if _NOT_IN_N3_IRI.search(cast(URIRef, term)) is None:
            if len(_IRI_TEXT) >= _IRI_TEXTS:
                _IRI_TEXT.clear()
            text = _IRI_TEXT[cast(URIRef, term)] = f"<{term}>"
            return text
    elif kind is Literal and _ESCAPED_IN_N3.search(literal := cast(Literal, term)) is None:
        language = literal.language
        if language:
            return f'"{str.__str__(literal)}"@{language}'
        datatype = literal.datatype
        if datatype is None:
            return f'"{str.__str__(literal)}"'
        if datatype not in _INF_NAN:
            return f'"{str.__str__(literal)}"^^<{datatype}>'
    return term.n3()


def _python(value: Node) -> Any:
    """An argument as a Python tool receives it: a node as its IRI, a literal as its value."""
    if is_iri(value):
        return value
    return cast(Literal, value).toPython()


def _literal_fits(value: Literal, datatype: URIRef) -> bool:
    if datatype == _ANY_LITERAL:
        return True
    if getattr(value, "ill_typed", False):
        return False
    dt_ = value.datatype
    if dt_ is None:
        if value.language:
            return datatype == _LANG_STRING
        return datatype == _STRING
    if dt_ == datatype:
        return True
    return datatype in _NUMBERS and dt_ in INTEGER_TYPES


# rdflib answers XSD.x and the like through a metaclass __getattr__ on each use
_ANY_LITERAL, _LANG_STRING, _STRING = RDFS.Literal, RDF.langString, XSD.string
_NUMBERS = (XSD.integer, XSD.decimal)


@lru_cache(maxsize=1024)
def _activity(step: URIRef, tool: URIRef) -> tuple[tuple[URIRef, Node], ...]:
    """What a step's activity says of itself that is the same every time the step runs.

    Nothing a reader cannot find otherwise is left out: its ``prov:Activity`` type is
    entailed by ``horis:StepExecution`` (a subclass), its tool is ``prov:wasAssociatedWith``,
    and its effect graph is a ``prov:Entity`` by ``prov:wasGeneratedBy``'s domain. Each quad
    a step writes costs ~8 µs of it (docs/performance.md)."""
    return (
        (_TYPE, HORIS.StepExecution),
        (HORIS.step, step),
        (HORIS.provenance, HORIS.ToolProvenance),
        (_ASSOCIATED_WITH, tool),
    )


@lru_cache(maxsize=1024)
def _activity_v2(step: URIRef, tool: URIRef, name: str) -> tuple[tuple[URIRef, Node], ...]:
    """:func:`_activity` as a version-2 trace's run wrote it, with the ``prov:Activity``
    type, ``horis:tool`` and label version 3 leaves out (its label built once, not per
    step). Its effect graph's ``prov:Entity`` type is the fourth."""
    return (
        (_TYPE, HORIS.StepExecution),
        (_TYPE, _ACTIVITY),
        (HORIS.step, step),
        (HORIS.tool, tool),
        (HORIS.provenance, HORIS.ToolProvenance),
        (_ASSOCIATED_WITH, tool),
        (_LABEL, Literal(f"{step.fragment or step} by {name}")),
    )


@lru_cache(maxsize=1024)
def _version(n: int) -> Literal:
    """An instance's ``horis:version`` literal: one object per number (rdflib builds one in
    ~5 µs), which the store then converts once."""
    return Literal(n)


def focus_nodes(defs: Definitions, world: World, workflow: Workflow) -> list[URIRef]:
    """Every node of the workflow's focus type (subclasses entailed), in a stable order."""
    found: set[URIRef] = set()
    for cls in defs.classes_of(workflow.focus_type):
        for row in world.store.select("SELECT ?x WHERE { ?x a ?c }", {"c": cls}, {}):
            x = row.get("x")
            if isinstance(x, URIRef):
                found.add(x)
    return sorted(found, key=str)


def _failed(inst: InstanceRun, step: Step, error: RunError) -> StepRecord:
    """The record of ``step`` failed by the run itself with ``error``, before any tool was
    asked (a loop that would never end, the step budget, a query the store refused)."""
    return StepRecord(step.iri, type(step).__name__, "failed", inst.instance, error=error)
