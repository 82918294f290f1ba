"""How many requests a step makes on ``sparql:URL``, counted on a real ``oxigraph serve``.

A step reads once (its precondition, with the types and triples it reads next) and writes once
(its commit, which checks its own guard); a step calling a tool that is not idempotent writes
its intent first, so it writes twice. Every request the store sends is counted by wrapping its
HTTP transport, so the bound cannot regress unnoticed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from oxigraph_server import ServerPool
from rdflib import RDF, Literal, URIRef

from horismos import Agent, World
from horismos._stores import Change
from horismos._stores.base import ReadAhead
from horismos._stores.http1 import Connection
from horismos._world import INSTANCES

ROOT = Path(__file__).resolve().parent.parent
DEFINITIONS = [ROOT / "workflows" / "triage.ttl", ROOT / "ontologies" / "ehr.ttl"]
EHR = "http://example.org/ehr#"
WARD = """@prefix : <http://example.org/ehr#> .
:urgent a :AcuityLevel . :routine a :AcuityLevel .
:nurse1 a :Nurse ; :onDuty true .
:p0 a :Patient ; :acuity :urgent .
:p1 a :Patient ; :acuity :routine .
"""


class Counting:
    """The store's connection, noting each request: ``q`` a query, ``u`` an update."""

    def __init__(self, inner: Connection, log: list[tuple[str, str]]) -> None:
        self.inner = inner
        self.log = log
        self.answered: list[int] = []  # each answer's size in bytes

    def request(self, method: str, target: str, body: Any = None, headers: Any = None) -> Any:
        kind = "u" if target.endswith("/update") else "q"
        self.log.append((kind, body.decode(errors="replace") if isinstance(body, bytes) else ""))
        response = self.inner.request(method, target, body, headers)
        self.answered.append(len(response.body))
        return response

    def close(self) -> None:
        self.inner.close()


@pytest.fixture
def served(oxigraph_pool: ServerPool, tmp_path: Path) -> Iterator[tuple[World, list]]:
    world = World.open(oxigraph_pool.fresh())
    (tmp_path / "ward.ttl").write_text(WARD)
    world.load(tmp_path / "ward.ttl")
    log: list[tuple[str, str]] = []
    world.store._http = Counting(world.store._http, log)  # type: ignore[attr-defined]
    yield world, log
    world.close()
    oxigraph_pool.release()


def _agent(calls: list[str]) -> Agent:
    def assign_queue(patient: Any, queue: Any) -> dict[str, str]:
        calls.append("assign")
        return {"queueRef": "Q-URGENT-1"}

    def notify_nurse(patient: Any, nurse: Any, ref: Any) -> dict[str, Any]:
        calls.append("notify")
        return {"assignedNurse": nurse}

    return Agent.from_files(*DEFINITIONS, tools={"ehr_client.assign_queue": assign_queue,
                                                 "ehr_client.notify_nurse": notify_nurse})


def _split(log: list[tuple[str, str]]) -> list[list[str]]:
    """The requests between one landed step and the next (``S`` marks where a step landed)."""
    parts: list[list[str]] = [[]]
    for kind, _ in log:
        if kind == "S":
            parts.append([])
        else:
            parts[-1].append(kind)
    return parts


def test_a_step_reads_once_and_writes_once_or_twice_with_an_intent(served) -> None:
    world, log = served
    calls: list[str] = []
    run = _agent(calls).run(world, focus=EHR + "p0",
                            on_step=lambda inst, rec: log.append(("S", str(rec.step))))

    assert run.status == "completed" and calls == ["assign", "notify"]
    # the instance has no write of its own: the first step's first write (here its intent)
    # creates it, right after the step's one read
    created = next(i for i, (k, body) in enumerate(log) if k == "u"
                   and "w3id.org/horismos#Instance>" in body)
    assert created < log.index(("S", EHR + "QueuePatient"))
    queue, notify = _split(log[created - 1:])[:2]
    # QueuePatient calls a tool that is not idempotent: its intent lands before the call
    assert queue == ["q", "u", "u"]
    assert notify == ["q", "u"]  # NotifyNurse's is idempotent: one read, one write


def test_a_run_all_makes_about_one_read_and_one_write_a_step(served) -> None:
    world, log = served
    calls: list[str] = []
    run = _agent(calls).run(world, all=True)

    steps = sum(len(inst.steps) for inst in run.instances)
    assert steps == 4 and calls.count("assign") == 2
    queries = sum(1 for k, _ in log if k == "q")
    updates = sum(1 for k, _ in log if k == "u")
    # once a run (about 9): the definitions kept in the world, the focus nodes, the claims
    # (others, the foci still free, whether it is alone, alive, verify, existing instances,
    # open); once a QueuePatient step: its intent (an instance is created by its first step's
    # first write). Before reads were batched: 31 queries
    assert queries <= steps + 10
    assert updates <= steps + 2 + 4


def test_a_lost_guard_lands_nothing_and_leaves_no_receipt(served) -> None:
    world, log = served
    a = URIRef(EHR + "a")
    v1, v2 = ((a, URIRef(EHR + "version"), Literal(n), INSTANCES) for n in (1, 2))
    world.commit(Change(add=[v1]))
    world.commit(Change(add=[v2], remove=[v1], expect=(v1,)))
    log.clear()
    with pytest.raises(Exception, match="another writer changed"):
        world.commit(Change(add=[(a, RDF.type, URIRef(EHR + "Late"), None)], remove=[v1],
                            expect=(v1,)))
    assert [k for k, _ in log] == ["u"]  # the update said so itself: no read after it
    assert URIRef(EHR + "Late") not in world.store.types(a)
    rows = world.store.select("SELECT ?g WHERE { GRAPH ?g { ?s ?p ?o } "
                              "FILTER(STRSTARTS(STR(?g), 'urn:horismos:runtime:receipt')) }",
                              {}, {})
    assert rows == []


def test_what_a_step_read_ahead_is_what_reading_it_gives(served) -> None:
    world, log = served
    agent = _agent([])
    step = agent.definitions.steps[URIRef(EHR + "NotifyNurse")]
    p0, nurse = URIRef(EHR + "p0"), URIRef(EHR + "nurse1")
    world.commit(Change(add=[(p0, URIRef(EHR + "queueRef"), Literal("Q-7"), None)]))
    fresh = World.open(world.store.name)
    try:
        expected_types = {n: fresh.store.types(n) for n in (p0, nurse)}
        expected_out = set(fresh.store.outgoing(p0))
    finally:
        fresh.close()
    log.clear()
    ahead = ReadAhead(types=frozenset({"this", "nurse"}), outgoing=frozenset({"this"}))
    rows = world.store.solutions(step.requires, {"this": p0}, ahead)

    assert [r["nurse"] for r in rows] == [nurse] and rows[0]["ref"] == Literal("Q-7")
    assert {n: world.store.types(n) for n in (p0, nurse)} == expected_types
    assert set(world.store.outgoing(p0)) == expected_out
    assert [k for k, _ in log] == ["q"]  # all of it from the one request
    # an intent (it only adds instance bookkeeping) keeps what it does not touch: the step
    # goes on reading what it read; any other write ends the step's reads, an instance's
    # first commit too, though it removes nothing
    intent = URIRef(EHR + "i1:intent")
    world.commit(Change(add=[(intent, RDF.type, URIRef(EHR + "Intent"), INSTANCES)]))
    assert set(world.store.outgoing(p0)) == expected_out
    assert [k for k, _ in log] == ["q", "u"]  # new quads: the update checks that itself
    world.commit(Change(add=[(URIRef(EHR + "x"), RDF.type, URIRef(EHR + "X"), None)]))
    assert set(world.store.outgoing(p0)) == expected_out
    assert [k for k, _ in log] == ["q", "u", "u", "q"]  # read anew
    world.store.update(f"INSERT DATA {{ <{nurse}> a <{EHR}Charge> }}")  # another writer's
    world.commit(Change(remove=[(URIRef(EHR + "x"), RDF.type, URIRef(EHR + "X"), None)]))
    assert URIRef(EHR + "Charge") in world.store.types(nurse)


# the rules name different prefixes: the one request declares both
ROUTE = """@prefix : <http://example.org/ehr#> .
@prefix x: <http://example.org/extra#> .
@prefix horis: <https://w3id.org/horismos#> .
:Route a horis:Workflow ; horis:focusType :Patient ; horis:start :Decide .
:Decide a horis:DecisionStep ;
    horis:when [ horis:order 1 ; horis:requires "?this :acuity ?q . ?q :level 5 ." ;
                 horis:next :QueuePatient ] ;
    horis:when [ horis:order 2 ; horis:requires
                   "?this :acuity :urgent . FILTER NOT EXISTS { ?this x:flagged true }" ;
                 horis:next :QueuePatient ] ;
    horis:otherwise :NotifyNurse .
"""


def test_a_decision_reads_its_rules_in_one_request(served, tmp_path: Path) -> None:
    world, log = served
    (tmp_path / "route.ttl").write_text(ROUTE)
    calls: list[str] = []
    agent = _agent(calls)
    agent = Agent.from_files(*DEFINITIONS, tmp_path / "route.ttl", tools=agent.tools)
    run = agent.run(world, workflow=EHR + "Route", focus=EHR + "p0",
                    on_step=lambda inst, rec: log.append(("S", str(rec.step))))

    steps = run.instances[0].steps
    assert [s.step for s in steps][:2] == [URIRef(EHR + "Decide"), URIRef(EHR + "QueuePatient")]
    assert steps[0].result == [{"rule": 1}]  # the second rule held: both were asked
    # the decision's commit creates the instance: one read, one write
    created = next(i for i, (k, body) in enumerate(log) if k == "u"
                   and "w3id.org/horismos#Instance>" in body)
    assert created < log.index(("S", EHR + "Decide"))
    decide, queue = _split(log[created - 1:])[:2]
    assert decide == ["q", "u"]
    # :Route and :Triage both call ehr.assign_queue, so the step's hold on its focus settles:
    # one read, after its intent, of who else holds it (and whether another worker is alive),
    # and one of its precondition again, which a step of :Triage in another process may have
    # made false between the first read and the hold (it held, called and let go meanwhile).
    # Before all of them, once a run, at its first call of a tool that is not idempotent: the
    # bindings calls in doubt recorded, so a tool renamed since is held (_renamed_tools)
    assert queue == ["q", "q", "u", "q", "q", "u"]


def test_an_unguarded_change_checks_in_its_update_what_its_delta_assumed(served) -> None:
    world, log = served
    p0, p1 = URIRef(EHR + "p0"), URIRef(EHR + "p1")
    note = (p0, URIRef(EHR + "note"), Literal("new"), None)
    gone = (p1, RDF.type, URIRef(EHR + "X"), None)
    log.clear()
    world.commit(Change(add=[note]))  # new: one update, no read
    assert [k for k, _ in log] == ["u"]
    assert world.store.digest() == world.store.recompute_digest()
    log.clear()
    # stored already, and not stored: the update finds its assumption false, lands nothing;
    # the store asks which quads are stored and writes the exact delta
    world.commit(Change(add=[note, (p1, URIRef(EHR + "note"), Literal("b"), None)], remove=[gone]))
    assert [k for k, _ in log] == ["u", "q", "u"]
    assert world.store.digest() == world.store.recompute_digest()
    rows = world.store.select("SELECT ?g WHERE { GRAPH ?g { ?s ?p ?o } "
                              "FILTER(STRSTARTS(STR(?g), 'urn:horismos:runtime:receipt')) }",
                              {}, {})
    assert rows == []


def test_a_node_holding_many_facts_is_fetched_only_for_what_its_shapes_name(served) -> None:
    world, log = served
    counting = world.store._http  # type: ignore[attr-defined]
    world.store.load([(URIRef(EHR + "p0"), URIRef(EHR + "note"), Literal(f"note {i}"), None)
                      for i in range(300)])
    calls: list[str] = []
    agent = _agent(calls)
    fetched = {}
    for patient in ("p0", "p1"):  # p0 holds 300 notes no shape names, p1 none
        log.clear()
        counting.answered.clear()
        run = agent.run(world, focus=EHR + patient,
                        on_step=lambda inst, rec: log.append(("S", str(rec.step))))
        assert run.status == "completed"
        # the first step's one read: its precondition with what the gate reads next
        at = next(i for i, (kind, body) in enumerate(log) if kind == "q" and "queueRef" in body)
        fetched[patient] = counting.answered[sum(1 for k, _ in log[:at] if k != "S")]
        created = next(i for i, (k, body) in enumerate(log) if k == "u"
                       and "w3id.org/horismos#Instance>" in body)
        assert _split(log[created - 1:])[:2] == [["q", "u", "u"], ["q", "u"]]
        gate_reads = [r for e in run.trace.events if e["type"] == "step"
                      for r in e["reads"] if r[0] == "g"]
        assert gate_reads and not any("note" in p for r in gate_reads for p, _ in r[-1])
    assert calls == ["assign", "notify"] * 2
    assert fetched["p0"] < 1.5 * fetched["p1"], fetched  # the notes were not fetched


def test_a_queued_task_reads_its_own_claim_not_every_claim_of_its_workflow(
        served, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker's task (one focus) asked which of its foci were done by reading every claim
    of the workflow, and done claims stay: a task cost what the world had run (~0.2 s a task
    beside 8,000 done claims, ~1.8 s beside 80,000). It names its own claim now."""
    from horismos._claims import CLAIMS, C, _claim_iri
    from horismos._queue import InstanceDriver
    from horismos._stores.sparql import SparqlStore

    world, _ = served
    triage = URIRef(EHR + "Triage")
    done = [URIRef(f"{EHR}old{i}") for i in range(200)]  # earlier events' foci
    claims = " ".join(f"<{_claim_iri(triage, f)}> <{C}workflow> <{triage}> ; <{C}focus> <{f}> ; "
                      f"<{C}done> true ." for f in done)
    world.store.update(f"INSERT DATA {{ GRAPH <{CLAIMS}> {{ {claims} }} }}")
    answered: list[dict[str, Any]] = []
    select = SparqlStore.select

    def recorded(self: SparqlStore, query: str, bindings: Any, ns: Any) -> list[Any]:
        rows = select(self, query, bindings, ns)
        answered.extend(rows)
        return rows

    monkeypatch.setattr(SparqlStore, "select", recorded)
    driver = InstanceDriver(_agent([]), world.store.name)
    try:
        assert driver.drive(str(triage), EHR + "p0") == "completed"
    finally:
        driver.close()
    assert answered and not any(set(row.values()) & set(done) for row in answered)


def test_a_file_loaded_into_an_empty_world_waits_as_long_as_a_load_takes(
        oxigraph_pool: ServerPool, tmp_path: Path) -> None:
    """Into an empty world a file goes in one streamed request, which the server answers once
    every quad is in: 2.3 million took longer than the 120 s any other request waits, so the
    load was reported unreachable with its quads stored and the world's digest never kept
    (``digest --check`` then blamed a write that bypassed Horismos). It waits as a load."""
    from horismos._stores.http1 import LOAD_TIMEOUT

    world = World.open(oxigraph_pool.fresh())
    waits: list[tuple[str, str, Any]] = []
    inner = world.store._http  # type: ignore[attr-defined]

    class Noting:
        def request(self, method: str, target: str, body: Any = None, headers: Any = None,
                    **kw: Any) -> Any:
            waits.append((method, target.partition("?")[0], kw.get("timeout")))
            return inner.request(method, target, body, headers, **kw)

        def close(self) -> None:
            inner.close()

    world.store._http = Noting()  # type: ignore[attr-defined]
    (tmp_path / "ward.ttl").write_text(WARD)
    try:
        world.load(tmp_path / "ward.ttl")
        posted = [t for m, target, t in waits if (m, target) == ("POST", "/store")]
        assert posted == [LOAD_TIMEOUT]
        assert all(t is None for m, target, t in waits if (m, target) != ("POST", "/store"))
        kept, recomputed = world.store.check_digest()
        assert kept == recomputed
    finally:
        world.close()
        oxigraph_pool.release()


def test_whether_a_world_holds_data_is_asked_graph_by_graph(
        oxigraph_pool: ServerPool, tmp_path: Path) -> None:
    """Before a file is loaded the store asks whether the world holds data, the default graph
    first, then the named graphs: asked as one ``UNION``, Oxigraph read the whole default
    graph (0.33 s of a ten-triple load at a million triples). A world whose data is all in a
    named graph still takes a file quad by quad, counting only what is new."""
    world = World.open(oxigraph_pool.fresh())
    asked: list[str] = []
    inner = world.store._http  # type: ignore[attr-defined]

    class Noting:
        def request(self, method: str, target: str, body: Any = None, headers: Any = None,
                    **kw: Any) -> Any:
            if isinstance(body, bytes) and body.startswith(b"ASK"):
                asked.append(body.decode())
            return inner.request(method, target, body, headers, **kw)

        def close(self) -> None:
            inner.close()

    world.store._http = Noting()  # type: ignore[attr-defined]
    quad = "<http://ex/a> <http://ex/p> <http://ex/b> ."
    (tmp_path / "one.trig").write_text(f"<http://ex/g> {{ {quad} }}")
    (tmp_path / "two.trig").write_text(
        f"<http://ex/g> {{ {quad} <http://ex/a> <http://ex/p> <http://ex/c> . }}")
    try:
        assert world.store.load_file(tmp_path / "one.trig") == 1
        assert world.store.load_file(tmp_path / "two.trig") == 1  # checked: one was there
        assert asked[0] == "ASK { ?s ?p ?o }" and not any("UNION" in a for a in asked)
        assert len(asked) == 4  # each load: the default graph, then the named graphs
        kept, recomputed = world.store.check_digest()
        assert kept == recomputed
    finally:
        world.close()
        oxigraph_pool.release()
