"""A user's own SPARQL update (``World.store.update``) moves the world's digest, on every store.

It used not to: the digest a trace records and ``replay`` checks then named a world that was
not the one held, and ``horismos digest --check`` said the store disagreed with itself. Each
test here is a real store (a real ``oxigraph serve`` for ``sparql:``); the digest after an
update must equal the one recomputed from the quads, and a refused update must leave it, and
the oxigraph store's schema mark, as they were.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from forked import horismos_forked
from oxigraph_server import OxigraphServer
from rdflib import Literal, URIRef

from horismos import World
from horismos._digest import ZERO
from horismos._stores import Change, StoreError, open_store
from horismos._stores.sparql import SparqlStore

KINDS = ("memory", "oxigraph", "oxigraph:PATH", "journal:PATH", "sparql")

WORLD = """@prefix ex: <http://ex/> .
ex:a ex:p "1" ; ex:q ex:b .
ex:b ex:p "2" .
"""

UPDATES = (
    'INSERT DATA { <http://ex/c> <http://ex/p> "3" }',
    'DELETE DATA { <http://ex/a> <http://ex/p> "1" }',
    "INSERT DATA { GRAPH <http://ex/g> { <http://ex/d> <http://ex/p> <http://ex/a> } }",
    "DELETE { ?s <http://ex/p> ?o } INSERT { ?s <http://ex/r> ?o } WHERE { ?s <http://ex/p> ?o }",
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
    done = horismos_forked(".", "digest", "--check", "--store", store)
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


AROUND = 'INSERT DATA { <http://ex/x> <http://ex/p> "written around Horismos" }'


@pytest.mark.parametrize(
    "update",
    [
        'DELETE { ?s <http://ex/p> "2" } INSERT { ?s <http://ex/p> "two" } '
        'WHERE { ?s <http://ex/p> "2" }',
        'INSERT DATA { <http://ex/c> <http://ex/p> "3" }',
    ],
)
def test_on_sparql_a_write_around_horismos_is_still_found_after_a_users_update(
    update: str, store_for: Callable[[str], str], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Another SPARQL client of the server writes, then a user's update runs through Horismos:
    ``horismos digest --check`` must still find the other write, and the digest move by the
    update. A ``DELETE/INSERT WHERE`` was followed by a fold that took the store as it stood,
    the other write counted as Horismos's, and ``--check`` passed; then by none at all when
    the digest did not check (the update's own writes never counted, a warning instead). Now
    it moves the digest by the change between a read before it and one after: the gap
    ``--check`` finds is the other write's, exactly, before and after; an ``INSERT DATA``
    moves it by its quads alone."""
    store = store_for("sparql")
    world = _world(store, tmp_path)
    try:
        httpx.post(
            store.removeprefix("sparql:") + "/update",
            content=AROUND.encode(),
            headers={"Content-Type": "application/sparql-update"},
        ).raise_for_status()
        before = world.digest()
        kept, recomputed = world.store.check_digest()
        with caplog.at_level(logging.WARNING, logger="horismos.store"):
            world.store.update(update)
        said = [r.getMessage() for r in caplog.records if r.name == "horismos.store"]
        written = {str(q[2]) for q in world.store.quads()}
        assert ("3" if update.startswith("INSERT DATA") else "two") in written
        assert world.digest() != before and said == []
        kept_after, recomputed_after = world.store.check_digest()
        assert recomputed_after - kept_after == recomputed - kept != ZERO  # the other write's
    finally:
        world.close()
    check = horismos_forked(".", "digest", "--check", "--store", store)
    assert check.returncode == 1 and "does not match" in check.stderr, check.stderr


def test_on_sparql_a_commit_made_while_a_users_update_runs_is_counted_once(
    store_for: Callable[[str], str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another Horismos process commits while a user's ``DELETE/INSERT WHERE`` runs (between
    the read before it and the read after): the commit keeps its own delta, so the update's
    must not count its quads again; ``digest --check`` passes."""
    store = store_for("sparql")
    world = _world(store, tmp_path)
    other = open_store(store)
    real_post = SparqlStore._post_update

    def post_then_commit(self: SparqlStore, text: str) -> None:
        real_post(self, text)
        if "two" in text:  # the user's update: then the other process's commit
            other.apply(
                Change(add=[(URIRef("http://ex/o"), URIRef("http://ex/p"), Literal(1), None)])
            )

    try:
        monkeypatch.setattr(SparqlStore, "_post_update", post_then_commit)
        world.store.update(
            'DELETE { ?s <http://ex/p> "2" } INSERT { ?s <http://ex/p> "two" } '
            'WHERE { ?s <http://ex/p> "2" }'
        )
        monkeypatch.undo()
        kept, recomputed = world.store.check_digest()
        assert kept == recomputed
        assert "http://ex/o" in {str(q[0]) for q in world.store.quads()}
    finally:
        other.close()
        world.close()


@pytest.mark.parametrize("credentials", ["", "horismos:s3cret@"])
def test_on_sparql_an_update_that_landed_before_the_server_went_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, credentials: str
) -> None:
    """The server goes away after a ``DELETE/INSERT WHERE`` landed, before the digest was
    moved: the user was told only that the server could not be reached, may have run the
    update again, and ``digest --check`` blamed an outside writer. Now the error says the
    update landed and to run ``horismos digest --check`` (then ``--rebase``) once the server
    answers, naming a store that can be given to it: a URL holding credentials was printed
    redacted (``***``), a command that cannot be run, so it says ``<your sparql: store>``."""
    server = OxigraphServer(tmp_path / "db")
    store = server.store.replace("http://", f"http://{credentials}")
    real_post = SparqlStore._post_update

    def post_then_stop(store: SparqlStore, text: str) -> None:
        real_post(store, text)
        if "ex/landed" in text:  # the user's update, not a fold
            server.stop()

    try:
        world = _world(store, tmp_path)
        monkeypatch.setattr(SparqlStore, "_post_update", post_then_stop)
        with pytest.raises(StoreError) as refused:
            world.store.update(
                "INSERT { <http://ex/landed> <http://ex/p> ?o } "
                "WHERE { <http://ex/b> <http://ex/p> ?o }"
            )
        said = str(refused.value)
        assert said.startswith("the update landed, but the world's digest could not be moved")
        shown = "<your sparql: store>" if credentials else server.store
        assert f"horismos digest --check --store {shown} " in said and "s3cret" not in said
        assert "then --rebase" in said
        assert "Do not run the update again" in said
        world.close()
        monkeypatch.undo()
        server.start()

        def digest(*args: str) -> subprocess.CompletedProcess[str]:
            return horismos_forked(".", "digest", "--store", server.store, *args)

        assert digest("--rebase").returncode == 0
        assert digest("--check").returncode == 0
        landed = {str(q[0]) for q in open_store(server.store).quads()}
        assert "http://ex/landed" in landed
    finally:
        server.stop()


JOURNAL_BEFORE_MARKS = Path(__file__).parent / "fixtures" / "journal_before_marks"
"""A ``journal:PATH`` folder as the code before bookkeeping updates were marked left it, the
process killed (``os._exit``) after a user's ``INSERT DATA``, a ``DELETE/INSERT WHERE`` and
a claims' bookkeeping update (``_claims._EVICT``), no snapshot written: three ``U`` records,
none marked."""


def test_a_journal_written_before_updates_moved_the_digest_reopens_with_a_true_one(
    tmp_path: Path,
) -> None:
    """Only the records of user updates were marked as ones that may write the world, so a
    journal written before replayed its user updates as bookkeeping: the digest after
    reopening was wrong, and ``digest --check`` blamed an outside writer."""
    folder = tmp_path / "store"
    shutil.copytree(JOURNAL_BEFORE_MARKS, folder)
    store = f"journal:{folder}"
    check = horismos_forked(".", "digest", "--check", "--store", store)
    assert check.returncode == 0, check.stderr
    expected = open_store("memory")
    expected.update(
        'PREFIX ex: <http://ex/> INSERT DATA { ex:a ex:p "3" . ex:b ex:p "2" . '
        "GRAPH ex:g { ex:a ex:q ex:b } }"
    )
    assert check.stdout.strip() == expected.digest().fingerprint
