"""OWL 2 RL class membership, decided for the nodes a run touches, never for the whole world.

``entailment="owl-rl"`` used to copy the ontology and the whole world into an rdflib graph and
compute its full OWL-RL closure with owlrl on every run: a cost in proportion to the world,
paid per event. A run only ever asks "is this node of that class?" of the nodes it touches
(the focus, the arguments, the values the gate judges). So a node's types are derived from its
own neighbourhood, read from the store with a handful of bounded queries, by rules drawn from
the loaded definitions and from the schema triples the world holds (a world may carry schema
triples too):

- the property rules, read once for each state of the store's schema
  (:meth:`~horismos._stores.base.Store.schema_mark`): every ``rdfs:subPropertyOf``,
  ``owl:equivalentProperty``, ``rdfs:domain``, ``rdfs:range``, ``owl:inverseOf``, symmetric
  property and ``owl:allValuesFrom`` restriction, closed over subproperties (``scm-dom2``,
  ``scm-rng2``, ``prp-inv``, ``prp-symp``). They grow with the vocabulary, not with the data;
- the class hierarchy, read class by class as a run meets classes: a class's superclasses and
  equivalents, the unions it is a member of and the members of an intersection it is
  (``scm-sco``, ``scm-eqc``, ``scm-int``, ``scm-uni``), all of them in one path query from the
  class, and the intersections it is a member of. A taxonomy of 100,000 classes was read
  whole, sorted and closed by a process's first run, which is every run of a process per
  event: 1.8 s against 14 ms beside none (``benchmarks/bench_owl_schema.py``);
- the ``owl:hasValue`` and ``owl:someValuesFrom`` restrictions, read as a node's edges meet
  them: whether a property has any (asked once a property), those with the value an edge
  has, those whose filler is a class the edge's value is of. An OWL ontology writes one
  for nearly every class (100,000 classes and restrictions: 9.8 s a process's first run);

What was read is kept while the store's schema mark stays the same.

- a node's types: its asserted types, the domains of its properties and the ranges of the
  properties pointing at it (``prp-dom``, ``prp-rng``, through inverses and symmetric ones),
  restrictions it meets (``cls-hv2``; ``cls-svf1``/``2`` and ``cls-avf`` with the types its
  values' and subjects' own edges give them, one level deep), then superclasses,
  equivalents, intersections and unions to a fixpoint (``cax-sco``, ``cax-eqc``,
  ``cls-int1``/``2``, ``cls-uni``).

Not derived (documented in docs/entailment.md): ``owl:sameAs`` and functional /
inverse-functional / key reasoning, cardinality restrictions, property chains,
``owl:complementOf``, and restrictions nested more than one value deep. A differential test
holds the supported rules to owlrl's full closure.

Incoming edges are only ever asked with ``FILTER EXISTS`` per property, so a hub node (a
class-typed value a million nodes point at) costs one probe per ranged property, not a scan.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from rdflib import OWL, RDF, RDFS, BNode, Graph, URIRef
from rdflib.collection import Collection
from rdflib.term import Node

from ._stores import Store

__all__ = ["Schema", "schema_of"]

_PROPERTY_PREDICATES = (
    RDFS.subPropertyOf,
    OWL.equivalentProperty,
    RDFS.domain,
    RDFS.range,
    OWL.inverseOf,
)
_SCHEMA_PREDICATES = (
    *_PROPERTY_PREDICATES,
    RDFS.subClassOf,
    OWL.equivalentClass,
    OWL.intersectionOf,
    OWL.unionOf,
    OWL.onProperty,
    OWL.hasValue,
    OWL.someValuesFrom,
    OWL.allValuesFrom,
)
"""Every predicate the rules are read from (the store's schema mark moves on each)."""

# One UNION branch a predicate, not VALUES ?p: Oxigraph then reads each through its index
# instead of scanning every triple for the VALUES join (0.45 ms against 0.14 ms at 300k).
_PROPERTY_QUERY = (
    "SELECT ?s ?p ?o WHERE { "
    + " UNION ".join(f"{{ ?s <{p}> ?o BIND(<{p}> AS ?p) }}" for p in _PROPERTY_PREDICATES)
    + " }"
)
_ALL_VALUES_QUERY = (
    f"SELECT ?r ?q ?c WHERE {{ ?r <{OWL.allValuesFrom}> ?c ; <{OWL.onProperty}> ?q }}"
)
"""The allValuesFrom restrictions, read with the property rules: which incoming edges give a
node a type must be known before any is asked about (a hub's are probed, never listed)."""
_SYMMETRIC_QUERY = f"SELECT ?s WHERE {{ ?s a <{OWL.SymmetricProperty}> }}"

_UP = (
    f"<{RDFS.subClassOf}>|<{OWL.equivalentClass}>|^<{OWL.equivalentClass}>"
    f"|<{OWL.intersectionOf}>/<{RDF.rest}>*/<{RDF.first}>"
    f"|^<{RDF.first}>/^<{RDF.rest}>*/^<{OWL.unionOf}>"
)
"""One step up the class hierarchy: a superclass, an equivalent, a member of the intersection
a class is, a union a class is a member of."""
_SUPERS = f"SELECT DISTINCT ?x WHERE {{ ?c ({_UP})* ?x }}"
"""Everything above ``?c`` in the store, asked from the bound class (never with it unbound:
a zero-length path then matches every node)."""
_SUBS = (
    f"SELECT DISTINCT ?x ?p WHERE {{ ?x ({_UP})* ?c OPTIONAL {{ ?x <{OWL.onProperty}> ?p "
    f"FILTER NOT EXISTS {{ ?x <{OWL.allValuesFrom}> ?a }} }} }}"
)
"""Everything below ``?c``, and the property of each restriction among them a node is a
member of by its own edges (not an allValuesFrom one)."""
_WITHIN = (
    f"SELECT ?i ?m ?x WHERE {{ ?c ^<{RDF.first}>/^<{RDF.rest}>*/^<{OWL.intersectionOf}> ?i . "
    f"{{ ?i <{OWL.intersectionOf}>/<{RDF.rest}>*/<{RDF.first}> ?m }} UNION "
    f"{{ ?i ({_UP})* ?x }} }}"
)
"""The intersections ``?c`` is a member of: each one's members and what is above it, so an
intersection written as a blank node is never asked about by itself (a SPARQL server's
blank nodes cannot be named back to it)."""
_ANY_RESTRICTION = f"SELECT ?r WHERE {{ ?r <{OWL.onProperty}> ?p }} LIMIT 1"
_ANY_INTERSECTION = f"SELECT ?i WHERE {{ ?i <{OWL.intersectionOf}> ?l }} LIMIT 1"
"""Whether the store holds any restriction, any intersection: asked once a schema, so a world
with none is not asked about each class or property a run meets (on ``sparql:``, a request
each, every run)."""
_RESTRICTED = {
    kind: f"SELECT ?r WHERE {{ ?r <{OWL.onProperty}> ?q ; <{kind}> ?v }} LIMIT 1"
    for kind in (OWL.hasValue, OWL.someValuesFrom)
}
"""Whether any restriction of that kind is on ``?q``: one index probe, however many there are."""
_RESTRICTIONS = f"SELECT ?r ?q WHERE {{ ?r $K ?v ; <{OWL.onProperty}> ?q }}"
"""The restrictions of a kind (``$K``) with the value or filler ``?v``, and their property."""
_PREDICATES = "SELECT DISTINCT ?p WHERE { ?n ?p ?o }"


@dataclass(frozen=True)
class PropertyRules:
    """What the schema says of properties, compiled once for each distinct set of them."""

    domains: dict[Node, frozenset[Node]]
    ranges: dict[Node, frozenset[Node]]
    supers: dict[Node, frozenset[Node]]
    """property -> itself, its superproperties and equivalents (a property none names: absent)"""
    subs: dict[Node, frozenset[Node]]
    """property -> itself, its subproperties and equivalents"""
    all_values: dict[Node, tuple[tuple[Node, Node], ...]]
    """property -> (restriction, filler class) pairs, inherited through subproperties"""
    ranged: tuple[Node, ...]
    """Properties whose objects get a type (ranges, inverse domains, symmetric domains,
    allValuesFrom): the only incoming edges worth probing."""

    @classmethod
    def build(
        cls,
        triples: Iterable[tuple[Node, Node, Node]],
        all_values: Iterable[tuple[Node, Node, Node]],
        symmetric: Iterable[Node],
    ) -> PropertyRules:
        """From the property triples (:data:`_PROPERTY_PREDICATES`), the allValuesFrom
        restrictions ``(restriction, property, filler)`` and the symmetric properties.
        Domains and ranges are the classes written: a node's types are closed over
        superclasses once, after every rule has given its own."""
        sub_p: dict[Node, set[Node]] = {}
        dom: dict[Node, set[Node]] = {}
        rng: dict[Node, set[Node]] = {}
        inverse: dict[Node, set[Node]] = {}
        for s, p, o in triples:
            if p == RDFS.subPropertyOf:
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
        avf = list(all_values)
        for node in (
            {n for e in sub_p.values() for n in e}
            | dom.keys()
            | rng.keys()
            | set(inverse)
            | {q for _, q, _ in avf}
        ):
            sub_p.setdefault(node, set())
        super_p = _closure(sub_p)
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
        pairs: dict[Node, list[tuple[Node, Node]]] = {}
        for r, p, c in avf:  # cls-avf holds for the property itself (and its subproperties)
            for p2 in sub_of.get(p, {p}):
                pairs.setdefault(p2, []).append((r, c))
        ranged = {p for p, cs in ranges.items() if cs} | set(pairs)
        return cls(
            domains={p: frozenset(cs) for p, cs in domains.items() if cs},
            ranges={p: frozenset(cs) for p, cs in ranges.items() if cs},
            supers=dict(super_p),
            subs={p: frozenset(ps) for p, ps in sub_of.items()},
            all_values={p: tuple(v) for p, v in pairs.items()},
            ranged=tuple(sorted(ranged, key=str)),
        )


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
class _Defined:
    """The definitions' class hierarchy, one step at a time both ways, and their hasValue and
    someValuesFrom restrictions, looked up as the store's are: they are loaded whole already,
    and small beside a world's."""

    up: dict[Node, frozenset[Node]]
    down: dict[Node, frozenset[Node]]
    within: dict[Node, tuple[tuple[Node, frozenset[Node]], ...]]
    """class -> the intersections it is a member of, with their members"""
    restrictions: dict[tuple[Node, Node], tuple[tuple[Node, Node], ...]]
    """(kind, value or filler) -> (restriction, property) pairs"""
    restricted: dict[Node, frozenset[Node]]
    """property -> the kinds of restriction on it"""
    on: dict[Node, Node]
    """restriction -> its property, for those a node is a member of by its own edges"""

    @classmethod
    def of(cls, g: Graph) -> _Defined:
        up: dict[Node, set[Node]] = {}
        within: dict[Node, list[tuple[Node, frozenset[Node]]]] = {}

        def edge(a: Node, b: Node) -> None:
            up.setdefault(a, set()).add(b)

        for s, o in g.subject_objects(RDFS.subClassOf):
            edge(s, o)
        for s, o in g.subject_objects(OWL.equivalentClass):
            edge(s, o)
            edge(o, s)
        for c, lst in g.subject_objects(OWL.intersectionOf):
            members = frozenset(Collection(g, lst))
            for m in members:  # scm-int: the intersection is a subclass of each member
                edge(c, m)
                within.setdefault(m, []).append((c, members))
        for c, lst in g.subject_objects(OWL.unionOf):
            for m in Collection(g, lst):  # scm-uni: each member is a subclass of the union
                edge(m, c)
        down: dict[Node, set[Node]] = {}
        for a, bs in up.items():
            for b in bs:
                down.setdefault(b, set()).add(a)
        restrictions: dict[tuple[Node, Node], list[tuple[Node, Node]]] = {}
        restricted: dict[Node, set[Node]] = {}
        on: dict[Node, Node] = {}
        for r, q in g.subject_objects(OWL.onProperty):
            for kind in (OWL.hasValue, OWL.someValuesFrom):
                for v in g.objects(r, kind):
                    restrictions.setdefault((kind, v), []).append((r, q))
                    restricted.setdefault(q, set()).add(kind)
                    on[r] = q
        return cls(
            up={k: frozenset(v) for k, v in up.items()},
            down={k: frozenset(v) for k, v in down.items()},
            within={k: tuple(v) for k, v in within.items()},
            restrictions={k: tuple(v) for k, v in restrictions.items()},
            restricted={k: frozenset(v) for k, v in restricted.items()},
            on=on,
        )


class Schema:
    """The type rules of the definitions and of one store's schema (see the module
    docstring): the property rules compiled, the class hierarchy and the restrictions read as
    a run meets them and kept here. Never holds the store (it is kept per store, weakly):
    each read is given it."""

    def __init__(self, rules: PropertyRules, defined: _Defined) -> None:
        self.domains, self.ranges = rules.domains, rules.ranges
        self.all_values, self.ranged = rules.all_values, rules.ranged
        self._rules = rules
        self._defs = defined
        self._supers: dict[Node, frozenset[Node]] = {}
        self._above: dict[Node, frozenset[Node]] = {}  # the store's own closure of a class
        self._within: dict[Node, tuple[tuple[Node, frozenset[Node]], ...]] = {}
        self._any: dict[str, bool] = {}  # :data:`_ANY_RESTRICTION`, :data:`_ANY_INTERSECTION`
        self._kinds: dict[Node, frozenset[Node]] = {}  # property -> kinds restricting it
        self._restrictions: dict[tuple[Node, Node], tuple[tuple[Node, Node], ...]] = {}

    # -- classes

    def supers(self, c: Node, store: Store) -> frozenset[Node]:
        """``c``, its superclasses and equivalents, through the definitions and the store:
        the store's part of a class asked in one query, the definitions' followed a step at a
        time, until neither adds a class."""
        found = self._supers.get(c)
        if found is not None:
            return found
        seen, todo = {c}, [(c, False)]
        while todo:
            x, asked = todo.pop()
            nxt = set(self._defs.up.get(x, ()))
            if not asked:  # a class reached through the store's closure is in it already
                for y in self._store_above(x, store) - seen:
                    seen.add(y)
                    todo.append((y, True))
            for y in nxt - seen:
                seen.add(y)
                todo.append((y, False))
        found = self._supers[c] = frozenset(seen)
        return found

    def _store_above(self, c: Node, store: Store) -> frozenset[Node]:
        above = self._above.get(c)
        if above is None:
            rows = store.select(_SUPERS, {"c": c}, {}) if _nameable(c, store) else []
            above = self._above[c] = frozenset((c, *(r["x"] for r in rows)))
        return above

    def _intersections(self, c: Node, store: Store) -> tuple[tuple[Node, frozenset[Node]], ...]:
        """The intersections ``c`` is a member of, each with its members."""
        found = self._within.get(c)
        if found is not None:
            return found
        members: dict[Node, set[Node]] = {}
        above: dict[Node, set[Node]] = {}
        asked = _nameable(c, store) and self._any_stored(_ANY_INTERSECTION, store)
        for r in store.select(_WITHIN, {"c": c}, {}) if asked else ():
            i = r["i"]
            if "m" in r:
                members.setdefault(i, set()).add(r["m"])
            if "x" in r:
                above.setdefault(i, {i}).add(r["x"])
        for i, xs in above.items():
            self._above.setdefault(i, frozenset(xs))
        found = (*self._defs.within.get(c, ()), *((i, frozenset(m)) for i, m in members.items()))
        self._within[c] = found
        return found

    def close(self, types: Iterable[Node], store: Store) -> set[Node]:
        """``types`` with their superclasses, equivalents and the intersections they meet."""
        out: set[Node] = set()
        for t in types:
            out |= self.supers(t, store)
        met: set[Node] = set()
        changed = True
        while changed:
            changed = False
            for t in [t for t in out if t not in met]:
                met.add(t)
                for c, members in self._intersections(t, store):
                    if c not in out and members <= out:
                        out |= self.supers(c, store)
                        changed = True
        return out

    def subs(self, classes: Iterable[Node], store: Store) -> tuple[set[Node], set[Node]]:
        """``classes`` and every class below them (what entails one of them), through the
        definitions and the store, as :meth:`supers` goes up; and the properties of the
        restrictions among them a node meets by its own edges (hasValue, someValuesFrom)."""
        seen = set(classes)
        on = {self._defs.on[c] for c in seen if c in self._defs.on}
        todo = [(c, False) for c in seen]
        while todo:
            x, asked = todo.pop()
            nxt = set(self._defs.down.get(x, ()))
            if not asked and _nameable(x, store):
                for r in store.select(_SUBS, {"c": x}, {}):
                    if "p" in r:
                        on.add(r["p"])
                    if (y := r["x"]) not in seen:
                        seen.add(y)
                        todo.append((y, True))
            for y in nxt - seen:
                seen.add(y)
                if y in self._defs.on:
                    on.add(self._defs.on[y])
                todo.append((y, False))
        return seen, on

    # -- restrictions

    def _restricted_by(self, p: Node, store: Store) -> frozenset[Node]:
        """The kinds of restriction (hasValue, someValuesFrom) on ``p`` or a property it is a
        subproperty of: an index probe a property, once."""
        kinds = self._kinds.get(p)
        if kinds is None:
            found: set[Node] = set()
            for q in self._rules.supers.get(p, (p,)):
                found |= self._defs.restricted.get(q, frozenset())
                if self._any_stored(_ANY_RESTRICTION, store) and _nameable(q, store):
                    found |= {
                        k for k, text in _RESTRICTED.items() if store.select(text, {"q": q}, {})
                    }
            kinds = self._kinds[p] = frozenset(found)
        return kinds

    def _any_stored(self, probe: str, store: Store) -> bool:
        """Whether ``probe`` (:data:`_ANY_RESTRICTION`, :data:`_ANY_INTERSECTION`) finds one."""
        found = self._any.get(probe)
        if found is None:
            found = self._any[probe] = bool(store.select(probe, {}, {}))
        return found

    def _restrictions_of(self, kind: Node, v: Node, store: Store) -> tuple[tuple[Node, Node], ...]:
        """The restrictions of ``kind`` whose value or filler is ``v``, with their property."""
        key = (kind, v)
        found = self._restrictions.get(key)
        if found is None:
            rows = (
                store.select(_RESTRICTIONS.replace("$K", f"<{kind}>"), {"v": v}, {})
                if self._any_stored(_ANY_RESTRICTION, store) and _nameable(v, store)
                else []
            )
            found = (*self._defs.restrictions.get(key, ()), *((r["r"], r["q"]) for r in rows))
            self._restrictions[key] = found
        return found

    def _met(self, kind: Node, p: Node, v: Node, store: Store) -> set[Node]:
        """The restrictions of ``kind`` an edge under ``p`` to a value (or of a class) ``v``
        meets: on ``p`` or a property ``p`` is a subproperty of."""
        ups = self._rules.supers.get(p, (p,))
        return {r for r, q in self._restrictions_of(kind, v, store) if q in ups}

    # -- nodes

    def types_of(self, store: Store) -> Callable[[Node], set[Node]]:
        """A node's OWL-RL types in ``store``, derived from its neighbourhood: of its own
        edges, only those under a property the schema says something of are read (a node
        with 100,000 values of a property no rule names cost 2.5 s a run, every value read
        and converted twice)."""
        probe = _probe_query(self.ranged)
        domains = frozenset(self.domains)
        close = self.close

        def edges(node: Node, kinds: frozenset[Node]) -> list[tuple[Node, Node, frozenset[Node]]]:
            """The node's edges under a property with a domain or a restriction of ``kinds``,
            each with the kinds restricting it. Where restrictions are stored, the node's
            properties are asked first (distinct, in the store), then each once."""
            wanted: dict[Node, frozenset[Node]]
            if self._any_stored(_ANY_RESTRICTION, store) or self._defs.restricted:
                names = {r["p"] for r in store.select(_PREDICATES, {"n": node}, {})}
                wanted = {p: self._restricted_by(p, store) & kinds for p in names}
                wanted = {p: k for p, k in wanted.items() if k or p in domains}
            else:
                wanted = dict.fromkeys(domains, frozenset())
            if not wanted:
                return []
            return [(p, o, wanted[p]) for _, p, o in store.outgoing(node, frozenset(wanted))]

        def incoming(node: Node) -> list[Node]:
            """The ranged properties that point at ``node`` (each probed, never listed)."""
            if probe is None:
                return []
            return [row["p"] for row in store.select(probe, {"n": node}, {})]

        def shallow(node: Node) -> set[Node]:
            """What a node's own edges say: asserted types, domains, ranges, hasValue."""
            found = set(store.objects(node, RDF.type))
            for p, o, kinds in edges(node, _VALUE):
                found |= self.domains.get(p, frozenset())
                if kinds:
                    found |= self._met(OWL.hasValue, p, o, store)
            for p in incoming(node):
                found |= self.ranges.get(p, frozenset())
            return close(found, store)

        def types(node: Node) -> set[Node]:
            if not isinstance(node, URIRef | BNode):
                return set()
            found = set(store.objects(node, RDF.type))
            for p, o, kinds in edges(node, _KINDS):
                found |= self.domains.get(p, frozenset())
                if OWL.hasValue in kinds:
                    found |= self._met(OWL.hasValue, p, o, store)
                if OWL.someValuesFrom in kinds:
                    fillers: set[Node] = {OWL.Thing}
                    if isinstance(o, URIRef | BNode):
                        fillers |= close({*shallow(o), *self.ranges.get(p, ())}, store)
                    for f in fillers:
                        found |= self._met(OWL.someValuesFrom, p, f, store)
            for p in incoming(node):
                found |= self.ranges.get(p, frozenset())
                pairs = self.all_values.get(p, ())
                if pairs:  # cls-avf: a subject of a restriction class gives its filler
                    for row in store.select(_SUBJECTS.replace("$P", f"<{p}>"), {"n": node}, {}):
                        subject_types = shallow(row["s"])
                        found |= {c for r, c in pairs if r in subject_types}
            return close(found, store)

        return types

    def focus_candidates(self, store: Store, classes: frozenset[Node]) -> set[URIRef]:
        """Every node that may be entailed to be of one of ``classes``: asserted of a class
        that entails one, subject of a property whose domain does, object of one whose range
        does, or meeting a restriction that does. Callers check each with :meth:`types_of`.
        A rule's classes are those written, so a class entails one of ``classes`` when it is
        among them or below one: what :meth:`subs` finds."""
        entails, restricted = self.subs(classes, store)
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
            + [p2 for q in restricted for p2 in self._rules.subs.get(q, (q,))],
        )
        add(
            "SELECT DISTINCT ?x WHERE { VALUES ?p { $V } ?s ?p ?x }",
            [p for p, cs in self.ranges.items() if cs & entails]
            + [p for p, pairs in self.all_values.items() if any(c in entails for _, c in pairs)],
        )
        return found


_VALUE = frozenset({OWL.hasValue})
_KINDS = frozenset({OWL.hasValue, OWL.someValuesFrom})
_SUBJECTS = "SELECT ?s WHERE { ?s $P ?n } LIMIT 64"
"""Subjects of an allValuesFrom property pointing at a node: a bounded few."""


def _nameable(term: Node, store: Store) -> bool:
    """Whether ``term`` can be asked about: a blank node a query gave back can in this
    process's stores, not a SPARQL server's (they are its own)."""
    return not (isinstance(term, BNode) and store.shared)


def _probe_query(ranged: tuple[Node, ...]) -> str | None:
    """One query for the ranged properties pointing at ``?n``, each probed with EXISTS, so a
    hub's million incoming edges are never listed."""
    if not ranged:
        return None
    values = " ".join(f"<{p}>" for p in ranged if isinstance(p, URIRef))
    return f"SELECT ?p WHERE {{ VALUES ?p {{ {values} }} FILTER EXISTS {{ ?s ?p ?n }} }}"


def schema_of(definitions: Graph, store: Store) -> Schema:
    """The type rules of the definitions and of the schema triples ``store`` holds; kept for
    the store while its :meth:`~horismos._stores.base.Store.schema_mark` stays the same, with
    the classes read meanwhile (a run per event read them all: a taxonomy of 100,000 classes
    cost each run over a second, then each process's first)."""
    key, mark = _DefinitionsKey(definitions), store.schema_mark()
    kept = _READ.get(store, {}).get(key) if mark is not None else None
    if kept is not None and kept[0] == mark:
        return kept[1]
    schema = Schema(_rules(key, store), _defined(key))
    if mark is not None:  # read after the mark: a write between them moves it, read again
        _READ.setdefault(store, {})[key] = (mark, schema)
    return schema


_READ: weakref.WeakKeyDictionary[Store, dict[_DefinitionsKey, tuple[int, Schema]]] = (
    weakref.WeakKeyDictionary()
)
"""Per store, per definitions: the schema read from it and the store's mark when it was."""


def _rules(key: _DefinitionsKey, store: Store) -> PropertyRules:
    """The world's property triples read from ``store``, compiled with the definitions'."""

    def read(query: str, names: str) -> tuple:
        rows = (tuple(r[n] for n in names.split()) for r in store.select(query, {}, {}))
        return tuple(sorted(rows, key=lambda t: tuple(map(str, t))))

    return _compiled(
        key,
        read(_PROPERTY_QUERY, "s p o"),
        read(_ALL_VALUES_QUERY, "r q c"),
        tuple(r[0] for r in read(_SYMMETRIC_QUERY, "s")),
    )


class _DefinitionsKey:
    """A definitions graph as a cache key: by identity (definitions are built once)."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph

    def __hash__(self) -> int:
        return id(self.graph)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _DefinitionsKey) and other.graph is self.graph


@lru_cache(maxsize=16)
def _compiled(
    defs: _DefinitionsKey, world: tuple, all_values: tuple, symmetric: tuple
) -> PropertyRules:
    g = defs.graph
    triples = [t for p in _PROPERTY_PREDICATES for t in g.triples((None, p, None))]
    avf = [
        (r, q, c)
        for r, c in g.subject_objects(OWL.allValuesFrom)
        for q in g.objects(r, OWL.onProperty)
    ]
    sym = {*symmetric, *g.subjects(RDF.type, OWL.SymmetricProperty)}
    return PropertyRules.build([*triples, *world], [*avf, *all_values], sym)


@lru_cache(maxsize=16)
def _defined(defs: _DefinitionsKey) -> _Defined:
    return _Defined.of(defs.graph)
