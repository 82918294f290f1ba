"""What ``run --all``'s questions about its foci cost beside many instances that are not theirs.

    python benchmarks/bench_unfinished.py [--others 10000 100000] [--foci 1 10 1000]
                                          [--store oxigraph oxigraph:PATH journal:PATH]
                                          [--question unfinished finished] [--reps 5]
                                          [--before PATH]

Each world holds ``--others`` instances that are not the foci's and, of ``Flow``, one
completed instance per focus and one waiting instance of every tenth. The questions:

- ``unfinished``: which of these foci has an unfinished instance to continue
  (``unfinished(store, Flow, foci)``), beside ``--others`` instances of ``Other`` waiting
  (an approval queue nobody answers fast);
- ``finished``: which of them has a finished one, to leave out (``finished_foci``), beside
  ``--others`` completed instances of ``Flow`` itself on other foci (its history).

Printed, per question, store, size and number of foci, the median and the rows the store
handed back to Python: neither should grow with the others. ``--before PATH``: the same
for the horismos package of PATH (a worktree of main, say), measured in the same process
(``before.py``). Run it with ``PYTHONPATH`` set to the tree.

Then, per store and size, the median of ``instance_for(store, Flow, focus)`` — what
``run_workflow`` asks before it runs, for a focus with two instances — and its rows: neither
should grow with the world's other instances either.
"""

from __future__ import annotations

import argparse
import inspect
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from rdflib import Literal, Namespace, URIRef

from horismos._stored_instances import instance_for
from horismos._vocab import HORIS
from horismos._world import INSTANCES

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from before import before_package, found_in  # noqa: E402
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


OTHERS = {"unfinished": (W.Other, HORIS.Waiting), "finished": (W.Flow, HORIS.Completed)}
"""Per question, the workflow and status of the instances that are not the foci's."""


def quads(others: int, foci: list[URIRef], question: str) -> list[tuple]:
    """``others`` instances of another focus each (:data:`OTHERS`); of ``Flow``, one
    completed instance a focus and a waiting one every tenth focus."""
    out: list[tuple] = []
    workflow, status = OTHERS[question]
    for n in range(others):
        out += instance(n, workflow, W[f"other{n}"], status)
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


def asking(package: str, question: str) -> Callable[[object, list[URIRef]], object]:
    """``package``'s answer to ``question`` for a store and some foci; a package from before
    the foci bounded ``finished_foci`` is asked of the workflow alone."""
    if question == "unfinished":
        unfinished = found_in(package, "unfinished", "_stored_instances", "_waits")
        return lambda store, foci: unfinished(store, W.Flow, foci)
    finished_foci = found_in(package, "finished_foci", "_stored_instances", "_waits")
    if "foci" in inspect.signature(finished_foci).parameters:
        return lambda store, foci: finished_foci(store, W.Flow, foci)
    return lambda store, foci: {f for f in finished_foci(store, W.Flow) if f in set(foci)}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--others", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--foci", type=int, nargs="+", default=[1, 10, 1000])
    parser.add_argument("--store", nargs="+", default=["oxigraph", "oxigraph:PATH", "journal:PATH"])
    parser.add_argument("--question", nargs="+", default=["unfinished", "finished"],
                        choices=sorted(OTHERS))
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--before", type=Path, help="a checkout whose horismos to compare with")
    args = parser.parse_args()
    packages = ["horismos"] + ([before_package(args.before)] if args.before else [])
    most = max(args.foci)
    foci = [W[f"case{k}"] for k in range(most)]
    print(f"{'question':<11} {'package':<17} {'store':<13} {'others':>7} {'foci':>5} "
          f"{'median':>10} {'rows':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        for question in args.question:
            for kind in args.store:
                for others in args.others:
                    with filled_world(kind, tmp, quads(others, foci, question)) as world:
                        for k in args.foci:
                            for package in packages:
                                ask = asking(package, question)
                                asked = foci[:k]
                                found = ask(world.store, asked)
                                want = (k + 9) // 10 if question == "unfinished" else k
                                assert len(found) == want, (k, len(found))  # type: ignore[arg-type]
                                rows = Rows(world.store)
                                world.store.select = rows  # type: ignore[method-assign]
                                ask(world.store, asked)
                                del world.store.select
                                took = timed(lambda a=asked, f=ask: f(world.store, a), args.reps)
                                print(
                                    f"{question:<11} {package:<17} {kind:<13} {others:>7} {k:>5} "
                                    f"{took * 1000:>7.2f} ms {rows.count:>7}",
                                    flush=True,
                                )
        for kind in args.store:
            for others in args.others:
                with filled_world(kind, tmp, quads(others, foci, "unfinished")) as world:
                    rows = Rows(world.store)
                    world.store.select = rows  # type: ignore[method-assign]
                    assert instance_for(world.store, W.Flow, foci[0]) is not None
                    del world.store.select
                    took = timed(lambda: instance_for(world.store, W.Flow, foci[0]), args.reps)
                    print(
                        f"{'run_workflow':<11} {'horismos':<17} {kind:<13} {others:>7} "
                        f"{1:>5} {took * 1000:>7.2f} ms {rows.count:>7}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
