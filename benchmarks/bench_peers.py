"""The same workload through LangGraph (in-memory checkpointer) and Horismos, in one process.

    pip install -e '.[bench]'
    python benchmarks/bench_peers.py [--prescriptions 2000] [--rounds 2]

N prescriptions, each: a refill decision, dispense, notify — the same Python functions
(benchmarks/peers/pharmacy_tools.py) in both engines. LangGraph runs one thread per
prescription through a three-node StateGraph with ``InMemorySaver`` (a checkpoint after every
node, nothing validated). Horismos runs ``run --all`` on a world of N prescriptions with a trace
file, keeping no per-instance records in memory, as the CLI's ``run --all`` does
(``keep=False``; LangGraph's saver keeps every checkpoint): every step's preconditions read
from the graph, its result gated against the tool's effect and the domain shape of
benchmarks/peers/pharmacy.ttl (``sh:pattern`` and ``sh:maxCount`` on ``:Prescription``), its
effects committed atomically and traced. The tools
are declared ``horis:inline true`` (benchmarks/peers/refill.ttl): pure functions, called on the
run's own thread as LangGraph calls its nodes, not handed to a worker thread; their
``horis:timeout`` is then judged when they return.

Prints each engine's committed steps per wall second and CPU µs a step (every thread of the
process: LangGraph hands work to threads of its own), and their ratios, per round; the engines
take turns to go first from round to round, so the ratio is measured under the same load on a
shared machine. The wall ratio is the target's; the CPU ratio moves less with the machine's
load (a thread handed work waits for a core on a busy machine, off the CPU clock).

``--durable`` measures commits that outlive the process instead: LangGraph with
``SqliteSaver`` (WAL; ``synchronous=NORMAL`` survives the process being killed, as RocksDB's
and ``journal:PATH``'s defaults do; ``synchronous=FULL`` also a power cut, as
``journal:PATH?sync=commit`` does) against Horismos on ``oxigraph:PATH`` and ``journal:PATH``,
alternating; then how long each on-disk store takes to open holding ``--open-sizes`` triples
(``journal:PATH`` loads its snapshot and replays its journal, ``oxigraph:PATH`` reads what it
is asked for).
``--v2-too`` also runs Horismos writing what a trace_version 2 run wrote (four provenance quads
more a step, as a replay of such a trace does), alternating with version 3, and prints their
ratio per wall and per CPU second.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple, TypedDict

from rdflib import RDF, Literal, Namespace

from horismos import Agent, World

HERE = Path(__file__).resolve().parent / "peers"
sys.path.insert(0, str(HERE))
RX = Namespace("http://example.org/pharmacy#")

import pharmacy_tools  # noqa: E402


def refills(i: int) -> int:
    return 1 + i % 3


# -- LangGraph ---------------------------------------------------------------------------------

class RxState(TypedDict, total=False):
    rx: str
    refills: int
    approved: bool
    ref: str
    notified_by: str


class Rate(NamedTuple):
    """What one engine did in one timed run."""

    per_second: float  # committed steps a wall second
    steps: int
    cpu_per_step: float  # CPU seconds of this process (all its threads) a step

    @classmethod
    def since(cls, steps: int, wall0: float, cpu0: float) -> Rate:
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        return cls(steps / wall, steps, cpu / steps)


def langgraph_rate(n: int, sqlite: str | None = None) -> Rate:
    """Steps a second; ``sqlite``: checkpoints in a SQLite file in WAL mode with this
    ``synchronous`` level (NORMAL, FULL), not in memory."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph

    def decide(state: RxState) -> dict[str, Any]:
        return {"approved": pharmacy_tools.decide_refill(state["rx"], state["refills"])
                ["refillApproved"]}

    def dispense(state: RxState) -> dict[str, Any]:
        return {"ref": pharmacy_tools.dispense(state["rx"])["dispenseRef"]}

    def notify(state: RxState) -> dict[str, Any]:
        return {"notified_by": pharmacy_tools.notify(state["rx"], state["ref"])["notifiedBy"]}

    g = StateGraph(RxState)
    g.add_node("decide", decide)
    g.add_node("dispense", dispense)
    g.add_node("notify", notify)
    g.add_edge(START, "decide")
    g.add_conditional_edges("decide", lambda s: "dispense" if s["approved"] else END)
    g.add_edge("dispense", "notify")
    g.add_edge("notify", END)
    with tempfile.TemporaryDirectory() as tmp:
        if sqlite is None:
            saver: Any = InMemorySaver()
        else:
            from langgraph.checkpoint.sqlite import SqliteSaver

            conn = sqlite3.connect(str(Path(tmp) / "lg.sqlite"), check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={sqlite}")
            saver = SqliteSaver(conn)
        app = g.compile(checkpointer=saver)
        c0, t0 = time.process_time(), time.perf_counter()
        steps = 0
        for i in range(n):
            out = app.invoke({"rx": f"rx{i}", "refills": refills(i)},
                             {"configurable": {"thread_id": f"rx{i}"}})
            steps += 3 if out.get("notified_by") else 1
        return Rate.since(steps, t0, c0)


# -- Horismos ----------------------------------------------------------------------------------

def agent_and_world(n: int, notes: int = 0, entailment: str = "rdfs") -> tuple[Agent, World]:
    """The refill workflow and a world of ``n`` prescriptions, each holding ``notes`` facts
    no shape names (benchmarks/bench_degree.py)."""
    agent = Agent.from_files(HERE / "refill.ttl", HERE / "pharmacy.ttl",
                             allow_modules=["pharmacy_tools"], entailment=entailment)
    world = World()
    quads = []
    for i in range(n):
        rx = RX[f"rx{i}"]
        quads += [(rx, RDF.type, RX.Prescription, None),
                  (rx, RX.refillsLeft, Literal(refills(i)), None)]
        quads += [(rx, RX.note, Literal(f"note {i}.{k}"), None) for k in range(notes)]
    world.store.load(quads)
    return agent, world


def horismos_rate(
    n: int, trace_version: int | None = None, store: str | None = None
) -> Rate:
    """Steps a second; ``trace_version`` 2: writing what a version-2 run wrote; ``store``: the
    world in this store (``PATH`` replaced by a fresh folder), loaded before the clock starts."""
    agent, world = agent_and_world(n)
    steps = 0

    def landed(_inst: Any, rec: Any) -> None:
        nonlocal steps
        steps += rec.status == "completed"

    with tempfile.TemporaryDirectory() as tmp:
        if store is not None:
            held = World.open(store.replace("PATH", str(Path(tmp) / "world")))
            held.store.load(world.store.quads())
            world = held
        if trace_version is not None:
            _written_as(trace_version)
        c0, t0 = time.process_time(), time.perf_counter()
        # as `horismos run --all` runs: no per-instance records kept (keep=False)
        run = agent.run(world, all=True, trace=Path(tmp) / "refill.trace.jsonl", keep=False,
                        on_step=landed)
        rate = Rate.since(steps, t0, c0)
        if trace_version is not None:
            _written_as(None)
        world.store.close()
    assert run.status == "completed", run.status
    return rate


def _written_as(version: int | None) -> None:
    """Every runner made from now writes its steps as ``version`` did (None: as it does)."""
    from horismos import _runner

    plain = getattr(_runner.Runner, "_plain_init", _runner.Runner.__init__)
    _runner.Runner._plain_init = plain
    if version is None:
        _runner.Runner.__init__ = plain
        return

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        plain(self, *args, **kwargs)
        self.trace_version = version

    _runner.Runner.__init__ = init


def versions(n: int, rounds: int) -> None:
    """Version 3 against version 2's writes, alternating, per wall and per CPU second."""
    wall, cpu = [], []
    for r in range(1, rounds + 1):
        got = {}
        for v in (2, 3) if r % 2 else (3, 2):
            rate = horismos_rate(n, v)
            got[v] = rate.per_second, 1 / rate.cpu_per_step
        wall.append(got[3][0] / got[2][0])
        cpu.append(got[3][1] / got[2][1])
        print(f"round {r}: {n} prescriptions  trace_version 2 {got[2][0]:,.0f} steps/s "
              f"({got[2][1]:,.0f} per CPU s)  3 {got[3][0]:,.0f} ({got[3][1]:,.0f})  "
              f"ratio 3/2 {wall[-1]:.2f}x wall, {cpu[-1]:.2f}x CPU")
    print(f"median ratio 3/2 over {rounds} rounds: {statistics.median(wall):.2f}x wall, "
          f"{statistics.median(cpu):.2f}x CPU")


DURABLE = {  # name: (LangGraph's SQLite synchronous level, or Horismos's store)
    "LangGraph+SqliteSaver NORMAL": ("NORMAL", None),
    "Horismos oxigraph (memory, not durable)": (None, "oxigraph"),
    "Horismos oxigraph:PATH": (None, "oxigraph:PATH"),
    "Horismos journal:PATH": (None, "journal:PATH"),
    "LangGraph+SqliteSaver FULL": ("FULL", None),
    "Horismos journal:PATH?sync=commit": (None, "journal:PATH?sync=commit"),
}


def durable(n: int, rounds: int) -> None:
    """Each engine on commits that outlive the process, alternating (the order turned each
    round); the ratios against the SQLite saver of the same durability."""
    names = list(DURABLE)
    ratios: dict[str, list[float]] = {}
    for r in range(1, rounds + 1):
        got = {}
        for name in names if r % 2 else names[::-1]:
            level, store = DURABLE[name]
            rate = langgraph_rate(n, level) if level else horismos_rate(n, store=store)
            got[name] = rate.per_second
        shown = []
        for name in names:
            peer = "LangGraph+SqliteSaver " + ("FULL" if "sync=commit" in name else "NORMAL")
            if name.startswith("Horismos"):
                ratios.setdefault(name, []).append(got[name] / got[peer])
                shown.append(f"{name} {got[name]:,.0f} ({got[name] / got[peer]:.2f}x)")
            else:
                shown.append(f"{name} {got[name]:,.0f}")
        print(f"round {r}: {n} prescriptions, steps/s  " + "  ".join(shown))
    for name, found in ratios.items():
        print(f"median {name} / its SQLite peer over {rounds} rounds: "
              f"{statistics.median(found):.2f}x")


OPENED = """
import sys, time
from horismos import World
t0 = time.perf_counter()
world = World.open(sys.argv[1], create=False)
opened = time.perf_counter() - t0
print(opened, len(world.store))
world.store.close()
"""


def open_times(sizes: list[int], commits: int = 1000) -> None:
    """Seconds to open each on-disk store holding ``size`` triples (in a fresh process each),
    after a load and ``commits`` commits; a journal store both as its
    process left it (killed: its journal replayed) and closed (its snapshot alone)."""
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            data = Path(tmp) / "world.nt"
            with data.open("w") as f:
                for i in range(size):
                    f.write(f'<{RX}rx{i // 4}> <{RX}p{i % 4}> "value {i}" .\n')
            found = {}
            for kind in ("oxigraph", "journal"):
                store = f"{kind}:{Path(tmp) / kind}"
                t0 = time.perf_counter()
                build = subprocess.run(
                    [sys.executable, "-c", _BUILD, store, str(data), str(commits)], check=True
                )
                loaded = time.perf_counter() - t0
                assert build.returncode == 0
                found[kind + (":PATH, its journal replayed" if kind == "journal" else ":PATH")] = (
                    _open_time(store)
                )
                if kind == "journal":
                    found["journal:PATH, closed (snapshot only)"] = _open_time(store)
                print(f"{size:,} triples: {kind}:PATH loaded and {commits} commits in "
                      f"{loaded:.1f} s")
            print(f"{size:,} triples, open (fresh process): "
                  + "  ".join(f"{k} {v[0]:.2f} s" for k, v in found.items()))


_BUILD = """
import os, sys
from pathlib import Path
from rdflib import Literal, URIRef
from horismos import World
from horismos._stores import Change
world = World.open(sys.argv[1])
world.store.load_file(Path(sys.argv[2]))
for i in range(int(sys.argv[3])):
    world.commit(Change(add=[(URIRef(f"urn:c:{i}"), URIRef("urn:c:p"), Literal(i), None)]))
if sys.argv[1].startswith("journal:"):
    os._exit(0)  # as if killed: the journal holds the commits, no snapshot does
world.store.close()
"""


def _open_time(store: str) -> tuple[float, int]:
    out = subprocess.run([sys.executable, "-c", OPENED, store], check=True,
                         capture_output=True, text=True, env=dict(os.environ)).stdout.split()
    return float(out[0]), int(out[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prescriptions", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--v2-too", action="store_true",
                        help="then trace_version 3 against version 2's writes, alternating")
    parser.add_argument("--durable", action="store_true",
                        help="on-disk stores against LangGraph's SQLite saver, then open times")
    parser.add_argument("--open-sizes", default="100000,1000000",
                        help="with --durable: triples in the stores whose open is timed")
    args = parser.parse_args()
    if args.durable:
        durable(args.prescriptions, args.rounds)
        open_times([int(s) for s in args.open_sizes.split(",") if s])
        return
    ratios, cpu_ratios = [], []
    for r in range(1, args.rounds + 1):
        if r % 2:
            lg = langgraph_rate(args.prescriptions)
            hz = horismos_rate(args.prescriptions)
        else:
            hz = horismos_rate(args.prescriptions)
            lg = langgraph_rate(args.prescriptions)
        ratios.append(hz.per_second / lg.per_second)
        cpu_ratios.append(lg.cpu_per_step / hz.cpu_per_step)
        print(f"round {r}: {args.prescriptions} prescriptions  "
              f"LangGraph+InMemorySaver {lg.per_second:,.0f} steps/s ({lg.steps} steps, "
              f"{lg.cpu_per_step * 1e6:,.0f} CPU µs a step)  "
              f"Horismos run --all, trace, domain shape {hz.per_second:,.0f} steps/s "
              f"({hz.steps} steps, {hz.cpu_per_step * 1e6:,.0f} CPU µs a step)  "
              f"ratio Horismos/LangGraph {ratios[-1]:.2f}x wall, {cpu_ratios[-1]:.2f}x CPU")
    print(f"median ratio over {len(ratios)} rounds: {statistics.median(ratios):.2f}x wall, "
          f"{statistics.median(cpu_ratios):.2f}x CPU")
    if args.v2_too:
        versions(args.prescriptions, args.rounds)


if __name__ == "__main__":
    main()
