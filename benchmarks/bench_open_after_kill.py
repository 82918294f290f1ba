"""What opening an ``oxigraph:PATH`` world costs after the process before was killed.

    python benchmarks/bench_open_after_kill.py [--sizes 30000 1000000] [--reps 3]

An on-disk Oxigraph store keeps the world's digest in the store; the first commit of a
process removes it (so it is never stale), and it is written again every 1,000 commits and at
close (SIGTERM and Ctrl-C close too). A process killed between (SIGKILL, the OOM killer, a
container stopped past its grace period) leaves none. The next open then recomputed it from
every quad, whatever the command; it now opens without it and recomputes it when the digest is
first asked (``horismos digest``, a run with ``--trace``), writing it at once. For each size
the pharmacy world (benchmarks/pharmacy/) is loaded into a folder; then, ``--reps`` times, a
child process opens it, runs one focus and is killed with SIGKILL, and this process times
``World.open`` and close of the store (what a command that never reads the digest pays), an
open that asks for the digest (the recompute, wherever it falls) and one more open (the
digest found). Printed: the medians and the first two's ratios to the smallest world's.
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
            first, asked, again = [], [], []
            for rep in range(args.reps):
                child = CHILD.format(pharmacy=str(HERE / "pharmacy"),
                                     definitions=str(HERE / "pharmacy" / "pharmacy.ttl"),
                                     store=store, focus=f"rx{2 * rep}")
                done = subprocess.run([sys.executable, "-c", child], env=dict(os.environ))
                assert done.returncode == -9, done.returncode
                for times, digest in ((first, False), (asked, True), (again, False)):
                    t0 = time.perf_counter()
                    world = World.open(store)
                    if digest:
                        world.digest()
                    world.close()
                    times.append(time.perf_counter() - t0)
            results[size] = tuple(statistics.median(t) for t in (first, asked, again))
            print(f"{size:>10,} triples: open after a kill {results[size][0]:6.2f} s, "
                  f"then an open asking the digest {results[size][1]:6.2f} s, "
                  f"the open after it {results[size][2]:6.3f} s", flush=True)
    base = results[args.sizes[0]]
    for size in args.sizes[1:]:
        ratios = [results[size][i] / base[i] for i in (0, 1)]
        print(f"  {size:,} / {args.sizes[0]:,}: open after a kill x{ratios[0]:.1f}, "
              f"asking the digest x{ratios[1]:.1f}")


if __name__ == "__main__":
    main()
