"""Committed, gated steps per second for the triage workflow run with ``--all``.

    python benchmarks/bench_run.py [--patients 1000 10000] [--no-shape-too]

Prints, per world size: committed steps per second, p50/p99 step latency, the split of a step's
time between precondition, arguments, tool, gate, commit and trace, the gate's µs per step
(median, p99) with the domain shape of ontologies/ehr.ttl (sh:pattern, sh:maxCount on
:Patient) and, with ``--no-shape-too``, without it; and peak memory (max RSS).
"""

from __future__ import annotations

import argparse
import re
import resource
import statistics
import sys
import tempfile
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


def ontology(domain_shape: bool) -> Path:
    """ontologies/ehr.ttl, or a copy of it without its domain shape."""
    path = ROOT / "ontologies" / "ehr.ttl"
    if domain_shape:
        return path
    text = re.sub(r":PatientShape a sh:NodeShape ;.*?\] \.", "", path.read_text(encoding="utf-8"),
                  flags=re.S)
    assert "sh:NodeShape" not in text
    copy = Path(tempfile.mkdtemp()) / "ehr.ttl"
    copy.write_text(text, encoding="utf-8")
    return copy


def bench(patients: int, domain_shape: bool = True) -> None:
    agent = Agent.from_files(ROOT / "workflows" / "triage.ttl", ontology(domain_shape),
                             tools={"ehr_client.assign_queue": ehr_client.assign_queue,
                                    "ehr_client.notify_nurse": ehr_client.notify_nurse})
    world = build_world(patients)
    t0 = time.perf_counter()
    run = agent.run(world, all=True)
    elapsed = time.perf_counter() - t0
    steps = [s for s in run.steps if s.status == "completed"]
    latencies = sorted(sum(s.timings.values()) for s in steps)
    gate = sorted(s.timings.get("gate", 0.0) for s in steps)
    split: dict[str, float] = {}
    for s in steps:
        for k, v in s.timings.items():
            split[k] = split.get(k, 0.0) + v
    total = sum(split.values())
    print(f"patients={patients}  instances={len(run.instances)}  status={run.status}  "
          f"domain shape {'on' if domain_shape else 'off'}")
    print(f"  committed steps: {len(steps)} in {elapsed:.2f} s "
          f"-> {len(steps) / elapsed:.0f} committed steps/s (whole run, incl. trace header)")
    print(f"  step latency: p50 {statistics.median(latencies) * 1000:.2f} ms, "
          f"p99 {latencies[int(len(latencies) * 0.99) - 1] * 1000:.2f} ms")
    print("  split of step time: " + ", ".join(
        f"{k} {v / total * 100:.0f}% ({v / len(steps) * 1000:.3f} ms)"
        for k, v in sorted(split.items(), key=lambda kv: -kv[1])))
    print(f"  gate per step: median {statistics.median(gate) * 1e6:.0f} µs, "
          f"p99 {gate[int(len(gate) * 0.99) - 1] * 1e6:.0f} µs "
          f"(domain shape {'on' if domain_shape else 'off'})")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"  peak memory (max RSS of the process so far): {rss:.0f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--patients", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--no-shape-too", action="store_true",
                        help="also run each size without the domain shape")
    args = parser.parse_args()
    for n in args.patients:
        bench(n)
        if args.no_shape_too:
            bench(n, domain_shape=False)


if __name__ == "__main__":
    main()
