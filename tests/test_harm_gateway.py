"""A gateway's 502 or 504 is no answer of the tool's: a call that may have acted is in doubt.

A proxy or load balancer in front of a tool answers 502 Bad Gateway or 504 Gateway Timeout
when the tool behind it gives no answer in time, often after the tool has acted. That status
was read as the tool's own error: the call was believed not made, so each rerun charged again
(an HTTP tool, an MCP server over HTTP, an adapter's create). It is now taken for no answer, as
a call that times out here is: a tool that is not idempotent is held in doubt and not called
again; an idempotent one is tried again. A 500 stays the server's own refusal. Real servers on
127.0.0.1: an HTTP server, the MCP SDK's server behind a wrapper (tests/servers/mcp_mangled.py)
and the loopback FHIR server (tests/servers/fhir_server.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from gateway_shop import MCP_DEFS, shop_agent, shop_world
from listening import MCP_MANGLED, free_port, serve_in_thread, start_server
from pharmacy_ehr import ALLOW, posts, recording
from servers.fhir_server import FhirServer

from horismos import Agent, OutcomeUnknown, ToolError


class Gateway:
    """A real HTTP server on 127.0.0.1 that charges each order it is sent (it acted), then
    answers with the next of ``statuses`` (the last one again once they run out): 502 and 504
    as a proxy would, with a page, a 500 as the service's own error, a 200 with the reference."""

    def __init__(self, statuses: list[int]) -> None:
        self.statuses = statuses
        self.charged: list[str] = []
        gateway = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                gateway.charged.append(body["order"])
                n = len(gateway.charged) - 1
                status = gateway.statuses[min(n, len(gateway.statuses) - 1)]
                if status == 200:
                    data, kind = json.dumps({"paymentRef": f"P-{n}"}).encode(), "application/json"
                else:
                    data, kind = b"<html><body>upstream gave no answer</body></html>", "text/html"
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/charge"
        self.close = serve_in_thread(self.server)


@pytest.fixture
def gateway(request) -> Iterator[Gateway]:
    server = Gateway(request.param)
    yield server
    server.close()


@pytest.mark.parametrize("gateway", [[502], [504]], indirect=True, ids=["502", "504"])
def test_an_http_tool_answered_by_a_gateway_is_held_in_doubt(tmp_path: Path, gateway) -> None:
    agent = shop_agent(tmp_path, gateway.url)
    world = shop_world(tmp_path)

    first = agent.run(world, focus=":o1").instances[0]
    error = first.steps[-1].error
    assert isinstance(error, OutcomeUnknown), error
    assert f"{gateway.statuses[0]} " in str(error) and "a gateway's answer" in str(error)
    for _ in range(2):  # a rerun starts a new instance: the call in doubt is not made again
        again = agent.run(world, focus=":o1").instances[0]
        assert isinstance(again.steps[-1].error, OutcomeUnknown), again.steps[-1].error
    called = agent.catalog.call("t.charge", {"order": ":o1"}, world)
    assert called.status == "refused" and called.error is not None
    assert called.error["kind"] == "outcome_unknown"
    assert gateway.charged == ["http://example.org/shop#o1"]


@pytest.mark.parametrize("gateway", [[500]], indirect=True, ids=["500"])
def test_a_services_own_500_is_still_its_refusal(tmp_path: Path, gateway) -> None:
    """Where the line is drawn: a 500 is the service saying it did not do what was asked."""
    agent = shop_agent(tmp_path, gateway.url)
    world = shop_world(tmp_path)
    first = agent.run(world, focus=":o1").instances[0]
    error = first.steps[-1].error
    assert isinstance(error, ToolError) and not isinstance(error, OutcomeUnknown), error
    agent.run(world, focus=":o1")
    assert len(gateway.charged) == 2


@pytest.mark.parametrize("gateway", [[504, 200]], indirect=True, ids=["504-then-200"])
def test_an_idempotent_tool_answered_by_a_gateway_is_tried_again(tmp_path: Path, gateway) -> None:
    agent = shop_agent(tmp_path, gateway.url, idempotent=True, retries=1)
    world = shop_world(tmp_path)
    run = agent.run(world, focus=":o1")
    assert run.status == "completed", run.instances[0].steps[-1].error
    assert len(gateway.charged) == 2


@pytest.mark.parametrize("status", ["502", "504", "500"])
def test_an_mcp_server_behind_a_gateway_is_held_in_doubt(tmp_path: Path, status: str) -> None:
    port, ledger = free_port(), tmp_path / "ledger"
    proc = start_server(MCP_MANGLED, str(port), str(ledger), status, port=port,
                        what="the mangling MCP server")
    try:
        (tmp_path / "defs.ttl").write_text(
            MCP_DEFS.replace("URL", f"http://127.0.0.1:{port}/mcp"), encoding="utf-8")
        agent, world = Agent.from_files(tmp_path / "defs.ttl"), shop_world(tmp_path)
        first = agent.run(world, focus=":o1").instances[0]
        again = agent.run(world, focus=":o1").instances[0]
        charged = ledger.read_text(encoding="utf-8").split()
    finally:
        proc.kill()
        proc.wait()
    error = first.steps[-1].error
    if status == "500":  # the server's own error: a refusal, and a rerun calls again
        assert isinstance(error, ToolError) and not isinstance(error, OutcomeUnknown), error
        assert len(charged) == 2
        return
    assert isinstance(error, OutcomeUnknown), error
    assert "a gateway's answer" in str(error)
    assert isinstance(again.steps[-1].error, OutcomeUnknown), again.steps[-1].error
    assert charged == ["http://example.org/shop#o1"]


@pytest.mark.parametrize("status", [502, 504])
def test_an_adapters_create_answered_by_a_gateway_is_not_made_again(
    tmp_path: Path, fhir: FhirServer, status: int
) -> None:
    agent, world = recording(tmp_path, fhir)

    fhir.gateway = status
    first = agent.run(world, focus=f"{fhir.base}/Patient/p1", allow=ALLOW)
    step = first.instances[0].steps[-1]
    assert [r["outcome"] for r in step.receipts] == ["unknown"], step.receipts
    assert "a gateway's answer" in step.receipts[0]["message"], step.receipts
    assert posts(fhir) == 1
    fhir.gateway = None
    agent.run(world, focus=f"{fhir.base}/Patient/p1", allow=ALLOW)
    assert posts(fhir) == 1  # the dispense is not created twice
