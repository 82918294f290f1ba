"""What opening an ``oxigraph:PATH`` world costs after the process before was killed.

    python benchmarks/bench_open_after_kill.py [--sizes 30000 1000000] [--reps 3]

An on-disk Oxigraph store keeps the world's digest in the store; the first commit of a
process removes it (so it is never stale), and it is written again every 1,000 commits and at
close (SIGTERM and Ctrl-C close too). A process killed between (SIGKILL, the OOM killer, a
container stopped past its grace period) leaves none, and the next open recomputes it from
every quad: a cost that follows the world's size, paid by the next event's process. For each
size the pharmacy world (benchmarks/pharmacy/) is loaded into a folder; then, ``--reps``
times, a child process opens it, runs one focus and is killed with SIGKILL, and this process
times ``World.open`` of the store (the recompute) and a second open (the digest found).
Printed: the medians and the ratio of the first open's to the smallest world's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "pharmacy"))

from pharmacy_tools import prescriptions_for, world_quads  # noqa: E402

from horismos import World  # noqa: E402

CHILD = """
import os, signal, sys
sys.path.insert(0, {pharmacy!r})
from pharmacy_tools import RX, TOOLS
from horismos import Agent, World
agent = Agent.from_files({definitions!r}, tools=TOOLS)
world = World.open({store!r})
assert agent.run(world, focus=RX[{focus!r}]).status == "completed"
os.kill(os.getpid(), signal.SIGKILL)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[30_000, 1_000_000])
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            store = f"oxigraph:{Path(tmp) / f'store-{size}'}"
            world = World.open(store)
            world.store.load(world_quads(prescriptions_for(size)))
            world.close()
            first, again = [], []
            for rep in range(args.reps):
                child = CHILD.format(pharmacy=str(HERE / "pharmacy"),
                                     definitions=str(HERE / "pharmacy" / "pharmacy.ttl"),
                                     store=store, focus=f"rx{2 * rep}")
                done = subprocess.run([sys.executable, "-c", child], env=dict(os.environ))
                assert done.returncode == -9, done.returncode
                for times in (first, again):
                    t0 = time.perf_counter()
                    World.open(store).close()
                    times.append(time.perf_counter() - t0)
            results[size] = statistics.median(first), statistics.median(again)
            print(f"{size:>10,} triples: open after a kill {results[size][0]:6.2f} s, "
                  f"the open after it {results[size][1]:6.3f} s", flush=True)
    base = results[args.sizes[0]][0]
    for size in args.sizes[1:]:
        print(f"  {size:,} / {args.sizes[0]:,}: open after a kill x{results[size][0] / base:.1f}")


if __name__ == "__main__":
    main()
