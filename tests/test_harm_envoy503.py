"""Envoy's 503 for a connection reset after the request was passed on is no answer of the tool's.

Envoy (and so Istio and the meshes built on it) answers a 503 of its own, ``server: envoy``,
``text/plain``, ``upstream connect error or disconnect/reset before headers. reset reason:
connection termination``, when the server behind it closed or reset the connection after the
request was sent to it: a charge whose server crashed mid-call may have been made. Every 503
was read as the service's own refusal, so the call was believed not made and each rerun
charged again (an HTTP tool, an MCP server over HTTP, an adapter's create). Such a 503 is now
no answer, as a 502 or 504 is: a tool that is not idempotent is held in doubt, an idempotent
one is tried again. Envoy's 503s for a request it never passed on (``no healthy upstream``, a
connection that could not be made, an open circuit breaker) and a service's own 503 stay
refusals. Real servers on 127.0.0.1 standing for Envoy: each acts (a line in a ledger), then
answers as Envoy's local reply does.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from gateway_shop import MCP_DEFS, shop_agent, shop_world
from listening import MCP_MANGLED, free_port, serve_in_thread, start_server
from pharmacy_ehr import ALLOW, posts, recording
from servers.fhir_server import FhirServer

from horismos import Agent, OutcomeUnknown, ToolError, World

RESET = b"upstream connect error or disconnect/reset before headers. reset reason: "
ACTED = {  # Envoy's 503s whose request was or may have been passed on to the tool
    "connection-termination": RESET + b"connection termination",
    "remote-reset": RESET + b"remote reset",
    "protocol-error": RESET + b"protocol error",
    "retried": b"upstream connect error or disconnect/reset before headers. retried and the "
               b"latest reset reason: remote connection failure, transport failure reason: "
               b"delayed connect error: 111",
    "no-reason": b"upstream connect error or disconnect/reset before headers",
}
REFUSED = {  # a 503 whose request was never passed on, or the service's own
    "no-healthy-upstream": (b"no healthy upstream", "text/plain", True),
    "connection-failure": (RESET + b"connection failure, transport failure reason: delayed "
                           b"connect error: 111", "text/plain", True),
    "overflow": (RESET + b"overflow", "text/plain", True),
    "connection-timeout": (RESET + b"connection timeout", "text/plain", True),
    "refused-stream": (RESET + b"remote refused stream reset", "text/plain", True),
    "service-503": (b'{"error": "the bank is closed for maintenance"}', "application/json",
                    False),
}


class Envoy:
    """A real HTTP server on 127.0.0.1 standing for Envoy and the tool behind it: each order is
    charged (a line in ``ledger``: the tool acted), then answered with the next of ``answers``
    (the last again once they run out), a ``(body, content type, from Envoy)``; a body of None
    is the tool's own 200 with a reference."""

    def __init__(self, answers: list[tuple[bytes | None, str, bool]], ledger: Path) -> None:
        self.answers = answers
        self.ledger = ledger
        self.calls = 0
        envoy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def version_string(self) -> str:
                return "envoy" if envoy.answer[2] else "bank/1.0"

            def do_POST(self) -> None:
                order = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["order"]
                with envoy.ledger.open("a", encoding="utf-8") as f:
                    f.write(order + "\n")
                envoy.answer = envoy.answers[min(envoy.calls, len(envoy.answers) - 1)]
                envoy.calls += 1
                body, kind, _ = envoy.answer
                status = 503
                if body is None:
                    status, body = 200, json.dumps({"paymentRef": f"P-{envoy.calls}"}).encode()
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.answer = answers[0]
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/charge"
        self.close = serve_in_thread(self.server)

    def charged(self) -> list[str]:
        return self.ledger.read_text(encoding="utf-8").split() if self.ledger.exists() else []


@pytest.fixture
def envoy(request, tmp_path: Path) -> Iterator[Envoy]:
    server = Envoy(request.param, tmp_path / "ledger")
    yield server
    server.close()


@pytest.mark.parametrize("envoy", [[(body, "text/plain", True)] for body in ACTED.values()],
                         indirect=True, ids=list(ACTED))
def test_an_http_tool_whose_connection_envoy_saw_reset_is_held_in_doubt(
    tmp_path: Path, envoy: Envoy
) -> None:
    agent, world = shop_agent(tmp_path, envoy.url), shop_world(tmp_path)
    first = agent.run(world, focus=":o1").instances[0]
    error = first.steps[-1].error
    assert isinstance(error, OutcomeUnknown), error
    assert "503 Service Unavailable (a gateway's answer that the connection to the tool was " \
           "reset after the request was sent" in str(error), error
    again = agent.run(world, focus=":o1").instances[0]  # a rerun: the charge is not made again
    assert isinstance(again.steps[-1].error, OutcomeUnknown), again.steps[-1].error
    called = agent.catalog.call("t.charge", {"order": ":o1"}, world)
    assert called.status == "refused" and called.error is not None
    assert called.error["kind"] == "outcome_unknown"
    assert "reconcile" in called.error["message"], called.error  # what clears it
    assert envoy.charged() == ["http://example.org/shop#o1"]


RESET_503 = (ACTED["connection-termination"], "text/plain", True)


@pytest.mark.parametrize("envoy", [[RESET_503, RESET_503, (None, "application/json", False)]],
                         indirect=True, ids=["reset-reset-then-200"])
def test_an_idempotent_tool_whose_connection_envoy_saw_reset_is_tried_again(
    tmp_path: Path, envoy: Envoy
) -> None:
    """Tried again under horis:retries, and its idempotency key left free: a client's retry
    with the key makes the call (it was answered for ever with the 503, read as a refusal)."""
    agent, world = shop_agent(tmp_path, envoy.url, idempotent=True, retries=1), shop_world(tmp_path)
    first = agent.catalog.call("t.charge", {"order": ":o1"}, world, idempotency_key="k-1")
    assert first.status == "failed" and first.error is not None, first
    assert len(envoy.charged()) == 2  # the call and its retry
    again = agent.catalog.call("t.charge", {"order": ":o1"}, world, idempotency_key="k-1")
    assert again.status == "completed", again.error
    assert len(envoy.charged()) == 3


@pytest.mark.parametrize("envoy", [[answer] for answer in REFUSED.values()], indirect=True,
                         ids=list(REFUSED))
def test_a_503_of_a_request_never_passed_on_is_still_a_refusal(
    tmp_path: Path, envoy: Envoy
) -> None:
    """Where the line is drawn: Envoy had no server to send to, could not connect, or its
    circuit breaker was open; or the service itself said it is unavailable."""
    agent, world = shop_agent(tmp_path, envoy.url), shop_world(tmp_path)
    error = agent.run(world, focus=":o1").instances[0].steps[-1].error
    assert isinstance(error, ToolError) and not isinstance(error, OutcomeUnknown), error
    assert "503 Service Unavailable:" in str(error), error
    agent.run(world, focus=":o1")
    assert len(envoy.charged()) == 2


def _mcp_runs(tmp_path: Path, mode: str, idempotent: bool = False, retries: int = 0,
              act: Callable[[Agent, World], Any] | None = None) -> tuple[list[Any], list[str]]:
    """Two runs of the charge (or two of ``act``) against the MCP server answering its calls
    as ``mode`` (tests/servers/mcp_mangled.py): their first instances, and the ledger."""
    port, ledger = free_port(), tmp_path / "ledger"
    proc = start_server(MCP_MANGLED, str(port), str(ledger), mode, port=port,
                        what="the mangling MCP server")
    try:
        defs = MCP_DEFS.replace("URL", f"http://127.0.0.1:{port}/mcp")
        if idempotent:
            defs = defs.replace("horis:idempotent false", "horis:idempotent true").replace(
                "horis:retries 0", f"horis:retries {retries}")
        (tmp_path / "defs.ttl").write_text(defs, encoding="utf-8")
        agent, world = Agent.from_files(tmp_path / "defs.ttl"), shop_world(tmp_path)
        act = act or (lambda agent, world: agent.run(world, focus=":o1").instances[0])
        instances = [act(agent, world) for _ in range(2)]
        charged = ledger.read_text(encoding="utf-8").split() if ledger.exists() else []
    finally:
        proc.kill()
        proc.wait()
    return instances, charged


@pytest.mark.parametrize("mode", ["envoy-reset", "envoy-retried"])
def test_an_mcp_server_whose_connection_envoy_saw_reset_is_held_in_doubt(
    tmp_path: Path, mode: str
) -> None:
    (first, again), charged = _mcp_runs(tmp_path, mode)
    error = first.steps[-1].error
    assert isinstance(error, OutcomeUnknown), error
    assert "reset after the request was sent" in str(error), error
    assert isinstance(again.steps[-1].error, OutcomeUnknown), again.steps[-1].error
    assert charged == ["http://example.org/shop#o1"]


def test_an_idempotent_mcp_tool_whose_connection_envoy_saw_reset_is_tried_again(
    tmp_path: Path,
) -> None:
    """Tried again under horis:retries, and its idempotency key left free for a retry."""

    def call(agent: Agent, world: World) -> Any:
        return agent.catalog.call("t.charge", {"order": ":o1"}, world, idempotency_key="k-1")

    (first, again), charged = _mcp_runs(tmp_path, "envoy-reset", True, 1, call)
    assert first.status == again.status == "failed", (first, again)
    assert "reset after the request was sent" in first.error["message"], first.error
    assert len(charged) == 4  # each call, and its retry: the key was not used up


@pytest.mark.parametrize("mode", ["envoy-unhealthy", "envoy-refused", "503-json"])
def test_an_mcp_servers_503_never_passed_on_is_still_a_refusal(
    tmp_path: Path, mode: str
) -> None:
    (first, _), charged = _mcp_runs(tmp_path, mode)
    error = first.steps[-1].error
    assert isinstance(error, ToolError) and not isinstance(error, OutcomeUnknown), error
    if mode == "503-json":  # the start of the body read to decide, the SDK still read it all
        assert "the bank is closed" in str(error), error
    assert len(charged) == 2


@pytest.mark.parametrize("said, unknown", [
    (ACTED["connection-termination"], True),
    (ACTED["retried"], True),
    (b"no healthy upstream", False),
    (RESET + b"connection failure", False),
], ids=["reset", "retried", "no-healthy-upstream", "connection-failure"])
def test_an_adapters_create_whose_connection_envoy_saw_reset_is_not_made_again(
    tmp_path: Path, fhir: FhirServer, said: bytes, unknown: bool
) -> None:
    agent, world = recording(tmp_path, fhir)

    fhir.gateway, fhir.gateway_said = 503, said
    first = agent.run(world, focus=f"{fhir.base}/Patient/p1", allow=ALLOW)
    step = first.instances[0].steps[-1]
    assert posts(fhir) == 1
    fhir.gateway = None
    agent.run(world, focus=f"{fhir.base}/Patient/p1", allow=ALLOW)
    if not unknown:  # nothing was passed on: a refusal, and the next run creates it
        assert [r["outcome"] for r in step.receipts] != ["unknown"], step.receipts
        assert posts(fhir) == 2
        return
    assert [r["outcome"] for r in step.receipts] == ["unknown"], step.receipts
    assert "reset after the request was sent" in step.receipts[0]["message"], step.receipts
    assert posts(fhir) == 1  # the dispense is not created twice
