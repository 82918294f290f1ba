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

import datetime as dt
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Protocol, cast

from rdflib import RDF, RDFS, SH, XSD, BNode, Graph, Literal, URIRef
from rdflib.namespace import NamespaceManager
from rdflib.term import Node

__all__ = [
    "CompiledShape",
    "Data",
    "NotCompiled",
    "Result",
    "Targets",
    "compile_shapes",
    "domain_targets",
    "has_datatype",
    "path_properties",
    "refused_alone",
    "stringify",
    "superclasses_of",
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


def _shape_text(g: Graph, node: Node, depth: int = 0) -> str:
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
        return "( {} )".format(" ".join(_shape_text(g, i, depth + 1) for i in g.items(node)))
    parts: dict[str, str] = {}
    for p in preds:
        objects = sorted(_shape_text(g, o, depth + 1) for o in g.objects(node, p))
        parts[p.n3(namespace_manager=_NM)] = ", ".join(objects)
    if len(parts) > 1:
        return "[ {} ]".format(" ; ".join(f"{p} {o}" for p, o in sorted(parts.items())))
    ((name, text),) = parts.items()
    return f"[ {name} {text} ]"


_Message = str | Callable[[], str] | None
_Check = Callable[[Node, Collection[Node], "Data"], Iterable[tuple[Any, ...]]]
"""(focus, value nodes, data) → (value node or None, generic message[, result path]) per
failure; a message that prints a data node is a callable, worded only when reported."""

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
    checks: tuple[tuple[URIRef, _Check], ...]
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
    checks: list[tuple[URIRef, _Check]] = []
    preds = set(g.predicates(node))
    for p in preds:
        if p in _ANNOTATIONS or p in _COMPILERS or p in _SHAPE_COMPILERS:
            continue
        if str(p).startswith(str(SH)):
            raise NotCompiled(f"{p} is not in the compiled subset")
    if SH.ignoredProperties in preds and SH.closed not in preds:
        raise NotCompiled("sh:ignoredProperties without sh:closed")  # pyshacl refuses it
    if path is None and preds & (_PROPERTY_ONLY | {SH.path}):
        raise NotCompiled("a count or a path on a node shape")
    for p in sorted(preds & _COMPILERS.keys(), key=str):
        component, compiler = _COMPILERS[p]
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


def _one(g: Graph, node: Node, p: URIRef) -> Node:
    values = list(g.objects(node, p))
    if len(values) != 1:
        raise NotCompiled(f"{len(values)} values of {p}")
    return values[0]


def _integer(g: Graph, node: Node, p: URIRef) -> int:
    v = _one(g, node, p)
    if not (
        isinstance(v, Literal)
        and v.datatype == XSD.integer
        and isinstance(v.value, int)
        and v.value >= 0
    ):
        raise NotCompiled(f"{p} is not a non-negative xsd:integer")
    return v.value


def _min_count(g: Graph, node: Node, path: Node | None) -> _Check:
    n = _integer(g, node, SH.minCount)
    where = f"->{_shape_text(g, path)}" if path is not None else ""

    def check(focus: Node, values: Collection[Node], data: Data):
        if len(values) < n:
            yield None, lambda: f"Less than {n} values on {stringify(focus)}{where}"

    return check


def _max_count(g: Graph, node: Node, path: Node | None) -> _Check:
    n = _integer(g, node, SH.maxCount)
    where = f"->{_shape_text(g, path)}" if path is not None else ""

    def check(focus: Node, values: Collection[Node], data: Data):
        if len(values) > n:
            yield None, lambda: f"More than {n} values on {stringify(focus)}{where}"

    return check


# the Python value a well-typed literal of these datatypes has (pyshacl checks it too)
_PYTHON_VALUE: dict[Node, type | tuple[type, ...]] = {
    XSD.string: (str, bytes),
    RDF.langString: (str, bytes),
    XSD.integer: int,
    XSD.float: float,
    XSD.decimal: Decimal,
    XSD.boolean: bool,
    XSD.date: dt.date,
    XSD.time: dt.time,
    XSD.dateTime: dt.datetime,
}


# looked up once: rdflib answers RDF.x, RDFS.x and XSD.x through __getattr__ on each use
_RDFS_LITERAL, _RDFS_DATATYPE = RDFS.Literal, RDFS.Datatype
_XSD_STRING, _LANG_STRING = XSD.string, RDF.langString
_STRING_TYPES = (None, _LANG_STRING, _XSD_STRING)


# the datatypes a literal of another datatype (or of none) may still have: told by one look-up,
# where comparing ``datatype`` to each in turn was four calls of rdflib's Python ``__eq__``
_ANY_LITERAL, _ANY_DATATYPE, _PLAIN, _TAGGED = range(4)
_OTHERWISE: dict[Node, int] = {
    _RDFS_LITERAL: _ANY_LITERAL,
    _RDFS_DATATYPE: _ANY_DATATYPE,
    _XSD_STRING: _PLAIN,
    _LANG_STRING: _TAGGED,
}


def has_datatype(v: Node, datatype: Node) -> bool:
    """sh:datatype as pyshacl has it: a plain literal is xsd:string, a language-tagged one
    rdf:langString; an ill-typed literal fails; rdfs:Literal takes any literal."""
    if not isinstance(v, Literal):
        return False
    own = v.datatype
    if own is datatype or (own is not None and own == datatype):
        return v.ill_typed is not True and _value_fits(v, datatype)
    kind = _OTHERWISE.get(datatype)
    if kind == _ANY_LITERAL:
        return True
    if kind == _ANY_DATATYPE:
        return bool(own)
    if kind == _PLAIN and own is None and v.language is None:
        return _value_fits(v, datatype)
    if kind == _TAGGED and v.language:
        return _value_fits(v, datatype)
    return False


def _value_fits(v: Literal, datatype: Node) -> bool:
    expected = _PYTHON_VALUE.get(datatype)
    return expected is None or isinstance(v.value, expected)


def _datatype(g: Graph, node: Node, path: Node | None) -> _Check:
    t = _one(g, node, SH.datatype)
    message = f"Value is not Literal with datatype {stringify(t)}"

    def check(focus: Node, values: Collection[Node], data: Data):
        for v in values:
            if not has_datatype(v, t):
                yield v, message

    return check


def _class(g: Graph, node: Node, path: Node | None) -> _Check:
    classes = sorted(g.objects(node, SH["class"]), key=str)  # as the reference holds them
    message = (
        f"Value does not have class {stringify(classes[0])}"
        if len(classes) < 2
        else f"Value class is not in classes ({', '.join(stringify(c) for c in classes)})"
    )

    def check(focus: Node, values: Collection[Node], data: Data):
        for c in classes:
            for v in values:
                if isinstance(v, Literal) or not data.instance_of(v, c):
                    yield v, message

    return check


_KINDS = {
    SH.BlankNode: (BNode,),
    SH.IRI: (URIRef,),
    SH.Literal: (Literal,),
    SH.BlankNodeOrIRI: (BNode, URIRef),
    SH.BlankNodeOrLiteral: (BNode, Literal),
    SH.IRIOrLiteral: (URIRef, Literal),
}


def _node_kind(g: Graph, node: Node, path: Node | None) -> _Check:
    kind = _one(g, node, SH.nodeKind)
    if kind not in _KINDS:
        raise NotCompiled("an unknown sh:nodeKind")
    kinds, message = _KINDS[cast(URIRef, kind)], f"Value is not of Node Kind {stringify(kind)}"

    def check(focus: Node, values: Collection[Node], data: Data):
        for v in values:
            if not isinstance(v, kinds):
                yield v, message

    return check


def _string(v: Node) -> str:
    """SPARQL str() as pyshacl computes it for the string-based constraints."""
    if isinstance(v, Literal) and v.value is not None and v.datatype in _STRING_TYPES:
        return str(v.value)
    return str(v)


def _pattern(g: Graph, node: Node, path: Node | None) -> _Check:
    patterns = list(g.objects(node, SH.pattern))
    flags = list(g.objects(node, SH.flags))
    if not all(isinstance(p, Literal) for p in patterns) or len(flags) > 1:
        raise NotCompiled("a sh:pattern that is not a literal, or several sh:flags")
    text = str(flags[0]).lower() if flags else ""
    if set(text) - {"i", "m"}:
        raise NotCompiled("sh:flags other than i and m")  # pyshacl ignores them
    re_flags = (re.I if "i" in text else 0) | (re.M if "m" in text else 0)
    matchers = [re.compile(str(p), re_flags) for p in patterns]
    message = (
        f"Value does not match pattern '{cast(Literal, patterns[0]).value}'"
        if len(patterns) < 2
        else "Value does not match every pattern in ('{}')".format(
            "', '".join(str(p.value) for p in patterns)  # type: ignore[attr-defined]
        )
    )

    def check(focus: Node, values: Collection[Node], data: Data):
        for m in matchers:
            for v in values:
                if _blank(v) or not m.search(_string(v)):
                    yield v, message

    return check


def _blank(v: Node) -> bool:
    """Whether ``v`` is a blank node: an IRI or a literal told by its type, before rdflib's
    ``isinstance`` (its terms are ABCs: a miss costs ~0.5 µs)."""
    kind = type(v)
    return kind is not URIRef and kind is not Literal and isinstance(v, BNode)


def _length(param: URIRef, op: str) -> Callable[[Graph, Node, Node | None], _Check]:
    def compile_(g: Graph, node: Node, path: Node | None) -> _Check:
        rule = _one(g, node, param)
        n = _integer(g, node, param)
        message = f"String length not {op} {stringify(rule)}"

        def check(focus: Node, values: Collection[Node], data: Data):
            for v in values:
                if op == ">=" and n == 0:
                    continue
                if _blank(v) or not (len(_string(v)) >= n if op == ">=" else len(_string(v)) <= n):
                    yield v, message

        return check

    return compile_


def _in(g: Graph, node: Node, path: Node | None) -> _Check:
    head = _one(g, node, SH["in"])
    allowed: set[Node] = set()
    for item in g.items(head):
        allowed.add(item)  # in list order, as pyshacl fills its set: the message lists them
    # sorted: pyshacl lists them in set order, which differs between processes, and a replay
    # in another process must word the same rejection the same way (_gate sorts pyshacl's)
    listed = sorted(stringify(v) for v in allowed)

    def check(focus: Node, values: Collection[Node], data: Data):
        for v in values:
            if v not in allowed:
                yield v, lambda v=v: f"Value {stringify(v)} not in list {listed}"

    return check


def _has_value(g: Graph, node: Node, path: Node | None) -> _Check:
    hv = _one(g, node, SH.hasValue)
    the_set = [stringify(hv)]
    text = _shape_text(g, path) if path is not None else ""

    def check(focus: Node, values: Collection[Node], data: Data):
        if hv not in values:
            yield (
                None,
                lambda: (
                    f"Node {stringify(focus)}->{text} does not contain a value in the "
                    f"set: {the_set}"
                    if path is not None
                    else f"Node {stringify(focus)} value is not a in the set of values: {the_set}"
                ),
            )

    return check


def _language_in(g: Graph, node: Node, path: Node | None) -> _Check:
    head = _one(g, node, SH.languageIn)
    needs: set[str] = set()
    for lang in g.items(head):
        if not isinstance(lang, Literal) or not isinstance(lang.value, str):
            raise NotCompiled("a language in sh:languageIn that is not a string")
        needs.add(lang.value.lower())
    message = f"String language is not in {_shape_text(g, head)}"

    def check(focus: Node, values: Collection[Node], data: Data):
        for v in values:
            lang = v.language if isinstance(v, Literal) else None
            if not lang or not (
                "*" in needs or lang.lower() in needs or lang.split("-")[0].lower() in needs
            ):
                yield v, message

    return check


def _unique_lang(g: Graph, node: Node, path: Node | None) -> _Check:
    flag = _one(g, node, SH.uniqueLang)
    if path is None or not (
        isinstance(flag, Literal)
        and flag.datatype == XSD.boolean
        and str(flag) in ("true", "false")
    ):
        raise NotCompiled("sh:uniqueLang other than true or false on a property shape")
    unique = str(flag) == "true"

    def check(focus: Node, values: Collection[Node], data: Data):
        if not unique:
            return
        seen: set[str] = set()
        duplicates: set[str] = set()
        for v in values:
            if isinstance(v, Literal) and v.language:
                (duplicates if v.language.lower() in seen else seen).add(v.language.lower())
        for _ in duplicates:
            yield None, "More than one String shares the same Language"

    return check


def _pair(
    param: URIRef,
    op: str,
    pairs: Callable[[set[Node], set[Node]], Iterable[Node]],
) -> Callable[[Graph, Node, Node | None], _Check]:
    """sh:equals, sh:disjoint: the value nodes against the focus node's values of another
    property."""

    def compile_(g: Graph, node: Node, path: Node | None) -> _Check:
        other = _one(g, node, param)
        if not isinstance(other, URIRef):
            raise NotCompiled(f"{param} is not a property")
        text = stringify(other)

        def check(focus: Node, values: Collection[Node], data: Data):
            for v in pairs(set(values), data.objects(focus, other)):
                yield v, lambda v=v: f"Value of {stringify(focus)}->{text} {op} {stringify(v)}"

        return check

    return compile_


def _ordered_pair(
    param: URIRef,
    op: str,
    holds: Callable[[Any, Any], bool],
) -> Callable[[Graph, Node, Node | None], _Check]:
    """sh:lessThan, sh:lessThanOrEquals, compared as pyshacl compares: IRIs and string
    literals by their text, other literals by rdflib's order, a string never with a non-string;
    a blank node or an incomparable pair is pyshacl's to raise on."""

    def compile_(g: Graph, node: Node, path: Node | None) -> _Check:
        other = _one(g, node, param)
        if path is None or not isinstance(other, URIRef):
            raise NotCompiled(f"{param} on a node shape, or not a property")
        text = stringify(other)

        def key(v: Node) -> tuple[bool, Any]:
            if isinstance(v, BNode):
                raise NotCompiled(f"{param} on a blank node")
            if isinstance(v, URIRef):
                return True, str(v)
            if isinstance(v, Literal) and isinstance(v.value, str):
                return True, v.value
            return False, v

        def check(focus: Node, values: Collection[Node], data: Data):
            for v in set(values):
                v_string, v_key = key(v)
                for c in data.objects(focus, other):
                    c_string, c_key = key(c)
                    try:
                        ok = v_string == c_string and holds(v_key, c_key)
                    except TypeError as e:
                        raise NotCompiled(f"{param}: values that do not compare") from e
                    if not ok:
                        yield (
                            v,
                            lambda v=v: f"Value of {stringify(focus)}->{text} {op} {stringify(v)}",
                        )

        return check

    return compile_


def _closed(g: Graph, node: Node, path: Node | None) -> _Check:
    flag = _one(g, node, SH.closed)
    if not isinstance(flag, Literal):
        raise NotCompiled("sh:closed is not a literal")
    if not flag.value:
        return lambda focus, values, data: ()
    allowed: set[Node] = {
        p for prop in g.objects(node, SH.property) for p in g.objects(prop, SH.path)
    }
    for ignored in g.objects(node, SH.ignoredProperties):
        allowed.update(g.items(ignored))

    def check(focus: Node, values: Collection[Node], data: Data):
        for v in values:
            for p, o in data.outgoing(v):
                if p not in allowed and not (p == RDF.type and o == RDFS.Resource):
                    yield (
                        o,
                        (
                            lambda o=o: (
                                f"Node {stringify(focus)} is closed. It cannot have "
                                f"value: {stringify(o)}"
                            )
                        ),
                        p,
                    )

    return check


def _compare(v: Literal, bound: Literal) -> int:
    """pyshacl's literal order (raises TypeError when the two do not compare)."""
    if v.eq(bound):
        return 0
    if v.value.__class__ in (dt.datetime, dt.time):
        if v.value == bound.value:
            return 0
        if v.value > bound.value:
            return 1
    elif v > bound:
        return 1
    return -1


def _range(
    param: URIRef,
    op: str,
    passes: Callable[[int], bool],
) -> Callable[[Graph, Node, Node | None], _Check]:
    def compile_(g: Graph, node: Node, path: Node | None) -> _Check:
        bound = _one(g, node, param)
        if not isinstance(bound, Literal):
            raise NotCompiled(f"{param} is not a literal")
        message = f"Value is not {op} {stringify(bound)}"
        bound_is_string = isinstance(bound.value, str)

        def check(focus: Node, values: Collection[Node], data: Data):
            for v in values:
                ok = False
                if isinstance(v, Literal) and isinstance(v.value, str) == bound_is_string:
                    try:
                        ok = passes(_compare(v, bound))
                    except (TypeError, NotImplementedError):
                        ok = False
                if not ok:
                    yield v, message

        return check

    return compile_


def _conforms(shape: CompiledShape, v: Node, data: Data) -> bool:
    return not shape.results(v, data, words=False)


def _other(g: Graph, node: Node, stack: tuple[Node, ...]) -> CompiledShape:
    return _compile(g, node, _path(g, node, required=False), stack)


def _node(g: Graph, node: Node, stack: tuple[Node, ...]) -> _Check:
    target = _one(g, node, SH.node)
    shape = _other(g, target, stack)
    if shape.path is not None:
        raise NotCompiled("sh:node names a property shape")
    message = (
        f"Value does not conform to Shape {_shape_text(g, target)}. "
        "See details for more information."
    )

    def check(focus: Node, values: Collection[Node], data: Data):
        for v in values:
            if not _conforms(shape, v, data):
                yield v, message

    return check


def _not(g: Graph, node: Node, stack: tuple[Node, ...]) -> _Check:
    target = _one(g, node, SH["not"])
    shape, text = _other(g, target, stack), _shape_text(g, target)

    def check(focus: Node, values: Collection[Node], data: Data):
        for v in values:
            if _conforms(shape, v, data):
                yield v, lambda v=v: f"Node {stringify(v)} must not conform to shape {text}"

    return check


def _logical(
    param: URIRef,
    words: str,
    passes: Callable[[int, int], bool],
) -> Callable[[Graph, Node, tuple[Node, ...]], _Check]:
    """sh:and, sh:or, sh:xone: ``passes(conforming, members)`` over the list's shapes (a set,
    as pyshacl has them: a shape listed twice counts once)."""

    def compile_(g: Graph, node: Node, stack: tuple[Node, ...]) -> _Check:
        head = _one(g, node, param)
        members = list(g.items(head))  # sh:xone counts a shape listed twice twice
        if not members:
            raise NotCompiled(f"an empty {param} list")
        shapes = [_other(g, m, stack) for m in members]
        listed = " , ".join(_shape_text(g, m) for m in g.items(head))

        def check(focus: Node, values: Collection[Node], data: Data):
            for v in values:
                if not passes(sum(_conforms(s, v, data) for s in shapes), len(shapes)):
                    yield v, lambda v=v: f"Node {stringify(v)} must conform to {words} {listed}"

        return check

    return compile_


_SHAPE_COMPILERS: dict[Node, tuple[URIRef, Callable[[Graph, Node, tuple[Node, ...]], _Check]]] = {
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


_COMPILERS: dict[Node, tuple[URIRef, Callable[[Graph, Node, Node | None], _Check]]] = {
    SH.minCount: (SH.MinCountConstraintComponent, _min_count),
    SH.maxCount: (SH.MaxCountConstraintComponent, _max_count),
    SH.datatype: (SH.DatatypeConstraintComponent, _datatype),
    SH["class"]: (SH.ClassConstraintComponent, _class),
    SH.nodeKind: (SH.NodeKindConstraintComponent, _node_kind),
    SH.pattern: (SH.PatternConstraintComponent, _pattern),
    SH.minLength: (SH.MinLengthConstraintComponent, _length(SH.minLength, ">=")),
    SH.maxLength: (SH.MaxLengthConstraintComponent, _length(SH.maxLength, "<=")),
    SH["in"]: (SH.InConstraintComponent, _in),
    SH.closed: (SH.ClosedConstraintComponent, _closed),
    # pyshacl words a sh:lessThan result "<=" and a sh:lessThanOrEquals one "<"
    SH.lessThan: (
        SH.LessThanConstraintComponent,
        _ordered_pair(SH.lessThan, "<=", lambda a, b: a < b),
    ),
    SH.lessThanOrEquals: (
        SH.LessThanOrEqualsConstraintComponent,
        _ordered_pair(SH.lessThanOrEquals, "<", lambda a, b: a <= b),
    ),
    SH.languageIn: (SH.LanguageInConstraintComponent, _language_in),
    SH.uniqueLang: (SH.UniqueLangConstraintComponent, _unique_lang),
    SH.equals: (
        SH.EqualsConstraintComponent,
        _pair(SH.equals, "!=", lambda vs, others: [*(vs - others), *(others - vs)]),
    ),
    SH.disjoint: (
        SH.DisjointConstraintComponent,
        _pair(SH.disjoint, "==", lambda vs, others: vs & others),
    ),
    SH.hasValue: (SH.HasValueConstraintComponent, _has_value),
    SH.minInclusive: (
        SH.MinInclusiveConstraintComponent,
        _range(SH.minInclusive, ">=", lambda c: c >= 0),
    ),
    SH.maxInclusive: (
        SH.MaxInclusiveConstraintComponent,
        _range(SH.maxInclusive, "<=", lambda c: c <= 0),
    ),
    SH.minExclusive: (
        SH.MinExclusiveConstraintComponent,
        _range(SH.minExclusive, ">", lambda c: c > 0),
    ),
    SH.maxExclusive: (
        SH.MaxExclusiveConstraintComponent,
        _range(SH.maxExclusive, "<", lambda c: c < 0),
    ),
}


_ALONE = (
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


def refused_alone(g: Graph, shape: Node, value: Node) -> list[URIRef]:
    """The parameters of :data:`_ALONE` on ``shape`` whose compiled check refuses ``value``
    as the only value of its path (``sh:hasValue``: it is not the value required).

    Why: the loader can then tell, before any call, that a value an effect fixes is refused,
    by the very code the gate judges it with, so the two verdicts cannot differ. A parameter
    outside the compiled subset, or a ``sh:pattern`` that is no regular expression (the gate's
    load check reports it), says nothing here."""
    found = []
    for p in _ALONE:
        if (shape, p, None) not in g:
            continue
        try:
            check = _COMPILERS[p][1](g, shape, g.value(shape, SH.path))
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
