"""OWL 2 RL class membership, decided for the nodes a run touches, never for the whole world.

``entailment="owl-rl"`` used to copy the ontology and the whole world into an rdflib graph and
compute its full OWL-RL closure with owlrl on every run: a cost in proportion to the world,
paid per event. A run only ever asks "is this node of that class?" of the nodes it touches
(the focus, the arguments, the values the gate judges). So the schema is compiled once into
rules, and a node's types are derived from its own neighbourhood, read from the store with a
handful of bounded queries:

- the schema: every ``rdfs:subClassOf``, ``owl:equivalentClass``, ``rdfs:subPropertyOf``,
  ``owl:equivalentProperty``, ``rdfs:domain``, ``rdfs:range``, ``owl:inverseOf``, symmetric
  property, and class restriction (``owl:hasValue``, ``owl:someValuesFrom``,
  ``owl:allValuesFrom``) or class expression (``owl:intersectionOf``, ``owl:unionOf``) of the
  loaded definitions and of the world (a world may carry schema triples too), closed over
  subclasses and subproperties (the OWL 2 RL ``scm-*`` rules);
- a node's types: its asserted types, the domains of its properties and the ranges of the
  properties pointing at it (``prp-dom``, ``prp-rng``, through inverses and symmetric ones),
  restrictions it meets (``cls-hv2``; ``cls-svf1``/``2`` and ``cls-avf`` with the types its
  values' and subjects' own edges give them, one level deep), then superclasses,
  equivalents, intersections and unions to a fixpoint (``cax-sco``, ``cax-eqc``,
  ``cls-int1``/``2``, ``cls-uni``).

Not derived (documented in docs/stores.md): ``owl:sameAs`` and functional / inverse-functional
/ key reasoning, cardinality restrictions, property chains, ``owl:complementOf``, and
restrictions nested more than one value deep. A differential test holds the supported rules to
owlrl's full closure.

Incoming edges are only ever asked with ``FILTER EXISTS`` per property, so a hub node (a
class-typed value a million nodes point at) costs one probe per ranged property, not a scan.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from rdflib import OWL, RDF, RDFS, BNode, Graph, URIRef
from rdflib.collection import Collection
from rdflib.term import Node

from ._stores import Store
from ._stores.schema_mark import RULE_PREDICATES as _SCHEMA_PREDICATES

__all__ = ["Schema", "schema_of"]

# One UNION branch a predicate, not VALUES ?p: Oxigraph then reads each through its index
# instead of scanning every triple for the VALUES join (0.45 ms against 0.14 ms at 300k).
_SCHEMA_QUERY = (
    "SELECT ?s ?p ?o WHERE { "
    + " UNION ".join(f"{{ ?s <{p}> ?o BIND(<{p}> AS ?p) }}" for p in _SCHEMA_PREDICATES)
    + " }"
)
_SYMMETRIC_QUERY = f"SELECT ?s WHERE {{ ?s a <{OWL.SymmetricProperty}> }}"
_LIST_HEADS = (
    "SELECT ?c ?k ?l WHERE { "
    + " UNION ".join(
        f"{{ ?c <{k}> ?l BIND(<{k}> AS ?k) }}" for k in (OWL.intersectionOf, OWL.unionOf)
    )
    + " }"
)
# asked per list head, bound: with ?l unbound, rdf:rest* (zero steps included) matches every
# node of the world
_LIST_MEMBERS = f"SELECT ?m WHERE {{ ?l <{RDF.rest}>*/<{RDF.first}> ?m }}"


def _closure(edges: Mapping[Node, set[Node]]) -> dict[Node, frozenset[Node]]:
    """Each node and everything it reaches (reflexive, transitive)."""
    out: dict[Node, frozenset[Node]] = {}
    for start in edges:
        seen, todo = {start}, [start]
        while todo:
            for nxt in edges.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        out[start] = frozenset(seen)
    return out


@dataclass(frozen=True)
class Schema:
    """The type rules of an ontology, compiled once (see the module docstring)."""

    supers: dict[Node, frozenset[Node]] = field(default_factory=dict)
    domains: dict[Node, frozenset[Node]] = field(default_factory=dict)
    ranges: dict[Node, frozenset[Node]] = field(default_factory=dict)
    has_value: dict[tuple[Node, Node], frozenset[Node]] = field(default_factory=dict)
    some: dict[Node, tuple[tuple[Node, Node], ...]] = field(default_factory=dict)
    """property -> (restriction, filler class) pairs, inherited through subproperties"""
    all_values: dict[Node, tuple[tuple[Node, Node], ...]] = field(default_factory=dict)
    intersections: tuple[tuple[Node, frozenset[Node]], ...] = ()
    ranged: tuple[Node, ...] = ()
    """Properties whose objects get a type (ranges, inverse domains, symmetric domains,
    allValuesFrom): the only incoming edges worth probing."""

    @classmethod
    def build(
        cls,
        triples: Iterable[tuple[Node, Node, Node]],
        lists: Iterable[tuple[Node, Node, Node]],
        symmetric: Iterable[Node],
    ) -> Schema:
        """From schema triples, class-expression members ``(class, kind, member)`` and the
        symmetric properties."""
        sub_c: dict[Node, set[Node]] = {}
        sub_p: dict[Node, set[Node]] = {}
        dom: dict[Node, set[Node]] = {}
        rng: dict[Node, set[Node]] = {}
        inverse: dict[Node, set[Node]] = {}
        on: dict[Node, Node] = {}
        hv: dict[Node, Node] = {}
        svf: dict[Node, Node] = {}
        avf: dict[Node, Node] = {}
        for s, p, o in triples:
            if p == RDFS.subClassOf:
                sub_c.setdefault(s, set()).add(o)
            elif p == OWL.equivalentClass:
                sub_c.setdefault(s, set()).add(o)
                sub_c.setdefault(o, set()).add(s)
            elif p == RDFS.subPropertyOf:
                sub_p.setdefault(s, set()).add(o)
            elif p == OWL.equivalentProperty:
                sub_p.setdefault(s, set()).add(o)
                sub_p.setdefault(o, set()).add(s)
            elif p == RDFS.domain:
                dom.setdefault(s, set()).add(o)
            elif p == RDFS.range:
                rng.setdefault(s, set()).add(o)
            elif p == OWL.inverseOf:
                inverse.setdefault(s, set()).add(o)
                inverse.setdefault(o, set()).add(s)
            elif p == OWL.onProperty:
                on[s] = o
            elif p == OWL.hasValue:
                hv[s] = o
            elif p == OWL.someValuesFrom:
                svf[s] = o
            elif p == OWL.allValuesFrom:
                avf[s] = o
        members: dict[tuple[Node, Node], set[Node]] = {}
        for c, kind, m in lists:
            members.setdefault((c, kind), set()).add(m)
        intersections = []
        for (c, kind), ms in members.items():
            if kind == OWL.intersectionOf:
                intersections.append((c, frozenset(ms)))
                for m in ms:  # scm-int: the intersection is a subclass of each member
                    sub_c.setdefault(c, set()).add(m)
            else:  # scm-uni: each member is a subclass of the union
                for m in ms:
                    sub_c.setdefault(m, set()).add(c)
        for node in {n for e in sub_c.values() for n in e}:
            sub_c.setdefault(node, set())
        for node in (
            {n for e in sub_p.values() for n in e}
            | dom.keys()
            | rng.keys()
            | set(inverse)
            | set(on.values())
        ):
            sub_p.setdefault(node, set())
        supers = _closure(sub_c)
        super_p = _closure(sub_p)

        def up(classes: Iterable[Node]) -> frozenset[Node]:
            return frozenset(c2 for c in classes for c2 in supers.get(c, (c,)))

        domains: dict[Node, set[Node]] = {}
        ranges: dict[Node, set[Node]] = {}
        for p, ps in super_p.items():  # scm-dom2 / scm-rng2: a subproperty inherits them
            for q in ps:
                domains.setdefault(p, set()).update(dom.get(q, ()))
                ranges.setdefault(p, set()).update(rng.get(q, ()))
        for p in list(super_p):  # prp-inv: x p y means y q x
            for q in inverse.get(p, ()):
                for q2 in super_p.get(q, (q,)):
                    ranges.setdefault(p, set()).update(dom.get(q2, ()))
                    domains.setdefault(p, set()).update(rng.get(q2, ()))
        for p in symmetric:  # prp-symp: the object is a subject too
            ranges.setdefault(p, set()).update(domains.get(p, ()))
        sub_of: dict[Node, set[Node]] = {}  # property -> its subproperties (incl. itself)
        for p, ps in super_p.items():
            for q in ps:
                sub_of.setdefault(q, set()).add(p)
        has_value: dict[tuple[Node, Node], set[Node]] = {}
        some: dict[Node, list[tuple[Node, Node]]] = {}
        all_values: dict[Node, list[tuple[Node, Node]]] = {}
        for r, p in on.items():
            for p2 in sub_of.get(p, {p}):
                if r in hv:
                    has_value.setdefault((p2, hv[r]), set()).add(r)
                if r in svf:
                    some.setdefault(p2, []).append((r, svf[r]))
            if r in avf:  # cls-avf holds for the property itself (and its subproperties)
                for p2 in sub_of.get(p, {p}):
                    all_values.setdefault(p2, []).append((r, avf[r]))
        ranged = {p for p, cs in ranges.items() if cs} | set(all_values)
        return cls(
            supers=dict(supers),
            domains={p: up(cs) for p, cs in domains.items() if cs},
            ranges={p: up(cs) for p, cs in ranges.items() if cs},
            has_value={k: frozenset(v) for k, v in has_value.items()},
            some={p: tuple(v) for p, v in some.items()},
            all_values={p: tuple(v) for p, v in all_values.items()},
            intersections=tuple(intersections),
            ranged=tuple(sorted(ranged, key=str)),
        )

    def close(self, types: Iterable[Node]) -> set[Node]:
        """``types`` with their superclasses, equivalents and the intersections they meet."""
        out = {t2 for t in types for t2 in self.supers.get(t, (t,))}
        changed = True
        while changed:
            changed = False
            for c, members in self.intersections:
                if c not in out and members <= out:
                    out |= self.supers.get(c, frozenset((c,)))
                    changed = True
        return out

    def types_of(self, store: Store) -> Callable[[Node], set[Node]]:
        """A node's OWL-RL types in ``store``, derived from its neighbourhood: of its own
        edges, only those under a property the schema says something of are read (a node
        with 100,000 values of a property no rule names cost 2.5 s a run, every value read
        and converted twice)."""
        probe = _probe_query(self.ranged)
        said = frozenset(self.domains) | {p for p, _ in self.has_value}
        ruled = said | frozenset(self.some)

        def incoming(node: Node) -> list[Node]:
            """The ranged properties that point at ``node`` (each probed, never listed)."""
            if probe is None:
                return []
            return [row["p"] for row in store.select(probe, {"n": node}, {})]

        def shallow(node: Node) -> set[Node]:
            """What a node's own edges say: asserted types, domains, ranges, hasValue."""
            found = set(store.objects(node, RDF.type))
            for _, p, o in store.outgoing(node, said) if said else ():
                found |= self.domains.get(p, frozenset())
                found |= self.has_value.get((p, o), frozenset())
            for p in incoming(node):
                found |= self.ranges.get(p, frozenset())
            return self.close(found)

        def types(node: Node) -> set[Node]:
            if not isinstance(node, URIRef | BNode):
                return set()
            found = set(store.objects(node, RDF.type))
            for _, p, o in store.outgoing(node, ruled) if ruled else ():
                found |= self.domains.get(p, frozenset())
                found |= self.has_value.get((p, o), frozenset())
                for r, filler in self.some.get(p, ()):
                    if filler == OWL.Thing or (
                        isinstance(o, URIRef | BNode)
                        and filler in (self.close({*shallow(o), *self.ranges.get(p, ())}))
                    ):
                        found.add(r)
            for p in incoming(node):
                found |= self.ranges.get(p, frozenset())
                pairs = self.all_values.get(p, ())
                if pairs:  # cls-avf: a subject of a restriction class gives its filler
                    for row in store.select(_SUBJECTS.replace("$P", f"<{p}>"), {"n": node}, {}):
                        subject_types = shallow(row["s"])
                        found |= {c for r, c in pairs if r in subject_types}
            return self.close(found)

        return types

    def focus_candidates(self, store: Store, classes: frozenset[Node]) -> set[URIRef]:
        """Every node that may be entailed to be of one of ``classes``: asserted of a class
        that entails one, subject of a property whose domain does, object of one whose range
        does, or meeting a restriction that does. Callers check each with :meth:`types_of`."""
        entails = {c for c, ups in self.supers.items() if ups & classes} | set(classes)
        found: set[URIRef] = set()

        def add(query: str, values: Iterable[Node]) -> None:
            vs = " ".join(f"<{v}>" for v in values if isinstance(v, URIRef))
            if vs:
                for row in store.select(query.replace("$V", vs), {}, {}):
                    x = row.get("x")
                    if isinstance(x, URIRef):
                        found.add(x)

        add(f"SELECT DISTINCT ?x WHERE {{ VALUES ?c {{ $V }} ?x <{RDF.type}> ?c }}", entails)
        add(
            "SELECT DISTINCT ?x WHERE { VALUES ?p { $V } ?x ?p ?o }",
            [p for p, cs in self.domains.items() if cs & entails]
            + [p for (p, _), rs in self.has_value.items() if rs & entails]
            + [p for p, pairs in self.some.items() if any(r in entails for r, _ in pairs)],
        )
        add(
            "SELECT DISTINCT ?x WHERE { VALUES ?p { $V } ?s ?p ?x }",
            [p for p, cs in self.ranges.items() if cs & entails]
            + [p for p, pairs in self.all_values.items() if any(c in entails for _, c in pairs)],
        )
        return found


_SUBJECTS = "SELECT ?s WHERE { ?s $P ?n } LIMIT 64"
"""Subjects of an allValuesFrom property pointing at a node: a bounded few."""


def _probe_query(ranged: tuple[Node, ...]) -> str | None:
    """One query for the ranged properties pointing at ``?n``, each probed with EXISTS, so a
    hub's million incoming edges are never listed."""
    if not ranged:
        return None
    values = " ".join(f"<{p}>" for p in ranged if isinstance(p, URIRef))
    return f"SELECT ?p WHERE {{ VALUES ?p {{ {values} }} FILTER EXISTS {{ ?s ?p ?n }} }}"


def schema_of(definitions: Graph, store: Store) -> Schema:
    """The compiled schema of the definitions and of the schema triples the world holds;
    compiled once for each distinct set of those triples, and read from a store once while
    its :meth:`~horismos._stores.base.Store.schema_mark` stays the same (a run per event
    read them all: a taxonomy of 100,000 classes cost each run over a second)."""
    key, mark = _DefinitionsKey(definitions), store.schema_mark()
    kept = _READ.get(store, {}).get(key) if mark is not None else None
    if kept is not None and kept[0] == mark:
        return kept[1]
    schema = _read(key, store)
    if mark is not None:  # read after the mark: a write between them moves it, read again
        _READ.setdefault(store, {})[key] = (mark, schema)
    return schema


_READ: weakref.WeakKeyDictionary[Store, dict[_DefinitionsKey, tuple[int, Schema]]] = (
    weakref.WeakKeyDictionary()
)
"""Per store, per definitions: the schema read from it and the store's mark when it was."""


def _read(key: _DefinitionsKey, store: Store) -> Schema:
    """The world's schema triples read from ``store``, compiled with the definitions'."""
    world = tuple(
        sorted(
            ((r["s"], r["p"], r["o"]) for r in store.select(_SCHEMA_QUERY, {}, {})),
            key=lambda t: (str(t[0]), str(t[1]), str(t[2])),
        )
    )
    lists = tuple(
        sorted(
            (
                (head["c"], head["k"], r["m"])
                for head in store.select(_LIST_HEADS, {}, {})
                for r in store.select(_LIST_MEMBERS, {"l": head["l"]}, {})
            ),
            key=lambda t: (str(t[0]), str(t[1]), str(t[2])),
        )
    )
    symmetric = tuple(sorted((r["s"] for r in store.select(_SYMMETRIC_QUERY, {}, {})), key=str))
    return _compiled(key, world, lists, symmetric)


class _DefinitionsKey:
    """A definitions graph as a cache key: by identity (definitions are built once)."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph

    def __hash__(self) -> int:
        return id(self.graph)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _DefinitionsKey) and other.graph is self.graph


@lru_cache(maxsize=16)
def _compiled(defs: _DefinitionsKey, world: tuple, lists: tuple, symmetric: tuple) -> Schema:
    g = defs.graph
    triples = [t for p in _SCHEMA_PREDICATES for t in g.triples((None, p, None))]
    members = [
        (c, k, m)
        for k in (OWL.intersectionOf, OWL.unionOf)
        for c, lst in g.subject_objects(k)
        for m in Collection(g, lst)
    ]
    members += list(lists)
    sym = {*symmetric, *g.subjects(RDF.type, OWL.SymmetricProperty)}
    return Schema.build([*triples, *world], members, sym)
