"""What reading a long trace holds in memory: replay, ``trace show`` and ``trace export``, as
the trace grows.

    python benchmarks/bench_trace_memory.py [--prescriptions 1000 4000 16000]

For each size, the pharmacy workload of bench_peers.py (three steps a prescription, ~2 KB an
event) is recorded once with ``run --all`` into a trace file; then, each in a fresh process,
the trace is replayed with the same definitions (``horismos.replay``), shown
(``horismos trace show``) and exported as PROV-O (``horismos trace export``), their output
thrown away. Prints the file's size and each reader's
peak resident memory above what its process held before it read the trace (the interpreter,
the definitions). A reader that holds the whole trace grows with the file (~7x it, as JSON
values); one that streams it stays flat. Replay still builds each step again, so it also
holds what the runner keeps per instance while it runs.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

# Linux: writing 5 to clear_refs starts the peak (VmHWM) again from what is resident now
_PEAK = """
def peak():
    return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
def restart():
    open("/proc/self/clear_refs", "w").write("5")
"""

_REPLAY = _PEAK + """
import gc, sys
sys.path.insert(0, {here!r})
import bench_peers
from horismos import replay
agent, _ = bench_peers.agent_and_world(1)
gc.collect(); restart(); before = peak()
report = replay({trace!r}, agent)
assert not report.diverged, report
print((peak() - before) / 1024)
"""

_CLI = _PEAK + """
import gc, os, sys
from horismos._cli import main
sys.stdout = open(os.devnull, "w")
gc.collect(); restart(); before = peak()
try:
    main(["trace", {action!r}, {trace!r}])
except SystemExit as e:
    assert not e.code, e.code
sys.stdout = sys.__stdout__
print((peak() - before) / 1024)
"""


def record(n: int, path: Path) -> None:
    sys.path.insert(0, str(HERE))
    import bench_peers

    agent, world = bench_peers.agent_and_world(n)
    run = agent.run(world, all=True, trace=path, keep=False)
    assert run.status == "completed", run.status


def peak_mb(script: str, trace: Path, action: str = "") -> float:
    """The reader's peak RSS above its process's before it read, in a fresh process."""
    out = subprocess.run(
        [sys.executable, "-c", script.format(here=str(HERE), trace=str(trace), action=action)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(HERE.parent)},
    )
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--prescriptions", type=int, nargs="+", default=[1000, 4000, 16000])
    args = parser.parse_args()
    print(f"{'prescriptions':>13} {'events':>7} {'trace MB':>9} {'replay +MB':>11} "
          f"{'trace show +MB':>15} {'trace export +MB':>17}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.prescriptions:
            trace = Path(tmp) / f"refill-{n}.jsonl"
            record(n, trace)
            size = trace.stat().st_size / 1e6
            events = sum(1 for _ in trace.open("rb"))
            print(f"{n:>13,} {events:>7,} {size:>9.1f} {peak_mb(_REPLAY, trace):>11.1f} "
                  f"{peak_mb(_CLI, trace, 'show'):>15.1f} "
                  f"{peak_mb(_CLI, trace, 'export'):>17.1f}", flush=True)
            trace.unlink()


if __name__ == "__main__":
    main()
