"""The SHACL gate: the one place a tool's result is turned into triples and judged.

Each tool's declared effect is compiled once into a closed SHACL node shape. A result is
validated twice over with pyshacl, on small graphs and a pre-parsed shapes graph:

1. the triples the tool returned, against the effect shape (nothing undeclared, right
   datatype or class, required values present, one value unless ``horis:many``, no value
   for a property the runtime fixes);
2. the touched node as it would be after the effect, against the domain's own shapes that
   target it and the effect's ``horis:shape``.

Both pass, or nothing lands. ``use_shapes`` is always given with ``focus_nodes``:
``focus_nodes`` alone silently passes nodes that no shape targets.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from pyshacl.graph_abstraction import DataGraph
from pyshacl.pytypes import SHACLExecutor
from pyshacl.shapes_graph import ShapesGraph
from rdflib import RDF, RDFS, SH, XSD, BNode, Graph, Literal, URIRef
from rdflib.term import Node

from ._definitions import Definitions
from ._errors import ShaclMessage
from ._model import Assertion, Tool

__all__ = ["Gate", "Verdict"]

_NUMERIC = {XSD.decimal, XSD.double, XSD.float, XSD.integer, XSD.int, XSD.long,
            XSD.nonNegativeInteger, XSD.positiveInteger, XSD.short}
_UNDECLARED = "urn:horismos:undeclared:"


@dataclass(frozen=True)
class Verdict:
    conforms: bool
    messages: tuple[ShaclMessage, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"conforms": self.conforms, "messages": [m.to_json() for m in self.messages]}


class Gate:
    """Compiled once per :class:`Definitions`; judges results for every tool in them."""

    def __init__(self, defs: Definitions) -> None:
        self.defs = defs
        shapes = Graph()
        shapes += defs.graph
        self._effect_shape: dict[URIRef, URIRef] = {}
        for tool in defs.tools.values():
            if tool.effect is not None:
                self._effect_shape[tool.iri] = _compile_effect(tool, shapes, defs)
        self._shapes = ShapesGraph(shapes)
        _ = self._shapes.shapes  # build every shape now, not just those the first call names
        self._executor = SHACLExecutor()
        self._superclasses = _invert(defs.subclasses)
        self._targets = _domain_targets(defs.graph, self._superclasses)

    # -- result → triples ---------------------------------------------------------------

    def triples(self, tool: Tool, subject: Node, result: Mapping[str, Any] | None,
                ) -> list[tuple[Node, Node, Node]]:
        """What the tool's result would write, before judgement (undeclared keys included)."""
        out: list[tuple[Node, Node, Node]] = []
        for key, value in (result or {}).items():
            assertion = self._assertion(tool, str(key))
            prop = assertion.property if assertion else self._undeclared(str(key))
            values = value if isinstance(value, list | tuple | set) else [value]
            for v in values:
                if v is None:
                    continue
                out.append((subject, prop, self._node(assertion, v)))
        return out

    def fixed(self, tool: Tool, subject: Node, now: Literal) -> list[tuple[Node, Node, Node]]:
        """The triples the runtime itself writes (``horis:value``)."""
        from ._vocab import HORIS

        if tool.effect is None:
            return []
        return [(subject, a.property, now if a.value == HORIS.now else a.value)
                for a in tool.effect.asserts if a.value is not None]

    def _assertion(self, tool: Tool, key: str) -> Assertion | None:
        if tool.effect is None:
            return None
        for a in tool.effect.asserts:
            if key in (a.key, str(a.property)):
                return a
        try:
            iri = self.defs.expand(key)
        except KeyError:
            return None
        return next((a for a in tool.effect.asserts if a.property == iri), None)

    def _undeclared(self, key: str) -> URIRef:
        try:
            return self.defs.expand(key)
        except KeyError:
            return URIRef(_UNDECLARED + key.replace(" ", "_"))

    def _node(self, a: Assertion | None, v: Any) -> Node:
        if isinstance(v, URIRef | BNode | Literal):
            return v
        if a is not None and a.is_class and isinstance(v, str):
            try:
                return self.defs.expand(v)
            except KeyError:
                return Literal(v)
        t = a.type if a is not None else None
        if t is not None and not isinstance(v, bool):
            if isinstance(v, str) and t != XSD.string:
                return Literal(v, datatype=t)
            if isinstance(v, int) and t in _NUMERIC:
                return Literal(v, datatype=t)
            if isinstance(v, float) and t in (XSD.decimal, XSD.double, XSD.float):
                return Literal(Decimal(repr(v)) if t == XSD.decimal else v, datatype=t)
        if isinstance(v, dt.datetime) and v.tzinfo is None:
            v = v.replace(tzinfo=dt.UTC)
        return Literal(v)

    # -- judgement -------------------------------------------------------------------------

    def judge(self, tool: Tool, subject: Node, returned: list[tuple[Node, Node, Node]],
              fixed: list[tuple[Node, Node, Node]], world_outgoing: Iterable[tuple],
              types_of: Any) -> Verdict:
        """Validate ``returned`` against the effect, then the after-view against domain shapes.

        ``types_of(node)`` gives a node's ``rdf:type`` values in the world.
        """
        messages: list[ShaclMessage] = []
        shape = self._effect_shape.get(tool.iri)
        if shape is None:
            if returned:
                messages.extend(ShaclMessage(str(s), str(p), "the tool declares no horis:effect, "
                                             "so its result may write nothing") for s, p, _ in
                                returned)
                return Verdict(False, tuple(messages))
        else:
            delta = Graph()
            for t in returned:
                delta.add(t)
            self._add_types(delta, (o for _, _, o in returned if o != subject), types_of)
            messages.extend(self._validate(delta, [shape], subject))
            if messages:
                return Verdict(False, tuple(messages))
        extra = tool.effect.shapes if tool.effect is not None else ()
        return self.domain(subject, [*returned, *fixed], world_outgoing, types_of, extra)

    def domain(self, subject: Node, added: Iterable[tuple[Node, Node, Node]],
               world_outgoing: Iterable[tuple], types_of: Any,
               extra: Iterable[URIRef] = ()) -> Verdict:
        """``subject`` as it would be after ``added``, against the domain shapes targeting it
        (and ``extra``); also how facts a person gives on resume are judged."""
        after = Graph()
        for t in world_outgoing:
            after.add(t)
        for t in added:
            after.add(t)
        subject_types = set(after.objects(subject, RDF.type))
        use = self._applicable(subject, subject_types, set(after.predicates(subject)))
        use |= set(extra)
        if not use:
            return Verdict(True)
        self._add_types(after, (o for _, _, o in after if o != subject), types_of)
        for t in subject_types:
            for sup in self._superclasses.get(t, ()):
                after.add((t, RDFS.subClassOf, sup))
        messages = self._validate(after, sorted(use), subject)
        return Verdict(not messages, tuple(messages))

    def _add_types(self, g: Graph, nodes: Iterable[Node], types_of: Any) -> None:
        for node in set(nodes):
            if isinstance(node, Literal):
                continue
            for t in types_of(node):
                g.add((node, RDF.type, t))
                for sup in self._superclasses.get(t, ()):
                    g.add((t, RDFS.subClassOf, sup))

    def _applicable(self, node: Node, types: set[Node], preds: set[Node]) -> set[URIRef]:
        out: set[URIRef] = set()
        for t in types:
            out |= self._targets.by_class.get(t, set())
        out |= self._targets.by_node.get(node, set())
        for p in preds:
            out |= self._targets.by_subject_of.get(p, set())
        return out

    def _validate(self, data: Graph, shapes: list[URIRef], focus: Node) -> list[ShaclMessage]:
        # pyshacl's Validator.run builds a full report graph even when the data conforms;
        # on the hot path we run the pre-parsed shapes ourselves, focus given explicitly.
        g = DataGraph.from_rdflib(data)
        results: list[tuple] = []
        for shape in self._shapes.shapes_from_uris(shapes):
            _, reports = shape.validate(self._executor, g, focus=[focus])
            results.extend(reports)
        # a value can break two constraints that say the same thing (sh:class, sh:nodeKind)
        messages = {_message(triples, self.defs) for _, _, triples in results}
        return sorted(messages, key=lambda m: (m.path or "", m.message, m.value or ""))


def _compile_effect(tool: Tool, g: Graph, defs: Definitions) -> URIRef:
    assert tool.effect is not None
    digest = hashlib.sha1(str(tool.iri).encode()).hexdigest()[:16]
    shape = URIRef(f"urn:horismos:effect-shape:{digest}")
    g.add((shape, RDF.type, SH.NodeShape))
    g.add((shape, SH.closed, Literal(True)))
    g.add((shape, SH.message, Literal(
        f"writes a property that the effect of {defs.name(tool.iri)} does not declare")))
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
            prop_shape(f"{pname} is written by the runtime (horis:value); the tool must not "
                       "return it", maxCount=Literal(0))
            continue
        assert a.type is not None
        if a.is_class:
            prop_shape(f"{pname} must be a node of class {defs.name(a.type)}",
                       **{"class": a.type}, nodeKind=SH.BlankNodeOrIRI)
        else:
            prop_shape(f"{pname} must be a literal of datatype {defs.name(a.type)}",
                       datatype=a.type)
        if not a.optional:
            prop_shape(f"{pname} is required by the effect and the result does not give it "
                       "(declare horis:optional true to allow leaving it out)",
                       minCount=Literal(1))
        if not a.many:
            prop_shape(f"{pname} takes one value and the result gives several "
                       "(declare horis:many true to allow several)", maxCount=Literal(1))
    g.add((shape, SH.ignoredProperties, RDF.nil))
    return shape


@dataclass
class _Targets:
    by_class: dict[Node, set[URIRef]]
    by_node: dict[Node, set[URIRef]]
    by_subject_of: dict[Node, set[URIRef]]


def _domain_targets(g: Graph, superclasses: Mapping[URIRef, frozenset[URIRef]]) -> _Targets:
    """For each class, node and property: the domain node shapes that would target it."""
    t = _Targets({}, {}, {})
    classes_targeted: dict[Node, set[URIRef]] = {}
    for shape in set(g.subjects(RDF.type, SH.NodeShape)):
        if not isinstance(shape, URIRef):
            continue
        for c in g.objects(shape, SH.targetClass):
            classes_targeted.setdefault(c, set()).add(shape)
        if (shape, RDF.type, RDFS.Class) in g or (shape, RDF.type, URIRef(
                "http://www.w3.org/2002/07/owl#Class")) in g:
            classes_targeted.setdefault(shape, set()).add(shape)
        for n in g.objects(shape, SH.targetNode):
            t.by_node.setdefault(n, set()).add(shape)
        for p in g.objects(shape, SH.targetSubjectsOf):
            t.by_subject_of.setdefault(p, set()).add(shape)
    all_classes = set(classes_targeted) | set(superclasses)
    for c in all_classes:
        shapes: set[URIRef] = set(classes_targeted.get(c, set()))
        for sup in superclasses.get(c, ()):  # type: ignore[call-overload]
            shapes |= classes_targeted.get(sup, set())
        if shapes:
            t.by_class[c] = shapes
    return t


def _invert(subclasses: Mapping[URIRef, frozenset[URIRef]]) -> dict[URIRef, frozenset[URIRef]]:
    sup: dict[URIRef, set[URIRef]] = {}
    for cls, subs in subclasses.items():
        for s in subs:
            if s != cls:
                sup.setdefault(s, set()).add(cls)
    return {k: frozenset(v) for k, v in sup.items()}


def _message(triples: list[tuple], defs: Definitions) -> ShaclMessage:
    """One pyshacl result, given as (result, predicate, value-or-(graph, node)) triples."""
    fields: dict[Node, Node] = {}
    for _, p, o in triples:
        fields[p] = o[1] if isinstance(o, tuple) else o
    path = fields.get(SH.resultPath)
    value = fields.get(SH.value)
    shape = fields.get(SH.sourceShape)
    path_name = None
    if isinstance(path, URIRef):
        path_name = (str(path)[len(_UNDECLARED):] if str(path).startswith(_UNDECLARED)
                     else defs.name(path))
    return ShaclMessage(
        focus=defs.name(fields[SH.focusNode]), path=path_name,
        message=str(fields.get(SH.resultMessage) or "violates a shape"),
        shape=defs.name(shape) if isinstance(shape, URIRef) else None,
        value=value.n3() if value is not None else None)
