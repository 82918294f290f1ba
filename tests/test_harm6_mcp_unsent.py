"""Where an MCP call over streamable HTTP is decided *never sent*, checked against the SDK's
real client and a real server, with a forwarding TCP proxy on 127.0.0.1 in between that can
stop accepting (a server slow to accept: each new connection hangs in its queue) and records
what every connection carried.

A call whose ``horis:timeout`` runs out while its POST is still connecting is taken for one
that never left (not held in doubt, so the next call on the subject is made). That holds only
if the POST, should its connection be accepted later, is stopped before its first byte: the
SDK sends it from a task of its own, which goes on after its caller has given up. Here the
proxy accepts the hanging connection after the timeout, and the tool's ledger, and the bytes
the connection carried, say whether the call reached the server.
"""

from __future__ import annotations

import contextlib
import select
import socket
import struct
import subprocess
import threading
import time

import pytest
from listening import MCP_SERVER, free_port, start_server
from mcp_clinic_files import CLINIC_HEAD, ONE_PATIENT, RECORD_TOOL
from rdflib import Namespace

from horismos import Agent, OutcomeUnknown, ToolTimeout, World

EX = Namespace("http://example.org/mcp#")
RECORDED = "record http://example.org/mcp#p1"
WHAT = "the MCP HTTP test server"

DEFS = CLINIC_HEAD + """\
:clinic a horis:McpServer ; horis:url "http://127.0.0.1:{port}/mcp" .

""" + RECORD_TOOL + """\
    horis:binding "mcp://clinic/record" ; horis:timeout "2s" .
:t.pause a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:binding "python:pause" ; horis:idempotent true ; horis:timeout "30s" .
:t.resume a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:binding "python:resume" ; horis:idempotent true ; horis:timeout "30s" .

:Flow a horis:Workflow ; horis:focusType :Patient ; horis:start :Record .
:Record a horis:ActionStep ; horis:tool :t.record ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] ; horis:next :Pause .
:Pause a horis:ActionStep ; horis:tool :t.pause ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] ; horis:next :Again .
:Again a horis:ActionStep ; horis:tool :t.record ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] ;
    horis:next :Resume ; horis:onError :Resume .
:Resume a horis:ActionStep ; horis:tool :t.resume ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""


class Proxy:
    """Forwards 127.0.0.1:``port`` to the server's port. :meth:`pause` drops every
    connection and stops accepting, its one-place queue filled, so a new connection hangs
    unaccepted; :meth:`resume` accepts again. ``carried``: the bytes each client connection
    sent, in order of acceptance. ``reset_calls``: a connection that carries a ``tools/call``
    is reset once the server's answer to it starts, which the client never sees."""

    reset_calls = False

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(0)
        self.port = self.listener.getsockname()[1]
        self.carried: list[bytearray] = []
        self.open: list[socket.socket] = []
        self.paused = threading.Event()
        self.closed = 0
        self._filler: socket.socket | None = None
        self._done = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def pause(self) -> None:
        self.paused.set()
        time.sleep(0.2)  # the accepting thread has seen it
        for conn in list(self.open):
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        self._filler = socket.create_connection(("127.0.0.1", self.port))  # the queue, full

    def resume(self) -> int:
        """Accept again; how many connections were accepted before."""
        before = len(self.carried)
        if self._filler is not None:
            self._filler.close()
        self.paused.clear()
        return before

    def close(self) -> None:
        self._done.set()
        self.listener.close()

    def _accept(self) -> None:
        while not self._done.is_set():
            if self.paused.is_set():
                time.sleep(0.02)
                continue
            try:
                ready, _, _ = select.select([self.listener], [], [], 0.05)
                if not ready:
                    continue
                conn, _ = self.listener.accept()
            except OSError:
                return
            carried = bytearray()
            self.carried.append(carried)
            self.open.append(conn)
            threading.Thread(target=self._pipe, args=(conn, carried), daemon=True).start()

    def _pipe(self, conn: socket.socket, carried: bytearray) -> None:
        try:
            up = socket.create_connection(("127.0.0.1", self.upstream))
        except OSError:
            conn.close()
            self.closed += 1
            return
        try:
            while True:
                ready, _, _ = select.select([conn, up], [], [], 0.1)
                for s in ready:
                    data = s.recv(65536)
                    if not data:
                        return
                    if s is conn:
                        carried.extend(data)
                        up.sendall(data)
                    elif self.reset_calls and b'"tools/call"' in carried:
                        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                        struct.pack("ii", 1, 0))
                        return  # closed with a reset: the answer never reaches the client
                    else:
                        conn.sendall(data)
        except OSError:
            return
        finally:
            conn.close()
            up.close()
            self.closed += 1


@pytest.mark.parametrize("legacy", [False, True], ids=["2026", "before-2026"])
def test_a_post_given_up_while_connecting_never_reaches_the_server(tmp_path, legacy) -> None:
    """``t.record`` (not idempotent) is called once, then the proxy stops accepting and the
    second call's 2 s run out while its POST waits in the queue: not sent, not held in doubt.
    The proxy then accepts the connection the SDK's task was still making: it carries no
    ``tools/call`` (stopped before its first byte, or never made), the server records one
    call, and with the proxy accepting a ``catalog.call`` on the patient is made — once."""
    port = free_port()
    ledger = tmp_path / "ledger.txt"
    proc = start_server(MCP_SERVER, "--http", str(port), "--ledger", str(ledger),
                        *(["--legacy"] if legacy else []), port=port, what=WHAT)
    proxy: Proxy | None = None
    try:
        proxy = Proxy(port)
        late: list[int] = []

        def pause(patient: object) -> None:
            assert proxy is not None
            proxy.pause()

        def resume(patient: object) -> None:
            assert proxy is not None
            late.append(proxy.resume())
            deadline = time.monotonic() + 15  # past the SYN retries that reach it
            while time.monotonic() < deadline and not (
                    len(proxy.carried) > late[0] + legacy and proxy.closed >= len(proxy.carried)):
                time.sleep(0.1)

        (tmp_path / "defs.ttl").write_text(DEFS.format(port=proxy.port))
        (tmp_path / "world.ttl").write_text(ONE_PATIENT)
        agent = Agent.from_files(tmp_path / "defs.ttl",
                                 tools={"pause": pause, "resume": resume})
        world = World.from_files(tmp_path / "world.ttl")
        run = agent.run(world, focus=EX.p1)
        steps = run.instances[0].steps
        again = steps[2]
        assert again.status == "timed_out", steps
        assert isinstance(again.error, ToolTimeout), again.error
        assert not isinstance(again.error, OutcomeUnknown), again.error
        assert "was not sent within 2s" in str(again.error), again.error
        assert steps[3].status == "completed", steps
        after = [bytes(c) for c in proxy.carried[late[0]:]]
        assert not any(b'"tools/call"' in c for c in after), after
        assert ledger.read_text().splitlines().count(RECORDED) == 1

        called = agent.catalog.call("t.record", {"patient": EX.p1}, world)
        assert called.status == "completed", called
        assert ledger.read_text().splitlines().count(RECORDED) == 2
    finally:
        if proxy is not None:
            proxy.close()
        proc.kill()
        proc.wait()


def test_a_call_redirected_by_a_server_that_then_went_away_was_sent(tmp_path) -> None:
    """The server acts on the call and answers it 307 to its own URL, no longer listening:
    the SDK follows the redirect (same origin) and that second POST is refused a connection.
    A refused connection is what makes a call "never sent" (Unreachable, retried by
    ``horis:retries``, not held in doubt), but this one's first POST was read and acted on:
    it must stay a call sent with no answer — held in doubt, not retried, and the next call on
    the patient refused with the server back. (It holds because the redirected request's body
    is a stream the client does not show as content, so it is not recognised as a
    ``tools/call`` and its refusal ends the transport: a lost connection, not "unsent".)"""
    port = free_port()
    ledger = tmp_path / "ledger.txt"
    (tmp_path / "defs.ttl").write_text(
        DEFS.format(port=port).replace('horis:timeout "2s" .', 'horis:timeout "10s" ; '
                                       "horis:retries 1 .", 1))
    (tmp_path / "world.ttl").write_text(ONE_PATIENT)
    agent = Agent.from_files(tmp_path / "defs.ttl")
    world = World.from_files(tmp_path / "world.ttl")

    def serving(*extra: str) -> subprocess.Popen[bytes]:
        return start_server(MCP_SERVER, "--http", str(port), "--ledger", str(ledger), *extra,
                            port=port, what=WHAT)

    proc = serving("--redirect-calls")
    try:
        first = agent.catalog.call("t.record", {"patient": EX.p1}, world)
    finally:
        proc.kill()
        proc.wait()
    assert ledger.read_text().splitlines().count(RECORDED) == 1
    assert first.error is not None, first
    assert first.error["kind"] == "outcome_unknown", first.error
    assert "nothing was sent" not in first.error["message"], first.error
    proc = serving()
    try:
        again = agent.catalog.call("t.record", {"patient": EX.p1}, world)
    finally:
        proc.kill()
        proc.wait()
    assert again.status == "refused" and again.error is not None, again
    assert again.error["kind"] == "outcome_unknown", again.error
    assert ledger.read_text().splitlines().count(RECORDED) == 1


def test_a_call_whose_connection_is_reset_after_it_reached_the_server_is_in_doubt(
        tmp_path) -> None:
    """The proxy lets the call through to the server, which acts, and resets the client's
    connection as the answer starts back: the call reached the tool, so though
    ``horis:retries`` allows 2 it is made once, held in doubt, and the next call refused."""
    port = free_port()
    ledger = tmp_path / "ledger.txt"
    proc = start_server(MCP_SERVER, "--http", str(port), "--ledger", str(ledger), port=port,
                        what=WHAT)
    proxy: Proxy | None = None
    try:
        proxy = Proxy(port)
        (tmp_path / "defs.ttl").write_text(DEFS.format(port=proxy.port).replace(
            'horis:timeout "2s" .', 'horis:timeout "10s" ; horis:retries 2 .', 1))
        (tmp_path / "world.ttl").write_text(ONE_PATIENT)
        agent = Agent.from_files(tmp_path / "defs.ttl")
        world = World.from_files(tmp_path / "world.ttl")
        proxy.reset_calls = True
        first = agent.catalog.call("t.record", {"patient": EX.p1}, world)
        assert first.error is not None, first
        assert first.error["kind"] == "outcome_unknown", first.error
        assert "nothing was sent" not in first.error["message"], first.error
        proxy.reset_calls = False
        again = agent.catalog.call("t.record", {"patient": EX.p1}, world)
        assert again.status == "refused" and again.error is not None, again
        assert again.error["kind"] == "outcome_unknown", again.error
        assert ledger.read_text().splitlines().count(RECORDED) == 1
    finally:
        if proxy is not None:
            proxy.close()
        proc.kill()
        proc.wait()
