"""An in-memory Oxigraph store reads a node's types once, until a write gives or takes one
(horismos._stores.kept_types).

pyoxigraph's in-memory store answers ``node rdf:type ?t`` by walking every quad the node is
the subject of. A case run once per event holds a value per earlier run, and each run asked
its focus's types three times: a run cost the focus's history (0.8 -> 1.3 ms a run at 2,170
earlier runs, benchmarks/bench_lanes.py). These tests hold the types to being asked of the
store once, and to being what the store holds after every kind of write.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyoxigraph as ox
from rdflib import RDF, Literal, Namespace

from horismos import Agent, World
from horismos._stores import Change, open_store

T = Namespace("http://example.org/tally#")

DEFINITIONS = """
@prefix :      <http://example.org/tally#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Case a rdfs:Class .
:tally.mark a horis:Tool ; rdfs:label "Mark a case" ;
    horis:takes [ horis:arg [ horis:name "case" ; horis:type :Case ] ] ;
    horis:effect [ horis:subject "case" ;
        horis:asserts [ horis:property :markRef ; horis:type xsd:string ] ] ;
    horis:binding "python:tally.mark" ; horis:idempotent true .
:Mark a horis:Workflow ; horis:focusType :Case ; horis:start :M .
:M a horis:ActionStep ; horis:tool :tally.mark ;
    horis:bind [ horis:arg "case" ; horis:var "this" ] .
"""


class Watched:
    """A pyoxigraph store (which cannot be subclassed) whose pattern lookups are recorded."""

    def __init__(self, inner: ox.Store) -> None:
        self.inner = inner
        self.asked: list[tuple[Any, Any]] = []

    def quads_for_pattern(self, s: Any, p: Any = None, o: Any = None, g: Any = None) -> Any:
        self.asked.append((s, p))
        return self.inner.quads_for_pattern(s, p, o, g)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def __contains__(self, quad: ox.Quad) -> bool:
        return quad in self.inner

    def __iter__(self) -> Any:
        return iter(self.inner)

    def __len__(self) -> int:
        return len(self.inner)


def test_a_focus_run_once_per_event_has_its_types_read_once(tmp_path: Path) -> None:
    """Each run of a focus asked the store its types three times (the focus check, the
    argument's class, the gate's read of the subject), and in memory each lookup walks every
    value the focus got from every earlier run."""
    (tmp_path / "tally.ttl").write_text(DEFINITIONS)
    refs = iter(range(1_000_000))
    agent = Agent.from_files(
        tmp_path / "tally.ttl", tools={"tally.mark": lambda case: {"markRef": f"M-{next(refs)}"}}
    )
    world = World.open("oxigraph")
    world.store.load([(T.case0, RDF.type, T.Case, None)])
    assert agent.run(world, T.Mark, T.case0).status == "completed"
    watched = Watched(world.store._store)  # type: ignore[attr-defined]
    world.store._store = watched  # type: ignore[attr-defined]

    for _ in range(5):
        assert agent.run(world, T.Mark, T.case0).status == "completed"

    focus, rdf_type = ox.NamedNode(str(T.case0)), ox.NamedNode(str(RDF.type))
    assert [p for s, p in watched.asked if s == focus and p in (rdf_type, None)] == []
    assert len(list(world.store.objects(T.case0, T.markRef))) == 6  # a value a run
    assert world.store.types(T.case0) == {T.Case}


def test_a_nodes_types_are_what_the_store_holds_after_every_kind_of_write(
    tmp_path: Path,
) -> None:
    store = open_store("oxigraph")
    node, g = T.n, T.g
    store.apply(Change(add=[(node, RDF.type, T.A, None), (node, T.note, Literal("x"), None)]))
    assert store.types(node) == {T.A}

    store.apply(Change(add=[(node, RDF.type, T.B, g)]))  # a commit gives one
    assert store.types(node) == {T.A, T.B}
    assert set(store.objects(node, RDF.type)) == {T.A, T.B}
    assert {o for _, p, o in store.outgoing(node, frozenset({RDF.type, T.note}))} == {
        T.A, T.B, Literal("x")
    }
    store.apply(Change(remove=[(node, RDF.type, T.A, None)]))  # and takes one
    assert store.types(node) == {T.B}
    store.update(f"INSERT DATA {{ <{node}> a <{T.C}> }}")  # an update
    assert store.types(node) == {T.B, T.C}
    (tmp_path / "more.nq").write_text(f"<{node}> <{RDF.type}> <{T.D}> .\n")
    store.load_file(tmp_path / "more.nq")  # a file loaded
    assert store.types(node) == {T.B, T.C, T.D}
    assert store.types(T.other) == set()
    store.apply(Change(add=[(T.other, RDF.type, T.A, None)]))  # one read as having none
    assert store.types(T.other) == {T.A}
