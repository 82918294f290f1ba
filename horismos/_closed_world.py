"""A world's fact that a ``sh:closed true`` domain shape refuses: ``:l1 :lineCode "BUMPER"``
where the shape judging every ``:LineItem`` names only ``:assessedAmount``.

It loaded without a word, and ``validate`` judged a closed shape only against what the effects
write: the run's first step landing on a line item called its tool, then the gate refused the
result (the node "is closed. It cannot have value …" of a fact the world had all along) — or,
the tool not idempotent, the step was blocked there, every instance, found out only then.
``validate --world`` now warns of it, at the world file's line, naming the shape and the
property to add to it.

The world is read as a stream (:mod:`._world_terms`'s pass). Only the nodes typed with a class
a closed shape judges (its ``sh:targetClass``, or a subclass) are kept
(:class:`~._world_members.WorldMembers`), and each of their facts is looked up in the shape's
allowed properties. A shape whose ``sh:path`` is no single property is not judged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyoxigraph as ox
from rdflib import RDF, Graph, URIRef
from rdflib.term import Node

from ._definitions_model import Definitions
from ._errors import Problem
from ._shacl import deactivated
from ._shacl_constraints import closed_allows
from ._world_facts import fact_warning, world_value
from ._world_members import WorldMembers

__all__ = ["ClosedSeen"]

_TYPE = ox.NamedNode(str(RDF.type))


@dataclass
class ClosedSeen:
    """What the pass over the world files keeps of the nodes closed shapes judge, and the
    first fact of each property each shape refuses (see the module's docstring)."""

    closed: WorldMembers[list[tuple[URIRef, frozenset[ox.NamedNode]]]] = field(
        default_factory=WorldMembers
    )
    """each class a closed shape judges: each such shape, with the properties it allows"""
    refused: dict[tuple[URIRef, ox.NamedNode], tuple[Path, ox.Quad]] = field(default_factory=dict)

    @classmethod
    def of(cls, defs: Definitions) -> ClosedSeen:
        """The closed domain shapes of ``defs``, by each class they judge."""
        seen = cls()
        g = defs.graph
        targets = defs.domain_targets
        allowed_of: dict[URIRef, frozenset[ox.NamedNode] | None] = {}
        for klass, shapes in targets.by_class.items():
            for shape in sorted(shapes, key=str):
                if shape not in allowed_of:
                    allowed_of[shape] = _allowed(g, shape)
                allowed = allowed_of[shape]
                if allowed is not None:
                    watched = seen.closed.watched.setdefault(ox.NamedNode(str(klass)), [])
                    watched.append((shape, allowed))
        return seen

    def see(self, quad: ox.Quad, path: Path) -> None:
        """One quad of the pass: a typing of a watched class keeps its subject; a fact of a
        kept subject that one of its closed shapes does not allow is noted, once a shape and
        property."""
        if not self.closed.watched:
            return
        # rdf:type left out of sh:ignoredProperties: said at the shape itself
        judged = self.closed.see(quad)
        if judged is None:
            return
        for shapes in judged:
            for shape, allowed in shapes:
                key = (shape, quad.predicate)
                if quad.predicate not in allowed and key not in self.refused:
                    self.refused[key] = (path, quad)

    def problems(
        self,
        path: Path,
        name: Callable[[Node], str],
        written: Callable[[str], str],
        line_of: Callable[[str, str], int | None],
    ) -> list[Problem]:
        """A warning for each fact of ``path`` noted, at its line (``line_of(property IRI,
        the value's text)``); ``written`` writes a world IRI as the file does, ``name`` a
        definition's term as the definitions do."""
        out = []
        for (shape, _), (where, quad) in self.refused.items():
            if where != path:
                continue
            shown, mark = world_value(quad.object, written)
            prop = written(quad.predicate.value)
            out.append(
                fact_warning(
                    path,
                    quad,
                    written,
                    line_of,
                    f"the world gives {prop} {shown}, but shape {name(shape)} judging this node "
                    f"is sh:closed true and names no {prop} in its sh:property shapes nor its "
                    "sh:ignoredProperties: the node never conforms, so every step whose tool "
                    "lands on it fails, the gate rejecting its result after the call, or is "
                    "blocked before a tool that is not idempotent is called",
                    mark=mark,
                    hint=f"add sh:property [ sh:path {prop} ] to shape {name(shape)}, or list "
                    f"{prop} in its sh:ignoredProperties",
                )
            )
        return out


def _allowed(g: Graph, shape: URIRef) -> frozenset[ox.NamedNode] | None:
    """The properties a ``sh:closed true`` ``shape`` allows, as the gate reads them
    (:func:`~._shacl_constraints.closed_allows`), rdf:type with them; None when the shape is not
    closed, is deactivated, or has a path that is no single property."""
    allowed = closed_allows(g, shape)
    if allowed is None or deactivated(g, shape):
        return None
    if not all(isinstance(p, URIRef) for p in allowed):
        return None
    return frozenset({_TYPE, *(ox.NamedNode(str(p)) for p in allowed)})
