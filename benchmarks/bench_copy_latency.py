"""What a single-focus run waits for when the in-memory store's copy afresh falls due
(horismos._stores.churn, horismos._stores.copy_behind), in a large world.

    python benchmarks/bench_copy_latency.py [--triples 3000000] [--runs 15000]

A world of the pharmacy workload (benchmarks/pharmacy/) on the in-memory ``oxigraph`` store;
the store's count of removed quads is set to what makes the next commit that removes one due
for a copy (a world that has run ~250,000 single-focus runs since its last copy, at 3,000,000
triples), then ``--runs`` traced runs, one focus each, are timed. Prints the runs' p50, p99,
p99.9 and longest, and how many runs the copy spanned. Copied inside the commit that made it
due, one run waits for the whole world; copied behind the commits, a run takes a slice. Run it
with ``PYTHONPATH`` set to each tree to compare (a figure, not an assertion).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent / "pharmacy"
sys.path.insert(0, str(HERE))

from pharmacy_tools import RX, TOOLS, prescriptions_for, world_quads  # noqa: E402

from horismos import Agent, Trace, World  # noqa: E402


def innermost(store: object) -> object:
    """The Oxigraph store under the wrappers a world puts around it."""
    while not hasattr(store, "_churn"):
        store = store.inner  # type: ignore[attr-defined]
    return store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--triples", type=int, default=3_000_000)
    parser.add_argument("--runs", type=int, default=15_000)
    args = parser.parse_args()
    agent = Agent.from_files(HERE / "pharmacy.ttl", tools=TOOLS)
    n = prescriptions_for(args.triples)
    world = World.open("oxigraph")
    world.store.load(world_quads(n))
    store = innermost(world.store)
    foci = [RX[f"rx{i}"] for i in range(0, n, max(1, n // (args.runs + 20)))][: args.runs + 20]
    folder = Path(tempfile.mkdtemp())
    for focus in foci[:20]:  # warm-up
        agent.run(world, focus=focus, trace=Trace(folder / "warm.jsonl", overwrite=True))
    first = store._store  # type: ignore[attr-defined]
    store._churn.removed = 2 * store._held()  # type: ignore[attr-defined]  # due at the next removal
    times, replaced_at = [], None
    for k, focus in enumerate(foci[20:]):
        t0 = time.perf_counter()
        run = agent.run(world, focus=focus, trace=Trace(folder / "run.jsonl", overwrite=True))
        times.append(time.perf_counter() - t0)
        assert run.status == "completed", run.error
        if replaced_at is None and store._store is not first:  # type: ignore[attr-defined]
            replaced_at = k + 1
    ordered = sorted(times)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000

    print(f"{len(world.store):,} quads, {len(times):,} runs after the copy fell due: p50 "
          f"{statistics.median(times) * 1000:.2f} ms, p99 {at(0.99):.2f}, p99.9 {at(0.999):.2f}, "
          f"longest {ordered[-1] * 1000:,.0f} ms; the copy replaced the store after run "
          f"{replaced_at if replaced_at is not None else '(not yet)'}")


if __name__ == "__main__":
    main()
