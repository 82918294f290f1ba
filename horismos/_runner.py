"""The runner: moves workflow instances step by step; the runtime, never a model, fires tools.

One path for live runs and replay: where time, ids and tool outcomes come from is the
:class:`Environment`'s business; replay passes one that reads them from a trace.

This module drives instances (run, resume, continue, the step loop, decisions); an action
step, a tool's call and a step's landing are parts :class:`Runner` inherits
(:mod:`._runner_state` says how they are layered).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import Any

from rdflib import RDF, Literal, URIRef
from rdflib.term import Node

from ._action_steps import ActionSteps
from ._adapter_step import made_from
from ._bindings.reach import hosts_of
from ._definitions import Definitions
from ._errors import (
    InstanceFailed,
    NotSent,
    Problem,
    RunError,
    StepBudgetExceeded,
    ToolError,
    Unstartable,
)
from ._fhir_client import adapter_problem
from ._hazards import cycle_through
from ._hydrate import land_projections
from ._intents import calling
from ._model import ActionStep, DecisionStep, ProposalStep, Step, Tool, WaitStep, Workflow
from ._policy import given_keyed
from ._proposal import propose, refused_model
from ._reads import text
from ._records import InstanceRun, StepRecord
from ._stored_instances import StoredInstance, read_instance, short_id_quad
from ._stores import Change, Conflict, StoreError
from ._stores.base import INSTANCE, QueryRefused, ReadAhead
from ._unrecorded import unrecorded
from ._vocab import HORIS
from ._waits import Waiting, wait_step
from ._world import INSTANCES, World

__all__ = ["Runner", "focus_nodes"]

_TYPE = RDF.type  # looked up once: rdflib answers RDF.type through __getattr__ each time


_READ_ONLY = frozenset({"DecisionStep", "WaitStep"})
"""Kinds of step that act on nothing when they complete: what the livelock check counts out."""


class Runner(ActionSteps):
    """Runs instances of the workflows in ``defs`` against a world, writing one trace."""

    # -- run lifecycle ------------------------------------------------------------------

    def header(
        self,
        workflow: Workflow | None,
        focus: list[URIRef],
        *,
        world_digest: str | None,
        snapshot: str | None = None,
        store: str | None = None,
        instance: str | None = None,
    ) -> None:
        """The first event: what runs, on which world (its digest; its N-Quads only when
        ``snapshot`` is given; ``store``: the store's name, when the run's own never opened),
        under which definitions. ``workflow`` None and ``instance`` (as given) for a resume
        refused before it read its instance's workflow from the store (another process held
        it); ``instance`` is written only so."""
        fields: dict[str, Any] = {}
        if snapshot is not None:
            fields["snapshot"] = {"format": "application/n-quads", "data": snapshot}
        if instance is not None:
            fields["instance"] = instance
        self._emit(
            "header",
            trace_version=self.trace_version,
            workflow=str(workflow.iri) if workflow is not None else None,
            focus=[str(f) for f in focus],
            definitions_digest=self.defs.digest,
            world_digest=world_digest,
            store=store or self.store.name,
            policy=self.policy.to_json(),
            started=self.env.now().isoformat(),
            **(self.ran_by or {}),
            **({"calls_in_doubt": self.calls_in_doubt} if self.calls_in_doubt else {}),
            **({"approvals_bound": self.approvals_bound} if self.approvals_bound else {}),
            **({"names_shapes": True} if self.names_shapes else {}),
            **({"blocked_at": True} if self.blocked_at else {}),
            **({"failed_at": True} if self.failed_at else {}),
            **({"error_kinds": True} if self.error_kinds else {}),
            **({"block_kinds": True} if self.block_kinds else {}),
            **({"blocks_unreached": True} if self.blocks_unreached else {}),
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

    def refused(
        self,
        workflow: Workflow | None,
        focus: list[URIRef],
        kind: str,
        message: str,
        node: URIRef | None,
        holder: str | None,
        store: str | None = None,
        instance: str | None = None,
    ) -> None:
        """The trace of a run refused before its first step because another run drives its
        focus (``kind`` ``not_held``), or another process holds its store open (``kind``
        ``store_held``, ``store`` its name: this run's never opened): its header, a
        ``refused`` event (the focus, the ``holder`` as ``lane@host:pid`` or ``pid N
        (command)`` when known, the message) and an ``end`` with status ``refused``; no world
        digest is asked (nothing ran). A duplicate delivery refused so left no artefact: the
        trace given to it was never written, and a reviewer could not tell it had come at
        all. None for a trace kept nowhere. ``workflow`` None, and ``instance`` the one a
        ``resume`` was given, where the store that would say its workflow was never opened
        (:meth:`header`); a ``wake`` so refused knows neither."""
        if self.trace.kept_nowhere or len(self.trace):
            return
        self.header(workflow, focus, world_digest=None, store=store, instance=instance)
        self._emit(
            "refused",
            kind=kind,
            message=message,
            **({"focus": str(node)} if node is not None else {}),
            **({"holder": holder} if holder else {}),
        )
        self._emit("end", status="refused", instances={}, world_digest=None)
        self.trace.close()

    def stopped(self, kind: str, message: str, holder: str | None = None) -> None:
        """Close the trace of a run stopped mid-way because another writer moved its instance
        on (``kind`` ``conflict``) or took its claims (``lease_lost``): a ``stopped`` event
        (the message, the ``holder`` of the focus's claim as ``lane@host:pid`` when another
        live process holds it) and an ``end`` with status ``stopped`` and the instances
        counted so far; no world digest is asked (the store is another writer's now). The
        trace ended after its last step with no end, and ``trace show`` and replay read it
        as a run whose process died. Nothing for a trace kept nowhere, or not begun."""
        if self.trace.kept_nowhere or not len(self.trace):
            return
        self._emit("stopped", kind=kind, message=message, **({"holder": holder} if holder else {}))
        self._emit(
            "end", status="stopped", instances=dict(sorted(self.counts.items())), world_digest=None
        )
        self.trace.close()

    def finished(self, inst: InstanceRun) -> None:
        self.counts[inst.status] = self.counts.get(inst.status, 0) + 1

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
            # as an HTTP binding's host and header: every instance decided, then failed to
            # send, and went on to its horis:onError (a pharmacist) for want of a setting
            unsendable = adapter_problem(tool.adapter, hosts) if tool.adapter else None
            if unsendable is not None:
                raise NotSent(f"{tool.name}: {unsendable}", tool=str(tool.iri))
            known = self.prechecks.fitting(tool, self.registry)
            if known is not None:
                self._bindings.setdefault(tool.iri, known)
                continue
            binding = None
            try:
                binding = self.binding(tool)
                await binding.check()
                self.prechecks.refuse_rejected_returns(binding)
            except ToolError as e:
                # a function that is not there or does not fit, a server nobody declares, a
                # tool the server lacks or whose schema does not fit: said where the binding
                # (or horis:takes) is written, as validate says it (a server that is down is
                # not a line's fault)
                refused = binding.refused_at() if binding is not None else None
                at = (
                    (tool.iri, HORIS.binding, Literal(tool.binding))
                    if refused in (None, HORIS.binding)
                    else (tool.iri, refused, None)  # horis:takes, or the effect's field
                )
                address = tool.mcp_address
                server = self.mcp.servers.get(address[0]) if address is not None else None
                # a server declared so it cannot start (no such program or module, a
                # variable unset) is its declaration's fault, as validate says it; one that
                # is down (Unreachable) is not
                unstarted = refused is None and server is not None and isinstance(e, Unstartable)
                if unstarted and server is not None:
                    at = (server.iri, HORIS.url if server.url is not None else HORIS.command, None)
                file, line = self.defs._sources.locate_statement(*at)
                declared = (
                    tool.binding.startswith("python:")
                    or (address is not None and address[0] not in self.mcp.servers)
                    or refused is not None
                    or unstarted
                )
                said = binding.refusal_problems(self.defs) if binding is not None else []
                if said and e.args:  # as validate --connect says it: at each assertion's line
                    e.args = ("\n".join(_as_run_says(p) for p in said), *e.args[1:])
                elif declared and file is not None and e.args:
                    listed = self._with_the_others(workflow, tool, at, str(e.args[0]))
                    e.args = (listed or f"{file}:{line}: {e.args[0]}", *e.args[1:])
                raise
            self.prechecks.fits(binding, self.registry)

    def _with_the_others(
        self, workflow: Workflow, tool: Tool, at: tuple[Node, URIRef, Node | None], why: str
    ) -> str | None:
        """Why ``tool``'s ``python:`` binding cannot be called, listed with each other binding
        of ``workflow`` that ``validate --tools`` refuses, by file and line as validate lists
        them: a user who mended the one said met the next on the next run. None when there
        is no other (the one said alone, as before)."""
        if not tool.binding.startswith("python:"):
            return None
        this = self.defs._sources.problem("error", tool.iri, why, at=at)
        others = [
            p
            for p in self.prechecks.binding_errors(workflow, self.registry)
            if (p.file, p.line) != (this.file, this.line)
        ]
        if not others:
            return None
        listed = sorted([this, *others], key=lambda p: (p.file or "~", p.line or 0))
        return (
            f"{len(listed)} python: bindings of {self.defs.name(workflow.iri)} cannot be "
            "called:\n" + "\n".join(f"  {p}" for p in listed)
        )

    async def aclose(self) -> None:
        await self.models.aclose()
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
        landed: Callable[[], None] | None = None,
        land_lent: Callable[[Change, World], None] | None = None,
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
        recorded: a retry with it calls again. ``landed``: told right after a completed call's
        commit, before anything else can stop it (what a caller lent the world for the call
        then stays with the effects that read it); ``land_lent``: lands a completed call's last
        commit, in this runner's world (fenced by its lease), with the removal of what was lent
        for it (the store's records of that lend,
        :mod:`._lends`), read as the commit is made: a lend landed while the tool ran is among
        them.
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

        def land(add: list[tuple], remove: list[tuple], expect: tuple, absent: tuple) -> None:
            change = Change(add=add, remove=remove, expect=expect, absent=(*used, *absent))
            if rec.status == "completed" and land_lent is not None:
                land_lent(change, self.world)
            elif add or remove:
                self.world.commit(change)

        try:
            # an adapter commit's projections land as a step's do (_finish_step): each only on
            # what it replaces, read again when a hydration or a step replaced it meanwhile,
            # and none newer than the version it was made from is landed over; the remote
            # commit is never made again
            land_projections(self.store, land, dropped, pending, made_from(tool, rec.receipts))
        except StoreError as e:  # the store went away with the call made: say so
            raise unrecorded(e, rec, tool) from None
        if landed is not None and rec.status == "completed":
            landed()
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
        iid = URIRef(f"{INSTANCE}{self.env.new_id()}")
        inst = InstanceRun(iid, workflow.iri, focus, "completed", workflow.start)
        self._fresh[iid] = [
            (iid, _TYPE, HORIS.Instance, INSTANCES),
            (iid, HORIS.workflow, workflow.iri, INSTANCES),
            (iid, HORIS.focus, focus, INSTANCES),
            short_id_quad(iid),
            *[(iid, p, o, INSTANCES) for p, o in self._started_by],
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
            error_kind=stored.error_kind,  # a blocked one's kind, replaced as the rest is
        )
        self._recovered.add(inst.instance)
        # the state it went on from, so a replay goes on from the same place
        extra = {
            k: v
            for k, v in (
                ("status", stored.status),
                ("blocked_by", stored.blocked_by),
                ("blocked_at", str(stored.blocked_at) if stored.blocked_at else None),
                ("error_kind", stored.error_kind),
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
            # a decision chooses and a wait that goes on only reads: neither moves the world,
            # so coming back to a step with only those between is a loop that never ends (a
            # wait whose horis:next is itself went round to the step budget once answered)
            if record.status == "completed" and record.kind not in _READ_ONLY:
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


def _as_run_says(p: Problem) -> str:
    """``validate``'s line for ``p`` without its severity, which ``run``'s own "error:" says."""
    return str(p).replace(f": {p.severity}: ", ": ", 1)
