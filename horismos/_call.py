"""The guarded call: should this invocation run, with these arguments, under this policy?

Checks, in order, each a refusal that changes nothing: the arguments against the tool's input
schema (an unknown field, or a result field passed as input, is refused), their types against
the world, the tool's own preconditions, the policy (side-effect classes allowed), the
approval (fingerprint of the exact payload), the environment and the binding. A call given an
idempotency key a call was made with already is answered once the policy allows the tool and
before its precondition is checked (:mod:`._idempotency`): what that call answered, or why
not; no approval is asked of it, as nothing is called. Then the call
takes an ActionStep's path through the runner — binding, SHACL gate, one transaction, traced
(:meth:`~horismos._runner.Runner.call_tool`) — and comes back as a :class:`CallResult`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

from rdflib import XSD, URIRef
from rdflib import Literal as RdfLiteral
from rdflib.term import Node
from rdflib.util import from_n3

from ._bindings.reach import hosts_of
from ._bindings.wire import json_value
from ._call_arguments import check_arguments
from ._catalog import (
    missing_env,
    ordered_args,
    types_in,
)
from ._claims import CATALOG, NotHeld, Worker, lease_from_env
from ._environment import Environment
from ._errors import (
    CallInFlight,
    LeaseLost,
    OutcomeUnknown,
    RunError,
    ShapesBrokenAlready,
    ToolError,
    UsageError,
)
from ._fhir_client import adapter_problem
from ._idempotency import key_answer, key_node, key_record, read_key, release_key, take_key
from ._intents import (
    CALLING,
    Intent,
    doubt_key,
    doubt_message,
    doubt_node,
    doubt_place,
    former_doubt_keys,
    holder,
    holding_at,
    in_flight_message,
    making,
    open_intent,
    open_step_intents,
    outlast,
    read_intent,
)
from ._model import McpServer, Tool
from ._people import operator_name
from ._policy import (
    Policy,
    code_stale,
    fingerprint,
    given_holds_for,
    given_issued,
    given_print,
    given_used,
    given_used_with,
    how_to_approve,
    refusal,
    server_of,
)
from ._prechecks import refuse_unmet
from ._process_identity import ran_by
from ._reconciled import VERDICTS, reconciliation
from ._records import StepRecord
from ._renamed_tools import as_former, former_names, recorded_bindings, renamed_message
from ._step_records import n3
from ._stores.base import Change, Conflict
from ._tool_calls import literal_fits
from ._trace import TRACE_VERSION, Trace
from ._world import holds_subject, traced_digest

if TYPE_CHECKING:
    from ._catalog import ToolIndex
    from ._definitions import Definitions
    from ._world import World

__all__ = [
    "CallError",
    "CallResult",
    "LentData",
    "approval_fingerprint",
    "guarded_call",
    "reconcile_call",
    "refused_before_store",
]

CallStatus = Literal[
    "completed", "refused", "blocked", "failed", "rejected", "timed_out", "partial"
]
"""``partial``: an adapter-bound tool's commit that the system of record accepted in part; the
accepted effects landed (:class:`~._errors.PartialCommit`)."""


@dataclass(frozen=True)
class CallError:
    """Why a guarded call did not complete: :attr:`CallResult.error`, typed as a run's error is.

    ``kind`` is what to match on (``match result.error: case CallError(kind="approval"):``);
    its values are the envelope's ``error.kind`` (docs/catalog.md lists them): ``schema``,
    ``precondition``, ``policy``, ``approval``… refused before any call, ``tool_error``,
    ``timeout``, ``outcome_unknown``, ``gate_rejected``… once called. ``message`` says what to
    change. ``cause``: the run's own exception when the call ran and failed with one (an
    :class:`~horismos.OutcomeUnknown`, a :class:`~horismos.ToolError`, …, its ``cause`` the
    tool's exception); ``None`` for a refusal before any call and for an answer given again
    under an idempotency key. :meth:`to_json` is the envelope's ``{"kind", "message"}``."""

    kind: str
    message: str
    cause: RunError | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, error: RunError) -> CallError:
        """The call's error as the run raised it: its kind and words, and itself as cause."""
        return cls(error.kind, str(error), error)

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> CallError:
        """The error of an envelope recorded earlier (an idempotency key's answer)."""
        return cls(str(value["kind"]), str(value["message"]))

    def to_json(self) -> dict[str, str]:
        """``{"kind", "message"}``: the envelope's ``error`` (docs/call-envelope.schema.json)."""
        return {"kind": self.kind, "message": self.message}

    def __getitem__(self, key: Literal["kind", "message"]) -> str:
        """``error["kind"]``, ``error["message"]``: the envelope's keys, read as the untyped
        dict this was until it was typed; :attr:`kind` and :attr:`message` say the same."""
        if key not in ("kind", "message"):
            raise KeyError(key)
        return str(getattr(self, key))

    def get(self, key: str, default: str | None = None) -> str | None:
        """``error.get("kind")``: a key of the envelope's ``error``, or ``default``, as the
        dict this was read; code written since reads :attr:`kind`."""
        return str(getattr(self, key)) if key in ("kind", "message") else default

    def __str__(self) -> str:
        return self.message


@dataclass
class CallResult:
    """The envelope of one guarded call: :meth:`to_json` (canonical) and :meth:`receipt`."""

    tool: URIRef
    status: CallStatus
    content: list[dict[str, Any]] = field(default_factory=list)
    """``{"type": "text", "text"}`` blocks, and a ``{"type": "json", "json"}`` block with
    what the tool returned."""
    artifacts: list[dict[str, Any]] = field(default_factory=list)
    """What the call left behind: the effect ``named_graph``, a saved ``trace``, a ``world``."""
    effects: list[tuple[Node, Node, Node]] = field(default_factory=list)
    gate: dict[str, Any] | None = None
    """``{"conforms", "messages"}`` when the gate judged a result; None when none reached it."""
    error: CallError | None = None
    """Why the call did not complete (:class:`CallError`: ``kind``, ``message``, ``cause``),
    ``None`` when it did. Kinds: schema, argument_type, precondition, policy, approval,
    approval_used, approval_not_issued, approval_stale, idempotency_key_reused, env, binding
    (refused before any call), tool_error, timeout, gate_rejected, and any other RunError's
    kind (result_too_large, partial, …)."""
    trace: Trace | None = None
    record: StepRecord | None = None
    call: str = ""
    """``tool(arg=value, …)`` as an author writes it."""
    names: Callable[[Node], str] = field(default=str, repr=False, compare=False)
    replayed: str | None = None
    """When the call first made with this call's idempotency key started, if this is its
    answer given again (nothing was called now)."""
    notes: list[str] = field(default_factory=list)
    """What else went wrong once the outcome was known (a binding that failed to close);
    each also a text block of :attr:`content`, after the summary."""

    @property
    def ok(self) -> bool:
        """Whether the call completed and its effects landed."""
        return self.status == "completed"

    def not_kept(self) -> None:
        """Say in :attr:`content` that the effects were not kept: the world ends with the
        process (an in-memory store, no ``--out``). Its JSON said they landed."""
        if self.content and self.content[0].get("type") == "text" and self.replayed is None:
            self.content[0] = {"type": "text", "text": _summary(self, kept=False)}

    def _reworded(self, message: str) -> None:
        """Say the error in ``message`` instead, in :attr:`error` and in the summary
        :attr:`content` opens with (a lane whose caller does otherwise than the command line:
        serve's agent, whose approval an operator gives)."""
        assert self.error is not None
        self.error = dataclasses.replace(self.error, message=message)
        if self.content and self.content[0].get("type") == "text" and self.replayed is None:
            self.content[0] = {"type": "text", "text": _summary(self)}

    def to_json(self) -> dict[str, Any]:
        """The envelope as JSON (``docs/call-envelope.schema.json``): status, content,
        artifacts, effects, gate, error."""
        return {
            "status": self.status,
            "content": self.content,
            "artifacts": self.artifacts,
            "effects": [[s.n3(), p.n3(), o.n3()] for s, p, o in self.effects],
            "gate": self.gate,
            "error": None if self.error is None else self.error.to_json(),
        }

    def receipt(self, *, kept: bool = True) -> str:
        """What happened, for a person: the call, its outcome, what landed or why not.

        ``kept=False``: the world ends with the process (an in-memory store, no ``--out``), so
        the effects are not said to have landed anywhere that lasts."""
        kind = f" ({self.error.kind})" if self.error and self.status != "completed" else ""
        lines = [f"{self.call}: {self.status.replace('_', ' ')}{kind}"]
        if self.replayed is not None:
            lines.append(f"  {_REPLAYED.format(self.replayed)}")
        if self.error is not None:
            lines.append("  " + " ".join(self.error.message.split()))
        if self.status in ("completed", "partial"):  # partial: what was accepted landed
            graph = next((a["iri"] for a in self.artifacts if a["type"] == "named_graph"), "")
            n = len(self.effects)
            # an answer replayed landed with the call first made with its key
            where = f"landed in <{graph}>" if kept or self.replayed is not None else _UNKEPT
            lines.append(f"  {n} effect{'' if n == 1 else 's'} {where}" + (":" if n else ""))
            lines.extend(
                f"    {self.names(s)} {self.names(p)} {self.names(o)}" for s, p, o in self.effects
            )
        else:
            lines.append("  nothing changed in the world")
        if self.gate is not None:
            verdict = "conforms" if self.gate["conforms"] else "rejected"
            lines.append(f"  gate: {verdict}")
            lines.extend(
                f"    {m['message']}"
                + (f" ({m['path']})" if m.get("path") else "")
                + (f" (value: {m['value']})" if m.get("value") else "")
                for m in self.gate["messages"]
            )
        lines.extend(f"  {a['type']}: {a['path']}" for a in self.artifacts if "path" in a)
        lines.extend(
            f"  output: {a['emitted_bytes']:,} bytes emitted, {a['dropped_bytes']:,} "
            f"dropped{' (capture truncated)' if a['truncated'] else ''}"
            for a in self.artifacts
            if a["type"] == "output_capture"
        )
        return "\n".join(lines)


def approval_fingerprint(
    catalog: ToolIndex, tool: Tool, args: Any, world: World | None = None
) -> str:
    """The fingerprint ``tools approve`` prints: of the payload a call would normalize to."""
    _, payload, problems = check_arguments(tool, catalog.definitions, args, world)
    if problems:
        raise UsageError(
            f"{tool.name}: the arguments do not fit its input schema: " + "; ".join(problems)
        )
    return fingerprint(tool.iri, payload)


# -- the call ---------------------------------------------------------------------------------


class LentData(Protocol):
    """World data a caller lent the store for one call (``tools call --store S --world F``):
    it stays once the call's completed commit has landed (:meth:`keep`), and is otherwise
    taken back before the trace ends, which says so."""

    def count(self) -> int:
        """How many quads were lent (the store held none of them)."""
        ...

    def land_with(self, change: Change, world: World) -> None:
        """Land the call's completed commit, ``change``, in ``world`` (the runner's, fenced by
        the call's lease) with the removal of the store's record of the lend and every other
        lend's copy of what it lent, read as the commit is made: what was lent then stays, and
        no later command takes it back."""
        ...

    def keep(self) -> None: ...

    def take_back(self) -> int:
        """Take what was lent back, unless kept; how many quads that removed. One that cannot
        land raises nothing: :meth:`left_note` says so, and the call's outcome stands."""
        ...

    def left_note(self) -> str | None:
        """Why what was lent is still in the store, told once (None: taken back, or kept)."""
        ...


class _Refused(Exception):
    def __init__(self, status: CallStatus, kind: str, message: str) -> None:
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message


def refused_before_store(
    definitions_digest: str,
    tool: Tool,
    args: Any,
    trace: str | Path,
    store: str,
    kind: str,
    message: str,
    holder: str | None,
) -> None:
    """Write ``trace`` for a call refused before it opened its store (``store``, as given),
    as :func:`guarded_call` writes a call's: its header (no world digest: no world was read),
    a ``refused`` event of ``kind`` with the ``holder`` when known, and ``end: refused``.
    ``tools call --trace`` refused because another process held its store open wrote no
    trace, where a ``run --trace`` so refused writes one."""
    tr = Trace(trace)
    tr.emit(
        "header",
        trace_version=TRACE_VERSION,
        call=str(tool.iri),
        args=args,
        definitions_digest=definitions_digest,
        world_digest=None,
        started=dt.datetime.now(dt.UTC).isoformat(),
        store=store,
        **ran_by(),
    )
    tr.emit(
        "refused",
        tool=str(tool.iri),
        kind=kind,
        message=message,
        **({"holder": holder} if holder else {}),
    )
    tr.emit("end", status="refused", world_digest=None)
    tr.close()


async def guarded_call(
    catalog: ToolIndex,
    tool: Tool,
    args: Any,
    world: World,
    *,
    approval: str | None,
    allow: frozenset[str],
    trace: str | Path | Trace | None,
    take_approval: Callable[[], str | None] | None = None,
    idempotency_key: str | None = None,
    issued_only: bool = False,
    lent: LentData | None = None,
) -> CallResult:
    """Check, then run ``tool`` once; every refusal leaves the world exactly as it was.

    ``take_approval``: where the approval is an approval recorded in the world (a served
    call's), what finds one and uses it up, answering its fingerprint (None: none is left).
    It is called once the call holds what it acts on, never before: on a shared ``sparql:``
    store a commit's "unless it is used up already" is judged on a snapshot, so two servers
    using one approval at the same instant both landed, and the slower, finding the subject
    free once the faster had called, called too. Held, whoever takes it next reads it used.

    ``idempotency_key``: the caller's name for this one call (see _idempotency). A key a call
    was made with answers a retry with what that call answered, calling nothing; it is looked
    up once the call holds its subject, as an approval is taken, and before anything the
    first call changed (its precondition) is checked again, but after the policy: a caller
    whose ``allow`` refuses the tool is refused (``policy``), not handed that answer.

    ``issued_only``: ``approval`` is taken only if ``tools approve`` issued it in ``world``
    (``tools call --approval``: text on a command line, which anyone can write; a Python
    caller's own fingerprint is its program's decision, as ``allow`` is).

    ``lent``: what the caller lent ``world`` for this call, counted in the trace's header
    (whose world digest has it). It is kept right after the commit of a call that completed
    (:meth:`Runner.call_tool`), though closing, tracing or a Ctrl-C then raise; else taken back
    before the trace ends, with an event ``taken_back`` and the world's digest after it."""
    agent, defs = catalog.agent, catalog.definitions
    refuse_unmet(defs, world)  # as a run is refused: before a trace or a world is touched
    tr = trace if isinstance(trace, Trace) else Trace(trace)
    digest = traced_digest(world, tr)  # as the caller left it
    # a mistyped HORISMOS_LEASE refused before anything lands
    lease = lease_from_env() if world.store.shared else None
    placed = agent.place_individuals(world)  # the definitions' own, before anything reads
    types_of = types_in(agent, world)
    # on a world other processes share, the call holds a claim on its subject (see _hold),
    # and its commit is fenced by the lease, as a run's instance is
    worker = Worker.join(world, lease=lease) if world.store.shared else None
    runner = agent._runner(
        worker.world if worker is not None else world,
        tr,
        Environment(),
        types_of,
        policy=Policy(allow, given=frozenset({approval.strip().lower()} if approval else ())),
    )
    if worker is not None:  # its hold at the doubt node settles where a step's would
        worker.settles_holds_of(runner)
    started = runner.env.now().isoformat()
    tr.emit(
        "header",
        trace_version=TRACE_VERSION,
        call=str(tool.iri),
        args=args,
        definitions_digest=defs.digest,
        world_digest=digest,
        started=started,
        store=world.store.name,  # where a call it left in doubt is held, as a run's says
        **(runner.ran_by or {}),
        **({"lent": lent.count()} if lent is not None else {}),
        **runner.env.handed(),
    )
    nodes: dict[str, Node] = {}
    keyed_here = False  # its key held in this process (take_key), given back at the end
    result: CallResult | None = None  # the call's outcome, once known
    unclosed: BaseException | None = None  # what closing raised once the outcome was known
    try:
        nodes, payload, problems = check_arguments(tool, defs, args, world)
        if problems:
            raise _Refused(
                "refused",
                "schema",
                f"the arguments do not fit the input schema of {tool.name}: " + "; ".join(problems),
            )
        _check_types(tool, defs, nodes, types_of)
        if worker is not None:  # from here to its commit, no other process calls on it
            await _hold(worker, _claim_key(tool, nodes), idempotency_key)
        key = doubt_key(tool, _as_text(nodes))
        # the keys versions before kept such a call at in doubt (a tool that is not idempotent)
        formers = () if tool.idempotent else former_doubt_keys(tool, _as_text(nodes))
        printed = ""
        if idempotency_key is not None:
            # a policy that refuses the tool is not handed what an allowed call answered
            _check_policy(tool, allow)
            printed = fingerprint(tool.iri, payload)
            keyed_here = take_key(world.store, idempotency_key)
            if not keyed_here:
                raise _Refused("refused", "busy", _KEY_BUSY)
            _check_key(tool, defs, world, idempotency_key, printed, key, formers)
        if take_approval is not None:  # found and used up by one call: this one, held
            approval = take_approval()
            runner.policy = Policy(allow, frozenset({approval} if approval else ()))
        intent = None if tool.idempotent else doubt_node(tool.iri, key)
        # the IRIs the tool had when calls of it now in doubt were made (_renamed_tools)
        renamed = runner.former_names_of(tool) if intent is not None else ()
        if intent is not None:
            _check_in_doubt(tool, defs, key, world, formers, renamed)
        _check_preconditions(tool, defs, nodes, world)
        if idempotency_key is None:  # a keyed call's was checked before its key was read
            _check_policy(tool, allow)
        _check_approval(tool, payload, approval, printed)
        if issued_only and approval is not None and tool.requires_approval:
            _check_issued(tool, world, approval, server_of(tool, runner.mcp.servers))
        if (
            take_approval is None
            and approval is not None
            and tool.requires_approval
            and _check_unused(tool, world, approval, idempotency_key)
        ):  # the retry of the call that used it: used again, not used up again
            runner.policy = Policy(allow, frozenset({given_print(approval)}))
        missing = missing_env(tool, runner.mcp.servers)
        if missing:
            raise _Refused(
                "refused",
                "env",
                f"{tool.name} reads environment variable"
                f"{'s' if len(missing) > 1 else ''} {', '.join(missing)}, not set; "
                f"export {missing[0]}=… before calling it",
            )
        # an adapter's host outside the policy: refused here, as an HTTP binding's (it failed
        # each commit once the tool had decided)
        unsendable = (
            adapter_problem(tool.adapter, hosts_of(runner.registry)) if tool.adapter else None
        )
        if unsendable is not None:
            raise _Refused("refused", "binding", f"{tool.name}: {unsendable}")
        try:
            binding = runner.binding(tool)
            await binding.check()
            runner.prechecks.refuse_rejected_returns(binding)
        except ToolError as e:
            raise _Refused("refused", "binding", str(e)) from None
        if issued_only and approval is not None and tool.requires_approval:
            _check_code(tool, world, approval, binding.code)
        try:
            keyed: list[tuple] = []
            answer = None
            if idempotency_key is not None:
                at = RdfLiteral(runner.env.now().isoformat(), datatype=XSD.dateTime)
                keyed = key_record(idempotency_key, printed, at)
                answer = _KeyedAnswer(tool, idempotency_key)
            with making(intent):  # reconcile in this process leaves it be meanwhile
                landed = lent.keep if lent is not None else None
                land_lent = lent.land_with if lent is not None else None
                try:
                    record = await runner.call_tool(
                        tool, nodes, intent, keyed, answer, landed, land_lent
                    )
                except LeaseLost:
                    # paused or away past its lease: what it lent may be taken back since,
                    # and its commit was refused; the tool was called, so say what to do, as
                    # any call left in doubt says it (its envelope, exit 5)
                    lent_any = lent is not None and lent.count() > 0
                    said = _lease_lost(
                        tool, key, defs, intent is not None, lent_any, world.store.persistent
                    )
                    kind = "outcome_unknown" if intent is not None else "lease_lost"
                    raise _Refused("refused", kind, said) from None
        except Conflict as e:
            if not e.present:
                raise
            if idempotency_key is not None:  # another call with the key landed first
                _check_key(tool, defs, world, idempotency_key, printed, key, formers)
            # a step or another call took the doubt node since it was looked at: say whose
            _check_in_doubt(tool, defs, key, world, formers, renamed)
            raise _Refused(
                "refused",
                "outcome_unknown",
                f"another call of {tool.name}{doubt_place(key, defs.name)} was being made at "
                "the same moment; call again (its precondition is then checked anew)",
            ) from None
        running = record.error.running if isinstance(record.error, OutcomeUnknown) else None
        if intent is not None and running is not None:
            # a claim on the subject stays held meanwhile; one on the tool itself (a tool
            # with no subject) would hold back its every call, for as long as this one hangs
            keep = worker if worker is not None and _claim_key(tool, nodes) != tool.iri else None
            # its thread, acting on, counts as this call being made (:func:`outlast`) and
            # keeps the claim held (reconcile and calls elsewhere are busy) until it returns
            outlast(running, intent, keep.leave if keep is not None else None)
            if keep is not None:
                worker = None  # its claim is given back when the call's thread returns
        if record.status == "blocked" and isinstance(record.error, CallInFlight):
            # it yielded at the doubt node to a step calling there at the same moment
            raise _Refused("refused", "outcome_unknown", str(record.error))
        # a keyed call's answer, as recorded at its key, is this call's: built there once
        built = answer.result if answer is not None else None
        result = built if built is not None else _from_record(tool, record)
        made = json.dumps([_as_text(nodes)])  # its arguments, as its intent kept them
        if intent is not None and isinstance(record.error, OutcomeUnknown):
            assert result.error is not None
            # what was known of the call leads — the tool's own words (its answer was cut off
            # after the charge was sent) or the failure seen (a timeout) — then what to do:
            # the person asked to check with the system it acts on read only the latter
            seen = str(record.error.cause or record.error).rstrip(". ")
            result.error = dataclasses.replace(
                result.error,
                message=f"{seen}. "
                + doubt_message(tool, key, defs.name, args=made, persistent=world.store.persistent),
            )
        elif intent is not None and runner.left_in_doubt(record, tool):
            assert result.error is not None  # it answered, and nothing of it landed
            result.error = dataclasses.replace(
                result.error,
                message=result.error.message
                + ". "
                + doubt_message(tool, key, defs.name, args=made, persistent=world.store.persistent),
            )
    except _Refused as r:
        agent.take_back_individuals(world, placed)  # "nothing changed in the world"
        tr.emit("refused", tool=str(tool.iri), kind=r.kind, message=r.message)
        result = CallResult(tool.iri, r.status, error=CallError(r.kind, r.message))
    except _Replayed as r:
        agent.take_back_individuals(world, placed)  # nothing called, nothing changed
        tr.emit("replayed", tool=str(tool.iri), key=r.key, first_started=r.started)
        result = r.result
    finally:
        if result is None:  # stopped short of an outcome (a cancel): the events written
            tr.close()  # stand, and the file is closed, not left to the garbage collector
        try:
            await runner.aclose()  # may raise (a cancel scope, an MCP session's close) ...
        except BaseException as e:
            if result is None:  # the call itself stopped: that is what the caller hears
                raise
            unclosed = e  # the outcome stands, and its trace ends as any call's does
        finally:  # ... and the key and the claims are given back all the same
            if keyed_here:
                release_key(world.store, cast(str, idempotency_key))
            if worker is not None:
                worker.leave()  # the subject's claim given back with the lease
    assert result is not None  # each way out of the try without one raised
    if lent is not None and (taken := lent.take_back()):
        tr.emit("taken_back", quads=taken, world_digest=traced_digest(world, tr))
    if lent is not None and (left := lent.left_note()) is not None:
        result.notes.append(left)  # the outcome stands: told, not raised in its place
    tr.emit("end", status=result.status, world_digest=traced_digest(world, tr))
    tr.close()
    if unclosed is not None and not isinstance(unclosed, Exception):
        raise unclosed  # a Ctrl-C or a cancel while closing, once the trace has its end
    if unclosed is not None:
        result.notes.append(_unclosed_note(tool, result.status, unclosed))
    result.trace, result.names = tr, _namer(defs, world)
    for term in [t for triple in result.effects for t in triple]:
        result.names(term)  # named now, while the world is open to ask
    result.call = _call_text(tool, nodes if nodes else {}, result.names, args)
    result.content.insert(0, {"type": "text", "text": _summary(result)})
    result.content.extend({"type": "text", "text": f"note: {n}"} for n in result.notes)
    if isinstance(trace, str | Path):
        result.artifacts.append({"type": "trace", "path": str(trace)})
    if idempotency_key is not None and result.replayed is None:
        result.artifacts.append({"type": "idempotency_key", "key": idempotency_key})
    return result


def _lease_lost(
    tool: Tool, key: Node, defs: Definitions, in_doubt: bool, lent: bool, persistent: bool
) -> str:
    """What a call whose lease ran out before its commit tells its caller: nothing of it
    landed, and the tool was called; a tool that is not idempotent is in doubt from then; and
    the ``--world`` data it ``lent`` may be gone, taken back meanwhile."""
    said = (
        f"the call of {tool.name} lost its lease on the store before its commit (its process "
        "was paused, or away from the server, longer than its lease, HORISMOS_LEASE): nothing "
        "of it landed"
    )
    if lent:
        said += ", and --world data it lent may have been taken back meanwhile"
    if in_doubt:
        return f"{said}. {doubt_message(tool, key, defs.name, persistent=persistent)}"
    return f"{said}; {tool.name} is idempotent: call it again"


def _unclosed_note(tool: Tool, status: CallStatus, error: Exception) -> str:
    """What a caller is told of a binding that failed to close after its call: its session
    or connection, not the call, whose outcome (and the world it left) stands."""
    return (
        f"closing the binding of {tool.name} failed after the call ended {status}: "
        f"{error.__class__.__name__}: {error}; the call's outcome stands"
    )


class _KeyedAnswer:
    """What is recorded at a call's idempotency key of what it answered (its envelope, as
    built here), given to :meth:`Runner.call_tool` for its final commit; the envelope built
    there is the call's answer (:attr:`result`), not built again."""

    def __init__(self, tool: Tool, key: str) -> None:
        self.tool, self.key = tool, key
        self.result: CallResult | None = None

    def __call__(self, rec: StepRecord) -> list[tuple]:
        self.result = _from_record(self.tool, rec)
        return key_answer(self.key, self.result.to_json())


class _Replayed(Exception):
    """A call answered with what the call first made with its idempotency key answered."""

    def __init__(self, key: str, started: str, result: CallResult) -> None:
        super().__init__(key)
        self.key, self.started, self.result = key, started, result


def _check_key(
    tool: Tool,
    defs: Definitions,
    world: World,
    key: str,
    printed: str,
    doubt: Node,
    formers: Sequence[Node] = (),
) -> None:
    """Answer a call whose idempotency ``key`` a call was made with already: what that call
    answered (:class:`_Replayed`), or, refused, why it cannot be (another payload; that call
    in flight, in doubt — at ``doubt`` or one of the keys versions before kept it at,
    ``formers`` —, or settled by hand). Nothing is called."""
    earlier = read_key(world.store, key)
    if earlier is None:
        return
    if earlier.fingerprint != printed:
        raise _Refused(
            "refused",
            "idempotency_key_reused",
            f"the idempotency key given was first given to another call (another tool or "
            f"other arguments, started {earlier.started}): a key names one call, and a retry "
            f"repeats its exact arguments. For a new call of {tool.name}, give a new key",
        )
    if earlier.answer is None:  # the call made with it is in flight or in doubt, or was
        if not tool.idempotent:
            _check_in_doubt(tool, defs, doubt, world, formers)
        raise _Refused(
            "refused",
            "outcome_unknown",
            f"the call of {tool.name} made with the idempotency key given (started "
            f"{earlier.started}) never landed what it answered, and what it left in doubt has "
            "since been cleared by hand (`horismos tools reconcile`): the world says what it "
            "did. To call again, give a new key",
        )
    answer = earlier.answer
    result = CallResult(
        tool.iri,
        answer["status"],
        content=[b for b in answer["content"] if b.get("type") != "text"],
        artifacts=[
            *answer["artifacts"],
            {"type": "idempotency_key", "key": key, "replayed": True, "first": earlier.started},
        ],
        effects=[cast(tuple[Node, Node, Node], tuple(map(from_n3, t))) for t in answer["effects"]],
        gate=answer["gate"],
        error=None if answer["error"] is None else CallError.from_json(answer["error"]),
        replayed=earlier.started,
    )
    raise _Replayed(key, earlier.started, result)


def _claim_key(tool: Tool, nodes: Mapping[str, Node]) -> URIRef:
    """What a call's claim on a shared world is held on: its effect's subject, else the tool
    (one call of such a tool at a time)."""
    subject = nodes.get(tool.effect.subject) if tool.effect else None
    return subject if isinstance(subject, URIRef) else tool.iri


def _as_text(nodes: Mapping[str, Node]) -> dict[str, str]:
    """The arguments as the trace and an intent write them (N-Triples terms)."""
    return {name: n3(node) for name, node in nodes.items()}


_KEY_BUSY = (
    "another call given this idempotency key is being made right now (in this process, or "
    "another on this shared world); ask again with the key once it has finished (it is then "
    "answered that call's answer, or refused if its arguments differ)"
)


async def _hold(worker: Worker, key: URIRef, idempotency_key: str | None = None) -> None:
    """Claim what the call acts on (:func:`_claim_key`) from its precondition check to its
    commit, or refuse the call while another process holds it. Two processes serving
    one shared world checked a precondition each on their own: both saw "not queued yet", and
    a tool that is not idempotent acted twice. The claim is the one ``run --focus`` holds
    (claim, settle when others are about, verify): the first holder calls, and the other,
    refused now or running after, finds the precondition gone. A run's instance on that node
    (its focus) holds it off the same way, and the call holds off the run.

    An ``idempotency_key`` is held with it, all or none: two calls given one key for two
    subjects held a claim each, and both landed, for their commits' "key absent" is judged on
    a snapshot by the Oxigraph server. Held, whoever has the key next reads its record."""
    also = () if idempotency_key is None else (key_node(idempotency_key),)
    try:
        await worker.hold(CATALOG, key, *also)
    except NotHeld as e:
        if e.node != key:
            raise _Refused("refused", "busy", _KEY_BUSY) from None
        raise _Refused(
            "refused",
            "busy",
            f"another process is calling a tool on {key.n3()}, or running a workflow on it, "
            "in this shared world right now; call again once it has finished (its "
            "precondition is then checked anew)",
        ) from None


def _check_in_doubt(
    tool: Tool,
    defs: Definitions,
    key: Node,
    world: World,
    formers: Sequence[Node] = (),
    renamed: Sequence[URIRef] = (),
) -> None:
    """Refuse the call while an earlier one on ``key`` may have acted: a call or a step whose
    outcome never landed, or a workflow step in flight there (or whose process stopped
    mid-call and nobody has continued its instance since); ``formers``: the keys earlier
    versions kept such a call at (:func:`~._intents.former_doubt_keys`), looked at too;
    ``renamed``: the IRIs the tool had when calls of it now in doubt were made, bound the same
    (:mod:`._renamed_tools`), whose nodes on ``key`` are looked at too."""
    # its own IRI on its key first, on each key a version before kept it at, then each
    # former IRI on its key
    places = [(tool.iri, key), *((tool.iri, k) for k in formers), *((w, key) for w in renamed)]
    for was, at in places:
        own = was == tool.iri
        node = doubt_node(was, at)
        stale = read_intent(world.store, node)
        held_as = tool if own else as_former(tool, was)
        if stale is not None and not stale.in_flight:
            persistent = world.store.persistent
            if own:
                said = doubt_message(tool, key, defs.name, stale, persistent=persistent)
            else:
                said = renamed_message(tool, was, key, defs.name, stale, persistent=persistent)
            raise _Refused("refused", "outcome_unknown", said)
        # a step holds the node while it calls (under a former IRI, a process of the
        # definitions before the rename); one announced before steps did is found by query
        by = stale.instance if stale is not None else holder(world.store, node)
        if by is None and own and at == key:
            by = next((i.instance for i in open_step_intents(world.store, tool, key)), None)
        if by is not None:
            said = in_flight_message(held_as, key, defs.name, by)
            raise _Refused("refused", "outcome_unknown", said)


async def reconcile_call(
    catalog: ToolIndex,
    tool: Tool,
    args: Any,
    world: World,
    *,
    operator: str | None = None,
    verdict: str | None = None,
) -> Intent | None:
    """Clear the intent a call of ``tool`` with ``args`` left in doubt: an operator has
    checked whether it acted. The intent cleared, or None when there was none. On a shared
    world the call's key is claimed first, so a call in flight elsewhere is not cleared.
    The same commit records who cleared it (``operator``, else the OS user), when, and
    ``verdict`` (:mod:`._reconciled`): clearing it left no trace of either."""
    if verdict is not None and verdict not in VERDICTS:
        raise UsageError(
            f"verdict {verdict!r}: give one of {', '.join(VERDICTS)} (what you found the call "
            "in doubt did: it took effect, or it did not)"
        )
    who = operator_name(operator)
    defs = catalog.definitions
    nodes, _, problems = check_arguments(tool, defs, args, world)
    if problems:
        raise UsageError(
            f"{tool.name}: the arguments do not fit its input schema: " + "; ".join(problems)
        )
    if tool.idempotent:
        raise UsageError(
            f"{tool.name} is idempotent: its calls are never held in doubt, so there is "
            "nothing to reconcile"
        )
    key = doubt_key(tool, _as_text(nodes))
    node = doubt_node(tool.iri, key)
    worker = Worker.join(world) if world.store.shared else None
    try:
        if worker is not None:
            try:
                await _hold(worker, _claim_key(tool, nodes))
            except _Refused as r:
                raise UsageError(r.message) from None
        stale = read_intent(world.store, node)
        if stale is None and holder(world.store, node) is None:
            # left by an earlier version, keyed by its numbers' datatype or text
            for former in former_doubt_keys(tool, _as_text(nodes)):
                at = doubt_node(tool.iri, former)
                earlier = read_intent(world.store, at)
                if earlier is not None or holder(world.store, at) is not None:
                    node, stale = at, earlier
                    break
        if stale is not None and node in CALLING:
            raise UsageError(
                f"a call of {tool.name}{doubt_place(key, defs.name)}"
                " is being made in this process right now; reconcile once it has finished "
                "(if its outcome is then unknown, it is held in doubt)"
            )
        by = holder(world.store, node) if stale is None else None
        if by is not None:  # held by a step's call: in flight, or its process stopped
            if open_intent(world.store, by) is not None:
                raise UsageError(in_flight_message(tool, key, defs.name, by))
            # its instance has since let go of the call without settling it here
            stale = Intent(by, tool.iri, tool.iri, "", "[]", tuple(holding_at(node, by)))
        if stale is None and by is None:  # held under a name the tool had: say which
            _held_under_former_name(tool, defs, key, world)
        if stale is not None:
            record = reconciliation(
                stale, node, tool.iri, operator=who, verdict=verdict, at=dt.datetime.now(dt.UTC)
            )
            (worker.world if worker is not None else world).commit(
                Change(add=record, remove=list(stale.quads), fresh=(cast(URIRef, record[0][3]),))
            )
        return stale
    finally:
        if worker is not None:
            worker.leave()


def _held_under_former_name(tool: Tool, defs: Definitions, key: Node, world: World) -> None:
    """Refuse to say "nothing in doubt" of ``tool`` on ``key`` while a call of it made under a
    former IRI is in doubt there (:mod:`._renamed_tools`): its calls are held, and the message
    gives the command that clears it, under that IRI."""
    recorded = recorded_bindings(world.store)
    for was in former_names([tool], recorded).get(tool.iri, ()):
        earlier = read_intent(world.store, doubt_node(was, key))
        if earlier is not None:
            said = renamed_message(
                tool, was, key, defs.name, earlier, persistent=world.store.persistent
            )
            raise UsageError(
                f"nothing of {tool.name} under its own name is in doubt here, but {said}"
            )


def _check_types(
    tool: Tool, defs: Definitions, nodes: Mapping[str, Node], types_of: Callable[[Node], set[Node]]
) -> None:
    problems = []
    for name, node in nodes.items():
        arg = tool.arg(name)
        assert arg is not None
        if arg.is_class:
            types = types_of(node)
            if not types & defs.classes_of(arg.type):
                has = (
                    "a " + ", ".join(sorted(defs.name(t) for t in types))
                    if types
                    else "not a typed node of the world"
                )
                problems.append(
                    f'argument "{name}" must be a node of class '
                    f"{defs.name(arg.type)}; {defs.name(node)} is {has}"
                )
        elif not (isinstance(node, RdfLiteral) and literal_fits(node, arg.type)):
            problems.append(
                f'argument "{name}" must be a literal of datatype {defs.name(arg.type)}'
            )
    if problems:
        raise _Refused("refused", "argument_type", "; ".join(problems))


def _check_preconditions(
    tool: Tool, defs: Definitions, nodes: Mapping[str, Node], world: World
) -> None:
    if tool.requires is None or world.store.solutions(tool.requires, nodes):
        return
    pattern = world.store.failing(tool.requires, nodes)
    raise _Refused(
        "blocked",
        "precondition",
        f"this precondition of {tool.name} does not hold for these arguments: "
        f"{' '.join(pattern.split())}",
    )


def _check_policy(tool: Tool, allow: frozenset[str]) -> None:
    refused = refusal(Policy(allow), tool)  # the same policy a workflow step is held to
    if refused is not None:
        raise _Refused("refused", "policy", str(refused))


def _check_approval(
    tool: Tool, payload: Mapping[str, Any], approval: str | None, printed: str = ""
) -> None:
    """Refuse a call of a tool that needs approval without one, or with one for another
    payload; ``printed``: the payload's fingerprint, when the caller has it already."""
    if not tool.requires_approval:
        return
    how = how_to_approve(tool.name)
    if approval is None:
        raise _Refused(
            "refused",
            "approval",
            f"{tool.name} requires approval (horis:requiresApproval) and none was given; {how}",
        )
    if given_print(approval) != (printed or fingerprint(tool.iri, payload)):
        raise _Refused(
            "refused",
            "approval",
            "the approval given is for a different payload "
            f"(tool or arguments); an approval holds for one exact payload: {how}",
        )


def _check_issued(tool: Tool, world: World, approval: str, server: McpServer | None) -> None:
    """Refuse an approval ``tools approve`` did not issue in this world: a fingerprint anyone
    can compute, with any text after its dot, approved nothing. And one it issued for the
    tool as it was defined then, not now (``server``: the MCP server its binding names): a
    person who approved a call of one binding has not approved the tool rebound to other
    code or another endpoint, as a workflow step's approval (:func:`~._policy.pending`)."""
    if not given_issued(world.store, approval):
        raise _Refused(
            "refused",
            "approval_not_issued",
            "the approval given was not issued by `horismos tools approve` in this world: "
            + how_to_approve(tool.name),
        )
    if not given_holds_for(world.store, approval, tool, server):
        raise _Refused(
            "refused",
            "approval_stale",
            f"the approval given was issued for an earlier definition of {tool.name} (its "
            "binding, its MCP server, effect or side effect has changed since): it does not "
            "hold for the tool as defined now; approve again: " + how_to_approve(tool.name),
        )


def _check_code(tool: Tool, world: World, approval: str, code: str | None) -> None:
    """Refuse an approval ``tools approve`` issued for other code than the call's binding
    runs (``code``): the same ``python:`` name, another ``--tools`` file (or this one
    edited). One issued without the code named holds, as it did."""
    stale = code_stale(world.store, tool, approval, lambda: code)
    if stale is not None:
        raise _Refused("refused", "approval_stale", stale)


def _check_unused(tool: Tool, world: World, approval: str, idempotency_key: str | None) -> bool:
    """Refuse an approval given on the command line that a call has used up already: it
    allowed that call, and a retry given it again (a script's loop) would make another.
    Whether it was used by this very call, retried: an idempotent tool's call given the same
    idempotency key that got no answer (its key left free), which may use it again — it is
    the call the approval allowed, and calling such a tool again is safe. The payload is the
    one approved (checked before), and a key names one call."""
    used = given_used(world.store, approval)
    if used is None:
        return False
    if (
        tool.idempotent
        and idempotency_key is not None
        and given_used_with(world.store, approval, key_node(idempotency_key))
    ):
        return True
    raise _Refused(
        "refused",
        "approval_used",
        f"the approval given was used up by a call of {tool.name} at {used}: an approval "
        "allows one call. If another call of exactly these arguments is intended, get a "
        f"fresh one (each is new): {how_to_approve(tool.name)}",
    )


def _from_record(tool: Tool, rec: StepRecord) -> CallResult:
    status = cast(CallStatus, rec.status)
    result = CallResult(tool.iri, status, record=rec, effects=list(rec.effects))
    if rec.result and rec.result[0] is not None:
        result.content.append({"type": "json", "json": _jsonable(rec.result[0])})
    if rec.status in ("completed", "rejected"):
        result.gate = {
            "conforms": rec.status == "completed",
            "messages": [m.to_json() for m in rec.messages],
        }
    if rec.graph is not None:
        result.artifacts.append({"type": "named_graph", "iri": str(rec.graph)})
    capture = getattr(rec.result[0], "capture", None) if rec.result else None
    if capture:  # a command's byte counters, dropped bytes and truncation flags
        result.artifacts.append({"type": "output_capture", **capture})
    if rec.status == "blocked" and isinstance(rec.error, ShapesBrokenAlready):
        result.error = CallError.of(rec.error)
    elif rec.status == "blocked":
        result.error = CallError(
            "precondition",
            f"this precondition of {tool.name} does not hold: "
            f"{' '.join((rec.blocked_by or '').split())}",
            rec.error,
        )
    elif rec.error is not None:
        result.error = CallError.of(rec.error)
    return result


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v) for v in value]
    return json_value(value)


def _namer(defs: Definitions, world: World) -> Callable[[Node], str]:
    """Nodes as CURIEs that read back as them, asking the world which namespace a prefix
    the files bind to several means (as `run` prints them), one triple a node."""
    exists = functools.partial(holds_subject, world)

    @functools.cache
    def name(node: Node) -> str:
        if isinstance(node, URIRef):
            return defs.name(node, exists)
        if isinstance(node, RdfLiteral):
            return node.n3(defs.graph.namespace_manager)
        return str(node)

    return name


def _call_text(
    tool: Tool, nodes: Mapping[str, Node], name: Callable[[Node], str], given: Any = None
) -> str:
    """The call as a person reads it: each argument by its node's name; one the schema
    refused (``given``, as the caller sent it) by its JSON, so ``patient=42`` is seen beside
    the refusal, not left out as if it had not been given."""
    given = given if isinstance(given, Mapping) else {}
    shown = [
        f"{a.name}={name(nodes[a.name])}"
        if a.name in nodes
        else f"{a.name}={_given_text(given[a.name])}"
        for a in ordered_args(tool)
        if a.name in nodes or a.name in given
    ]
    shown += [f"{k}={_given_text(v)}" for k, v in given.items() if tool.arg(str(k)) is None]
    return f"{tool.name}({', '.join(shown)})"


def _given_text(value: Any) -> str:
    """A refused argument's value as JSON, cut short: it is read in one line."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


_UNKEPT = (
    "passed the gate; not kept: the world was in memory and ends with this call "
    "(give --out F.trig or a persistent --store to keep them)"
)


_REPLAYED = (
    "replayed: the answer of the call first made with this idempotency key (started {}); "
    "nothing was called now"
)


def _summary(result: CallResult, *, kept: bool = True) -> str:
    if result.replayed is not None:
        return f"{result.call}: {_REPLAYED.format(result.replayed)}: {result.status}"
    if result.status == "completed":
        n = len(result.effects)
        where = "landed" if kept else _UNKEPT
        return f"{result.call} completed: {n} effect{'' if n == 1 else 's'} {where}"
    assert result.error is not None
    if result.status == "partial":  # what the system of record accepted landed
        n = len(result.effects)
        where = "landed" if kept else _UNKEPT
        changed = f"{n} effect{'' if n == 1 else 's'} {where}"
    else:
        changed = "nothing changed"
    return (
        f"{result.call} {result.status.replace('_', ' ')} ({result.error.kind}): "
        f"{result.error.message}; {changed}"
    )
