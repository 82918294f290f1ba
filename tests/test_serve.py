"""``horismos serve``: the catalog over MCP, with real clients and real processes.

The SDK's own client over stdio (the server a subprocess it starts) and over streamable HTTP
(the server a subprocess on a free 127.0.0.1 port), and a client no one here wrote: the MCP
inspector's command-line mode from npm, installed by ``.ci/run`` into ``.ci/node``.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from forked import Popen, horismos_forked
from listening import free_port, wait_listening
from oxigraph_server import OxigraphServer

# an MCP stdio server the SDK starts is a zygote child (conftest.py's forked_popen)
pytestmark = pytest.mark.usefixtures("forked_popen")

ROOT = Path(__file__).parent.parent
INSPECTOR = ROOT / ".ci" / "node" / "node_modules" / ".bin" / "mcp-inspector"

DEFS = """\
@prefix :      <http://example.org/clinic#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Patient a rdfs:Class .
:Ward a rdfs:Class .

:t.queue a horis:Tool ;
    rdfs:label "Queue a patient" ;
    rdfs:comment "Puts the patient in the triage queue and returns the queue reference." ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:requires "FILTER NOT EXISTS { ?patient :queueRef ?any }" ;
    horis:effect [ horis:subject "patient" ;
                   horis:asserts [ horis:property :queueRef ; horis:type xsd:string ] ] ;
    horis:binding "python:queue" .

:t.transfer a horis:Tool ;
    rdfs:label "Transfer a patient to a ward" ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ;
                  horis:arg [ horis:name "ward" ; horis:type :Ward ] ] ;
    horis:effect [ horis:subject "patient" ;
                   horis:asserts [ horis:property :bedRef ; horis:type xsd:string ] ] ;
    horis:requiresApproval true ;
    horis:binding "python:transfer" .

:Queueing a horis:Workflow ; horis:focusType :Patient ; horis:start :Queue .
:Queue a horis:ActionStep ; horis:tool :t.queue ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .

:t.bill a horis:Tool ;
    rdfs:label "Bill the insurer" ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:sideEffect horis:ExternalCommit ;
    horis:binding "python:bill" .
"""

WORLD = """\
@prefix : <http://example.org/clinic#> .
:p1 a :Patient . :p2 a :Patient . :w1 a :Ward .
"""

TOOLS = """\
import time


def queue(patient):
    print("a tool that prints")  # over stdio, fd 1 is the protocol: the SDK moves it aside
    time.sleep(0.3)  # long enough for a second client's call to overlap this one
    return {"queueRef": "Q-" + str(patient).rsplit("#", 1)[-1]}


def transfer(patient, ward):
    return {"bedRef": "B-" + str(ward).rsplit("#", 1)[-1]}


def bill(patient):
    return None
"""

P1 = "http://example.org/clinic#p1"


def _tools() -> Any:
    """The tool functions, in process, without importing a module another test may also
    have named ``clinic_tools``."""
    import types

    module = types.ModuleType("served_clinic_tools")
    exec(TOOLS, module.__dict__)
    return module


def _write_project(folder: Path) -> Path:
    (folder / "defs.ttl").write_text(DEFS)
    (folder / "world.ttl").write_text(WORLD)
    (folder / "clinic_tools.py").write_text(TOOLS)
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return _write_project(tmp_path)


def _serve_argv(project: Path, *more: str) -> list[str]:
    return [sys.executable, "-m", "horismos", "serve", str(project / "defs.ttl"),
            "--tools", str(project / "clinic_tools.py"), *more]


@pytest.fixture(scope="module")
def served_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _write_project(tmp_path_factory.mktemp("served"))


@pytest.fixture(scope="module")
def http_serve(served_project: Path) -> Iterator[tuple[str, str]]:
    """``horismos serve --transport http`` on a sparql: world (``oxigraph serve``); yields the
    MCP URL and the store, which an operator's ``horismos approve`` writes to meanwhile. One
    server for the module's tests: each works on its own patient."""
    project = tmp_path = served_project
    oxigraph = OxigraphServer(tmp_path / "world-db")
    proc = None
    try:
        subprocess.run([sys.executable, "-m", "horismos", "load", str(project / "world.ttl"),
                        "--store", oxigraph.store], check=True, capture_output=True)
        port = free_port()
        proc = Popen(
            _serve_argv(project, "--store", oxigraph.store, "--transport", "http", "--port",
                        str(port), "--trace-dir", str(tmp_path / "traces")),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wait_listening(proc, port, "horismos serve")
        yield f"http://127.0.0.1:{port}/mcp", oxigraph.store
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        oxigraph.stop()


def _stdio_client(project: Path, *more: str) -> Any:
    from mcp import Client, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=_serve_argv(project, "--world",
                                                 str(project / "world.ttl"), *more)[1:],
        cwd=str(project), env={**os.environ})
    return Client(stdio_client(params), cache=None)


def _text(result: Any) -> str:
    return "\n".join(c.text for c in result.content)


# -- in process: what is served is the catalog --------------------------------------------------

def test_served_schemas_are_the_inventorys(project: Path) -> None:
    from horismos import Agent, World
    from horismos._serve import ServedTools

    clinic_tools = _tools()
    agent = Agent.from_files(project / "defs.ttl", tools={
        "queue": clinic_tools.queue, "transfer": clinic_tools.transfer,
        "bill": clinic_tools.bill})
    world = World.from_files(project / "world.ttl")
    served = ServedTools(agent, world, allow="ReadOnly,HostStateWrite,ExternalCommit")
    inventory = {t["name"]: t for t in agent.catalog.inventory()["tools"]}
    listed = {t.name: t for t in served.listing()}
    assert set(listed) == {"discover", *inventory}
    for name, tool in inventory.items():
        assert listed[name].input_schema == tool["input_schema"]
        effect = tool["effect_schema"]
        result = listed[name].output_schema["properties"]["result"]
        assert result == ({"type": "null"} if effect is None
                          else {"anyOf": [effect, {"type": "null"}]})
    narrow = ServedTools(agent, world, allow="ReadOnly")
    assert sorted(narrow.tools) == []
    assert "outside --allow ReadOnly" in narrow.skipped["t.queue"]
    # a binding that does not resolve: why, as run says it (what is registered, or a near name)
    misnamed = Agent.from_files(project / "defs.ttl", tools={"queu": clinic_tools.queue})
    unserved = ServedTools(misnamed, world).skipped["t.queue"]
    assert unserved.startswith("its binding cannot be resolved in this process: binding")
    assert "did you mean 'queu'?" in unserved, unserved


def test_overlapping_calls_on_one_world_commit_once(project: Path) -> None:
    """Both calls start before either lands (the tool sleeps): without the server's lock both
    would pass the precondition and both commit (checked by hand: two completed)."""
    from rdflib import Namespace

    from horismos import Agent, World
    from horismos._serve import ServedTools

    clinic_tools = _tools()
    agent = Agent.from_files(project / "defs.ttl", tools={"queue": clinic_tools.queue})
    world = World.from_files(project / "world.ttl")
    served = ServedTools(agent, world)

    async def race() -> list[Any]:
        return list(await asyncio.gather(*(served.call("t.queue", {"patient": ":p1"})
                                           for _ in range(3))))

    statuses = sorted(r.structured_content["status"] for r in asyncio.run(race()))
    assert statuses == ["blocked", "blocked", "completed"]
    ex = Namespace("http://example.org/clinic#")
    assert len(list(world.graph.quads((ex.p1, ex.queueRef, None, None)))) == 1


def test_a_server_naming_the_nodes_it_is_called_on_keeps_a_bounded_count_of_names(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each call's receipt names its nodes, and a node's printed name was kept for good: a
    server called on ever new nodes grew by ~150 bytes an event for as long as it served."""
    from horismos import Agent, World, _sources
    from horismos._serve import ServedTools

    monkeypatch.setattr(_sources, "_NAMES_KEPT", 40, raising=False)
    def queue(patient: Any) -> dict[str, str]:  # _tools()'s sleeps to overlap two clients
        return {"queueRef": "Q-" + str(patient).rsplit("#", 1)[-1]}

    agent = Agent.from_files(project / "defs.ttl", tools={"queue": queue})
    (project / "many.ttl").write_text("@prefix : <http://example.org/clinic#> .\n" + "".join(
        f":n{i} a :Patient .\n" for i in range(120)))
    world = World.from_files(project / "many.ttl")
    served = ServedTools(agent, world)

    async def calls() -> list[Any]:
        return [await served.call("t.queue", {"patient": f":n{i}"}) for i in range(120)]

    done = asyncio.run(calls())
    assert all(r.structured_content["status"] == "completed" for r in done)
    assert ":n119" in done[-1].content[0].text  # named as the author would write it
    assert len(agent.definitions._sources._names) <= 40


def test_one_approval_is_used_by_one_call_whichever_server_makes_it(project: Path) -> None:
    """Two servers on one world: the second read the approval before the first used it (a
    pause between its look and its use). It used it up unguarded and called too: two transfers
    on one approval (seen with two `serve` processes on one `sparql:` store)."""
    from rdflib import URIRef

    from horismos import Agent, World
    from horismos._policy import SERVED_PREFIX
    from horismos._serve import ServedTools

    made: list[Any] = []

    def transfer(patient: Any, ward: Any) -> dict[str, str]:
        made.append((patient, ward))
        return {"bedRef": "B-1"}

    agent = Agent.from_files(project / "defs.ttl", tools={"transfer": transfer})
    world = World.from_files(project / "world.ttl")
    a, b = ServedTools(agent, world), ServedTools(agent, world)
    args = {"patient": ":p2", "ward": ":w1"}
    asked = asyncio.run(a.call("t.transfer", args)).structured_content["approval"]
    fp = asked["fingerprint"]
    agent.approve(world, URIRef(SERVED_PREFIX + fp), fp)
    read_before = b._recorded(fp, agent.definitions.tools[next(
        t for t in agent.definitions.tools if str(t).endswith("t.transfer"))])
    assert read_before is not None
    done = asyncio.run(a.call("t.transfer", args))
    assert done.structured_content["status"] == "completed" and len(made) == 1
    b._recorded = lambda *_: read_before  # type: ignore[method-assign]
    late = asyncio.run(b.call("t.transfer", args))
    assert late.structured_content["error"]["kind"] == "approval"
    assert len(made) == 1



def test_a_served_payload_approved_twice_is_not_two_calls(project: Path) -> None:
    """An operator's ``approve`` run twice for one served request recorded two approvals: the
    agent's call after the first went out, and so did the same call again, on the second,
    with nobody asked. One request, one approval outstanding."""
    from rdflib import URIRef

    from horismos import Agent, UsageError, World
    from horismos._policy import SERVED_PREFIX
    from horismos._serve import ServedTools

    made: list[Any] = []

    def transfer(patient: Any, ward: Any) -> dict[str, str]:
        made.append((patient, ward))
        return {"bedRef": "B-1"}

    agent = Agent.from_files(project / "defs.ttl", tools={"transfer": transfer})
    world = World.from_files(project / "world.ttl")
    served = ServedTools(agent, world)
    args = {"patient": ":p2", "ward": ":w1"}
    fp = asyncio.run(served.call("t.transfer", args)).structured_content["approval"][
        "fingerprint"]
    agent.approve(world, URIRef(SERVED_PREFIX + fp), fp)
    with pytest.raises(UsageError, match=r"approved already .* not used yet"):
        agent.approve(world, URIRef(SERVED_PREFIX + fp), fp)
    assert asyncio.run(served.call("t.transfer", args)).structured_content[
        "status"] == "completed"
    again = asyncio.run(served.call("t.transfer", args))
    assert again.structured_content["error"]["kind"] == "approval" and len(made) == 1
    agent.approve(world, URIRef(SERVED_PREFIX + fp), fp)  # asked again, approved again
    assert asyncio.run(served.call("t.transfer", args)).structured_content[
        "status"] == "completed" and len(made) == 2

def _both_use_it_up_at_once(served: list[Any], worlds: list[Any], args: dict[str, str]) -> None:
    """Two servers call with one payload; each uses the approval up at the same instant (a
    barrier, while both are there), and the second's process is slower from then on: it goes
    on once the first's call has ended."""
    import contextlib
    import threading

    from horismos._vocab import HORIS

    both, first_done = threading.Barrier(2), threading.Event()

    def spend_at_once(world: Any, late: bool) -> None:
        commit = world.commit

        def commit_together(change: Any) -> Any:
            if not any(q[1] == HORIS.usedUp for q in change.add):
                return commit(change)
            with contextlib.suppress(threading.BrokenBarrierError):
                both.wait(timeout=0.5)
            try:
                return commit(change)
            finally:
                if late:
                    first_done.wait(timeout=5)

        world.commit = commit_together

    def call(n: int) -> None:
        try:
            asyncio.run(served[n].call("t.transfer", args))
        finally:
            if n == 0:
                first_done.set()

    spend_at_once(worlds[0], late=False)
    spend_at_once(worlds[1], late=True)
    threads = [threading.Thread(target=call, args=(n,)) for n in range(2)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    finally:
        for world in worlds:
            del world.commit


def test_one_approval_is_one_call_when_two_servers_use_it_at_once_on_sparql(
        tmp_path: Path, project: Path) -> None:
    """Two servers on one ``sparql:`` store (oxigraph) find one approval and use it up in the
    same instant. The server judges each update's ``FILTER NOT EXISTS`` on a snapshot, so both
    "used up, unless it already is" commits landed (about one round in two); the later call,
    its process slower to reach the subject's claim, then found it free and transferred again:
    two transfers on one approval."""
    from rdflib import URIRef

    from horismos import Agent, World
    from horismos._policy import SERVED_PREFIX
    from horismos._serve import ServedTools

    oxigraph = OxigraphServer(tmp_path / "race-db")
    made: list[str] = []

    def transfer(patient: Any, ward: Any) -> dict[str, str]:
        made.append(str(ward))
        return {"bedRef": "B-1"}

    rounds = 10
    (project / "wards.ttl").write_text("@prefix : <http://example.org/clinic#> .\n" + "".join(
        f":w{i} a :Ward .\n" for i in range(rounds)))
    try:
        World.open(oxigraph.store).load(project / "world.ttl", project / "wards.ttl")
        agents = [Agent.from_files(project / "defs.ttl", tools={"transfer": transfer})
                  for _ in range(2)]
        worlds = [World.open(oxigraph.store) for _ in range(2)]
        served = [ServedTools(agent, world) for agent, world in zip(agents, worlds, strict=True)]
        for i in range(rounds):
            args = {"patient": ":p2", "ward": f":w{i}"}
            fp = asyncio.run(served[0].call("t.transfer", args)).structured_content[
                "approval"]["fingerprint"]
            agents[0].approve(worlds[0], URIRef(SERVED_PREFIX + fp), fp)
            _both_use_it_up_at_once(served, worlds, args)
            assert made.count(f"http://example.org/clinic#w{i}") == 1, made
    finally:
        oxigraph.stop()


def test_a_served_approval_holds_only_for_the_tool_as_it_was_defined(project: Path) -> None:
    from rdflib import URIRef

    from horismos import Agent, World
    from horismos._policy import SERVED_PREFIX
    from horismos._serve import ServedTools

    made: list[str] = []
    tools = {"transfer": lambda patient, ward: made.append("dry") or {"bedRef": "B"},
             "move": lambda patient, ward: made.append("moved") or {"bedRef": "B"}}
    agent = Agent.from_files(project / "defs.ttl", tools=tools)
    world = World.from_files(project / "world.ttl")
    args = {"patient": ":p2", "ward": ":w1"}
    fp = asyncio.run(ServedTools(agent, world).call("t.transfer", args)).structured_content[
        "approval"]["fingerprint"]
    agent.approve(world, URIRef(SERVED_PREFIX + fp), fp)
    (project / "moved.ttl").write_text((project / "defs.ttl").read_text().replace(
        '"python:transfer"', '"python:move"'))
    rebound = Agent.from_files(project / "moved.ttl", tools=tools)
    served = ServedTools(rebound, world)
    refused = asyncio.run(served.call("t.transfer", args))
    assert refused.structured_content["error"]["kind"] == "approval" and made == []
    rebound.approve(world, URIRef(SERVED_PREFIX + fp), fp)
    done = asyncio.run(served.call("t.transfer", args))
    assert done.structured_content["status"] == "completed" and made == ["moved"]


def test_a_served_approval_holds_only_for_the_code_that_asked(project: Path) -> None:
    """A server running a dry-run ``transfer`` asks for approval; the operator approves; the
    server is started again with another ``transfer`` under the same name (other --tools):
    it took the approval and moved the patient. The request names the code that asked, and
    other code asks again, for itself."""
    from rdflib import URIRef

    from horismos import Agent, World
    from horismos._policy import SERVED_PREFIX
    from horismos._serve import ServedTools

    made: list[str] = []

    def dry(patient: str, ward: str) -> dict[str, str]:
        made.append("dry")
        return {"bedRef": "B"}

    def live(patient: str, ward: str) -> dict[str, str]:
        made.append("moved")
        return {"bedRef": "B"}

    world = World.from_files(project / "world.ttl")
    args = {"patient": ":p2", "ward": ":w1"}
    asking = Agent.from_files(project / "defs.ttl", tools={"transfer": dry})
    fp = asyncio.run(ServedTools(asking, world).call("t.transfer", args)).structured_content[
        "approval"]["fingerprint"]
    asking.approve(world, URIRef(SERVED_PREFIX + fp), fp)
    other = Agent.from_files(project / "defs.ttl", tools={"transfer": live})
    served = ServedTools(other, world)
    refused = asyncio.run(served.call("t.transfer", args))
    assert refused.structured_content["error"]["kind"] == "approval" and made == []
    other.approve(world, URIRef(SERVED_PREFIX + fp), fp)  # the request live made
    done = asyncio.run(served.call("t.transfer", args))
    assert done.structured_content["status"] == "completed" and made == ["moved"]


def test_run_workflow_starts_a_workflow_and_says_where_it_ended(project: Path) -> None:
    from horismos import Agent, World
    from horismos._serve import ServedTools

    clinic_tools = _tools()
    agent = Agent.from_files(project / "defs.ttl", tools={"queue": clinic_tools.queue})
    world = World.from_files(project / "world.ttl")
    assert "run_workflow" not in [t.name for t in ServedTools(agent, world).listing()]
    served = ServedTools(agent, world, run_workflow=True)
    assert "run_workflow" in [t.name for t in served.listing()]

    async def calls() -> list[Any]:
        return [await served.call("run_workflow", {"workflow": ":Queueing", "focus": ":p2"}),
                await served.call("run_workflow", {"workflow": ":Queueing", "focus": ":p2",
                                                   "step": ":Queue"}),
                await served.call("run_workflow", {"workflow": ":Queueing", "focus": ":p2"}),
                await served.call("run_workflow", {"workflow": ":Queueing", "focus": ":p2",
                                                   "again": True}),
                await served.call("run_workflow", {"workflow": ":Queueing", "focus": ":p2",
                                                   "again": "yes"})]

    done, driven, retried, again, odd = asyncio.run(calls())
    assert done.structured_content["status"] == "completed", _text(done)
    assert done.structured_content["ran"] is True
    assert [s["status"] for s in done.structured_content["steps"]] == ["completed"]
    assert driven.is_error and "unknown argument 'step'" in _text(driven)
    # asked again, the instance it ran is the answer: nothing runs
    assert retried.structured_content["ran"] is False, _text(retried)
    assert retried.structured_content["instance"] == done.structured_content["instance"]
    assert retried.structured_content["status"] == "completed"
    # asked to run again, it does: the tool's own precondition holds it, queued once
    assert again.structured_content["status"] == "blocked"
    assert odd.is_error and '"again" is true or false' in _text(odd)


def test_run_workflow_says_which_part_of_a_step_blocked_it_as_run_does(project: Path) -> None:
    """A blocked instance's answer gave its step's whole pattern, lines and all; `run` says
    which part has no solution, with the values bound then. They say the same now."""
    from horismos import Agent, World
    from horismos._serve import ServedTools

    (project / "triage.ttl").write_text(DEFS + """
:Triage a horis:Workflow ; horis:focusType :Patient ; horis:start :QueueWard .
:QueueWard a horis:ActionStep ; horis:tool :t.queue ;
    horis:requires \"\"\" ?this :inWard ?ward .
                       ?ward :open true \"\"\" ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
""")
    (project / "world.ttl").write_text(WORLD + ":p1 :inWard :w1 .\n")
    agent = Agent.from_files(project / "triage.ttl", tools={"queue": _tools().queue})
    answer = asyncio.run(ServedTools(agent, World.from_files(project / "world.ttl"),
                                     run_workflow=True).call(
        "run_workflow", {"workflow": ":Triage", "focus": ":p1"}))
    assert answer.structured_content["status"] == "blocked"
    said = _text(answer).splitlines()[-1].strip()
    assert said == "?ward :open true . has no solution for ?ward = :w1", said
    p = horismos_forked(project, "run", "triage.ttl", "--world", "world.ttl", "--tools",
                        "clinic_tools.py", "--workflow", ":Triage", "--focus", ":p1", timeout=120)
    assert said in p.stdout, p.stdout + p.stderr


def test_run_workflow_and_discover_over_folders_name_nodes_as_the_world_holds_them() -> None:
    """`serve workflows/ ontologies/`: each file binds ':' to its own namespace. discover's
    focus ':patient42' was refused as undeclared, and run_workflow's answer named the focus
    <http://example.org/ehr#patient42> where `run` prints :patient42."""
    from horismos import Agent, World
    from horismos._serve import ServedTools

    sys.path.insert(0, str(ROOT / "examples" / "triage"))
    try:
        import ehr_client
    finally:
        sys.path.pop(0)
    agent = Agent.from_files(ROOT / "workflows", ROOT / "ontologies", tools={
        "ehr_client.assign_queue": ehr_client.assign_queue,
        "ehr_client.notify_nurse": ehr_client.notify_nurse})
    served = ServedTools(agent, World.from_files(ROOT / "examples" / "triage" / "world.ttl"),
                         run_workflow=True)

    async def calls() -> list[Any]:
        return [await served.call("discover", {"query": "assign queue", "focus": ":patient42"}),
                await served.call("run_workflow", {"workflow": ":Triage", "focus": ":patient42"})]

    found, ran = asyncio.run(calls())
    assert not found.is_error and "bound: patient=:patient42" in _text(found), _text(found)
    assert _text(ran).startswith(":Triage for :patient42: completed (2 steps)"), _text(ran)


# -- stdio, the SDK's client ----------------------------------------------------------------------

def test_stdio_lists_closed_schemas_and_refuses_what_the_contract_does_not_declare(
        project: Path) -> None:
    from mcp import MCPError

    async def session() -> None:
        async with _stdio_client(project) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            # ExternalCommit is outside the default policy: not served at all
            assert sorted(tools) == ["discover", "t.queue", "t.transfer"]
            queue = tools["t.queue"]
            assert queue.input_schema["additionalProperties"] is False
            assert queue.input_schema["required"] == ["patient"]
            result_schema = queue.output_schema["properties"]["result"]["anyOf"][0]
            assert list(result_schema["properties"]) == ["queueRef"]

            # the SDK's own server would drop these; Horismos refuses, naming the field
            unknown = await client.call_tool("t.queue", {"patient": ":p1", "urgent": True})
            assert unknown.is_error
            assert unknown.structured_content["error"]["kind"] == "schema"
            assert 'unknown argument "urgent"' in _text(unknown)
            as_input = await client.call_tool("t.queue", {"patient": ":p1", "status": "done"})
            assert '"status" is a result field' in _text(as_input)
            wrong_class = await client.call_tool("t.queue", {"patient": ":w1"})
            assert wrong_class.structured_content["error"]["kind"] == "argument_type"

            done = await client.call_tool("t.queue", {"patient": ":p1"})
            assert not done.is_error, _text(done)
            assert done.structured_content["status"] == "completed"
            assert done.structured_content["result"] == {"queueRef": "Q-p1"}
            assert "1 effect landed" in _text(done)
            again = await client.call_tool("t.queue", {"patient": ":p1"})
            assert again.structured_content["status"] == "blocked"
            assert again.structured_content["error"]["kind"] == "precondition"

            found = await client.call_tool("discover", {"query": "queue patient",
                                                        "focus": ":p2"})
            names = [t["name"] for t in found.structured_content["tools"]]
            assert names[0] == "t.queue"
            assert found.structured_content["tools"][0]["bound_args"] == {
                "patient": "http://example.org/clinic#p2"}
            odd = await client.call_tool("discover", {"query": "queue", "limit": 3})
            assert odd.is_error and "'limit'" in _text(odd)
            # a tool the policy does not serve is no tool here: an MCP error, saying why
            with pytest.raises(MCPError, match="ExternalCommit is outside --allow"):
                await client.call_tool("t.bill", {"patient": ":p1"})

    asyncio.run(session())


LEDGER_TOOLS = """\
def _called(name, *args):
    with open("calls.log", "a") as f:
        f.write(" ".join([name, *map(str, args)]) + "\\n")


def queue(patient):
    _called("queue", patient)
    return {"queueRef": "Q-1"}


def transfer(patient, ward):
    _called("transfer", patient, ward)
    return {"bedRef": "B-1"}


def bill(patient):
    _called("bill", patient)
"""


def test_run_workflow_holds_its_steps_to_the_served_policy_and_to_approval(
        project: Path) -> None:
    """``run_workflow`` drives steps the agent cannot name, so the served ``--allow`` and
    ``horis:requiresApproval`` must hold there as for a tool called by name: a step outside
    the policy blocks and one needing approval waits, asked again or not, and neither tool
    is called. The policy refusal was said as "this pattern does not hold: …", a failing
    precondition, where it is the policy and ``--allow`` widens it."""
    (project / "defs.ttl").write_text(DEFS + """
:Billing a horis:Workflow ; horis:focusType :Patient ; horis:start :Bill .
:Bill a horis:ActionStep ; horis:tool :t.bill ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
:Moving a horis:Workflow ; horis:focusType :Patient ; horis:start :Move .
:Move a horis:ActionStep ; horis:tool :t.transfer ; horis:requires "?ward a :Ward ." ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
""")
    (project / "clinic_tools.py").write_text(LEDGER_TOOLS)

    async def session() -> list[Any]:
        async with _stdio_client(project, "--run-workflow") as client:
            return [await client.call_tool("run_workflow", {"workflow": wf, "focus": ":p1",
                                                            **more})
                    for wf in (":Billing", ":Moving") for more in ({}, {"again": True})]

    billed, billed_again, moved, moved_again = asyncio.run(session())
    for answer in (billed, billed_again):
        said = answer.structured_content
        assert said["status"] == "blocked" and said["error"]["kind"] == "policy", _text(answer)
        assert "t.bill has side effect ExternalCommit, which the policy does not allow" in (
            _text(answer))
        assert "--allow ExternalCommit,HostStateWrite,ReadOnly" in _text(answer)
        assert "this pattern does not hold" not in _text(answer)
    for answer in (moved, moved_again):
        said = answer.structured_content
        assert said["status"] == "waiting", _text(answer)
        assert "requires approval (horis:requiresApproval)" in said["brief"]
        assert "Fingerprint: " in said["brief"]
    assert moved_again.structured_content["ran"] is True  # again: a new instance, waiting too
    assert not (project / "calls.log").exists()


def test_an_agent_calling_again_after_no_answer_is_refused_in_every_served_lane(
        tmp_path: Path) -> None:
    """Over stdio, as an agent would: a charge that never answers, then the same charge
    again, then the workflow that charges. Each acted again before calls were held in doubt
    (the workflow through run_workflow too); now the ledger holds one charge."""
    (tmp_path / "defs.ttl").write_text(DEFS.split(":t.queue a horis:Tool")[0] + """
:t.charge a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:subject "patient" ;
                   horis:asserts [ horis:property :chargeRef ; horis:type xsd:string ] ] ;
    horis:binding "python:charge" ;
    horis:timeout "1s" ;
    horis:idempotent false .

:Billing a horis:Workflow ; horis:focusType :Patient ; horis:start :Charge .
:Charge a horis:ActionStep ; horis:tool :t.charge ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
""")
    (tmp_path / "world.ttl").write_text(WORLD)
    (tmp_path / "clinic_tools.py").write_text(
        "import time\nfrom pathlib import Path\n\n"
        "def charge(patient):\n"
        "    with open('ledger.txt', 'a') as f:\n"
        "        f.write(str(patient) + '\\n')\n"
        "    if Path('hang').exists():\n"
        "        time.sleep(3)\n"
        "    return {'chargeRef': 'CH-1'}\n")
    (tmp_path / "hang").write_text("")

    async def session() -> list[Any]:
        async with _stdio_client(tmp_path, "--run-workflow") as client:
            first = await client.call_tool("t.charge", {"patient": ":p1"})
            (tmp_path / "hang").unlink()
            again = await client.call_tool("t.charge", {"patient": ":p1"})
            run = await client.call_tool("run_workflow", {"workflow": ":Billing",
                                                           "focus": ":p1"})
            other = await client.call_tool("t.charge", {"patient": ":p2"})
            return [first, again, run, other]

    first, again, run, other = asyncio.run(session())
    assert first.structured_content["status"] == "timed_out", _text(first)
    assert first.structured_content["error"]["kind"] == "outcome_unknown"
    assert again.structured_content["status"] == "refused", _text(again)
    assert again.structured_content["error"]["kind"] == "outcome_unknown"
    assert run.structured_content["status"] == "failed", _text(run)
    assert "may already have acted on :p1" in _text(run)
    assert other.structured_content["status"] == "completed", _text(other)
    assert (tmp_path / "ledger.txt").read_text().splitlines() == [P1, P1[:-1] + "2"]


# -- streamable HTTP: two clients, one world; approvals ------------------------------------------

def test_two_http_clients_racing_for_one_precondition_commit_once(
        http_serve: tuple[str, str], served_project: Path) -> None:
    from mcp import Client

    url, store = http_serve
    traces_before = set((served_project / "traces").glob("*t.queue.jsonl"))

    async def one() -> Any:
        async with Client(url, cache=None) as client:
            return await client.call_tool("t.queue", {"patient": P1})

    async def race() -> list[Any]:
        return list(await asyncio.gather(one(), one()))

    results = asyncio.run(race())
    statuses = sorted(r.structured_content["status"] for r in results)
    assert statuses == ["blocked", "completed"]
    from rdflib import URIRef

    from horismos import World

    world = World.open(store)
    refs = world.store.select("SELECT ?r WHERE { GRAPH ?g { ?p "
                              "<http://example.org/clinic#queueRef> ?r } }",
                              {"p": URIRef(P1)}, {})
    assert [str(r["r"]) for r in refs] == ["Q-p1"]
    traces = sorted(set((served_project / "traces").glob("*t.queue.jsonl")) - traces_before)
    assert len(traces) == 2  # a trace per call
    ends = [json.loads(t.read_text().splitlines()[-1])["status"] for t in traces]
    assert sorted(ends) == ["blocked", "completed"]


def test_approval_is_the_operators_never_the_agents(http_serve: tuple[str, str],
                                                    served_project: Path) -> None:
    from mcp import Client

    url, store = http_serve
    args = {"patient": ":p2", "ward": ":w1"}

    async def call(arguments: dict[str, Any]) -> Any:
        async with Client(url, cache=None) as client:
            return await client.call_tool("t.transfer", arguments)

    first = asyncio.run(call(args))
    assert first.is_error and first.structured_content["status"] == "refused"
    approval = first.structured_content["approval"]
    fp = approval["fingerprint"]
    assert approval["payload"] == {"patient": "http://example.org/clinic#p2",
                                   "ward": "http://example.org/clinic#w1"}
    # what the agent is told is what applies over MCP, not the command line's --approval
    said = first.structured_content["error"]["message"]
    assert f"horismos approve FILE_OR_DIR… --store STORE --instance {approval['instance']}" in said
    assert "--approval" not in said
    # and so is the text it reads first, which said `horismos tools approve … --approval`
    text = _text(first)
    assert said in text and "tools approve" not in text and "--approval" not in text, text
    # no argument carries an approval: passing one is an unknown field
    sneaky = asyncio.run(call({**args, "approval": fp}))
    assert sneaky.structured_content["error"]["kind"] == "schema"

    approve = horismos_forked(".", "approve", str(served_project / "defs.ttl"), "--store", store,
                              "--instance", approval["instance"], "--fingerprint", fp)
    assert approve.returncode == 0, approve.stderr
    assert "the agent may now call it again" in approve.stdout, approve.stdout
    done = asyncio.run(call(args))
    assert done.structured_content["status"] == "completed", _text(done)
    assert done.structured_content["result"] == {"bedRef": "B-w1"}
    # used up: the same payload needs a new approval
    again = asyncio.run(call(args))
    assert again.structured_content["error"]["kind"] == "approval"


# -- the MCP inspector's command line (npm) -------------------------------------------------------

def _inspector() -> str:
    if INSPECTOR.exists() and shutil.which("node"):
        return str(INSPECTOR)
    if os.environ.get("CI"):
        raise AssertionError(f"{INSPECTOR} is missing: .ci/run installs it")
    pytest.skip("the MCP inspector is not installed: npm install --prefix .ci/node "
                "@modelcontextprotocol/inspector (see .ci/run)")


def test_the_mcp_inspector_lists_and_calls_over_stdio(project: Path) -> None:
    inspector = _inspector()
    target = ["--cli", *_serve_argv(project, "--world", str(project / "world.ttl"))]
    listed = subprocess.run([inspector, *target, "--method", "tools/list"],
                            capture_output=True, text=True, timeout=120, cwd=project)
    assert listed.returncode == 0, listed.stderr
    names = [t["name"] for t in json.loads(listed.stdout)["tools"]]
    assert names == ["discover", "t.queue", "t.transfer"]
    called = subprocess.run([inspector, *target, "--method", "tools/call", "--tool-name",
                             "t.queue", "--tool-arg", "patient=:p1"],
                            capture_output=True, text=True, timeout=120, cwd=project)
    assert called.returncode == 0, called.stderr
    answer = json.loads(called.stdout)
    assert answer["structuredContent"]["result"] == {"queueRef": "Q-p1"}


def test_the_mcp_inspector_over_streamable_http(http_serve: tuple[str, str]) -> None:
    inspector = _inspector()
    url, _ = http_serve
    listed = subprocess.run([inspector, "--cli", url, "--transport", "http", "--method",
                             "tools/list"], capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert "t.transfer" in [t["name"] for t in json.loads(listed.stdout)["tools"]]
    refused = subprocess.run([inspector, "--cli", url, "--transport", "http", "--method",
                              "tools/call", "--tool-name", "t.queue", "--tool-arg",
                              "patient=http://example.org/clinic#p2", "--tool-arg", "effects=[]"],
                             capture_output=True, text=True, timeout=120)
    answer = json.loads(refused.stdout)
    assert answer["isError"] is True
    assert '"effects" is a result field' in answer["content"][0]["text"]


def test_serve_usage_errors_are_one_line(project: Path) -> None:
    bad = subprocess.run(_serve_argv(project, "--port", "9999"), capture_output=True,
                         text=True, stdin=subprocess.DEVNULL)
    assert bad.returncode == 2
    assert "--host and --port are for --transport http" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_a_port_in_use_is_a_usage_error_before_the_address_is_announced(project: Path) -> None:
    """uvicorn logged the bind failure and the process exited 3, the code for "waiting",
    after announcing an address it never served."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        p = subprocess.run(_serve_argv(project, "--world", str(project / "world.ttl"),
                                       "--transport", "http", "--port", str(port)),
                           capture_output=True, text=True, timeout=120,
                           stdin=subprocess.DEVNULL)
    assert p.returncode == 2, p.stderr
    assert f"--port {port}: cannot listen there" in p.stderr
    assert "MCP over streamable HTTP at" not in p.stderr and "Traceback" not in p.stderr


def test_a_store_out_of_reach_or_a_trace_dir_that_is_a_file_is_refused_at_start(
        project: Path) -> None:
    """Both started, then answered every call with "Internal server error"."""
    (project / "a-file").write_text("")
    for more, said in [(("--trace-dir", str(project / "a-file")), "--trace-dir"),
                       (("--store", "sparql:http://127.0.0.1:1/"), "cannot be reached")]:
        p = subprocess.run(_serve_argv(project, *more), capture_output=True, text=True,
                           timeout=120, stdin=subprocess.DEVNULL)
        assert p.returncode == 2 and said in p.stderr, p.stderr
        assert "Traceback" not in p.stderr


@pytest.mark.parametrize("idempotent", [True, False])
def test_a_served_keyed_retry_of_an_unanswered_call_uses_the_approval_it_took(
        project: Path, idempotent: bool) -> None:
    """An agent's keyed call of an idempotent tool that requires approval takes the
    operator's approval and times out; the key is left free, so the agent asks again with
    it. The retry found no approval left and asked the operator for another, for the very
    call already approved. It uses the one its first attempt took; another key is asked for
    a new approval, and a tool that is not idempotent is refused, its call in doubt."""
    from rdflib import URIRef

    from horismos import Agent, World
    from horismos._idempotency import MCP_META_KEY
    from horismos._policy import SERVED_PREFIX
    from horismos._serve import ServedTools

    defs = project / "defs.ttl"
    defs.write_text(defs.read_text().replace(
        "    horis:requiresApproval true ;\n    horis:binding \"python:transfer\" .",
        "    horis:requiresApproval true ;\n    horis:binding \"python:transfer\" ;\n"
        f'    horis:timeout "1s" ; horis:idempotent {str(idempotent).lower()} .'))
    made: list[Any] = []
    returned = threading.Event()

    def transfer(patient: Any, ward: Any) -> dict[str, str]:
        made.append((patient, ward))
        if len(made) == 1:  # the first goes past its timeout: sent, never answered
            time.sleep(1.5)
            returned.set()
        return {"bedRef": f"B-{len(made)}"}

    agent = Agent.from_files(defs, tools={"transfer": transfer})
    assert agent.definitions.tools[next(
        t for t in agent.definitions.tools if str(t).endswith("t.transfer"))
    ].idempotent is idempotent
    world = World.from_files(project / "world.ttl")
    served = ServedTools(agent, world)
    args = {"patient": ":p2", "ward": ":w1"}
    key = {MCP_META_KEY: "k"}
    fp = asyncio.run(served.call("t.transfer", args, key)).structured_content["approval"][
        "fingerprint"]
    agent.approve(world, URIRef(SERVED_PREFIX + fp), fp)
    first = asyncio.run(served.call("t.transfer", args, key)).structured_content
    assert first["status"] == "timed_out", first
    assert returned.wait(60)
    other = asyncio.run(served.call("t.transfer", args, {MCP_META_KEY: "k2"}))
    kind = "approval" if idempotent else "outcome_unknown"
    assert other.structured_content["error"]["kind"] == kind, other.structured_content
    again = asyncio.run(served.call("t.transfer", args, key)).structured_content
    if idempotent:
        assert again["status"] == "completed", again
        assert len(made) == 2
    else:
        assert again["error"]["kind"] == "outcome_unknown", again
        assert len(made) == 1


def test_a_near_miss_of_a_served_tool_name_says_the_one_meant(project: Path) -> None:
    """A model calling ``t.queu`` was answered "no tool named 't.queu' is served; served:
    discover, t.bill, …": the one it meant left to be picked out of every served name, where
    the Python catalog says "did you mean t.queue?". The served answer says it too; a name
    close to none says no guess."""
    from mcp import MCPError

    from horismos import Agent, World
    from horismos._serve import ServedTools

    clinic_tools = _tools()
    agent = Agent.from_files(project / "defs.ttl", tools={
        "queue": clinic_tools.queue, "transfer": clinic_tools.transfer,
        "bill": clinic_tools.bill})
    served = ServedTools(agent, World.from_files(project / "world.ttl"))
    with pytest.raises(MCPError, match=r"did you mean t\.queue\?; served: discover, "):
        asyncio.run(served.call("t.queu", {"patient": ":p1"}))
    with pytest.raises(MCPError) as far:
        asyncio.run(served.call("zzzz", {}))
    assert "did you mean" not in str(far.value)
