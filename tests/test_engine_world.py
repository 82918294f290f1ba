"""What lands in the world: one named graph per step, with PROV-O metadata; nothing on failure.

A step's effects are committed atomically into a graph of their own, described by who wrote
them (step, tool, instance, time, provenance kind). A step that is rejected, fails or cannot
fire leaves the world's facts byte for byte as they were; only the instance's state records it.
"""

from __future__ import annotations

import asyncio

from conftest import EX, TRIAGE, facts
from rdflib import RDF, RDFS, XSD, Literal, URIRef

from horismos import HORIS, GateRejected, InstanceFailed, ToolError
from horismos._definitions import vocabulary_graph
from horismos._vocab import PROV
from horismos._world import INSTANCES

PROV_QUERY = """
PREFIX prov:  <http://www.w3.org/ns/prov#>
PREFIX horis: <https://w3id.org/horismos#>
SELECT ?g ?activity ?step ?tool ?instance ?time ?kind WHERE {
  GRAPH ?g {
    ?g prov:wasGeneratedBy ?activity .
    ?activity a horis:StepExecution ;
        horis:step ?step ; prov:wasAssociatedWith ?tool ; horis:instance ?instance ;
        prov:startedAtTime ?time ; horis:provenance ?kind .
  }
}
"""

INSTANCE_QUERY = """
PREFIX horis: <https://w3id.org/horismos#>
SELECT ?i ?workflow ?focus ?status ?current ?blocked ?error WHERE {
  GRAPH <urn:horismos:instances> {
    ?i a horis:Instance ; horis:workflow ?workflow ; horis:focus ?focus ; horis:status ?status .
    OPTIONAL { ?i horis:currentStep ?current }
    OPTIONAL { ?i horis:blockedBy ?blocked }
    OPTIONAL { ?i horis:error ?error }
  }
}
"""


def _instance_row(world, instance: URIRef) -> dict:
    rows = [r.asdict() for r in world.graph.query(INSTANCE_QUERY) if r.i == instance]
    assert len(rows) == 1, rows
    return rows[0]


def test_effects_land_in_one_named_graph_with_prov_metadata(build, recorder):
    agent, world = build(TRIAGE, tools={"assign": recorder.tool("assign", {"ref": "R-7"})})

    run = agent.run(world, focus=str(EX.p1))

    assert run.status == "completed"
    (record,) = run.steps
    rows = list(world.graph.query(PROV_QUERY))
    assert len(rows) == 1
    row = rows[0]
    assert row.g == record.graph
    assert row.step == EX.Queue
    assert row.tool == EX["t.assign"]
    assert row.instance == run.instance
    assert row.kind == HORIS.ToolProvenance
    assert row.time.datatype == XSD.dateTime
    # the effect graph holds exactly the step's effects (plus the metadata describing them)
    in_graph = {(s, p, o) for s, p, o in world.graph.graph(record.graph)
                if s == EX.p1}
    assert in_graph == set(record.effects)
    assert (EX.p1, EX.ref, Literal("R-7")) in in_graph
    # horis:now is the runtime clock the activity was stamped with
    assert (EX.p1, EX.queuedAt, row.time) in in_graph


def test_a_step_describes_its_activity_once_and_the_vocabulary_entails_the_rest(
    build, recorder
):
    """Trace version 3: the activity is a horis:StepExecution (a prov:Activity by the
    vocabulary), its tool prov:wasAssociatedWith; no quad repeats another or is entailed."""
    agent, world = build(TRIAGE, tools={"assign": recorder.tool("assign", {"ref": "R-7"})})

    run = agent.run(world, focus=str(EX.p1))

    (record,) = run.steps
    graph = world.graph.graph(record.graph)
    activity = URIRef(str(record.graph).replace("urn:horismos:effect:", "urn:horismos:activity:"))
    assert set(graph.predicate_objects(record.graph)) == {(PROV.wasGeneratedBy, activity)}
    said = {(p, o) for p, o in graph.predicate_objects(activity)}
    assert {p for p, _ in said} == {
        RDF.type, HORIS.step, HORIS.provenance, PROV.wasAssociatedWith, HORIS.instance,
        PROV.startedAtTime, PROV.endedAtTime,
    }
    assert (RDF.type, HORIS.StepExecution) in said and len(said) == 7
    assert (PROV.wasAssociatedWith, EX["t.assign"]) in said
    assert (HORIS.StepExecution, RDFS.subClassOf, PROV.Activity) in vocabulary_graph()


def test_each_step_commits_its_own_graph(build, recorder):
    defs = TRIAGE.replace('horis:bind [ horis:arg "patient" ; horis:var "this" ] .',
                          'horis:bind [ horis:arg "patient" ; horis:var "this" ] ;'
                          ' horis:next :Again .') + """
:Again a horis:ActionStep ; horis:tool :t.assign ;
    horis:requires "?this :acuity ?queue ." ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""
    refs = iter(["R-1", "R-2"])
    agent, world = build(defs, tools={"assign": recorder.tool("assign",
                                                              lambda **_: {"ref": next(refs)})})
    # the clinic ontology lets a patient hold several :ref values, so both steps land
    run = agent.run(world, focus=str(EX.p1))

    assert [s.status for s in run.steps] == ["completed", "completed"]
    graphs = {r.g: r.step for r in world.graph.query(PROV_QUERY)}
    assert graphs == {run.steps[0].graph: EX.Queue, run.steps[1].graph: EX.Again}
    assert (EX.p1, EX.ref, Literal("R-1")) in world.graph.graph(run.steps[0].graph)
    assert (EX.p1, EX.ref, Literal("R-2")) in world.graph.graph(run.steps[1].graph)


def test_a_rejected_step_leaves_the_world_as_it_was(build, recorder):
    agent, world = build(TRIAGE, tools={"assign": recorder.tool("assign", {"ref": "bad-ref"})})
    before = facts(world)

    run = agent.run(world, focus=str(EX.p1))

    assert run.status == "failed"
    assert run.steps[0].status == "rejected"
    assert isinstance(run.error, InstanceFailed)
    assert isinstance(run.error.cause, GateRejected)
    assert facts(world) == before
    row = _instance_row(world, run.instance)
    assert row["status"] == HORIS.Failed
    assert row["current"] == EX.Queue
    assert "R-<number>" in str(row["error"])


def test_a_failed_tool_leaves_the_world_as_it_was(build, recorder):
    tool = recorder.tool("assign", raises=RuntimeError("EHR is down"))
    agent, world = build(TRIAGE, tools={"assign": tool})
    before = facts(world)

    run = agent.run(world, focus=str(EX.p1))

    assert run.status == "failed"
    assert isinstance(run.error.cause, ToolError)
    assert "EHR is down" in str(run.error.cause)
    assert facts(world) == before
    assert _instance_row(world, run.instance)["status"] == HORIS.Failed


def test_a_blocked_step_leaves_the_world_as_it_was(build, recorder):
    agent, world = build(TRIAGE, tools={"assign": recorder.tool("assign", {"ref": "R-1"})})
    before = facts(world)

    run = agent.run(world, focus=str(EX.p3))  # p3 has no acuity

    assert run.status == "blocked"
    assert facts(world) == before
    row = _instance_row(world, run.instance)
    assert row["status"] == HORIS.Blocked
    assert row["current"] == EX.Queue
    assert str(row["blocked"]) == "?this :acuity ?queue ."


def test_instance_state_lives_in_the_instances_graph(build, recorder):
    agent, world = build(TRIAGE, tools={"assign": recorder.tool("assign", {"ref": "R-1"})})

    run = agent.run(world, focus=str(EX.p1))

    row = _instance_row(world, run.instance)
    assert row["workflow"] == EX.Triage
    assert row["focus"] == EX.p1
    assert row["status"] == HORIS.Completed
    assert "current" not in row  # a completed instance has no current step
    # every instance triple is in the instances graph, none leaks into the facts
    assert {g for s, _, _, g in world.store.quads() if s == run.instance} == {INSTANCES}


def test_instance_state_shows_the_current_step_while_it_runs(build, recorder):
    seen: list[dict] = []

    async def look(patient, queue):
        rows = [r.asdict() for r in world.graph.query(INSTANCE_QUERY)]
        seen.extend(rows)
        await asyncio.sleep(0)
        return {"ref": "R-1"}

    defs = TRIAGE.replace('horis:bind [ horis:arg "patient" ; horis:var "this" ] .',
                          'horis:bind [ horis:arg "patient" ; horis:var "this" ] ;'
                          ' horis:next :Second .') + """
:Second a horis:ActionStep ; horis:tool :t.look ;
    horis:requires "?this :acuity ?queue ." ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
:t.look a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ;
                  horis:arg [ horis:name "queue" ; horis:type :AcuityLevel ] ] ;
    horis:effect [ horis:subject "patient" ;
                   horis:asserts [ horis:property :ref ; horis:type xsd:string ;
                                   horis:many true ] ] ;
    horis:binding "python:look" .
"""
    agent, world = build(defs, tools={"assign": recorder.tool("assign", {"ref": "R-0"}),
                                      "look": look})

    run = agent.run(world, focus=str(EX.p1))

    assert run.status == "completed"
    (row,) = seen
    assert row["status"] == HORIS.Running
    assert row["current"] == EX.Second
    assert row["focus"] == EX.p1
