"""A step whose ``horis:requires`` forbids of the focus what a step always before it writes:
it never runs.

Why: the dispense's guard against running twice, ``FILTER NOT EXISTS { ?this :dispensedAt
?t }``, copied onto the notification after it (meant: ``?this :notifiedAt ?t``, what the
notification's own tool writes). The dispense writes ``:dispensedAt`` on every way to the
notification, so its pattern never held there and every order stopped at it, blocked and
unnotified, while the definitions validated.

Only what is certain is said, as for a wait that never waits (:mod:`._held_waits`, whose
:func:`~._held_waits.surely_written` says what every way to a step has written): the
forbidden group must be a ``FILTER NOT EXISTS`` (or ``FILTER (!EXISTS …)``) every solution
passes, of the one triple ``?this :p ?v`` with ``?v`` a variable bound nowhere outside it,
and ``:p`` written on the focus on every way to the step in every workflow that reaches it.
A value compared, a second triple, a ``MINUS``: what is forbidden may be narrower than any
value, and nothing is said. A tool's own ``horis:requires``, tried at the step with the
tool's arguments bound, is held to the same of each argument the step gives from ?this
(``FILTER NOT EXISTS { ?order :dispensedAt ?t }`` on the notification's tool), its other
arguments counted as bound.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from rdflib import URIRef, Variable
from rdflib.term import Node

from ._guard_writes import negated_groups
from ._hazards import Hazard
from ._held_waits import Written, focus_read, plain_triples
from ._model import ActionStep, Step, Tool
from ._preconditions import Precondition
from ._vocab import HORIS

__all__ = ["tripped_guards"]


def tripped_guards(
    steps: Mapping[URIRef, Step], written: Written, name: Callable[[Node], str]
) -> Iterator[Hazard]:
    """A warning at each action step's ``horis:requires`` that forbids of ?this a property
    every way to the step has written (:func:`~._held_waits.written_before`); and at its
    ``horis:tool`` when the tool's own ``horis:requires`` forbids it of an argument the step
    gives from ?this."""
    held, writers = written
    for iri in sorted(held, key=str):
        step = steps.get(iri)
        if not isinstance(step, ActionStep):
            continue
        me = name(iri)
        blocked = (
            f"on every way to {me}: the pattern never holds when the step is reached, so it "
            "never runs and every instance stops there, blocked"
        )
        if step.requires is not None:
            forbidden = _forbidden(step.requires, {"this"}).get("this", set())
            tripped, said, by = _tripped(forbidden & held[iri], writers, name)
            if tripped:
                drop = f"drop the test of {said}: {by} has always written it by then"
                guard = _guard(step.tool, "this", step.var_for, tripped, name)
                yield Hazard(
                    iri,
                    f"horis:requires forbids {said} of ?this (FILTER NOT EXISTS), which a step "
                    f"before it ({by}) writes {blocked}",
                    f"guard {me} with what its own tool writes ({guard}), or {drop}"
                    if guard
                    else f"{drop}; or move {me} before {by}",
                    HORIS.requires,
                )
        tool = step.tool
        if tool is None or tool.requires is None:
            continue
        forbids = _forbidden(tool.requires, {a.name for a in tool.args})
        for arg in tool.args:
            if step.var_for(arg.name) != "this":
                continue
            tripped, said, by = _tripped(forbids.get(arg.name, set()) & held[iri], writers, name)
            if not tripped:
                continue
            drop = f"drop its test of {said}: {by} has always written it by then"
            guard = _guard(tool, arg.name, lambda a: a, tripped, name)
            yield Hazard(
                iri,
                f"the horis:requires of its tool, {name(tool.iri)}, forbids {said} of "
                f"?{arg.name} (FILTER NOT EXISTS), given from ?this here, which a step before "
                f"it ({by}) writes {blocked}",
                f"guard {name(tool.iri)} with what it writes itself ({guard}), or {drop}"
                if guard
                else f"{drop}; or move {me} before {by}",
                HORIS.tool,
            )
            break


_Tripped = tuple[list[URIRef], str, str]
"""What a guard forbids that is written before its step, in order; it named; and the steps
that write it, named."""


def _tripped(
    props: set[URIRef], writers: Mapping[URIRef, set[URIRef]], name: Callable[[Node], str]
) -> _Tripped:
    tripped = sorted(props, key=str)
    said = ", ".join(name(p) for p in tripped)
    by = ", ".join(sorted({name(s) for p in tripped for s in writers.get(p, ())}))
    return tripped, said, by


def _forbidden(pre: Precondition, given: set[str]) -> dict[str, set[URIRef]]:
    """For each variable ``?on``, the properties ``pre`` requires it to have no value of at
    all: each ``NOT EXISTS`` every solution passes that is the one triple ``?on :p ?v``,
    ``?v`` a variable bound nowhere else: not by the pattern, nor ``given`` it (?this, a
    tool's arguments). One walk of the pattern, for every argument of a tool."""
    outside = pre.binds | pre.may_bind | given
    found: dict[str, set[URIRef]] = {}
    for group in negated_groups(pre.select.algebra, minus=False):
        triples = plain_triples(group)
        if triples is None or len(triples) != 1:
            continue
        ((s, p, o),) = triples
        if isinstance(s, Variable) and focus_read(triples[0], [o], s) and str(o) not in outside:
            found.setdefault(str(s), set()).add(p)
    return found


def _guard(
    tool: Tool | None,
    on: str,
    var_for: Callable[[str], str],
    tripped: list[URIRef],
    name: Callable[[Node], str],
) -> str | None:
    """The guard most likely meant: ``FILTER NOT EXISTS { ?on :q ?v }`` of a property
    ``:q`` the tool surely writes on ``?on`` (its effect's subject, given as ``var_for``
    names it), other than those tripped; None when it writes none."""
    effect = tool.effect if tool is not None else None
    if effect is None or var_for(effect.subject) != on:
        return None
    for a in effect.asserts:
        if not a.optional and a.property not in tripped:
            return f"FILTER NOT EXISTS {{ ?{on} {name(a.property)} ?v }}"
    return None
