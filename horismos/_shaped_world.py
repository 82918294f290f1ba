"""A world's fact that a domain shape's own constraint on its values refuses: ``:r1 :currency
"eur"`` where the shape judging every ``:ReturnRequest`` says ``sh:in ( "EUR" "USD" "GBP" )``,
or ``:refundAmount 4.99E1`` (an ``xsd:double``) under ``sh:datatype xsd:decimal``.

It loaded without a word, and ``validate --world`` said nothing (the range's check lets one
number stand for another, a pattern compares numbers by value): the gate judges the whole
node an effect lands on, so the run's first step writing anything on it called its tool and
then had its result refused, for every instance of such a node, found out only then. Now a
warning at the world file's line, naming the shape's constraint.

The world is read as a stream (:mod:`._world_terms`'s pass), as :mod:`._closed_world` reads
it: only the nodes typed with a class a domain shape judges are kept
(:class:`~._world_members.WorldMembers`), and a fact of one of them whose property a property
shape of that shape judges by its value alone (``sh:datatype``, ``sh:in``, ``sh:nodeKind``, a
pattern, a length, a bound or ``sh:languageIn``) is judged by the gate's own compiled checks,
each compiled once.
A fact written before its node's type, a shape whose path is no single property, and one
inside ``sh:or``, ``sh:not`` and the like are not judged; once a property shape has refused a
fact, the others are not looked at.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pyoxigraph as ox
from rdflib import RDF, XSD, Graph, Literal, URIRef
from rdflib.namespace import SH
from rdflib.term import BNode, Node

from ._datatypes import literal_hint
from ._definitions_model import Definitions
from ._errors import Problem
from ._rdf_lists import list_members
from ._shacl import deactivated
from ._shacl_constraints import COMPILERS, NotCompiled
from ._world_facts import fact_warning, world_value
from ._world_members import WorldMembers

__all__ = ["ShapedSeen"]

_STRING = ox.NamedNode(str(XSD.string))

_ALONE = (
    SH.datatype,
    SH["in"],
    SH.nodeKind,
    SH.pattern,
    SH.minLength,
    SH.maxLength,
    SH.minInclusive,
    SH.maxInclusive,
    SH.minExclusive,
    SH.maxExclusive,
    SH.languageIn,
)
"""The constraints whose compiled check reads nothing but the value (``sh:hasValue`` is left
out: the world may hold the value required beside the one judged)."""

Check = Callable[[Node, Collection[Node], Any], Any]


@dataclass(frozen=True)
class _Judge:
    """One property shape of a domain shape, and its compiled value-alone checks."""

    shape: URIRef | BNode
    pshape: Node
    checks: tuple[tuple[URIRef, Check], ...]


@dataclass
class ShapedSeen:
    """What the pass over the world files keeps of the nodes domain shapes judge, and the
    first fact each property shape refuses (see the module's docstring)."""

    judges: WorldMembers[dict[ox.NamedNode, list[_Judge]]] = field(default_factory=WorldMembers)
    """each class a shape judges: by property, the property shapes judging its values"""
    refused: dict[Node, tuple[Path, ox.Quad, _Judge, URIRef]] = field(default_factory=dict)
    graph: Graph = field(default_factory=Graph)
    """the definitions' graph, where the shapes are written"""

    @classmethod
    def of(cls, defs: Definitions) -> ShapedSeen:
        """The domain shapes of ``defs`` judging values alone, by each class they judge."""
        g = defs.graph
        seen = cls(graph=g)
        made: dict[Node, _Judge | None] = {}
        for klass, shapes in defs.domain_targets.by_class.items():
            by_prop: dict[ox.NamedNode, list[_Judge]] = {}
            for shape in sorted(shapes, key=str):
                if deactivated(g, shape):
                    continue
                pshapes = list(g.objects(shape, SH.property))
                if (shape, SH.path, None) in g:
                    pshapes.append(shape)
                for pshape in pshapes:
                    path = g.value(pshape, SH.path)
                    if not isinstance(path, URIRef):
                        continue
                    if pshape not in made:
                        made[pshape] = _judge(g, shape, pshape)
                    judge = made[pshape]
                    if judge is not None:
                        by_prop.setdefault(ox.NamedNode(str(path)), []).append(judge)
            if by_prop:
                seen.judges.watched[ox.NamedNode(str(klass))] = by_prop
        return seen

    def see(self, quad: ox.Quad, path: Path) -> None:
        """One quad of the pass: a typing of a watched class keeps its subject; a fact of a
        kept subject that a property shape judging it refuses is noted, once a property
        shape."""
        if not self.judges.watched:
            return
        kept = self.judges.see(quad)
        if kept is None:
            return
        value: Node | None = None
        for by_prop in kept:
            for judge in by_prop.get(quad.predicate, ()):
                if judge.pshape in self.refused:
                    continue
                value = _rdflib(quad.object) if value is None else value
                for p, check in judge.checks:
                    if next(iter(check(value, (value,), cast(Any, None))), None) is not None:
                        self.refused[judge.pshape] = (path, quad, judge, p)
                        break

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
        for where, quad, judge, p in self.refused.values():
            if where != path:
                continue
            value = quad.object
            shown, mark = world_value(value, written, name)
            prop = written(quad.predicate.value)
            said = _constraint(self.graph, judge.pshape, p, name)
            out.append(
                fact_warning(
                    path,
                    quad,
                    written,
                    line_of,
                    f"the world gives {prop} {shown}, but shape {name(judge.shape)} judging this "
                    f"node requires {said}: the node never conforms, so every step whose tool "
                    "lands anything on it fails, the gate rejecting its result after the call "
                    "has acted",
                    mark=mark,
                    hint=_hint(self.graph, judge.pshape, p, value, prop, said, name),
                )
            )
        return out


def _judge(g: Graph, shape: Node, pshape: Node) -> _Judge | None:
    """``pshape``'s value-alone checks, compiled as the gate compiles them; None when it has
    none (or is deactivated). A constraint the gate cannot compile says nothing here: the
    shape checks report it."""
    if deactivated(g, pshape):
        return None
    path = g.value(pshape, SH.path)
    checks = []
    for p in _ALONE:
        if (pshape, p, None) not in g:
            continue
        try:
            checks.append((p, COMPILERS[p][1](g, pshape, path)))
        except (NotCompiled, re.error, ValueError, TypeError):
            continue
    if not checks or not isinstance(shape, URIRef | BNode):
        return None
    return _Judge(shape, pshape, tuple(checks))


def _rdflib(term: object) -> Node:
    """A world file's term as the gate's checks read it."""
    if isinstance(term, ox.Literal):
        if term.language:
            return Literal(term.value, lang=term.language)
        if term.datatype == _STRING:  # as the store gives it the gate: a plain literal
            return Literal(term.value)
        return Literal(term.value, datatype=URIRef(term.datatype.value))
    if isinstance(term, ox.NamedNode):
        return URIRef(term.value)
    return BNode(str(getattr(term, "value", term)))


def _constraint(g: Graph, pshape: Node, p: URIRef, name: Callable[[Node], str]) -> str:
    """``p`` of ``pshape`` as the shape writes it: ``sh:in ("EUR" "USD")``,
    ``sh:datatype xsd:decimal``, ``sh:pattern "^RF-"``."""
    o = g.value(pshape, p)
    if o is None:
        return name(p)
    if (o, RDF.first, None) in g or o == RDF.nil:
        return f"{name(p)} (" + " ".join(_said(m, name) for m in list_members(g, o)) + ")"
    return f"{name(p)} {_said(o, name)}"


def _said(term: Node, name: Callable[[Node], str]) -> str:
    """A shape's term as Turtle writes it: a string quoted, a number bare, a node by name."""
    if not isinstance(term, Literal):
        return name(term)
    if term.language:
        return f'"{term}"@{term.language}'
    if term.datatype is None:
        return f'"{term}"'
    if str(term.datatype).endswith(("#integer", "#decimal", "#boolean")):
        return str(term)
    return f'"{term}"^^{name(term.datatype)}'


def _hint(
    g: Graph,
    pshape: Node,
    p: URIRef,
    value: object,
    prop: str,
    said: str,
    name: Callable[[Node], str],
) -> str:
    """What to write: for a literal of another datatype than ``sh:datatype``, the literal of
    it (``49.90`` for ``"49.90"^^xsd:double``); else a value that meets the constraint."""
    dt = g.value(pshape, SH.datatype) if p == SH.datatype else None
    if isinstance(dt, URIRef) and isinstance(value, ox.Literal) and not value.language:
        told = literal_hint(Literal(value.value), dt, name)
        if not told.startswith("write a value of"):
            return f"{told}, or correct the shape"
    return f"write a value of {prop} that meets {said}, or correct the shape"
