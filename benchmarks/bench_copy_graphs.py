"""What the commits of an in-memory store's copy afresh cost in a world of many named graphs
(horismos._stores.copy_behind): a pharmacy run names two graphs, so a long-lived world holds
hundreds of thousands.

    python benchmarks/bench_copy_graphs.py [--graphs 300000]

A store of ``--graphs`` graphs of one quad each on the in-memory ``oxigraph`` store, its count
of removed quads set to make the next removing commit due for a copy; then one node's value
replaced a commit at a time until the copy replaces the store. Prints the commit that began
the copy, the longest other commit and how many commits the copy spanned. Run it with
``PYTHONPATH`` set to each tree, alternately, to compare (a figure, not an assertion).
"""

from __future__ import annotations

import argparse
import time

from rdflib import RDF, Literal, URIRef

from horismos._stores import Change, churn, open_store

EX = "http://example.org/ward#"
WARD, BEDS, G = URIRef(EX + "w1"), URIRef(EX + "freeBeds"), URIRef(EX + "g")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--graphs", type=int, default=300_000)
    args = parser.parse_args()
    store = open_store("oxigraph")
    bed = URIRef(EX + "Bed")
    for start in range(0, args.graphs, 5000):
        store.apply(Change(add=[(URIRef(f"{EX}bed{n}"), RDF.type, bed, URIRef(f"{EX}g{n}"))
                                for n in range(start, min(args.graphs, start + 5000))]))
    store.apply(Change(add=[(WARD, BEDS, Literal(0), G)]))
    # due at the next commit (below the floor a copy is never due, whatever was removed)
    store._churn.removed = max(2 * store._held(), churn.DEAD_FLOOR)  # type: ignore[attr-defined]
    first, times = store._store, []  # type: ignore[attr-defined]
    while store._store is first:  # type: ignore[attr-defined]
        n = len(times)
        t0 = time.perf_counter()
        store.apply(Change(add=[(WARD, BEDS, Literal(n + 1), G)],
                           remove=[(WARD, BEDS, Literal(n), G)]))
        times.append(time.perf_counter() - t0)
    print(f"{args.graphs:,} graphs: the commit that began the copy {times[0] * 1000:,.1f} ms, "
          f"the longest other {max(times[1:], default=0) * 1000:,.1f} ms; the copy spanned "
          f"{len(times):,} commits")


if __name__ == "__main__":
    main()
