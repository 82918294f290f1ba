"""Whether emptying an in-memory pyoxigraph store a slice at a time makes freeing it cheap
(horismos._stores.copy_behind: the old store is freed inside the commit a copy replaces it at).

    python benchmarks/bench_store_drop.py [--quads 3000000] [--rounds 3]

Each round builds two stores of ``--quads`` quads, removes every quad of one (256 a call, from
an iterator over it, as later commits would), then frees both, in alternating order, and prints
the time each free took. A figure, not an assertion.
"""

from __future__ import annotations

import argparse
import gc
import time
from itertools import islice

import pyoxigraph as ox

EX = "http://example.org/"


def built(quads: int) -> ox.Store:
    store, p = ox.Store(), ox.NamedNode(EX + "p")
    for start in range(0, quads, 100_000):
        store.extend([ox.Quad(ox.NamedNode(f"{EX}s{i // 4}"), p, ox.Literal(f"v{i}"),
                              ox.NamedNode(f"{EX}g{i // 10}"))
                      for i in range(start, min(quads, start + 100_000))])
    return store


def emptied(store: ox.Store) -> ox.Store:
    quads = iter(store)
    while chunk := list(islice(quads, 256)):
        for q in chunk:
            store.remove(q)
    return store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quads", type=int, default=3_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    gc.disable()
    for round_ in range(args.rounds):
        stores = {"full": built(args.quads), "emptied": emptied(built(args.quads))}
        freed = {}
        for name in ("full", "emptied") if round_ % 2 == 0 else ("emptied", "full"):
            t0 = time.perf_counter()
            del stores[name]
            freed[name] = time.perf_counter() - t0
        print(f"{args.quads:,} quads, round {round_}: freed full {freed['full']:.3f} s, "
              f"emptied first {freed['emptied']:.3f} s", flush=True)


if __name__ == "__main__":
    main()
