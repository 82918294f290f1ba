"""A tool's declared effect, compiled once into a plain check of what the tool returned.

The effect is our contract (nothing undeclared, right datatype or class, required values
present, one value unless ``horis:many``, no value for a property the runtime fixes), so it
needs no SHACL engine: :class:`EffectCheck` says exactly what pyshacl says for the closed node
shape the declaration stands for (tests/test_gate_effect.py generates that shape and holds the
check to pyshacl's verdict on it). Apart from :mod:`._gate`, which judges the domain's shapes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import cast

from rdflib import RDF, RDFS, Literal, URIRef
from rdflib.term import Node

from ._definitions_model import Definitions
from ._errors import ShaclMessage
from ._model import Assertion, Tool
from ._shacl_constraints import has_datatype

__all__ = [
    "UNDECLARED",
    "Delta",
    "EffectCheck",
    "effect_shape_iri",
    "ordered",
    "path_name",
    "reaches",
]

_TYPE, _SUBCLASS = RDF.type, RDFS.subClassOf  # a namespace attribute is a lookup each time
_RESOURCE = RDFS.Resource

UNDECLARED = "urn:horismos:undeclared:"


# What the effect check says, worded once for the check and the shape generator alike.
_CLOSED = "writes a property that the effect of {tool} does not declare"
_FIXED = "{p} is written by the runtime (horis:value); the tool must not return it"
_CLASS = "{p} must be a node of class {t}"
_DATATYPE = "{p} must be a literal of datatype {t}"
_REQUIRED = (
    "{p} is required by the effect and the result does not give it "
    "(declare horis:optional true to allow leaving it out)"
)
_ONE = "{p} takes one value and the result gives several (declare horis:many true to allow several)"

Delta = dict[Node, dict[Node, set[Node]]]
"""A small graph as subject → predicate → objects."""

_NONE: frozenset[Node] = frozenset()  # no values: read, never changed


def ordered(messages: set[ShaclMessage]) -> list[ShaclMessage]:
    # a set: a value can break two constraints that say the same thing (sh:class, sh:nodeKind)
    return sorted(messages, key=lambda m: (m.path or "", m.message, m.value or ""))


@dataclass(frozen=True, slots=True)
class _PropertyCheck:
    """One asserted property: what its property shapes in the effect shape check."""

    property: URIRef
    path: str  # the property's name in messages
    datatype: URIRef | None  # each value a literal of this datatype,
    cls: URIRef | None  # or a node (not a literal) of this class
    kind_message: str
    min_message: str | None  # at least one value, unless horis:optional
    max_count: int | None  # 1 unless horis:many; 0 when the runtime writes it
    max_message: str

    @classmethod
    def compile(cls, a: Assertion, defs: Definitions) -> _PropertyCheck:
        path, p = path_name(a.property, defs), defs.name(a.property)
        if a.value is not None:
            return cls(a.property, path, None, None, "", None, 0, _FIXED.format(p=p))
        assert a.type is not None
        t = defs.name(a.type)
        return cls(
            a.property,
            path,
            None if a.is_class else a.type,
            a.type if a.is_class else None,
            (_CLASS if a.is_class else _DATATYPE).format(p=p, t=t),
            None if a.optional else _REQUIRED.format(p=p),
            None if a.many else 1,
            _ONE.format(p=p),
        )

    def failures(self, values: Collection[Node], g: Delta) -> list[tuple[str, Node | None]]:
        """(message, offending value or None) for each way ``values`` break the shapes."""
        out: list[tuple[str, Node | None]] = []
        for v in values:
            if self.cls is not None:
                if isinstance(v, Literal) or not _instance_of(g, v, self.cls):
                    out.append((self.kind_message, v))
            elif self.datatype is not None and not has_datatype(v, self.datatype):
                out.append((self.kind_message, v))
        if self.min_message is not None and not values:
            out.append((self.min_message, None))
        if self.max_count is not None and len(values) > self.max_count:
            out.append((self.max_message, None))
        return out


@dataclass(frozen=True, slots=True)
class EffectCheck:
    """A tool's effect compiled once: the closed effect shape, checked in Python."""

    shape: URIRef  # the generated shape's IRI, named by the closed message
    message: str
    declared: frozenset[URIRef]
    properties: tuple[_PropertyCheck, ...]

    @classmethod
    def compile(cls, tool: Tool, defs: Definitions) -> EffectCheck:
        assert tool.effect is not None
        return cls(
            effect_shape_iri(tool),
            _CLOSED.format(tool=defs.name(tool.iri)),
            frozenset(a.property for a in tool.effect.asserts),
            tuple(_PropertyCheck.compile(a, defs) for a in tool.effect.asserts),
        )

    def messages(self, subject: Node, g: Delta, defs: Definitions) -> list[ShaclMessage]:
        """What pyshacl reports for ``subject`` in ``g`` against the effect shape."""
        own = g.get(subject, {})
        found: list[tuple[str, str, URIRef | None, Node | None]] = []
        for p in self.properties:
            failed = p.failures(own.get(p.property, _NONE), g)
            if failed:
                found.extend((p.path, m, None, v) for m, v in failed)
        for pred, objects in own.items():
            if pred not in self.declared:
                path = path_name(cast(URIRef, pred), defs)
                found.extend(
                    (path, self.message, self.shape, o)
                    for o in objects
                    if not (pred == _TYPE and o == _RESOURCE)
                )  # as pyshacl
        if not found:
            return []
        focus = defs.name(subject)
        return ordered(
            {
                ShaclMessage(
                    focus,
                    path,
                    message,
                    defs.name(shape) if shape is not None else None,
                    v.n3() if v is not None else None,
                )
                for path, message, shape, v in found
            }
        )


def _instance_of(g: Delta, node: Node, cls: URIRef) -> bool:
    """sh:class in ``g``: a type of ``node`` is ``cls`` or reaches it by rdfs:subClassOf."""
    return reaches(g.get(node, {}).get(_TYPE, ()), cls, lambda c: g.get(c, {}).get(_SUBCLASS, ()))


def reaches(types: Iterable[Node], cls: Node, supers: Callable[[Node], Iterable[Node]]) -> bool:
    """Whether one of ``types`` is ``cls`` or reaches it through ``supers``."""
    todo = list(types)
    seen: set[Node] = set()
    while todo:
        c = todo.pop()
        if c == cls:
            return True
        if c not in seen:
            seen.add(c)
            todo.extend(supers(c))
    return False


def effect_shape_iri(tool: Tool) -> URIRef:
    digest = hashlib.sha1(str(tool.iri).encode()).hexdigest()[:16]
    return URIRef(f"urn:horismos:effect-shape:{digest}")


def path_name(path: URIRef, defs: Definitions) -> str:
    """A property as messages name it; an undeclared key as the tool spelled it."""
    text = str(path)
    return text[len(UNDECLARED) :] if text.startswith(UNDECLARED) else defs.name(path)
