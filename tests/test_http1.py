"""The ``sparql:URL`` store's HTTP/1.1 connection against a scripted server: the response
forms a server may use, a kept-alive connection the server closed, credentials, and errors."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator

import pytest

from horismos._stores.http1 import Connection, HttpError

Answer = Callable[[bytes], bytes | None]  # the request received -> the bytes sent back


class Scripted:
    """A loopback server answering each request with the next answer, on whatever
    connection it arrives; ``None`` closes that connection instead of answering, and so does
    an answer with no length."""

    def __init__(self, answers: list[Answer]) -> None:
        self.answers = answers
        self.requests: list[bytes] = []
        self.connections = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while self.answers:
            conn, _ = self.listener.accept()
            self.connections += 1
            with conn:
                while self.answers:
                    request = _read_request(conn)
                    if request is None:
                        break
                    self.requests.append(request)
                    answer = self.answers.pop(0)(request)
                    if answer is None:
                        break
                    conn.sendall(answer)
                    if b"Content-Length" not in answer and b"chunked" not in answer:
                        break  # a body that ends where the connection does


def _read_request(conn: socket.socket) -> bytes | None:
    data = b""
    while b"\r\n\r\n" not in data:
        more = conn.recv(65536)
        if not more:
            return None
        data += more
    head, _, body = data.partition(b"\r\n\r\n")
    chunked = b"transfer-encoding: chunked" in head.lower()
    length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    while not body.endswith(b"0\r\n\r\n") if chunked else len(body) < length:
        more = conn.recv(65536)
        if not more:
            return None  # the client gave up on this request
        body += more
    return head + b"\r\n\r\n" + body


def ok(body: bytes, *headers: str) -> Answer:
    extra = "".join(h + "\r\n" for h in headers)
    return lambda _: (f"HTTP/1.1 200 OK\r\n{extra}Content-Length: {len(body)}\r\n\r\n".encode()
                      + body)


@pytest.fixture
def serve() -> Iterator[Callable[[list[Answer]], Scripted]]:
    servers: list[Scripted] = []

    def start(answers: list[Answer]) -> Scripted:
        servers.append(Scripted(answers))
        return servers[-1]

    yield start
    for s in servers:
        s.listener.close()


def test_one_connection_serves_many_requests_with_each_body_form(serve) -> None:
    chunked = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
               b"5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nTrailer: x\r\n\r\n")
    server = serve([ok(b"one"), lambda _: chunked, ok(b"", "X-Empty: 1"),
                    lambda _: b"HTTP/1.1 100 Continue\r\n\r\n"
                              b"HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok"])
    conn = Connection(server.url + "/base/")
    assert conn.request("POST", "/query", b"ASK {}", {"Accept": "x/y"}).body == b"one"
    assert conn.request("GET", "/store").body == b"hello, world"
    assert conn.request("POST", "/update", b"").body == b""
    response = conn.request("POST", "/update", iter([b"abc", b"", b"de"]))
    assert (response.status, response.body) == (201, b"ok")
    conn.close()
    assert server.connections == 1
    first, _, _, streamed = server.requests
    assert first.startswith(b"POST /base/query HTTP/1.1\r\n")
    assert b"\r\nAccept: x/y\r\n" in first and first.endswith(b"\r\n\r\nASK {}")
    assert streamed.endswith(b"\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n")


def test_a_connection_the_server_closed_is_opened_again(serve) -> None:
    server = serve([ok(b"a", "Connection: close"), ok(b"b"),
                    lambda _: b"HTTP/1.1 200 OK\r\n\r\nuntil the end", ok(b"d")])
    conn = Connection(server.url)
    assert [conn.request("GET", "/x").body for _ in range(4)] == [b"a", b"b", b"until the end",
                                                                 b"d"]
    assert server.connections == 3


def test_credentials_in_the_url_are_sent_as_basic_auth(serve) -> None:
    server = serve([ok(b"")])
    Connection(server.url.replace("://", "://ops:p%40ss@")).request("GET", "/x")
    assert b"\r\nAuthorization: Basic b3BzOnBAc3M=\r\n" in server.requests[0]  # ops:p@ss


def test_a_broken_exchange_is_an_error_and_nothing_is_sent_twice(serve) -> None:
    server = serve([lambda _: None, ok(b"after")])
    conn = Connection(server.url)
    with pytest.raises(HttpError, match="closed the connection"):
        conn.request("POST", "/update", b"INSERT DATA {}")
    assert len(server.requests) == 1
    assert conn.request("GET", "/x").body == b"after"  # a fresh connection next time
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(HttpError):
        Connection(f"http://127.0.0.1:{port}").request("GET", "/x")


def test_a_streamed_body_that_fails_half_way_drops_the_connection(serve) -> None:
    server = serve([ok(b"fresh")])

    def body() -> Iterator[bytes]:
        yield b"half"
        raise RuntimeError("the file broke")

    conn = Connection(server.url)
    with pytest.raises(RuntimeError, match="the file broke"):
        conn.request("POST", "/store", body())
    assert conn.request("GET", "/x").body == b"fresh"  # not read as the rest of that body
    assert server.requests[0].startswith(b"GET /x")


def test_a_request_given_a_longer_wait_outlasts_the_usual_timeout(serve, monkeypatch) -> None:
    """A load of a whole file is answered once the server has it all in: 2.3 million quads
    took ``oxigraph serve`` longer than the usual wait, and the load was reported unreachable
    though its quads were stored. A request may wait longer; the next one waits as usual."""
    import time

    from horismos._stores import http1

    monkeypatch.setattr(http1, "TIMEOUT", 0.3)

    def slow(body: bytes) -> Answer:
        def answer(_: bytes) -> bytes:
            time.sleep(0.8)
            return ok(body)(b"")  # type: ignore[return-value]
        return answer

    server = serve([slow(b"loaded"), slow(b"late")])
    conn = Connection(server.url)
    assert conn.request("POST", "/store", iter([b"<a> <b> <c> ."]), timeout=5.0).body == (
        b"loaded")
    with pytest.raises(HttpError, match="timed out"):
        conn.request("POST", "/query", b"ASK {}")
