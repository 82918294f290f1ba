"""Test servers on 127.0.0.1: a free port, the wait until a server started as a subprocess
accepts connections (or the clear error when it died or never listened), and an in-process
one served from a thread that stops at once."""

from __future__ import annotations

import socket
import socketserver
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

MCP_SERVER = Path(__file__).parent / "servers" / "mcp_server.py"
MCP_MANGLED = Path(__file__).parent / "servers" / "mcp_mangled.py"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def dropping(port: int = 0) -> Iterator[int]:
    """A port on 127.0.0.1 where a connection is never made, as on a host that drops what is
    sent to it: a listener whose queue (``listen(0)``) one connection fills, so the kernel drops
    every later attempt and a connect hangs until a timeout gives up on it. On ``port`` when
    given (where a server was stopped)."""
    with socket.socket() as deaf:
        deaf.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        deaf.bind(("127.0.0.1", port))
        deaf.listen(0)
        port = deaf.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port)):  # the queue is full now
            yield port


def serve_in_thread(server: socketserver.BaseServer) -> Callable[[], None]:
    """Serve ``server`` (an HTTP server of the test's own, in-process) from a daemon thread;
    what it returns stops it and closes its socket. Polled every 10 ms: at ``serve_forever``'s
    default, 0.5 s, every stop waited up to that long, and tests stop one each."""
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01},
                     daemon=True).start()

    def stop() -> None:
        server.shutdown()
        server.server_close()

    return stop


def wait_listening(proc: subprocess.Popen[bytes], port: int, what: str) -> None:
    """Until ``proc`` accepts connections on ``port``; its stderr in the error otherwise."""
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                assert proc.stderr is not None
                raise RuntimeError(f"{what} did not start: "
                                   + proc.stderr.read().decode()) from None
            time.sleep(0.05)


def start_server(script: Path, *args: str, port: int, what: str) -> subprocess.Popen[bytes]:
    """``python SCRIPT ARGS``, a test server of the tests' own (tests/servers/), once it accepts
    connections on ``port``; killed, and its stderr in the error, if it never does. The caller
    kills it."""
    proc = subprocess.Popen([sys.executable, str(script), *args], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_listening(proc, port, what)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    return proc


@contextmanager
def mcp_http_server(*extra: str, port: int | None = None) -> Iterator[str]:
    """The test MCP server (tests/servers/mcp_server.py) over streamable HTTP: its URL. On
    ``port`` when given, so a server stopped can be started again where it was."""
    port = free_port() if port is None else port
    proc = start_server(MCP_SERVER, "--http", str(port), *extra, port=port,
                        what="the MCP HTTP test server")
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.kill()
        proc.wait()


@contextmanager
def horismos_serving_http(
    cwd: Path, *args: str, env: Mapping[str, str] | None = None
) -> Iterator[str]:
    """``horismos serve ARGS --transport http`` in ``cwd`` on a free port, forked as the tests
    run every command (:mod:`forked`): its MCP URL once it listens; stopped (SIGTERM, as an
    operator stops it) at the end."""
    from forked import Popen

    port = free_port()
    proc = Popen(
        [sys.executable, "-m", "horismos", "serve", *args, "--transport", "http",
         "--port", str(port)],
        cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE)
    try:
        wait_listening(proc, port, "horismos serve")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.communicate(timeout=60)
