"""What each lane a user runs once per event costs, in a world of ~100,000 and ~1,000,000 triples.

    python benchmarks/bench_lanes.py [--sizes 100000 1000000] [--stores oxigraph disk sparql]
                                     [--reps 3] [--before PATH]

A run should cost what it touches, not what the world holds. Each world is a service's world
after a while: cases (25 triples each: an owner, items, options) that each ran once through a
one-step workflow (19 more quads an instance: its state, its effect graph, its PROV
activities), so ~44 quads a case, as many cases as reach the size, the first of them run again
once per ten cases (a case with an event again and again); then, the same at every
size, a few instances waiting for an operator (``WfOp``) and for an approval (``WfApp``), and
fresh cases to run. The workflows and tools are benchmarks/history/ (``history.ttl``,
``history.py``).

The world is built once per size in memory (the history run through the agent, ``run --all``),
written as N-Quads and bulk-loaded (``World.store.load_file``) into each store: ``oxigraph``
(in memory, the built world itself), ``disk`` (``oxigraph:PATH`` in a temporary folder) and
``sparql`` (a real ``oxigraph serve`` on 127.0.0.1, started here and stopped at the end).
The server is restarted once its world is loaded: a world posted in one request stays in
RocksDB's memtable and write-ahead log (a 414 MB log and no data file at 1M quads) until
the server restarts, where each index lookup costs more the more it holds (``wake``: x1.37
from 100k to 1M quads just loaded, the same rows read); a server in use, restarted or
flushed since, holds its world in sorted files, and that is what is measured.

Lanes, each timed after one warm-up (in process ``--api-reps`` times, on the command line
``--reps`` times), the sizes alternating:

- in process (every store), the reads a lane asks of the store counted (``reads``: rows and
  quads returned to Python by the store's read operations, a counting ``WrappedStore``):
  ``World.open`` of the store; ``Agent.run`` of one focus; ``resume`` of an operator wait by
  full IRI with its facts; ``approve``; ``due_waits`` with nothing due (what ``wake`` does);
  ``list_instances(status="waiting")``; ``catalog.call`` of a tool, and of one that is not
  idempotent (approved); ``World.digest()``; on
  ``sparql``, a worker's driver taking one task;
- the command line (``disk`` and ``sparql``: with an in-memory store the CLI reads the world
  from its files, which is the world by definition): ``horismos run --focus`` as a process of
  its own (start, imports, definitions, the world opened, the run); then, through
  ``horismos._cli.main`` in this process (what follows the ~0.6 s of imports, which noise on a
  shared machine would drown), ``run --focus``, ``resume --instance IRI``, ``approve``,
  ``wake``, ``instances --status waiting``, ``tools call``, ``digest``, ``trace show`` and
  ``replay`` of one run's trace, the stores each opens counted.

Prints each lane's median ms per size and the ratio of the largest to the smallest. Anything
but ``World.open`` growing past ~1.5x is a lane reading more than it touches. ``--before
PATH`` runs the in-process lanes and the subprocesses with the ``horismos`` package of another
checkout (a git worktree of the code before), after this one's, for a before/after table.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import gc
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "history"))
sys.path.insert(0, str(HERE.parent / "tests"))

from bench_history import H, case_quads  # noqa: E402
from history import TOOLS  # noqa: E402
from oxigraph_server import OxigraphServer  # noqa: E402  (``oxigraph serve``, up when made)

TTL = HERE / "history" / "history.ttl"
TOOLS_PY = HERE / "history" / "history.py"
WARM = 1
PER_CASE = 44  # quads a history case holds once its instance completed


# -- counting what a lane reads ---------------------------------------------------------------

def counting_store(inner: Any) -> Any:
    """``inner`` wrapped so that every row and quad its read operations return is counted."""
    from horismos._stores.base import WrappedStore

    class Counting(WrappedStore):
        def __init__(self, inner: Any) -> None:
            super().__init__(inner)
            self.rows = 0

        def _n(self, rows: Any) -> Any:
            self.rows += len(rows)
            return rows

        def _each(self, it: Any) -> Iterator[Any]:
            for x in it:
                self.rows += 1
                yield x

        def solutions(self, pre: Any, bindings: Any, ahead: Any = None) -> Any:
            return self._n(self.inner.solutions(pre, bindings, ahead))

        def select(self, query: str, bindings: Any, ns: Any) -> Any:
            return self._n(self.inner.select(query, bindings, ns))

        def held(self, pre: Any, each: Any) -> Any:
            return self._n(self.inner.held(pre, each))

        def objects(self, subject: Any, predicate: Any) -> Any:
            return self._each(self.inner.objects(subject, predicate))

        def outgoing(self, subject: Any, predicates: Any = None) -> Any:
            return self._each(self.inner.outgoing(subject, predicates))

        def types(self, node: Any) -> Any:
            return self._n(self.inner.types(node))

        def quads(self) -> Any:
            return self._each(self.inner.quads())

        def lines(self) -> Any:
            return self._each(self.inner.lines())

    return Counting(inner)


@contextlib.contextmanager
def counted_opens() -> Iterator[list[Any]]:
    """Every store ``World.open`` opens meanwhile, wrapped by :func:`counting_store`."""
    import horismos._world

    opened: list[Any] = []
    real_open = horismos._world.open_store

    def counted_open(store: str, **kw: Any) -> Any:
        opened.append(counting_store(real_open(store, **kw)))
        return opened[-1]

    horismos._world.open_store = counted_open  # type: ignore[assignment]
    try:
        yield opened
    finally:
        horismos._world.open_store = real_open  # type: ignore[assignment]


def rows_read(opened: list[Any]) -> int:
    """The rows the stores in ``opened`` returned since asked last."""
    n = 0
    for store in opened:
        n, store.rows = n + store.rows, 0
    return n


# -- the worlds -------------------------------------------------------------------------------

class Pools:
    """What one (store, mode) takes from a world: fresh cases, operator waits, approvals."""

    def __init__(self, fresh: list[Any], asks: list[tuple[Any, Any]],
                 approvals: list[tuple[Any, str]]) -> None:
        self.fresh, self.asks, self.approvals = fresh, asks, approvals


def build(agent: Any, size: int, pools: int, per_pool: int, out: Path) -> tuple[Any, list[Pools]]:
    """A world of ~``size`` quads in memory, written to ``out`` as N-Quads; its pools."""
    from horismos import World

    cases = max(1, size // PER_CASE)
    world = World.open("oxigraph")
    world.store.load(case_quads(cases, "h"))
    run = agent.run(world, workflow=H.WfMark, all=True, keep=False)
    assert run.counts == {"completed": cases}, run.counts
    for _ in range(cases // 10):  # a case with an event again and again: hcase0
        assert agent.run(world, workflow=H.WfMark, focus=H.hcase0).status == "completed"
    n = pools * per_pool
    world.store.load(case_quads(4 * n, "f"))
    world.store.load(case_quads(n, "w"))
    world.store.load(case_quads(n, "a"))
    asks = []
    for i in range(n):
        r = agent.run(world, workflow=H.WfOp, focus=H[f"wcase{i}"])
        assert r.status == "waiting", (r.status, r.error)
        asks.append((r.instances[0].instance, H[f"wcase{i}"]))
    approvals = []
    for i in range(n):
        r = agent.run(world, workflow=H.WfApp, focus=H[f"acase{i}"])
        assert r.status == "waiting", (r.status, r.error)
        fingerprint = (r.brief or "").split("Fingerprint: ")[1].split()[0]
        approvals.append((r.instances[0].instance, fingerprint))
    with out.open("w") as f:
        for line in world.store.lines():
            f.write(line + "\n")
    cut = [(k * per_pool, (k + 1) * per_pool) for k in range(pools)]
    return world, [Pools([H[f"fcase{j}"] for j in range(4 * a, 4 * b)], asks[a:b],
                         approvals[a:b]) for a, b in cut]


# -- timing -----------------------------------------------------------------------------------

class Table:
    def __init__(self, sizes: list[int], quads: dict[int, int]) -> None:
        self.sizes, self.quads = sizes, quads
        self.rows: list[tuple[str, str, list[float], list[int | None]]] = []

    def add(self, store: str, lane: str, ms: list[float], reads: list[int | None]) -> None:
        self.rows.append((store, lane, ms, reads))
        self.print_row(self.rows[-1])

    def header(self) -> None:
        sizes = "".join(f"{f'{self.quads[s]:,} q':>14}" for s in self.sizes)
        print(f"\n{'store':<8} {'lane':<44}{sizes}   ratio   reads", flush=True)

    def print_row(self, row: tuple[str, str, list[float], list[int | None]]) -> None:
        store, lane, ms, reads = row
        ratio = ms[-1] / ms[0] if ms[0] else float("nan")
        flag = "  <-" if ratio > 1.5 else ""
        counted = " / ".join("-" if r is None else f"{r:,}" for r in reads)
        print(f"{store:<8} {lane:<44}" + "".join(f"{m:>14.1f}" for m in ms)
              + f"  x{ratio:5.2f}   {counted}{flag}", flush=True)


def alternate(sizes: list[int], fn: Callable[[int], int | None], reps: int
              ) -> tuple[list[float], list[int | None]]:
    """Median ms of ``fn(size)`` per size, the sizes taking turns; the last count it returned."""
    times: dict[int, list[float]] = {s: [] for s in sizes}
    reads: dict[int, int | None] = {s: None for s in sizes}
    for rep in range(reps + WARM):
        for size in sizes if rep % 2 == 0 else sizes[::-1]:
            gc.collect()
            t0 = time.perf_counter()
            counted = fn(size)
            elapsed = time.perf_counter() - t0
            if rep >= WARM:
                times[size].append(elapsed * 1000)
                reads[size] = counted
    return [statistics.median(times[s]) for s in sizes], [reads[s] for s in sizes]


# -- the lanes --------------------------------------------------------------------------------

def in_process(agent: Any, table: Table, name: str, worlds: Mapping[int, Any],
               pools: Mapping[int, Pools], reps: int, traces: Path) -> None:
    """The lanes a program runs through the Python API, on open ``worlds`` (by size)."""
    from horismos import World
    from horismos._instances import due_waits, list_instances

    sizes = sorted(worlds)
    counted = {s: World(counting_store(worlds[s].store)) for s in sizes}

    def reads(size: int) -> int:
        store = counted[size].store
        n, store.rows = store.rows, 0
        return n

    def lane(label: str, fn: Callable[[Any, int], Any]) -> None:
        def timed(size: int) -> int:
            reads(size)
            fn(counted[size], size)
            return reads(size)
        table.add(name, label, *alternate(sizes, timed, reps))

    def run(world: Any, size: int) -> None:
        r = agent.run(world, workflow=H.WfMark, focus=pools[size].fresh.pop(),
                      trace=traces / f"{name}-{size}.jsonl")
        assert r.status == "completed", (r.status, r.error)

    def resume(world: Any, size: int) -> None:
        iid, case = pools[size].asks.pop()
        r = agent.resume(world, str(iid), f'<{case}> <{H.answer}> "yes" .',
                         trace=traces / f"{name}-{size}-resume.jsonl")
        assert r.status == "completed", (r.status, r.error)

    def approve(world: Any, size: int) -> None:
        iid, fingerprint = pools[size].approvals.pop()
        agent.approve(world, str(iid), fingerprint)

    def wake(world: Any, size: int) -> None:
        assert due_waits(agent.definitions, world.store, dt.datetime.now(dt.UTC)) == []

    def waiting(world: Any, size: int) -> None:
        assert list_instances(world.store, "waiting")

    def call(world: Any, size: int) -> None:
        result = agent.catalog.call("history.mark", {"case": str(pools[size].fresh.pop())},
                                    world)
        assert result.status == "completed", result

    def call_once(world: Any, size: int) -> None:
        args = {"case": str(pools[size].fresh.pop())}
        result = agent.catalog.call("history.send", args, world,
                                    approval=agent.catalog.approve("history.send", args))
        assert result.status == "completed", result

    def digest(world: Any, size: int) -> None:
        world.digest()

    def run_hub(world: Any, size: int) -> None:
        r = agent.run(world, workflow=H.WfMark, focus=H.hcase0,
                      trace=traces / f"{name}-{size}-hub.jsonl")
        assert r.status == "completed", (r.status, r.error)

    lane("Agent.run --focus", run)
    lane("Agent.run --focus, a focus run n/10 times", run_hub)
    lane("Agent.resume (full IRI, facts)", resume)
    lane("Agent.approve", approve)
    lane("due_waits, nothing due (wake)", wake)
    lane("list_instances(waiting)", waiting)
    lane("catalog.call", call)
    lane("catalog.call, not idempotent (approved)", call_once)
    lane("World.digest()", digest)


def worker(agent: Any, table: Table, name: str, spec: Mapping[int, str],
           pools: Mapping[int, Pools], reps: int) -> None:
    """A ``horismos worker`` taking one task: its driver (the world's connection and lease
    kept across tasks, as a worker process keeps them) driving one instance."""
    from horismos._queue import InstanceDriver

    drivers = {s: InstanceDriver(agent, spec[s]) for s in spec}
    with counted_opens() as opened:
        for driver in drivers.values():
            driver.check()  # each opens its world (its thread's connection) here
        by_size = dict(zip(drivers, opened, strict=True))

    def task(size: int) -> int:
        rows_read([by_size[size]])
        status = drivers[size].drive(str(H.WfMark), str(pools[size].fresh.pop()))
        assert status == "completed", status
        return rows_read([by_size[size]])
    try:
        table.add(name, "worker: one task (InstanceDriver.drive)",
                  *alternate(sorted(spec), task, reps))
    finally:
        for driver in drivers.values():
            driver.close()


def reopen(table: Table, name: str, spec: Mapping[int, str], reps: int) -> None:
    """``World.open`` of a store that holds the world, and its close."""
    from horismos import World

    def once(size: int) -> None:
        World.open(spec[size]).close()
    table.add(name, "World.open + close", *alternate(sorted(spec), once, reps))


def cli(python: str, root: Path, table: Table, name: str, spec: Mapping[int, str],
        pools: Mapping[int, Pools], reps: int, traces: Path) -> None:
    """The lanes a service runs as one ``horismos`` command per event: ``run --focus`` as a
    process of its own (start, imports, definitions, the world opened, the run), then each
    command through ``horismos._cli.main`` in this process (what follows the imports), every
    store it opens counted."""
    import io

    from horismos._cli import main as horismos_main

    sizes = sorted(spec)
    env = {**os.environ, "PYTHONPATH": str(root)}
    defs, tools = str(TTL), ["--tools", str(TOOLS_PY)]
    def process(argv: list[str]) -> None:
        done = subprocess.run([python, "-m", "horismos", *argv], env=env, capture_output=True,
                              text=True, cwd=HERE / "history")
        assert done.returncode == 0, (argv, done.returncode, done.stdout, done.stderr)

    def command(argv: list[str]) -> int:
        out = io.StringIO()
        with counted_opens() as opened:
            try:
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                    code = horismos_main(argv)
            finally:
                for store in opened:  # as the process's exit would (a disk store is locked)
                    store.inner.close()
        assert code == 0, (argv, code, out.getvalue())
        return rows_read(opened)

    def lane(label: str, fn: Callable[[int], int | None]) -> None:
        table.add(name, label, *alternate(sizes, fn, reps))

    def trace(size: int) -> str:
        return str(traces / f"cli-{name}-{size}.jsonl")

    def run(size: int) -> list[str]:
        return ["run", defs, *tools, "--workflow", str(H.WfMark), "--focus",
                str(pools[size].fresh.pop()), "--store", spec[size], "--trace", trace(size),
                "-q"]

    def resume(size: int) -> list[str]:
        iid, case = pools[size].asks.pop()
        return ["resume", defs, *tools, "--instance", str(iid), "--facts",
                f'<{case}> <{H.answer}> "yes" .', "--store", spec[size], "-q"]

    def approve(size: int) -> list[str]:
        iid, fingerprint = pools[size].approvals.pop()
        return ["approve", defs, "--instance", str(iid), "--fingerprint", fingerprint,
                "--store", spec[size]]

    def call(size: int) -> list[str]:
        return ["tools", "call", "history.mark", defs, *tools, "--args",
                json.dumps({"case": str(pools[size].fresh.pop())}), "--store", spec[size]]

    def run_hub(size: int) -> list[str]:
        return ["run", defs, *tools, "--workflow", str(H.WfMark), "--focus", str(H.hcase0),
                "--store", spec[size], "-q"]

    lane("process: horismos run --focus", lambda s: process(run(s)))
    lanes: list[tuple[str, Callable[[int], list[str]]]] = [
        ("cli: run --focus", run),
        ("cli: run --focus, a focus run n/10 times", run_hub),
        ("cli: resume --instance IRI --facts", resume),
        ("cli: approve", approve),
        ("cli: wake (nothing due)", lambda s: ["wake", defs, *tools, "--store", spec[s], "-q"]),
        ("cli: instances --status waiting",
         lambda s: ["instances", defs, "--status", "waiting", "--store", spec[s]]),
        ("cli: tools call", call),
        ("cli: digest", lambda s: ["digest", "--store", spec[s]]),
        ("cli: trace show", lambda s: ["trace", "show", trace(s)]),
        ("cli: replay (one trace)", lambda s: ["replay", trace(s), defs]),
    ]
    for label, argv in lanes:
        lane(label, lambda s, argv=argv: command(argv(s)))  # type: ignore[misc]


# -- main -------------------------------------------------------------------------------------

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000],
                        help="world sizes, in quads (approximately)")
    parser.add_argument("--stores", nargs="+", default=["oxigraph", "disk", "sparql"],
                        choices=["oxigraph", "disk", "sparql"])
    parser.add_argument("--reps", type=int, default=3,
                        help="timed repetitions of each command-line lane")
    parser.add_argument("--api-reps", type=int, default=11,
                        help="timed repetitions of each in-process lane (milliseconds each)")
    parser.add_argument("--before", type=Path, help="a checkout of the code before, "
                        "measured after this one (its horismos package is imported there)")
    parser.add_argument("--no-cli", action="store_true", help="in-process lanes only")
    args = parser.parse_args()

    roots = [HERE.parent] + ([args.before.resolve()] if args.before else [])
    per_pool = max(args.reps, args.api_reps) + WARM
    pools_n = len(args.stores) * 2  # one a (store, mode)
    folder = Path(tempfile.mkdtemp(prefix="bench_lanes-"))
    traces = folder / "traces"
    traces.mkdir()
    sizes = sorted(args.sizes)
    servers: list[OxigraphServer] = []
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # servers stopped, folder removed
    try:
        for root_i, root in enumerate(roots):  # the first: the horismos on PYTHONPATH
            _measure(root, root_i, args, sizes, pools_n, per_pool, folder, traces, servers)
    finally:
        for server in servers:
            server.stop()
        shutil.rmtree(folder, ignore_errors=True)


def _measure(root: Path, root_i: int, args: argparse.Namespace, sizes: list[int],
             pools_n: int, per_pool: int, folder: Path, traces: Path,
             servers: list[OxigraphServer]) -> None:
    if root_i:  # the code before, in a fresh interpreter: a module imported stays imported
        argv = [sys.executable, __file__, "--sizes", *map(str, sizes), "--stores",
                *args.stores, "--reps", str(args.reps), "--api-reps", str(args.api_reps)] + (
                    ["--no-cli"] if args.no_cli else [])
        print(f"\n== the code of {root} ==", flush=True)
        subprocess.run(argv, env={**os.environ, "PYTHONPATH": str(root)}, check=True)
        return
    import horismos
    from horismos import Agent, World

    root = Path(horismos.__file__).parent.parent  # what the subprocesses import too
    print(f"horismos from {root}", flush=True)
    agent = Agent.from_files(TTL, tools=TOOLS)
    built: dict[int, tuple[Any, list[Pools], Path]] = {}
    quads: dict[int, int] = {}
    for size in sizes:
        t0 = time.perf_counter()
        nq = folder / f"world-{size}.nq"
        world, pools = build(agent, size, pools_n, per_pool, nq)
        quads[size] = len(world.store)
        built[size] = (world, pools, nq)
        print(f"world ~{size:,}: {quads[size]:,} quads, built in memory and written in "
              f"{time.perf_counter() - t0:.1f} s", flush=True)
    table = Table(sizes, quads)
    table.header()
    pool_i = iter(range(pools_n))
    for name in args.stores:
        spec: dict[int, str] = {}
        worlds: dict[int, Any] = {}
        for size in sizes:
            t0 = time.perf_counter()
            if name == "oxigraph":
                worlds[size] = built[size][0]
                continue
            if name == "disk":
                spec[size] = f"oxigraph:{folder}/disk-{size}"
            else:
                server = OxigraphServer(folder / f"server-{size}")
                servers.append(server)
                spec[size] = server.store
            world = World.open(spec[size])
            world.store.load_file(built[size][2])
            if name == "sparql":  # its world out of RocksDB's memtable, as a server's in use
                world.close()
                server.stop()
                server.start(wait=600)  # replays its log into files first
                world = World.open(spec[size])
            worlds[size] = world
            print(f"{name} ~{size:,}: bulk-loaded in {time.perf_counter() - t0:.1f} s",
                  flush=True)
        mine = next(pool_i)
        in_process(agent, table, name, worlds, {s: built[s][1][mine] for s in sizes},
                   args.api_reps, traces)
        if name != "oxigraph":
            for world in worlds.values():
                world.close()  # a disk store is held by one process at a time
            reopen(table, name, spec, args.api_reps)
            if name == "sparql":  # workers share a world over the protocol only
                worker(agent, table, name, spec, {s: built[s][1][mine] for s in sizes},
                       args.api_reps)
            if not args.no_cli:
                theirs = next(pool_i)
                cli(sys.executable, root, table, name, spec,
                    {s: built[s][1][theirs] for s in sizes}, args.reps, traces)
    print(f"\nfigures: median ms of {args.api_reps} (in process) or {args.reps} (command line) "
          f"after {WARM} warm-up; reads: rows and "
          "quads the stores returned to Python, smallest / largest world")


if __name__ == "__main__":
    main()
