"""A run another writer stops mid-way closes its trace saying so.

Two processes on one ``sparql:`` store (a real ``oxigraph serve``): while ``horismos run``'s
tool is in its call, another writer moves the instance on (a SPARQL update of its own, as any
client of the server may send). The run's commit loses, the instance is no longer at the step
that lost, so the run stops with a :class:`~horismos.Conflict`. Its trace ended after its last
landed step with no end event, and ``trace show`` read it as a process that died.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from forked import horismos_forked
from oxigraph_server import OxigraphServer

PREFIXES = """\
@prefix :      <http://example.org/clinic#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .
"""

# a decision first, so the instance exists when the action step's commit loses
DEFINITIONS = (
    PREFIXES
    + """
:Patient a owl:Class .
:queuedAt a owl:DatatypeProperty .
:ref a owl:DatatypeProperty .
:t.assign a horis:Tool ;
    rdfs:label "Assign" ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:subject "patient" ;
        horis:asserts [ horis:property :queuedAt ; horis:value horis:now ] ;
        horis:asserts [ horis:property :ref ; horis:type xsd:string ] ] ;
    horis:binding "python:assign" ; horis:timeout "60s" ; horis:idempotent true .
:Triage a horis:Workflow ; horis:focusType :Patient ; horis:start :Go .
:acuity a owl:ObjectProperty .
:Go a horis:DecisionStep ; horis:otherwise :Queue ;
    horis:when [ horis:order 1 ; horis:requires "?this :acuity :urgent ." ; horis:next :Queue ] .
:Queue a horis:ActionStep ; horis:tool :t.assign ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""
)

# the other writer: completes the running instance, as another process driving it would
TOOLS = '''
import os
import httpx

MOVE_ON = """PREFIX horis: <https://w3id.org/horismos#>
DELETE { GRAPH <urn:horismos:instances> { ?i horis:status ?s ; horis:version ?v } }
INSERT { GRAPH <urn:horismos:instances> { ?i horis:status horis:Completed ;
                                            horis:version ?next } }
WHERE { GRAPH <urn:horismos:instances> { ?i horis:status horis:Running ; horis:status ?s ;
                                          horis:version ?v } BIND(?v + 1 AS ?next) }"""

def assign(patient):
    httpx.post(os.environ["SERVER"] + "/update", content=MOVE_ON.encode(),
               headers={"Content-Type": "application/sparql-update"}).raise_for_status()
    return {"ref": "R-1"}
'''


def cli(cwd: Path, server: OxigraphServer, *args: str) -> tuple[int, str]:
    env = dict(os.environ, SERVER=server.url)
    done = horismos_forked(cwd, *args, env=env, timeout=300)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout + done.stderr


def test_a_run_another_writer_moved_on_ends_its_trace_saying_so(
    tmp_path: Path, server: OxigraphServer
) -> None:
    (tmp_path / "defs.ttl").write_text(DEFINITIONS)
    (tmp_path / "world.ttl").write_text(PREFIXES + ":p1 a :Patient .\n")
    (tmp_path / "tools.py").write_text(TOOLS)
    assert cli(tmp_path, server, "load", "world.ttl", "--store", server.store)[0] == 0

    code, said = cli(
        tmp_path,
        server,
        "run",
        "defs.ttl",
        "--store",
        server.store,
        "--focus",
        ":p1",
        "--tools",
        "tools.py",
        "--trace",
        "t.jsonl",
    )

    assert code == 2 and "moved on by another writer" in said
    events = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    stopped, end = events[-2:]
    assert stopped["type"] == "stopped" and stopped["kind"] == "conflict"
    assert "moved on by another writer (now completed" in stopped["message"]
    assert end["type"] == "end" and end["status"] == "stopped"

    code, shown = cli(tmp_path, server, "trace", "show", "t.jsonl", "defs.ttl")
    assert code == 0
    assert "stopped: conflict: instance" in shown and "end: stopped" in shown
    assert "no end event" not in shown
    assert "was at :Queue: what that step did is not in the trace" in shown

    # replay stops where the recording was stopped, and says by what
    code, replayed = cli(tmp_path, server, "replay", "t.jsonl", "defs.ttl")
    assert code == 1 and replayed.startswith("STOPPED")
    assert "up to where the recorded run was stopped" in replayed
    assert "moved on by another writer" in replayed
