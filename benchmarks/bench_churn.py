"""A node whose values are replaced again and again, in an in-memory world: what a step costs as
its history grows (horismos._stores.churn).

    python benchmarks/bench_churn.py [--world 100000] [--steps 20000] [--window 5000]

pyoxigraph's in-memory store keeps every quad it was given, removed ones too, and walks them to
answer a pattern on their terms. What replaces a node's values again and again: each step of a
long-lived instance (its state), an adapter re-reading a resource (its projection). Here each
step replaces one node's five values in one commit and reads them three times, in a world of
``--world`` other quads. Prints the mean µs a step, per window of steps, with the store copying
itself when that pays (``copies``, as it does) and never (``never``, as before it could). Flat
is the goal. A plain script: figures, not assertions.
"""

from __future__ import annotations

import argparse
import time

from rdflib import Literal, URIRef

from horismos._stores import Change, churn, open_store

EX = "http://example.org/churn#"
NODE, G = URIRef(EX + "hot"), URIRef(EX + "g")
PROPS = [URIRef(EX + f"p{i}") for i in range(5)]


def values(n: int) -> list:
    return [(NODE, p, Literal(n), G) for p in PROPS]


def world(size: int):
    store = open_store("oxigraph")
    quads = [(URIRef(f"{EX}n{i // 10}"), PROPS[i % 5], Literal(i), G) for i in range(size)]
    for i in range(0, size, 5000):
        store.apply(Change(add=quads[i : i + 5000]))
    store.apply(Change(add=values(0)))
    return store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--world", type=int, default=100_000)
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--window", type=int, default=5000)
    args = parser.parse_args()
    floor = churn.HOT_FLOOR
    try:
        for mode in ("copies", "never"):
            churn.HOT_FLOOR = floor if mode == "copies" else 10**12
            store = world(args.world)
            windows, t0 = [], time.perf_counter()
            for n in range(args.steps):
                store.apply(Change(add=values(n + 1), remove=values(n)))
                for _ in range(3):
                    list(store.outgoing(NODE))
                if (n + 1) % args.window == 0:
                    t1 = time.perf_counter()
                    windows.append(f"{(t1 - t0) / args.window * 1e6:,.0f}")
                    t0 = t1
            print(f"{mode:6}  world {args.world:,} quads, {args.steps:,} steps: µs a step per "
                  f"{args.window:,}: {' '.join(windows)}")
    finally:
        churn.HOT_FLOOR = floor


if __name__ == "__main__":
    main()
