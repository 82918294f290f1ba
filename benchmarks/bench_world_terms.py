"""What ``validate --world`` costs in its pass over the world files, by world size.

``validate --world F`` reads each world file once as a stream (``horismos/_world_terms.py``),
keeping the predicates and classes it sees, the first value of each kind per property, and
the individuals of each property's range up to a few hundred
(``horismos/_world_individuals.py``); it reads a file again only when a value is suspect.
This prints, for generated worlds of growing size (the triage ontology: patients with an
acuity, nurses on duty), the time of that pass, the best of three; with ``--before PATH``
the same for another checkout, measured alternately in one process. With ``--suspects N``
the ontology enumerates the acuity levels (``owl:oneOf``) and the world's last N patients
each have a level of its own that is none of them: N suspect values, whose lines are found
in the file read again.

    python benchmarks/bench_world_terms.py [--patients 100000] [--suspects 0] [--before PATH]
"""

from __future__ import annotations

import argparse
import importlib
import tempfile
import time
from pathlib import Path
from typing import Any

from before import before_package

ROOT = Path(__file__).resolve().parent.parent
FILES = [ROOT / "workflows" / "triage.ttl", ROOT / "ontologies" / "ehr.ttl"]


def world_file(folder: Path, patients: int, suspects: int = 0) -> Path:
    """A world of ``patients`` patients, each with an acuity (the last ``suspects`` a level
    of its own), and a nurse per hundred."""
    path = folder / f"world-{patients}.ttl"
    with path.open("w", encoding="utf-8") as f:
        f.write("@prefix : <http://example.org/ehr#> .\n")
        f.write(":urgent a :AcuityLevel .\n:routine a :AcuityLevel .\n")
        for i in range(patients):
            level = ":urgent" if i % 2 else ":routine"
            if i >= patients - suspects:
                level = f":grade{i}"
            f.write(f":p{i} a :Patient ; :acuity {level} ; :queueRef \"Q-{i}\" .\n")
            if i % 100 == 0:
                f.write(f":n{i} a :Nurse ; :onDuty true .\n")
    return path


def best_of_three(package: str, world: Path, files: list[Path]) -> float:
    """The fastest of three passes over ``world`` with ``package``'s world-term check."""
    horismos: Any = importlib.import_module(package)
    terms: Any = importlib.import_module(f"{package}._world_terms")
    defs = horismos.load_definitions(files)
    times = []
    for _ in range(3):
        start = time.perf_counter()
        terms.world_term_problems(defs, [world])
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--patients", type=int, default=100_000)
    parser.add_argument("--suspects", type=int, default=0, help="values no level is")
    parser.add_argument("--before", type=Path, help="another checkout, measured alternately")
    args = parser.parse_args()
    packages = ["horismos"] + ([before_package(args.before)] if args.before else [])
    with tempfile.TemporaryDirectory() as tmp:
        files = FILES
        if args.suspects:
            levels = Path(tmp) / "levels.ttl"
            levels.write_text(
                "@prefix : <http://example.org/ehr#> .\n"
                "@prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
                ":AcuityLevel owl:oneOf ( :urgent :routine ) .\n",
                encoding="utf-8",
            )
            files = [*FILES, levels]
        for size in (args.patients // 10, args.patients):
            world = world_file(Path(tmp), size, args.suspects)
            quads = 3 * size + 2 * (size // 100 + 1) + 2
            for round_ in range(2):  # alternately, so both see the same load
                for package in packages:
                    took = best_of_three(package, world, files)
                    print(f"{package:18} {quads:>9} quads  round {round_ + 1}: "
                          f"{took * 1000:8.1f} ms  ({took / quads * 1e6:.2f} µs a quad)")


if __name__ == "__main__":
    main()
