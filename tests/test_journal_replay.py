"""Opening ``journal:PATH`` replays its journal strictly, a record at a time: a commit's record
that removes a quad the world does not hold, or adds one it does, means the journal and the
snapshot disagree (a typed error naming the file and the byte), while a SPARQL update, kept as
its text, may remove what is not there. The journals here are written record by record with
the store's own :func:`_record`, as a writer that went wrong would have left them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rdflib import Literal, URIRef

from horismos import World
from horismos._stores import Change, StoreError
from horismos._stores.journal import _HEAD_SHAPE, JOURNAL, _record

A, P = URIRef("urn:test:a"), URIRef("urn:test:p")
HEAD = b"# horismos journal after snapshot 0\n"


def nq(*values: str) -> bytes:
    """N-Quads of ``<urn:test:a> <urn:test:p> "value"`` for each of ``values``."""
    return b"".join(b'<urn:test:a> <urn:test:p> "%s" .\n' % v.encode() for v in values)


def journal_of(folder: Path, *records: bytes) -> list[int]:
    """``folder`` holding a journal of ``records`` and no snapshot; where each record starts."""
    folder.mkdir()
    (folder / JOURNAL).write_bytes(HEAD + b"".join(records))
    return [len(HEAD) + sum(map(len, records[:i])) for i in range(len(records))]


def objects(folder: Path) -> set[str]:
    with World.open(f"journal:{folder}", create=False) as world:
        assert world.store.recompute_digest() == world.store.digest()
        return {str(o) for _, _, o, _ in world.store.quads()}


@pytest.mark.parametrize(
    ("records", "why"),
    [
        ((_record(b"C", b"", nq("x")), _record(b"C", nq("y"), b"")),
         'it removes <urn:test:a> <urn:test:p> "y" and that is not stored'),
        ((_record(b"C", b"", nq("x")), _record(b"C", b"", nq("x"))),
         'it adds <urn:test:a> <urn:test:p> "x" and that is stored already'),
        ((_record(b"C", b"", nq("x", "x")),), "it adds a quad twice"),
    ],
    ids=["removes-absent", "adds-present", "adds-twice"],
)
def test_a_commit_record_that_does_not_follow_from_what_precedes_it_is_a_typed_error(
    tmp_path, records, why
):
    """Replay skipped such a quad in silence: the world opened was neither the journal's nor
    the snapshot's, and its digest moved by what never changed."""
    folder = tmp_path / "store"
    starts = journal_of(folder, *records)
    before = (folder / JOURNAL).read_bytes()
    with pytest.raises(StoreError) as raised:
        World.open(f"journal:{folder}")
    said = str(raised.value)
    where = f"{folder / JOURNAL}: the record at byte {starts[-1]} is corrupt ("
    assert said.startswith(where), said
    assert f"({why}: the journal and the snapshot disagree)" in said, said
    assert said.endswith("restore the folder from a backup"), said
    assert (folder / JOURNAL).read_bytes() == before  # nothing cut, nothing skipped


def test_an_update_record_may_remove_what_is_absent_and_insert_what_is_present(tmp_path):
    """An update is kept as its text: ``DELETE DATA`` of a quad not stored and ``INSERT DATA``
    of one stored are what a claim's bookkeeping may run, and replay as they ran."""
    folder = tmp_path / "store"
    journal_of(
        folder,
        _record(b"C", b"", nq("x")),
        _record(b"U", b'INSERT DATA { <urn:test:a> <urn:test:p> "x" }'),
        _record(b"U", b'DELETE DATA { <urn:test:a> <urn:test:p> "y" }'),
    )
    assert objects(folder) == {"x"}


def test_a_commit_records_only_what_it_changed(tmp_path):
    """A change may add a quad that is stored and remove one that is not (``apply`` allows
    both): its record holds only the quads that changed, so the strict replay takes it."""
    folder = tmp_path / "store"
    with World.open(f"journal:{folder}") as world:
        world.commit(Change(add=[(A, P, Literal("x"), None)]))
        size = (folder / JOURNAL).stat().st_size
        world.commit(Change(add=[(A, P, Literal("x"), None)],
                            remove=[(A, P, Literal("never"), None)]))
        assert (folder / JOURNAL).stat().st_size == size  # nothing changed: no record
        world.commit(Change(add=[(A, P, Literal("x"), None), (A, P, Literal("y"), None)],
                            remove=[(A, P, Literal("never"), None)]))
        data = (folder / JOURNAL).read_bytes()
        last = [m.start() for m in _HEAD_SHAPE.finditer(data)][-1]
        assert data[last:].endswith(b"\n" + nq("y"))  # removed nothing, added "y" alone
        assert b"never" not in data
        # as if killed: no snapshot, the journal replayed at the next open
        store = world.store
        os.close(store._fd)  # type: ignore[attr-defined]
        os.close(store._lock_fd)  # type: ignore[attr-defined]
        store._fd = -1  # type: ignore[attr-defined]
    assert objects(folder) == {"x", "y"}


OPENER = """
import json, os, sys
from horismos._stores.journal import JournalStore

def kb(field):  # this process's own (ru_maxrss carries the parent's over exec)
    status = open("/proc/self/status").read()
    return int(status.split(field + ":")[1].split()[0])

before = kb("VmRSS")
store = JournalStore("store", create=False)
print(json.dumps({"grew": (kb("VmHWM") - before) * 1024, "quads": len(store)}))
os._exit(0)  # not closed: no snapshot
"""


def test_opening_reads_the_journal_a_record_at_a_time(tmp_path):
    """A process killed before its rotation leaves a journal of up to 4x the snapshot; opening
    read it whole into memory, and a copy of every record's payload besides (2x its size at
    the peak). Here 48 MB of records over a world of 20 quads: the opener's peak grows by
    less than half the journal (it grew by ~2x it)."""
    def state(i: int) -> bytes:
        return b"".join(b'<urn:test:s%d> <urn:test:p%d> "%d" .\n' % (i % 500, k, k)
                        for k in range(20))

    folder = tmp_path / "store"
    folder.mkdir()
    with (folder / JOURNAL).open("wb") as f:
        f.write(HEAD)
        n = 0
        while f.tell() < 48 << 20:
            f.write(_record(b"C", state(n - 1) if n else b"", state(n) + b" " * 8000))
            n += 1
    size = (folder / JOURNAL).stat().st_size
    done = subprocess.run([sys.executable, "-c", OPENER], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    assert said["quads"] == 20
    assert said["grew"] < size / 2, (said, size)
