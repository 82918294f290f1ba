"""``world.graph`` is a view of the world (SPEC 3), not a copy made on each access.

It was every quad copied into an rdflib graph each time it was read (5.4 s at 150,000
triples, for one ``in`` test), so it missed every commit after it was taken, and a write to
it was lost without a word (on the ``memory`` store, it landed past the digest). Now each
look-up asks the store, later commits are seen, and a write is refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rdflib import RDF, Dataset, Literal, Namespace, URIRef

from horismos import Agent, UsageError, World
from horismos._stores.base import INSTANCES

EX = Namespace("http://example.org/ehr#")
ROOT = Path(__file__).resolve().parent.parent


def tools() -> dict[str, object]:
    return {
        "ehr_client.assign_queue": lambda patient, queue: {"queueRef": "Q-URGENT-1"},
        "ehr_client.notify_nurse": lambda patient, nurse, ref: {"assignedNurse": nurse},
    }


@pytest.fixture(params=["memory", "oxigraph", "oxigraph:PATH", "journal:PATH"])
def world(request: pytest.FixtureRequest, tmp_path: Path):
    store = str(request.param).replace("PATH", str(tmp_path / "store"))
    with World.open(store) as opened:
        opened.load(ROOT / "examples/triage/world.ttl")
        yield opened


def test_the_view_sees_what_lands_after_it_was_taken(world: World) -> None:
    graph = world.graph
    assert (EX.patient42, RDF.type, EX.Patient) in graph
    assert graph.value(EX.patient42, EX.queueRef) is None
    agent = Agent.from_files(ROOT / "workflows/triage.ttl", ROOT / "ontologies/ehr.ttl",
                             tools=tools())
    run = agent.run(world, workflow=EX.Triage, focus=EX.patient42)
    assert run.status == "completed"
    assert graph.value(EX.patient42, EX.queueRef) == Literal("Q-URGENT-1")  # the same view
    effect = run.steps[0].graph
    assert set(graph.graph(effect).predicate_objects(EX.patient42)) >= {
        (EX.queueRef, Literal("Q-URGENT-1"))}
    assert (run.instance, None, None) in graph.graph(INSTANCES)
    # what it holds is what the store holds, runtime bookkeeping left out
    held = {(s, p, o) for s, p, o, _ in world.store.quads()}
    assert set(graph.triples((None, None, None))) == held
    assert len(graph) == len(held)
    named = {g.identifier for g in graph.graphs()}
    assert effect in named and INSTANCES in named
    assert not any(str(g).startswith("urn:horismos:runtime:") for g in named)


def test_sparql_and_serialising_read_through_the_view(world: World) -> None:
    rows = list(world.graph.query(
        "PREFIX : <http://example.org/ehr#> SELECT ?p WHERE { ?p a :Patient } ORDER BY ?p"))
    assert [r[0] for r in rows] == [EX.patient42, EX.patient43, EX.patient44]
    text = world.graph.serialize(format="trig")
    again = Dataset()
    again.parse(data=text, format="trig")
    assert {(s, p, o) for s, p, o, _ in again.quads()} == {
        (s, p, o) for s, p, o, _ in world.store.quads()}


def test_a_write_to_the_view_is_refused_and_lands_nothing(world: World) -> None:
    before = world.digest()
    graph = world.graph
    writes = [
        lambda: graph.add((EX.patient42, EX.note, Literal("x"))),
        lambda: graph.remove((EX.patient42, None, None)),
        lambda: graph.graph(URIRef("urn:x:g")).add((EX.patient42, EX.note, Literal("x"))),
        lambda: graph.update("INSERT DATA { <urn:x:a> <urn:x:b> <urn:x:c> }"),
    ]
    for write in writes:
        with pytest.raises(UsageError, match="read-only view"):
            write()
    assert world.digest() == before
    assert (EX.patient42, RDF.type, EX.Patient) in world.graph
