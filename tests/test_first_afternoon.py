"""A modeler's first afternoon (issue 15): mistakes caught before anything runs, runs operated.

Each test is a command a new user ran, as a subprocess, or the API call behind it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from forked import horismos_forked

ROOT = Path(__file__).resolve().parent.parent
TRIAGE_WF = ROOT / "workflows" / "triage.ttl"
EHR = ROOT / "ontologies" / "ehr.ttl"
TRIAGE = [str(TRIAGE_WF), str(EHR)]
WORLD = ["--world", str(ROOT / "examples" / "triage" / "world.ttl")]
TOOLS = ["--tools", str(ROOT / "examples" / "triage" / "ehr_client.py")]


def horismos(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return horismos_forked(cwd, *args, input=stdin, timeout=120)


def no_traceback(p: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in p.stderr + p.stdout, p.stderr


# -- 4. no tracebacks -----------------------------------------------------------------------

def test_tools_module_with_a_syntax_error_is_located_exit_2(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("def assign_queue(patient, queue:\n    return {}\n")
    p = horismos("run", *TRIAGE, *WORLD, "--tools", "broken.py", "--focus", ":patient42",
                 cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "broken.py:1: syntax error" in p.stderr
    no_traceback(p)


def test_the_example_tools_copied_to_another_file_name_say_the_module_the_binding_names(
        tmp_path: Path) -> None:
    """A copy of ehr_client.py as clinic.py registers clinic.assign_queue, and the bindings
    name ehr_client.assign_queue: the did-you-mean of the whole name was the bare
    'notify_nurse', which said nothing of the file's name being the module's."""
    source = (ROOT / "examples" / "triage" / "ehr_client.py").read_text(encoding="utf-8")
    (tmp_path / "clinic.py").write_text(source, encoding="utf-8")
    for command in (["run", *TRIAGE, *WORLD, "--focus", ":patient42"], ["validate", *TRIAGE]):
        p = horismos(*command, "--tools", "clinic.py", cwd=tmp_path)
        assert p.returncode == (2 if command[0] == "run" else 1), p.stdout + p.stderr
        said = p.stdout + p.stderr
        assert ("no callable named 'ehr_client.notify_nurse' is registered, but "
                "'clinic.notify_nurse' is: the binding names module 'ehr_client'") in said, said
        assert ('write "python:clinic.notify_nurse", or register the function under '
                "'ehr_client' (--tools ehr_client.py") in said, said
        no_traceback(p)


def test_a_line_based_rdf_file_with_a_syntax_error_is_located_at_its_line(
        tmp_path: Path) -> None:
    """A `.nq` or `.nt` file among the definitions was reported with no line, in rdflib's
    words ("Invalid line (Predicate must be uriref)"; another said "Failed to eat" and its
    own regex). It is reported at its line."""
    good = "<http://a/s> <http://a/p> <http://a/o> <http://a/g> .\n"
    (tmp_path / "bad.nq").write_text(good * 2 + "<http://a/s> p <http://a/o> .\n")
    (tmp_path / "bad.nt").write_text("<http://a/s> <http://a/p> <http://a/o> .\n"
                                     '<http://a/s> <http://a/p> "open\n')
    for name, line, said in (("bad.nq", 3, "N-Quads syntax error: The predicate of a triple "
                              "must be an IRI"), ("bad.nt", 2, "N-Triples syntax error")):
        p = horismos("validate", *TRIAGE, name, cwd=tmp_path)
        assert p.returncode == 1, p.stdout + p.stderr
        assert f"{name}:{line}: error: {said}" in p.stdout + p.stderr, p.stdout + p.stderr
        no_traceback(p)


def test_tools_module_that_raises_at_import_is_located_exit_2(tmp_path: Path) -> None:
    (tmp_path / "loud.py").write_text("import os\n\nTOKEN = os.environ['NO_SUCH_TOKEN_X']\n")
    for spec in ("loud.py", "loud"):
        p = horismos("validate", *TRIAGE, cwd=tmp_path)  # sanity: the definitions are fine
        assert p.returncode == 0
        p = horismos("run", *TRIAGE, *WORLD, "--tools", spec, "--focus", ":patient42",
                     cwd=tmp_path)
        assert p.returncode == 2, p.stdout + p.stderr
        assert "raised KeyError" in p.stderr and "loud.py:3" in p.stderr, p.stderr
        no_traceback(p)


def _waiting_world(tmp_path: Path) -> tuple[list[str], str]:
    """The rebooking example stopped at its wait: its definitions and the world it left."""
    defs = [str(ROOT / "workflows" / "rebooking.ttl"), str(ROOT / "ontologies" / "travel.ttl")]
    p = horismos("run", *defs, "--world", str(ROOT / "examples" / "rebooking" / "world.ttl"),
                 "--tools", str(ROOT / "examples" / "rebooking" / "airline_client.py"),
                 "--all", "--out", "after.trig", cwd=tmp_path)
    assert p.returncode == 3, p.stdout + p.stderr
    return defs, "after.trig"


def test_facts_naming_a_missing_file_says_so(tmp_path: Path) -> None:
    defs, world = _waiting_world(tmp_path)
    p = horismos("resume", *defs, "--world", world, "--instance", "urn:horismos:instance:x",
                 "--facts", "nosuch.ttl", cwd=tmp_path)
    assert p.returncode == 2
    assert "--facts nosuch.ttl: no such file" in p.stderr
    no_traceback(p)


def _instance_id(world: Path) -> str:
    from horismos import World

    rows = World.from_files(world).store.select(
        "SELECT ?i WHERE { GRAPH <urn:horismos:instances> { ?i "
        "<https://w3id.org/horismos#status> <https://w3id.org/horismos#Waiting> } }", {}, {})
    return str(rows[0]["i"])


def test_facts_without_the_final_dot_give_the_position(tmp_path: Path) -> None:
    defs, world = _waiting_world(tmp_path)
    p = horismos("resume", *defs, "--world", world, "--instance", _instance_id(tmp_path / world),
                 "--facts", ":booking7 :operatorChoice :FL200", cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "line 1, column" in p.stderr and "' .'" in p.stderr, p.stderr
    assert "string index out of range" not in p.stderr
    no_traceback(p)


def test_errors_in_world_files_are_labelled_world_data(tmp_path: Path) -> None:
    (tmp_path / "world.ttl").write_text("@prefix : <http://example.org/ehr#> .\n:p a :Patient\n")
    p = horismos("run", *TRIAGE, "--world", "world.ttl", *TOOLS, "--all", cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "in the world data" in p.stderr and "in the definitions" not in p.stderr
    assert "world.ttl:" in p.stderr
    no_traceback(p)


# -- 11. small ones --------------------------------------------------------------------------

REBOOKING = [str(ROOT / "workflows" / "rebooking.ttl"), str(ROOT / "ontologies" / "travel.ttl")]


def test_graph_of_files_without_a_workflow_is_an_error(tmp_path: Path) -> None:
    p = horismos("graph", str(EHR), cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == ""
    assert "no horis:Workflow is declared" in p.stderr
    no_traceback(p)


def _bad_ehr(tmp_path: Path) -> list[str]:
    """The triage example whose EHR answers with a queue reference the domain shape rejects
    (computed at the call: a constant written out is refused before the run, by
    tests/test_authoring_returns.py)."""
    client = (ROOT / "examples" / "triage" / "ehr_client.py").read_text()
    (tmp_path / "badehr.py").write_text(client.replace(
        'return {"queueRef": f"Q-{level}-{next(_numbers)}"}',
        'return {"queueRef": "bad ref".strip()}'))
    (tmp_path / "wf.ttl").write_text(TRIAGE_WF.read_text().replace("python:ehr_client",
                                                                   "python:badehr"))
    return ["wf.ttl", str(EHR), *WORLD, "--tools", "badehr.py"]


def test_gate_messages_name_the_rejected_value(tmp_path: Path) -> None:
    common = _bad_ehr(tmp_path)
    p = horismos("run", *common, "--focus", ":patient42", cwd=tmp_path)
    assert p.returncode == 1
    step, _, summary = p.stdout.partition("\n:Triage")
    assert '(value: "bad ref")' in step and '(value: "bad ref")' in summary
    p = horismos("tools", "call", "ehr.assign_queue", *common,
                 "--args", '{"patient": ":patient42", "queue": ":urgent"}', cwd=tmp_path)
    assert p.returncode == 1 and '(value: "bad ref")' in p.stdout, p.stdout


def test_tools_call_on_a_world_that_ends_with_it_does_not_say_landed(tmp_path: Path) -> None:
    call = ["tools", "call", "ehr.assign_queue", *TRIAGE, *WORLD, *TOOLS,
            "--args", '{"patient": ":patient42", "queue": ":urgent"}']
    p = horismos(*call, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "landed" not in p.stdout and "not kept" in p.stdout and "--out" in p.stdout
    # its JSON envelope says the same (an agent reading it was told they landed)
    p = horismos(*call, "--format", "json", cwd=tmp_path)
    (said,) = [c["text"] for c in json.loads(p.stdout)["content"] if c["type"] == "text"]
    assert "landed" not in said and "not kept" in said, said
    p = horismos(*call, "--out", "after.trig", cwd=tmp_path)
    assert p.returncode == 0 and "2 effects landed in <" in p.stdout
    p = horismos(*call, "--out", "again.trig", "--format", "json", cwd=tmp_path)
    assert "landed" in json.loads(p.stdout)["content"][0]["text"]


def test_trace_show_gives_a_proposals_choice_and_a_waits_reason(tmp_path: Path) -> None:
    p = horismos("run", *REBOOKING, "--world", str(ROOT / "examples" / "rebooking" / "world.ttl"),
                 "--tools", str(ROOT / "examples" / "rebooking" / "airline_client.py"),
                 "--all", "--trace", "t.jsonl", cwd=tmp_path)
    assert p.returncode == 3, p.stdout + p.stderr
    shown = horismos("trace", "show", "t.jsonl", *REBOOKING, cwd=tmp_path).stdout
    assert ":ProposeFlight  chose :BA175 (confidence 0.8276) -> :RebookOnProposal" in shown
    assert ":ProposeFlight  no choice: low confidence (confidence 0.5) -> :AskOperator" in shown
    assert ":AskOperator  waiting: The ranker is not sure which flight fits" in shown


# -- 1. individuals in the ontology count ---------------------------------------------------

INCIDENT = ROOT / "tests" / "fixtures" / "incident"
INCIDENT_DEFS = [str(INCIDENT / "workflow.ttl"), str(INCIDENT / "ontology.ttl")]


def test_an_enumeration_in_the_ontology_is_seen_with_a_separate_world(tmp_path: Path) -> None:
    """Preconditions (?sev a :Severity), the argument type of sev and the gate's sh:class all
    see :SEV1, declared in the ontology file only, when the world is given with --world."""
    p = horismos("run", *INCIDENT_DEFS, "--world", str(INCIDENT / "world.ttl"),
                 "--tools", str(INCIDENT / "irtools.py"), "--focus", ":inc1", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert ":ir.page(incident=:inc1, sev=:SEV1)  completed" in p.stdout


def test_the_individuals_are_placed_once_and_follow_the_definitions(tmp_path: Path) -> None:
    from rdflib import Namespace

    from horismos import Agent, World
    from horismos._individuals import DEFINITIONS, place_individuals

    sys.path.insert(0, str(INCIDENT))
    import irtools

    ir = Namespace("http://example.org/ir#")
    tools = {"irtools.classify": irtools.classify, "irtools.page": irtools.page}
    world = World.from_files(INCIDENT / "world.ttl", store=f"oxigraph:{tmp_path / 'w'}")
    agent = Agent.from_files(*INCIDENT_DEFS, tools=tools)
    assert agent.run(world, focus=":inc1").status == "completed"
    before = world.digest()
    assert not place_individuals(agent.definitions.individuals, world)  # nothing to write again
    assert world.digest() == before

    fewer = tmp_path / "ontology.ttl"  # the definitions change: SEV2 is no longer declared
    fewer.write_text((INCIDENT / "ontology.ttl").read_text().replace(':SEV2 a :Severity ; '
                                                                     'rdfs:label "SEV2" .', ""))
    agent = Agent.from_files(INCIDENT_DEFS[0], fewer, tools=tools)
    assert place_individuals(agent.definitions.individuals, world)
    held = set(world.graph.graph(DEFINITIONS).subjects())
    assert held == {ir.SEV1}
    world.store.close()


# -- 2. validate catches the typos that change behaviour -------------------------------------

def test_validate_warns_of_undeclared_iris_in_patterns_with_a_did_you_mean(tmp_path: Path) -> None:
    (tmp_path / "wf.ttl").write_text(TRIAGE_WF.read_text().replace(
        "?this :acuity ?queue", "?this :acuty ?queue").replace(":onDuty true", ":onDutty true"))
    p = horismos("validate", "wf.ttl", str(EHR), cwd=tmp_path)
    assert p.returncode == 0, p.stdout  # warnings: world data may use them
    assert (":QueuePatient: horis:requires uses :acuty, which no loaded ontology declares and "
            "no loaded data uses") in p.stdout
    assert "did you mean :acuity?" in p.stdout and "did you mean :onDuty?" in p.stdout
    assert "valid (2 warnings)" in p.stdout
    (tmp_path / "w.ttl").write_text("@prefix : <http://example.org/ehr#> .\n:n :onDutty true .\n")
    p = horismos("validate", "wf.ttl", str(EHR), "--world", "w.ttl", cwd=tmp_path)
    assert ":onDutty" not in p.stdout and ":acuty" in p.stdout  # the world uses one of them
    assert "valid (1 warning)" in p.stdout


def test_validate_rejects_an_unknown_shacl_term_with_a_did_you_mean(tmp_path: Path) -> None:
    (tmp_path / "ehr.ttl").write_text(EHR.read_text().replace("sh:pattern", "sh:patern"))
    p = horismos("validate", str(TRIAGE_WF), "ehr.ttl", cwd=tmp_path)
    assert p.returncode == 1
    assert "error: :PatientShape: sh:patern is not a SHACL term" in p.stdout
    assert "did you mean sh:pattern?" in p.stdout


@pytest.mark.parametrize("near", ["http://w3id.org/horismos#", "https://w3id.org/horismos/"])
def test_validate_names_the_horismos_namespace_when_a_file_uses_another(
        tmp_path: Path, near: str) -> None:
    """Alone, the file declared nothing and validate said "0 tools, 0 workflows: valid (1
    warning)", exit 0: one mistake made the whole set empty, so it is an error."""
    (tmp_path / "wf.ttl").write_text(TRIAGE_WF.read_text().replace(
        "<https://w3id.org/horismos#>", f"<{near}>"))
    p = horismos("validate", "wf.ttl", str(EHR), cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert f"wf.ttl:2: error: the prefix horis: is bound to <{near}>" in p.stdout
    assert "write @prefix horis: <https://w3id.org/horismos#> ." in p.stdout
    # beside a file that does declare a workflow, the set is not empty: a warning
    lab = ROOT / "workflows" / "lab_review.ttl"
    p = horismos("validate", "wf.ttl", str(EHR), str(lab), str(ROOT / "ontologies" / "lab.ttl"),
                 cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"wf.ttl:2: warning: the prefix horis: is bound to <{near}>" in p.stdout


# -- 10. the seeds' own examples load -------------------------------------------------------

SEED_PROPOSAL = """@prefix : <http://example.org/travel#> .
@prefix horis: <https://w3id.org/horismos#> .

:Rebook a horis:Workflow ; horis:focusType :Booking ; horis:start :PickOption .
:PickOption a horis:ProposalStep ;
    horis:candidates [ horis:query "?this :flight ?old . ?option a :Flight ; :destination ?d ." ] ;
    horis:rankBy "customer preference expressed in the request" ;
    horis:model "claude:claude-fable-5" ;
    horis:confidence 0.8 ;
    horis:fallback :AskHuman .
:AskHuman a horis:WaitStep ;
    horis:reason "Pick one of the legal options." ;
    horis:wake horis:OperatorInput ;
    horis:delivery horis:Final .
"""


def test_a_seed_proposal_loads_claude_alias_and_pattern_candidates(tmp_path: Path) -> None:
    from horismos._definitions import load_definitions
    from horismos._model import ProposalStep

    (tmp_path / "seed.ttl").write_text(SEED_PROPOSAL)
    defs = load_definitions([tmp_path / "seed.ttl", ROOT / "ontologies" / "travel.ttl"])
    step = next(s for s in defs.steps.values() if isinstance(s, ProposalStep))
    assert step.model == "anthropic:claude-fable-5"
    assert step.query is not None and step.query.startswith("SELECT DISTINCT ?option WHERE {")


def test_candidates_written_as_a_graph_pattern_are_ranked(tmp_path: Path) -> None:
    """The shipped rebooking example writes its candidates as a pattern: same proposals."""
    assert "SELECT" not in (ROOT / "workflows" / "rebooking.ttl").read_text()
    p = horismos("run", *REBOOKING, "--world", str(ROOT / "examples" / "rebooking" / "world.ttl"),
                 "--tools", str(ROOT / "examples" / "rebooking" / "airline_client.py"), "--all",
                 cwd=tmp_path)
    assert p.returncode == 3, p.stdout + p.stderr
    assert "proposal: :BA175 (confidence 0.8276, 1 dropped) -> :RebookOnProposal" in p.stdout


def test_a_wait_without_its_contract_is_an_error_with_the_fix(tmp_path: Path) -> None:
    (tmp_path / "seed.ttl").write_text(SEED_PROPOSAL.replace(
        '    horis:reason "Pick one of the legal options." ;\n'
        '    horis:wake horis:OperatorInput ;\n    horis:delivery horis:Final .',
        '    horis:reason "  " .'))
    p = horismos("validate", "seed.ttl", str(ROOT / "ontologies" / "travel.ttl"), cwd=tmp_path)
    assert p.returncode == 1, p.stdout
    assert ":AskHuman: a horis:WaitStep needs a non-empty horis:reason" in p.stdout
    assert "needs horis:wake: what ends the wait — write horis:wake horis:OperatorInput" in p.stdout
    assert ("states its delivery explicitly — write horis:delivery horis:Final (publish a brief "
            "for the operator) or horis:delivery horis:Silent") in p.stdout
    (tmp_path / "seed.ttl").write_text(SEED_PROPOSAL.replace("?option a :Flight", "?o a :Flight"))
    p = horismos("validate", "seed.ttl", str(ROOT / "ontologies" / "travel.ttl"), cwd=tmp_path)
    assert "the horis:candidates pattern never binds ?option" in p.stdout


# -- 9. operating instances ----------------------------------------------------------------

LEAVE = """@prefix : <http://example.org/leave#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .

:Request a owl:Class .
:approvedBy a owl:ObjectProperty .

:Leave a horis:Workflow ; horis:focusType :Request ; horis:start :Approve .
:Approve a horis:WaitStep ;
    horis:reason "A manager approves the leave request." ;
    horis:wake horis:OperatorInput , horis:Timer ;
    horis:delivery horis:Silent ;
    horis:until "?this :approvedBy ?who ." ;
    horis:timeout "TIMEOUT" ;
    horis:onTimeout :Escalate ;
    horis:next :Approved .
:Escalate a horis:WaitStep ;
    horis:reason "Nobody approved in time." ; horis:wake horis:System ;
    horis:delivery horis:Silent .
:Approved a horis:WaitStep ;
    horis:reason "Approved: the request waits to be filed." ; horis:wake horis:System ;
    horis:delivery horis:Silent .
"""


def _leave(tmp_path: Path, timeout: str) -> list[str]:
    (tmp_path / "leave.ttl").write_text(LEAVE.replace("TIMEOUT", timeout))
    (tmp_path / "world.ttl").write_text("@prefix : <http://example.org/leave#> .\n"
                                        ":req1 a :Request .\n:req2 a :Request .\n")
    store = f"oxigraph:{tmp_path / 'db'}"
    assert horismos("load", "world.ttl", "--store", store, cwd=tmp_path).returncode == 0
    ran = horismos("run", "leave.ttl", "--all", "--store", store, cwd=tmp_path)
    assert ran.returncode == 3, ran.stdout + ran.stderr
    return ["leave.ttl", "--store", store]


def test_instances_lists_what_the_world_holds_by_status(tmp_path: Path) -> None:
    common = _leave(tmp_path, "2h")
    p = horismos("instances", *common, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    header, *rows = p.stdout.splitlines()
    assert header.split() == ["id", "workflow", "focus", "status", "step", "since", "by", "why"]
    assert sorted(r.split()[2] for r in rows) == [":req1", ":req2"]
    assert all(r.split()[1:5:3] == [":Leave", ":Approve"] and " waiting " in r for r in rows)
    assert horismos("instances", *common, "--status", "failed", cwd=tmp_path).stdout == (
        "no failed instances in this world\n")


def test_instances_says_since_when_a_blocked_instance_is_blocked(tmp_path: Path) -> None:
    """A block recorded no time, so `instances` showed "-" for exactly the instances an
    operator lists to find what is stuck, and for how long. A rerun that finds the instance
    still blocked at the same step keeps the first time: it has been stuck since then."""
    store = ["--store", f"oxigraph:{tmp_path / 'world'}"]
    assert horismos("run", *TRIAGE, *WORLD, *TOOLS, "--all", *store, cwd=tmp_path).returncode == 4

    def blocked() -> list[dict[str, str]]:
        p = horismos("instances", *store, "--status", "blocked", "--format", "json",
                     cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout)

    (first,) = blocked()
    assert first["focus"].endswith("#patient44") and first["since"], first
    text = horismos("instances", *TRIAGE, *store, "--status", "blocked", cwd=tmp_path).stdout
    assert text.splitlines()[1].split()[5] == first["since"][:19], text
    assert horismos("run", *TRIAGE, *TOOLS, "--focus", ":patient44", *store,
                    cwd=tmp_path).returncode == 4
    (again,) = [r for r in blocked() if r["focus"].endswith("#patient44")]
    assert again == first


def test_listing_blocked_instances_reads_no_other_instances_activities(tmp_path: Path) -> None:
    """`instances --status blocked` on a world that keeps every instance it ran: the time
    each blocked instance was blocked is stored with it, so no step's activity is read."""
    from horismos import Agent, World
    from horismos._instances import list_instances

    agent = Agent.from_files(*TRIAGE, tools=_ehr_tools())
    world = World.open("oxigraph")
    world.load(ROOT / "examples" / "triage" / "world.ttl")
    assert agent.run(world, all=True).status == "blocked"
    asked: list[str] = []
    select = world.store.select
    world.store.select = lambda q, *a, **k: asked.append(q) or select(q, *a, **k)  # type: ignore[method-assign]
    (row,) = list_instances(world.store, "blocked")
    assert row.focus.endswith("#patient44") and row.since is not None
    assert not any("startedAtTime" in q for q in asked), asked


def _ehr_tools() -> dict[str, object]:
    sys.path.insert(0, str(ROOT / "examples" / "triage"))
    try:
        import ehr_client
    finally:
        sys.path.pop(0)
    return {"ehr_client.assign_queue": ehr_client.assign_queue,
            "ehr_client.notify_nurse": ehr_client.notify_nurse}


def test_instances_without_definitions_names_nodes_as_it_does_with_them(tmp_path: Path) -> None:
    """Without definitions every workflow, focus and step was a full IRI
    (``http://example.org/ehr#patient44``), a table too wide to read; with them it was
    ``:patient44``. The namespace the instances' workflows share is ``:`` either way."""
    out = ["--out", "after.trig"]
    assert horismos("run", *TRIAGE, *WORLD, *TOOLS, "--all", *out, cwd=tmp_path).returncode == 4
    bare = horismos("instances", "--world", "after.trig", "--store", "memory", cwd=tmp_path)
    named = horismos("instances", *TRIAGE, "--world", "after.trig", "--store", "memory",
                     cwd=tmp_path)
    assert bare.returncode == named.returncode == 0, bare.stderr + named.stderr
    assert "http" not in bare.stdout and ":patient44" in bare.stdout, bare.stdout
    assert bare.stdout == named.stdout


def test_instances_of_workflows_in_several_namespaces_name_each_namespace() -> None:
    from rdflib import URIRef

    from horismos._cli_instances import _names_without_definitions
    from horismos._instances import InstanceSummary

    ehr, lab = "http://example.org/ehr#", "http://example.org/lab#"
    rows = [InstanceSummary(URIRef("urn:horismos:instance:1"), URIRef(ns + wf), URIRef(ns + "x"),
                        "completed", None, None) for ns, wf in ((ehr, "Triage"), (lab, "Review"))]
    name = _names_without_definitions(rows)
    assert [name(URIRef(ehr + "patient44")), name(URIRef(lab + "k1"))] == ["ehr:patient44",
                                                                          "lab:k1"]
    assert name(URIRef("https://w3id.org/horismos#Blocked")) == "horis:Blocked"
    assert name(URIRef("urn:uuid:42")) == "<urn:uuid:42>"
    assert name(URIRef("http://other.example/y")) == "<http://other.example/y>"


def test_wake_settles_the_waits_that_are_due_and_leaves_the_others(tmp_path: Path) -> None:
    common = _leave(tmp_path, "2h")
    (tmp_path / "yes.ttl").write_text("@prefix : <http://example.org/leave#> .\n"
                                      ":req1 :approvedBy :grace .\n")
    assert horismos("load", "yes.ttl", "--store", common[-1], cwd=tmp_path).returncode == 0
    p = horismos("wake", *common, cwd=tmp_path)  # req1's until holds now; req2 still waits
    assert p.returncode == 0, p.stdout + p.stderr
    assert ":req1  :Approve  wait ended -> :Approved" in p.stdout and ":req2" not in p.stdout
    p = horismos("wake", *common, cwd=tmp_path)
    assert p.stdout == "no wait is due\n"


def test_wake_follows_on_timeout_once_the_timeout_has_passed(tmp_path: Path) -> None:
    common = _leave(tmp_path, "1ms")
    p = horismos("wake", *common, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.count("wait timed out -> :Escalate") == 2
    listed = horismos("instances", *common, "--status", "waiting", cwd=tmp_path).stdout
    assert listed.count(":Escalate") == 2


def test_wake_on_a_world_read_from_files_needs_out(tmp_path: Path) -> None:
    """`wake --world after.trig` resumed the due waits, called their tools and kept nothing:
    woken again, the rebooking was made twice. Its help said it needs --out; it refuses."""
    defs, after = _waiting_world(tmp_path)
    (tmp_path / "choice.ttl").write_text("@prefix : <http://example.org/travel#> .\n"
                                         ":booking2 :operatorChoice :VS3 .\n")
    common = [*defs, "--world", after, "--world", "choice.ttl", "--tools",
              str(ROOT / "examples" / "rebooking" / "airline_client.py")]
    p = horismos("wake", *common, cwd=tmp_path)
    assert p.returncode == 2 and "give --out F" in p.stderr, p.stdout + p.stderr
    assert p.stdout == "", p.stdout  # nothing woken
    p = horismos("wake", *common, "--out", "woke.trig", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert ":booking2  :RebookOnOperatorChoice  :airline.rebook" in p.stdout, p.stdout
    no_traceback(p)


def test_resume_on_a_world_without_instances_says_so(tmp_path: Path) -> None:
    p = horismos("resume", *TRIAGE, *WORLD, "--instance", "3f2a", cwd=tmp_path)
    assert p.returncode == 2
    assert "this world holds no workflow instances" in p.stderr
    no_traceback(p)


# -- 6. live output -------------------------------------------------------------------------

def test_a_killed_run_leaves_the_steps_that_landed_on_stdout(tmp_path: Path) -> None:
    """The second tool kills its process: the first step's line is already in the pipe."""
    client = (ROOT / "examples" / "triage" / "ehr_client.py").read_text()
    (tmp_path / "dying.py").write_text(client.replace(
        '    return {"assignedNurse": nurse}', '    import os\n    os._exit(9)'))
    (tmp_path / "wf.ttl").write_text(TRIAGE_WF.read_text().replace("python:ehr_client",
                                                                   "python:dying"))
    p = horismos("run", "wf.ttl", str(EHR), *WORLD, "--tools", "dying.py", "--all", cwd=tmp_path)
    assert p.returncode == 9
    assert ":patient42  :QueuePatient  :ehr.assign_queue(patient=:patient42, queue=:urgent)  " \
           "completed, 2 effects" in p.stdout


def test_the_summary_table_shows_instance_ids(tmp_path: Path) -> None:
    p = horismos("run", *TRIAGE, *WORLD, *TOOLS, "--all", cwd=tmp_path)
    lines = p.stdout.splitlines()
    table = lines[lines.index("id        focus       status     stopped at     why"):]
    ids = {ln.split()[0] for ln in table[1:]}
    steps = {ln[1:9] for ln in lines if ln.startswith("[")}
    assert len(ids) == 3 and ids == steps


# -- 5. a blocked step says which part failed ------------------------------------------------

def test_a_blocked_step_names_the_triple_pattern_and_the_values_bound(tmp_path: Path) -> None:
    """A boolean written as a string: the nurse exists, the `true` does not match."""
    (tmp_path / "world.ttl").write_text(
        "@prefix : <http://example.org/ehr#> .\n"
        ":patient42 a :Patient ; :acuity :urgent .\n:urgent a :AcuityLevel .\n"
        ':alice a :Nurse ; :onDuty "yes" .\n')
    p = horismos("run", *TRIAGE, "--world", "world.ttl", *TOOLS, "--focus", ":patient42",
                 cwd=tmp_path)
    assert p.returncode == 4, p.stdout + p.stderr
    assert (":NotifyNurse  :ehr.notify_nurse  blocked: ?nurse :onDuty true . has no solution "
            "for ?nurse = :alice") in p.stdout


def test_a_filter_that_fails_is_named_after_the_patterns(tmp_path: Path) -> None:
    from horismos._preconditions import compile_patterns, elements, explain
    from horismos._stores import open_store

    assert elements('?n a :Nurse ; :onDuty true , "x"@en . FILTER(?n != :bob) ?n :p [ :q 1 ]') \
        == ["?n a :Nurse .", "?n :onDuty true .", '?n :onDuty "x"@en .', "FILTER(?n != :bob)",
            "?n :p [ :q 1 ] ."]
    store = open_store("oxigraph")
    world = tmp_path / "w.ttl"
    world.write_text("@prefix : <http://x/> .\n:bob a :Nurse .\n")
    store.load_file(world)
    pre = compile_patterns(["FILTER(?n != :bob) ?n a :Nurse ."], {"": "http://x/"})
    assert explain(pre, {}, store.select) == "FILTER(?n != :bob) does not hold for ?n = :bob"


# -- 7. several files, one set of names -------------------------------------------------------

def test_folders_whose_files_bind_colon_differently_share_one_set_of_names(tmp_path: Path) -> None:
    """workflows/ and ontologies/ together: each file's ':' is another namespace. :Triage and
    :patient42 still mean the one node there is; output never says default2:; the lab and
    rebooking tools need no --tools to run the triage."""
    p = horismos("run", str(ROOT / "workflows"), str(ROOT / "ontologies"), *WORLD, *TOOLS,
                 "--workflow", ":Triage", "--focus", ":patient42", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "[" in p.stdout and "default" not in p.stdout
    assert ":Triage :patient42: completed after 2 steps" in p.stdout
    assert ":ehr.assign_queue(patient=:patient42, queue=:urgent)" in p.stdout


def test_an_ambiguous_curie_is_an_error_listing_the_iris(tmp_path: Path) -> None:
    (tmp_path / "world.ttl").write_text(
        (ROOT / "examples" / "triage" / "world.ttl").read_text()
        + "\n<http://example.org/travel#patient42> a <http://example.org/ehr#Patient> .\n")
    p = horismos("run", str(ROOT / "workflows"), str(ROOT / "ontologies"), "--world",
                 "world.ttl", *TOOLS, "--workflow", ":Triage", "--focus", ":patient42",
                 cwd=tmp_path)
    assert p.returncode == 2
    assert (":patient42 is ambiguous" in p.stderr and "<http://example.org/ehr#patient42>" in
            p.stderr and "<http://example.org/travel#patient42>" in p.stderr), p.stderr
    no_traceback(p)



def test_tools_call_over_folders_reads_an_argument_curie_as_the_world_holds_it(
        tmp_path: Path) -> None:
    """As a run's --focus: ':patient42' over workflows/ ontologies/ is the ehr node the world
    has, and printed back as :patient42; with no world holding it, the IRIs it could be."""
    folders = [str(ROOT / "workflows"), str(ROOT / "ontologies")]
    args = ["--args", '{"patient": ":patient42", "queue": ":urgent"}']
    p = horismos("tools", "call", "ehr.assign_queue", *folders, *WORLD, *TOOLS, *args,
                 cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.startswith("ehr.assign_queue(patient=:patient42, queue=:urgent): completed")
    assert "    :patient42 :queueRef " in p.stdout
    p = horismos("tools", "call", "ehr.assign_queue", *folders, *TOOLS, *args, cwd=tmp_path)
    assert p.returncode == 5
    assert ":patient42 is no node of the world" in p.stdout and (
        "<http://example.org/ehr#patient42>" in p.stdout and "the world it is in is given" in
        p.stdout), p.stdout


def test_tools_discover_over_folders_reads_the_focus_as_the_world_holds_it(
        tmp_path: Path) -> None:
    """As a run's --focus: ':patient42' over workflows/ ontologies/ is the ehr node the world
    has (discover said it was "neither an IRI nor a CURIE with a declared prefix", which
    `serve workflows/ ontologies/` answered an agent too); one the world holds in no
    namespace is an error listing the IRIs it could be."""
    folders = [str(ROOT / "workflows"), str(ROOT / "ontologies")]
    p = horismos("tools", "discover", "assign queue", *folders, *WORLD, *TOOLS, "--focus",
                 ":patient42", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.startswith("1. ehr.assign_queue  executable"), p.stdout
    assert "   bound: patient=:patient42\n" in p.stdout, p.stdout
    p = horismos("tools", "discover", "assign queue", *folders, *WORLD, *TOOLS, "--focus",
                 ":nobody", cwd=tmp_path)
    assert p.returncode == 2
    assert ":nobody is no node of the world" in p.stderr and (
        "<http://example.org/ehr#nobody>" in p.stderr), p.stderr
    no_traceback(p)


def test_a_focus_written_without_its_prefix_is_answered_with_the_name_to_write(
        tmp_path: Path) -> None:
    """`--focus patient42` (the ':' left off) said only that it is neither an IRI nor a CURIE
    with a declared prefix; a prefix no file declares did not say which ones they do."""
    folders = [str(ROOT / "workflows"), str(ROOT / "ontologies")]
    for focus, said in (("patient42", "did you mean :patient42?"),
                        ("Patient 42", "write it as <IRI> or as a CURIE with a declared prefix "
                                       "(:, horis:"),
                        # ':patient42.' would not read back (a trailing dot ends the statement)
                        ("patient42.", "write it as <IRI> or as a CURIE with a declared prefix "
                                       "(:, horis:"),
                        ("ehr:patient42", "the files declare no prefix ehr:; write <IRI>, or one "
                                          "of: :, horis:")):
        p = horismos("run", *folders, *WORLD, *TOOLS, "--workflow", ":Triage", "--focus", focus,
                     cwd=tmp_path)
        assert p.returncode == 2 and said in p.stderr, p.stderr
        no_traceback(p)


def test_a_misspelt_workflow_over_folders_lists_the_declared_ones(tmp_path: Path) -> None:
    """`--workflow :Triag` over workflows/ ontologies/ was ":Triag is ambiguous … write the
    full IRI", listing three IRIs no file declares; the typo is what to mend."""
    folders = [str(ROOT / "workflows"), str(ROOT / "ontologies")]
    p = horismos("run", *folders, *WORLD, *TOOLS, "--workflow", ":Triag", "--focus",
                 ":patient42", cwd=tmp_path)
    assert p.returncode == 2
    assert "no workflow :Triag (declared: " in p.stderr and ":Triage" in p.stderr, p.stderr
    assert "ambiguous" not in p.stderr, p.stderr
    no_traceback(p)


def test_a_misspelt_focus_over_folders_is_said_to_be_no_node_of_the_world(
        tmp_path: Path) -> None:
    """`--focus :patient99` over workflows/ ontologies/ was ":patient99 is ambiguous … write
    the full IRI in <…>": no IRI would have mended the typo. The world holds none of them."""
    folders = [str(ROOT / "workflows"), str(ROOT / "ontologies")]
    p = horismos("run", *folders, *WORLD, *TOOLS, "--workflow", ":Triage", "--focus",
                 ":patient99", cwd=tmp_path)
    assert p.returncode == 2
    assert ":patient99 is no node of the world" in p.stderr and "check its spelling" in (
        p.stderr) and "ambiguous" not in p.stderr, p.stderr
    no_traceback(p)


def test_instances_over_folders_names_each_focus_as_the_world_holds_it(tmp_path: Path) -> None:
    folders = [str(ROOT / "workflows"), str(ROOT / "ontologies")]
    out = ["--out", "after.trig"]
    assert horismos("run", *TRIAGE, *WORLD, *TOOLS, "--all", *out, cwd=tmp_path).returncode == 4
    p = horismos("instances", *folders, "--world", "after.trig", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert sorted(r.split()[2] for r in p.stdout.splitlines()[1:]) == [
        ":patient42", ":patient43", ":patient44"], p.stdout
    p = horismos("resume", *TRIAGE, "--world", "after.trig", "--instance", "9b1c2c5e",
                 cwd=tmp_path)
    assert p.returncode == 2
    assert "ids are new on every run" in p.stderr and "horismos instances" in p.stderr
    no_traceback(p)


def test_a_name_is_told_apart_by_one_triple_asked_not_the_nodes_every_triple(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run's output names a node as ``:x`` when only one of the namespaces ``:`` is bound to
    holds it in the world. That was asked by reading every triple of the node (a subject of
    millions in a knowledge graph); it is one triple, ``LIMIT 1``, as ``--focus :x`` asks."""
    from rdflib import URIRef

    from horismos import World, load_definitions
    from horismos._cli_run import RunView
    from horismos._stores.oxigraph import OxigraphStore

    for name, ns in (("a", "http://a.example/"), ("b", "http://b.example/")):
        (tmp_path / f"{name}.ttl").write_text(
            f"@prefix : <{ns}> .\n@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
            f":{name.upper()} a rdfs:Class .\n")
    defs = load_definitions([tmp_path / "a.ttl", tmp_path / "b.ttl"])
    world = World.open("oxigraph")
    x = URIRef("http://a.example/x")
    world.store.load((x, URIRef(f"http://a.example/p{i}"), x, None) for i in range(1000))

    def everything(*args: object, **kwargs: object) -> None:
        raise AssertionError("every triple of the node read")

    monkeypatch.setattr(OxigraphStore, "outgoing", everything)
    view = RunView(defs, world=world)
    assert view.name(x) == ":x"
    assert view.name(URIRef("http://b.example/x")) == "<http://b.example/x>"


# -- 8. text-only MCP servers ------------------------------------------------------------------

GIT = """@prefix : <http://example.org/repos#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .

:Repository a owl:Class .
:path a owl:DatatypeProperty .
:gitStatus a owl:DatatypeProperty .

:git a horis:McpServer ; horis:command "python" ; horis:args ( "-m" "mcp_server_git" ) .

:git.status a horis:Tool ;
    horis:binding "mcp://git/git_status" ; horis:timeout "20s" ;
    horis:takes [ horis:arg [ horis:name "repo" ; horis:type :Repository ; horis:sent false ] ;
                  horis:arg [ horis:name "repo_path" ; horis:type xsd:string ] ] ;
    horis:effect [ horis:subject "repo" ;
        horis:asserts [ horis:property :gitStatus ; horis:type xsd:string ; FROM_TEXT ] ] .

:Inspect a horis:Workflow ; horis:focusType :Repository ; horis:start :Status .
:Status a horis:ActionStep ; horis:tool :git.status ;
    horis:requires "?this :path ?repo_path ." ;
    horis:bind [ horis:arg "repo" ; horis:var "this" ] .
"""


def _git_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["-c", "user.email=a@b", "-c", "user.name=A", "commit", "-q",
                                  "--allow-empty", "-m", "first"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    (repo / "notes.txt").write_text("not yet added\n")
    return repo


def test_a_text_only_mcp_server_lands_its_text_where_declared(tmp_path: Path) -> None:
    """The real mcp-server-git answers git_status with a text block, not JSON."""
    from rdflib import Literal, Namespace

    from horismos import Agent, World

    repo = _git_repo(tmp_path)
    r = Namespace("http://example.org/repos#")
    (tmp_path / "defs.ttl").write_text(GIT.replace("FROM_TEXT", "horis:fromText true"))
    (tmp_path / "world.ttl").write_text(
        f'@prefix : <http://example.org/repos#> .\n:notes a :Repository ; :path "{repo}" .\n')
    agent = Agent.from_files(tmp_path / "defs.ttl")
    world = World.from_files(tmp_path / "world.ttl")
    run = agent.run(world, focus=r.notes)
    assert run.status == "completed", run.error
    (status,) = world.graph.objects(r.notes, r.gitStatus)
    assert isinstance(status, Literal) and "notes.txt" in str(status)
    assert "Untracked" in str(status)


def test_a_text_answer_without_the_declaration_lands_nothing(tmp_path: Path) -> None:
    repo = _git_repo(tmp_path)
    (tmp_path / "defs.ttl").write_text(GIT.replace(" ; FROM_TEXT", ""))
    (tmp_path / "world.ttl").write_text(
        f'@prefix : <http://example.org/repos#> .\n:notes a :Repository ; :path "{repo}" .\n')
    p = horismos("run", "defs.ttl", "--world", "world.ttl", "--all", cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "declare horis:fromText true" in p.stdout


def test_from_text_must_be_a_string_property(tmp_path: Path) -> None:
    (tmp_path / "defs.ttl").write_text(GIT.replace("xsd:string ; FROM_TEXT",
                                                   "xsd:integer ; horis:fromText true"))
    p = horismos("validate", "defs.ttl", cwd=tmp_path)
    assert p.returncode == 1
    assert "horis:fromText" in p.stdout and "xsd:string" in p.stdout


# -- 12. the catalog's documents, declared once with pydantic ----------------------------------

def test_the_published_schemas_are_the_models() -> None:
    from horismos._envelopes import SCHEMA_FILES, schema_text

    for name, make in SCHEMA_FILES.items():
        assert (ROOT / "docs" / name).read_text() == schema_text(make()), (
            f"docs/{name} drifted: python -c \"from horismos._envelopes import write_schemas; "
            "write_schemas('docs')\"")


def test_inventories_and_call_envelopes_fit_their_models(tmp_path: Path) -> None:
    import json

    from horismos._envelopes import CallEnvelope, read_inventory

    read_inventory(json.loads((ROOT / "examples" / "inventory.json").read_text()))
    p = horismos("tools", "inventory", *TRIAGE, cwd=tmp_path)
    assert read_inventory(json.loads(p.stdout)).tools[0].dependencies.mcp_server is None
    for args, status in (('{"patient": ":patient42", "queue": ":urgent"}', "completed"),
                         ('{"patient": ":patient42"}', "refused")):
        p = horismos("tools", "call", "ehr.assign_queue", *TRIAGE, *WORLD, *TOOLS,
                     "--args", args, "--format", "json", cwd=tmp_path)
        assert CallEnvelope.model_validate(json.loads(p.stdout)).status == status


def test_check_names_where_an_inventory_breaks_its_schema(tmp_path: Path) -> None:
    import json

    p = horismos("tools", "inventory", *TRIAGE, cwd=tmp_path)
    broken = json.loads(p.stdout)
    broken["tools"][0]["lane"] = "carrier pigeon"
    (tmp_path / "inv.json").write_text(json.dumps(broken))
    p = horismos("tools", "inventory", *TRIAGE, "--check", "inv.json", cwd=tmp_path)
    assert p.returncode == 1
    assert "not a valid inventory: tools.0.lane: Input should be 'python', 'mcp', 'http' or " \
        "'command'" \
        in p.stdout


def test_wake_takes_the_policy_the_steps_after_the_wait_need(tmp_path: Path) -> None:
    """A step after the wait that commits outside was blocked, told to widen the policy with
    --allow, which wake did not take."""
    common = _leave(tmp_path, "2h")
    (tmp_path / "leave.ttl").write_text(LEAVE.replace("TIMEOUT", "2h").replace(
        """:Approved a horis:WaitStep ;
    horis:reason "Approved: the request waits to be filed." ; horis:wake horis:System ;
    horis:delivery horis:Silent .""",
        """:Approved a horis:ActionStep ; horis:tool :t.file ;
    horis:bind [ horis:arg "request" ; horis:var "this" ] .
:t.file a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "request" ; horis:type :Request ] ] ;
    horis:binding "python:file_request" ; horis:sideEffect horis:ExternalCommit ;
    horis:idempotent true ."""))
    (tmp_path / "hr.py").write_text("def file_request(request):\n    return {}\n")
    (tmp_path / "yes.ttl").write_text("@prefix : <http://example.org/leave#> .\n"
                                      ":req1 :approvedBy :grace .\n")
    assert horismos("load", "yes.ttl", "--store", common[-1], cwd=tmp_path).returncode == 0
    wide = horismos("wake", *common, "--tools", "hr.py", "--allow",
                    "ReadOnly,HostStateWrite,ExternalCommit", cwd=tmp_path)
    assert wide.returncode == 0, wide.stdout + wide.stderr
    assert ":t.file(request=:req1)  completed" in wide.stdout


def test_the_summary_table_gives_a_silent_waits_reason(tmp_path: Path) -> None:
    """A horis:Silent wait publishes no brief; its row still says why it waits."""
    (tmp_path / "wait.ttl").write_text("""
@prefix :      <http://example.org/ward#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
:Patient a owl:Class .
:ok a owl:DatatypeProperty .
:W a horis:Workflow ; horis:focusType :Patient ; horis:start :Hold .
:Hold a horis:WaitStep ; horis:reason "a nurse checks the patient" ;
    horis:wake horis:OperatorInput ; horis:delivery horis:Silent ; horis:until "?this :ok true ." .
:p1 a :Patient .
""")
    p = horismos("run", "wait.ttl", "--all", cwd=tmp_path)
    assert p.returncode == 3, p.stdout + p.stderr
    last = p.stdout.splitlines()[-1]
    assert last.split()[1:] == [":p1", "waiting", ":Hold", "a", "nurse", "checks", "the", "patient"]
