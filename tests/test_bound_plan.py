"""The ``memory`` store plans a query knowing which of its variables are bound: what a step
reads costs what its focus touches, and the answers are those of the query as parsed."""

from __future__ import annotations

from collections import Counter

import pytest
from rdflib import RDF, RDFS, Literal, Namespace, Variable
from test_waits import _triples_read

from horismos import World
from horismos._bound_plan import bound_first
from horismos._preconditions import compile_patterns
from horismos._sparql_parse import prepare_query

EX = Namespace("http://example.org/plan#")
NS = {"": str(EX), "rdfs": str(RDFS)}


def _world(options: int) -> World:
    """``options`` options, each offered by a case of its own, ranked 0 or 1, labelled."""
    world = World.open("memory")
    quads = []
    for n in range(options):
        case, option = EX[f"case{n}"], EX[f"option{n}"]
        quads += [(case, EX.option, option, None), (option, RDF.type, EX.Option, None),
                  (case, EX.owner, EX[f"owner{n % 7}"], None), (case, EX.item, option, None),
                  (option, EX.rank, Literal(n % 2), None),
                  (EX[f"owner{n % 7}"], RDFS.label, Literal(f"owner {n % 7}"), None)]
    world.store.load(quads)
    return world


@pytest.mark.parametrize("pattern", [
    "?this :option ?option . ?option a :Option .",  # a ProposalStep's candidates
    "?this :owner/rdfs:label ?l . ?this :item ?item . ?item :rank 1 .",  # a constant object
])
def test_a_precondition_reads_from_its_bound_focus_not_every_match_of_a_constant(pattern) -> None:
    """rdflib orders a pattern's triples when it is parsed, before ``?this`` is bound: the
    one with a class or a literal went first, and every option or every item of rank 1
    the world held was read (bench_history.py --rows: 1,588 -> 15,088 triples, 1,072 ->
    10,072, for 10x the history)."""
    pre = compile_patterns([pattern], NS)
    reads = []
    for options in (100, 1000):
        world = _world(options)
        found, read = _triples_read(
            world, lambda w=world: w.store.solutions(pre, {"this": EX.case1})
        )
        assert [s["this"] for s in found] == [EX.case1]
        reads.append(read)
    assert reads[0] == reads[1] < 10, reads  # 100 -> 1,000 and more


def test_a_select_reads_from_its_bound_values() -> None:
    world = _world(1000)
    query = "SELECT ?option WHERE { ?option a :Option . ?this :option ?option }"
    found, read = _triples_read(world, lambda: world.store.select(query, {"this": EX.case3}, NS))
    assert found == [{"option": EX.option3}]
    assert read < 10, read  # every option: 1,000 and more


@pytest.mark.parametrize("query", [
    "SELECT * WHERE { ?o a :Option . ?this :item ?o . OPTIONAL { ?o :rank ?r . ?x :option ?o } }",
    "SELECT * WHERE { { ?this :owner ?x } UNION { ?o a :Option . ?this :item ?o } }",
    "SELECT * WHERE { ?this :owner ?w . ?w rdfs:label ?l . ?c :owner ?w . ?c :item ?i .\n"
    "  FILTER NOT EXISTS { ?i :rank 0 } BIND(STR(?l) AS ?s) }",
    "SELECT ?c (COUNT(?i) AS ?n) WHERE { ?c :owner ?this . ?c :item ?i . ?i a :Option }\n"
    "  GROUP BY ?c",
    "SELECT * WHERE { ?this ^:owner/:item ?i . { SELECT ?i WHERE { ?i :rank 1 } } }",
    "SELECT * WHERE { ?this :item [ :rank ?r ] . ?x :rank ?r } LIMIT 3",
])
@pytest.mark.parametrize("this", [EX.case4, EX.owner2])
def test_a_query_planned_for_its_bindings_answers_what_it_answered(query, this) -> None:
    """Ordering a basic graph pattern changes what it costs, never its solutions."""
    world = _world(30)
    graph = world.store._ds  # type: ignore[attr-defined]
    parsed = prepare_query(query, NS)
    planned = bound_first(parsed, frozenset({"this"}))
    assert planned is not parsed
    init = {Variable("this"): this}

    def rows(q):  # type: ignore[no-untyped-def]
        return Counter(tuple(sorted(r.asdict().items())) for r in graph.query(q, initBindings=init))

    assert rows(planned) == rows(parsed)


def test_nothing_bound_keeps_the_query_as_parsed() -> None:
    parsed = prepare_query("SELECT * WHERE { ?s a :Option }", NS)
    assert bound_first(parsed, frozenset()) is parsed
