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
import json
import os
import resource
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import cast

ZYGOTE = Path(__file__).parent / "zygote.py"
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
        self.process = subprocess.Popen(
            [sys.executable, str(ZYGOTE)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self.said, env=self.env,
        )
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
    global _zygote
    env = dict(os.environ if env is None else env)
    command = [sys.executable, *([str(script)] if script else ["-m", "horismos"]), *args]
    if _zygote is None or _zygote.process.poll() is not None:
        _zygote = _Zygote()
    zygote = _zygote
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
