"""What a binding adds to a step: the same one-step workflow run for N instances with the tool
bound to a Python function, to an MCP server over stdio (one session, reused by every
instance) and to an HTTP endpoint on 127.0.0.1. Every tool does nothing and returns ``{}``.

    python benchmarks/bench_bindings.py [--instances 200]

Prints, per binding, the median and mean time of a step (precondition, arguments, tool, gate,
commit, trace) and of the tool call alone, then what MCP and HTTP add to a Python step: an
async function (no thread; the strict baseline) and a sync one (run on a worker thread).
Target: an MCP step with a reused session adds under 5 ms to a Python step.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from servers.http_server import serve  # noqa: E402

from horismos import Agent, World  # noqa: E402

MCP_SERVER = ROOT / "tests" / "servers" / "mcp_server.py"

DEFS = """\
@prefix :      <http://example.org/bench#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .

:Patient a owl:Class .

:bench.noop a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:subject "patient" ;
                   horis:asserts [ horis:property :touchedAt ; horis:value horis:now ] ] ;
    horis:binding "BINDING" .

:Touch a horis:Workflow ; horis:focusType :Patient ; horis:start :TouchStep .
:TouchStep a horis:ActionStep ; horis:tool :bench.noop ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""


def noop(patient: object) -> dict[str, object]:
    return {}


async def anoop(patient: object) -> dict[str, object]:
    return {}


def world(instances: int) -> World:
    from rdflib import RDF, Namespace

    ns = Namespace("http://example.org/bench#")
    w = World()
    w.store.load([(ns[f"p{i}"], RDF.type, ns.Patient, None) for i in range(instances)])
    return w


def bench(name: str, binding: str, instances: int, folder: Path,
          **agent_kw: object) -> tuple[float, float, float]:
    path = folder / f"{name}.ttl"
    path.write_text(DEFS.replace("BINDING", binding), encoding="utf-8")
    agent = Agent.from_files(path, **agent_kw)  # type: ignore[arg-type]
    t0 = time.perf_counter()
    run = agent.run(world(instances), all=True)
    wall = time.perf_counter() - t0
    assert run.status == "completed", run.error
    steps = [sum(s.timings.values()) * 1000 for s in run.steps]
    tools = [s.timings["tool"] * 1000 for s in run.steps]
    med, mean, tool = statistics.median(steps), statistics.fmean(steps), statistics.median(tools)
    print(f"{name:7s} {med:8.2f} {mean:8.2f} {tool:8.2f} {wall:8.2f}")
    return med, mean, tool


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--instances", type=int, default=200)
    n = p.parse_args().instances
    httpd, base, _ = serve()
    print(f"{n} instances, one step each; times in ms per step (wall: whole run, in s)")
    print(f"{'binding':7s} {'median':>8s} {'mean':>8s} {'tool':>8s} {'wall':>8s}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        sync = bench("python", "python:noop", n, folder, tools={"noop": noop})
        python = bench("async", "python:anoop", n, folder, tools={"anoop": anoop})
        mcp = bench("mcp", "mcp://bench/noop", n, folder, mcp_servers={
            "bench": {"command": sys.executable, "args": [str(MCP_SERVER)]}})
        http = bench("http", f"{base}/noop", n, folder)
    httpd.shutdown()
    for name, r in (("MCP", mcp), ("HTTP", http)):
        print(f"{name} adds {r[0] - python[0]:.2f} ms to an async Python step, "
              f"{r[0] - sync[0]:.2f} ms to a sync one (medians)")
    verdict = "met" if mcp[0] - python[0] < 5 else "NOT met"
    print(f"target (MCP adds < 5 ms, session reused): {verdict}")


if __name__ == "__main__":
    main()
