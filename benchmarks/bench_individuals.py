"""What placing the definitions' individuals in a world costs, by world size.

A run opens its world and makes the ``urn:horismos:definitions`` graph equal to the
individuals the definitions declare (``horismos/_individuals.py``). The claim: the cost
follows the number of individuals, not the size of the world. This prints, for worlds of
growing size on the default store, the time of the first placement (writes them) and of a
later one (finds nothing to do), each the best of five.

    python benchmarks/bench_individuals.py
"""

from __future__ import annotations

import time

from rdflib import RDF, RDFS, Literal, Namespace

from horismos import World
from horismos._individuals import place_individuals
from horismos._stores import Change

EX = Namespace("http://example.org/bench#")
INDIVIDUALS = frozenset(
    t for i in range(200)
    for t in ((EX[f"code{i}"], RDF.type, EX.Code), (EX[f"code{i}"], RDFS.label, Literal(f"C{i}"))))


def world_of(triples: int) -> World:
    world = World.open("oxigraph")
    batch = 50_000
    for start in range(0, triples, batch):
        world.commit(Change(add=[(EX[f"p{i}"], EX.value, Literal(i), None)
                                 for i in range(start, min(start + batch, triples))]))
    return world


def best(f, n: int = 5) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    print(f"{len(INDIVIDUALS)} statements about 200 individuals")
    print(f"{'world triples':>14}  {'first placement':>16}  {'unchanged, again':>17}")
    for size in (10_000, 100_000, 1_000_000):
        first = []
        for _ in range(3):
            world = world_of(size)
            t0 = time.perf_counter()
            place_individuals(INDIVIDUALS, world)
            first.append(time.perf_counter() - t0)
        again = best(lambda w=world: place_individuals(INDIVIDUALS, w))
        print(f"{size:>14,}  {min(first) * 1000:>13.2f} ms  {again * 1000:>14.2f} ms")


if __name__ == "__main__":
    main()
