"""One bad value fails one step, not the run (issue 12, item 7).

A class-typed result value that is no IRI (a space, a ``>``), a lone surrogate in JSON, a
Python tool that calls ``sys.exit`` or raises ``KeyboardInterrupt``: each is that step's gate
rejection or ToolError, taking its ``horis:onError``; the other instances of the run go on and
no instance is left running with an intent. Each kind of binding, with real servers.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from forked import horismos_forked
from rdflib import Namespace, URIRef
from servers.http_server import serve

from horismos import Agent, World, replay
from horismos._vocab import HORIS
from horismos._world import INSTANCES

EX = Namespace("http://example.org/clinic#")
SERVER = Path(__file__).parent / "servers" / "mcp_server.py"

PREFIXES = """\
@prefix :      <http://example.org/clinic#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .
:Patient a owl:Class .
:Ward a owl:Class .
"""

WORLD = PREFIXES + """
:w1 a :Ward .
:p1 a :Patient .
:p2 a :Patient .
"""

# what each bad value is returned as: a ward (class-typed) or a reference (a string)
EFFECTS = {
    "ward": 'horis:asserts [ horis:property :ward ; horis:type :Ward ]',
    "ref": 'horis:asserts [ horis:property :ref ; horis:type xsd:string ]',
}


def definitions(binding: str, returns: str, extra: str = "") -> str:
    """A tool bound to ``binding``; :Act calls it, going on to :Noted whatever happens."""
    return PREFIXES + extra + f"""
:t.act a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:subject "patient" ; {EFFECTS[returns]} ] ;
    horis:binding "{binding}" ;
    horis:timeout "10s" .
:t.note a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:subject "patient" ;
                   horis:asserts [ horis:property :notedAt ; horis:value horis:now ] ] ;
    horis:binding "python:note" ; horis:idempotent true .
:Flow a horis:Workflow ; horis:focusType :Patient ; horis:start :Act .
:Act a horis:ActionStep ; horis:tool :t.act ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] ;
    horis:next :Noted ; horis:onError :Noted .
:Noted a horis:ActionStep ; horis:tool :t.note ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""


def run_all(tmp_path: Path, defs: str, tools: dict[str, Any] | None = None):
    (tmp_path / "defs.ttl").write_text(defs, encoding="utf-8")
    (tmp_path / "world.ttl").write_text(WORLD, encoding="utf-8")
    agent = Agent.from_files(tmp_path / "defs.ttl",
                             tools={"note": lambda patient: {}, **(tools or {})})
    world = World.from_files(tmp_path / "world.ttl")
    run = agent.run(world, all=True, trace=tmp_path / "trace.jsonl")
    # the trace holds whatever came back (a lone surrogate escaped) and replays the same
    assert replay(tmp_path / "trace.jsonl", agent).diverged is False
    return run, world


def assert_one_step_failed(run, world: World, kind: str) -> None:
    by_focus = {str(i.focus).rsplit("#", 1)[-1]: i for i in run.instances}
    assert set(by_focus) == {"p1", "p2"}
    p1, p2 = by_focus["p1"], by_focus["p2"]
    act = p1.steps[0]
    assert act.error is not None and act.error.kind == kind, act.error
    assert act.next is not None and act.next.endswith("#Noted")   # took horis:onError
    assert p1.status == "completed" and [s.step.fragment for s in p1.steps] == ["Act", "Noted"]
    assert p2.status == "completed" and p2.steps[0].status == "completed"
    # nothing left running, no intent left behind
    rows = world.store.select(
        f"SELECT ?s ?p ?o WHERE {{ GRAPH <{INSTANCES}> {{ ?s ?p ?o }} }}", {}, {})
    assert not [r for r in rows if r["p"] == HORIS.status and r.get("o") == HORIS.Running]
    assert not [r for r in rows if str(r["s"]).endswith(":intent")]
    assert world.graph.value(p1.focus, EX.notedAt) is not None   # the run went on


def bad_ward(patient: URIRef) -> dict[str, Any]:
    return {"ward": f"{patient.rsplit('#', 1)[0]}#{'a b>' if patient.endswith('p1') else 'w1'}"}


def surrogate(patient: URIRef) -> dict[str, Any]:
    return {"ref": "\ud800" if patient.endswith("p1") else "R-2"}


def exits(patient: URIRef) -> dict[str, Any]:
    if patient.endswith("p1"):
        sys.exit(3)
    return {"ward": EX.w1}


def interrupts(patient: URIRef) -> dict[str, Any]:
    if patient.endswith("p1"):
        raise KeyboardInterrupt
    return {"ward": EX.w1}


async def exits_async(patient: URIRef) -> dict[str, Any]:
    if patient.endswith("p1"):
        raise SystemExit(3)
    return {"ward": EX.w1}


class Halt(BaseException):
    """A tool's own BaseException (a framework's "stop" signal, say): it got past the step
    as a traceback to the user, and the trace was left with no end event."""


def halts(patient: URIRef) -> dict[str, Any]:
    if patient.endswith("p1"):
        raise Halt("the ward system asked to stop")
    return {"ward": EX.w1}


async def halts_async(patient: URIRef) -> dict[str, Any]:
    return halts(patient)


@pytest.mark.parametrize(("func", "returns", "kind"), [
    (bad_ward, "ward", "gate_rejected"),
    (surrogate, "ref", "gate_rejected"),
    (exits, "ward", "tool_error"),
    (interrupts, "ward", "tool_error"),
    (exits_async, "ward", "tool_error"),
    (halts, "ward", "tool_error"),
    (halts_async, "ward", "tool_error"),
], ids=["iri-with-space", "lone-surrogate", "sys-exit", "keyboard-interrupt", "async-exit",
        "own-base-exception", "async-own-base-exception"])
def test_python_tool_bad_value_fails_its_step_and_the_run_goes_on(tmp_path, func, returns,
                                                                 kind) -> None:
    run, world = run_all(tmp_path, definitions("python:act", returns), {"act": func})
    assert_one_step_failed(run, world, kind)


@pytest.mark.parametrize(("path", "returns"), [("/bad-iri", "ward"), ("/surrogate", "ref")])
def test_http_tool_bad_value_is_rejected_for_its_step(tmp_path, path, returns) -> None:
    httpd, base, _ = serve()
    try:
        run, world = run_all(tmp_path, definitions(base + path, returns))
    finally:
        httpd.shutdown()
    assert_one_step_failed(run, world, "gate_rejected")


@pytest.mark.parametrize(("remote", "returns"),
                         [("iri_with_space", "ward"), ("surrogate", "ref")])
def test_mcp_tool_bad_value_is_rejected_for_its_step(tmp_path, remote, returns) -> None:
    server = (f':clinic a horis:McpServer ; horis:command "python" ; '
              f'horis:args ( "{SERVER.as_posix()}" ) .\n')
    run, world = run_all(tmp_path, definitions(f"mcp://clinic/{remote}", returns, server))
    assert_one_step_failed(run, world, "gate_rejected")


def test_cli_run_survives_a_tool_calling_sys_exit(tmp_path) -> None:
    (tmp_path / "defs.ttl").write_text(definitions("python:act", "ward"), encoding="utf-8")
    (tmp_path / "world.ttl").write_text(WORLD, encoding="utf-8")
    (tmp_path / "mytools.py").write_text(
        "import sys\n\ndef act(patient):\n    if patient.endswith('p1'):\n        sys.exit(3)\n"
        "    return {'ward': 'http://example.org/clinic#w1'}\n\n"
        "def note(patient):\n    return {}\n", encoding="utf-8")
    p = horismos_forked(tmp_path, "run", "defs.ttl", "--world", "world.ttl", "--tools", "mytools",
                        "--all", "--trace", "t.jsonl", timeout=120)
    assert "Traceback" not in p.stderr
    assert p.returncode == 0, p.stdout + p.stderr   # each instance completed, via onError
    assert "SystemExit" in p.stdout + p.stderr
    assert '"type":"end"' in (tmp_path / "t.jsonl").read_text()


def test_cli_run_survives_a_tool_raising_a_base_exception_of_its_own(tmp_path) -> None:
    """Not SystemExit nor KeyboardInterrupt, which were caught, but a class of the tool's
    own deriving from BaseException: `run` printed a Python traceback and died, its trace
    ending without an end event, and the other patients were never run."""
    (tmp_path / "defs.ttl").write_text(definitions("python:act", "ward"), encoding="utf-8")
    (tmp_path / "world.ttl").write_text(WORLD, encoding="utf-8")
    (tmp_path / "mytools.py").write_text(
        "class Halt(BaseException):\n    pass\n\n"
        "def act(patient):\n    if patient.endswith('p1'):\n        raise Halt('stop now')\n"
        "    return {'ward': 'http://example.org/clinic#w1'}\n\n"
        "def note(patient):\n    return {}\n", encoding="utf-8")
    p = horismos_forked(tmp_path, "run", "defs.ttl", "--world", "world.ttl", "--tools", "mytools",
                        "--all", "--trace", "t.jsonl", timeout=120)
    assert "Traceback" not in p.stderr, p.stderr
    assert p.returncode == 0, p.stdout + p.stderr   # each instance completed, via onError
    assert "the tool raised Halt(stop now)" in p.stdout, p.stdout
    assert '"type":"end"' in (tmp_path / "t.jsonl").read_text()


def test_an_error_whose_message_cannot_be_read_is_the_tools_and_replays_the_same(
        tmp_path) -> None:
    """An exception whose `__str__` raises (a client library's error formatting a missing
    field, say): the run said the tool "raised ValueError: …", the error of the `__str__`,
    not the tool's class, and left the call's outcome out of the trace, so `replay` said
    DIVERGED ("outcomes was null when recorded") of a run that went as recorded."""
    (tmp_path / "defs.ttl").write_text(definitions("python:act", "ward"), encoding="utf-8")
    (tmp_path / "world.ttl").write_text(WORLD, encoding="utf-8")
    (tmp_path / "mytools.py").write_text(
        "class WardDown(Exception):\n"
        "    def __str__(self):\n        return self.detail['reason']\n\n"
        "def act(patient):\n    raise WardDown()\n\n"
        "def note(patient):\n    return {}\n", encoding="utf-8")
    p = horismos_forked(tmp_path, "run", "defs.ttl", "--world", "world.ttl", "--tools", "mytools",
                        "--all", "--trace", "t.jsonl", timeout=120)
    assert "Traceback" not in p.stderr, p.stderr
    assert "act raised WardDown: (its message could not be read: AttributeError" in p.stdout, (
        p.stdout)
    again = horismos_forked(tmp_path, "replay", "t.jsonl", "defs.ttl", timeout=120)
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.startswith("same "), again.stdout
