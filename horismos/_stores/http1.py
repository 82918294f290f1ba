"""One kept-alive HTTP/1.1 connection, as plain as the SPARQL protocol needs.

A step on ``sparql:URL`` sends one query and one or two updates, so what an HTTP client
spends per request is paid several times a step. httpx's transport spent ~300 µs of CPU a
request (its request and response models, h11's state machine, the request's head and body
sent in two writes, which the server then reads in two); writing the request in one
``sendall`` and reading the response from a buffered file is ~20 µs, and the server spends
less too. The standard library's ``http.client`` was measured too, against ``oxigraph serve``
on this machine: 150-190 µs of client CPU a request (its header parsing goes through
``email.parser``), against 40-60 µs here — at three requests a step, the difference is a
tenth of the step budget the 400 steps/s target leaves. What is kept: one connection (threads
sharing a store take turns on it), reused while the server keeps it open (a connection the
server closed while idle is noticed before it is used, as httpx does, and opened again), the
same timeouts (5 s to connect, 120 s to wait on a read or a write), TLS with httpx's
certificate trust for ``https://``, Basic credentials from the URL's user info, request
bodies streamed in chunks, and responses with a ``Content-Length``, chunked or ended by the
server closing the connection. Nothing is retried: a request that fails is reported, never
sent twice (an update must not land twice).
"""

from __future__ import annotations

import base64
import select
import socket
import ssl
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import BinaryIO
from urllib.parse import unquote, urlsplit

from .._tls import verifying_context
from .._unreachable import why_unreachable

__all__ = ["Connection", "HttpError", "Response"]

CONNECT_TIMEOUT = 5.0
TIMEOUT = 120.0
LOAD_TIMEOUT = 3600.0
"""How long a request that loads a whole file waits on the server: it answers once the file
is in, and 2.3 million quads took ``oxigraph serve`` more than the 120 s of any other request
(the load was reported unreachable, its quads stored, the world's digest never kept)."""
_MAX_LINE = 65_536


class HttpError(Exception):
    """The server could not be reached, or the connection broke during a request."""


@dataclass(frozen=True, slots=True)
class Response:
    """A response's status and its whole body."""

    status: int
    body: bytes


class Connection:
    """Requests to one server (``http://`` or ``https://``), one at a time, on one connection."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise HttpError(f"not an http:// or https:// URL: {parts.scheme}://…")
        self._tls = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port or (443 if self._tls else 80)
        self.base = parts.path.rstrip("/")
        """The URL's path: each request's target is this followed by its own path."""
        default_port = self._port == (443 if self._tls else 80)
        host = f"[{self._host}]" if ":" in self._host else self._host
        head = f"Host: {host if default_port else f'{host}:{self._port}'}\r\n"
        if parts.username is not None or parts.password is not None:
            pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
            head += f"Authorization: Basic {base64.b64encode(pair.encode()).decode()}\r\n"
        self._head = head
        self._sock: socket.socket | None = None
        self._file: BinaryIO | None = None
        self._lock = threading.Lock()  # threads sharing a store take turns, never interleave

    def request(
        self,
        method: str,
        target: str,
        body: bytes | Iterator[bytes] | None = None,
        headers: Mapping[str, str] | None = None,
        *,
        timeout: float | None = None,
    ) -> Response:
        """Send one request and read its whole response; :class:`HttpError` if the server
        cannot be reached or the exchange breaks (the connection is then dropped).
        ``timeout``: seconds to wait on each read or write of this one request, in place of
        :data:`TIMEOUT`."""
        head = f"{method} {self.base}{target} HTTP/1.1\r\n{self._head}"
        if headers:
            head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        if isinstance(body, bytes):
            head += f"Content-Length: {len(body)}\r\n\r\n"
        elif body is None:
            head += "Content-Length: 0\r\n\r\n"
        else:
            head += "Transfer-Encoding: chunked\r\n\r\n"
        with self._lock:
            return self._exchange(method, head, body, timeout)

    def _exchange(
        self,
        method: str,
        head: str,
        body: bytes | Iterator[bytes] | None,
        timeout: float | None = None,
    ) -> Response:
        sock, file = self._connected()
        if timeout is not None:
            sock.settimeout(timeout)
        try:
            if isinstance(body, bytes):
                sock.sendall(head.encode("latin-1") + body)
            else:
                sock.sendall(head.encode("latin-1"))
                if body is not None:
                    for chunk in body:
                        if chunk:
                            sock.sendall(b"%x\r\n%b\r\n" % (len(chunk), chunk))
                    sock.sendall(b"0\r\n\r\n")
            return self._response(file, method)
        except (OSError, ValueError) as e:  # a timeout is an OSError too
            self.close()
            raise HttpError(str(e) or type(e).__name__) from None
        except BaseException:  # HttpError, or a streamed body that failed half-way sent
            self.close()
            raise
        finally:
            if timeout is not None and self._sock is sock:
                sock.settimeout(TIMEOUT)  # the kept connection's next request: the usual wait

    def _connected(self) -> tuple[socket.socket, BinaryIO]:
        """The open connection, or a new one if there is none or the server closed it."""
        if self._sock is not None and self._file is not None:
            if not _readable(self._sock):
                return self._sock, self._file
            self.close()  # an idle kept-alive connection only turns readable when it closes
        try:
            sock = socket.create_connection((self._host, self._port), timeout=CONNECT_TIMEOUT)
            if self._tls:
                sock = verifying_context().wrap_socket(sock, server_hostname=self._host)
        except OSError as e:
            raise HttpError(why_unreachable(e)) from None
        sock.settimeout(TIMEOUT)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock, self._file = sock, sock.makefile("rb")
        return sock, self._file

    def _response(self, file: BinaryIO, method: str) -> Response:
        while True:
            status_line = file.readline(_MAX_LINE)
            if not status_line:
                raise HttpError("the server closed the connection without answering")
            parts = status_line.split(None, 2)
            if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
                raise HttpError(f"not an HTTP response: {status_line[:80]!r}")
            status = int(parts[1])
            length: int | None = None
            chunked = close = False
            while (line := file.readline(_MAX_LINE)) not in (b"\r\n", b"\n"):
                if not line:
                    raise HttpError("the server closed the connection mid-response")
                name, _, value = line.partition(b":")
                name = name.strip().lower()
                if name == b"content-length":
                    length = int(value)
                elif name == b"transfer-encoding":
                    chunked = b"chunked" in value.lower()
                elif name == b"connection":
                    close = b"close" in value.lower()
            if status >= 200:
                break  # a 1xx answer is followed by the real one
        if method == "HEAD" or status in (204, 304):
            body = b""
        elif chunked:
            body = _chunks(file)
        elif length is not None:
            body = file.read(length)
            if len(body) < length:
                raise HttpError("the server closed the connection mid-response")
        else:
            body, close = file.read(), True
        if close or parts[0] == b"HTTP/1.0":
            self.close()
        return Response(status, body)

    def close(self) -> None:
        """Close the connection; the next request opens another."""
        if self._file is not None:
            self._file.close()
        if self._sock is not None:
            self._sock.close()
        self._sock = self._file = None


def _chunks(file: BinaryIO) -> bytes:
    out: list[bytes] = []
    while True:
        line = file.readline(_MAX_LINE)
        if not line:
            raise HttpError("the server closed the connection mid-response")
        size = int(line.split(b";", 1)[0], 16)
        if size == 0:
            while file.readline(_MAX_LINE) not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return b"".join(out)
        chunk = file.read(size)
        if len(chunk) < size:
            raise HttpError("the server closed the connection mid-response")
        out.append(chunk)
        file.readline(_MAX_LINE)


def _readable(sock: socket.socket) -> bool:
    if isinstance(sock, ssl.SSLSocket) and sock.pending():
        return True
    poll = select.poll()  # not select.select: it fails on descriptors above 1023
    poll.register(sock, select.POLLIN)
    return bool(poll.poll(0))
