"""A domain shape against what a workflow's steps write: the two ways it rejects, every time
and after the tool has acted, a result the workflow is written to produce.

- a property the shape requires (``sh:minCount``) that a step writes, on a node a step before
  it lands without it (:func:`required_before_written`): the gate judges the node as the
  earlier step leaves it;
- a property the shape allows one value of, written on the focus by two steps on one path
  (:func:`written_twice`): the later step's result is rejected.

Both read the built steps and tools (:mod:`._hazards` gives the flow of steps) and are handed
what the shapes require and allow (read by :mod:`._shape_counts`); the loader words and
locates what they find.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import cast

from rdflib import URIRef, Variable
from rdflib.term import Node

from ._digraph import descendants
from ._guard_writes import negated_triples
from ._hazards import Hazard, flow_graph, written_on_focus
from ._model import (
    ActionStep,
    Assertion,
    Step,
    Tool,
    WaitStep,
    Workflow,
)
from ._vocab import HORIS

__all__ = ["landing_tools", "required_before_written", "written_twice"]


def required_before_written(
    workflows: Mapping[URIRef, Workflow],
    required: Iterable[tuple[URIRef, URIRef, URIRef]],
    classes_of: Callable[[URIRef], frozenset[URIRef]],
    name: Callable[[Node], str],
) -> Iterator[Hazard]:
    """Each action step that can run before every step of its workflow that writes a property
    a domain shape requires, and lands a node of the shape's class without it. Only the
    properties a workflow writes are looked at: the check grows with the definitions, not
    with the shapes times the workflows."""
    by_property: dict[URIRef, list[tuple[URIRef, URIRef]]] = {}
    for shape, cls, prop in required:
        by_property.setdefault(prop, []).append((shape, cls))
    if not by_property:
        return
    for workflow in workflows.values():
        steps = {s.iri: s for s in workflow.reachable()}
        landing = {iri: found for iri, s in steps.items() if (found := _lands(s)) is not None}
        written = {p for _, props in landing.values() for p in props if p in by_property}
        flow = flow_graph(steps) if written else {}
        for prop in sorted(written, key=str):
            for shape, cls in by_property[prop]:
                kinds = classes_of(cls)
                writers = sorted(
                    (i for i, (t, props) in landing.items() if t in kinds and prop in props),
                    key=str,
                )
                if not writers:
                    continue
                seen, todo = set(), [workflow.start]
                while todo:  # what can run before a writer has
                    iri = todo.pop()
                    if iri in seen or iri in writers or iri not in steps:
                        continue
                    seen.add(iri)
                    todo.extend(flow.get(iri, ()))
                later = ", ".join(name(w) for w in writers)
                for iri in sorted(seen, key=str):
                    wait = steps[iri]
                    if (
                        isinstance(wait, WaitStep)
                        and wait.until is not None
                        and "this" in wait.until.variables
                        and workflow.focus_type in kinds
                    ):
                        yield Hazard(
                            iri,
                            f"the domain shape {name(shape)} requires {name(prop)} on every "
                            f"{name(cls)} (sh:minCount), which {name(workflow.iri)} writes only "
                            f"later, at {later}; the facts that answer this wait are about the "
                            f"instance's {name(cls)}, which does not hold it yet, so resume "
                            "refuses them all and the wait never ends by its horis:until",
                            "give that property shape sh:minCount 0 (keeping its other "
                            "constraints): the step that writes it is judged by it then",
                            HORIS.until,
                        )
                    if iri not in landing or landing[iri][0] not in kinds:
                        continue
                    tool = cast(ActionStep, steps[iri]).tool
                    assert tool is not None
                    # on a branch no writer follows (the other side of a decision), the
                    # property is not written "later": never, for an instance that comes here
                    when = (
                        f"only later, at {later}"
                        if descendants(flow, iri) & set(writers)
                        else f"only at {later}, which an instance that runs this step never reaches"
                    )
                    yield Hazard(
                        iri,
                        f"the domain shape {name(shape)} requires {name(prop)} on every "
                        f"{name(cls)} (sh:minCount), which {name(workflow.iri)} writes {when}; "
                        f"this step lands a {name(cls)} without it, so "
                        f"unless the node already holds {name(prop)} the gate rejects what "
                        f"{name(tool.iri)} returns here — after the tool has acted",
                        "give that property shape sh:minCount 0 (keeping its other "
                        f"constraints), or have {name(tool.iri)}'s effect assert {name(prop)}",
                    )


def written_twice(
    workflows: Mapping[URIRef, Workflow],
    single: Iterable[tuple[URIRef, URIRef, URIRef]],
    classes_of: Callable[[URIRef], frozenset[URIRef]],
    name: Callable[[Node], str],
    of_subjects: Iterable[tuple[URIRef, URIRef, URIRef]] = (),
) -> Iterator[Hazard]:
    """Each action step that writes on the focus a property a domain shape judging the focus
    allows one value of (``single``: see :func:`~._shape_counts.single_values`;
    ``of_subjects``, see :func:`~._shape_counts.single_values_of_subjects`: a shape that judges
    the subjects of a property judges the focus once either step has written that property on
    it), after another step of its
    workflow wrote it there: reached by the earlier step's ``horis:next``, so both run on one
    path (two branches of a decision are not). An effect only adds values, so the gate
    rejects what the later tool returns, every time, after it has acted — unless both write
    one fixed value, which is the same triple. Reported at the later tool's assertion
    (:attr:`Hazard.asserted`), once however many workflows run the step.

    Not an ``owl:FunctionalProperty``: no part of Horismos enforces one (the gate judges SHACL
    shapes), so the second value lands."""
    by_property: dict[URIRef, list[tuple[URIRef, URIRef]]] = {}
    for shape, cls, prop in single:
        by_property.setdefault(prop, []).append((shape, cls))
    by_subjects: dict[URIRef, list[tuple[URIRef, URIRef]]] = {}
    for shape, targeted, prop in of_subjects:
        by_subjects.setdefault(prop, []).append((shape, targeted))
        by_property.setdefault(prop, [])
    said: set[tuple[URIRef, URIRef]] = set()
    for workflow in workflows.values() if by_property else ():
        steps = {s.iri: s for s in workflow.reachable()}
        writers: dict[URIRef, list[tuple[ActionStep, Assertion]]] = {}
        for step in steps.values():
            if not isinstance(step, ActionStep) or step.tool is None or step.tool.effect is None:
                continue
            effect = step.tool.effect
            if step.var_for(effect.subject) != "this":
                continue
            for a in effect.asserts:
                if a.property in by_property:
                    writers.setdefault(a.property, []).append((step, a))
        flow = flow_graph(steps) if any(len(w) > 1 for w in writers.values()) else {}
        for prop, written in sorted(writers.items(), key=lambda pw: str(pw[0])):
            limits = sorted(
                shape for shape, cls in by_property[prop] if workflow.focus_type in classes_of(cls)
            )
            if len(written) < 2 or not (limits or prop in by_subjects):
                continue
            earlier: dict[URIRef, tuple[ActionStep, list[ActionStep]]] = {}
            judged: dict[URIRef, list[URIRef]] = {}
            for first, fa in written:
                after = {first.next, *descendants(flow, first.next)} if first.next else set()
                for then, ta in written:
                    same = fa.value is not None and fa.value == ta.value
                    if then.iri == first.iri or then.iri not in after or same:
                        continue
                    on_focus = written_on_focus(first) | written_on_focus(then)
                    by = sorted(s for s, t in by_subjects.get(prop, ()) if t in on_focus)
                    if not limits and not by:
                        continue
                    earlier.setdefault(then.iri, (then, []))[1].append(first)
                    judged.setdefault(then.iri, []).extend(by)
            for later, (step, before) in sorted(earlier.items(), key=lambda lb: str(lb[0])):
                if (later, prop) in said:
                    continue
                said.add((later, prop))
                tool = cast(Tool, step.tool)
                firsts = ", ".join(
                    f"{name(b.iri)} ({name(cast(Tool, b.tool).iri)})"
                    for b in sorted(before, key=lambda b: str(b.iri))
                )
                said_p, said_shape = name(prop), name(min([*limits, *judged[later]], key=str))
                if _guards_against(step, prop):  # blocked there, its tool never called
                    yield Hazard(
                        tool.iri,
                        f"{name(later)} comes after {firsts} on one path, each writing "
                        f"{said_p} on the instance's {name(workflow.focus_type)}, and "
                        f"{name(later)}'s own horis:requires forbids {said_p} there: an "
                        f"instance coming that way is blocked at {name(later)}, its tool never "
                        "called",
                        f"check where the way from {name(before[0].iri)} to {name(later)} was "
                        "meant to lead (a horis:next or horis:otherwise back to the decision "
                        f"before {name(later)}, say), or let {name(later)}'s guard allow what "
                        "the earlier step wrote",
                        asserted=prop,
                    )
                    continue
                yield Hazard(
                    tool.iri,
                    f"at {name(later)} this writes {said_p} on the instance's "
                    f"{name(workflow.focus_type)}, which {firsts} wrote before it on the same "
                    f"path, and shape {said_shape} allows one value of {said_p} (sh:maxCount "
                    "1): an effect adds a value, never replaces one, so the gate rejects what "
                    f"{name(tool.iri)} returns at {name(later)} every time — after the tool "
                    "has acted",
                    f"write each stage under a property of its own (one at {name(before[0].iri)}, "
                    f"another at {name(later)}), or drop sh:maxCount 1 on {said_p} from "
                    f"{said_shape}",
                    asserted=prop,
                )


def _guards_against(step: ActionStep, prop: URIRef) -> bool:
    """Whether ``step``'s own ``horis:requires`` forbids ``prop`` on the focus (``FILTER NOT
    EXISTS { ?this :accessBundle ?b }``, ``MINUS``): reached once it is written, the step is
    blocked before its tool acts, and no second value is written for the gate to reject."""
    select = getattr(step.requires, "select", None) if step.requires is not None else None
    if select is None:
        return False
    this = Variable("this")
    return any(s == this and p == prop for s, p, _ in negated_triples(select.algebra))


def landing_tools(workflows: Mapping[URIRef, Workflow]) -> dict[URIRef, dict[URIRef, Tool]]:
    """Per class, the tools (by IRI) some step of ``workflows`` calls whose effect lands a node
    declared of it: the gate judges each such result by the shapes that target that class
    (or a superclass), so what the shapes require is required of every call. One walk of the
    flows for a load, whatever the number of shapes asked about."""
    found: dict[URIRef, dict[URIRef, Tool]] = {}
    for workflow in workflows.values():
        for step in workflow.reachable():
            landed = _lands(step)
            if landed is not None and landed[0] is not None:
                tool = cast(ActionStep, step).tool
                assert tool is not None
                found.setdefault(landed[0], {}).setdefault(tool.iri, tool)
    return found


def _lands(step: Step) -> tuple[URIRef | None, frozenset[URIRef]] | None:
    """The declared class of the node ``step``'s tool writes (its effect's subject) and the
    properties it asserts there; None for a step that writes no node."""
    tool = step.tool if isinstance(step, ActionStep) else None
    effect = tool.effect if tool is not None else None
    if tool is None or effect is None:
        return None
    arg = tool.arg(effect.subject)
    return (arg.type if arg else None), frozenset(a.property for a in effect.asserts)
