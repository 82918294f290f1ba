"""A JSON-over-HTTP server on 127.0.0.1 for the HTTP binding tests and the benchmark.

Each path gives one kind of answer: good, slow, 500, non-JSON, oversized (with and without a
Content-Length), out of contract, a redirect, a JSON array. Every request is kept (body and
headers) so a test sees exactly what arrived.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["Received", "serve"]

BIG = 2 * 1024 * 1024


class Received:
    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str], Any]] = []

    def last(self, path: str) -> tuple[dict[str, str], Any]:
        return next((h, b) for p, h, b in reversed(self.requests) if p == path)


def _local(iri: Any) -> str:
    return str(iri).rsplit("#", 1)[-1]


def _answers() -> dict[str, Callable[[Any], tuple[int, str, bytes, dict[str, str]]]]:
    def js(data: Any, status: int = 200) -> tuple[int, str, bytes, dict[str, str]]:
        return status, "application/json", json.dumps(data).encode(), {}

    def slow(body: Any) -> tuple[int, str, bytes, dict[str, str]]:
        time.sleep(2)
        return js({"queueRef": "H-late"})

    return {
        "/good": lambda b: js({"queueRef": f"H-{_local(b.get('patient'))}"}),
        "/echo": lambda b: js({"received": json.dumps(b, sort_keys=True)}),
        "/noop": lambda b: js({}),
        "/slow": slow,
        "/error": lambda b: (500, "text/plain", b"database on fire", {}),
        "/html": lambda b: (200, "text/html", b"<html><body>queued</body></html>", {}),
        "/big": lambda b: (200, "application/json",
                           b'{"queueRef": "' + b"x" * BIG + b'"}', {}),
        "/big-chunked": lambda b: (200, "application/json",
                                   b'{"queueRef": "' + b"x" * BIG + b'"}', {"chunked": "1"}),
        "/extra": lambda b: js({"queueRef": "H-extra", "internal": "not in the contract"}),
        "/redirect": lambda b: (302, "text/plain", b"", {"Location": "/good"}),
        "/list": lambda b: js([1, 2]),
        # it acts, starts a good answer and then drops the connection, or stalls past the
        # tool's timeout: the caller never learns what it did
        "/cut": lambda b: (200, "application/json", b'{"queueRef": "H-cut"}', {"cut": "1"}),
        "/stall": lambda b: (200, "application/json", b'{"queueRef": "H-stall"}',
                             {"stall": "1"}),
        # one bad value for one patient (p1), a good answer for every other
        "/bad-iri": lambda b: js({"ward": "http://example.org/clinic#a b>"
                                  if _local(b.get("patient")) == "p1"
                                  else "http://example.org/clinic#w1"}),
        "/surrogate": lambda b: (200, "application/json",
                                 b'{"ref": "\\ud800"}' if _local(b.get("patient")) == "p1"
                                 else b'{"ref": "R-2"}', {}),
    }


def serve() -> tuple[ThreadingHTTPServer, str, Received]:
    """Start the server in a daemon thread; returns it, its base URL and what it received."""
    received = Received()
    answers = _answers()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True   # headers and body go out at once, not 40 ms apart

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode("utf-8", "replace")
            received.requests.append((self.path, dict(self.headers.items()), body))
            answer = answers.get(self.path)
            if answer is None:
                status, kind, data, extra = 404, "text/plain", b"no such path", {}
            else:
                status, kind, data, extra = answer(body)
            chunked = extra.pop("chunked", None)
            cut, stall = extra.pop("cut", None), extra.pop("stall", None)
            self.send_response(status)
            self.send_header("Content-Type", kind)
            for k, v in extra.items():
                self.send_header(k, v)
            if chunked:
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    for i in range(0, len(data), 65536):
                        part = data[i:i + 65536]
                        self.wfile.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
                    self.wfile.write(b"0\r\n\r\n")
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the client stopped reading: as intended
                return
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if cut or stall:
                self.wfile.write(data[:5])
                self.wfile.flush()
                if stall:
                    time.sleep(2)
                self.close_connection = True
                return
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    # polled every 10 ms: a shutdown waited up to 0.5 s at serve_forever's default
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01},
                     daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}", received
