"""A wait whose ``horis:until`` holds for a person's "no" as for their "yes".

Why: ``:ApproveHeavy horis:until "?this :heavyApproved ?ok ."`` (meant: "an answer came")
before the step that prints the labels: the supervisor answered ``:s2 :heavyApproved false``,
the wait ended as it would on ``true``, and the labels were printed and the pickup booked for
the parcel they had refused, while the definitions validated. A boolean answer has a "no";
an until that takes any value of it lets the "no" through, unless what comes next reads it.

Only what is certain is said: the until a plain basic graph pattern (no ``FILTER``, no
negation), one of its triples ``?this :p ?v`` with ``:p``'s ``rdfs:range`` ``xsd:boolean``
and ``?v`` a variable it uses once; the wait's ``horis:next`` an action step (its own and its
tool's ``horis:requires``) or a decision (its rules) that never reads ``:p``. A wait or a
proposal next is not followed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from rdflib import RDFS, XSD, Graph, URIRef, Variable
from rdflib.term import Node

from ._hazards import Hazard
from ._held_waits import plain_triples
from ._model import ActionStep, DecisionStep, Step, WaitStep
from ._preconditions import Precondition
from ._term_kinds import algebra_triples
from ._vocab import HORIS

__all__ = ["any_answers"]

_THIS = Variable("this")


def any_answers(
    steps: Mapping[URIRef, Step], g: Graph, name: Callable[[Node], str]
) -> Iterator[Hazard]:
    """A warning at each wait's ``horis:until`` that a boolean answer of either value ends,
    where the step it goes on to never reads the answer."""
    for wait in sorted(steps.values(), key=lambda s: str(s.iri)):
        if not isinstance(wait, WaitStep) or wait.until is None or wait.next is None:
            continue
        nxt = steps.get(wait.next)
        if not isinstance(nxt, ActionStep | DecisionStep):
            continue
        triples = plain_triples(wait.until.select.algebra.get("p"))
        if triples is None:
            continue
        used = [t for s, p, o in triples for t in (s, p, o) if isinstance(t, Variable)]
        read = _reads(nxt)
        for s, p, o in triples:
            if (
                s != _THIS
                or not isinstance(p, URIRef)
                or not isinstance(o, Variable)
                or used.count(o) != 1
                or (p, RDFS.range, XSD.boolean) not in g
                or p in read
            ):
                continue
            yield Hazard(
                wait.iri,
                f"horis:until holds for any value of {name(p)}, false as well as true: an "
                f"answer of {name(p)} false ends the wait as true does, and the instance goes "
                f"on at {name(nxt.iri)}, which never reads {name(p)}",
                f"go on at a horis:DecisionStep whose rule tests ?this {name(p)} true, its "
                f"horis:otherwise taking the no; or write horis:until "
                f'"?this {name(p)} true ." if only a yes ends the wait',
                predicate=HORIS.until,
            )
            break


def _reads(step: ActionStep | DecisionStep) -> set[URIRef]:
    """The predicates ``step``'s patterns name: its own and its tool's ``horis:requires``, or
    its rules'."""
    patterns: list[Precondition | None]
    if isinstance(step, ActionStep):
        patterns = [step.requires, step.tool.requires if step.tool else None]
    else:
        patterns = [r.requires for r in step.rules]
    return {
        p
        for pre in patterns
        if pre is not None
        for _, p, _ in algebra_triples(pre.select.algebra)
        if isinstance(p, URIRef)
    }
