"""What ``--entailment owl-rl`` costs a process's first run as the world's taxonomy grows.

    python benchmarks/bench_owl_schema.py [--classes 0 10000 100000] [--prescriptions 2000]
                                          [--repeat 3]

A service runs one process per event, so a process's first run is every run it makes. The
pharmacy workload (benchmarks/pharmacy/) runs on one prescription in a world that also holds a
taxonomy of ``--classes`` classes (a tree, ten subclasses a class, under ``:Prescription``);
each prescription is asserted of a leaf class too, so deciding its OWL-RL types walks the
taxonomy from that leaf to the root. In a fresh process per size: the world is loaded, then
the first single-focus traced run is timed, and nine more (their median: *later*), with
``--entailment owl-rl``, and the same with the ``rdfs`` entailment beside them (which reads no
world schema). Each figure is
the median of ``--repeat`` processes, the sizes taking turns.

Target (priority one of the project: a run costs what it touches): the owl-rl first run at
100,000 classes within 2x of the one at none, and per-run cost flat across sizes.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

_ONE = r"""
import json, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from pharmacy_tools import RX, TOOLS, world_quads
from rdflib import RDF, RDFS
from horismos import Agent, World

classes, prescriptions, entailment = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
restricted = sys.argv[5] == "1"
agent = Agent.from_files(Path(sys.argv[1]) / "pharmacy.ttl", tools=TOOLS, entailment=entailment)
world = World.open("oxigraph")
world.store.load(world_quads(prescriptions))
kinds = [RX[f"Kind{i}"] for i in range(classes)]
world.store.load(
    (k, RDFS.subClassOf, kinds[(i - 1) // 10] if i else RX.Prescription, None)
    for i, k in enumerate(kinds)
)
if restricted:  # each class also a subclass of "has some ingredient of its parent's kind"
    from rdflib import OWL, BNode
    world.store.load(
        q
        for i, k in enumerate(kinds)
        for r in (BNode(),)
        for q in (
            (k, RDFS.subClassOf, r, None),
            (r, RDF.type, OWL.Restriction, None),
            (r, OWL.onProperty, RX.ingredient, None),
            (r, OWL.someValuesFrom, kinds[(i - 1) // 10] if i else RX.Prescription, None),
        )
    )
if kinds:
    world.store.load(
        (RX[f"rx{i}"], RDF.type, kinds[-1 - i % 50], None) for i in range(prescriptions)
    )
times = []
with tempfile.TemporaryDirectory() as tmp:
    for i in range(10):
        t0 = time.perf_counter()
        run = agent.run(world, focus=RX[f"rx{i}"], trace=Path(tmp) / f"{i}.jsonl")
        times.append(time.perf_counter() - t0)
        assert run.status == "completed", (run.status, run.error)
print(json.dumps({"first": times[0], "later": sorted(times[1:])[4]}))
"""


def one(
    classes: int, prescriptions: int, entailment: str, restricted: bool
) -> dict[str, float]:
    here = Path(__file__).resolve().parent / "pharmacy"
    out = subprocess.run(
        [sys.executable, "-c", _ONE, str(here), str(classes), str(prescriptions), entailment,
         "1" if restricted else "0"],
        check=True, capture_output=True, text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--classes", type=int, nargs="+", default=[0, 10_000, 100_000])
    parser.add_argument("--prescriptions", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--restrictions", action="store_true",
                        help="each class also a subclass of an owl:someValuesFrom restriction")
    args = parser.parse_args()
    got: dict[tuple[int, str], list[dict[str, float]]] = {}
    for _ in range(args.repeat):
        for classes in args.classes:
            for entailment in ("owl-rl", "rdfs"):
                got.setdefault((classes, entailment), []).append(
                    one(classes, args.prescriptions, entailment, args.restrictions))

    def median(classes: int, entailment: str, which: str) -> float:
        return statistics.median(r[which] for r in got[classes, entailment]) * 1000

    print(f"{'classes':>9} {'owl-rl first ms':>16} {'owl-rl later ms':>16} "
          f"{'rdfs first ms':>14} {'rdfs later ms':>14} "
          f"{'owl-rl first / at ' + str(args.classes[0]):>24}")
    base = median(args.classes[0], "owl-rl", "first")
    for classes in args.classes:
        first = median(classes, "owl-rl", "first")
        print(f"{classes:>9,} {first:>16.1f} {median(classes, 'owl-rl', 'later'):>16.2f} "
              f"{median(classes, 'rdfs', 'first'):>14.1f} "
              f"{median(classes, 'rdfs', 'later'):>14.2f} {first / base:>23.2f}x")


if __name__ == "__main__":
    main()
