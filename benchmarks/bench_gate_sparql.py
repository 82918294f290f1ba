"""What a catalog call costs when its gate hands pyshacl a SPARQL-based shape.

    python benchmarks/bench_gate_sparql.py [--calls 100] [--rounds 3] [--new-thread]
                                           [--before PATH]

A tool writes a patient's doctor; a node shape judges the doctor with ``sh:sparql`` (an
aggregate, a ``FILTER NOT EXISTS``): a shape the compiled engine leaves to pyshacl, which
queries its data graph with the constraint's text. rdflib parsed that text on every call
(and outside the parse lock); the gate's graphs now prepare it once (``_sparql_parse``).

Printed: the median ms per call on a memory world over ``--rounds`` rounds of ``--calls``
calls. ``--new-thread``: each call made
from a thread of its own that ends after it, as a server starting a thread per request makes
them (``_sparql_parse``: a thread's prepared queries are handed on when it ends, not parsed
again by the next). ``--before PATH``: the horismos package of PATH too, measured in the same
process, alternating (``before.py``). Run it with ``PYTHONPATH`` set to the tree.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from before import before_package  # noqa: E402

PREFIXES = """@prefix : <http://example.org/clinic#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
"""
DEFINITIONS = PREFIXES + '''
:Patient a owl:Class . :Doctor a owl:Class .
:doctor a owl:ObjectProperty . :ref a owl:DatatypeProperty .
:t.file a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:subject "patient" ;
        horis:asserts [ horis:property :ref ; horis:type xsd:string ] ;
        horis:asserts [ horis:property :doctor ; horis:type :Doctor ] ] ;
    horis:binding "python:file" .
:HasDoctor a sh:NodeShape ; sh:targetClass :Patient ;
    sh:property [ sh:path :doctor ; sh:node :FreeDoctor ] .
:FreeDoctor a sh:NodeShape ;
    sh:sparql [
        sh:message "the doctor is overbooked" ;
        sh:prefixes [ sh:declare [ sh:prefix "" ;
                                   sh:namespace "http://example.org/clinic#"^^xsd:anyURI ] ] ;
        sh:select """SELECT $this (COUNT(DISTINCT ?p) AS ?n) WHERE {
            OPTIONAL { ?p :doctor $this . ?p :ref ?r FILTER(REGEX(?r, "^Y", "i")) }
            FILTER NOT EXISTS { $this :onLeave true }
        } GROUP BY $this HAVING (COUNT(DISTINCT ?p) > 100)"""
    ] .
'''
ALLOW = ["ReadOnly", "HostStateWrite"]


def file(patient: Any) -> dict[str, str]:
    """A doctor of the patient's own: what the shape's query reads is the same every call."""
    return {"ref": f"R-{patient}", "doctor": str(patient).replace("#p", "#d")}


def world_of(package: str, patients: int, folder: Path) -> tuple[Any, Any]:
    """An agent of ``package`` and a memory world holding ``patients`` patients."""
    horismos = importlib.import_module(package)
    defs = folder / "defs.ttl"
    defs.write_text(DEFINITIONS)
    data = folder / "world.ttl"
    data.write_text(
        PREFIXES + "".join(f":p{i} a :Patient .\n:d{i} a :Doctor .\n" for i in range(patients))
    )
    return horismos.Agent.from_files(defs, tools={"file": file}), horismos.World.from_files(data)


def per_call(agent: Any, world: Any, patients: range, new_thread: bool = False) -> float:
    """The median ms of a call of t.file on each of ``patients`` (``new_thread``: each from a
    thread started for it, joined before the next)."""
    times = []
    for i in patients:
        results: list[Any] = []

        def call(i: int = i, results: list[Any] = results) -> None:
            results.append(
                agent.catalog.call("t.file", {"patient": f":p{i}"}, world, allow=ALLOW)
            )

        t0 = time.perf_counter()
        if new_thread:
            thread = threading.Thread(target=call)
            thread.start()
            thread.join()
        else:
            call()
        times.append(time.perf_counter() - t0)
        assert results and results[0].status == "completed", results
    return statistics.median(times) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--new-thread", action="store_true")
    ap.add_argument("--before", type=Path)
    args = ap.parse_args()
    packages = ["horismos"] + ([before_package(args.before)] if args.before else [])
    figures: dict[str, list[float]] = {p: [] for p in packages}
    with tempfile.TemporaryDirectory() as tmp:
        worlds = {}
        for p in packages:
            (Path(tmp) / p).mkdir()
            worlds[p] = world_of(p, args.calls * args.rounds, Path(tmp) / p)
        for r in range(args.rounds):
            for p in packages:  # alternating: the same load for before and after
                agent, world = worlds[p]
                calls = range(r * args.calls, (r + 1) * args.calls)
                figures[p].append(per_call(agent, world, calls, args.new_thread))
    for p, values in figures.items():
        name = "this tree" if p == "horismos" else "before"
        print(f"{name:10} {statistics.median(values):8.2f} ms/call  (rounds: "
              + ", ".join(f"{v:.2f}" for v in values) + ")")


if __name__ == "__main__":
    main()
