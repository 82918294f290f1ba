"""Preconditions: SPARQL patterns over the world decide whether a step fires and with what.

``?this`` is the instance's focus, pre-bound; values reach queries only as bindings (never
pasted into query text); arguments come from pattern variables by name or ``horis:bind``; the
graph value must be of the argument's type (subclasses, and with owl-rl also inferred types).
"""

from __future__ import annotations

import pytest
from conftest import ASSIGN_TOOL, ENGINE, EX, PREFIXES, TRIAGE, WARD, facts
from rdflib import RDF, Literal, URIRef

from horismos import (
    Agent,
    ArgumentTypeError,
    AuthoringError,
    InstanceFailed,
    PreconditionError,
    UsageError,
    World,
)
from horismos._stores import Change

NOTE_TOOL = """
:t.file a horis:Tool ;
    horis:takes [
        horis:arg [ horis:name "patient" ; horis:type :Patient ] ;
        horis:arg [ horis:name "note" ; horis:type xsd:string ]
    ] ;
    horis:requires "FILTER(STRLEN(?note) > 0)" ;
    horis:effect [ horis:subject "patient" ;
                   horis:asserts [ horis:property :filed ; horis:type xsd:string ] ] ;
    horis:binding "python:file" .

:Notes a horis:Workflow ; horis:focusType :Patient ; horis:start :File .
:File a horis:ActionStep ; horis:tool :t.file ;
    horis:requires "?this :note ?note ." ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""


def test_this_is_the_focus_node(build, recorder):
    # unbound, "?this :acuity ?queue" has two solutions (p1, p2); ?this pins it to the focus
    agent, world = build(TRIAGE, tools={"assign": recorder.tool("assign", {"ref": "R-2"})})

    run = agent.run(world, focus=str(EX.p2))

    assert run.status == "completed"
    assert recorder.args("assign") == [{"patient": EX.p2, "queue": EX.routine}]


@pytest.mark.parametrize(("requires", "fires"), [
    ("?this :acuity ?queue ; :dose 1.50 .", True),  # the world holds 1.5, as Oxigraph keeps it
    ("VALUES ?n { '01'^^xsd:integer } ?this :acuity ?queue ; :doses ?n .", True),
    ("?this :acuity ?queue ; :dose 1.6 .", False),
    ("?this :acuity ?queue FILTER(false)", False),  # rdflib dropped a constant FILTER
])
def test_a_step_fires_on_the_literal_the_world_holds_on_every_store(
    build, recorder, requires, fires
):
    defs = TRIAGE.replace('"?this :acuity ?queue ."', f'"{requires}"')
    agent, world = build(defs, WARD + ":p1 :dose 1.50 ; :doses 1 .\n",
                         tools={"assign": recorder.tool("assign", {"ref": "R-1"})})

    run = agent.run(world, focus=str(EX.p1))

    assert run.status == ("completed" if fires else "blocked")
    assert len(recorder.args("assign")) == int(fires)


INJECTION = 'x" } ; DROP ALL'


def test_a_literal_that_looks_like_sparql_reaches_the_tool_unchanged(build, recorder):
    world_ttl = WARD + ':p1 :note "x\\" } ; DROP ALL" .\n'
    file = recorder.tool("file", lambda patient, note: {"filed": note})
    agent, world = build(NOTE_TOOL, world_ttl, tools={"file": file})
    before = facts(world)

    run = agent.run(world, focus=str(EX.p1))

    assert run.status == "completed"
    # the tool's own horis:requires saw ?note bound to the value, not spliced into its text
    assert recorder.args("file") == [{"patient": EX.p1, "note": INJECTION}]
    assert (EX.p1, EX.filed, Literal(INJECTION)) in world.graph
    assert set(before.splitlines()) <= set(facts(world).splitlines())  # nothing dropped


@pytest.mark.parametrize("iri", [
    "http://example.org/clinic#p';DROP_ALL;#",
    "http://example.org/clinic/p?q=$this&x=(1)*",
])
def test_a_focus_iri_with_sparql_characters_binds_as_a_node(build, recorder, iri):
    agent, world = build(TRIAGE, tools={"assign": recorder.tool("assign", {"ref": "R-3"})})
    focus = URIRef(iri)
    change = Change(add=[(focus, RDF.type, EX.Patient, None), (focus, EX.acuity, EX.urgent, None)])
    if world.store.shared and iri.count("#") > 1:  # not RFC 3987: a SPARQL server refuses it
        with pytest.raises(UsageError, match="not an IRI a SPARQL server accepts"):
            world.commit(change)
        return
    world.commit(change)

    run = agent.run(world, focus=iri)

    assert run.status == "completed"
    assert recorder.args("assign") == [{"patient": focus, "queue": EX.urgent}]
    assert (focus, EX.ref, Literal("R-3")) in world.graph
    assert (EX.p1, EX.ref, None) not in world.graph


@pytest.mark.parametrize("kind", ["oxigraph", "journal"])
def test_a_focus_iri_only_rdflib_takes_runs_on_a_store_on_disk(tmp_path, kind):
    """An IRI RFC 3987 refuses (two '#') that rdflib keeps runs on a store kept on disk as in
    memory: looking for its unfinished instances wrote it into the query's text, which
    Oxigraph's parser refused (a traceback at the run's start)."""
    (tmp_path / "defs.ttl").write_text(PREFIXES + TRIAGE)
    agent = Agent.from_files(tmp_path / "defs.ttl", ENGINE / "clinic.ttl",
                             tools={"assign": lambda patient, queue: {"ref": "R-3"}})
    focus = URIRef("http://example.org/clinic#p';DROP_ALL;#")
    with World.open(f"{kind}:{tmp_path / 'store'}") as world:
        world.commit(Change(add=[(focus, RDF.type, EX.Patient, None),
                                 (focus, EX.acuity, EX.urgent, None),
                                 (EX.urgent, RDF.type, EX.AcuityLevel, None)]))
        run = agent.run(world, focus=str(focus))
        assert run.status == "completed"
        assert (focus, EX.ref, Literal("R-3")) in world.graph


def test_arguments_bind_by_variable_name_and_by_horis_bind(build, recorder):
    defs = ASSIGN_TOOL + """
:Triage a horis:Workflow ; horis:focusType :Patient ; horis:start :Queue .
:Queue a horis:ActionStep ; horis:tool :t.assign ;
    horis:requires "?this :acuity ?level ." ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] ;
    horis:bind [ horis:arg "queue" ; horis:var "level" ] .
"""
    agent, world = build(defs, tools={"assign": recorder.tool("assign", {"ref": "R-1"})})

    run = agent.run(world, focus=str(EX.p1))

    assert run.status == "completed"
    assert recorder.args("assign") == [{"patient": EX.p1, "queue": EX.urgent}]
    assert run.steps[0].args == [{"patient": EX.p1.n3(), "queue": EX.urgent.n3()}]


def test_an_argument_no_pattern_gives_is_refused_before_the_first_step(build, recorder):
    defs = TRIAGE.replace('"?this :acuity ?queue ."', '"?this :acuity ?level ."')
    agent, world = build(defs, tools={"assign": recorder.tool("assign", {"ref": "R-1"})})

    with pytest.raises(AuthoringError) as e:
        agent.run(world, focus=str(EX.p1))

    (problem,) = e.value.problems
    assert 'argument "queue" of :t.assign is required' in problem.message
    assert recorder.count("assign") == 0


def test_a_subclass_instance_satisfies_a_class_typed_argument(build, recorder):
    world_ttl = WARD + ":p9 a :Inpatient ; :acuity :urgent .\n"  # Inpatient ⊑ Patient
    agent, world = build(TRIAGE, world_ttl,
                         tools={"assign": recorder.tool("assign", {"ref": "R-9"})})

    run = agent.run(world, focus=str(EX.p9))

    assert run.status == "completed"
    assert recorder.args("assign") == [{"patient": EX.p9, "queue": EX.urgent}]


CASE = """
:t.place a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "case" ; horis:type :Case ] ;
                  horis:arg [ horis:name "ward" ; horis:type :Ward ] ] ;
    horis:effect [ horis:subject "case" ;
                   horis:asserts [ horis:property :placedAt ; horis:value horis:now ] ] ;
    horis:binding "python:place" .
:Place a horis:Workflow ; horis:focusType :Case ; horis:start :PlaceCase .
:PlaceCase a horis:ActionStep ; horis:tool :t.place ;
    horis:requires "?this :ward ?ward ." ;
    horis:bind [ horis:arg "case" ; horis:var "this" ] .
"""
CASES = """
:c1 a :Case ; :ward :w1 .
:w1 :capacity 3 .            # a :Ward only by rdfs:domain of :capacity
:c2 a :Case ; :ward :w2 .
:w2 a :Unit .                # a :Ward only by owl:equivalentClass
"""


@pytest.mark.parametrize("case", ["c1", "c2"])
def test_owl_rl_infers_types_that_rdfs_mode_does_not(build, recorder, case):
    tools = {"place": recorder.tool("place", None)}
    rdfs_agent, rdfs_world = build(CASE, CASES, tools=tools)
    owl_agent, owl_world = build(CASE, CASES, tools=tools, entailment="owl-rl")

    strict = rdfs_agent.run(rdfs_world, focus=str(EX[case]))
    assert strict.status == "failed"
    assert isinstance(strict.error.cause, ArgumentTypeError)
    assert strict.error.cause.arg == "ward"
    assert recorder.count("place") == 0

    inferred = owl_agent.run(owl_world, focus=str(EX[case]))
    assert inferred.status == "completed"
    assert recorder.count("place") == 1
    assert (EX[case], EX.placedAt, None) in owl_world.graph


def test_owl_rl_accepts_a_focus_whose_type_is_only_inferred(build, recorder):
    # :c3 is a :Case only through the domain of :ward, which only owl-rl applies
    world_ttl = CASES + ":ward rdfs:domain :Case .\n:c3 :ward :w1 .\n"
    tools = {"place": recorder.tool("place", None)}
    rdfs_agent, rdfs_world = build(CASE, world_ttl, tools=tools)
    owl_agent, owl_world = build(CASE, world_ttl, tools=tools, entailment="owl-rl")

    with pytest.raises(UsageError, match="is not a :Case"):
        rdfs_agent.run(rdfs_world, focus=str(EX.c3))
    run = owl_agent.run(owl_world, all=True)
    assert EX.c3 in {i.focus for i in run.instances}
    assert run.status == "completed"


def test_several_solutions_without_for_each_is_a_precondition_error(build, recorder):
    world_ttl = WARD + ":p1 :acuity :routine .\n"  # p1 now has two acuity levels
    agent, world = build(TRIAGE, world_ttl,
                         tools={"assign": recorder.tool("assign", {"ref": "R-1"})})
    before = facts(world)

    run = agent.run(world, focus=str(EX.p1))

    assert run.status == "failed"
    assert run.steps[0].status == "failed"
    assert isinstance(run.error, InstanceFailed)
    assert isinstance(run.error.cause, PreconditionError)
    assert "horis:forEach" in str(run.error.cause)
    assert recorder.count("assign") == 0
    assert facts(world) == before


def test_for_each_fires_once_per_solution_in_one_commit(build, recorder):
    defs = TRIAGE.replace('horis:bind [ horis:arg "patient" ; horis:var "this" ] .',
                          'horis:bind [ horis:arg "patient" ; horis:var "this" ] ;'
                          ' horis:forEach true .')
    world_ttl = WARD + ":p1 :acuity :routine .\n"
    refs = {EX.urgent: "R-1", EX.routine: "R-2"}
    agent, world = build(defs, world_ttl, tools={
        "assign": recorder.tool("assign", lambda patient, queue: {"ref": refs[queue]})})

    run = agent.run(world, focus=str(EX.p1))

    assert run.status == "completed"
    assert sorted(a["queue"] for a in recorder.args("assign")) == sorted(refs)
    (record,) = run.steps
    assert len(record.args) == 2
    effect_graph = world.graph.graph(record.graph)
    assert set(effect_graph.objects(EX.p1, EX.ref)) == {Literal("R-1"), Literal("R-2")}
    assert len(set(effect_graph.objects(EX.p1, EX.queuedAt))) == 1
    graphs = {g for *_, g in world.store.quads() if g and str(g).startswith("urn:horismos:effect")}
    assert graphs == {record.graph}


def test_a_blocked_run_names_the_pattern_that_failed(build, recorder):
    agent, world = build(TRIAGE, tools={"assign": recorder.tool("assign", {"ref": "R-1"})})

    run = agent.run(world, focus=str(EX.p3))

    assert run.status == "blocked"
    assert run.steps[0].status == "blocked"
    assert run.blocked_by == "?this :acuity ?queue ."
    assert run.instances[0].current == EX.Queue
    assert recorder.count("assign") == 0


TWO_PATTERNS = ASSIGN_TOOL + """
:Triage a horis:Workflow ; horis:focusType :Patient ; horis:start :Queue .
:Queue a horis:ActionStep ; horis:tool :t.assign ;
    horis:requires "?this :acuity ?queue ." ;
    horis:requires "?nurse a :Nurse ; :onDuty true ." ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""


@pytest.mark.parametrize(("focus", "world_extra", "failing"), [
    ("p1", "", "?nurse a :Nurse ; :onDuty true ."),     # acuity holds, no nurse on duty
    ("p3", ":n2 a :Nurse ; :onDuty true .", "?this :acuity ?queue ."),  # the other way round
])
def test_with_two_patterns_the_run_names_the_failing_one(build, recorder, focus, world_extra,
                                                          failing):
    world_ttl = WARD.replace(":n1 a :Nurse ; :onDuty true .", world_extra)
    agent, world = build(TWO_PATTERNS, world_ttl,
                         tools={"assign": recorder.tool("assign", {"ref": "R-1"})})

    run = agent.run(world, focus=str(EX[focus]))

    assert run.status == "blocked"
    assert run.blocked_by == failing
    assert recorder.count("assign") == 0


def test_a_tools_own_requires_blocks_it(build, recorder):
    world_ttl = WARD + ':p1 :note "" .\n'  # the tool requires a non-empty note
    agent, world = build(NOTE_TOOL, world_ttl,
                         tools={"file": recorder.tool("file", {"filed": "x"})})

    run = agent.run(world, focus=str(EX.p1))

    assert run.status == "blocked"
    assert run.blocked_by == "FILTER(STRLEN(?note) > 0)"
    assert recorder.count("file") == 0


def test_for_each_results_are_judged_together_against_the_domain_shapes(build, recorder,
                                                                         tmp_path):
    """Each call alone gives p1 one :ref; together they would break the domain's maxCount 1."""
    one_ref = tmp_path / "one-ref.ttl"
    one_ref.write_text("""
@prefix :   <http://example.org/clinic#> .
@prefix sh: <http://www.w3.org/ns/shacl#> .
:OneRefShape a sh:NodeShape ; sh:targetClass :Patient ;
    sh:property [ sh:path :ref ; sh:maxCount 1 ; sh:message "a patient has one reference" ] .
""", encoding="utf-8")
    defs = TRIAGE.replace('horis:bind [ horis:arg "patient" ; horis:var "this" ] .',
                          'horis:bind [ horis:arg "patient" ; horis:var "this" ] ;'
                          ' horis:forEach true .')
    refs = {EX.urgent: "R-1", EX.routine: "R-2"}
    agent, world = build(defs, WARD + ":p1 :acuity :routine .\n", extra=(one_ref,), tools={
        "assign": recorder.tool("assign", lambda patient, queue: {"ref": refs[queue]})})
    before = facts(world)

    run = agent.run(world, focus=str(EX.p1))

    assert run.steps[0].status == "rejected"
    assert [m.message for m in run.steps[0].messages] == ["a patient has one reference"]
    assert facts(world) == before


CHARGE_ONCE = """
:t.charge a horis:Tool ;
    horis:takes [
        horis:arg [ horis:name "patient" ; horis:type :Patient ] ;
        horis:arg [ horis:name "nurse" ; horis:type :Nurse ; horis:sent false ]
    ] ;
    horis:requires "?nurse :onDuty true ." ;
    horis:effect [ horis:subject "patient" ;
        horis:asserts [ horis:property :ref ; horis:type xsd:string ] ] ;
    horis:binding "python:charge" ;
    horis:timeout "2s" ;
    horis:idempotent false .

:Bill a horis:Workflow ; horis:focusType :Patient ; horis:start :Charge .
:Charge a horis:ActionStep ;
    horis:tool :t.charge ;
    horis:forEach true ;
    horis:requires "?this :acuity ?q . ?nurse :onDuty true ." ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""


@pytest.mark.parametrize("for_each", [True, False])
def test_solutions_that_differ_only_in_what_the_tool_is_not_sent_are_one_call(
        build, recorder, for_each):
    """Two nurses on duty give two solutions, but the tool is sent only the patient: one
    payload on one subject, which a tool that is not idempotent carried out twice."""
    defs = CHARGE_ONCE if for_each else CHARGE_ONCE.replace("horis:forEach true ;", "")
    agent, world = build(defs, WARD + ":n2 a :Nurse ; :onDuty true .\n",
                         tools={"charge": recorder.tool("charge", {"ref": "R-1"})})

    run = agent.run(world, focus=str(EX.p1))

    assert run.status == "completed", run.error
    assert recorder.args("charge") == [{"patient": EX.p1}]
    assert list(world.graph.objects(EX.p1, EX.ref)) == [Literal("R-1")]
