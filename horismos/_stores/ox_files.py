"""RDF files read by pyoxigraph's parser: their format by name, their blank nodes skolemised,
a load's progress counted, a named pipe read once.

Why a module of its own: loading a file is the one way into a store that never passes through
Python terms (the quads go from the parser into the store), and every store that loads files
(on disk, the journal, a SPARQL server's bulk load) reads them the same way.
"""

from __future__ import annotations

import hashlib
import io
import mmap
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, cast

import pyoxigraph as ox

from .._errors import UsageError
from .base import Progress
from .skolem import file_key, skolemise_ox

__all__ = [
    "FORMATS",
    "MAX_TERM",
    "ProgressReader",
    "file_format",
    "may_hold_blank_nodes",
    "oversized",
    "parse_file",
]

FORMATS = {
    ".ttl": ox.RdfFormat.TURTLE,
    ".nt": ox.RdfFormat.N_TRIPLES,
    ".nq": ox.RdfFormat.N_QUADS,
    ".nquads": ox.RdfFormat.N_QUADS,
    ".trig": ox.RdfFormat.TRIG,
    ".n3": ox.RdfFormat.N3,
}


class ProgressReader(io.RawIOBase):
    """A binary file that reports how many bytes were read, for a load's progress bar."""

    def __init__(self, path: Path, progress: Progress | None) -> None:
        self._file = path.open("rb")
        self._progress = progress
        self.done = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = self._file.readinto(buffer)
        self.done += n
        if self._progress is not None and n:
            self._progress(self.done)
        return n

    def close(self) -> None:
        self._file.close()
        super().close()


def parse_file(path: Path, progress: Progress | None = None) -> Iterator[ox.Quad]:
    """Quads of an RDF file by its suffix, relative IRIs resolved against the file's URI and
    blank nodes skolemised under the file's content hash, so two files never share one by its
    label and the same file always names them the same."""
    fmt = file_format(path)
    if not stat.S_ISREG(path.stat().st_mode):
        yield from _parse_once(path, fmt)
        return
    key = file_key(path) if may_hold_blank_nodes(path, fmt) else ""
    reader = ProgressReader(path, progress)
    try:
        quads = ox.parse(cast("IO[bytes]", reader), format=fmt, base_iri=path.resolve().as_uri())
        yield from skolemise_ox(quads, key) if key else quads
    except MemoryError:
        raise oversized(path, reader.done) from None
    finally:
        reader.close()


def _parse_once(path: Path, fmt: ox.RdfFormat) -> Iterator[ox.Quad]:
    """Quads of a file that is not a regular one (a named pipe): read once, into an unnamed
    temporary file while its key is hashed, then parsed from there. Opened once to scan it,
    once to hash it and once to parse it, a pipe's writer was gone after the first and the
    load waited for another forever."""
    key = hashlib.sha256()
    with path.open("rb") as source, tempfile.TemporaryFile() as spool:
        while block := source.read(1 << 20):
            key.update(block)
            spool.write(block)
        spool.seek(0)
        quads = ox.parse(spool, format=fmt, base_iri=path.resolve().as_uri())
        yield from skolemise_ox(quads, key.hexdigest()[:32])


MAX_TERM = 16 * 1024 * 1024  # pyoxigraph's parser buffer: no single term may be longer


def oversized(path: Path, done: int) -> SyntaxError:
    """The error for a term longer than the parser's buffer, at the line where it starts
    (the parser had read ``done`` bytes and buffered the last 16 MiB of them), with what to
    do as its ``fix``: no syntax at that line is wrong."""
    with path.open("rb") as f:
        head = f.read(max(0, done - MAX_TERM))
    line = head.count(b"\n") + 1
    error = SyntaxError(
        f"a literal or IRI near line {line} is longer than 16 MiB, more than "
        "the RDF parser reads in one term",
        (str(path), line, 0, ""),
    )
    error.fix = "keep large content outside the world and refer to it by IRI"  # type: ignore[attr-defined]
    return error


def may_hold_blank_nodes(path: Path, fmt: ox.RdfFormat) -> bool:
    """Whether the file may hold a blank node (``_:label``; in Turtle and TriG also ``[`` and
    collections' ``(``); a cheap scan of its bytes, which may say yes for a string's ``[``.
    Yes, unscanned, for a file that is no regular one: a named pipe is read once, by
    :func:`parse_file`."""
    if not stat.S_ISREG(path.stat().st_mode):
        return True
    with path.open("rb") as f:
        if path.stat().st_size == 0:
            return False
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            if data.find(b"_:") >= 0:
                return True
            if fmt in (ox.RdfFormat.N_TRIPLES, ox.RdfFormat.N_QUADS):
                return False
            return data.find(b"[") >= 0 or data.find(b"(") >= 0


def file_format(path: Path) -> ox.RdfFormat:
    """The RDF format of a file, from its name: refused with the names known rather than
    guessed."""
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise UsageError(f"{path}: name the file .ttl, .nt, .nq or .trig so its format is known")
    return fmt
