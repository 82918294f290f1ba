"""A world file's literal whose text is not of its datatype: ``"1,200.00"^^xsd:decimal``.

Why: such a literal loads (rdflib keeps it as text, with a one-line warning at ``run`` naming
neither file nor line), and every pattern comparing it as a number or a date
(``FILTER (?a > 0)``, ``?a <= ?limit``) is false for it: the claim took the other branch, and
``validate --world`` said nothing. The lexical forms of XSD's numbers, booleans and dates are
matched here as the world's files are read once (:mod:`._world_terms`), a regular expression
for each literal of those datatypes, as XSD writes them (rdflib is laxer: it reads ``1e3`` as
a decimal and ``2026-12-01 10:00`` as a date-time, which the stores do not); any other datatype
is not judged.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pyoxigraph as ox
from rdflib import XSD, URIRef
from rdflib.term import Node

__all__ = ["date_kind_hint", "ill_typed", "ill_typed_text", "well_typed_hint"]

_INTEGER = r"[+-]?[0-9]+"
_DECIMAL = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
_DOUBLE = rf"(?:{_DECIMAL}(?:[eE][+-]?[0-9]+)?|[+-]?INF|NaN)"
_ZONE = r"(?:Z|[+-][0-9]{2}:[0-9]{2})?"
_DATE = r"-?[0-9]{4,}-[0-9]{2}-[0-9]{2}"
_TIME = r"[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?"

_INTEGERS = (
    *(XSD.integer, XSD.int, XSD.long, XSD.short, XSD.byte),
    *(XSD.nonNegativeInteger, XSD.positiveInteger, XSD.nonPositiveInteger, XSD.negativeInteger),
)
"""The integer datatypes judged by :data:`_INTEGER` (not the unsigned ones)."""

_FORMS = {
    ox.NamedNode(str(dt)): re.compile(rf"\s*(?:{form})\s*")  # XSD collapses the spaces
    for dt, form in (
        *((dt, _INTEGER) for dt in _INTEGERS),
        (XSD.decimal, _DECIMAL),
        (XSD.double, _DOUBLE),
        (XSD.float, _DOUBLE),
        (XSD.boolean, r"true|false|1|0"),
        (XSD.date, _DATE + _ZONE),
        (XSD.dateTime, _DATE + "T" + _TIME + _ZONE),
    )
}
"""XSD's lexical spaces, by datatype (without the value limits of ``xsd:int`` and the like)."""


def ill_typed(value: ox.Literal) -> bool:
    """Whether ``value``'s text is not of its datatype, for the datatypes judged here."""
    form = _FORMS.get(value.datatype)
    return form is not None and form.fullmatch(value.value) is None


def ill_typed_text(text: str, datatype: URIRef) -> bool:
    """:func:`ill_typed` of an rdflib literal's text and datatype: a pattern's literal, whose
    ``ill_typed`` rdflib's SPARQL parser leaves unset."""
    form = _FORMS.get(ox.NamedNode(str(datatype)))
    return form is not None and form.fullmatch(text) is None


_BARE = frozenset({XSD.integer, XSD.decimal, XSD.boolean})
"""The datatypes Turtle writes without quotes in the forms matched here."""

_DECIMAL_COMMA = re.compile(r"([+-]?[0-9]+),([0-9]{1,2}|[0-9]{4,})")
"""A number written with a decimal comma (``"1200,50"``, ``"0,8"``): one comma, no point, and
not three digits after it (``"1,200"`` is read as a thousands separator). Why: the hint took
out the comma as a separator, and ``write 120050`` made a claim of 1200.50 a hundred times
larger."""


_SPACED_DATE_TIME = re.compile(
    rf"(?P<date>{_DATE})(?P<sep>T|\s+)(?P<time>[0-9]{{2}}:[0-9]{{2}})"
    rf"(?P<seconds>:[0-9]{{2}}(?:\.[0-9]+)?)?\s*(?P<zone>Z|[+-][0-9]{{2}}:[0-9]{{2}})?"
)
"""A date-time written as people write one: a space for XSD's ``T``, seconds left out."""


def well_typed_hint(text: str, datatype: URIRef, name: Callable[[Node], str]) -> str:
    """What to write for ``text`` as a literal of ``datatype``: the text without its
    thousands separators or spaces, when that is one, else a literal of the datatype."""
    form = _FORMS.get(ox.NamedNode(str(datatype)))
    comma = _DECIMAL_COMMA.fullmatch(text.strip())
    if comma is not None:  # "1200,50": a decimal comma, never a thousands separator
        if form is None or datatype in _INTEGERS:
            return f'write a literal of {name(datatype)}, e.g. "…"^^{name(datatype)}'
        point = f"{comma[1]}.{comma[2]}"
        if datatype in _BARE:
            return f"write {point} without quotes (a point, not a comma, before the decimals)"
        return f'write "{point}"^^{name(datatype)} (a point, not a comma, before the decimals)'
    spaced = _SPACED_DATE_TIME.fullmatch(text.strip()) if datatype == XSD.dateTime else None
    if spaced is not None and (spaced["sep"] != "T" or not spaced["seconds"]):
        # "2026-12-07 10:00": a T between the two, and seconds
        seconds = spaced["seconds"] or ":00"
        when = f"{spaced['date']}T{spaced['time']}{seconds}{spaced['zone'] or ''}"
        why = [
            *(["a T between the date and the time"] if spaced["sep"] != "T" else []),
            *(["its seconds"] if not spaced["seconds"] else []),
        ]
        return f'write "{when}"^^{name(datatype)} (' + ", and ".join(why) + ")"
    if datatype == XSD.date:
        slashed = _DAY_FIRST.fullmatch(text.strip())
        if slashed is not None:
            return _day_first_hint(slashed, name)
    mended = re.sub(r"[,_\s]", "", text)
    if form is not None and mended != text and form.fullmatch(mended):
        if datatype in _BARE:
            return f"write {mended} without quotes (no thousands separator)"
        return f'write "{mended}"^^{name(datatype)} (no thousands separator)'
    if datatype == XSD.boolean:  # "yes": "…"^^xsd:boolean named no value to write
        return "write true or false, without quotes"
    return f'write a literal of {name(datatype)}, e.g. "…"^^{name(datatype)}'


_DAY_FIRST = re.compile(r"(?P<a>[0-9]{1,2})[/.](?P<b>[0-9]{1,2})[/.](?P<year>[0-9]{4})")
"""A date written as people write one, day or month first (``20/11/2026``, ``05.11.2026``)."""

_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]

_YEAR_FIRST = "(XSD writes a date year first: YYYY-MM-DD)"


def _day_first_hint(m: re.Match[str], name: Callable[[Node], str]) -> str:
    """The XSD date of ``20/11/2026``; of ``05/11/2026``, both it may be: which is the month
    is for the author to say, never guessed."""
    a, b, year = int(m["a"]), int(m["b"]), m["year"]
    readings = [(d, mo) for d, mo in ((a, b), (b, a)) if 1 <= d <= 31 and 1 <= mo <= 12]
    readings = list(dict.fromkeys(readings))
    dt = name(XSD.date)
    if not readings:
        return f'write a literal of {dt}, e.g. "{year}-01-31"^^{dt} {_YEAR_FIRST}'
    if len(readings) == 1:
        d, mo = readings[0]
        return f'write "{year}-{mo:02d}-{d:02d}"^^{dt} {_YEAR_FIRST}'
    said = [
        f'"{year}-{mo:02d}-{d:02d}"^^{dt} if it is the {_ordinal(d)} of {_MONTHS[mo - 1]}'
        for d, mo in readings
    ]
    return f"write {said[0]}, or {said[1]} {_YEAR_FIRST}"


def _ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``11th``, ``22nd``."""
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th') }"


_DATE_TIME_TEXT = re.compile(rf"\s*(?P<date>{_DATE})T{_TIME}{_ZONE}\s*")
_DATE_TEXT = re.compile(rf"\s*(?P<date>{_DATE}){_ZONE}\s*")


def date_kind_hint(text: str, datatype: URIRef, name: Callable[[Node], str]) -> str | None:
    """What to write for a date-time's ``text`` as an ``xsd:date`` (the date alone), or a
    date's as an ``xsd:dateTime`` (with a time of day); None for any other pair. Why: the hint
    was the same text under the other datatype, ``"2026-11-20T09:00:00"^^xsd:date``, which
    rdflib reads and the stores do not — the next ``validate`` said it was no date."""
    if datatype == XSD.date:
        m = _DATE_TIME_TEXT.fullmatch(text)
        if m is not None:
            return (
                f'write "{m["date"]}"^^{name(XSD.date)} (the date alone: an xsd:date holds no '
                f"time of day), or make the rdfs:range {name(XSD.dateTime)}"
            )
    elif datatype == XSD.dateTime:
        m = _DATE_TEXT.fullmatch(text)
        if m is not None:
            return (
                f'write "{m["date"]}T00:00:00"^^{name(XSD.dateTime)} (an xsd:dateTime needs a '
                "time of day: midnight here, or the time it happened), or make the rdfs:range "
                f"{name(XSD.date)}"
            )
    return None
