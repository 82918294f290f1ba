"""The journal store (``journal:PATH``): each commit is one self-checking record appended before
it lands in memory. Processes are killed for real (SIGKILL) at the moments that matter: after
commits no snapshot holds yet, between a snapshot and the journal that follows it, while a
file's size limit refuses a write. Each time the store opens to the world that was committed,
quad for quad and digest for digest, runtime graphs included.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from forked import horismos_forked, run
from rdflib import Literal, URIRef

from horismos import World
from horismos._errors import UsageError
from horismos._stores import Change, Conflict, StoreError, open_store
from horismos._stores.journal import _HEAD_SHAPE, JOURNAL, SNAPSHOT

A, P = URIRef("urn:test:a"), URIRef("urn:test:p")
G = URIRef("urn:test:g")

# A process that opens journal:store, does what its argument says, writes what it holds to
# seen.json and dies with SIGKILL (no close, so no snapshot: the journal holds everything).
WRITER = textwrap.dedent('''
    import json, os, signal, sys
    from rdflib import Literal, URIRef
    from horismos import World
    from horismos._claims import _EVICT, CLAIMS
    from horismos._stores import Change

    A, P, G = URIRef("urn:test:a"), URIRef("urn:test:p"), URIRef("urn:test:g")
    world = World.open("journal:store")
    store = world.store

    def held():
        return {"digest": str(store.digest()), "quads": sorted(str(q) for q in store._store)}

    def count():  # replayed twice, it would count what it wrote the first time
        store.update(f"""INSERT {{ GRAPH <{CLAIMS}> {{ <urn:test:n> <urn:test:count> ?n }} }}
            WHERE {{ {{ SELECT (COUNT(*) AS ?n)
                WHERE {{ GRAPH <{CLAIMS}> {{ ?s ?p ?o }} }} }} }}""")

    for i in range(int(sys.argv[2])):
        world.commit(Change(add=[(A, P, Literal(i), None), (A, P, Literal(f"v{i}"), G)],
                            remove=[(A, P, Literal(i - 1), None)]))
    # the claims' bookkeeping: a lease stamped with NOW(), renewed, evicted, counted
    store.update(f"""INSERT {{ GRAPH <{CLAIMS}> {{ <urn:test:w> <urn:test:alive> true ;
        <urn:test:renewed> ?now }} }} WHERE {{ BIND(NOW() AS ?now) }}""")
    store.update(_EVICT)
    count()
    how = sys.argv[1]
    if how.startswith("replace:"):  # die at the nth os.replace of a snapshot's rotation
        nth, calls, replace = int(how[8:]), [0], os.replace
        def dying(a, b):
            calls[0] += 1
            if calls[0] == nth:
                json.dump(held(), open("seen.json", "w"))
                os.kill(os.getpid(), signal.SIGKILL)
            replace(a, b)
        os.replace = dying
        store._rotate()
        count()
    json.dump(held(), open("seen.json", "w"))
    if how == "close":
        store.close()
    else:
        os.kill(os.getpid(), signal.SIGKILL)
''')


def write(tmp_path: Path, how: str = "kill", commits: int = 3) -> dict[str, object]:
    """Run :data:`WRITER` in ``tmp_path``; what it held when it died (or closed)."""
    (tmp_path / "writer.py").write_text(WRITER)
    done = run([sys.executable, "writer.py", how, str(commits)], cwd=tmp_path,
               capture_output=True, text=True, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    return json.loads((tmp_path / "seen.json").read_text())


def held(tmp_path: Path) -> dict[str, object]:
    """What journal:store holds, opened by this process."""
    with World.open(f"journal:{tmp_path / 'store'}", create=False) as world:
        store = world.store
        assert store.recompute_digest() == store.digest()
        return {"digest": str(store.digest()),
                "quads": sorted(str(q) for q in store._store)}  # type: ignore[attr-defined]


def test_a_killed_process_loses_no_commit_and_reopens_to_the_same_world(tmp_path):
    seen = write(tmp_path, "kill")
    assert (tmp_path / "store" / JOURNAL).stat().st_size > 1000  # no snapshot: all in it
    assert not (tmp_path / "store" / SNAPSHOT).exists()
    assert held(tmp_path) == seen
    assert any("urn:horismos:runtime:claims" in q for q in seen["quads"])  # type: ignore[attr-defined]
    # closed, it wrote a snapshot: the same world again, from it
    assert (tmp_path / "store" / SNAPSHOT).exists()
    assert held(tmp_path) == seen


def test_a_closed_store_reopens_from_its_snapshot_and_an_empty_journal(tmp_path):
    seen = write(tmp_path, "close")
    journal = (tmp_path / "store" / JOURNAL).read_bytes()
    assert journal == b"# horismos journal after snapshot 1\n"
    assert held(tmp_path) == seen


@pytest.mark.parametrize("nth", [1, 2, 3])
def test_a_process_killed_at_any_point_of_a_snapshot_opens_to_the_same_world(tmp_path, nth):
    """Killed before the snapshot's rename (1), between it and the fresh journal's (2), after
    both (3, before one more update): the world opened is the one held when it died. At 2 the
    old journal is still there, and replayed on the snapshot that holds it already, its
    counting update would count itself."""
    seen = write(tmp_path, f"replace:{nth}")
    assert held(tmp_path) == seen


def records(tmp_path: Path) -> list[int]:
    """Where each record of journal:store's journal starts, and where the file ends."""
    data = (tmp_path / "store" / JOURNAL).read_bytes()
    heads = _HEAD_SHAPE.finditer(data)
    return [*(m.start() for m in heads), len(data)]


def test_a_torn_last_record_is_dropped_and_the_journal_cut_back_to_the_record_before(tmp_path):
    write(tmp_path, "kill", commits=2)
    before = (tmp_path / "store" / JOURNAL).stat().st_size
    # the counting update's record, then the digest it left (an update that may write the
    # world is followed by one): the update's write cut short, the digest's never begun
    *_, last, digest_after, _ = records(tmp_path)
    with open(tmp_path / "store" / JOURNAL, "r+b") as f:
        f.truncate(digest_after - 5)
    with World.open(f"journal:{tmp_path / 'store'}") as world:
        assert (tmp_path / "store" / JOURNAL).stat().st_size == last  # cut back
        # the last record was the counting update: the lease it counted is there, its count not
        counts = list(world.store.quads())  # world quads: the two commits, whole
        assert (A, P, Literal(1), None) in counts and (A, P, Literal(0), None) not in counts
        store = world.store
        assert store.recompute_digest() == store.digest()
        rows = store.select("SELECT ?n WHERE { GRAPH ?g { <urn:test:n> ?p ?n } }", {}, {})
        assert rows == []
        world.commit(Change(add=[(A, P, Literal("after"), None)]))  # appended after the cut
    assert before > last
    with World.open(f"journal:{tmp_path / 'store'}") as world:
        assert (A, P, Literal("after"), None) in set(world.store.quads())


def test_a_corrupt_record_before_the_last_is_a_typed_error_naming_the_file_and_byte(tmp_path):
    write(tmp_path, "kill", commits=2)
    first, second, *_ = records(tmp_path)
    path = tmp_path / "store" / JOURNAL
    data = bytearray(path.read_bytes())
    data[second - 3] ^= 0x20  # a letter of the first record's payload
    path.write_bytes(bytes(data))
    with pytest.raises(StoreError, match=rf"{path}: the record at byte {first} is corrupt"):
        World.open(f"journal:{tmp_path / 'store'}")
    assert path.read_bytes() == bytes(data)  # nothing cut, nothing skipped
    shown = horismos_forked(tmp_path, "digest", "--store", "journal:store", timeout=60)
    assert shown.returncode != 0 and "Traceback" not in shown.stderr, shown.stderr
    assert f"the record at byte {first} is corrupt" in shown.stderr


def test_a_second_process_opening_the_store_is_refused(tmp_path):
    (tmp_path / "w.ttl").write_text('<urn:test:a> <urn:test:p> "kept" .\n')
    loaded = horismos_forked(tmp_path, "load", "w.ttl", "--store", "journal:store", timeout=60)
    assert loaded.returncode == 0, loaded.stderr
    # a file loaded goes into a snapshot, not record by record into the journal
    assert (tmp_path / "store" / JOURNAL).read_bytes() == b"# horismos journal after snapshot 1\n"
    with World.open(f"journal:{tmp_path / 'store'}") as world:
        assert set(world.store.quads()) == {(A, P, Literal("kept"), None)}
        other = horismos_forked(tmp_path, "digest", "--store", "journal:store", timeout=60)
        assert other.returncode == 2 and "Traceback" not in other.stderr, other.stderr
        assert "opens in one process at a time" in other.stderr
        with pytest.raises(UsageError, match="one process at a time"):
            World.open(f"journal:{tmp_path / 'store'}")


def test_a_guard_that_fails_writes_no_record(tmp_path):
    with World.open(f"journal:{tmp_path / 'store'}") as world:
        world.commit(Change(add=[(A, P, Literal(1), None)]))
        size = (tmp_path / "store" / JOURNAL).stat().st_size
        with pytest.raises(Conflict):
            world.commit(Change(add=[(A, P, Literal(2), None)],
                                expect=[(A, P, Literal(3), None)]))
        with pytest.raises(Conflict):
            world.commit(Change(add=[(A, P, Literal(2), None)],
                                absent=[(A, P, Literal(1), None)]))
        assert (tmp_path / "store" / JOURNAL).stat().st_size == size


def test_a_commit_the_disk_refuses_raises_and_leaves_the_world_as_it_was(tmp_path):
    """The file size limit (RLIMIT_FSIZE) refuses the record part-way, as a full disk does:
    the commit is a StoreError, the world and the journal are as before, and the next commit
    the disk takes lands after it."""
    script = textwrap.dedent('''
        import resource, signal, json
        from rdflib import Literal, URIRef
        from horismos import World
        from horismos._stores import Change, StoreError
        A, P = URIRef("urn:test:a"), URIRef("urn:test:p")
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        with World.open("journal:store") as world:
            world.commit(Change(add=[(A, P, Literal("small"), None)]))
            before, digest = set(world.store.quads()), world.digest()
            size = (world.store.path / "journal").stat().st_size
            limit = resource.getrlimit(resource.RLIMIT_FSIZE)
            resource.setrlimit(resource.RLIMIT_FSIZE, (size + 100, limit[1]))
            try:
                world.commit(Change(add=[(A, P, Literal("x" * 5000), None)]))
            except StoreError as e:
                refused = str(e)
            else:
                refused = ""
            same = set(world.store.quads()) == before and world.digest() == digest
            kept = (world.store.path / "journal").stat().st_size == size
            resource.setrlimit(resource.RLIMIT_FSIZE, limit)
            world.commit(Change(add=[(A, P, Literal("later"), None)]))
        print(json.dumps({"refused": refused, "same": same, "kept": kept}))
    ''')
    (tmp_path / "full.py").write_text(script)
    done = run([sys.executable, "full.py"], cwd=tmp_path, capture_output=True,
               text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    assert "the commit was not written" in said["refused"], said
    assert said["same"] and said["kept"], said
    with World.open(f"journal:{tmp_path / 'store'}") as world:
        assert set(world.store.quads()) == {(A, P, Literal("small"), None),
                                            (A, P, Literal("later"), None)}


def test_an_update_that_would_replay_otherwise_is_refused_before_anything_is_written(tmp_path):
    with World.open(f"journal:{tmp_path / 'store'}") as world:
        size = (tmp_path / "store" / JOURNAL).stat().st_size
        with pytest.raises(UsageError, match="'UUID\\(' would write something else then"):
            world.store.update("INSERT { <urn:a> <urn:b> ?u } WHERE { BIND(UUID() AS ?u) }")
        with pytest.raises(UsageError, match="'\\[' would write something else then"):
            world.store.update("INSERT { [] <urn:b> <urn:o> } WHERE {}")  # a fresh node each time
        assert (tmp_path / "store" / JOURNAL).stat().st_size == size


def test_sync_is_named_after_the_path(tmp_path, monkeypatch):
    from horismos._stores import journal

    synced: list[int] = []
    monkeypatch.setattr(journal.os, "fdatasync", synced.append)
    plain = open_store(f"journal:{tmp_path / 'p'}")
    try:
        plain.apply(Change(add=[(A, P, Literal(1), None)]))
        assert synced == []  # handed to the OS only
    finally:
        plain.close()
    store = open_store(f"journal:{tmp_path / 's'}?sync=commit")
    try:
        assert store.name == f"journal:{tmp_path / 's'}?sync=commit"
        store.apply(Change(add=[(A, P, Literal(1), None)]))
        assert len(synced) == 1  # the commit's record, fsynced before apply returned
    finally:
        store.close()
    with pytest.raises(UsageError, match="sync is one of os, commit"):
        open_store(f"journal:{tmp_path / 's'}?sync=always")
    with pytest.raises(UsageError, match=r"no store at .*create one with `horismos load"):
        open_store(f"journal:{tmp_path / 'none'}", create=False)


def test_a_snapshot_or_journal_that_cannot_be_read_is_a_typed_error(tmp_path):
    write(tmp_path, "close")
    snapshot = tmp_path / "store" / SNAPSHOT
    whole = snapshot.read_bytes()
    snapshot.write_bytes(whole[: len(whole) // 2] + b"<urn:broken")
    with pytest.raises(StoreError, match=rf"{snapshot}: the snapshot cannot be read"):
        World.open(f"journal:{tmp_path / 'store'}")
    snapshot.write_bytes(whole)
    (tmp_path / "store" / JOURNAL).write_bytes(b"not a journal\n")
    with pytest.raises(StoreError, match="not a horismos journal"):
        World.open(f"journal:{tmp_path / 'store'}")


def settled(store: object) -> None:
    """Once a snapshot being dumped behind the commits is written (and its journal.next made
    the journal)."""
    with store._lock:  # type: ignore[attr-defined]
        store._settle()  # type: ignore[attr-defined]


def test_a_journal_grown_past_its_snapshot_is_rotated_and_reopens_the_same(tmp_path, monkeypatch):
    from horismos._stores import journal

    monkeypatch.setattr(journal, "_ROTATE_AT", 4096)  # past 4x the snapshot and 4 KB
    with World.open(f"journal:{tmp_path / 'store'}") as world:
        for i in range(150):
            world.commit(Change(add=[(A, P, Literal(f"{i} " + "x" * 400), G)]))
            settled(world.store)  # each snapshot, dumped behind the commits, written
        assert world.store._generation >= 2  # type: ignore[attr-defined]
        snapshot = (tmp_path / "store" / SNAPSHOT).stat().st_size
        assert (tmp_path / "store" / JOURNAL).stat().st_size <= 4 * snapshot + 1000
        quads, digest = set(world.store.quads()), world.digest()
        os.close(world.store._fd)  # type: ignore[attr-defined]  # as if killed: no snapshot
        os.close(world.store._lock_fd)  # type: ignore[attr-defined]
        world.store._fd = -1  # type: ignore[attr-defined]
    with World.open(f"journal:{tmp_path / 'store'}") as world:
        assert set(world.store.quads()) == quads and world.digest() == digest


def test_a_close_after_a_few_commits_to_a_large_world_leaves_them_to_the_journal(tmp_path):
    """A process per event that commits a step to a large world and closes does not dump the
    whole world: its records stay in the journal (replayed at the next open) until they hold
    a quarter of the snapshot's bytes; then a close writes a snapshot."""
    folder = tmp_path / "store"
    with World.open(f"journal:{folder}") as world:
        world.store.load([(URIRef(f"urn:test:n{i}"), P, Literal(i), G) for i in range(2000)])
    snapshot = (folder / SNAPSHOT).read_bytes()
    with World.open(f"journal:{folder}") as world:
        world.commit(Change(add=[(A, P, Literal("one event"), G)]))
        quads, digest = set(world.store.quads()), world.digest()
    assert (folder / SNAPSHOT).read_bytes() == snapshot  # not dumped again
    assert b"one event" in (folder / JOURNAL).read_bytes()
    with World.open(f"journal:{folder}") as world:
        assert set(world.store.quads()) == quads and world.digest() == digest
        for i in range(len(snapshot) // 4 // 100):  # records of over a quarter of its bytes
            world.commit(Change(add=[(A, P, Literal(f"{i} " + "x" * 100), G)]))
    assert (folder / SNAPSHOT).read_bytes() != snapshot
    assert (folder / JOURNAL).read_bytes() == b"# horismos journal after snapshot 2\n"


# A process that commits, loads a file whose snapshot cannot be written whole (a folder stands
# where a temp file goes), commits again, and dies with SIGKILL: what it was told, what it held.
HALF_ROTATED = textwrap.dedent('''
    import json, os, signal, sys
    from pathlib import Path
    from rdflib import Literal, URIRef
    from horismos import World
    from horismos._stores import Change, StoreError
    A, P = URIRef("urn:test:a"), URIRef("urn:test:p")
    Path("w.nt").write_text('<urn:test:a> <urn:test:p> "loaded" .\\n')
    world = World.open("journal:store")
    world.commit(Change(add=[(A, P, Literal("before"), None)]))
    os.mkdir(sys.argv[1])
    said = {}
    try:
        world.store.load_file(Path("w.nt"))
    except StoreError as e:
        said["load"] = str(e)
    os.rmdir(sys.argv[1])
    try:
        world.commit(Change(add=[(A, P, Literal("after"), None)]))
        said["after"] = "returned"
    except StoreError as e:
        said["after"] = str(e)
    print(json.dumps(said), flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
''')


@pytest.mark.parametrize("blocked", ["store/journal.tmp", "store/snapshot.nq.tmp"])
def test_a_snapshot_that_fails_part_way_takes_no_more_commits_until_reopened(tmp_path, blocked):
    """The fresh journal after a written snapshot fails (``journal.tmp``): the journal still
    open names the snapshot before, so a commit appended to it was ignored at the next open —
    returned, then lost. The snapshot itself fails (``snapshot.nq.tmp``): the file loaded is in
    memory and on disk nowhere, so the world reopened was not the one the later commits were
    made on. Either way the store now refuses commits until it is reopened."""
    (tmp_path / "half.py").write_text(HALF_ROTATED)
    done = run([sys.executable, "half.py", blocked], cwd=tmp_path,
               capture_output=True, text=True, timeout=60)
    assert "Traceback" not in done.stderr, done.stderr
    said = json.loads(done.stdout)
    assert "was not written" in said["load"], said
    with World.open(f"journal:{tmp_path / 'store'}") as world:
        reopened = set(world.store.quads())
    if said["after"] == "returned":  # then it must be there
        assert (A, P, Literal("after"), None) in reopened
    assert "reopen the store" in said["after"], said
    assert (A, P, Literal("before"), None) in reopened
    assert (A, P, Literal("after"), None) not in reopened


def test_bytes_after_the_last_record_that_no_write_began_are_corrupt_not_torn(tmp_path):
    """A write cut short leaves the start of a record (or zeros the file was given); a few
    bytes of anything else after the last record are not that, and were cut off unseen."""
    write(tmp_path, "kill", commits=2)
    path = tmp_path / "store" / JOURNAL
    *_, last, end = records(tmp_path)
    whole = path.read_bytes()
    path.write_bytes(whole + b"garbage\n")
    with pytest.raises(StoreError, match=rf"{path}: the record at byte {end} is corrupt"):
        World.open(f"journal:{tmp_path / 'store'}")
    assert path.read_bytes() == whole + b"garbage\n"  # nothing cut
    path.write_bytes(whole + whole[last : last + 40])  # a record's header, cut short: torn
    with World.open(f"journal:{tmp_path / 'store'}"):
        assert path.read_bytes() == whole


def test_an_update_naming_now_or_blank_nodes_only_inside_iris_strings_or_comments_is_kept(
    tmp_path,
):
    """What makes an update replay otherwise is a function call or a blank node in its text,
    not those letters inside an IRI, a string or a comment: such an update was refused
    (``_:``), or had its string rewritten (``NOW()``), by a search of the whole text."""
    note = URIRef("urn:test:note")
    with World.open(f"journal:{tmp_path / 'store'}") as world:
        world.store.update(
            "INSERT DATA { <urn:test:a_:b> <urn:test:note> 'NOW() or uuid()' , "
            '"""rand() _:x""" } # BNODE() would be refused here'
        )
        world.store.update(
            "INSERT { <urn:test:a> <urn:test:at> ?t } WHERE { BIND(NOW() AS ?t) }"
        )
        with pytest.raises(UsageError, match="'_:' would write something else then"):
            world.store.update("INSERT { _:b <urn:test:note> 'NOW()' } WHERE {}")
        held = set(world.store.quads())
    with World.open(f"journal:{tmp_path / 'store'}") as world:
        assert set(world.store.quads()) == held
    notes = {str(o) for s, p, o, g in held if p == note}
    assert notes == {"NOW() or uuid()", "rand() _:x"}
    assert (URIRef("urn:test:a_:b"), note, Literal("NOW() or uuid()"), None) in held
    assert any(p == URIRef("urn:test:at") and o.datatype is not None for s, p, o, g in held)


# Ctrl-C delivered the moment the record is written, before the commit lands (the interpreter's
# trace hook raises KeyboardInterrupt as a signal handler does), then a commit, then SIGKILL.
INTERRUPTED = textwrap.dedent('''
    import os, signal, sys
    from rdflib import Literal, URIRef
    from horismos import World
    from horismos._stores import Change, journal
    A, P = URIRef("urn:test:a"), URIRef("urn:test:p")
    world = World.open("journal:store")
    world.commit(Change(add=[(A, P, Literal("first"), None)]))
    written = journal._write_all.__code__

    def interrupt(frame, event, arg):
        if event == "return":
            sys.settrace(None)
            raise KeyboardInterrupt
        return interrupt

    sys.settrace(lambda frame, event, arg: interrupt if frame.f_code is written else None)
    try:
        world.commit(Change(add=[(A, P, Literal("interrupted"), None)]))
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    world.commit(Change(add=[(A, P, Literal("third"), None)]))
    os.kill(os.getpid(), signal.SIGKILL)
''')


def test_a_commit_interrupted_after_its_record_was_written_is_not_replayed(tmp_path):
    """KeyboardInterrupt between the record's write and the commit landing in memory: the
    commit raised, so its record is cut back; it was left in the journal, replayed at the
    next open (and the journal's length this process kept was short by it)."""
    (tmp_path / "interrupted.py").write_text(INTERRUPTED)
    done = run([sys.executable, "interrupted.py"], cwd=tmp_path,
               capture_output=True, text=True, timeout=60)
    assert done.stdout == "interrupted\n", done.stderr
    with World.open(f"journal:{tmp_path / 'store'}") as world:
        assert {o for _, _, o, _ in world.store.quads()} == {Literal("first"), Literal("third")}


def test_a_snapshot_cut_short_or_altered_is_a_typed_error_not_a_smaller_world(tmp_path):
    """N-Quads cut at a line's end, or a letter of a literal changed, still parse: the
    snapshot opened to a world missing what was cut, or holding what nobody wrote, its digest
    no longer its own. It is sealed with the hash of what comes before the seal."""
    write(tmp_path, "close")
    snapshot = tmp_path / "store" / SNAPSHOT
    whole = snapshot.read_bytes()
    lines = whole.splitlines(keepends=True)
    for damaged in (b"".join(lines[: len(lines) // 2]), whole.replace(b'"v1"', b'"v7"')):
        assert damaged != whole
        snapshot.write_bytes(damaged)
        with pytest.raises(StoreError, match=rf"{snapshot}: the snapshot cannot be read: .*seal"):
            World.open(f"journal:{tmp_path / 'store'}")
    snapshot.write_bytes(whole)
    assert held(tmp_path)["quads"]


def test_two_threads_closing_the_store_at_once_close_it_once(tmp_path):
    """A serving thread and the main thread (or atexit) closing together: each saw the store
    open before taking its lock, so the second closed the journal's descriptor again (an
    OSError, or whatever file had been given that number since)."""
    store = open_store(f"journal:{tmp_path / 'store'}")
    store.apply(Change(add=[(A, P, Literal(1), None)]))
    failed: list[BaseException] = []

    def close() -> None:
        try:
            store.close()
        except BaseException as e:  # what a thread raised, asserted below
            failed.append(e)

    def waiting(thread: threading.Thread) -> bool:  # blocked inside close(), on the lock
        frame = sys._current_frames().get(thread.ident or 0)
        return frame is not None and frame.f_code is type(store).close.__code__

    with store._lock:  # type: ignore[attr-defined]
        closing = [threading.Thread(target=close) for _ in range(2)]
        for thread in closing:
            thread.start()
        while not all(waiting(t) for t in closing):
            time.sleep(0.001)
    for thread in closing:
        thread.join()
    assert failed == []
    with World.open(f"journal:{tmp_path / 'store'}") as world:  # released, and whole
        assert set(world.store.quads()) == {(A, P, Literal(1), None)}


@pytest.mark.parametrize("damage", ["deleted", "emptied"])
def test_a_snapshot_whose_journal_is_gone_is_a_typed_error_not_an_older_world(tmp_path, damage):
    """The journal is written before any snapshot and only ever replaced whole, so a snapshot
    without one (or with an empty one) lost it to something else: the commits it held were
    dropped unseen and the world opened as the snapshot had it. The error says how to open
    that world on purpose."""
    folder = tmp_path / "store"
    with World.open(f"journal:{folder}") as world:
        world.store.load([(A, P, Literal("loaded"), None)])
    with World.open(f"journal:{folder}") as world:
        world.commit(Change(add=[(A, P, Literal("committed"), None)]))
    if damage == "deleted":
        (folder / JOURNAL).unlink()
    else:
        (folder / JOURNAL).write_bytes(b"")
    first = "# horismos journal after snapshot 1"
    with pytest.raises(StoreError, match=rf"{folder / JOURNAL} is missing.*'{first}'"):
        World.open(f"journal:{folder}")
    (folder / JOURNAL).write_text(first + "\n")
    with World.open(f"journal:{folder}") as world:
        assert set(world.store.quads()) == {(A, P, Literal("loaded"), None)}


def test_a_rotation_that_fails_during_a_commit_lets_the_commit_land(tmp_path, monkeypatch):
    """A snapshot is an economy: one the disk refuses (here a folder in the way of its
    temporary file) leaves the snapshot and journal before it whole, so the commit is taken,
    and the dump is not tried again at every commit."""
    from horismos._stores import journal

    monkeypatch.setattr(journal, "_ROTATE_AT", 2048)
    folder = tmp_path / "store"
    with World.open(f"journal:{folder}") as world:
        (folder / f"{SNAPSHOT}.tmp").mkdir()  # every dump fails
        dumps: list[int] = []
        rotate = world.store._rotate  # type: ignore[attr-defined]
        monkeypatch.setattr(world.store, "_rotate", lambda: dumps.append(1) or rotate())
        for i in range(60):
            world.commit(Change(add=[(A, P, Literal(f"{i} " + "x" * 100), G)]))
        assert 1 <= len(dumps) <= 3  # once past the threshold, then as the journal doubles
        quads, digest = set(world.store.quads()), world.digest()
        (folder / f"{SNAPSHOT}.tmp").rmdir()
    with World.open(f"journal:{folder}") as world:
        assert set(world.store.quads()) == quads and world.digest() == digest


@pytest.mark.parametrize("create", [True, False])
def test_journal_given_an_oxigraph_stores_folder_says_to_open_it_as_one(tmp_path, create):
    """``journal:DIR`` on a folder an ``oxigraph:DIR`` store wrote: said to be that store, and
    how to open it (it said the folder held other files and no store, or to create one)."""
    folder = tmp_path / "world"
    store = open_store(f"oxigraph:{folder}")
    store.apply(Change(add=[(A, P, Literal(1), None)]))
    store.close()
    with pytest.raises(UsageError, match=rf"holds an oxigraph: store, not a journal: one; "
                                         rf"open it as --store oxigraph:{folder}"):
        open_store(f"journal:{folder}", create=create)
