"""The nodes of a world file that a check over its stream keeps: those typed with a class the
check watches, each with what the check wants of that class.

The closed-world and shaped-world warnings (:mod:`._closed_world`, :mod:`._shaped_world`)
each judge a fact by its subject's classes, and read the world once, as a stream: they keep
a subject when its typing goes by, up to :data:`MANY` subjects, so that what is kept stays
small whatever the world's size. A fact written before its node's type is not judged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

import pyoxigraph as ox
from rdflib import RDF

__all__ = ["MANY", "WorldMembers"]

MANY = 100_000
"""Past this many nodes of the watched classes no more are kept: the world's nodes of one
class are alike, and the first of them tell."""

_TYPE = ox.NamedNode(str(RDF.type))

T = TypeVar("T")


@dataclass
class WorldMembers(Generic[T]):
    """The watched classes, each with what a check wants of it, and the subjects kept."""

    watched: dict[ox.NamedNode, T] = field(default_factory=dict)
    """each class watched: what the check judges its members by"""
    kept: dict[object, list[T]] = field(default_factory=dict)
    """each subject kept: what each of its watched classes is judged by"""

    def see(self, quad: ox.Quad) -> list[T] | None:
        """One quad of the pass: a typing of a watched class keeps its subject (and, as every
        typing, gives None: rdf:type is not judged here); any other fact gives what its kept
        subject is judged by, None for a subject not kept."""
        if quad.predicate == _TYPE:
            cls = quad.object
            wanted = self.watched.get(cls) if isinstance(cls, ox.NamedNode) else None
            if wanted is not None and (quad.subject in self.kept or len(self.kept) < MANY):
                self.kept.setdefault(quad.subject, []).append(wanted)
            return None
        return self.kept.get(quad.subject)
