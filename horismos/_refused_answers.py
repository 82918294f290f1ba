"""A wait whose ``horis:until`` requires of ?this a value the domain shapes refuse: no answer
can end it.

Why: a change request waits at ``:AwaitCab`` ``horis:until "?this :changeStatus :Approved ."``,
where the shape judging change requests says ``sh:in ( :Scheduled :Deployed :RolledBack )``
of ``:changeStatus`` — or allows one status (``sh:maxCount 1``) and the step before the wait
wrote ``:changeStatus :Scheduled`` on every way to it. The board's answer (``resume --facts
':c2 :changeStatus :Approved .'``) is a person's input, held to the same domain shapes as a
tool's result: it broke them and was refused, so the instance waited for ever, after the steps
before it had acted. It validated, with its world or without.

Only what every solution of the until needs is read (not an ``OPTIONAL``, a ``UNION``'s
branch, a ``MINUS`` or a ``NOT EXISTS``): a triple ``?this :p V``, judged by the shapes that
would judge the focus (its workflows' focus types, their superclasses, the subjects of
``:p``). A fixed ``V`` refused alone — an ``sh:in`` without it, ``sh:maxCount 0``, a
``sh:datatype`` or ``sh:nodeKind`` of the other kind, a ``sh:pattern``, length, range or
``sh:hasValue`` (with ``sh:maxCount 1``) its compiled check fails — is certain
(:func:`~._effect_shapes.refusing`: the very checks an effect's fixed value gets); a variable
``V`` is refused only by ``sh:maxCount 0``. Under ``sh:maxCount 1``, a value a step before the
wait writes on every way to it (:func:`~._held_waits.written_before`) refuses a fixed ``V``:
certain when every step writing ``:p`` fixes another value; a step writing what its tool
returns may write ``V`` (then the until held and nothing waited): a warning. A wait with a
``horis:timeout`` ends at it: a warning too. A ``sh:closed true`` shape that names the
property in no ``sh:property`` nor ``sh:ignoredProperties`` refuses any ``V``: an on-call
engineer's acknowledgement (``?this :acknowledgedBy ?eng``) was refused by the incident's
closed shape, and the incident waited until its timeout escalated it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from rdflib import RDF, SH, Graph, Literal, URIRef, Variable
from rdflib.term import Node

from ._effect_shapes import closed_allows
from ._held_waits import written_before
from ._model import ActionStep, Step, WaitStep, Workflow
from ._preconditions import group_triples
from ._shacl import Targets, deactivated
from ._shape_counts import single_values

__all__ = ["Refused", "focus_types", "refused_answers", "refused_requirements"]

_THIS = Variable("this")


@dataclass(frozen=True)
class Refused:
    """A value ``?this :p V`` (``triple``) of a wait's until that no answer can give: refused
    by ``shape`` for ``why``, or (``writers``: the steps writing another value before the
    wait) by its one value being taken already."""

    triple: tuple[Any, URIRef, Node]
    shape: URIRef
    why: str
    writers: tuple[URIRef, ...] = ()
    certain: bool = True
    closed: bool = False
    """``shape`` is ``sh:closed true`` and allows no value of the property at all."""

    def words(
        self, name: Callable[[Node], str], term: Callable[[Node], str], timeout: bool
    ) -> tuple[str, str, str]:
        """Severity, message and hint: an error when certain and only an answer ends the wait
        (no horis:timeout); ``term`` writes a value as a pattern does."""
        _, prop, value = self.triple
        p, shape = name(prop), name(self.shape)
        if self.closed:
            why = (
                f"shape {shape} is closed (sh:closed true) and names {p} in no sh:property nor "
                "sh:ignoredProperties, so it allows no value of it"
            )
            hint = (
                f"add sh:property [ sh:path {p} ] to {shape} (or list {p} in its "
                "sh:ignoredProperties), or wait for a property it allows"
            )
        elif self.writers:
            why = (
                f"{', '.join(name(w) for w in self.writers)} writes {p} on ?this on every way "
                f"to the wait, and shape {shape} allows one value of it (sh:maxCount 1); an "
                "answer adds a value, never replaces one"
            )
            hint = (
                "wait for a property of its own (?this :approvedAt ?t), or drop "
                f"sh:maxCount 1 on {p}"
            )
        else:
            why = f"shape {shape} requires {self.why} of {p}"
            hint = (
                f"drop {self.why} on {p} from {shape}, or wait for a property it allows"
                if isinstance(value, Variable)
                else f"correct the shape to allow {term(value)}, or wait for a value it allows"
            )
        message = (
            f"horis:until requires ?this to hold {p} {term(value)}, but {why}: resume refuses the "
            "answer that would give it (the facts break the domain shapes), so "
            + (
                "the wait ends only at its horis:timeout"
                if timeout
                else "the instance waits for ever"
            )
            + ("" if self.certain else ", unless the tool before returns that value")
            + ", after the steps before it have acted"
        )
        return ("error" if self.certain and not timeout else "warning"), message, hint


def refused_answers(
    steps: Mapping[URIRef, Step],
    workflows: Mapping[URIRef, Workflow],
    g: Graph,
    targets: Targets,
    classes_of: Callable[[URIRef], frozenset[URIRef]],
    refuses: Callable[[Node, Node], str | None],
) -> Iterator[tuple[WaitStep, Refused]]:
    """Each fixed value a wait's until requires of ?this that the domain shapes judging a node
    of the focus types of the workflows reaching it refuse as an answer, by wait and property.
    ``refuses(pshape, value)`` says what of a property shape refuses a value
    (:func:`~._effect_shapes.refusing`)."""
    waits = [s for s in steps.values() if isinstance(s, WaitStep) and s.until is not None]
    if not waits:
        return
    types = focus_types(workflows)
    held, single = written_before(workflows)[0], list(single_values(g))
    for wait in sorted(waits, key=lambda w: str(w.iri)):
        found: dict[URIRef, Refused] = {}
        algebra = wait.until.select.algebra  # type: ignore[union-attr]
        for s, p, o in sorted(group_triples(algebra, every=True), key=str):
            if s != _THIS or not isinstance(p, URIRef) or p == RDF.type or p in found:
                continue
            shapes: set[URIRef] = set(targets.by_subject_of.get(p, set()))
            for t in types.get(wait.iri, ()):
                shapes |= targets.by_class.get(t, set())
            refused = _refused_alone(g, shapes, (s, p, o), refuses)
            if refused is None and not isinstance(o, Variable) and p in held.get(wait.iri, set()):
                refused = _taken((s, p, o), types.get(wait.iri, set()), steps, single, classes_of)
            if refused is not None:
                found[p] = refused
        for p in sorted(found, key=str):
            yield wait, found[p]


def focus_types(workflows: Mapping[URIRef, Workflow]) -> dict[URIRef, set[URIRef]]:
    """The focus types of the workflows that reach each step: the classes ?this is of there."""
    types: dict[URIRef, set[URIRef]] = {}
    for wf in workflows.values():
        for s in wf.reachable():
            types.setdefault(s.iri, set()).add(wf.focus_type)
    return types


def refused_requirements(
    step: URIRef,
    algebra: Any,
    types: Mapping[URIRef, set[URIRef]],
    g: Graph,
    targets: Targets,
    refuses: Callable[[Node, Node], str | None],
) -> Iterator[Refused]:
    """Each fixed value a step's pattern (a ``horis:requires``, a decision rule's) requires of
    ?this, ``?this :riskLevel "high"``, that the domain shapes judging the focus refuse by the
    value alone (``sh:in ( "LOW" "MEDIUM" "HIGH" )``), once a property: no focus that meets
    the shapes holds it, so the pattern never holds.

    Why: the decision routing high-risk changes to the board's approval tested ``"high"``,
    the score tool wrote ``"HIGH"`` (the only spelling the shape lets land), so the rule never
    held and every high-risk change was applied through ``horis:otherwise``, unapproved. It
    validated. Only what every solution needs is read, as for a wait's until
    (:func:`refused_answers`)."""
    seen: set[URIRef] = set()
    for s, p, o in sorted(group_triples(algebra, every=True), key=str):
        if s != _THIS or not isinstance(p, URIRef) or p == RDF.type or p in seen:
            continue
        if isinstance(o, Variable):
            continue
        shapes: set[URIRef] = set(targets.by_subject_of.get(p, set()))
        for t in types.get(step, ()):
            shapes |= targets.by_class.get(t, set())
        refused = _refused_alone(g, shapes, (s, p, o), refuses)
        if refused is not None:
            seen.add(p)
            yield refused


def _refused_alone(
    g: Graph,
    shapes: set[URIRef],
    triple: tuple[Any, URIRef, Node],
    judge: Callable[[Node, Node], str | None],
) -> Refused | None:
    """The first shape (in IRI order) whose property shape of ``triple``'s property refuses its
    value, whatever else the node holds."""
    _, p, o = triple
    for shape in sorted(shapes, key=str):
        if deactivated(g, shape):
            continue
        allowed = closed_allows(g, shape)
        if allowed is not None and p not in allowed:  # any value: the node never conforms
            return Refused(triple, shape, "sh:closed true", closed=True)
        pshapes = [x for x in g.objects(shape, SH.property) if not deactivated(g, x)]
        if (shape, SH.path, None) in g:
            pshapes.append(shape)
        for pshape in sorted(pshapes, key=str):
            if g.value(pshape, SH.path) != p:
                continue
            if isinstance(o, Variable):  # any value: only sh:maxCount 0 refuses them all
                most = g.value(pshape, SH.maxCount)
                why = "sh:maxCount 0" if isinstance(most, Literal) and str(most) == "0" else None
            else:
                why = judge(pshape, o)
            if why is not None:
                return Refused(triple, shape, why)
    return None


def _taken(
    triple: tuple[Any, URIRef, Node],
    types: set[URIRef],
    steps: Mapping[URIRef, Step],
    single: Iterable[tuple[URIRef, URIRef, URIRef]],
    classes_of: Callable[[URIRef], frozenset[URIRef]],
) -> Refused | None:
    """``triple``'s property allowed one value on the focus, written before the wait on every
    way to it: the answer would be a second value. Certain when every step writing it on ?this
    fixes another value; a warning when one writes what its tool returns; nothing when one
    fixes the value the until requires."""
    _, p, o = triple
    limiting = sorted(
        {
            shape
            for shape, cls, prop in single
            if prop == p and any(t in classes_of(cls) for t in types)
        },
        key=str,
    )
    if not limiting:
        return None
    writers, certain = [], True
    for step in steps.values():
        if not isinstance(step, ActionStep) or step.tool is None or step.tool.effect is None:
            continue
        if step.var_for(step.tool.effect.subject) != "this":
            continue
        for a in step.tool.effect.asserts:
            if a.property != p:
                continue
            if a.value == o:
                return None  # that step gives the value: the until may hold when reached
            if a.value is None:
                certain = False
            writers.append(step.iri)
    if not writers:
        return None
    return Refused(
        triple, limiting[0], "sh:maxCount 1", tuple(sorted(set(writers), key=str)), certain
    )
