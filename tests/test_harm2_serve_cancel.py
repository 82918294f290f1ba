"""An agent on `horismos serve --run-workflow` that gives up on `run_workflow` (its client's
timeout, a dropped connection) while a step's tool that is not idempotent is being called.

The request's cancellation reached the run mid-call: the tool billed, and its answer was
dropped with the instance left `running` at the step, its call's intent open. Every retry
was answered "running, as it stands" and the bill was held in doubt, for an operator to
reconcile, though the tool had answered. A catalog call was shielded from its request's
cancellation already (tests/test_idempotency_keys.py); the run it starts is now too.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from charge_ledger import ledger
from in_process import horismos_load
from listening import horismos_serving_http
from oxigraph_server import OxigraphServer
from retried_charge import environ, shop

BILLED = "bill http://example.org/pay#o1"


@pytest.mark.parametrize("store", ["journal:world", "memory", "sparql"])
def test_a_run_workflow_given_up_mid_call_lands_what_its_tool_answered(tmp_path, store) -> None:
    from mcp import Client

    shop(tmp_path)
    shared = OxigraphServer(tmp_path / "db") if store == "sparql" else None
    if shared is not None:
        store = shared.store
    if store == "memory":
        where = ["--world", "world.ttl"]
    else:
        horismos_load(tmp_path, store, "world.ttl")
        where = ["--store", store]
    try:
        with horismos_serving_http(
                tmp_path, "pay.ttl", "--tools", "payments.py", *where, "--run-workflow",
                env=environ(tmp_path, 1.5)) as url:
            async def ask(name: str, args: dict, timeout: float | None = None) -> dict | None:
                async with Client(url, cache=None) as client:
                    try:
                        answer = await client.call_tool(name, args, timeout)
                    except Exception:  # the client's own timeout: the answer is lost
                        return None
                    return {"error": answer.is_error, "text": answer.content[0].text,
                            **(answer.structured_content or {})}

            pay = {"workflow": ":Pay", "focus": ":o1"}
            assert asyncio.run(ask("run_workflow", pay, timeout=0.3)) is None
            deadline = time.monotonic() + 30
            while True:  # the retry waits its turn behind the first run, which lands
                again = asyncio.run(ask("run_workflow", pay))
                assert again is not None
                if again["status"] != "running" or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
            assert again["status"] == "completed" and again["ran"] is False, again
            assert ledger(tmp_path) == [BILLED]
    finally:
        if shared is not None:
            shared.stop()
