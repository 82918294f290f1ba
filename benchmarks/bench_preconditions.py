"""What a step's reads cost on the in-memory Oxigraph store: its precondition, compiled to
index lookups (horismos._patterns) or asked as a SPARQL query, and the reads that follow it.

    python benchmarks/bench_preconditions.py [--prescriptions 2000] [--rounds 3]
                                             [--store oxigraph|memory]

The refill workflow of benchmarks/peers (each step: a triple pattern from ?this and a FILTER NOT
EXISTS) over a world of N prescriptions, each halfway through it. Per round, alternating in one
process (so the load of a shared machine hits both alike), the CPU µs per call of:

- ``solutions`` of each step's precondition, compiled and as the query;
- ``failing`` (what a blocked step records), compiled and as the queries;
- a step's reads as a run makes them, recorded for replay: the precondition's solutions, the
  argument's types and the effect subject's outgoing triples;
- ``solutions`` of a precondition with a literal written otherwise than the store keeps it
  (``'1'^^xsd:boolean``, kept as ``true``), which ``memory`` evaluates in its stored form.

``--store memory``: the rdflib store, which evaluates every precondition as a query (its
"compiled" and "query" figures are the same work).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rdflib import RDF, XSD, Literal, Namespace

from horismos import Agent, World
from horismos._preconditions import Precondition, compile_patterns
from horismos._reads import RecordingStore

HERE = Path(__file__).resolve().parent / "peers"
sys.path.insert(0, str(HERE))
RX = Namespace("http://example.org/pharmacy#")


class _Log:
    def note(self, kind: str, value: Any) -> Any:
        return value


def _query_only(pre: Precondition) -> Precondition:
    return dataclasses.replace(
        pre, _plan=None, patterns=tuple(dataclasses.replace(p, _plan=None) for p in pre.patterns)
    )


def _world(n: int, store: str) -> World:
    world = World.open(store)
    now = dt.datetime.now(dt.UTC)
    quads = []
    for i in range(n):
        rx = RX[f"rx{i}"]
        quads += [
            (rx, RDF.type, RX.Prescription, None),
            (rx, RX.refillsLeft, Literal(1 + i % 3), None),
        ]
        if i % 2:  # decided: the next step's precondition holds
            stamp = Literal((now + dt.timedelta(seconds=i)).isoformat(), datatype=XSD.dateTime)
            quads += [(rx, RX.refillApproved, Literal(True), None), (rx, RX.decidedAt, stamp, None)]
    world.store.load(quads)
    return world


def _us(f: Callable[[Any], Any], foci: list[Any]) -> float:
    """µs of this process's CPU per call: steadier than wall time on a shared machine."""
    t0 = time.process_time()
    for x in foci:
        f(x)
    return (time.process_time() - t0) / len(foci) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--prescriptions", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--store", default="oxigraph", choices=["oxigraph", "memory"])
    args = parser.parse_args()
    agent = Agent.from_files(
        HERE / "refill.ttl", HERE / "pharmacy.ttl", allow_modules=["pharmacy_tools"]
    )
    world = _world(args.prescriptions, args.store)
    store = world.store
    recording = RecordingStore(store, _Log())
    pres = [
        s.requires
        for s in agent.definitions.steps.values()
        if getattr(s, "requires", None) is not None
    ]
    slow = [_query_only(p) for p in pres]
    as_written = compile_patterns(
        [f"?this <{RX.refillApproved}> '1'^^xsd:boolean ."], {"xsd": str(XSD)}
    )
    foci = [RX[f"rx{i}"] for i in range(args.prescriptions)]
    results: dict[str, list[float]] = {}

    def note(label: str, us: float) -> None:
        results.setdefault(label, []).append(us)

    for _ in range(args.rounds):
        for compiled, chosen in ((False, slow), (True, pres)):
            tag = "compiled" if compiled else "query   "
            note(
                f"solutions {tag}",
                statistics.mean(
                    _us(lambda x, p=p: store.solutions(p, {"this": x}), foci) for p in chosen
                ),
            )
            note(
                f"failing   {tag}",
                statistics.mean(
                    _us(lambda x, p=p: store.failing(p, {"this": x}), foci) for p in chosen
                ),
            )
            dispense = chosen[1]

            def step_reads(x: Any, pre: Precondition = dispense) -> None:
                recording.solutions(pre, {"this": x})
                recording.types(x)
                list(recording.outgoing(x))

            note(f"a step's recorded reads ({tag})", _us(step_reads, foci))
        note(
            "solutions, a literal as written",
            _us(lambda x: store.solutions(as_written, {"this": x}), foci),
        )
    for label, values in results.items():
        print(f"{label:40s} {statistics.median(values):8.1f} µs (median of {len(values)} rounds)")


if __name__ == "__main__":
    main()
