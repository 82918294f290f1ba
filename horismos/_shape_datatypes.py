"""A property shape's ``sh:datatype`` other than its property's ``rdfs:range``.

``sh:datatype`` matches a literal's datatype exactly: ``sh:datatype xsd:int`` on ``:quantity``,
whose ``rdfs:range`` is ``xsd:integer``, rejects ``30`` (Turtle's bare number is an
``xsd:integer``), and ``sh:datatype xsd:string`` on it rejects every value the range allows.
The ontology and the shape each loaded and validated; then every node holding the property
broke the domain shape, so every step landing on one was blocked before its tool was called
(or its result rejected by the gate), and no authoring check had compared the two.

A datatype no value of the range has (``xsd:string`` for ``xsd:integer``, ``xsd:date`` for
``xsd:dateTime``) is an error: no value written as the ontology says conforms. One the range
may still meet (a numeric type for another, ``xsd:int`` beside ``xsd:integer``, one derived
from the other) is a warning, which says when it is fine: every value written
``"…"^^`` that datatype. A property a tool writes is judged against the tool's effect
instead (:mod:`._effect_shapes`), where the tool is named; only built-in datatypes are
compared (one the files declare is the modeler's to judge), and a shape inside ``sh:or``,
``sh:xone`` or ``sh:not`` is said as :func:`._shape_slips.unmet` says such shapes.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator

from rdflib import RDF, RDFS, SH, Graph, URIRef
from rdflib.term import Node

from ._datatypes import DATATYPES, NUMERIC, derives_from
from ._shacl import deactivated
from ._shape_slips import ShapeSlip, unmet
from ._term_kinds import object_kind

__all__ = ["datatype_slips"]

# what takes any literal, or any string: no exact datatype to compare
_OPEN = frozenset({RDFS.Literal, RDF.PlainLiteral})


def datatype_slips(
    g: Graph, n: Callable[[Node], str], written: Collection[URIRef]
) -> Iterator[ShapeSlip]:
    """Each ``sh:datatype`` of a property shape in ``g`` other than its path's built-in
    ``rdfs:range`` datatype; ``written``: the properties some tool's effect writes."""
    for holder, dt in sorted(g.subject_objects(SH.datatype), key=str):
        path = g.value(holder, SH.path)
        if (
            not isinstance(path, URIRef)
            or not isinstance(dt, URIRef)
            or dt not in DATATYPES
            or dt in _OPEN
            or path in written
            or object_kind(g, path) != "literal"
            or deactivated(g, holder)
        ):
            continue
        ranges = [r for r in g.objects(path, RDFS.range) if isinstance(r, URIRef)]
        if not ranges or any(r not in DATATYPES or r in _OPEN for r in ranges):
            continue
        rng = next((r for r in sorted(ranges, key=str) if r != dt), None)
        if rng is None:
            continue
        disjoint = not (
            derives_from(dt, rng) or derives_from(rng, dt) or (dt in NUMERIC and rng in NUMERIC)
        )
        severity, does = unmet(g, holder)
        if severity == "error":  # the node breaks the shape before any tool lands on it
            does = (
                "every step whose tool lands on such a node is blocked, the tool not called, "
                "and the run says the world's data breaks the domain shapes"
            )
        said = (
            f"sh:datatype {n(dt)} on {n(path)}, whose rdfs:range is {n(rng)}: sh:datatype "
            "matches a literal's datatype exactly, so "
        )
        if disjoint:
            yield ShapeSlip(
                severity,
                holder,
                (holder, SH.datatype, dt),
                f"{said}no value of {n(rng)} conforms and every node holding {n(path)} breaks "
                f"the shape: {does}",
                f"write sh:datatype {n(rng)}, as the range says, or correct the range",
            )
            continue
        yield ShapeSlip(
            "warning",
            holder,
            (holder, SH.datatype, dt),
            f"{said}a value written as the range says (a literal of {n(rng)}) does not "
            f"conform, and a node holding one breaks the shape: {does}",
            f"write sh:datatype {n(rng)}, as the range says; fine as it is only when every "
            f'value of {n(path)} is written "…"^^{n(dt)}',
        )
