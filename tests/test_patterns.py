"""A compiled precondition (horismos._patterns) answers as Oxigraph's SPARQL engine does.

The Oxigraph store evaluates a precondition that compiles with its own index lookups, not a
query. These tests hold the two paths equal — the same solutions, in the same order, with the
same values, and the same failing pattern — on every horis:requires the repository ships
(workflows, examples, benchmarks, test fixtures, and the patterns the test suite's own
definitions use) and on patterns hypothesis draws, each over random worlds whose triples
repeat across graphs (runtime ones too), with literals in other lexical forms than the
pattern's.
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rdflib import RDF, XSD, Graph, Literal, URIRef
from rdflib.plugins.sparql import prepareQuery
from rdflib.term import Node

from horismos._patterns import LOOKUPS, Bgp, Exists, Filter, Join, Plan, Var
from horismos._preconditions import Precondition, PreconditionSyntaxError, compile_patterns
from horismos._stores.oxigraph import OxigraphStore

ROOT = Path(__file__).resolve().parent.parent
HORIS_REQUIRES = URIRef("https://w3id.org/horismos#requires")
CORPUS = ROOT / "tests" / "fixtures" / "requires_corpus.json"
E = "http://example.org/t#"


def _query_only(pre: Precondition) -> Precondition:
    """``pre`` without its plans: the store asks its SPARQL engine."""
    return dataclasses.replace(
        pre,
        _plan=None,
        patterns=tuple(dataclasses.replace(p, _plan=None) for p in pre.patterns),
    )


def _shipped() -> list[tuple[str, dict[str, str]]]:
    """Every horis:requires of the repository's Turtle files, with its file's prefixes."""
    found = []
    for folder in ("workflows", "examples", "benchmarks", "ontologies", "tests"):
        for path in sorted((ROOT / folder).rglob("*.ttl")):
            g = Graph()
            try:
                g.parse(path)
            except Exception:  # a fixture that is broken on purpose
                continue
            ns = {k: str(v) for k, v in g.namespaces()}
            found += [(str(o), ns) for o in g.objects(None, HORIS_REQUIRES)]
    return found


def _corpus() -> list[tuple[list[str], dict[str, str]]]:
    """The shipped patterns, one at a time, and the steps' pattern lists the test suite's
    definitions compile (tests/fixtures/requires_corpus.json)."""
    out = [([text], ns) for text, ns in _shipped()]
    out += [(list(ps), dict(ns)) for ps, ns in json.loads(CORPUS.read_text())]
    return out


def _compiled(patterns: list[str], ns: dict[str, str]) -> Precondition | None:
    try:
        return compile_patterns(patterns, ns)
    except PreconditionSyntaxError:
        return None


def _terms(plan: Plan[Node]) -> tuple[set[URIRef], set[Literal], set[str]]:
    """The IRIs, literals and variables a plan names."""
    iris: set[URIRef] = set()
    literals: set[Literal] = set()
    names: set[str] = set()

    def walk(g: Any) -> None:
        if isinstance(g, Bgp):
            for t in g.triples:
                for x in (t.s, t.p, t.o):
                    take(x)
        elif isinstance(g, Join):
            walk(g.left)
            walk(g.right)
        elif isinstance(g, Filter):
            walk(g.inner)
            for c in g.conditions:
                if isinstance(c, Exists):
                    walk(c.group)
                else:
                    take(c.left)
                    take(c.right)

    def take(x: Any) -> None:
        if isinstance(x, Var):
            if not x.name.startswith("_:"):
                names.add(x.name)
        elif isinstance(x, URIRef):
            iris.add(x)
        elif isinstance(x, Literal):
            literals.add(x)

    walk(plan.root)
    return iris, literals, names


def _variants(lit: Literal) -> list[Literal]:
    """``lit`` and literals near it: other lexical forms of its value, neighbours, a string."""
    out = [lit, Literal(str(lit))]
    if lit.datatype == XSD.integer:
        n = int(lit)
        out += [Literal(n + 1), Literal(n - 1), Literal(f"0{n}", datatype=XSD.integer)]
        out.append(Literal(f"{n}.0", datatype=XSD.decimal))
    elif lit.datatype == XSD.decimal:
        out += [Literal(f"{lit}0", datatype=XSD.decimal), Literal("0.5", datatype=XSD.decimal)]
    elif lit.datatype == XSD.boolean:
        out += [Literal("1", datatype=XSD.boolean), Literal(False)]
    return out


def _world(rng: random.Random, plan: Plan[Node], size: int) -> tuple[OxigraphStore, list[Node]]:
    """A store of ``size`` random triples over the plan's terms and a few nodes of its own,
    some stored in two or three graphs (a runtime graph too)."""
    iris, literals, _ = _terms(plan)
    nodes: list[Node] = [URIRef(f"{E}n{i}") for i in range(4)] + sorted(iris)
    predicates = sorted({i for i in iris} | {RDF.type, URIRef(f"{E}p")})
    objects: list[Node] = nodes + [v for lit in sorted(literals) for v in _variants(lit)]
    objects += [Literal(1), Literal(5), Literal("x"), Literal("2", datatype=XSD.decimal)]
    graphs = [None, URIRef(f"{E}g"), URIRef("urn:horismos:runtime:claims")]
    store = OxigraphStore()
    quads = []
    for _ in range(size):
        triple = (rng.choice(nodes), rng.choice(predicates), rng.choice(objects))
        for g in rng.sample(graphs, rng.choice([1, 1, 1, 2, 3])):
            quads.append((*triple, g))
    store.load(quads)
    return store, nodes


def _agree(store: OxigraphStore, pre: Precondition, bindings: dict[str, Node]) -> bool:
    """Both paths give the same answer; True when the compiled one decided it alone."""
    slow = _query_only(pre)
    fast_rows, slow_rows = store.solutions(pre, bindings), store.solutions(slow, bindings)
    assert fast_rows == slow_rows, (pre.select_text, bindings)
    for a, b in zip(fast_rows, slow_rows, strict=True):
        assert [(k, type(v), str(v)) for k, v in a.items()] == [
            (k, type(v), str(v)) for k, v in b.items()
        ]
    assert store.failing(pre, bindings) == store.failing(slow, bindings)
    decided = store._solve(pre._plan, bindings, pre.variables, 2)
    return decided is not None and len(decided) < 2


def _check(pre: Precondition, seed: int, worlds: int = 4) -> int:
    """Compare both paths on ``worlds`` random worlds; how many answers the plan decided."""
    assert pre._plan is not None
    rng = random.Random(seed)
    decided = 0
    for _ in range(worlds):
        store, nodes = _world(rng, pre._plan, rng.choice([5, 15, 40]))
        _, _, names = _terms(pre._plan)
        for this in nodes:
            bindings: dict[str, Node] = {"this": this}
            if names - {"this"} and rng.random() < 0.3:  # another variable bound too
                bindings[rng.choice(sorted(names - {"this"}))] = rng.choice(nodes)
            decided += _agree(store, pre, bindings)
    return decided


def test_every_shipped_pattern_answers_as_the_query() -> None:
    corpus = _corpus()
    assert len(corpus) > 100
    compiled = decided = 0
    for i, (patterns, ns) in enumerate(corpus):
        pre = _compiled(patterns, ns)
        if pre is None or pre._plan is None:
            continue
        compiled += 1
        decided += _check(pre, seed=i)
    assert compiled > 0.8 * len(corpus)  # the common shape compiles
    assert decided > 0


# One pattern's SELECT is its ASK's algebra, not parsed again (compile_patterns): held to the
# parsed SELECT on the corpus and on every form a group graph pattern takes.
FORMS = [
    "?this :p ?x . OPTIONAL { ?x :q ?y }",
    "{ ?this :p ?x } UNION { ?this :q ?x }",
    "?this :p ?x . MINUS { ?x :q ?y }",
    "?this :p ?x . FILTER NOT EXISTS { ?x :q ?y } FILTER(?x != :a)",
    "?this :p ?x . BIND(?x + 1 AS ?z)",
    "VALUES ?x { :a :b UNDEF } ?this :p ?x .",
    "?this :p ?x . { SELECT ?x WHERE { ?x :q ?y } LIMIT 1 }",
    "GRAPH ?g { ?this :p ?x }",
    '?this :p/:q* ?x . FILTER(?x > 3 && regex(str(?x), "^a"))',
]


def test_one_patterns_select_is_the_select_parsed() -> None:
    cases = [(ps, ns) for ps, ns in _corpus() if len(ps) == 1]
    cases += [([text], {"": E}) for text in FORMS]
    assert len(cases) > 30
    for patterns, ns in cases:
        pre = _compiled(patterns, ns)
        if pre is None:
            continue
        parsed = prepareQuery(pre.select_text, initNs=ns)
        assert pre.select.algebra.name == parsed.algebra.name == "SelectQuery"
        assert _bnodes_named_in_order(pre.select.algebra) == _bnodes_named_in_order(
            parsed.algebra), patterns


def _bnodes_named_in_order(algebra: Any) -> str:
    """The algebra as text, its blank nodes (a ``[ … ]`` in a pattern, labelled afresh at
    each parse) named by where they first appear."""
    names: dict[str, str] = {}
    return re.sub(r"BNode\('([^']*)'\)",
                  lambda m: names.setdefault(m.group(1), f"b{len(names)}"), repr(algebra))


def test_a_pattern_that_closes_its_group_early_is_refused() -> None:
    """Joined into the step's SELECT as written, it would still parse, and a store that adds
    a VALUES row to each pattern's group would bind only its first half."""
    with pytest.raises(PreconditionSyntaxError):
        compile_patterns(["?this :p ?x } UNION { ?this :q ?x"], {"": E})


def test_the_union_graph_counts_a_triple_once_per_graph() -> None:
    """A triple stored in two graphs is two solutions (Oxigraph's union does not merge
    them): the plan finds both and hands over to the query for their order."""
    pre = compile_patterns(["?this :p ?x ."], {"": E})
    store = OxigraphStore()
    a, p, b = URIRef(f"{E}a"), URIRef(f"{E}p"), URIRef(f"{E}b")
    store.load([(a, p, b, None), (a, p, b, URIRef("urn:horismos:runtime:x"))])
    rows = store.solutions(pre, {"this": a})
    assert rows == [{"this": a, "x": b}] * 2
    assert rows == store.solutions(_query_only(pre), {"this": a})


def test_a_filter_sees_only_its_own_patterns_variables() -> None:
    """Each horis:requires is a group of its own: its FILTER does not see a variable only an
    earlier pattern binds (unbound there, the comparison is an error and drops the row),
    while a NOT EXISTS sees its group's solution substituted into it."""
    a, x = URIRef(f"{E}a"), URIRef(f"{E}x")
    store = OxigraphStore()
    store.load([(a, URIRef(f"{E}p"), x, None), (a, URIRef(f"{E}q"), x, None)])
    cases = {
        ("?this :p ?o .", "?this :q ?v . FILTER(?o = :x)"): 0,
        ("?this :p ?o . FILTER(?o = :x)", "?this :q ?v ."): 1,
        ("?this :p ?o . FILTER NOT EXISTS { ?this :q ?v FILTER(?v != ?o) }",): 1,
        ("?this :p ?o . FILTER EXISTS { ?this :q ?v FILTER(?v != ?o) }",): 0,
    }
    for patterns, count in cases.items():
        pre = compile_patterns(list(patterns), {"": E})
        assert pre._plan is not None
        rows = store.solutions(pre, {"this": a})
        assert len(rows) == count, patterns
        assert rows == store.solutions(_query_only(pre), {"this": a})


def test_a_pattern_that_scans_the_world_hands_over_to_the_query() -> None:
    """Unanchored and without a solution, the plan would look up every candidate; past
    LOOKUPS lookups it stops and the query answers, the same answer."""
    pre = compile_patterns(["?n a :Nurse . FILTER NOT EXISTS { ?n :off true }"], {"": E})
    store = OxigraphStore()
    nurse, off = URIRef(f"{E}Nurse"), URIRef(f"{E}off")
    nodes = [URIRef(f"{E}n{i}") for i in range(LOOKUPS + 10)]
    store.load(
        [(n, p, o, None) for n in nodes for p, o in ((RDF.type, nurse), (off, Literal(True)))]
    )
    assert pre._plan is not None
    assert store._solve(pre._plan, {}, pre.variables, 2) is None  # handed over
    assert store.solutions(pre, {}) == store.solutions(_query_only(pre), {}) == []
    store.load([(URIRef(f"{E}n"), RDF.type, nurse, None)])
    assert store.solutions(pre, {}) == [{"n": URIRef(f"{E}n")}]


def test_what_does_not_compile_is_asked_of_the_query() -> None:
    for text in (
        "?this :p ?x OPTIONAL { ?x :q ?y }",
        "{ ?this :p ?x } UNION { ?this :q ?x }",
        "?this :p/:q ?x",
        "?this :p ?x MINUS { ?x :q ?y }",
        "?this :p ?x BIND(1 AS ?y)",
        "?this :p ?x FILTER(STRLEN(STR(?x)) > 0)",
    ):
        assert compile_patterns([text], {"": E})._plan is None, text


# -- patterns hypothesis draws ---------------------------------------------------------------

_VARS = ["?this", "?a", "?b", "?c"]
_IRIS = [":x", ":y", ":z"]
_PREDS = [":p", ":q", "a"]
_LITS = ["1", "2", "1.50", "true", '"x"', '"1"^^xsd:integer', '"x"@en']


@st.composite
def _triple(draw: Any, inner: bool = False) -> str:
    s = draw(st.sampled_from(_VARS + _IRIS[:1] + (["[]"] if inner else [])))
    p = draw(st.sampled_from(_PREDS))
    o = draw(st.sampled_from(_VARS + _IRIS + _LITS))
    return f"{s} {p} {o} ."


@st.composite
def _filter(draw: Any, depth: int) -> str:
    kind = draw(st.sampled_from(["not", "exists", "cmp", "eq"] if depth else ["cmp", "eq"]))
    if kind in ("not", "exists"):
        body = " ".join(draw(st.lists(_triple(inner=True), min_size=1, max_size=2)))
        if draw(st.booleans()):
            body += " " + draw(_filter(depth - 1))
        return f"FILTER {'NOT ' if kind == 'not' else ''}EXISTS {{ {body} }}"
    a, b = draw(st.sampled_from(_VARS)), draw(st.sampled_from([*_VARS, "1", "1.5", ":x"]))
    op = draw(st.sampled_from(["=", "!=", "<", ">", "<=", ">="] if kind == "cmp" else ["=", "!="]))
    return f"FILTER({a} {op} {b})"


@st.composite
def _pattern(draw: Any) -> str:
    parts = draw(st.lists(_triple(), min_size=1, max_size=3))
    parts += draw(st.lists(_filter(2), max_size=2))
    return " ".join(draw(st.permutations(parts)))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_pattern(), min_size=1, max_size=3), st.integers(0, 2**32))
def test_drawn_patterns_answer_as_the_query(patterns: list[str], seed: int) -> None:
    pre = compile_patterns(patterns, {"": E, "xsd": str(XSD)})
    assert pre._plan is not None, pre.select_text
    _check(pre, seed, worlds=2)
