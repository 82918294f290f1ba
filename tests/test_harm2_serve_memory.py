"""`horismos serve` on its default store, a world in this process's memory, started anew for
each session as an MCP host does over stdio: what a call records (its idempotency key, a
finished `run_workflow` instance) ends with the server, so an agent retrying on the next one
billed again. Nothing said so; now the server says it at start, and what to serve instead.
A world that outlives the server (`journal:PATH`) keeps them: the keyed retry is replayed."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from charge_ledger import ledger
from in_process import horismos_load
from retried_charge import environ, shop

from horismos._idempotency import MCP_META_KEY

# an MCP stdio server the SDK starts is a zygote child (conftest.py's forked_popen)
pytestmark = pytest.mark.usefixtures("forked_popen")

BILLED = "bill http://example.org/pay#o1"
WARNED = "the world is kept in this process's memory and ends with it"


def _session(cwd: Path, where: list[str], name: str, args: dict, key: str | None) -> str:
    """One MCP session over stdio: a server started for it, one call, the server gone."""
    from mcp import Client, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "horismos", "serve", "pay.ttl", "--tools", "payments.py", *where,
              "--allow", "ReadOnly,HostStateWrite,ExternalCommit", "--run-workflow"],
        cwd=str(cwd), env=environ(cwd))

    async def call() -> str:
        with (cwd / "serve.err").open("a") as errlog:
            async with Client(stdio_client(params, errlog=errlog), cache=None) as client:
                meta = {MCP_META_KEY: key} if key is not None else None
                answer = await client.call_tool(name, args, meta=meta)
                return str(answer.content[0].text)

    return asyncio.run(call())


@pytest.mark.parametrize("kept", [False, True])
def test_a_served_world_that_ends_with_the_server_is_said_at_start(tmp_path, kept) -> None:
    shop(tmp_path)
    where = ["--world", "world.ttl"]
    if kept:
        horismos_load(tmp_path, "journal:world", "world.ttl")
        where = ["--store", "journal:world"]
    for _ in range(2):  # a retry with the key, on the server the next session starts
        _session(tmp_path, where, "t.bill", {"order": ":o1"}, "agent-1")
    warned = WARNED in (tmp_path / "serve.err").read_text()
    if kept:
        assert not warned
        assert ledger(tmp_path) == [BILLED]
    else:
        said = (tmp_path / "serve.err").read_text()
        assert warned and "t.bill, t.charge, run_workflow called again" in said, said
        assert "--store journal:PATH" in said, said
        assert ledger(tmp_path) == [BILLED, BILLED]  # what the warning is about
