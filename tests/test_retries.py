"""Retries never repeat a non-idempotent action (issue 12, item 5).

``horis:retries`` repeats a call of a tool that is not idempotent only when the failure proves
the call never reached the tool (the binding raised :class:`NotSent`: a refused connection, an
MCP server that does not start). A timeout or lost connection after sending is
:class:`OutcomeUnknown` and takes ``horis:onError``; an error the tool answered with is not
retried either. Each binding kind, against real servers; an idempotent tool still retries.
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import pytest
from forked import horismos_forked
from listening import mcp_http_server
from rdflib import Namespace
from servers.http_server import serve

from horismos import Agent, NotSent, OutcomeUnknown, ToolError, ToolTimeout, World, replay

EX = Namespace("http://example.org/clinic#")
SERVER = Path(__file__).parent / "servers" / "mcp_server.py"

PREFIXES = """\
@prefix :      <http://example.org/clinic#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .
:Patient a owl:Class .
"""
WORLD = PREFIXES + ":p1 a :Patient .\n"


def tool(name: str, binding: str, *, timeout: str = "300ms", retries: int = 2,
         idempotent: bool = False) -> str:
    return f"""
:{name} a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:subject "patient" ;
                   horis:asserts [ horis:property :queueRef ; horis:type xsd:string ] ] ;
    horis:binding "{binding}" ; horis:timeout "{timeout}" ;
    horis:retries {retries} ; horis:idempotent {str(idempotent).lower()} .
"""


def flow(*steps: str) -> str:
    """Steps in order, each going on to the next whatever happens; :Handled ends the flow."""
    out = [f":Flow a horis:Workflow ; horis:focusType :Patient ; horis:start :{steps[0]} ."]
    for name, nxt in zip(steps, [*steps[1:], "Handled"], strict=True):
        out.append(f":{name} a horis:ActionStep ; horis:tool :t.{name} ;\n"
                   f'    horis:bind [ horis:arg "patient" ; horis:var "this" ] ;\n'
                   f"    horis:next :{nxt} ; horis:onError :{nxt} .")
    out.append(":Handled a horis:WaitStep ; horis:reason \"an operator looks\" ; "
               "horis:wake horis:OperatorInput ; horis:delivery horis:Silent .")
    return "\n".join(out) + "\n"


def run(tmp_path: Path, defs: str, tools: dict[str, Any] | None = None):
    (tmp_path / "defs.ttl").write_text(PREFIXES + defs, encoding="utf-8")
    (tmp_path / "world.ttl").write_text(WORLD, encoding="utf-8")
    agent = Agent.from_files(tmp_path / "defs.ttl", tools=tools)
    world = World.from_files(tmp_path / "world.ttl")
    trace = tmp_path / "trace.jsonl"
    result = agent.run(world, focus=EX.p1, trace=trace)
    return {s.step.fragment: s for s in result.instances[0].steps}, agent, trace


def test_python_non_idempotent_timeout_is_called_once_and_takes_on_error(tmp_path) -> None:
    calls: list[Any] = []

    async def book(patient: Any) -> dict[str, Any]:
        calls.append(patient)
        await asyncio.sleep(10)
        return {"queueRef": "late"}

    steps, agent, trace = run(tmp_path, tool("t.Book", "python:book") + flow("Book"),
                              {"book": book})
    book_step = steps["Book"]
    assert calls == [EX.p1] and book_step.attempts == 1
    assert isinstance(book_step.error, OutcomeUnknown)
    assert isinstance(book_step.error.cause, ToolTimeout)
    assert "not called again" in str(book_step.error)
    assert book_step.next == EX.Handled   # horis:onError
    assert replay(trace, agent).diverged is False


def test_python_tool_that_raised_is_not_retried_but_an_idempotent_one_is(tmp_path) -> None:
    calls: list[str] = []

    def failing(name: str):
        def call(patient: Any) -> dict[str, Any]:
            calls.append(name)
            raise ConnectionError("the ledger hiccupped")
        return call

    defs = (tool("t.Pay", "python:pay") + tool("t.Look", "python:look", idempotent=True)
            + flow("Pay", "Look"))
    steps, _, _ = run(tmp_path, defs, {"pay": failing("pay"), "look": failing("look")})
    assert calls == ["pay", "look", "look", "look"]
    assert type(steps["Pay"].error) is ToolError and steps["Pay"].attempts == 1
    assert steps["Look"].attempts == 3


def test_http_timeout_after_sending_reaches_the_server_once(tmp_path) -> None:
    httpd, base, received = serve()
    try:
        # 1 s: the request is surely sent by then, even on a busy machine; /slow takes 2 s
        steps, agent, trace = run(tmp_path, tool("t.Book", f"{base}/slow", timeout="1s")
                                  + flow("Book"))
    finally:
        httpd.shutdown()
    assert [p for p, _, _ in received.requests] == ["/slow"]
    assert steps["Book"].attempts == 1
    assert isinstance(steps["Book"].error, OutcomeUnknown)
    assert replay(trace, agent).diverged is False


def test_http_refused_connection_was_never_sent_so_it_is_retried(tmp_path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    steps, agent, trace = run(tmp_path,
                              tool("t.Book", f"http://127.0.0.1:{port}/book") + flow("Book"))
    assert steps["Book"].attempts == 3
    assert isinstance(steps["Book"].error, NotSent)
    assert "ConnectError" in str(steps["Book"].error)
    assert replay(trace, agent).diverged is False


MCP = f""":clinic a horis:McpServer ; horis:command "python" ;
    horis:args ( "{SERVER.as_posix()}" ) ;
    horis:env [ horis:name "HORIS_TEST_REFUSE_IF" ; horis:value "REFUSE" ] .
"""


def test_mcp_timeout_and_dying_server_are_not_retried(tmp_path) -> None:
    defs = (MCP + tool("t.Slow", "mcp://clinic/slow") + tool("t.Die", "mcp://clinic/die")
            + tool("t.Assign", "mcp://clinic/text_json", timeout="10s") + flow("Slow", "Die",
                                                                            "Assign"))
    steps, _, _ = run(tmp_path, defs)
    for name in ("Slow", "Die"):
        assert steps[name].attempts == 1, name
        assert isinstance(steps[name].error, OutcomeUnknown), name
    assert "closed the connection during the call" in str(steps["Die"].error)
    assert steps["Assign"].status == "completed"   # a new session serves the next step


@pytest.mark.parametrize("answers", ["--sse", "--json"])
def test_a_streamable_http_server_lost_mid_call_is_not_retried(tmp_path, answers) -> None:
    """Over streamable HTTP the server acts and its connection drops before the answer (the
    process exits in the call): the call is not made again though horis:retries allows 2 —
    a retry would have found the port closed, a NotSent that let the next try go out."""
    with mcp_http_server(answers) as url:
        defs = (f':clinic a horis:McpServer ; horis:url "{url}" .\n'
                + tool("t.Die", "mcp://clinic/die", timeout="10s") + flow("Die"))
        steps, _, _ = run(tmp_path, defs)
    assert steps["Die"].attempts == 1
    assert isinstance(steps["Die"].error, OutcomeUnknown), steps["Die"].error


def test_mcp_server_that_does_not_start_was_never_sent_so_it_is_retried(tmp_path) -> None:
    refuse = tmp_path / "REFUSE"

    def stop_starting(patient: Any) -> dict[str, Any]:  # the server restarts no more
        refuse.write_text("")
        return {"queueRef": "ok"}

    defs = (MCP + tool("t.Stop", "python:stop", idempotent=True)
            + tool("t.Die", "mcp://clinic/die", retries=0)
            + tool("t.Assign", "mcp://clinic/text_json", timeout="20s") + flow("Stop", "Die",
                                                                            "Assign"))
    steps, _, _ = run(tmp_path, defs, {"stop": stop_starting})
    assert isinstance(steps["Die"].error, OutcomeUnknown)
    assign = steps["Assign"]
    assert assign.attempts == 3
    assert isinstance(assign.error, NotSent)
    assert "refusing to start" in str(assign.error)


@pytest.mark.parametrize("idempotent", [False, True])
def test_validate_warns_about_retries_on_a_non_idempotent_tool(tmp_path, idempotent) -> None:

    (tmp_path / "defs.ttl").write_text(
        PREFIXES + tool("t.Book", "python:book", idempotent=idempotent) + flow("Book"),
        encoding="utf-8")
    p = horismos_forked(tmp_path, "validate", "defs.ttl", timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    warned = "horis:retries" in p.stdout + p.stderr
    assert warned is not idempotent
    if warned:
        text = p.stdout + p.stderr
        assert "never reached" in text and "not idempotent" in text
