"""The touched node as it would be after a step, read by the gate's shapes without
building it: the step's triples for the subject, the world's reads (each recorded) for a
node past it, and only when a shape asks.

:class:`After` is what the compiled shapes read; :class:`ReadOnAsking` is pyshacl's data
graph over the same view. Apart from :mod:`._gate`, which decides which shapes judge a step.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Protocol

from rdflib import RDF, RDFS, Literal, URIRef
from rdflib.plugins.stores.memory import Memory
from rdflib.term import Node

from ._gate_effect import reaches
from ._sparql_parse import PreparingGraph

__all__ = ["After", "Beyond", "ReadOnAsking"]

_TYPE, _SUBCLASS = RDF.type, RDFS.subClassOf  # a namespace attribute is a lookup each time

_REFERRERS = "SELECT ?s WHERE { ?s ?p ?o }"  # the subjects pointing at ?o by ?p
_POINTING = "SELECT ?s ?p WHERE { ?s ?p ?o }"  # who points at ?o, and by what
_JOINED = "SELECT ?s ?o WHERE { ?s ?p ?o }"  # every use of the property ?p


class ReadOnAsking(Memory):
    """pyshacl's data graph for a step: what :meth:`Gate._after_graph` put in it, and a node
    past the subject read through the after-view (:class:`After`, the world's reads, each
    recorded) the first time pyshacl asks for it — its edges, or who points at it by a
    property (or holds a value), every use of a property a query scans. So a shape pyshacl
    judges (a SPARQL constraint, a qualified value shape) sees what the world holds two hops
    away, or elsewhere, as pyshacl over the whole world would, and nothing is read that it
    does not ask for. A pattern naming nothing at all (``?s ?p ?o``) is answered from the
    step's own view: the whole world is never read."""

    def __init__(self, view: After) -> None:
        super().__init__()
        self._view = view
        self._asked: set[tuple[Node | None, Node | None, Node | None]] = set()
        self.graph = PreparingGraph(store=self)
        """The one graph it holds: what is read on asking lands in it."""

    def triples(self, triple_pattern: Any, context: Any = None) -> Any:
        s, p, o = triple_pattern
        if isinstance(p, URIRef) or p is None:  # else a path, walked one predicate at a time
            key = (s, p, None) if s is not None else (None, p, o)
            if key not in self._asked and not isinstance(s, Literal):
                self._asked.add(key)
                for triple in self._read(s, p, o):
                    self.add(triple, self.graph)
        return super().triples(triple_pattern, context)

    def _read(self, s: Node | None, p: URIRef | None, o: Node | None) -> list[tuple]:
        view = self._view
        if s is not None:
            if p is not None:
                return [(s, p, v) for v in view.objects(s, p)]
            return [(s, q, v) for q, v in view.outgoing(s)]
        if o is not None:  # who points at a node (or holds a value: a uniqueness check)
            if p == _TYPE:  # the instances of a class, in the world too
                return [(x, p, o) for x in view.instances(o)]
            if p is not None:
                return [(x, p, o) for x in view.subjects(o, p)]
            return [(x, q, o) for x, q in view.referrers(o)]
        if p is not None:  # every use of a property: what the shape's query asks for
            return [(x, p, v) for x, v in view.pairs(p)]
        return []  # the whole world is never read: the step's own view only


class Beyond(Protocol):
    """The world's reads the gate makes of nodes past the subject (a store's)."""

    def objects(self, subject: Node, predicate: Node) -> Iterable[Node]: ...

    def outgoing(self, subject: Node) -> Iterable[tuple[Node, Node, Node]]: ...

    def select(
        self, query: str, bindings: Mapping[str, Node], ns: Mapping[str, str]
    ) -> list[dict[str, Node]]: ...


class After:
    """The data the compiled shapes read: the graph :meth:`Gate._after_graph` gives pyshacl —
    ``subject`` after the step; each of its values' types from the world; each type's
    superclasses — answered from the step's triples and ``types_of`` without building it.

    With ``world``, a node past the subject is read as the world holds it, when a shape asks:
    a value a ``sh:node`` judges, the nodes a sequence or inverse path walks to. Without it
    they looked empty, so ``sh:node`` on a value, or ``sh:path ( :owner rdfs:label )``, failed a
    step whose data conforms, and an inverse path's ``sh:maxCount`` passed one that does not.
    Only what a shape walks to is read (each read recorded, as a trace's other reads are); a
    step a shape judges on the subject alone reads nothing more."""

    __slots__ = (
        "_beyond",
        "_objects",
        "_own",
        "_subject",
        "_superclasses",
        "_types",
        "_types_of",
        "_world",
    )

    def __init__(
        self,
        subject: Node,
        own: dict[Node, set[Node]],
        types_of: Any,
        superclasses: Mapping[URIRef, frozenset[URIRef]],
        world: Beyond | None = None,
    ) -> None:
        self._subject, self._own = subject, own
        self._types_of, self._superclasses = types_of, superclasses
        self._world = world
        self._objects: set[Node] | None = None  # the subject's non-literal values
        self._types: dict[Node, set[Node]] = {}  # a value's types, as read so far
        self._beyond: dict[tuple[Node, Node, Node | None], set[Node]] = {}  # read past it

    def objects(self, node: Node, pred: URIRef) -> set[Node]:
        if node is self._subject or node == self._subject:
            return self._own.get(pred, set())
        if pred == _TYPE:
            return self._types_of_value(node)
        if pred == _SUBCLASS and self._is_type(node):
            return set(self._superclasses.get(node, ()))  # type: ignore[call-overload]
        if self._world is None or isinstance(node, Literal) or pred == _SUBCLASS:
            return set()
        key = (node, pred, None)
        found = self._beyond.get(key)
        if found is None:
            found = self._beyond[key] = set(self._world.objects(node, pred))
        return found

    def outgoing(self, node: Node) -> list[tuple[Node, Node]]:
        if node is self._subject or node == self._subject:
            return [(p, o) for p, values in self._own.items() for o in values]
        if self._world is not None and not isinstance(node, Literal) and not self._is_type(node):
            found: dict[Node, set[Node]] = {}
            for _, p, o in self._world.outgoing(node):
                found.setdefault(p, set()).add(o)
            for p, values in found.items():
                self._beyond.setdefault((node, p, None), set()).update(values)
            return [(p, o) for p, values in found.items() for o in values]
        out: list[tuple[Node, Node]] = [(_TYPE, t) for t in self._types_of_value(node)]
        if self._is_type(node):
            out += [(_SUBCLASS, s) for s in self._superclasses.get(node, ())]  # type: ignore
        return out

    def subjects(self, node: Node, pred: URIRef) -> set[Node]:
        out = {self._subject} if node in self._own.get(pred, ()) else set()
        if pred == _TYPE:
            out |= {o for o in self._own_objects() if node in self._types_of_value(o)}
        elif pred == _SUBCLASS:
            types = set(self._own.get(_TYPE, ()))
            for o in self._own_objects():
                types |= self._types_of_value(o)
            out |= {t for t in types if node in self._superclasses.get(t, ())}  # type: ignore
        elif self._world is not None:  # who points at ``node`` in the world, besides the subject
            key = (node, pred, node)
            found = self._beyond.get(key)
            if found is None:
                rows = self._world.select(_REFERRERS, {"p": pred, "o": node}, {})
                found = self._beyond[key] = {r["s"] for r in rows if "s" in r}
            out |= found
        return out

    def instances(self, cls: Node) -> set[Node]:
        """The nodes typed ``cls``: those of the after-view, and the world's (what a SPARQL
        constraint pyshacl judges asks with ``?x a :Class``)."""
        found = self.subjects(cls, _TYPE)
        if self._world is not None:
            rows = self._world.select(_REFERRERS, {"p": _TYPE, "o": cls}, {})
            found |= {r["s"] for r in rows if "s" in r and r["s"] != self._subject}
        return found

    def referrers(self, node: Node) -> list[tuple[Node, Node]]:
        """Who points at ``node``, and by what: the subject as after the step, the rest as
        the world holds them (what a SPARQL constraint pyshacl judges may ask)."""
        own = [(self._subject, p) for p, values in self._own.items() if node in values]
        return own + self._elsewhere(_POINTING, {"o": node}, "s", "p")

    def pairs(self, pred: URIRef) -> list[tuple[Node, Node]]:
        """Every node and value ``pred`` joins: the subject's as after the step, the rest as
        the world holds them (a SPARQL constraint that asks for it scans the property)."""
        own = [(self._subject, v) for v in self._own.get(pred, ())]
        return own + self._elsewhere(_JOINED, {"p": pred}, "s", "o")

    def _elsewhere(
        self, query: str, bound: dict[str, Node], first: str, second: str
    ) -> list[tuple[Node, Node]]:
        """``query``'s rows in the world as pairs, but the subject's: the after-view has its."""
        if self._world is None:
            return []
        return [
            (r[first], r[second])
            for r in self._world.select(query, bound, {})
            if first in r and second in r and r[first] != self._subject
        ]

    def beyond(self) -> Iterator[tuple[Node, Node, Node]]:
        """The triples read past the subject, for pyshacl to see what the compiled shapes saw."""
        for (node, pred, referred), values in self._beyond.items():
            for v in values:
                yield (v, pred, node) if referred is not None else (node, pred, v)

    def instance_of(self, node: Node, cls: Node) -> bool:
        return reaches(self.objects(node, _TYPE), cls, lambda c: self.objects(c, _SUBCLASS))

    def _types_of_value(self, node: Node) -> set[Node]:
        types = self._types.get(node)
        if types is None:
            reached = node in self._own_objects() or (
                self._world is not None and not isinstance(node, Literal)
            )
            types = set(self._types_of(node)) if reached else set()
            self._types[node] = types
        return types

    def _is_type(self, node: Node) -> bool:
        """Whether the after-view holds ``node``'s rdfs:subClassOf triples: it is a type of
        the subject or of one of the subject's values."""
        return (
            node in self._own.get(_TYPE, ())
            or any(node in t for t in self._types.values())  # the values read so far
            or any(node in self._types_of_value(o) for o in self._own_objects())
        )

    def _own_objects(self) -> set[Node]:
        if self._objects is None:
            self._objects = {
                o
                for values in self._own.values()
                for o in values
                if not isinstance(o, Literal) and o != self._subject
            }
        return self._objects
