"""What one ``horismos wake`` tick costs as the number of waiting instances grows.

    python benchmarks/bench_wake.py [--waiting 100 1000 5000] [--history 0 50000] [--reps 5]
                                    [--store sparql oxigraph:PATH oxigraph memory]

A tick is ``due_waits`` (what ``wake`` runs before resuming anything): it reads the waiting
instances and decides which are due. Each world holds N waiting instances, written as the
runner writes them (state in ``urn:horismos:instances``, the open wait in a graph of its
own): half wait at an operator wait whose ``horis:until`` does not hold yet (with a stored
variable each), half at a Timer wait not yet past its timeout, and every 50th is due (its
``until`` holds), so a tick decides something and resumes nothing. ``sparql`` is a fresh
``oxigraph serve`` on a free port (benchmarks/bench_stores.py's); ``oxigraph:PATH`` a disk
store in a temporary directory. ``--history H``: the world also holds H steps earlier runs
took (each an activity in its effect graph, as the runner writes it), which a tick must not
read. Prints the median tick per store, N and H.

Run it with ``PYTHONPATH`` set to a tree to measure that tree: it uses only ``due_waits``,
``World.open`` and ``Store.apply``, so an older checkout measures its own ``due_waits``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import tempfile
import time
from pathlib import Path

from rdflib import RDF, XSD, Literal, Namespace, URIRef

from horismos import Agent, World
from horismos._due_waits import due_waits
from horismos._vocab import HORIS, PROV
from horismos._world import INSTANCES

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_stores import filled_world  # noqa: E402

W = Namespace("http://example.org/wake#")
NOW = dt.datetime(2026, 5, 4, 12, 0, tzinfo=dt.UTC)

DEFINITIONS = """
@prefix :      <http://example.org/wake#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .

:Case a owl:Class . :Person a owl:Class .
:Ask a horis:Workflow ; horis:focusType :Case ; horis:start :Answer .
:Answer a horis:WaitStep ; horis:reason "someone answers" ; horis:wake horis:OperatorInput ;
    horis:delivery horis:Silent ; horis:until "?this :answeredBy ?who ." .
:Later a horis:Workflow ; horis:focusType :Case ; horis:start :Sleep .
:Sleep a horis:WaitStep ; horis:reason "a day passes" ; horis:wake horis:Timer ;
    horis:delivery horis:Silent ; horis:timeout "24h" .
"""


def quads(n: int) -> list[tuple]:
    """N waiting instances, their cases and open waits, as the runner writes them."""
    out: list[tuple] = []
    for k in range(n):
        iid = URIRef(f"urn:horismos:instance:{k:032x}")
        case, who = W[f"case{k}"], W[f"person{k % 97}"]
        step = W.Answer if k % 2 == 0 else W.Sleep
        var = URIRef(f"{iid}:variable:who")
        state = [
            (iid, RDF.type, HORIS.Instance),
            (iid, HORIS.workflow, W.Ask if k % 2 == 0 else W.Later),
            (iid, HORIS.focus, case), (iid, HORIS.status, HORIS.Waiting),
            (iid, HORIS.version, Literal(2)), (iid, HORIS.currentStep, step),
            (iid, HORIS.variable, var), (var, HORIS.name, Literal("who")), (var, HORIS.value, who),
        ]
        out += [(*t, INSTANCES) for t in state]
        out += [(case, RDF.type, W.Case, None), (who, RDF.type, W.Person, None)]
        if k % 50 == 0:
            out.append((case, W.answeredBy, who, None))
        g, a = URIRef(f"urn:horismos:wait:{k:032x}"), URIRef(f"urn:horismos:activity:{k:032x}")
        started = Literal((NOW - dt.timedelta(hours=1)).isoformat(), datatype=XSD.dateTime)
        wait = [(g, RDF.type, PROV.Entity), (g, PROV.wasGeneratedBy, a),
                (a, RDF.type, HORIS.StepExecution), (a, RDF.type, PROV.Activity),
                (a, HORIS.step, step), (a, HORIS.instance, iid),
                (a, PROV.startedAtTime, started)]
        out += [(*t, g) for t in wait]
    return out


def history(h: int) -> list[tuple]:
    """H completed steps of earlier runs, each an activity in its own effect graph."""
    out: list[tuple] = []
    at = Literal((NOW - dt.timedelta(days=2)).isoformat(), datatype=XSD.dateTime)
    for k in range(h):
        g = URIRef(f"urn:horismos:effect:{k:032x}")
        a = URIRef(f"urn:horismos:activity:e{k:031x}")
        iid = URIRef(f"urn:horismos:instance:e{k:031x}")
        steps = [(g, PROV.wasGeneratedBy, a), (a, RDF.type, HORIS.StepExecution),
                 (a, HORIS.step, W.Done), (a, HORIS.instance, iid),
                 (a, PROV.startedAtTime, at), (a, PROV.endedAtTime, at)]
        out += [(*t, g) for t in steps]
    return out


def tick(agent: Agent, world: World, reps: int) -> tuple[float, int]:
    due_waits(agent.definitions, world.store, NOW)  # warm-up: prepared queries, caches
    times, due = [], 0
    for _ in range(reps):
        t0 = time.perf_counter()
        due = len(due_waits(agent.definitions, world.store, NOW))
        times.append(time.perf_counter() - t0)
    return statistics.median(times), due


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--waiting", type=int, nargs="+", default=[100, 1_000, 5_000])
    parser.add_argument("--store", nargs="+", default=["sparql", "oxigraph:PATH"],
                        choices=["sparql", "oxigraph:PATH", "oxigraph", "memory"])
    parser.add_argument("--history", type=int, nargs="+", default=[0],
                        help="steps of earlier runs the world also holds")
    parser.add_argument("--reps", type=int, default=5, help="timed ticks (median printed)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        defs = Path(tmp) / "wake.ttl"
        defs.write_text(DEFINITIONS)
        agent = Agent.from_files(defs)
        print(f"{'store':<14} {'waiting':>8} {'history':>8} {'due':>5} {'tick (median)':>14}")
        sizes = [(n, h) for n in args.waiting for h in args.history]
        for kind in args.store:
            for n, h in sizes:
                with filled_world(kind, tmp, quads(n) + history(h)) as world:
                    seconds, due = tick(agent, world, args.reps)
                    print(f"{kind:<14} {n:>8} {h:>8} {due:>5} {seconds * 1000:>11.1f} ms",
                          flush=True)

if __name__ == "__main__":
    main()
