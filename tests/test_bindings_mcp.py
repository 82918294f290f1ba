"""MCP bindings against real servers: the test server (SDK ``MCPServer``) over stdio and over
streamable HTTP, the third-party ``mcp-server-time`` package, and servers that fail to start or
die in the middle of a call. No mocks: every call crosses a process boundary.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from forked import Popen, horismos_forked
from listening import MCP_SERVER, free_port, mcp_http_server
from rdflib import XSD, Literal, Namespace, URIRef

from horismos import (
    Agent,
    OutcomeUnknown,
    Run,
    ToolError,
    Unreachable,
    UnreadableAnswer,
    Unstartable,
    World,
    replay,
)
from horismos._bindings.mcp import McpSessions, input_problems, mcp_server
from horismos._model import Arg, McpServer, Tool
from horismos._outcomes import decode, outcome_of, play

SERVER = MCP_SERVER
EX = Namespace("http://example.org/mcp#")

PREFIXES = """\
@prefix :      <http://example.org/mcp#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Patient a owl:Class .
:AcuityLevel a owl:Class .
:Office a owl:Class .
:acuity a owl:ObjectProperty .
:timezone a owl:DatatypeProperty .
:receivedArgs a owl:DatatypeProperty .
:localTime a owl:DatatypeProperty .
"""

CLINIC = f'''
:clinic a horis:McpServer ; horis:command "python" ; horis:args ( "{SERVER.as_posix()}" ) .
'''
CLINIC_ENV = CLINIC.replace(" .\n", """ ;
    horis:env [ horis:name "CLINIC_GREETING" ; horis:fromEnv "HORIS_TEST_GREETING" ] .
""")


def tool(name: str, remote: str, effect: str = "", *, args: str = "", server: str = "clinic",
         timeout: str = "5s") -> str:
    """A tool taking ``patient`` (and ``args``), bound to ``mcp://server/remote``."""
    eff = f'horis:effect [ horis:subject "patient" ; {effect} ] ;' if effect else ""
    return f"""
:{name} a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] {args} ] ;
    {eff}
    horis:binding "mcp://{server}/{remote}" ;
    horis:timeout "{timeout}" .
"""


def step(name: str, tool_name: str, *, next: str | None = None, on_error: str | None = None,
         requires: str | None = None) -> str:
    parts = [f":{name} a horis:ActionStep", f"horis:tool :{tool_name}",
             'horis:bind [ horis:arg "patient" ; horis:var "this" ]']
    if requires:
        parts.append(f'horis:requires "{requires}"')
    if next:
        parts.append(f"horis:next :{next}")
    if on_error:
        parts.append(f"horis:onError :{on_error}")
    return " ;\n    ".join(parts) + " .\n"


def workflow(start: str) -> str:
    return f":Flow a horis:Workflow ; horis:focusType :Patient ; horis:start :{start} .\n"


WARD = """
:urgent a :AcuityLevel .
:routine a :AcuityLevel .
:p1 a :Patient ; :acuity :urgent ; :level 3 ; :urgent true .
:p2 a :Patient ; :acuity :routine ; :level 1 ; :urgent false .
"""


def load(folder: Path, defs: str, world: str = WARD, **kw: Any) -> tuple[Agent, World]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "defs.ttl").write_text(PREFIXES + defs, encoding="utf-8")
    (folder / "world.ttl").write_text(PREFIXES + world, encoding="utf-8")
    return (Agent.from_files(folder / "defs.ttl", **kw),
            World.from_files(folder / "world.ttl"))


def steps_by_name(run: Run, instance: int = 0) -> dict[str, Any]:
    return {s.step.fragment: s for s in run.instances[instance].steps}


def value(world: World, node: URIRef, prop: URIRef) -> Any:
    values = list(world.graph.objects(node, prop))
    assert len(values) <= 1, values
    return values[0].toPython() if values else None


# -- one stdio run through every kind of answer, shared by the tests below ----------------------

MAIN = CLINIC_ENV + "".join([
    tool("t.assign", "assign", 'horis:asserts [ horis:property :queueRef ; horis:type xsd:string ]',
         args='; horis:arg [ horis:name "queue" ; horis:type :AcuityLevel ]'),
    tool("t.echo", "echo", 'horis:asserts [ horis:property :receivedArgs ; horis:key "received" ; '
         'horis:type xsd:string ]'),
    tool("t.greet", "greeting",
         'horis:asserts [ horis:property :greeting ; horis:type xsd:string ]'),
    tool("t.text", "text_json", 'horis:asserts [ horis:property :textRef ; horis:key "queueRef" ; '
         'horis:type xsd:string ]'),
    tool("t.score", "score", 'horis:asserts [ horis:property :score ; horis:type xsd:integer ]',
         args='; horis:arg [ horis:name "level" ; horis:type xsd:integer ] ; '
              'horis:arg [ horis:name "urgent" ; horis:type xsd:boolean ]'),
    tool("t.leaky", "leaky", 'horis:asserts [ horis:property :leakyRef ; horis:key "queueRef" ; '
         'horis:type xsd:string ]'),
    tool("t.fail", "fail", 'horis:asserts [ horis:property :queueRef ; horis:type xsd:string ]'),
    tool("t.slow", "slow", 'horis:asserts [ horis:property :queueRef ; horis:type xsd:string ]',
         timeout="300ms"),
    tool("t.prose", "prose", 'horis:asserts [ horis:property :queueRef ; horis:type xsd:string ]'),
    tool("t.noop", "noop", 'horis:asserts [ horis:property :doneAt ; horis:value horis:now ]'),
    workflow("Assign"),
    step("Assign", "t.assign", requires="?this :acuity ?queue .", next="Echo"),
    step("Echo", "t.echo", next="Greet"),
    step("Greet", "t.greet", next="Text"),
    step("Text", "t.text", next="Score"),
    step("Score", "t.score", requires="?this :level ?level ; :urgent ?urgent .", next="Leaky"),
    step("Leaky", "t.leaky", next="Fail", on_error="Fail"),
    step("Fail", "t.fail", next="Slow", on_error="Slow"),
    step("Slow", "t.slow", next="Prose", on_error="Prose"),
    step("Prose", "t.prose", next="Done", on_error="Done"),
    step("Done", "t.noop"),
])


@pytest.fixture(scope="module")
def stdio(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, World, Path]:
    folder = tmp_path_factory.mktemp("stdio")
    agent, world = load(folder, MAIN)
    trace = folder / "trace.jsonl"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HORIS_TEST_GREETING", "hello from the environment")
        run = agent.run(world, all=True, trace=trace)
    return run, world, trace


def test_every_instance_completes_taking_on_error_where_the_server_misbehaves(stdio) -> None:
    run, _, _ = stdio
    assert run.status == "completed", run.error
    assert [len(i.steps) for i in run.instances] == [10, 10]


def test_declared_fields_land_and_extra_output_schema_fields_are_narrowed(stdio) -> None:
    run, world, trace = stdio
    ref = value(world, EX.p1, EX.queueRef)
    assert ref.startswith("Q-urgent-")
    assign = steps_by_name(run)["Assign"]
    assert assign.status == "completed"
    assert assign.result == [{"queueRef": ref}]
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    narrowed = [e["narrowed"] for e in events if e["type"] == "step"
                and e["step"] == str(EX.Assign)]
    assert narrowed == [["internal"], ["internal"]]
    assert "server bookkeeping" not in trace.read_text()


def test_one_session_serves_every_step_and_instance(stdio) -> None:
    _, world, _ = stdio
    # the server numbers its calls and names its process: one process, calls counted on
    pid1, n1 = value(world, EX.p1, EX.queueRef).split("-")[2:]
    pid2, n2 = value(world, EX.p2, EX.queueRef).split("-")[2:]
    assert pid1 == pid2
    assert (int(n1), int(n2)) == (1, 2)


def test_exactly_the_declared_arguments_are_sent_iris_as_strings(stdio) -> None:
    _, world, _ = stdio
    assert json.loads(value(world, EX.p1, EX.receivedArgs)) == {"patient": str(EX.p1)}


def test_literals_travel_as_json_values(stdio) -> None:
    _, world, _ = stdio
    assert value(world, EX.p1, EX.score) == 6   # level 3 (integer) doubled: urgent is boolean
    assert value(world, EX.p2, EX.score) == 1


def test_env_from_horismos_environment_reaches_the_server(stdio) -> None:
    _, world, _ = stdio
    assert value(world, EX.p1, EX.greeting) == "hello from the environment"


def test_json_object_in_text_content_is_the_result(stdio) -> None:
    run, world, _ = stdio
    assert steps_by_name(run)["Text"].status == "completed"
    assert value(world, EX.p1, EX.textRef) == "Q-from-text"


def test_field_outside_the_effect_without_output_schema_is_rejected(stdio) -> None:
    run, world, _ = stdio
    leaky = steps_by_name(run)["Leaky"]
    assert leaky.status == "rejected"
    assert "diagnosis" in str(leaky.error)
    assert value(world, EX.p1, EX.leakyRef) is None


def test_is_error_result_is_a_tool_error(stdio) -> None:
    fail = steps_by_name(stdio[0])["Fail"]
    assert fail.status == "failed"
    assert isinstance(fail.error, ToolError)
    assert "the queue service is down" in str(fail.error)


def test_slow_answer_times_out_and_the_session_keeps_serving(stdio) -> None:
    steps = steps_by_name(stdio[0])
    assert steps["Slow"].status == "timed_out"
    assert steps["Done"].status == "completed"


def test_prose_instead_of_json_is_an_answer_that_may_have_acted(stdio) -> None:
    """Not an error result: the server did what the tool does, and said so in prose. Held
    in doubt as a timeout is (tests/test_bindings_command.py, test_bindings_http.py)."""
    prose = steps_by_name(stdio[0])["Prose"]
    assert prose.status == "failed" and type(prose.error) is UnreadableAnswer
    assert "neither structured content nor a JSON object" in str(prose.error)


# -- narrowing the input schema: the test server's real schemas, read over a real session ------

@pytest.fixture(scope="module")
def remote_tools() -> dict[str, Any]:
    server = McpServer(URIRef("urn:test:clinic"), "clinic", sys.executable, (str(SERVER),))

    async def read() -> dict[str, Any]:
        sessions = McpSessions({"clinic": server})
        try:
            return dict((await sessions.get("clinic")).tools)
        finally:
            await sessions.aclose()

    return asyncio.run(read())


def declared(*args: tuple[Any, ...]) -> Tool:
    """A tool whose arguments are ``Arg(name, type, is_class, optional=False, sent=True)``."""
    return Tool(URIRef("urn:test:t"), "t", None, None,
                tuple(Arg(*a) for a in args), None, "mcp://clinic/x", 5.0)


PATIENT = ("patient", EX.Patient, True)


@pytest.mark.parametrize(("remote", "args", "problem"), [
    ("score", [PATIENT, ("level", XSD.integer, False)], None),
    ("score", [PATIENT, ("level", XSD.int, False), ("urgent", XSD.boolean, False)], None),
    ("score", [PATIENT, ("level", XSD.string, False)],
     'argument "level" would be sent as JSON string but the server takes integer'),
    ("score", [PATIENT, ("level", XSD.decimal, False)],
     'argument "level" would be sent as JSON number but the server takes integer'),
    ("score", [PATIENT, ("level", EX.Level, True)], 'sent as JSON string'),
    ("score", [PATIENT, ("level", XSD.integer, False), ("urgent", XSD.string, False)],
     "takes boolean"),
    ("score", [PATIENT], 'it requires "level", which horis:takes does not declare'),
    ("score", [PATIENT, ("level", XSD.integer, False, True)],
     'it requires "level", which horis:takes declares horis:optional true'),
    ("needs_ward", [PATIENT, ("ward_code", XSD.string, False)],
     'it has no argument "ward_code" (it takes: "patient", "ward")'),
    # horis:sent false: never sent, so the schema need not take it ...
    ("needs_ward", [PATIENT, ("ward", XSD.string, False), ("office", EX.Office, True, False,
                                                           False)], None),
    ("score", [PATIENT, ("level", XSD.integer, False), ("bonus", XSD.integer, False, False,
                                                        False)], None),
    # ... but one the server requires must be sent
    ("score", [PATIENT, ("level", XSD.integer, False, False, False)],
     'it requires "level", which horis:takes declares horis:sent false'),
])
def test_input_schema_must_take_every_declared_argument(remote_tools, remote, args,
                                                        problem) -> None:
    problems = input_problems(declared(*args), remote_tools[remote].input_schema)
    if problem is None:
        assert problems == []
    else:
        assert any(problem in p for p in problems), problems


def test_schema_that_cannot_take_the_arguments_is_refused_before_any_call(tmp_path) -> None:
    defs = CLINIC + tool("t.ward", "needs_ward", args='; horis:arg [ horis:name "ward_code" ; '
                         'horis:type xsd:string ]') + workflow("W") + step(
        "W", "t.ward", requires="?this :ward_code ?ward_code .")
    agent, world = load(tmp_path, defs, WARD + ':p1 :ward_code "W1" .')
    before = world.canonical()
    with pytest.raises(ToolError) as e:
        agent.run(world, focus=EX.p1)
    text = str(e.value)
    assert "refused before any call" in text
    assert 'no argument "ward_code"' in text and 'requires "ward"' in text
    assert world.canonical() == before


# -- servers that are not there, tools that are not there --------------------------------------

def test_server_that_cannot_start_is_an_error_naming_server_and_tool(tmp_path) -> None:
    defs = """
:broken a horis:McpServer ; horis:command "python" ;
    horis:args ( "-c" "import sys; sys.exit('no EHR configured')" ) .
""" + tool("t.assign", "assign", server="broken") + workflow("A") + step("A", "t.assign")
    agent, world = load(tmp_path, defs)
    with pytest.raises(ToolError) as e:
        agent.run(world, focus=EX.p1)
    text = str(e.value)
    assert 'MCP server "broken"' in text and "t.assign" in text and "mcp://broken/assign" in text
    assert "could not start" in text and "no EHR configured" in text


def test_program_that_does_not_exist(tmp_path) -> None:
    defs = ':gone a horis:McpServer ; horis:command "no-such-mcp-server-xyz" .\n' + tool(
        "t.assign", "assign", server="gone") + workflow("A") + step("A", "t.assign")
    agent, world = load(tmp_path, defs)
    with pytest.raises(ToolError, match="no such program: no-such-mcp-server-xyz"):
        agent.run(world, focus=EX.p1)


def test_a_server_declared_so_it_cannot_start_is_said_at_its_declaration_by_run(
        tmp_path) -> None:
    # validate --connect said tools.ttl:LINE of the server's horis:command; run said the same
    # words with no file nor line, though the fix (a module name misspelt in horis:args) is
    # one line of the Turtle. A server that is down is not a line's fault, and stays unsaid.
    defs = (':gone a horis:McpServer ; horis:command "python" ;\n'
            '    horis:args ( "-m" "no_such_mcp_module_xyz" ) .\n'
            ':down a horis:McpServer ; horis:url "http://127.0.0.1:9/mcp" .\n')
    for server in ("gone", "down"):
        folder = tmp_path / server
        load(folder, defs + tool("t.assign", "assign", server=server) + workflow("A")
             + step("A", "t.assign"))
        line = (PREFIXES + defs).splitlines().index(
            ':gone a horis:McpServer ; horis:command "python" ;') + 1
        p = horismos_forked(folder, "run", "defs.ttl", "--world", "world.ttl", "--focus",
                            ":p1", timeout=120)
        assert p.returncode == 2, p.stdout + p.stderr
        said = next(x for x in p.stderr.splitlines() if x.startswith("horismos run: error:"))
        if server == "gone":
            assert said.startswith(
                f"horismos run: error: defs.ttl:{line}: t.assign (mcp://gone/assign): MCP "
                'server "gone" (python -m no_such_mcp_module_xyz) could not start'), said
            assert "No module named no_such_mcp_module_xyz" in said
        else:
            assert said.startswith(
                'horismos run: error: t.assign (mcp://down/assign): MCP server "down"'), said


def test_a_server_whose_environment_variable_is_unset_is_said_at_its_declaration_by_run(
        tmp_path, monkeypatch) -> None:
    # The variable its declaration reads is unset: it cannot start, whenever it is tried,
    # and the fix is an `export` or the declaration; run said it with no file nor line (its
    # words lacked "could not start", which run read to tell it from a server that is down).
    defs = (':ward a horis:McpServer ; horis:command "python" ;\n'
            '    horis:args ( "-m" "ward_server" ) ;\n'
            '    horis:env [ horis:name "TOKEN" ; horis:fromEnv "HORISMOS_NO_SUCH_VAR" ] .\n')
    monkeypatch.delenv("HORISMOS_NO_SUCH_VAR", raising=False)
    load(tmp_path, defs + tool("t.assign", "assign", server="ward") + workflow("A")
         + step("A", "t.assign"))
    line = (PREFIXES + defs).splitlines().index(
        ':ward a horis:McpServer ; horis:command "python" ;') + 1
    p = horismos_forked(tmp_path, "run", "defs.ttl", "--world", "world.ttl", "--focus", ":p1",
                        timeout=120)
    assert p.returncode == 2, p.stdout + p.stderr
    said = next(x for x in p.stderr.splitlines() if x.startswith("horismos run: error:"))
    assert said.startswith(
        f"horismos run: error: defs.ttl:{line}: t.assign (mcp://ward/assign)"), said
    assert "HORISMOS_NO_SUCH_VAR" in said and "export HORISMOS_NO_SUCH_VAR=" in said


def test_a_server_that_cannot_start_replays_as_the_class_it_was_raised() -> None:
    # A stdio server that died mid-run and did not start again fails its step Unstartable;
    # replay brought the recorded class back as a plain ToolError, and diverged there.
    recorded = outcome_of(Unstartable('MCP server "ward" (python -m ward) could not start'))
    assert recorded["sent"] is False
    with pytest.raises(Unstartable, match="could not start"):
        play(recorded)


def test_tool_the_server_does_not_have(tmp_path) -> None:
    defs = CLINIC + tool("t.nope", "nope") + workflow("A") + step("A", "t.nope")
    agent, world = load(tmp_path, defs)
    with pytest.raises(ToolError) as e:
        agent.run(world, focus=EX.p1)
    text = str(e.value)
    assert 'MCP server "clinic"' in text and 'has no tool "nope"' in text
    assert "it offers: assign, die, echo" in text


def test_undeclared_server_is_refused_naming_the_declared_ones(tmp_path) -> None:
    defs = CLINIC + tool("t.x", "assign", server="elsewhere") + workflow("A") + step("A", "t.x")
    agent, world = load(tmp_path, defs)
    with pytest.raises(ToolError, match=r'no MCP server named "elsewhere".*declared: clinic'):
        agent.run(world, focus=EX.p1)


def test_missing_environment_variable_for_the_server_is_named(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("HORIS_TEST_GREETING", raising=False)
    defs = CLINIC_ENV + tool("t.greet", "greeting") + workflow("A") + step("A", "t.greet")
    agent, world = load(tmp_path, defs)
    with pytest.raises(ToolError, match="environment variable HORIS_TEST_GREETING"):
        agent.run(world, focus=EX.p1)


def test_server_dying_in_the_middle_of_a_call_takes_on_error_and_a_new_session_serves(
        tmp_path) -> None:
    """The server exits mid-call: the step fails, in doubt (not idempotent), saying the
    connection closed and what the server said last; the run goes on at horis:onError, where
    a new session of the same server serves. That session's start (a fresh interpreter
    importing the SDK) is not the next call's: its tool gets the default 5 s, which the start
    alone once ran past on a loaded machine ("t.assign did not answer within 5s"), when it
    counted against the call (see test_mcp_slow_start)."""
    defs = "".join([
        tool("t.die", "die", 'horis:asserts [ horis:property :queueRef ; horis:type xsd:string ]'),
        tool("t.assign", "assign",
             'horis:asserts [ horis:property :queueRef ; horis:type xsd:string ]',
             args='; horis:arg [ horis:name "queue" ; horis:type :AcuityLevel ]'),
        workflow("Die"), step("Die", "t.die", next="After", on_error="After"),
        step("After", "t.assign", requires="?this :acuity ?queue ."),
    ])
    # Passed from Python this time, as a dict
    agent, world = load(tmp_path, defs, mcp_servers={
        "clinic": {"command": sys.executable, "args": [str(SERVER)]}})
    run = agent.run(world, focus=EX.p1)
    steps = steps_by_name(run)
    assert steps["Die"].status == "failed"
    assert isinstance(steps["Die"].error, OutcomeUnknown), steps["Die"].error
    assert "closed the connection during the call" in str(steps["Die"].error)
    assert "dying in the middle of a call" in str(steps["Die"].error)
    assert run.status == "completed", run.error
    assert value(world, EX.p1, EX.queueRef).startswith("Q-urgent-")


def test_a_servers_own_error_minus_32000_is_said_as_its_answer_and_held_in_doubt(
        tmp_path) -> None:
    """A server answering a call with its own JSON-RPC error -32000 (implementations use it
    for any server error) read as the SDK's closed connection: "closed the connection during
    the call", while the server was up and had said why. Still held in doubt (the code does
    not tell the two apart, and in doubt is the safe side), the error now says what the
    server answered."""
    defs = "".join([
        tool("t.locked", "locked",
             'horis:asserts [ horis:property :queueRef ; horis:type xsd:string ]'),
        tool("t.assign", "assign",
             'horis:asserts [ horis:property :queueRef ; horis:type xsd:string ]',
             args='; horis:arg [ horis:name "queue" ; horis:type :AcuityLevel ]'),
        workflow("Locked"), step("Locked", "t.locked", next="After", on_error="After"),
        step("After", "t.assign", requires="?this :acuity ?queue ."),
        CLINIC,
    ])
    agent, world = load(tmp_path, defs)
    run = agent.run(world, focus=EX.p1)
    steps = steps_by_name(run)
    said = str(steps["Locked"].error)
    assert steps["Locked"].status == "failed"
    assert isinstance(steps["Locked"].error, OutcomeUnknown), said  # held in doubt, as before
    assert ('answered the call to "locked" with its own error: the ledger is locked by another '
            "clerk (MCP error -32000") in said, said
    assert "closed the connection" not in said, said
    assert run.status == "completed", run.error  # onError; the same session serves on
    assert value(world, EX.p1, EX.queueRef).startswith("Q-urgent-")

def test_python_server_spec_is_checked() -> None:
    from horismos import UsageError

    with pytest.raises(UsageError, match="exactly one of command="):
        mcp_server("x", {"command": "python", "url": "http://127.0.0.1:1/mcp"})
    with pytest.raises(UsageError, match="unknown key"):
        mcp_server("x", {"cmd": "python"})
    assert mcp_server("x", {"url": "http://h/mcp"}).url == "http://h/mcp"


# -- streamable HTTP -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def http_server() -> Iterator[str]:
    with mcp_http_server() as url:
        yield url


@pytest.fixture(scope="module")
def token_server() -> Iterator[str]:
    """A server that answers 401 unless given ``Authorization: Bearer s3cret`` (its
    WARD_TOKEN): one a module, the tests that call it only ask it."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("WARD_TOKEN", "s3cret")  # read by the server as it starts
        with mcp_http_server("--token", "WARD_TOKEN") as url:
            env.delenv("WARD_TOKEN")
            yield url


def test_streamable_http_server_from_python(tmp_path, http_server) -> None:
    defs = "".join([
        tool("t.assign", "assign",
             'horis:asserts [ horis:property :queueRef ; horis:type xsd:string ]',
             args='; horis:arg [ horis:name "queue" ; horis:type :AcuityLevel ]', server="remote"),
        tool("t.echo", "echo", 'horis:asserts [ horis:property :receivedArgs ; horis:key '
             '"received" ; horis:type xsd:string ]', server="remote"),
        workflow("Assign"),
        step("Assign", "t.assign", requires="?this :acuity ?queue .", next="Echo"),
        step("Echo", "t.echo"),
    ])
    agent, world = load(tmp_path, defs, mcp_servers={"remote": {"url": http_server}})
    run = agent.run(world, all=True)
    assert run.status == "completed", run.error
    assert value(world, EX.p2, EX.queueRef).startswith("Q-routine-")
    assert json.loads(value(world, EX.p2, EX.receivedArgs)) == {"patient": str(EX.p2)}
    assert [e["narrowed"] for e in run.trace.events
            if e["type"] == "step" and e["step"] == str(EX.Assign)] == [["internal"]] * 2


def test_streamable_http_server_declared_in_turtle(tmp_path, http_server) -> None:
    defs = f':remote a horis:McpServer ; horis:url "{http_server}" .\n' + tool(
        "t.score", "score", 'horis:asserts [ horis:property :score ; horis:type xsd:integer ]',
        args='; horis:arg [ horis:name "level" ; horis:type xsd:integer ]', server="remote"
    ) + workflow("S") + step("S", "t.score", requires="?this :level ?level .")
    agent, world = load(tmp_path, defs)
    assert agent.run(world, focus=EX.p1).status == "completed"
    assert value(world, EX.p1, EX.score) == 3


def test_a_remote_server_gets_its_declared_headers_from_the_environment(
        tmp_path, monkeypatch, token_server) -> None:
    # horis:header on a horis:url server was read by nothing: a server wanting a bearer token
    # answered 401, and the run could not start ("could not start: Server returned an error").
    defs = (f':remote a horis:McpServer ; horis:url "{token_server}" ;\n'
            '    horis:header [ horis:name "Authorization" ; horis:fromEnv "REMOTE_AUTH" ] .\n'
            + tool("t.score", "score",
                   'horis:asserts [ horis:property :score ; horis:type xsd:integer ]',
                   args='; horis:arg [ horis:name "level" ; horis:type xsd:integer ]',
                   server="remote")
            + workflow("S") + step("S", "t.score", requires="?this :level ?level ."))
    agent, world = load(tmp_path, defs)
    monkeypatch.setenv("REMOTE_AUTH", "Bearer wrong")
    with pytest.raises(ToolError, match="could not start"):
        agent.run(world, focus=EX.p1)
    monkeypatch.setenv("REMOTE_AUTH", "Bearer s3cret")
    agent, world = load(tmp_path, defs)
    assert agent.run(world, focus=EX.p1).status == "completed"
    assert value(world, EX.p1, EX.score) == 3


def test_unreachable_url_is_an_error_naming_server_and_tool(tmp_path) -> None:
    port = free_port()  # nothing listens here once its socket closed
    defs = f':remote a horis:McpServer ; horis:url "http://127.0.0.1:{port}/mcp" .\n' + tool(
        "t.assign", "assign", server="remote") + workflow("A") + step("A", "t.assign")
    agent, world = load(tmp_path, defs)
    with pytest.raises(ToolError, match=r't\.assign .*MCP server "remote".*could not start'):
        agent.run(world, focus=EX.p1)


def test_only_a_server_down_is_unreachable(tmp_path, monkeypatch, token_server) -> None:
    """`wake` leaves an instance whose server is Unreachable for its next pass. Every error
    opening a session was one: a wrong token (401) and a header's variable unset too, which
    every pass then tried again for ever. Only a connection refused is; those are not."""
    port = free_port()  # nothing listens here once its socket closed
    defs = f':remote a horis:McpServer ; horis:url "http://127.0.0.1:{port}/mcp" .\n' + tool(
        "t.assign", "assign", server="remote") + workflow("A") + step("A", "t.assign")
    agent, world = load(tmp_path, defs)
    with pytest.raises(Unreachable, match="could not start"):
        agent.run(world, focus=EX.p1)
    defs = (f':remote a horis:McpServer ; horis:url "{token_server}" ;\n'
            '    horis:header [ horis:name "Authorization" ; horis:fromEnv "REMOTE_AUTH" ] .\n'
            + tool("t.assign", "assign", server="remote") + workflow("A")
            + step("A", "t.assign"))
    for token, said in ((None, "REMOTE_AUTH .* is not set"),
                        ("Bearer wrong", "could not start")):
        if token is None:
            monkeypatch.delenv("REMOTE_AUTH", raising=False)
        else:
            monkeypatch.setenv("REMOTE_AUTH", token)
        agent, world = load(tmp_path, defs)
        with pytest.raises(ToolError, match=said) as raised:
            agent.run(world, focus=EX.p1)
        assert not isinstance(raised.value, Unreachable), raised.value


# -- the third-party mcp-server-time package ------------------------------------------------------

TIME = """
:time a horis:McpServer ; horis:command "python" ;
    horis:args ( "-m" "mcp_server_time" "--local-timezone" "UTC" ) .
:OfficeHours a horis:Workflow ; horis:focusType :Office ; horis:start :AskTime .
:AskTime a horis:ActionStep ; horis:tool :clock.now ; horis:requires "?this :timezone ?timezone ." .
"""
OFFICES = ':paris a :Office ; :timezone "Europe/Paris" .\n'


def test_mcp_server_time_is_called_and_its_output_narrowed_to_the_contract(tmp_path) -> None:
    # The tool declares no effect: every field the server's output schema offers is narrowed
    # away, and the trace says which. Nothing lands, the step completes.
    defs = TIME + """
:clock.now a horis:Tool ; horis:binding "mcp://time/get_current_time" ; horis:timeout "10s" ;
    horis:takes [ horis:arg [ horis:name "timezone" ; horis:type xsd:string ] ] .
"""
    agent, world = load(tmp_path, defs, OFFICES)
    before = set(world.graph.predicate_objects(EX.paris))
    run = agent.run(world, focus=EX.paris)
    assert run.status == "completed", run.error
    event = next(e for e in run.trace.events if e["type"] == "step")
    assert event["args"] == [{"timezone": Literal("Europe/Paris").n3()}]
    assert event["narrowed"] == ["datetime", "day_of_week", "is_dst", "timezone"]
    assert [decode(o["returned"]) for o in event["outcomes"]] == [{}]
    assert set(world.graph.predicate_objects(EX.paris)) == before


def test_mcp_server_time_answer_lands_on_a_node_the_server_is_never_sent(tmp_path) -> None:
    # get_current_time(timezone) knows nothing of our IRIs. The office is read from the graph
    # as the effect's subject but declared horis:sent false: the server's schema need not take
    # it (else the tool would be refused before any call), and the answer lands on it.
    defs = TIME.replace('"?this :timezone ?timezone ."', '"?this :timezone ?timezone ." ;\n'
                        '    horis:bind [ horis:arg "office" ; horis:var "this" ]') + """
:clock.now a horis:Tool ; horis:binding "mcp://time/get_current_time" ; horis:timeout "10s" ;
    horis:idempotent true ;
    horis:takes [ horis:arg [ horis:name "office" ; horis:type :Office ; horis:sent false ] ;
                  horis:arg [ horis:name "timezone" ; horis:type xsd:string ] ] ;
    horis:effect [ horis:subject "office" ;
        horis:asserts [ horis:property :localTime ; horis:key "datetime" ;
                        horis:type xsd:dateTime ] ] .
"""
    agent, world = load(tmp_path, defs, OFFICES)
    assert agent.definitions.warnings == []
    run = agent.run(world, focus=EX.paris, trace=tmp_path / "time.jsonl")
    assert run.status == "completed", run.error
    local = value(world, EX.paris, EX.localTime)
    assert isinstance(local, dt.datetime)
    assert local.utcoffset() in (dt.timedelta(hours=1), dt.timedelta(hours=2))  # CET or CEST
    event = next(e for e in run.trace.events if e["type"] == "step")
    # the trace's resolved arguments show both; the server was called with the timezone only
    assert event["args"] == [{"office": EX.paris.n3(), "timezone": Literal("Europe/Paris").n3()}]
    (answer,) = [decode(o["returned"]) for o in event["outcomes"]]
    assert set(answer) == {"datetime"}
    assert event["narrowed"] == ["day_of_week", "is_dst", "timezone"]
    assert local == dt.datetime.fromisoformat(answer["datetime"])
    report = replay(tmp_path / "time.jsonl", agent)  # the recorded answer, the same landing
    assert not report.diverged, str(report)


def test_an_argument_not_sent_never_reaches_the_server(tmp_path) -> None:
    # echo answers with the arguments exactly as they arrived on the wire. "queue" is read from
    # the graph for the tool's own precondition, and is not sent; echo's schema has no "queue".
    defs = CLINIC + tool(
        "t.echo", "echo", 'horis:asserts [ horis:property :receivedArgs ; horis:key "received" ; '
        'horis:type xsd:string ]',
        args='; horis:arg [ horis:name "queue" ; horis:type :AcuityLevel ; horis:sent false ]'
    ).replace("horis:timeout", 'horis:requires "?patient :acuity ?queue ." ;\n    '
              'horis:idempotent true ;\n    horis:timeout'
              ) + workflow("Echo") + step("Echo", "t.echo", requires="?this :acuity ?queue .")
    agent, world = load(tmp_path, defs)
    assert agent.definitions.warnings == []
    run = agent.run(world, focus=EX.p1)
    assert run.status == "completed", run.error
    assert json.loads(value(world, EX.p1, EX.receivedArgs)) == {"patient": str(EX.p1)}
    (event,) = (e for e in run.trace.events if e["type"] == "step")
    assert event["args"] == [{"patient": EX.p1.n3(), "queue": EX.urgent.n3()}]


def test_mcp_server_time_refuses_a_contract_that_misses_a_required_argument(tmp_path) -> None:
    defs = TIME.replace("get_current_time", "convert_time") + """
:clock.now a horis:Tool ; horis:binding "mcp://time/convert_time" ;
    horis:takes [ horis:arg [ horis:name "timezone" ; horis:type xsd:string ] ] .
"""
    agent, world = load(tmp_path, defs, OFFICES)
    with pytest.raises(ToolError) as e:
        agent.run(world, focus=EX.paris)
    text = str(e.value)
    assert 'it has no argument "timezone"' in text
    assert 'it requires "source_timezone"' in text and 'it requires "time"' in text


# -- the example in examples/mcp ---------------------------------------------------------------

def test_the_mcp_example_admits_each_patient_with_a_bed(tmp_path) -> None:
    example = Path(__file__).resolve().parent.parent / "examples" / "mcp"
    ward = Namespace("http://example.org/ward#")
    agent = Agent.from_files(example / "clinic.ttl")
    world = World.from_files(example / "world.ttl")
    run = agent.run(world, all=True, trace=tmp_path / "trace.jsonl")
    assert run.status == "completed", run.error
    assert {value(world, p, ward.bedRef) for p in (ward.ada, ward.brian)} == {
        "CARDIOLOGY-01", "SURGERY-02"}
    assert [e["narrowed"] for e in run.trace.events if e["type"] == "step"] == [
        ["occupancy"], ["occupancy"]]


# -- horismos validate --connect ---------------------------------------------------------------

def test_validate_connect_reports_an_effect_field_the_server_never_returns(tmp_path) -> None:
    # Without horis:key "bed", :bedRef was read from "bedRef": validate --connect said valid,
    # the non-idempotent assign_bed acted, and the gate refused the answer, hinting to declare
    # :bedRef optional (after which nothing would ever land).
    example = Path(__file__).resolve().parent.parent / "examples" / "mcp"
    shutil.copytree(example, tmp_path / "mcp")
    clinic = tmp_path / "mcp" / "clinic.ttl"
    text = clinic.read_text(encoding="utf-8")
    assert text.count('horis:key "bed" ; ') == 1
    clinic.write_text(text.replace('horis:key "bed" ; ', ""), encoding="utf-8")
    line = next(i for i, x in enumerate(clinic.read_text().splitlines(), 1) if ":bedRef ;" in x)
    p = horismos_forked(tmp_path / "mcp", "validate", "--connect", "clinic.ttl", timeout=120)
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stdout.startswith(f"clinic.ttl:{line}: error: :ward.assign_bed: "), p.stdout
    assert "reads 'bedRef' for :bedRef, a field \"assign_bed\" never returns" in p.stdout
    assert 'write horis:key "bed"' in p.stdout


def test_run_refuses_an_effect_field_the_server_never_returns_before_any_call(tmp_path) -> None:
    # What validate --connect calls an error, run refuses before the first call, at the same
    # binding: it called the non-idempotent assign_bed for every patient, each answer refused
    # by the gate and each patient held in doubt.
    example = Path(__file__).resolve().parent.parent / "examples" / "mcp"
    shutil.copytree(example, tmp_path / "mcp")
    clinic = tmp_path / "mcp" / "clinic.ttl"
    clinic.write_text(clinic.read_text(encoding="utf-8").replace('horis:key "bed" ; ', ""),
                      encoding="utf-8")
    server = tmp_path / "mcp" / "ward_server.py"
    text = server.read_text(encoding="utf-8")
    assert text.count("    code = ward.rsplit") == 1
    server.write_text(text.replace(
        "    code = ward.rsplit",
        "    open('calls.log', 'a').write(patient + '\\n')\n    code = ward.rsplit"),
        encoding="utf-8")
    line = next(i for i, x in enumerate(clinic.read_text().splitlines(), 1) if ":bedRef ;" in x)
    said = horismos_forked(tmp_path / "mcp", "validate", "--connect", "clinic.ttl", timeout=120)
    validated = next(x for x in said.stdout.splitlines() if ": error: " in x)
    p = horismos_forked(tmp_path / "mcp", "run", "clinic.ttl", "--world", "world.ttl", "--all",
                        "--out", "after.trig", timeout=120)
    assert p.returncode == 2, p.stdout + p.stderr
    # what validate --connect says, at the assertion's line, in prefixed names: run said it
    # at the effect's line, with full IRIs
    assert f"horismos run: error: clinic.ttl:{line}: :ward.assign_bed: " in p.stderr, p.stderr
    assert "reads 'bedRef' for :bedRef, a field \"assign_bed\" never " \
        "returns" in p.stderr and 'write horis:key "bed"' in p.stderr
    assert validated.replace(": error: ", ": ", 1) in p.stderr
    assert not (tmp_path / "mcp" / "calls.log").exists()
    assert not (tmp_path / "mcp" / "after.trig").exists()


def test_an_effect_field_the_output_schema_types_otherwise_is_refused_before_any_call(
        tmp_path) -> None:
    # A server answering the account it created as an integer ("account": int in its output
    # schema) under an assertion of xsd:string: validate --connect said valid, and every call
    # of the non-idempotent tool acted, then the gate refused its "1"^^xsd:integer.
    example = Path(__file__).resolve().parent.parent / "examples" / "mcp"
    shutil.copytree(example, tmp_path / "mcp")
    server = tmp_path / "mcp" / "ward_server.py"
    text = server.read_text(encoding="utf-8")
    assert text.count("    bed: str") == 1 and text.count('"bed": f"{code}-{n:02d}"') == 1
    server.write_text(text.replace("    bed: str", "    bed: int").replace(
        '"bed": f"{code}-{n:02d}"', '"bed": n').replace(
        "    code = ward.rsplit",
        "    open('calls.log', 'a').write(patient + '\\n')\n    code = ward.rsplit"),
        encoding="utf-8")
    clinic = tmp_path / "mcp" / "clinic.ttl"
    line = next(i for i, x in enumerate(clinic.read_text().splitlines(), 1) if ":bedRef ;" in x)
    p = horismos_forked(tmp_path / "mcp", "validate", "--connect", "clinic.ttl", timeout=120)
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stdout.startswith(f"clinic.ttl:{line}: error: :ward.assign_bed: "), p.stdout
    assert ('ward.assign_bed\'s effect lands "bed" as :bedRef, of xsd:string, but the '
            'server\'s output schema gives "bed" as JSON integer') in p.stdout
    assert "declare the assertion's horis:type xsd:integer" in p.stdout
    run = horismos_forked(tmp_path / "mcp", "run", "clinic.ttl", "--world", "world.ttl",
                          "--all", "--out", "after.trig", timeout=120)
    assert run.returncode == 2, run.stdout + run.stderr
    said = next(x for x in p.stdout.splitlines() if ": error: " in x)
    assert said.replace(": error: ", ": ", 1) in run.stderr, run.stderr  # as validate says it
    assert not (tmp_path / "mcp" / "calls.log").exists()
    assert not (tmp_path / "mcp" / "after.trig").exists()


def test_a_node_argument_the_input_schema_lists_codes_for_is_refused_before_any_call(
        tmp_path) -> None:
    # ward: Literal["cardiology", "surgery"] in the server, a class-typed "ward" in
    # horis:takes: the IRI sent was never one of the codes, validate --connect said valid,
    # and every call came back an error from the server's own argument check.
    example = Path(__file__).resolve().parent.parent / "examples" / "mcp"
    shutil.copytree(example, tmp_path / "mcp")
    server = tmp_path / "mcp" / "ward_server.py"
    text = server.read_text(encoding="utf-8")
    assert text.count("ward: str)") == 1
    server.write_text(text.replace("ward: str)", 'ward: Literal["cardiology", "surgery"])')
                      .replace("from typing import TypedDict",
                               "from typing import Literal, TypedDict"), encoding="utf-8")
    clinic = tmp_path / "mcp" / "clinic.ttl"
    line = next(i for i, x in enumerate(clinic.read_text().splitlines(), 1)
                if "horis:takes [" in x)
    p = horismos_forked(tmp_path / "mcp", "validate", "--connect", "clinic.ttl", timeout=120)
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stdout.startswith(f"clinic.ttl:{line}: error: :ward.assign_bed: "), p.stdout
    assert ('argument "ward" is a node, sent as its IRI, but the server takes only '
            '"cardiology", "surgery", no IRI among them') in p.stdout
    assert 'declare "ward" a string (horis:type xsd:string)' in p.stdout
    run = horismos_forked(tmp_path / "mcp", "run", "clinic.ttl", "--world", "world.ttl",
                          "--all", "--out", "after.trig", timeout=120)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "ward.assign_bed is refused before any call: " in run.stderr
    assert not (tmp_path / "mcp" / "after.trig").exists()


@pytest.mark.parametrize(("schema", "refused"), [
    ({"enum": ["urgent", "routine"]}, True),
    ({"$ref": "#/$defs/Q"}, True),
    ({"anyOf": [{"const": "urgent"}, {"const": "routine"}]}, True),
    ({"enum": ["urn:q:urgent", "urgent"]}, False),      # an IRI among them: some call may fit
    ({"anyOf": [{"enum": ["urgent"]}, {"type": "string"}]}, False),   # any string too
    ({"type": "string"}, False),
])
def test_listed_codes_refuse_only_a_node_argument(schema, refused) -> None:
    input_schema = {"properties": {"patient": {"type": "string"}, "queue": schema},
                    "$defs": {"Q": {"enum": ["urgent", "routine"]}}}
    as_node = input_problems(declared(PATIENT, ("queue", EX.AcuityLevel, True)), input_schema)
    assert any("is a node, sent as its IRI" in p for p in as_node) is refused, as_node
    assert input_problems(declared(PATIENT, ("queue", XSD.string, False)), input_schema) == []


def test_validate_connect_reports_refused_tools_by_file_and_line(tmp_path) -> None:
    defs = CLINIC + "".join([
        tool("t.assign", "assign", args='; horis:arg [ horis:name "queue" ; '
             'horis:type :AcuityLevel ]'),
        tool("t.ward", "needs_ward"),
        tool("t.nope", "nope"),
    ])
    (tmp_path / "defs.ttl").write_text(PREFIXES + defs, encoding="utf-8")
    p = horismos_forked(tmp_path, "validate", "--connect", "defs.ttl", timeout=120)
    assert p.returncode == 1, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    assert any(ln.startswith("defs.ttl:") and ":t.ward:" in ln
               and 'requires "ward"' in ln for ln in lines), p.stdout
    assert any(":t.nope:" in ln and 'has no tool "nope"' in ln for ln in lines), p.stdout
    assert not any(":t.assign:" in ln for ln in lines)
    assert lines[-1] == "invalid: 2 errors"
    ok = horismos_forked(".", "validate", "--connect",
                         str(Path(__file__).resolve().parent.parent / "examples" / "mcp"),
                         timeout=120)
    assert ok.returncode == 0, ok.stdout + ok.stderr


SLOW_CHARGE_SERVER = '''
import os, sys, time
from pathlib import Path
from mcp.server.mcpserver import MCPServer

here = Path(__file__).parent
server = MCPServer("pay")

@server.tool()
def charge(patient: str) -> dict:
    (here / "started").write_text(str(os.getpid()))
    time.sleep(3)
    with open(here / "ledger.txt", "a") as f:
        f.write(f"charge {patient}\\n")
    return {"chargeRef": "CH-1"}

if __name__ == "__main__":
    server.run()
'''


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_stdio_server_does_not_outlive_a_run_killed_mid_call(tmp_path: Path) -> None:
    """``kill -9`` of the run while its MCP server makes a call: the server, in a session of
    its own, finished the call and charged seconds later, after the step was found in doubt,
    when an operator who had checked and seen nothing yet would clear it and call again. It
    dies with the run, so what the call did is done by the time anyone checks."""
    import signal
    import time

    (tmp_path / "pay_server.py").write_text(SLOW_CHARGE_SERVER)
    (tmp_path / "defs.ttl").write_text(PREFIXES + f'''
:pay a horis:McpServer ; horis:command "python" ;
    horis:args ( "{(tmp_path / 'pay_server.py').as_posix()}" ) .
:t.charge a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:subject "patient" ;
                   horis:asserts [ horis:property :chargeRef ; horis:type xsd:string ] ] ;
    horis:binding "mcp://pay/charge" ; horis:timeout "30s" ; horis:idempotent false .
:chargeRef a owl:DatatypeProperty .
:Pay a horis:Workflow ; horis:focusType :Patient ; horis:start :Charge .
:Charge a horis:ActionStep ; horis:tool :t.charge ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
''')
    (tmp_path / "world.ttl").write_text(PREFIXES + ":p1 a :Patient .\n")
    horismos = [sys.executable, "-m", "horismos"]
    store = ("--store", "oxigraph:store")
    loaded = horismos_forked(tmp_path, "load", "world.ttl", *store, timeout=120)
    assert loaded.returncode == 0, loaded.stderr
    run = Popen([*horismos, "run", "defs.ttl", *store, "--focus", ":p1"],
                           cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    started = tmp_path / "started"
    deadline = time.monotonic() + 60  # its pid written (not just the file made)
    while not (started.exists() and started.read_text()) and run.poll() is None and (
            time.monotonic() < deadline):
        time.sleep(0.02)
    assert started.exists() and started.read_text(), "the call never reached the server"
    server = int(started.read_text())
    run.send_signal(signal.SIGKILL)
    run.wait()

    def alive(pid: int) -> bool:
        try:
            return "pay_server" in Path(f"/proc/{pid}/cmdline").read_text()
        except OSError:
            return False

    deadline = time.monotonic() + 5
    while alive(server) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(server)
    time.sleep(3.5)  # past when it would have charged
    assert not (tmp_path / "ledger.txt").exists()
    again = horismos_forked(tmp_path, "run", "defs.ttl", *store, "--focus", ":p1", timeout=120)
    assert again.returncode == 1 and "tools reconcile t.charge" in again.stdout, again.stdout


def test_a_cancelled_arun_leaves_a_concurrent_runs_stdio_server_alone(tmp_path):
    """Two ``arun`` tasks of one agent, their tools bound to one declared stdio server, and
    one of them cancelled in the middle of its call: each run opens its own session (its own
    server process), so the other run's calls go on, its server never closed or started again
    under it. The cancelled call of a tool that is not idempotent is held in doubt: going on
    with its instance (``again=False``) fails the step with ``OutcomeUnknown`` and calls
    nothing again."""
    ledger = tmp_path / "ledger"
    python = Path(sys.executable).as_posix()
    server = (f':clinic a horis:McpServer ; horis:command "{python}" ;'
              f' horis:args ( "{SERVER.as_posix()}" "--ledger" "{ledger.as_posix()}" ) .\n')
    effect = 'horis:asserts [ horis:property :queueRef ; horis:type xsd:string ]'
    defs = (server + tool("t.slow", "slow_noted", effect, timeout="30s")
            + tool("t.record", "record", effect) + step("Slow", "t.slow", next="Record")
            + step("Record", "t.record") + workflow("Slow"))
    agent, world = load(tmp_path / "defs", defs)

    async def scenario() -> tuple[Run, str, Run]:
        cancelled = asyncio.create_task(agent.arun(world, focus=":p1"))
        other = asyncio.create_task(agent.arun(world, focus=":p2"))
        # both calls under way (each answers after 2 s): p1's, sent, is cancelled
        while not ledger.exists() or len(_noted(ledger, "slow")) < 2:
            await asyncio.sleep(0.05)
        cancelled.cancel()
        await asyncio.gather(cancelled, return_exceptions=True)
        done = await other
        return done, ledger.read_text(), await agent.arun(world, focus=":p1", again=False)

    other, said, gone_on = asyncio.run(scenario())
    assert other.status == "completed", other.error
    assert [s.status for s in other.instances[0].steps] == ["completed", "completed"]
    assert gone_on.status == "failed" and isinstance(gone_on.error.cause, OutcomeUnknown)
    assert said.split("\n").count("start") == 2  # one server a run, none started again
    # p1's call was not made again
    assert sorted(_noted(ledger, "slow")) == [f"slow {EX.p1}", f"slow {EX.p2}"]
    assert _noted(ledger, "record") == [f"record {EX.p2}"]


def _noted(ledger: Path, what: str) -> list[str]:
    """The ledger's lines of the test server's ``what`` calls, in the order they came."""
    return [line for line in ledger.read_text().split("\n") if line.startswith(what + " ")]
