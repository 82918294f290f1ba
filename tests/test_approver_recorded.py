"""An approval names who gave it.

``horismos approve`` and ``tools approve`` recorded a person's approval with human provenance
and no person: an incident reviewer asking who let a payment out read when, which payload
and which code, never who. Each now records its operator (``--operator``, ``operator=``,
else the operating system's user) as the approval's ``prov:wasAssociatedWith``, a
``prov:Person`` with a label, as ``tools reconcile`` records who cleared a doubt.
"""

from __future__ import annotations

import getpass
from pathlib import Path

from forked import horismos_forked
from test_run_policy import APPROVAL, EX, TOOLS, WORLD, definitions, setup

from horismos import World, read_trace

WHO = """
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX horis: <https://w3id.org/horismos#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
SELECT ?who WHERE { GRAPH ?g { ?a a horis:Approval ; horis:provenance horis:HumanProvenance ;
                                  prov:wasAssociatedWith ?p . ?p a prov:Person ; rdfs:label ?who } }
"""


def approvers(world: World) -> list[str]:
    return sorted(str(r["who"]) for r in world.store.select(WHO, {}, {}))


def test_an_approval_from_python_names_its_operator_and_the_run_still_calls_once(
        tmp_path: Path) -> None:
    agent, world, calls = setup(tmp_path, APPROVAL)
    run = agent.run(world, focus=EX.p1)
    assert run.status == "waiting"
    fp = agent.catalog.approve("t.discharge", {"patient": str(EX.p1), "queue": str(EX.urgent)})
    done = agent.approve(world, run.instance, fp, operator="dr. alice")
    assert done["operator"] == "dr. alice"
    assert approvers(world) == ["dr. alice"]
    assert agent.resume(world, run.instance).status == "completed" and len(calls) == 1


def test_horismos_approve_names_the_os_user_or_the_operator_given(tmp_path: Path) -> None:
    (tmp_path / "defs.ttl").write_text(definitions(APPROVAL), encoding="utf-8")
    (tmp_path / "world.ttl").write_text(WORLD, encoding="utf-8")
    (tmp_path / "ward.py").write_text(TOOLS, encoding="utf-8")
    first = horismos_forked(tmp_path, "run", "defs.ttl", "--world", "world.ttl", "--tools",
                            "ward", "--focus", ":p1", "--out", "after.trig")
    assert first.returncode == 3, first.stdout + first.stderr
    fp = first.stdout.split("Fingerprint: ")[1].split()[0]
    iid = next(w for w in first.stdout.split() if w.startswith("urn:horismos:instance:"))
    ok = horismos_forked(tmp_path, "approve", "defs.ttl", "--world", "after.trig",
                         "--instance", iid, "--fingerprint", fp, "--out", "approved.trig")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    me = getpass.getuser()
    assert f" by {me}: " in ok.stdout, ok.stdout
    assert approvers(World.from_files(tmp_path / "approved.trig")) == [me]
    # the catalog lane: an approval tools approve issues names its operator too
    issued = horismos_forked(tmp_path, "tools", "approve", "t.discharge", "defs.ttl",
                             "--args", '{"patient": ":p1", "queue": ":urgent"}', "--world",
                             "world.ttl", "--out", "issued.trig", "--operator", "bob")
    assert issued.returncode == 0, issued.stdout + issued.stderr
    assert approvers(World.from_files(tmp_path / "issued.trig")) == ["bob"]


def test_the_call_made_on_an_approval_names_its_approver_in_the_trace(tmp_path: Path) -> None:
    """The trace of a call made on approval said which fingerprint it used, never who gave
    it: a reviewer looked the fingerprint up in the world. Its step event now says who and
    when (``approved``), for a run resumed after ``approve`` and for ``tools call
    --approval`` alike."""
    agent, world, calls = setup(tmp_path, APPROVAL)
    assert calls == []
    run = agent.run(world, focus=EX.p1)
    fp = agent.catalog.approve("t.discharge", {"patient": str(EX.p1), "queue": str(EX.urgent)})
    agent.approve(world, run.instance, fp, operator="dr. alice")
    resumed = agent.resume(world, run.instance)
    assert len(calls) == 1
    (step,) = [e for e in resumed.trace.events if e["type"] == "step" and e.get("tool")]
    (given,) = step["approved"]
    assert (given["fingerprint"], given["by"]) == (fp, "dr. alice") and given["at"]
    # the catalog lane: the approval tools approve issued names its operator too
    (tmp_path / "defs.ttl").write_text(definitions(APPROVAL), encoding="utf-8")
    (tmp_path / "world.ttl").write_text(WORLD, encoding="utf-8")
    (tmp_path / "ward.py").write_text(TOOLS, encoding="utf-8")
    args = ("--args", '{"patient": ":p1", "queue": ":urgent"}')
    issued = horismos_forked(tmp_path, "tools", "approve", "t.discharge", "defs.ttl", *args,
                             "--world", "world.ttl", "--out", "issued.trig", "--operator", "bob")
    assert issued.returncode == 0, issued.stdout + issued.stderr
    approval = issued.stdout.split()[-1]
    called = horismos_forked(tmp_path, "tools", "call", "t.discharge", "defs.ttl", *args,
                             "--tools", "ward", "--world", "issued.trig", "--out", "called.trig",
                             "--approval", approval, "--trace", "call.jsonl")
    assert called.returncode == 0, called.stdout + called.stderr
    (step,) = [e for e in read_trace(tmp_path / "call.jsonl") if e["type"] == "step"]
    (given,) = step["approved"]
    assert given["by"] == "bob" and given["at"] and given["fingerprint"] == approval[:64]
