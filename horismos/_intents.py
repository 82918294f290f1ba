"""Intents: a non-idempotent tool's call is announced in the instance state before it is made.

A process can die between calling a tool and committing what it returned. For an idempotent
tool that is harmless: the resumed instance calls it again. For any other the call may already
have acted (a ticket issued, a payment sent), so it must not be made twice. Hence:

1. before the call, the runner commits an *intent* into the instance state graph — a
   ``horis:StepExecution`` with its step, tool, arguments and start time and no end — guarded
   by the instance's ``horis:version``;
2. the step's final commit (effects and new state, or the error) removes it in the same
   transaction;
3. a resumed instance that finds an intent at its current step therefore knows a call was in
   flight when the process stopped: it does not call again, and the step fails with
   :class:`~horismos.OutcomeUnknown`, taking ``horis:onError`` (or failing the instance) so an
   operator can find out what happened and reconcile.

Intents live in ``urn:horismos:instances`` with the rest of the state, so a trace's snapshot
holds one when a run starts from a crashed instance, and replay decides the same way.

A call that may have acted and never landed is *in doubt*, and what would act twice then is
the next call on the same thing — not only this instance's: a rerun that starts a new instance
after this one failed, a catalog call (``horismos tools call``, ``serve``), another person or
agent calling again after a crash or a timeout. So it is also kept at a node named after the
tool and what the call acts on (its effect's subject, else its very arguments:
:func:`doubt_key`, :func:`doubt_node`), which every lane looks at before calling a tool that
is not idempotent:

- a catalog call keeps its intent there while it is in flight, saying so (:func:`calling`);
  its commit removes it, or, when the outcome is unknown, only that it is being made;
- a step holds the node while its call is made (:func:`holds`: two quads, written with its
  intent, removed with it);
- a step whose call was sent and never answered, or whose instance is found with an open
  intent, completes what it holds there into an intent with the commit that records the
  failure (:func:`doubt_marks`): the call is then in doubt;
- what is kept there in full (a call in doubt, a catalog call's intent) records the binding
  the call was made through (:func:`binding_mark`): a tool renamed since, bound the same, is
  held there too (:mod:`._renamed_tools`);
- in doubt there, a step or call of that tool on that subject is not made: it fails (a step,
  with :class:`~horismos.OutcomeUnknown`, taking ``horis:onError``) or is refused (a call),
  until someone who has checked with the system it acts on clears it
  (``horismos tools reconcile``); held by another instance's step or a catalog call being
  made, a step is blocked (:class:`~horismos.CallInFlight`) and a call refused.

Every write that puts a call at a node requires :func:`held` absent in its own transaction
(``Change.absent``). Looking first and writing after, two processes — or two instances of one
process, between their awaits — could both find the node free and both call.
"""

from __future__ import annotations

import json
import re
import shlex
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from decimal import Context, Decimal
from typing import Any, cast

from rdflib import RDF, RDFS, XSD, Literal, URIRef
from rdflib.term import Node
from rdflib.util import from_n3

from ._bindings.wire import json_value
from ._datatypes import NUMERIC
from ._errors import OutcomeUnknown
from ._literals import plain_literal
from ._model import Tool
from ._stores import Store
from ._stores.base import INSTANCE, Quad, doubt_node
from ._vocab import HORIS, NS, PROV
from ._world import INSTANCES

__all__ = [
    "CALLING",
    "Intent",
    "announce",
    "binding_mark",
    "calling",
    "doubt_key",
    "doubt_keys",
    "doubt_marks",
    "doubt_message",
    "doubt_node",
    "doubt_place",
    "earlier_said",
    "end_calling",
    "former_doubt_keys",
    "former_holds",
    "held",
    "held_by_rejected",
    "holder",
    "holding_at",
    "holds",
    "in_flight_message",
    "key_at",
    "making",
    "note_calling",
    "open_intent",
    "open_step_intents",
    "outlast",
    "read_intent",
    "reconcile_args",
    "reconcile_in_python",
    "settling_at",
    "yields_to",
]

# rdflib answers RDF.type, PROV.x and the like through a metaclass __getattr__ on each use
_TYPE, _COMMENT, _STEP_EXECUTION = RDF.type, RDFS.comment, HORIS.StepExecution
_ACTIVITY, _STARTED, _STEP = PROV.Activity, PROV.startedAtTime, HORIS.step
_INSTANCE, _STATUS, _RUNNING, _TOOL = HORIS.instance, HORIS.status, HORIS.Running, HORIS.tool
_CALLED_BINDING = HORIS.calledBinding

CALLING: Counter[URIRef] = Counter()
"""The doubt nodes of the catalog calls this process is making right now (how many: two at
once on one node, the second is refused, and its end must not end the first's). A call's
intent says it is in flight (:func:`calling`) whether its process is alive or was killed:
reconcile asks here, and refuses to clear a call still being made."""


_CALLING_LOCK = threading.Lock()  # a call abandoned at its timeout ends on its own thread


@contextmanager
def making(node: URIRef | None) -> Iterator[None]:
    """Note in :data:`CALLING` that a catalog call at ``node`` is being made meanwhile."""
    if node is None:
        yield
        return
    note_calling(node)
    try:
        yield
    finally:
        end_calling(node)


def note_calling(node: URIRef) -> None:
    """One more call being made at ``node`` in this process (:data:`CALLING`)."""
    with _CALLING_LOCK:
        CALLING[node] += 1


def end_calling(node: URIRef) -> None:
    """One call fewer being made at ``node`` in this process (:data:`CALLING`)."""
    with _CALLING_LOCK:
        CALLING[node] -= 1
        if not CALLING[node]:
            del CALLING[node]


def outlast(
    running: threading.Event, node: URIRef, then: Callable[[], object] | None = None
) -> None:
    """Keep a call abandoned at its timeout in flight at ``node`` while its thread still
    acts: a sync Python function cannot be stopped, so it goes on after the caller was told
    "timed out". Meanwhile it stays noted in :data:`CALLING` (reconcile in this process
    refuses to clear it); once the thread returns, ``then`` runs (a catalog call gives back
    its subject's claim) and the note goes. Cleared meanwhile, the next call on that subject
    went out while the first was still acting: two charges."""
    note_calling(node)

    def release() -> None:
        running.wait()
        try:
            if then is not None:
                then()
        except Exception:  # the store is away: a claim's lease lapses on its own
            pass
        finally:
            end_calling(node)

    threading.Thread(target=release, name="horismos-abandoned-call", daemon=True).start()


def calling(node: URIRef) -> Quad:
    """What a catalog call's intent at ``node`` says while the call is being made: a step
    meeting it is blocked rather than failed, and another call is told to call again."""
    return (node, _STATUS, _RUNNING, INSTANCES)


@dataclass(frozen=True)
class Intent:
    """A call announced for ``step`` of an instance, as stored: what
    :meth:`Catalog.reconcile` clears once a person has checked whether the call acted."""

    instance: URIRef
    step: URIRef
    tool: URIRef
    started: str
    args: str
    quads: tuple[Quad, ...]

    @property
    def in_flight(self) -> bool:
        """A catalog call's intent while it is being made (or its process stopped mid-call):
        kept with :func:`calling`, which its commit removes whatever came of the call."""
        return any(q[1] == _STATUS and q[2] == _RUNNING for q in self.quads)

    def unknown(
        self, tool: Tool, step_name: str, name: Callable[[Node], str], held: bool
    ) -> OutcomeUnknown:
        """The failure of the step whose call this intent announced, found open by a later
        process: ``held`` when the call is now kept in doubt for every lane, which the first
        message must say, with the command that clears it, not only the next rerun's."""
        clear = ""
        if held:
            call = self._only_call()
            key = doubt_key(tool, call) if call is not None else None
            given = reconcile_args(tool, key, self.args, name) if key is not None else None
            on = doubt_place(key, name) if key is not None else ""
            clear = (
                f"; until then further calls of {tool.name}{on} are held in doubt, in every "
                f"lane: once checked, clear them with `horismos tools reconcile {tool.name} … "
                f"--args {given or 'JSON'}` on the same store "
                f"({reconcile_in_python(tool, given)} in Python)"
            )
        return OutcomeUnknown(
            f"{tool.name} was called at {step_name} (started {self.started}, arguments "
            f"{self.args}) and the process stopped before its result was committed. It is not "
            "idempotent, so it is not called again: check with the system it acts on whether "
            f"the call took effect, and record the outcome in the world{clear} (horis:onError "
            "is where the workflow goes on from)",
            step=str(self.step),
            tool=str(self.tool),
        )

    def _only_call(self) -> Mapping[str, Any] | None:
        """The one call the intent announced (its arguments as the trace writes them); None
        for several (a ``horis:forEach``'s, each reconciled on its own) or none readable."""
        try:
            calls = json.loads(self.args)
        except ValueError:
            return None
        if isinstance(calls, list):
            calls = calls[0] if len(calls) == 1 else None
        return calls if isinstance(calls, dict) else None


# what json.dumps(..., sort_keys=True, ensure_ascii=False) builds on every call (its options
# differ from the defaults), built once: the same text, ~2 µs less an intent
_ARGS_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False)


def _node(instance: URIRef) -> URIRef:
    return URIRef(f"{instance}:intent")


def doubt_key(tool: Tool, args: Mapping[str, Any], across: bool = True) -> Node:
    """What a call acts on, from its arguments as the trace writes them (N-Triples terms):
    its effect's subject; else, for a tool with no subject to act on, these very arguments
    (one SMS never answered holds back that SMS, not every one), numbers by value.

    ``across``: an integer or a decimal by its value whatever its datatype (``12``,
    ``"12"^^xsd:int`` and ``12.0`` are one amount, sent as one JSON number); False, by its
    value within its datatype, as versions before did (a replay of a run they recorded
    writes its marks where they did)."""
    value = args.get(tool.effect.subject) if tool.effect else None
    if isinstance(value, str) and value.startswith("<") and value.endswith(">"):
        return URIRef(value[1:-1])
    keyed = _by_value if across else _by_value_within
    return plain_literal(_ARGS_JSON.encode({k: keyed(v) for k, v in args.items()}))


def former_doubt_keys(tool: Tool, args: Mapping[str, Any]) -> tuple[Node, ...]:
    """The keys versions before kept a call with ``args`` at, where they are not
    :func:`doubt_key`'s: by its numbers' value within their datatype (``"12"^^xsd:decimal``,
    where it is ``"12"^^xsd:integer`` now), and before that by their text as given
    (``"12.0"^^xsd:decimal``). A call or step one of them left in doubt, a payment of
    ``12.0`` say, is looked for there too and reconciled there: keyed anew, it was no longer
    held, and the next payment was made. Empty for a call on a subject or with no number
    written otherwise: only such a call costs a look more."""
    value = args.get(tool.effect.subject) if tool.effect else None
    if isinstance(value, str) and value.startswith("<") and value.endswith(">"):
        return ()  # kept at its subject, as every version kept it
    if all(_by_value(v) is v for v in args.values()):
        return ()  # no number written otherwise: every version's key is today's
    key = doubt_key(tool, args)
    found = dict.fromkeys(
        (doubt_key(tool, args, across=False), plain_literal(_ARGS_JSON.encode(dict(args))))
    )
    found.pop(key, None)
    return tuple(found)


def doubt_keys(tool: Tool, args: Mapping[str, Any]) -> tuple[Node, ...]:
    """:func:`doubt_key` of a call, then its :func:`former_doubt_keys`: every key a call with
    ``args`` was ever kept in doubt at."""
    return (doubt_key(tool, args), *former_doubt_keys(tool, args))


_TYPED_NUMBER = re.compile(r'"([^"\\]*)"\^\^<([^>]*)>')
_CANONICAL = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]*[1-9])?")
"""A decimal or an integer written as its doubt key writes it: no sign but a minus, no
leading or trailing zero, no point in a whole number."""
_WHOLE = re.compile(r"-?(?:0|[1-9][0-9]*)")
"""A whole number as its doubt key writes it."""
_FRACTION = re.compile(r"-?(?:0|[1-9][0-9]*)\.[0-9]*[1-9]")
"""A number with a fraction as its doubt key writes it."""
_LEXICAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
"""An XSD decimal's (or, without a point, integer's) lexical form."""
_NUMBERS = frozenset(str(t) for t in NUMERIC)  # the datatypes' IRIs as a key's text has them
_FLOATS = frozenset({str(XSD.double), str(XSD.float)})
_INTEGER, _DECIMAL = str(XSD.integer), str(XSD.decimal)


def _by_value(text: Any) -> Any:
    """An argument as its doubt key writes it: a number by its value, as the tool receives
    it. An integer of any XSD integer datatype and a decimal are one value space (XSD
    derives the integers from ``xsd:decimal``): ``12``, ``"12"^^xsd:int``, ``"+012"`` and
    ``12.0`` are one amount, sent as one JSON number (``12``) to an MCP, HTTP or command
    tool, and to a Python one as equal values (``12 == Decimal("12.0")``), which its approval
    fingerprint counts as one payload too. So a whole number is written as an
    ``xsd:integer`` (``"12"^^xsd:integer``), any other as an ``xsd:decimal`` in its shortest
    form (``"12.5"^^xsd:decimal``); a double as Python, rdflib and the stores write it
    (``12.0``), by value within its datatype: a tool receives ``12.0``, a float, and its
    approval is of another payload than ``12``'s. Anything else as given. Keyed by its
    datatype, a payment of 12 a step read from the world (an ``xsd:integer``) left in doubt
    was made again by a call of 12 for an ``xsd:decimal`` argument."""
    found = _TYPED_NUMBER.fullmatch(text) if type(text) is str else None
    if found is None or (datatype := found[2]) not in _NUMBERS:
        return text
    if datatype in _FLOATS:
        return _by_value_within(text)
    lexical = found[1]
    if datatype == _INTEGER and _WHOLE.fullmatch(lexical) and lexical != "-0":
        return text  # the usual: an integer already written so (its key as it always was)
    if datatype == _DECIMAL and _FRACTION.fullmatch(lexical):
        return text
    if not _LEXICAL.fullmatch(lexical):  # not a number of its datatype: as given
        return text
    value = Decimal(lexical)
    if value == value.to_integral_value():
        return f'"{int(value)}"^^<{_INTEGER}>'
    exact = Context(prec=max(len(value.as_tuple().digits), 1))
    return f'"{format(value.normalize(exact), "f")}"^^<{_DECIMAL}>'


def _by_value_within(text: Any) -> Any:
    """An argument as versions before keyed it: a number by its value within its datatype
    (``12``, ``12.0`` and ``12.00`` one ``xsd:decimal``; ``"12"^^xsd:int`` another key), in
    one form (a decimal or an integer as a JSON number writes it, ``12``, ``12.5``; a double
    as Python, rdflib and the stores write it, ``12.0``); anything else as given. A number
    already written so keeps its text, and with it the key an earlier call wrote."""
    found = _TYPED_NUMBER.fullmatch(text) if type(text) is str else None
    if found is None or (datatype := found[2]) not in _NUMBERS:
        return text
    lexical = found[1]
    try:
        if datatype in _FLOATS:
            canonical = repr(float(lexical)).replace("inf", "INF").replace("nan", "NaN")
        elif _CANONICAL.fullmatch(lexical) and lexical != "-0":
            return text
        else:
            value = Decimal(lexical)
            if not value.is_finite():
                return text
            exact = Context(prec=max(len(value.as_tuple().digits), 1))
            canonical = format(value.normalize(exact), "f") if value else "0"
    except (ValueError, ArithmeticError):  # not a number of its datatype: as given
        return text
    return text if canonical == lexical else f'"{canonical}"^^<{datatype}>'


def doubt_place(key: Node, name: Callable[[Node], str]) -> str:
    """`` on :o1`` for a call on a subject, `` with these arguments`` for one keyed by them."""
    return f" on {name(key)}" if isinstance(key, URIRef) else " with these arguments"


def doubt_message(
    tool: Tool,
    key: Node,
    name: Callable[[Node], str],
    earlier: Intent | None = None,
    args: str | None = None,
    *,
    persistent: bool,
) -> str:
    """Why a call of ``tool`` on ``key`` is not made while an earlier one there is in doubt
    (``earlier``: what was kept of it, when it is known; ``args``: the arguments of the call
    just left in doubt, as the trace writes them), in every lane's words; ``persistent``: the
    store outlives the process, so a restart does not clear the call."""
    on, was = doubt_place(key, name), earlier_said(earlier, name)
    recorded = earlier.args if earlier is not None else args
    given = reconcile_args(tool, key, recorded, name) if recorded is not None else None
    return (
        f"{tool.name} is not idempotent and may already have acted{on}: a call there{was} was "
        "sent and its outcome never landed (the process stopped, the lease was lost, the "
        "tool did not answer, or what it answered did not land), so further calls of "
        f"{tool.name}{on} are not made. Check with "
        "the system it acts on whether that call took effect, record what happened in the "
        f"world if it did, then clear this with `horismos tools reconcile {tool.name} … --args "
        f"{given or 'JSON'}` on the same store ({reconcile_in_python(tool, given)} in Python)"
        + ("" if persistent else " (a world kept in memory clears when its process restarts)")
    )


def reconcile_in_python(tool: Tool, given: str | None = None) -> str:
    """The call of the Python API that clears a call of ``tool`` in doubt, as ``tools
    reconcile`` clears it from the command line: ``given``, that command's ``--args`` (shell
    quoted JSON, :func:`reconcile_args`), as the dict it takes; ``args`` when not known. A
    service calling :meth:`~horismos.Agent.run` or the catalog met an error naming only the
    command, and had to find the method it stands for."""
    args = "args"
    if given is not None:
        with suppress(ValueError, IndexError):
            args = repr(json.loads(shlex.split(given)[0]))
    return f"`agent.catalog.reconcile({tool.name!r}, {args}, world)`"


def held_by_rejected(
    tool: Tool | None,
    calls: Iterable[Mapping[str, Any]],
    name: Callable[[Node], str],
    *,
    persistent: bool,
) -> list[str]:
    """What a rejected step's ``calls`` that answered (so may have acted, and nothing of them
    landed) left held in doubt, a :func:`doubt_message` each, its ``args`` as the intent kept
    them; none for a tool that is idempotent, an adapter's, or one not defined. ``run`` says
    it under the step and ``trace show`` under the step's event, in the same words."""
    if tool is None or tool.idempotent or tool.adapter is not None:
        return []
    return [
        doubt_message(
            tool, doubt_key(tool, call), name, args=_ARGS_JSON.encode([call]), persistent=persistent
        )
        for call in calls
    ]


def earlier_said(earlier: Intent | None, name: Callable[[Node], str]) -> str:
    """`` (by :inst, started …, arguments …)``: what was kept of an earlier call in doubt, in
    a message; empty when it is not known. A catalog call's instance is its own call: no name
    to give."""
    if earlier is None:
        return ""
    call = str(earlier.instance).startswith("urn:horismos:call:")
    by = "" if call else f"by {name(earlier.instance)}, "
    return f" ({by}started {earlier.started}, arguments {earlier.args})"


def reconcile_args(tool: Tool, key: Node, recorded: str, name: Callable[[Node], str]) -> str | None:
    """The ``--args`` of ``tools reconcile`` that clears the call in doubt at ``key``, shell
    quoted: the recorded call there (``recorded``: the calls' arguments as the trace writes
    them) in the catalog's JSON, a node by its name and a literal by its value, so whoever
    has checked need not write it out. None when it cannot be told."""
    try:
        calls = json.loads(recorded)
    except ValueError:
        return None
    for call in calls if isinstance(calls, list) else [calls]:
        if not isinstance(call, dict) or doubt_key(tool, call) != key:
            continue
        given: dict[str, Any] = {}
        for arg, text in call.items():
            try:
                value = from_n3(text) if isinstance(text, str) else None
            except Exception:  # rdflib raises what its term constructors raise
                return None
            if isinstance(value, URIRef):
                shown = name(value)
                given[arg] = str(value) if shown.startswith("<") else shown
            elif isinstance(value, Literal) and value.language is None:
                given[arg] = json_value(value.toPython())
            else:
                return None
        return shlex.quote(json.dumps(given, ensure_ascii=False))
    return None


def held(node: URIRef) -> Quad:
    """The quad every call kept at a doubt node writes there, in flight or in doubt: a commit
    that requires it absent (``Change.absent``) lands only while nobody else is there."""
    return (node, _TYPE, _STEP_EXECUTION, INSTANCES)


def holds(
    instance: URIRef, tool: Tool, calls: Iterable[Mapping[str, Any]], across: bool = True
) -> list[Quad]:
    """What a step's calls of ``tool`` keep at their doubt nodes while they are made (their
    arguments as the trace writes them): :func:`held` and the instance making them. Two quads,
    not a whole intent: the instance's own intent says the rest, and a call whose outcome
    turns out unknown completes them into one (:func:`doubt_marks`). ``across``: as
    :func:`doubt_key`'s."""
    quads: list[Quad] = []
    nodes = (doubt_node(tool.iri, doubt_key(tool, args, across)) for args in calls)
    for node in dict.fromkeys(nodes):
        quads += holding_at(node, instance)
    return quads


def former_holds(tool: Tool, calls: Iterable[Mapping[str, Any]]) -> list[URIRef]:
    """The doubt nodes versions before kept ``calls`` of ``tool`` at, where they are not
    today's (:func:`former_doubt_keys`): a step's hold requires each free, as its own."""
    keys = (k for args in calls for k in former_doubt_keys(tool, args))
    return [doubt_node(tool.iri, key) for key in dict.fromkeys(keys)]


def holding_at(node: URIRef, instance: URIRef) -> list[Quad]:
    """What ``instance``'s step keeps at ``node`` while it calls (:func:`holds`)."""
    return [held(node), (node, _INSTANCE, instance, INSTANCES)]


def settling_at(node: URIRef, instance: URIRef) -> Quad:
    """What ``instance``'s step adds to its hold at ``node`` when no claim keeps others off
    the node (it is not the instance's focus, on a shared world): it settles the hold and
    reads who else holds it before calling, and yields to any holder that does not."""
    return (node, HORIS.settles, instance, INSTANCES)


def yields_to(holders: Iterable[Sequence[str]], me: str) -> str | None:
    """Whom the step of ``me`` yields its call at a doubt node to, given who holds the node
    once the holds have settled (``[iri, mark]`` each: ``"settles"``, ``""``, or ``"decided"``;
    :meth:`._claims.Worker.settled_holders`); None when it goes first.

    A holder that decided to call goes first, then one that does not settle (a step on its
    own focus, a catalog call: they never read back), then the least of those that settle.
    Two that settle and read different holders (one's hold landed late) may both find
    themselves the least; the one that goes first marks that it decides before it calls, so
    of two such, the later reader sees the other's mark and yields."""
    others = [(by, mark) for by, mark in holders if by != me]
    decided = [by for by, mark in others if mark == "decided"]
    plain = [by for by, mark in others if not mark]
    return min(decided or plain or [by for by, _ in others if by < me], default=None)


def holder(store: Store, node: URIRef) -> URIRef | None:
    """The instance whose step holds ``node`` while it calls (or whose process stopped
    mid-call), when what is kept there is not a whole intent."""
    found = next(iter(store.objects(node, _INSTANCE)), None)
    return found if isinstance(found, URIRef) else None


def key_at(
    tool: Tool, node: URIRef, calls: Iterable[Mapping[str, Any]], across: bool = True
) -> Node:
    """Which of ``calls`` is kept at ``node``: its :func:`doubt_key` (``across``: as
    :func:`doubt_key`'s, so a replay of a version before names the key it kept), the node
    being that key's or one a version before kept it at (:func:`former_doubt_keys`)."""
    calls = list(calls)
    for args in calls:
        if doubt_node(tool.iri, key := doubt_key(tool, args, across)) == node:
            return key
    return next(
        doubt_key(tool, args, across)
        for args in calls
        if any(doubt_node(tool.iri, k) == node for k in former_doubt_keys(tool, args))
    )


def in_flight_message(tool: Tool, key: Node, name: Callable[[Node], str], by: URIRef) -> str:
    """Why a call of ``tool`` on ``key`` is not made while a workflow step or a catalog call
    (``by``) is calling it there (or its process stopped mid-call), in every lane's words (a
    replay's too, so one wording whatever the store)."""
    on = doubt_place(key, name)
    if str(by).startswith("urn:horismos:call:"):
        return (
            f"a call of {tool.name}{on} (horismos tools call, serve) is being made, or its "
            f"process stopped mid-call; {tool.name} is not idempotent, so it is not called "
            "again meanwhile. Once that call has landed, try again (preconditions are checked "
            "anew). If its process has stopped, check with the system it acts on whether it "
            f"took effect, then clear it with `horismos tools reconcile {tool.name} … --args "
            "JSON` on the same store"
        )
    return (
        f"workflow instance {name(by)} is calling {tool.name}{on}, or its process stopped "
        f"mid-call; {tool.name} is not idempotent, so it is not called again meanwhile. Once "
        "that call has landed, try again (preconditions are checked anew). If that process "
        "has stopped, continue the instance: `horismos run` or `resume` on the same store, "
        "or, on a world other processes share, `horismos run --all` for its workflow once "
        "that process's lease has run out; the call is then held in doubt until `horismos "
        "tools reconcile` clears it"
    )


def doubt_marks(
    instance: URIRef,
    step: URIRef,
    tool: Tool,
    started: Literal | str,
    args: str | Sequence[Any],
    bound: bool = True,
    across: bool = True,
) -> list[Quad]:
    """What keeps calls of a step in doubt (their outcome is unknown): an intent at each
    call's :func:`doubt_node`, with the binding it was made through when ``bound``
    (:func:`binding_mark`; a replay of a trace recorded before writes none). ``args``: the
    calls' arguments as the trace writes them (a list of objects of N-Triples terms), or an
    intent's text of them. ``across``: as :func:`doubt_key`'s."""
    calls = json.loads(args) if isinstance(args, str) else list(args)
    when = started if isinstance(started, Literal) else Literal(started, datatype=XSD.dateTime)
    quads: list[Quad] = []
    for call in calls:
        node = doubt_node(tool.iri, doubt_key(tool, call, across))
        quads += announce(instance, step, tool.iri, when, [call], node).quads
        if bound:
            quads.append(binding_mark(node, tool))
    return quads


def binding_mark(node: URIRef, tool: Tool) -> Quad:
    """What records, at the doubt node ``node``, the binding a call of ``tool`` kept there
    in full (in doubt, or a catalog call's being made) was made through: a tool renamed
    since, bound the same, is still held there (:mod:`._renamed_tools`)."""
    return (node, _CALLED_BINDING, Literal(tool.binding), INSTANCES)


def open_step_intents(store: Store, tool: Tool, key: Node) -> list[Intent]:
    """The instances' open intents to call ``tool`` on ``key``: a workflow step in flight, or
    whose process stopped mid-call and that nobody has continued since. Asked by a catalog
    call (rare), so by a query over the few intents there are, not by a node of their own."""
    rows = store.select(
        f"SELECT ?n WHERE {{ GRAPH <{INSTANCES}> {{ ?n horis:tool ?tool ; horis:instance ?i }} "
        f'  FILTER(STRSTARTS(STR(?n), "{INSTANCE}")) }}',
        {"tool": tool.iri},
        {"horis": NS},
    )
    found = []
    for row in rows:
        intent = read_intent(store, cast(URIRef, row["n"]))
        if intent is not None and any(
            doubt_key(tool, call) == key for call in json.loads(intent.args)
        ):
            found.append(intent)
    return found


def announce(
    instance: URIRef,
    step: URIRef,
    tool: URIRef,
    started: Literal,
    args: Sequence[dict[str, Any]],
    node: URIRef | None = None,
) -> Intent:
    """The intent to call ``tool`` at ``step`` with ``args`` (as the trace shows them), kept
    at the instance's intent node or at ``node`` (a doubt node: typed there, since every call
    kept at one holds it by its type, :func:`held`). At the instance's node it is found by
    that node's name and its ``horis:step``: its types were two of its seven quads, written
    and removed again on every call of a tool that is not idempotent."""
    typed = node is not None
    node = node or _node(instance)
    text = _ARGS_JSON.encode(args if type(args) is list else list(args))
    graph = INSTANCES  # each quad built in its graph once, not as a triple copied into one
    quads: tuple[Quad, ...] = (
        (node, _INSTANCE, instance, graph),
        (node, _STEP, step, graph),
        (node, _TOOL, tool, graph),
        (node, _STARTED, started, graph),
        (node, _COMMENT, plain_literal(text), graph),
    )
    if typed:
        quads = ((node, _TYPE, _STEP_EXECUTION, graph), (node, _TYPE, _ACTIVITY, graph), *quads)
    return Intent(instance, step, tool, str(started), text, quads)


def open_intent(store: Store, instance: URIRef) -> Intent | None:
    """The intent an instance left when its process stopped mid-call, if any."""
    return read_intent(store, _node(instance), instance)


def read_intent(store: Store, node: URIRef, instance: URIRef | None = None) -> Intent | None:
    """The intent stored at ``node``, if any (its instance as stored, unless given)."""
    if next(iter(store.objects(node, _STEP)), None) is None:  # the usual, cheap answer
        return None
    rows = store.select(
        f"SELECT ?p ?o WHERE {{ GRAPH <{INSTANCES}> {{ ?n ?p ?o }} }}", {"n": node}, {"horis": NS}
    )
    if not rows:
        return None
    values = {r["p"]: r["o"] for r in rows}
    quads = tuple((node, r["p"], r["o"], INSTANCES) for r in rows)
    return Intent(
        instance or values.get(HORIS.instance),  # type: ignore[arg-type]
        values.get(HORIS.step),  # type: ignore[arg-type]
        values.get(HORIS.tool),  # type: ignore[arg-type]
        str(values.get(PROV.startedAtTime, "")),
        str(values.get(RDFS.comment, "[]")),
        quads,
    )
