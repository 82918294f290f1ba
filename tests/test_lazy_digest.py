"""An ``oxigraph:PATH`` store whose last process was killed opens without its digest and
computes it only when asked (horismos/_stores/oxigraph.py).

A process killed between two writes of the stored digest (SIGKILL, the OOM killer) leaves
none; the next open recomputed it from every quad, whatever the command (24 s at 1,000,000
triples), so a supervisor that killed sooner than that killed every next process too. These
kill a real process after its commit, then check that a command that never reads the digest
(``instances``, a ``run`` without ``--trace``, commits and a close) neither recomputes it nor
stores one it does not know, and that the digest, once asked, is exactly the recomputed one —
through more commits, the 1,000-commit mark, an update, a load, a close and a reopen.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pyoxigraph as ox
import pytest
from forked import horismos_forked
from leave_files import WAITING
from rdflib import Literal, URIRef

from horismos import World
from horismos._digest import Digest
from horismos._stores import Change
from horismos._stores import oxigraph as ox_module
from horismos._stores.base import DIGEST_GRAPH, LTHASH
from horismos._stores.oxigraph import OxigraphStore

EX = "http://example.org/leave#"
P = URIRef(EX + "note")
LEAVE = WAITING
WORLD = f"@prefix : <{EX}> .\n" + "".join(
    f':r{i} a :Request ; :note "request {i}" .\n' for i in range(20)
)
KILLED = """
import os, signal
from rdflib import Literal, URIRef
from horismos import World
from horismos._digest import Digest
from horismos._stores import Change
world = World.open({store!r})
world.commit(Change(add=[(URIRef({subject!r}), URIRef({predicate!r}), Literal("killed"), None)]))
os.kill(os.getpid(), signal.SIGKILL)
"""


def stored_digest(path: Path) -> str | None:
    """The digest the store at ``path`` holds, read by pyoxigraph alone (no Horismos open)."""
    store = ox.Store(str(path))
    try:
        found = list(
            store.quads_for_pattern(
                ox.NamedNode(str(DIGEST_GRAPH)), ox.NamedNode(str(LTHASH)), None,
                ox.NamedNode(str(DIGEST_GRAPH)),
            )
        )
        return found[0].object.value if found else None
    finally:
        del store


def killed_after_a_commit(path: Path, subject: str = EX + "killed") -> None:
    """A process opens the store, commits, and is killed (SIGKILL) before it closes."""
    script = KILLED.format(store=f"oxigraph:{path}", subject=subject, predicate=str(P))
    done = subprocess.run([sys.executable, "-c", script], env=dict(os.environ), timeout=120)
    assert done.returncode == -signal.SIGKILL, done.returncode
    assert stored_digest(path) is None  # its commit took the stored digest out


@pytest.fixture
def killed(tmp_path: Path) -> Path:
    """A store loaded (its digest stored), then written by a process that was killed."""
    (tmp_path / "leave.ttl").write_text(LEAVE, encoding="utf-8")
    (tmp_path / "w.ttl").write_text(WORLD, encoding="utf-8")
    loaded = horismos_forked(tmp_path, "load", "w.ttl", "--store", "oxigraph:st", timeout=120)
    assert loaded.returncode == 0, loaded.stderr
    assert stored_digest(tmp_path / "st") is not None
    killed_after_a_commit(tmp_path / "st")
    return tmp_path


def in_memory(world: World) -> Digest:
    """The digest of the same quads committed to an in-memory store, from nothing kept."""
    fresh = World.open("oxigraph")
    fresh.commit(Change(add=list(world.store.quads())))
    return fresh.store.digest()


def no_recompute(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every recompute of an Oxigraph store's digest noted, and refused, from now on."""
    asked: list[str] = []

    def refused(self: OxigraphStore) -> object:
        asked.append(self.name)
        raise AssertionError(f"{self.name}: the digest was recomputed")

    monkeypatch.setattr(OxigraphStore, "recompute_digest", refused)
    return asked


def test_commands_that_never_read_the_digest_do_not_recompute_it_after_a_kill(
    killed: Path,
) -> None:
    """``instances`` and a ``run`` without a trace (which commits its instance) open the
    store, and leave it, with no digest: none computed, and none stored that is not known."""
    shown = horismos_forked(killed, "instances", "--store", "oxigraph:st", timeout=120)
    assert shown.returncode == 0, shown.stderr
    ran = horismos_forked(killed, "run", "leave.ttl", "--store", "oxigraph:st", "--focus", ":r1",
                          timeout=120)
    assert ran.returncode == 3, ran.stdout + ran.stderr  # waiting: its instance committed
    assert stored_digest(killed / "st") is None
    # the digest asked for: computed once, stored, and the store's quads' own
    asked = horismos_forked(killed, "digest", "--store", "oxigraph:st", timeout=120)
    assert asked.returncode == 0, asked.stderr
    assert stored_digest(killed / "st") is not None
    with World.open("oxigraph:" + str(killed / "st")) as world:
        assert asked.stdout.strip() == world.digest() == in_memory(world).fingerprint
        assert world.store.digest() == world.store.recompute_digest()


def test_a_run_with_a_trace_writes_the_digest_it_computes_in_its_header(killed: Path) -> None:
    ran = horismos_forked(killed, "run", "leave.ttl", "--store", "oxigraph:st", "--focus", ":r2",
                          "--trace", "t.jsonl", timeout=120)
    assert ran.returncode == 3, ran.stdout + ran.stderr
    header, *_, end = (json.loads(line) for line in (killed / "t.jsonl").read_text().splitlines())
    with World.open("oxigraph:" + str(killed / "st")) as world:
        assert end["world_digest"] == world.digest() == in_memory(world).fingerprint
        assert header["world_digest"] not in (None, end["world_digest"])  # its commits between


def test_open_commit_and_close_after_a_kill_never_recompute(
    killed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In process: the store opened, written past the 1,000-commit mark (made 3 here), by an
    update and a load, and closed, without one recompute; it stores no digest after."""
    asked = no_recompute(monkeypatch)
    monkeypatch.setattr(ox_module, "_PERSIST_EVERY", 3)
    (killed / "more.ttl").write_text(f'<{EX}loaded> <{P}> "loaded" .\n', encoding="utf-8")
    with World.open("oxigraph:" + str(killed / "st")) as world:
        for i in range(7):
            world.commit(Change(add=[(URIRef(f"{EX}c{i}"), P, Literal(i), None)]))
        world.store.update(f'DELETE {{ ?s <{P}> "request 3" }} WHERE {{ ?s <{P}> "request 3" }}')
        world.load(killed / "more.ttl")
        assert stored_digest_in(world) is None
    assert asked == []
    assert stored_digest(killed / "st") is None
    monkeypatch.undo()
    with World.open("oxigraph:" + str(killed / "st")) as world:
        assert world.store.digest() == world.store.recompute_digest() == in_memory(world)
        assert (URIRef(EX + "loaded"), P, Literal("loaded"), None) in set(world.store.quads())


def test_commits_before_and_after_the_digest_is_asked_reopen_to_the_recomputed_one(
    killed: Path,
) -> None:
    """Commits while it is unknown, the digest asked, more commits (added and removed), a
    close and a reopen: the digest kept, and then the one stored, is the recomputed one."""
    name = "oxigraph:" + str(killed / "st")
    with World.open(name) as world:
        for i in range(5):
            world.commit(Change(add=[(URIRef(f"{EX}u{i}"), P, Literal(i), None)]))
        world.commit(Change(remove=[(URIRef(f"{EX}u0"), P, Literal(0), None)]))
        first = world.store.digest()
        assert stored_digest_in(world) == first.to_text()  # written at once
        assert first == world.store.recompute_digest() == in_memory(world)
        world.commit(Change(add=[(URIRef(f"{EX}k{i}"), P, Literal(i), None) for i in range(3)],
                            remove=[(URIRef(f"{EX}u1"), P, Literal(1), None)]))
        assert stored_digest_in(world) is None  # the first commit after took it out
        after = world.store.digest()
        assert after != first
    assert stored_digest(killed / "st") == after.to_text()
    with World.open(name) as world:
        assert world.store.digest() == after == world.store.recompute_digest()
        assert after == in_memory(world)


def test_a_store_killed_again_before_its_digest_was_asked_still_computes_it_right(
    killed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opened and written with the digest unknown, then killed again: the next process
    asked for it reads every commit of both."""
    with World.open("oxigraph:" + str(killed / "st")) as world:
        world.commit(Change(add=[(URIRef(EX + "between"), P, Literal("between"), None)]))
    killed_after_a_commit(killed / "st", subject=EX + "again")
    with World.open("oxigraph:" + str(killed / "st")) as world:
        quads = set(world.store.quads())
        assert {(URIRef(EX + s), P, Literal(o), None) for s, o in (
            ("killed", "killed"), ("between", "between"), ("again", "killed"))} <= quads
        assert world.store.digest() == world.store.recompute_digest() == in_memory(world)


def stored_digest_in(world: World) -> str | None:
    """The digest an open store holds, read through its own pyoxigraph store."""
    found = list(world.store._store.quads_for_pattern(  # type: ignore[attr-defined]
        ox.NamedNode(str(DIGEST_GRAPH)), ox.NamedNode(str(LTHASH)), None,
        ox.NamedNode(str(DIGEST_GRAPH))))
    return found[0].object.value if found else None
