"""What ``run --all``'s question — which of these foci has an unfinished instance to
continue — costs beside many unfinished instances of *another* workflow.

    python benchmarks/bench_unfinished.py [--others 10000 100000] [--foci 1 10 1000]
                                          [--store oxigraph oxigraph:PATH] [--reps 5]

Each world holds ``--others`` instances of ``Other`` waiting (an approval queue nobody
answers fast), and, of ``Flow``, one completed instance per focus and one waiting instance
of every tenth. Printed, per store, size and number of foci, the median of
``unfinished(store, Flow, foci)`` and the rows the store handed back to Python: neither
should grow with ``Other``'s instances. Then the median of ``instance_for(store, Flow,
focus)`` — what ``run_workflow`` asks before it runs, for a focus with two instances — and its
rows: neither should grow with the world's other instances either. Run it with
``PYTHONPATH`` set to the tree.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from rdflib import Literal, Namespace, URIRef

from horismos._vocab import HORIS
from horismos._waits import instance_for, unfinished
from horismos._world import INSTANCES

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_load import timed  # noqa: E402
from bench_stores import filled_world  # noqa: E402

W = Namespace("http://example.org/unfinished#")


def instance(n: int, workflow: URIRef, focus: URIRef, status: URIRef) -> list[tuple]:
    i = URIRef(f"urn:horismos:instance:{n:032x}")
    return [
        (i, HORIS.workflow, workflow, INSTANCES),
        (i, HORIS.focus, focus, INSTANCES),
        (i, HORIS.status, status, INSTANCES),
        (i, HORIS.version, Literal(1), INSTANCES),
    ]


def quads(others: int, foci: list[URIRef]) -> list[tuple]:
    """``others`` waiting instances of ``Other``; of ``Flow``, one completed instance a focus
    and a waiting one every tenth focus."""
    out: list[tuple] = []
    for n in range(others):
        out += instance(n, W.Other, W[f"other{n}"], HORIS.Waiting)
    for k, focus in enumerate(foci):
        out += instance(others + 2 * k, W.Flow, focus, HORIS.Completed)
        if k % 10 == 0:
            out += instance(others + 2 * k + 1, W.Flow, focus, HORIS.Waiting)
    return out


class Rows:
    """The rows ``store.select`` handed back, counted around one call."""

    def __init__(self, store: object) -> None:
        self.store, self.count = store, 0
        self.select = store.select  # type: ignore[attr-defined]

    def __call__(self, *args: object) -> list:
        rows = self.select(*args)
        self.count += len(rows)
        return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--others", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--foci", type=int, nargs="+", default=[1, 10, 1000])
    parser.add_argument("--store", nargs="+", default=["oxigraph", "oxigraph:PATH"])
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    most = max(args.foci)
    foci = [W[f"case{k}"] for k in range(most)]
    print(f"{'store':<14} {'others':>8} {'foci':>6} {'median':>10} {'rows':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.store:
            for others in args.others:
                with filled_world(kind, tmp, quads(others, foci)) as world:
                    for k in args.foci:
                        asked = foci[:k]
                        found = unfinished(world.store, W.Flow, asked)
                        assert len(found) == (k + 9) // 10, (k, len(found))
                        rows = Rows(world.store)
                        world.store.select = rows  # type: ignore[method-assign]
                        unfinished(world.store, W.Flow, asked)
                        del world.store.select
                        took = timed(lambda a=asked: unfinished(world.store, W.Flow, a), args.reps)
                        print(
                            f"{kind:<14} {others:>8} {k:>6} {took * 1000:>7.2f} ms {rows.count:>8}",
                            flush=True,
                        )
                    rows = Rows(world.store)
                    world.store.select = rows  # type: ignore[method-assign]
                    assert instance_for(world.store, W.Flow, foci[0]) is not None
                    del world.store.select
                    took = timed(lambda: instance_for(world.store, W.Flow, foci[0]), args.reps)
                    print(
                        f"{kind:<14} {others:>8} {'instance_for':>6} {took * 1000:>7.2f} ms "
                        f"{rows.count:>8}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
