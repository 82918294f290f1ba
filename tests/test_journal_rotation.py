"""A rotation of ``journal:PATH`` dumps the world behind the commits: under the lock only the
switch to ``journal.next`` and the dump's start, then commits and reads go on while the
snapshot is written, fsynced and renamed in, and only then does ``journal.next`` become the
journal. A process killed (SIGKILL, for real) at each rename of that sequence opens to the
world it held, the commits made during the dump included.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time

import pyoxigraph as ox
import pytest
from blake3 import blake3
from rdflib import Literal, URIRef
from test_journal import held

from horismos import World
from horismos._stores import Change
from horismos._stores.journal import JOURNAL, NEXT, SNAPSHOT

A, P = URIRef("urn:test:a"), URIRef("urn:test:p")

# Loads a file (snapshot 1), commits, starts a dump behind, commits and counts with an update
# while it runs, and dies with SIGKILL at the nth os.replace: 1 the switch to journal.next (in
# this thread), 2 the snapshot's rename, 3 journal.next's over the journal (in the dump's
# thread, which waits at 2 for the commits made meanwhile); 0: after the whole rotation.
BEHIND = textwrap.dedent('''
    import json, os, signal, sys, threading
    from pathlib import Path
    from rdflib import Literal, URIRef
    from horismos import World
    from horismos._claims import CLAIMS
    from horismos._stores import Change

    A, P = URIRef("urn:test:a"), URIRef("urn:test:p")
    # enough that the dump is still reading while the commits below land (pyoxigraph writes
    # 8 KB at a time: a world of one quad was dumped whole before the first commit)
    Path("w.nt").write_text('<urn:test:a> <urn:test:p> "loaded" .\\n' + "".join(
        f'<urn:test:s{i}> <urn:test:p> "{i}" .\\n' for i in range(50_000)))
    world = World.open("journal:store")
    store = world.store
    store.load_file(Path("w.nt"))

    def held():
        return {"digest": str(store.digest()), "quads": sorted(str(q) for q in store._store)}

    for i in range(3):
        world.commit(Change(add=[(A, P, Literal(i), None)]))
    nth, calls, replace = int(sys.argv[1]), [0], os.replace
    committed = threading.Event()

    def dying(a, b):
        calls[0] += 1
        if calls[0] == 2:
            committed.wait()  # the commits made during the dump have landed
        if calls[0] == nth:
            if nth == 1:
                json.dump(held(), open("seen.json", "w"))
            os.kill(os.getpid(), signal.SIGKILL)
        replace(a, b)

    os.replace = dying
    with store._lock:
        store._rotate_behind()
    for i in range(3, 6):
        world.commit(Change(add=[(A, P, Literal(i), None)], remove=[(A, P, Literal(i - 3), None)]))
    store.update(f"""INSERT {{ GRAPH <{CLAIMS}> {{ <urn:test:n> <urn:test:count> ?n }} }}
        WHERE {{ {{ SELECT (COUNT(*) AS ?n) WHERE {{ ?s ?p ?o }} }} }}""")
    json.dump(held(), open("seen.json", "w"))
    committed.set()
    if nth == 0:
        with store._lock:
            store._settle()
        os.kill(os.getpid(), signal.SIGKILL)
    threading.Event().wait(60)
    sys.exit("not killed")
''')


@pytest.mark.parametrize("nth", [1, 2, 3, 0])
def test_a_process_killed_at_any_point_of_a_dump_behind_opens_to_the_same_world(tmp_path, nth):
    """1: journal.next is not there yet (its temporary file may be). 2: the snapshot is not
    renamed in: the snapshot before, the journal and journal.next are replayed. 3: the new
    snapshot is in, journal.next not renamed over the stale journal: it is renamed at open.
    0: all done. Each time with the commits and the counting update made during the dump."""
    (tmp_path / "behind.py").write_text(BEHIND)
    done = subprocess.run([sys.executable, "behind.py", str(nth)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == -9, done.stderr
    seen = json.loads((tmp_path / "seen.json").read_text())
    folder = tmp_path / "store"
    on_disk = {p.name for p in folder.iterdir()}
    assert (NEXT in on_disk) == (nth in (2, 3)), on_disk
    assert held(tmp_path) == seen
    assert held(tmp_path) == seen  # closed (a snapshot, or journal.next kept): the same again
    with World.open(f"journal:{folder}") as world:
        world.commit(Change(add=[(A, P, Literal("later"), None)]))
        world.store._rotate()  # type: ignore[attr-defined]
    assert NEXT not in {p.name for p in folder.iterdir()}
    later = str(ox.Quad(ox.NamedNode(str(A)), ox.NamedNode(str(P)), ox.Literal("later")))
    assert held(tmp_path)["quads"] == sorted([*seen["quads"], later])  # type: ignore[list-item]


def test_commits_and_reads_go_on_while_the_snapshot_is_written(tmp_path, monkeypatch):
    """The dump held the store's lock to its end (seconds at a million triples): here its
    fsync is held back until released, and a commit and a read land meanwhile (the old dump,
    under the lock, let them only after, once the wait for the release had run out)."""
    from horismos._stores import journal

    monkeypatch.setattr(journal, "_ROTATE_AT", 4096)
    order: list[str] = []
    real_fsync = os.fsync
    release = threading.Event()

    def fsync(fd: int) -> None:
        if os.readlink(f"/proc/self/fd/{fd}").endswith(f"{SNAPSHOT}.tmp"):
            order.append("dump waits")
            release.wait(30)  # a bound on the old code's hang only
            order.append("dump goes on")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    folder = tmp_path / "store"
    with World.open(f"journal:{folder}") as world:
        for i in range(20):
            world.commit(Change(add=[(A, P, Literal(f"{i} " + "x" * 400), None)]))
        for _ in range(5000):
            if order:
                break
            time.sleep(0.002)
        world.commit(Change(add=[(A, P, Literal("during"), None)]))
        order.append("committed")
        assert (A, P, Literal("during"), None) in set(world.store.quads())
        order.append("read")
        release.set()
        quads, digest = set(world.store.quads()), world.digest()
    assert order[:3] == ["dump waits", "committed", "read"], order
    assert {p.name for p in folder.iterdir()} == {SNAPSHOT, JOURNAL, "LOCK"}
    with World.open(f"journal:{folder}") as world:
        assert set(world.store.quads()) == quads and world.digest() == digest


def test_a_snapshot_naming_its_generation_on_its_first_line_still_opens(tmp_path):
    """Snapshots were written with that line first; they are now written with it after the
    dump (pyoxigraph writes the dump straight to the file, without the GIL)."""
    folder = tmp_path / "store"
    folder.mkdir()
    with World.open("oxigraph") as scratch:
        scratch.commit(Change(add=[(A, P, Literal("kept"), None)]))
        digest = scratch.store.digest().to_text()
    body = b"# horismos snapshot 3 digest %s\n" % digest.encode()
    body += b'<urn:test:a> <urn:test:p> "kept" .\n'
    (folder / SNAPSHOT).write_bytes(body + b"# sealed " + blake3(body).hexdigest().encode()
                                    + b"\n")
    (folder / JOURNAL).write_bytes(b"# horismos journal after snapshot 3\n")
    with World.open(f"journal:{folder}") as world:
        assert set(world.store.quads()) == {(A, P, Literal("kept"), None)}
        assert world.store.recompute_digest() == world.store.digest()


def test_a_dump_behind_that_fails_unexpectedly_lets_the_store_close(tmp_path, monkeypatch):
    """A dump behind that raised anything but an OSError (here its seal) left the store
    believing a dump was behind: close, which waits for it first, waited forever."""
    from horismos._stores import journal

    sealed, calls = journal._Dump.sealed, [0]

    def broken_seal(self: journal._Dump, generation: int, digest: bytes) -> None:
        calls[0] += 1
        if calls[0] == 1:  # the dump behind's; the snapshot the close writes is sealed
            raise ValueError("a seal that went wrong")
        sealed(self, generation, digest)

    monkeypatch.setattr(journal._Dump, "sealed", broken_seal)
    folder = tmp_path / "store"
    world = World.open(f"journal:{folder}")
    world.commit(Change(add=[(A, P, Literal("before"), None)]))
    with world.store._lock:  # type: ignore[attr-defined]
        world.store._rotate_behind()  # type: ignore[attr-defined]
    world.commit(Change(add=[(A, P, Literal("during"), None)]))
    closing = threading.Thread(target=world.store.close, daemon=True)
    closing.start()
    closing.join(30)
    assert not closing.is_alive(), "close waited for a dump that had ended"
    with World.open(f"journal:{folder}") as again:  # journal.next kept the commit
        assert (A, P, Literal("during"), None) in set(again.store.quads())
