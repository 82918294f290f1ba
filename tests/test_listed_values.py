"""``sh:in`` members judged against their shape's own constraints, held to pyshacl.

``refused_members`` says which members of a shape's ``sh:in`` no node could hold and
conform, by the gate's compiled constraints applied to each member alone. Whatever it says must
be what pyshacl, the reference, says of a node holding that one value, judged by the same
shape without its list.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from pyshacl import validate
from rdflib import RDF, SH, XSD, BNode, Graph, Literal, Namespace, URIRef
from rdflib.collection import Collection

from horismos._listed_values import refused_members

EX = Namespace("http://example.org/t#")

MEMBERS = [
    Literal("Q-A-1"), Literal("q-a-1"), Literal("routine"), Literal("ab", lang="en"),
    Literal("ab", lang="fr"), Literal(3), Literal(12), Literal("7", datatype=XSD.string),
    Literal("2026-01-01", datatype=XSD.date), EX.urgent, URIRef("urn:x:Q-B-2"),
]
CONSTRAINTS = st.fixed_dictionaries({}, optional={
    SH.pattern: st.sampled_from([Literal("^Q-"), Literal("^[a-z]+$"), Literal("[0-9]")]),
    SH.minLength: st.integers(0, 6).map(Literal),
    SH.maxLength: st.integers(0, 6).map(Literal),
    SH.datatype: st.sampled_from([XSD.string, XSD.integer, RDF.langString]),
    SH.nodeKind: st.sampled_from([SH.IRI, SH.Literal]),
    SH.minInclusive: st.sampled_from([Literal(5), Literal("b")]),
    SH.maxExclusive: st.sampled_from([Literal(10), Literal("r")]),
    SH.languageIn: st.just(("en",)),
})


def shape_graph(constraints: dict[URIRef, object], members: list) -> tuple[Graph, BNode]:
    g = Graph()
    shape, prop = EX.Shape, BNode()
    g.add((shape, RDF.type, SH.NodeShape))
    g.add((shape, SH.targetClass, EX.Thing))
    g.add((shape, SH.property, prop))
    g.add((prop, SH.path, EX.value))
    for p, o in constraints.items():
        if isinstance(o, tuple):
            head = BNode()
            Collection(g, head, [Literal(x) for x in o])
            o = head
        g.add((prop, p, o))  # type: ignore[arg-type]
    if members:
        head = BNode()
        Collection(g, head, members)
        g.add((prop, SH["in"], head))
    return g, prop


@settings(max_examples=60, deadline=None)
@given(CONSTRAINTS, st.lists(st.sampled_from(MEMBERS), min_size=1, max_size=4, unique=True))
def test_a_member_is_refused_exactly_when_pyshacl_rejects_a_node_holding_it(
    constraints: dict[URIRef, object], members: list
) -> None:
    listed, prop = shape_graph(constraints, members)
    refused = {r.member for r in refused_members(listed, prop, members)}
    shapes, _ = shape_graph(constraints, [])  # the same constraints, without the list
    for member in members:
        data = Graph()
        data.add((EX.n, RDF.type, EX.Thing))
        data.add((EX.n, EX.value, member))
        conforms, _, report = validate(data, shacl_graph=shapes)
        assert conforms == (member not in refused), (member, constraints, report)


@settings(max_examples=40, deadline=None)
@given(
    CONSTRAINTS,
    st.lists(st.sampled_from(MEMBERS), max_size=3, unique=True),
    st.sampled_from(MEMBERS),
)
def test_a_value_is_refused_with_the_list_exactly_when_pyshacl_rejects_a_node_holding_it(
    constraints: dict[URIRef, object], members: list, value: Literal
) -> None:
    """A ``sh:hasValue``'s value, judged with the shape's ``sh:in`` too (``listed``)."""
    shapes, prop = shape_graph(constraints, members)
    refused = refused_members(shapes, prop, [value], listed=True)
    data = Graph()
    data.add((EX.n, RDF.type, EX.Thing))
    data.add((EX.n, EX.value, value))
    conforms, _, report = validate(data, shacl_graph=shapes)
    assert conforms == (not refused), (value, members, constraints, report)
