"""Traces: JSON Lines, one event a line, each carrying the hash of the line before it.

The first event is the header (``"type": "header"``) with ``trace_version``, the digest of
the world at start and of the definitions in force. The world itself is not in the trace
(version 1 carried a snapshot of it): each event carries the answers to the reads the run made
for it (:mod:`horismos._reads`), so a trace grows with what the run did, never with the world.
A small world's snapshot may still be embedded when asked. Replay reads the same events back;
a broken chain or an unknown version is refused.

A trace streamed to a file is not also kept in memory: a run of 100,000 instances writes
them out as it goes. Each event reaches the operating system as it is written (one ``write``
of its line, through no buffer), so a killed process leaves every event it finished (not
fsynced: a power loss may cut the end). Buffering events in the process and writing several
at once would save ~2-3 µs an event (a write call), about 1% of a step: not worth a trace
that loses its last steps when the process is killed.

Each event also carries its own ``hash`` (of the event without it). ``prev`` alone would
catch an edit only on the line after it, and never an edit of the last line; the own hash
names the edited line itself. Every event must carry it, and nothing may follow the ``end``
event. With a key in the environment each event is also signed (:mod:`horismos._signing`):
the chain alone does not stop someone who recomputes every hash after an edit; a key does.

A line is written by orjson (keys sorted, no spaces, UTF-8 text) when its values read back as
they were; otherwise (a NaN, an enum, an integer past 64 bits, a lone surrogate), and in a
signed trace, by the stdlib's ``json`` as earlier releases wrote every line. The hash is of
the line's own text, so :func:`read_trace` checks either alike.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from ._errors import TraceError, TraceExists, TraceTampered, TraceVersionError, UsageError
from ._event_shape import check_shape
from ._signing import signer_from_env, verifier_from_env
from ._sources import RDF_SUFFIXES
from ._unreadable import why_unreadable

__all__ = [
    "READ_VERSIONS",
    "TRACE_VERSION",
    "Trace",
    "drop_if_empty",
    "iter_trace",
    "own_file",
    "read_trace",
    "records_refusal",
    "refuse_written",
    "version_message",
]

TRACE_VERSION = 4
"""The version a run records. 4: a call to a tool that is not idempotent is not made when its
subject already breaks a domain shape in a way no result can mend (the step blocks; its reads
include the subject's edges, read before the call). 3: a step's activity is described by the
eight quads that say something (``docs/replay.md``); 2 wrote four more that the vocabulary
entails or repeats."""
READ_VERSIONS = frozenset({2, 3, TRACE_VERSION})
"""The versions this runtime reads and replays, each as its runs ran: a version-2 trace writes
what a version-2 run wrote (:attr:`horismos._runner.Runner.trace_version`), so it reaches its
recorded digests; a version-3 trace makes its calls without the check version 4 added, so it
asks the world what its run asked."""
GENESIS = "sha256:" + "0" * 64
_READ = ", ".join(str(v) for v in sorted(READ_VERSIONS)[:-1]) + f" and {max(READ_VERSIONS)}"
"""The versions read, for messages: "2, 3 and 4"."""


def own_file(folder: Path, stem: str, suffix: str = ".jsonl") -> Path:
    """A trace file in ``folder`` no other trace takes: ``STEM.jsonl``, else ``STEM-2.jsonl``
    and on, made (empty) at once, so two processes writing into one folder never take one
    name. A trace opens its file afresh: a second run given the name of a first truncated its
    trace while the first went on writing, and neither was whole (a task delivered again to a
    worker, two ``serve`` processes' calls in one second). ``suffix``: the files' ending
    (``run --no-again --trace run.trace`` given again numbers ``run-2.trace``)."""
    n = 1
    while True:
        path = folder / (f"{stem}{suffix}" if n == 1 else f"{stem}-{n}{suffix}")
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        except FileExistsError:
            n += 1
            continue
        return path


def refuse_written(said: str, path: str | Path, instead: str = "") -> None:
    """Refuse ``path`` as a trace to write when it holds something already: a trace may be the
    only record of the run that wrote it (an incident's), and a second run given its name
    wrote over it without a word. Said alike by the command line (``said``: ``--trace
    run.jsonl``) and the Python API (``trace run.jsonl``); ``instead``: how else the caller
    may go on, after the ways every caller has. An empty file (``mktemp``'s, or one
    :func:`own_file` made) is taken: it records nothing. Raises :class:`TraceExists`."""
    try:
        size = Path(path).stat().st_size
    except OSError:  # not there (the first event makes it), or not a file to ask about
        return
    if size and not Path(path).is_dir():
        raise TraceExists(
            f"{said}: this file already exists ({size} bytes, the trace of an earlier "
            "run?) and a trace is never written over; give a new file name, or move or "
            f"remove that file first{instead}",
            path=str(path),
        )


_OVERWRITE = ", or pass overwrite=True to replace it"
"""How a Python caller may write over a trace on purpose (:func:`refuse_written`)."""


def records_refusal(path: str | Path) -> bool:
    """Whether the trace at ``path`` records a run refused before its first step (its second
    event ``refused``: another run drove its focus), read from its first two lines, unchecked:
    the command given again once that run has finished writes beside it, never over it. Not
    a regular file, none: ``/dev/full`` or a pipe reads without end, or waits for a writer."""
    try:
        if not Path(path).is_file():
            return False
        with open(path, "rb") as f:
            f.readline()
            second = json.loads(f.readline() or b"{}")
    except (OSError, ValueError):
        return False
    return isinstance(second, dict) and second.get("type") == "refused" and "tool" not in second


def drop_if_empty(path: Path | None) -> None:
    """Remove a file :func:`own_file` made that no event was written to (the run or call was
    refused before its header), as no file was made before: an empty one is no trace."""
    with contextlib.suppress(OSError):
        if path is not None and path.stat().st_size == 0:
            path.unlink()


def _digest(line: str) -> str:
    return "sha256:" + hashlib.sha256(line.encode()).hexdigest()


# what json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
# default=str) builds on every call, built once: the encoder was a fifth of an event's cost
_UNICODE = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
_ASCII = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str)


def _line(event: dict[str, Any]) -> str:
    """The stdlib's line of ``event``: what every release wrote before orjson, and what an
    event orjson cannot write the same way is still written as."""
    line = _UNICODE.encode(event)
    if line.isascii():
        return line
    try:
        line.encode()
    except UnicodeEncodeError:  # a lone surrogate a tool returned: escaped, as JSON allows
        line = _ASCII.encode(event)
    return line


# orjson writes a step event in ~1.4 µs where the stdlib's encoder takes ~15 (~2 KB an event):
# keys sorted, no spaces, UTF-8 text, as the stdlib writes them; a datetime and a dataclass
# are handed to _text (str, as the stdlib's default=str), not written orjson's way
_ORJSON = orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def _text(value: object) -> str:
    """orjson's ``default``: a value JSON has no type for, as its ``str`` (the stdlib's
    ``default=str``). A float or a tuple subclass (a numpy float, a named tuple) the stdlib
    writes as a number or a list: refused, so the event goes to the stdlib."""
    if isinstance(value, float | tuple):
        raise TypeError(type(value).__name__)
    return str(value)


def _quick_line(event: dict[str, Any]) -> bytes | None:
    """``event``'s line by orjson, as UTF-8; ``None`` where orjson would not write the values
    the stdlib writes (:func:`_plain`) or refuses the event (an integer beyond 64 bits, a lone
    surrogate, a key that is not a string, nesting past 254 levels)."""
    if not _plain(event):
        return None
    try:
        return orjson.dumps(event, default=_text, option=_ORJSON)
    except TypeError:  # orjson.JSONEncodeError is one
        return None


# The members of a step event that hold no float or a finite one, by how the runner builds
# them: text (N-Triples terms, times, ids, names, messages, fingerprints), counts and flags,
# its timings (perf_counter differences) and the tools' outcomes (_outcomes.encode tags a NaN
# or an infinity). Not walked: a walk of them was a quarter of an event's cost. Any other
# member (a proposal's, a wait's or an approval's detail, one added later) is walked.
_STEP_MEMBERS = frozenset(
    {
        *("type", "seq", "prev", "hash", "instance", "step", "kind", "tool", "status"),
        *("args", "attempts", "narrowed", "precondition", "effects", "graph", "gate"),
        *("error", "next", "timings", "policy", "reads", "clock", "ids", "outcomes", "remote"),
    }
)


def _plain(event: dict[str, Any]) -> bool:
    """Whether every value of ``event`` is one orjson writes as the stdlib does: orjson
    writes a NaN or an infinity as ``null`` (the stdlib ``NaN``, which reads back as one),
    and an enum as its value (the stdlib, one neither str nor int, as its ``str``)."""
    if event.get("type") != "step":
        return _json(event)
    if _STEP_MEMBERS.issuperset(event):  # most steps: no other member
        return True
    return all(_json(event[key]) for key in event.keys() - _STEP_MEMBERS)


def _json(value: Any) -> bool:
    """Whether ``value`` is JSON's own types only (exactly: no subclass), floats finite."""
    kind = type(value)
    if kind is float:
        return bool(value - value == 0.0)  # false for a NaN and an infinity
    if kind is dict:
        value = value.values()
    elif kind is not list and kind is not tuple:
        return kind is str or kind is int or kind is bool or value is None
    for item in value:
        kind = type(item)
        if kind is str or kind is int or kind is bool or item is None:
            continue
        if not _json(item):
            return False
    return True


def _hashed_line(event: dict[str, Any]) -> bytes:
    """The line of ``event`` (UTF-8, no newline) with its own ``hash`` added to it (and to
    ``event``), serialised once: the event is serialised with a placeholder as its hash;
    with sorted keys and no spaces, that line without the placeholder member is the event's
    line without a hash (what is hashed), and with the digest written over the placeholder
    it is the line to write. orjson writes it (:func:`_quick_line`), else the stdlib
    (:func:`_line`). A placeholder that shows up twice (a tool returned that text) leaves
    the cut ambiguous: the event is then serialised twice by the stdlib, as before orjson,
    so that :func:`read_trace`, which re-serialises such an event by the stdlib to check
    it, agrees. Two serialisations of each event were a tenth of a step; splitting the
    event at ``"hash"`` and serialising each half cost one and a half."""
    event["hash"] = _PLACEHOLDER
    line = _quick_line(event)
    if line is None:
        line = _line(event).encode()
    at = line.find(_PLACEHOLDER_UTF8)
    if at < 0 or line.find(_PLACEHOLDER_UTF8, at + 1) >= 0:
        del event["hash"]
        own = _digest(_line(event))
        event["hash"] = own
        return _line(event).encode()
    start, end = at - len(_HASH_KEY), at + len(_PLACEHOLDER) + 1  # the member, quotes and all
    if line[start - 1] == _COMMA:  # and the comma before it
        start -= 1
    elif line[end] == _COMMA:  # the first member: the comma after it goes
        end += 1
    view = memoryview(line)
    digest = hashlib.sha256(view[:start])
    digest.update(view[end:])
    own = "sha256:" + digest.hexdigest()
    event["hash"] = own
    return b"".join((view[:at], own.encode(), view[at + len(_PLACEHOLDER) :]))  # one copy


_HASH_KEY = '"hash":"'
_PLACEHOLDER = "sha256:" + "?" * 64  # as long as a digest, and never escaped by JSON
_PLACEHOLDER_UTF8 = _PLACEHOLDER.encode()
_COMMA = ord(",")


class Trace:
    """The events of one run, in order, as it goes: written to ``path`` when one is given
    (and then not kept in memory), else kept in memory.

    The file is created by the first event, not before: a run refused before its header (a
    binding that does not resolve, a focus whose instance waits) left a trace it was given,
    perhaps the record of an earlier run, truncated to nothing."""

    def __init__(
        self, path: str | Path | None = None, *, kept: bool = True, overwrite: bool = False
    ) -> None:
        """``kept=False`` (with no ``path``): the events are chained and counted, and none is
        kept but the header, for a run that asked for flat memory (``keep=False``) and no
        trace file: ``run --all`` over a million instances held every event (~35 KB an
        instance of three steps) until it ended. A ``path`` holding something already is
        refused (:class:`TraceExists`), as ``run --trace`` refuses it: ``agent.run(trace=…)``
        given an incident's trace wrote the second run over it. ``overwrite=True`` writes over
        it on purpose (``agent.run(trace=Trace(path, overwrite=True))``)."""
        self.path = Path(path) if path is not None else None
        if self.path is not None:  # said before the run, as the command line says it
            if self.path.is_dir():
                raise UsageError(f"trace {path}: this is a folder; give a file name in it")
            if not self.path.parent.is_dir():
                raise UsageError(
                    f"trace {path}: the folder {self.path.parent} does not exist; create it first"
                )
            if not overwrite:
                refuse_written(f"trace {path}", self.path, _OVERWRITE)
        self._kept = kept or path is not None
        self._lines: list[bytes] = []
        self._events: list[dict[str, Any]] = []
        self._header: dict[str, Any] | None = None
        self._count = 0
        self._prev = GENESIS
        self._signer = signer_from_env()
        self._stream: BinaryIO | None = None  # opened by the first event (see _write)
        self._to_file = path is not None

    def emit(
        self, type: str, fields: Mapping[str, Any] | None = None, /, **more: Any
    ) -> dict[str, Any]:
        """Write the event ``type`` whose members are ``fields`` and ``more`` (a step event's
        ~20 members come as one dict: passed as keywords they were copied twice more)."""
        event: dict[str, Any] = {"type": type, "seq": self._count, "prev": self._prev}
        if fields:
            event.update(fields)
        if more:
            event.update(more)
        if self._signer is None:
            line = _hashed_line(event)
            self._prev = event["hash"]
        else:  # the stdlib's lines, as before orjson
            event["hash"] = self._prev = _digest(_line(event))
            # over the hash, which covers the whole event
            event["sig"] = self._signer.sign(event["hash"])
            line = _line(event).encode()
        self._count += 1
        if self._header is None:
            self._header = event
        if self._to_file:
            self._write(line + b"\n")
        elif self._kept:
            self._lines.append(line)
            self._events.append(event)
        return event

    def _write(self, data: bytes) -> None:
        """All of ``data`` to the file: a write may take only part of it (a full disk, a
        signal), and the rest must follow before the next event."""
        if self._stream is None:
            assert self.path is not None
            # unbuffered: each event reaches the operating system in one write as it is emitted
            self._stream = open(self.path, "wb", buffering=0)  # noqa: SIM115
        try:
            written = self._stream.write(data)  # all of it, nearly always: no view made for it
            if written != len(data):
                view = memoryview(data)[written:]
                while view:
                    view = view[self._stream.write(view) :]
        except OSError as e:  # a full disk: the system's error names no file, and a user
            e.filename = e.filename or str(self.path)  # read "No space left on device"
            raise

    @property
    def kept_nowhere(self) -> bool:
        """Written to no file and keeping no event but the header (``kept=False``): nothing
        can replay or check it, so a run or a call does not ask the world's digest for it
        (on ``oxigraph:PATH`` after a killed process, a pass over the whole world)."""
        return not self._kept

    @property
    def events(self) -> list[dict[str, Any]]:
        """Every event so far; a streamed trace reads them back from its file."""
        if not self._kept:
            raise TraceError(
                "this run kept no trace (keep=False and no trace file): give trace=PATH to "
                "keep one in a file, or run with keep=True"
            )
        if self.path is None:
            return self._events
        return read_trace(self.path) if self._count else []  # no file written yet

    @property
    def header(self) -> dict[str, Any]:
        """The first event: the run's workflow, focus, world digest and versions."""
        if self._header is None:
            raise TraceError("the trace has no events yet")
        return self._header

    def save(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write the trace to ``path`` as JSON Lines (a copy of its file, if it was written to
        one), for `replay` and ``horismos replay``; returns the path. Raises `TraceError` for a
        run that kept none (``keep=False``), UsageError for a folder that does not exist, and
        :class:`TraceExists` for a file holding something already (another run's trace),
        unless ``overwrite=True``: saving one run's trace over an incident's lost it."""
        path = Path(path)
        if path.is_dir():
            raise UsageError(f"trace {path}: this is a folder; give a file name in it")
        if not path.parent.is_dir():  # as trace= says it: FileNotFoundError named no folder
            raise UsageError(
                f"trace {path}: the folder {path.parent} does not exist; create it first"
            )
        if not self._kept:
            self.events  # noqa: B018 - raises: nothing was kept to save
        same = self.path is not None and path.resolve() == self.path.resolve()
        if not overwrite and not same:  # its own file is saved where it is, as it was
            refuse_written(f"trace {path}", path, _OVERWRITE)
        if self.path is not None:
            if not same:
                path.write_bytes(self.path.read_bytes() if self._count else b"")
            return path
        path.write_bytes(b"".join(line + b"\n" for line in self._lines))
        return path

    def close(self) -> None:
        """Close the trace's file, if one is open; no event is written after."""
        self._to_file = False  # nothing more is written
        if self._stream is not None:
            self._stream.close()
            self._stream = None

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.events)

    def __len__(self) -> int:
        return self._count


def read_trace(path: str | Path) -> list[dict[str, Any]]:
    """The events of a saved trace, after checking its version and its hash chain."""
    return list(iter_trace(path))


def iter_trace(path: str | Path) -> Iterator[dict[str, Any]]:
    """The events of a saved trace one at a time, each checked (its version, its place in the
    hash chain) before it is given: what reads a trace from start to end (``trace show``)
    holds one event, not the whole run, whose events in memory were ~9x its file. An edit
    raises at its event, after the events before it."""
    prev = GENESIS
    count = 0
    ended = False
    cut = False
    verifier = verifier_from_env()
    for n, data in enumerate(_lines(path), 1):
        try:
            raw = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise TraceError(
                f"{path}:{n}: not a trace: byte {e.start + 1} of the line is not UTF-8 text"
            ) from None
        if raw.endswith("\r\n"):  # as text mode read it, which this replaced
            raw = raw[:-2] + "\n"
        line = raw.rstrip("\n")
        if not line:
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError as e:
            # the file's last line, cut off as it was written (the process stopped there);
            # unless it is the first and no event's start: a file of another kind, one line
            if not raw.endswith("\n") and (count or line.startswith('{"')):
                cut = True
                break
            if not count:  # no event read: most likely a file of another kind
                raise TraceTampered(_not_a_trace(path, n, e.msg), line=n) from None
            raise TraceTampered(f"{path}:{n}: not a JSON event ({e.msg})", line=n) from None
        except RecursionError:
            raise TraceTampered(
                f"{path}:{n}: not a JSON event (nested too deeply)", line=n
            ) from None
        if not isinstance(event, dict):
            raise TraceTampered(f"{path}:{n}: not a JSON event object", line=n)
        if ended:
            raise TraceTampered(
                f"{path}:{n}: data after the end event: a complete trace ends there", line=n
            )
        if "hash" not in event:
            raise TraceTampered(
                f"{path}:{n}: this event has no hash, so an edit of it could "
                "not be found; every event carries one",
                line=n,
            )
        sig = event.pop("sig", None)
        if sig is not None:
            line = _without(line, "sig", sig) or line
        if not count:
            version = event.get("trace_version")
            if event.get("type") != "header":
                raise TraceError(f"{path}:{n}: a trace starts with a header event")
            if version not in READ_VERSIONS:
                raise TraceVersionError(version_message(str(path), version))
        own = event.pop("hash", None)
        unhashed = _without(line, "hash", own)
        if unhashed is not None:  # the hash is of the line's own text, so no re-serialising
            digest = _digest(unhashed)
            edited = own != digest
        else:
            digest = _digest(_line(event))
            written = _line({**event, "hash": own})
            edited = own != digest or written != line
        if edited:
            raise TraceTampered(
                f"{path}:{n}: this event was edited after it was written (its hash does "
                "not match its content)",
                line=n,
            )
        if event.get("prev") != prev:
            raise TraceTampered(
                f"{path}:{n}: the hash chain breaks here: the event before this one was "
                "removed, reordered or edited",
                line=n,
            )
        if verifier is not None:
            verifier.verify(digest, sig, str(path), n)
        prev = digest
        event["hash"] = digest
        if sig is not None:
            event["sig"] = sig
        check_shape(event, count, str(path), n)
        count += 1
        ended = event.get("type") == "end"
        yield event
    if not count:
        raise TraceError(
            f"{path}: the trace holds no complete event: its first line was cut off as it "
            "was written"
            if cut
            else f"{path}: the trace is empty"
        )


def _not_a_trace(path: str | Path, n: int, why: str) -> str:
    """A file whose first line is not JSON, given where a trace goes (``trace show
    world.trig``, ``replay out.trig …``): it was "not a JSON event", as if a trace's event had
    been edited."""
    said = (
        f"{path}:{n}: not a trace: a trace is one JSON event a line (what --trace writes), "
        f"and this line is not JSON ({why})"
    )
    if Path(path).suffix in RDF_SUFFIXES:
        said += "; an RDF file goes among the definitions or to --world"
    return said


def _lines(path: str | Path) -> Iterator[bytes]:
    """The trace file's lines; one that cannot be opened or read is a :class:`TraceError`
    naming it and what to do, not the system's "[Errno 5] Input/output error" alone."""
    try:
        with open(path, "rb") as f:
            yield from f
    except OSError as e:
        what, hint = why_unreadable(e)
        raise TraceError(f"{path}: {what}; {hint}") from None


def version_message(source: str, version: object) -> str:
    """Why a trace of ``version`` is refused, and what to do instead."""
    if version == 1:
        return (
            f"{source}: trace_version 1 was written by an earlier Horismos, which embedded "
            f"the whole world in the trace; this runtime reads versions {_READ}, "
            "which record what the run read instead. Re-record it: run the workflow again "
            "with --trace (add --trace-snapshot to embed a small world), or replay it with "
            "the Horismos release that recorded it"
        )
    return (
        f"{source}: trace_version {version!r} is not one this runtime reads (it reads "
        f"{_READ}); replay it with the Horismos release that recorded it"
    )


def _without(line: str, key: str, own: object) -> str | None:
    """``line`` without its ``key`` member, as it was when hashed; ``None`` if that cannot
    be cut out unambiguously (then the event is re-serialised to check it)."""
    if not isinstance(own, str):
        return None
    member = f'"{key}":"{own}"'
    at = line.find(member)
    if at < 0 or line.find(member, at + 1) >= 0:
        return None
    end = at + len(member)
    if line[end] == ",":
        return line[:at] + line[end + 1 :]
    if line[at - 1] == ",":
        return line[: at - 1] + line[end:]
    return None
