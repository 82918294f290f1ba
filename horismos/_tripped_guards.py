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
value, and nothing is said.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from rdflib import RDF, URIRef, Variable
from rdflib.term import Node

from ._guard_writes import negated_groups
from ._hazards import Hazard
from ._held_waits import plain_triples, written_before
from ._model import ActionStep, Step, Workflow
from ._preconditions import Precondition
from ._vocab import HORIS

__all__ = ["tripped_guards"]

_THIS = Variable("this")


def tripped_guards(
    steps: Mapping[URIRef, Step],
    workflows: Mapping[URIRef, Workflow],
    name: Callable[[Node], str],
) -> Iterator[Hazard]:
    """A warning at each action step's ``horis:requires`` that forbids of ?this a property
    every way to the step has written (:func:`~._held_waits.written_before`)."""
    held, writers = written_before(workflows, ActionStep)
    for iri in sorted(held, key=str):
        step = steps[iri]
        assert isinstance(step, ActionStep)
        if step.requires is None:
            continue
        tripped = sorted(_forbidden(step.requires) & held[iri], key=str)
        if not tripped:
            continue
        said = ", ".join(name(p) for p in tripped)
        by = ", ".join(sorted({name(s) for p in tripped for s in writers.get(p, ())}))
        me = name(iri)
        yield Hazard(
            iri,
            f"horis:requires forbids {said} of ?this (FILTER NOT EXISTS), which a step before "
            f"it ({by}) writes on every way to {me}: the pattern never holds when the step is "
            "reached, so it never runs and every instance stops there, blocked",
            _hint(step, tripped, said, by, name),
            HORIS.requires,
        )


def _forbidden(pre: Precondition) -> set[URIRef]:
    """The properties ``pre`` requires ?this to have no value of at all: each ``NOT
    EXISTS`` every solution passes that is the one triple ``?this :p ?v``, ``?v`` a variable
    the pattern binds nowhere else."""
    outside = pre.binds | pre.may_bind
    found = set()
    for group in negated_groups(pre.select.algebra, minus=False):
        triples = plain_triples(group)
        if triples is None or len(triples) != 1:
            continue
        ((s, p, o),) = triples
        if (
            s == _THIS
            and isinstance(p, URIRef)
            and p != RDF.type
            and isinstance(o, Variable)
            and o != s
            and str(o) not in outside
        ):
            found.add(p)
    return found


def _hint(
    step: ActionStep, tripped: list[URIRef], said: str, by: str, name: Callable[[Node], str]
) -> str:
    """What to write instead: the guard ``step`` most likely meant, of what its own tool
    writes on the focus, when it writes any; else the step moved before the writer."""
    effect = step.tool.effect if step.tool is not None else None
    own = [] if effect is None or step.var_for(effect.subject) != "this" else effect.asserts
    drop = f"drop the test of {said}: {by} has always written it by then"
    for a in own:
        if not a.optional and a.property not in tripped:
            return (
                f"guard {name(step.iri)} with what its own tool writes (FILTER NOT EXISTS "
                f"{{ ?this {name(a.property)} ?v }}), or {drop}"
            )
    return f"{drop}; or move {name(step.iri)} before {by}"
