"""An HTTP tool's answer is the answer to its own request, whatever the server sends.

A server that answers one request twice (a proxy replaying a response, a handler that writes
its reply twice) left the extra reply waiting on a kept-alive connection; the next call over
it was handed that reply as its own. Its own answer, a refusal say, was never read, and the
world recorded a payment that was never made. Each call now gets a connection of its own.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from rdflib import Namespace
from shop_files import CHARGE_TOOL, SHOP_HEAD, TWO_ORDERS

from horismos import Agent, World

EX = Namespace("http://example.org/shop#")

DEFS = SHOP_HEAD + CHARGE_TOOL + """\
    horis:binding "URL" ;
    horis:timeout "5s" ;
    horis:sideEffect horis:ExternalCommit ;
    horis:idempotent false .
:Pay a horis:Workflow ; horis:focusType :Order ; horis:start :Charge .
:Charge a horis:ActionStep ; horis:tool :t.charge ;
    horis:requires "FILTER NOT EXISTS { ?this :paymentRef ?r }" ;
    horis:bind [ horis:arg "order" ; horis:var "this" ] .
"""

WORLD = TWO_ORDERS


def _reply(status: str, body: dict[str, str]) -> bytes:
    data = json.dumps(body).encode()
    head = f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {len(data)}"
    return head.encode() + b"\r\n\r\n" + data


class TwiceServer:
    """A real HTTP/1.1 server on 127.0.0.1 that answers the order o1 twice, in one write,
    and declines o2 (402)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/charge"
        self.received: list[str] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        buf = b""
        with conn:
            while True:
                data = conn.recv(65536)
                if not data:
                    return
                buf += data
                while b"\r\n\r\n" in buf:
                    head, rest = buf.split(b"\r\n\r\n", 1)
                    length = next(
                        int(line.split(b":", 1)[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length:")
                    )
                    if len(rest) < length:
                        break
                    body, buf = rest[:length], rest[length:]
                    order = json.loads(body)["order"].rsplit("#", 1)[-1]
                    self.received.append(order)
                    if order == "o1":
                        conn.sendall(
                            _reply("200 OK", {"paymentRef": "P-o1"})
                            + _reply("200 OK", {"paymentRef": "P-o1-again"})
                        )
                    else:
                        conn.sendall(_reply("402 Payment Required", {"error": "declined"}))

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def twice() -> Iterator[TwiceServer]:
    server = TwiceServer()
    yield server
    server.close()


def test_a_reply_sent_twice_is_not_the_next_calls_answer(tmp_path: Path, twice) -> None:
    (tmp_path / "defs.ttl").write_text(DEFS.replace("URL", twice.url), encoding="utf-8")
    (tmp_path / "world.ttl").write_text(WORLD, encoding="utf-8")
    agent = Agent.from_files(tmp_path / "defs.ttl")
    world = World.from_files(tmp_path / "world.ttl")

    run = agent.run(world, all=True, allow=["ReadOnly", "HostStateWrite", "ExternalCommit"])

    by_focus = {str(i.focus): i for i in run.instances}
    assert by_focus[str(EX.o1)].status == "completed"
    # o2's own answer was a refusal: it is not recorded as paid with o1's extra reply
    assert by_focus[str(EX.o2)].status == "failed", by_focus[str(EX.o2)].steps
    assert "402" in str(by_focus[str(EX.o2)].error)
    refs = {str(s): str(o) for s, o in world.graph.subject_objects(EX.paymentRef)}
    assert refs == {str(EX.o1): "P-o1"}
    assert twice.received == ["o1", "o2"]  # each order sent once
