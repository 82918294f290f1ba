"""A step whose pattern requires what only its own tool writes: it can never fire first.

Why: ``horis:requires "?this :queuedAt ?t ."`` on the step whose tool writes ``:queuedAt``
(where ``FILTER NOT EXISTS { ?this :queuedAt ?t }``, a guard against running twice, was
meant) blocks every instance at that step, and the definitions validated. The property must
reach the node some other way first: another tool, called at a step that can run before this
one (the flow followed backwards from it) or in another workflow or by no step (``tools
call``); an operator's facts at a wait before it; loaded data (the loader checks the files,
``validate --world`` the world). Only what every solution needs is held to this: a triple in
an ``OPTIONAL``, a ``UNION`` branch, a ``MINUS`` or a ``NOT EXISTS`` does not block. A
``FILTER EXISTS`` every solution passes does: ``FILTER EXISTS { ?this :rollbackRef ?r }``,
the guard written inverted, blocked every rollback as the plain triple does, and validated.

A tool's own ``horis:requires`` is tried at every call of it, a step's or ``tools call``'s,
with its arguments bound: ``?patient :queuedAt ?t .`` there blocks every call of the tool
that writes ``:queuedAt``, in every workflow, unless another tool writes it or an operator
can give it at a wait before a step that calls the tool.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from rdflib import RDF, URIRef, Variable

from ._digraph import Digraph, add_edge, descendants
from ._guard_writes import affirmations
from ._model import ActionStep, Step, Tool, WaitStep, Workflow, ways_out
from ._preconditions import group_triples

__all__ = ["only_later_writes", "only_own_writes", "only_own_writes_of_tool", "wait_before"]


def only_own_writes(
    step: ActionStep,
    algebra: Any,
    workflows: Collection[Workflow],
    tools: Mapping[URIRef, Tool],
) -> list[tuple[Variable, URIRef, Any]]:
    """The triples ``algebra`` (``step``'s own pattern) requires of the node ``step``'s
    tool writes that its tool's effect writes and nothing can have written before ``step``
    first fires: no other step's tool before it in a workflow it is in, none of another
    workflow, no tool no step calls, no wait its flow comes from: the first of each property, by
    property; empty when there are none."""
    tool = step.tool
    if tool is None or tool.effect is None or not tool.effect.subject:
        return []
    required = _required_writes(tool, algebra, Variable(step.var_for(tool.effect.subject)))
    if not required:
        return []
    before = _steps_before(step, workflows)
    if before is None or before[1]:  # an operator's facts at a wait before it may hold it
        return []
    others = _written_at(before[0])
    called = _called(workflows)
    for t in tools.values():
        if t.iri not in called and t.effect is not None:  # called by tools call, or a binding
            others |= {a.property for a in t.effect.asserts}
    return [t for p, t in sorted(required.items()) if p not in others]


def only_own_writes_of_tool(
    tool: Tool,
    algebra: Any,
    workflows: Collection[Workflow],
    tools: Mapping[URIRef, Tool],
) -> list[tuple[Variable, URIRef, Any]]:
    """The triples ``algebra`` (``tool``'s own pattern) requires of the argument its effect
    writes that only ``tool`` writes: no other tool's effect does, and no step calling it
    has a wait before it; the first of each property, by property; empty when there are
    none."""
    if tool.effect is None or not tool.effect.subject:
        return []
    required = _required_writes(tool, algebra, Variable(tool.effect.subject))
    if not required:
        return []
    for wf in workflows:
        for s in wf.reachable():
            if isinstance(s, ActionStep) and s.tool is not None and s.tool.iri == tool.iri:
                before = _steps_before(s, workflows)
                if before is not None and before[1]:
                    return []
    others = {
        a.property
        for t in tools.values()
        if t.iri != tool.iri and t.effect is not None
        for a in t.effect.asserts
    }
    return [t for p, t in sorted(required.items()) if p not in others]


def only_later_writes(
    step: Step,
    algebra: Any,
    workflows: Collection[Workflow],
    tools: Mapping[URIRef, Tool],
) -> list[tuple[tuple[Variable, URIRef, Any], list[Tool]]]:
    """The triples ``algebra`` (a pattern of ``step``: a decision's rule) requires of
    ?this whose property a tool writes, but none that can have written it before ``step``
    is reached: no tool of a step before it in a workflow it is in, of another workflow, nor
    one no step calls; and no wait its flow comes from. Each with the tools that write it
    (at steps after it). The first of each property, by property.

    Why: ``horis:when [ horis:requires "?this :paymentRef ?r" ; horis:next :Close ]`` at a
    decision before the step that pays never held: every claim took the other branch, and
    the definitions validated."""
    before = _steps_before(step, workflows)
    if before is None or before[1]:
        return []
    writers: dict[URIRef, list[Tool]] = {}
    for tool in sorted(tools.values(), key=lambda t: str(t.iri)):
        for a in tool.effect.asserts if tool.effect is not None else ():
            writers.setdefault(a.property, []).append(tool)
    earlier = _written_at(before[0])
    called = _called(workflows)
    this = Variable("this")
    found: dict[URIRef, tuple[tuple[Variable, URIRef, Any], list[Tool]]] = {}
    for s, p, o in sorted(_every_triples(algebra), key=str):
        if s != this or not isinstance(p, URIRef) or p == RDF.type or p in earlier:
            continue
        by = writers.get(p, [])
        if by and all(t.iri in called for t in by):
            found.setdefault(p, ((this, p, o), by))
    return [found[p] for p in sorted(found)]


def wait_before(step: Step, workflows: Collection[Workflow]) -> bool | None:
    """Whether a wait can come before ``step`` in a workflow it is in (an operator's facts
    may give what its pattern reads); None when no workflow reaches it."""
    before = _steps_before(step, workflows)
    return None if before is None else before[1]


def _required_writes(
    tool: Tool, algebra: Any, subject: Variable
) -> dict[URIRef, tuple[Variable, URIRef, Any]]:
    """The triples every solution of ``algebra`` needs of ``subject`` whose property
    ``tool``'s effect writes: the first of each, by property."""
    written = {a.property for a in tool.effect.asserts} if tool.effect is not None else set()
    required: dict[URIRef, tuple[Variable, URIRef, Any]] = {}
    for s, p, o in sorted(_every_triples(algebra), key=str):
        if s == subject and isinstance(p, URIRef) and p != RDF.type and p in written:
            required.setdefault(p, (subject, p, o))
    return required


def _every_triples(algebra: Any) -> list[tuple[Any, Any, Any]]:
    """The triple patterns every solution of ``algebra`` matches: its own groups' (not an
    ``OPTIONAL``'s, a ``UNION`` branch's nor a ``MINUS``'s) and those of each ``FILTER
    EXISTS`` every solution passes, which must find a match as a plain triple must."""
    found = group_triples(algebra, every=True)
    for group in affirmations(algebra):
        found += group_triples(group, every=True)
    return found


def _written_at(steps: Iterable[Step]) -> set[URIRef]:
    """What the tools of the action steps among ``steps`` write (their effects' properties)."""
    written: set[URIRef] = set()
    for s in steps:
        if isinstance(s, ActionStep) and s.tool is not None and s.tool.effect is not None:
            written |= {a.property for a in s.tool.effect.asserts}
    return written


def _called(workflows: Collection[Workflow]) -> set[URIRef]:
    """The tools a step some workflow reaches calls."""
    return {
        s.tool.iri
        for wf in workflows
        for s in wf.reachable()
        if isinstance(s, ActionStep) and s.tool is not None
    }


def _steps_before(step: Step, workflows: Collection[Workflow]) -> tuple[list[Step], bool] | None:
    """Every step other than ``step`` that can run before it on a node: those its flow comes
    from in each workflow it is in, and every step of the workflows it is not in; and
    whether one its flow comes from is a wait. None when no workflow reaches it (what is
    unreachable is said elsewhere)."""
    found: list[Step] = []
    waited = False
    reached = False
    for wf in workflows:
        steps = wf.reachable()
        if all(s.iri != step.iri for s in steps):
            found += steps
            continue
        reached = True
        back: Digraph[URIRef] = {}
        for s in steps:
            for _, t in ways_out(s):
                add_edge(back, t, s.iri)
        own = [wf.steps[i] for i in descendants(back, step.iri) if i != step.iri]
        waited = waited or any(isinstance(s, WaitStep) for s in own)
        found += own
    return (found, waited) if reached else None
