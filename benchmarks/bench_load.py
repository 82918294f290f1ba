"""What loading definitions costs as a project grows: every command pays it before anything else.

    python benchmarks/bench_load.py [--copies 1 4 16 32] [--legacy]   (--legacy: one copy only;
    rdflib took 4.4 s for one and more than 5 minutes for two on the 2-core machine)
    python benchmarks/bench_load.py --files 50 100 200 400 800 [--before PATH] [--cpu]
    python benchmarks/bench_load.py --steps 10 100 400 [--before PATH]
    python benchmarks/bench_load.py --properties 300 3000 10000 [--before PATH]

``--copies``: the shipped workflows and ontologies (workflows/, ontologies/), copied N times
under fresh namespaces, loaded as ``horismos validate`` and every run load them. Prints, per
size, the triples and blank nodes, the whole load (median of three) and the definitions digest
alone, and with ``--legacy`` the digest as it was computed before (rdflib's canonical graph),
whose time grew with the square of the definitions, and the ratio of the two. Then what a fact
``resume`` refuses for a misspelt term costs to match against the definitions' nodes: gathered
from the graph for the term (as before) and gathered once (``Definitions.nodes``).

``--files``: N files of one small module each (a class, a property, a tool, a one-step
workflow), each binding ``:`` to its own namespace, as a project of many modules is written:
what the checks that compare files (a prefix bound to two namespaces) cost as files are added.

``--steps``: two workflows of N steps each, the first flowing on into the second, whose steps
take ``?this`` as a node of another class: what finding the edge where a workflow crosses into
another's steps (one warning) costs as the workflows grow.

``--properties``: one node shape of N property shapes, each requiring (``sh:minCount 1``) a
property nothing declares: a warning each, placed at its property shape's line, which was
found by reading the shape's whole description once per warning.

``--before PATH``: also load with the horismos package of PATH (a git worktree of another
commit, see ``before.py``), alternating with this one in the same process, and print the ratio.
Past the first size, ``growth`` is how the time grew against the size (1.0x: linear; 2.0x at
four times the files: the time grew with their square). ``--cpu`` times by this process's CPU
seconds: on a shared machine the wall clock counts the other processes' turns too.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rdflib import BNode, Graph, URIRef

sys.path.insert(0, str(Path(__file__).resolve().parent))

from before import before_package

from horismos import AuthoringError, load_definitions
from horismos._definitions import closest_term, definitions_digest, legacy_definitions_digest

ROOT = Path(__file__).resolve().parent.parent

_HEAD = """\
@prefix :      <http://example.org/{name}#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

"""

_MODULE = """\
:Item a owl:Class .
:done a owl:DatatypeProperty ; rdfs:domain :Item ; rdfs:range xsd:boolean .

:{name}.mark a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "item" ; horis:type :Item ] ] ;
    horis:effect [ horis:asserts [ horis:property :done ; horis:value true ] ] ;
    horis:binding "python:mark" ;
    horis:idempotent true .

:Flow a horis:Workflow ;
    horis:focusType :Item ;
    horis:start :Mark .

:Mark a horis:ActionStep ;
    horis:tool :{name}.mark ;
    horis:requires "FILTER NOT EXISTS {{ ?this :done true }}" ;
    horis:bind [ horis:arg "item" ; horis:var "this" ] .
"""


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


def modules(n: int, folder: Path) -> list[Path]:
    """``n`` files of one small module each, each binding ``:`` to its own namespace."""
    out = []
    for i in range(n):
        path = folder / f"m{i}.ttl"
        path.write_text(_HEAD.format(name=f"m{i}") + _MODULE.format(name=f"m{i}"),
                        encoding="utf-8")
        out.append(path)
    return out


def crossing(n: int, folder: Path) -> list[Path]:
    """:Fulfil (orders) of ``n`` steps, its last going on to the first of :Return's ``n``
    steps (order lines), each of which gives ``?this`` to a tool taking an order line."""
    text = _HEAD.format(name="wh") + """\
:Order a owl:Class .
:Line a owl:Class .
:seen a owl:DatatypeProperty ; rdfs:range xsd:boolean .

:order.touch a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "order" ; horis:type :Order ] ] ;
    horis:effect [ horis:asserts [ horis:property :seen ; horis:value true ] ] ;
    horis:binding "python:touch" ; horis:idempotent true .
:line.touch a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "line" ; horis:type :Line ] ] ;
    horis:effect [ horis:asserts [ horis:property :seen ; horis:value true ] ] ;
    horis:binding "python:touch" ; horis:idempotent true .

:Fulfil a horis:Workflow ; horis:focusType :Order ; horis:start :F0 .
:Return a horis:Workflow ; horis:focusType :Line ; horis:start :R0 .
"""
    for kind, tool, arg, then in (("F", "order", "order", "R0"), ("R", "line", "line", None)):
        for i in range(n):
            after = f"{kind}{i + 1}" if i + 1 < n else then
            text += (f"\n:{kind}{i} a horis:ActionStep ; horis:tool :{tool}.touch ;"
                     + (f" horis:next :{after} ;" if after else "")
                     + f'\n    horis:bind [ horis:arg "{arg}" ; horis:var "this" ] .\n')
    path = folder / "crossing.ttl"
    path.write_text(text, encoding="utf-8")
    return [path]


def required(n: int, folder: Path) -> list[Path]:
    """One node shape of ``n`` property shapes (``sh:minCount 1`` each, on properties nothing
    declares or writes) judging what :Flow's one step lands: a warning for each, placed at
    its property shape."""
    text = _HEAD.format(name="req") + "@prefix sh: <http://www.w3.org/ns/shacl#> .\n"
    text += _MODULE.format(name="req") + "\n:ItemShape a sh:NodeShape ;\n    sh:targetClass :Item"
    for i in range(n):
        text += f' ;\n    sh:property [\n        sh:path :p{i} ;\n        sh:minCount 1\n    ]'
    path = folder / "required.ttl"
    path.write_text(text + " .\n", encoding="utf-8")
    return [path]


def timed(fn: Callable[[], object], runs: int = 3,
          clock: Callable[[], float] = time.perf_counter) -> float:
    """The median of ``runs`` calls of ``fn`` by ``clock`` (the wall clock, or with
    ``time.process_time`` this process's CPU seconds: steadier on a shared machine)."""
    times = []
    for _ in range(runs):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return statistics.median(times)


def loaded(load: Callable[..., Any], paths: list[Path]) -> Callable[[], object]:
    """A load of ``paths``; definitions with errors are loaded too (validate reports them)."""

    def run() -> object:
        try:
            return load(paths)
        except AuthoringError as e:
            return e.definitions

    return run


def compare(sizes: list[int], make: Callable[[int, Path], list[Path]], unit: str,
            before: Path | None, runs: int, clock: Callable[[], float]) -> None:
    """Per size, the load's median time and that time per unit, and with ``before`` the other
    package's alternating with it in this process, and their ratio. Then, past the first
    size, how each package's time grew against the size: 1.0x is linear."""
    first: tuple[int, float, float | None] | None = None
    old = (importlib.import_module(before_package(before)).load_definitions if before else None)
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            paths = make(n, Path(tmp))
            defs = loaded(load_definitions, paths)()
            warnings = len(getattr(defs, "warnings", []))
            now, then = [], []
            for _ in range(runs):
                now.append(timed(loaded(load_definitions, paths), runs=1, clock=clock))
                if old is not None:
                    then.append(timed(loaded(old, paths), runs=1, clock=clock))
            a, b = statistics.median(now), (statistics.median(then) if then else None)
            line = (f"{n:4d} {unit}: {len(defs.graph):6d} triples, {warnings} warnings  "
                    f"load {a * 1000:9.1f} ms ({a / n * 1000:5.2f} ms a unit)")
            if b is not None:
                line += f"  before {b * 1000:9.1f} ms ({b / a:,.1f}x)"
            if first is None:
                first = (n, a, b)
            else:
                k = n / first[0]
                line += f"  growth {a / first[1] / k:.2f}x"
                if b is not None and first[2] is not None:
                    line += f" (before {b / first[2] / k:.2f}x)"
            print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--copies", type=int, nargs="+", default=[1, 4, 16, 32])
    size.add_argument("--files", type=int, nargs="+", help="files of one module each")
    size.add_argument("--steps", type=int, nargs="+", help="steps of each of two workflows")
    size.add_argument("--properties", type=int, nargs="+",
                      help="required property shapes of one node shape")
    parser.add_argument("--legacy", action="store_true",
                        help="also time the digest as computed before (slow past 8 copies)")
    parser.add_argument("--before", type=Path, help="a checkout whose horismos to compare with")
    parser.add_argument("--runs", type=int, default=3, help="loads per size and package")
    parser.add_argument("--cpu", action="store_true",
                        help="time by this process's CPU seconds, not the wall clock")
    args = parser.parse_args()
    clock = time.process_time if args.cpu else time.perf_counter
    chosen = [(args.files, modules, "files"), (args.steps, crossing, "steps"),
              (args.properties, required, "properties")]
    for sizes, make, unit in chosen:
        if sizes:
            compare(sizes, make, unit, args.before, args.runs, clock)
            return
    if args.before:
        compare(args.copies, copies, "copies", args.before, args.runs, clock)
        return
    for n in args.copies:
        with tempfile.TemporaryDirectory() as tmp:
            paths = copies(n, Path(tmp))
            defs = load_definitions(paths)
            graph: Graph = defs.graph
            blank = len({t for triple in graph for t in triple if isinstance(t, BNode)})
            load = timed(lambda: load_definitions(paths))  # noqa: B023
            digest = timed(lambda: definitions_digest(graph))  # noqa: B023
            slip = URIRef("http://example.org/c0/ehr#acuty")
            gathered = timed(lambda: closest_term(slip, graph.all_nodes(), cutoff=0.8))  # noqa: B023
            once = timed(lambda: closest_term(slip, defs.nodes, cutoff=0.8))  # noqa: B023
            line = (f"{n:3d} copies: {len(graph):6d} triples, {blank:5d} blank nodes  "
                    f"load {load * 1000:8.1f} ms  digest {digest * 1000:7.1f} ms  "
                    f"a slip's did-you-mean {gathered * 1000:6.1f} ms gathered, "
                    f"{once * 1000:5.1f} ms once")
            if args.legacy:
                legacy = timed(lambda: legacy_definitions_digest(graph), runs=1)  # noqa: B023
                line += f"  digest before {legacy * 1000:9.1f} ms ({legacy / digest:,.0f}x)"
            print(line, flush=True)
    sys.exit(0)


if __name__ == "__main__":
    main()
