"""The system's errors of a file or a disk said in words: what is wrong and what to do.

Why: the files a command reads (:mod:`horismos._unreadable`) and a store's own writes
(:mod:`horismos._stores.oxigraph`, whose RocksDB errors carry the system's text but no errno)
meet the same errors; one table, importing nothing of Horismos, keeps the words the same and
lets a store use it.
"""

from __future__ import annotations

import errno
import os

__all__ = ["ACCESS", "READ", "WRITTEN", "detail", "other", "written"]

ACCESS = {errno.EACCES, errno.EPERM}
"""The errors of a file this user may not use: said for reading by :data:`READ`."""

READ = {
    errno.ENOENT: ("no such file", "check the path"),
    **dict.fromkeys(
        ACCESS,
        (
            "this user may not read it",
            "give it read permission (chmod a+r), or run as a user who may read it",
        ),
    ),
    errno.EISDIR: ("this is a folder, not a file", "give a file in it"),
    errno.ENOTDIR: ("a folder in its path is a file", "check the path"),
    errno.ELOOP: (
        "its symbolic links lead round in a circle",
        "point the link at the file itself",
    ),
}
"""What is wrong with a file that could not be read, and what to do."""

WRITTEN = {
    errno.ENOSPC: ("the disk is full", "free space on it, then run the command again"),
    errno.EDQUOT: (
        "this user's disk quota is used up",
        "free space or raise the quota, then run the command again",
    ),
    errno.EFBIG: (
        "the file would pass the size limit of this process",
        "lift the limit (ulimit -f) or write to another disk, then run the command again",
    ),
    errno.EROFS: ("the disk is mounted read-only", "give a path on a disk that may be written"),
}
"""What only a write meets, said as what the disk refused."""


def written(e: OSError) -> tuple[str, str] | None:
    """The words of :data:`WRITTEN` for ``e``, found by its errno or, where it has none (a
    RocksDB error: "IO error: While appending to file: …: File too large"), by the system's
    text of one in its message; None for any other error."""
    if e.errno in WRITTEN:
        return WRITTEN[e.errno]
    return next((words for n, words in WRITTEN.items() if os.strerror(n) in str(e)), None)


def detail(e: OSError) -> str:
    """The system's own words for ``e``, kept as a detail after Horismos's: its number and
    text ("[Errno 36] File name too long", without the file, which the message names), or a
    RocksDB message's, which has no errno."""
    if e.errno is not None and e.strerror:
        return f"[Errno {e.errno}] {e.strerror}"
    return str(e)


def other(e: OSError, doing: str) -> tuple[str, str]:
    """What is wrong and what to do for an error neither table holds, met trying ``doing``
    ("read it", "write it", "read or write it"): a name too long, a socket or a device given
    as a file, an I/O error. The system's bare "[Errno 6] No such device or address" was all
    a user read; the hint fits any of them."""
    return (
        f"cannot {doing} ({detail(e)})",
        "check the path (each name in it, and that it is a plain file or folder), that this "
        "user may use it, and that its disk answers; then run the command again",
    )
