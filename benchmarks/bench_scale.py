"""What a run costs as the world grows: it should cost what it touches, not what the world holds.

    python benchmarks/bench_scale.py [--sizes 30000 300000 3000000] [--runs 200] [--rounds 5]
                                     [--stores oxigraph oxigraph:PATH journal:PATH]
                                     [--all-steps 100000]

The pharmacy workload (benchmarks/pharmacy/: a refill decision, a dispense, a notification, a
SHACL domain shape on :Prescription; its tools, pure functions, declared ``horis:inline true``:
called on the run's thread, no worker hop), in generated worlds of each size, on each store
(``PATH`` replaced by a fresh folder per world):

1. single-focus traced runs, one ``agent.run(world, focus=…, trace=…)`` per event, the way a
   service runs a workflow when something happens. Every world of a store is built first,
   then ``--rounds`` rounds alternate between the sizes (``--runs`` runs a round spread over
   them, each on a focus of its own), so that a machine's load falls on every size alike;
   each figure is the median over the rounds: per-run cost, the part of it that is not the
   steps (the fixed cost: header, digest, focus check, end), steps per second (a run's steps
   over the median run's time: a run stalled by another job moves the mean), trace bytes
   per run and RSS growth; then, counted once per world on 50 more runs (load-independent),
   Python function calls and the quads and solutions pyoxigraph handed Horismos, per step;
   then each figure's ratio to the smallest world's;
2. one ``--all`` run of ``--all-steps`` steps on the first store (in the smallest world's
   shape, as many prescriptions as it takes), trace on, records not kept (as the CLI does for
   --all): steps/s and RSS sampled as it goes.

Targets: issue #14 "single-focus traced runs >= 1,000 steps/s in a 300,000-triple world",
printed plainly per store (and 3,000,000 beside it, to show it is flat); issue "A run costs
what it touches": per-run cost ratio 300k/3k <= 1.3 and 3M/3k <= 1.5, calls and quads read a
step the same at every size; fixed cost <= 3 ms at 300k; trace bytes ratio <= 1.2; RSS growth
<= 50 MB over 100,000 steps of one run and over 2,000 single-focus runs.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
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
from rdflib import URIRef  # noqa: E402

from horismos import Agent, Trace, World  # noqa: E402


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


def spread_foci(n: int, count: int, offset: int = 0) -> list[URIRef]:
    """``count`` distinct prescriptions spread over the world (a refilled one would block):
    the even ones, or the odd ones."""
    stride = 2 * max(1, n // (2 * count))
    return [RX[f"rx{i}"] for i in range(offset, n, stride)][:count]


def single_runs(agent: Agent, world: World, foci: list[URIRef], folder: Path) -> dict[str, float]:
    """One traced single-focus run per focus, the first five a warm-up."""
    totals, fixed, sizes, counts = [], [], [], []
    for warm in foci[:5]:  # imports, caches, first queries
        agent.run(world, focus=warm, trace=Trace(folder / "warm.jsonl", overwrite=True))
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
            "steps_per_s": statistics.median(counts) / statistics.median(totals),
            "rss_growth_mb": rss_mb() - before, "runs": len(totals)}


class _Counted:
    """A pyoxigraph store whose reads are counted: the quads and query solutions it hands
    back (what a step reads, whatever the load of the machine)."""

    def __init__(self, inner: object, read: list[int]) -> None:
        self._inner, self._read = inner, read

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)

    def __contains__(self, quad: object) -> bool:
        self._read[0] += 1
        return quad in self._inner  # type: ignore[operator]

    def __len__(self) -> int:
        return len(self._inner)  # type: ignore[arg-type]

    def _counting(self, rows):  # type: ignore[no-untyped-def]
        for row in rows:
            self._read[0] += 1
            yield row

    def quads_for_pattern(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        return self._counting(self._inner.quads_for_pattern(*args, **kwargs))

    def query(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        result = self._inner.query(*args, **kwargs)
        if isinstance(result, bool):
            self._read[0] += 1
            return result
        return _Solutions(result, self._counting(result))


class _Solutions:
    """Query solutions, counted as they are read; their variables as pyoxigraph gives them."""

    def __init__(self, result: object, rows: object) -> None:
        self.variables = getattr(result, "variables", None)
        self._rows = rows

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._rows)


def counted_runs(agent: Agent, world: World, foci: list[URIRef], folder: Path) -> dict[str, float]:
    """Python function calls and quads read per step over traced runs of ``foci``."""
    ox_store = world.store._store  # type: ignore[attr-defined]
    read = [0]
    world.store._store = _Counted(ox_store, read)  # type: ignore[attr-defined]
    profile = cProfile.Profile()
    steps = 0
    try:
        profile.enable()
        for focus in foci:
            counted = Trace(folder / "counted.jsonl", overwrite=True)  # one scratch trace
            steps += len(agent.run(world, focus=focus, trace=counted).steps)
        profile.disable()
    finally:
        world.store._store = ox_store  # type: ignore[attr-defined]
    calls = pstats.Stats(profile).total_calls  # type: ignore[attr-defined]
    return {"calls_per_step": calls / steps, "reads_per_step": read[0] / steps}


def _store_at(store: str, folder: Path, size: int) -> str:
    """``store`` with its PATH a fresh folder for a world of ``size``."""
    return store.replace("PATH", str(folder / f"{store.split(':')[0]}-{size}"))


def sweep(agent: Agent, store: str, sizes: list[int], runs: int, rounds: int,
          folder: Path) -> dict[int, dict[str, float]]:
    """Every size's world built, then ``rounds`` rounds alternating between them."""
    worlds = {}
    for size in sizes:
        world, n, load = build(size, _store_at(store, folder, size))
        print(f"  {size:,} triples loaded in {load:.1f} s", flush=True)
        foci = spread_foci(n, (runs + 5) * rounds + 50)
        if len(foci) < (runs + 5) * rounds + 50:
            sys.exit(f"a world of {size:,} triples has {len(foci)} prescriptions to run once "
                     "each: give fewer --runs or --rounds, or larger --sizes")
        worlds[size] = (world, foci)
    per_round: dict[int, list[dict[str, float]]] = {size: [] for size in sizes}
    for k in range(rounds):
        for size in sizes if k % 2 == 0 else reversed(sizes):
            world, foci = worlds[size]
            mine = foci[k * (runs + 5):(k + 1) * (runs + 5)]
            per_round[size].append(single_runs(agent, world, mine, folder))
    results = {}
    for size in sizes:
        world, foci = worlds[size]
        results[size] = {key: statistics.median(r[key] for r in per_round[size])
                         for key in per_round[size][0]}
        results[size].update(counted_runs(agent, world, foci[-50:], folder))
        world.store.close()
    worlds.clear()
    gc.collect()
    return results


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
    parser.add_argument("--sizes", type=int, nargs="+", default=[30_000, 300_000, 3_000_000])
    parser.add_argument("--runs", type=int, default=200, help="runs a round, per world")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--all-steps", type=int, default=100_000)
    parser.add_argument("--stores", nargs="+", default=["oxigraph"],
                        help="oxigraph, oxigraph:PATH, journal:PATH (PATH: a fresh folder)")
    parser.add_argument("--owl", action="store_true",
                        help="also OWL-RL / RDFS per-run cost at each size up to 300,000")
    parser.add_argument("--heap", action="store_true",
                        help="also sample the Python heap during --all (tracemalloc: slower)")
    args = parser.parse_args()
    agent = Agent.from_files(HERE / "pharmacy.ttl", tools=TOOLS)
    figures: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for store in args.stores:
            print(f"single-focus traced runs ({store}), {args.rounds} rounds of {args.runs} "
                  "per world, sizes alternated; medians of the rounds:", flush=True)
            results = sweep(agent, store, args.sizes, args.runs, args.rounds, folder)
            print(f"{'world triples':>14} {'run ms':>7} {'fixed ms':>9} {'trace B':>8} "
                  f"{'RSS +MB':>8} {'steps/s':>8} {'calls/step':>11} {'reads/step':>11}")
            for size, r in results.items():
                print(f"{size:>14,} {r['run_ms']:>7.2f} {r['fixed_ms']:>9.2f} "
                      f"{r['trace_bytes']:>8.0f} {r['rss_growth_mb']:>+8.1f} "
                      f"{r['steps_per_s']:>8.0f} {r['calls_per_step']:>11.0f} "
                      f"{r['reads_per_step']:>11.1f}")
            base = results[args.sizes[0]]
            for size in args.sizes[1:]:
                r = results[size]
                print(f"  {size:,} / {args.sizes[0]:,}: "
                      f"per-run cost x{r['run_ms'] / base['run_ms']:.2f}"
                      f", fixed cost x{r['fixed_ms'] / base['fixed_ms']:.2f}"
                      f", trace bytes x{r['trace_bytes'] / base['trace_bytes']:.2f}"
                      f", calls a step x{r['calls_per_step'] / base['calls_per_step']:.2f}"
                      f", quads read a step x{r['reads_per_step'] / base['reads_per_step']:.2f}")
            for size in args.sizes:
                if size >= 300_000:
                    rate = results[size]["steps_per_s"]
                    figures.append(
                        f"{store:>13} {size:>10,} triples: {rate:>6,.0f} steps/s "
                        f"({'met' if rate >= 1000 else 'NOT met'})")
            if args.owl:
                owl = Agent.from_files(HERE / "pharmacy.ttl", tools=TOOLS, entailment="owl-rl")
                for size in (s for s in args.sizes if s <= 300_000):
                    # a folder of its own (PATH-owl); an in-memory store is fresh anyway
                    owl_store = _store_at(store.replace("PATH", "PATH-owl"), folder, size)
                    world, n, _ = build(size, owl_store)
                    rdfs = single_runs(agent, world, spread_foci(n, args.runs), folder)
                    o = single_runs(owl, world, spread_foci(n, args.runs, offset=1), folder)
                    print(f"  owl-rl / rdfs per-run cost at {size:,} triples: "
                          f"x{o['run_ms'] / rdfs['run_ms']:.2f} (target <= 2)")
                    world.store.close()
        if figures:
            print("\nissue #14, single-focus traced runs >= 1,000 steps/s at 300,000 triples "
                  "(medians of alternated rounds; a loaded machine lowers every size alike):")
            print("\n".join(figures))
        if args.all_steps:
            batch(agent, args.all_steps, _store_at(args.stores[0], folder, 0), folder, args.heap)


if __name__ == "__main__":
    main()
