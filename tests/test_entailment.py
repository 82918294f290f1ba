"""OWL-RL types decided per node from its neighbourhood agree with owlrl's full closure.

``entailment="owl-rl"`` no longer copies the world per run; each node's types are derived
from its own edges with rules compiled from the schema. For every rule it claims to support,
this holds it to owlrl's closure of the whole ontology and world, node by node.
"""

from __future__ import annotations

import functools

import owlrl
import pytest
from rdflib import OWL, RDF, RDFS, Graph, Namespace, URIRef

from horismos import World
from horismos._entailment import schema_of

EX = Namespace("http://example.org/owl#")

ONTOLOGY = """
@prefix :     <http://example.org/owl#> .
@prefix owl:  <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .

:Nurse rdfs:subClassOf :Clinician .  :Clinician rdfs:subClassOf :Staff .
:Staff owl:equivalentClass :Employee .
:ward rdfs:domain :Case ; rdfs:range :Ward .
:Unit owl:equivalentClass :Ward .
:primaryNurse rdfs:subPropertyOf :caredBy .  :caredBy rdfs:range :Clinician .
:caresFor owl:inverseOf :caredBy .
:colleague a owl:SymmetricProperty ; rdfs:domain :Staff .
:Urgent owl:equivalentClass [ a owl:Restriction ; owl:onProperty :acuity ;
                              owl:hasValue :high ] .
:Escalated owl:equivalentClass [ a owl:Restriction ; owl:onProperty :escalatedTo ;
                                 owl:someValuesFrom :Clinician ] .
:Flagged owl:equivalentClass [ a owl:Restriction ; owl:onProperty :flag ;
                               owl:someValuesFrom owl:Thing ] .
:Ward rdfs:subClassOf [ a owl:Restriction ; owl:onProperty :hasBed ; owl:allValuesFrom :Bed ] .
:UrgentCase owl:equivalentClass [ owl:intersectionOf ( :Case :Urgent ) ] .
:Person owl:equivalentClass [ owl:unionOf ( :Staff :Patient ) ] .
"""

WORLD = """
@prefix :     <http://example.org/owl#> .
:ann a :Nurse .
:c1 :ward :w1 ; :acuity :high ; :primaryNurse :bob .
:w1 :hasBed :b1 .
:w2 a :Unit ; :hasBed :b2 .
:dan :caresFor :c2 .
:eve :colleague :fay .
:c3 :escalatedTo :ann .
:c4 :flag "late" .
:p1 a :Patient .
:c5 :escalatedTo :nobody .
"""


@functools.cache
def closure() -> Graph:
    """owlrl's full OWL-RL closure of the ontology and the world: the reference."""
    g = Graph()
    g.parse(data=ONTOLOGY, format="turtle")
    g.parse(data=WORLD, format="turtle")
    owlrl.DeductiveClosure(owlrl.OWLRL_Semantics).expand(g)
    return g


def owlrl_types(node: URIRef) -> set[URIRef]:
    return {t for t in closure().objects(node, RDF.type)
            if isinstance(t, URIRef) and str(t).startswith(str(EX))}


def _split(where: str) -> tuple[str, str]:
    """The ontology's statements for the definitions and for the world: all in the
    definitions, all in the world (a knowledge graph carrying its taxonomy), or alternate
    statements in each, so a chain of classes crosses from one to the other."""
    head = "\n".join(line for line in ONTOLOGY.splitlines() if line.startswith("@prefix"))
    body = ONTOLOGY[ONTOLOGY.rindex("@prefix"):].split("\n", 1)[1]
    statements = [s.strip() + " ." for s in body.split(" .\n") if s.strip().strip(".")]
    if where == "definitions":
        return ONTOLOGY, head
    if where == "world":
        return head, ONTOLOGY
    return (head + "\n" + "\n".join(statements[::2]), head + "\n" + "\n".join(statements[1::2]))


@pytest.fixture(scope="module", params=["definitions", "world", "split", "world sparql"])
def scoped(request):
    """The schema where the parameter says; ``world sparql``: in a SPARQL server's world,
    whose blank nodes (the class expressions') cannot be named back to it."""
    where, _, store = request.param.partition(" ")
    in_definitions, in_world = _split(where)
    definitions = Graph().parse(data=in_definitions, format="turtle")
    pool = request.getfixturevalue("oxigraph_pool") if store else None
    world = World.open(pool.fresh() if pool else "oxigraph")
    data = Graph().parse(data=WORLD, format="turtle").parse(data=in_world, format="turtle")
    world.store.load((s, p, o, None) for s, p, o in data)
    schema = schema_of(definitions, world.store)
    yield schema, schema.types_of(world.store), world
    if pool:
        pool.release()


@pytest.mark.parametrize("node", ["ann", "c1", "w1", "b1", "w2", "b2", "bob", "dan", "c2",
                                  "eve", "fay", "c3", "c4", "p1", "c5", "nobody"])
def test_each_nodes_types_are_owlrl_s(scoped, node: str) -> None:
    _, types_of, _ = scoped
    found = {t for t in types_of(EX[node]) if str(t).startswith(str(EX))}
    assert found == owlrl_types(EX[node])


def test_focus_candidates_hold_every_node_entailed_of_a_class(scoped) -> None:
    schema, types_of, world = scoped
    for cls in (EX.Case, EX.Ward, EX.Staff, EX.Person, EX.Urgent, EX.Escalated, EX.Bed):
        expected = {n for n in map(URIRef, (EX[x] for x in (
            "ann", "c1", "w1", "b1", "w2", "b2", "bob", "dan", "c2", "eve", "fay", "c3", "c4",
            "p1", "c5", "nobody"))) if cls in owlrl_types(n)}
        candidates = schema.focus_candidates(world.store, frozenset({cls}))
        assert {n for n in candidates if cls in types_of(n)} == expected, cls


def test_a_hub_is_typed_by_probing_its_incoming_edges_not_listing_them() -> None:
    definitions = Graph().parse(data=ONTOLOGY, format="turtle")
    world = World.open("oxigraph")
    world.store.load((EX[f"c{i}"], EX.ward, EX.hub, None) for i in range(20_000))
    schema = schema_of(definitions, world.store)
    assert EX.Ward in schema.types_of(world.store)(EX.hub)
    assert OWL.Thing not in schema.ranged


def test_a_stores_schema_is_read_once_until_a_write_may_change_it(monkeypatch) -> None:
    """A run per event read every schema triple of the world (a taxonomy of 100,000 classes:
    over a second a run). A store in this process marks the writes that may change them,
    and the schema read is kept until one lands: a step's commit, which writes none, keeps
    it; a subclass written, loaded or removed is read at once."""
    from horismos._entailment import _PROPERTY_QUERY
    from horismos._stores import Change
    from horismos._stores.oxigraph import OxigraphStore

    definitions = Graph().parse(data=ONTOLOGY, format="turtle")
    world = World.open("oxigraph")
    world.store.load([(EX.sam, RDF.type, EX.Intern, None)])
    reads: list[str] = []
    select = OxigraphStore.select

    def counted(self, query, bindings, ns):
        if query == _PROPERTY_QUERY:
            reads.append(query)
        return select(self, query, bindings, ns)

    monkeypatch.setattr(OxigraphStore, "select", counted)

    def staff(node: URIRef) -> bool:
        return EX.Staff in schema_of(definitions, world.store).types_of(world.store)(node)

    assert not staff(EX.sam) and not staff(EX.sam) and len(reads) == 1
    world.commit(Change(add=[(EX.sam, EX.note, EX.x, URIRef("urn:g:1"))]))  # as a step does
    assert not staff(EX.sam) and len(reads) == 1
    intern = (EX.Intern, RDFS.subClassOf, EX.Nurse, None)
    world.commit(Change(add=[intern]))
    assert staff(EX.sam) and staff(EX.sam) and len(reads) == 2
    world.commit(Change(remove=[intern]))
    assert not staff(EX.sam) and len(reads) == 3
    world.store.update(f"INSERT DATA {{ <{EX.Intern}> <{RDFS.subClassOf}> <{EX.Nurse}> }}")
    assert staff(EX.sam) and len(reads) == 4


def test_every_predicate_the_schema_is_read_by_moves_a_stores_mark() -> None:
    from horismos._entailment import _SCHEMA_PREDICATES
    from horismos._stores.schema_mark import SCHEMA_PREDICATES, touches_schema

    assert set(_SCHEMA_PREDICATES) | {RDF.first, RDF.rest} <= SCHEMA_PREDICATES
    assert touches_schema([(EX.p, RDF.type, OWL.SymmetricProperty, None)])
    assert not touches_schema([(EX.p, RDF.type, EX.Nurse, None), (EX.p, EX.q, EX.r, None)])


def test_a_taxonomy_in_the_world_is_read_class_by_class_not_whole(monkeypatch) -> None:
    """A process per event paid for the world's whole taxonomy on its first run (100,000
    classes: 1.8 s against 14 ms; with a restriction a class, as OWL ontologies write them:
    9.8 s). A node's types read the classes above its own and the restrictions its edges
    meet, not the others: the rows the store hands back follow the depth of the node's class."""
    from horismos._stores.oxigraph import OxigraphStore

    kinds = [EX[f"Kind{i}"] for i in range(20_000)]
    # each class a subclass of "has some ingredient of its parent's kind"
    restrictions = [EX[f"SomeOf{i}"] for i in range(len(kinds))]
    world = World.open("oxigraph")
    world.store.load(
        q
        for i, (k, r) in enumerate(zip(kinds, restrictions, strict=True))
        for q in (
            (k, RDFS.subClassOf, kinds[(i - 1) // 10] if i else EX.Staff, None),
            (k, RDFS.subClassOf, r, None),
            (r, OWL.onProperty, EX.ingredient, None),
            (r, OWL.someValuesFrom, kinds[(i - 1) // 10] if i else EX.Staff, None),
        )
    )
    world.store.load([
        (EX.zed, RDF.type, kinds[-1], None),
        (EX.zed, EX.colleague, EX.yan, None),
        (EX.zed, EX.ingredient, EX.salt, None),
        (EX.salt, RDF.type, kinds[5], None),
    ])
    rows: list[int] = []
    select = OxigraphStore.select

    def counted(self, query, bindings, ns):
        found = select(self, query, bindings, ns)
        rows.append(len(found))
        return found

    monkeypatch.setattr(OxigraphStore, "select", counted)
    definitions = Graph().parse(data=ONTOLOGY, format="turtle")
    schema = schema_of(definitions, world.store)
    types = schema.types_of(world.store)
    zed = types(EX.zed)
    assert {kinds[0], kinds[1], EX.Staff, EX.Employee, restrictions[-1]} <= zed
    assert kinds[2] not in zed
    # some ingredient of a Kind5, so of a Kind0 (Kind1's restriction) and of a Staff (Kind0's)
    assert {restrictions[0], restrictions[1], restrictions[51]} <= zed
    assert restrictions[2 * 10 + 1] not in zed  # some ingredient of a Kind2: salt is not one
    assert EX.Staff in types(EX.yan)  # by the symmetric property's domain
    assert sum(rows) < 300, sum(rows)
