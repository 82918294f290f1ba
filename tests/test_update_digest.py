"""A user's own SPARQL update (``World.store.update``) moves the world's digest, on every store.

It used not to: the digest a trace records and ``replay`` checks then named a world that was
not the one held, and ``horismos digest --check`` said the store disagreed with itself. Each
test here is a real store (a real ``oxigraph serve`` for ``sparql:``); the digest after an
update must equal the one recomputed from the quads, and a refused update must leave it, and
the oxigraph store's schema mark, as they were.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from horismos import World
from horismos._stores import StoreError, open_store

KINDS = ("memory", "oxigraph", "oxigraph:PATH", "journal:PATH", "sparql")

WORLD = """@prefix ex: <http://ex/> .
ex:a ex:p "1" ; ex:q ex:b .
ex:b ex:p "2" .
"""

UPDATES = (
    'INSERT DATA { <http://ex/c> <http://ex/p> "3" }',
    'DELETE DATA { <http://ex/a> <http://ex/p> "1" }',
    "INSERT DATA { GRAPH <http://ex/g> { <http://ex/d> <http://ex/p> <http://ex/a> } }",
    'DELETE { ?s <http://ex/p> ?o } INSERT { ?s <http://ex/r> ?o } WHERE { ?s <http://ex/p> ?o }',
    "DELETE WHERE { GRAPH <http://ex/g> { ?s ?p ?o } }",
)


@pytest.fixture
def store_for(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Callable[[str], str]]:
    """The store name of each kind, in a folder of this test's own (a fresh server's)."""
    pool = None

    def name(kind: str) -> str:
        nonlocal pool
        if kind == "sparql":
            pool = request.getfixturevalue("oxigraph_pool")
            return pool.fresh()
        return kind.replace("PATH", str(tmp_path / kind.partition(":")[0]))

    yield name
    if pool is not None:
        pool.release()


def _world(store: str, tmp_path: Path) -> World:
    world_file = tmp_path / "world.ttl"
    world_file.write_text(WORLD, encoding="utf-8")
    return World.from_files(world_file, store=store)


@pytest.mark.parametrize("kind", KINDS)
def test_each_update_moves_the_digest_to_the_recomputed_one(
    kind: str, store_for: Callable[[str], str], tmp_path: Path
) -> None:
    world = _world(store_for(kind), tmp_path)
    try:
        for text in UPDATES:
            before = world.digest()
            world.store.update(text)
            kept, recomputed = world.store.check_digest()
            assert kept == recomputed, text
            assert world.digest() != before, text
    finally:
        world.close()


@pytest.mark.parametrize("kind", KINDS)
def test_a_refused_update_leaves_the_digest_as_it_was(
    kind: str, store_for: Callable[[str], str], tmp_path: Path
) -> None:
    world = _world(store_for(kind), tmp_path)
    try:
        world.store.update('INSERT DATA { <http://ex/c> <http://ex/p> "3" }')
        before = world.store.digest()
        with pytest.raises(StoreError):
            world.store.update("INSERT DATA { <http://ex/c> <http://ex/p> ")
        assert world.store.check_digest() == (before, before)
    finally:
        world.close()


@pytest.mark.parametrize("kind", ["oxigraph:PATH", "journal:PATH"])
def test_the_digest_after_an_update_is_the_one_the_store_reopens_with(
    kind: str, store_for: Callable[[str], str], tmp_path: Path
) -> None:
    """``horismos digest --check`` on the store, closed after an update, agrees."""
    store = store_for(kind)
    world = _world(store, tmp_path)
    world.store.update('DELETE DATA { <http://ex/a> <http://ex/p> "1" }')
    world.store.update('INSERT DATA { [] <http://ex/p> "fresh" . <http://ex/f> <http://ex/p> _:n }')
    digest = world.digest()
    world.close()
    done = subprocess.run(
        [sys.executable, "-m", "horismos", "digest", "--check", "--store", store],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert digest in done.stdout


def test_a_journal_killed_after_an_update_reopens_with_its_digest(tmp_path: Path) -> None:
    """The update is replayed from the journal (no snapshot was written: the process died),
    and the digest recomputed from what it wrote, not left at the snapshot's."""
    store = f"journal:{tmp_path / 'journal'}"
    _world(store, tmp_path).close()
    script = (
        "import os, sys\n"
        "from horismos import World\n"
        "w = World.open(sys.argv[1])\n"
        "w.store.update('INSERT DATA { <http://ex/c> <http://ex/p> \"3\" }')\n"
        "print(w.digest(), flush=True)\n"
        "os._exit(0)\n"
    )
    done = subprocess.run([sys.executable, "-c", script, store], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    store_again = open_store(store, create=False)
    try:
        kept, recomputed = store_again.check_digest()
        assert kept == recomputed
        assert kept.fingerprint == done.stdout.strip()
    finally:
        store_again.close()


@pytest.mark.parametrize("kind", ["oxigraph", "oxigraph:PATH", "journal:PATH"])
def test_only_an_update_that_ran_moves_the_schema_mark(
    kind: str, store_for: Callable[[str], str], tmp_path: Path
) -> None:
    """The mark throws away the schema compiled from the world (``entailment="owl-rl"``): a
    refused update wrote nothing, so what was compiled still holds."""
    world = _world(store_for(kind), tmp_path)
    try:
        mark = world.store.schema_mark()
        for refused in (
            "INSERT DATA { <http://ex/c> <http://ex/p> ",  # not SPARQL
            "INSERT DATA { GRAPH <http://ex/g> { <http://ex/c> <http://ex/p> 1 } } ;"
            " CREATE GRAPH <http://ex/g>",  # the graph now exists: the whole update refused
        ):
            with pytest.raises(StoreError):
                world.store.update(refused)
            assert world.store.schema_mark() == mark, refused
        world.store.update(
            "INSERT DATA { <http://ex/C> <http://www.w3.org/2000/01/rdf-schema#subClassOf> "
            "<http://ex/D> }"
        )
        assert world.store.schema_mark() != mark
    finally:
        world.close()


DATA_UPDATES = (
    "PREFIX ex: <http://ex/>\n"
    'INSERT DATA { ex:c ex:p "3" . GRAPH ex:g { ex:d ex:p ex:a . _:n ex:p "blank" } }',
    "PREFIX ex: <http://ex/>\n"
    'DELETE DATA { ex:a ex:p "1" } ;\nINSERT DATA { ex:a ex:p "one" . [] ex:p "fresh" }',
    'INSERT DATA { [] <http://ex/p> "fresh" }',  # the same text: a new node again
    "BASE <http://ex/>\nDELETE DATA { GRAPH <g> { <d> <p> <a> } } ;\n"
    'INSERT DATA { <e> <p> "5" } ;\nDELETE DATA { <e> <p> "5" }',  # the last one decides
    'DELETE DATA { <http://ex/nothing> <http://ex/p> "absent" }',
)
"""The updates users write most, as they write them: prefixes, a base, GRAPH blocks, blank
nodes, several operations."""


def _whole_reads(store: object, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the store's reads of the whole world, appended as they are called: the
    recomputation of the digest, a ``sparql:`` fold's read, a listing of every quad."""
    reads: list[str] = []
    for name in ("recompute_digest", "_read_all", "_snapshot", "quads", "lines", "dataset"):
        method = getattr(store, name, None)
        if method is not None:

            def counted(*args: object, _method: Any = method, _name: str = name) -> Any:
                reads.append(_name)
                return _method(*args)

            monkeypatch.setattr(store, name, counted)
    return reads


@pytest.mark.parametrize("kind", KINDS)
def test_insert_data_and_delete_data_move_the_digest_without_reading_the_world(
    kind: str, store_for: Callable[[str], str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A service applies an update per event to a world of millions of triples: one of
    ``INSERT DATA`` and ``DELETE DATA`` moves the digest by the quads it names, asking only
    whether those are stored, and the digest is still the one recomputed from the quads."""
    world = _world(store_for(kind), tmp_path)
    try:
        reads = _whole_reads(world.store, monkeypatch)
        moved = []
        for text in DATA_UPDATES:
            before = world.digest()
            world.store.update(text)
            moved.append(world.digest() != before)
        assert reads == []
        assert moved == [True, True, True, True, False]
        monkeypatch.undo()
        kept, recomputed = world.store.check_digest()
        assert kept == recomputed
        fresh = [q for q in world.store.quads() if str(q[2]) == "fresh"]
        assert len({q[0] for q in fresh}) == 2  # a new node each time, as SPARQL says
        assert ("http://ex/e", "5") not in {(str(q[0]), str(q[2])) for q in world.store.quads()}
        if kind != "memory":  # the counter counts: any other update reads the world
            reads = _whole_reads(world.store, monkeypatch)
            world.store.update("DELETE WHERE { <http://ex/c> ?p ?o }")
            assert reads
    finally:
        world.close()


@pytest.mark.parametrize("kind", KINDS)
def test_delete_data_of_a_blank_node_is_refused_and_writes_nothing(
    kind: str, store_for: Callable[[str], str], tmp_path: Path
) -> None:
    """SPARQL does not let ``DELETE DATA`` name a blank node (it would name no stored one)."""
    world = _world(store_for(kind), tmp_path)
    try:
        before = world.store.digest()
        with pytest.raises(StoreError, match="blank nodes are not allowed in DELETE DATA"):
            world.store.update(
                'INSERT DATA { <http://ex/z> <http://ex/p> "z" } ;\n'
                'DELETE DATA { _:b <http://ex/p> "1" }'
            )
        assert world.store.check_digest() == (before, before)
    finally:
        world.close()
