"""Replay speed against the live run it replays: the triage workflow with ``--all``, its two
tools behind each kind of binding.

    python benchmarks/bench_replay.py [--patients 5000] [--tools python http mcp]

For each binding kind, records a live run over a generated world (two steps per patient: 5000
patients make 10,000 steps) into a trace file, then replays that file with the same
definitions. One block per kind, all over the same workload:

- ``python``: the tools are the in-process functions of ``examples/triage/ehr_client.py``. A
  call costs little more than the hop to a worker thread, so this block shows the engine's
  own work.
- ``http``: the same functions behind a JSON-over-HTTP server on 127.0.0.1, in a process of
  its own (``benchmarks/ehr_server.py --http``); one kept-alive connection for the run.
- ``mcp``: the same functions behind an MCP server over stdio (``benchmarks/ehr_server.py``),
  which Horismos starts and holds one session with for the run; starting it and the handshake
  fall inside the live figure.

The http and mcp blocks run a copy of ``workflows/triage.ttl``, written to a temporary folder
with each ``horis:binding`` line rewritten (and, for mcp, a ``horis:McpServer`` node added).

Each block prints live and replay steps per second and their ratio, by the clock and by CPU
time. Both figures are whole calls: the live one includes writing the trace (snapshot,
digests); the replay one includes reading and checking it. CPU time is this process's only:
for http and mcp the server's CPU, spent in its own process, is printed apart and is in
neither ratio.

Replay recomputes what it compares — preconditions, arguments, the SHACL gate's verdict — and
commits every step so the final world digest can be checked. What it skips is what came from
outside the runtime: the tool calls (their recorded outcomes are handed back, with no thread
hop, no connection, no server started) and writing the trace. The per-step split of the live
run shows how much of a step that is; behind a wire the tool call is most of it, which is what
a replay saves in a real deployment. A replay of an http or mcp run is made with its server
stopped. On a shared machine the CPU-time ratio is the steadier figure. Exits 1 when a live
run does not complete or a replay diverges.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from horismos import Agent, read_trace, replay

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples" / "triage"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import ehr_client  # noqa: E402
from bench_run import build_world  # noqa: E402

KINDS = ("python", "http", "mcp")
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


def _children_cpu() -> float:
    """CPU time of the child processes that have ended and been waited for: the servers."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def bench(patients: int, kind: str) -> dict[str, Any] | None:
    """One block; its figures, or None when the live run failed or the replay diverged."""
    world = build_world(patients)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.jsonl"
        s0 = _children_cpu()
        with _agent(kind, Path(tmp)) as agent:
            t0, c0 = time.perf_counter(), time.process_time()
            run = agent.run(world, all=True, trace=path)
            live, live_cpu = time.perf_counter() - t0, time.process_time() - c0
        server_cpu = _children_cpu() - s0  # the server ended with the run (mcp) or the block
        steps = len(run.steps)
        size = path.stat().st_size
        t3 = time.perf_counter()
        world.digest()
        digest = time.perf_counter() - t3
        t1 = time.perf_counter()
        events = read_trace(path)
        reading = time.perf_counter() - t1
        del events
        t2, c2 = time.perf_counter(), time.process_time()
        report = replay(path, agent)
        replayed, replay_cpu = time.perf_counter() - t2, time.process_time() - c2
    print(f"[{kind}] patients={patients}  steps={steps}  status={run.status}  "
          f"trace={size / 1e6:.1f} MB")
    split: dict[str, float] = {}
    for s in run.steps:
        for k, v in s.timings.items():
            split[k] = split.get(k, 0.0) + v
    print(f"  live:   {live:7.2f} s  {steps / live:7.0f} steps/s  (CPU {live_cpu:.2f} s)")
    print("    of which, per step: " + ", ".join(
        f"{k} {v / steps * 1000:.3f} ms" for k, v in sorted(split.items(), key=lambda kv: -kv[1])))
    print(f"    and {digest:.2f} s for the final world digest, which replay computes too")
    if kind != "python":
        print(f"    the server's own process used {server_cpu:.2f} s of CPU, not counted above "
              "(CPU figures here are this process's only)")
    print(f"  replay: {replayed:7.2f} s  {report.steps / replayed:7.0f} steps/s  "
          f"(CPU {replay_cpu:.2f} s; reading and checking the trace alone: {reading:.2f} s"
          f"{'; the server was stopped' if kind != 'python' else ''})")
    print(f"  replay is {live / replayed:.2f}x the speed of the live run by the clock, "
          f"{live_cpu / replay_cpu:.2f}x by CPU time"
          f"{' of this process' if kind != 'python' else ''} (target: >= 5x)")
    print(f"  {report}")
    if run.status != "completed" or steps != 2 * patients:
        print(f"  FAILED: the live run ended {run.status} after {steps} of {2 * patients} "
              f"steps: {run.error}")
        return None
    if report.diverged:
        return None
    return {"live": steps / live, "replay": report.steps / replayed,
            "clock": live / replayed, "cpu": live_cpu / replay_cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--patients", type=int, nargs="+", default=[5000])
    parser.add_argument("--tools", nargs="+", choices=KINDS, default=list(KINDS),
                        help="binding kinds to measure, one block each (default: all)")
    args = parser.parse_args()
    failed = False
    for n in args.patients:
        figures = {kind: bench(n, kind) for kind in args.tools}
        print(f"patients={n}: {'kind':6s} {'live/s':>8s} {'replay/s':>9s} {'clock':>7s} "
              f"{'CPU':>7s}")
        for kind, f in figures.items():
            if f is None:
                failed = True
                print(f"{'':13s}{kind:6s} FAILED (see its block)")
            else:
                print(f"{'':13s}{kind:6s} {f['live']:8.0f} {f['replay']:9.0f} "
                      f"{f['clock']:6.2f}x {f['cpu']:6.2f}x")
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
