"""``horismos ARGS`` as a process of its own, forked from one that has imported it already.

:func:`horismos_forked` answers as ``subprocess.run([sys.executable, "-m", "horismos", *ARGS],
cwd=…, env=…, capture_output=True, text=True)`` does, at a fraction of the CPU: the command
is a child of ``tests/zygote.py`` (one per test process, started at first use), which imported
the command line once. See that file for what the child is and is not. A command is run the
ordinary way instead when the environment asks for an interpreter set up otherwise, or when
another thread of the test is using the zygote already.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import functools
import json
import os
import resource
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

ZYGOTE = Path(__file__).parent / "zygote.py"
_Popen = subprocess.Popen
"""The standard library's, whatever a test makes ``subprocess.Popen`` (conftest.py's
``forked_popen``): the zygote itself is started the ordinary way."""
_STARTUP = ("PYTHON", "LANG", "LC_")
"""Variables an interpreter reads as it starts: a command given other values than the zygote
started with gets a fresh interpreter."""


def _startup(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith(_STARTUP)}


class _Zygote:
    def __init__(self) -> None:
        self.env = dict(os.environ)
        # what it says of itself (a failed import): not the output of the test that started it
        self.said = tempfile.TemporaryFile()  # noqa: SIM115  # open as long as the zygote
        # the three descriptors of a command it starts beside the tests go over this
        self.channel, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.process = _Popen(
            [sys.executable, str(ZYGOTE), str(theirs.fileno())], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self.said, env=self.env, pass_fds=[theirs.fileno()],
        )
        theirs.close()
        self.lock = threading.Lock()
        self.lines = b""
        atexit.register(self.close)

    def close(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:  # waiting on a child that hangs: both go
                self.process.kill()

    def line(self, deadline: float | None) -> str | None:
        """The zygote's next line, or None when ``deadline`` passes first."""
        out = self.process.stdout
        assert out is not None
        while b"\n" not in self.lines:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([out], [], [], wait)[0]:
                return None
            chunk = os.read(out.fileno(), 4096)
            if not chunk:
                self.said.seek(0)
                raise RuntimeError(f"tests/zygote.py ended: {self.said.read().decode()}")
            self.lines += chunk
        line, _, self.lines = self.lines.partition(b"\n")
        return line.decode()


_zygote: _Zygote | None = None


def _the_zygote() -> _Zygote:
    """This test process's zygote, started (again) when there is none running."""
    global _zygote
    if _zygote is None or _zygote.process.poll() is not None:
        _zygote = _Zygote()
    return _zygote


def horismos_forked(
    cwd: Path | str, *args: str, env: Mapping[str, str] | None = None, input: str | None = None,
    timeout: float | None = None, script: Path | None = None, file_size: int | None = None,
    ignore: tuple[int, ...] = (),
) -> subprocess.CompletedProcess[str]:
    """``horismos ARGS`` (or ``python SCRIPT ARGS``) run in ``cwd``: its exit code (``-N``:
    killed by signal N), stdout and stderr. Past ``timeout`` it is killed and
    :class:`subprocess.TimeoutExpired` raised, as ``subprocess.run`` does. It starts with the
    signals ``ignore`` names ignored and, given ``file_size``, may write no file past that
    many bytes (RLIMIT_FSIZE), as a ``preexec_fn`` would start a fresh one."""
    env = dict(os.environ if env is None else env)
    command = [sys.executable, *([str(script)] if script else ["-m", "horismos"]), *args]
    zygote = _the_zygote()
    if _startup(env) != _startup(zygote.env) or not zygote.lock.acquire(blocking=False):
        def limits() -> None:
            for signum in ignore:
                signal.signal(signum, signal.SIG_IGN)
            if file_size is not None:
                resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))

        return subprocess.run(command, cwd=cwd, env=env, input=input, capture_output=True,
                              text=True, timeout=timeout,  # an empty stdin, as a child's is
                              stdin=subprocess.DEVNULL if input is None else None,
                              preexec_fn=limits if ignore or file_size is not None else None)
    try:
        with tempfile.TemporaryDirectory(prefix="forked-") as tmp:
            files = {name: Path(tmp) / name for name in ("stdin", "stdout", "stderr")}
            for path in files.values():
                path.touch()
            if input is not None:
                files["stdin"].write_text(input)
            request = {"args": list(args), "cwd": str(Path(cwd).resolve()), "env": env,
                       "script": str(script) if script else None,
                       "ignore": [int(signum) for signum in ignore], "file_size": file_size,
                       **{name: str(path) for name, path in files.items()}}
            assert zygote.process.stdin is not None
            zygote.process.stdin.write(json.dumps(request).encode() + b"\n")
            zygote.process.stdin.flush()
            deadline = None if timeout is None else time.monotonic() + timeout
            pid = int(cast(str, zygote.line(None)))  # no deadline: a line comes, or it raises
            assert pid > 0, pid
            code = zygote.line(deadline)
            if code is None:
                assert timeout is not None
                # it may have ended as the deadline passed, reaped by then: its exit code is
                # the protocol's next line, read whichever way, or the next command reads it
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                zygote.line(None)
                raise subprocess.TimeoutExpired(command, timeout, _text(files["stdout"]),
                                                _text(files["stderr"]))
            return subprocess.CompletedProcess(command, int(code), _text(files["stdout"]),
                                               _text(files["stderr"]))
    finally:
        zygote.lock.release()


def _text(path: Path) -> str:
    """A captured file as ``text=True`` reads a pipe: UTF-8, universal newlines."""
    return path.read_bytes().decode().replace("\r\n", "\n").replace("\r", "\n")


_PR_SET_CHILD_SUBREAPER = 36
_libc = ctypes.CDLL(None, use_errno=True)


def _subreaper(on: bool) -> None:
    """Make this process (or no longer) the reaper of its orphaned descendants: a command the
    zygote starts for :class:`Popen` is orphaned by its go-between while this is on, and so
    becomes this process's child. Off again at once, so no other orphan lands here unwaited."""
    if _libc.prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))


def _signals(ignore: tuple[int, ...], file_size: int | None) -> None:
    """A ``preexec_fn``: SIGINT at its default (a fresh interpreter then raises
    ``KeyboardInterrupt``), the signals ``ignore`` names ignored, files limited to
    ``file_size`` bytes if given."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    for signum in ignore:
        signal.signal(signum, signal.SIG_IGN)
    if file_size is not None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))


class Popen(_Popen):  # type: ignore[type-arg]
    """``subprocess.Popen``, with ``[sys.executable, "-m", "horismos", *ARGS]`` (or
    ``[sys.executable, "SCRIPT.py", *ARGS]``) started as a fork of ``tests/zygote.py`` instead of
    a fresh interpreter: ~0.15 s of CPU where a fresh one spends ~0.7 s.

    The command is this process's own child all the same (see ``tests/zygote.py``): its pid,
    the very pipes (or files) ``stdin``/``stdout``/``stderr`` give, its folder, environment and
    new session as asked, its exit code or the signal that ended it, read by ``wait`` and
    ``poll`` as ever; a ``kill`` kills it alone. So everything ``subprocess.Popen`` offers
    (``communicate``, timeouts, ``send_signal``, ``with``) is the standard library's own code.
    Any other command, and one asking what a fork of the zygote cannot give (a ``preexec_fn``,
    ``pass_fds``, another user, an interpreter start-up variable the zygote was not started
    with, a zygote busy with another thread's command), is started the ordinary way.

    A ``horismos`` (or script) command starts with SIGINT raising ``KeyboardInterrupt``, as a
    terminal's foreground job does, whatever this process has (a shell starts a background job,
    ``pytest … &``, with SIGINT ignored, and a fresh child inherits that), with the signals
    ``ignore`` names ignored and, given ``file_size``, allowed to write no file past that many
    bytes (RLIMIT_FSIZE; a pipe has no size, so its output still reaches the test whole).
    """

    def __init__(self, args: Any, *more: Any, ignore: tuple[int, ...] = (),
                 file_size: int | None = None, **options: Any) -> None:
        self._ignore = tuple(int(signum) for signum in ignore)
        self._file_size = file_size
        super().__init__(args, *more, **options)

    def _execute_child(  # type: ignore[override]
        self, args: Any, executable: Any, preexec_fn: Any, close_fds: bool, pass_fds: Any,
        cwd: Any, env: Any, startupinfo: Any, creationflags: int, shell: bool, p2cread: int,
        p2cwrite: int, c2pread: int, c2pwrite: int, errread: int, errwrite: int,
        restore_signals: bool, gid: Any, gids: Any, uid: Any, umask: int,
        start_new_session: bool, *rest: Any,
    ) -> None:
        process_group = rest[0] if rest else -1
        command = [os.fspath(a) for a in args] if isinstance(args, (list, tuple)) else None
        folder = os.path.abspath(os.fspath(cwd)) if cwd is not None else os.getcwd()
        environment = dict(os.environ if env is None else env)
        ours = (
            command is not None and not shell and executable is None and len(command) > 1
            and command[0] == sys.executable
            and (command[1:3] == ["-m", "horismos"]
                 or (command[1].endswith(".py") and not command[1].startswith("-")))
        )
        zygote = _the_zygote() if ours else None  # none started for a command it would not run
        forkable = (
            zygote is not None and preexec_fn is None and not pass_fds and gid is None
            and gids is None and uid is None and umask < 0 and os.path.isdir(folder)
            and _startup(environment) == _startup(zygote.env)
        )
        if not forkable or zygote is None or not zygote.lock.acquire(blocking=False):
            if ours and preexec_fn is None:
                preexec_fn = functools.partial(_signals, self._ignore, self._file_size)
            super()._execute_child(  # type: ignore[misc]
                args, executable, preexec_fn, close_fds, pass_fds, cwd, env, startupinfo,
                creationflags, shell, p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite,
                restore_signals, gid, gids, uid, umask, start_new_session, *rest)
            return
        assert command is not None and zygote is not None
        module = command[1:3] == ["-m", "horismos"]
        request = {
            "spawn": True, "args": command[3:] if module else command[2:],
            "script": None if module else os.path.join(folder, command[1]), "cwd": folder,
            "env": environment, "start_new_session": bool(start_new_session),
            "process_group": process_group, "ignore": list(self._ignore),
            "file_size": self._file_size,
        }
        # what the child would inherit where Popen gives it nothing of its own
        fds = [p2cread if p2cread != -1 else 0, c2pwrite if c2pwrite != -1 else 1,
               errwrite if errwrite != -1 else 2]
        try:
            _subreaper(True)
            try:
                assert zygote.process.stdin is not None
                zygote.process.stdin.write(json.dumps(request).encode() + b"\n")
                zygote.process.stdin.flush()
                socket.send_fds(zygote.channel, [b"."], fds)
                pid = int(cast(str, zygote.line(None)))
            finally:
                _subreaper(False)
        finally:
            zygote.lock.release()
        assert pid > 0, pid
        self.pid = pid
        self._child_created = True
        self._close_pipe_fds(p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite)  # type: ignore[attr-defined]


def run(args: Any, *, input: Any = None, capture_output: bool = False,
        timeout: float | None = None, check: bool = False,
        **options: Any) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run`` over :class:`Popen`: the same pipes, timeout (the child killed, then
    :class:`subprocess.TimeoutExpired`), ``check`` and answer, for a command whose output
    must reach the test through a pipe (a file it writes under a size limit, unlike
    :func:`horismos_forked`'s files) or that :func:`horismos_forked` does not take."""
    if input is not None:
        options["stdin"] = subprocess.PIPE
    if capture_output:
        options["stdout"] = options["stderr"] = subprocess.PIPE
    with Popen(args, **options) as process:
        try:
            stdout, stderr = process.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired as timed_out:
            process.kill()
            timed_out.output, timed_out.stderr = process.communicate()
            raise
        except BaseException:
            process.kill()
            raise
        code = process.poll()
        assert code is not None
        if check and code:
            raise subprocess.CalledProcessError(code, process.args, stdout, stderr)
    return subprocess.CompletedProcess(process.args, code, stdout, stderr)
