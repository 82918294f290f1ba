"""An action step: whether its tool may be called (policy, approvals, preconditions read
again), the holds and doubts that keep a non-idempotent call from being made twice, the call,
and what lands; an adapter's commit too.

A part of the runner (:mod:`._runner_state`): the runner's drive loop hands it each action
step; it calls tools through :mod:`._tool_calls` and lands through :mod:`._step_records`.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, cast

from rdflib import Literal, URIRef
from rdflib.term import Node

from ._adapter_step import AdapterCommit, check_scopes
from ._bindings.reach import hosts_of
from ._errors import (
    CallInFlight,
    GateRejected,
    OutcomeUnknown,
    RunError,
    ToolTimeout,
    Unreachable,
)
from ._gate import Verdict
from ._intents import (
    Intent,
    announce,
    binding_mark,
    calling,
    doubt_key,
    doubt_marks,
    doubt_message,
    doubt_node,
    former_holds,
    held,
    holder,
    holding_at,
    holds,
    in_flight_message,
    key_at,
    open_intent,
    outlast,
    read_intent,
    settling_at,
    yields_to,
)
from ._model import ActionStep, Tool
from ._policy import Pending, approvers, pending, refusal, side_effect
from ._records import InstanceRun, StepRecord
from ._renamed_tools import (
    as_former,
    former_names,
    former_nodes,
    kept_at,
    recorded_bindings,
    renamed_message,
)
from ._step_records import IS_TYPE, n3, version_guard
from ._stored_instances import short_id
from ._stores import Change, Conflict, StoreError
from ._stores.base import INSTANCES, ReadAhead
from ._tool_calls import ToolCalls, python_value
from ._unreachable import blocked_until_answered
from ._unrecorded import unrecorded
from ._vocab import HORIS
from ._waits import focus_label

__all__ = ["ActionSteps"]


class ActionSteps(ToolCalls):
    """An action step and an adapter's commit, with the holds and doubts around a call."""

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
            if called is None and self.binds_doubts and stale.step == step.iri:
                # its tool renamed since (the step's tool now): its call is held in doubt
                # under the IRI it was made under, bound as the step's tool is
                called = None if tool.idempotent else as_former(tool, stale.tool)
            doubted = bool(self.calls_in_doubt) and called is not None and not called.idempotent
            if called is not None and doubted:
                # in doubt for every lane, not only this instance (announced at another step
                # too: the definitions changed since, and the call may have acted)
                self._pending.setdefault(inst.instance, []).extend(
                    doubt_marks(
                        inst.instance,
                        stale.step,
                        called,
                        stale.started,
                        stale.args,
                        self.binds_doubts,
                        self.keys_across,
                    )
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
        used: list[tuple] = []  # the quads using up the approvals the call takes
        try:
            calls = self._arguments(step, tool, solutions)
            timings["arguments"] = time.perf_counter() - t1
            tool_blocks = self._tool_refuses(tool, calls)
            if tool_blocks is not None:
                rec.status, rec.blocked_by = "blocked", tool_blocks
                return rec, None
            rec.args = [{k: n3(v) for k, v in a.items()} for a in calls]
            order = self.env.call_order(rec.args) if len(calls) > 1 else None
            if order is not None:
                calls, rec.args = [calls[i] for i in order], [rec.args[i] for i in order]
            # the policy in force, then an approval of each exact payload (see _policy)
            refused = refusal(self.policy, tool)
            # the step's start as a literal, built from its value (parsing text cost ~15 µs)
            began = self._stamp(started)
            prints, waiting, used, taken = pending(
                self.policy,
                self.store,
                inst.instance,
                step,
                tool,
                calls,
                began,
                self.approvals_bound,
                self.mcp.servers,
                self.env._code(lambda: self.binding(tool)) if tool.requires_approval else None,
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
            elif not tool.idempotent and self.trace_version >= 4:  # nor a call that cannot land
                broken = self._broken_already(step, tool, calls)
                if broken is not None:
                    rec.status, rec.error, rec.blocked_by = "blocked", broken, str(broken)
                    return rec, None
            if waiting is not None:
                return self._await_approval(inst, rec, waiting, started, used), None
            if taken:  # who approved the call, and when, said where the call is
                rec.detail["approved"] = approvers(self.store, taken)
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
            unreached = self._unreached(inst, rec, step, tool, e, used)
            if unreached is not None:
                return unreached
            if (
                not tool.idempotent
                and self.calls_in_doubt
                and inst.instance not in self._intent_at  # a catalog call keeps its own
            ):  # what may have acted: in doubt for every lane until someone reconciles it
                acted = self._acted(rec, e, tool)
                if acted:
                    self._pending.setdefault(inst.instance, []).extend(
                        doubt_marks(
                            inst.instance,
                            step.iri,
                            tool,
                            began,
                            acted,
                            self.binds_doubts,
                            self.keys_across,
                        )
                    )
                running = e.running if isinstance(e, OutcomeUnknown) else None
                if acted and running is not None:  # abandoned at its timeout, acting still:
                    # reconcile leaves it be until its thread returns, as for a call's: here,
                    # and on a shared world elsewhere too (its subject held meanwhile)
                    key = doubt_key(tool, acted[-1], self.keys_across)
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
        except StoreError as e:  # the store went away with the call made (judging its
            raise unrecorded(e, rec, tool) from None  # result): say so
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
                {a.name: python_value(args[a.name]) for a in tool.args if a.sent and a.name in args}
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
        down = outcome.only_unreached
        if (
            down is not None
            and self.blocks_unreached
            and step.on_error is None
            and inst.workflow in self.defs.workflows  # a catalog call has no instance to keep
        ):
            # its system of record down, nothing sent: raised for the step to be blocked, as
            # an HTTP binding's is (_unreached); the decisions are made again when it is tried
            rec.result = []
            raise down
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
        unknown = sorted({r.call or 0 for r in outcome.receipts if r.outcome == "unknown"})
        if unknown and self.calls_in_doubt > 2 and inst.instance not in self._intent_at:
            # a commit whose outcome is unknown may have acted: held in doubt for every lane,
            # as a call never answered is (a catalog call keeps its own). Only this instance's
            # intent stood in its way, and the next run, a new instance, created it again
            self._pending.setdefault(inst.instance, []).extend(
                doubt_marks(
                    inst.instance,
                    step.iri,
                    tool,
                    self._stamp(started),
                    [rec.args[i] for i in unknown],
                    self.binds_doubts,
                    self.keys_across,
                )
            )
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
        self,
        inst: InstanceRun,
        rec: StepRecord,
        waiting: Pending,
        started: dt.datetime,
        lapse: Sequence[tuple] = (),
    ) -> StepRecord:
        """Stop the instance at this step until a person approves each exact payload;
        ``lapse``: the quads letting lapse the approvals of payloads it no longer sends."""
        graph = URIRef(f"urn:horismos:approval:{self.env.new_id()}")
        label = focus_label(self.store, inst.focus)  # as the wait brief gives it
        brief = waiting.brief(self.defs.name, inst.instance, inst.workflow, inst.focus, label)
        rec.status, rec.brief, rec.graph = "waiting", brief, graph
        rec.detail["approval"] = {
            "payloads": [p for p, _ in waiting.calls],
            "fingerprints": [f for _, f in waiting.calls],
        }
        self._pending[inst.instance] = [
            *waiting.quads(graph, inst.instance, self._stamp(started), brief),
            *lapse,
        ]
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
        formers = self.former_names_of(tool) if self.binds_doubts else ()
        if at is not None:  # a catalog call's intent is at its doubt node: nobody else's there
            quads.append(calling(at))
            # who makes it (lane@host:pid), as an instance stores who started it: a call left
            # in doubt has no instance, and `instances` listed it `by -`
            quads += [(at, p, o, INSTANCES) for p, o in self._started_by]
            if self.binds_doubts:  # a tool renamed while it is in doubt is held there
                quads.append(binding_mark(at, tool))
            absent: tuple[tuple, ...] = (held(at),)
            keyed = self._keyed.get(inst.instance)
            if keyed:  # its idempotency key lands with it, one call a key
                spent, absent = [*spent, *keyed], (*absent, keyed[0])
            if self.holds_settled > 2 and tool.iri in self.defs.tools_off_focus:
                # a step on a node not its focus may hold it too, and reads back: so does this
                settling.append(at)
        elif self.calls_in_doubt:  # a step's call holds the doubt node it acts on meanwhile
            holding = holds(inst.instance, tool, args, self.keys_across)
            quads += holding
            absent = tuple(q for q in holding if IS_TYPE(q[1]))  # held(node) of each node
            if self.holds_settled:  # on a node its focus's claim does not keep others off
                shared = (self.holds_settled > 1 and tool.iri in self.defs.tools_in_several) or (
                    self.holds_settled > 2 and tool.iri in self.defs.tools_off_focus
                )
                settling = [
                    doubt_node(tool.iri, key)
                    for key in dict.fromkeys(doubt_key(tool, a, self.keys_across) for a in args)
                    if key != inst.focus or shared
                ]
        else:
            absent = ()
        if self.keys_across and absent:  # and under each key a version before kept it at
            absent += tuple(held(node) for node in former_holds(tool, args))
        if formers:  # and free under each name the tool had when a call of it was left in doubt
            absent += tuple(held(node) for node in former_nodes(formers, tool, args))
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
            self.world.commit(
                Change(add=[*quads, *spent], expect=version_guard(state), absent=absent)
            )
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
        calls = json.loads(stale.args)
        quads = holds(instance, tool, calls, self.keys_across)
        if self.keys_across:  # a process of a version before held them at its keys
            quads += [q for n in former_holds(tool, calls) for q in holding_at(n, instance)]
        return [q for q in quads if holder(self.store, cast(URIRef, q[0])) == instance]

    def _held_elsewhere(
        self, rec: StepRecord, step: ActionStep, tool: Tool, node: URIRef
    ) -> tuple[StepRecord, URIRef | None]:
        """A step whose call another holds: in doubt there (it fails, taking horis:onError),
        or being made by another instance's step (it is blocked, and tried again later). The
        node may be one of a name the tool had before it was renamed (:mod:`._renamed_tools`)."""
        formers = self.former_names_of(tool) if self.binds_doubts else ()
        found = kept_at(tool, formers, node, rec.args)
        iri, key = (
            found
            if found is not None
            else (tool.iri, key_at(tool, node, rec.args, self.keys_across))
        )
        earlier = read_intent(self.store, node)
        if earlier is not None and not earlier.in_flight:
            rec.status = "failed"
            if iri != tool.iri:
                rec.error = OutcomeUnknown(
                    renamed_message(
                        tool,
                        iri,
                        key,
                        self.defs.name,
                        earlier,
                        persistent=self.world.store.persistent,
                    )
                    + " (horis:onError is where the workflow goes on from)",
                    step=str(step.iri),
                    tool=str(tool.iri),
                )
            else:
                rec.error = self._doubted(step, tool, key, earlier)
            return rec, step.on_error
        by = earlier.instance if earlier is not None else holder(self.store, node) or node
        held_as = tool if iri == tool.iri else as_former(tool, iri)
        return self._in_flight(rec, step, held_as, node, by)

    def _unreached(
        self,
        inst: InstanceRun,
        rec: StepRecord,
        step: ActionStep,
        tool: Tool,
        e: RunError,
        used: Sequence[tuple],
    ) -> tuple[StepRecord, URIRef | None] | None:
        """The step blocked, to be tried again, when its call did not reach its endpoint
        (:class:`Unreachable`: an HTTP endpoint or MCP server down, nothing sent; or its
        ``horis:timeout`` ran out while the connection was still being made, which of the two
        comes first a race on a host that drops what is sent to it) and it declares no
        ``horis:onError``: failed, the instance was over for good, though nothing
        of the call or the world was wrong, and the step woken from a wait lost its answer.
        None, and the step fails as any other, where an onError is declared (it fires), a call
        of its horis:forEach was answered (it may have acted: not made again), or the call is
        a catalog's (no instance to leave). The approvals it took are given back: it was
        never made."""
        if (
            not self.blocks_unreached
            or not (isinstance(e, Unreachable) or _never_connected(e, tool))
            or step.on_error is not None
            or rec.result
            or inst.workflow not in self.defs.workflows
        ):
            return None
        if used:
            mine = self._pending.get(inst.instance, [])
            kept = [q for q in mine if q not in used]
            if len(kept) == len(mine):  # landed with its intent: removed by the step's commit
                self._dropped.setdefault(inst.instance, []).extend(used)
            else:
                self._pending[inst.instance] = kept
        rec.error = Unreachable(
            f"{e}; "
            + blocked_until_answered(
                self.defs.name(step.iri),
                "calls it again",
                short_id(inst.instance),
                self.defs.name(inst.focus),
            ),
            step=str(step.iri),
            tool=str(tool.iri),
        )
        rec.error.__cause__ = e
        rec.status, rec.blocked_by = "blocked", str(rec.error)
        return rec, None

    def _in_flight(
        self, rec: StepRecord, step: ActionStep, tool: Tool, node: URIRef, by: URIRef
    ) -> tuple[StepRecord, URIRef | None]:
        """The step is blocked while ``by`` calls ``tool`` at ``node``: tried again later."""
        key = key_at(tool, node, rec.args, self.keys_across)
        rec.error = CallInFlight(
            in_flight_message(tool, key, self.defs.name, by),
            holder=str(by),
            step=str(step.iri),
            tool=str(tool.iri),
        )
        rec.status, rec.blocked_by = "blocked", str(rec.error)
        return rec, None

    def former_names_of(self, tool: Tool) -> tuple[URIRef, ...]:
        """The IRIs ``tool`` had when calls of it now in doubt were made, bound the same; read
        from the store once a runner, at its first call of a tool that is not idempotent."""
        formers = self._formers
        if formers is None:
            recorded = recorded_bindings(self.store)
            formers = self._formers = former_names(self.defs.tools.values(), recorded)
        return formers.get(tool.iri, ())

    def _doubted(self, step: ActionStep, tool: Tool, key: Node, earlier: Intent) -> RunError:
        """Why a step does not call a tool an earlier call left in doubt on the same subject."""
        return OutcomeUnknown(
            doubt_message(
                tool, key, self.defs.name, earlier, persistent=self.world.store.persistent
            )
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


def _never_connected(e: RunError, tool: Tool) -> bool:
    """Whether ``e`` is the timeout of an HTTP or MCP call whose connection was still being
    made: the endpoint did not answer in time, as one down does (a Python tool not yet entered
    is the run's own delay, not an endpoint's)."""
    return (
        isinstance(e, ToolTimeout)
        and not e.sent
        and tool.binding.startswith(("http://", "https://", "mcp://"))
    )
