"""What a domain's shapes allow of a property's count: each ``sh:minCount`` and
``sh:maxCount`` a shape targeting a class (or the subjects of a property) sets on a plain
``sh:path``, read once from the definitions' graph for the checks that compare it with what
the workflow's tools write (:func:`~._shape_hazards.required_before_written`,
:func:`~._shape_hazards.written_twice`). Kept apart from those checks: it reads shapes, not steps.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

from rdflib import SH, Graph, Literal, URIRef

from ._shacl import deactivated

__all__ = ["minimum_counts", "single_values", "single_values_of_subjects"]


def _counts(
    g: Graph, bound: URIRef, target: URIRef = SH.targetClass
) -> Iterator[tuple[URIRef, URIRef, URIRef, int]]:
    """``(shape, class, property, n)`` for each count ``bound`` (``sh:minCount``,
    ``sh:maxCount``) of ``n`` a shape targeting a class by ``sh:targetClass`` (or, with
    ``target``, the subjects of a property by ``sh:targetSubjectsOf``: then the property in
    place of the class) sets on a plain ``sh:path``; a shape switched off
    (``sh:deactivated true``) sets none."""
    for shape, cls in g.subject_objects(target):
        if not isinstance(cls, URIRef):
            continue
        for prop_shape in [shape, *g.objects(shape, SH.property)]:
            path, count = g.value(prop_shape, SH.path), g.value(prop_shape, bound)
            if deactivated(g, prop_shape):
                continue
            if isinstance(path, URIRef) and isinstance(count, Literal):
                value = count.toPython()
                if isinstance(value, int) and not isinstance(value, bool):
                    yield cast(URIRef, shape), cls, path, value


def minimum_counts(g: Graph) -> Iterator[tuple[URIRef, URIRef, URIRef]]:
    """``(shape, class, property)`` for each property a shape targeting a class requires
    (``sh:minCount`` of 1 or more)."""
    return ((shape, cls, p) for shape, cls, p, n in _counts(g, SH.minCount) if n >= 1)


def single_values(g: Graph) -> Iterator[tuple[URIRef, URIRef, URIRef]]:
    """``(shape, class, property)`` for each property a shape targeting a class allows one
    value of (``sh:maxCount 1``)."""
    return ((shape, cls, p) for shape, cls, p, n in _counts(g, SH.maxCount) if n == 1)


def single_values_of_subjects(g: Graph) -> Iterator[tuple[URIRef, URIRef, URIRef]]:
    """``(shape, targeted, property)`` for each property a shape targeting the subjects of
    ``targeted`` (``sh:targetSubjectsOf``) allows one value of (``sh:maxCount 1``)."""
    return (
        (shape, t, p) for shape, t, p, n in _counts(g, SH.maxCount, SH.targetSubjectsOf) if n == 1
    )
