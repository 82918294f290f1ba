"""The journal store (``journal:PATH``): the world in pyoxigraph's memory, each commit appended
to a journal file before it lands there, so a commit is durable at about the cost of a write.

Why: on ``oxigraph:PATH`` every quad a step writes or removes is a RocksDB operation inside a
transaction (~20 µs each, ~25 a step), which made a step on disk ~3x one in memory. Here a
commit is one ``os.write`` of one record (Temporal's history, Redis's append-only file), then
the in-memory commit of :class:`~horismos._stores.oxigraph.OxigraphStore`, whose code this
store runs unchanged (only :meth:`_land` and :meth:`update` are written ahead).

The folder holds ``snapshot.nq`` (N-Quads as pyoxigraph dumps it, then one comment line that
names its generation and the world's digest, then one that seals it with the hash of the rest;
snapshots written before had the first of those lines first), ``journal`` (a header line naming
the generation of the snapshot it follows, then records), while a snapshot is dumped behind the
commits ``journal.next`` (the same, after the snapshot being dumped), and ``LOCK``
(``flock``-ed by the one process that has it open). Opening loads the snapshot and replays the
journal after it, a record at a time (its memory bounded by the largest record, not the
journal). A record::

    J<kind> <length a> <length b> <blake3 of the record's head and payload> <blake3 of head>\\n
    <payload: a bytes, then b bytes>

``C`` (a commit): the N-Quads of the quads removed, then of those added, only quads that
changed (so replay is strict: a quad removed that is not stored, or added that is, means the
journal and snapshot disagree, and is an error like a record failing its check). ``U`` (a SPARQL
update, the claims' bookkeeping): its text, ``NOW()`` written in as the time it ran, so that
replaying it writes what it wrote. Every quad counts, runtime graphs included. An update that
writes only bookkeeping graphs (``runtime_only``: a claim, a lease, the short-id index) starts
with the comment :data:`_BOOKKEEPING`; any other may have written the world, and Oxigraph says
nothing of what it wrote, so an open that replays one recomputes the digest once, after the
last record. Journals written before the mark hold none: each of their updates counts as one
that may have written the world (a user's did). So that this is paid once, not at every open
until the journal rotates (:meth:`JournalStore.close` leaves records behind), such an update,
once landed and its digest recomputed, is followed by a ``U`` record that is a SPARQL comment
alone, :data:`_DIGEST_AFTER` and the digest it left: replay takes that as the digest at that
point. Only an open whose last unmarked update has none after it (the process died between
the two, or the journal was written before this record) recomputes, and then appends one.

A crash leaves at most a torn last record (one write, cut short), which opening drops, cutting
the file back to the last whole record; anything else that fails its check is a
:class:`StoreError` naming the file and the byte where it starts, never skipped. A snapshot is
written (temp file, fsync, rename) at :meth:`close` and after a file is loaded, under the lock;
the journal it supersedes is replaced only after, and a journal older than its snapshot is
ignored, so a crash at any point opens to the same world. When the journal outgrows the
snapshot, the dump runs behind the commits (:meth:`JournalStore._rotate_behind`), which
``journal.next`` takes meanwhile.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import re
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

import pyoxigraph as ox
from blake3 import blake3

from .._digest import ZERO, Digest
from .._durable_files import fsync_folder
from .._errors import UsageError
from .backup_folder import into_fresh_folder
from .base import Progress, StoreError
from .ox_files import may_hold_blank_nodes
from .ox_folder import (
    HELD,
    HELD_HERE,
    held_refused,
    open_refused,
    refuse_folder_of_files,
    waiting_for_lock,
)
from .ox_terms import Encoded, is_runtime, ox_line
from .oxigraph import OxigraphStore
from .update_text import pinned

__all__ = ["SYNCS", "JournalStore"]

SNAPSHOT, JOURNAL, NEXT, LOCK = "snapshot.nq", "journal", "journal.next", "LOCK"
SYNCS = ("os", "commit")
"""``sync=os`` (the default): each commit handed to the OS before it returns, surviving the
process being killed; ``sync=commit``: each also fsynced, surviving a power cut."""
_NQ = ox.RdfFormat.N_QUADS
_JOURNAL_HEAD = re.compile(rb"# horismos journal after snapshot (\d+)\n")
_SNAPSHOT_HEAD = re.compile(rb"# horismos snapshot (\d+)(?: digest (\S+))?\n")
_HEAD_LINE = 8192  # bytes a snapshot's line naming generation and digest (~2.8 KB) stays under
_SEAL = b"# sealed "
_SEALED = len(_SEAL) + 64 + 1  # a snapshot's last line: the blake3 of every byte before it
_HEAD_SHAPE = re.compile(rb"J[CU] \d{12} \d{12} [0-9a-f]{64} [0-9a-f]{16}\n")
_A_HEAD = b"JC %012d %012d %s %s\n" % (0, 0, b"0" * 64, b"0" * 16)
"""A header's shape, and one of that shape: the bytes a torn header lacks, so that the start
of one is told from bytes no write began (:func:`_read_one`)."""
_HEAD = len(_A_HEAD)  # "J", kind, two lengths, two hashes, separators
_BOOKKEEPING = b"# horismos: bookkeeping only\n"
"""The first line of a ``U`` record whose update is ``runtime_only``, a SPARQL comment (the
record replays as it is). The unmarked are the ones that may write the world, so that a
journal written before updates moved the digest, none of them marked, replays right."""
_DIGEST_AFTER = b"# horismos: digest "
"""The start of a ``U`` record that is a comment alone (an empty update: code that predates it
replays it as nothing), then the world's digest at that point and a newline: written after
an update that may have written the world, once its digest was recomputed."""
_ROTATE_AT = 64 * 1024 * 1024  # journal bytes below which it is never rotated (nor at 4x)


def _record(kind: bytes, a: bytes, b: bytes = b"") -> bytes:
    """One record: its header (kind, lengths, the hash of header and payload, the hash of
    the header before it) and its payload, ``a`` then ``b``."""
    head = b"J%s %012d %012d " % (kind, len(a), len(b))
    check = blake3(head)
    check.update(a)
    check.update(b)
    head += check.hexdigest().encode() + b" "
    return head + blake3(head).hexdigest(8).encode() + b"\n" + a + b


_LOCKED_HERE: set[tuple[int, int]] = set()
"""The lock files (device, inode) this process holds a journal's lock on: a second open of
one in this process is said to be this process's own, and not waited for
(``HORISMOS_LOCK_WAIT``), as no other process will let it go."""


def _locked_here(fd: int) -> tuple[int, int]:
    """The identity of the lock file open at ``fd``, as :data:`_LOCKED_HERE` holds it."""
    st = os.fstat(fd)
    return st.st_dev, st.st_ino


class _Torn(Exception):
    """The journal's last record was cut short: dropped."""


class _Disagrees(Exception):
    """A commit's record does not replay onto what precedes it (why, in its message)."""


def _records(
    f: BinaryIO, start: int, size: int, name: Path
) -> Iterator[tuple[int, bytes, bytes, bytes]]:
    """The whole records of the journal open as ``f`` (``size`` bytes) from ``start``, read one
    at a time (where each starts, its kind, a, b): memory is bounded by the largest record, not
    the journal (up to 4x the snapshot before a rotation)."""
    f.seek(start)
    at = start
    while at < size:
        try:
            kind, a, b = _read_one(f, at, size, name)
        except _Torn:
            return
        yield at, kind, a, b
        at += _HEAD + len(a) + len(b)


def _corrupt(name: Path, at: int, why: str) -> StoreError:
    """The error for a record that cannot be replayed, whatever is wrong with it: it is never
    skipped, so every such error says the same of what to do."""
    return StoreError(
        f"{name}: the record at byte {at} is corrupt ({why}); "
        "the journal cannot be replayed past it — restore the folder from a backup"
    )


def _zeros_on(f: BinaryIO) -> bool:
    """Whether all that is left of ``f`` is zeros (space the file was given at a crash and
    never written), read a block at a time."""
    while block := f.read(1 << 20):
        if block.strip(b"\0"):
            return False
    return True


def _read_one(f: BinaryIO, at: int, size: int, name: Path) -> tuple[bytes, bytes, bytes]:
    """The record at ``at``, where ``f`` stands (kind, a, b); :class:`_Torn` when it is the
    last and cut short, a :class:`StoreError` when it fails its check otherwise."""
    head = f.read(_HEAD)
    if len(head) < _HEAD:
        tail = head.rstrip(b"\0")  # zeros: space the file was given at a crash
        if _HEAD_SHAPE.fullmatch(tail + _A_HEAD[len(tail) :]):
            raise _Torn  # the header cut short
        raise _corrupt(name, at, "bytes no record starts with")
    if head[0:1] != b"J" or blake3(head[:-17]).hexdigest(8).encode() != head[-17:-1]:
        if not head.strip(b"\0") and _zeros_on(f):
            raise _Torn  # space the file was given at a crash and never written
        raise _corrupt(name, at, "its header fails its check")
    kind, la, lb = head[1:2], int(head[3:15]), int(head[16:28])
    end = at + _HEAD + la + lb
    if end > size:
        raise _Torn  # the payload cut short
    a, b = f.read(la), f.read(lb)
    check = blake3(head[:29])
    check.update(a)
    check.update(b)
    if check.hexdigest().encode() != head[29:93]:
        if end == size:
            raise _Torn  # the last record, its bytes never all written
        raise _corrupt(name, at, "its content fails its check")
    return kind, a, b


def _nquads(quads: list[ox.Quad]) -> bytes:
    """``quads`` as N-Quads, each term as pyoxigraph holds it (blank node labels kept)."""
    return ox.serialize(quads, format=_NQ) or b"" if quads else b""


def _check_seal(snapshot: Path) -> None:
    """A :class:`ValueError` unless ``snapshot`` ends with the seal of what comes before:
    without it, N-Quads cut at a line's end, or with a letter changed, would open as a smaller
    or another world."""
    with snapshot.open("rb") as f:
        check, left = blake3(max_threads=blake3.AUTO), os.fstat(f.fileno()).st_size - _SEALED
        while left > 0 and (chunk := f.read(min(left, 1 << 22))):
            check.update(chunk)
            left -= len(chunk)
        if left or f.read() != _SEAL + check.hexdigest().encode() + b"\n":
            raise ValueError(
                "it does not end with the seal of what it holds (cut short, or altered)"
            )


def _write_all(fd: int, data: bytes) -> None:
    """``data`` written in one ``os.write`` (a short write, which a full disk gives, retried
    for the rest: the caller cuts the file back should it fail)."""
    done = os.write(fd, data)
    while done < len(data):
        done += os.write(fd, memoryview(data)[done:])


def _follows(journal: Path) -> int | None:
    """The generation of the snapshot ``journal`` follows (its first line); None when there
    is no such file, or it is empty."""
    try:
        with journal.open("rb") as f:
            line = f.readline(128)
    except FileNotFoundError:
        return None
    head = _JOURNAL_HEAD.fullmatch(line)
    if head is None and line:
        raise StoreError(
            f"{journal}: not a horismos journal (its first line); restore the folder from a backup"
        )
    return int(head[1]) if head is not None else None


class _Dump:
    """pyoxigraph dumping a store into ``temp`` as N-Quads, in a thread and without the GIL,
    created once the dump has begun reading. Its memory store keeps each version a reader
    holds, so what is dumped is the world at that moment, whatever lands after; pyoxigraph
    tells that moment only by the first bytes it writes (it buffers 8 KB), so those, or the
    end of the thread (a small world is written at its end), are waited for: ~ms."""

    def __init__(self, store: ox.Store, temp: Path) -> None:
        self.temp = temp
        self._failed: Exception | None = None
        temp.write_bytes(b"")  # so that its size is 0 until the dump writes
        self._thread = threading.Thread(
            target=self._dump, args=(store,), name="horismos-journal-dump", daemon=True
        )
        self._thread.start()
        while self._thread.is_alive() and not os.stat(temp).st_size:
            self._thread.join(0.0002)

    def _dump(self, store: ox.Store) -> None:
        try:
            store.dump(str(self.temp), _NQ)  # and fsynced
        except Exception as e:  # raised by join, in the thread that waits for it
            self._failed = e

    def join(self) -> None:
        """Wait for the dump; an :class:`OSError` if it failed."""
        self._thread.join()
        if self._failed is not None:
            raise OSError(f"the dump failed: {self._failed}") from self._failed

    def sealed(self, generation: int, digest: bytes) -> None:
        """:func:`_seal` of what it dumped."""
        _seal(self.temp, generation, digest)


def _seal(temp: Path, generation: int, digest: bytes) -> None:
    """A dumped snapshot's last two lines written and fsynced: its generation and digest,
    then the seal, the BLAKE3 of every byte before it (read back through ``mmap``)."""
    with temp.open("ab") as f:
        f.write(b"# horismos snapshot %d digest %s\n" % (generation, digest))
        f.flush()
        seal = blake3(max_threads=blake3.AUTO)
        seal.update_mmap(temp)
        f.write(_SEAL + seal.hexdigest().encode() + b"\n")
        f.flush()
        os.fsync(f.fileno())


class JournalStore(OxigraphStore):
    """An in-memory :class:`OxigraphStore` whose every change is appended to a journal in
    ``path`` first; see the module's docstring for the files and the guarantees."""

    def __init__(self, path: str | Path, *, create: bool = True, sync: str = "os") -> None:
        folder = Path(path)
        if sync not in SYNCS:
            raise UsageError(f"journal:{folder}?sync={sync}: sync is one of {', '.join(SYNCS)}")
        held = (folder / SNAPSHOT).is_file() or (folder / JOURNAL).is_file()
        if not held and (folder / "CURRENT").is_file():  # RocksDB's: an oxigraph:PATH store
            raise UsageError(
                f"{folder} holds an oxigraph: store, not a journal: one; open it as "
                f"--store oxigraph:{folder} (or give journal: a new or empty folder)"
            )
        if not create and not held:
            raise UsageError(
                f"no store at {folder}; create one with "
                f"`horismos load FILES --store journal:{folder}`"
            )
        if not held:
            refuse_folder_of_files(folder, "journal")
        try:
            folder.mkdir(exist_ok=True)
            self._lock_fd = os.open(folder / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:  # a read-only disk, a full one: said with what to do
            raise open_refused(folder, e) from None
        here = _locked_here(self._lock_fd)
        try:
            waiting_for_lock(
                lambda: fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB),
                lambda e: isinstance(e, BlockingIOError) and here not in _LOCKED_HERE,
            )
        except UsageError:  # HORISMOS_LOCK_WAIT mistyped
            os.close(self._lock_fd)
            raise
        except OSError:
            os.close(self._lock_fd)
            said = f"cannot open the store at {folder}: {folder / LOCK} is locked"
            if here in _LOCKED_HERE:
                raise UsageError(f"{said} ({HELD_HERE})") from None
            raise held_refused(f"{said} ({HELD})", folder / LOCK) from None
        _LOCKED_HERE.add(here)
        self._here = here
        super().__init__()
        self.path, self._folder, self.persistent = folder, folder, True
        self.name = f"journal:{folder}" + ("" if sync == "os" else f"?sync={sync}")
        self._sync = sync == "commit"
        self._fd = -1
        self._journal = folder / JOURNAL  # the one appended to (or journal.next)
        self._dumping: threading.Thread | None = None  # a snapshot written behind
        self._settled = threading.Condition(self._lock)  # notified when that one is done
        self._broken: str | None = None  # why it takes no more commits
        self._rotate_after = 0  # journal bytes a failed rotation waits for before a retry
        self._world_updated = False  # an update replayed at open may have written the world
        try:
            self._open()
        except BaseException:
            if self._fd >= 0:
                os.close(self._fd)
            _LOCKED_HERE.discard(here)
            os.close(self._lock_fd)
            raise
        # counted once here, where the snapshot was just read whole, not in the first step
        # that asks whether a copy is due (:meth:`OxigraphStore._held`)
        self._live = len(self._store)
        atexit.register(self.close_at_exit)  # a process that never closes it still snapshots it

    # -- opening -------------------------------------------------------------------------

    def _open(self) -> None:
        """Load the snapshot, replay the journal that follows it (and ``journal.next``, when a
        dump behind did not finish), each cut back to its last whole record, and open the
        last for appending."""
        snapshot = self._folder / SNAPSHOT
        self._generation, digest = 0, None
        self._snapshot_bytes = 0
        if snapshot.is_file():
            try:
                digest = self._load_snapshot(snapshot)
            except (SyntaxError, ValueError, OSError) as e:
                raise StoreError(f"{snapshot}: the snapshot cannot be read: {e}") from None
        if digest is None and snapshot.is_file():  # one written before it kept a digest
            digest = self.recompute_digest()
        self._tally.reset(digest if digest is not None else ZERO)  # no snapshot: nothing held
        journal, following = self._folder / JOURNAL, self._folder / NEXT
        after = _follows(following)
        if after is not None and after <= self._generation:
            if after == self._generation and (_follows(journal) or -1) < after:
                os.replace(following, journal)  # its snapshot was renamed in, it was not
            else:
                following.unlink()  # one a snapshot under the lock took up
            fsync_folder(self._folder)
            after = None
        held = _follows(journal)
        if held is None and snapshot.is_file():  # a journal is written before any snapshot
            first = f"# horismos journal after snapshot {self._generation}"
            raise StoreError(
                f"{journal} is missing (or empty), and with it any commit made after "
                f"{snapshot}: restore the folder from a backup, or, to open the world the "
                f"snapshot holds, write {first!r} and a newline into {journal}"
            )
        if after is not None and (after != self._generation + 1 or held != self._generation):
            raise StoreError(
                f"{following} follows snapshot {after}, and {snapshot} is snapshot "
                f"{self._generation} (and {journal} follows {held}): restore the folder from "
                "a backup"
            )
        if held is None or held < self._generation:
            # none yet, or one a snapshot already holds (the process died between the two)
            self._fresh_journal()
            return
        if held > self._generation:
            raise StoreError(
                f"{journal} follows snapshot {held}, and {snapshot} is snapshot "
                f"{self._generation}: restore the folder from a backup"
            )
        self._replay_journal(journal)
        if after is not None:  # a dump behind that did not finish: its commits follow
            self._replay_journal(following)
            self._generation = after
        if self._world_updated:  # its writes unknown: the digest from what is held, once
            self._tally.reset(self.recompute_digest())
            self._world_updated = False
            self._digest_after()

    def _replay_journal(self, journal: Path) -> None:
        """Replay the records of ``journal`` one by one, cut it back to its last whole record
        and append to it from now on."""
        with journal.open("rb") as f:
            size = os.fstat(f.fileno()).st_size
            start = end = len(f.readline(128))
            for at, kind, a, b in _records(f, start, size, journal):
                try:
                    self._replay(kind, a, b)
                except _Disagrees as e:
                    why = f"{e}: the journal and the snapshot disagree"
                    raise _corrupt(journal, at, why) from None
                except (SyntaxError, ValueError, RuntimeError) as e:  # pyoxigraph's
                    raise StoreError(
                        f"{journal}: the record at byte {at} does not replay: {e}"
                    ) from None
                end = at + _HEAD + len(a) + len(b)
        if self._fd >= 0:
            os.close(self._fd)
        self._fd = os.open(journal, os.O_WRONLY | os.O_APPEND)
        if end < size:  # a torn last record: dropped
            os.ftruncate(self._fd, end)
            os.fsync(self._fd)
        self._journal, self._journal_start, self._journal_bytes = journal, start, end

    def _load_snapshot(self, snapshot: Path) -> Digest | None:
        """The snapshot's quads into memory; the digest its header keeps (None: none kept)."""
        _check_seal(snapshot)  # first: a snapshot cut short may have lost the line below
        with snapshot.open("rb") as f:
            head = _SNAPSHOT_HEAD.fullmatch(f.readline(_HEAD_LINE))
            if head is None:  # written after the dump, before the seal
                f.seek(max(0, os.fstat(f.fileno()).st_size - _SEALED - _HEAD_LINE))
                lines = f.read().splitlines(keepends=True)
                head = _SNAPSHOT_HEAD.fullmatch(lines[-2]) if len(lines) > 1 else None
        if head is None:
            raise ValueError("not a horismos snapshot (its first or next to last line)")
        self._generation = int(head[1])
        if may_hold_blank_nodes(snapshot, _NQ):  # parsed here: labels kept as written
            self._store.extend(ox.parse(path=str(snapshot), format=_NQ, lenient=True))
        else:
            self._store.load(path=str(snapshot), format=_NQ, lenient=True)
        self._snapshot_bytes = snapshot.stat().st_size
        return Digest.from_text(head[2].decode()) if head[2] else None

    def _replay(self, kind: bytes, a: bytes, b: bytes) -> None:
        """One record landed again in memory, the digest moved by what it changed. A commit's
        record holds what it changed (:meth:`OxigraphStore.apply` records only quads that were
        stored, or not, as it wrote them): one that removes a quad not stored, or adds one
        that is, was not written after what precedes it, and :class:`_Disagrees`. An update's
        text is exempt: ``DELETE DATA`` of an absent quad is one a claim may well run."""
        if kind == b"U":
            if a.startswith(_DIGEST_AFTER):  # the digest the update before it left
                self._tally.reset(Digest.from_text(a[len(_DIGEST_AFTER) :].strip().decode()))
                self._world_updated = False
                return
            self._store.update(a.decode())
            self._world_updated |= not a.startswith(_BOOKKEEPING)
            return
        store = self._store
        removed = list(ox.parse(a, format=_NQ, lenient=True))
        for q in removed:
            if q not in store:
                raise _Disagrees(f"it removes {q} and that is not stored")
            store.remove(q)
        added = list(ox.parse(b, format=_NQ, lenient=True))
        for q in added:
            if q in store:
                raise _Disagrees(f"it adds {q} and that is stored already")
        if len(set(added)) < len(added):
            raise _Disagrees("it adds a quad twice")
        store.extend(added)
        self._tally.move(
            [ox_line(q) for q in added if not is_runtime(q.graph_name)],
            [ox_line(q) for q in removed if not is_runtime(q.graph_name)],
        )

    # -- writing ahead -------------------------------------------------------------------

    def _ahead(self, record: bytes, land: Callable[[], None]) -> None:
        """``record`` written to the journal (and fsynced with ``sync=commit``), the journal
        first rotated if it is due, then ``land`` called; should either fail, or anything
        interrupt them (Ctrl-C), the journal is cut back to where it was: nothing landed."""
        if self._broken is not None:
            raise StoreError(self._broken)
        due = max(_ROTATE_AT, 4 * self._snapshot_bytes, self._rotate_after)
        if self._journal_bytes > due and self._dumping is None:
            grown = self._journal_bytes  # a switch to journal.next starts its count again
            try:
                if self._journal.name == NEXT:  # a dump behind failed: one under the lock
                    self._rotate()
                else:
                    self._rotate_behind()
            except StoreError:
                if self._broken is not None:
                    raise
                # the snapshot and journal before it are whole: a rotation is an economy, so
                # the commit goes on, and the dump is tried again once the journal has doubled
                # (not at every commit, each dumping the whole world to fail again)
                self._rotate_after = 2 * grown
        start = self._journal_bytes
        try:
            try:
                _write_all(self._fd, record)
                if self._sync:
                    os.fdatasync(self._fd)
            except OSError as e:
                raise StoreError(f"{self._journal}: the commit was not written: {e}") from e
            self._journal_bytes = start + len(record)
            land()
        except BaseException:
            self._cut_back(start)
            raise

    def _cut_back(self, length: int) -> None:
        """Cut the journal back to ``length`` bytes (past a record that did not land); a
        journal that cannot be cut back takes no more commits (they would follow the record
        that did not land)."""
        self._journal_bytes = length
        try:
            os.ftruncate(self._fd, length)
        except OSError as e:
            self._broken = (
                f"{self._journal}: a commit that did not land could not be cut from "
                f"the journal ({e}): reopen the store, which drops it"
            )

    def _land(self, removed: list[Encoded], added: list[Encoded]) -> None:
        record = _record(b"C", _nquads([e[1] for e in removed]), _nquads([e[1] for e in added]))
        self._ahead(record, lambda: super(JournalStore, self)._land(removed, added))

    def _run_update(self, text: str, *, runtime_only: bool) -> None:
        """Written ahead as a ``U`` record, marked :data:`_BOOKKEEPING` when
        ``runtime_only``, then run in memory (the digest recomputed there, as on Oxigraph).
        An update of data alone is no ``U`` record: it lands as a commit (``C``)."""
        text = pinned(text)
        record = _BOOKKEEPING + text.encode() if runtime_only else text.encode()
        with self._lock:
            self._ahead(
                _record(b"U", record),
                lambda: super(JournalStore, self)._run_update(text, runtime_only=runtime_only),
            )
            if not runtime_only:
                self._digest_after()

    def _digest_after(self) -> None:
        """A :data:`_DIGEST_AFTER` record of the digest held now, after an update that may
        have written the world: the next open takes it, not a pass over the world. The
        update has landed whatever happens here; a record not written (the disk full) costs
        that open one recomputation, so it is not an error."""
        record = _record(b"U", _DIGEST_AFTER + self._digest_text() + b"\n")
        start = self._journal_bytes
        try:
            _write_all(self._fd, record)
            if self._sync:
                os.fdatasync(self._fd)
        except OSError:
            self._cut_back(start)
            return
        self._journal_bytes = start + len(record)

    # -- snapshots -----------------------------------------------------------------------

    def _rotate(self) -> None:
        """Write a snapshot of what is held, then a fresh journal after it (under the lock,
        between commits: the digest written is the snapshot's), a dump behind first let
        finish; a ``journal.next`` no snapshot took up goes (its records are in this one)."""
        self._settle()
        generation = self._generation + 1
        snapshot, temp = self._folder / SNAPSHOT, self._folder / f"{SNAPSHOT}.tmp"
        try:  # here, under the lock, pyoxigraph dumps straight into the file
            self._store.dump(str(temp), _NQ)
            _seal(temp, generation, self._digest_text())
            os.replace(temp, snapshot)
        except Exception as e:  # whatever the dump raised (it was an OSError from a thread)
            with contextlib.suppress(OSError):
                temp.unlink()
            raise StoreError(f"{snapshot}: the snapshot was not written: {e}") from e
        # the journal open now follows the snapshot before: a record appended to it would be
        # ignored at the next open, so until the fresh one is there no commit is taken
        self._generation = generation
        try:
            fsync_folder(self._folder)
            self._snapshot_bytes = snapshot.stat().st_size
            self._fresh_journal()
            if self._folder.joinpath(NEXT).exists():  # stale now: dropped at open, or here
                self._folder.joinpath(NEXT).unlink()
                fsync_folder(self._folder)
        except (OSError, StoreError) as e:
            self._break(f"the journal after snapshot {generation} was not started ({e})")
            raise StoreError(f"{snapshot}: the snapshot was not written whole: {e}") from e

    def _rotate_behind(self) -> None:
        """Under the lock, between commits: later commits go to ``journal.next`` (which follows
        snapshot G+1), and a thread dumps what memory holds at this moment as snapshot G+1,
        so that commits and reads do not wait for the dump (seconds at a million triples).
        pyoxigraph's memory store keeps every version a reader holds, so the dump reads this
        moment's world while commits land. Once the snapshot is renamed in, ``journal.next``
        is renamed over ``journal``. A crash before that opens the snapshot before, then
        ``journal`` and ``journal.next`` replayed; after it, the new snapshot and
        ``journal.next``. A dump that fails leaves ``journal.next`` the journal, and the
        next rotation is :meth:`_rotate`, under the lock."""
        generation = self._generation + 1
        self._start_journal(NEXT, generation)
        temp = self._folder / f"{SNAPSHOT}.tmp"
        try:
            dump = _Dump(self._store, temp)
        except OSError as e:
            with contextlib.suppress(OSError):
                temp.unlink()
            raise StoreError(f"{temp}: the snapshot was not begun: {e}") from e
        self._dumping = threading.Thread(
            target=self._finish_behind,
            args=(dump, generation, self._digest_text()),
            name="horismos-journal-snapshot",
            daemon=True,
        )
        self._dumping.start()

    def _finish_behind(self, dump: _Dump, generation: int, digest: bytes) -> None:
        """The rest of :meth:`_rotate_behind`, in its thread: the dump sealed, synced and
        renamed in, then ``journal.next`` made the journal (under the lock). However it
        ends, the store is told no dump is behind: else a close waited for it forever."""
        snapshot = self._folder / SNAPSHOT
        try:
            try:
                dump.join()
                dump.sealed(generation, digest)
                os.replace(dump.temp, snapshot)
                fsync_folder(self._folder)
            except Exception:
                # an economy: the snapshot and journals before it are whole, and journal.next
                # takes the commits; the next rotation is one under the lock
                with contextlib.suppress(OSError):
                    dump.temp.unlink()
                return
            with self._lock:
                try:
                    self._snapshot_bytes = snapshot.stat().st_size
                    os.replace(self._folder / NEXT, self._folder / JOURNAL)
                    fsync_folder(self._folder)
                    self._journal = self._folder / JOURNAL
                except OSError:
                    pass  # journal.next stays the journal: the next open renames it
        finally:
            with self._lock:
                self._dumping = None
                self._settled.notify_all()

    def _settle(self) -> None:
        """Wait (the lock let go meanwhile) for a dump behind to finish."""
        while self._dumping is not None:
            self._settled.wait()

    def _break(self, why: str) -> None:
        """Take no more commits: what is in memory is no longer what the folder reopens to."""
        self._broken = f"{self._folder}: {why}: reopen the store, which opens to what was kept"

    def _digest_text(self) -> bytes:
        return self._tally.value().to_text().encode()

    def _fresh_journal(self) -> None:
        """An empty journal after the current snapshot, in place of the one there."""
        self._start_journal(JOURNAL, self._generation)

    def _start_journal(self, name: str, generation: int) -> None:
        """An empty journal ``name`` after snapshot ``generation`` (temp file, fsync, rename),
        appended to from now on."""
        journal, temp = self._folder / name, self._folder / f"{name}.tmp"
        head = b"# horismos journal after snapshot %d\n" % generation
        try:
            with temp.open("wb") as f:
                f.write(head)
                f.flush()
                os.fsync(f.fileno())
            os.replace(temp, journal)
            fsync_folder(self._folder)
        except OSError as e:
            raise StoreError(f"{journal}: a fresh journal was not written: {e}") from e
        if self._fd >= 0:
            os.close(self._fd)
        self._fd = os.open(journal, os.O_WRONLY | os.O_APPEND)
        self._journal, self._generation = journal, generation
        self._journal_bytes = self._journal_start = len(head)
        self._rotate_after = 0

    def load_file(self, path: Path, progress: Progress | None = None) -> int:
        """Loaded in memory, then written as a snapshot (not record by record), also when the
        file fails part-way: what is held is what is kept."""
        with self._lock:
            self._settle()  # no dump behind meanwhile: this one's snapshot follows
            try:
                return super().load_file(path, progress)
            finally:
                self._kept_or_broken("the file loaded was not written to a snapshot")

    def rebase_digest(self, *, only_if_equal: bool = False) -> tuple[Digest, Digest]:
        """As :meth:`OxigraphStore.rebase_digest`, the digest kept by a new snapshot."""
        with self._lock:
            self._settle()
            found = super().rebase_digest(only_if_equal=only_if_equal)
            if self._tally.value() != found[0]:
                self._kept_or_broken("the digest rebased was not written to a snapshot")
            return found

    def _kept_or_broken(self, why: str) -> None:
        """A snapshot of what memory holds and no record does (a file loaded, a digest
        rebased); should it fail, no commit is taken after it: one that is would reopen on a
        world without it."""
        try:
            self._rotate()
        except StoreError as e:
            if self._broken is None:
                self._break(f"{why} ({e})")
            raise

    def backup(self, dest: Path) -> Digest:
        """The folder's files as of one moment between commits: the snapshot, the journal and
        any ``journal.next``, copied under the store's lock once a dump behind has finished
        (a copy made by hand while a process commits may pair a new snapshot with an old
        journal, or end inside a record). The digest given is read in the same hold of the
        lock: exactly the copy's, whatever commits next."""
        with self._lock:
            self._settle()
            digest = self._kept_digest()

            def write(temp: Path) -> None:
                temp.mkdir()
                for name in (SNAPSHOT, JOURNAL, NEXT):
                    if (self._folder / name).exists():
                        shutil.copyfile(self._folder / name, temp / name)
                        with (temp / name).open("rb+") as f:
                            os.fsync(f.fileno())

            into_fresh_folder(dest, self.name, write)
            return digest

    def close(self) -> None:
        """Write a snapshot if the journal holds more than a quarter of the snapshot's bytes
        in records, and release the lock; closing twice does nothing. A process that made a
        few commits to a large world leaves them to be replayed at the next open (less than a
        quarter more than loading the snapshot), where a snapshot at every close dumped the
        whole world (~5 s at a million triples) for one event's commits."""
        atexit.unregister(self.close_at_exit)
        with self._lock:  # then asked: two threads closing at once both saw it open
            self._settle()
            if self._fd < 0:
                return
            try:
                records = self._journal_bytes - self._journal_start
                if records > self._snapshot_bytes // 4 and self._broken is None:
                    self._rotate()
            finally:
                os.close(self._fd)
                self._fd = -1
                super().close()
                _LOCKED_HERE.discard(self._here)
                os.close(self._lock_fd)  # which releases its lock
