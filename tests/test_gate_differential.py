"""The gate's compiled SHACL check and pyshacl, the reference, say the same on random data.

For the project's own domain shapes (ontologies/ehr.ttl, travel.ttl) and a shapes file that
uses every constraint of the compiled subset without ``sh:message`` (so pyshacl's own wording
is compared too), hypothesis draws a subject's values — pattern-matching and random strings,
ill-typed, language-tagged and numeric literals, nodes of the right, a sub- and a wrong class,
blank nodes — and the compiled verdict must equal pyshacl's, message for message; values are
also held to shapes through sh:node, sh:and, sh:or, sh:xone and sh:not, to closed shapes, and
along sequence, alternative, inverse and repeated property paths.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rdflib import RDF, SH, XSD, BNode, Literal, Namespace, URIRef
from rdflib.term import Node

from horismos import Definitions, load_definitions
from horismos._gate import Gate
from horismos._shacl import CompiledShape

ROOT = Path(__file__).resolve().parent.parent
EX = Namespace("http://example.org/core#")
EHR = Namespace("http://example.org/ehr#")
TRAVEL = Namespace("http://example.org/travel#")

CORE = """
@prefix : <http://example.org/core#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .

:Thing a owl:Class .
:Kind a owl:Class .
:SubKind a owl:Class ; rdfs:subClassOf :Kind .
:Other a owl:Class .

:ThingShape a sh:NodeShape ;
    sh:targetClass :Thing ;
    sh:nodeKind sh:IRI ;
    sh:property [ sh:path :code ; sh:datatype xsd:string ; sh:pattern "^ab+c$" ;
                  sh:flags "i" ; sh:minLength 3 ; sh:maxLength 5 ; sh:maxCount 2 ] ;
    sh:property [ sh:path :score ; sh:minInclusive 0 ; sh:maxExclusive 10 ;
                  sh:datatype xsd:integer ; sh:minCount 1 ] ;
    sh:property [ sh:path :ratio ; sh:minExclusive 0.5 ; sh:maxInclusive 2.5 ] ;
    sh:property [ sh:path :kind ; sh:class :Kind ; sh:nodeKind sh:BlankNodeOrIRI ] ;
    sh:property [ sh:path :two ; sh:class :Kind, :Other ] ;
    sh:property [ sh:path :colour ; sh:in ( "red" "green" :blue 3 ) ] ;
    sh:property [ sh:path :flag ; sh:hasValue true ; sh:datatype xsd:boolean ] ;
    sh:property [ sh:path :day ; sh:datatype xsd:date ; sh:maxInclusive "2030-01-01"^^xsd:date ] ;
    sh:property [ sh:path :label ; sh:nodeKind sh:Literal ; sh:pattern "^[a-z]" ;
                  sh:pattern "z$" ] .

# shapes the ThingShape's values are held to (logical and shape-based constraints)
:NameShape a sh:NodeShape ; sh:nodeKind sh:Literal ; sh:pattern "^[A-Z]" .
:TypedShape a sh:NodeShape ; sh:property [ sh:path rdf:type ; sh:hasValue :Kind ] .
:ClassShape a sh:NodeShape ; sh:property [ sh:path rdfs:subClassOf ; sh:minCount 1 ] .
:ThingShape
    sh:property [ sh:path :alias ; sh:node :NameShape ] ;
    sh:property [ sh:path :part ; sh:or ( [ sh:class :Kind ] [ sh:datatype xsd:integer ] ) ] ;
    sh:property [ sh:path :part ; sh:not [ sh:class :Other ] ] ;
    sh:property [ sh:path :part ; sh:xone ( [ sh:class :Kind ] [ sh:class :SubKind ] ) ] ;
    sh:property [ sh:path :alias ; sh:and ( :NameShape [ sh:maxLength 3 ] ) ] ;
    sh:property [ sh:path :kind ; sh:node :TypedShape ] ;
    sh:property [ sh:path :title ; sh:languageIn ( "en" "DE" ) ; sh:uniqueLang true ;
                  sh:equals :alias ] ;
    sh:property [ sh:path :code ; sh:disjoint :label ; sh:lessThanOrEquals :label ] ;
    sh:property [ sh:path :score ; sh:lessThan :ratio ] ;
    sh:property [ sh:path ( :kind rdf:type [ sh:zeroOrMorePath rdfs:subClassOf ] ) ;
                  sh:maxCount 2 ] ;
    sh:property [ sh:path [ sh:alternativePath ( :code :label ) ] ; sh:maxCount 3 ;
                  sh:nodeKind sh:Literal ] ;
    sh:property [ sh:path ( :kind rdf:type [ sh:inversePath rdf:type ] ) ; sh:minCount 1 ] ;
    sh:property [ sh:path [ sh:inversePath :part ] ; sh:maxCount 0 ] ;
    sh:property [ sh:path [ sh:zeroOrOnePath :part ] ; sh:class :Thing ] ;
    sh:property [ sh:path ( :two [ sh:oneOrMorePath rdf:type ] ) ; sh:hasValue :Kind ] ;
    sh:property [ sh:path :kind ;
                  sh:node [ sh:property [ sh:path rdf:type ; sh:node :ClassShape ] ] ] .

:ClosedShape a sh:NodeShape ;
    sh:targetClass :Thing ;
    sh:closed true ;
    sh:ignoredProperties ( rdf:type :score :ratio :kind :two :colour :flag :day :label :part
                           :title ) ;
    sh:property [ sh:path :code ] ;
    sh:property [ sh:path :part ; sh:node :ClosedValue ] .
:ClosedValue a sh:NodeShape ; sh:closed true ; sh:ignoredProperties ( rdfs:label ) .

:ValueShape a sh:NodeShape ;
    sh:targetNode :special ;
    sh:class :Kind ;
    sh:property [ sh:path :code ; sh:minCount 1 ; sh:message "a special node has a code" ] .
"""

WORLD_TYPES: dict[Node, set[Node]] = {
    EX.k1: {EX.Kind}, EX.k2: {EX.SubKind}, EX.o1: {EX.Other}, EX.both: {EX.Kind, EX.Other},
    EX.blue: set(), EX.special: {EX.SubKind},
    TRAVEL.f1: {TRAVEL.Flight}, TRAVEL.b2: {TRAVEL.Booking}, EHR.p2: {EHR.Nurse},
}


def types_of(node: Node) -> set[Node]:
    return WORLD_TYPES.get(node, set())


@pytest.fixture(scope="module")
def core(tmp_path_factory: pytest.TempPathFactory) -> Definitions:
    path = tmp_path_factory.mktemp("core") / "core.ttl"
    path.write_text(CORE, encoding="utf-8")
    return load_definitions([path])


DOMAINS = {
    "ehr": ((ROOT / "workflows" / "triage.ttl", ROOT / "ontologies" / "ehr.ttl"),
            EHR.Patient, [EHR.queueRef]),
    "travel": ((ROOT / "workflows" / "rebooking.ttl", ROOT / "ontologies" / "travel.ttl"),
               TRAVEL.Booking, [TRAVEL.operatorChoice, TRAVEL.rebookedOn, TRAVEL.ticketRef]),
}
CORE_PATHS = [EX.code, EX.score, EX.ratio, EX.kind, EX.two, EX.colour, EX.flag, EX.day,
              EX.label, EX.alias, EX.part, EX.title]
PATTERNS = ["^Q-[A-Z]+-[0-9]+$", "^TK-[0-9]+$", "^ab+c$", "^[a-z]", "^[A-Z][a-z]?$"]


def _literals() -> st.SearchStrategy[Node]:
    text = st.text(alphabet="abcABzQTK-0123 ", max_size=7)
    return st.one_of(
        st.one_of([st.from_regex(p, fullmatch=True) for p in PATTERNS]).map(Literal),
        text.map(Literal),
        st.builds(lambda t, lang: Literal(t, lang=lang), text,
                  st.sampled_from(["en", "de", "de-AT", "EN-gb", "fr"])),
        text.map(lambda t: Literal(t, datatype=XSD.string)),
        st.integers(-3, 12).map(Literal),
        st.decimals(-1, 4, places=2).map(lambda d: Literal(d, datatype=XSD.decimal)),
        st.floats(-1, 4, allow_nan=False).map(lambda f: Literal(f, datatype=XSD.double)),
        st.booleans().map(Literal),
        st.sampled_from(["2029-05-01", "2031-01-01", "2024-13-45"]).map(
            lambda d: Literal(d, datatype=XSD.date)),
        st.sampled_from(["x1", "3.5"]).map(lambda t: Literal(t, datatype=XSD.integer)),
        st.sampled_from([Literal("red"), Literal("green", lang="en"), Literal(3)]))


VALUES = st.one_of(_literals(), st.sampled_from([*WORLD_TYPES, EX.nowhere, EX.t1]),
                   st.builds(BNode))


def _data(paths: list[URIRef]) -> st.SearchStrategy[list[tuple[URIRef, list[Node]]]]:
    return st.lists(st.tuples(st.sampled_from(paths), st.lists(VALUES, max_size=3)),
                    max_size=len(paths) + 1)


_GATES: dict[str, tuple[Gate, Gate]] = {}  # by definitions digest


def _judge_both(defs: Definitions, subject: Node, added: list[tuple[Node, Node, Node]]):
    if defs.digest not in _GATES:
        reference = Gate(defs)
        reference._compiled = {}  # pyshacl for every shape, as before the compiled engine
        _GATES[defs.digest] = (Gate(defs), reference)
    return tuple(_verdict(gate, subject, added) for gate in _GATES[defs.digest])


def _verdict(gate: Gate, subject: Node, added: list[tuple[Node, Node, Node]]):
    """The gate's verdict, or the error pyshacl raises (a blank node given to sh:lessThan, say:
    the compiled engine leaves such data to pyshacl, so both raise the same)."""
    try:
        return gate.domain(subject, added, [], types_of)
    except Exception as e:
        return type(e).__name__, str(e)


def _triples(subject: Node, cls: URIRef, drawn: list[tuple[URIRef, list[Node]]],
             ) -> list[tuple[Node, Node, Node]]:
    return [(subject, RDF.type, cls)] + [(subject, p, v) for p, vs in drawn for v in vs]


def test_the_compiled_engine_takes_every_shape_here(core: Definitions) -> None:
    for defs in [core, *(load_definitions(files) for files, _, _ in DOMAINS.values())]:
        gate = Gate(defs)
        targeted = {s for shapes in gate._targets.by_class.values() for s in shapes}
        assert targeted and targeted <= set(gate._compiled)
        assert all(isinstance(c, CompiledShape) for c in gate._compiled.values())


@pytest.mark.parametrize("domain", list(DOMAINS))
@settings(max_examples=100, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_project_shapes_same_verdict_and_messages(domain: str, data: st.DataObject) -> None:
    files, cls, paths = DOMAINS[domain]
    defs = _defs(files)
    added = _triples(URIRef(str(cls) + "-1"), cls, data.draw(_data(paths)))
    fast, reference = _judge_both(defs, added[0][0], added)
    assert fast == reference


@settings(max_examples=300, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(drawn=_data(CORE_PATHS), subject=st.sampled_from([EX.t1, EX.special]))
def test_core_shapes_same_verdict_and_messages(core: Definitions, drawn, subject) -> None:
    added = _triples(subject, EX.Thing, drawn)
    fast, reference = _judge_both(core, subject, added)
    assert fast == reference


def test_a_disagreement_is_logged_and_the_stricter_verdict_wins(
        core: Definitions, caplog: pytest.LogCaptureFixture) -> None:
    gate = Gate(core, reference=True)
    shape = EX.ThingShape
    broken = gate._compiled[shape]
    gate._compiled[shape] = CompiledShape(broken.node, None, None, None, (), (), False)  # says yes
    added = [(EX.t1, RDF.type, EX.Thing), (EX.t1, EX.code, Literal("nope"))]

    with caplog.at_level(logging.WARNING, logger="horismos.gate"):
        verdict = gate.domain(EX.t1, added, [], types_of)

    assert not verdict.conforms
    assert {m.path for m in verdict.messages} >= {":code", ":score"}
    assert "disagree" in caplog.text and ":t1" in caplog.text


def test_reference_mode_agrees_silently(core: Definitions,
                                        caplog: pytest.LogCaptureFixture) -> None:
    gate = Gate(core, reference=True)
    added = [(EX.t1, RDF.type, EX.Thing), (EX.t1, EX.code, Literal("abbc")),
             (EX.t1, EX.flag, Literal(True)), (EX.t1, EX.score, Literal(11))]
    with caplog.at_level(logging.WARNING, logger="horismos.gate"):
        verdict = gate.domain(EX.t1, added, [], types_of)
    assert "Value is not < Literal(\"10\", datatype=xsd:integer)" in [
        m.message for m in verdict.messages]
    assert not caplog.text


_DEFS: dict[tuple[Path, ...], Definitions] = {}


def _defs(files: tuple[Path, ...]) -> Definitions:
    if files not in _DEFS:
        _DEFS[files] = load_definitions(files)
    return _DEFS[files]


def test_unused_sh_terms_keep_a_shape_with_pyshacl(tmp_path: Path) -> None:
    path = tmp_path / "or.ttl"
    path.write_text(CORE.replace("sh:nodeKind sh:IRI ;", "sh:property [ sh:path :code ; "
                                 "sh:qualifiedValueShape [ sh:datatype xsd:string ] ; "
                                 "sh:qualifiedMinCount 1 ] ;"))
    gate = Gate(load_definitions([path]))
    assert EX.ThingShape not in gate._compiled and EX.ValueShape in gate._compiled
    assert SH  # the namespace the subset is read from


def test_rare_findings_word_the_same(core: Definitions) -> None:
    """Findings random data seldom draws: two values sharing a language, a disjoint clash."""
    added = [(EX.t1, RDF.type, EX.Thing), (EX.t1, EX.score, Literal(1)),
             (EX.t1, EX.flag, Literal(True)),
             (EX.t1, EX.title, Literal("a", lang="en")), (EX.t1, EX.title, Literal("b", lang="EN")),
             (EX.t1, EX.alias, Literal("a", lang="en")), (EX.t1, EX.alias, Literal("b", lang="EN")),
             (EX.t1, EX.code, Literal("abc")), (EX.t1, EX.label, Literal("abc"))]
    fast, reference = _judge_both(core, EX.t1, added)
    assert fast == reference
    assert {m.message.split(" ")[0] for m in fast.messages} >= {"More", "Value"}


SH_IN = """
@prefix :   <http://example.org/in#> .
@prefix sh: <http://www.w3.org/ns/shacl#> .
:Ticket a <http://www.w3.org/2002/07/owl#Class> .
:TicketShape a sh:NodeShape ; sh:targetClass :Ticket ;
    sh:property [ sh:path :level ; sh:in ( "low" "medium" "high" "urgent" "blocker" ) ] .
"""
SH_IN_JUDGE = """
import sys
from rdflib import RDF, Literal, URIRef
from horismos import load_definitions
from horismos._gate import Gate
defs = load_definitions([sys.argv[1]])
t, ns = URIRef("http://example.org/in#t1"), "http://example.org/in#"
for gate in (Gate(defs), Gate(defs, reference=True)):
    verdict = gate.domain(t, [(t, RDF.type, URIRef(ns + "Ticket")),
                              (t, URIRef(ns + "level"), Literal("extreme"))], [],
                          lambda n: set())
    print(verdict.messages[0].message)
"""


def _worded_in_every_process(path: Path, seeds: tuple[str, ...]) -> set[str]:
    """How the compiled engine and pyshacl word the rejection of SH_IN_JUDGE's ticket under
    the shapes of ``path``, in one process per hash seed."""
    import subprocess
    import sys

    worded = set()
    for seed in seeds:
        done = subprocess.run([sys.executable, "-c", SH_IN_JUDGE, str(path)],
                              env={**os.environ, "PYTHONHASHSEED": seed}, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        worded.update(done.stdout.splitlines())
    return worded


def test_an_sh_in_rejection_is_worded_the_same_in_every_process(tmp_path: Path) -> None:
    """pyshacl lists sh:in's values in set order, which a process's hash seed decides; a
    replay in another process must word the same rejection the same way."""
    (tmp_path / "in.ttl").write_text(SH_IN)
    worded = _worded_in_every_process(tmp_path / "in.ttl", ("1", "2", "3"))
    assert len(worded) == 1, worded


SH_CLASSES = """
@prefix :   <http://example.org/in#> .
@prefix sh: <http://www.w3.org/ns/shacl#> .
:Ticket a <http://www.w3.org/2002/07/owl#Class> .
:TicketShape a sh:NodeShape ; sh:targetClass :Ticket ;
    sh:property [ sh:path :level ; sh:class :Zeta, :Alpha, :Mu, :Beta, :Omega ] .
"""


def test_an_sh_class_rejection_is_worded_the_same_in_every_process(tmp_path: Path) -> None:
    """Several sh:class values are listed in the order the shapes graph holds them, which for
    a loaded graph followed string hashes: the same rejection was worded two ways, and the
    compiled engine and pyshacl could list them differently in one process."""
    (tmp_path / "classes.ttl").write_text(SH_CLASSES)
    worded = _worded_in_every_process(tmp_path / "classes.ttl", ("1", "2", "3", "4"))
    assert len(worded) == 1, worded
    assert "(<http://example.org/in#Alpha>, <http://example.org/in#Beta>," in worded.pop()
