"""An HTTP endpoint that reads a call's whole body and then closes the connection, or resets
it, without a byte of answer: the call reached it and may have acted, so a tool that is not
idempotent is held in doubt — not retried by ``horis:retries``, and the next call on the
subject refused — never taken for one that was not sent. A real socket server on 127.0.0.1
counts the bodies it read (the side effect).
"""

from __future__ import annotations

import socket
import struct
import threading
from pathlib import Path

import pytest

from horismos import Agent, World

DEFS = """\
@prefix :      <http://example.org/clinic#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .
:Patient a rdfs:Class .
:t.charge a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:subject "patient" ;
        horis:asserts [ horis:property :received ; horis:type xsd:string ] ] ;
    horis:binding "http://127.0.0.1:{port}/charge" ; horis:retries 2 ; horis:timeout "5s" .
"""


def hanging_up(reset: bool) -> tuple[int, list[bytes]]:
    """A server that reads each request whole, then closes (``reset``: resets) the
    connection unanswered; its port, and the bodies it read."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    bodies: list[bytes] = []

    def serve() -> None:
        while True:
            conn, _ = listener.accept()
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, body = data.split(b"\r\n\r\n", 1)
            length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length:"))
            while len(body) < length:
                body += conn.recv(65536)
            bodies.append(body)
            if reset:
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    return listener.getsockname()[1], bodies


@pytest.mark.parametrize("reset", [False, True], ids=["closed", "reset"])
def test_a_request_read_and_left_unanswered_is_held_in_doubt(tmp_path: Path, reset) -> None:
    port, bodies = hanging_up(reset)
    (tmp_path / "defs.ttl").write_text(DEFS.format(port=port))
    (tmp_path / "world.ttl").write_text(
        "@prefix : <http://example.org/clinic#> .\n:p1 a :Patient .\n")
    agent = Agent.from_files(tmp_path / "defs.ttl")
    world = World.from_files(tmp_path / "world.ttl")
    first = agent.catalog.call("t.charge", {"patient": ":p1"}, world)
    assert first.status == "failed" and first.error is not None, first
    assert first.error["kind"] == "outcome_unknown", first.error
    assert "nothing was sent" not in first.error["message"]
    again = agent.catalog.call("t.charge", {"patient": ":p1"}, world)
    assert again.status == "refused" and again.error is not None, again
    assert again.error["kind"] == "outcome_unknown", again.error
    assert len(bodies) == 1, bodies  # read once: never retried, never called again
