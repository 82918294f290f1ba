"""What finding an instance by the short id a run prints costs as the world's instances grow.

    python benchmarks/bench_short_id.py [--instances 1000 10000 100000]
                                        [--store oxigraph oxigraph:PATH journal:PATH memory sparql]
                                        [--reps 5] [--before PATH]

``horismos resume SHORTID`` (and ``approve``) turn the id into an instance IRI with
``find_instance``: the instances filed under the short id in the index each instance's
creation writes (``_stored_instances.short_id_quad``); when it holds none,
``?i a horis:Instance`` in ``urn:horismos:instances``, filtered by
``STRSTARTS(STR(?i), "urn:horismos:instance:SHORTID")``, ``LIMIT 2``. Each world holds N
instances with their state as the runner writes it, under random (UUID hex) ids, and, in the
indexed world, each one's short id as the runner files it.
Printed, per store and N, the median of:

- ``short id``: ``find_instance`` with an 8-character id the run printed (of an instance
  in the middle of the world), in the indexed world;
- ``full IRI``: ``find_instance`` with the instance's IRI (no query; what a script passes);
- ``first miss``: the first ``find_instance`` with an 8-character id no instance has, once
  a store: every instance's id is read and filed under its short id, and the store says its
  index holds every instance (``_stored_instances._index_every_instance``);
- ``no such id``: ``find_instance`` with such an id after it (the error path of ``resume``
  and ``approve``): the index alone answers (before: every id read at every one);
- ``unindexed``: the short id in the world without the index (instances written before it,
  a world read back from a file), after the first miss indexed them: one index range (before:
  every id read, at every look-up).

``--before PATH``: the same for the horismos package of PATH (a worktree of main, say), in
the same process (``before.py``).

Oxigraph keys an IRI by a 128-bit hash of its text, not by the text, so no index orders
instance IRIs by their characters and no prefix of one is a range of keys: ``STRSTARTS``
(or any filter on ``STR(?i)``) reads every instance. Run it with ``PYTHONPATH`` set to the
tree to measure.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from rdflib import RDF, Literal, Namespace, URIRef

from horismos import World
from horismos._stored_instances import short_id_quad
from horismos._vocab import HORIS
from horismos._world import INSTANCES

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from before import before_package, found_in  # noqa: E402
from bench_load import timed  # noqa: E402
from bench_stores import filled_world  # noqa: E402

W = Namespace("http://example.org/short#")


def quads(ids: list[str], indexed: bool) -> list[tuple]:
    """Each instance's state as the runner writes it, and its short id if ``indexed``."""
    out: list[tuple] = []
    for k, hexid in enumerate(ids):
        iid = URIRef(f"urn:horismos:instance:{hexid}")
        state = [
            (iid, RDF.type, HORIS.Instance),
            (iid, HORIS.workflow, W.Flow),
            (iid, HORIS.focus, W[f"case{k}"]),
            (iid, HORIS.status, HORIS.Completed),
            (iid, HORIS.version, Literal(3)),
        ]
        out += [(*t, INSTANCES) for t in state]
        if indexed:
            out.append(short_id_quad(iid))
    return out


def median(call: Callable[[], object], reps: int) -> float:
    """The median of ``reps`` timed calls (bench_load's ``timed``), after one warm-up call:
    prepared queries, caches."""
    call()
    return timed(call, reps)


def measure(package: str, world: World, wanted: str, reps: int) -> tuple[float, ...]:
    """The medians printed, ``package``'s ``find_instance``: by short id, by full IRI, the
    first miss (timed once), a miss after it."""
    find_instance = found_in(package, "find_instance", "_stored_instances", "_waits")
    refused = importlib.import_module(f"{package}._errors").UsageError

    def missing(text: str) -> None:
        try:
            find_instance(world.store, text)
        except refused:
            return
        raise AssertionError(f"{text} found")

    iri = f"urn:horismos:instance:{wanted}"
    t0 = time.perf_counter()
    missing("zzzzzzzz")  # no hex id starts so
    first = time.perf_counter() - t0
    assert str(find_instance(world.store, wanted[:8])) == iri
    return (
        median(lambda: find_instance(world.store, wanted[:8]), reps),
        median(lambda: find_instance(world.store, iri), reps),
        first,
        median(lambda: missing("zzzzzzzy"), reps),
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--instances", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument(
        "--store",
        nargs="+",
        default=["oxigraph", "oxigraph:PATH", "journal:PATH"],
        choices=["oxigraph", "oxigraph:PATH", "journal:PATH", "memory", "sparql"],
    )
    parser.add_argument("--reps", type=int, default=5, help="timed look-ups (median printed)")
    parser.add_argument("--before", type=Path, help="a checkout whose horismos to compare with")
    args = parser.parse_args()
    packages = ["horismos"] + ([before_package(args.before)] if args.before else [])
    head = f"{'package':<16} {'store':<13} {'instances':>9} {'short id':>10} {'full IRI':>10}"
    print(head + f" {'first miss':>11} {'no such id':>11} {'unindexed':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.store:
            for n in args.instances:
                ids = [os.urandom(16).hex() for _ in range(n)]
                wanted = ids[n // 2]
                for package in packages:
                    with filled_world(kind, tmp, quads(ids, indexed=True)) as world:
                        short, full, first, none = measure(package, world, wanted, args.reps)
                    with filled_world(kind, tmp, quads(ids, indexed=False)) as world:
                        before = measure(package, world, wanted, args.reps)[0]
                    print(
                        f"{package:<16} {kind:<13} {n:>9} {short * 1000:>7.2f} ms "
                        f"{full * 1000:>7.3f} ms {first * 1000:>8.2f} ms {none * 1000:>8.2f} ms "
                        f"{before * 1000:>7.2f} ms",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
