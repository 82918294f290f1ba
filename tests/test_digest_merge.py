"""A shared store's digest deltas are merged now and then, so a run's digest reads stay short.

On ``sparql:URL`` each update Horismos makes keeps its own digest delta, and a digest read sums
them all: a run reads them twice (its trace's header and end), so without merging, a run on a
store that has taken a million commits would read a million deltas. A run whose header found
``MERGE_AT`` or more merges them as it ends, under a claim no two processes hold at once
(two merging overlapping reads would count the overlap twice); ``horismos digest --fold``
takes the same claim. These run against a real ``oxigraph serve``.
"""

from __future__ import annotations

import asyncio

from rdflib import Literal, URIRef

from horismos import Agent, World
from horismos._claims import Worker
from horismos._stores import Change

EX = "urn:test:"
FLOW = """
@prefix : <urn:test:> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
:note a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "item" ; horis:type :Item ] ] ;
    horis:effect [ horis:subject "item" ;
                   horis:asserts [ horis:property :noted ; horis:type xsd:string ] ] ;
    horis:binding "python:note" ; horis:idempotent true .
:Note a horis:Workflow ; horis:focusType :Item ; horis:start :Noting .
:Noting a horis:ActionStep ; horis:tool :note ;
    horis:requires "FILTER NOT EXISTS { ?this :noted ?n }" ;
    horis:bind [ horis:arg "item" ; horis:var "this" ] .
"""


def deltas(world: World) -> int:
    rows = world.store.select(
        "SELECT ?d WHERE { GRAPH <urn:horismos:runtime:digest> { ?d ?p ?v } }", {}, {})
    return len(rows)


def items(world: World, first: int, count: int) -> None:
    for i in range(first, first + count):  # an update (a delta) each
        world.commit(Change(add=[(URIRef(f"{EX}i{i}"), URIRef(
            "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"), URIRef(f"{EX}Item"), None)]))


def test_a_run_that_finds_many_deltas_merges_them_and_the_digest_holds(
        tmp_path, oxigraph_pool, monkeypatch):
    monkeypatch.setattr("horismos._agent.MERGE_AT", 10)
    (tmp_path / "note.ttl").write_text(FLOW)
    agent = Agent.from_files(tmp_path / "note.ttl",
                             tools={"note": lambda item: {"noted": "seen"}})
    world = World.open(oxigraph_pool.fresh())
    try:
        items(world, 0, 4)
        assert agent.run(world, "urn:test:Note", all=True).status == "completed"
        few = deltas(world)
        assert 8 <= few < 10  # the header found fewer than 10: nothing merged
        items(world, 4, 6)
        before = world.digest()
        run = agent.run(world, "urn:test:Note", all=True)

        assert run.status == "completed" and len(run.instances) == 6
        assert deltas(world) == 1  # the run's own deltas were merged with the rest
        kept, recomputed = world.store.check_digest()
        assert kept == recomputed  # nothing counted twice, nothing lost
        assert world.digest() != before  # the run's effects are in it
        # the merge claim is given back: a later merge is not refused
        assert world.store.select(
            "SELECT ?w WHERE { GRAPH <urn:horismos:runtime:claims> { "
            "<urn:horismos:runtime:digest-merge> ?p ?w } }", {}, {}) == []
    finally:
        world.close()
        oxigraph_pool.release()


def test_two_processes_never_merge_at_once(oxigraph_pool):
    """While one worker holds the merge claim (merging, or folding), another asking for it
    is told no and merges nothing; once it is given back, the other merges, and the digest
    still equals its recomputation."""
    world = World.open(oxigraph_pool.fresh())
    try:
        items(world, 0, 30)
        world.commit(Change(add=[(URIRef(f"{EX}x"), URIRef(f"{EX}p"), Literal("x"), None)]))
        assert deltas(world) == 31
        a, b = Worker.join(world), Worker.join(world)

        async def overlapping() -> tuple[bool, bool, int]:
            async with a.merging() as first, b.merging() as second:
                refused = await b.merge_digest()
                return first, second, refused

        try:
            assert asyncio.run(overlapping()) == (True, False, 0)
            assert deltas(world) == 31  # nothing merged while it was held
            assert asyncio.run(b.merge_digest()) == 31
        finally:
            a.leave()
            b.leave()
        assert deltas(world) == 1
        kept, recomputed = world.store.check_digest()
        assert kept == recomputed
    finally:
        world.close()
        oxigraph_pool.release()
