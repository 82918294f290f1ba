"""An MCP server slow to start, or to start again after it died, behind a tool whose
``horis:timeout`` is shorter than that start: the start is not the call.

The session was (re)opened inside the step's ``horis:timeout``, so a fresh interpreter
importing the SDK on a busy machine used it up, and the step failed "t.record did not answer
within 1s (horis:timeout)" about a call that was never sent. Now the session opens first,
within its own connect timeout: the call gets its whole timeout, and a server that does not
answer the handshake in time fails the step in the handshake's words, not sent, so a tool that
is not idempotent is not held in doubt and the next run calls it. A server that exits between
two calls is started again too, not written to. Real servers (the SDK's, over stdio), each
counting its starts and its one side effect in a ledger.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from charge_ledger import ledger
from forked import horismos_forked
from listening import MCP_SERVER
from mcp_clinic_files import CLINIC_HEAD, ONE_PATIENT, RECORD_TOOL
from rdflib import Namespace

from horismos import Agent, ToolError, Unreachable, World
from horismos._bindings import mcp

EX = Namespace("http://example.org/mcp#")
RECORDED = "record http://example.org/mcp#p1"


def defs(folder: Path, *, slow_on: int, seconds: float = 2) -> str:
    """A server whose ``slow_on``-th start takes ``seconds``; ``t.die`` (idempotent) kills it
    mid-call, and ``t.record`` (not idempotent, 1 s) writes one ledger line a call."""
    args = " ".join(
        f'"{a}"'
        for a in (MCP_SERVER.as_posix(), "--ledger", (folder / "ledger.txt").as_posix(),
                  "--slow-start", str(seconds), "--slow-on", str(slow_on))
    )
    return CLINIC_HEAD + f"""\
:clinic a horis:McpServer ; horis:command "python" ; horis:args ( {args} ) .

:t.die a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:binding "mcp://clinic/die" ; horis:idempotent true ; horis:timeout "5s" .
""" + RECORD_TOOL + """\
    horis:binding "mcp://clinic/record" ; horis:timeout "1s" .

:Flow a horis:Workflow ; horis:focusType :Patient ; horis:start :Die .
:Die a horis:ActionStep ; horis:tool :t.die ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] ; horis:onError :Record .
:Record a horis:ActionStep ; horis:tool :t.record ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""


def setup(folder: Path, *, slow_on: int, seconds: float = 2) -> None:
    (folder / "defs.ttl").write_text(defs(folder, slow_on=slow_on, seconds=seconds))
    (folder / "world.ttl").write_text(ONE_PATIENT)


def test_a_server_slow_to_start_again_gets_its_start_and_the_call_its_timeout(tmp_path) -> None:
    """``t.die`` kills the server; the next step's call starts it again, which takes 2 s,
    and then the call is made within its 1 s. The replay of the run starts no server."""
    setup(tmp_path, slow_on=2)
    run = horismos_forked(tmp_path, "run", "defs.ttl", "--world", "world.ttl", "--focus", ":p1",
                          "--trace", "run.jsonl", timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert ":Record  :t.record(patient=:p1)  completed" in run.stdout, run.stdout
    assert "horis:timeout" not in run.stdout + run.stderr
    assert ledger(tmp_path) == ["start", "start", RECORDED]
    replay = horismos_forked(tmp_path, "replay", "run.jsonl", "defs.ttl", timeout=60)
    assert replay.returncode == 0, replay.stdout + replay.stderr
    assert ledger(tmp_path) == ["start", "start", RECORDED]


def test_a_restart_past_the_handshake_timeout_is_not_sent_and_not_held_in_doubt(
        tmp_path, monkeypatch) -> None:
    """The restart takes longer than the connect timeout (4 s here: a first start that
    imports the SDK on a loaded machine must still fit): the step fails saying the
    handshake did not come, not that the tool did not answer. Nothing was sent, so the tool,
    not idempotent, is not held in doubt: the next call on the same patient is made, once,
    with no reconcile."""
    monkeypatch.setattr(mcp, "CONNECT_TIMEOUT", 4.0)
    setup(tmp_path, slow_on=2, seconds=60)
    agent = Agent.from_files(tmp_path / "defs.ttl")
    world = World.from_files(tmp_path / "world.ttl")
    run = agent.run(world, focus=EX.p1)
    record = run.instances[0].steps[-1]
    # nothing was sent: blocked, to be tried again, not failed for good
    assert record.step == EX.Record and record.status == "blocked", record
    assert isinstance(record.error, Unreachable), record.error
    assert "did not answer the MCP handshake within 4s" in str(record.error)
    assert "horis:timeout" not in str(record.error)
    assert ledger(tmp_path) == ["start", "start"]
    again = agent.catalog.call("t.record", {"patient": EX.p1}, world)
    assert again.status == "completed", again
    assert ledger(tmp_path) == ["start", "start", "start", RECORDED]


@pytest.mark.parametrize("lane", ["run", "tools call"])
def test_a_server_slow_at_its_first_start_gets_it_outside_the_call_timeout(
        tmp_path, lane) -> None:
    setup(tmp_path, slow_on=1)
    if lane == "run":  # straight to the call: no t.die first
        text = (tmp_path / "defs.ttl").read_text()
        (tmp_path / "defs.ttl").write_text(text.replace("start :Die", "start :Record"))
        args = ["run", "defs.ttl", "--world", "world.ttl", "--focus", ":p1"]
    else:
        args = ["tools", "call", "t.record", "defs.ttl", "--world", "world.ttl",
                "--args", '{"patient": ":p1"}']
    done = horismos_forked(tmp_path, *args, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "completed" in done.stdout, done.stdout
    assert ledger(tmp_path) == ["start", RECORDED]



LEFT = """
:t.leave a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:binding "mcp://clinic/leave" ; horis:timeout "5s" .
:t.pause a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:binding "python:pause" ; horis:idempotent true ; horis:timeout "5s" .
:Leave a horis:ActionStep ; horis:tool :t.leave ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] ; horis:next :Pause .
:Pause a horis:ActionStep ; horis:tool :t.pause ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] ; horis:next :Record .
"""


def test_a_server_gone_between_two_calls_is_started_again_not_written_to(tmp_path) -> None:
    """``t.leave`` answers, then its server exits; a step later ``t.record`` (not
    idempotent) is called. The call was written to the pipe of a server already gone: counted
    as sent, it failed "closed the connection during the call" and was held in doubt, so
    a catalog call on the same patient was refused until a reconcile. Now the session knows
    its server is gone and starts it again first."""
    setup(tmp_path, slow_on=2)
    text = (tmp_path / "defs.ttl").read_text().replace("start :Die", "start :Leave")
    (tmp_path / "defs.ttl").write_text(text + LEFT)

    async def pause(patient: object) -> None:  # the server's exit is seen meanwhile
        await asyncio.sleep(1)

    agent = Agent.from_files(tmp_path / "defs.ttl", tools={"pause": pause})
    world = World.from_files(tmp_path / "world.ttl")
    run = agent.run(world, focus=EX.p1)
    assert run.status == "completed", run.error
    assert ledger(tmp_path) == ["start", "start", RECORDED]
    again = agent.catalog.call("t.record", {"patient": EX.p1}, world)
    assert again.status == "completed", again
    assert ledger(tmp_path) == ["start", "start", RECORDED, "start", RECORDED]


def test_a_server_that_exits_as_its_tool_list_is_read_is_not_taken_for_alive(
    monkeypatch,
) -> None:
    """The server answers the tool list and exits: its stdout closes (the transport's
    ``ended``) before the session has read the list. The session then marked itself alive,
    and the next call was written to a server gone, counted as sent and held in doubt. Now
    it is not alive: the call is refused before it is written (nothing sent)."""
    import mcp as sdk
    from rdflib import URIRef

    from horismos._bindings import mcp_stdio
    from horismos._model import McpServer

    ended: list = []

    def transport(server, errlog, limit, on_end=None):
        ended.append(on_end)
        return None

    class Client:  # the SDK's, reduced to its handshake
        def __init__(self, streams, cache=None) -> None:
            pass

        async def __aenter__(self) -> Client:
            return self

        async def __aexit__(self, *exc: object) -> None:
            return None

    async def listed(client: object) -> dict:
        ended[0]()  # the server exited as it answered the list
        return {"record": object()}

    monkeypatch.setattr(mcp_stdio, "capped_stdio_client", transport)
    monkeypatch.setattr(sdk, "Client", Client)
    monkeypatch.setattr(mcp, "_list_tools", listed)

    async def main() -> None:
        server = McpServer(URIRef("urn:x:clinic"), "clinic", "python", ("-c", "pass"))
        session = mcp.McpSession(server, None)
        session.start()
        try:
            with pytest.raises(ToolError, match="could not start"):
                await session.ready(5)
            assert not session.alive and session.dead
        finally:
            await session.aclose()

    asyncio.run(main())
