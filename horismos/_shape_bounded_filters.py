"""A FILTER bounding a value by a number its domain shapes never allow it: ``?this :fraudScore
?s . FILTER (?s > 80)`` where the shape judging a claim says ``sh:minInclusive 0.0 ;
sh:maxInclusive 1.0`` of ``:fraudScore``.

Why: a score is on the shape's scale, 0 to 1, and the pattern was written on another, a
percentage. No score the gate lets land is above 80, so the rule sending a likely fraud to a
denial was never taken and every claim was paid; its mirror, ``FILTER (?s < 80)`` guarding the
payout, held for every claim and kept none back. Both validated, and nothing failed: the data
came out silently wrong.

Only what is certain is said: a FILTER of the group itself (not inside ``NOT EXISTS``,
``OPTIONAL`` or a ``UNION``'s branch), a conjunct comparing a variable with a number by ``>``,
``>=``, ``<``, ``<=`` or ``=``, the variable bound in the same group as the object of a triple
with an IRI predicate, and the number lying beyond every bound the domain shapes give that
property (the loosest of them, of each property shape with ``sh:path`` the property: a value
one shape allows is a value the FILTER may meet). A number at the bound itself is not said.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, TypeAlias

from rdflib import SH, Graph, URIRef, Variable
from rdflib.term import Node

from ._datatypes import numeric_literal
from ._held_waits import plain_triples
from ._shacl import deactivated

__all__ = ["BeyondBound", "beyond_bounds", "said"]

_FLIP = {">": "<", ">=": "<=", "<": ">", "<=": ">=", "=": "="}
_LOW = (SH.minInclusive, SH.minExclusive)
_HIGH = (SH.maxInclusive, SH.maxExclusive)

_Side: TypeAlias = tuple[Decimal, URIRef, URIRef]
"""A bound: its value, the constraint and the node shape saying it."""


@dataclass(frozen=True)
class BeyondBound:
    """One comparison of ``?var`` (the value of ``prop``) with ``number`` (as written) that
    the shapes decide: ``never`` true, or always true (it excludes nothing)."""

    var: str
    prop: URIRef
    op: str
    number: str
    value: Decimal
    """``number``'s value"""
    never: bool
    low: _Side | None
    """the loosest lower bound: its value, the constraint and the shape saying it"""
    high: _Side | None


def beyond_bounds(g: Graph, algebra: Any) -> Iterator[BeyondBound]:
    """Each comparison of a parsed pattern whose number lies beyond what the domain shapes
    of ``g`` allow the compared property (see the module's docstring)."""
    for triples, expr in _filters(algebra.get("p")):
        bound_by = {
            o: p for _, p, o in triples if isinstance(o, Variable) and isinstance(p, URIRef)
        }
        for var, op, number, text in _comparisons(expr):
            prop = bound_by.get(var)
            if prop is None:
                continue
            low, high = _range(g, prop)
            if high is not None and number > high[0]:
                never = op in (">", ">=", "=")
            elif low is not None and number < low[0]:
                never = op in ("<", "<=", "=")
            else:
                continue
            yield BeyondBound(str(var), prop, op, text, number, never, low, high)


def _filters(node: Any) -> Iterator[tuple[list[tuple[Any, Any, Any]], Any]]:
    """The FILTERs of the group itself, each with the triples of the group it filters."""
    name = getattr(node, "name", None)
    if name == "Project":
        yield from _filters(node.p)
    elif name == "Filter":
        triples = plain_triples(node.p)
        if triples is not None:
            yield triples, node.expr
        yield from _filters(node.p)


def _comparisons(expr: Any) -> Iterator[tuple[Variable, str, Decimal, str]]:
    """The conjuncts of ``expr`` comparing a variable with a number: ``(?v, op, number, the
    number as written)``, ``op`` read with ``?v`` on the left."""
    name = getattr(expr, "name", None)
    if name == "ConditionalAndExpression":
        for part in [expr.expr, *(expr.other or ())]:
            yield from _comparisons(part)
        return
    if name != "RelationalExpression" or str(expr.op) not in _FLIP:
        return
    left, op, right = expr.expr, str(expr.op), expr.other
    if isinstance(right, Variable):
        left, op, right = right, _FLIP[op], left
    if not isinstance(left, Variable):
        return
    found = numeric_literal(right)
    if found is not None:
        yield left, op, found[0], found[1]


def _range(g: Graph, prop: URIRef) -> tuple[_Side | None, _Side | None]:
    """The loosest lower and upper numeric bounds the domain property shapes of ``prop``
    give it, each with its constraint and node shape; None for a side any of them leaves
    open, or none bounds."""
    lows: list[_Side | None] = []
    highs: list[_Side | None] = []
    for pshape in set(g.subjects(SH.path, prop)):
        owners = [s for s in g.subjects(SH.property, pshape) if isinstance(s, URIRef)]
        if len(owners) != 1 or deactivated(g, pshape):
            continue  # a shape inside sh:or, sh:not …, or several: not certain
        bounds = [_bound(g, pshape, c, owners[0]) for c in (*_LOW, *_HIGH)]
        if all(b is None for b in bounds):
            continue  # says nothing of the values' range
        lows.append(next((b for b in bounds[:2] if b is not None), None))
        highs.append(next((b for b in bounds[2:] if b is not None), None))
    return _loosest(lows, min), _loosest(highs, max)


def _loosest(found: list[_Side | None], pick: Callable[..., _Side]) -> _Side | None:
    """The loosest of ``found`` (``pick``: ``min`` for lower bounds, ``max`` for upper);
    None when one of them leaves the side open, or there are none."""
    sides = [b for b in found if b is not None]
    return pick(sides, key=lambda b: b[0]) if sides and len(sides) == len(found) else None


def _bound(g: Graph, pshape: Node, constraint: URIRef, shape: URIRef) -> _Side | None:
    """``(value, constraint, shape)`` of ``pshape``'s numeric ``constraint``, or None."""
    found = numeric_literal(g.value(pshape, constraint))
    return None if found is None else (found[0], constraint, shape)


def said(b: BeyondBound, name: Callable[[Node], str]) -> tuple[str, str]:
    """The message and the hint for ``b``."""
    beyond = b.high if b.high is not None and b.value > b.high[0] else b.low
    assert beyond is not None
    allowed = " and ".join(f"{name(x[1])} {x[0]}" for x in (b.low, b.high) if x is not None)
    message = (
        f"FILTER (?{b.var} {b.op} {b.number}) compares ?{b.var}, a value of {name(b.prop)}, "
        f"with {b.number}, but shape {name(beyond[2])} allows {name(b.prop)} only within "
        f"{allowed}, which {b.number} lies beyond: "
        + (
            "no value meets the comparison, so the FILTER is never true"
            if b.never
            else "every value meets the comparison, so the FILTER excludes nothing"
        )
    )
    number = b.value
    if (
        b.low is not None
        and b.high is not None
        and b.low[0] >= 0
        and b.high[0] <= 1
        and 1 < number <= 100
    ):
        hint = (
            f"write {(number / 100).normalize():f} for {b.number}%: {name(b.prop)} is a "
            f"fraction, {b.low[0]} to {b.high[0]}"
        )
    else:
        hint = f"compare with a number within {allowed}, or correct the shape's bounds"
    return message, hint
