"""The folder of a store on disk: what a new one must be, and why one would not open.

Why a module: RocksDB (``oxigraph:PATH``) and the journal (``journal:PATH``) each write a
folder of their own files, and both are opened by a path a user typed. A path that is a file,
in a folder that does not exist, or a folder of other files is refused before anything is
written there, in the same words for both; and a store another process holds open is said to
be held, not left as RocksDB's or the lock's own message.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from .._env_seconds import seconds_from_env
from .._errors import UsageError
from .._os_words import written

__all__ = [
    "HELD",
    "HELD_HERE",
    "StoreHeld",
    "held_elsewhere",
    "held_here",
    "held_refused",
    "is_held",
    "lock_holder",
    "open_refused",
    "refuse_folder_of_files",
    "waiting_for_lock",
]

_T = TypeVar("_T")

_LOCK = "LOCK"
"""The file of an on-disk store RocksDB locks; an open that fails on it names it."""
HELD = (
    "a process holds it open: an on-disk store opens in one process at a time — run this "
    "again once that one ends, or set HORISMOS_LOCK_WAIT=SECONDS to wait for it; share a "
    "world between processes with sparql:URL"
)
"""Why a store on disk another opener holds is refused (RocksDB's lock, or a journal's)."""
HELD_HERE = (
    "this process has it open already, in a World not closed — an on-disk store opens once, "
    "in one process at a time: use that World (open a store once and share it), or close() "
    "it before opening the store again"
)
"""Why a store on disk this very process holds is refused: no other process to wait for."""


class StoreHeld(UsageError):
    """An on-disk store another process holds open, so this one could not open it.

    ``holder``: that process, ``pid N (its command line)``, when the system says who holds
    the lock (Linux's ``/proc/locks``); None when it does not. A ``run --trace`` refused so
    writes its trace, as a run refused because another drives its focus does."""

    def __init__(self, message: str, holder: str | None = None) -> None:
        super().__init__(message)
        self.holder = holder


def lock_holder(lock: Path) -> str | None:
    """The process that holds ``lock`` (RocksDB's ``LOCK``, a journal's), as ``pid N
    (command)``, from Linux's ``/proc/locks``; None elsewhere, or when no other process
    holds it. Why: "a process holds it open" left an operator to find which, with ``lsof``,
    before deciding to wait for a long run or stop a forgotten ``serve``."""
    try:
        st = lock.stat()
        table = Path("/proc/locks").read_text()
    except OSError:
        return None
    at = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in table.splitlines():
        # "1: POSIX  ADVISORY  WRITE 32707 fe:00:2146576 0 EOF"; a waiter's line has "->"
        fields = line.split()
        if len(fields) < 6 or "->" in fields or fields[5] != at or not fields[4].isdigit():
            continue
        pid = int(fields[4])
        if pid == os.getpid():
            continue
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            return f"pid {pid}"
        command = " ".join(a.decode(errors="replace") for a in argv if a)
        if len(command) > 160:
            command = command[:157] + "..."
        return f"pid {pid} ({command})" if command else f"pid {pid}"
    return None


def held_refused(message: str, lock: Path) -> StoreHeld:
    """The refusal of a store another process holds: ``message``, then which process it is
    when the system says."""
    holder = lock_holder(lock)
    said = f"{message}; held by {holder}" if holder else message
    return StoreHeld(said, holder)


def refuse_folder_of_files(path: Path, kind: str = "oxigraph") -> None:
    """A new store's folder must be new or empty: RocksDB writes its dozens of files straight
    into it, so ``--store oxigraph:.`` scattered them among a project's own files. It must be
    a folder, in a folder that exists: RocksDB answered a mistyped parent with "While mkdir
    if missing", and ``journal:`` made every missing folder, so a command that then failed
    (a focus the new, empty world lacks) left a store behind at the typo."""
    if path.exists() and not path.is_dir():
        raise UsageError(
            f"{kind}:{path}: this is a file, and a store is a folder of its own files — "
            f"give a new or empty folder, e.g. {kind}:{path.with_name(path.name + '.db')}"
        )
    if not path.parent.is_dir():
        raise UsageError(
            f"{kind}:{path}: the folder {path.parent} does not exist; create it first, "
            "or correct the path"
        )
    try:
        held = sorted(p.name for p in path.iterdir()) if path.is_dir() else []
    except OSError:
        return  # unreadable: pyoxigraph says why when it opens it
    if held:
        shown = ", ".join(held[:3]) + (", …" if len(held) > 3 else "")
        raise UsageError(
            f"{path} holds other files ({shown}) and no store: a store writes its own files "
            f"into its folder — give a new or empty folder, e.g. {kind}:{path / 'world.db'}"
        )


def open_refused(path: Path | None, e: OSError) -> UsageError:
    """Why pyoxigraph could not open the store at ``path``, said so a user can act on it:
    RocksDB's lock held by this process or another, a full disk or a file size limit (opening
    writes too), or pyoxigraph's own words."""
    held = f" ({HELD_HERE})" if held_here(e) else f" ({HELD})" if is_held(e) else ""
    disk = written(e)
    said = f"{disk[0]} ({e}); {disk[1]}" if disk else f"{e}{held}"
    if path is not None and held_elsewhere(e) and not disk:
        return held_refused(f"cannot open the store at {path}: {said}", path / _LOCK)
    return UsageError(f"cannot open the store at {path}: {said}")


_WAITS = (0.0, 3600.0)
_POLL = 0.05  # seconds between tries while another process holds the lock


def is_held(e: OSError) -> bool:
    """Whether RocksDB's open failed on the lock another opener holds."""
    return f"{_LOCK}: " in str(e)


def held_here(e: OSError) -> bool:
    """Whether the lock RocksDB's open failed on is held by this process (RocksDB says so):
    an application that opened the store twice, which waiting for the lock never mends."""
    return is_held(e) and "lock hold by current process" in str(e)


def held_elsewhere(e: OSError) -> bool:
    """Whether another process holds the lock RocksDB's open failed on: worth waiting for."""
    return is_held(e) and not held_here(e)


def _lock_wait() -> float:
    """``HORISMOS_LOCK_WAIT``: seconds an open waits for a store another process holds,
    default 0 (refused at once). Read at open, so a mistyped value is a usage error."""
    return seconds_from_env(
        "HORISMOS_LOCK_WAIT",
        0,
        _WAITS,
        "how long opening an on-disk store waits for another process that holds it",
    )


def waiting_for_lock(open_: Callable[[], _T], held: Callable[[OSError], bool]) -> _T:
    """``open_()``, tried again while it fails because another process holds the store
    (``held``), for up to ``HORISMOS_LOCK_WAIT`` seconds. Why: a service runs one process per
    event and ``wake`` from cron on one ``oxigraph:PATH`` or ``journal:PATH``; when two met,
    one was refused (exit 2) and an event's facts were not applied unless its sender tried
    again. Waiting makes them take turns; the last failure is raised as it was."""
    deadline = time.monotonic() + _lock_wait()
    while True:
        try:
            return open_()
        except OSError as e:
            if not held(e):
                raise
            if time.monotonic() + _POLL > deadline:
                raise
            time.sleep(_POLL)
