"""Adapter-mediated commits against a loopback FHIR R4 server (tests/servers/fhir_server.py).

Each test runs a real Agent over a real World against a real HTTP server on 127.0.0.1: it
hydrates resources, runs a workflow whose adapter-bound tool decides the resources to write,
and checks what the server received, what landed in the world and what the trace says.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from forked import horismos_forked
from pharmacy_ehr import ALLOW, EHR, TOKEN_VAR, complete, medication_request
from rdflib import Literal, URIRef
from servers.fhir_server import FhirServer, serve_fhir

from horismos import (
    HORIS,
    Agent,
    AuthoringError,
    GateRejected,
    OutcomeUnknown,
    PartialCommit,
    PolicyRefused,
    RemoteConflict,
    ScopeRefused,
    ToolError,
    UsageError,
    World,
    load_definitions,
    replay,
)
from horismos._policy import side_effect

FHIR = "http://hl7.org/fhir/"
DEFS = EHR + """
:t.dispense a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "request" ; horis:type fhir:MedicationRequest ] ] ;
    horis:adapter :ehr ;
    horis:commitScope {scopes} ;
    horis:binding "python:{binding}" ;
    horis:timeout "{timeout}" .

:Dispense a horis:Workflow ;
    horis:focusType fhir:Patient ;
    horis:start :DispenseStep .

:DispenseStep a horis:ActionStep ;
    horis:tool :t.dispense ;
    horis:requires \"\"\"?request a fhir:MedicationRequest ; fhir:status "active" ;
                         fhir:subject [ fhir:reference ?this ] .\"\"\" ;
    horis:forEach {for_each} ;
    horis:onError :Settle .

:Settle a horis:WaitStep ;
    horis:reason "the commit did not land whole: a pharmacist re-hydrates and decides" ;
    horis:wake horis:OperatorInput ;
    horis:delivery horis:Silent .
"""

BOTH = '"patient/MedicationRequest.write", "patient/MedicationDispense.write"'


def dispense(request: dict[str, Any]) -> dict[str, Any]:
    """Decide: the request is completed and a dispense recorded, all or nothing."""
    done = {**request, "status": "completed"}
    record = {"resourceType": "MedicationDispense", "status": "completed",
              "authorizingPrescription": [{"reference": f"MedicationRequest/{request['id']}"}],
              "subject": request["subject"]}
    return {"resourceType": "Bundle", "type": "transaction",
            "entry": [{"resource": done}, {"resource": record}]}


TOOLS = {"dispense": dispense, "complete": complete}


@pytest.fixture
def fhir(fhir: FhirServer) -> FhirServer:
    """conftest.py's, the patient holding a second active request."""
    fhir.put(medication_request("mr2"))
    return fhir


def agent_for(tmp_path: Path, server: FhirServer, *, binding: str = "dispense",
              scopes: str = BOTH, granted: str = BOTH, for_each: bool = False,
              timeout: str = "2s") -> Agent:
    path = tmp_path / "pharmacy.ttl"
    path.write_text(DEFS.format(base=server.base, token_var=TOKEN_VAR, granted=granted,
                                scopes=scopes, binding=binding, timeout=timeout,
                                for_each=str(for_each).lower()))
    return Agent.from_files(path, tools=TOOLS)


def hydrated(agent: Agent, *refs: str) -> World:
    world = World.open("memory")
    agent.hydrate(world, "ehr", ["Patient/p1", *refs])
    return world


def node(server: FhirServer, ref: str) -> URIRef:
    return URIRef(f"{server.base}/{ref}")


def projection(server: FhirServer, ref: str) -> URIRef:
    return URIRef(f"urn:horismos:projection:{server.base}/{ref}")


def version(world: World, server: FhirServer, ref: str) -> str | None:
    found = list(world.graph.objects(projection(server, ref), HORIS.sourceVersion))
    return str(found[0]) if found else None


def facts(world: World) -> list[str]:
    """The world but for instance state and the record of a wait: what effects change."""
    return [line for line in world.canonical(include_instances=False).splitlines()
            if "<urn:horismos:wait:" not in line]


# -- declarations ---------------------------------------------------------------------------


def test_validate_reports_adapter_problems_with_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.ttl"
    path.write_text(DEFS.format(base="ftp://ehr", token_var="sk-live 123", granted='"anything"',
                                scopes='"patient/MedicationDispense.read"', binding="dispense",
                                timeout="1s", for_each="false"))
    with pytest.raises(AuthoringError) as e:
        load_definitions([path])
    found = {p.line: p.message for p in e.value.problems if p.severity == "error"}
    text = path.read_text().splitlines()
    assert any("horis:baseUrl" in m and "ftp://ehr" in text[line - 1]
               for line, m in found.items() if line), found
    assert any("tokenFromEnv" in m for m in found.values())  # a secret, not a variable's name
    assert any("grantedScope" in m for m in found.values())
    assert any("commitScope" in m for m in found.values())  # a read scope does not commit


@pytest.mark.parametrize(("adapter", "scope", "said", "hint"), [
    # "names one declared horis:Adapter, e.g. horis:adapter :ehr", with no word of :ehr meant
    (":ehrr", "patient/MedicationDispense.write", "horis:adapter :ehrr names no declared "
     "horis:Adapter", "did you mean :ehr?"),
    # the shapes' example scope of another resource, and beside it a warning to grant the
    # read scope to the adapter: the wrong way round
    (":ehr", "patient/MedicationDispense.read", 'horis:commitScope "patient/MedicationDispense'
     '.read" is no SMART-on-FHIR write scope', 'did you mean "patient/MedicationDispense.write"'
     ", which :ehr grants?"),
])
def test_an_adapter_slip_on_a_tool_is_one_error_with_what_was_meant(
        tmp_path: Path, adapter: str, scope: str, said: str, hint: str) -> None:
    path = tmp_path / "p.ttl"
    path.write_text(DEFS.format(base="http://127.0.0.1:9/fhir", token_var=TOKEN_VAR,
                                granted='"patient/MedicationDispense.write"', scopes=f'"{scope}"',
                                binding="dispense", timeout="1s", for_each="false")
                    .replace("horis:adapter :ehr ;", f"horis:adapter {adapter} ;"))
    with pytest.raises(AuthoringError) as e:
        load_definitions([path])
    tools = [p for p in e.value.problems if p.node == ":t.dispense"]  # not the FHIR terms
    assert len(tools) == 1, "\n".join(map(str, e.value.problems))
    (p,) = tools
    lines = path.read_text().splitlines()
    assert p.severity == "error" and p.message.startswith(said) and p.hint == hint, p
    assert p.line is not None and (adapter in lines[p.line - 1] or scope in lines[p.line - 1])


def test_a_commit_scope_the_adapter_does_not_grant_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "p.ttl"
    path.write_text(DEFS.format(base="http://127.0.0.1:9/fhir", token_var=TOKEN_VAR,
                                granted='"patient/MedicationRequest.write"', scopes=BOTH,
                                binding="dispense", timeout="1s", for_each="false"))
    defs = load_definitions([path])
    warned = [w for w in defs.warnings if "MedicationDispense.write" in w.message]
    assert warned and warned[0].line is not None
    tool = defs.tools[URIRef("http://example.org/pharmacy#t.dispense")]
    assert tool.adapter is not None and tool.adapter.token_env == TOKEN_VAR


# -- hydration ------------------------------------------------------------------------------


def test_hydrate_projects_each_resource_in_its_own_graph_with_its_version(
        tmp_path: Path, fhir: FhirServer) -> None:
    agent = agent_for(tmp_path, fhir)
    world = World.open("memory")
    done = agent.hydrate(world, "ehr", ["Patient/p1"],
                         search=["MedicationRequest?status=active"])
    assert sorted(h.remote_id for h in done) == ["MedicationRequest/mr1",
                                                 "MedicationRequest/mr2", "Patient/p1"]
    g = world.graph
    mr1 = node(fhir, "MedicationRequest/mr1")
    graph = g.graph(projection(fhir, "MedicationRequest/mr1"))
    assert (mr1, URIRef(FHIR + "status"), Literal("active")) in graph
    # the reference is a link to the hydrated patient's node (the JSON-LD context)
    subject = next(graph.objects(mr1, URIRef(FHIR + "subject")))
    assert next(graph.objects(subject, URIRef(FHIR + "reference"))) == node(fhir, "Patient/p1")
    meta = projection(fhir, "MedicationRequest/mr1")
    assert (meta, HORIS.provenance, HORIS.AdapterProvenance) in graph
    assert version(world, fhir, "MedicationRequest/mr1") == "1"
    assert list(graph.objects(meta, HORIS.readAt))
    assert ("GET", "/MedicationRequest") in fhir.log


def test_rehydration_replaces_the_projection_whole(tmp_path: Path, fhir: FhirServer) -> None:
    agent = agent_for(tmp_path, fhir)
    world = hydrated(agent, "MedicationRequest/mr1")
    fhir.remote_update("MedicationRequest", "mr1", status="on-hold",
                       note=[{"text": "paused"}])
    agent.hydrate(world, "ehr", ["MedicationRequest/mr1"])
    graph = world.graph.graph(projection(fhir, "MedicationRequest/mr1"))
    mr1 = node(fhir, "MedicationRequest/mr1")
    assert set(graph.objects(mr1, URIRef(FHIR + "status"))) == {Literal("on-hold")}
    assert version(world, fhir, "MedicationRequest/mr1") == "2"
    assert len(list(graph.objects(projection(fhir, "MedicationRequest/mr1"),
                                  HORIS.sourceJson))) == 1


def test_hydration_without_the_token_sends_nothing(tmp_path: Path, fhir: FhirServer,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    agent = agent_for(tmp_path, fhir)
    monkeypatch.delenv(TOKEN_VAR)
    with pytest.raises(Exception, match=TOKEN_VAR):
        agent.hydrate(World.open("memory"), "ehr", ["Patient/p1"])
    assert fhir.log == []


# -- conditional commits --------------------------------------------------------------------


def test_a_token_not_set_refuses_the_run_and_the_call_before_anything_is_decided(
        tmp_path: Path, fhir: FhirServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the adapter's token variable unset, every instance decided, failed to send and
    went on to its horis:onError wait (a pharmacist) for want of an environment variable, and
    the catalog listed no variable and said the tool executable. It is refused before any
    step, as an HTTP binding's header variable is, and the catalog's env check refuses it."""
    agent = agent_for(tmp_path, fhir)
    world = hydrated(agent, "MedicationRequest/mr1")
    before = facts(world)
    monkeypatch.delenv(TOKEN_VAR)
    with pytest.raises(ToolError, match=f"export {TOKEN_VAR}=…"):
        agent.run(world, ":Dispense", node(fhir, "Patient/p1"), allow=ALLOW)
    assert fhir.writes() == [] and facts(world) == before
    assert agent.catalog.list()[0].to_json()["dependencies"]["env"] == [TOKEN_VAR]
    request = {"request": node(fhir, "MedicationRequest/mr1").n3()}
    called = agent.catalog.call("t.dispense", request, world, allow=list(ALLOW))
    assert called.status == "refused" and called.error is not None
    assert called.error["kind"] == "env" and TOKEN_VAR in called.error["message"]
    assert fhir.writes() == [] and facts(world) == before


def test_a_host_outside_the_policy_refuses_the_run_and_the_call_before_anything_is_decided(
        tmp_path: Path, fhir: FhirServer) -> None:
    """An adapter's host outside --allow-host let a run decide every instance, fail each
    commit and send the instance to its horis:onError wait, and the catalog listed the tool
    as callable, reaching no host. Refused before any step and by the catalog, as an HTTP
    binding's host is (docs/adapters.md: "the same reach rules as HTTP bindings")."""
    agent_for(tmp_path, fhir)  # writes pharmacy.ttl
    world = hydrated(Agent.from_files(tmp_path / "pharmacy.ttl", tools=TOOLS),
                     "MedicationRequest/mr1")
    before = facts(world)
    agent = Agent.from_files(tmp_path / "pharmacy.ttl", tools=TOOLS,
                             allow_hosts=["ehr.example.org"])
    with pytest.raises(ToolError, match=r"is refused before any request: host 127\.0\.0\.1"):
        agent.run(world, ":Dispense", node(fhir, "Patient/p1"), allow=ALLOW)
    assert fhir.writes() == [] and facts(world) == before
    (entry,) = agent.catalog.list()
    assert entry.readiness == "catalog_only" and entry.to_json()["dependencies"]["hosts"] == [
        "127.0.0.1"]
    request = {"request": node(fhir, "MedicationRequest/mr1").n3()}
    called = agent.catalog.call("t.dispense", request, world, allow=list(ALLOW))
    assert called.status == "refused" and called.error is not None
    assert called.error["kind"] == "binding", called.error
    assert fhir.writes() == [] and facts(world) == before


def test_accepted_commit_lands_with_its_receipt_and_new_version(
        tmp_path: Path, fhir: FhirServer) -> None:
    agent = agent_for(tmp_path, fhir)
    world = hydrated(agent, "MedicationRequest/mr1")
    run = agent.run(world, ":Dispense", node(fhir, "Patient/p1"), allow=ALLOW)
    assert run.status == "completed", run.error
    step = run.steps[0]
    assert [r["outcome"] for r in step.receipts] == ["accepted", "accepted"]
    assert step.receipts[0]["expected_version"] == "1" and step.receipts[0]["version"] == "2"
    assert fhir.current("MedicationRequest", "mr1")["status"] == "completed"
    # the projection follows: version 2, status completed, its location and provenance
    assert version(world, fhir, "MedicationRequest/mr1") == "2"
    dispensed = step.receipts[1]["ref"]
    assert dispensed.startswith("MedicationDispense/")
    meta = projection(fhir, dispensed)
    graph = world.graph.graph(meta)
    assert (meta, HORIS.provenance, HORIS.AdapterProvenance) in graph
    assert str(next(graph.objects(meta, HORIS.location))).endswith("/_history/1")
    assert str(next(graph.objects(meta, HORIS.remoteId))) == dispensed
    events = [e for e in run.trace.events if e["type"] == "step"]
    assert events[0]["receipts"] == step.receipts
    assert events[0]["remote"][0]["returned"]  # the remote answer, recorded for replay
    assert fhir.token not in json.dumps(run.trace.events)  # the secret never reaches a trace


def test_conflict_after_a_concurrent_update_lands_nothing(tmp_path: Path,
                                                          fhir: FhirServer) -> None:
    agent = agent_for(tmp_path, fhir)
    world = hydrated(agent, "MedicationRequest/mr1")
    fhir.remote_update("MedicationRequest", "mr1", status="on-hold")  # after hydration
    before = facts(world)
    run = agent.run(world, ":Dispense", node(fhir, "Patient/p1"), allow=ALLOW)
    step = run.steps[0]
    assert isinstance(step.error, RemoteConflict)
    assert step.error.resources == ("MedicationRequest/mr1", "MedicationDispense")
    assert [r["outcome"] for r in step.receipts] == ["conflicted", "conflicted"]
    assert step.receipts[0]["status"] == 412
    assert run.status == "waiting" and run.steps[-1].step.endswith("#Settle")  # onError
    assert facts(world) == before  # nothing landed
    assert fhir.current("MedicationRequest", "mr1")["status"] == "on-hold"
    assert not any(k == "MedicationDispense" for k, _ in fhir.versions)


def test_a_mismatch_seen_before_sending_is_a_conflict_and_sends_nothing(
        tmp_path: Path, fhir: FhirServer) -> None:
    def stale(request: dict[str, Any]) -> dict[str, Any]:
        return {**request, "status": "completed", "meta": {"versionId": "7"}}

    agent = agent_for(tmp_path, fhir, binding="stale",
                      scopes='"patient/MedicationRequest.write"')
    agent.tools["stale"] = stale
    world = hydrated(agent, "MedicationRequest/mr1")
    run = agent.run(world, ":Dispense", node(fhir, "Patient/p1"), allow=ALLOW)
    assert isinstance(run.steps[0].error, RemoteConflict)
    assert fhir.writes() == []


# -- scopes ---------------------------------------------------------------------------------


def test_an_adapter_tool_is_an_external_commit_the_policy_must_allow(
        tmp_path: Path, fhir: FhirServer) -> None:
    agent = agent_for(tmp_path, fhir)
    world = hydrated(agent, "MedicationRequest/mr1")
    run = agent.run(world, ":Dispense", node(fhir, "Patient/p1"))  # the default policy
    assert run.status == "blocked"
    assert isinstance(run.error, PolicyRefused) and run.error.side_effect == "ExternalCommit"
    assert fhir.writes() == []


def test_an_adapter_tool_declared_read_only_is_refused_and_still_an_external_commit(
        tmp_path: Path, fhir: FhirServer) -> None:
    # horis:sideEffect horis:ReadOnly on the dispense tool validated, and a run with the
    # default policy committed MedicationRequest and MedicationDispense to the EHR.
    agent_for(tmp_path, fhir)
    path = tmp_path / "pharmacy.ttl"
    adapter = "    horis:adapter :ehr ;"
    path.write_text(path.read_text().replace(
        adapter, adapter + "\n    horis:sideEffect horis:ReadOnly ;"))
    with pytest.raises(AuthoringError) as raised:
        Agent.from_files(path, tools=TOOLS)
    (e,) = [p for p in raised.value.problems if p.severity == "error"]
    assert "horis:sideEffect horis:ReadOnly on a tool bound to a horis:Adapter" in e.message
    assert e.line is not None and "horis:sideEffect" in path.read_text().splitlines()[e.line - 1]
    # what the policy reads of such a tool, should one be built past validate
    defs = raised.value.definitions
    assert defs is not None
    (tool,) = [t for t in defs.tools.values() if t.adapter is not None]
    assert tool.side_effect == HORIS.ReadOnly and side_effect(tool) == "ExternalCommit"


def test_a_scope_not_granted_is_refused_before_anything_is_sent(
        tmp_path: Path, fhir: FhirServer) -> None:
    agent = agent_for(tmp_path, fhir, granted='"patient/MedicationRequest.write"')
    world = hydrated(agent, "MedicationRequest/mr1")
    before = facts(world)
    run = agent.run(world, ":Dispense", node(fhir, "Patient/p1"), allow=ALLOW)
    err = run.steps[0].error
    assert isinstance(err, ScopeRefused)
    assert err.missing == "patient/MedicationDispense.write"
    assert "patient/MedicationDispense.write" in str(err)
    assert fhir.writes() == [] and facts(world) == before


def test_a_decided_write_outside_the_tool_scopes_is_refused(tmp_path: Path,
                                                            fhir: FhirServer) -> None:
    agent = agent_for(tmp_path, fhir, scopes='"patient/MedicationRequest.write"')
    world = hydrated(agent, "MedicationRequest/mr1")
    run = agent.run(world, ":Dispense", node(fhir, "Patient/p1"), allow=ALLOW)
    err = run.steps[0].error
    assert isinstance(err, ScopeRefused) and err.missing == "patient/MedicationDispense.c"
    assert fhir.writes() == []
    # nor from the catalog: nothing was sent, so nothing is held in doubt and it may be
    # called again (a decision is not an act; only a commit is)
    request = {"request": node(fhir, "MedicationRequest/mr1").n3()}
    for _ in range(2):
        called = agent.catalog.call("t.dispense", request, world, allow=list(ALLOW))
        assert called.status == "failed" and called.error is not None
        assert "may already have acted" not in called.error["message"]
    assert fhir.writes() == []


# -- the gate -------------------------------------------------------------------------------

DISPENSE_SHAPE = """\
@prefix fhir: <http://hl7.org/fhir/> .
@prefix sh:   <http://www.w3.org/ns/shacl#> .
@prefix :     <http://example.org/pharmacy#> .

:DispenseShape a sh:NodeShape ;
    sh:targetClass fhir:MedicationDispense ;
    sh:property [ sh:path fhir:status ; sh:minCount 1 ; sh:maxCount 1 ;
                  sh:in ( "preparation" "in-progress" "completed" ) ] .
"""


def test_a_decided_resource_that_breaks_a_domain_shape_is_never_sent(
        tmp_path: Path, fhir: FhirServer) -> None:
    def sloppy(request: dict[str, Any]) -> dict[str, Any]:
        bundle = dispense(request)
        bundle["entry"][1]["resource"]["status"] = "handed-over"  # not a dispense status
        return bundle

    shapes = tmp_path / "shapes.ttl"
    shapes.write_text(DISPENSE_SHAPE)
    agent_for(tmp_path, fhir)  # writes pharmacy.ttl
    agent = Agent.from_files(tmp_path / "pharmacy.ttl", shapes,
                             tools={**TOOLS, "dispense": sloppy})
    # the class is the adapter's, not the files': validate said the shape "never applies"
    # and hinted fhir:MedicationRequest, which would have refused every dispense
    assert [w for w in agent.definitions.warnings if "MedicationDispense" in w.message] == []
    world = hydrated(agent, "MedicationRequest/mr1")
    before = facts(world)
    run = agent.run(world, ":Dispense", node(fhir, "Patient/p1"), allow=ALLOW)
    err = run.steps[0].error
    assert isinstance(err, GateRejected), err
    assert "MedicationDispense" in str(err) and "handed-over" in str(err.messages[0].value)
    assert fhir.writes() == [] and facts(world) == before  # nothing sent, nothing landed
    assert run.status == "waiting" and run.steps[-1].step.endswith("#Settle")  # onError

    good = Agent.from_files(tmp_path / "pharmacy.ttl", shapes, tools=TOOLS)
    assert good.run(hydrated(good, "MedicationRequest/mr1"), ":Dispense",
                    node(fhir, "Patient/p1"), allow=ALLOW).status == "completed"


# -- partial success ------------------------------------------------------------------------


def test_partial_success_of_a_batch_lands_exactly_the_accepted(tmp_path: Path,
                                                              fhir: FhirServer) -> None:
    def both(request: dict[str, Any]) -> list[dict[str, Any]]:
        other = fhir.current("MedicationRequest", "mr2")
        return [{**request, "status": "completed"},
                {**other, "status": "completed", "meta": {}}]

    agent = agent_for(tmp_path, fhir, binding="both",
                      scopes='"patient/MedicationRequest.write"')
    agent.tools["both"] = both
    fhir.remote_update("MedicationRequest", "mr2", status="on-hold")  # v2: not a focus
    world = hydrated(agent, "MedicationRequest/mr1", "MedicationRequest/mr2")
    fhir.remote_update("MedicationRequest", "mr2", note=[{"text": "changed"}])  # v3
    # one focus solution: the step runs once for mr1 and its tool writes both requests
    run = agent.run(world, ":Dispense", node(fhir, "Patient/p1"), allow=ALLOW)
    step = run.steps[0]
    assert step.status == "partial", step.error
    assert isinstance(step.error, PartialCommit)
    assert step.error.accepted == ("MedicationRequest/mr1",)
    assert step.error.others == (("MedicationRequest/mr2", "conflicted"),)
    assert [r["outcome"] for r in step.receipts] == ["accepted", "conflicted"]
    assert version(world, fhir, "MedicationRequest/mr1") == "2"  # landed
    assert version(world, fhir, "MedicationRequest/mr2") == "2"  # untouched
    assert run.status == "waiting"  # onError, as no horis:onPartial is declared
    event = next(e for e in run.trace.events if e["type"] == "step")
    assert event["status"] == "partial" and event["error"]["kind"] == "partial"


BOTH_PY = """\
def both(request):
    other = {"resourceType": "MedicationRequest", "id": "mr2", "status": "completed",
             "intent": "order", "subject": request["subject"]}
    return [{**request, "status": "completed"}, other]
"""


def test_a_catalog_call_accepted_in_part_says_partial_and_what_landed(
        tmp_path: Path, fhir: FhirServer, capsys: pytest.CaptureFixture[str]) -> None:
    """`tools call` of an adapter-bound tool whose writes the EHR accepted in part ended in a
    traceback (KeyError: 'partial'), and the receipt said "nothing changed" of effects that
    had landed; the envelope's status was none its schema allows."""
    from horismos._cli import main
    from horismos._envelopes import CallEnvelope

    agent = agent_for(tmp_path, fhir, binding="both",
                      scopes='"patient/MedicationRequest.write"')
    (tmp_path / "both.py").write_text(BOTH_PY)
    ns: dict[str, Any] = {}
    exec(BOTH_PY, ns)
    agent.tools["both"] = ns["both"]
    world = hydrated(agent, "MedicationRequest/mr1", "MedicationRequest/mr2")
    fhir.remote_update("MedicationRequest", "mr2", note=[{"text": "changed"}])  # v2
    request = {"request": node(fhir, "MedicationRequest/mr1").n3()}
    called = agent.catalog.call("t.dispense", request, world, allow=list(ALLOW))
    assert called.status == "partial" and called.error is not None, called.error
    assert called.error["kind"] == "partial" and called.effects
    assert "nothing changed" not in called.receipt()
    assert f"{len(called.effects)} effects landed" in called.receipt()
    CallEnvelope.model_validate(called.to_json())

    out = tmp_path / "world.trig"  # the same from the command line, mr1 now at version 2
    assert main(["hydrate", str(tmp_path / "pharmacy.ttl"), "--id", "Patient/p1",
                 "--search", "MedicationRequest?subject=Patient/p1", "--out", str(out)]) == 0
    fhir.remote_update("MedicationRequest", "mr2", note=[{"text": "again"}])  # v3
    capsys.readouterr()
    code = main(["tools", "call", "t.dispense", str(tmp_path / "pharmacy.ttl"), "--world",
                 str(out), "--tools", str(tmp_path / "both.py"), "--allow", ",".join(ALLOW),
                 "--args", json.dumps(request), "--format", "json"])
    envelope = json.loads(capsys.readouterr().out)
    assert code == 1 and envelope["status"] == "partial", envelope
    assert envelope["effects"] and envelope["error"]["kind"] == "partial"
    CallEnvelope.model_validate(envelope)
    assert "nothing changed" not in envelope["content"][0]["text"]


def test_partial_success_of_a_for_each_step(tmp_path: Path, fhir: FhirServer) -> None:
    agent = agent_for(tmp_path, fhir, binding="complete",
                      scopes='"patient/MedicationRequest.write"', for_each=True)
    world = hydrated(agent, "MedicationRequest/mr1", "MedicationRequest/mr2")
    fhir.remote_update("MedicationRequest", "mr2", status="on-hold")
    run = agent.run(world, ":Dispense", node(fhir, "Patient/p1"), allow=ALLOW)
    step = run.steps[0]
    assert step.status == "partial"
    assert sorted((r["ref"], r["outcome"]) for r in step.receipts) == [
        ("MedicationRequest/mr1", "accepted"), ("MedicationRequest/mr2", "conflicted")]
    assert version(world, fhir, "MedicationRequest/mr1") == "2"
    assert version(world, fhir, "MedicationRequest/mr2") == "1"


# -- unknown outcomes -----------------------------------------------------------------------


def test_a_timeout_after_sending_is_unknown_and_never_resent(tmp_path: Path,
                                                            fhir: FhirServer) -> None:
    agent = agent_for(tmp_path, fhir, binding="complete",
                      scopes='"patient/MedicationRequest.write"', timeout="300ms")
    world = hydrated(agent, "MedicationRequest/mr1")
    before = facts(world)
    fhir.delay = 1.0  # applied, answered too late
    run = agent.run(world, ":Dispense", node(fhir, "Patient/p1"), allow=ALLOW)
    step = run.steps[0]
    assert isinstance(step.error, OutcomeUnknown)
    assert [r["outcome"] for r in step.receipts] == ["unknown"]
    assert fhir.writes() == [("PUT", "/MedicationRequest/mr1")]  # once, never again
    assert facts(world) == before
    assert run.status == "waiting"
    # it did act remotely: re-hydration settles it
    fhir.delay = 0
    agent.hydrate(world, "ehr", ["MedicationRequest/mr1"])
    assert version(world, fhir, "MedicationRequest/mr1") == "2"


def test_a_commit_answered_past_the_cap_is_unknown_and_never_resent(
        tmp_path: Path, fhir: FhirServer) -> None:
    agent = agent_for(tmp_path, fhir, binding="complete",
                      scopes='"patient/MedicationRequest.write"')
    world = hydrated(agent, "MedicationRequest/mr1")
    before = facts(world)
    fhir.padding = 2 << 20  # past the tool's horis:maxResultBytes (1 MiB by default)
    run = agent.run(world, ":Dispense", node(fhir, "Patient/p1"), allow=ALLOW)
    step = run.steps[0]
    assert isinstance(step.error, OutcomeUnknown)
    (receipt,) = step.receipts
    assert receipt["outcome"] == "unknown"
    assert "larger than 1,048,576 bytes" in receipt["message"]
    assert fhir.writes() == [("PUT", "/MedicationRequest/mr1")]  # it acted: never sent again
    assert facts(world) == before


def test_hydration_refuses_an_answer_past_its_cap_and_lands_nothing(
        tmp_path: Path, fhir: FhirServer) -> None:
    agent = agent_for(tmp_path, fhir)
    world = World.open("memory")
    fhir.padding = 17 << 20
    with pytest.raises(ToolError, match="answered more than 16,777,216 bytes"):
        agent.hydrate(world, "ehr", ["Patient/p1"])
    assert facts(world) == []


# -- replay ---------------------------------------------------------------------------------


def test_replay_offline_substitutes_the_recorded_outcomes(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    with serve_fhir() as server:
        server.put({"resourceType": "Patient", "id": "p1"})
        server.put({"resourceType": "MedicationRequest", "id": "mr1", "status": "active",
                    "subject": {"reference": "Patient/p1"}})
        path = tmp_path / "pharmacy.ttl"
        path.write_text(DEFS.format(base=server.base, token_var="", granted=BOTH,
                                    scopes=BOTH, binding="dispense", timeout="2s",
                                    for_each="false").replace(
                                        'horis:tokenFromEnv "" ;', ""))
        agent = Agent.from_files(path, tools=TOOLS)
        world = World.open("memory")
        agent.hydrate(world, "ehr", ["Patient/p1", "MedicationRequest/mr1"])
        server.remote_update("MedicationRequest", "mr1", note=[{"text": "checked"}])
        agent.hydrate(world, "ehr", ["MedicationRequest/mr1"])  # decided against v2
        run = agent.run(world, ":Dispense", f"{server.base}/Patient/p1", trace=trace,
                        allow=ALLOW)
        assert run.status == "completed", run.error
        sent = len(server.log)
    # the server is gone: a replay that sent anything would fail
    report = replay(trace, Agent.from_files(path, tools=TOOLS))
    assert not report.diverged, str(report)
    assert sent == len(server.log)
    recorded = [json.loads(line) for line in trace.read_text().splitlines()]
    step = next(e for e in recorded if e["type"] == "step")
    assert step["receipts"][0]["expected_version"] == "2"


def test_on_partial_is_taken_when_declared(tmp_path: Path, fhir: FhirServer) -> None:
    agent = agent_for(tmp_path, fhir, binding="complete",
                      scopes='"patient/MedicationRequest.write"', for_each=True)
    path = tmp_path / "pharmacy.ttl"
    path.write_text(path.read_text().replace(
        "horis:onError :Settle .", "horis:onError :Settle ;\n    horis:onPartial :Mixed .")
        + """
:Mixed a horis:WaitStep ;
    horis:reason "some requests were completed, some not" ;
    horis:wake horis:OperatorInput ;
    horis:delivery horis:Silent .
""")
    agent = Agent.from_files(path, tools=TOOLS)
    world = hydrated(agent, "MedicationRequest/mr1", "MedicationRequest/mr2")
    fhir.remote_update("MedicationRequest", "mr2", note=[{"text": "changed"}])
    run = agent.run(world, ":Dispense", node(fhir, "Patient/p1"), allow=ALLOW)
    assert [r.status for r in run.steps] == ["partial", "waiting"]
    assert run.steps[-1].step.endswith("#Mixed")


def test_a_for_each_call_that_raises_keeps_the_others_accepted(tmp_path: Path,
                                                             fhir: FhirServer) -> None:
    def picky(request: dict[str, Any]) -> dict[str, Any]:
        if request["id"] == "mr2":
            raise ValueError("no stock for mr2")
        return {**request, "status": "completed"}

    agent = agent_for(tmp_path, fhir, binding="picky",
                      scopes='"patient/MedicationRequest.write"', for_each=True)
    agent.tools["picky"] = picky
    world = hydrated(agent, "MedicationRequest/mr1", "MedicationRequest/mr2")
    run = agent.run(world, ":Dispense", node(fhir, "Patient/p1"), allow=ALLOW)
    step = run.steps[0]
    assert step.status == "partial"
    assert isinstance(step.error, PartialCommit)
    assert step.error.accepted == ("MedicationRequest/mr1",)
    assert step.error.others == (("(decision)", "tool_error"),)
    assert version(world, fhir, "MedicationRequest/mr1") == "2"  # it happened: it landed
    assert fhir.writes() == [("PUT", "/MedicationRequest/mr1")]


def test_an_update_of_a_resource_never_hydrated_is_refused(tmp_path: Path,
                                                          fhir: FhirServer) -> None:
    def other(request: dict[str, Any]) -> dict[str, Any]:
        return {"resourceType": "Patient", "id": "p9", "active": False}

    agent = agent_for(tmp_path, fhir, binding="other", scopes='"patient/*.write"',
                      granted='"patient/*.write"')
    agent.tools["other"] = other
    world = hydrated(agent, "MedicationRequest/mr1")
    run = agent.run(world, ":Dispense", node(fhir, "Patient/p1"), allow=ALLOW)
    assert "hydrate it first" in str(run.steps[0].error)
    assert fhir.writes() == []


def test_cli_hydrate_writes_the_projection_to_a_world_file(tmp_path: Path, fhir: FhirServer,
                                                          capsys: pytest.CaptureFixture[str],
                                                          ) -> None:
    from horismos._cli import main

    agent_for(tmp_path, fhir)
    out = tmp_path / "world.trig"
    code = main(["hydrate", str(tmp_path / "pharmacy.ttl"), "--id", "Patient/p1",
                 "--search", "MedicationRequest?subject=Patient/p1", "--out", str(out),
                 "--allow-host", "127.0.0.1"])
    assert code == 0, capsys.readouterr().err
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and lines[0].startswith("MedicationRequest/mr1  version 1")
    world = World.from_files(out)
    assert version(world, fhir, "Patient/p1") == "1"
    # a host outside --allow-host is refused before any request, with no traceback
    fhir.log.clear()
    code = main(["hydrate", str(tmp_path / "pharmacy.ttl"), "--id", "Patient/p1",
                 "--out", str(out), "--allow-host", "ehr.example.org"])
    assert code != 0 and fhir.log == []
    assert "Traceback" not in capsys.readouterr().err


# -- the mapping ----------------------------------------------------------------------------


@pytest.mark.parametrize("resource", [
    {"resourceType": "MedicationRequest", "id": "mr1", "status": "active", "intent": "order",
     "subject": {"reference": "Patient/p1"}, "meta": {"versionId": "3"},
     "dosageInstruction": [{"text": "1/day", "timing": {"repeat": {"frequency": 1}}}],
     "contained": [{"resourceType": "Medication", "id": "m", "code": {"text": "x"}}],
     "medicationReference": {"reference": "#m"}},
    {"resourceType": "Observation", "id": "o1", "status": "final",
     "valueQuantity": {"value": 5.5, "unit": "mg"}, "issued": "2024-01-01T00:00:00Z",
     "interpretation": [], "note": None, "focus": [{"reference": "urn:uuid:abc"}],
     "derivedFrom": [{"reference": "https://other.example/fhir/Observation/9"}],
     "_status": {"extension": [{"url": "http://x", "valueBoolean": False}]},
     "component": [{"valueInteger": 0}, {"valueInteger": 12}, {}],
     "text": {"div": "<div xmlns=\"http://www.w3.org/1999/xhtml\">é ✓</div>"}},
    {"resourceType": "Patient", "id": "p1", "active": True, "multipleBirthInteger": 2,
     "name": [{"given": ["Ann", "Ann", "Lee"], "family": "Ng"}]},
])
def test_the_mapping_is_what_a_json_ld_processor_gives(resource: dict[str, Any]) -> None:
    from horismos._fhir import jsonld_triples, to_triples

    base = "https://ehr.example.org/fhir"
    assert set(to_triples(resource, base)) == set(jsonld_triples(resource, base))


# -- at most once across processes ---------------------------------------------------------

RECORD = '''
def record(request):
    """Decide: a dispense recorded against the request, a create (POST) every time."""
    return {"resourceType": "MedicationDispense", "status": "completed",
            "authorizingPrescription": [{"reference": "MedicationRequest/" + request["id"]}]}
'''


@pytest.mark.parametrize("declared", ["", " ;\n    horis:idempotent true"])
def test_a_run_killed_at_any_commit_and_run_again_sends_a_create_at_most_once(
        tmp_path: Path, fhir: FhirServer, declared: str) -> None:
    """``horismos run`` of an adapter-bound tool whose decision is a create, SIGKILLed at each
    commit boundary (tests/kill_at.py) and run again: the EHR receives the create at most
    once. Declared ``horis:idempotent true`` (its decision is a pure function), the tool
    announced no intent before its commit was sent, so a run killed after sending and run
    again sent it again: it is now an authoring error at that line, and nothing is sent."""
    defs = DEFS.format(base=fhir.base, token_var=TOKEN_VAR, granted=BOTH, scopes=BOTH,
                       binding="record.record", timeout="5s", for_each="false")
    defs = defs.replace("horis:focusType fhir:Patient", "horis:focusType fhir:MedicationRequest")
    defs = defs.replace("fhir:subject [ fhir:reference ?this ] .", "FILTER (?request = ?this)")
    start = tmp_path / "start"
    start.mkdir()
    (start / "pharmacy.ttl").write_text(defs)
    (start / "record.py").write_text(RECORD)
    kill_at = Path(__file__).parent / "kill_at.py"

    def horismos(cwd: Path, *args: str, kill: str = "") -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k != "KILL_AT"}
        return horismos_forked(cwd, *args, env={**env, "KILL_AT": kill} if kill else env,
                               timeout=300, script=kill_at)

    store = ("--store", "oxigraph:store", "--allow-host", "127.0.0.1")
    hydrated = horismos(start, "hydrate", "pharmacy.ttl", "--id", "MedicationRequest/mr1",
                        *store)
    assert hydrated.returncode == 0, hydrated.stdout + hydrated.stderr
    run = ("run", "pharmacy.ttl", *store, "--all", "--tools", "record.py", "--allow",
           ",".join(ALLOW))
    creates = [("POST", "/MedicationDispense")]
    if declared:
        (start / "pharmacy.ttl").write_text(defs.replace('horis:timeout "5s"',
                                                         'horis:timeout "5s"' + declared))
        refused = horismos(start, *run)
        assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
        assert "horis:idempotent true on a tool bound to a horis:Adapter" in refused.stderr
        line = (start / "pharmacy.ttl").read_text().splitlines().index(
            "    horis:idempotent true .") + 1
        assert f"pharmacy.ttl:{line}: error" in refused.stderr
        assert fhir.writes() == []
        return
    boundaries = 0
    for when in ("before", "after"):
        for nth in range(1, 20):
            cwd = tmp_path / f"{when}-{nth}"
            shutil.copytree(start, cwd)
            fhir.log.clear()
            killed = horismos(cwd, *run, kill=f"{when}:{nth}")
            if killed.returncode != -signal.SIGKILL:  # past its last commit: it ran to its end
                assert killed.returncode == 0, killed.stdout + killed.stderr
                assert fhir.writes() == creates
                break
            boundaries += 1
            again = horismos(cwd, *run)
            assert "Traceback" not in again.stderr
            assert len(fhir.writes()) <= 1, (when, nth, again.stdout + again.stderr)
            horismos(cwd, *run)  # and once more
            assert len(fhir.writes()) <= 1, (when, nth)
    assert boundaries >= 4  # the intent and the step's commit, each side


def test_trace_show_gives_a_conflicted_commits_receipts_and_its_on_error_edge(
        tmp_path: Path, fhir: FhirServer) -> None:
    """`run` printed under the step what the EHR kept of each effect (`remote: …
    conflicted`) and the `horis:onError` edge taken; `trace show` of the same run printed
    neither, though the trace holds both, and a reviewer could not see what the system of
    record did nor why the instance went on to the pharmacist."""
    agent = agent_for(tmp_path, fhir)
    world = hydrated(agent, "MedicationRequest/mr1")
    fhir.remote_update("MedicationRequest", "mr1", status="on-hold")  # after hydration
    agent.run(world, ":Dispense", node(fhir, "Patient/p1"), allow=ALLOW,
              trace=tmp_path / "t.jsonl")
    shown = horismos_forked(tmp_path, "trace", "show", "t.jsonl", "pharmacy.ttl", timeout=120)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    lines = shown.stdout.splitlines()
    (failed,) = (i for i, line in enumerate(lines) if "  :DispenseStep  " in line)
    assert lines[failed + 1] == (
        "    remote: MedicationRequest/mr1 conflicted; MedicationDispense conflicted")
    assert lines[failed + 2] == "    onError -> :Settle"


def test_hydrating_with_definitions_that_declare_no_adapter_says_so(tmp_path: Path) -> None:
    """Definitions with no ``horis:Adapter`` (the triage example) were answered "name the
    adapter (declared: none)" — from Python and, with ``--adapter``, from ``hydrate`` — a
    name asked for that none has. Each says no adapter is declared, and what to add."""
    root = Path(__file__).resolve().parent.parent
    defs = [root / "workflows" / "triage.ttl", root / "ontologies" / "ehr.ttl"]
    agent = Agent.from_files(*defs)
    world = World.from_files(root / "examples" / "triage" / "world.ttl")
    with pytest.raises(UsageError, match="declare no horis:Adapter: ") as refused:
        agent.hydrate(world)
    assert "name the adapter" not in str(refused.value)
    done = horismos_forked(tmp_path, "hydrate", *map(str, defs), "--id", "Patient/1", timeout=120)
    assert done.returncode == 2 and "declare no horis:Adapter" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
