"""Only well-formed literals land: a tool's raw result checked before it becomes RDF terms.

rdflib turns almost anything into a literal: ``b"\\xff"`` becomes the string ``"b'\\\\xff'"``,
a ``set`` inside a value its ``repr``, ``float("nan")`` an ``xsd:decimal`` ``"NaN"`` that no
other RDF tool reads back, a NUL character a string no XML or Turtle serialiser can write. So,
before the gate builds triples, each returned value is held to what RDF can carry:

- refused (the gate rejects the result, naming the field and the value): bytes, a NUL or other
  character XML 1.0 cannot hold, NaN or an infinity for any datatype but ``xsd:double`` /
  ``xsd:float`` (a ``"NaN"`` string for ``xsd:decimal`` too), a nested list or mapping, a
  mapping with a key that is not a string, and any other Python object that is not a JSON-like
  scalar, an rdflib term, a date, a time, a duration or a Decimal;
- converted, losslessly: a set is several values (RDF values are unordered anyway), and a NaN
  or infinite double is written in its lexical form ``NaN`` / ``INF`` / ``-INF``.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

from rdflib import XSD, BNode, Literal, URIRef
from rdflib.term import Node
from rdflib.xsd_datetime import Duration

from ._errors import ShaclMessage
from ._model import Tool

__all__ = ["INTEGER_TYPES", "NUMBER_TYPES", "well_formed"]

INTEGER_TYPES = frozenset(
    {
        XSD.integer,
        XSD.int,
        XSD.long,
        XSD.short,
        XSD.byte,
        XSD.nonNegativeInteger,
        XSD.positiveInteger,
        XSD.negativeInteger,
        XSD.nonPositiveInteger,
        XSD.unsignedInt,
        XSD.unsignedLong,
        XSD.unsignedShort,
        XSD.unsignedByte,
    }
)
"""XSD's integer datatypes: a JSON integer fits any of them, and a literal of any is an integer."""
NUMBER_TYPES = frozenset({XSD.decimal, XSD.double, XSD.float})
"""XSD's other numeric datatypes (a JSON number)."""

_DOUBLES = (XSD.double, XSD.float)
_XSD_DECIMAL = XSD.decimal  # a namespace attribute is a lookup (rdflib's __getattr__) each time
_DECIMAL = re.compile(r"^\s*[+-]?(\d+(\.\d*)?|\.\d+)\s*$")
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_SCALARS = (
    str,
    bool,
    int,
    float,
    Decimal,
    dt.date,
    dt.time,
    dt.timedelta,
    Duration,
    URIRef,
    BNode,
    Literal,
)


_BOOLEAN = XSD.boolean


_NUMERIC = frozenset(
    {
        XSD.decimal,
        XSD.double,
        XSD.float,
        XSD.integer,
        XSD.int,
        XSD.long,
        XSD.nonNegativeInteger,
        XSD.positiveInteger,
        XSD.short,
    }
)
_FLOATING = (XSD.decimal, XSD.double, XSD.float)
_STRING = XSD.string


def typed_literal(datatype: URIRef | None, value: Any) -> Literal:
    """The literal a tool's plain value (not a node) lands as under an assertion whose
    ``horis:type`` is ``datatype``: a string in that datatype, a number from its lexical form
    (71 as a decimal is ``Decimal("71")``, as a double 71.0), else rdflib's own; a date-time
    without a zone is taken as UTC. One place, for the gate that builds a result's triples and
    for validate, which holds a constant a function returns to the shapes before any call."""
    if datatype is not None and not isinstance(value, bool):
        if isinstance(value, str) and datatype != _STRING:
            return Literal(value, datatype=datatype)
        if isinstance(value, int) and datatype in _NUMERIC:
            return Literal(str(value), datatype=datatype)
        if isinstance(value, float) and datatype in _FLOATING:
            return Literal(
                Decimal(repr(value)) if datatype == _XSD_DECIMAL else value, datatype=datatype
            )
    kind = type(value)
    if kind is str or kind is bool:
        return plain_literal(value)
    if isinstance(value, dt.datetime) and value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return Literal(value)


def plain_literal(value: str | bool) -> Literal:
    """``Literal(value)`` for an exact ``str`` or ``bool`` (a tool's most common values),
    its attributes set as rdflib's constructor sets them: the text itself with no datatype,
    or ``"true"``/``"false"`` as an ``xsd:boolean``. rdflib's general constructor took
    ~1.7 / ~2.6 µs to arrive there (``tests/test_step_terms.py`` holds it to ``Literal``).
    Any other value goes through rdflib."""
    kind = type(value)
    if kind is str:
        literal = str.__new__(Literal, value)
        literal._datatype = None
    elif kind is bool:
        literal = str.__new__(Literal, "true" if value else "false")
        literal._datatype = _BOOLEAN
    else:
        return Literal(value)
    literal._language = None
    literal._value = value
    literal._ill_typed = None
    return literal


def declared_types(tool: Tool) -> dict[str, URIRef | None]:
    """The datatype (or class) ``tool``'s effect declares for each result key, by the key
    and by its property's IRI (the last declared wins): what :func:`well_formed` checks a
    value against."""
    types: dict[str, URIRef | None] = {}
    if tool.effect is not None:
        for a in tool.effect.asserts:
            types[a.key] = types[str(a.property)] = a.type
    return types


def well_formed(
    tool: Tool,
    result: Mapping[Any, Any] | None,
    focus: Node,
    name: Callable[[Node], str],
    types: Mapping[str, URIRef | None] | None = None,
) -> tuple[dict[str, Any] | None, list[ShaclMessage]]:
    """``result`` with sets spread and non-finite doubles in lexical form, and a message for
    each value RDF cannot carry (empty when every value may land), naming ``focus`` by
    ``name`` (only then: naming a node costs ~50 µs, and most results are well formed).
    ``types``: :func:`declared_types` of ``tool``, when the caller keeps them."""
    if result is None:
        return None, []
    if types is None:
        types = declared_types(tool)
    out: dict[str, Any] = {}
    problems: list[ShaclMessage] = []

    def refuse(key: str, value: Any, why: str) -> None:
        shown = repr(value)
        shown = shown if len(shown) <= 80 else shown[:77] + "…"
        problems.append(ShaclMessage(name(focus), key, f"{why} (got {shown})", value=shown))

    for key, value in result.items():
        if not isinstance(key, str):
            refuse(
                repr(key),
                value,
                f"a result's keys are its fields' names, strings; "
                f"{type(key).__name__} key {key!r} is not one",
            )
            continue
        many = isinstance(value, list | tuple | set | frozenset)
        values = (
            (sorted(value, key=repr) if isinstance(value, set | frozenset) else list(value))
            if many
            else [value]
        )
        kept = []
        for v in values:
            problem, v = _literal(v, types.get(key))
            if problem:
                refuse(key, v, problem)
            else:
                kept.append(v)
        out[key] = kept if many else (kept[0] if kept else None)
    return out, problems


def _literal(v: Any, datatype: URIRef | None) -> tuple[str | None, Any]:
    """What keeps ``v`` from being one literal of ``datatype``, and ``v`` as it may land."""
    kind = type(v)
    if kind is int or kind is bool:  # the common values first: nothing below refuses them
        return None, v
    if kind is str:
        return _text(v, datatype), v
    if v is None or isinstance(v, URIRef | BNode):
        return None, v
    if isinstance(v, bytes | bytearray | memoryview):
        return (
            "bytes are not text: decode them to a string (base64 for binary data) in the tool"
        ), v
    if isinstance(v, list | tuple | set | frozenset | Mapping):
        return (
            f"a {type(v).__name__} inside a value cannot be one literal; return a flat list "
            "of values for a horis:many property"
        ), v
    if not isinstance(v, _SCALARS):
        return f"a {type(v).__name__} is not a value RDF can hold", v
    if isinstance(v, str | Literal):
        problem = _xml_text(str(v))
        if problem is not None:
            return problem, v
    number = float(v) if isinstance(v, float | Decimal) and not isinstance(v, bool) else None
    if isinstance(v, Decimal) and not v.is_finite():
        number = math.nan
    if number is not None and not math.isfinite(number):
        if datatype in _DOUBLES:  # a double's own lexical forms, which read back
            lexical = "NaN" if math.isnan(number) else ("INF" if number > 0 else "-INF")
            return None, Literal(lexical, datatype=datatype)
        return (
            f"{v} is not a number of datatype {_local(datatype)}; only xsd:double and "
            "xsd:float have NaN and infinities"
        ), v
    if isinstance(v, str) and datatype == _XSD_DECIMAL and not _DECIMAL.match(v):
        return f"{v!r} is not an xsd:decimal (digits, an optional sign and point)", v
    return None, v


def _text(v: str, datatype: URIRef | None) -> str | None:
    """What keeps a plain ``str`` from landing as a literal of ``datatype``: what
    :func:`_literal` asks of it, without the checks only other values can fail."""
    problem = _xml_text(v)
    if problem is None and datatype == _XSD_DECIMAL and not _DECIMAL.match(v):
        return f"{v!r} is not an xsd:decimal (digits, an optional sign and point)"
    return problem


def _xml_text(text: str) -> str | None:
    bad = _NOT_XML.search(text)
    if bad is None:
        return None
    return (
        f"character U+{ord(bad.group()):04X} at position {bad.start()} cannot be "
        "written in an RDF literal"
    )


def _local(datatype: URIRef | None) -> str:
    if datatype is None:
        return "(undeclared)"
    return (
        "xsd:" + str(datatype)[len(str(XSD)) :]
        if str(datatype).startswith(str(XSD))
        else (f"<{datatype}>")
    )
