"""What the compiled SHACL checks read and report, worded as pyshacl words it.

:mod:`._shacl` compiles shapes and :mod:`._shacl_constraints` compiles their constraints; both
read a data graph through :class:`Data`, report :class:`Result` rows, give a shape up with
:class:`NotCompiled`, and write nodes into messages the way pyshacl does (:func:`stringify`,
:func:`shape_text`). Kept apart so the constraints need not import the compiler that uses them.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from rdflib import RDF, SH, XSD, BNode, Graph, Literal, URIRef
from rdflib.namespace import NamespaceManager
from rdflib.term import Node

__all__ = [
    "Check",
    "Data",
    "NotCompiled",
    "Result",
    "non_negative_integer",
    "one_value",
    "shape_text",
    "stringify",
]


class Data(Protocol):
    """What the compiled checks read of the data graph."""

    def objects(self, node: Node, pred: URIRef) -> set[Node]:
        """The values of ``pred`` on ``node``."""

    def instance_of(self, node: Node, cls: Node) -> bool:
        """``node rdf:type/rdfs:subClassOf* cls`` in the data graph."""

    def outgoing(self, node: Node) -> Iterable[tuple[Node, Node]]:
        """Every (predicate, object) of ``node`` (for sh:closed)."""

    def subjects(self, node: Node, pred: URIRef) -> set[Node]:
        """The nodes with ``pred`` ``node`` (for inverse paths)."""


@dataclass(frozen=True, slots=True)
class Result:
    """One validation result, with the fields pyshacl's report gives."""

    focus: Node
    path: Node | None  # a blank node: a complex path
    value: Node | None
    component: URIRef
    shape: Node  # the source shape
    message: str


class NotCompiled(Exception):
    """Outside the subset: the shape (or, at run time, a message naming a blank node) is left
    to pyshacl."""


# a fresh graph's prefixes, as pyshacl's data and shapes graphs have them, with sh: bound
_NM = NamespaceManager(Graph())
_NM.bind("sh", SH, override=False, replace=False)


def stringify(node: Node) -> str:
    """A node as pyshacl writes it into a message; a blank node is not written here."""
    if isinstance(node, URIRef):
        try:
            return node.n3(namespace_manager=_NM)
        except Exception:
            return str(node)
    if isinstance(node, Literal):
        val = None if node.value is None else str(node.value)
        lex = str(node)
        if val is not None:
            at = val.find(" object at 0x")
            if at > 0:
                val = val[:at]
        text = f'"{lex}" = {val}' if val is not None and val != lex else f'"{lex}"'
        lang = f", lang={node.language}" if node.language else ""
        datatype = f", datatype={stringify(node.datatype)}" if node.datatype else ""
        return f"Literal({text}{lang}{datatype})"
    raise NotCompiled("a blank node in a message")


def shape_text(g: Graph, node: Node, depth: int = 0) -> str:
    """A node of the shapes graph as pyshacl writes it, blank nodes (shapes, lists) too."""
    if not isinstance(node, BNode):
        return stringify(node)
    depth += 1
    if depth >= 12:
        return "<http://recursion.too.deep>"
    preds = list(g.predicates(node))
    if not preds:
        return "[ ]"
    if RDF.first in preds:
        return "( {} )".format(" ".join(shape_text(g, i, depth + 1) for i in g.items(node)))
    parts: dict[str, str] = {}
    for p in preds:
        objects = sorted(shape_text(g, o, depth + 1) for o in g.objects(node, p))
        parts[p.n3(namespace_manager=_NM)] = ", ".join(objects)
    if len(parts) > 1:
        return "[ {} ]".format(" ; ".join(f"{p} {o}" for p, o in sorted(parts.items())))
    ((name, text),) = parts.items()
    return f"[ {name} {text} ]"


Check = Callable[[Node, Collection[Node], "Data"], Iterable[tuple[Any, ...]]]
"""(focus, value nodes, data) → (value node or None, generic message[, result path]) per
failure; a message that prints a data node is a callable, worded only when reported."""


def one_value(g: Graph, node: Node, p: URIRef) -> Node:
    values = list(g.objects(node, p))
    if len(values) != 1:
        raise NotCompiled(f"{len(values)} values of {p}")
    return values[0]


def non_negative_integer(g: Graph, node: Node, p: URIRef) -> int:
    v = one_value(g, node, p)
    if not (
        isinstance(v, Literal)
        and v.datatype == XSD.integer
        and isinstance(v.value, int)
        and v.value >= 0
    ):
        raise NotCompiled(f"{p} is not a non-negative xsd:integer")
    return v.value
