"""A tool that is not idempotent acts at most once on a subject, whatever fails, in every lane.

A call that was sent and never answered (or whose process died mid-call) is *in doubt*: kept
under the tool and its subject, so the next call there — a catalog call, a rerun of the
workflow that starts a new instance, another workflow — is not made until someone clears it
with ``tools reconcile``. An instance's own intent is tested in tests/test_durable.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import EX, PREFIXES, Build
from forked import Popen, horismos_forked
from in_process import horismos_load
from rdflib import Literal, URIRef

from horismos import CallInFlight, UsageError, World
from horismos._intents import CALLING, announce, read_intent
from horismos._stores import Change
from horismos._stores.base import doubt_node
from horismos._world import INSTANCES

XSD_NS = "http://www.w3.org/2001/XMLSchema#"
ALLOW = ["ReadOnly", "HostStateWrite", "ExternalCommit"]

CHARGE = """
:t.charge a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [
        horis:subject "patient" ;
        horis:asserts [ horis:property :ref ; horis:type xsd:string ]
    ] ;
    horis:binding "python:charge" ;
    horis:timeout "1s" ;
    horis:idempotent false .
"""


def intents(world: World) -> list[URIRef]:
    """The calls the store holds in doubt (or in flight)."""
    return sorted({
        s for s, _, _ in world.graph.graph(INSTANCES).triples((None, None, None))
        if str(s).startswith("urn:horismos:doubt:")
    })


class Charger:
    """A charge that acts (counted), answers, fails or never answers, as the test says:
    "hang" returns past horis:timeout, "hold" only once the test sets ``release`` (a test
    that checks what happens while the abandoned call still acts says when it has ended,
    instead of racing a sleep: under load its checks outlasted the half second it had)."""

    def __init__(self) -> None:
        self.acted: list[str] = []
        self.mode = "answer"
        self.release = threading.Event()  # lets a held call return
        self.hung = threading.Event()  # set once a call that hung has returned, late

    def __call__(self, patient: Any) -> dict[str, str]:
        self.acted.append(str(patient))
        if self.mode in ("hang", "hold"):  # past horis:timeout: sent, never answered
            self.release.wait(60 if self.mode == "hold" else 1.5)
            self.hung.set()
        if self.mode == "raise":
            raise RuntimeError("card declined")
        return {"ref": f"R-{len(self.acted)}"}


def test_a_call_that_never_answered_is_not_made_again_until_reconciled(build: Build) -> None:
    charge = Charger()
    agent, world = build(CHARGE, tools={"charge": charge})
    args = {"patient": ":p1"}

    charge.mode = "hold"
    first = agent.catalog.call("t.charge", args, world, allow=ALLOW)
    assert first.status == "timed_out" and first.error is not None
    assert first.error["kind"] == "outcome_unknown"
    assert """tools reconcile t.charge … --args '{"patient": ":p1"}'""" in first.error["message"]
    assert len(intents(world)) == 1

    charge.mode = "answer"
    again = agent.catalog.call("t.charge", args, world, allow=ALLOW)
    assert again.status == "refused" and again.error is not None
    if world.store.shared:  # the first call, still acting, holds its subject's claim
        assert again.error["kind"] == "busy"
    else:
        assert again.error["kind"] == "outcome_unknown"
        assert "may already have acted on :p1" in again.error["message"]
    assert charge.acted == ["http://example.org/clinic#p1"]  # not called the second time

    # another subject is not held back by p1's call in doubt
    other = agent.catalog.call("t.charge", {"patient": ":p2"}, world, allow=ALLOW)
    assert other.status == "completed"

    # abandoned at its timeout, the first call goes on in its thread: an operator who checks
    # the system it acts on now sees nothing yet, and clearing it would let a second charge
    # go out while the first is still being made
    assert not charge.hung.is_set()
    busy = "another process is calling" if world.store.shared else "being made in this process"
    with pytest.raises(UsageError, match=busy):
        agent.catalog.reconcile("t.charge", args, world)
    assert len(intents(world)) == 1
    charge.release.set()
    assert charge.hung.wait(60)
    deadline = time.monotonic() + 10
    while CALLING:  # given back on the loop once the thread has returned
        assert time.monotonic() < deadline, CALLING
        time.sleep(0.01)

    cleared = agent.catalog.reconcile("t.charge", args, world)
    assert cleared is not None and "p1" in cleared.args
    assert intents(world) == []
    assert agent.catalog.reconcile("t.charge", args, world) is None

    after = agent.catalog.call("t.charge", args, world, allow=ALLOW)
    assert after.status == "completed"
    assert len(charge.acted) == 3 and intents(world) == []



def test_a_step_still_acting_after_its_timeout_is_not_cleared_meanwhile(build: Build) -> None:
    """A workflow step's sync Python call is abandoned at its timeout and goes on acting in its
    thread; the instance waits for an operator at its onError step. Reconcile in the same
    process (an application running workflows and offering to clear a call in doubt) cleared
    it at once, while the charge was still being made, and the next call charged again. As a
    catalog call's, the step's call counts as being made until its function returns."""
    charge = Charger()
    agent, world = build(CHARGE + """
:Bill a horis:Workflow ; horis:focusType :Patient ; horis:start :Charge .
:Charge a horis:ActionStep ; horis:tool :t.charge ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] ; horis:onError :Check .
:Check a horis:WaitStep ; horis:reason "check the charge" ; horis:wake horis:OperatorInput ;
    horis:delivery horis:Final ; horis:until "?this :ref ?r ." .
""", tools={"charge": charge})
    args = {"patient": ":p1"}
    charge.mode = "hold"
    run = agent.run(world, workflow=EX.Bill, focus=EX.p1, allow=ALLOW)
    assert run.status == "waiting" and run.steps[0].status == "timed_out"
    assert not charge.hung.is_set()
    busy = "another process is calling" if world.store.shared else "being made in this process"
    with pytest.raises(UsageError, match=busy):
        agent.catalog.reconcile("t.charge", args, world)
    charge.mode = "answer"
    refused = agent.catalog.call("t.charge", args, world, allow=ALLOW)
    assert refused.status == "refused" and charge.acted == ["http://example.org/clinic#p1"]
    charge.release.set()
    assert charge.hung.wait(60)
    deadline = time.monotonic() + 10
    while CALLING:  # given back once the thread has returned
        assert time.monotonic() < deadline, CALLING
        time.sleep(0.01)
    cleared = agent.catalog.reconcile("t.charge", args, world)
    assert cleared is not None and intents(world) == []

def test_a_call_that_answers_leaves_nothing_in_doubt(build: Build) -> None:
    charge = Charger()
    agent, world = build(CHARGE, tools={"charge": charge})
    before = world.digest()

    charge.mode = "raise"  # the tool answered, with an error: its outcome is known
    failed = agent.catalog.call("t.charge", {"patient": ":p1"}, world, allow=ALLOW)
    assert failed.status == "failed" and failed.error is not None
    assert failed.error["kind"] == "tool_error"
    assert intents(world) == [] and world.digest() == before

    charge.mode = "answer"
    done = agent.catalog.call("t.charge", {"patient": ":p1"}, world, allow=ALLOW)
    assert done.status == "completed" and intents(world) == []
    assert len(charge.acted) == 2


def test_reconcile_refuses_what_it_cannot_mean(build: Build) -> None:
    agent, world = build(CHARGE + """
        :t.look a horis:Tool ;
            horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
            horis:binding "python:charge" ; horis:idempotent true .
    """, tools={"charge": Charger()})
    with pytest.raises(UsageError, match="idempotent"):
        agent.catalog.reconcile("t.look", {"patient": ":p1"}, world)
    with pytest.raises(UsageError, match='unknown argument "who"'):
        agent.catalog.reconcile("t.charge", {"who": ":p1"}, world)


BILL = CHARGE + """
:Bill a horis:Workflow ; horis:focusType :Patient ; horis:start :Charge .
:Charge a horis:ActionStep ;
    horis:tool :t.charge ;
    horis:requires "?this a :Patient . FILTER NOT EXISTS { ?this :ref ?r }" ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""


def test_a_rerun_after_a_step_never_answered_does_not_call_again(build: Build) -> None:
    """The instance fails with OutcomeUnknown; a rerun starts a new instance, whose step
    found nothing of the first call in the world and called again."""
    charge = Charger()
    agent, world = build(BILL, tools={"charge": charge})
    charge.mode = "hang"
    first = agent.run(world, focus=":p1")
    assert first.status == "failed" and first.instances[0].error is not None
    assert "did not answer" in str(first.instances[0].error)
    assert len(intents(world)) == 1
    assert charge.hung.wait(10)  # the abandoned call has returned: its subject is let go
    deadline = time.monotonic() + 10
    while CALLING:
        assert time.monotonic() < deadline, CALLING
        time.sleep(0.01)

    charge.mode = "answer"
    again = agent.run(world, focus=":p1")
    (inst,) = again.instances
    assert inst.status == "failed"
    assert inst.error is not None and "may already have acted on :p1" in str(inst.error)
    # the message gives the arguments that clear it, ready to paste into a shell
    (given,) = re.findall(r"tools reconcile t\.charge … --args (.+?)` on the same store",
                          str(inst.error))
    (args,) = shlex.split(given)
    assert json.loads(args) == {"patient": ":p1"}
    # a restart clears a world kept in memory, not one a store outlives the process in
    said = "a world kept in memory clears when its process restarts" in str(inst.error)
    assert said is not world.store.persistent
    called = agent.catalog.call("t.charge", {"patient": ":p1"}, world, allow=ALLOW)
    assert called.status == "refused" and called.error is not None
    assert called.error["kind"] == "outcome_unknown"
    assert charge.acted == ["http://example.org/clinic#p1"]

    assert agent.catalog.reconcile("t.charge", json.loads(args), world) is not None
    done = agent.run(world, focus=":p1")
    assert done.status == "completed" and len(charge.acted) == 2 and intents(world) == []


def test_a_call_in_doubt_stops_a_workflow_step_on_its_subject(build: Build) -> None:
    charge = Charger()
    agent, world = build(BILL, tools={"charge": charge})
    charge.mode = "hang"
    assert agent.catalog.call("t.charge", {"patient": ":p1"}, world,
                              allow=ALLOW).status == "timed_out"
    charge.mode = "answer"
    run = agent.run(world, all=True)
    status = {str(i.focus): i.status for i in run.instances}
    assert status == {"http://example.org/clinic#p1": "failed",
                      "http://example.org/clinic#p2": "completed",
                      "http://example.org/clinic#p3": "completed"}
    assert charge.acted.count("http://example.org/clinic#p1") == 1


# -- a call that answered and did not land ----------------------------------------------------

ROUND = CHARGE + """
:Round a horis:Workflow ; horis:focusType :Nurse ; horis:start :ChargeUrgent .
:ChargeUrgent a horis:ActionStep ;
    horis:tool :t.charge ;
    horis:forEach true ;
    horis:requires "?this a :Nurse . ?p a :Patient . FILTER NOT EXISTS { ?p :ref ?r }" ;
    horis:bind [ horis:arg "patient" ; horis:var "p" ] .
"""


def test_a_call_whose_result_the_gate_rejects_is_held_in_doubt(
        build: Build, tmp_path: Path) -> None:
    """The tool answered, so it may have acted; the gate rejected what it returned, so the
    world holds nothing of it, and a rerun charged again. Its trace replays to its world."""
    from horismos import replay

    acted: list[str] = []

    def charge(patient: Any) -> dict[str, str]:
        acted.append(str(patient))
        answer = {"ref": "R 1", "extra": "x"}  # outside the declared effect
        return answer  # not written out in its return: no check before the run reads it

    agent, world = build(BILL, tools={"charge": charge})
    trace = tmp_path / "rejected.jsonl"
    snapshot = not world.store.shared
    first = agent.run(world, focus=":p1", trace=trace, trace_snapshot=snapshot)
    assert [r.status for r in first.instances[0].steps] == ["rejected"]
    assert len(intents(world)) == 1
    again = agent.run(world, focus=":p1")
    assert again.status == "failed"
    assert "may already have acted on :p1" in str(again.instances[0].error)
    assert "what it answered did not land" in str(again.instances[0].error)
    called = agent.catalog.call("t.charge", {"patient": ":p1"}, world, allow=ALLOW)
    assert called.status == "refused" and called.error is not None
    assert acted == [str(EX.p1)]
    report = replay(trace, agent)
    assert not report.diverged, report.first_divergence
    assert report.final_digest_matches is (True if snapshot else None)


def test_an_answer_refused_as_too_large_holds_the_call_in_doubt(build: Build) -> None:
    """The tool answered — it did what it does — and its result was refused past
    horis:maxResultBytes before anything landed: a rerun or a catalog call charged again."""
    acted: list[str] = []

    def charge(patient: Any) -> dict[str, str]:
        acted.append(str(patient))
        return {"ref": "x" * 5000}

    agent, world = build(BILL.replace("horis:idempotent false",
                                      "horis:idempotent false ; horis:maxResultBytes 100"),
                         tools={"charge": charge})
    first = agent.run(world, focus=":p1")
    assert "maxResultBytes" in str(first.instances[0].error)
    assert len(intents(world)) == 1
    again = agent.run(world, focus=":p1")
    assert "may already have acted on :p1" in str(again.instances[0].error)
    call = agent.catalog.call("t.charge", {"patient": ":p2"}, world, allow=ALLOW)
    assert call.status == "failed" and call.error is not None
    assert call.error["kind"] == "result_too_large"
    # the command that clears it is given whole, ready to paste once checked
    assert """tools reconcile t.charge … --args '{"patient": ":p2"}'""" in call.error["message"]
    assert agent.catalog.call("t.charge", {"patient": ":p2"}, world,
                              allow=ALLOW).status == "refused"
    assert acted == [str(EX.p1), str(EX.p2)]


@pytest.mark.parametrize("store_name", ["memory", "oxigraph"], indirect=True)
def test_a_for_each_step_replays_against_its_world_whatever_order_its_store_gave(
        build: Build, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A replay against the trace's snapshot reads another store than the run did, whose
    solutions may come in another order (rdflib's follows the process's hash seed): the
    calls were made in the new order and handed the recorded outcomes of others, and the
    replay diverged. They are made in the recorded order."""
    from horismos import replay

    refs = iter(range(1, 100))
    agent, world = build(ROUND, tools={"charge": lambda patient: {"ref": f"R-{next(refs)}"}})
    store = type(world.store)
    solutions = store.solutions

    def reversed_solutions(self: Any, *args: Any, **kwargs: Any) -> Any:
        return list(reversed(solutions(self, *args, **kwargs)))

    trace = tmp_path / "round.jsonl"
    monkeypatch.setattr(store, "solutions", reversed_solutions)
    run = agent.run(world, focus=":n1", trace=trace, trace_snapshot=True)
    monkeypatch.undo()
    assert run.status == "completed"
    report = replay(trace, agent)
    assert not report.diverged, report.first_divergence
    assert report.final_digest_matches is True


def test_a_for_each_step_that_fails_holds_the_calls_that_answered_and_no_other(
        build: Build) -> None:
    """One call of the step answered (it charged), a later one was declined: the step fails
    and nothing of it lands. The charge that answered is held in doubt; the declined one, and
    any never made, may be made again."""
    acted: list[str] = []

    def charge(patient: Any) -> dict[str, str]:
        acted.append(str(patient))
        if len(acted) == 2:
            raise RuntimeError("card declined")
        return {"ref": f"R-{len(acted)}"}

    agent, world = build(ROUND, tools={"charge": charge})
    run = agent.run(world, focus=":n1")
    assert run.status == "failed"
    answered, declined = acted
    patients = [str(EX.p1), str(EX.p2), str(EX.p3)]
    never = [p for p in patients if p not in acted]
    assert len(intents(world)) == 1

    def call(patient: str) -> Any:
        name = ":" + patient.rsplit("#", 1)[1]
        return agent.catalog.call("t.charge", {"patient": name}, world, allow=ALLOW)

    assert call(answered).status == "refused"
    assert call(declined).status == "completed"
    assert [call(p).status for p in never] == ["completed"] * len(never)
    assert acted.count(answered) == 1


@pytest.mark.parametrize("store_name", ["memory"], indirect=True)
def test_a_trace_recorded_before_answered_calls_were_held_replays_as_it_ran(
        build: Build, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its header says ``calls_in_doubt: true``: a rejected call's replay writes no mark, or
    the replay would reach another final world than the one recorded."""
    from horismos import _runner, replay

    init = _runner.Runner.__init__

    def before(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self.calls_in_doubt = 1

    monkeypatch.setattr(_runner.Runner, "__init__", before)
    agent, world = build(BILL, tools={"charge": lambda patient: {"ref": "R 1", "extra": "x"}})
    trace = tmp_path / "before.jsonl"
    agent.run(world, focus=":p1", trace=trace, trace_snapshot=True)
    assert intents(world) == []
    monkeypatch.undo()
    report = replay(trace, agent)
    assert not report.diverged, report.first_divergence
    assert report.final_digest_matches is True


# -- calls made at the same moment ----------------------------------------------------------

AT_ONCE = BILL.replace('"1s"', '"10s"') + """
:Bill2 a horis:Workflow ; horis:focusType :Patient ; horis:start :Charge2 .
:Charge2 a horis:ActionStep ;
    horis:tool :t.charge ;
    horis:requires "?this a :Patient . FILTER NOT EXISTS { ?this :ref ?r }" ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
:Rounds a horis:Workflow ; horis:focusType :Nurse ; horis:start :ChargeUrgent .
:ChargeUrgent a horis:ActionStep ;
    horis:tool :t.charge ;
    horis:requires "?this a :Nurse . ?p :acuity :urgent . FILTER NOT EXISTS { ?p :ref ?r }" ;
    horis:bind [ horis:arg "patient" ; horis:var "p" ] .
"""


class SlowCharge:
    """A charge that takes a while to answer, so calls made at once overlap in it."""

    def __init__(self) -> None:
        self.acted: list[str] = []
        self.release: asyncio.Event | None = None  # answer when it is set, not after 0.3 s

    async def __call__(self, patient: Any) -> dict[str, str]:
        self.acted.append(str(patient))
        if self.release is not None:
            await asyncio.wait_for(self.release.wait(), 60)
        else:
            await asyncio.sleep(0.3)
        return {"ref": f"R-{len(self.acted)}"}


def _at_once(build: Build) -> tuple[Any, World, SlowCharge]:
    charge = SlowCharge()

    async def call(patient: Any) -> dict[str, str]:  # a coroutine function, as bindings await
        return await charge(patient)

    agent, world = build(AT_ONCE, tools={"charge": call})
    return agent, world, charge


def test_two_workflows_charging_one_subject_at_once_charge_it_once(
        build: Build, tmp_path: Path) -> None:
    """Each step's precondition ("not charged yet") held when it was checked; the calls
    overlapped. The second step finds the first's call holding its subject: it is blocked,
    and, run again once that call has landed, its precondition no longer holds. Its trace
    replays as it ran."""
    from horismos import replay

    agent, world, charge = _at_once(build)
    blocked_trace = tmp_path / "bill2.jsonl"

    async def both() -> list[Any]:
        return list(await asyncio.gather(
            agent.arun(world, focus=":p1", workflow=str(EX.Bill)),
            agent.arun(world, focus=":p1", workflow=str(EX.Bill2), trace=blocked_trace),
        ))

    first, second = asyncio.run(both())
    assert charge.acted == [str(EX.p1)]
    assert first.status == "completed" and second.status == "blocked"
    (inst,) = second.instances
    assert isinstance(inst.error, CallInFlight)
    assert inst.error.holder == str(first.instances[0].instance)
    assert "is calling t.charge on :p1" in str(inst.error)
    assert intents(world) == []  # nothing held once the call landed
    report = replay(blocked_trace, agent)
    assert not report.diverged, report.first_divergence
    # against definitions where the tool is idempotent, no call is held: said, not a crash
    changed, _ = build(AT_ONCE.replace("horis:idempotent false", "horis:idempotent true"),
                       tools={"charge": lambda patient: {"ref": "R-9"}})
    assert replay(blocked_trace, changed).diverged

    again = agent.run(world, focus=":p1", workflow=str(EX.Bill2))
    assert again.status == "blocked" and "FILTER NOT EXISTS" in str(again.instances[0].blocked_by)
    assert charge.acted == [str(EX.p1)]


def test_a_step_holds_its_subject_even_when_it_is_not_the_focus(build: Build) -> None:
    """A nurse's round charges the urgent patient: its step acts on :p1, which no claim on
    its focus covers. A catalog call and a patient's own workflow on :p1 at the same moment
    do not charge again."""
    agent, world, charge = _at_once(build)

    async def three() -> list[Any]:
        return list(await asyncio.gather(
            agent.arun(world, focus=":n1", workflow=str(EX.Rounds)),
            agent.catalog.acall("t.charge", {"patient": ":p1"}, world, allow=ALLOW),
            agent.arun(world, focus=":p1", workflow=str(EX.Bill2)),
        ))

    rounds, call, bill = asyncio.run(three())
    assert charge.acted == [str(EX.p1)]
    assert rounds.status == "completed"
    assert call.status == "refused" and call.error is not None
    if world.store.shared:  # the patient's own run claimed :p1 across processes first, or
        # the round's step held it first: which answers first is a matter of timing
        assert call.error["kind"] in ("busy", "outcome_unknown")
    else:
        assert call.error["kind"] == "outcome_unknown"
        assert "workflow instance" in call.error["message"]
    assert bill.status == "blocked"
    assert intents(world) == []


@pytest.mark.parametrize("store_name", ["memory", "oxigraph"], indirect=True)
def test_a_catalog_call_being_made_holds_off_others_without_being_in_doubt(
        build: Build) -> None:
    """While a call is being made, another call and a workflow step on its subject were told
    it "may already have acted" and to reconcile — and reconciling cleared the call still in
    flight, so the next call charged again. Now they are refused and blocked as "being
    made", reconcile leaves it be, and once it lands nothing is held. (On a shared world the
    subject's claim answers first: ``busy``.)"""
    agent, world, charge = _at_once(build)

    async def meanwhile() -> tuple[Any, Any, Any, str]:
        charge.release = asyncio.Event()  # the first call answers once the rest is done
        first = asyncio.create_task(
            agent.catalog.acall("t.charge", {"patient": ":p1"}, world, allow=ALLOW))
        while not charge.acted:
            await asyncio.sleep(0.01)
        second = await agent.catalog.acall("t.charge", {"patient": ":p1"}, world, allow=ALLOW)
        run = await agent.arun(world, focus=":p1", workflow=str(EX.Bill))
        try:
            await asyncio.to_thread(agent.catalog.reconcile, "t.charge", {"patient": ":p1"},
                                    world)
            refused = ""
        except UsageError as e:
            refused = str(e)
        charge.release.set()
        return await first, second, run, refused

    first, second, run, refused = asyncio.run(meanwhile())
    assert first.status == "completed"
    assert second.status == "refused" and second.error is not None
    assert "is being made" in second.error["message"]
    assert "may already have acted" not in second.error["message"]
    assert run.status == "blocked" and isinstance(run.instances[0].error, CallInFlight)
    assert "being made in this process right now" in refused
    assert charge.acted == [str(EX.p1)] and intents(world) == []


@pytest.mark.parametrize("store_name", ["sparql"], indirect=True)
def test_a_hold_that_goes_while_a_step_looks_at_it_lets_the_step_go_on(
        build: Build, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a server, a commit beaten by a hold asks, in a request of its own, what stopped
    it. When the holder's own commit lands in between, nothing is there any more: the first
    step of a new instance ended the run with "moved on by another writer (now gone)"."""
    from horismos._intents import holds
    from horismos._stores import Change, sparql

    charge = Charger()
    agent, world = build(BILL, tools={"charge": charge})
    other = URIRef("urn:horismos:instance:other")
    held = holds(other, agent.definitions.tools[EX["t.charge"]], [{"patient": f"<{EX.p1}>"}])
    world.commit(Change(add=held))
    looked = sparql.SparqlStore._stored

    def holder_lands_first(self: Any, quads: Any) -> Any:
        if any("doubt" in q[0] for q in quads) and intents(world):
            world.commit(Change(remove=held))
        return looked(self, quads)

    monkeypatch.setattr(sparql.SparqlStore, "_stored", holder_lands_first)
    run = agent.run(world, focus=":p1")
    assert run.status == "completed"
    assert charge.acted == [str(EX.p1)] and intents(world) == []


SLOW_TOOLS = """
import os, time
from pathlib import Path

def charge(patient):
    ledger = Path(os.environ["LEDGER"])
    with open(ledger, "a") as f:
        f.write(f"charge {patient}\\n")
    (ledger.parent / "acted").write_text("here")
    if os.environ.get("UNTIL"):  # in flight until the test makes that file
        deadline = time.monotonic() + 120
        while not Path(os.environ["UNTIL"]).exists() and time.monotonic() < deadline:
            time.sleep(0.02)
    return {"ref": "R-1"}
"""


def test_two_processes_charging_one_subject_on_a_shared_world_charge_it_once(
        tmp_path: Path) -> None:
    """Two ``horismos run`` processes, two workflows on one patient of a world on a real
    ``oxigraph serve``: the second's step is made while the first's call is in flight. The
    check that nobody holds the patient rides in the commit's own update, so both cannot
    pass it."""
    from oxigraph_server import OxigraphServer

    server = OxigraphServer(tmp_path / "db")
    try:
        defs = PREFIXES + ":Patient a owl:Class .\n:Nurse a owl:Class .\n" + AT_ONCE
        (tmp_path / "defs.ttl").write_text(defs.replace('"10s"', '"60s"'))
        (tmp_path / "world.ttl").write_text(PREFIXES + ":p1 a :Patient .\n")
        (tmp_path / "tools.py").write_text(SLOW_TOOLS)
        loaded = _cli(tmp_path, "load", "world.ttl", "--store", server.store)
        assert loaded.returncode == 0, loaded.stderr
        run = ["run", "defs.ttl", "--store", server.store, "--focus", ":p1", "--tools",
               "tools.py", "--allow", ",".join(ALLOW)]
        env = dict(_env(tmp_path, False), UNTIL=str(tmp_path / "release"))
        first = Popen([sys.executable, "-m", "horismos", *run, "--workflow",
                                  ":Bill"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while not (tmp_path / "acted").exists():
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline, "the first call did not reach the tool"
            time.sleep(0.05)
        second = _cli(tmp_path, *run, "--workflow", ":Bill2")
        (tmp_path / "release").write_text("go")  # the first's call answers only now
        out, err = first.communicate(timeout=120)
        assert first.returncode == 0, out + err
        assert "is calling t.charge on :p1" in second.stdout + second.stderr
        # on a shared world a stopped process's instance is continued by run --all
        assert "`horismos run --all` for its workflow" in second.stdout.replace("\n", " ")
        assert second.returncode != 0 and "Traceback" not in second.stderr
        ledger = (tmp_path / "ledger.txt").read_text().splitlines()
        assert ledger == ["charge http://example.org/clinic#p1"]
    finally:
        server.stop()


# -- the command line, killed mid-call -------------------------------------------------------

CLI_TOOLS = """
import os, time
from pathlib import Path

def _act(line):
    ledger = Path(os.environ["LEDGER"])
    with open(ledger, "a") as f:
        f.write(line + "\\n")
        f.flush()
        os.fsync(f.fileno())
    if os.environ.get("HOLD"):
        (ledger.parent / "acted").write_text("here")
        time.sleep(600)

def charge(patient):
    _act(f"charge {patient}")
    return {"ref": "R-1"}

def pay(account, amount):
    _act(f"pay {account} {amount}")
"""


def _env(cwd: Path, hold: bool) -> dict[str, str]:
    env = dict(os.environ, LEDGER=str(cwd / "ledger.txt"))
    env.pop("HOLD", None)
    if hold:
        env["HOLD"] = "1"
    return env


def _cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return horismos_forked(cwd, *args, env=_env(cwd, False), timeout=300)


def _killed_once_it_acted(cwd: Path, args: list[str]) -> None:
    """``horismos ARGS…`` in ``cwd``, killed (SIGKILL) as its tool holds after acting (the tool
    leaves ``acted`` there when it has)."""
    proc = Popen([sys.executable, "-m", "horismos", *args], cwd=cwd,
                            env=_env(cwd, True), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not (cwd / "acted").exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the call did not reach the tool"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def test_a_call_killed_mid_call_is_not_made_again_until_reconciled(tmp_path: Path) -> None:
    (tmp_path / "defs.ttl").write_text(PREFIXES + ":Patient a owl:Class .\n" + CHARGE)
    (tmp_path / "world.ttl").write_text(PREFIXES + ":p1 a :Patient .\n")
    (tmp_path / "tools.py").write_text(CLI_TOOLS)
    loaded = _cli(tmp_path, "load", "defs.ttl", "world.ttl", "--store", "oxigraph:store")
    assert loaded.returncode == 0, loaded.stderr
    call = ["tools", "call", "t.charge", "defs.ttl", "--store", "oxigraph:store",
            "--tools", "tools.py", "--allow", ",".join(ALLOW), "--args", '{"patient": ":p1"}',
            "--format", "json"]

    _killed_once_it_acted(tmp_path, call)
    ledger = tmp_path / "ledger.txt"
    assert ledger.read_text().splitlines() == ["charge http://example.org/clinic#p1"]

    again = _cli(tmp_path, *call)
    assert again.returncode == 5, again.stdout + again.stderr
    refusal = json.loads(again.stdout)["error"]
    assert refusal["kind"] == "outcome_unknown"
    # a restart does not clear what the store on disk holds: no word of one
    assert "tools reconcile t.charge" in refusal["message"]
    assert "clears when its process restarts" not in refusal["message"]
    assert len(ledger.read_text().splitlines()) == 1  # the tool was not called again

    reconcile = ["tools", "reconcile", "t.charge", "defs.ttl", "--store", "oxigraph:store",
                 "--args", '{"patient": ":p1"}']
    cleared = _cli(tmp_path, *reconcile)
    assert cleared.returncode == 0, cleared.stdout + cleared.stderr
    assert "cleared the call of t.charge in doubt" in cleared.stdout
    assert _cli(tmp_path, *reconcile).returncode == 1  # nothing left to clear

    after = _cli(tmp_path, *call)
    assert after.returncode == 0, after.stdout + after.stderr
    assert len(ledger.read_text().splitlines()) == 2

    in_memory = _cli(tmp_path, "tools", "reconcile", "t.charge", "defs.ttl", "--store",
                     "memory", "--args", '{"patient": ":p1"}')
    assert in_memory.returncode == 2 and "Traceback" not in in_memory.stderr
    assert "a world in memory holds no call in doubt" in in_memory.stderr


@pytest.mark.parametrize("recorded_before", [False, True])
def test_a_run_that_left_a_call_in_doubt_replays_to_its_world(
        build: Build, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        recorded_before: bool) -> None:
    """The marks a run wrote are written again by its replay, and a trace recorded before
    calls were held in doubt replays without them: either way the final world is the one
    recorded."""
    from horismos import _runner, replay

    if recorded_before:  # as the runtime before this change recorded it
        init = _runner.Runner.__init__

        def old(self: Any, *args: Any, **kwargs: Any) -> None:
            init(self, *args, **kwargs)
            self.calls_in_doubt = 0

        monkeypatch.setattr(_runner.Runner, "__init__", old)
    charge = Charger()
    charge.mode = "hang"
    agent, world = build(BILL, tools={"charge": charge})
    trace = tmp_path / "bill.jsonl"
    # a shared world keeps no digest of its own to replay to: replayed from what it read
    snapshot = not world.store.shared
    agent.run(world, focus=":p1", trace=trace, trace_snapshot=snapshot)
    assert len(intents(world)) == (0 if recorded_before else 1)
    monkeypatch.undo()
    report = replay(trace, agent)
    assert not report.diverged, report.first_divergence
    assert report.final_digest_matches is (True if snapshot else None)


SMS = """
:t.sms a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "text" ; horis:type xsd:string ] ] ;
    horis:binding "python:sms" ;
    horis:timeout "1s" ;
    horis:idempotent false .
"""


def test_a_tool_with_no_subject_is_held_in_doubt_for_those_arguments_only(
        build: Build) -> None:
    """One message never answered holds back that message, not every message the tool
    sends."""
    sent: list[str] = []
    mode = {"hang": True}
    release = threading.Event()  # the hung call returns once the reconcile has been tried

    def sms(text: str) -> dict[str, str]:
        sent.append(text)
        if mode["hang"]:
            release.wait(60)
        return {}

    agent, world = build(SMS, tools={"sms": sms})
    allow = ["ReadOnly", "HostStateWrite"]
    assert agent.catalog.call("t.sms", {"text": "ward 3 closed"}, world,
                              allow=allow).status == "timed_out"
    mode["hang"] = False
    again = agent.catalog.call("t.sms", {"text": "ward 3 closed"}, world, allow=allow)
    assert again.status == "refused" and again.error is not None
    assert "may already have acted with these arguments" in again.error["message"]
    assert """--args '{"text": "ward 3 closed"}'""" in again.error["message"]
    other = agent.catalog.call("t.sms", {"text": "ward 4 open"}, world, allow=allow)
    assert other.status == "completed"
    assert sent == ["ward 3 closed", "ward 4 open"]
    with pytest.raises(UsageError, match="being made in this process right now"):
        agent.catalog.reconcile("t.sms", {"text": "ward 3 closed"}, world)  # still sending
    release.set()
    deadline = time.monotonic() + 60
    while CALLING:  # the hung call has returned, late
        assert time.monotonic() < deadline, CALLING
        time.sleep(0.01)
    assert agent.catalog.reconcile("t.sms", {"text": "ward 3 closed"}, world) is not None
    assert agent.catalog.call("t.sms", {"text": "ward 3 closed"}, world,
                              allow=allow).status == "completed"


SERVED_CALL = """
import asyncio, os, sys
from pathlib import Path
from horismos import Agent, World

def charge(patient):
    with open(os.environ["LEDGER"], "a") as f:
        f.write(f"charge {patient}\\n")
    deadline = __import__("time").monotonic() + 120
    while not Path(os.environ["UNTIL"]).exists() and __import__("time").monotonic() < deadline:
        __import__("time").sleep(0.02)
    Path(os.environ["LEDGER"]).with_name("returned").write_text("late")
    return {"ref": "R-1"}

agent = Agent.from_files("defs.ttl", tools={"charge": charge})
world = World.open(sys.argv[1])
allow = ["ReadOnly", "HostStateWrite", "ExternalCommit"]
if os.environ.get("LANE") == "step":  # a workflow's step, which then waits for its operator
    run = agent.run(world, workflow=":Bill", focus=":p1", allow=allow)
    print(run.steps[0].status, flush=True)
else:
    result = agent.catalog.call("t.charge", {"patient": ":p1"}, world, allow=allow)
    print(result.status, flush=True)
while not Path("returned").exists():  # a server lives on after the call timed out
    __import__("time").sleep(0.02)
__import__("time").sleep(float(os.environ.get("LINGER", "3")))
"""


@pytest.mark.parametrize("lane", ["call", "step"])
def test_a_call_still_acting_after_its_timeout_is_not_cleared_from_another_process(
        tmp_path: Path, lane: str) -> None:
    """A served call of a sync Python tool times out; the function cannot be stopped and goes
    on acting in its thread. `tools reconcile` from another process cleared it at once
    (the subject's claim had been given back with the answer "timed out"), and the next call
    charged the patient a second time while the first charge was still being made. Now the
    claim is held until the function returns. The same for a workflow step's call, whose run
    goes on to its onError wait (and may end) while the function acts on."""
    from oxigraph_server import OxigraphServer

    server = OxigraphServer(tmp_path / "db")
    try:
        (tmp_path / "defs.ttl").write_text(PREFIXES + ":Patient a owl:Class .\n" + CHARGE + """
:Bill a horis:Workflow ; horis:focusType :Patient ; horis:start :Charge .
:Charge a horis:ActionStep ; horis:tool :t.charge ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] ; horis:onError :Check .
:Check a horis:WaitStep ; horis:reason "check the charge" ; horis:wake horis:OperatorInput ;
    horis:delivery horis:Final ; horis:until "?this :ref ?r ." .
""")
        (tmp_path / "world.ttl").write_text(PREFIXES + ":p1 a :Patient .\n")
        (tmp_path / "serve.py").write_text(SERVED_CALL)
        horismos_load(tmp_path, server.store, "world.ttl")
        env = dict(_env(tmp_path, False), UNTIL=str(tmp_path / "release"), LANE=lane)
        serving = Popen([sys.executable, "serve.py", server.store], cwd=tmp_path,
                                   env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True)
        assert serving.stdout is not None
        assert serving.stdout.readline().strip() == "timed_out", serving.communicate()

        args = ("--store", server.store, "--args", '{"patient": ":p1"}')
        early = _cli(tmp_path, "tools", "reconcile", "t.charge", "defs.ttl", *args)
        assert early.returncode != 0 and "Traceback" not in early.stderr
        assert "another process is calling a tool on" in early.stdout + early.stderr
        (tmp_path / "tools.py").write_text(CLI_TOOLS)
        again = _cli(tmp_path, "tools", "call", "t.charge", "defs.ttl", "--tools", "tools.py",
                     "--allow", ",".join(ALLOW), *args)
        assert again.returncode != 0 and "another process is calling" in again.stdout, (
            again.stdout + again.stderr)
        assert (tmp_path / "ledger.txt").read_text().count("charge") == 1

        (tmp_path / "release").write_text("go")  # the first charge returns, late
        deadline = time.monotonic() + 60
        while True:  # its claim given back once it has returned
            late = _cli(tmp_path, "tools", "reconcile", "t.charge", "defs.ttl", *args)
            if late.returncode == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert late.returncode == 0, late.stdout + late.stderr
        assert serving.wait(timeout=60) == 0, serving.communicate()
        assert (tmp_path / "ledger.txt").read_text().count("charge") == 1
    finally:
        server.stop()


PAY = """
:Bill a owl:Class .
:account a owl:DatatypeProperty .
:amount a owl:DatatypeProperty .
:t.pay a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "account" ; horis:type xsd:string ] ;
                  horis:arg [ horis:name "amount" ; horis:type xsd:decimal ] ] ;
    horis:binding "python:pay" ;
    horis:timeout "5m" ;
    horis:idempotent false .
:Settle a horis:Workflow ; horis:focusType :Bill ; horis:start :Pay .
:Pay a horis:ActionStep ;
    horis:tool :t.pay ;
    horis:requires "?this :account ?account ; :amount ?amount ." .
"""


@pytest.mark.parametrize("lane", ["step", "call"])
def test_a_payment_in_doubt_is_not_made_again_with_its_amount_written_otherwise(
        tmp_path: Path, lane: str) -> None:
    """A tool with no subject is held in doubt for its arguments, and an amount is a value:
    a payment of 12 (a step's, read from the world, or a call's) killed mid-call is the
    payment of 12.0 a script then makes, and 12.00 the one an operator reconciles. Keyed by
    the arguments' text, the payment was made twice."""
    (tmp_path / "defs.ttl").write_text(PREFIXES + PAY)
    (tmp_path / "world.ttl").write_text(
        PREFIXES + ':b1 a :Bill ; :account "A1" ; :amount "12.00"^^xsd:decimal .\n')
    (tmp_path / "tools.py").write_text(CLI_TOOLS)
    store = ("--store", "oxigraph:store")
    loaded = _cli(tmp_path, "load", "defs.ttl", "world.ttl", *store)
    assert loaded.returncode == 0, loaded.stderr
    allow = ("--allow", ",".join(ALLOW), "--tools", "tools.py")

    def call(amount: str) -> list[str]:
        return ["tools", "call", "t.pay", "defs.ttl", *store, *allow, "--format", "json",
                "--args", f'{{"account": "A1", "amount": {amount}}}']

    first = (["run", "defs.ttl", *store, *allow, "--focus", ":b1"] if lane == "step"
             else call("12"))
    _killed_once_it_acted(tmp_path, first)
    ledger = tmp_path / "ledger.txt"
    assert ledger.read_text().splitlines() == ["pay A1 12"]

    again = _cli(tmp_path, *call("12.0"))
    assert again.returncode == 5, again.stdout + again.stderr
    assert json.loads(again.stdout)["error"]["kind"] == "outcome_unknown", again.stdout
    assert ledger.read_text().splitlines() == ["pay A1 12"]  # not paid again

    if lane == "step":  # its instance, continued, finds its call in doubt: it is let go
        rerun = _cli(tmp_path, "run", "defs.ttl", *store, *allow, "--focus", ":b1")
        assert "not called again" in rerun.stdout + rerun.stderr, rerun.stdout + rerun.stderr
    reconcile = ["tools", "reconcile", "t.pay", "defs.ttl", *store,
                 "--args", '{"account": "A1", "amount": 12.00}']
    cleared = _cli(tmp_path, *reconcile)
    assert cleared.returncode == 0, cleared.stdout + cleared.stderr
    after = _cli(tmp_path, *call("12.0"))
    assert after.returncode == 0, after.stdout + after.stderr
    assert ledger.read_text().splitlines() == ["pay A1 12", "pay A1 12.0"]



def _kept_in_doubt_before(
        tmp_path: Path, facts: str, amount: str) -> tuple[tuple[str, str], URIRef]:
    """The payment definitions, the world's ``facts`` and the command line's tools in
    ``tmp_path``, loaded into an on-disk store that holds a payment of account A1 left in
    doubt as a version before kept it: at the key of its arguments as written, the amount the
    ``xsd:decimal`` of lexical form ``amount`` (quoted). The store's option, and the node the
    call is kept at."""
    (tmp_path / "defs.ttl").write_text(PREFIXES + PAY)
    (tmp_path / "world.ttl").write_text(PREFIXES + facts + "\n")
    (tmp_path / "tools.py").write_text(CLI_TOOLS)
    store = ("--store", f"oxigraph:{tmp_path / 'store'}")
    loaded = _cli(tmp_path, "load", "defs.ttl", "world.ttl", *store)
    assert loaded.returncode == 0, loaded.stderr
    args = {"account": '"A1"', "amount": f"{amount}^^<{XSD_NS}decimal>"}
    tool, call = EX["t.pay"], URIRef("urn:horismos:call:earlier")
    node = doubt_node(tool, Literal(json.dumps(args, sort_keys=True, ensure_ascii=False)))
    started = Literal("2026-01-01T00:00:00Z", datatype=URIRef(XSD_NS + "dateTime"))
    with World.open(store[1], create=False) as world:
        world.commit(Change(add=list(announce(call, call, tool, started, [args], node).quads)))
    return store, node


def test_a_payment_an_earlier_version_left_in_doubt_is_still_held(tmp_path: Path) -> None:
    """Numbers came to be keyed by value: a payment of 12.0 the version before left in doubt,
    kept at its amount's text, was no longer found, and a call of 12.0 paid again. It is
    looked for there too, and `tools reconcile` clears it there."""
    # the call in doubt as the version before kept it: keyed by its arguments' text
    store, node = _kept_in_doubt_before(tmp_path, ":b1 a :Bill .", '"12.0"')
    pay = ("tools", "call", "t.pay", "defs.ttl", *store, "--allow", ",".join(ALLOW), "--tools",
           "tools.py", "--format", "json", "--args", '{"account": "A1", "amount": 12.0}')
    p = _cli(tmp_path, *pay)
    assert p.returncode == 5, p.stdout + p.stderr  # 0: paid again
    assert json.loads(p.stdout)["error"]["kind"] == "outcome_unknown", p.stdout
    assert not (tmp_path / "ledger.txt").exists()
    cleared = _cli(tmp_path, "tools", "reconcile", "t.pay", "defs.ttl", *store,
                   "--args", '{"account": "A1", "amount": 12.0}')
    assert cleared.returncode == 0, cleared.stdout + cleared.stderr
    with World.open(store[1], create=False) as world:
        assert read_intent(world.store, node) is None
    assert _cli(tmp_path, *pay).returncode == 0
    assert (tmp_path / "ledger.txt").read_text().splitlines() == ["pay A1 12.0"]


def test_a_payment_in_doubt_is_not_made_again_with_its_amount_in_another_datatype(
        tmp_path: Path) -> None:
    """An amount of 12 is one value whatever its datatype: an ``xsd:integer`` a step read
    from the world (Turtle writes a bare 12 so), the ``xsd:decimal`` 12 a call of the
    argument (declared ``xsd:decimal``) is given, the 12.0 another bill holds. Each is sent to
    the tool as the JSON number 12 (and to a Python tool as equal values), and its approval
    fingerprint is one. Keyed by datatype, the payment a step left in doubt was made again
    by a call of 12, and by the step of the bill of 12.0."""
    (tmp_path / "defs.ttl").write_text(PREFIXES + PAY)
    (tmp_path / "world.ttl").write_text(
        PREFIXES + ':b1 a :Bill ; :account "A1" ; :amount 12 .\n'
        ':b2 a :Bill ; :account "A1" ; :amount 12.0 .\n')
    (tmp_path / "tools.py").write_text(CLI_TOOLS)
    store = ("--store", "oxigraph:store")
    loaded = _cli(tmp_path, "load", "defs.ttl", "world.ttl", *store)
    assert loaded.returncode == 0, loaded.stderr
    allow = ("--allow", ",".join(ALLOW), "--tools", "tools.py")
    call = ["tools", "call", "t.pay", "defs.ttl", *store, *allow, "--format", "json",
            "--args", '{"account": "A1", "amount": 12}']

    _killed_once_it_acted(tmp_path, ["run", "defs.ttl", *store, *allow, "--focus", ":b1"])
    ledger = tmp_path / "ledger.txt"
    assert ledger.read_text().splitlines() == ["pay A1 12"]

    again = _cli(tmp_path, *call)
    assert again.returncode == 5, again.stdout + again.stderr  # 0: paid again
    assert json.loads(again.stdout)["error"]["kind"] == "outcome_unknown", again.stdout
    rerun = _cli(tmp_path, "run", "defs.ttl", *store, *allow, "--focus", ":b1")
    assert "not called again" in rerun.stdout + rerun.stderr, rerun.stdout + rerun.stderr
    other = _cli(tmp_path, "run", "defs.ttl", *store, *allow, "--focus", ":b2")
    assert "may already have acted with these arguments" in other.stdout, other.stdout
    assert ledger.read_text().splitlines() == ["pay A1 12"]  # neither paid again

    cleared = _cli(tmp_path, "tools", "reconcile", "t.pay", "defs.ttl", *store,
                   "--args", '{"account": "A1", "amount": 12.0}')
    assert cleared.returncode == 0, cleared.stdout + cleared.stderr
    after = _cli(tmp_path, *call)
    assert after.returncode == 0, after.stdout + after.stderr
    assert ledger.read_text().splitlines() == ["pay A1 12", "pay A1 12"]


@pytest.mark.parametrize("lane", ["call", "step"])
def test_a_payment_the_version_before_left_in_doubt_under_its_datatype_is_still_held(
        tmp_path: Path, lane: str) -> None:
    """The version before kept a call in doubt by its amount's value within its datatype: a
    payment of 12 for an ``xsd:decimal`` argument at ``"12"^^xsd:decimal``, where it is
    ``"12"^^xsd:integer`` now. Looked for only there, that payment in doubt was no longer
    found and the next one was made; it is looked for there too, by a call and by a step,
    and `tools reconcile` clears it there."""
    store, node = _kept_in_doubt_before(
        tmp_path, ':b1 a :Bill ; :account "A1" ; :amount 12.0 .', '"12"')
    allow = ("--allow", ",".join(ALLOW), "--tools", "tools.py")
    pay = ("tools", "call", "t.pay", "defs.ttl", *store, *allow, "--format", "json",
           "--args", '{"account": "A1", "amount": 12}')
    if lane == "call":
        p = _cli(tmp_path, *pay)
        assert p.returncode == 5, p.stdout + p.stderr  # 0: paid again
        assert json.loads(p.stdout)["error"]["kind"] == "outcome_unknown", p.stdout
    else:
        r = _cli(tmp_path, "run", "defs.ttl", *store, *allow, "--focus", ":b1")
        assert "may already have acted with these arguments" in r.stdout, r.stdout + r.stderr
        assert "Traceback" not in r.stderr
    assert not (tmp_path / "ledger.txt").exists()
    cleared = _cli(tmp_path, "tools", "reconcile", "t.pay", "defs.ttl", *store,
                   "--args", '{"account": "A1", "amount": 12}')
    assert cleared.returncode == 0, cleared.stdout + cleared.stderr
    with World.open(store[1], create=False) as world:
        assert read_intent(world.store, node) is None
    assert _cli(tmp_path, *pay).returncode == 0
    assert (tmp_path / "ledger.txt").read_text().splitlines() == ["pay A1 12"]


def test_a_run_the_version_before_recorded_replays_its_doubt_where_it_kept_it(
        build: Build, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run recorded before amounts were keyed across datatypes (``calls_in_doubt`` 4) left a
    payment of 12.0 in doubt at ``"12"^^xsd:decimal``: its replay writes it there again, and
    reaches the recorded world."""
    from horismos import _runner, replay

    init = _runner.Runner.__init__

    def old(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self.calls_in_doubt = 4

    release = threading.Event()

    def pay(account: str, amount: Any) -> None:
        release.wait(1.5)  # past its horis:timeout: sent, never answered

    monkeypatch.setattr(_runner.Runner, "__init__", old)
    agent, world = build(PAY.replace('"5m"', '"0.5s"'),
                         ':b1 a :Bill ; :account "A1" ; :amount 12.0 .\n', tools={"pay": pay},
                         ontology=False)
    trace = tmp_path / "pay.jsonl"
    snapshot = not world.store.shared
    try:
        agent.run(world, focus=":b1", trace=trace, trace_snapshot=snapshot)
    finally:
        release.set()
    kept = [str(n) for n in intents(world)]
    args = {"account": '"A1"', "amount": f'"12"^^<{XSD_NS}decimal>'}
    was = doubt_node(EX["t.pay"], Literal(json.dumps(args, sort_keys=True, ensure_ascii=False)))
    assert kept == [str(was)]
    monkeypatch.undo()
    report = replay(trace, agent)
    assert not report.diverged, report.first_divergence
    assert report.final_digest_matches is (True if snapshot else None)


# -- a failed step's horis:onError that leads back to it ---------------------------------------

RECHARGE = CHARGE + """
:Bill a horis:Workflow ; horis:focusType :Patient ; horis:start :Charge ;
    horis:maxSteps 24 .  # ten times round the loop: the default 1000 was 500, ~10 s on sparql:
:Charge a horis:ActionStep ;
    horis:tool :t.charge ;
    horis:requires "?this a :Patient . FILTER NOT EXISTS { ?this :ref ?r }" ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] ;
    horis:onError :Recheck .
:Recheck a horis:ProposalStep ;
    horis:candidates [ horis:query "SELECT ?option WHERE { ?option a :Nurse }" ] ;
    horis:rankBy "on duty" ; horis:model "lexical:bm25" ; horis:as "nurse" ;
    horis:next :Charge .
"""


def test_a_call_in_doubt_is_not_made_again_round_an_on_error_loop(build: Build) -> None:
    """:Charge's onError goes through a proposal back to :Charge. A charge that raised (the
    tool answered that it failed) is tried again each time round, by design, until the
    instance runs out of steps; one that never answered is made once: each later visit finds
    it in doubt and fails without calling."""
    charge = Charger()
    agent, world = build(RECHARGE, tools={"charge": charge})
    charge.mode = "hang"
    run = agent.run(world, focus=":p1")
    steps = run.instances[0].steps
    assert run.status == "failed" and len(steps) > 4  # round the loop, not stopped at once
    assert [r.status for r in steps[:3]] == ["timed_out", "completed", "failed"]
    assert charge.acted == [str(EX.p1)]
    assert len(intents(world)) == 1

    raising = Charger()  # its answer given well inside the timeout, on a loaded machine too:
    # a raise on a thread the machine starts late was a timeout, and a call in doubt
    agent, world = build(RECHARGE.replace('horis:timeout "1s"', 'horis:timeout "60s"', 1),
                         tools={"charge": raising})
    raising.mode = "raise"
    run = agent.run(world, focus=":p1")
    assert run.status == "failed" and len(raising.acted) > 1  # an answered failure is retried
    assert intents(world) == []
