"""Compiled shapes judging a whole rdflib graph: the check of the definitions at every load.

Why: every command judged the definitions against the authoring shapes (``horis-shapes.ttl``)
with pyshacl, and importing pyshacl (0.35 s) and running it (0.13 s) were half of a command's
start, measured, paid again by a service that runs one process per event. Every authoring
shape is in the subset :mod:`._shacl` compiles, whose results carry pyshacl's words, focus
node, path, value and source shape (held to the W3C suite and to pyshacl by
tests/test_shacl_w3c.py and tests/test_gate_differential.py). pyshacl stays the reference:
it judges whenever a shape does not compile, or a result cannot be worded as it words it (a
blank node in a message: :class:`~._shacl_report.NotCompiled`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from rdflib import RDF, RDFS, SH, Graph, URIRef
from rdflib.term import Node

from ._shacl import CompiledShape, compile_shapes
from ._shacl_report import NotCompiled, Result

__all__ = [
    "GraphData",
    "class_members",
    "compiled_all",
    "focus_nodes",
    "judged_by_compiled",
    "report_results",
    "shapes_targeting",
]

_TARGETS = (SH.targetClass, SH.targetNode, SH.targetSubjectsOf, SH.targetObjectsOf)


class GraphData:
    """What the compiled checks read (:class:`~._shacl_report.Data`), over a whole graph."""

    def __init__(self, g: Graph) -> None:
        self.g = g

    def objects(self, node: Node, pred: URIRef) -> set[Node]:
        return set(self.g.objects(node, pred))

    def outgoing(self, node: Node) -> list[tuple[Node, Node]]:
        return list(dict.fromkeys(self.g.predicate_objects(node)))  # once, over graphs joined

    def subjects(self, node: Node, pred: URIRef) -> set[Node]:
        return set(self.g.subjects(pred, node))

    def instance_of(self, node: Node, cls: Node) -> bool:
        return any(
            cls in self.g.transitive_objects(t, RDFS.subClassOf)
            for t in self.g.objects(node, RDF.type)
        )


def shapes_targeting(shapes: Graph) -> set[Node]:
    """The shapes of ``shapes`` that target nodes: by a target, or as a class (implicitly)."""
    out: set[Node] = set()
    for p in _TARGETS:
        out |= set(shapes.subjects(p, None))
    for kind in (SH.NodeShape, SH.PropertyShape):
        out |= {s for s in shapes.subjects(RDF.type, kind) if (s, RDF.type, RDFS.Class) in shapes}
    return out


def focus_nodes(
    shapes: Graph, shape: Node, data: Graph, members: Mapping[Node, set[Node]] | None = None
) -> set[Node]:
    """The nodes of ``data`` that ``shape`` targets, as SHACL defines its targets (a class
    target takes the instances of its subclasses in ``data`` too); ``members``: each class's
    instances in ``data`` (:func:`class_members`), when several shapes are asked about."""
    members = class_members(data) if members is None else members
    nodes = set(shapes.objects(shape, SH.targetNode))
    classes = set(shapes.objects(shape, SH.targetClass))
    if (shape, RDF.type, RDFS.Class) in shapes:
        classes.add(shape)
    for c in classes:
        nodes |= members.get(c, set())
    for p in shapes.objects(shape, SH.targetSubjectsOf):
        nodes |= set(data.subjects(p, None))
    for p in shapes.objects(shape, SH.targetObjectsOf):
        nodes |= set(data.objects(None, p))
    return nodes


def class_members(data: Graph) -> dict[Node, set[Node]]:
    """Each class's instances in ``data``, by ``rdf:type/rdfs:subClassOf*``: read once for
    every shape, not once a shape and a typed node."""
    by_type: dict[Node, set[Node]] = {}
    for node, t in data.subject_objects(RDF.type):
        by_type.setdefault(t, set()).add(node)
    members: dict[Node, set[Node]] = {}
    for t, nodes in by_type.items():
        for c in data.transitive_objects(t, RDFS.subClassOf):
            if c is not None:
                members.setdefault(c, set()).update(nodes)
    return members


def compiled_all(shapes: Graph) -> Mapping[Node, CompiledShape] | None:
    """Every targeting shape of ``shapes`` compiled, or None when one is outside the subset."""
    targeting = shapes_targeting(shapes)
    compiled = compile_shapes(shapes, targeting)
    return compiled if set(compiled) == targeting else None


def judged_by_compiled(
    data: Graph, shapes: Graph, compiled: Mapping[Node, CompiledShape] | None
) -> list[Result] | None:
    """``data``'s results against ``shapes`` (every one of them compiled: :func:`compiled_all`),
    worded as pyshacl words them; None when pyshacl must judge (a shape outside the subset, a
    result it alone can word)."""
    if compiled is None:
        return None
    on = GraphData(data)
    try:
        return list(_results(compiled, shapes, data, on))
    except NotCompiled:
        return None


def _results(
    compiled: Mapping[Node, CompiledShape], shapes: Graph, data: Graph, on: GraphData
) -> Iterable[Result]:
    members = class_members(data)
    for shape, check in compiled.items():
        for focus in focus_nodes(shapes, shape, data, members):
            yield from check.results(focus, on)


def report_results(report: Graph) -> list[Result]:
    """The results of a pyshacl validation report, as the compiled shapes give theirs: those
    the report states (``sh:result``), not the ``sh:detail`` under a ``sh:node`` result,
    which said again, at the inner node, what the outer result says at the node holding it."""
    return [
        Result(
            report.value(r, SH.focusNode),  # type: ignore[arg-type]
            report.value(r, SH.resultPath),
            report.value(r, SH.value),
            report.value(r, SH.sourceConstraintComponent),  # type: ignore[arg-type]
            report.value(r, SH.sourceShape),  # type: ignore[arg-type]
            str(report.value(r, SH.resultMessage) or ""),
        )
        for r in report.objects(None, SH.result)
    ]
