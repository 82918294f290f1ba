"""What writing a trace event costs, alone: a run's own step events emitted again to a file.

    python benchmarks/bench_trace.py [--prescriptions 300] [--rounds 5] [--before PATH]

The pharmacy workload of bench_peers.py is run once with a trace; its events (a header, an
``instance`` event per prescription, three ``step`` events, ~2 KB each, and the end) are read
back and, each round, emitted again through a new ``Trace`` to a file as the run emitted them:
the event built, serialised with its own hash, chained and written (one unbuffered ``write``).
Nothing of the run around it is timed.

``--before PATH``: also emit them through the horismos package of PATH (a git worktree of
main, say), imported under another name, alternating with this one round by round, so both
are measured under the same load on a shared machine; prints the ratio.

Prints µs per event (the median of rounds) and, for a step event, the share that is the line
itself (serialised and hashed, no write).
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rdflib import RDF, Literal

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_peers  # noqa: E402
from before import before_package  # noqa: E402

from horismos import Agent, World, read_trace  # noqa: E402

_OWN = ("type", "seq", "prev", "hash", "sig")  # what Trace.emit adds to an event's fields


def recorded_events(n: int) -> list[tuple[str, dict[str, Any]]]:
    """The (type, fields) of every event a ``run --all`` over ``n`` prescriptions wrote."""
    agent = Agent.from_files(bench_peers.HERE / "refill.ttl", bench_peers.HERE / "pharmacy.ttl",
                             allow_modules=["pharmacy_tools"])
    world = World()
    quads = []
    for i in range(n):
        rx = bench_peers.RX[f"rx{i}"]
        quads += [(rx, RDF.type, bench_peers.RX.Prescription, None),
                  (rx, bench_peers.RX.refillsLeft, Literal(bench_peers.refills(i)), None)]
    world.store.load(quads)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.jsonl"
        run = agent.run(world, all=True, trace=path, keep=False)
        assert run.status == "completed", run.status
        events = read_trace(path)
    return [(e["type"], {k: v for k, v in e.items() if k not in _OWN}) for e in events]


def emit_all(package: str, events: list[tuple[str, dict[str, Any]]], folder: Path) -> float:
    """µs per event, every event emitted through a new streamed Trace of ``package``."""
    trace_module = importlib.import_module(f"{package}._trace")
    trace = trace_module.Trace(folder / f"{package}.jsonl")
    t0 = time.perf_counter()
    for kind, fields in events:
        trace.emit(kind, **fields)
    elapsed = time.perf_counter() - t0
    trace.close()
    return elapsed / len(events) * 1e6


def line_only(package: str, steps: list[dict[str, Any]]) -> float:
    """µs per step event for its line alone (serialised with its own hash, not written)."""
    hashed_line = importlib.import_module(f"{package}._trace")._hashed_line
    events = [{"type": "step", "seq": 1, "prev": "sha256:" + "0" * 64, **f} for f in steps]
    t0 = time.perf_counter()
    for event in events:
        hashed_line(event)
    return (time.perf_counter() - t0) / len(events) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prescriptions", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--before", type=Path, help="a checkout whose horismos to compare with")
    args = parser.parse_args()
    events = recorded_events(args.prescriptions)
    steps = [fields for kind, fields in events if kind == "step"]
    names = ["horismos"] + ([before_package(args.before)] if args.before else [])
    emitted: dict[str, list[float]] = {name: [] for name in names}
    lines: dict[str, list[float]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.rounds):
            for name in names:  # alternating: the same load for both
                emitted[name].append(emit_all(name, events, Path(tmp)))
                lines[name].append(line_only(name, steps))
    print(f"{len(events)} events ({len(steps)} steps), {args.rounds} rounds")
    for name in names:
        print(f"{name}: {statistics.median(emitted[name]):.1f} µs an event emitted, "
              f"{statistics.median(lines[name]):.1f} µs a step event's line")
    if args.before:
        before, after = names[1], names[0]
        emit_ratio = statistics.median(emitted[before]) / statistics.median(emitted[after])
        line_ratio = statistics.median(lines[before]) / statistics.median(lines[after])
        print(f"before/after: emit {emit_ratio:.2f}x, line {line_ratio:.2f}x")


if __name__ == "__main__":
    main()
