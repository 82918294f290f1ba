"""What a run path costs as the world's run history grows: what it touches, not what it holds.

    python benchmarks/bench_history.py [--instances 1000 20000] [--reps 11] [--store oxigraph]
                                       [--waiting 0]

A service runs one workflow instance per event, so its world keeps every instance it ever ran:
the instance, its effect graph, its PROV activities. Worlds here are grown that way: N cases
(N = 1,000 and 20,000 by default), each run once through a one-step workflow (``run --all``), so
each world holds N completed instances (19 quads each, besides the case's 25) before anything is
timed; then fresh cases for the paths below (10 a repetition). The workflows are
benchmarks/history/history.ttl; their tools, small pure functions of history/history.py passed as
``tools={…}``, are declared ``horis:inline true`` (called on the run's thread, no worker hop).
Every run and resume writes a trace file, as a service's would.

Each path is timed at every history size, alternately (the sizes take turns within each
repetition, in reversed order every other one, all worlds held in this one process), so drift
on a shared machine falls on both; one warm-up repetition is not counted. Prints the median per
size and its ratio to the smallest history, one line per path:

- a single-focus run of a plain one-step workflow;
- a run whose precondition is written label-first (``?o rdfs:label ?l . ?this :owner ?o .
  OPTIONAL { ?this :note ?n }``): not ``?this`` first, and an OPTIONAL, so the SPARQL query path;
- a run of unusual preconditions (OPTIONAL + FILTER NOT EXISTS; property path + UNION; inverse
  path + BIND);
- a ProposalStep's candidates (a query, ranked lexically) and the pick;
- a forEach step (one call per item of the case, 3);
- a Timer wait: reached (run -> waiting), then resumed when due;
- an operator wait: reached, then resumed with its facts, the instance given by its full IRI;
- an approval: run -> waiting, ``agent.approve``, resume (the approved call);
- ``due_waits`` (what ``horismos wake`` runs), with one waiting instance in the world (and
  the ``--waiting`` ones, which are not due);
- ``find_instance`` by short id (what ``resume``/``approve`` do with the id a run prints): an
  index look-up (``_stored_instances.short_id_quad``);
- ``tools call`` of an idempotent tool, and of one that is not (approved: its intent and
  calls in doubt are looked up).

A path should cost what it touches: every ratio should stay near 1. ``--rows`` (with ``--store
memory``) prints the triples each path reads instead of its time: the measure that does not
drift with the machine's load, and where rdflib's planner (which orders a query's patterns
before its bound values are known) reads what Oxigraph's does not.

``--store disk`` holds each world on disk (``oxigraph:PATH``, in a temporary folder), where a
run first asks whether its focus has an unfinished instance to continue; ``--waiting N`` leaves
N more history cases waiting (an operator wait each), as a service's world holds the instances
still waiting for a person. A run asking after its focus read every one of them (Oxigraph
joined the statuses' VALUES block first): ``--store disk --instances 1000 10000 --waiting 200
2000 --reps 5`` measured the plain single-focus run at x3.55 (6.6 / 23.6 ms) before and x1.28
(6.0 / 7.6 ms) after, a run reaching an operator wait x4.29 and x1.21. ``due_waits`` then reads
every waiting instance, four queries each: it grows with the waits, by design.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from rdflib import RDF, RDFS, XSD, Literal, Namespace, URIRef

from horismos import Agent, Trace, World
from horismos._due_waits import due_waits
from horismos._stored_instances import find_instance

HERE = Path(__file__).resolve().parent / "history"
sys.path.insert(0, str(HERE))
from history import TOOLS  # noqa: E402  (the tools history.ttl declares)

H = Namespace("http://example.org/history#")
WARM = 1


# -- the worlds -------------------------------------------------------------------------------

def case_quads(n: int, prefix: str) -> Iterator[tuple[URIRef, URIRef, object, None]]:
    """``n`` cases: an owner with a label, 3 ranked items, 3 labelled options."""
    for i in range(n):
        case, owner = H[f"{prefix}case{i}"], H[f"{prefix}person{i}"]
        yield case, RDF.type, H.Case, None
        yield case, H.owner, owner, None
        yield owner, RDF.type, H.Person, None
        yield owner, RDFS.label, Literal(f"Person {prefix}{i}"), None
        for j, label in enumerate(["fast cheap", "slow", "cheap"]):
            item, option = H[f"{prefix}item{i}_{j}"], H[f"{prefix}opt{i}_{j}"]
            yield case, H.item, item, None
            yield item, RDF.type, H.Item, None
            yield item, H.rank, Literal(j, datatype=XSD.integer), None
            yield case, H.option, option, None
            yield option, RDF.type, H.Option, None
            yield option, RDFS.label, Literal(label), None
            yield option, H.ok, Literal(True), None


def build(agent: Agent, instances: int, fresh: int, store: str,
          waiting: int = 0) -> tuple[World, float]:
    """A world holding ``instances`` completed WfMark instances and ``waiting`` WfOp ones
    waiting for an operator, then ``fresh`` new cases."""
    t0 = time.perf_counter()
    world = World.open(store)
    world.store.load(case_quads(instances, "h"))
    run = agent.run(world, workflow=H.WfMark, all=True, keep=False)
    assert run.counts == {"completed": instances}, run.counts
    if waiting:
        world.store.load(case_quads(waiting, "w"))
        for i in range(waiting):
            assert agent.run(world, workflow=H.WfOp, focus=H[f"wcase{i}"]).status == "waiting"
    world.store.load(case_quads(fresh, "f"))
    return world, time.perf_counter() - t0


def quads(world: World) -> int:
    store = world.store
    return len(store) if hasattr(store, "__len__") else sum(1 for _ in store.quads())


class Fresh:
    """Each world's fresh cases, handed out once each (a marked case would not run again)."""

    def __init__(self, n: int) -> None:
        self.n, self.next_index = n, 0

    def __call__(self) -> URIRef:
        assert self.next_index < self.n, "out of fresh cases"
        self.next_index += 1
        return H[f"fcase{self.next_index - 1}"]


# -- timing -----------------------------------------------------------------------------------

def alternate(label: str, worlds: dict[int, World], fn: Callable[[World, int], None],
              reps: int, width: int) -> None:
    """Time ``fn(world, size)`` over the worlds in turn; print medians and ratios."""
    times: dict[int, list[float]] = {size: [] for size in worlds}
    sizes = list(worlds)
    for rep in range(reps + WARM):
        for size in sizes if rep % 2 == 0 else sizes[::-1]:
            gc.collect()
            t0 = time.perf_counter()
            fn(worlds[size], size)
            elapsed = time.perf_counter() - t0
            if rep >= WARM:
                times[size].append(elapsed)
    medians = [statistics.median(times[size]) * 1000 for size in sizes]
    ratios = "  ".join(f"x{m / medians[0]:.2f}" for m in medians[1:])
    print(f"{label:<{width}} " + " ".join(f"{m:>12.2f}" for m in medians) + f"  {ratios}",
          flush=True)


def rows_read(label: str, worlds: dict[int, World], fn: Callable[[World, int], None],
              reps: int, width: int) -> None:
    """The triples the ``memory`` store (rdflib) handed its readers during ``fn(world, size)``,
    once per world after a warm-up: what a path reads, not how long it takes."""
    counts: dict[int, int] = {}
    for rep in range(WARM + 1):
        for size, world in worlds.items():
            inner = world.store._ds.store  # type: ignore[attr-defined]
            triples, read = inner.triples, [0]

            def counted(*args: object, _t: Callable = triples, _r: list = read, **kw: object):
                for t in _t(*args, **kw):
                    _r[0] += 1
                    yield t

            inner.triples = counted
            try:
                fn(world, size)
            finally:
                del inner.triples
            if rep >= WARM:
                counts[size] = read[0]
    first = max(counts[next(iter(counts))], 1)
    ratios = "  ".join(f"x{counts[size] / first:.2f}" for size in list(counts)[1:])
    print(f"{label:<{width}} " + " ".join(f"{counts[s]:>12,}" for s in counts) + f"  {ratios}",
          flush=True)


def short_id(iid: URIRef) -> str:
    """The short id a run prints: the first 8 characters of the instance IRI's last part."""
    return str(iid).rsplit(":", 1)[-1][:8]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--instances", type=int, nargs="+", default=[1_000, 20_000],
                        help="completed instances in each world's history")
    parser.add_argument("--reps", type=int, default=11, help="timed repetitions of each path")
    parser.add_argument("--store", default="oxigraph", choices=["oxigraph", "memory", "disk"],
                        help="an in-process store (every world is held at once); disk: "
                        "oxigraph:PATH in a temporary folder")
    parser.add_argument("--waiting", type=int, nargs="+", default=[0],
                        help="instances left waiting in each world's history (one number for "
                        "all, or one per --instances)")
    parser.add_argument("--rows", action="store_true",
                        help="count the triples each path reads instead of timing it (--store "
                        "memory: rdflib's store is counted)")
    args = parser.parse_args()
    if args.rows and args.store != "memory":
        parser.error("--rows counts what the memory store reads: give --store memory")
    if args.rows:
        args.reps = 1
    waiting = dict(zip(args.instances, args.waiting * len(args.instances)
                       if len(args.waiting) == 1 else args.waiting, strict=True))
    folder = tempfile.TemporaryDirectory()
    agent = Agent.from_files(HERE / "history.ttl", tools=TOOLS)
    fresh_n = 10 * (args.reps + WARM) + 1  # 10 paths take a fresh case a repetition; a seed

    worlds: dict[int, World] = {}
    fresh: dict[int, Fresh] = {}
    for n in args.instances:
        store = f"oxigraph:{folder.name}/w{n}" if args.store == "disk" else args.store
        world, seconds = build(agent, n, fresh_n, store, waiting[n])
        worlds[n], fresh[n] = world, Fresh(fresh_n)
        print(f"history of {n:,} completed instances and {waiting[n]:,} waiting: "
              f"{quads(world):,} quads, built in {seconds:.1f} s", flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        def trace(size: int) -> Trace:  # one scratch trace a size, each run's over the last
            return Trace(Path(tmp) / f"{size}.jsonl", overwrite=True)

        def run(world: World, size: int, workflow: URIRef, status: str,
                focus: URIRef | None = None) -> URIRef:
            r = agent.run(world, workflow=workflow, focus=focus or fresh[size](),
                          trace=trace(size))
            assert r.status == status, (workflow, r.status, r.error)
            return r.instances[0].instance

        def resume(world: World, size: int, iid: URIRef, facts: str | None = None) -> None:
            r = agent.resume(world, str(iid), facts, trace=trace(size))  # by full IRI
            assert r.status == "completed", (iid, r.status, r.error)

        def completes(workflow: URIRef) -> Callable[[World, int], None]:
            def fn(world: World, size: int) -> None:
                run(world, size, workflow, "completed")
            return fn

        # one waiting instance in each world (a Timer wait, due 1 ms after it was reached):
        # what due_waits finds and find_instance looks up; every other wait below is resumed
        seed = {size: run(w, size, H.WfTimer, "waiting") for size, w in worlds.items()}
        time.sleep(0.01)

        def wake(world: World, size: int) -> None:
            due = due_waits(agent.definitions, world.store, dt.datetime.now(dt.UTC))
            assert due == [seed[size]], due

        def find_short(world: World, size: int) -> None:
            assert find_instance(world.store, short_id(seed[size])) == seed[size]

        timers: dict[int, list[URIRef]] = {size: [] for size in worlds}
        asks: dict[int, list[tuple[URIRef, URIRef]]] = {size: [] for size in worlds}
        approvals: dict[int, list[tuple[URIRef, str]]] = {size: [] for size in worlds}
        approved: dict[int, list[URIRef]] = {size: [] for size in worlds}

        def timer_run(world: World, size: int) -> None:
            timers[size].append(run(world, size, H.WfTimer, "waiting"))

        def timer_resume(world: World, size: int) -> None:
            resume(world, size, timers[size].pop(0))

        def ask_run(world: World, size: int) -> None:
            case = fresh[size]()
            asks[size].append((run(world, size, H.WfOp, "waiting", case), case))

        def ask_resume(world: World, size: int) -> None:
            iid, case = asks[size].pop(0)
            resume(world, size, iid, f'<{case}> <{H.answer}> "yes" .')

        def approval_run(world: World, size: int) -> None:
            r = agent.run(world, workflow=H.WfApp, focus=fresh[size](), trace=trace(size))
            assert r.status == "waiting", (r.status, r.error)
            fingerprint = (r.brief or "").split("Fingerprint: ")[1].split()[0]
            approvals[size].append((r.instances[0].instance, fingerprint))

        def approve(world: World, size: int) -> None:
            iid, fingerprint = approvals[size].pop(0)
            agent.approve(world, str(iid), fingerprint)
            approved[size].append(iid)

        def approval_resume(world: World, size: int) -> None:
            resume(world, size, approved[size].pop(0))

        def tools_call(tool: str) -> Callable[[World, int], None]:
            def fn(world: World, size: int) -> None:  # `horismos tools call`, approved
                args = {"case": str(fresh[size]())}
                fingerprint = agent.catalog.approve(tool, args)
                r = agent.catalog.call(tool, args, world, approval=fingerprint)
                assert r.status == "completed", (r.status, r.error)
            return fn

        what = (f"triples read (after {WARM} warm-up), memory" if args.rows
                else f"median ms of {args.reps} (after {WARM} warm-up), {args.store}")
        print(f"\n{what}; ratio to {args.instances[0]:,} instances")
        paths: list[tuple[str, Callable[[World, int], None]]] = [
            ("run: plain workflow, single focus", completes(H.WfMark)),
            ("run: precondition label-first (SPARQL query)", completes(H.WfLabelFirst)),
            ("run: OPTIONAL / path+UNION / ^path+BIND", completes(H.WfPre)),
            ("run: ProposalStep candidates + pick", completes(H.WfProp)),
            ("run: forEach step (3 items)", completes(H.WfEach)),
            ("run -> waiting: Timer wait reached", timer_run),
            ("resume: Timer wait due", timer_resume),
            ("run -> waiting: operator wait", ask_run),
            ("resume: operator wait, facts, full IRI", ask_resume),
            ("run -> waiting: approval", approval_run),
            ("agent.approve", approve),
            ("resume: approved call", approval_resume),
            ("due_waits (horismos wake), 1 due", wake),
            ("find_instance(short id)", find_short),
            ("tools call: idempotent (history.mark)", tools_call("history.mark")),
            ("tools call: not idempotent, approved (history.send)", tools_call("history.send")),
        ]
        width = max(len(label) for label, _ in paths)
        print(f"{'path':<{width}} " + " ".join(f"{f'{n:,} inst':>12}" for n in args.instances))
        for label, fn in paths:
            if fn is timer_resume:
                time.sleep(0.01)  # every Timer wait reached is due (1 ms) before it resumes
            (rows_read if args.rows else alternate)(label, worlds, fn, args.reps, width)
    for world in worlds.values():
        world.close()
    folder.cleanup()


if __name__ == "__main__":
    main()
