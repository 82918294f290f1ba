"""A ``journal:PATH`` store reopens without a pass over the world after a user's update.

An update other than ``INSERT DATA``/``DELETE DATA`` is journalled as its text, and Oxigraph
does not say what it wrote, so replaying it leaves the digest unknown. ``close()`` writes a
snapshot only when the records exceed a quarter of it, so that record stayed, and every later
open recomputed the digest (1.3 s became 1.5-1.8 s at 200,000 triples) until the journal
rotated. Now the digest the update left is journalled after it: an open recomputes only when
the last such update has none after it (a crash between the two, a journal written before),
and once. Each test counts the store's own ``recompute_digest`` calls as it opens, and asks
``horismos digest --check`` (a real subprocess) whether the digest kept is the world's.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from forked import horismos_forked

from horismos._stores import open_store
from horismos._stores.journal import JournalStore

JOURNAL_BEFORE_MARKS = Path(__file__).parent / "fixtures" / "journal_before_marks"
"""A journal the code before bookkeeping updates were marked left, its process killed (see
``tests/test_update_digest.py``)."""

MOVE = (
    "DELETE { ?s <http://ex/p> ?o } INSERT { ?s <http://ex/r> ?o } "
    'WHERE { ?s <http://ex/p> ?o FILTER(?o = "7") }'
)


def opens_recomputing(store: str, monkeypatch: pytest.MonkeyPatch) -> int:
    """How many times opening (then closing) ``store`` recomputed the digest."""
    calls = []
    recompute = JournalStore.recompute_digest

    def counted(self: JournalStore) -> object:
        calls.append(1)
        return recompute(self)

    with monkeypatch.context() as m:
        m.setattr(JournalStore, "recompute_digest", counted)
        open_store(store).close()
    return len(calls)


def digest_checks(store: str) -> str:
    """``horismos digest --check``'s fingerprint, asserting it found the digest right."""
    check = horismos_forked(".", "digest", "--check", "--store", store)
    assert check.returncode == 0, check.stderr
    return check.stdout.strip()


def a_world_updated(tmp_path: Path) -> str:
    """A journal store of 2,000 triples (its snapshot), then a user's update, closed: the
    update's records are far under a quarter of the snapshot, so they stay in the journal."""
    world = tmp_path / "world.nt"
    world.write_text(
        "".join(f'<http://ex/s{i}> <http://ex/p> "{i}" .\n' for i in range(2000)), "utf-8"
    )
    store = f"journal:{tmp_path / 'store'}"
    held = open_store(store)
    held.load_file(world)
    held.update(MOVE)
    held.close()
    return store


def test_a_clean_close_after_a_users_update_reopens_without_recomputing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = a_world_updated(tmp_path)
    assert opens_recomputing(store, monkeypatch) == 0
    assert opens_recomputing(store, monkeypatch) == 0
    digest_checks(store)


def test_a_crash_between_the_update_and_its_digest_recomputes_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = a_world_updated(tmp_path)
    journal = tmp_path / "store" / "journal"
    body = journal.read_bytes()
    # cut before the digest's record, the last: the journal a crash between leaves
    last = body.rindex(b"JU ", 0, body.index(b"# horismos: digest "))
    with journal.open("r+b") as f:
        f.truncate(last)
        os.fsync(f.fileno())
    assert opens_recomputing(store, monkeypatch) == 1
    assert opens_recomputing(store, monkeypatch) == 0
    digest_checks(store)


def test_a_journal_written_before_the_digest_record_recomputes_once_and_right(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "store"
    shutil.copytree(JOURNAL_BEFORE_MARKS, folder)
    store = f"journal:{folder}"
    assert opens_recomputing(store, monkeypatch) == 1
    assert opens_recomputing(store, monkeypatch) == 0
    expected = open_store("memory")
    expected.update(
        'PREFIX ex: <http://ex/> INSERT DATA { ex:a ex:p "3" . ex:b ex:p "2" . '
        "GRAPH ex:g { ex:a ex:q ex:b } }"
    )
    assert digest_checks(store) == expected.digest().fingerprint
