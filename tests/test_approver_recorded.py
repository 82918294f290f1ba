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

from horismos import World

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
