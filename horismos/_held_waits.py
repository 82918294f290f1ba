"""A wait whose ``horis:until`` already holds whenever it is reached: it never waits.

Why: ``:Approve horis:until "?this :assessedAmount ?a ."`` after the step whose tool writes
``:assessedAmount`` on the focus (meant: ``?this :approvedAt ?t``, what the manager's answer
gives) was held every time it was reached, so no instance ever waited and the payout went
ahead unapproved, while the definitions validated.

Only what is certain is said. The until must be a plain basic graph pattern (no ``FILTER``,
``OPTIONAL``, negation, ``UNION``), each of its triples ``?this :p ?v`` with ``?v`` a variable
it uses once, and every way from its workflow's start to the wait must pass, by its
``horis:next``, a step whose tool writes ``:p`` on the focus (a step's ``horis:next`` is taken
only once its call succeeded, and its tool's effect must write every property it does not
declare ``horis:optional``). A step over ``horis:forEach`` may call nothing, an adapter's
commit is not read here: neither counts as writing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from rdflib import RDF, URIRef, Variable
from rdflib.term import Node

from ._hazards import Hazard
from ._model import ActionStep, Step, WaitStep, Workflow, ways_out
from ._vocab import HORIS

__all__ = [
    "Written",
    "focus_read",
    "held_waits",
    "plain_focus_reads",
    "plain_triples",
    "surely_writes",
    "surely_written",
    "written_before",
]

_THIS = Variable("this")


Written = tuple[dict[URIRef, set[URIRef]], dict[URIRef, set[URIRef]]]
"""What :func:`written_before` gives: made once, read by every check of what is written."""


def held_waits(
    steps: Mapping[URIRef, Step], written: Written, name: Callable[[Node], str]
) -> Iterator[Hazard]:
    """A warning at each wait's ``horis:until`` that every workflow reaching it has written
    before it, on every way (``written``, from :func:`written_before`)."""
    held, writers = written
    for iri in sorted(held, key=str):
        wait = steps.get(iri)
        if not isinstance(wait, WaitStep):
            continue
        tested = plain_focus_reads(wait.until.select.algebra) if wait.until else None
        if not tested or not tested <= held[iri]:
            continue
        said = ", ".join(sorted(name(p) for p in tested))
        by = ", ".join(sorted({name(s) for p in tested for s in writers.get(p, ())}))
        goes = f" to {name(wait.next)}" if wait.next is not None else ""
        yield Hazard(
            iri,
            f"horis:until tests {said} of ?this, which a step before it ({by}) writes on every "
            f"way to {name(iri)}: it already holds when the wait is reached, so the wait never "
            f"waits and every instance goes straight on{goes}",
            "test what only the answer gives (e.g. ?this :approvedAt ?t, for an operator's "
            "resume facts), or move the wait before the step that writes "
            f"{said}",
            HORIS.until,
        )


def written_before(workflows: Mapping[URIRef, Workflow]) -> Written:
    """For each step some workflow reaches, what is written on its focus on every way to it
    in every workflow that reaches it (:func:`surely_written`, once a workflow); and for each
    property a step is certain to write, the steps that write it (to name them)."""
    held: dict[URIRef, set[URIRef]] = {}
    writers: dict[URIRef, set[URIRef]] = {}
    for wf in sorted(workflows.values(), key=lambda w: str(w.iri)):
        for iri, props in surely_written(wf).items():
            held[iri] = held[iri] & props if iri in held else set(props)
        for s in wf.reachable():
            for p in surely_writes(s):
                writers.setdefault(p, set()).add(s.iri)
    return held, writers


def surely_written(wf: Workflow) -> dict[URIRef, set[URIRef]]:
    """For each step ``wf`` reaches, the properties on its focus written on every way from
    its start to that step: an intersection over the ways in, each adding what the step left
    by its ``horis:next`` wrote (:func:`surely_writes`)."""
    reached = {s.iri: s for s in wf.reachable()}
    into: dict[URIRef, set[URIRef]] = {wf.start: set()}
    todo = [wf.start]
    while todo:
        here = todo.pop()
        step = reached.get(here)
        if step is None:
            continue
        for pred, there in ways_out(step):
            if there not in reached or there == wf.start:
                continue
            out = into[here] | (surely_writes(step) if pred == HORIS.next else set())
            now = into[there] & out if there in into else out
            if there not in into or now != into[there]:
                into[there] = now
                todo.append(there)
    return into


def surely_writes(step: Step) -> set[URIRef]:
    """What ``step``'s tool is certain to have written on the focus once it goes on by its
    ``horis:next``: its effect's properties not ``horis:optional``, when the effect's subject
    is given from ?this, the step calls it once (no ``horis:forEach``), and no adapter
    commits it."""
    if not isinstance(step, ActionStep) or step.for_each or step.tool is None:
        return set()
    tool = step.tool
    if tool.effect is None or tool.adapter is not None:
        return set()
    if step.var_for(tool.effect.subject) != "this":
        return set()
    return {a.property for a in tool.effect.asserts if not a.optional}


def plain_focus_reads(algebra: Any) -> set[URIRef] | None:
    """The properties a pattern reads of ?this when it is only triples ``?this :p ?v``, each
    ``?v`` a variable used once; None for any other pattern."""
    triples = plain_triples(algebra.get("p") if getattr(algebra, "name", "") else None)
    if not triples:
        return None
    objects = [o for _, _, o in triples]
    if not all(focus_read(t, objects) for t in triples):
        return None
    return {p for _, p, _ in triples}


def focus_read(triple: tuple[Any, Any, Any], objects: list[Any], on: Variable = _THIS) -> bool:
    """Whether ``triple`` is ``?this :p ?v`` (``:p`` not ``rdf:type``; ``?on`` in ?this's
    place, when given), ``?v`` a variable once among ``objects`` (those of its pattern's
    triples): it holds wherever ``:p`` is written on the focus."""
    s, p, o = triple
    if s != on or not isinstance(p, URIRef) or p == RDF.type:
        return False
    return isinstance(o, Variable) and o != s and objects.count(o) == 1


def plain_triples(node: Any) -> list[tuple[Any, Any, Any]] | None:
    """The triples of a projection of basic graph patterns joined; None for anything else."""
    name = getattr(node, "name", None)
    if name == "Project":
        return plain_triples(node.p)
    if name == "BGP":
        return list(node.triples)
    if name == "Join":
        left, right = plain_triples(node.p1), plain_triples(node.p2)
        return None if left is None or right is None else left + right
    return None
