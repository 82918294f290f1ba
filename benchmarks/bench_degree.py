"""What a step costs as the node it writes holds more facts: the gate reads what its shapes name.

    python benchmarks/bench_degree.py [--prescriptions 300] [--degrees 0 100 1000 10000]
                                      [--entailment rdfs|owl-rl]

The workload of bench_peers (refill decision, dispense, notify; a domain shape with
``sh:pattern`` and ``sh:maxCount`` on ``:Prescription``), in worlds where each prescription
also holds D facts no shape names (``:note`` literals), as a patient in a knowledge graph
holds its history. ``run --all`` with a trace file, keeping no records. Prints steps/s and
trace bytes per step at each D, and their ratios to D = 0: a step should cost what it
touches, so both ratios should stay near 1 (before the gate read only what its shapes name,
a node holding 1,000 facts ran a step 16x slower and traced every fact, every step).
With ``--entailment owl-rl`` a node's types are derived from its edges under the properties
the schema says something of (before, from every edge it holds: 2.5 s a run for a node of
100,000 values).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_peers import agent_and_world


def measure(n: int, degree: int, entailment: str = "rdfs") -> tuple[float, float]:
    """(steps/s, trace bytes a step) for ``n`` prescriptions holding ``degree`` notes each."""
    agent, world = agent_and_world(n, notes=degree, entailment=entailment)
    steps = 0

    def landed(_inst: object, rec: object) -> None:
        nonlocal steps
        steps += getattr(rec, "status", "") == "completed"

    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "refill.trace.jsonl"
        t0 = time.perf_counter()
        run = agent.run(world, all=True, trace=trace, keep=False, on_step=landed)
        elapsed = time.perf_counter() - t0
        size = trace.stat().st_size
    assert run.status == "completed", run.status
    return steps / elapsed, size / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prescriptions", type=int, default=300)
    parser.add_argument("--degrees", type=int, nargs="+", default=[0, 100, 1000, 10000])
    parser.add_argument("--entailment", default="rdfs", choices=["rdfs", "owl-rl"])
    args = parser.parse_args()
    measure(50, 0, args.entailment)  # warm up imports and caches
    base: tuple[float, float] | None = None
    print(f"{args.prescriptions} prescriptions, each holding D facts no shape names "
          f"({args.entailment})")
    print(f"{'D':>7}  {'steps/s':>8}  {'trace B/step':>12}  {'speed vs D=0':>12}  "
          f"{'trace vs D=0':>12}")
    for d in args.degrees:
        rate, size = measure(args.prescriptions, d, args.entailment)
        base = base or (rate, size)
        print(f"{d:>7}  {rate:>8,.0f}  {size:>12,.0f}  {rate / base[0]:>11.2f}x  "
              f"{size / base[1]:>11.2f}x")


if __name__ == "__main__":
    main()
