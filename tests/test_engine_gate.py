"""The SHACL gate: a result outside the tool's declared effect (or the domain's shapes) never lands.

Each rejection is checked the same way: the step is "rejected", its SHACL messages (focus,
path, message) are on the StepRecord and in the trace event, the ``horis:onError`` edge fires,
and the facts the rejected step would have touched are exactly as before.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import EX, facts, step_events
from rdflib import XSD, Literal, URIRef

from horismos import Agent, GateRejected, World

ROOT = Path(__file__).resolve().parent.parent

ASSESS = """
:t.assess a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [
        horis:subject "patient" ;
        horis:asserts [ horis:property :assessedAt ; horis:value horis:now ] ;
        horis:asserts [ horis:property :ref ; horis:type xsd:string ] ;
        horis:asserts [ horis:property :score ; horis:type xsd:integer ; horis:optional true ] ;
        horis:asserts [ horis:property :assignedNurse ; horis:type :Nurse ;
                        horis:optional true ] ;
        horis:asserts [ horis:property :attending ; horis:type :Person ;
                        horis:optional true ] ;
        horis:asserts [ horis:property :tag ; horis:type xsd:string ;
                        horis:optional true ; horis:many true ] ;
        horis:asserts [ horis:property :weight ; horis:type xsd:decimal ; horis:optional true ] ;
        horis:asserts [ horis:property :ratio ; horis:type xsd:double ; horis:optional true ]
    ] ;
    horis:binding "python:assess" .

:t.review a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:asserts [ horis:property :needsReview ; horis:value true ] ] ;
    horis:binding "python:review" .

:Assess a horis:Workflow ; horis:focusType :Patient ; horis:start :AssessPatient .
:AssessPatient a horis:ActionStep ; horis:tool :t.assess ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] ;
    horis:onError :Review .
:Review a horis:ActionStep ; horis:tool :t.review ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""

# (result the tool returns, property path the message names, words the message says)
REJECTED = {
    "undeclared property": ({"ref": "R-1", "colour": "blue"}, "colour", "does not declare"),
    "undeclared known property": ({"ref": "R-1", "rdfs:label": "x"}, "rdfs:label",
                                  "does not declare"),
    "wrong datatype": ({"ref": "R-1", "score": "high"}, ":score", "xsd:integer"),
    "wrong literal type": ({"ref": 7}, ":ref", "xsd:string"),
    "language-tagged literal": ({"ref": Literal("R-1", lang="en")}, ":ref", "xsd:string"),
    "ill-typed literal": ({"ref": "R-1", "score": "2.5"}, ":score", "xsd:integer"),
    "wrong class": ({"ref": "R-1", "assignedNurse": EX.p2}, ":assignedNurse", ":Nurse"),
    "literal for a class": ({"ref": "R-1", "assignedNurse": "Okafor"}, ":assignedNurse",
                            ":Nurse"),
    "missing required value": ({"score": 3}, ":ref", "required"),
    "nothing returned": (None, ":ref", "required"),
    "value the runtime fixes": ({"ref": "R-1", "assessedAt": "2020-01-01T00:00:00Z"},
                                ":assessedAt", "horis:value"),
    "several values where one is declared": ({"ref": ["R-1", "R-2"]}, ":ref", "one value"),
    "domain shape violated": ({"ref": "bad-ref"}, ":ref", "R-<number>"),
}


@pytest.mark.parametrize("case", list(REJECTED))
def test_a_result_outside_the_contract_is_rejected_and_lands_nothing(build, recorder, case):
    result, path, words = REJECTED[case]
    agent, world = build(ASSESS, tools={"assess": recorder.tool("assess", result),
                                        "review": recorder.tool("review", None)})
    before = set(facts(world).splitlines())

    run = agent.run(world, focus=str(EX.p1))

    # onError fired: the review step ran and the run completed through it
    assert run.status == "completed"
    assessed, reviewed = run.steps
    assert assessed.status == "rejected"
    assert reviewed.step == EX.Review and reviewed.status == "completed"
    assert assessed.next == EX.Review
    assert isinstance(assessed.error, GateRejected)
    assert recorder.count("review") == 1
    # the messages say what broke, on the record ...
    assert assessed.messages, "a rejection carries its SHACL messages"
    hits = [m for m in assessed.messages if m.path == path]
    assert hits, [str(m) for m in assessed.messages]
    assert all(m.focus == ":p1" for m in assessed.messages)
    assert any(words in m.message for m in hits), [m.message for m in hits]
    assert assessed.error.messages == assessed.messages
    # the error sends the reader to what they must mend: the shape, or the tool's effect
    broke = "the domain shapes" if case == "domain shape violated" else "its declared effect"
    assert str(assessed.error).startswith(f"the result of t.assess breaks {broke}: ")
    assert len(set(assessed.messages)) == len(assessed.messages), "each finding said once"
    # ... and in the trace
    event = step_events(run)[0]
    assert event["status"] == "rejected"
    assert event["gate"]["conforms"] is False
    assert event["gate"]["messages"] == [m.to_json() for m in assessed.messages]
    assert {"focus", "path", "message"} <= set(event["gate"]["messages"][0])
    # nothing of the rejected step landed: the only new facts are the review step's graph
    added = set(facts(world).splitlines()) - before
    assert added and all(line.endswith(f"<{reviewed.graph}> .") for line in added)
    assert before <= set(facts(world).splitlines())
    assert (EX.p1, EX.assessedAt, None) not in world.graph
    assert (EX.p1, EX.ref, None) not in world.graph


def test_every_finding_is_reported_once_and_in_a_stable_order(build, recorder):
    result = {"ref": ["R-1", 7], "score": "high", "assignedNurse": "Okafor",
              "assessedAt": "2020-01-01T00:00:00Z", "colour": "blue"}
    agent, world = build(ASSESS, tools={"assess": recorder.tool("assess", result),
                                        "review": recorder.tool("review", None)})

    run = agent.run(world, focus=str(EX.p1))

    messages = run.steps[0].messages
    assert [(m.path, m.message, m.value) for m in messages] == [
        (":assessedAt", ":assessedAt is written by the runtime (horis:value); the tool must "
         "not return it", None),
        (":assignedNurse", ":assignedNurse must be a node of class :Nurse", '"Okafor"'),
        (":ref", ":ref must be a literal of datatype xsd:string",
         '"7"^^<http://www.w3.org/2001/XMLSchema#integer>'),
        (":ref", ":ref takes one value and the result gives several (declare horis:many "
         "true to allow several)", None),
        (":score", ":score must be a literal of datatype xsd:integer",
         '"high"^^<http://www.w3.org/2001/XMLSchema#integer>'),
        ("colour", "writes a property that the effect of :t.assess does not declare",
         '"blue"'),
    ]
    assert {m.focus for m in messages} == {":p1"}
    # the closed-shape finding names the effect shape; the per-property ones name none
    assert messages[-1].shape and messages[-1].shape.startswith("<urn:horismos:effect-shape:")
    assert {m.shape for m in messages[:-1]} == {None}
    assert step_events(run)[0]["gate"]["messages"] == [m.to_json() for m in messages]


def test_a_rejection_without_on_error_fails_the_instance_and_changes_nothing(build, recorder):
    defs = ASSESS.replace("    horis:onError :Review .", "    .").replace(
        "horis:bind [ horis:arg \"patient\" ; horis:var \"this\" ] ;\n    .",
        "horis:bind [ horis:arg \"patient\" ; horis:var \"this\" ] .")
    agent, world = build(defs, tools={"assess": recorder.tool("assess", {"ref": "bad-ref"}),
                                      "review": recorder.tool("review", None)})
    before = facts(world)

    run = agent.run(world, focus=str(EX.p1))

    assert run.status == "failed"
    assert isinstance(run.error.cause, GateRejected)
    assert run.error.cause.messages == run.steps[0].messages
    assert recorder.count("review") == 0
    assert facts(world) == before


ACCEPTED = {
    "required only": ({"ref": "R-1"}, {(EX.ref, Literal("R-1"))}),
    "many values": ({"ref": "R-1", "tag": ["frail", "diabetic", "fall-risk"]},
                    {(EX.ref, Literal("R-1")), (EX.tag, Literal("frail")),
                     (EX.tag, Literal("diabetic")), (EX.tag, Literal("fall-risk"))}),
    "optional given": ({"ref": "R-1", "score": 3, "assignedNurse": EX.n1},
                       {(EX.ref, Literal("R-1")), (EX.score, Literal(3)),
                        (EX.assignedNurse, EX.n1)}),
    "keys as CURIE and IRI": ({":ref": "R-1", str(EX.score): 4},
                              {(EX.ref, Literal("R-1")), (EX.score, Literal(4))}),
    "a node of a subclass": ({"ref": "R-1", "attending": EX.n1},
                             {(EX.ref, Literal("R-1")), (EX.attending, EX.n1)}),
    "whole numbers for decimal and double": (
        {"ref": "R-1", "weight": 71, "ratio": 2},
        {(EX.ref, Literal("R-1")), (EX.weight, Literal("71", datatype=XSD.decimal)),
         (EX.ratio, Literal("2", datatype=XSD.double))}),
}


@pytest.mark.parametrize("case", list(ACCEPTED))
def test_a_result_inside_the_contract_lands(build, recorder, case):
    result, expected = ACCEPTED[case]
    agent, world = build(ASSESS, tools={"assess": recorder.tool("assess", result),
                                        "review": recorder.tool("review", None)})

    run = agent.run(world, focus=str(EX.p1))

    assert run.status == "completed"
    (record,) = run.steps
    assert record.status == "completed"
    assert recorder.count("review") == 0
    landed = {(p, o) for s, p, o in world.graph.graph(record.graph) if s == EX.p1}
    stamped = {(p, o) for p, o in landed if p == EX.assessedAt}
    assert landed - stamped == expected
    assert len(stamped) == 1  # horis:now, written by the runtime
    assert step_events(run)[0]["gate"] == {"conforms": True, "messages": []}


def test_the_shipped_triage_example_rejects_a_malformed_queue_reference(monkeypatch):
    """ontologies/ehr.ttl's :PatientShape wants Q-<LEVEL>-<number>; "bad-ref" never lands.
    (Computed at the call: a constant written out is refused before the run.)"""
    calls = []

    def assign_queue(patient, queue):
        calls.append(patient)
        return {"queueRef": "-".join(("bad", "ref"))}

    monkeypatch.syspath_prepend(str(ROOT / "examples" / "triage"))  # for notify_nurse
    agent = Agent.from_files(ROOT / "workflows" / "triage.ttl", ROOT / "ontologies" / "ehr.ttl",
                             tools={"ehr_client.assign_queue": assign_queue},
                             allow_modules=["ehr_client"])
    world = World.from_files(ROOT / "examples" / "triage" / "world.ttl")
    before = facts(world)

    run = agent.run(world, workflow="http://example.org/ehr#Triage",
                    focus="http://example.org/ehr#patient42")

    assert calls == [URIRef("http://example.org/ehr#patient42")]
    assert run.status == "failed"
    (record,) = run.steps
    assert record.status == "rejected"
    (message,) = record.messages
    assert message.path == ":queueRef"
    assert "Q-<LEVEL>-<number>" in message.message
    assert message.value == '"bad-ref"'
    assert facts(world) == before
