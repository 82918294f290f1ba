"""A real ``redis-server`` (Debian's package) on a free loopback port, as the Celery broker.

Append-only file with ``appendfsync always``: every queued task is on disk before the push is
answered, so a broker killed and restarted on the same folder keeps its queue. ``.ci/run``
installs redis-server when it is missing; elsewhere the tests that need it skip.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
from listening import free_port

__all__ = ["RedisServer", "redis_or_skip"]


def redis_or_skip() -> str:
    found = shutil.which("redis-server")
    if found is None:
        if os.environ.get("CI"):
            raise RuntimeError("redis-server is missing in CI: .ci/run installs it")
        pytest.skip("redis-server is not installed (apt-get install redis-server); "
                    ".ci/run installs it")
    return found


class RedisServer:
    """``redis-server`` with AOF in ``folder``, up when :meth:`start` returns."""

    def __init__(self, folder: Path, *, password: str | None = None) -> None:
        self.folder = folder
        self.password = password  # redis-server --requirepass: a client must give it
        folder.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        log = (self.folder / "redis.log").open("ab")
        self.process = subprocess.Popen(
            [redis_or_skip(), "--port", str(self.port), "--bind", "127.0.0.1",
             "--dir", str(self.folder), "--appendonly", "yes", "--appendfsync", "always",
             "--save", "", "--daemonize", "no", "--protected-mode", "yes",
             *(["--requirepass", self.password] if self.password else [])],
            stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.monotonic() + 20
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(64).startswith((b"+PONG", b"-NOAUTH")):  # up, maybe locked
                        return
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("redis-server did not start: "
                                   + (self.folder / "redis.log").read_text(errors="replace"))
            time.sleep(0.02)

    def queued(self, queue: str = "horismos") -> int:
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as s:
            s.sendall(f"LLEN {queue}\r\n".encode())
            return int(s.recv(64).decode().strip().lstrip(":"))

    def kill(self) -> None:
        """SIGKILL: no shutdown, no last save; only what the AOF already holds survives."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
