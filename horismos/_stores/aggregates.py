"""Aggregates on the ``memory`` store answered as Oxigraph answers them.

rdflib's ``MIN``/``MAX`` (7.x) made every answer a literal (``MIN`` of ``:x`` and ``:y`` was
``"http://…/x"``, of a blank node its label), skipped the rows whose expression errs or is
unbound, and ordered literals of different datatypes by datatype first. Oxigraph, the
reference, orders terms as its ``ORDER BY`` does (SPARQL 1.1 §15.1, extended): blank nodes,
then IRIs by their text, then literals; two numbers, or two ``xsd:dateTime`` (or
``xsd:date``, or ``xsd:time``) values both with a timezone or both without, by value; two
durations (``xsd:duration``, ``xsd:dayTimeDuration``, ``xsd:yearMonthDuration``, across the
three) by value where XSD orders them (``PT2H`` before ``P1D``, ``P9M`` before ``P1Y``; not
``P1M`` and ``P30D``: a month is 28 to 31 days); any other two by lexical form, then datatype
IRI, then language tag (``0`` before ``true``, ``"a"@en`` before ``"a"``, ``"10"`` before
``9``).

rdflib's ``SUM`` failed the whole query on a value that is not a number (``SPARQLTypeError``,
or a ``TypeError`` for a boolean) and skipped an unbound one; its ``AVG`` averaged the
numbers alone (``0`` when none), and with ``DISTINCT`` both failed on an unbound value
(``NotBoundError``). On Oxigraph a group holding an unbound value, or one the aggregate
cannot take (not a number for ``SUM``/``AVG``, an error for any), has no ``MIN``, ``MAX``,
``SUM`` nor ``AVG``: the variable is left unbound and the other groups answer.

The store's prepared query names these accumulators instead of rdflib's
(:func:`as_oxigraph_aggregates`), once, when it is prepared: rdflib looks an aggregate's
accumulator up by its algebra node's name, and the names added here are its own, so no other
query rdflib evaluates in the process is changed. ``COUNT``, ``SAMPLE``, ``GROUP_CONCAT``
and ``ORDER BY`` over mixed types are still rdflib's (docs/stores.md).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from rdflib import RDF, XSD, BNode, Literal, URIRef

from .._aggregate_names import AS_OXIGRAPH

if TYPE_CHECKING:
    from rdflib.plugins.sparql.aggregates import Accumulator
    from rdflib.plugins.sparql.sparql import FrozenBindings

__all__ = ["as_oxigraph_aggregates", "asks_aggregates"]

_NUMERIC = frozenset(
    str(XSD[t])
    for t in [
        *("integer", "decimal", "float", "double", "int", "long", "short", "byte"),
        *("nonNegativeInteger", "positiveInteger", "nonPositiveInteger", "negativeInteger"),
        *("unsignedLong", "unsignedInt", "unsignedShort", "unsignedByte"),
    ]
)
_LANG_STRING = RDF.langString
_TIMES = frozenset({str(XSD.dateTime), str(XSD.date), str(XSD.time)})
_DURATIONS = frozenset({str(XSD.duration), str(XSD.dayTimeDuration), str(XSD.yearMonthDuration)})
_DURATION = re.compile(
    r"(-?)P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)D)?"
    r"(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d*)?|\.\d+)S)?)?"
)
_REFERENCES = (dt.date(1696, 9, 1), dt.date(1697, 2, 1), dt.date(1903, 3, 1), dt.date(1903, 7, 1))
"""The instants XSD orders two durations by (XML Schema 1.1 Part 2, §3.3.6.2), as Oxigraph
does: one is before the other where it is at each of them."""


def asks_aggregates(parts: list[Any]) -> bool:
    """Whether a translated query's algebra asks ``MIN``, ``MAX``, ``SUM`` or ``AVG`` (only
    read)."""
    return any(True for _ in _aggregates(parts))


def as_oxigraph_aggregates(parts: list[Any]) -> None:
    """Each ``MIN``, ``MAX``, ``SUM`` and ``AVG`` of ``parts`` (a translated query's algebra)
    answered as on Oxigraph, in place."""
    _register()
    for node in list(_aggregates(parts)):
        node.name = AS_OXIGRAPH[node.name]


def _aggregates(value: Any) -> Any:
    """The ``MIN``, ``MAX``, ``SUM`` and ``AVG`` nodes within ``value``."""
    from rdflib.plugins.sparql.parserutils import CompValue

    stack = [value]
    while stack:
        x = stack.pop()
        if isinstance(x, CompValue):
            if x.name in AS_OXIGRAPH:
                yield x
            stack.extend(dict.values(x))
        elif isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, list | tuple):
            stack.extend(x)


def _order_key(term: Any) -> tuple[Any, ...]:
    """What two terms of different kinds, or literals of no common value space, compare by."""
    if isinstance(term, BNode):
        return (0,)
    if isinstance(term, URIRef):
        return (1, str(term))
    datatype = term.datatype or (_LANG_STRING if term.language else XSD.string)
    return (2, str(term), str(datatype), term.language or "")


def _value(term: Literal) -> tuple[str, Any] | None:
    """A literal's value space and value, where Oxigraph compares literals by value."""
    datatype = str(term.datatype) if term.datatype is not None else ""
    value = None if term.ill_typed else term.value
    if datatype in _NUMERIC and isinstance(value, int | float | Decimal):
        return ("number", value)
    if datatype in _TIMES and isinstance(value, dt.date | dt.time):
        aware = getattr(value, "tzinfo", None) is not None
        return (f"{datatype} {aware}", value)
    if datatype in _DURATIONS:
        duration = _duration(str(term), datatype)
        return None if duration is None else ("duration", duration)
    return None


@dataclass(frozen=True)
class _Duration:
    """A duration as the seconds it adds to each of :data:`_REFERENCES`: equal where all
    four are, one before another where it is at all four (not ``P1M`` and ``P30D``)."""

    at: tuple[Decimal, ...]

    def __lt__(self, other: _Duration) -> bool:
        return all(a < b for a, b in zip(self.at, other.at, strict=True))


def _duration(text: str, datatype: str) -> _Duration | None:
    """The value of a duration literal, parsed here: rdflib's reading takes ``P1D`` as a
    ``yearMonthDuration`` (Oxigraph compares it by its text) and gives a ``timedelta`` or
    its own ``Duration``, which do not compare with each other. ``None`` where ``text`` is
    not of ``datatype``; a zero is taken whatever its type, as rdflib writes every zero
    ``P0D``."""
    found = _DURATION.fullmatch(text)
    if found is None or not any(found.groups()[1:]):
        return None
    sign, years, months, days, hours, minutes, seconds = found.groups()
    n = -1 if sign else 1
    all_months = n * (int(years or 0) * 12 + int(months or 0))
    all_seconds = n * (
        int(days or 0) * 86400
        + int(hours or 0) * 3600
        + int(minutes or 0) * 60
        + Decimal(seconds or 0)
    )
    if all_months or all_seconds:
        if datatype == str(XSD.dayTimeDuration) and (years or months):
            return None
        if datatype == str(XSD.yearMonthDuration) and (days or hours or minutes or seconds):
            return None
    return _Duration(tuple(_days_on(r, all_months) * 86400 + all_seconds for r in _REFERENCES))


def _days_on(start: dt.date, months: int) -> int:
    """The days from ``start`` (a first of the month) to ``months`` months after it: whole
    400-year cycles of the Gregorian calendar (4,800 months, 146,097 days) counted, the rest
    read off the calendar."""
    cycles, rest = divmod(start.month - 1 + months, 4800)
    year, month = divmod(rest, 12)
    later = dt.date(start.year + year, month + 1, 1)
    return cycles * 146097 + (later - start).days


def _oxigraph_before(a: Any, b: Any) -> bool:
    """Whether Oxigraph orders ``a`` before ``b`` (both bound)."""
    if isinstance(a, Literal) and isinstance(b, Literal):
        x, y = _value(a), _value(b)
        if x is not None and y is not None and x[0] == y[0]:
            try:  # unordered by value (a NaN): by lexical form, as Oxigraph falls back to
                if x[1] < y[1] or y[1] < x[1] or x[1] == y[1]:
                    return bool(x[1] < y[1])
            except (TypeError, ArithmeticError):  # a Decimal against a NaN, and the like
                pass
    return _order_key(a) < _order_key(b)


def _is_number(value: Any) -> bool:
    return (
        isinstance(value, Literal)
        and str(value.datatype) in _NUMERIC
        and not value.ill_typed
        and isinstance(value.value, int | float | Decimal)
    )


def _accumulators() -> dict[str, type[Accumulator]]:
    """The accumulators, by the names :func:`as_oxigraph_aggregates` gives their nodes."""
    from rdflib.plugins.sparql.aggregates import Accumulator, Average, Sum
    from rdflib.plugins.sparql.evalutils import _eval
    from rdflib.plugins.sparql.sparql import NotBoundError, SPARQLError

    def failing(base: type[Accumulator], takes: Callable[[Any], bool]) -> type[Accumulator]:
        class Failing(base):  # type: ignore[valid-type,misc]
            """``base``, left unbound by a row whose value it does not ``take``; each row's
            value evaluated once (a costly expression, or one that gives another value each
            time, is not checked on one value and added from another)."""

            expr: Any  # base's: the aggregate's expression
            failed = False
            tested: tuple[FrozenBindings, Any] | None = None  # DISTINCT's row and its value

            def use_row(self, row: FrozenBindings) -> bool:  # DISTINCT's test
                if self.failed:
                    return False
                self.tested = (row, self.evaluated(row))
                return self.tested[1] not in self.seen  # unbound: seen by update, which fails

            def update(self, row: FrozenBindings, aggregator: Any) -> None:
                if self.failed:
                    return
                tested = self.tested
                value = tested[1] if tested and tested[0] is row else self.evaluated(row)
                if value is None or isinstance(value, SPARQLError) or not takes(value):
                    self.failed = True
                else:
                    self.take(value, row, aggregator)

            def evaluated(self, row: FrozenBindings) -> Any:
                try:
                    return _eval(self.expr, row)
                except NotBoundError:
                    return None

            def take(self, value: Any, row: FrozenBindings, aggregator: Any) -> None:
                expr, self.expr = self.expr, value  # base's update reads a literal as itself
                try:
                    super().update(row, aggregator)
                finally:
                    self.expr = expr

            def set_value(self, bindings: MutableMapping[Any, Any]) -> None:
                if not self.failed:
                    super().set_value(bindings)

        return Failing

    def extreme(first: Callable[[Any, Any], bool]) -> type[Accumulator]:
        class Extreme(failing(Accumulator, lambda value: True)):  # type: ignore[misc]
            """The first of a group's values by ``first``."""

            value: Any = None

            def take(self, value: Any, row: FrozenBindings, aggregator: Any) -> None:
                if self.value is None or first(value, self.value):
                    self.value = value

            def set_value(self, bindings: MutableMapping[Any, Any]) -> None:
                if not self.failed and self.value is not None:  # none: left unbound
                    bindings[self.var] = self.value

        return Extreme

    return {
        AS_OXIGRAPH["Aggregate_Min"]: extreme(_oxigraph_before),
        AS_OXIGRAPH["Aggregate_Max"]: extreme(lambda a, b: _oxigraph_before(b, a)),
        AS_OXIGRAPH["Aggregate_Sum"]: failing(Sum, _is_number),
        AS_OXIGRAPH["Aggregate_Avg"]: failing(Average, _is_number),
    }


def _register() -> None:
    from rdflib.plugins.sparql.aggregates import Aggregator

    if AS_OXIGRAPH["Aggregate_Min"] not in Aggregator.accumulator_classes:
        Aggregator.accumulator_classes.update(_accumulators())
