"""An MCP server over HTTP that answered a call as succeeding, with nothing readable: in doubt.

A ``tools/call`` POST answered 2xx with what no MCP client reads — a proxy's HTML page, a 202
Accepted, a JSON body or an event that is no JSON — after the tool had acted was taken for the
server refusing the call: the call was not held in doubt, and each rerun charged again (three
runs, three charges). The HTTP binding holds a 2xx it cannot read in doubt (``UnreadableAnswer``);
so does an MCP server reached over HTTP now. Real processes: the SDK's server behind an ASGI
wrapper that replaces the answer (tests/servers/mcp_mangled.py).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from listening import free_port, wait_listening
from shop_files import CHARGE_TOOL, ONE_ORDER, PAY_WORKFLOW, SHOP_HEAD

from horismos import Agent, OutcomeUnknown, UnreadableAnswer, World

SERVER = Path(__file__).parent / "servers" / "mcp_mangled.py"

DEFS = SHOP_HEAD + ':bank a horis:McpServer ; horis:url "URL" .\n' + CHARGE_TOOL + """\
    horis:binding "mcp://bank/charge" ;
    horis:timeout "20s" ;
    horis:idempotent false .
""" + PAY_WORKFLOW

WORLD = ONE_ORDER


@pytest.fixture(params=["html", "202", "garbage", "event"])
def bank(request, tmp_path: Path) -> Iterator[tuple[Path, str]]:
    port = free_port()
    ledger = tmp_path / "ledger"
    proc = subprocess.Popen([sys.executable, str(SERVER), str(port), str(ledger), request.param],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        wait_listening(proc, port, "the mangling MCP server")
        (tmp_path / "defs.ttl").write_text(
            DEFS.replace("URL", f"http://127.0.0.1:{port}/mcp"), encoding="utf-8")
        (tmp_path / "world.ttl").write_text(WORLD, encoding="utf-8")
        yield tmp_path, request.param
    finally:
        proc.kill()
        proc.wait()


def charges(folder: Path) -> list[str]:
    ledger = folder / "ledger"
    return ledger.read_text(encoding="utf-8").split() if ledger.exists() else []


def test_an_unreadable_success_is_held_in_doubt_and_not_charged_again(bank) -> None:
    folder, _ = bank
    agent = Agent.from_files(folder / "defs.ttl")
    world = World.from_files(folder / "world.ttl")

    first = agent.run(world, focus=":o1").instances[0]
    assert charges(folder) == ["http://example.org/shop#o1"]
    assert first.status == "failed"
    error = first.steps[-1].error
    assert isinstance(error, UnreadableAnswer), error
    assert "refused" not in str(error)  # it answered as succeeding: no refusal

    for _ in range(2):  # a rerun starts a new instance; the call in doubt is not made again
        again = agent.run(world, focus=":o1").instances[0]
        assert isinstance(again.steps[-1].error, OutcomeUnknown), again.steps[-1].error
    assert charges(folder) == ["http://example.org/shop#o1"]

    called = agent.catalog.call("t.charge", {"order": ":o1"}, world)
    assert called.status == "refused" and called.error is not None
    assert called.error["kind"] == "outcome_unknown"
    assert charges(folder) == ["http://example.org/shop#o1"]
