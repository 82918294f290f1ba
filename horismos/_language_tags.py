"""A language tag on a Horismos value that must be a plain string.

``horis:name "ref"@en`` is an ``rdf:langString``, not an ``xsd:string``. The authoring shapes
refused it with their own words ("an argument needs exactly one horis:name, a string"),
twice — once for the argument, once for the ``horis:takes`` holding it — and the value each
showed read ``ref``, so neither named the tag that was wrong. The tag is said once, at its
statement, and the shape results it caused are not said again.

Which properties take a plain string is read from the authoring shapes (``sh:datatype
xsd:string``, alone or as one choice of an ``sh:or``), so a property added to them is judged
with no list here to keep in step.
"""

from __future__ import annotations

from collections.abc import Iterator

from rdflib import RDF, SH, XSD, Graph, Literal, URIRef
from rdflib.term import Node

from ._shacl_report import Result

__all__ = ["caused_by_tag", "string_properties", "tagged_strings"]


def string_properties(shapes: Graph) -> frozenset[URIRef]:
    """The properties ``shapes`` hold to ``xsd:string``: the ``sh:path`` of a property shape
    with ``sh:datatype xsd:string``, or with it among the choices of its ``sh:or``."""
    found: set[URIRef] = set()
    for holder in shapes.subjects(SH.datatype, XSD.string):
        for shape in (holder, _or_owner(shapes, holder)):
            path = shapes.value(shape, SH.path) if shape is not None else None
            if isinstance(path, URIRef):
                found.add(path)
    return frozenset(found)


def _or_owner(shapes: Graph, member: Node) -> Node | None:
    """The shape whose ``sh:or`` list holds ``member``, if one does."""
    cell = shapes.value(predicate=RDF.first, object=member)
    while cell is not None:
        owner = shapes.value(predicate=SH["or"], object=cell)
        if owner is not None:
            return owner
        cell = shapes.value(predicate=RDF.rest, object=cell)
    return None


def tagged_strings(
    g: Graph, properties: frozenset[URIRef]
) -> Iterator[tuple[Node, URIRef, Literal]]:
    """Each statement of ``g`` giving one of ``properties`` a language-tagged literal."""
    for p in sorted(properties):
        for s, o in g.subject_objects(p):
            if isinstance(o, Literal) and o.language:
                yield s, p, o


def caused_by_tag(
    result: Result,
    shapes: Graph,
    g: Graph,
    tagged: set[tuple[Node, URIRef, Literal]],
) -> bool:
    """Whether the shape ``result`` says no more than a tag of ``tagged`` does: it judged the
    tagged value itself, or a node holding one through a ``sh:node`` whose shape reads the
    tagged property (the ``horis:takes`` whose ``horis:arg`` has the tagged name)."""
    if (result.focus, result.path, result.value) in tagged:
        return True
    if result.component != SH.NodeConstraintComponent:
        return False
    node_shape = shapes.value(result.shape, SH.node)
    read = {shapes.value(ps, SH.path) for ps in shapes.objects(node_shape, SH.property)}
    return any(s == result.value and p in read and (s, p, o) in g for s, p, o in tagged)
