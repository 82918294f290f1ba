"""What a run costs as the world grows: it should cost what it touches, not what the world holds.

    python benchmarks/bench_scale.py [--sizes 3000 300000 3000000] [--runs 200]
                                     [--all-steps 100000] [--store oxigraph]

The pharmacy workload (benchmarks/pharmacy/: a refill decision, a dispense, a notification, a
SHACL domain shape on :Prescription; its tools, pure functions, declared ``horis:inline true``:
called on the run's thread, no worker hop), in generated worlds of each size:

1. single-focus traced runs, one ``agent.run(world, focus=…, trace=…)`` per event, the way a
   service runs a workflow when something happens: per-run cost (median), the part of it that
   is not the steps (the fixed cost: header, digest, focus check, end), trace bytes per run, and
   RSS before and after the runs; then each figure's ratio to the smallest world's;
2. one ``--all`` run of ``--all-steps`` steps (in the smallest world's shape, as many
   prescriptions as it takes), trace on, records not kept (as the CLI does for --all): steps/s
   and RSS sampled as it goes.

Targets (issue "A run costs what it touches"): per-run cost ratio 300k/3k <= 1.3 and 3M/3k <=
1.5; fixed cost <= 3 ms at 300k; trace bytes ratio <= 1.2; RSS growth <= 50 MB over 100,000
steps of one run and over 2,000 single-focus runs. Also each world's single-focus steps per
second (issue "gated, traced, committed steps faster": >= 1,000 at 300,000 triples).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent / "pharmacy"
sys.path.insert(0, str(HERE))

from pharmacy_tools import FILLER, RX, TOOLS, prescriptions_for, world_quads  # noqa: E402

from horismos import Agent, World  # noqa: E402


def rss_mb() -> float:
    """Resident memory now (not the peak): /proc/self/status VmRSS."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def build(triples: int, store: str) -> tuple[World, int, float]:
    n = prescriptions_for(triples)
    t0 = time.perf_counter()
    world = World.open(store)
    world.store.load(world_quads(n))
    return world, n, time.perf_counter() - t0


def single_runs(agent: Agent, world: World, n: int, runs: int, folder: Path,
                offset: int = 0) -> dict[str, float]:
    """``runs`` traced single-focus runs on distinct prescriptions spread over the world."""
    # distinct prescriptions (a refilled one would block): the even ones, or the odd ones
    stride = 2 * max(1, n // (2 * runs))
    foci = [RX[f"rx{i}"] for i in range(offset, n, stride)][:runs]
    totals, fixed, sizes, counts = [], [], [], []
    for warm in foci[:5]:  # imports, caches, first queries
        agent.run(world, focus=warm, trace=folder / "warm.jsonl")
    gc.collect()
    before = rss_mb()
    for i, focus in enumerate(foci[5:]):
        path = folder / f"run{i}.jsonl"
        t0 = time.perf_counter()
        run = agent.run(world, focus=focus, trace=path)
        total = time.perf_counter() - t0
        assert run.status == "completed", (run.status, run.error)
        steps = sum(sum(s.timings.values()) for s in run.steps)
        totals.append(total)
        counts.append(len(run.steps))
        fixed.append(total - steps)
        sizes.append(path.stat().st_size)
        path.unlink()
    gc.collect()
    return {"run_ms": statistics.median(totals) * 1000,
            "fixed_ms": statistics.median(fixed) * 1000,
            "trace_bytes": statistics.median(sizes),
            "steps_per_s": sum(counts) / sum(totals),
            "rss_growth_mb": rss_mb() - before, "runs": len(totals)}


def batch(agent: Agent, steps: int, store: str, folder: Path, heap: bool) -> None:
    n = steps // 3 + 1
    world = World.open(store)
    world.store.load(world_quads(n))
    samples: list[tuple[int, float]] = []
    heaps: list[float] = []
    done = [0]
    if heap:
        tracemalloc.start()

    def on_instance(inst: object) -> None:
        done[0] += 1
        if done[0] % max(1, n // 20) == 0:
            samples.append((done[0] * 3, rss_mb()))
            if heap:
                gc.collect()
                heaps.append(tracemalloc.get_traced_memory()[0] / 2**20)

    gc.collect()
    start_rss = rss_mb()
    t0 = time.perf_counter()
    run = agent.run(world, all=True, trace=folder / "all.jsonl", keep=False,
                    on_instance=on_instance)
    elapsed = time.perf_counter() - t0
    taken = sum(run.counts.values()) * 3
    print(f"\n--all over {n} prescriptions ({store}): {taken} steps in {elapsed:.1f} s -> "
          f"{taken / elapsed:.0f} steps/s; status {run.status} {run.counts}; trace "
          f"{(folder / 'all.jsonl').stat().st_size / 2**20:.1f} MiB")
    print(f"  RSS at start {start_rss:.0f} MiB; as it goes (steps: MiB): " + ", ".join(
        f"{s}: {m:.0f}" for s, m in samples))
    grown = (samples[-1][1] if samples else rss_mb()) - (samples[0][1] if samples else start_rss)
    print(f"  RSS growth from the first sample to the last: {grown:+.1f} MB "
          f"(target <= 50 MB over 100,000 steps, beyond the world's own new triples: the run "
          f"added {len(world.store) - 6 * n - FILLER * n:,} quads to it)")
    if heap:
        print("  Python heap (tracemalloc) at the same points, MiB: "
              + ", ".join(f"{h:.0f}" for h in heaps))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[3_000, 300_000, 3_000_000])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--all-steps", type=int, default=100_000)
    parser.add_argument("--store", default="oxigraph")
    parser.add_argument("--heap", action="store_true",
                        help="also sample the Python heap during --all (tracemalloc: slower)")
    args = parser.parse_args()
    agent = Agent.from_files(HERE / "pharmacy.ttl", tools=TOOLS)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print(f"single-focus traced runs ({args.store}), {args.runs} per world:")
        print(f"{'world triples':>14} {'load s':>7} {'run ms':>7} {'fixed ms':>9} "
              f"{'trace B':>8} {'RSS +MB':>8} {'steps/s':>8}")
        owl = Agent.from_files(HERE / "pharmacy.ttl", tools=TOOLS, entailment="owl-rl")
        entailment: dict[int, float] = {}
        for size in args.sizes:
            world, n, load = build(size, args.store)
            r = single_runs(agent, world, n, args.runs, folder)
            results[size] = r
            print(f"{size:>14,} {load:>7.1f} {r['run_ms']:>7.2f} {r['fixed_ms']:>9.2f} "
                  f"{r['trace_bytes']:>8.0f} {r['rss_growth_mb']:>+8.1f} "
                  f"{r['steps_per_s']:>8.0f}", flush=True)
            if size <= 300_000:  # the same runs with OWL-RL types, on other prescriptions
                o = single_runs(owl, world, n, args.runs, folder, offset=1)
                entailment[size] = o["run_ms"] / r["run_ms"]
            world.store.close()
            del world
            gc.collect()
        base = results[args.sizes[0]]
        for size in args.sizes[1:]:
            r = results[size]
            print(f"  {size:,} / {args.sizes[0]:,}: "
                  f"per-run cost x{r['run_ms'] / base['run_ms']:.2f}"
                  f", fixed cost x{r['fixed_ms'] / base['fixed_ms']:.2f}"
                  f", trace bytes x{r['trace_bytes'] / base['trace_bytes']:.2f}")
        for size, ratio in entailment.items():
            print(f"  owl-rl / rdfs per-run cost at {size:,} triples: x{ratio:.2f} (target <= 2)")
        if args.all_steps:
            batch(agent, args.all_steps, args.store, folder, args.heap)


if __name__ == "__main__":
    main()
