"""Flow: which step runs next, and the failure classes the runtime rules out by construction.

A DecisionStep branches by rules in ``horis:order``, else ``horis:otherwise``; a step with no
``horis:next`` ends the instance. Whatever tools are registered, only the step's declared tool
fires, only with graph values of the declared types, only once its preconditions hold, and a
non-idempotent tool is called once unless retries are declared.
"""

from __future__ import annotations

import asyncio

import pytest
from conftest import EX, TRIAGE, WARD, facts, step_events
from rdflib import Literal

from horismos import (
    ArgumentTypeError,
    AuthoringError,
    GateRejected,
    OutcomeUnknown,
    ToolError,
    ToolTimeout,
)
from horismos._stores import Change

ROUTE = """
:t.route a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:asserts [ horis:property :lane ; horis:type xsd:string ] ] ;
    horis:binding "python:route" .

:Route a horis:Workflow ; horis:focusType :Patient ; horis:start :Decide .

:Decide a horis:DecisionStep ;
    horis:when [ horis:order 2 ; horis:requires "?this :acuity ?any ." ; horis:next :Normal ] ;
    horis:when [ horis:order 1 ; horis:requires "?this :acuity :urgent ." ;
                 horis:next :Urgent ] ;
    horis:otherwise :Unassessed .

:Urgent a horis:ActionStep ; horis:tool :t.route ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
:Normal a horis:ActionStep ; horis:tool :t.route ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
:Unassessed a horis:ActionStep ; horis:tool :t.route ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""


@pytest.mark.parametrize(("focus", "branch"), [
    ("p1", "Urgent"),       # both rules hold: order 1 wins
    ("p2", "Normal"),       # only the order-2 rule holds
    ("p3", "Unassessed"),   # no rule holds: otherwise
])
def test_a_decision_step_branches_by_rule_order_else_otherwise(build, recorder, focus, branch):
    agent, world = build(ROUTE, tools={"route": recorder.tool("route", {"lane": branch})})

    run = agent.run(world, focus=str(EX[focus]))

    assert run.status == "completed"
    decide, action = run.steps
    assert decide.kind == "DecisionStep" and decide.status == "completed"
    assert decide.next == EX[branch]
    assert action.step == EX[branch]
    assert recorder.count("route") == 1
    assert (EX[focus], EX.lane, Literal(branch)) in world.graph
    assert step_events(run)[0]["next"] == str(EX[branch])


def test_a_step_without_next_ends_the_instance(build, recorder):
    agent, world = build(TRIAGE, tools={"assign": recorder.tool("assign", {"ref": "R-1"})})

    run = agent.run(world, focus=str(EX.p1))

    assert run.status == "completed"
    assert [s.step for s in run.steps] == [EX.Queue]
    assert run.steps[0].next is None
    assert run.instances[0].current is None
    assert [e["type"] for e in run.trace.events] == ["header", "instance", "step", "end"]


def test_all_runs_one_instance_per_focus_node(build, recorder):
    agent, world = build(TRIAGE, tools={"assign": recorder.tool("assign", {"ref": "R-1"})})

    run = agent.run(world, all=True)

    assert [i.focus for i in run.instances] == [EX.p1, EX.p2, EX.p3]
    assert [i.status for i in run.instances] == ["completed", "completed", "blocked"]
    assert run.status == "blocked"  # the worst of them
    assert [kw["patient"] for kw in recorder.args("assign")] == [EX.p1, EX.p2]


def test_only_the_declared_tool_fires(build, recorder):
    tools = {name: recorder.tool(name, {"ref": "R-1"})
             for name in ("assign", "discharge", "delete_patient", "t.assign")}
    agent, world = build(TRIAGE, tools=tools)

    run = agent.run(world, focus=str(EX.p1))

    assert run.status == "completed"
    assert [name for name, _ in recorder.calls] == ["assign"]


@pytest.mark.parametrize(("world_extra", "arg"), [
    (":p1 :acuity :n1 .", "queue"),           # a Nurse where an AcuityLevel is declared
    (':p1 :acuity "urgent" .', "queue"),       # a literal where a node is declared
])
def test_a_graph_value_of_the_wrong_class_never_reaches_the_tool(build, recorder, world_extra,
                                                                  arg):
    world_ttl = WARD.replace(":p1 a :Patient ; :acuity :urgent .", ":p1 a :Patient .")
    agent, world = build(TRIAGE, world_ttl + world_extra,
                         tools={"assign": recorder.tool("assign", {"ref": "R-1"})})
    before = facts(world)

    run = agent.run(world, focus=str(EX.p1))

    assert run.status == "failed"
    assert isinstance(run.error.cause, ArgumentTypeError)
    assert run.error.cause.arg == arg
    assert run.steps[0].status == "failed"
    assert recorder.count("assign") == 0
    assert facts(world) == before


@pytest.mark.parametrize("value", ['"forty"', '"42"^^xsd:string', '4.2'])
def test_a_literal_of_the_wrong_datatype_never_reaches_the_tool(build, recorder, value):
    defs = """
:t.dose a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ;
                  horis:arg [ horis:name "age" ; horis:type xsd:integer ] ] ;
    horis:binding "python:dose" .
:W a horis:Workflow ; horis:focusType :Patient ; horis:start :Dose .
:Dose a horis:ActionStep ; horis:tool :t.dose ;
    horis:requires "?this :age ?age ." ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""
    agent, world = build(defs, f":p1 a :Patient ; :age {value} .",
                         tools={"dose": recorder.tool("dose", None)})

    run = agent.run(world, focus=str(EX.p1))

    assert run.status == "failed"
    assert isinstance(run.error.cause, ArgumentTypeError)
    assert run.error.cause.arg == "age"
    assert "xsd:integer" in str(run.error.cause)
    assert recorder.count("dose") == 0


def test_a_tool_is_not_called_before_its_preconditions_hold(build, recorder):
    agent, world = build(TRIAGE, tools={"assign": recorder.tool("assign", {"ref": "R-1"})})

    blocked = agent.run(world, focus=str(EX.p3))
    assert blocked.status == "blocked"
    assert recorder.count("assign") == 0

    world.commit(Change(add=[(EX.p3, EX.acuity, EX.routine, None)]))
    ran = agent.run(world, focus=str(EX.p3))
    assert ran.status == "completed"
    assert recorder.args("assign") == [{"patient": EX.p3, "queue": EX.routine}]


def test_bad_data_is_rejected_on_error_fires_and_the_world_is_unchanged(build, recorder):
    defs = TRIAGE.replace('horis:bind [ horis:arg "patient" ; horis:var "this" ] .',
                          'horis:bind [ horis:arg "patient" ; horis:var "this" ] ;'
                          ' horis:onError :Decide .') + ROUTE.split(":Route a")[0] + """
:Decide a horis:DecisionStep ;
    horis:when [ horis:requires "?this :ref ?r ." ; horis:next :Urgent ] ;
    horis:otherwise :Unassessed .
:Urgent a horis:ActionStep ; horis:tool :t.route ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
:Unassessed a horis:ActionStep ; horis:tool :t.route ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""
    agent, world = build(defs, tools={
        "assign": recorder.tool("assign", {"ref": "R-1", "password": "hunter2"}),
        "route": recorder.tool("route", {"lane": "review"})})
    before = facts(world)

    run = agent.run(world, focus=str(EX.p1))

    assert [(s.step, s.status) for s in run.steps] == [
        (EX.Queue, "rejected"), (EX.Decide, "completed"), (EX.Unassessed, "completed")]
    assert isinstance(run.steps[0].error, GateRejected)
    # the decision after the rejection saw no :ref: nothing of the rejected result landed
    assert (EX.p1, EX.ref, None) not in world.graph
    added = set(facts(world).splitlines()) - set(before.splitlines())
    assert all(line.endswith(f"<{run.steps[2].graph}> .") for line in added)


@pytest.mark.parametrize(("retries", "calls"), [("", 1), (" ; horis:retries 2", 1),
                                               (" ; horis:retries 2 ; horis:idempotent true", 3)])
def test_a_failing_non_idempotent_tool_is_called_once_even_with_retries(
        build, recorder, retries, calls):
    """The call reached the tool (it raised), so it may have acted: retries are for
    idempotent tools, and for calls that never reached the tool (tests/test_retries.py)."""
    defs = TRIAGE.replace('horis:timeout "2s"', f'horis:timeout "2s"{retries}')
    assert 'horis:idempotent true' not in TRIAGE  # non-idempotent by default
    agent, world = build(defs, tools={
        "assign": recorder.tool("assign", raises=ConnectionError("EHR unreachable"))})

    run = agent.run(world, focus=str(EX.p1))

    assert run.status == "failed"
    assert isinstance(run.error.cause, ToolError)
    assert recorder.count("assign") == calls
    assert run.steps[0].attempts == calls


def test_a_timed_out_non_idempotent_tool_is_not_called_again(build):
    calls = []

    async def assign(patient, queue):
        calls.append(patient)
        await asyncio.sleep(30)

    defs = TRIAGE.replace('horis:timeout "2s"', 'horis:timeout "20ms"')
    agent, world = build(defs, tools={"assign": assign})

    run = agent.run(world, focus=str(EX.p1))

    assert run.steps[0].status == "timed_out"
    assert isinstance(run.error.cause, OutcomeUnknown)
    assert isinstance(run.error.cause.cause, ToolTimeout)
    assert calls == [EX.p1]


def test_a_rejected_result_is_not_retried(build, recorder):
    defs = TRIAGE.replace('horis:timeout "2s"', 'horis:timeout "2s" ; horis:retries 2')
    agent, world = build(defs, tools={"assign": recorder.tool("assign", {"ref": "bad-ref"})})

    run = agent.run(world, focus=str(EX.p1))

    assert run.steps[0].status == "rejected"
    assert recorder.count("assign") == 1


LOOPS = """
:t.flaky a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:binding "python:flaky" .

:Retry a horis:Workflow ; horis:focusType :Patient ; horis:start :Call .
:Call a horis:ActionStep ; horis:tool :t.flaky ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] ;
    horis:onError :Call .

"""

SPIN = """
:Spin a horis:Workflow ; horis:focusType :Patient ; horis:start :Again .
:Again a horis:DecisionStep ;
    horis:when [ horis:requires "?this :acuity :nothing ." ; horis:next :Again ] ;
    horis:otherwise :Again .
"""


def test_a_loop_where_nothing_acts_fails_instead_of_spinning(build, recorder):
    flaky = recorder.tool("flaky", raises=RuntimeError("the ward system is down"))
    agent, world = build(LOOPS, tools={"flaky": flaky})

    run = agent.run(world, workflow=str(EX.Retry), focus=str(EX.p1))

    assert run.status == "failed"
    assert "loop forever" in str(run.error)
    # the non-idempotent tool is not called again by a loop that has done nothing since
    assert recorder.count("flaky") == 1
    # :Call declares horis:onError: the failure says where it went, not that it has none
    assert str(run.error).startswith(
        ":Call failed and its horis:onError went to :Call, where the run stopped the "
        "instance: the instance came back to :Call"), run.error


def test_a_loop_of_decisions_alone_is_refused_before_it_runs(build):
    """It could only ever spin (nothing on it changes the world): the run used to stop it."""
    with pytest.raises(AuthoringError, match="closes a loop of decision steps only"):
        build(SPIN)
