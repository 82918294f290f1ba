"""An MCP host's client over stdio killed (SIGKILL) while `run_workflow` is calling a slow
step's tool that is not idempotent, on a world that outlives the server (`journal:PATH`).

The client gone, the server has its stdin at end of file and its stdout unread: it finishes
the run it began (shielded from the request's end), lands what the tool answered, and exits,
no traceback; the focus's instance is `completed`, so a server started anew answers it and
runs nothing (`run_workflow` is safe to retry). Were the run cut off at the end of stdin, the
tool's answer would be dropped, the instance left `running` with its call in doubt.

(A client that gives up instead closes stdin and, two seconds later, SIGTERMs the server's
process group, then SIGKILLs it: a tool slower than that is stopped mid-call, and the next
server holds the call in doubt, in `run_workflow` and a catalog `tools/call` alike; tried by
hand, not kept here: it takes a tool slower than four seconds.)
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from charge_ledger import ledger
from forked import horismos_forked
from in_process import horismos_load
from retried_charge import environ, shop

BILLED = "bill http://example.org/pay#o1"
PAY = {"workflow": ":Pay", "focus": ":o1"}

CLIENT = """
import asyncio, json, os, sys
from mcp import Client, StdioServerParameters, stdio_client
params = StdioServerParameters(command=sys.executable, args=json.loads(sys.argv[1]),
                               cwd=os.getcwd(), env=dict(os.environ))
async def main():
    with open("serve.err", "a") as errlog:
        async with Client(stdio_client(params, errlog=errlog), cache=None) as client:
            await client.call_tool("run_workflow", json.loads(sys.argv[2]))  # killed in it
asyncio.run(main())
"""


def _serve_argv() -> list[str]:
    return ["-m", "horismos", "serve", "pay.ttl", "--tools", "payments.py",
            "--store", "journal:world", "--run-workflow"]


def _children(pid: int) -> list[int]:
    return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs: gone, or a zombie no one has reaped yet, it does not."""
    try:
        return " Z " not in Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2][:3]
    except FileNotFoundError:
        return False


def test_a_stdio_client_killed_mid_call_leaves_the_call_landed(tmp_path) -> None:
    shop(tmp_path)
    horismos_load(tmp_path, "journal:world", "world.ttl")
    client = subprocess.Popen(
        [sys.executable, "-c", CLIENT, json.dumps(_serve_argv()), json.dumps(PAY)],
        cwd=tmp_path, env=environ(tmp_path, 1.5), stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not ledger(tmp_path):
        assert client.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    (server,) = _children(client.pid)
    client.send_signal(signal.SIGKILL)
    client.wait(timeout=60)
    while _alive(server):  # the server, orphaned, ends
        assert time.monotonic() < deadline, "the server outlived its client"
        time.sleep(0.05)
    err = (tmp_path / "serve.err").read_text()
    assert "Traceback" not in err, err
    listed = horismos_forked(tmp_path, "instances", "--store", "journal:world", "--format",
                             "json", timeout=60)
    (instance,) = json.loads(listed.stdout)
    assert instance["status"] == "completed", instance
    assert ledger(tmp_path) == [BILLED]
