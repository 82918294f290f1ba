"""A person's answer written with the prefix the workflow file uses, where the ontology binds
another prefix to the same namespace (``ct:`` in the ontology, ``:`` in the workflow, as a
team splitting files writes them): ``resume --facts ':ann :consent true .'`` was refused,
"The prefix : has not been declared", while the message said the definitions' prefixes are
declared for you, and the brief itself names the patient ``:ann``. Found walking a clinical
trial enrolment with a consent wait."""

from __future__ import annotations

from pathlib import Path

from forked import horismos_forked

ONTOLOGY = """@prefix ct:   <http://example.org/trial#> .
@prefix owl:  <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:  <http://www.w3.org/2001/XMLSchema#> .

ct:Patient a owl:Class .
ct:consent a owl:DatatypeProperty ; rdfs:domain ct:Patient ; rdfs:range xsd:boolean .
ct:closedAt a owl:DatatypeProperty ; rdfs:domain ct:Patient ; rdfs:range xsd:dateTime .
"""

FLOW = """@prefix :      <http://example.org/trial#> .
@prefix horis: <https://w3id.org/horismos#> .

:ctms.close a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:subject "patient" ;
        horis:asserts [ horis:property :closedAt ; horis:value horis:now ] ] ;
    horis:binding "python:trial.close" ;
    horis:idempotent true .

:Screen a horis:Workflow ; horis:focusType :Patient ; horis:start :AwaitConsent .

:AwaitConsent a horis:WaitStep ;
    horis:reason "The patient must sign the consent form." ;
    horis:wake horis:OperatorInput ;
    horis:delivery horis:Silent ;
    horis:until "?this :consent true ." ;
    horis:next :Close .

:Close a horis:ActionStep ;
    horis:tool :ctms.close ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""


def test_facts_may_use_the_prefix_the_workflow_file_binds(tmp_path: Path) -> None:
    (tmp_path / "ontology.ttl").write_text(ONTOLOGY, encoding="utf-8")
    (tmp_path / "flow.ttl").write_text(FLOW, encoding="utf-8")
    (tmp_path / "trial.py").write_text("def close(patient):\n    return {}\n", encoding="utf-8")
    (tmp_path / "world.ttl").write_text(
        "@prefix ct: <http://example.org/trial#> .\nct:ann a ct:Patient .\n", encoding="utf-8")
    defs = ("ontology.ttl", "flow.ttl", "--tools", "trial.py")
    run = horismos_forked(tmp_path, "run", *defs, "--world", "world.ttl", "--focus", "ct:ann",
                          "--out", "after.trig")
    assert run.returncode == 3, run.stdout + run.stderr
    instance = run.stdout.split("[", 1)[1].split("]", 1)[0]
    for facts, out in ((":ann :consent true .", "done.trig"),
                       ("ct:ann ct:consent true .", "done2.trig")):
        done = horismos_forked(tmp_path, "resume", *defs, "--world", "after.trig",
                               "--instance", instance, "--facts", facts, "--out", out)
        assert done.returncode == 0, done.stdout + done.stderr
        assert ":Close" in done.stdout and "completed" in done.stdout, done.stdout


OTHER = """@prefix :     <http://example.org/repl#> .
@prefix owl:  <http://www.w3.org/2002/07/owl#> .

:Item a owl:Class .
"""


def test_facts_using_a_prefix_two_files_bind_apart_are_refused_not_misread(
    tmp_path: Path,
) -> None:
    # A second domain's file binds : to its own namespace: ':ann :consent true .' landed
    # <…repl#ann> <…repl#consent> true, nodes nothing holds, and the patient kept waiting.
    (tmp_path / "ontology.ttl").write_text(ONTOLOGY, encoding="utf-8")
    (tmp_path / "flow.ttl").write_text(FLOW, encoding="utf-8")
    (tmp_path / "repl.ttl").write_text(OTHER, encoding="utf-8")
    (tmp_path / "trial.py").write_text("def close(patient):\n    return {}\n", encoding="utf-8")
    (tmp_path / "world.ttl").write_text(
        "@prefix ct: <http://example.org/trial#> .\nct:ann a ct:Patient .\n", encoding="utf-8")
    defs = ("ontology.ttl", "flow.ttl", "repl.ttl", "--tools", "trial.py")
    run = horismos_forked(tmp_path, "run", *defs, "--world", "world.ttl", "--workflow",
                          "<http://example.org/trial#Screen>", "--focus", "ct:ann",
                          "--out", "after.trig")
    assert run.returncode == 3, run.stdout + run.stderr
    instance = run.stdout.split("[", 1)[1].split("]", 1)[0]
    refused = horismos_forked(tmp_path, "resume", *defs, "--world", "after.trig",
                              "--instance", instance, "--facts", ":ann :consent true .",
                              "--out", "wrong.trig")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert refused.stderr.strip() == (
        "horismos resume: error: the facts use the prefix :, which the definitions' files bind "
        "to more than one namespace (<http://example.org/trial#> in flow.ttl; "
        "<http://example.org/repl#> in repl.ttl), so which node a name under it means cannot "
        "be told — declare it before the facts (@prefix : <…> .), or write full IRIs"
    ), refused.stderr
    assert not (tmp_path / "wrong.trig").exists()
    done = horismos_forked(tmp_path, "resume", *defs, "--world", "after.trig",
                           "--instance", instance, "--out", "done.trig", "--facts",
                           "@prefix : <http://example.org/trial#> . :ann :consent true .")
    assert done.returncode == 0 and "completed" in done.stdout, done.stdout + done.stderr
