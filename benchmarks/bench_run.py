"""Committed, gated steps per second for the triage workflow run with ``--all``.

    python benchmarks/bench_run.py [--patients 1000 10000]

Prints, per world size: committed steps per second, p50/p99 step latency, the split of a step's
time between precondition, arguments, tool, gate, commit and trace, and peak memory (max RSS).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

from rdflib import RDF, RDFS, Literal, Namespace

from horismos import Agent, World

ROOT = Path(__file__).resolve().parent.parent
EHR = Namespace("http://example.org/ehr#")
sys.path.insert(0, str(ROOT / "examples" / "triage"))

import ehr_client  # noqa: E402


def build_world(patients: int, store: str | None = None) -> World:
    """The triage world of ``patients`` patients, in ``store`` (default: the default store)."""
    world = World.open(store) if store else World()
    quads = [(EHR.urgent, RDF.type, EHR.AcuityLevel, None),
             (EHR.routine, RDF.type, EHR.AcuityLevel, None),
             (EHR.nurse1, RDF.type, EHR.Nurse, None),
             (EHR.nurse1, EHR.onDuty, Literal(True), None)]
    for i in range(patients):
        p = EHR[f"p{i}"]
        quads += [(p, RDF.type, EHR.Patient, None),
                  (p, RDFS.label, Literal(f"Patient {i}"), None),
                  (p, EHR.acuity, EHR.urgent if i % 3 == 0 else EHR.routine, None)]
    world.store.load(quads)
    return world


def bench(patients: int) -> None:
    agent = Agent.from_files(ROOT / "workflows" / "triage.ttl", ROOT / "ontologies" / "ehr.ttl",
                             tools={"ehr_client.assign_queue": ehr_client.assign_queue,
                                    "ehr_client.notify_nurse": ehr_client.notify_nurse})
    world = build_world(patients)
    t0 = time.perf_counter()
    run = agent.run(world, all=True)
    elapsed = time.perf_counter() - t0
    steps = [s for s in run.steps if s.status == "completed"]
    latencies = sorted(sum(s.timings.values()) for s in steps)
    split: dict[str, float] = {}
    for s in steps:
        for k, v in s.timings.items():
            split[k] = split.get(k, 0.0) + v
    total = sum(split.values())
    print(f"patients={patients}  instances={len(run.instances)}  status={run.status}")
    print(f"  committed steps: {len(steps)} in {elapsed:.2f} s "
          f"-> {len(steps) / elapsed:.0f} committed steps/s (whole run, incl. trace header)")
    print(f"  step latency: p50 {statistics.median(latencies) * 1000:.2f} ms, "
          f"p99 {latencies[int(len(latencies) * 0.99) - 1] * 1000:.2f} ms")
    print("  split of step time: " + ", ".join(
        f"{k} {v / total * 100:.0f}% ({v / len(steps) * 1000:.3f} ms)"
        for k, v in sorted(split.items(), key=lambda kv: -kv[1])))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"  peak memory (max RSS of the process so far): {rss:.0f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--patients", type=int, nargs="+", default=[1000, 10000])
    for n in parser.parse_args().patients:
        bench(n)


if __name__ == "__main__":
    main()
