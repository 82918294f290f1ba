"""What a long batch run holds in memory as it goes: it should level off, not grow per instance.

    python benchmarks/bench_run_memory.py [--instances 20000] [--store oxigraph:PATH|oxigraph]
                                          [--trace]

The refill workload of bench_peers.py (decide, dispense, notify a prescription), run as
``horismos run --all`` runs it: ``keep=False``, every instance handed on as it ends, and, as
the command line does without ``--trace``, no trace file. Prints the process's resident memory
at each tenth of the run and how much it grew per 1,000 instances over the second half (after
the caches and the store's buffers have filled). Before, a run with no trace file kept every
event of the run in memory: ~34 MB per 1,000 instances on ``oxigraph:PATH``, until the run
ended. ``--trace`` writes a trace file (events streamed to it, none kept).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from rdflib import RDF, Literal

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_peers import HERE, RX, refills

from horismos import Agent, World


def rss_mb() -> float:
    """The process's resident memory, in MB (Linux)."""
    return int(Path("/proc/self/statm").read_text().split()[1]) * 4096 / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--instances", type=int, default=20000)
    parser.add_argument("--store", default="oxigraph:PATH",
                        help="oxigraph:PATH (a fresh folder) or oxigraph (in memory)")
    parser.add_argument("--trace", action="store_true", help="write a trace file")
    args = parser.parse_args()
    n = args.instances
    tmp = Path(tempfile.mkdtemp(prefix="bench-run-memory-"))
    try:
        store = f"oxigraph:{tmp / 'world'}" if args.store == "oxigraph:PATH" else args.store
        agent = Agent.from_files(HERE / "refill.ttl", HERE / "pharmacy.ttl",
                                 allow_modules=["pharmacy_tools"])
        world = World.open(store)
        world.store.load(q for i in range(n) for q in [
            (RX[f"rx{i}"], RDF.type, RX.Prescription, None),
            (RX[f"rx{i}"], RX.refillsLeft, Literal(refills(i)), None)])
        marks: list[tuple[int, float, float]] = []
        done = 0
        t0 = time.perf_counter()

        def ended(_inst: object) -> None:
            nonlocal done
            done += 1
            if done % max(1, n // 10) == 0:
                marks.append((done, rss_mb(), time.perf_counter() - t0))

        print(f"{n} prescriptions on {args.store}, run --all, keep=False, "
              f"{'a trace file' if args.trace else 'no trace file'}; start {rss_mb():.0f} MB")
        run = agent.run(world, all=True, keep=False, on_instance=ended,
                        trace=tmp / "run.jsonl" if args.trace else None)
        assert run.status == "completed", run.status
        for count, mb, took in marks:
            print(f"{count:>9,} instances  {mb:>7.0f} MB  {took:>6.1f} s")
        half = [m for m in marks if m[0] >= n // 2]
        if len(half) >= 2:
            (c0, m0, _), (c1, m1, _) = half[0], half[-1]
            print(f"grew {1000 * (m1 - m0) / (c1 - c0):.2f} MB per 1,000 instances over the "
                  "second half")
        world.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
