"""``world.graph`` as a view against the copy it was: one look-up, by world size.

    python benchmarks/bench_world_view.py [--sizes 30000 300000]

For each size, a world of that many triples on the in-memory Oxigraph store; prints the time
of ``(s, p, o) in world.graph`` and of ``world.graph.value(s, p)`` through the view, and of
the same look-up on the copy ``world.graph`` used to build on each access
(``store.dataset()``), with their ratio. The view's time should not grow with the world.
"""

from __future__ import annotations

import argparse
import time

from rdflib import Literal, Namespace

from horismos import World

EX = Namespace("http://example.org/big#")


def world_of(n: int) -> World:
    world = World.open("oxigraph")
    world.store.load((EX[f"s{i}"], EX.p, Literal(i), None) for i in range(n))
    return world


def timed(look: object) -> float:
    t0 = time.perf_counter()
    look()  # type: ignore[operator]
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[30_000, 300_000])
    sizes = ap.parse_args().sizes
    for n in sizes:
        measure(n)


def measure(n: int) -> None:
    """One size's figures."""
    world = world_of(n)
    probe = (EX[f"s{n // 2}"], EX.p, Literal(n // 2))
    view = min(timed(lambda: probe in world.graph) for _ in range(5))
    value = min(timed(lambda: world.graph.value(probe[0], EX.p)) for _ in range(5))
    copy = timed(lambda: probe in world.store.dataset())
    print(f"{n:>9,} triples: view 'in' {view * 1e3:8.2f} ms, view value() "
          f"{value * 1e3:8.2f} ms, copy 'in' {copy * 1e3:9.1f} ms "
          f"(copy / view {copy / view:,.0f}x)")
    world.close()


if __name__ == "__main__":
    main()
