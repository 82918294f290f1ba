"""A guard against running twice that its own step's call never closes.

Why: ``:PayOut horis:requires "FILTER NOT EXISTS { ?this :paidAt ?t }"`` on a step whose
tool, not idempotent, writes ``:paymentRef`` (not ``:paidAt``) held again after the payout:
a second ``run --all``, or a loop back, paid the claim again, and the definitions validated.
So did ``FILTER NOT EXISTS { ?this :paymentRef ?r }`` where the tool writes ``:paymentRef``
on another node (its effect's ``horis:subject`` is the payee's account, not the claim).

Two findings, for a step whose tool is not idempotent (an adapter's commit, read by its own
rules, is left out):

- a *misplaced* guard: every ``NOT EXISTS`` (or ``MINUS``) triple of the step's pattern on a
  property the tool writes tests it of another node than the one the effect writes it on;
- an *unwritten* guard: none of the properties the pattern requires absent is one the tool
  writes (or entails), and nothing else could give one: no tool writes it, no file states it,
  no wait comes before the step (an operator's answer may), and, beside a world, the world
  holds it of no node (then it is a condition of the domain — a cancelled claim — not a
  guard, and the warning is dropped as :attr:`~._definitions_model.Definitions.own_writes`
  are).
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from rdflib import RDF, URIRef, Variable

from ._model import ActionStep, Tool
from ._term_kinds import algebra_triples, unbound_optionals

__all__ = [
    "Unclosed",
    "affirmations",
    "forbids_on",
    "negated_groups",
    "negated_triples",
    "negations",
    "unclosed_guard",
    "unused_variable",
]


@dataclass(frozen=True)
class Unclosed:
    """What a guard of a step tests absent, and why its call never makes it present."""

    triple: tuple[Any, URIRef, Any]
    """The first triple of the guard found wrong: where it is reported."""
    misplaced: bool
    """The tool writes the property, on another node (``written_on``) than the guard tests."""
    written_on: str
    """The variable the tool's effect writes on."""


_PASSING = frozenset(
    {"Union", "Builtin_EXISTS", "ConditionalOrExpression", "UnaryNot", "Builtin_IF", "LeftJoin"}
)


def negated_triples(algebra: Any, *, optional: bool = False) -> list[tuple[Any, URIRef, Any]]:
    """The triples a parsed pattern holds only where the world lacks them: in a ``FILTER
    NOT EXISTS``, a ``FILTER (!EXISTS …)`` or a ``MINUS`` every solution passes (not one in
    an ``OPTIONAL``, a ``UNION``, an ``||``, another ``!``); with ``optional``, in an
    ``OPTIONAL { … ?t } FILTER (!BOUND(?t))`` too (:func:`negations`)."""
    found = [
        t for _, group in negations(algebra, optional=optional) for t in algebra_triples(group)
    ]
    return sorted(found, key=str)


def negated_groups(algebra: Any, *, minus: bool = True) -> list[Any]:
    """The parsed groups every solution of ``algebra`` must find no match of, as
    :func:`negated_triples` finds them; a ``MINUS``'s only with ``minus``."""
    return [group for _, group in negations(algebra, minus=minus)]


def forbids_on(algebra: Any, written: Iterable[tuple[URIRef, Variable | None]]) -> bool:
    """Whether ``algebra`` holds only while one of ``written`` is absent: each a property
    and the variable of the node it is written on (None: a node this pattern cannot name,
    any of its variables taken as it), tested under ``FILTER NOT EXISTS``, ``MINUS`` or
    ``OPTIONAL … FILTER (!BOUND(…))`` (:func:`negated_triples`). The one recognizer of a
    guard on the node written, for a step's own pattern, its tool's and the rules and
    waits on the way to it: a guard on the right property of another node (``FILTER NOT
    EXISTS { ?order :refundRef ?r }`` where the refund is written on ``?refund``) does not
    stop a second call."""
    wanted = set(written)
    return any(
        (p, s) in wanted or ((p, None) in wanted and isinstance(s, Variable))
        for s, p, _ in negated_triples(algebra, optional=True)
    )


def affirmations(algebra: Any) -> list[Any]:
    """The groups of each ``FILTER EXISTS`` every solution of ``algebra`` must find a match
    of (not one under ``!``, in an ``OPTIONAL``, a ``UNION``, an ``||``, an ``IF``)."""
    found: list[Any] = []
    stack = [algebra]
    while stack:
        x = stack.pop()
        name = getattr(x, "name", None)
        if name == "Builtin_EXISTS":
            found.append(x.graph)
        elif name in _PASSING or name == "Builtin_NOTEXISTS":
            continue
        elif name == "Minus":
            stack.append(x.p1)
        elif isinstance(x, Mapping):
            stack.extend(x.values())
        elif isinstance(x, list | tuple):
            stack.extend(x)
    return found


def unused_variable(used: Container[str], first: str = "v") -> str:
    """A variable name for the value a suggested guard leaves open (``FILTER NOT EXISTS {
    ?refund :refundRef ?v }``) that the pattern does not use already: ``?v`` bound to the
    refund's amount there would make the guard test that one value, never written as a
    reference, so it would never close — the fix repeating the mistake it mends."""
    return next(
        v
        for v in (first, "x", "done", "was", *(f"{first}{i}" for i in range(1, 999)))
        if v not in used
    )


def negations(algebra: Any, *, minus: bool = True, optional: bool = False) -> list[tuple[str, Any]]:
    """:func:`negated_groups` with how each is written, ``"FILTER NOT EXISTS"`` (also for
    ``FILTER (!EXISTS …)``) or ``"MINUS"``: what a finding about one of them names. With
    ``optional``, an ``OPTIONAL`` the group's ``FILTER (!BOUND(?t))`` requires empty too
    (:func:`~._term_kinds.unbound_optionals`), as ``"OPTIONAL … !BOUND"``."""
    found: list[tuple[str, Any]] = []
    stack = [algebra]
    while stack:
        x = stack.pop()
        name = getattr(x, "name", None)
        negated = x.expr if name == "UnaryNot" else None
        if negated is not None and getattr(negated, "name", None) == "Builtin_EXISTS":
            found.append(("FILTER NOT EXISTS", negated.graph))
        elif name == "Builtin_NOTEXISTS":
            found.append(("FILTER NOT EXISTS", x.graph))
        elif name == "Minus":
            if minus:
                found.append(("MINUS", x.p2))
            stack.append(x.p1)
        elif name == "Filter" and optional:
            found.extend(("OPTIONAL … !BOUND", g) for g in unbound_optionals(x.expr, x.p))
            stack.extend((x.expr, x.p))
        elif name in _PASSING:
            continue
        elif isinstance(x, Mapping):
            stack.extend(x.values())
        elif isinstance(x, list | tuple):
            stack.extend(x)
    return found


def unclosed_guard(
    step: ActionStep,
    algebra: Any,
    tools: Iterable[Tool],
    widen: Callable[[URIRef], Iterable[URIRef]],
    stated: Callable[[URIRef], bool],
    waited: bool,
) -> Unclosed | None:
    """The guard of ``step`` (``algebra``, its own horis:requires) its tool's call never
    closes, or None: the tool is idempotent or an adapter's, its pattern requires nothing
    absent, or one of what it requires absent is written by the call where it is tested.
    ``stated``: whether the files state a property of some node or entail it; ``waited``:
    whether a wait can come before the step."""
    tool = step.tool
    if tool is None or tool.idempotent or tool.effect is None or tool.adapter is not None:
        return None
    guard = [t for t in negated_triples(algebra, optional=True) if t[1] != RDF.type]
    if not guard:
        return None
    on = Variable(step.var_for(tool.effect.subject))
    written = {a.property for a in tool.effect.asserts}
    widened = written | {w for p in written for w in widen(p)}
    mine = [t for t in guard if t[1] in widened]
    if any(s == on for s, _, _ in mine):
        return None
    if mine:
        bound = step.requires.binds if step.requires is not None else set()
        if str(on) not in {*bound, "this"}:
            return None  # a variable nothing binds: the unbound argument's error says it
        return Unclosed(mine[0], True, str(on))
    if waited:
        return None
    others = {a.property for t in tools if t.effect is not None for a in t.effect.asserts}
    if any(p in others or stated(p) for _, p, _ in guard):
        return None
    return Unclosed(guard[0], False, str(on))
