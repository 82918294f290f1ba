"""``MIN`` and ``MAX`` on the ``memory`` store, in the order Oxigraph gives them.

rdflib's ``MIN``/``MAX`` (7.x) made every answer a literal (``MIN`` of ``:x`` and ``:y`` was
``"http://…/x"``, of a blank node its label), skipped the rows whose expression errs or is
unbound, and ordered literals of different datatypes by datatype first. Oxigraph, the
reference, orders terms as its ``ORDER BY`` does (SPARQL 1.1 §15.1, extended): blank nodes,
then IRIs by their text, then literals; two numbers, or two ``xsd:dateTime`` (or
``xsd:date``) values both with a timezone or both without, by value; any other two by
lexical form, then datatype IRI, then language tag (``0`` before ``true``, ``"a"@en``
before ``"a"``, ``"10"`` before ``9``). A group holding an unbound or erring row has no
``MIN`` nor ``MAX``.

The store's prepared query names these accumulators instead of rdflib's
(:func:`in_oxigraph_order`), once, when it is prepared: rdflib looks an aggregate's
accumulator up by its algebra node's name, and the names added here are its own, so no other
query rdflib evaluates in the process is changed. Ordering other than ``MIN``/``MAX``
(``ORDER BY`` over mixed types) is still rdflib's (docs/stores.md).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, MutableMapping
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from rdflib import RDF, XSD, BNode, Literal, URIRef

if TYPE_CHECKING:
    from rdflib.plugins.sparql.aggregates import Accumulator
    from rdflib.plugins.sparql.parserutils import CompValue
    from rdflib.plugins.sparql.sparql import FrozenBindings

__all__ = ["has_extremes", "in_oxigraph_order"]

_OWN = {"Aggregate_Min": "Aggregate_Min_Oxigraph", "Aggregate_Max": "Aggregate_Max_Oxigraph"}
_NUMERIC = frozenset(
    str(XSD[t])
    for t in [
        *("integer", "decimal", "float", "double", "int", "long", "short", "byte"),
        *("nonNegativeInteger", "positiveInteger", "nonPositiveInteger", "negativeInteger"),
        *("unsignedLong", "unsignedInt", "unsignedShort", "unsignedByte"),
    ]
)
_LANG_STRING = RDF.langString
_TIMES = frozenset({str(XSD.dateTime), str(XSD.date)})


def has_extremes(parts: list[Any]) -> bool:
    """Whether a translated query's algebra asks ``MIN`` or ``MAX`` (only read)."""
    return any(True for _ in _aggregates(parts))


def in_oxigraph_order(parts: list[Any]) -> None:
    """Each ``MIN``/``MAX`` of ``parts`` (a translated query's algebra) answered in
    Oxigraph's order, in place."""
    _register()
    for node in list(_aggregates(parts)):
        node.name = _OWN[node.name]


def _aggregates(value: Any) -> Any:
    """The ``MIN``/``MAX`` nodes within ``value``."""
    from rdflib.plugins.sparql.parserutils import CompValue

    stack = [value]
    while stack:
        x = stack.pop()
        if isinstance(x, CompValue):
            if x.name in _OWN:
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
    if datatype in _TIMES and isinstance(value, dt.date):
        aware = isinstance(value, dt.datetime) and value.tzinfo is not None
        return (f"{datatype} {aware}", value)
    return None


def _oxigraph_before(a: Any, b: Any) -> bool:
    """Whether Oxigraph orders ``a`` before ``b`` (both bound)."""
    if isinstance(a, Literal) and isinstance(b, Literal):
        x, y = _value(a), _value(b)
        if x is not None and y is not None and x[0] == y[0]:
            try:  # unordered by value (a NaN): by lexical form, as Oxigraph falls back to
                if x[1] < y[1] or y[1] < x[1] or x[1] == y[1]:
                    return bool(x[1] < y[1])
            except TypeError:  # an aware time against a naive one, and the like
                pass
    return _order_key(a) < _order_key(b)


def _accumulator(first: Callable[[Any, Any], bool]) -> type[Accumulator]:
    from rdflib.plugins.sparql.aggregates import Accumulator
    from rdflib.plugins.sparql.evalutils import _eval
    from rdflib.plugins.sparql.sparql import NotBoundError, SPARQLError

    class Extreme(Accumulator):
        """The first of a group's values by ``first``; none if one of them is unbound or an
        error, as on Oxigraph."""

        def __init__(self, aggregation: CompValue) -> None:
            super().__init__(aggregation)
            self.value: Any = None
            self.failed = False
            self.use_row = self.dont_care  # type: ignore[method-assign]  # DISTINCT: the same

        def update(self, row: FrozenBindings, aggregator: Any) -> None:
            if self.failed:
                return
            try:
                value = _eval(self.expr, row)
            except NotBoundError:
                value = None
            if value is None or isinstance(value, SPARQLError):
                self.failed, self.value = True, None
            elif self.value is None or first(value, self.value):
                self.value = value

        def set_value(self, bindings: MutableMapping[Any, Any]) -> None:
            if self.value is not None:  # none: the variable left unbound
                bindings[self.var] = self.value

    return Extreme


def _register() -> None:
    from rdflib.plugins.sparql.aggregates import Aggregator

    if _OWN["Aggregate_Min"] not in Aggregator.accumulator_classes:
        Aggregator.accumulator_classes[_OWN["Aggregate_Min"]] = _accumulator(_oxigraph_before)
        Aggregator.accumulator_classes[_OWN["Aggregate_Max"]] = _accumulator(
            lambda a, b: _oxigraph_before(b, a)
        )
