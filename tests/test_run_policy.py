"""Approval and policy hold in workflow runs, as in ``tools call`` (issue 12, item 8).

A step whose tool needs approval stops its instance waiting, with the exact payload and its
fingerprint in the brief; ``approve`` records a person's approval, ``resume`` calls the tool;
a changed payload needs a new approval. A tool whose side-effect class is outside the run's
policy blocks with a typed reason. The trace records, per call, the policy and the approval
fingerprint used.
"""

from __future__ import annotations

import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from forked import horismos_forked
from in_process import horismos_load
from rdflib import RDF, Literal, Namespace

from horismos import Agent, PolicyRefused, UsageError, World, replay
from horismos._stores import Change
from horismos._vocab import HORIS

EX = Namespace("http://example.org/clinic#")

PREFIXES = """\
@prefix :      <http://example.org/clinic#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .
:Patient a owl:Class .
:AcuityLevel a owl:Class .
"""

WORLD = PREFIXES + """
:urgent a :AcuityLevel .
:routine a :AcuityLevel .
:p1 a :Patient ; :acuity :urgent .
"""


def definitions(flags: str) -> str:
    return PREFIXES + f"""
:t.discharge a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ;
                  horis:arg [ horis:name "queue" ; horis:type :AcuityLevel ] ] ;
    horis:effect [ horis:subject "patient" ;
                   horis:asserts [ horis:property :ref ; horis:type xsd:string ] ] ;
    horis:binding "python:discharge" {flags} .
:Discharge a horis:Workflow ; horis:focusType :Patient ; horis:start :Go .
:Go a horis:ActionStep ; horis:tool :t.discharge ;
    horis:requires "?this :acuity ?queue ." ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""


APPROVAL = "; horis:requiresApproval true"
EXTERNAL = "; horis:sideEffect horis:ExternalCommit"


def setup(tmp_path: Path, flags: str) -> tuple[Agent, World, list[dict[str, Any]]]:
    calls: list[dict[str, Any]] = []

    def discharge(**kw: Any) -> dict[str, Any]:
        calls.append(kw)
        return {"ref": f"D-{len(calls)}"}

    (tmp_path / "defs.ttl").write_text(definitions(flags), encoding="utf-8")
    (tmp_path / "world.ttl").write_text(WORLD, encoding="utf-8")
    agent = Agent.from_files(tmp_path / "defs.ttl", tools={"discharge": discharge})
    return agent, World.from_files(tmp_path / "world.ttl"), calls


def steps(trace: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in trace.read_text().splitlines()
            if '"type":"step"' in line]


def test_a_step_needing_approval_waits_then_runs_once_approved(tmp_path) -> None:
    agent, world, calls = setup(tmp_path, APPROVAL)
    run = agent.run(world, focus=EX.p1, trace=tmp_path / "run.jsonl")
    assert run.status == "waiting" and calls == []
    expected = agent.catalog.approve("t.discharge", {"patient": str(EX.p1),
                                                     "queue": str(EX.urgent)})
    brief = run.brief
    assert f"Fingerprint: {expected}" in brief
    assert json.dumps({"patient": str(EX.p1), "queue": str(EX.urgent)},
                      sort_keys=True, separators=(",", ":")) in brief
    iid = run.instance

    again = agent.resume(world, iid)                   # no approval yet: still waiting
    assert again.status == "waiting" and calls == []

    approved = agent.approve(world, iid, expected)
    assert approved["payload"] == {"patient": str(EX.p1), "queue": str(EX.urgent)}
    done = agent.resume(world, iid, trace=tmp_path / "resume.jsonl")
    assert done.status == "completed" and len(calls) == 1
    assert (EX.p1, EX.ref, Literal("D-1")) in world.graph
    (event,) = steps(tmp_path / "resume.jsonl")
    assert event["policy"] == {"allow": ["HostStateWrite", "ReadOnly"],
                               "side_effect": "HostStateWrite", "approvals": [expected]}
    (waited,) = steps(tmp_path / "run.jsonl")
    assert waited["status"] == "waiting" and waited["approval"]["fingerprints"] == [expected]
    assert replay(tmp_path / "resume.jsonl", agent).diverged is False


def test_a_changed_payload_needs_a_new_approval(tmp_path) -> None:
    agent, world, calls = setup(tmp_path, APPROVAL)
    run = agent.run(world, focus=EX.p1)
    old = run.brief.split("Fingerprint: ")[1].split()[0]
    agent.approve(world, run.instance, old)
    # the world changes before the resume: the step would now send another queue
    urgent = [q for q in world.store.quads() if q[:3] == (EX.p1, EX.acuity, EX.urgent)]
    world.commit(Change(add=[(EX.p1, EX.acuity, EX.routine, urgent[0][3])], remove=urgent))
    again = agent.resume(world, run.instance)
    assert again.status == "waiting" and calls == []
    new = again.brief.split("Fingerprint: ")[1].split()[0]
    assert new != old
    with pytest.raises(UsageError, match="waits for no approval with fingerprint"):
        agent.approve(world, run.instance, "0" * 64)
    agent.approve(world, run.instance, new)
    assert agent.resume(world, run.instance).status == "completed"
    assert calls == [{"patient": EX.p1, "queue": EX.routine}]


def test_a_tool_outside_the_policy_blocks_with_a_typed_reason(tmp_path) -> None:
    agent, world, calls = setup(tmp_path, EXTERNAL)
    run = agent.run(world, focus=EX.p1, trace=tmp_path / "blocked.jsonl")
    assert run.status == "blocked" and calls == []
    assert isinstance(run.error, PolicyRefused)
    assert run.error.side_effect == "ExternalCommit"
    assert "--allow ExternalCommit,HostStateWrite,ReadOnly" in str(run.error)
    (event,) = steps(tmp_path / "blocked.jsonl")
    assert event["error"]["kind"] == "policy"

    allowed = agent.run(world, focus=EX.p1, trace=tmp_path / "allowed.jsonl",
                        allow=["ReadOnly", "HostStateWrite", "ExternalCommit"])
    assert allowed.status == "completed" and len(calls) == 1
    (event,) = steps(tmp_path / "allowed.jsonl")
    assert event["policy"]["allow"] == ["ExternalCommit", "HostStateWrite", "ReadOnly"]
    assert event["policy"]["approvals"] is None
    assert replay(tmp_path / "allowed.jsonl", agent).diverged is False


@pytest.mark.parametrize("allow", [None, 3, ["ReadOnly", None]])
def test_an_allow_that_names_no_classes_is_a_usage_error_saying_what_to_give(
        tmp_path, allow) -> None:
    """``allow=None`` (taken for "the default") ended a run and a catalog call in
    ``TypeError: 'NoneType' object is not iterable``, and a list holding something else in
    an ``AttributeError``; each is a UsageError saying what ``allow`` takes, nothing run."""
    agent, world, calls = setup(tmp_path, EXTERNAL)
    with pytest.raises(UsageError, match="give the side-effect classes to allow"):
        agent.run(world, focus=EX.p1, allow=allow)
    with pytest.raises(UsageError, match="give the side-effect classes to allow"):
        agent.catalog.call("t.discharge", {"patient": ":p1", "queue": ":urgent"}, world,
                           allow=allow)
    assert calls == []


def test_allow_may_be_a_generator_of_names(tmp_path) -> None:
    agent, world, calls = setup(tmp_path, EXTERNAL)
    names = (n for n in ("ReadOnly", "HostStateWrite", "ExternalCommit"))
    assert agent.run(world, focus=EX.p1, allow=names).status == "completed"
    assert len(calls) == 1


def horismos(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return horismos_forked(cwd, *args, timeout=120)


TOOLS = """\
import json, pathlib

def discharge(patient, queue):
    with open("calls.log", "a") as f:
        f.write(json.dumps([patient, queue]) + "\\n")
    return {"ref": "D-1"}
"""


def test_cli_run_waits_approve_then_resume_calls_once(tmp_path) -> None:
    (tmp_path / "defs.ttl").write_text(definitions(APPROVAL), encoding="utf-8")
    (tmp_path / "world.ttl").write_text(WORLD, encoding="utf-8")
    (tmp_path / "ward.py").write_text(TOOLS, encoding="utf-8")
    first = horismos(tmp_path, "run", "defs.ttl", "--world", "world.ttl", "--tools", "ward",
                     "--focus", ":p1", "--out", "after.trig")
    out = first.stdout + first.stderr
    assert first.returncode == 3, out
    assert "requires approval" in out and not (tmp_path / "calls.log").exists()
    fp = out.split("Fingerprint: ")[1].split()[0]
    iid = next(w for w in out.split() if w.startswith("urn:horismos:instance:"))

    wrong = horismos(tmp_path, "approve", "defs.ttl", "--world", "after.trig", "--instance",
                     iid, "--fingerprint", "ab" * 32)
    assert wrong.returncode == 2 and "Traceback" not in wrong.stderr
    assert fp in wrong.stderr   # it lists what the instance waits for

    # without --out a world read from a file ends with the command: it said "approved",
    # and the resume that followed waited for approval again
    lost = horismos(tmp_path, "approve", "defs.ttl", "--world", "after.trig", "--instance",
                    iid, "--fingerprint", fp)
    assert lost.returncode == 2 and "Traceback" not in lost.stderr, lost.stdout + lost.stderr
    assert "approved" not in lost.stdout and "give --out F" in lost.stderr, lost.stderr

    # what `tools approve` prints (the fingerprint, a dot, a one-time id) reads as it
    ok = horismos(tmp_path, "approve", "defs.ttl", "--world", "after.trig", "--instance", iid,
                  "--fingerprint", f"{fp}.0123456789abcdef", "--out", "approved.trig")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert '"queue": "http://example.org/clinic#urgent"' in ok.stdout
    # without --out the approval's use would be kept nowhere, and a resume from
    # approved.trig again called again: refused, nothing called
    lost = horismos(tmp_path, "resume", "defs.ttl", "--world", "approved.trig", "--tools",
                    "ward", "--instance", iid)
    assert lost.returncode == 2 and "kept nowhere" in lost.stderr, lost.stdout + lost.stderr
    assert "--out F" in lost.stderr and not (tmp_path / "calls.log").exists()
    done = horismos(tmp_path, "resume", "defs.ttl", "--world", "approved.trig", "--tools",
                    "ward", "--instance", iid, "--out", "done.trig")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "calls.log").read_text().count("\n") == 1


def test_cli_run_again_on_a_focus_waiting_for_approval_says_to_resume(tmp_path) -> None:
    """On a store that outlives the run, running the same focus again while its instance
    waits for approval drove no instance, and the command line ended in an IndexError's
    traceback; it says which instance waits and how to go on, and calls nothing."""
    (tmp_path / "defs.ttl").write_text(definitions(APPROVAL), encoding="utf-8")
    (tmp_path / "world.ttl").write_text(WORLD, encoding="utf-8")
    (tmp_path / "ward.py").write_text(TOOLS, encoding="utf-8")
    args = ("run", "defs.ttl", "--store", "oxigraph:store", "--tools", "ward", "--focus", ":p1")
    horismos_load(tmp_path, "oxigraph:store", "world.ttl")
    first = horismos(tmp_path, *args)
    assert first.returncode == 3, first.stdout + first.stderr
    iid = next(w for w in first.stdout.split() if w.startswith("urn:horismos:instance:"))
    again = horismos(tmp_path, *args)
    assert again.returncode == 2, again.stdout + again.stderr
    said = [line for line in again.stderr.splitlines() if ": warning: " not in line]
    assert "Traceback" not in again.stderr and len(said) == 1, again.stderr
    assert f"has an instance waiting at :Go ({iid})" in again.stderr
    assert f"resume … --instance {iid}" in again.stderr
    assert not (tmp_path / "calls.log").exists()


def test_cli_policy_blocks_exit_4_and_allow_widens_it(tmp_path) -> None:
    (tmp_path / "defs.ttl").write_text(definitions(EXTERNAL), encoding="utf-8")
    (tmp_path / "world.ttl").write_text(WORLD, encoding="utf-8")
    (tmp_path / "ward.py").write_text(TOOLS, encoding="utf-8")
    args = ("run", "defs.ttl", "--world", "world.ttl", "--tools", "ward", "--focus", ":p1")
    blocked = horismos(tmp_path, *args)
    out = blocked.stdout + blocked.stderr
    assert blocked.returncode == 4, out
    assert "ExternalCommit, which the policy does not allow" in out and "Traceback" not in out
    assert not (tmp_path / "calls.log").exists()
    allowed = horismos(tmp_path, *args, "--allow", "ReadOnly,HostStateWrite,ExternalCommit")
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr


def test_instance_state_holds_the_request(tmp_path) -> None:
    agent, world, _ = setup(tmp_path, APPROVAL)
    run = agent.run(world, focus=EX.p1)
    assert (run.instance, HORIS.status, HORIS.Waiting) in world.graph
    assert (run.instance, HORIS.currentStep, EX.Go) in world.graph


def looping_back(tmp_path: Path) -> tuple[Agent, World, list[dict[str, Any]]]:
    """The approval workflow with its step looping back to itself: a spare approval would
    let it call again."""
    agent, world, calls = setup(tmp_path, APPROVAL)
    (tmp_path / "defs.ttl").write_text(definitions(APPROVAL).replace(
        'horis:bind [ horis:arg "patient" ; horis:var "this" ] .',
        'horis:bind [ horis:arg "patient" ; horis:var "this" ] ; horis:next :Go .'),
        encoding="utf-8")
    return Agent.from_files(tmp_path / "defs.ttl", tools=agent.tools), world, calls


def test_an_approval_is_used_up_by_its_call_so_a_loop_back_waits_again(tmp_path) -> None:
    """A person approves one call: a workflow that loops back to the step with the same
    payload waits for a new approval instead of calling again on the old one."""
    agent, world, calls = looping_back(tmp_path)
    run = agent.run(world, focus=EX.p1)
    fp = run.brief.split("Fingerprint: ")[1].split()[0]
    agent.approve(world, run.instance, fp)
    again = agent.resume(world, run.instance, trace=tmp_path / "loop.jsonl")
    assert len(calls) == 1  # the approved call, once
    assert again.status == "waiting" and f"Fingerprint: {fp}" in (again.brief or "")
    assert replay(tmp_path / "loop.jsonl", agent).diverged is False
    agent.approve(world, run.instance, fp)  # approved again: one more call, then it waits
    assert agent.resume(world, run.instance).status == "waiting" and len(calls) == 2


def test_two_approvals_of_the_one_call_asked_given_at_once_keep_one(
    tmp_path, monkeypatch
) -> None:
    """Two operators (two processes on one store) approve the one call an instance waits for
    at the same moment: each read that none was given yet, both landed, and the spare one let
    the workflow, looping back to the step, call a second time with nobody asked."""
    agent, world, calls = looping_back(tmp_path)
    run = agent.run(world, focus=EX.p1)
    fp = run.brief.split("Fingerprint: ")[1].split()[0]
    commit = World.commit

    def racing(self: World, change: Change, *args: Any, **kwargs: Any) -> Any:
        monkeypatch.setattr(World, "commit", commit)
        agent.approve(world, run.instance, fp)  # the other one, between this check and commit
        return commit(self, change, *args, **kwargs)

    monkeypatch.setattr(World, "commit", racing)
    with pytest.raises(UsageError, match="recorded while this one was"):
        agent.approve(world, run.instance, fp)
    again = agent.resume(world, run.instance)
    assert again.status == "waiting" and len(calls) == 1  # the loop back asks again


CHARGES = PREFIXES + """
:t.charge a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ;
                  horis:arg [ horis:name "amount" ; horis:type xsd:decimal ] ] ;
    horis:binding "python:charge" ; horis:requiresApproval true ; horis:idempotent false .
:Bill a horis:Workflow ; horis:focusType :Patient ; horis:start :Go .
:Go a horis:ActionStep ; horis:tool :t.charge ; horis:forEach true ;
    horis:requires "?this :owes ?bill . ?bill :amount ?amount ." ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""


@pytest.mark.parametrize(("first", "second", "shown"), [
    # beyond a float's digits: the brief shows each exact amount, each with its own fingerprint
    ("100.000000000000001", "100.000000000000002", '"amount":"100.000000000000001"'),
    # one payload twice (an integer and a decimal of one value): one approval, one call
    ("12", "12.0", "(2 calls of this payload: approve it 2 times)"),
])
def test_an_approval_is_good_for_one_call_of_the_exact_amount_shown(
    tmp_path, first: str, second: str, shown: str
) -> None:
    agent, world, calls = _charging(tmp_path, first, second)
    run = agent.run(world, focus=EX.p1)
    assert run.status == "waiting" and shown in (run.brief or "")
    fps = [line.split()[1] for line in (run.brief or "").splitlines()
           if line.startswith("Fingerprint: ")]
    assert len(fps) == (1 if Decimal(first) == Decimal(second) else 2)
    agent.approve(world, run.instance, fps[0])
    again = agent.resume(world, run.instance)
    assert again.status == "waiting" and calls == []  # the other call is not approved
    agent.approve(world, run.instance, fps[-1])
    assert agent.resume(world, run.instance).status == "completed"
    assert len(calls) == 2 and {Decimal(a) for a in calls} == {Decimal(first), Decimal(second)}


def _charging(tmp_path: Path, first: str, second: str) -> tuple[Agent, World, list[Any]]:
    """The forEach charging each bill a patient owes, two bills of ``first`` and ``second``,
    and the amounts its tool was called with."""
    calls: list[Any] = []

    def charge(patient: Any, amount: Any) -> dict[str, Any]:
        calls.append(amount)
        return {}

    (tmp_path / "defs.ttl").write_text(CHARGES, encoding="utf-8")
    (tmp_path / "world.ttl").write_text(
        PREFIXES + f":p1 a :Patient ; :owes :b1, :b2 .\n:b1 :amount {first} .\n"
        f":b2 :amount {second} .\n", encoding="utf-8")
    agent = Agent.from_files(tmp_path / "defs.ttl", tools={"charge": charge})
    return agent, World.from_files(tmp_path / "world.ttl"), calls


def _twice_charged(tmp_path: Path) -> tuple[Agent, World, list[Any]]:
    """A forEach whose two calls send one payload (``12`` and ``12.0``), waiting."""
    return _charging(tmp_path, "12", "12.0")


def test_approve_counts_the_calls_asked_from_the_request_not_from_its_brief_wording(
    tmp_path, monkeypatch
) -> None:
    """The brief is prose for a person: reworded or translated, ``approve`` read one approval
    where a forEach asked for two, and refused the second an operator was told to give."""
    monkeypatch.setattr(
        "horismos._policy._TIMES", "({n} appels de ce contenu : approuvez-le {n} fois)")
    agent, world, calls = _twice_charged(tmp_path)
    run = agent.run(world, focus=EX.p1)
    assert run.status == "waiting" and "(2 appels de ce contenu" in (run.brief or "")
    fp = run.brief.split("Fingerprint: ")[1].split()[0]
    agent.approve(world, run.instance, fp)
    agent.approve(world, run.instance, fp)  # the second of the two calls asked
    with pytest.raises(UsageError, match="approved already"):
        agent.approve(world, run.instance, fp)  # a third would let a third call out
    assert agent.resume(world, run.instance).status == "completed" and len(calls) == 2


def test_a_request_that_recorded_no_count_asks_for_one_approval_at_a_time(tmp_path) -> None:
    """A request kept by an earlier version has only its brief to say how many calls it asks
    for: counted as one, never more than it needs; resumed, the instance asks again for the
    call still lacking one, counted this time."""
    agent, world, calls = _twice_charged(tmp_path)
    run = agent.run(world, focus=EX.p1)
    fp = run.brief.split("Fingerprint: ")[1].split()[0]
    counts = [q for q in world.store.quads() if q[1] == HORIS.approvalsAsked]
    assert [json.loads(str(q[2])) for q in counts] == [{fp: 2}]
    world.commit(Change(remove=counts))  # as an earlier version wrote it
    agent.approve(world, run.instance, fp)
    with pytest.raises(UsageError, match="approved already"):
        agent.approve(world, run.instance, fp)
    again = agent.resume(world, run.instance)
    assert again.status == "waiting" and calls == []
    agent.approve(world, run.instance, fp)
    assert agent.resume(world, run.instance).status == "completed" and len(calls) == 2


@pytest.mark.parametrize("flags", [
    APPROVAL + "; horis:idempotent true",  # its approval was for the call it was given for
    EXTERNAL + "; horis:idempotent true",  # the run allowed it; whoever replays did not
])
def test_a_replay_re_executing_idempotent_tools_leaves_approved_and_external_ones_recorded(
    tmp_path, flags: str
) -> None:
    agent, world, calls = setup(tmp_path, flags)
    allow = ["ReadOnly", "HostStateWrite", "ExternalCommit"]
    run = agent.run(world, focus=EX.p1, trace=tmp_path / "run.jsonl", allow=allow)
    trace = tmp_path / "run.jsonl"
    if run.status == "waiting":
        agent.approve(world, run.instance, run.brief.split("Fingerprint: ")[1].split()[0])
        trace = tmp_path / "resume.jsonl"
        run = agent.resume(world, run.instance, trace=trace, allow=allow)
    assert run.status == "completed" and len(calls) == 1
    report = replay(trace, agent, reexecute_idempotent=True)
    assert report.diverged is False and report.reexecuted == 0 and len(calls) == 1
    # an idempotent tool inside the default policy is called again, as asked
    (tmp_path / "defs.ttl").write_text(definitions("; horis:idempotent true"), encoding="utf-8")
    plain = Agent.from_files(tmp_path / "defs.ttl", tools=agent.tools)
    ran = plain.run(World.from_files(tmp_path / "world.ttl"), focus=EX.p1,
                    trace=tmp_path / "plain.jsonl")
    assert ran.status == "completed" and len(calls) == 2
    again = replay(tmp_path / "plain.jsonl", plain, reexecute_idempotent=True)
    assert again.reexecuted == 1 and len(calls) == 3  # (its answer differs: D-3, not D-2)


def test_an_approval_holds_only_for_the_tool_as_it_was_defined(tmp_path) -> None:
    """Approved while ``t.discharge`` was bound to a dry run; the definitions then bind it to
    what acts. Resumed on the old approval, it called the new function."""
    agent, world, calls = setup(tmp_path, APPROVAL)
    acted: list[Any] = []

    def discharge_for_real(**kw: Any) -> dict[str, Any]:
        acted.append(kw)
        return {"ref": "REAL"}

    run = agent.run(world, focus=EX.p1)
    fp = run.brief.split("Fingerprint: ")[1].split()[0]
    agent.approve(world, run.instance, fp)
    (tmp_path / "defs.ttl").write_text(definitions(APPROVAL).replace(
        '"python:discharge"', '"python:discharge_for_real"'), encoding="utf-8")
    rebound = Agent.from_files(tmp_path / "defs.ttl",
                               tools={"discharge_for_real": discharge_for_real})
    again = rebound.resume(world, run.instance, trace=tmp_path / "stale.jsonl")
    assert again.status == "waiting" and acted == [] and calls == []
    assert "approval was given for an earlier definition of t.discharge" in (again.brief or "")
    assert f"Fingerprint: {fp}" in (again.brief or "")  # the payload's, as documented
    assert replay(tmp_path / "stale.jsonl", rebound).diverged is False
    rebound.approve(world, run.instance, fp)  # approved for what it does now
    done = rebound.resume(world, run.instance, trace=tmp_path / "done.jsonl")
    assert done.status == "completed" and len(acted) == 1 and calls == []
    assert replay(tmp_path / "done.jsonl", rebound).diverged is False


def test_an_approval_is_of_the_tool_as_the_request_showed_it(tmp_path) -> None:
    """The instance asked for approval of ``t.discharge`` bound to a dry run; approving it
    with definitions that bind it to what acts recorded the approval for the rebound tool, so
    a resume with those called it on an approval of a request for something else."""
    agent, world, calls = setup(tmp_path, APPROVAL)
    run = agent.run(world, focus=EX.p1)
    fp = run.brief.split("Fingerprint: ")[1].split()[0]
    (tmp_path / "defs.ttl").write_text(definitions(APPROVAL).replace(
        '"python:discharge"', '"python:discharge_for_real"'), encoding="utf-8")
    rebound = Agent.from_files(tmp_path / "defs.ttl",
                               tools={"discharge_for_real": lambda **kw: {"ref": "REAL"}})
    before = world.digest()
    with pytest.raises(UsageError, match=r"defined differently .* than when instance"):
        rebound.approve(world, run.instance, fp)
    assert world.digest() == before  # nothing recorded
    agent.approve(world, run.instance, fp)  # with the definitions it asked with
    done = agent.resume(world, run.instance)
    assert done.status == "completed" and len(calls) == 1


BANK = """\
import sys
from pathlib import Path
from mcp.server.mcpserver import MCPServer

server = MCPServer("bank")


@server.tool()
def charge(patient: str, queue: str) -> dict:
    with open(Path(__file__).with_name("ledger.txt"), "a") as f:
        f.write(f"{sys.argv[1]} {patient}\\n")
    return {"ref": sys.argv[1]}


server.run()
"""


def test_an_approval_holds_only_for_the_mcp_server_it_was_given_for(tmp_path) -> None:
    """Approved while the ``bank`` server was the sandbox; the definitions then start the
    production server under the same name. The binding ``mcp://bank/charge`` had not changed,
    so the resumed step charged production on the sandbox's approval."""
    (tmp_path / "bank.py").write_text(BANK, encoding="utf-8")

    def defs(server: str) -> str:
        return definitions(APPROVAL).replace('"python:discharge"', '"mcp://bank/charge"') + (
            f':bank a horis:McpServer ; horis:command "{Path(sys.executable).as_posix()}" ; '
            f'horis:args ( "{(tmp_path / "bank.py").as_posix()}" "{server}" ) .\n')

    (tmp_path / "defs.ttl").write_text(defs("sandbox"), encoding="utf-8")
    (tmp_path / "world.ttl").write_text(WORLD, encoding="utf-8")
    world = World.from_files(tmp_path / "world.ttl")
    run = Agent.from_files(tmp_path / "defs.ttl").run(world, focus=EX.p1)
    assert run.status == "waiting"
    fp = run.brief.split("Fingerprint: ")[1].split()[0]
    Agent.from_files(tmp_path / "defs.ttl").approve(world, run.instance, fp)

    (tmp_path / "defs.ttl").write_text(defs("production"), encoding="utf-8")
    rebound = Agent.from_files(tmp_path / "defs.ttl")
    again = rebound.resume(world, run.instance)
    assert again.status == "waiting", (tmp_path / "ledger.txt").read_text()
    assert "approval was given for an earlier definition of t.discharge" in (again.brief or "")
    assert not (tmp_path / "ledger.txt").exists()  # production was not charged

    rebound.approve(world, run.instance, fp)  # approved for production this time
    assert rebound.resume(world, run.instance).status == "completed"
    assert (tmp_path / "ledger.txt").read_text().splitlines() == [f"production {EX.p1}"]


def test_approving_in_a_world_with_no_instances_says_there_is_none_to_approve(tmp_path) -> None:
    """It said there was none "to resume": the words of another command."""
    agent, _, _ = setup(tmp_path, APPROVAL)
    with pytest.raises(UsageError, match="holds no workflow instances, so there is none to "
                       "approve; give the world the run committed to"):
        agent.approve(World(), "9b1c2c5e", "0" * 64)


MANY_ASSERTS = PREFIXES + """
:t.settle a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ;
                  horis:arg [ horis:name "queue" ; horis:type :AcuityLevel ] ;
                  horis:arg [ horis:name "note" ; horis:type xsd:string ; horis:optional true ] ;
                  horis:arg [ horis:name "tier" ; horis:type xsd:integer ; horis:optional true ] ] ;
    horis:effect [ horis:subject "patient" ;
                   horis:asserts [ horis:property :ref ; horis:type xsd:string ] ;
                   horis:asserts [ horis:property :settledAt ; horis:value horis:now ] ;
                   horis:asserts [ horis:property :memo ; horis:type xsd:string ;
                                   horis:optional true ] ;
                   horis:asserts [ horis:property :code ; horis:type xsd:string ;
                                   horis:optional true ] ;
                   horis:asserts [ horis:property :batch ; horis:type xsd:integer ;
                                   horis:optional true ] ] ;
    horis:binding "python:discharge" ; horis:requiresApproval true .
"""

_DESCRIBE = """\
import sys
from horismos import Agent
from horismos._policy import implementation
agent = Agent.from_files(sys.argv[1])
tool = next(iter(agent.definitions.tools.values()))
print(implementation(tool), [a.name for a in tool.args],
      [str(a.property).rsplit("#")[-1] for a in tool.effect.asserts])
"""


def test_a_tool_is_described_alike_in_every_process(tmp_path) -> None:
    """An approval records how its tool is defined (``implementation``), and the process that
    honours it recomputes that. An effect's assertions and a tool's arguments came out of the
    Turtle in another order in each process (rdflib's order of blank nodes), so ``approve``
    refused, or ``resume`` set aside, an approval about half the time. Now each process reads
    them in the order they are written."""
    (tmp_path / "defs.ttl").write_text(MANY_ASSERTS, encoding="utf-8")
    seen = {
        subprocess.run([sys.executable, "-c", _DESCRIBE, "defs.ttl"], cwd=tmp_path,
                       capture_output=True, text=True, check=True, timeout=60).stdout
        for _ in range(4)
    }
    assert len(seen) == 1, seen
    assert "['patient', 'queue', 'note', 'tier'] ['ref', 'settledAt', 'memo', 'code', 'batch']" \
        in seen.pop()


def test_an_approval_outlives_the_effect_written_in_another_order(tmp_path) -> None:
    """Which order a tool's assertions are written in says nothing of what it does: a file
    rearranged keeps the approvals given for it."""
    from horismos._policy import implementation

    first = "horis:asserts [ horis:property :ref ; horis:type xsd:string ] ;"
    assert MANY_ASSERTS.count(first) == 1
    last = "horis:optional true ] ] ;\n    horis:binding"  # the effect's last assertion
    assert MANY_ASSERTS.count(last) == 1
    moved = MANY_ASSERTS.replace(first, "").replace(
        last, "horis:optional true ] ;\n" + first[:-2] + " ] ;\n    horis:binding")
    digests = []
    for name, text in (("a.ttl", MANY_ASSERTS), ("b.ttl", moved)):
        (tmp_path / name).write_text(text, encoding="utf-8")
        tool = next(iter(Agent.from_files(tmp_path / name).definitions.tools.values()))
        digests.append((implementation(tool), [str(a.property) for a in tool.effect.asserts]))
    assert digests[0][1] != digests[1][1]  # written in another order, read in it
    assert digests[0][0] == digests[1][0]


def test_an_approval_is_given_only_to_a_call_that_waits_for_it(tmp_path) -> None:
    """``approve`` run twice (a double click, a script run again) recorded two approvals of one
    call, and one run after the instance had gone on recorded an approval nobody waited for:
    either lay unused until the workflow came back to the step, and that call went out with
    nobody asked. An approval is of the call a waiting instance asks for, once."""
    agent, world, calls = setup(tmp_path, APPROVAL)
    (tmp_path / "defs.ttl").write_text(definitions(APPROVAL).replace(
        'horis:bind [ horis:arg "patient" ; horis:var "this" ] .',
        'horis:bind [ horis:arg "patient" ; horis:var "this" ] ; horis:next :Check .') + """
:Check a horis:WaitStep ; horis:reason "Check the discharge" ; horis:wake horis:OperatorInput ;
    horis:delivery horis:Final ; horis:until "?this :checked true ." ; horis:next :Go .
""", encoding="utf-8")
    agent = Agent.from_files(tmp_path / "defs.ttl", tools=agent.tools)
    run = agent.run(world, focus=EX.p1)
    fp = run.brief.split("Fingerprint: ")[1].split()[0]
    agent.approve(world, run.instance, fp)
    with pytest.raises(UsageError, match=r"approved already .* resume the instance"):
        agent.approve(world, run.instance, fp)
    checking = agent.resume(world, run.instance)
    assert len(calls) == 1 and checking.status == "waiting" and checking.steps[-1].step == EX.Check
    with pytest.raises(UsageError, match="not waiting for approval now"):
        agent.approve(world, run.instance, fp)  # it waits at :Check, not for an approval
    back = agent.resume(world, run.instance, facts=PREFIXES + ":p1 :checked true .")
    assert back.status == "waiting" and f"Fingerprint: {fp}" in (back.brief or "")
    assert len(calls) == 1  # back at :Go, it asked again rather than calling
    agent.approve(world, run.instance, fp)  # asked again: approved again, one more call
    assert agent.resume(world, run.instance).status == "waiting" and len(calls) == 2


def test_a_cli_approve_given_twice_is_refused_and_records_nothing(tmp_path) -> None:
    (tmp_path / "defs.ttl").write_text(definitions(APPROVAL), encoding="utf-8")
    (tmp_path / "world.ttl").write_text(WORLD, encoding="utf-8")
    (tmp_path / "tools.py").write_text("def discharge(patient, queue):\n    return {'ref': 'D'}\n")
    store = ["--store", "oxigraph:store"]
    loaded = horismos_forked(tmp_path, "load", "world.ttl", *store, timeout=120)
    assert loaded.returncode == 0, loaded.stderr
    ran = horismos_forked(tmp_path, "run", "defs.ttl", *store, "--tools", "tools.py", "--focus",
                          ":p1", timeout=120)
    assert ran.returncode == 3, ran.stdout + ran.stderr
    iid = ran.stdout.split("Instance ")[1].split()[0]
    fp = ran.stdout.split("Fingerprint: ")[1].split()[0]
    approve = ["approve", "defs.ttl", *store, "--instance", iid, "--fingerprint", fp]
    assert horismos_forked(tmp_path, *approve, timeout=120).returncode == 0
    again = horismos_forked(tmp_path, *approve, timeout=120)
    assert again.returncode == 2 and "approved already" in again.stderr, again.stderr


def test_cli_wake_holds_a_step_after_a_wait_to_the_policy_and_refuses_a_misspelt_one(
        tmp_path) -> None:
    """``wake`` resumes due waits for cron: the step after one is held to ``--allow`` as a
    run's is. A misspelt class was read by each resume, so every due wait was "skipped" as if
    another process had it and the command exited 0 having woken nothing: it is exit 2
    naming the class meant, before any wait is touched."""
    (tmp_path / "defs.ttl").write_text(PREFIXES + """
:ref a owl:DatatypeProperty .
:t.bill a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:subject "patient" ;
                   horis:asserts [ horis:property :ref ; horis:type xsd:string ] ] ;
    horis:sideEffect horis:ExternalCommit ; horis:binding "python:bill" .
:Billing a horis:Workflow ; horis:focusType :Patient ; horis:start :Hold .
:Hold a horis:WaitStep ; horis:reason "let the day close" ; horis:wake horis:Timer ;
    horis:delivery horis:Silent ; horis:timeout "1ms" ; horis:next :Bill .
:Bill a horis:ActionStep ; horis:tool :t.bill ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
""", encoding="utf-8")
    (tmp_path / "world.ttl").write_text(WORLD, encoding="utf-8")
    (tmp_path / "ward.py").write_text(
        'def bill(patient):\n    open("calls.log", "a").write(patient + "\\n")\n'
        '    return {"ref": "B-1"}\n', encoding="utf-8")
    store = ("--store", "oxigraph:store")
    horismos_load(tmp_path, store[1], "world.ttl")
    waits = horismos(tmp_path, "run", "defs.ttl", *store, "--tools", "ward", "--focus", ":p1")
    assert waits.returncode == 3, waits.stdout + waits.stderr
    wake = ("wake", "defs.ttl", *store, "--tools", "ward")

    typo = horismos(tmp_path, *wake, "--allow", "ReadOnly,HostStateWrite,ExternalComit")
    assert typo.returncode == 2, typo.stdout + typo.stderr
    assert "did you mean ExternalCommit?" in typo.stderr and "Traceback" not in typo.stderr
    assert "skipped" not in typo.stderr and not (tmp_path / "calls.log").exists()

    held = horismos(tmp_path, *wake)
    said = held.stdout + held.stderr
    assert held.returncode == 4, said  # blocked, as run and resume exit for it (it was 0)
    assert "t.bill has side effect ExternalCommit, which the policy does not allow" in said
    assert "--allow ExternalCommit,HostStateWrite,ReadOnly" in said
    assert not (tmp_path / "calls.log").exists()
    listed = horismos(tmp_path, "instances", "defs.ttl", *store, "--format", "json")
    assert [i["status"] for i in json.loads(listed.stdout)] == ["blocked"]


def test_cli_resume_holds_the_approved_call_to_its_own_policy_and_keeps_the_approval(
        tmp_path) -> None:
    """The policy is the resuming command's, not the run's: an instance that asked for
    approval under ``--allow …ExternalCommit`` and was approved is blocked by a ``resume``
    without it, calling nothing. The approval is not spent on a call never made: the run
    that continues the blocked instance with the policy widened makes the call, once."""
    (tmp_path / "defs.ttl").write_text(definitions(APPROVAL + EXTERNAL), encoding="utf-8")
    (tmp_path / "world.ttl").write_text(WORLD, encoding="utf-8")
    (tmp_path / "ward.py").write_text(TOOLS, encoding="utf-8")
    store = ("--store", "oxigraph:store")
    wide = ("--allow", "ReadOnly,HostStateWrite,ExternalCommit")
    horismos_load(tmp_path, store[1], "world.ttl")
    asked = horismos(tmp_path, "run", "defs.ttl", *store, "--tools", "ward", "--focus", ":p1",
                     *wide)
    assert asked.returncode == 3, asked.stdout + asked.stderr
    fp = asked.stdout.split("Fingerprint: ")[1].split()[0]
    iid = next(w for w in asked.stdout.split() if w.startswith("urn:horismos:instance:"))
    approved = horismos(tmp_path, "approve", "defs.ttl", *store, "--instance", iid,
                        "--fingerprint", fp)
    assert approved.returncode == 0, approved.stdout + approved.stderr

    narrow = horismos(tmp_path, "resume", "defs.ttl", *store, "--tools", "ward",
                      "--instance", iid)
    said = narrow.stdout + narrow.stderr
    assert narrow.returncode == 4, said
    assert "t.discharge has side effect ExternalCommit, which the policy does not allow" in said
    assert "Traceback" not in said and not (tmp_path / "calls.log").exists()

    went_on = horismos(tmp_path, "run", "defs.ttl", *store, "--tools", "ward", "--focus", ":p1",
                       *wide)
    assert went_on.returncode == 0, went_on.stdout + went_on.stderr
    assert (tmp_path / "calls.log").read_text().count("\n") == 1


def test_an_approval_given_without_the_tools_definition_is_of_the_tool_as_asked(
        tmp_path) -> None:
    """``horismos approve`` given definitions that do not define the tool (the workflow's
    ontology without its tools file) recorded the approval for no definition of it, so it
    held for any: a resume with ``t.discharge`` rebound to other code called that code. It
    is now the approval of the tool as the request showed it: the rebound tool asks again."""
    (tmp_path / "defs.ttl").write_text(definitions(APPROVAL), encoding="utf-8")
    (tmp_path / "bare.ttl").write_text(PREFIXES, encoding="utf-8")  # the tool not defined
    (tmp_path / "rebound.ttl").write_text(definitions(APPROVAL).replace(
        '"python:discharge"', '"python:discharge_for_real"'), encoding="utf-8")
    (tmp_path / "world.ttl").write_text(WORLD, encoding="utf-8")
    (tmp_path / "tools.py").write_text(TOOLS + """
def discharge_for_real(patient, queue):
    with open("real.log", "a") as f:
        f.write(patient + "\\n")
    return {"ref": "REAL"}
""", encoding="utf-8")
    store = ("--store", f"oxigraph:{tmp_path / 'S'}")
    assert horismos(tmp_path, "load", "world.ttl", *store).returncode == 0
    ran = horismos(tmp_path, "run", "defs.ttl", *store, "--tools", "tools.py",
                   "--focus", ":p1")
    assert ran.returncode == 3, ran.stdout + ran.stderr
    fp = ran.stdout.split("Fingerprint: ")[1].split()[0]
    instance = ran.stdout.split("Instance ")[1].split()[0]
    approved = horismos(tmp_path, "approve", "bare.ttl", *store, "--instance", instance,
                        "--fingerprint", fp)
    assert approved.returncode == 0, approved.stdout + approved.stderr
    resumed = horismos(tmp_path, "resume", "rebound.ttl", *store, "--tools", "tools.py",
                       "--instance", instance)
    assert resumed.returncode == 3, resumed.stdout + resumed.stderr  # asks again
    assert "approval was given for an earlier definition of t.discharge" in resumed.stdout
    assert not (tmp_path / "real.log").exists() and not (tmp_path / "calls.log").exists()
    resumed = horismos(tmp_path, "resume", "defs.ttl", *store, "--tools", "tools.py",
                       "--instance", instance)  # the tool as approved: called, once
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert len((tmp_path / "calls.log").read_text().splitlines()) == 1


DUES = PREFIXES + """
:due a owl:DatatypeProperty .
:go a owl:DatatypeProperty .
:t.pay a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ;
                  horis:arg [ horis:name "amount" ; horis:type xsd:decimal ] ] ;
    horis:binding "python:pay" ; horis:sideEffect horis:HostStateWrite ;
    horis:requiresApproval true ; horis:idempotent false .
:Dues a horis:Workflow ; horis:focusType :Patient ; horis:start :Pay .
:Pay a horis:ActionStep ; horis:tool :t.pay ; horis:forEach true ;
    horis:requires "?this :due ?amount ." ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
:Ask a horis:Workflow ; horis:focusType :Patient ; horis:start :Wait .
:Wait a horis:WaitStep ; horis:reason "go?" ; horis:wake horis:OperatorInput ;
    horis:delivery horis:Final ; horis:until "?this :go ?x ." .
"""


def test_one_approval_is_one_call_however_many_graphs_name_it(tmp_path) -> None:
    """A forEach paying 12 and 12.0 asks for two approvals of the one payload. One was given;
    then a person answering another instance's wait added, among its facts, ``<g>
    prov:wasGeneratedBy <that approval>``: the approval had a second graph, was counted twice,
    and the resume paid twice on it. Facts naming a runtime node are refused now, and an
    approval counts once however the store came to say so (here an operator's ``load``)."""
    (tmp_path / "defs.ttl").write_text(DUES, encoding="utf-8")
    (tmp_path / "world.ttl").write_text(
        PREFIXES + ":p1 a :Patient ; :due 12, 12.0 .\n:p2 a :Patient .\n", encoding="utf-8")
    (tmp_path / "tools.py").write_text(
        'def pay(patient, amount):\n    open("calls.log", "a").write(f"{amount}\\n")\n'
        "    return {}\n", encoding="utf-8")
    store = ("--store", f"oxigraph:{tmp_path / 'S'}")
    tools = ("defs.ttl", "--tools", "tools.py", *store)
    assert horismos(tmp_path, "load", "world.ttl", *store).returncode == 0
    dues = horismos(tmp_path, "run", *tools, "--workflow", ":Dues", "--focus", ":p1")
    assert dues.returncode == 3 and "(2 calls of this payload" in dues.stdout, dues.stdout
    fp = dues.stdout.split("Fingerprint: ")[1].split()[0]
    paying = dues.stdout.split("Instance ")[1].split()[0]
    asked = horismos(tmp_path, "run", *tools, "--workflow", ":Ask", "--focus", ":p2", "-q")
    assert asked.returncode == 3, asked.stdout + asked.stderr
    listed = json.loads(horismos(tmp_path, "instances", *store, "--format", "json").stdout)
    (waiting,) = [i["instance"] for i in listed if i["instance"] != paying]
    approved = horismos(tmp_path, "approve", "defs.ttl", *store, "--instance", paying,
                        "--fingerprint", fp)
    assert approved.returncode == 0, approved.stdout + approved.stderr
    with World.open(store[1], create=False) as world:
        (approval,) = set(world.graph.subjects(RDF.type, HORIS.Approval))
    pointer = f"<urn:x:g> <http://www.w3.org/ns/prov#wasGeneratedBy> <{approval}> ."
    answered = horismos(tmp_path, "resume", *tools, "--instance", waiting, "--facts",
                        f":p2 :go true . {pointer}")
    assert answered.returncode == 2, answered.stdout + answered.stderr
    assert "runtime state" in answered.stderr
    (tmp_path / "pointer.nt").write_text(pointer + "\n", encoding="utf-8")
    assert horismos(tmp_path, "load", "pointer.nt", *store).returncode == 0
    resumed = horismos(tmp_path, "resume", *tools, "--instance", paying)
    assert resumed.returncode == 3, resumed.stdout + resumed.stderr  # one approval of two
    assert not (tmp_path / "calls.log").exists()
    again = horismos(tmp_path, "approve", "defs.ttl", *store, "--instance", paying,
                     "--fingerprint", fp)
    assert again.returncode == 0, again.stdout + again.stderr
    resumed = horismos(tmp_path, "resume", *tools, "--instance", paying)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert len((tmp_path / "calls.log").read_text().splitlines()) == 2


def test_an_approval_holds_only_for_the_code_that_asked_for_it(tmp_path) -> None:
    """The run that asked for approval had a dry-run ``discharge`` registered; a ``resume
    --tools`` pointing at another ``tools.py`` whose ``discharge`` acts for real (the same
    name, the same definitions) ran it under that approval, for the approval bound only the
    binding's name and definition. The request now names the code that asked (module,
    function, a hash of its code and source), the approval is of that code, and other code
    waits for an approval of its own, its brief saying why."""
    (tmp_path / "defs.ttl").write_text(definitions(APPROVAL), encoding="utf-8")
    (tmp_path / "world.ttl").write_text(WORLD, encoding="utf-8")
    for folder, said in (("dry", "dry run"), ("live", "LIVE")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "tools.py").write_text(f"""
def discharge(patient, queue):
    with open("../calls.log", "a") as f:
        f.write("{said} " + patient + "\\n")
    return {{"ref": "D-1"}}
""", encoding="utf-8")
    store = ("--store", f"oxigraph:{tmp_path / 'S'}")
    assert horismos(tmp_path, "load", "world.ttl", *store).returncode == 0
    dry, live = tmp_path / "dry", tmp_path / "live"
    ran = horismos(dry, "run", "../defs.ttl", *store, "--tools", "tools.py", "--focus", ":p1")
    assert ran.returncode == 3, ran.stdout + ran.stderr
    assert "Code: tools.discharge (sha256:" in ran.stdout
    fp = ran.stdout.split("Fingerprint: ")[1].split()[0]
    instance = ran.stdout.split("Instance ")[1].split()[0]
    approve = ("approve", "defs.ttl", *store, "--instance", instance, "--fingerprint", fp)
    approved = horismos(tmp_path, *approve)
    assert approved.returncode == 0, approved.stdout + approved.stderr
    assert "run by tools.discharge (sha256:" in approved.stdout

    resume = ("resume", "../defs.ttl", *store, "--tools", "tools.py", "--instance", instance)
    other = horismos(live, *resume)
    assert other.returncode == 3, other.stdout + other.stderr  # 0: the live code ran
    assert "An approval was given for other code behind t.discharge" in other.stdout
    assert "approve again below if this is the code to run" in other.stdout
    assert not (tmp_path / "calls.log").exists()

    asked = horismos(dry, *resume)  # the code approved: called, once
    assert asked.returncode == 0, asked.stdout + asked.stderr
    assert (tmp_path / "calls.log").read_text().splitlines() == [
        "dry run http://example.org/clinic#p1"]


def test_an_approval_of_other_code_is_given_again_for_the_code_to_run(tmp_path) -> None:
    """Once other code asks, approving the payload again approves that code, and it runs."""
    (tmp_path / "defs.ttl").write_text(definitions(APPROVAL), encoding="utf-8")
    (tmp_path / "world.ttl").write_text(WORLD, encoding="utf-8")
    (tmp_path / "tools.py").write_text(TOOLS, encoding="utf-8")
    store = ("--store", f"oxigraph:{tmp_path / 'S'}")
    assert horismos(tmp_path, "load", "world.ttl", *store).returncode == 0
    ran = horismos(tmp_path, "run", "defs.ttl", *store, "--tools", "tools.py", "--focus", ":p1")
    fp = ran.stdout.split("Fingerprint: ")[1].split()[0]
    instance = ran.stdout.split("Instance ")[1].split()[0]
    approve = ("approve", "defs.ttl", *store, "--instance", instance, "--fingerprint", fp)
    assert horismos(tmp_path, *approve).returncode == 0
    (tmp_path / "tools.py").write_text(TOOLS.replace('"D-1"', '"D-2"'), encoding="utf-8")
    resume = ("resume", "defs.ttl", *store, "--tools", "tools.py", "--instance", instance)
    edited = horismos(tmp_path, *resume)
    assert edited.returncode == 3 and "other code" in edited.stdout, edited.stdout
    again = horismos(tmp_path, *approve)
    assert again.returncode == 0, again.stdout + again.stderr
    done = horismos(tmp_path, *resume)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len((tmp_path / "calls.log").read_text().splitlines()) == 1


def test_an_approval_recorded_before_approvals_named_the_code_still_holds(tmp_path) -> None:
    """An approval an earlier version recorded names no code: it holds, as it did, for the
    code the instance resumes with (nothing says which code it was given for)."""
    agent, world, calls = setup(tmp_path, APPROVAL)
    waiting = agent.run(world, focus=":p1")
    instance = waiting.instances[0].instance
    fp = waiting.steps[0].detail["approval"]["fingerprints"][0]
    agent.approve(world, instance, fp)
    named = [(s, p, o, g) for s, p, o, g in world.store.quads() if p == HORIS.code]
    assert len(named) == 2  # the request's and the approval's
    world.commit(Change(remove=named))  # as an earlier version recorded them
    done = agent.resume(world, instance)
    assert done.status == "completed" and len(calls) == 1


def test_a_request_naming_its_code_replays_without_the_code(tmp_path) -> None:
    """The code a request names is recorded in its step event (``code``): a replay writes
    the same request, its tools not loaded, and reaches the recorded world."""
    agent, world, _ = setup(tmp_path, APPROVAL)
    trace = tmp_path / "run.jsonl"
    run = agent.run(world, focus=EX.p1, trace=trace, trace_snapshot=True)
    assert run.status == "waiting"
    [code] = steps(trace)[0]["code"]
    assert code.startswith("test_run_policy.setup.<locals>.discharge sha256:"), code
    bare = Agent.from_files(tmp_path / "defs.ttl")  # no tools: nothing to name
    report = replay(trace, bare)
    assert not report.diverged and report.final_digest_matches is True, report


RECHARGE = PREFIXES + """
:amount a owl:DatatypeProperty .
:more a owl:DatatypeProperty .
:t.charge a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ;
                  horis:arg [ horis:name "amount" ; horis:type xsd:decimal ] ] ;
    horis:binding "python:charge" ; horis:sideEffect horis:HostStateWrite ;
    horis:requiresApproval true ; horis:idempotent false .
:Bill a horis:Workflow ; horis:focusType :Patient ; horis:start :Charge ; horis:maxSteps 20 .
:Charge a horis:ActionStep ; horis:tool :t.charge ;
    horis:requires "?this :amount ?amount ." ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] ;
    horis:next :Again .
:Again a horis:WaitStep ; horis:reason "another charge?" ; horis:wake horis:OperatorInput ;
    horis:delivery horis:Final ; horis:until "?this :more ?m ." ; horis:next :Charge .
"""


def _amount(world: World, amount: int) -> None:
    """The world's amount for :p1, changed as another process or person would."""
    held = [q for q in world.store.quads() if q[0] == EX.p1 and q[1] == EX.amount]
    world.commit(Change(remove=held, add=[(EX.p1, EX.amount, Literal(amount), held[0][3])]))


def test_an_approval_never_used_lapses_when_its_step_asks_for_another_payload(
        tmp_path) -> None:
    """A charge of 100 is approved; the world changes the amount to 150 before the resume,
    which asks for 150, approved and charged; the workflow loops back and the amount is 100
    again. The first approval, never used, was taken: 100 was charged with nobody asked,
    for a request the step had superseded. It now lapses when the step asks for 150, the
    brief says so, `approve` of it says why it is refused, and the loop back waits."""
    charged: list[tuple[str, Any]] = []

    def charge(patient: str, amount: Any) -> None:
        charged.append((str(patient), amount))

    (tmp_path / "defs.ttl").write_text(RECHARGE, encoding="utf-8")
    (tmp_path / "world.ttl").write_text(PREFIXES + ":p1 a :Patient ; :amount 100 .\n",
                                        encoding="utf-8")
    agent = Agent.from_files(tmp_path / "defs.ttl", tools={"charge": charge})
    world = World.from_files(tmp_path / "world.ttl")
    first = agent.run(world, focus=":p1")
    instance = first.instances[0].instance
    hundred = first.steps[0].detail["approval"]["fingerprints"][0]
    agent.approve(world, instance, hundred)

    _amount(world, 150)
    asked = agent.resume(world, instance, trace=tmp_path / "asked.jsonl")
    assert asked.status == "waiting" and not charged
    replayed = replay(tmp_path / "asked.jsonl", agent)  # the lapse as recorded
    assert not replayed.diverged, replayed.first_divergence
    assert 'An approval given for {"amount":100,' in (asked.brief or "")
    assert "lapsed" in (asked.brief or "")
    with pytest.raises(UsageError, match="lapsed when :Charge asked for other payloads"):
        agent.approve(world, instance, hundred)
    agent.approve(world, instance, asked.steps[0].detail["approval"]["fingerprints"][0])
    paid = agent.resume(world, instance)
    assert paid.status == "waiting" and charged == [("http://example.org/clinic#p1", 150)]

    _amount(world, 100)
    back = agent.resume(world, instance, ":p1 :more true .")
    assert back.status == "waiting", back.steps  # 100 again: asked, not charged
    assert back.steps[-1].status == "waiting" and "requires approval" in (back.brief or "")
    assert charged == [("http://example.org/clinic#p1", 150)]


def test_a_for_each_approved_a_payload_at_a_time_keeps_the_approvals_it_still_sends(
        tmp_path) -> None:
    """A step that asks again for the calls still lacking one (a forEach approved one
    payload at a time) keeps the approvals of the payloads it still sends: only those of
    payloads it no longer sends lapse."""
    paid: list[Any] = []

    def pay(patient: str, amount: Any) -> None:
        paid.append(amount)

    (tmp_path / "defs.ttl").write_text(DUES, encoding="utf-8")
    (tmp_path / "world.ttl").write_text(
        PREFIXES + ":p1 a :Patient ; :due 10, 20 .\n", encoding="utf-8")
    agent = Agent.from_files(tmp_path / "defs.ttl", tools={"pay": pay})
    world = World.from_files(tmp_path / "world.ttl")
    run = agent.run(world, focus=":p1", workflow=":Dues")
    instance = run.instances[0].instance
    first, second = run.steps[0].detail["approval"]["fingerprints"]
    agent.approve(world, instance, first)
    again = agent.resume(world, instance)
    assert again.status == "waiting" and "lapsed" not in (again.brief or "")
    agent.approve(world, instance, second)
    done = agent.resume(world, instance)
    assert done.status == "completed" and sorted(paid) == [10, 20]


def test_the_same_code_is_named_alike_in_every_process(tmp_path) -> None:
    """The code an approval names is the same in the process that asked and the one that
    resumes, whatever its defaults hold: an object's repr (``<Client at 0x…>``, the time it
    was loaded, a fresh id) differs in each, and named so the code was never the one
    approved, asking again at every resume."""
    (tmp_path / "defs.ttl").write_text(definitions(APPROVAL), encoding="utf-8")
    (tmp_path / "world.ttl").write_text(WORLD, encoding="utf-8")
    (tmp_path / "tools.py").write_text("""
import datetime, uuid

class Client:
    pass

def discharge(patient, queue, client=Client(), loaded=datetime.datetime.now(),
              session=uuid.uuid4(), tags=frozenset({"a", "b", "c"})):
    with open("calls.log", "a") as f:
        f.write(patient + "\\n")
    return {"ref": "D-1"}
""", encoding="utf-8")
    store = ("--store", f"oxigraph:{tmp_path / 'S'}")
    assert horismos(tmp_path, "load", "world.ttl", *store).returncode == 0
    ran = horismos(tmp_path, "run", "defs.ttl", *store, "--tools", "tools.py", "--focus", ":p1")
    fp = ran.stdout.split("Fingerprint: ")[1].split()[0]
    instance = ran.stdout.split("Instance ")[1].split()[0]
    assert horismos(tmp_path, "approve", "defs.ttl", *store, "--instance", instance,
                    "--fingerprint", fp).returncode == 0
    done = horismos(tmp_path, "resume", "defs.ttl", *store, "--tools", "tools.py",
                    "--instance", instance)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len((tmp_path / "calls.log").read_text().splitlines()) == 1


def test_an_approval_tools_approve_issued_holds_only_for_the_code_it_was_given(
        tmp_path) -> None:
    """`tools approve --tools dry/tools.py` then `tools call --tools live/tools.py
    --approval A`: the same `python:discharge`, other code, ran under the approval. Issued
    with the code given, it names it, and a call with other code is refused
    (`approval_stale`), saying so; one issued without `--tools` holds, as it did."""
    (tmp_path / "defs.ttl").write_text(definitions(APPROVAL), encoding="utf-8")
    (tmp_path / "world.ttl").write_text(WORLD, encoding="utf-8")
    for folder, said in (("dry", "dry run"), ("live", "LIVE")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "tools.py").write_text(f"""
def discharge(patient, queue):
    with open("../calls.log", "a") as f:
        f.write("{said} " + patient + "\\n")
    return {{"ref": "D-1"}}
""", encoding="utf-8")
    store = ("--store", f"oxigraph:{tmp_path / 'S'}")
    assert horismos(tmp_path, "load", "world.ttl", *store).returncode == 0
    dry, live = tmp_path / "dry", tmp_path / "live"
    args = ("--args", '{"patient": ":p1", "queue": ":urgent"}')
    approve = ("tools", "approve", "t.discharge", "../defs.ttl", *store, *args, "--tools",
               "tools.py")
    issued = horismos(dry, *approve)
    assert issued.returncode == 0, issued.stdout + issued.stderr
    call = ("tools", "call", "t.discharge", "../defs.ttl", *store, *args, "--tools", "tools.py",
            "--approval", issued.stdout.strip())
    other = horismos(live, *call)
    assert other.returncode == 5, other.stdout + other.stderr  # 0: the live code ran
    assert "refused (approval_stale)" in other.stdout
    assert "issued for other code behind t.discharge" in other.stdout
    assert not (tmp_path / "calls.log").exists()
    done = horismos(dry, *call)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "calls.log").read_text() == "dry run http://example.org/clinic#p1\n"

    unnamed = horismos(dry, *approve[:-2])  # no --tools: no code to name
    assert unnamed.returncode == 0, unnamed.stdout + unnamed.stderr
    held = horismos(live, *call[:-1], unnamed.stdout.strip())
    assert held.returncode == 0, held.stdout + held.stderr


def test_discovery_lists_a_tool_blocked_by_an_approval_issued_for_other_code(tmp_path) -> None:
    """`tools discover --approval A` beside other code than A was issued for listed the tool
    executable, and the call it advertised was then refused (`approval_stale`). It is listed
    blocked, with the call's own reason; beside the code approved, executable."""
    (tmp_path / "defs.ttl").write_text(PREFIXES + """
:t.close a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:subject "patient" ;
                   horis:asserts [ horis:property :ref ; horis:type xsd:string ] ] ;
    horis:binding "python:close" ; horis:requiresApproval true .
""", encoding="utf-8")
    (tmp_path / "world.ttl").write_text(WORLD, encoding="utf-8")
    for folder, ref in (("dry", "DRY"), ("live", "LIVE")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "tools.py").write_text(
            f"def close(patient):\n    return {{'ref': '{ref}'}}\n", encoding="utf-8")
    store = ("--store", f"oxigraph:{tmp_path / 'S'}")
    assert horismos(tmp_path, "load", "world.ttl", *store).returncode == 0
    dry, live = tmp_path / "dry", tmp_path / "live"
    issued = horismos(dry, "tools", "approve", "t.close", "../defs.ttl", *store, "--args",
                      '{"patient": ":p1"}', "--tools", "tools.py")
    assert issued.returncode == 0, issued.stdout + issued.stderr
    discover = ("tools", "discover", "close patient", "../defs.ttl", *store, "--tools",
                "tools.py", "--focus", ":p1", "--approval", issued.stdout.strip(),
                "--include-blocked", "--format", "json")
    seen = {}
    for where in (dry, live):
        found = horismos(where, *discover)
        assert found.returncode == 0, found.stdout + found.stderr
        (seen[where.name],) = json.loads(found.stdout)
    assert seen["dry"]["availability"] == "executable", seen["dry"]
    assert seen["live"]["availability"] == "blocked", seen["live"]
    (why,) = seen["live"]["why_blocked"]
    assert why["reason"] == "approval", why
    assert "issued for other code behind t.close" in why["message"], why


def _rollback_then_post(tmp_path: Path, wait: str = "") -> int:
    """The rollback (:Go) then the ExternalCommit post (:Post), written to defs.ttl beside the
    world and the tools; ``wait``, a wait step the workflow starts at, named first in it,
    going on to :Go. The line of :Post's horis:tool."""
    defs = definitions("").replace(
        'horis:bind [ horis:arg "patient" ; horis:var "this" ] .',
        'horis:bind [ horis:arg "patient" ; horis:var "this" ] ;\n    horis:next :Post .',
    ) + """
:t.post a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:subject "patient" ;
                   horis:asserts [ horis:property :posted ; horis:type xsd:string ] ] ;
    horis:binding "python:post" ; horis:sideEffect horis:ExternalCommit .
:Post a horis:ActionStep ;
    horis:tool :t.post ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
""" + wait
    if wait:
        defs = defs.replace("horis:start :Go", f"horis:start {wait.split()[0]}")
    (tmp_path / "defs.ttl").write_text(defs, encoding="utf-8")
    (tmp_path / "world.ttl").write_text(WORLD, encoding="utf-8")
    (tmp_path / "ward.py").write_text(
        TOOLS + '\ndef post(patient):\n    return {"posted": "P-1"}\n', encoding="utf-8")
    return defs.splitlines().index("    horis:tool :t.post ;") + 1


def _left_waiting(tmp_path: Path) -> tuple[str, ...]:
    """:p1's instance run into oxigraph:store and left at its wait step; the store's and the
    tools' arguments."""
    store = ("--store", "oxigraph:store", "--tools", "ward")
    assert horismos(tmp_path, "load", "world.ttl", "--store", "oxigraph:store").returncode == 0
    waiting = horismos(tmp_path, "run", "defs.ttl", *store, "--focus", ":p1", "--quiet")
    assert waiting.returncode == 3, waiting.stdout + waiting.stderr
    return store


POST_WARNING = (
    "defs.ttl:{line}: warning: :Post: its tool :t.post is horis:ExternalCommit, which this "
    "run's policy does not allow (allowed: HostStateWrite, ReadOnly): every instance that "
    "reaches :Post stops there blocked (PolicyRefused), after the steps before it have "
    "acted — give --allow ExternalCommit,HostStateWrite,ReadOnly if it may act; a blocked "
    "instance goes on with `horismos run … --focus NODE --allow "
    "ExternalCommit,HostStateWrite,ReadOnly`"
)


def test_cli_run_says_before_its_first_step_which_step_its_policy_will_block(tmp_path) -> None:
    """A rollback, then a status-page post of horis:ExternalCommit: the default policy blocked
    the post only once the rollback had acted, and nothing said so before. The run now warns
    at the post's horis:tool line before its first step; --allow with the class quiets it."""
    line = _rollback_then_post(tmp_path)
    args = ("run", "defs.ttl", "--world", "world.ttl", "--tools", "ward", "--focus", ":p1")
    blocked = horismos(tmp_path, *args)
    assert blocked.returncode == 4 and "Traceback" not in blocked.stderr, blocked.stderr
    (warned,) = [x for x in blocked.stderr.splitlines() if "horis:ExternalCommit" in x]
    assert warned == POST_WARNING.format(line=line), blocked.stderr
    # said before the first step: the discharge, before the post, has acted since
    assert ":Go" in blocked.stdout and (tmp_path / "calls.log").exists()
    allowed = horismos(tmp_path, *args, "--allow", "ReadOnly,HostStateWrite,ExternalCommit")
    assert allowed.returncode == 0 and "ExternalCommit" not in allowed.stderr, allowed.stderr
    quiet = horismos(tmp_path, *args[:-1], ":p1", "--quiet")
    assert "horis:ExternalCommit" not in quiet.stderr, quiet.stderr


def test_cli_resume_says_before_its_first_step_which_step_its_policy_will_block(
    tmp_path: Path,
) -> None:
    """An instance waiting for a check before the rollback and the post: `resume` landed the
    answer, rolled back, and only then blocked at the post, saying nothing of --allow before
    (only `run` did). It says it as `run` does, before the steps ahead act."""
    line = _rollback_then_post(tmp_path, """
:Check a horis:WaitStep ; horis:reason "Check the discharge" ; horis:wake horis:OperatorInput ;
    horis:delivery horis:Final ; horis:until "?this :checked true ." ; horis:next :Go .
""")
    store = _left_waiting(tmp_path)
    listed = horismos(tmp_path, "instances", "--store", "oxigraph:store", "--format", "json")
    (row,) = json.loads(listed.stdout)
    resumed = horismos(tmp_path, "resume", "defs.ttl", *store, "--instance", row["instance"],
                       "--facts", ":p1 :checked true .")
    assert resumed.returncode == 4 and "Traceback" not in resumed.stderr, resumed.stderr
    assert POST_WARNING.format(line=line) in resumed.stderr.splitlines(), resumed.stderr
    quiet = horismos(tmp_path, "resume", "defs.ttl", *store, "--instance", row["instance"],
                     "--quiet")
    assert "horis:ExternalCommit" not in quiet.stderr, quiet.stderr


def test_cli_serve_run_workflow_says_as_it_starts_which_step_its_policy_will_block(
    tmp_path: Path,
) -> None:
    """`serve --run-workflow` under the default policy ran an agent's workflow to the post
    and blocked it there after the rollback; only `run` warned. It says it as it starts, in
    `run`'s words; a server that serves no run_workflow runs no step and says nothing."""
    line = _rollback_then_post(tmp_path)
    serve = ("serve", "defs.ttl", "--world", "world.ttl", "--tools", "ward")
    started = horismos_forked(tmp_path, *serve, "--run-workflow", input="", timeout=120)
    assert "Traceback" not in started.stderr, started.stderr
    assert POST_WARNING.format(line=line) in started.stderr.splitlines(), started.stderr
    plain = horismos_forked(tmp_path, *serve, input="", timeout=120)
    assert "which this run's policy" not in plain.stderr, plain.stderr


def test_cli_wake_says_before_it_goes_on_which_step_its_policy_will_block(
    tmp_path: Path,
) -> None:
    """An instance waiting on a timer before the rollback and the post: `wake` woke it,
    rolled back, and only then blocked at the post, saying nothing of --allow (only `run`
    and `resume` did). It says it as `resume` does, once, before the instance goes on."""
    line = _rollback_then_post(tmp_path, """
:Cool a horis:WaitStep ; horis:reason "Let it settle" ; horis:wake horis:Timer ;
    horis:delivery horis:Silent ; horis:timeout "1s" ; horis:next :Go .
""")
    store = _left_waiting(tmp_path)
    import time
    time.sleep(1.5)
    woken = horismos(tmp_path, "wake", "defs.ttl", *store)
    assert woken.returncode == 4 and "Traceback" not in woken.stderr, woken.stderr
    lines = woken.stderr.splitlines()
    assert lines.count(POST_WARNING.format(line=line)) == 1, woken.stderr
    assert lines.index(POST_WARNING.format(line=line)) == 0, woken.stderr  # before it acts
