"""A step that writes on ?this a new value of a property its own pattern requires ?this to
hold already, where a domain shape allows one value of it: an effect meant to replace a value.

Why: a claim comes in ``:status :Open``; the payout step requires ``?this :status :Open``
and its tool's effect writes ``:status :Approved``, and the claim's shape says ``sh:maxCount
1`` of ``:status``. An effect adds values and never removes one, so wherever the pattern
held the claim had two statuses once the payout landed: the gate rejected what the tool
returned, every time, after it had paid, nothing landed, and the next run paid again. It
validated, with the world beside it or without (written twice by two steps on one path is
:func:`~._shape_hazards.written_twice`'s; here the world gives the first value, and the
pattern says it is there).

Only what every solution of the step's own ``horis:requires`` needs is read (not an
``OPTIONAL``, a ``UNION``'s branch, a ``MINUS`` or a ``NOT EXISTS``), of the node the tool's
effect writes on, which must be ?this, under a shape targeting the focus type's class (or a
superclass). When the pattern requires one value and the effect fixes another
(``horis:value``), no run can pass: an error. When either is open (a variable held, a value
the tool returns), the gate passes the one run that writes the value already held: a
warning. Writing the same fixed value the pattern requires is the same triple, and nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from rdflib import RDF, URIRef, Variable

from ._model import ActionStep, Assertion
from ._preconditions import group_triples

__all__ = ["Replaced", "replaced_values"]


@dataclass(frozen=True)
class Replaced:
    """What the step's pattern requires of ?this (``held``: the triple's object) that its
    tool's ``assertion`` writes again, and the shapes allowing one value of it."""

    held: Any
    assertion: Assertion
    shapes: list[URIRef]
    certain: bool


def replaced_values(
    step: ActionStep,
    algebra: Any,
    focus_types: Iterable[URIRef],
    single: Iterable[tuple[URIRef, URIRef, URIRef]],
    classes_of: Callable[[URIRef], frozenset[URIRef]],
) -> list[Replaced]:
    """Each property ``step``'s pattern (``algebra``) requires ?this to hold that its tool
    writes on ?this, under a shape of ``single`` (``(shape, class, property)`` allowing one
    value: :func:`~._shape_counts.single_values`) judging a node of one of ``focus_types``
    (the focus types of the workflows reaching the step); by property."""
    tool = step.tool
    if tool is None or tool.effect is None or not tool.effect.subject:
        return []
    if step.var_for(tool.effect.subject) != "this":
        return []
    types = list(focus_types)
    limits: dict[URIRef, list[URIRef]] = {}
    for shape, cls, prop in single:
        if any(t in classes_of(cls) for t in types):
            limits.setdefault(prop, []).append(shape)
    if not limits:
        return []
    writes = {a.property: a for a in tool.effect.asserts if a.property in limits}
    this = Variable("this")
    found: dict[URIRef, Replaced] = {}
    for s, p, o in sorted(group_triples(algebra, every=True), key=str):
        if s != this or p == RDF.type or p not in writes or p in found:
            continue
        a = writes[p]
        if a.value is not None and a.value == o:
            continue  # the same triple: nothing is added
        fixed = not isinstance(o, Variable) and a.value is not None
        found[p] = Replaced(o, a, sorted(set(limits[p]), key=str), fixed)
    return [found[p] for p in sorted(found, key=str)]
