"""The gate's compiled effect check says exactly what pyshacl says for the generated shape.

``Gate.judge`` checks a tool's result against its declared effect in plain Python.
``_compile_effect`` below generates the closed SHACL node shape that check stands for, and is
the oracle here: for each effect and result, pyshacl run on the generated shape (on the small
graph the gate used to build for it) and the gate give the same messages, in the same order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pyshacl.graph_abstraction import DataGraph
from pyshacl.pytypes import SHACLExecutor
from pyshacl.shapes_graph import ShapesGraph
from rdflib import RDF, RDFS, SH, XSD, BNode, Graph, Literal, Namespace, URIRef
from rdflib.term import Node

from horismos import Definitions, load_definitions
from horismos._errors import ShaclMessage
from horismos._gate import Gate, _message
from horismos._gate_effect import (
    _CLASS,
    _CLOSED,
    _DATATYPE,
    _FIXED,
    _ONE,
    _REQUIRED,
    effect_shape_iri,
)
from horismos._model import Tool


def _compile_effect(tool: Tool, g: Graph, defs: Definitions) -> URIRef:
    """The effect as a closed SHACL node shape, added to ``g``: what the compiled check
    stands for."""
    assert tool.effect is not None
    shape = effect_shape_iri(tool)
    g.add((shape, RDF.type, SH.NodeShape))
    g.add((shape, SH.closed, Literal(True)))
    g.add((shape, SH.message, Literal(_CLOSED.format(tool=defs.name(tool.iri)))))
    for a in tool.effect.asserts:
        pname = defs.name(a.property)

        def prop_shape(message: str, **constraints: Node) -> None:
            ps = BNode()
            g.add((shape, SH.property, ps))
            g.add((ps, SH.path, a.property))  # noqa: B023
            g.add((ps, SH.message, Literal(message)))
            for k, v in constraints.items():
                g.add((ps, SH[k], v))

        if a.value is not None:
            prop_shape(_FIXED.format(p=pname), maxCount=Literal(0))
            continue
        assert a.type is not None
        if a.is_class:
            prop_shape(_CLASS.format(p=pname, t=defs.name(a.type)),
                       **{"class": a.type}, nodeKind=SH.BlankNodeOrIRI)
        else:
            prop_shape(_DATATYPE.format(p=pname, t=defs.name(a.type)), datatype=a.type)
        if not a.optional:
            prop_shape(_REQUIRED.format(p=pname), minCount=Literal(1))
        if not a.many:
            prop_shape(_ONE.format(p=pname), maxCount=Literal(1))
    g.add((shape, SH.ignoredProperties, RDF.nil))
    return shape


EX = Namespace("http://example.org/effect#")

DEFS = """\
@prefix :      <http://example.org/effect#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdf:   <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Person a owl:Class .
:Staff a owl:Class ; rdfs:subClassOf :Person .
:Clinician a owl:Class ; rdfs:subClassOf :Staff .
:Nurse a owl:Class ; rdfs:subClassOf :Clinician .
:Patient a owl:Class ; rdfs:subClassOf :Person .

:t.record a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "person" ; horis:type :Person ] ] ;
    horis:effect [
        horis:subject "person" ;
        horis:asserts [ horis:property :recordedAt ; horis:value horis:now ] ;
        horis:asserts [ horis:property :ref ; horis:type xsd:string ] ;
        horis:asserts [ horis:property :score ; horis:type xsd:integer ; horis:optional true ] ;
        horis:asserts [ horis:property :seenOn ; horis:type xsd:date ; horis:optional true ] ;
        horis:asserts [ horis:property :weight ; horis:type xsd:decimal ; horis:optional true ] ;
        horis:asserts [ horis:property :visits ; horis:type xsd:nonNegativeInteger ;
                        horis:optional true ] ;
        horis:asserts [ horis:property :consented ; horis:type xsd:boolean ; horis:optional true ] ;
        horis:asserts [ horis:property :carer ; horis:type :Staff ; horis:optional true ] ;
        horis:asserts [ horis:property :team ; horis:type :Staff ;
                        horis:optional true ; horis:many true ] ;
        horis:asserts [ horis:property :tag ; horis:type xsd:string ;
                        horis:optional true ; horis:many true ] ;
        horis:asserts [ horis:property :note ; horis:type rdf:langString ; horis:optional true ] ;
        horis:asserts [ horis:property :anything ; horis:type rdfs:Literal ; horis:optional true ]
    ] ;
    horis:binding "python:record" .

:t.assign a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [
        horis:asserts [ horis:property :nurse ; horis:type :Nurse ] ;
        horis:asserts [ horis:property :flagged ; horis:value true ]
    ] ;
    horis:binding "python:assign" .
"""

# the world's rdf:type facts, as the runner's types_of would give them
TYPES: dict[Node, set[Node]] = {
    EX.n1: {EX.Nurse}, EX.c1: {EX.Clinician}, EX.s1: {EX.Staff}, EX.p1: {EX.Patient},
    EX.x1: {EX.Person, EX.Nurse}, EX.r1: {RDFS.Resource},
}

B = BNode("b1")

# (tool, subject, result) — every result is judged by both and must read the same
CASES: dict[str, tuple[str, URIRef, Any]] = {
    # datatype
    "datatype": ("record", EX.n1, {"ref": "R-1"}),
    "typed xsd:string": ("record", EX.n1, {"ref": Literal("R-1", datatype=XSD.string)}),
    "integer for a string": ("record", EX.n1, {"ref": 7}),
    "float for a string": ("record", EX.n1, {"ref": 7.5}),
    "boolean for an integer": ("record", EX.n1, {"ref": "R-1", "score": True}),
    "integer": ("record", EX.n1, {"ref": "R-1", "score": 3}),
    "decimal from a float": ("record", EX.n1, {"ref": "R-1", "weight": 71.5}),
    "integer for a decimal": ("record", EX.n1, {"ref": "R-1", "weight": 71}),
    "date": ("record", EX.n1, {"ref": "R-1", "seenOn": "2024-05-01"}),
    "node for a datatype": ("record", EX.n1, {"ref": EX.n1}),
    "blank node for a datatype": ("record", EX.n1, {"ref": B}),
    "rdfs:Literal takes any literal": ("record", EX.n1, {"ref": "R-1", "anything": 5}),
    "rdfs:Literal takes no node": ("record", EX.n1, {"ref": "R-1", "anything": EX.n1}),
    # ill-typed literals
    "ill-typed integer": ("record", EX.n1, {"ref": "R-1", "score": "high"}),
    "ill-typed date": ("record", EX.n1, {"ref": "R-1", "seenOn": "2024-13-45"}),
    "ill-typed decimal": ("record", EX.n1, {"ref": "R-1", "weight": "heavy"}),
    "ill-typed, though it parses": ("record", EX.n1, {"ref": "R-1", "visits": "-3"}),
    "ill-typed boolean": ("record", EX.n1, {"ref": "R-1", "consented": "maybe"}),
    "well-typed boolean": ("record", EX.n1, {"ref": "R-1", "consented": True}),
    "well-typed nonNegativeInteger": ("record", EX.n1, {"ref": "R-1", "visits": 3}),
    # language tags
    "language-tagged for a string": ("record", EX.n1, {"ref": Literal("R-1", lang="en")}),
    "language-tagged for rdf:langString": ("record", EX.n1, {
        "ref": "R-1", "note": Literal("hallo", lang="de")}),
    "plain for rdf:langString": ("record", EX.n1, {"ref": "R-1", "note": Literal("hallo")}),
    "string for rdf:langString": ("record", EX.n1, {"ref": "R-1", "note": "hallo"}),
    # class, with subclass entailment
    "class": ("record", EX.n1, {"ref": "R-1", "carer": EX.s1}),
    "subclass": ("record", EX.n1, {"ref": "R-1", "carer": EX.c1}),
    "subclass of a subclass": ("record", EX.n1, {"ref": "R-1", "carer": EX.n1}),
    "one of two types fits": ("record", EX.n1, {"ref": "R-1", "carer": EX.x1}),
    "superclass for a class": ("assign", EX.p1, {"nurse": EX.c1}),
    "other class": ("record", EX.n1, {"ref": "R-1", "carer": EX.p1}),
    "untyped node": ("record", EX.n1, {"ref": "R-1", "carer": EX.nobody}),
    "rdfs:Resource only": ("record", EX.n1, {"ref": "R-1", "carer": EX.r1}),
    "blank node for a class": ("record", EX.n1, {"ref": "R-1", "carer": B}),
    "CURIE for a node": ("record", EX.n1, {"ref": "R-1", "carer": ":s1"}),
    "literal where a node is expected": ("record", EX.n1, {"ref": "R-1", "carer": "Okafor"}),
    "number where a node is expected": ("record", EX.n1, {"ref": "R-1", "carer": 3}),
    "the subject itself as a value": ("record", EX.n1, {"ref": "R-1", "carer": EX.n1}),
    "the subject typed by the result": ("record", EX.n1, {
        "ref": "R-1", "carer": EX.n1, "rdf:type": EX.Staff}),
    # optional and required
    "optional left out": ("record", EX.n1, {"ref": "R-1"}),
    "required left out": ("record", EX.n1, {"score": 3}),
    "empty result": ("record", EX.n1, {}),
    "no result": ("record", EX.n1, None),
    "None for a required value": ("record", EX.n1, {"ref": None}),
    "empty list for a required value": ("record", EX.n1, {"ref": []}),
    "required node": ("assign", EX.p1, {"nurse": EX.n1}),
    "required node left out": ("assign", EX.p1, {}),
    # many
    "several where many": ("record", EX.n1, {"ref": "R-1", "tag": ["a", "b", "c"]}),
    "several nodes where many": ("record", EX.n1, {"ref": "R-1", "team": [EX.n1, EX.c1]}),
    "several nodes, some wrong": ("record", EX.n1, {
        "ref": "R-1", "team": [EX.n1, EX.p1, "Okafor", EX.nobody]}),
    "several where one": ("record", EX.n1, {"ref": ["R-1", "R-2"]}),
    "the same value twice counts once": ("record", EX.n1, {"ref": ["R-1", "R-1"]}),
    "one key by two names": ("record", EX.n1, {"ref": "R-1", ":ref": "R-2"}),
    "several wrong where one": ("record", EX.n1, {"ref": [1, 2]}),
    # horis:value
    "a value the runtime fixes": ("record", EX.n1, {"ref": "R-1", "recordedAt": "2020-01-01"}),
    "a fixed value given as the runtime would": ("assign", EX.p1, {
        "nurse": EX.n1, "flagged": True}),
    # undeclared keys
    "undeclared key": ("record", EX.n1, {"ref": "R-1", "colour": "blue"}),
    "undeclared key with a space": ("record", EX.n1, {"ref": "R-1", "eye colour": "blue"}),
    "undeclared key, several values": ("record", EX.n1, {"ref": "R-1", "colour": ["a", "b"]}),
    "undeclared known property": ("record", EX.n1, {"ref": "R-1", "rdfs:label": "x"}),
    "undeclared full IRI": ("record", EX.n1, {"ref": "R-1", str(EX.colour): EX.n1}),
    "undeclared unknown prefix": ("record", EX.n1, {"ref": "R-1", "zz:colour": "blue"}),
    "rdf:type rdfs:Resource is never undeclared": ("record", EX.n1, {
        "ref": "R-1", "rdf:type": RDFS.Resource}),
    "rdf:type a class is": ("record", EX.n1, {"ref": "R-1", "rdf:type": EX.Patient}),
    # several errors at once
    "several errors at once": ("record", EX.n1, {
        "ref": ["R-1", 7], "score": "high", "seenOn": "2024-13-45", "carer": "Okafor",
        "team": [EX.p1, Literal("x", lang="en")], "colour": "blue", "recordedAt": "now",
        "note": "plain"}),
    "nothing right at all": ("assign", EX.p1, {
        "nurse": [EX.s1, "Okafor"], "flagged": False, "colour": EX.n1}),
}


@pytest.fixture(scope="module")
def defs(tmp_path_factory: pytest.TempPathFactory) -> Definitions:
    path = tmp_path_factory.mktemp("effect") / "defs.ttl"
    path.write_text(DEFS, encoding="utf-8")
    return load_definitions([path])


@pytest.fixture(scope="module")
def gate(defs: Definitions) -> Gate:
    return Gate(defs)


@pytest.fixture(scope="module")
def oracle(defs: Definitions, gate: Gate) -> Callable[..., list[ShaclMessage]]:
    """pyshacl on the generated effect shapes, exactly as the gate ran it before."""
    graph = Graph()
    graph += defs.graph
    shapes = {tool.iri: _compile_effect(tool, graph, defs) for tool in defs.tools.values()}
    shapes_graph = ShapesGraph(graph)
    _ = shapes_graph.shapes  # builds every shape, so each can be looked up by IRI
    executor = SHACLExecutor()

    def says(tool: URIRef, subject: Node, returned: list[tuple[Node, Node, Node]],
             ) -> list[ShaclMessage]:
        delta = Graph()
        for t in returned:
            delta.add(t)
        gate._add_types(delta, (o for _, _, o in returned if o != subject), types_of)
        (shape,) = shapes_graph.shapes_from_uris([shapes[tool]])
        _, reports = shape.validate(executor, DataGraph.from_rdflib(delta), focus=[subject])
        messages = {_message(triples, defs) for _, _, triples in reports}
        return sorted(messages, key=lambda m: (m.path or "", m.message, m.value or ""))

    return says


def types_of(node: Node) -> set[Node]:
    return TYPES.get(node, set())


@pytest.mark.parametrize("case", list(CASES))
def test_the_compiled_check_says_what_pyshacl_says_for_the_generated_shape(
        defs: Definitions, gate: Gate, oracle: Callable[..., list[ShaclMessage]], case: str):
    tool_name, subject, result = CASES[case]
    tool = defs.tools[EX[f"t.{tool_name}"]]
    returned = gate.triples(tool, subject, result)

    expected = oracle(tool.iri, subject, returned)
    verdict = gate.judge(tool, subject, returned, [], [], types_of)

    assert list(verdict.messages) == expected
    assert verdict.conforms == (not expected)


def test_the_cases_cover_every_kind_of_finding(defs: Definitions, gate: Gate,
                                               oracle: Callable[..., list[ShaclMessage]]):
    """The oracle is only as good as the cases: each kind of message is met, and met alone."""
    said: dict[str, int] = {}
    for tool_name, subject, result in CASES.values():
        tool = defs.tools[EX[f"t.{tool_name}"]]
        messages = oracle(tool.iri, subject, gate.triples(tool, subject, result))
        for kind in {_kind(m) for m in messages}:
            said[kind] = said.get(kind, 0) + 1
    assert set(said) == {"datatype", "class", "required", "one value", "runtime", "undeclared"}
    assert sum(1 for *_, r in CASES.values() if r is not None) > 40
    assert min(said.values()) >= 3, said


def test_several_errors_are_each_said_once_in_a_stable_order(defs: Definitions, gate: Gate):
    tool = defs.tools[EX["t.record"]]
    result = CASES["several errors at once"][2]
    returned = gate.triples(tool, EX.n1, result)

    verdict = gate.judge(tool, EX.n1, returned, [], [], types_of)

    assert [(m.path, m.value) for m in verdict.messages] == [
        (":carer", '"Okafor"'),
        (":note", '"plain"^^<http://www.w3.org/1999/02/22-rdf-syntax-ns#langString>'),
        (":recordedAt", None),
        (":ref", '"7"^^<http://www.w3.org/2001/XMLSchema#integer>'),
        (":ref", None),
        (":score", '"high"^^<http://www.w3.org/2001/XMLSchema#integer>'),
        (":seenOn", '"2024-13-45"^^<http://www.w3.org/2001/XMLSchema#date>'),
        (":team", '"x"@en'),
        (":team", f"<{EX.p1}>"),
        ("colour", '"blue"'),
    ]
    assert all(m.focus == ":n1" for m in verdict.messages)
    undeclared = verdict.messages[-1]
    assert undeclared.message == "writes a property that the effect of :t.record does not declare"
    assert undeclared.shape is not None and undeclared.shape.startswith(
        "<urn:horismos:effect-shape:")
    assert {m.shape for m in verdict.messages[:-1]} == {None}


def test_the_effect_shapes_are_no_longer_in_the_shapes_graph(gate: Gate):
    """Only the domain's shapes (and the effects' horis:shape) still go through pyshacl."""
    assert not any(str(s).startswith("urn:horismos:effect-shape:")
                   for s in gate._shapes.graph.subjects(RDF.type, None))


def _kind(m: ShaclMessage) -> str:
    for words, kind in (("literal of datatype", "datatype"), ("node of class", "class"),
                        ("is required", "required"), ("takes one value", "one value"),
                        ("written by the runtime", "runtime"), ("does not declare", "undeclared")):
        if words in m.message:
            return kind
    raise AssertionError(m)

