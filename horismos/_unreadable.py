"""A file a command was given that cannot be read at all, said in words: what is wrong with
it and what to do.

Why: the operating system's text ("[Errno 13] Permission denied: 'world.ttl'", or
"Input/output error" with no file named, as pyoxigraph raises it) says neither which input it
was nor what to change; the definitions, the world data, ``horismos load`` and the command
line's last resort each said it their own way. One table keeps the words the same everywhere.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from ._errors import AuthoringError, HorismosError, Problem, UsageError
from ._os_words import ACCESS, READ, detail, other, written
from ._stores.base import StoreError

__all__ = [
    "STDIN_NOT_READ",
    "each_opens",
    "file_error",
    "load_failed",
    "os_failure",
    "readable_file",
    "unreadable",
    "why_unreadable",
]

_EITHER_WAY = (
    "this user may not read or write it there",
    "give it (or the folder it is made in) the permission the command needs (chmod), or run "
    "as a user who may",
)
"""A file this user may not use, when whether it was read or written is not known: a trace
refused its writing was told to be given "read permission (chmod a+r)"."""


def os_failure(e: OSError) -> str:
    """The last-resort words for ``e``, an error of the system no command gave context to:
    the file it names (if any), what is wrong and what to do, where the system's bare
    "[Errno 28] No space left on device" was all a user read."""
    disk = written(e)
    what, hint = (
        disk
        or (_EITHER_WAY if e.errno in ACCESS else None)
        or READ.get(e.errno or 0)
        or other(e, "read or write it" if e.filename else "read or write a file it uses")
    )
    if e.filename:
        return f"{e.filename}: {what}; {hint}"
    if disk:  # a write to stdout, or to a file whose writer named none
        return f"an output could not be written: {what}; {hint}"
    return f"the command {what}; {hint}" if what.startswith("cannot") else f"{what}; {hint}"


def why_unreadable(e: OSError) -> tuple[str, str]:
    """What is wrong with a file ``e`` was raised reading, and what to do."""
    return (
        READ.get(e.errno or 0)
        or written(e)
        or (
            f"cannot read it ({detail(e)})",
            "check that it is a file this user may read, on a disk that answers",
        )
    )


def unreadable(path: str | Path, e: OSError) -> Problem:
    """The error of input file ``path``, which raised ``e`` when it was opened or read."""
    what, hint = why_unreadable(e)
    return Problem("error", what, file=str(path), hint=hint)


def each_opens(paths: list[Path]) -> list[Path]:
    """``paths``, once each regular file has been opened: one that cannot be is refused, with
    every other such, before any is loaded (the files before it had landed in a store that
    keeps them). Anything else (a named pipe, a device) is left to the loader to open once:
    opening and closing a pipe here killed its writer and left the load waiting for it."""
    problems = []
    for path in paths:
        try:
            if stat.S_ISREG(os.stat(path).st_mode):
                with open(path, "rb"):
                    pass
        except OSError as e:
            problems.append(unreadable(path, e))
    if problems:
        raise AuthoringError(problems)
    return paths


def file_error(path: str | Path) -> OSError | None:
    """The error opening ``path`` as a file would meet, found without opening it (a named
    pipe's writer must see it opened once, by its reader): a folder, a missing file, a
    symbolic link loop; None for a file, or anything else that opens."""
    try:
        if stat.S_ISDIR(os.stat(path).st_mode):
            return IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    except OSError as e:
        return e
    return None


STDIN_NOT_READ = (
    "'-' names no file, and stdin is not read here",
    "give the file's name (save what a pipe gives to a file first)",
)
"""What ``-`` given as an input file is: the "no such file" said of it read as if a file named
"-" had gone missing, where stdin was meant."""


def readable_file(path: str) -> str:
    """``path``, a file a command reads (a trace), or refused in the table's words: a folder
    given as a trace was "no such trace file". ``-`` is refused as stdin only when no file
    has that name (``touch ./-``: it was refused although there)."""
    if path == "-" and not os.path.lexists(path):  # a file named "-" is read as any other
        raise UsageError(f"-: {STDIN_NOT_READ[0]}; {STDIN_NOT_READ[1]}")
    e = file_error(path)
    if e is not None:
        what, hint = why_unreadable(e)
        raise UsageError(f"{path}: {what}; {hint}")
    return path


def load_failed(path: Path, e: OSError, store: str) -> HorismosError:
    """The error of a load of ``path`` into ``store`` (its name) that raised ``e``: the
    file's, when it was met reading the file (the system's errno, and the file or, passed on
    by pyoxigraph's parser, no file named), else the store's own (RocksDB's, no errno: a full
    disk, a file over the size limit), which was reported as the input file's "cannot read
    it", then without the store's path or what the limit it met needs."""
    if e.errno is not None and e.filename in (None, str(path)):
        return AuthoringError([unreadable(path, e)])
    what, hint = written(e) or ("its disk refused the write", "check that its disk answers")
    return StoreError(
        f"the store {store} could not write what {path} holds: {what} ({detail(e)}); {hint}"
    )
