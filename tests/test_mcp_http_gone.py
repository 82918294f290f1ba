"""An MCP server reached over streamable HTTP that is gone between two calls: the second call
never left, so it is not held in doubt.

Each call is a POST on a session opened earlier. The SDK let the POST's connection error end
its transport, and the call read as "closed the connection during the call": sent, no answer,
so a tool that is not idempotent was held in doubt (OutcomeUnknown), and every later call on
that subject was refused until a ``horismos tools reconcile``, for a call that reached no one.
A POST that could not connect is now ``Unreachable`` (nothing was sent), and the session is
opened again for the next call. A server that dies after a call reached it is still a call
with no answer: held in doubt. Real processes: the SDK's server over HTTP on 127.0.0.1 (killed
and started again on the same port), counting its starts and its one side effect in a ledger.
"""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from forked import horismos_forked
from listening import MCP_SERVER, free_port, start_server
from mcp_clinic_files import CLINIC_HEAD, ONE_PATIENT, RECORD_TOOL
from rdflib import Namespace

from horismos import (
    Agent,
    NotSent,
    OutcomeUnknown,
    Run,
    ToolError,
    ToolTimeout,
    Unreachable,
    World,
    read_trace,
    replay,
)
from horismos._outcomes import outcome_of, play

EX = Namespace("http://example.org/mcp#")
RECORDED = "record http://example.org/mcp#p1"

DEFS = CLINIC_HEAD + """\
:clinic a horis:McpServer ; horis:url "http://127.0.0.1:{port}/mcp" .

""" + RECORD_TOOL + """\
    horis:binding "mcp://clinic/{record}" ; horis:timeout "10s" .
:t.stop a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:binding "python:stop" ; horis:idempotent true ; horis:timeout "30s" .

:Flow a horis:Workflow ; horis:focusType :Patient ; horis:start :Record .
:Record a horis:ActionStep ; horis:tool :t.record ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] ; horis:next :Stop .
:Stop a horis:ActionStep ; horis:tool :t.stop ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] ; horis:next :Again .
:Again a horis:ActionStep ; horis:tool :t.record ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""

STOP = """\
import os, signal, socket, time
from pathlib import Path


def stop(patient):
    \"\"\"Kill the MCP server (its pid in server.pid) and wait until its port refuses.\"\"\"
    pid, port = map(int, Path("server.pid").read_text().split())
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        except OSError:
            return None
        time.sleep(0.05)
    raise RuntimeError("the MCP server still listens")
"""


def started(folder: Path, port: int, *extra: str) -> subprocess.Popen[bytes]:
    """The test MCP server over HTTP on ``port``, its side effects in ``folder``'s ledger,
    its pid and port in ``server.pid``."""
    proc = start_server(MCP_SERVER, "--http", str(port), "--ledger", str(folder / "ledger.txt"),
                        *extra, port=port, what="the MCP HTTP test server")
    (folder / "server.pid").write_text(f"{proc.pid} {port}")
    return proc


@contextmanager
def server(folder: Path, port: int, *extra: str) -> Iterator[subprocess.Popen[bytes]]:
    """:func:`started`, killed on leaving."""
    proc = started(folder, port, *extra)
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


def setup(folder: Path, port: int, record: str = "record") -> None:
    (folder / "defs.ttl").write_text(DEFS.format(port=port, record=record))
    (folder / "world.ttl").write_text(ONE_PATIENT)
    (folder / "tools.py").write_text(STOP)


def recorded(folder: Path) -> list[str]:
    path = folder / "ledger.txt"
    lines = path.read_text().splitlines() if path.exists() else []
    return [line for line in lines if line != "start"]


def run_killing_the_server(tmp_path: Path, port: int, **given: Any) -> tuple[Agent, World, Run]:
    """A run of the workflow on ``:p1`` (in process) whose ``stop`` step kills the server
    between its two calls of ``t.record``; the agent and world, to go on with."""
    running: list[subprocess.Popen[bytes]] = []

    def stop(patient: object) -> None:
        running[0].kill()
        running[0].wait()

    agent = Agent.from_files(tmp_path / "defs.ttl", tools={"stop": stop})
    world = World.from_files(tmp_path / "world.ttl")
    with server(tmp_path, port) as proc:
        running.append(proc)
        run = agent.run(world, focus=EX.p1, **given)
    return agent, world, run


def test_a_server_gone_between_two_calls_is_not_sent_and_no_doubt_is_kept(tmp_path) -> None:
    """A run calls ``t.record`` (not idempotent), kills the server, and calls it again on
    the session it opened: the second call reports the server unreachable, nothing sent.
    With the server back on its port, a ``tools call`` on the same patient, same store,
    goes through with no reconcile: one more call in the ledger, not two."""
    port = free_port()
    setup(tmp_path, port)
    store = ("--store", "oxigraph:store")
    loaded = horismos_forked(tmp_path, "load", "world.ttl", *store, timeout=60)
    assert loaded.returncode == 0, loaded.stdout + loaded.stderr
    with server(tmp_path, port):
        run = horismos_forked(tmp_path, "run", "defs.ttl", *store, "--focus", ":p1",
                              "--tools", "tools.py", timeout=120)
    said = run.stdout + run.stderr
    assert run.returncode == 4, said  # blocked at :Again, not failed: nothing was sent
    assert ":Record  :t.record(patient=:p1)  completed" in run.stdout, said
    assert "could not be reached for the call to \"record\"" in said, said
    assert "(nothing was sent)" in said, said
    assert "may have acted" not in said and "closed the connection" not in said, said
    assert "Traceback" not in run.stderr
    assert recorded(tmp_path) == [RECORDED]  # the second call reached no one

    with server(tmp_path, port):  # back on the same port
        again = horismos_forked(tmp_path, "tools", "call", "t.record", "defs.ttl", *store,
                                "--args", '{"patient": ":p1"}', "--format", "json",
                                timeout=120)
    assert again.returncode == 0, again.stdout + again.stderr
    assert json.loads(again.stdout)["status"] == "completed", again.stdout
    assert recorded(tmp_path) == [RECORDED, RECORDED]


def test_a_call_that_never_left_is_tried_again_by_horis_retries(tmp_path) -> None:
    """The same in one process (``Agent.run``, then ``catalog.call``): a call that never left
    is tried again under ``horis:retries``, though the tool is not idempotent — its retry
    opens the session again, and finds the server still down — and is not held in doubt."""
    port = free_port()
    setup(tmp_path, port)
    text = (tmp_path / "defs.ttl").read_text().replace(
        'horis:timeout "10s" .', 'horis:timeout "10s" ; horis:retries 1 .', 1)
    (tmp_path / "defs.ttl").write_text(text)
    agent, world, run = run_killing_the_server(tmp_path, port)
    steps = run.instances[0].steps
    assert [s.status for s in steps] == ["completed", "completed", "blocked"], steps
    error = steps[-1].error
    assert isinstance(error, Unreachable), error
    assert steps[-1].attempts == 2  # retried: it never left
    assert recorded(tmp_path) == [RECORDED]
    with server(tmp_path, port):
        called = agent.catalog.call("t.record", {"patient": EX.p1}, world)
    assert called.status == "completed", called
    assert recorded(tmp_path) == [RECORDED, RECORDED]


def test_a_call_whose_timeout_runs_out_while_it_connects_is_not_held_in_doubt(tmp_path) -> None:
    """The server's port is taken, between two calls, by a socket that never accepts (its
    queue full, so each connection attempt hangs): the call's 2 s run out while its POST is
    still connecting, well inside the SDK's 30 s connect timeout. It never left: a timeout,
    not held in doubt, and with the server back the next call on the patient is made."""
    port = free_port()
    setup(tmp_path, port)
    text = (tmp_path / "defs.ttl").read_text().replace(
        'horis:timeout "10s" .', 'horis:timeout "2s" .', 1)
    (tmp_path / "defs.ttl").write_text(text)
    running: list[subprocess.Popen[bytes]] = []
    held: list[socket.socket] = []

    def stop(patient: object) -> None:
        running[0].kill()
        running[0].wait()
        deaf = socket.socket()
        deaf.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        deaf.bind(("127.0.0.1", port))
        deaf.listen(0)
        held.extend([deaf, socket.create_connection(("127.0.0.1", port))])  # queue full

    agent = Agent.from_files(tmp_path / "defs.ttl", tools={"stop": stop})
    world = World.from_files(tmp_path / "world.ttl")
    try:
        with server(tmp_path, port) as proc:
            running.append(proc)
            run = agent.run(world, focus=EX.p1)
    finally:
        for s in held:
            s.close()
    step = run.instances[0].steps[-1]
    # blocked, to be tried again, as a server down is (tests/test_unreached_endpoint.py)
    assert step.status == "blocked", step
    assert isinstance(step.error, Unreachable), step.error
    assert isinstance(step.error.__cause__, ToolTimeout), step.error.__cause__
    assert not step.error.__cause__.sent
    assert "t.record was not sent within 2s (horis:timeout): it never left" in str(step.error)
    assert recorded(tmp_path) == [RECORDED]
    with server(tmp_path, port):
        called = agent.catalog.call("t.record", {"patient": EX.p1}, world)
    assert called.status == "completed", called
    assert recorded(tmp_path) == [RECORDED, RECORDED]


def test_a_server_started_again_that_no_longer_knows_the_session_is_opened_again(
        tmp_path) -> None:
    """A server of the protocol before 2026 (one session, by id) is started again between
    two calls: it answers the next call 404, the session unknown, without acting on it. The
    call was taken for the server refusing it, and the session stayed open, so every later
    call of the run was refused the same. It is Unreachable now (nothing was done): the
    retry opens a new session, and the call is made, once."""
    port = free_port()
    setup(tmp_path, port)
    text = (tmp_path / "defs.ttl").read_text().replace(
        'horis:timeout "10s" .', 'horis:timeout "10s" ; horis:retries 1 .', 1)
    (tmp_path / "defs.ttl").write_text(text)
    running: list[subprocess.Popen[bytes]] = []

    def restart(patient: object) -> None:
        running[-1].kill()
        running[-1].wait()
        running.append(started(tmp_path, port, "--legacy"))

    agent = Agent.from_files(tmp_path / "defs.ttl", tools={"stop": restart})
    world = World.from_files(tmp_path / "world.ttl")
    try:
        running.append(started(tmp_path, port, "--legacy"))
        run = agent.run(world, focus=EX.p1)
    finally:
        for proc in running:
            proc.kill()
            proc.wait()
    steps = run.instances[0].steps
    assert [s.status for s in steps] == ["completed", "completed", "completed"], steps
    assert steps[-1].attempts == 2  # the 404, then the call on a new session
    assert recorded(tmp_path) == [RECORDED, RECORDED]


def test_a_server_dying_after_a_call_reached_it_is_still_held_in_doubt(tmp_path) -> None:
    """The guard: the call reaches the server, which acts and dies before it answers. That
    call may have acted: held in doubt, and a later call on the patient, with the server back,
    is refused until a reconcile."""
    port = free_port()
    setup(tmp_path, port, record="record_then_die")
    text = (tmp_path / "defs.ttl").read_text().replace("horis:next :Stop ", "")
    (tmp_path / "defs.ttl").write_text(text)
    agent = Agent.from_files(tmp_path / "defs.ttl", tools={"stop": lambda patient: None})
    world = World.from_files(tmp_path / "world.ttl")
    with server(tmp_path, port):
        run = agent.run(world, focus=EX.p1)
    step = run.instances[0].steps[-1]
    assert isinstance(step.error, OutcomeUnknown), step.error
    assert recorded(tmp_path) == [RECORDED]
    with server(tmp_path, port):
        called = agent.catalog.call("t.record", {"patient": EX.p1}, world)
    assert called.status == "refused" and called.error is not None, called
    assert called.error["kind"] == "outcome_unknown"
    assert recorded(tmp_path) == [RECORDED]


def test_a_call_sent_and_not_answered_in_time_is_still_held_in_doubt(tmp_path) -> None:
    """The guard of the other side: a call whose POST went out (the server's ``slow`` takes
    2 s) and whose 1 s ran out is a call that may have acted — held in doubt, however its
    connection was made, and the next call on the patient is refused."""
    port = free_port()
    setup(tmp_path, port, record="slow")
    text = (tmp_path / "defs.ttl").read_text().replace(
        'horis:timeout "10s" .', 'horis:timeout "1s" .', 1).replace("horis:next :Stop ", "")
    (tmp_path / "defs.ttl").write_text(text)
    agent = Agent.from_files(tmp_path / "defs.ttl", tools={"stop": lambda patient: None})
    world = World.from_files(tmp_path / "world.ttl")
    with server(tmp_path, port):
        run = agent.run(world, focus=EX.p1)
        step = run.instances[0].steps[-1]
        assert isinstance(step.error, OutcomeUnknown), step.error
        assert "did not answer within 1s" in str(step.error)
        called = agent.catalog.call("t.record", {"patient": EX.p1}, world)
    assert called.status == "refused" and called.error is not None, called
    assert called.error["kind"] == "outcome_unknown"


def test_a_run_that_found_its_server_unreachable_replays_the_same_class(tmp_path) -> None:
    """Replay brought a recorded ``Unreachable`` back as a plain ``ToolError``: the replayed
    step failed as a ``ToolError``, where the live one failed ``Unreachable`` (a caller
    catching that, or reading the class the trace records, saw another), so the replay
    diverged at the step's error. Recorded, the class comes back as it was raised."""
    port = free_port()
    setup(tmp_path, port)
    agent, _, run = run_killing_the_server(tmp_path, port, trace=tmp_path / "run.jsonl")
    error = run.instances[0].steps[-1].error
    assert type(error) is Unreachable, error
    failed = [e for e in read_trace(tmp_path / "run.jsonl")  # blocked: nothing was sent
              if e["type"] == "step" and e["status"] == "blocked"]
    assert [(e["error"]["kind"], e["error"]["type"]) for e in failed] == [
        ("not_sent", "Unreachable")], failed
    with pytest.raises(Unreachable):
        play(failed[0]["outcomes"][-1])
    report = replay(tmp_path / "run.jsonl", agent)
    assert not report.diverged, str(report)
    assert report.complete and report.steps == 3, str(report)


@pytest.mark.parametrize("kind", [NotSent, Unreachable, OutcomeUnknown])
def test_a_recorded_not_sent_or_unknown_outcome_plays_as_its_class(kind: type) -> None:
    """Each class a retry or a doubt turns on is raised again as itself, fields and all; a
    class the replaying runtime does not know (an older or newer trace's) is a plain
    ``ToolError``, as before."""
    entry = outcome_of(kind("down"))
    with pytest.raises(kind) as raised:
        play(entry)
    assert type(raised.value) is kind and str(raised.value) == "down"
    with pytest.raises(ToolError) as raised:
        play({**entry, "error": "Gone"})
    assert type(raised.value) is ToolError


@pytest.mark.parametrize("code", [-32096, -32095])
def test_a_servers_own_error_of_a_not_sent_code_is_a_call_sent(code: int) -> None:
    """The codes this client answers a call it did not send with (no connection, a session
    the server no longer knows) lie in JSON-RPC's range for servers' own errors. A server
    refusing a call with one of them, having read it (and maybe acted), was taken for a call
    never sent: Unreachable, and a tool that is not idempotent was called again by its
    horis:retries. Only an error this client made up says nothing was sent."""
    import asyncio

    from mcp import MCPError
    from rdflib import URIRef

    from horismos import NotSent
    from horismos._attempt import Attempt
    from horismos._bindings.mcp import McpSession
    from horismos._model import McpServer

    class Client:
        async def call_tool(self, name: str, arguments: dict) -> None:
            raise MCPError(code, "the server's own refusal")

    session = McpSession(McpServer(URIRef("urn:x:s"), "s", url="http://127.0.0.1:9/mcp"), None)
    session._client = Client()  # type: ignore[assignment]

    async def call() -> Attempt:
        with Attempt() as attempt:
            with pytest.raises(ToolError) as raised:
                await session.call("record", {})
            assert not isinstance(raised.value, NotSent), raised.value
        return attempt

    assert asyncio.run(call()).sent
