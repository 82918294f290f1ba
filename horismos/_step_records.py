"""A step's record landed: its effects and the instance's state as quads, its trace event.

The lowest part of the runner (:mod:`._runner_state`): what every step ends with, whatever
kind it is. Also how a term is written in N3 (:func:`n3`), which the trace and effects share.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from functools import lru_cache
from typing import Any, cast

from rdflib import RDF, RDFS, XSD, Literal, URIRef
from rdflib.term import Node

from ._adapter_step import made_from
from ._errors import LeaseLost
from ._hydrate import land_projections
from ._model import ActionStep, Tool
from ._records import InstanceRun, StepRecord
from ._runner_state import RunnerState
from ._stores import Change, StoreError
from ._stores.ox_terms import datetime_literal
from ._unrecorded import unrecorded
from ._vocab import HORIS, PROV
from ._world import INSTANCES

__all__ = ["IS_TYPE", "StepRecording", "n3", "version_guard"]

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
IS_TYPE = str(_TYPE).__eq__  # so is a predicate rdf:type (predicates are IRIs)
_STATUS = {
    "running": HORIS.Running,
    "completed": HORIS.Completed,
    "waiting": HORIS.Waiting,
    "blocked": HORIS.Blocked,
    "failed": HORIS.Failed,
}


class StepRecording(RunnerState):
    """Landing a step: its quads, the instance's state, its trace event."""

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
        if self.trace_version >= 3:  # as version 3 described it (4 did not change it)
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

    def _kind_of(self, rec: StepRecord, status: str) -> str | None:
        """The kind an instance left ``status`` by ``rec`` stores (``horis:errorKind``): a
        failed one's error's; a blocked one's refusal's (``policy``, ``broken_already``,
        ``in_flight``), or ``precondition`` where a pattern did not hold (no error, its
        pattern in ``horis:blockedBy``). A blocked instance stored its pattern or words and no
        kind, so ``instances`` could not say a policy from an unmet guard but by reading."""
        if status == "failed" and rec.error is not None and self.error_kinds:
            return rec.error.kind
        if status == "blocked" and self.block_kinds:
            return rec.error.kind if rec.error is not None else "precondition"
        return None

    def _state_quads(
        self,
        inst: InstanceRun,
        status: str,
        version: int,
        current: URIRef | None = None,
        blocked_by: str | None = None,
        error: str | None = None,
        blocked_at: Literal | None = None,
        failed_at: Literal | None = None,
        error_kind: str | None = None,
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
        if failed_at is not None:
            quads.append((iid, HORIS.failedAt, failed_at, graph))
        if error_kind is not None:
            quads.append((iid, HORIS.errorKind, Literal(error_kind), graph))
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
            # the failing step's start, as handed out: a step that took none (a decision)
            # stores no time rather than reading the clock again
            self._stamp(rec.started)
            if status == "failed" and self.failed_at and rec.started is not None
            else None,
            # the failing commit only: what class the error read back is (again=False); a
            # blocking one's: why it is blocked (a pattern's, or what refused it)
            self._kind_of(rec, status),
        )
        pending = self._pending.pop(inst.instance, [])
        dropped = self._dropped.pop(inst.instance, [])  # projections replaced by an adapter
        guard = version_guard(old)  # lands only on that version
        fresh = (rec.graph,) if rec.graph is not None else ()

        def land(add: list[tuple], remove: list[tuple], expect: tuple, absent: tuple) -> None:
            self.world.commit(
                Change(
                    add=[*created, *add, *new],
                    remove=[*old, *remove],
                    expect=(*guard, *expect),
                    absent=absent,
                    fresh=fresh,
                )
            )

        try:
            if not rec.receipts:  # most steps: no projection to land
                land(pending, dropped, (), ())
            else:
                # an adapter commit's projections land only on what they replace (or on none),
                # read again when another writer (a hydration) replaced one meanwhile, and
                # none found newer than the version its commit was made from is landed over:
                # the remote commit was accepted, and is never made again. Every try keeps the
                # instance's version guard, whose Conflict is the runner's (drive)
                tool = self.defs.tools.get(rec.tool) if rec.tool is not None else None
                land_projections(self.store, land, dropped, pending, made_from(tool, rec.receipts))
        except (StoreError, LeaseLost) as e:  # the store went away, or this process's
            # lease, with the call made: say so
            tool = self.defs.tools.get(rec.tool) if rec.tool is not None else None
            raise unrecorded(e, rec, tool) from None
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
            "effects": [[n3(s), n3(p), n3(o)] for s, p, o in rec.effects],
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


def version_guard(state: list[tuple]) -> tuple[tuple, ...]:
    """The instance state's ``horis:version`` quad: what a commit replacing that state
    expects (predicates are IRIs, so their text decides)."""
    return tuple(q for q in state if _IS_VERSION(q[1]))


_NOT_IN_N3_IRI = re.compile(r'[<>" {}|\\^`]')  # what rdflib's URIRef.n3 refuses
_ESCAPED_IN_N3 = re.compile(r'[\n\r"\\]')  # what rdflib's Literal.n3 escapes or triple-quotes
# a value of these may be INF or NaN, which rdflib's Literal.n3 respells
_INF_NAN = frozenset({XSD.float, XSD.double, XSD.decimal})


_IRI_TEXT: dict[URIRef, str] = {}
"""The N3 of the IRIs written lately (:func:`n3`): a step writes its subject three times or
more (its arguments, each effect) and the same few properties every time (~0.5 µs each)."""
_IRI_TEXTS = 4096  # kept at most: every subject is new to a run over many, so it starts over


def n3(term: Node) -> str:
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
