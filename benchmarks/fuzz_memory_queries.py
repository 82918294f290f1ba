"""Random SELECTs over a small random world, on the ``memory`` store and on ``oxigraph`` (the
reference): how many answer differently, by the kind of query. Prints counts and one example
of each kind; the differences docs/stores.md lists are expected, anything else is a finding.

    python benchmarks/fuzz_memory_queries.py [--queries 2000] [--seed 1]
"""

from __future__ import annotations

import argparse
import logging
import random
from collections import Counter

from rdflib import BNode, Literal

from horismos._stores import Store, open_store

P = "PREFIX : <http://e/> PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> "
VALUES = [
    "1",
    "2",
    "-0",
    "1.50",
    "2.0",
    "1e0",
    "'1'",
    "'a'",
    "'B'",
    "''",
    "'a'@en",
    "'a'@EN-gb",
    "true",
    "false",
    "'0'^^xsd:boolean",
    "'2020-01-01'^^xsd:date",
    "'2020-01-01T00:00:00Z'^^xsd:dateTime",
    "'2020-01-01T01:00:00+01:00'^^xsd:dateTime",
    "'10:00:00Z'^^xsd:time",
    "'09:30:00-02:00'^^xsd:time",
    "'10:00:00'^^xsd:time",
    "'P1D'^^xsd:dayTimeDuration",
    "'PT2H'^^xsd:dayTimeDuration",
    "'P1Y'^^xsd:yearMonthDuration",
    "'P9M'^^xsd:yearMonthDuration",
    "'P1M'^^xsd:duration",
    "'P30D'^^xsd:duration",
    "'1'^^xsd:int",
    "'x'^^:dt",
    ":a",
    ":b",
    "_:x",
    "_:y",
]
EXPRESSIONS = [
    "?o",
    "STR(?o)",
    "LANG(?o)",
    "DATATYPE(?o)",
    "?o + 1",
    "?o * 2",
    "?o / 2",
    "-?o",
    "STRLEN(?o)",
    "UCASE(?o)",
    "isLiteral(?o)",
    "isNumeric(?o)",
    "isIRI(?o)",
    "isBlank(?o)",
    "?o = 1",
    "?o < 2",
    "?o > 'a'",
    "?o != ?o2",
    "?o = ?o2",
    "sameTerm(?o, ?o2)",
    "!?o",
    "?o && true",
    "?o || false",
    "BOUND(?o2)",
    "COALESCE(?o2, ?o)",
    "IF(?o, 1, 2)",
    "CONTAINS(STR(?o), '1')",
    "STRSTARTS(?o, 'a')",
    "LANGMATCHES(LANG(?o), 'en')",
    "xsd:integer(?o)",
    "xsd:decimal(?o)",
    "xsd:string(?o)",
    "xsd:boolean(?o)",
    "ABS(?o)",
    "ROUND(?o)",
    "CEIL(?o)",
    "STRDT(STR(?o), xsd:integer)",
    "STRLANG(STR(?o), 'en')",
    "YEAR(?o)",
    "?o IN (1, 'a', :a)",
    "CONCAT(STR(?o), '-')",
    "SUBSTR(STR(?o), 2)",
    "REGEX(STR(?o), '^a')",
    "ENCODE_FOR_URI(STR(?o))",
    "IRI(CONCAT('http://e/', STR(?o)))",
]


def world(rng: random.Random) -> str:
    triples = []
    for s in (":a", ":b", ":c", "_:x"):
        for _ in range(rng.randint(1, 4)):
            p = rng.choice([":p", ":q"])
            triple = f"{s} {p} {rng.choice(VALUES)} ."
            graph = rng.choice([None, None, ":g", ":h"])
            triples.append(triple if graph is None else f"GRAPH {graph} {{ {triple} }}")
    return P + "INSERT DATA { " + " ".join(triples) + " }"


def query(rng: random.Random) -> tuple[str, str]:
    expr = rng.choice(EXPRESSIONS)
    kind = rng.choice(["filter", "bind", "order", "aggregate", "values", "graph", "distinct"])
    body = "?s :p ?o . OPTIONAL { ?s :q ?o2 }"
    if kind == "filter":
        return kind, f"SELECT ?s ?o WHERE {{ {body} FILTER({expr}) }}"
    if kind == "bind":
        return kind, f"SELECT ?s ?o ?v WHERE {{ {body} BIND({expr} AS ?v) }}"
    if kind == "order":  # the keys alone: rows of equal keys come in any order
        order = rng.choice(["", "DESC"])
        return kind, f"SELECT ?k WHERE {{ {body} BIND({expr} AS ?k) }} ORDER BY {order}(?k)"
    if kind == "aggregate":
        agg = rng.choice(["MIN", "MAX", "SUM", "AVG", "COUNT", "SAMPLE", "GROUP_CONCAT"])
        inner = "DISTINCT ?o" if agg in ("COUNT", "SUM") and rng.random() < 0.3 else expr
        return kind, f"SELECT ?s ({agg}({inner}) AS ?v) WHERE {{ {body} }} GROUP BY ?s"
    if kind == "values":
        rows = " ".join(rng.sample(VALUES[:-2], 3))
        return kind, f"SELECT ?s ?o WHERE {{ VALUES ?o {{ {rows} }} ?s ?p ?o }}"
    if kind == "graph":
        return kind, f"SELECT ?g ?s ?o WHERE {{ GRAPH ?g {{ ?s ?p ?o FILTER({expr}) }} }}"
    return kind, "SELECT DISTINCT ?o WHERE { ?s ?p ?o }"


def answer(store: Store, text: str, ordered: bool) -> object:
    try:
        rows = store.select(P + text, {}, {})
    except Exception as e:  # the kind of failure is the answer
        return f"error: {type(e).__name__}"
    shown = [
        tuple(sorted((k, "_" if isinstance(v, BNode) else _n3(v)) for k, v in r.items()))
        for r in rows
    ]
    return shown if ordered else sorted(shown)


def _n3(v: object) -> str:
    return v.n3() if isinstance(v, Literal) else str(v)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # rdflib logs each ill-typed literal it casts
    rng = random.Random(args.seed)
    asked, differ, example = Counter[str](), Counter[str](), {}
    for n in range(args.queries):
        if n % 50 == 0:
            stores = [open_store("memory"), open_store("oxigraph")]
            text = world(rng)
            for store in stores:
                store.update(text)
        kind, q = query(rng)
        asked[kind] += 1
        memory, oxigraph = (answer(s, q, kind == "order") for s in stores)
        if memory != oxigraph:
            differ[kind] += 1
            example.setdefault(kind, []).append((q, memory, oxigraph))
    print(f"{sum(differ.values())} of {sum(asked.values())} queries differ")
    for kind in asked:
        print(f"  {kind:10} {differ[kind]:5} of {asked[kind]}")
    for kind, found in example.items():
        for q, memory, oxigraph in found[:3]:
            print(f"\n[{kind}] {q}\n  memory:   {memory}\n  oxigraph: {oxigraph}")


if __name__ == "__main__":
    main()
