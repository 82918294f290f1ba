"""``due_waits`` (what ``horismos wake`` runs) reads every waiting instance at once.

It used to make four requests an instance (list, read the instance, find its open wait, ask
its wait's ``horis:until``); it now asks a few queries a wait step. These tests hold it to
the same answer as that per-instance reading, on every store kind, over instances written
as the runtime writes them but varied past what one run leaves: variables that differ or
are literals or blank nodes, a stored ``this``, no open wait, a closed one, two open ones, a
wait at a step the definitions do not declare, timeouts on either side; and count the
requests a tick makes.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Mapping
from typing import Any

import pytest
from rdflib import RDF, XSD, BNode, Literal, Namespace, URIRef
from rdflib.term import Node

from horismos import UsageError
from horismos._due_waits import due_waits
from horismos._instances import list_instances
from horismos._model import WaitStep
from horismos._stored_instances import open_wait, read_instance
from horismos._stores import Change, Store
from horismos._stores.base import WrappedStore
from horismos._vocab import HORIS, PROV
from horismos._world import INSTANCES

EX = Namespace("http://example.org/clinic#")
NOW = dt.datetime(2026, 5, 4, 12, 0, tzinfo=dt.UTC)

WAITS = """
:Approve a horis:WaitStep ; horis:wake horis:OperatorInput ;
    horis:until "?this :approvedBy ?approver ." ; horis:timeout "2h" .
:Level a horis:WaitStep ; horis:wake horis:System ;
    horis:until "?this :level ?min ." .
:Timer a horis:WaitStep ; horis:wake horis:Timer ; horis:timeout "1h" .
:Clear a horis:WaitStep ; horis:wake horis:System ;
    horis:until "?this a :Patient . FILTER NOT EXISTS { ?this :blockedBy ?approver }" .
:Unrejected a horis:WaitStep ; horis:wake horis:System ;
    horis:until "?this a :Patient . MINUS { ?this :rejectedBy ?approver }" .
:Noted a horis:WaitStep ; horis:wake horis:System ;
    horis:until "?this a :Patient . OPTIONAL { ?this :note ?n } FILTER(!BOUND(?n) || ?n = ?note)" ;
    horis:timeout "30m" .
:Act a horis:ActionStep ; horis:tool :t.assign ; horis:requires "?this :acuity ?queue ." ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""
STEPS = ("Approve", "Level", "Timer", "Clear", "Unrejected", "Noted")
DEFS = (
    """
:t.assign a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:binding "python:assign" .
"""
    + "".join(f":W{s} a horis:Workflow ; horis:focusType :Patient ; horis:start :{s} .\n"
              for s in (*STEPS, "Act"))
    + WAITS.replace("horis:WaitStep ;",
                    'horis:WaitStep ; horis:reason "r" ; horis:delivery horis:Silent ;')
)


def ward(n: int = 8) -> str:
    """Patients whose facts make some waits hold and not others."""
    out = [":m0 a :Manager . :m1 a :Manager . :m2 a :Manager ."]
    for k in range(n):
        out.append(f":r{k} a :Patient ; :level {k} .")
        if k % 2:
            out.append(f":r{k} :approvedBy :m{k % 3} .")
        if k % 3 == 0:
            out.append(f":r{k} :blockedBy :m{k % 3} ; :rejectedBy :m1 .")
        if k % 4 == 1:
            out.append(f':r{k} :note "n{k % 3}" .')
    return "\n".join(out)


def wait_quads(iid: URIRef, step: URIRef, started: dt.datetime, n: str,
               ended: bool = False, graph: str = "urn:horismos:wait:") -> list[tuple]:
    g = URIRef(f"{graph}{n}")
    a = URIRef(f"urn:horismos:activity:{n}")
    t = [(g, RDF.type, PROV.Entity), (g, PROV.wasGeneratedBy, a),
         (a, RDF.type, HORIS.StepExecution), (a, HORIS.instance, iid), (a, HORIS.step, step),
         (a, PROV.startedAtTime, Literal(started.isoformat(), datatype=XSD.dateTime))]
    if ended:
        t.append((a, PROV.endedAtTime, Literal(NOW.isoformat(), datatype=XSD.dateTime)))
    return [(*x, g) for x in t]


def instance_quads(rng: random.Random, k: int, *, bnodes: bool) -> list[tuple]:
    """One instance, as the runner's state and wait graphs hold it, varied at random."""
    iid = URIRef(f"urn:horismos:instance:{k:08x}")
    roll = rng.random()
    step = (EX[rng.choice(STEPS)] if roll < 0.8 else EX.Act if roll < 0.87
            else EX.Ghost if roll < 0.94 else None)
    focus = EX[f"r{rng.randrange(8)}"]
    status = HORIS.Waiting if rng.random() < 0.92 else HORIS.Completed
    t: list[tuple[Node, Node, Node]] = [
        (iid, RDF.type, HORIS.Instance), (iid, HORIS.workflow, EX.WApprove),
        (iid, HORIS.focus, focus), (iid, HORIS.status, status),
    ]
    if rng.random() < 0.95:  # read_instance finds none without a version
        t.append((iid, HORIS.version, Literal(rng.randrange(1, 5))))
    if step is not None:
        t.append((iid, HORIS.currentStep, step))
    values: dict[str, Node] = {}
    if rng.random() < 0.7:
        values["approver"] = rng.choice([EX.m0, EX.m1, EX.m2, Literal("m1")])
    if rng.random() < 0.7:
        values["min"] = rng.choice([Literal(0), Literal(3), Literal(6), Literal("3")])
    if rng.random() < 0.5:
        values["note"] = rng.choice([Literal("n1"), Literal("n2"), Literal("n1", lang="en")])
    if rng.random() < 0.1:
        values["this"] = EX[f"r{rng.randrange(8)}"]  # a stored ``this`` is what is read
    if bnodes and rng.random() < 0.1:
        values["approver"] = BNode()
    for name, value in values.items():
        var = URIRef(f"{iid}:variable:{name}")
        t += [(iid, HORIS.variable, var), (var, HORIS.name, Literal(name)),
              (var, HORIS.value, value)]
    quads = [(*x, INSTANCES) for x in t]
    at = step or EX.Approve
    started = NOW - dt.timedelta(minutes=rng.randrange(0, 200))
    shape = rng.random()
    if shape < 0.6:
        quads += wait_quads(iid, at, started, f"{k}a")
    elif shape < 0.7:  # two open waits at the step: the later one counts
        quads += wait_quads(iid, at, started, f"{k}a")
        quads += wait_quads(iid, at, NOW - dt.timedelta(minutes=rng.randrange(0, 200)), f"{k}b")
    elif shape < 0.78:
        quads += wait_quads(iid, at, started, f"{k}a", ended=True)
    elif shape < 0.85:
        quads += wait_quads(iid, EX.Timer if at != EX.Timer else EX.Level, started, f"{k}a")
    elif shape < 0.9:  # an activity, but not in a wait's graph
        quads += wait_quads(iid, at, started, f"{k}a", graph="urn:horismos:effect:")
    return quads  # else: no open wait at all


def per_instance(defs: Any, store: Store, now: dt.datetime) -> list[URIRef]:
    """What ``due_waits`` computed before it was batched: the reference."""
    due = []
    for row in list_instances(store, "waiting"):
        step = defs.steps.get(row.current) if row.current is not None else None
        if not isinstance(step, WaitStep):
            continue
        stored = read_instance(store, row.instance)
        started = open_wait(store, row.instance, step.iri)
        if stored is None or started is None:
            continue
        timed_out = (
            step.timeout is not None and (now - started.started).total_seconds() >= step.timeout
        )
        if timed_out or (step.until is not None and store.solutions(step.until, stored.variables)):
            due.append(row.instance)
    return due


def populate(build: Any, n: int, seed: int, *, bnodes: bool = False) -> tuple[Any, Store]:
    agent, world = build(DEFS, ward())
    rng = random.Random(seed)
    quads = [q for k in range(n) for q in instance_quads(rng, k, bnodes=bnodes)]
    world.store.apply(Change(add=quads))
    return agent.definitions, world.store


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_batched_due_set_is_the_per_instance_one(build, seed, monkeypatch) -> None:
    from horismos._stores import sparql

    monkeypatch.setattr(sparql, "_HELD_ROWS", 7)  # several requests a step on sparql:
    defs, store = populate(build, 70, seed)
    for now in (NOW, NOW + dt.timedelta(minutes=45), NOW + dt.timedelta(hours=3)):
        expected = per_instance(defs, store, now)
        assert sorted(due_waits(defs, store, now)) == sorted(expected)
        waiting = list_instances(store, "waiting")
        assert 0 < len(expected) < len(waiting)  # the test decides something


def test_blank_nodes_as_values_answer_as_before(build) -> None:
    """A blank node bound: what each store's own binding makes of it (``sparql:`` cannot
    name one, and refuses both ways)."""
    defs, store = populate(build, 60, 7, bnodes=True)
    try:
        expected: list[URIRef] | type[UsageError] = per_instance(defs, store, NOW)
    except UsageError:
        expected = UsageError
    if expected is UsageError:
        with pytest.raises(UsageError):
            due_waits(defs, store, NOW)
    else:
        assert sorted(due_waits(defs, store, NOW)) == sorted(expected)


class Counting(WrappedStore):
    """``inner``, counting the reads asked of it: each is a request on ``sparql:``."""

    def __init__(self, inner: Store) -> None:
        super().__init__(inner)
        self.asked = 0

    def select(self, query: str, bindings: Mapping[str, Node],
               ns: Mapping[str, str]) -> list[dict[str, Node]]:
        self.asked += 1
        return self.inner.select(query, bindings, ns)

    def solutions(self, pre: Any, bindings: Mapping[str, Node],
                  ahead: Any = None) -> list[dict[str, Node]]:
        self.asked += 1
        return self.inner.solutions(pre, bindings, ahead)

    def held(self, pre: Any, each: Any) -> list[bool]:
        self.asked += 1
        return self.inner.held(pre, each)


def test_a_tick_asks_as_many_queries_for_many_waiting_as_for_few(build) -> None:
    counts = []
    for n in (40, 240):
        defs, store = populate(build, n, 11)
        counting = Counting(store)
        due = due_waits(defs, counting, NOW)
        assert due == per_instance(defs, store, NOW) and due
        counts.append(counting.asked)
    few, many = counts
    # the listing (two), variables, open waits, and one until a wait step that has one
    assert many == few <= 4 + 5, counts


def test_a_tick_reads_the_waiting_instances_not_every_one_the_world_ran(tmp_path) -> None:
    """``wake`` lists the waiting instances. The listing asked each for ``a horis:Instance``
    too, and rdflib's planner (the ``memory`` store) took that pattern first: every instance
    the world ever ran was read at every tick (1,012 triples beside 1,000 finished,
    bench_history.py --rows). The status says what an instance it is, and leads now."""
    from conftest import ENGINE, PREFIXES
    from test_waits import _triples_read

    from horismos import Agent, World

    (tmp_path / "defs.ttl").write_text(PREFIXES + DEFS)
    defs = Agent.from_files(tmp_path / "defs.ttl", ENGINE / "clinic.ttl").definitions
    world = World.open("memory")
    quads = []
    for k in range(1000):
        done = URIRef(f"urn:horismos:instance:d{k:07x}")
        quads += [(done, RDF.type, HORIS.Instance, INSTANCES),
                  (done, HORIS.workflow, EX.WTimer, INSTANCES),
                  (done, HORIS.focus, EX[f"r{k % 8}"], INSTANCES),
                  (done, HORIS.status, HORIS.Completed, INSTANCES),
                  (done, HORIS.version, Literal(2), INSTANCES)]
    waiting = URIRef("urn:horismos:instance:w0000000")
    quads += [(waiting, RDF.type, HORIS.Instance, INSTANCES),
              (waiting, HORIS.workflow, EX.WTimer, INSTANCES),
              (waiting, HORIS.focus, EX.r1, INSTANCES),
              (waiting, HORIS.status, HORIS.Waiting, INSTANCES),
              (waiting, HORIS.version, Literal(1), INSTANCES),
              (waiting, HORIS.currentStep, EX.Timer, INSTANCES),
              *wait_quads(waiting, EX.Timer, NOW - dt.timedelta(hours=2), "w0")]
    world.store.apply(Change(add=quads))
    due, read = _triples_read(world, lambda: due_waits(defs, world.store, NOW))
    assert due == [waiting]
    assert read < 100, read  # every instance's type was read: 1,000 and more
