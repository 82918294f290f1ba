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
from horismos._stores.aggregates import as_oxigraph_aggregates

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
    "?this :owner ?w . ?w rdfs:label ?l . ?this :item ?item . ?item :rank 1 .",  # a constant object
    "?this :owner/rdfs:label ?l . ?this :item ?item . ?item :rank 1 .",  # and a path
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
    "SELECT * WHERE { ?this :item [ :rank ?r ] . ?x :rank ?r } ORDER BY ?this ?r ?x LIMIT 3",
    # a zero-length path from a predicate bound by the pattern before it (review)
    "SELECT ?p ?y WHERE { ?this ?p ?o . ?p :q* ?y }",
    "SELECT * WHERE { ?i :rank ?r . ?r ^:rank ?j . ?this :item ?i }",  # a path from rank 0
    "SELECT * WHERE { ?o :rank* ?r . ?this :item ?o . ?c :item ?o }",
    # answers that depend on the order of rows: their order is compared too (review)
    "SELECT * WHERE { ?this :item [ :rank ?r ] . ?x :rank ?r } LIMIT 3",
    "SELECT ?o WHERE { ?o a :Option . ?c :item ?o . ?c :owner ?this } LIMIT 1",
    "SELECT ?o WHERE { ?o a :Option . ?c :item ?o . ?c :owner ?this } ORDER BY ?c LIMIT 1",
    "SELECT (SAMPLE(?o) AS ?one) (GROUP_CONCAT(STR(?o)) AS ?all) WHERE { ?o a :Option .\n"
    "  ?c :item ?o . ?c :owner ?this }",
])
@pytest.mark.parametrize("this", [EX.case4, EX.owner2])
def test_a_query_planned_for_its_bindings_answers_what_it_answered(query, this) -> None:
    """Ordering a basic graph pattern changes what it costs, never its solutions; a query
    whose answer depends on the order of its rows answers them in the same order."""
    world = _world(30)
    graph = world.store._ds  # type: ignore[attr-defined]
    parsed = prepare_query(query, NS)
    planned = bound_first(parsed, frozenset({"this"}))
    init = {Variable("this"): this}

    def rows(q):  # type: ignore[no-untyped-def]
        return [tuple(sorted(r.asdict().items())) for r in graph.query(q, initBindings=init)]

    if "LIMIT" in query or "SAMPLE" in query:
        assert rows(planned) == rows(parsed)
    else:
        assert planned is not parsed
        assert Counter(rows(planned)) == Counter(rows(parsed))


def test_a_path_a_store_selects_answers_as_rdflib_does() -> None:
    """``?p :q*`` from ``?p`` bound by ``?s ?p ?o``, ``?s`` bound: rdflib as parsed finds
    no row; moved ahead of its pattern, the path was evaluated from an unbound ``?p`` and a
    row was answered that the query as parsed does not give (review)."""
    world = World.open("memory")
    world.store.load([(EX.s, EX.knows, EX.o, None)])
    query = "SELECT ?p ?y WHERE { ?s ?p ?o . ?p :q* ?y }"
    graph = world.store._ds  # type: ignore[attr-defined]
    init = {Variable("s"): EX.s}
    parsed = [r.asdict() for r in graph.query(prepare_query(query, NS), initBindings=init)]
    assert world.store.select(query, {"s": EX.s}, NS) == parsed


def test_a_first_row_a_store_selects_is_rdflib_s() -> None:
    """``LIMIT 1`` without ``ORDER BY`` (as ``explain`` asks), ``SAMPLE`` and
    ``GROUP_CONCAT`` answer from the order of rows: planned, ``?a :inst ?i`` went first and
    the last instance of :T was answered where rdflib answers the first (review)."""
    world = World.open("memory")
    world.store.load([(EX[f"z{n}"], RDF.type, EX.T, None) for n in (1, 2, 3)])
    world.store.load([(EX[f"z{n}"], EX.inst, EX.i, None) for n in (3, 2, 1)])
    graph = world.store._ds  # type: ignore[attr-defined]
    for query in [
        "SELECT ?a WHERE { ?a a :T . ?a :inst ?i } LIMIT 1",
        "SELECT ?a WHERE { ?a a :T . ?a :inst ?i } ORDER BY ?i LIMIT 1",  # all tie
        "SELECT (SAMPLE(?a) AS ?one) WHERE { ?a a :T . ?a :inst ?i }",
        "SELECT (GROUP_CONCAT(STR(?a)) AS ?all) WHERE { ?a a :T . ?a :inst ?i }",
    ]:
        init = {Variable("i"): EX.i}
        parsed = [r.asdict() for r in graph.query(prepare_query(query, NS), initBindings=init)]
        assert world.store.select(query, {"i": EX.i}, NS) == parsed, query


def test_a_limit_over_an_order_of_every_projected_variable_is_planned() -> None:
    """Rows an ``ORDER BY`` of every projected variable ties project the same values, so
    their order does not show (the runtime's last instance of a focus asks so)."""
    query = "SELECT ?o WHERE { ?o a :Option . ?this :item ?o } ORDER BY ?o LIMIT 1"
    parsed = prepare_query(query, NS)
    assert bound_first(parsed, frozenset({"this"})) is not parsed
    from horismos._stored_instances import _LAST_OF_FOCUS, _NS

    last = prepare_query(_LAST_OF_FOCUS, _NS)  # grouped, ORDER BY DESC(?last) DESC(?i) LIMIT 1
    assert bound_first(last, frozenset({"f", "wf"})) is not last


def test_a_plan_is_kept_per_bound_name_the_query_writes() -> None:
    """Names bound beside a query's own (a step's other values) make no plan of their own,
    and a query none of whose variables is bound is kept as parsed (review)."""
    parsed = prepare_query("SELECT ?o WHERE { ?o a :Option . ?this :item ?o }", NS)
    planned = bound_first(parsed, frozenset({"this"}))
    assert planned is not parsed
    assert bound_first(parsed, frozenset({"this", "other", "more"})) is planned
    assert bound_first(parsed, frozenset({"other"})) is parsed


def test_nothing_bound_keeps_the_query_as_parsed() -> None:
    parsed = prepare_query("SELECT * WHERE { ?s a :Option }", NS)
    assert bound_first(parsed, frozenset()) is parsed


@pytest.mark.parametrize("aggregate", ["SUM", "AVG"])
def test_a_sum_is_left_as_parsed_on_the_memory_store_too(aggregate) -> None:
    """The ``memory`` store renames ``SUM`` and ``AVG`` to answer them as Oxigraph does; by
    their new names the planner took them for order-free and re-ordered the rows of a float
    sum, whose value depends on that order (review)."""
    query = (f"SELECT ({aggregate}(?r) AS ?t) "
             "WHERE { ?o a :Option . ?this :item ?o . ?o :rank ?r }")
    parsed = prepare_query(query, NS)
    as_oxigraph_aggregates([parsed.algebra])  # as the memory store prepares it
    assert bound_first(parsed, frozenset({"this"})) is parsed
