"""The gate reads of a node what the shapes judging it name, not everything the node holds.

A patient in a knowledge graph holds thousands of facts; a step that writes its reference must
cost (and trace) the same as on a patient holding three. So the gate reads the node's triples
whose predicates the shapes targeting it name — and still reads every value those shapes
count or compare, the shapes of a subclass the tool's argument does not declare, and the whole
node for a closed shape.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EX, step_events

from horismos import replay

DEFS = """
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .

# idempotent: called, then judged by the gate; a call to a tool that is not is not made on a
# node that breaks a shape already, whatever it returns (tests/test_broken_already.py)
:t.file a horis:Tool ; horis:idempotent true ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [
        horis:subject "patient" ;
        horis:asserts [ horis:property :ref ; horis:type xsd:string ]
    ] ;
    horis:binding "python:file" .

:t.close a horis:Tool ; horis:idempotent true ;
    horis:takes [ horis:arg [ horis:name "case" ; horis:type :Case ] ] ;
    horis:effect [
        horis:subject "case" ;
        horis:asserts [ horis:property :ref ; horis:type xsd:string ]
    ] ;
    horis:binding "python:file" .

:File a horis:Workflow ; horis:focusType :Patient ; horis:start :FileIt .
:FileIt a horis:ActionStep ; horis:tool :t.file ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .

:Close a horis:Workflow ; horis:focusType :Case ; horis:start :CloseIt .
:CloseIt a horis:ActionStep ; horis:tool :t.close ;
    horis:bind [ horis:arg "case" ; horis:var "this" ] .

# counts the node's references: the world's one and the step's
:OneRef a sh:NodeShape ; sh:targetClass :Patient ;
    sh:property [ sh:path :ref ; sh:maxCount 1 ] .

# judges a subclass the tool's argument does not declare
:OneBed a sh:NodeShape ; sh:targetClass :Inpatient ;
    sh:property [ sh:path :bed ; sh:maxCount 1 ] .

# closed: every triple of the node counts
:ClosedCase a sh:NodeShape ; sh:targetClass :Case ;
    sh:closed true ; sh:ignoredProperties ( rdf:type ) ;
    sh:property [ sh:path :ref ] .
"""

NOTES = 300
WORLD = (
    "@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .\n"
    ":p1 a :Patient ; "
    + " ; ".join(f':note "note {i}"' for i in range(NOTES))
    + """ .
:p2 a :Patient ; :ref "R-1" .
:p3 a :Inpatient ; :bed "B1", "B2" .
:c1 a :Case ; :note "stray" .
:c2 a :Case .
"""
)


def _run(build, focus: str, workflow: str = "File"):
    agent, world = build(DEFS, WORLD, tools={"file": lambda **_: {"ref": "R-7"}})
    run = agent.run(world, workflow=str(EX[workflow]), focus=str(EX[focus]))
    return agent, world, run


def _gate_reads(run) -> list[list]:
    (event,) = step_events(run)
    return [r for r in event["reads"] if r[0] == "g"]


def test_a_node_holding_many_facts_is_read_only_for_what_its_shapes_name(build):
    _, _, run = _run(build, "p1")

    assert run.status == "completed"
    reads = _gate_reads(run)
    edges = [edge for read in reads for edge in read[-1]]
    assert edges, "the node's type is read"
    assert not any("note" in p for p, _ in edges), "the notes no shape names are not read"
    assert all(len(read) == 4 for read in reads), "each read says the predicates it asked"


def test_values_in_the_world_are_still_counted(build):
    _, world, run = _run(build, "p2")

    assert run.status == "failed"
    (event,) = step_events(run)
    assert event["status"] == "rejected"
    assert any("ref" in (m.get("path") or "") for m in event["gate"]["messages"])
    assert [str(o) for o in world.graph.objects(EX.p2, EX.ref)] == ["R-1"]


def test_the_shapes_of_a_class_the_argument_does_not_declare_still_judge(build):
    _, _, run = _run(build, "p3")

    (event,) = step_events(run)
    assert event["status"] == "rejected"
    assert any("bed" in (m.get("path") or "") for m in event["gate"]["messages"])


def test_a_closed_shape_reads_the_whole_node(build):
    _, _, stray = _run(build, "c1", "Close")
    _, _, clean = _run(build, "c2", "Close")

    assert step_events(stray)[0]["status"] == "rejected"  # :note is not allowed on a case
    assert step_events(clean)[0]["status"] == "completed"
    assert all(len(read) == 3 for read in _gate_reads(stray)), "read whole"


def test_a_shape_that_says_it_is_not_closed_reads_only_what_it_names(build):
    """``sh:closed false`` is no closed shape: the gate read the whole node for it anyway
    (the verdict was right, the cost and the trace were those of a closed shape)."""
    defs = DEFS.replace("sh:closed true", "sh:closed false")
    agent, world = build(defs, WORLD, tools={"file": lambda **_: {"ref": "R-7"}})
    run = agent.run(world, workflow=str(EX.Close), focus=str(EX.c1))

    assert step_events(run)[0]["status"] == "completed"  # :note is allowed: not closed
    reads = _gate_reads(run)
    assert reads and all(len(read) == 4 for read in reads), "narrowed to what it names"
    assert not any("note" in p for read in reads for p, _ in read[-1])


def test_a_trace_of_narrowed_reads_replays_the_same(build, tmp_path: Path):
    agent, world = build(DEFS, WORLD, tools={"file": lambda **_: {"ref": "R-7"}})
    trace = tmp_path / "file.jsonl"
    run = agent.run(world, workflow=str(EX.File), all=True, trace=trace)
    assert run.status in ("completed", "failed")
    narrowed = [r for e in run.trace.events if e["type"] == "step"
                for r in e["reads"] if r[0] == "g" and len(r) == 4]
    assert narrowed, "the trace holds reads limited to the shapes' predicates"

    report = replay(trace, agent)

    assert not report.diverged, report.first_divergence


# -- shapes that reach past the node: its values' own triples, who points at it ----------------

REACHING = DEFS + """
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .

:Named a sh:NodeShape ; sh:property [ sh:path rdfs:label ; sh:minCount 1 ] .
:Reaching a sh:NodeShape ; sh:targetClass :Patient ;
    sh:property [ sh:path :doctor ; sh:node :Named ] ;                     # the value's label
    sh:property [ sh:path ( :ward :building ) ; sh:maxCount 1 ] ;          # two hops out
    sh:property [ sh:path [ sh:inversePath :guardianOf ] ; sh:maxCount 1 ] . # pointing at it
"""

REACHED = """
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
:d1 rdfs:label "Dr One" .
:d2 :specialty "none" .
:wA :building :east .
:wB :building :east, :west .
:p1 a :Patient ; :doctor :d1 ; :ward :wA .
:p2 a :Patient ; :doctor :d2 ; :ward :wA .
:p3 a :Patient ; :doctor :d1 ; :ward :wB .
:p4 a :Patient ; :doctor :d1 ; :ward :wA .
:g1 :guardianOf :p4 .
:g2 :guardianOf :p4 .
"""


def test_shapes_reaching_past_the_node_are_judged_on_the_world(build, tmp_path: Path):
    """A value's own triples (``sh:node``), a sequence path's second hop and the nodes pointing
    at the subject (an inverse path) are read from the world when a shape walks to them. The
    gate judged them as if empty: it failed :p1, whose data conforms, and let :p4, which has
    two guardians against a maximum of one, through."""
    agent, world = build(REACHING, REACHED, tools={"file": lambda **_: {"ref": "R-7"}})
    status = {}
    for p in ("p1", "p2", "p3", "p4"):
        run = agent.run(world, workflow=str(EX.File), focus=str(EX[p]),
                        trace=tmp_path / f"{p}.jsonl")
        (event,) = step_events(run)
        status[p] = event["status"], sorted(m.get("message") or "" for m in
                                            (event.get("gate") or {}).get("messages", []))
        assert not replay(tmp_path / f"{p}.jsonl", agent).diverged, p
    assert status["p1"] == ("completed", [])
    assert status["p2"][0] == "rejected" and "Named" in str(status["p2"][1])
    assert status["p3"][0] == "rejected" and "More than 1 values" in str(status["p3"][1])
    assert status["p4"][0] == "rejected" and "More than 1 values" in str(status["p4"][1])


def test_pyshacl_sees_what_the_compiled_shapes_read_past_the_node(build, caplog):
    """With the reference on, pyshacl judges the compiled shapes on the same triples: no
    disagreement is logged, and the verdicts stand."""
    import logging

    from horismos._gate import Gate

    agent, world = build(REACHING, REACHED, tools={"file": lambda **_: {"ref": "R-7"}})
    agent._gate = Gate(agent.definitions, reference=True)
    with caplog.at_level(logging.WARNING, logger="horismos.gate"):
        done = [agent.run(world, workflow=str(EX.File), focus=str(EX[p])).status
                for p in ("p1", "p2", "p4")]
    assert done == ["completed", "failed", "failed"]
    assert "disagree" not in caplog.text


# -- shapes only pyshacl judges read past the node too ------------------------------------------

def sparql_shape(name: str, message: str, where: str) -> str:
    """A node shape on :Patient whose one constraint is SPARQL: a shape only pyshacl judges."""
    return f"""
:{name} a sh:NodeShape ; sh:targetClass :Patient ;
    sh:sparql [
        sh:message "{message}" ;
        sh:prefixes [ sh:declare [ sh:prefix "" ;
                                   sh:namespace "http://example.org/clinic#"^^xsd:anyURI ] ] ;
        sh:select \"\"\"SELECT $this ?value WHERE {{ {where} }}\"\"\"
    ] .
"""


ALLERGY = DEFS + sparql_shape(
    "NoAllergen", "the prescriber is allergic to what the reference names",
    "$this :ref ?value . $this :doctor ?d . ?d :allergy ?value . "
    "FILTER NOT EXISTS { ?g :guardianOf $this . ?g :waives ?value }")

ALLERGIC = """
:d1 :allergy "R-7" .
:d2 :allergy "R-8" .
:p1 a :Patient ; :doctor :d1 .
:p2 a :Patient ; :doctor :d2 .
:p3 a :Patient ; :doctor :d1 .
:g3 :guardianOf :p3 ; :waives "R-7" .
"""


def test_a_shape_only_pyshacl_judges_reads_two_hops_away_and_who_points_at_the_node(
        build, tmp_path: Path):
    """A SPARQL constraint walks from the subject to its doctor's allergies, and to whoever
    points at it. pyshacl was given the subject's own triples and its values' types only, so
    it saw no allergy and passed :p1, whose doctor is allergic to what the step writes: the
    fact landed. Now what it asks for is read from the world (and recorded: each trace
    replays), so :p1 is refused with the world as it was, :p2 lands, and :p3, whose guardian
    waives it, lands."""
    agent, world = build(ALLERGY, ALLERGIC, tools={"file": lambda **_: {"ref": "R-7"}})
    before = world.canonical()
    status = {}
    for p in ("p1", "p2", "p3"):
        run = agent.run(world, workflow=str(EX.File), focus=str(EX[p]),
                        trace=tmp_path / f"{p}.jsonl")
        (event,) = step_events(run)
        status[p] = event["status"], [m.get("message") for m in event["gate"]["messages"]]
        assert not replay(tmp_path / f"{p}.jsonl", agent).diverged, p
        if p == "p1":
            assert facts_of(world, "p1") == facts_of_text(before, "p1")
    assert status["p1"] == ("rejected",
                            ["the prescriber is allergic to what the reference names"])
    assert status["p2"] == ("completed", [])
    assert status["p3"] == ("completed", [])


def facts_of(world, node: str) -> list[str]:
    return facts_of_text(world.canonical(), node)


def facts_of_text(canonical: str, node: str) -> list[str]:
    return sorted(line for line in canonical.splitlines() if line.startswith(f"<{EX[node]}>"))


UNIQUE_REF = sparql_shape("UniqueRef", "another node holds this reference",
                          "$this :ref ?value . ?other :ref ?value . FILTER (?other != $this)")
NOT_REVOKED = sparql_shape("NotRevoked", "the reference is revoked",
                           "$this :ref ?value . ?list :revoked ?gone . "
                           "FILTER (STR(?gone) = ?value)")
NOT_LISTED = sparql_shape("NotListed", "the reference is on a revocation list",
                          "$this :ref ?value . ?list a :RevocationList . "
                          "?list :revoked ?gone . FILTER (STR(?gone) = ?value)")


@pytest.mark.parametrize(("shape", "ref", "status"), [
    (UNIQUE_REF, "R-1", "rejected"),   # :p2 holds R-1: found by the value (who holds it)
    (UNIQUE_REF, "R-9", "completed"),
    (NOT_REVOKED, "R-5", "rejected"),  # found by scanning :revoked, as the query asks
    (NOT_REVOKED, "R-9", "completed"),
    (NOT_LISTED, "R-5", "rejected"),   # found by the instances of :RevocationList
    (NOT_LISTED, "R-9", "completed"),
])
def test_a_shape_only_pyshacl_judges_sees_who_else_holds_a_value_and_a_scanned_property(
        build, tmp_path: Path, shape: str, ref: str, status: str):
    """A uniqueness check (another node with the same value) and a check against every use of
    a property: pyshacl saw neither, and a duplicate or revoked reference landed."""
    world = (':p1 a :Patient .\n:p2 a :Patient ; :ref "R-1" .\n'
             ':list1 a :RevocationList ; :revoked "R-5" .\n')
    agent, world_ = build(DEFS + shape, world, tools={"file": lambda **_: {"ref": ref}})
    run = agent.run(world_, workflow=str(EX.File), focus=str(EX.p1), trace=tmp_path / "t.jsonl")
    (event,) = step_events(run)
    assert event["status"] == status, event["gate"]
    assert not replay(tmp_path / "t.jsonl", agent).diverged


def test_what_the_gate_reads_is_kept_per_targeted_class_not_per_kind_of_node(build):
    """What the gate reads of a node was worked out once per set of its types and kept: in a
    world of many classes (each node also of its taxonomy's leaf) a process that lives for
    many events kept an entry for each new kind of node it judged, without end. Only the
    classes a shape targets decide it, so only they key it."""
    kinds = "".join(f":k{i} a :Patient, :Kind{i} .\n" for i in range(30))
    agent, world = build(DEFS, WORLD + kinds, tools={"file": lambda **_: {"ref": "R-7"}})
    for i in range(30):
        assert agent.run(world, workflow=str(EX.File), focus=str(EX[f"k{i}"])).status == (
            "completed")
    assert len(agent._gate._reads) <= 2, len(agent._gate._reads)
    # a class a shape targets still keys its own reads: the inpatient's beds are judged
    _, _, run = _run(build, "p3")
    assert step_events(run)[0]["status"] == "rejected"


_THREADED_GATE = r'''
import json, sys, threading
from pathlib import Path
import horismos

here = Path(sys.argv[1])
prefixes = """@prefix : <http://example.org/clinic#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
"""
# a validator pyshacl runs per value: the load judges each shape on an empty graph, where the
# doctor has no value, so the first to parse its text is a call's gate
(here / "defs.ttl").write_text(prefixes + """
:Patient a owl:Class . :Doctor a owl:Class . :doctor a owl:ObjectProperty .
:t.assign a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:subject "patient" ;
                   horis:asserts [ horis:property :doctor ; horis:type :Doctor ] ] ;
    horis:binding "python:assign" .
:MaxPatients a sh:ConstraintComponent ;
    sh:parameter [ sh:path :maxPatients ] ;
    sh:validator [ a sh:SPARQLAskValidator ; sh:message "the doctor has too many patients" ;
        sh:prefixes [ sh:declare [ sh:prefix "" ;
                                   sh:namespace "http://example.org/clinic#"^^xsd:anyURI ] ] ;
        sh:ask \"\"\"ASK { { SELECT (COUNT(DISTINCT ?p) AS ?n) WHERE {
            OPTIONAL { ?p :doctor $value FILTER(REGEX(STR(?p), "^Y", "i")) } } }
            FILTER (?n <= $maxPatients) }\"\"\" ] .
:HasDoctor a sh:NodeShape ; sh:targetClass :Patient ;
    sh:property [ sh:path :doctor ; :maxPatients 100 ] .
""")
(here / "world.ttl").write_text(prefixes + ":p0 a :Patient . :p1 a :Patient . :p2 a :Patient . "
                                ":p3 a :Patient . :d1 a :Doctor .\n")
agent = horismos.Agent.from_files(
    here / "defs.ttl",
    tools={"assign": lambda patient: {"doctor": "http://example.org/clinic#d1"}})
at_once = threading.Barrier(4)
seen = {}

def call(i):
    world = horismos.World.from_files(here / "world.ttl")
    at_once.wait()
    try:
        seen[i] = agent.catalog.call("t.assign", {"patient": f":p{i}"}, world,
                                     allow=["ReadOnly", "HostStateWrite"]).status
    except Exception as e:
        seen[i] = repr(e)

threads = [threading.Thread(target=call, args=(i,)) for i in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps(sorted(seen.values())))
'''


def test_catalog_calls_from_threads_judging_a_shape_only_pyshacl_parses_all_land(
        tmp_path: Path) -> None:
    """Four threads of a fresh process each make a catalog call whose gate hands pyshacl a
    custom constraint component's SPARQL validator, never parsed before: rdflib parsed its
    text for pyshacl outside Horismos's parse lock, and pyparsing's grammar, setting itself
    up under them, failed every call with a TypeError (after its tool had acted)."""
    done = subprocess.run([sys.executable, "-c", _THREADED_GATE, str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["completed"] * 4, done.stdout
