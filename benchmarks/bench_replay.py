"""Replay speed against the live run it replays: the triage workflow with ``--all``.

    python benchmarks/bench_replay.py [--patients 5000]

Records a live run over a generated world (two steps per patient: 5000 patients make 10,000
steps) into a trace file, then replays that file with the same definitions. Prints live and
replay steps per second and their ratio. Both figures are whole calls: the live one includes
writing the trace (snapshot, digests); the replay one includes reading and checking it.

Replay recomputes what it compares — preconditions, arguments, the SHACL gate's verdict — and
commits every step so the final world digest can be checked; what it saves is the tool calls
(substituted, with no thread hop) and writing the trace. The per-step split of the live run,
printed below, shows how much of a step that is. On a shared machine the CPU-time ratio is the
steadier figure.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from horismos import Agent, read_trace, replay

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples" / "triage"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import ehr_client  # noqa: E402
from bench_run import build_world  # noqa: E402


def bench(patients: int) -> None:
    agent = Agent.from_files(ROOT / "workflows" / "triage.ttl", ROOT / "ontologies" / "ehr.ttl",
                             tools={"ehr_client.assign_queue": ehr_client.assign_queue,
                                    "ehr_client.notify_nurse": ehr_client.notify_nurse})
    world = build_world(patients)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.jsonl"
        t0, c0 = time.perf_counter(), time.process_time()
        run = agent.run(world, all=True, trace=path)
        live, live_cpu = time.perf_counter() - t0, time.process_time() - c0
        steps = len(run.steps)
        size = path.stat().st_size
        t3 = time.perf_counter()
        world.digest()
        digest = time.perf_counter() - t3
        t1 = time.perf_counter()
        events = read_trace(path)
        reading = time.perf_counter() - t1
        del events
        t2, c2 = time.perf_counter(), time.process_time()
        report = replay(path, agent)
        replayed, replay_cpu = time.perf_counter() - t2, time.process_time() - c2
    print(f"patients={patients}  steps={steps}  status={run.status}  "
          f"trace={size / 1e6:.1f} MB")
    split: dict[str, float] = {}
    for s in run.steps:
        for k, v in s.timings.items():
            split[k] = split.get(k, 0.0) + v
    print(f"  live:   {live:7.2f} s  {steps / live:7.0f} steps/s  (CPU {live_cpu:.2f} s)")
    print("    of which, per step: " + ", ".join(
        f"{k} {v / steps * 1000:.3f} ms" for k, v in sorted(split.items(), key=lambda kv: -kv[1])))
    print(f"    and {digest:.2f} s for the final world digest, which replay computes too")
    print(f"  replay: {replayed:7.2f} s  {report.steps / replayed:7.0f} steps/s  "
          f"(CPU {replay_cpu:.2f} s; reading and checking the trace alone: {reading:.2f} s)")
    print(f"  replay is {live / replayed:.2f}x the speed of the live run by the clock, "
          f"{live_cpu / replay_cpu:.2f}x by CPU time (target: >= 5x)")
    print(f"  {report}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--patients", type=int, nargs="+", default=[5000])
    for n in parser.parse_args().patients:
        bench(n)


if __name__ == "__main__":
    main()
