"""The SHACL Core constraints on a shape's value nodes, each compiled to a plain check.

:mod:`._shacl` compiles a shape by looking up each of its parameters in :data:`COMPILERS`;
the compilers live here, one concept: what each constraint means to pyshacl (which value
nodes fail, and the words of its result). The constraints that nest shapes (``sh:node``,
``sh:not``, ``sh:and``…) compile shapes themselves, so they stay with the compiler.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Collection, Iterable
from decimal import Decimal
from typing import Any, cast

from rdflib import RDF, RDFS, SH, XSD, BNode, Graph, Literal, URIRef
from rdflib.term import Node

from ._rdf_lists import list_members
from ._shacl_report import (
    Check,
    Data,
    NotCompiled,
    non_negative_integer,
    one_value,
    shape_text,
    stringify,
)

__all__ = ["COMPILERS", "closed_allows", "closed_properties", "has_datatype"]


def _min_count(g: Graph, node: Node, path: Node | None) -> Check:
    n = non_negative_integer(g, node, SH.minCount)
    where = f"->{shape_text(g, path)}" if path is not None else ""

    def check(focus: Node, values: Collection[Node], data: Data):
        if len(values) < n:
            yield None, lambda: f"Less than {n} values on {stringify(focus)}{where}"

    return check


def _max_count(g: Graph, node: Node, path: Node | None) -> Check:
    n = non_negative_integer(g, node, SH.maxCount)
    where = f"->{shape_text(g, path)}" if path is not None else ""

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


def _datatype(g: Graph, node: Node, path: Node | None) -> Check:
    t = one_value(g, node, SH.datatype)
    message = f"Value is not Literal with datatype {stringify(t)}"

    def check(focus: Node, values: Collection[Node], data: Data):
        for v in values:
            if not has_datatype(v, t):
                yield v, message

    return check


def _class(g: Graph, node: Node, path: Node | None) -> Check:
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


def _node_kind(g: Graph, node: Node, path: Node | None) -> Check:
    kind = one_value(g, node, SH.nodeKind)
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


def _pattern(g: Graph, node: Node, path: Node | None) -> Check:
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


def _length(param: URIRef, op: str) -> Callable[[Graph, Node, Node | None], Check]:
    def compile_(g: Graph, node: Node, path: Node | None) -> Check:
        rule = one_value(g, node, param)
        n = non_negative_integer(g, node, param)
        message = f"String length not {op} {stringify(rule)}"

        def check(focus: Node, values: Collection[Node], data: Data):
            for v in values:
                if op == ">=" and n == 0:
                    continue
                if _blank(v) or not (len(_string(v)) >= n if op == ">=" else len(_string(v)) <= n):
                    yield v, message

        return check

    return compile_


def _in(g: Graph, node: Node, path: Node | None) -> Check:
    head = one_value(g, node, SH["in"])
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


def _has_value(g: Graph, node: Node, path: Node | None) -> Check:
    hv = one_value(g, node, SH.hasValue)
    the_set = [stringify(hv)]
    text = shape_text(g, path) if path is not None else ""

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


def _language_in(g: Graph, node: Node, path: Node | None) -> Check:
    head = one_value(g, node, SH.languageIn)
    needs: set[str] = set()
    for lang in g.items(head):
        if not isinstance(lang, Literal) or not isinstance(lang.value, str):
            raise NotCompiled("a language in sh:languageIn that is not a string")
        needs.add(lang.value.lower())
    message = f"String language is not in {shape_text(g, head)}"

    def check(focus: Node, values: Collection[Node], data: Data):
        for v in values:
            lang = v.language if isinstance(v, Literal) else None
            if not lang or not (
                "*" in needs or lang.lower() in needs or lang.split("-")[0].lower() in needs
            ):
                yield v, message

    return check


def _unique_lang(g: Graph, node: Node, path: Node | None) -> Check:
    flag = one_value(g, node, SH.uniqueLang)
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
) -> Callable[[Graph, Node, Node | None], Check]:
    """sh:equals, sh:disjoint: the value nodes against the focus node's values of another
    property."""

    def compile_(g: Graph, node: Node, path: Node | None) -> Check:
        other = one_value(g, node, param)
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
) -> Callable[[Graph, Node, Node | None], Check]:
    """sh:lessThan, sh:lessThanOrEquals, compared as pyshacl compares: IRIs and string
    literals by their text, other literals by rdflib's order, a string never with a non-string;
    a blank node or an incomparable pair is pyshacl's to raise on."""

    def compile_(g: Graph, node: Node, path: Node | None) -> Check:
        other = one_value(g, node, param)
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


def closed_properties(g: Graph, shape: Node) -> set[Node]:
    """The properties a closed ``shape`` allows its value nodes, as the gate's closed check
    reads them: every ``sh:property``'s ``sh:path`` (deactivated ones too, complex paths as
    they are) and the members of ``sh:ignoredProperties``. The one reading of them: the
    effects' closed check, the world's and the rdf:type slip each wrote it again, so one
    could drift from what the gate rejects. A list that is none (the loader refuses it)
    allows nothing of its own."""
    allowed: set[Node] = {
        p for prop in g.objects(shape, SH.property) for p in g.objects(prop, SH.path)
    }
    for ignored in g.objects(shape, SH.ignoredProperties):
        allowed.update(list_members(g, ignored))
    return allowed


def closed_allows(g: Graph, shape: Node) -> set[Node] | None:
    """:func:`closed_properties` of ``shape`` when it says ``sh:closed true``; None when it
    is not closed. The authoring checks read the flag so; the gate's compiler reads it as
    pyshacl does (exactly one value, a literal, else it is not compiled and pyshacl
    judges): the two differ only on a flag that is no single ``xsd:boolean``, where an
    authoring check claiming the shape closed could be wrong."""
    flag = g.value(shape, SH.closed)
    if not (isinstance(flag, Literal) and flag.value is True):
        return None
    return closed_properties(g, shape)


def _closed(g: Graph, node: Node, path: Node | None) -> Check:
    flag = one_value(g, node, SH.closed)
    if not isinstance(flag, Literal):
        raise NotCompiled("sh:closed is not a literal")
    if not flag.value:
        return lambda focus, values, data: ()
    allowed = closed_properties(g, node)

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
) -> Callable[[Graph, Node, Node | None], Check]:
    def compile_(g: Graph, node: Node, path: Node | None) -> Check:
        bound = one_value(g, node, param)
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


COMPILERS: dict[Node, tuple[URIRef, Callable[[Graph, Node, Node | None], Check]]] = {
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
