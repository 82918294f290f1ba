"""``cmd:NAME``: a command-line program, run so that no argument can become more than a value.

Why each rule (docs/bindings-command.md):

- **argv, never a shell.** The template is a list; ``{name}`` is replaced by the argument's
  value inside one member, so ``; rm -rf /`` is one odd argument, never a second command. A
  member that is exactly ``{name}`` and comes before a ``--`` member is where a program
  parses options: a value starting with ``-`` there is refused (write ``--`` before it, or
  ``--opt={name}``). A value with a NUL byte cannot be an argument and is refused.
- **A working directory under a declared root.** ``horis:workdir`` (placeholders allowed) is
  relative, has no ``..``, and its real path, symlinks resolved, must be under the root's.
- **Only declared environment variables** reach the program (``horis:env``); nothing of the
  server's own environment leaks, not even ``PATH``: the program is looked up here.
- **Output safety, as the Holon command contract words it.** The caller sees a preview of
  each stream (``horis:previewBytes``); a finite retention (``horis:retainBytes``, both
  streams together) keeps a raw head and tail of each while the rest is drained and counted;
  a higher emitted-byte quota (``horis:quotaBytes``) kills the process group and fails the
  call (:class:`~horismos.OutputQuotaExceeded`); a capture folder under its free-space
  waterline (``horis:minFreeBytes``) keeps the command from starting
  (:class:`~horismos.LowDisk`). Byte counters, dropped-byte evidence and the truncation flags
  travel with the result (``output_capture``) into the trace and the call envelope.
- **Every process the program started dies** with a timeout, a quota breach, or the
  program's own exit (a child that outlives its parent is killed, so its open pipe cannot
  hold the call), on Linux even one that left the process group (``setsid``, a double fork):
  :mod:`.shepherd` says how, and what stays out of reach.
- **The program dies with Horismos** (Linux: ``PR_SET_PDEATHSIG``). Started in a session of
  its own, it outlived a ``kill -9`` of the process that ran it, and acted after the step was
  found in doubt: an operator who checked meanwhile saw nothing yet, cleared it, and the next
  call acted a second time. Killed with it, as a Python tool's thread is, what the call did
  is done by the time anyone checks.

Stdout must be one JSON object, the result — or, when the effect declares a
``horis:fromText`` assertion, any text, landing whole as that value; a non-zero exit is a
:class:`~horismos.ToolError` whose message carries the stderr preview. A program killed by a
signal this binding did not send (the OOM killer, an operator) never answered: it was sent
and may have acted, so a tool that is not idempotent is held in doubt, not called again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from .. import _attempt
from .._errors import LowDisk, NotSent, OutputQuotaExceeded, ToolError, UnreadableAnswer
from .._model import Command, Tool
from . import shepherd
from .base import Binding
from .limits import check_result
from .wire import json_value

__all__ = ["Captured", "CommandBinding", "placeholders", "script", "template_problems"]

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_.-]*)\}")
_CHUNK = 1 << 16


def placeholders(argv: Iterable[str], workdir: str = "") -> set[str]:
    """The ``{name}`` placeholders of a command's argv and working folder: the arguments it is
    filled from, checked against the tool's at load rather than found missing at a call."""
    return {m for a in [*argv, workdir] for m in _PLACEHOLDER.findall(a)}


def stray_braces(argv: tuple[str, ...]) -> list[str]:
    """The members with a brace that opens or closes no placeholder (``"{queue"``,
    ``"{ queue }"``): passed to the program as written. A program may want them (``find
    -exec {}``), so the loader only warns."""
    return [m for m in argv if "{" in (rest := _PLACEHOLDER.sub("", m)) or "}" in rest]


_INTERPRETER = re.compile(r"(python[0-9.]*|node|nodejs|bash|sh|dash|zsh|ruby|perl|php)")
_SCRIPT_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".sh", ".bash", ".rb", ".pl", ".php")


def script(command: Command) -> Path | None:
    """Where the call will look for the script a known interpreter is given, when that can be
    told before any call: the program is ``python3``, ``node``, ``bash``… (by name or path),
    its first argument a relative path with no placeholder that ends like a script
    (``queue_cli.py``), and the working directory has no placeholder. Anything else (an
    option first, ``-m mod``, a script named by an argument) is None: the program may read it
    in ways the loader cannot follow.

    Why: ``( "python3" "queue_cli.py" "{patient}" )`` with no such file under the root
    validated, and every call exited 2 (``can't open file``), after the step had fired."""
    if len(command.argv) < 2 or not _INTERPRETER.fullmatch(PurePosixPath(command.argv[0]).name):
        return None
    first = command.argv[1]
    if (
        first.startswith(("-", "/"))
        or not first.endswith(_SCRIPT_SUFFIXES)
        or placeholders([first], command.workdir)
    ):
        return None
    return Path(command.root) / command.workdir / first


def template_problems(argv: tuple[str, ...], workdir: str) -> list[tuple[str, str]]:
    """(message, hint) for each way the template itself is wrong, found at load time."""
    problems = []
    if _PLACEHOLDER.search(argv[0]):
        problems.append(
            (
                f"horis:argv's first member {argv[0]!r} is the program and cannot be "
                "an argument's value",
                'name the program itself, e.g. ( "wc" … )',
            )
        )
    parts = PurePosixPath(workdir).parts if workdir else ()
    if workdir.startswith("/") or ".." in parts:
        problems.append(
            (
                f"horis:workdir {workdir!r} must be relative to horis:root, without '..'",
                'write a folder under the root, e.g. horis:workdir "cases"',
            )
        )
    return problems


class Captured(dict[str, Any]):
    """A command's result, with its ``output_capture`` evidence for the trace and envelope."""

    capture: dict[str, Any]


class _Stream:
    """One pipe drained to its end: a raw head and tail kept, everything counted."""

    def __init__(self, name: str, keep: int, preview: int) -> None:
        self.name, self.preview_cap = name, preview
        self.head_cap = keep // 2
        self.tail_cap = keep - self.head_cap
        self.head = bytearray()
        self.tail = bytearray()
        self.emitted = 0

    def take(self, chunk: bytes) -> None:
        self.emitted += len(chunk)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk and self.tail_cap:
            self.tail += chunk
            if len(self.tail) > self.tail_cap:
                del self.tail[: len(self.tail) - self.tail_cap]

    @property
    def retained(self) -> int:
        return len(self.head) + len(self.tail)

    @property
    def dropped(self) -> int:
        return self.emitted - self.retained

    def whole(self) -> bytes | None:
        """Every byte emitted, when nothing was dropped."""
        return bytes(self.head + self.tail) if self.dropped == 0 else None

    def preview(self) -> str:
        return bytes(self.head[: self.preview_cap]).decode("utf-8", "replace")

    def evidence(self, path: Path | None) -> dict[str, Any]:
        return {
            "emitted_bytes": self.emitted,
            "retained_bytes": self.retained,
            "head_bytes": len(self.head),
            "tail_bytes": len(self.tail),
            "dropped_bytes": self.dropped,
            "dropped_range": [len(self.head), self.emitted - len(self.tail)]
            if self.dropped
            else None,
            "truncated": self.dropped > 0,
            "preview": self.preview(),
            "preview_truncated": self.emitted > self.preview_cap,
            "file": str(path) if path is not None else None,
        }


class CommandBinding(Binding):
    """A ``cmd:NAME`` binding: runs the declared program with an argv filled in from the
    arguments (never through a shell), and reads its answer from what it prints."""

    kind = "command"

    def __init__(self, tool: Tool, command: Command) -> None:
        self.tool, self.command = tool, command

    @classmethod
    def resolve(cls, tool: Tool, commands: Mapping[str, Command]) -> CommandBinding:
        name = tool.binding[len("cmd:") :]
        command = commands.get(name)
        if command is None:
            raise NotSent(
                f'binding "{tool.binding}" of {tool.name}: no horis:CommandBinding '
                f"named {name!r} is declared",
                tool=str(tool.iri),
            )
        binding = cls(tool, command)
        binding.program()
        return binding

    # -- before the call -------------------------------------------------------------------

    def program(self) -> str:
        """The program's path: ``python`` is the interpreter Horismos runs in."""
        name = self.command.argv[0]
        if name in ("python", "python3"):
            return sys.executable
        found = shutil.which(name)
        if found is None:
            raise NotSent(
                f"command {self.command.name!r} of {self.tool.name}: program "
                f"{name!r} is not found on PATH; install it or give its full path "
                "as the first member of horis:argv",
                tool=str(self.tool.iri),
            )
        return found

    def argv(self, args: Mapping[str, Any]) -> list[str]:
        values = {k: _text(v) for k, v in args.items()}
        out = [self.program()]
        options_end = False
        for member in self.command.argv[1:]:
            if member == "--":
                options_end = True
            names = _PLACEHOLDER.findall(member)
            if any(n not in values for n in names):  # an optional argument left out
                continue
            for n in names:
                if "\0" in values[n]:
                    raise self._refuse(
                        f'argument "{n}" contains a NUL byte, which no '
                        "command-line argument can carry"
                    )
            whole = _PLACEHOLDER.fullmatch(member)
            if whole and not options_end and values[whole.group(1)].startswith("-"):
                raise self._refuse(
                    f'argument "{whole.group(1)}" is {values[whole.group(1)]!r}, which starts '
                    f"with '-' where {self.command.argv[0]} reads options; a value is never "
                    'an option: the template puts it after "--" or as --opt={'
                    f"{whole.group(1)}}}, or the value must not start with '-'"
                )
            out.append(_PLACEHOLDER.sub(lambda m: values[m.group(1)], member))
        return out

    def workdir(self, args: Mapping[str, Any]) -> Path:
        root = Path(self.command.root).resolve()
        if not root.is_dir():
            raise NotSent(
                f"command {self.command.name!r}: horis:root {self.command.root!r} is not a folder",
                tool=str(self.tool.iri),
            )
        rel = _PLACEHOLDER.sub(lambda m: _text(args.get(m.group(1), "")), self.command.workdir)
        parts = PurePosixPath(rel).parts
        if rel.startswith(("/", "\\")) or ".." in parts or "\0" in rel:
            raise self._refuse(
                f"working directory {rel!r} escapes the root {str(root)!r}: it "
                "must be relative, without '..'"
            )
        where = (root / rel).resolve()
        if where != root and root not in where.parents:
            raise self._refuse(
                f"working directory {rel!r} resolves to {str(where)!r}, outside "
                f"the root {str(root)!r} (a symlink leads out)"
            )
        if not where.is_dir():
            raise self._refuse(f"working directory {rel!r} is not a folder under {str(root)!r}")
        return where

    def environment(self) -> dict[str, str]:
        env = {}
        for name, value in self.command.env:
            if value.startswith("${") and value.endswith("}"):
                var = value[2:-1]
                if var not in os.environ:
                    raise NotSent(
                        f"command {self.command.name!r}: environment variable {var} "
                        f"(for its {name}) is not set; export {var}=… before "
                        "running",
                        tool=str(self.tool.iri),
                    )
                value = os.environ[var]
            env[name] = value
        return env

    def capture_dir(self) -> Path:
        """The capture folder (:meth:`_capture_folder`) with room above the waterline; else
        the call is not sent."""
        folder = self._capture_folder()
        usage = shutil.disk_usage(folder)
        if usage.free < self.command.min_free_bytes:
            raise LowDisk(
                f"command {self.command.name!r} of {self.tool.name} was not started: "
                f"its capture folder {str(folder)!r} has {usage.free:,} bytes free, "
                f"under the waterline of {self.command.min_free_bytes:,} "
                "(horis:minFreeBytes); free space there or lower the waterline",
                free=usage.free,
                waterline=self.command.min_free_bytes,
                tool=str(self.tool.iri),
            )
        return folder

    def _capture_folder(self) -> Path:
        """The capture folder, made if need be; else the call is not sent (a run checks it
        before its first step). A declared ``horis:captureDir`` is made only where its parent
        folder is: a mistyped path (``/var/lib/horismso/…``) was made in full, silently, and
        the waterline then measured whatever disk held it; one that could not be made (no
        permission, a file in the way) failed as if the tool had raised."""
        declared = self.command.capture_dir
        folder = Path(declared or Path(tempfile.gettempdir()) / "horismos-captures")
        try:
            folder.mkdir(parents=not declared, exist_ok=True)
            if not os.access(folder, os.W_OK | os.X_OK):
                raise PermissionError(13, "not writable by this user")
        except OSError as e:
            missing = isinstance(e, FileNotFoundError) and declared
            raise NotSent(
                f"command {self.command.name!r} of {self.tool.name} was not started: its "
                f"capture folder {str(folder)!r} "
                + (
                    f"is under {str(folder.parent)!r}, which does not exist"
                    if missing
                    else f"cannot be used ({e.strerror or e})"
                )
                + "; create it for the user Horismos runs as"
                + (", or correct horis:captureDir" if declared else ""),
                tool=str(self.tool.iri),
            ) from None
        return folder

    def _refuse(self, why: str) -> NotSent:
        return NotSent(
            f"{self.tool.name} (command {self.command.name!r}) refused before it ran: {why}",
            tool=str(self.tool.iri),
        )

    async def check(self) -> None:
        self.program()
        self.environment()
        self._capture_folder()

    # -- the call --------------------------------------------------------------------------

    async def call(self, args: Mapping[str, Any]) -> Any:
        argv, cwd, env = self.argv(args), self.workdir(args), self.environment()
        folder = self.capture_dir()
        c = self.command
        per_stream = c.retain_bytes // 2
        out, err = (
            _Stream("stdout", per_stream, c.preview_bytes),
            _Stream("stderr", c.retain_bytes - per_stream, c.preview_bytes),
        )
        preexec = shepherd.start(os.getpid(), argv, env)
        try:
            proc = await _started(
                lambda: asyncio.create_subprocess_exec(
                    *argv,
                    cwd=cwd,
                    env=env,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    start_new_session=True,
                    preexec_fn=preexec,
                ),
                shepherded=preexec is not None,
            )
        except (OSError, subprocess.SubprocessError) as e:  # not executable, gone: never ran
            why = e.strerror if isinstance(e, OSError) else "the system would not execute it"
            raise NotSent(
                f"{self.tool.name} (command {c.name!r}): cannot start {argv[0]!r}: {why or e}",
                tool=str(self.tool.iri),
            ) from None
        _attempt.sent()  # it runs: from here on it may act
        ends = _Ends(proc, shepherded=preexec is not None)
        over = asyncio.Event()

        async def drain(pipe: asyncio.StreamReader, stream: _Stream) -> None:
            while chunk := await pipe.read(_CHUNK):
                stream.take(chunk)
                if out.emitted + err.emitted > c.quota_bytes and not over.is_set():
                    over.set()
                    ends.kill()

        assert proc.stdout is not None and proc.stderr is not None
        readers = [
            asyncio.ensure_future(drain(proc.stdout, out)),
            asyncio.ensure_future(drain(proc.stderr, err)),
        ]
        try:
            status = await _exited(proc)
            ends.after_exit()
            await asyncio.gather(*readers)
            await proc.wait()
        except BaseException:  # a timeout (cancelled) or anything else: all it started dies
            await ends.stop()
            with contextlib.suppress(Exception):  # the pipes close with the group: drain out
                await asyncio.wait_for(asyncio.gather(*readers), 2)
            for r in readers:
                r.cancel()
            raise
        # killed by a signal it was not sent by this binding (the OOM killer, an operator, its
        # own abort): it never said what it did, so it may have acted — sent, not answered
        signalled = -status if status < 0 and not over.is_set() else None
        if signalled is None:
            _attempt.answered()
        capture = self._evidence(out, err, folder, status, "quota" if over.is_set() else None)
        if over.is_set():
            raise OutputQuotaExceeded(
                f"{self.tool.name} (command {c.name!r}) emitted more than its quota of "
                f"{c.quota_bytes:,} bytes (horis:quotaBytes) on stdout and stderr; its process "
                f"group was killed after {out.emitted + err.emitted:,} bytes; nothing landed. "
                f"Output capture: {_brief(capture)}",
                emitted=out.emitted + err.emitted,
                quota=c.quota_bytes,
                tool=str(self.tool.iri),
            )
        if signalled is not None:
            raise ToolError(
                f"{self.tool.name} (command {c.name!r}) was killed by "
                f"{_signal_name(signalled)} before it answered, so it may have acted. "
                f"Output capture: {_brief(capture)}",
                tool=str(self.tool.iri),
            )
        if status != 0:
            tail = err.preview().strip()
            raise ToolError(
                f"{self.tool.name} (command {c.name!r}) exited with status "
                f"{status}"
                + (f"; stderr: {tail}" if tail else "")
                + f". Output capture: {_brief(capture)}",
                tool=str(self.tool.iri),
            )
        text = out.whole()
        if text is None:
            raise UnreadableAnswer(
                f"{self.tool.name} (command {c.name!r}) wrote {out.emitted:,} bytes "
                f"to stdout, more than the {out.head_cap + out.tail_cap:,} kept "
                "(half of horis:retainBytes): stdout must be one JSON object, the "
                f"result. Output capture: {_brief(capture)}",
                tool=str(self.tool.iri),
            )
        try:
            data = json.loads(text) if text.strip() else None
        except ValueError:
            data = None
        text_key = self.tool.effect.text_key if self.tool.effect is not None else None
        if not isinstance(data, dict) and text_key is not None:  # horis:fromText: whole text
            data = {text_key: text.decode("utf-8", "replace").strip()}
        if not isinstance(data, dict):
            raise UnreadableAnswer(
                f"{self.tool.name} (command {c.name!r}) must write one JSON object "
                f"to stdout, its result (or declare the horis:fromText assertion "
                f"its text lands as); it wrote {out.preview()[:200]!r}",
                tool=str(self.tool.iri),
            )
        result = Captured(data)
        result.capture = capture
        return check_result(self.tool, result, f"{self.tool.name} (command {c.name!r})")

    def _evidence(
        self, out: _Stream, err: _Stream, folder: Path, status: int, killed: str | None
    ) -> dict[str, Any]:
        """What the call left: its streams' files and figures. A file that cannot be written
        (its folder removed, the disk full) is named in ``unwritten`` and not raised: the
        program has acted by then, and an error here held its answer back from landing while
        nothing held the call in doubt, so it was made again."""
        c = self.command
        paths: dict[str, Path | None] = {}
        call = uuid.uuid4().hex[:12]
        unwritten: list[str] = []
        for s in (out, err):
            path = None
            if s.emitted:
                path = folder / f"{c.name}-{call}.{s.name}"
                try:
                    path.write_bytes(bytes(s.head + s.tail))  # raw head, then raw tail
                except OSError as e:  # the call is over: its answer still lands
                    path = None
                    unwritten.append(f"{s.name}: {e.strerror or e}")
            paths[s.name] = path
        return {
            "policy": {
                "preview_bytes": c.preview_bytes,
                "retain_bytes": c.retain_bytes,
                "quota_bytes": c.quota_bytes,
                "min_free_bytes": c.min_free_bytes,
            },
            "exit_status": status,
            "killed": killed,
            "emitted_bytes": out.emitted + err.emitted,
            "dropped_bytes": out.dropped + err.dropped,
            "truncated": bool(out.dropped or err.dropped),
            "stdout": out.evidence(paths["stdout"]),
            "stderr": err.evidence(paths["stderr"]),
            **({"unwritten": unwritten} if unwritten else {}),
        }


def _text(value: Any) -> str:
    v = json_value(value)
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _brief(capture: Mapping[str, Any]) -> str:
    return f"{capture['emitted_bytes']:,} bytes emitted, {capture['dropped_bytes']:,} dropped" + (
        f", killed ({capture['killed']})" if capture["killed"] else ""
    )


async def _exited(proc: asyncio.subprocess.Process) -> int:
    """The program's exit status, as soon as it exits. Not ``proc.wait()``: that also waits
    for its pipes to close, which a child holding them open would put off indefinitely. On
    Linux a pidfd wakes the call the moment the process ends (polling, up to 50 ms apart, added
    up to half of a short call's time); the status follows once asyncio has reaped it."""
    ended = _exit_of(proc)
    if ended is not None:
        await ended
    delay = 0.001
    while proc.returncode is None:
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.05)
    return proc.returncode


def _exit_of(proc: asyncio.subprocess.Process) -> asyncio.Future[None] | None:
    """A future done when ``proc`` exits (a pidfd turns readable), or None where there is no
    pidfd (not Linux, a kernel before 5.3, a loop that watches no file descriptor)."""
    if not hasattr(os, "pidfd_open") or proc.returncode is not None:
        return None
    loop = asyncio.get_running_loop()
    try:
        fd = os.pidfd_open(proc.pid)
    except OSError:
        return None
    ended: asyncio.Future[None] = loop.create_future()

    def done() -> None:
        if not ended.done():
            ended.set_result(None)

    try:
        loop.add_reader(fd, done)
    except (NotImplementedError, OSError):
        os.close(fd)
        return None

    def close(_: object) -> None:
        loop.remove_reader(fd)
        os.close(fd)

    ended.add_done_callback(close)
    return ended


async def _started(
    spawn: Callable[[], Awaitable[asyncio.subprocess.Process]], *, shepherded: bool
) -> asyncio.subprocess.Process:
    """The process ``spawn`` starts, started in a task of its own that a cancellation (the
    call's ``horis:timeout``, the run stopped) does not interrupt once it has forked.

    asyncio forks and execs at once, then awaits the setup of the pipes; cancelled there, it
    killed the one process it forked, the shepherd, and the program the shepherd had started
    lived on, orphaned, and acted, while the call read as never sent ("it did not act"): held
    in doubt by nothing, it was started again by ``horis:retries`` and by the next run.
    Cancelled before its task forked, nothing ran and the cancellation goes on; after, the
    call counts as sent (it may have acted), and everything it started is stopped, as at a
    timeout, before the cancellation goes on."""
    forked = False

    async def fork() -> asyncio.subprocess.Process:
        nonlocal forked
        forked = True  # what follows forks and execs before its first await
        return await spawn()

    task = asyncio.ensure_future(fork())
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        if not forked:
            task.cancel()  # never ran: nothing started
            raise
        _attempt.sent()  # started: it may have acted
        try:
            proc = await asyncio.shield(task)  # unshielded, a cancellation reached asyncio's
        except asyncio.CancelledError:  # cancelled again meanwhile: stopped once started
            task.add_done_callback(lambda t: _killed_once_started(t, shepherded))
            raise
        except Exception:  # it could not start after all: nothing runs
            proc = None
        if proc is not None:
            await _Ends(proc, shepherded=shepherded).stop()
        raise


def _killed_once_started(
    task: asyncio.Future[asyncio.subprocess.Process], shepherded: bool
) -> None:
    """Every process of a call whose start was cancelled, and whose stop was cancelled too,
    dies at once, as at a quota breach."""
    if not task.cancelled() and task.exception() is None:
        _Ends(task.result(), shepherded=shepherded).kill()


class _Ends:
    """How a call ends every process it started: through its shepherd, which reaches those
    that left the group too (:mod:`.shepherd`), or, where there is none, by the group."""

    def __init__(self, proc: asyncio.subprocess.Process, *, shepherded: bool) -> None:
        self.proc, self.shepherded = proc, shepherded

    async def stop(self) -> None:
        """A timeout or a cancellation: SIGTERM to all, then SIGKILL after a short grace: a
        program that ignores SIGTERM, and every child it started, dies. Should a shepherd not
        have ended two seconds after that, its group is killed from here."""
        if self.shepherded:
            self._signal(shepherd.STOP)
            patience = shepherd.TERM_GRACE + 2
        else:
            self._kill_group(signal.SIGTERM)
            patience = shepherd.TERM_GRACE
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(self.proc.wait()), patience)
        self._kill_group(signal.SIGKILL)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.proc.wait(), 2)

    def kill(self) -> None:
        """A quota breach: SIGKILL to all, at once."""
        if self.shepherded:
            self._signal(shepherd.KILL)
        else:
            self._kill_group(signal.SIGKILL)

    def after_exit(self) -> None:
        """The program (or its shepherd) has exited: whatever is left in its group dies, so an
        inherited pipe cannot hold the call open. A shepherd has cleared all before it exited;
        this is for one killed itself, whose program would live on."""
        self._kill_group(signal.SIGKILL)

    def _signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(sig)

    def _kill_group(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)


def _signal_name(number: int) -> str:
    """``SIGKILL`` for 9; the number for a signal this platform does not name."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
