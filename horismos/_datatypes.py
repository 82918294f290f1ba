"""XSD and RDF datatypes as the loader judges literals: which exist, which derive from which.

A literal compared or asserted against a property's range is accepted, refused or corrected
here, with the Turtle to write instead."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from decimal import Decimal, InvalidOperation
from typing import Any

from rdflib import RDF, RDFS, XSD, Literal, URIRef
from rdflib.term import Node

from ._sources import literal_warnings_off
from ._world_lexical import date_kind_hint, ill_typed_text

__all__ = [
    "DATATYPES",
    "DATATYPE_SPACES",
    "NUMERIC",
    "derives_from",
    "is_datatype",
    "literal_datatype",
    "literal_hint",
    "numeric_literal",
    "range_refusing",
    "turtle_term",
]


DATATYPE_SPACES = (str(XSD), str(RDF), str(RDFS.Literal))


def is_datatype(t: URIRef) -> bool:
    """Whether ``t`` is written in a datatype's namespace (XSD, RDF's, ``rdfs:Literal``);
    whether it is a datatype there is :data:`DATATYPES`'s to say."""
    return str(t).startswith(DATATYPE_SPACES)


# RDF 1.1 Concepts §5.1: the XSD datatypes a literal may have. rdflib's XSD namespace also
# holds facets (xsd:pattern, xsd:length) and QName, ENTITY, ID…, which no literal is written in.
_XSD_DATATYPES = (  # noqa: SIM905 (one line of names reads better than 39 lines)
    "string boolean decimal integer double float date time dateTime dateTimeStamp gYear gMonth "
    "gDay gYearMonth gMonthDay duration yearMonthDuration dayTimeDuration byte short int long "
    "unsignedByte unsignedShort unsignedInt unsignedLong positiveInteger nonNegativeInteger "
    "negativeInteger nonPositiveInteger hexBinary base64Binary anyURI language normalizedString "
    "token NMTOKEN Name NCName"
).split()


DATATYPES = frozenset(
    [
        *(XSD[n] for n in _XSD_DATATYPES if n in XSD.__annotations__),
        *(RDF[n] for n in ("langString", "HTML", "XMLLiteral", "JSON", "PlainLiteral")),
        RDFS.Literal,
    ]
)
"""What ``horis:type`` may name as a datatype without declaring it ``a rdfs:Datatype``."""


_DERIVED_FROM = {
    XSD[child]: XSD[parent]
    for pair in (  # noqa: SIM905 (as _XSD_DATATYPES)
        "integer<decimal nonPositiveInteger<integer negativeInteger<nonPositiveInteger "
        "long<integer int<long short<int byte<short nonNegativeInteger<integer "
        "unsignedLong<nonNegativeInteger unsignedInt<unsignedLong unsignedShort<unsignedInt "
        "unsignedByte<unsignedShort positiveInteger<nonNegativeInteger "
        "normalizedString<string token<normalizedString language<token NMTOKEN<token "
        "Name<token NCName<Name dateTimeStamp<dateTime yearMonthDuration<duration "
        "dayTimeDuration<duration"
    ).split()
    for child, parent in [pair.split("<")]
}
"""XSD's built-in datatypes derived by restriction, each to the one it restricts: a value of
``xsd:int`` is an ``xsd:integer`` and an ``xsd:decimal``, not the other way round."""


def derives_from(given: URIRef, wanted: URIRef) -> bool:
    """Whether a literal of ``given`` is also one of ``wanted`` (:data:`_DERIVED_FROM`)."""
    if wanted == RDFS.Literal:
        return True
    if wanted == RDF.PlainLiteral:
        return given in (XSD.string, RDF.langString) or derives_from(given, XSD.string)
    while given is not None:
        if given == wanted:
            return True
        given = _DERIVED_FROM.get(given)  # type: ignore[assignment]
    return False


def range_refusing(given: URIRef, ranges: Iterable[Node]) -> URIRef | None:
    """The first of a property's ``ranges`` a literal of ``given`` is not of; None when it
    is of each (only built-in datatypes are compared; one the files declare is the
    modeler's to judge)."""
    if given not in DATATYPES or given == RDFS.Literal:
        return None
    return next(
        (
            r
            for r in ranges
            if isinstance(r, URIRef) and r in DATATYPES and not derives_from(given, r)
        ),
        None,
    )


NUMERIC = frozenset(
    {
        XSD.decimal,
        XSD.double,
        XSD.float,
        *(c for c in _DERIVED_FROM if derives_from(c, XSD.decimal)),
    }
)
"""The numeric datatypes, which a FILTER compares by value, across types."""


_COMPARED = {
    **dict.fromkeys(NUMERIC, "numbers"),
    XSD.string: "text",
    XSD.boolean: "booleans",
    **dict.fromkeys((XSD.dateTime, XSD.date, XSD.time), "dates and times"),
}
"""What a value range (``sh:minInclusive``…) compares a datatype's values with: a bound of
another of these does not compare with them at all (``3`` with a string), so no value is
within it. Dates and times are one, as their mutual comparisons are the engine's to judge."""


def _base_datatype(dt: URIRef) -> URIRef:
    """The built-in datatype ``dt`` is derived from that :data:`_COMPARED` names
    (``xsd:token`` → ``xsd:string``), else ``dt``."""
    while dt not in _COMPARED and dt in _DERIVED_FROM:
        dt = _DERIVED_FROM[dt]
    return dt


_BARE = (  # Turtle's forms without quotes, and the datatype each gives
    (re.compile(r"[+-]?\d+"), XSD.integer),
    (re.compile(r"[+-]?\d*\.\d+"), XSD.decimal),
    (re.compile(r"[+-]?(\d+\.?\d*|\.\d+)[eE][+-]?\d+"), XSD.double),
    (re.compile(r"true|false"), XSD.boolean),
)


def turtle_term(lit: Node, name: Callable[[Node], str]) -> str:
    """``lit`` as Turtle or a pattern writes it: ``"6.0"``, ``"x"@en``, ``"1"^^xsd:integer``,
    ``true``, ``1.5``; a node by its name (``:x``)."""
    if not isinstance(lit, Literal):
        return name(lit)
    if lit.language:
        return f'"{lit}"@{lit.language}'
    if lit.datatype is None or lit.datatype == XSD.string:
        return f'"{lit}"'
    for form, dt in _BARE:
        if dt == lit.datatype and form.fullmatch(str(lit)):
            return str(lit)
    return f'"{lit}"^^{name(lit.datatype)}'


def literal_datatype(lit: Literal) -> URIRef:
    """The datatype of ``lit``: its own, ``rdf:langString`` for a tagged one (``"Bob"@en``),
    else ``xsd:string``."""
    return lit.datatype or (RDF.langString if lit.language else XSD.string)


def literal_hint(lit: Literal, r: URIRef, name: Callable[[Node], str]) -> str:
    """What to write for ``lit`` as a value of ``r``: ``true`` or ``6.0`` without quotes
    (``false`` for a flag written ``0``: ``"0"^^xsd:boolean`` was said, which means it but
    reads as a number), ``"…"@en`` for ``rdf:langString`` (``"…"^^rdf:langString`` is not a
    literal), or ``"…"^^r``."""
    text = str(lit)
    if r == RDF.langString:
        return f'write "{text}" with its language tag, e.g. "{text}"@en'
    if r == XSD.string and lit.language:  # "BUMPER"@en: the tag is what is wrong
        return f'write "{text}", without its language tag @{lit.language}'
    if r == XSD.boolean and text.strip() in ("1", "0"):  # a flag written as a number
        return f"write {'true' if text.strip() == '1' else 'false'} without quotes"
    swapped = date_kind_hint(text, r, name)
    if swapped is not None:  # "2026-11-20T09:00:00" for a date: rdflib reads either as both
        return swapped
    with literal_warnings_off():
        ill_typed = Literal(text, datatype=r).ill_typed or ill_typed_text(text, r)
    if ill_typed and r == XSD.boolean:  # "yes": "…"^^xsd:boolean named no value to write
        return "write true or false, without quotes, or correct the rdfs:range"
    if ill_typed:
        return f'write a value of {name(r)}, e.g. "…"^^{name(r)}, or correct the rdfs:range'
    for form, dt in _BARE:
        if form.fullmatch(text) and (dt == r or (dt in NUMERIC and r in NUMERIC)):
            return f"write {text} without quotes"
    return f'write "{text}"^^{name(r)}'


def numeric_literal(term: Any) -> tuple[Decimal, str] | None:
    """A SPARQL expression's numeric literal, or one negated (``-5.5``): its value and its
    text as written; None for anything else (a variable, a string, NaN or INF)."""
    negated = getattr(term, "name", None) == "UnaryMinus"
    lit = term.expr if negated else term
    if not isinstance(lit, Literal) or lit.datatype not in NUMERIC:
        return None
    try:
        value = Decimal(str(lit))
    except InvalidOperation:
        return None
    if not value.is_finite():
        return None
    return (-value if negated else value), ("-" if negated else "") + str(lit)
