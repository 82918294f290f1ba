"""Replay speed against the live run it replays: the triage workflow with ``--all``, by where
the world is kept and by what kind of binding its two tools sit behind.

    python benchmarks/bench_replay.py [--patients 5000] [--stores oxigraph sparql]
                                      [--tools python http mcp]

For each (store, tools) pair, records a live run over a generated world (two steps per patient:
5000 patients make 10,000 steps) into a trace file, then replays that file with the same
definitions.

Why the pair decides the ratio: the live run pays for its I/O — the tool calls, the store's
round trips, writing the trace (snapshot, digests). Replay re-decides everything in memory —
preconditions, arguments, the SHACL gate's verdict, against a world rebuilt from the trace's
snapshot, every step committed so the final world digest can be checked — and pays for none of
that: recorded outcomes are handed back (no thread hop, no connection, no server) and nothing
is written. Its advantage is what the live run spends on I/O. An all-in-process run (python
tools, world in memory) spends almost nothing on it, so there replay is only ~1.2-1.5x faster;
with the world in a SPARQL server or the tools behind a wire, I/O is most of a live step.

Where the live run keeps its world (``--stores``, default ``oxigraph sparql``); the world is
generated and loaded before the clock starts:

- ``oxigraph``: in this process's memory, the default store.
- ``sparql``: in a real ``oxigraph serve`` on a free loopback port, started for the run, as a
  deployed run whose workers share one world keeps it (``sparql:URL``, SPEC §4,
  docs/stores.md): every query and commit is a request, and ``--all`` takes claims.
- ``memory`` (rdflib, in this process) and ``disk`` (``oxigraph:PATH`` in a temporary folder).

What the tools sit behind (``--tools``, default all three):

- ``python``: the in-process functions of ``examples/triage/ehr_client.py``. A call costs
  little more than the hop to a worker thread.
- ``http``: the same functions behind a JSON-over-HTTP server on 127.0.0.1, in a process of
  its own (``benchmarks/ehr_server.py --http``); one kept-alive connection for the run.
- ``mcp``: the same functions behind an MCP server over stdio (``benchmarks/ehr_server.py``),
  which Horismos starts and holds one session with for the run; starting it and the handshake
  fall inside the live figure.

The http and mcp pairs run a copy of ``workflows/triage.ttl``, written to a temporary folder
with each ``horis:binding`` line rewritten (and, for mcp, a ``horis:McpServer`` node added).

Each pair prints live steps per second with the live run's per-step split, replay steps per
second, their ratio by the clock and by CPU time, and the replay report. Both figures are whole
calls: the live one includes writing the trace; the replay one includes reading and checking
it. CPU time is this process's only: what the tool server and the SPARQL server spend, in
processes of their own, is printed apart and is in neither ratio, so wherever a server works
for the live run the CPU ratio understates what replay saves; with nothing else on the machine
it is the steadier figure. Replay runs after the pair's servers have stopped: it needs none. A
table of all pairs ends the output, with which of them meet the 5x target. Exits 1 when a live
run does not complete every step or a replay diverges.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from horismos import Agent, World, read_trace, replay

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples" / "triage"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT / "tests"))

import ehr_client  # noqa: E402
from bench_run import build_world  # noqa: E402
from oxigraph_server import OxigraphServer  # noqa: E402

KINDS = ("python", "http", "mcp")
STORES = ("oxigraph", "sparql", "memory", "disk")
TARGET = 5.0
WORKFLOW = ROOT / "workflows" / "triage.ttl"
ONTOLOGY = ROOT / "ontologies" / "ehr.ttl"
SERVER = Path(__file__).resolve().parent / "ehr_server.py"
_BINDING = re.compile(r'horis:binding "python:ehr_client\.(\w+)"')


def _variant(folder: Path, kind: str, binding: Callable[[str], str], extra: str = "") -> Path:
    """``workflows/triage.ttl`` with each tool bound by ``binding(tool name)``."""
    text, n = _BINDING.subn(lambda m: f"horis:binding {json.dumps(binding(m[1]))}",
                            WORKFLOW.read_text(encoding="utf-8"))
    if n != 2:
        raise SystemExit(f"{WORKFLOW}: expected 2 python:ehr_client bindings, found {n}")
    path = folder / f"triage-{kind}.ttl"
    path.write_text(text + extra, encoding="utf-8")
    return path


@contextlib.contextmanager
def _http_server() -> Iterator[str]:
    """``ehr_server.py --http`` in a process of its own, for as long as the block; its URL."""
    proc = subprocess.Popen([sys.executable, str(SERVER), "--http"], stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout is not None
        yield f"http://127.0.0.1:{int(proc.stdout.readline())}"
    finally:
        proc.terminate()
        proc.wait()


@contextlib.contextmanager
def _agent(kind: str, folder: Path) -> Iterator[Agent]:
    """The triage agent with its tools behind ``kind``; servers stop when the block ends."""
    if kind == "python":
        yield Agent.from_files(WORKFLOW, ONTOLOGY, tools={
            "ehr_client.assign_queue": ehr_client.assign_queue,
            "ehr_client.notify_nurse": ehr_client.notify_nurse})
    elif kind == "http":
        with _http_server() as base:
            yield Agent.from_files(_variant(folder, kind, lambda t: f"{base}/{t}"), ONTOLOGY)
    else:
        server = ("\n:ehr a horis:McpServer ;\n    horis:command \"python\" ;\n"
                  f"    horis:args ( {json.dumps(str(SERVER))} ) .\n")
        yield Agent.from_files(_variant(folder, kind, lambda t: f"mcp://ehr/{t}", server), ONTOLOGY)


@contextlib.contextmanager
def _world(store: str, patients: int,
           folder: Path) -> Iterator[tuple[World, OxigraphServer | None]]:
    """The generated world, loaded into ``store``; its server (sparql) stops when the block ends."""
    server = OxigraphServer(folder / "server") if store == "sparql" else None
    try:
        name = {"sparql": server.store if server else "",
                "disk": f"oxigraph:{folder / 'world'}"}.get(store, store)
        world = build_world(patients, name)
        try:
            yield world, server
        finally:
            world.store.close()
    finally:
        if server is not None:
            server.stop()


def _process_cpu(pid: int) -> float:
    """CPU time a running process (the SPARQL server) has used so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _children_cpu() -> float:
    """CPU time of the child processes that have ended and been waited for: the servers."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def bench(patients: int, store: str, kind: str) -> dict[str, Any] | None:
    """One pair; its figures, or None when the live run failed or the replay diverged."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = folder / "run.jsonl"
        with _world(store, patients, folder) as (world, sparql):
            q0 = _process_cpu(sparql.process.pid) if sparql else 0.0
            s0 = _children_cpu()
            with _agent(kind, folder) as agent:
                t0, c0 = time.perf_counter(), time.process_time()
                run = agent.run(world, all=True, trace=path)
                live, live_cpu = time.perf_counter() - t0, time.process_time() - c0
            tool_cpu = _children_cpu() - s0  # the server ended with the run (mcp) or the block
            store_cpu = _process_cpu(sparql.process.pid) - q0 if sparql else 0.0
            t3 = time.perf_counter()
            world.digest()
            digest = time.perf_counter() - t3
        # every server has stopped: replay needs none
        steps = len(run.steps)
        size = path.stat().st_size
        t1 = time.perf_counter()
        events = read_trace(path)
        reading = time.perf_counter() - t1
        del events
        t2, c2 = time.perf_counter(), time.process_time()
        report = replay(path, agent)
        replayed, replay_cpu = time.perf_counter() - t2, time.process_time() - c2
    servers = [name for name, there in (("tool", kind != "python"), ("SPARQL", sparql))
               if there]
    print(f"[{store}, {kind}] patients={patients}  steps={steps}  status={run.status}  "
          f"trace={size / 1e6:.1f} MB")
    split: dict[str, float] = {}
    for s in run.steps:
        for k, v in s.timings.items():
            split[k] = split.get(k, 0.0) + v
    print(f"  live:   {live:7.2f} s  {steps / live:7.0f} steps/s  (CPU {live_cpu:.2f} s)")
    print("    of which, per step: " + ", ".join(
        f"{k} {v / steps * 1000:.3f} ms" for k, v in sorted(split.items(), key=lambda kv: -kv[1])))
    print(f"    and {digest:.2f} s for the final world digest, which replay computes too")
    if servers:
        spent = {"tool": tool_cpu, "SPARQL": store_cpu}
        print("    CPU of this process only; left out: " + ", ".join(
            f"the {name} server's {spent[name]:.2f} s" for name in servers))
    print(f"  replay: {replayed:7.2f} s  {report.steps / replayed:7.0f} steps/s  "
          f"(CPU {replay_cpu:.2f} s; reading and checking the trace alone: {reading:.2f} s"
          f"{'; every server stopped' if servers else ''})")
    print(f"  replay is {live / replayed:.2f}x the speed of the live run by the clock, "
          f"{live_cpu / replay_cpu:.2f}x by CPU time"
          f"{' of this process' if servers else ''} (target: >= {TARGET:g}x)")
    print(f"  {report}")
    if run.status != "completed" or steps != 2 * patients:
        print(f"  FAILED: the live run ended {run.status} after {steps} of {2 * patients} "
              f"steps: {run.error}")
        return None
    if report.diverged:
        return None
    return {"live": steps / live, "replay": report.steps / replayed,
            "clock": live / replayed, "cpu": live_cpu / replay_cpu}


def _summary(patients: int, figures: dict[tuple[str, str], dict[str, Any] | None]) -> bool:
    """The table of all pairs and which meet the target; False when any pair failed."""
    lead = f"patients={patients}: "
    pad = " " * len(lead)
    print(f"{lead}{'store':8s} {'tools':6s} {'live/s':>8s} {'replay/s':>9s} {'clock':>7s}")
    met: list[str] = []
    for (store, kind), f in figures.items():
        if f is None:
            print(f"{pad}{store:8s} {kind:6s} FAILED (see its block)")
            continue
        print(f"{pad}{store:8s} {kind:6s} {f['live']:8.0f} {f['replay']:9.0f} {f['clock']:6.2f}x")
        if f["clock"] >= TARGET:
            met.append(f"({store}, {kind})")
    print(f"{pad}replay >= {TARGET:g}x the live run by the clock: "
          f"{', '.join(met) if met else 'no pair'}")
    return all(f is not None for f in figures.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--patients", type=int, nargs="+", default=[5000])
    parser.add_argument("--stores", nargs="+", choices=STORES, default=["oxigraph", "sparql"],
                        help="where the live run keeps its world: oxigraph (in memory), sparql "
                             "(an oxigraph serve started per run), memory (rdflib), disk "
                             "(oxigraph:PATH in a temporary folder); default: oxigraph sparql")
    parser.add_argument("--tools", nargs="+", choices=KINDS, default=list(KINDS),
                        help="binding kinds to measure (default: all)")
    args = parser.parse_args()
    ok = True
    for n in args.patients:
        figures = {(store, kind): bench(n, store, kind)
                   for store in args.stores for kind in args.tools}
        ok = _summary(n, figures) and ok
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
