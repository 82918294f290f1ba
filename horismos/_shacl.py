"""A SHACL Core subset compiled to Python: the gate's fast engine, pyshacl its reference.

pyshacl costs 0.7–1.5 ms a call on a step's few triples, most of it building graphs and a
report; the shapes modelers write for their domain (``sh:pattern``, ``sh:maxCount``,
``sh:datatype`` on a ``sh:targetClass``) need a few dictionary lookups. So each node shape is
compiled once, when the definitions load, into plain checks over the focus node's values.

A shape is compiled only if every constraint in it (and in its ``sh:property`` shapes) is in
the subset below and means here exactly what it means to pyshacl, the reference: the same
value nodes fail, and each result carries pyshacl's wording (its generic message, or the
shape's ``sh:message``), focus node, path, value and source shape. Anything else —
``sh:qualifiedValueShape``, SPARQL, several ``sh:message``, a recursive shape — leaves
the shape to pyshacl (:func:`compile_shapes` simply does not return it). At run time, data it
cannot word or compare as pyshacl does (a blank node in a message or under sh:lessThan) raises
:class:`NotCompiled` and pyshacl judges that step. tests/test_shacl_w3c.py holds the compiled
shapes to the W3C SHACL Core suite; tests/test_gate_differential.py to pyshacl.

Subset: sh:property and sh:path (predicates, sequence, alternative, inverse, zero-or-more,
one-or-more, zero-or-one paths, as pyshacl walks them), sh:minCount, sh:maxCount, sh:datatype,
sh:class, sh:nodeKind, sh:pattern (+ sh:flags ``i``/``m``), sh:minLength, sh:maxLength, sh:in,
sh:hasValue, sh:minInclusive, sh:maxInclusive, sh:minExclusive, sh:maxExclusive, sh:languageIn,
sh:uniqueLang, sh:equals, sh:disjoint, sh:lessThan, sh:lessThanOrEquals, sh:closed (+
sh:ignoredProperties), sh:node, sh:not, sh:and, sh:or, sh:xone, sh:message, sh:deactivated,
sh:severity.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import cast

from rdflib import RDF, RDFS, SH, BNode, Graph, Literal, URIRef
from rdflib.term import Node

from ._rdf_lists import list_head
from ._shacl_constraints import COMPILERS
from ._shacl_report import (
    Check,
    Data,
    NotCompiled,
    Result,
    one_value,
    shape_text,
    stringify,
)

__all__ = [
    "ALONE",
    "CompiledShape",
    "Targets",
    "compile_shapes",
    "deactivated",
    "domain_targets",
    "path_properties",
    "refused_alone",
    "superclasses_of",
]

_ANNOTATIONS = {
    RDF.type,
    SH.targetClass,
    SH.targetNode,
    SH.targetSubjectsOf,
    SH.targetObjectsOf,
    SH.name,
    SH.description,
    SH.order,
    SH.group,
    SH.defaultValue,
    SH.message,
    SH.severity,
    SH.deactivated,
    SH.property,
    SH.path,
    SH.flags,
    SH.ignoredProperties,
}
_PROPERTY_ONLY = {SH.minCount, SH.maxCount}


@dataclass(frozen=True, slots=True)
class CompiledShape:
    """A node or property shape compiled once; :meth:`results` validates one focus node."""

    node: Node
    path: Node | None  # None for a node shape; a blank node: a complex path
    walk: Callable[[Data, Node], set[Node]] | None  # the values along a complex path
    message: str | None  # its sh:message, if it has one
    checks: tuple[tuple[URIRef, Check], ...]
    properties: tuple[CompiledShape, ...]
    deactivated: bool

    def results(self, focus: Node, data: Data, *, words: bool = True) -> list[Result]:
        """``focus``'s results; with ``words`` False, without their messages (for a count or
        a conformance check: a message that would print a blank node raises NotCompiled)."""
        if self.deactivated:
            return []
        values: Collection[Node] = (
            (focus,)
            if self.path is None
            else self.walk(data, focus)
            if self.walk is not None
            else data.objects(focus, self.path)  # type: ignore[arg-type]
        )
        out: list[Result] = []
        for component, check in self.checks:
            for value, generic, *path in check(focus, values, data):
                message = (
                    ""
                    if not words
                    else self.message
                    if self.message is not None
                    else generic()
                    if callable(generic)
                    else generic or ""
                )
                out.append(
                    Result(
                        focus, path[0] if path else self.path, value, component, self.node, message
                    )
                )
        for prop in self.properties:
            for v in values:
                out.extend(prop.results(v, data, words=words))
        return out


def compile_shapes(g: Graph, shapes: Iterable[Node]) -> dict[Node, CompiledShape]:
    """The shapes among ``shapes`` that compile; the others are left to pyshacl."""
    if (None, RDF.type, SH.ConstraintComponent) in g or (None, SH.parameter, None) in g:
        return {}  # custom constraint components: only pyshacl knows what they mean
    out: dict[Node, CompiledShape] = {}
    for s in shapes:
        try:
            out[s] = _compile(g, s, _path(g, s, required=False))
        except NotCompiled:
            continue
    return out


def _path(g: Graph, shape: Node, *, required: bool) -> Node | None:
    paths = list(g.objects(shape, SH.path))
    if len(paths) > 1 or (paths and isinstance(paths[0], Literal)) or (required and not paths):
        raise NotCompiled("not one sh:path")
    return paths[0] if paths else None


_Walk = Callable[["Data", Node, bool], set[Node]]
"""(data, node, inverse) → the nodes a path reaches from ``node``."""


def _walk(g: Graph, path: Node, depth: int = 0) -> _Walk:
    """A SHACL property path compiled as pyshacl walks it (an inverse applies to each step of
    a sequence in order)."""
    if isinstance(path, URIRef):
        return lambda data, node, inverse: (
            data.subjects(node, path) if inverse else set(data.objects(node, path))
        )
    if not isinstance(path, BNode) or depth >= 10:
        raise NotCompiled("a path pyshacl would refuse")
    if (path, RDF.first, None) in g:
        items = list(g.items(path))
        if len(items) < 2:
            raise NotCompiled("a sequence path of fewer than two steps")
        steps = [_walk(g, i, depth + 1) for i in items]

        def sequence(data: Data, node: Node, inverse: bool) -> set[Node]:
            nodes = {node}
            for step in steps:
                nodes = {n for m in nodes for n in step(data, m, inverse)}
            return nodes

        return sequence
    kinds = {p: o for p, o in g.predicate_objects(path)}
    if len(kinds) != 1:
        raise NotCompiled("a path node that is not one path")
    ((kind, inner),) = kinds.items()
    if kind == SH.inversePath:
        step = _walk(g, inner, depth + 1)
        return lambda data, node, inverse: step(data, node, not inverse)
    if kind == SH.alternativePath:
        options = [_walk(g, i, depth + 1) for i in g.items(inner)]
        if len(options) < 2:
            raise NotCompiled("an alternative path of fewer than two paths")
        return lambda data, node, inverse: set().union(*(o(data, node, inverse) for o in options))
    if kind in (SH.zeroOrMorePath, SH.oneOrMorePath, SH.zeroOrOnePath):
        step = _walk(g, inner, depth + 1)

        def repeat(data: Data, node: Node, inverse: bool) -> set[Node]:
            found = set() if kind == SH.oneOrMorePath else {node}
            if kind == SH.zeroOrOnePath:
                return found | step(data, node, inverse)
            todo = set(step(data, node, inverse))
            while todo:
                n = todo.pop()
                if n not in found:
                    found.add(n)
                    todo |= step(data, n, inverse)
            return found

        return repeat
    raise NotCompiled(f"{kind} is not a path")


def _compile(
    g: Graph, node: Node, path: Node | None, stack: tuple[Node, ...] = ()
) -> CompiledShape:
    if node in stack:
        raise NotCompiled("a recursive shape")  # pyshacl warns and passes it; leave it to it
    stack = (*stack, node)
    checks: list[tuple[URIRef, Check]] = []
    preds = set(g.predicates(node))
    for p in preds:
        if p in _ANNOTATIONS or p in COMPILERS or p in _SHAPE_COMPILERS:
            continue
        if str(p).startswith(str(SH)):
            raise NotCompiled(f"{p} is not in the compiled subset")
    if SH.ignoredProperties in preds and SH.closed not in preds:
        raise NotCompiled("sh:ignoredProperties without sh:closed")  # pyshacl refuses it
    if path is None and preds & (_PROPERTY_ONLY | {SH.path}):
        raise NotCompiled("a count or a path on a node shape")
    for p in sorted(preds & COMPILERS.keys(), key=str):
        component, compiler = COMPILERS[p]
        checks.append((component, compiler(g, node, path)))
    for p in sorted(preds & _SHAPE_COMPILERS.keys(), key=str):
        component, shape_compiler = _SHAPE_COMPILERS[p]
        checks.append((component, shape_compiler(g, node, stack)))
    properties = []
    for prop in g.objects(node, SH.property):
        properties.append(_compile(g, prop, _path(g, prop, required=True), stack))
    messages = list(g.objects(node, SH.message))
    if len(messages) > 1 or (messages and not isinstance(messages[0], Literal)):
        raise NotCompiled("several sh:message values")
    deactivated = list(g.objects(node, SH.deactivated))
    if deactivated and deactivated != [Literal(True)] and deactivated != [Literal(False)]:
        raise NotCompiled("sh:deactivated other than true or false")
    walk = None
    if path is not None and not isinstance(path, URIRef):
        step = _walk(g, path)
        walk = lambda data, focus: step(data, focus, False)  # noqa: E731
    return CompiledShape(
        node,
        path,
        walk,
        str(messages[0]) if messages else None,
        tuple(checks),
        tuple(properties),
        deactivated == [Literal(True)],
    )


def _conforms(shape: CompiledShape, v: Node, data: Data) -> bool:
    return not shape.results(v, data, words=False)


def _other(g: Graph, node: Node, stack: tuple[Node, ...]) -> CompiledShape:
    return _compile(g, node, _path(g, node, required=False), stack)


def _node(g: Graph, node: Node, stack: tuple[Node, ...]) -> Check:
    target = one_value(g, node, SH.node)
    shape = _other(g, target, stack)
    if shape.path is not None:
        raise NotCompiled("sh:node names a property shape")
    message = (
        f"Value does not conform to Shape {shape_text(g, target)}. "
        "See details for more information."
    )

    def check(focus: Node, values: Collection[Node], data: Data):
        for v in values:
            if not _conforms(shape, v, data):
                yield v, message

    return check


def _not(g: Graph, node: Node, stack: tuple[Node, ...]) -> Check:
    target = one_value(g, node, SH["not"])
    shape, text = _other(g, target, stack), shape_text(g, target)

    def check(focus: Node, values: Collection[Node], data: Data):
        for v in values:
            if _conforms(shape, v, data):
                yield v, lambda v=v: f"Node {stringify(v)} must not conform to shape {text}"

    return check


def _logical(
    param: URIRef,
    words: str,
    passes: Callable[[int, int], bool],
) -> Callable[[Graph, Node, tuple[Node, ...]], Check]:
    """sh:and, sh:or, sh:xone: ``passes(conforming, members)`` over the list's shapes (a set,
    as pyshacl has them: a shape listed twice counts once)."""

    def compile_(g: Graph, node: Node, stack: tuple[Node, ...]) -> Check:
        head = one_value(g, node, param)
        members = list(g.items(head))  # sh:xone counts a shape listed twice twice
        if not members:
            raise NotCompiled(f"an empty {param} list")
        shapes = [_other(g, m, stack) for m in members]
        listed = " , ".join(shape_text(g, m) for m in g.items(head))

        def check(focus: Node, values: Collection[Node], data: Data):
            for v in values:
                if not passes(sum(_conforms(s, v, data) for s in shapes), len(shapes)):
                    yield v, lambda v=v: f"Node {stringify(v)} must conform to {words} {listed}"

        return check

    return compile_


_SHAPE_COMPILERS: dict[Node, tuple[URIRef, Callable[[Graph, Node, tuple[Node, ...]], Check]]] = {
    SH.node: (SH.NodeConstraintComponent, _node),
    SH["not"]: (SH.NotConstraintComponent, _not),
    SH["and"]: (
        SH.AndConstraintComponent,
        _logical(SH["and"], "all shapes in", lambda ok, n: ok == n),
    ),
    SH["or"]: (
        SH.OrConstraintComponent,
        _logical(SH["or"], "one or more shapes in", lambda ok, n: ok > 0),
    ),
    SH.xone: (
        SH.XoneConstraintComponent,
        _logical(SH.xone, "exactly one shape in", lambda ok, n: ok == 1),
    ),
}


ALONE = (
    SH.pattern,
    SH.minLength,
    SH.maxLength,
    SH.minInclusive,
    SH.maxInclusive,
    SH.minExclusive,
    SH.maxExclusive,
    SH.languageIn,
    SH.hasValue,
)
"""The parameters whose compiled check reads nothing but the value nodes: no data graph, no
other property of the focus node."""


def refused_alone(
    g: Graph, shape: Node, value: Node, parameters: Iterable[URIRef] = ALONE
) -> list[URIRef]:
    """The ``parameters`` on ``shape`` (those of :data:`ALONE`) whose compiled check refuses
    ``value`` as the only value of its path (``sh:hasValue``: it is not the value required);
    any other parameter given must read no data either.

    Why: the loader can then tell, before any call, that a value an effect fixes is refused,
    by the very code the gate judges it with, so the two verdicts cannot differ. A parameter
    outside the compiled subset, or a ``sh:pattern`` that is no regular expression (the gate's
    load check reports it), says nothing here."""
    found = []
    for p in parameters:
        if (shape, p, None) not in g:
            continue
        try:
            check = COMPILERS[p][1](g, shape, g.value(shape, SH.path))
        except (NotCompiled, re.error):
            continue
        # these checks read no data: they are given none
        if next(iter(check(value, (value,), cast(Data, None))), None) is not None:
            found.append(p)
    return found


# -- which domain shapes judge a node --------------------------------------------------------


@dataclass
class Targets:
    """The domain node shapes that would target a node, by its class (with the shapes of
    its superclasses), by the node itself and by each property it is the subject of."""

    by_class: dict[Node, set[URIRef]]
    by_node: dict[Node, set[URIRef]]
    by_subject_of: dict[Node, set[URIRef]]


_AUTHORING = "https://w3id.org/horismos/shapes#"
"""The namespace of ``horis-shapes.ttl``'s shapes, which judge what authors write."""


def domain_targets(g: Graph, superclasses: Mapping[URIRef, frozenset[URIRef]]) -> Targets:
    """For each class, node and property: the domain node shapes that would target it.

    The authoring shapes are no domain shapes, though a copy of ``horis-shapes.ttl`` is among
    the files (``ontologies/`` holds one): they judge the definitions when they load, and
    judging world data with them had every gate read each node's ``horis:adapter``, so a
    trace recorded without them diverged on its reads when replayed with them."""
    t = Targets({}, {}, {})
    classes_targeted: dict[Node, set[URIRef]] = {}
    for shape in set(g.subjects(RDF.type, SH.NodeShape)):
        if not isinstance(shape, URIRef) or shape.startswith(_AUTHORING):
            continue
        for c in g.objects(shape, SH.targetClass):
            classes_targeted.setdefault(c, set()).add(shape)
        if (shape, RDF.type, RDFS.Class) in g or (
            shape,
            RDF.type,
            URIRef("http://www.w3.org/2002/07/owl#Class"),
        ) in g:
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


def superclasses_of(
    subclasses: Mapping[URIRef, frozenset[URIRef]],
) -> dict[URIRef, frozenset[URIRef]]:
    """Each class's superclasses, from each class's subclasses (``Definitions.subclasses``)."""
    sup: dict[URIRef, set[URIRef]] = {}
    for cls, subs in subclasses.items():
        for s in subs:
            if s != cls:
                sup.setdefault(s, set()).add(cls)
    return {k: frozenset(v) for k, v in sup.items()}


_HOLDING = (SH.property, SH.node, SH.qualifiedValueShape, SH["not"])
"""What names one shape inside another."""
_LISTING = (SH["and"], SH["or"], SH.xone)
"""What lists shapes inside another."""


def deactivated(g: Graph, shape: Node) -> bool:
    """``shape``, or a shape it sits in (by ``sh:property``, ``sh:node``, ``sh:and``, …),
    says ``sh:deactivated true``: the gate and pyshacl judge nothing by a deactivated shape,
    nor by the shapes inside it, so an authoring check of what they ask must not either."""
    seen, todo = {shape}, [shape]
    while todo:
        node = todo.pop()
        flag = g.value(node, SH.deactivated)
        if isinstance(flag, Literal) and flag.toPython() is True:
            return True
        owners = [s for p in _HOLDING for s in g.subjects(p, node)]
        for cell in g.subjects(RDF.first, node):
            head = list_head(g, cell)
            owners += [s for p in _LISTING for s in g.subjects(p, head)]
        for owner in owners:
            if owner not in seen:
                seen.add(owner)
                todo.append(owner)
    return False


def path_properties(g: Graph, path: Node) -> set[URIRef]:
    """The properties a SHACL path names, however it nests them (sequence, inverse, …)."""
    if isinstance(path, URIRef):
        return {path}
    out: set[URIRef] = set()
    todo, seen = [path], set()
    while todo:
        node = todo.pop()
        if node in seen or not isinstance(node, BNode):
            continue
        seen.add(node)
        for p, o in g.predicate_objects(node):
            if isinstance(o, URIRef) and o != RDF.nil and p != RDF.type:
                out.add(o)
            todo.append(o)
    return out
