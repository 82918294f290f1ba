"""What an oversized answer costs before it is refused: a one-step run whose tool answers
``--mb`` megabytes, bound to an MCP server over stdio and to a Python function, under the
default result cap (1 MiB, ``horis:maxResultBytes``).

    python benchmarks/bench_limits.py [--mb 60]

Prints, per binding, the wall time of the run, the peak RSS of this process, the error and the
size of the trace. Before the cap an MCP answer of 60 MB took 4 min 27 s to land (the SDK's
stdio reader copies the line so far for every chunk) and was traced three times.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from horismos import Agent, World  # noqa: E402

MCP_SERVER = ROOT / "tests" / "servers" / "mcp_server.py"

DEFS = """\
@prefix :      <http://example.org/bench#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Patient a owl:Class .
:clinic a horis:McpServer ; horis:command "python" ; horis:args ( "{server}" ) .
:bench.huge a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ;
                  horis:arg [ horis:name "size" ; horis:type xsd:integer ] ] ;
    horis:effect [ horis:subject "patient" ;
                   horis:asserts [ horis:property :ref ; horis:key "queueRef" ;
                                   horis:type xsd:string ] ] ;
    horis:binding "{binding}" ; horis:timeout "600s" .
:Flow a horis:Workflow ; horis:focusType :Patient ; horis:start :S .
:S a horis:ActionStep ; horis:tool :bench.huge ; horis:requires "?this :size ?size ." ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""


def huge(patient: object, size: int) -> dict[str, str]:
    return {"queueRef": "x" * size}


def bench(label: str, binding: str, size: int, folder: Path) -> None:
    (folder / "d.ttl").write_text(DEFS.format(server=MCP_SERVER.as_posix(), binding=binding))
    (folder / "w.ttl").write_text("@prefix : <http://example.org/bench#> .\n"
                                  f":p1 a :Patient ; :size {size} .\n")
    agent = Agent.from_files(folder / "d.ttl", tools={"huge": huge})
    world = World.from_files(folder / "w.ttl")
    trace = folder / f"{label}.jsonl"
    t0 = time.perf_counter()
    run = agent.run(world, focus="http://example.org/bench#p1", trace=trace)
    took = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    error = type(run.steps[0].error).__name__ if run.steps[0].error else run.status
    print(f"{label:7s} {size / 1e6:6.0f} MB answer: {took:7.2f} s, peak RSS {peak:6.0f} MB, "
          f"{error}, trace {trace.stat().st_size:,} bytes")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mb", type=int, default=60, help="answer size in megabytes (default 60)")
    size = p.parse_args().mb * 1_000_000
    with tempfile.TemporaryDirectory() as tmp:
        bench("mcp", "mcp://clinic/huge", size, Path(tmp))
        bench("python", "python:huge", size, Path(tmp))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
