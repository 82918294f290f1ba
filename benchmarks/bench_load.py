"""What loading definitions costs as a project grows: every command pays it before anything else.

    python benchmarks/bench_load.py [--copies 1 4 16 32] [--legacy]   (--legacy: one copy only;
    rdflib took 4.4 s for one and more than 5 minutes for two on the 2-core machine)

The shipped workflows and ontologies (workflows/, ontologies/), copied N times under fresh
namespaces, loaded as ``horismos validate`` and every run load them. Prints, per size, the
triples and blank nodes, the whole load (median of three) and the definitions digest alone,
and with ``--legacy`` the digest as it was computed before (rdflib's canonical graph), whose
time grew with the square of the definitions, and the ratio of the two.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from rdflib import BNode, Graph

from horismos import load_definitions
from horismos._definitions import definitions_digest, legacy_definitions_digest

ROOT = Path(__file__).resolve().parent.parent


def copies(n: int, folder: Path) -> list[Path]:
    """``n`` copies of the shipped definitions, each under its own namespaces."""
    files = sorted([*(ROOT / "workflows").glob("*.ttl"), *(ROOT / "ontologies").glob("*.ttl")])
    out = []
    for i in range(n):
        for f in files:
            text = f.read_text(encoding="utf-8").replace("http://example.org/",
                                                         f"http://example.org/c{i}/")
            path = folder / f"c{i}-{f.name}"
            path.write_text(text, encoding="utf-8")
            out.append(path)
    return out


def timed(fn: object, runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--copies", type=int, nargs="+", default=[1, 4, 16, 32])
    parser.add_argument("--legacy", action="store_true",
                        help="also time the digest as computed before (slow past 8 copies)")
    args = parser.parse_args()
    for n in args.copies:
        with tempfile.TemporaryDirectory() as tmp:
            paths = copies(n, Path(tmp))
            defs = load_definitions(paths)
            graph: Graph = defs.graph
            blank = len({t for triple in graph for t in triple if isinstance(t, BNode)})
            load = timed(lambda: load_definitions(paths))  # noqa: B023
            digest = timed(lambda: definitions_digest(graph))  # noqa: B023
            line = (f"{n:3d} copies: {len(graph):6d} triples, {blank:5d} blank nodes  "
                    f"load {load * 1000:8.1f} ms  digest {digest * 1000:7.1f} ms")
            if args.legacy:
                legacy = timed(lambda: legacy_definitions_digest(graph), runs=1)  # noqa: B023
                line += f"  digest before {legacy * 1000:9.1f} ms ({legacy / digest:,.0f}x)"
            print(line, flush=True)
    sys.exit(0)


if __name__ == "__main__":
    main()
