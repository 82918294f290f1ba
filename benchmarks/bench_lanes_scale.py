"""Each lane a user runs on one event, at ~20,000 and ~2,000,000 triples, on the stores that
keep a world between commands: a run should cost what it touches, not what the world holds.

    python benchmarks/bench_lanes_scale.py [--sizes 20000 2000000] [--reps 3] [--serve]
                                           [--stores oxigraph journal sparql] [--worker]
                                           [--lanes WORD ...] [--cache DIR]

The world is benchmarks/bench_lanes.py's (a service's world after a while: cases of a small
domain ontology, :Case, :Item, :Person, :Option, each run once through a one-step workflow,
~44 quads a case; a few instances waiting for an operator and for an approval; fresh cases),
built in memory once per size, written as N-Quads and bulk-loaded into ``oxigraph:PATH`` and
``journal:PATH`` folders of its own, and into a real ``oxigraph serve`` for ``sparql`` (restarted
once loaded, as bench_lanes does). ``--worker`` (sparql): ``submit --focus --wait`` to a
``horismos worker`` (a process of its own) on a ``redis-server``, the submit's cost timed.

Each lane is the ``horismos`` command a user runs, through ``horismos._cli.main`` in this
process (the ~0.6 s of imports are the same at every size, and noise on a shared machine
would drown the rest), the sizes taking turns, one warm-up first. Its cost is the CPU time
and the wall time of the command, less the time spent opening stores (``open_store``, timed
as it is called: the journal store reads its whole snapshot into memory on open, which is
what the journal store is; ``World.open + close`` is its own row). ``reads``: the rows and
quads the stores handed Python (bench_lanes's counting store), smallest / largest world.

Lanes: ``run --focus``; ``run --focus --no-again`` (a focus that completed); a run that waits
(an operator's answer), then ``resume --facts``; ``wake`` with nothing due; ``approve`` then
``resume``; ``tools call``; ``tools list``; ``tools discover`` (with the world); ``instances
--status waiting``; ``trace show``; ``validate --store`` (the one lane allowed to read the
world; it reads a few rows). ``--serve``: one MCP ``tools/call`` through ``horismos serve``
(a process of its own over stdio, the call alone timed, after the server opened its world).

Prints each lane's median ms per size (CPU and wall, store opens left out), the ratio of the
largest world's to the smallest's (CPU, wall), the opens' ms and the rows read; anything but
``validate`` and the open past ~1.5x reads more than it touches. ``tools list`` opens
no store: its ratio is the machine's noise between the sizes. ``--cache DIR`` keeps the built
worlds and loaded stores there (a 2M-triple world takes ~4 min to build, ~2.5 min to load
into ``oxigraph:PATH``), with the cases not yet used, for the next run.

Figures (2026-12-07, 2 shared cores at load 8-10, ms CPU at 20k -> 2M quads, stores' opens
left out; the rows read were the same at both sizes in every lane and store):
journal (``--reps 2``): run --focus 124 -> 135, --no-again 133 -> 147, waits + resume 280 ->
298, wake 172 -> 145, approve + resume 344 -> 289, tools call 191 -> 172, discover 149 -> 136,
instances --status waiting 132 -> 160, serve's MCP call 42 -> 48 ms wall. Its open is the
world: World.open + close 76 -> 8,240 ms CPU (py-spy: 64 % of a 2M open + close in
pyoxigraph's load of the snapshot, 11 % in freeing it at close, ~1.7 s CPU).
oxigraph:PATH (``--reps 3``): run --focus 129 -> 139, --no-again 125 -> 135, waits + resume
318 -> 265, wake 136 -> 158, approve + resume 307 -> 339, tools call 177 -> 185, discover
185 -> 183, instances 166 -> 208 (run six times each in one process: 138-162 and 145-176),
tools list (no store) 132 -> 144, serve's call 22 -> 29 ms wall; World.open + close 29 -> 30.
sparql (``--reps 2 --worker``; CPU of the client, the server's in wall): run --focus 194 ->
162 (wall 967 -> 659), --no-again 111 -> 115, waits + resume 325 -> 323, wake 148 -> 125,
approve + resume 365 -> 347, tools call 195 -> 192, discover 135 -> 175 (wall 214 -> 269),
instances 181 -> 154, submit --wait to a worker 146 -> 140 (wall 532 -> 486), serve's call
32 -> 35 ms wall. Loading 2M quads into the server took 13 min (its log replayed on restart).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import os
import pickle
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "history"))
sys.path.insert(0, str(HERE.parent / "tests"))

from bench_lanes import TOOLS, TOOLS_PY, TTL, H, Pools, build, counting_store  # noqa: E402
from oxigraph_server import OxigraphServer  # noqa: E402  (``oxigraph serve``, up when made)

WARM = 1


@contextlib.contextmanager
def timed_opens() -> Iterator[tuple[list[Any], list[float]]]:
    """Every store opened meanwhile, counted (its reads), and the CPU and wall seconds its
    opening took, so that a lane's cost can leave them out."""
    import horismos._claims
    import horismos._world

    opened: list[Any] = []
    spent = [0.0, 0.0]
    real_open = horismos._world.open_store

    def counted_open(store: str, **kw: Any) -> Any:
        c0, w0 = time.process_time(), time.perf_counter()
        inner = real_open(store, **kw)
        spent[0] += time.process_time() - c0
        spent[1] += time.perf_counter() - w0
        opened.append(counting_store(inner))
        return opened[-1]

    horismos._world.open_store = counted_open  # type: ignore[assignment]
    horismos._claims.open_store = counted_open  # type: ignore[assignment]
    try:
        yield opened, spent
    finally:
        horismos._world.open_store = real_open  # type: ignore[assignment]
        horismos._claims.open_store = real_open  # type: ignore[assignment]


class Lane:
    """One command's cost at each size: CPU ms and wall ms (opens left out), rows read."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.cpu: dict[int, list[float]] = {}
        self.wall: dict[int, list[float]] = {}
        self.opens: dict[int, list[float]] = {}
        self.reads: dict[int, int] = {}


def command(argv: list[str], expect: tuple[int, ...] = (0,)) -> tuple[float, float, float, int]:
    """``horismos ARGV`` in this process: CPU s, wall s (store opens left out), opens' wall s,
    rows read."""
    from horismos._cli import main as horismos_main

    out = io.StringIO()
    gc.collect()
    with timed_opens() as (opened, spent):
        c0, w0 = time.process_time(), time.perf_counter()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                code = horismos_main(argv)
        finally:
            cpu, wall = time.process_time() - c0, time.perf_counter() - w0
            for store in opened:  # as the process's exit would (a disk store is locked)
                with contextlib.suppress(Exception):
                    store.inner.close()
    assert code in expect, (argv, code, out.getvalue()[-2000:])
    rows = sum(store.rows for store in opened)
    return cpu - spent[0], wall - spent[1], spent[1], rows


def measure(sizes: list[int], reps: int, label: str,
            argv: Callable[[int], list[str] | Callable[[], tuple[float, float, float, int]]],
            expect: tuple[int, ...] = (0,)) -> Lane:
    lane = Lane(label)
    for rep in range(reps + WARM):
        for size in sizes if rep % 2 == 0 else sizes[::-1]:
            made = argv(size)
            cpu, wall, opens, rows = made() if callable(made) else command(made, expect)
            if rep >= WARM:
                lane.cpu.setdefault(size, []).append(cpu * 1000)
                lane.wall.setdefault(size, []).append(wall * 1000)
                lane.opens.setdefault(size, []).append(opens * 1000)
                lane.reads[size] = rows
    return lane


def show(store: str, lane: Lane, sizes: list[int]) -> None:
    cpu = [statistics.median(lane.cpu[s]) for s in sizes]
    wall = [statistics.median(lane.wall[s]) for s in sizes]
    opens = [statistics.median(lane.opens[s]) for s in sizes]
    ratio = wall[-1] / wall[0] if wall[0] else float("nan")
    flag = "  <-" if ratio > 1.5 else ""
    print(f"{store:<8} {lane.label:<40}"
          + "".join(f"{c:>9.1f}{w:>9.1f}" for c, w in zip(cpu, wall, strict=True))
          + f"  x{cpu[-1] / cpu[0] if cpu[0] else float('nan'):5.2f} x{ratio:5.2f}"
          + f"  {' / '.join(f'{o:.0f}' for o in opens)}"
          + f"  {' / '.join(f'{lane.reads.get(s, 0):,}' for s in sizes)}{flag}", flush=True)


def serve_call(spec: str, case: Any) -> Callable[[], tuple[float, float, float, int]]:
    """One MCP ``tools/call`` through ``horismos serve`` over stdio, the call alone timed."""
    def once() -> tuple[float, float, float, int]:
        import anyio
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "horismos", "serve", str(TTL), "--tools", str(TOOLS_PY),
                  "--store", spec],
            env={**os.environ}, cwd=str(HERE / "history"))
        took = [0.0]

        async def go() -> None:
            with open(os.devnull, "w") as quiet:  # its warnings and goodbye, not the figures
                await call(quiet)

        async def call(quiet: Any) -> None:
            async with stdio_client(params, errlog=quiet) as (r, w), \
                    ClientSession(r, w) as session:
                await session.initialize()
                await session.list_tools()
                t0 = time.perf_counter()
                result = await session.call_tool("history.mark", {"case": str(case)})
                took[0] = time.perf_counter() - t0
                assert not getattr(result, "is_error", getattr(result, "isError", False)), result
        anyio.run(go)
        return 0.0, took[0], 0.0, 0
    return once


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000, 2_000_000])
    parser.add_argument("--stores", nargs="+", default=["oxigraph", "journal"],
                        choices=["oxigraph", "journal", "sparql"])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--lanes", nargs="*", help="only the lanes whose label holds one of these")
    parser.add_argument("--serve", action="store_true", help="also one MCP call through serve")
    parser.add_argument("--worker", action="store_true",
                        help="on sparql: also submit --wait to a horismos worker (redis-server)")
    parser.add_argument("--cache", type=Path, help="keep the built worlds here, to reuse")
    args = parser.parse_args()

    from horismos import Agent, World

    sizes = sorted(args.sizes)
    agent = Agent.from_files(TTL, tools=TOOLS)
    folder = Path(tempfile.mkdtemp(prefix="bench_lanes_scale-"))
    cache = args.cache or folder
    cache.mkdir(parents=True, exist_ok=True)
    per_pool = args.reps + WARM
    servers: list[OxigraphServer] = []
    pools_n = len(args.stores)
    try:
        built: dict[int, tuple[list[Pools], Path]] = {}
        for size in sizes:
            nq, kept = cache / f"world-{size}.nq", cache / f"pools-{size}.pkl"
            if not (nq.exists() and kept.exists()):
                t0 = time.perf_counter()
                _, pools = build(agent, size, pools_n * 3, per_pool * 2, nq)
                kept.write_bytes(pickle.dumps([(p.fresh, p.asks, p.approvals) for p in pools]))
                print(f"world ~{size:,} built in {time.perf_counter() - t0:.1f} s", flush=True)
            built[size] = ([Pools(*p) for p in pickle.loads(kept.read_bytes())], nq)
        print(f"\n{'store':<8} {'lane':<40}"
              + "".join(f"{f'cpu@{s:,}':>9}{f'wall@{s:,}':>9}" for s in sizes)
              + "   cpu x  wall x  open ms  reads")
        for k, name in enumerate(args.stores):
            spec = {s: f"{name}:{cache}/{name}-{s}" for s in sizes}
            left = {s: cache / f"{name}-{s}.pools.pkl" for s in sizes}
            if name == "sparql":  # a server a size, its folder kept by --cache
                for size in sizes:
                    servers.append(OxigraphServer(cache / f"sparql-{size}"))
                    spec[size] = servers[-1].store
            pools: dict[int, list[Pools]] = {}
            for size in sizes:
                if left[size].exists():  # kept by --cache, with the cases not yet used
                    pools[size] = [Pools(*p) for p in pickle.loads(left[size].read_bytes())]
                    continue
                t0 = time.perf_counter()
                world = World.open(spec[size])
                world.store.load_file(built[size][1])
                world.close()
                if name == "sparql":  # out of RocksDB's memtable, as a server's in use
                    server = servers[-len(sizes) + sizes.index(size)]
                    server.stop()
                    server.start(wait=600)
                print(f"# {name} ~{size:,}: loaded in {time.perf_counter() - t0:.1f} s",
                      flush=True)
                pools[size] = built[size][0][k::len(args.stores)]  # its own
            try:
                with workers(spec, folder) if args.worker and name == "sparql" else \
                        contextlib.nullcontext():
                    lanes(agent, name, spec, pools, sizes, args)
            finally:
                for size in sizes:
                    left[size].write_bytes(pickle.dumps(
                        [(p.fresh, p.asks, p.approvals) for p in pools[size]]))
    finally:
        for server in servers:
            server.stop()
        shutil.rmtree(folder, ignore_errors=True)  # the stores too, unless --cache kept them


def lanes(agent: Any, name: str, spec: dict[int, str], pools: dict[int, list[Pools]],
          sizes: list[int], args: argparse.Namespace) -> None:
    """Every lane on one store's worlds."""
    from horismos import World

    defs, tools = str(TTL), ["--tools", str(TOOLS_PY)]
    traces = Path(tempfile.mkdtemp(prefix="traces-"))
    for s in sizes:  # one list each, used up in place (what --cache keeps is what is left)
        pools[s][0].fresh = [f for p in pools[s] for f in p.fresh]
        pools[s][0].approvals = [a for p in pools[s] for a in p.approvals]
        del pools[s][1:]
    fresh = {s: pools[s][0].fresh for s in sizes}
    approvals = {s: pools[s][0].approvals for s in sizes}
    done: dict[int, list[str]] = {s: [] for s in sizes}

    def trace(size: int) -> str:
        return str(traces / f"{name}-{size}.jsonl")

    def run(size: int) -> list[str]:
        focus = str(fresh[size].pop())
        done[size].append(focus)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(trace(size))
        return ["run", defs, *tools, "--workflow", str(H.WfMark), "--focus", focus,
                "--store", spec[size], "--trace", trace(size), "-q"]

    def no_again(size: int) -> list[str]:
        return ["run", defs, *tools, "--workflow", str(H.WfMark), "--focus", done[size][0],
                "--no-again", "--store", spec[size], "-q"]

    def waits_then_resume(size: int) -> Callable[[], tuple[float, float, float, int]]:
        case = fresh[size].pop()

        def both() -> tuple[float, float, float, int]:
            a = command(["run", defs, *tools, "--workflow", str(H.WfOp), "--focus", str(case),
                         "--store", spec[size], "-q"], expect=(0, 3))
            iid = _waiting_instance(spec[size], case)
            b = command(["resume", defs, *tools, "--instance", iid, "--facts",
                         f'<{case}> <{H.answer}> "yes" .', "--store", spec[size], "-q"])
            return tuple(x + y for x, y in zip(a, b, strict=True))  # type: ignore[return-value]
        return both

    def approve_resume(size: int) -> Callable[[], tuple[float, float, float, int]]:
        iid, fingerprint = approvals[size].pop()

        def both() -> tuple[float, float, float, int]:
            a = command(["approve", defs, "--instance", str(iid), "--fingerprint", fingerprint,
                         "--store", spec[size]])
            b = command(["resume", defs, *tools, "--instance", str(iid), "--store", spec[size],
                         "-q"])
            return tuple(x + y for x, y in zip(a, b, strict=True))  # type: ignore[return-value]
        return both

    def call(size: int) -> list[str]:
        return ["tools", "call", "history.mark", defs, *tools, "--args",
                json.dumps({"case": str(fresh[size].pop())}), "--store", spec[size]]

    table: list[tuple[str, Callable[[int], Any], tuple[int, ...]]] = [
        ("run --focus", run, (0,)),
        ("run --focus --no-again (completed)", no_again, (0,)),
        ("run (waits) + resume --facts", waits_then_resume, (0,)),
        ("wake (nothing due)", lambda s: ["wake", defs, *tools, "--store", spec[s], "-q"], (0,)),
        ("approve + resume", approve_resume, (0,)),
        ("tools call", call, (0,)),
        ("tools list", lambda s: ["tools", "list", defs, *tools], (0,)),
        ("tools discover --store", lambda s: ["tools", "discover", "mark a case", defs, *tools,
                                              "--store", spec[s]], (0, 1)),
        ("instances --status waiting", lambda s: ["instances", defs, "--status", "waiting",
                                                  "--store", spec[s]], (0,)),
        ("trace show", lambda s: ["trace", "show", trace(s)], (0,)),
        ("World.open + close", lambda s: _open_close(spec[s]), (0,)),
        ("validate --store", lambda s: ["validate", defs, *tools, "--store", spec[s]], (0, 1)),
    ]
    for label, argv, expect in table:
        if args.lanes and not any(word in label for word in args.lanes):
            continue
        show(name, measure(sizes, args.reps, label, argv, expect), sizes)
    if args.serve:
        show(name, measure(sizes, args.reps, "serve: one MCP tools/call (wall only)",
                           lambda s: serve_call(spec[s], fresh[s].pop())), sizes)
    if args.worker and name == "sparql":
        show(name, measure(sizes, args.reps, "submit --wait, a worker drives it",
                           lambda s: submit_wait(spec[s], fresh[s].pop())), sizes)
    shutil.rmtree(traces, ignore_errors=True)
    del World


def submit_wait(spec: str, case: Any) -> list[str]:
    """``submit --focus --wait``: enqueued, taken by the worker of this store, waited for."""
    return ["submit", str(TTL), "--workflow", str(H.WfMark), "--focus", str(case), "--store",
            spec, "--broker", BROKERS[spec], "--wait", "60"]


BROKERS: dict[str, str] = {}  # each store's worker's broker


@contextlib.contextmanager
def workers(spec: dict[int, str], folder: Path) -> Iterator[None]:
    """A redis-server, and one ``horismos worker`` a store on a database of its own."""
    import subprocess

    from redis_server import RedisServer

    redis = RedisServer(folder / "redis")
    started = []
    try:
        for k, store in enumerate(spec.values()):
            BROKERS[store] = redis.url.rsplit("/", 1)[0] + f"/{k}"
            started.append(subprocess.Popen(
                [sys.executable, "-m", "horismos", "worker", str(TTL), "--tools", str(TOOLS_PY),
                 "--store", store, "--broker", BROKERS[store]], cwd=HERE / "history",
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                stdin=subprocess.DEVNULL))
        time.sleep(10)  # imports, definitions, the broker reached
        yield
    finally:
        for w in started:
            w.terminate()
        for w in started:
            w.wait(30)
        redis.stop()


def _open_close(spec: str) -> Callable[[], tuple[float, float, float, int]]:
    def once() -> tuple[float, float, float, int]:
        from horismos import World

        c0, w0 = time.process_time(), time.perf_counter()
        World.open(spec).close()
        return time.process_time() - c0, time.perf_counter() - w0, 0.0, 0
    return once


def _waiting_instance(spec: str, case: Any) -> str:
    from horismos import World
    from horismos._instances import list_instances

    world = World.open(spec)
    try:
        for row in list_instances(world.store, "waiting"):
            if str(row.focus) == str(case):
                return str(row.instance)
    finally:
        world.close()
    raise AssertionError(f"no waiting instance of {case}")


if __name__ == "__main__":
    main()
