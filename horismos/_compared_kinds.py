"""A FILTER comparing two variables one of which holds nodes and the other literals, or
literals of datatypes SPARQL never compares (a number with a date).

Why: ``FILTER (?a <= ?p)`` for ``FILTER (?a <= ?limit)``, ``?a`` an amount (the object of an
``owl:DatatypeProperty``) and ``?p`` the claim's policy (the object of an
``owl:ObjectProperty``): ordering a node against a literal is an error in SPARQL, ``=`` between
them is never true, so the FILTER never held, every claim was denied, and the definitions
validated. The variables' kinds are read from the triples of the FILTER's group as the other
kind checks read them (:func:`~._term_kinds.value_kinds`); a variable the group also gives a
value otherwise (``BIND``, ``VALUES``, a subquery) is not judged, nor a comparison under
``!`` or ``||`` (it need not hold), nor ``!=`` (always true between the two: excludes
nothing, said elsewhere of constants).

Likewise ``FILTER (?when > ?a)``, a time stamp against an amount, or ``FILTER (NOW() >
"2026-01-01")``, a date-time against a string: a number, a string, a date or time and a
boolean are never ordered nor equal to one another, in any store, so the FILTER never held. A
variable's datatype is its property's ``rdfs:range`` (every property binding it in the group
agreeing); ``NOW()`` is a date-time. A date against a date-time is not judged: stores differ
(rdflib orders them, Oxigraph does not). A variable against a constant is said by the
literal checks (:mod:`._pattern_value_checks`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rdflib import RDF, RDFS, XSD, Graph, Literal, URIRef, Variable
from rdflib.term import Node

from ._datatypes import NUMERIC
from ._preconditions import assigned_variables, group_triples, pattern_groups
from ._term_kinds import value_kinds

if TYPE_CHECKING:
    from rdflib.plugins.sparql.parserutils import CompValue

    from ._model import Step

__all__ = [
    "CrossedComparison",
    "CrossedDatatypes",
    "compared_as",
    "crossed_comparisons",
    "crossed_datatypes",
    "is_now",
    "needed_comparisons",
    "now_compared",
    "now_compared_in",
    "pattern_selects",
    "text_ordered_numbers",
]


def _is_comp(x: Any) -> bool:
    """Whether ``x`` is a node of rdflib's SPARQL algebra: imported here, when a pattern is
    judged, not with ``import horismos`` (rdflib's SPARQL and pyparsing are ~120 ms of the
    start of every command, and only some need them: tests/test_startup.py)."""
    from rdflib.plugins.sparql.parserutils import CompValue

    return isinstance(x, CompValue)


_ORDERED = frozenset({"<", ">", "<=", ">=", "="})
_NOT_READ = frozenset({"Builtin_EXISTS", "Builtin_NOTEXISTS", "UnaryNot"})


@dataclass(frozen=True)
class CrossedComparison:
    """``?left op ?right`` as written, which of them is the node, and the group's other
    variables of the literal's kind (what the node's place was likely meant for)."""

    left: str
    op: str
    right: str
    node: str
    literals: tuple[str, ...]


def _needed(expr: Any) -> Iterator[CompValue]:
    """The relational expressions ``expr`` holds only if they hold: reached through ``&&``
    alone (several FILTERs of a group are one ``&&``)."""
    if isinstance(expr, list | tuple):
        for e in expr:
            yield from _needed(e)
        return
    if not _is_comp(expr) or expr.name in _NOT_READ:
        return
    if expr.name == "RelationalExpression":
        yield expr
    elif expr.name == "ConditionalAndExpression":
        yield from _needed(expr.get("expr"))
        yield from _needed(expr.get("other"))


def crossed_comparisons(g: Graph, algebra: Any) -> list[CrossedComparison]:
    """Each needed ``?a OP ?b`` of ``algebra``'s FILTERs where the FILTER's group binds one
    to nodes and the other to literals (:func:`~._term_kinds.value_kinds`)."""
    found = []
    for group in pattern_groups(algebra):
        expr = group.get("expr")
        if group.name != "Filter" or not _is_comp(expr):
            continue
        kinds = value_kinds(g, group_triples(group.p))
        assigned = assigned_variables(group.p)
        for c in _needed(expr):
            a, b, op = c.get("expr"), c.get("other"), str(c.get("op"))
            if op not in _ORDERED or not isinstance(a, Variable) or not isinstance(b, Variable):
                continue
            if str(a) in assigned or str(b) in assigned:
                continue
            ka, kb = kinds.get(str(a)), kinds.get(str(b))
            if ka is None or kb is None or ka == kb:
                continue
            node, literal = (str(a), str(b)) if ka == "node" else (str(b), str(a))
            others = sorted(v for v, k in kinds.items() if k == "literal" and v != literal)
            found.append(CrossedComparison(str(a), op, str(b), node, tuple(others)))
    return found


_FAMILIES = {
    **dict.fromkeys(NUMERIC, "a number"),
    **dict.fromkeys((XSD.string, XSD.normalizedString, XSD.token, RDF.langString), "a string"),
    **dict.fromkeys((XSD.dateTime, XSD.dateTimeStamp, XSD.date, XSD.time), "a date or time"),
    XSD.boolean: "a boolean",
}
"""What a literal of each datatype is compared as; two of different families never are."""


def compared_as(datatype: URIRef | None) -> str | None:
    """What a literal of ``datatype`` is compared as (``"a number"``, ``"a string"``, ``"a
    date or time"``, ``"a boolean"``); None for a datatype of no family, which is not
    judged."""
    return _FAMILIES.get(datatype) if datatype is not None else None


@dataclass(frozen=True)
class Side:
    """One side of a comparison: as written, what it is compared as, and the property whose
    rdfs:range says so (None for ``NOW()`` and a constant)."""

    written: str
    family: str
    prop: URIRef | None = None


@dataclass(frozen=True)
class CrossedDatatypes:
    """``left op right``, whose sides are never compared."""

    left: Side
    op: str
    right: Side


_NOW = Side("NOW()", "a date or time")


def _side(
    g: Graph, operand: Any, binders: dict[str, list[URIRef]], assigned: set[str]
) -> Side | None:
    """An operand as a :class:`Side`; None when what it is compared as is not known."""
    if _is_comp(operand) and operand.name == "Builtin_NOW":
        return _NOW
    if isinstance(operand, Literal):
        dt = operand.datatype or (RDF.langString if operand.language else XSD.string)
        family = _FAMILIES.get(dt)
        return Side(operand.n3(), family) if family else None
    if not isinstance(operand, Variable) or str(operand) in assigned:
        return None
    props = binders.get(str(operand), [])
    ranged = [(p, r) for p in props for r in g.objects(p, RDFS.range) if isinstance(r, URIRef)]
    families = {_FAMILIES.get(r) for _, r in ranged}
    if not ranged or len(families) != 1 or None in families:
        return None
    return Side(f"?{operand}", families.pop() or "", min(p for p, _ in ranged))


def _is_var_or_now(x: Any) -> bool:
    return isinstance(x, Variable) or _is_now(x)


def crossed_datatypes(g: Graph, algebra: Any) -> list[CrossedDatatypes]:
    """Each needed ``a OP b`` of ``algebra``'s FILTERs whose sides are literals of families
    never compared: two variables, a variable and ``NOW()``, or ``NOW()`` and a constant (a
    variable against a constant is the literal checks' to say)."""
    found = []
    for op, a, b, binders, assigned in _comparisons(algebra):
        if op not in _ORDERED:
            continue
        pair = (_is_var_or_now(a) and _is_var_or_now(b)) or (
            isinstance(a, Literal) != isinstance(b, Literal)
            and _is_now(a) != _is_now(b)
            and (_is_now(a) or _is_now(b))
        )
        if not pair:
            continue
        sa, sb = _side(g, a, binders, assigned), _side(g, b, binders, assigned)
        if sa is None or sb is None or sa.family == sb.family:
            continue
        found.append(CrossedDatatypes(sa, op, sb))
    return found


def _comparisons(
    algebra: Any,
) -> Iterator[tuple[str, Any, Any, dict[str, list[URIRef]], set[str]]]:
    """Each needed comparison of ``algebra``'s FILTERs, as ``(op, left, right, binders,
    assigned)``: ``binders`` the properties binding each variable in the FILTER's group,
    ``assigned`` the variables the group gives a value otherwise (``BIND``, ``VALUES``, a
    subquery; or bound through a variable or a path: what it takes is unknown). Read once
    here for every check that judges a comparison by what its variables take."""
    for group in pattern_groups(algebra):
        expr = group.get("expr")
        if group.name != "Filter" or not _is_comp(expr):
            continue
        binders: dict[str, list[URIRef]] = {}
        unknown: set[str] = set()
        for _, p, o in group_triples(group.p):
            if isinstance(o, Variable):
                if isinstance(p, URIRef):
                    binders.setdefault(str(o), []).append(p)
                else:
                    unknown.add(str(o))
        assigned = assigned_variables(group.p) | unknown
        for c in _needed(expr):
            yield str(c.get("op")), c.get("expr"), c.get("other"), binders, assigned


def _is_now(x: Any) -> bool:
    return _is_comp(x) and x.name == "Builtin_NOW"


def is_now(x: Any) -> bool:
    """Whether ``x``, a part of a parsed FILTER, is ``NOW()``."""
    return _is_now(x)


def needed_comparisons(expr: Any) -> list[Any]:
    """The relational expressions (``?a op b``) a FILTER's expression ``expr`` holds only if
    they hold: reached through ``&&`` alone, not under ``||`` or ``!``
    (:mod:`._contradicted_filters` judges them together)."""
    return list(_needed(expr))


@dataclass(frozen=True)
class TextOrdered:
    """``str(?var) op "text"``: a number's text ordered against a numeral's, and the
    comparison of values to write."""

    var: str
    op: str
    text: str
    prop: URIRef


_NUMERAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")


def text_ordered_numbers(g: Graph, algebra: Any) -> list[TextOrdered]:
    """Each needed ``str(?a) < "100"`` (or ``>``, ``<=``, ``>=``, either way round) of
    ``algebra``'s FILTERs where every property binding ``?a`` in the group ranges over
    numbers and the string is a numeral.

    Why: ``str()`` makes the amount text, and text is ordered character by character:
    ``"49.9" > "100"`` holds, since ``4`` follows ``1``, so a refund of 49.90 took the branch
    for those above 100 — no error, no word, the wrong branch for most amounts."""
    found = []
    for op, a, b, binders, assigned in _comparisons(algebra):
        if op not in ("<", ">", "<=", ">="):
            continue
        for text_of, numeral in ((a, b), (b, a)):
            if not (_is_comp(text_of) and text_of.name == "Builtin_STR"):
                continue
            var = text_of.get("arg")
            if (
                not isinstance(var, Variable)
                or not isinstance(numeral, Literal)
                or numeral.datatype not in (None, XSD.string)
                or numeral.language
                or not _NUMERAL.fullmatch(str(numeral))
            ):
                continue
            side = _side(g, var, binders, assigned)
            if side is None or side.family != "a number" or side.prop is None:
                continue
            found.append(TextOrdered(str(var), op, str(numeral), side.prop))
    return found


def now_compared(algebra: Any) -> set[URIRef]:
    """The properties binding a variable that a needed FILTER of ``algebra`` orders or equates
    with ``NOW()`` (``?this :parcelArrivedAt ?t . FILTER (?t <= NOW())``): a value of one
    written without a time zone is never compared with ``NOW()``, which has one."""
    found: set[URIRef] = set()
    for op, a, b, binders, _ in _comparisons(algebra):
        if op not in _ORDERED:
            continue
        for var, other in ((a, b), (b, a)):
            if isinstance(var, Variable) and _is_now(other):
                found.update(binders.get(str(var), ()))
    return found


def now_compared_in(steps: Iterable[Step]) -> dict[URIRef, Node]:
    """Each property a pattern of ``steps`` (a ``horis:requires``, a wait's ``horis:until``,
    a decision's rules) compares with ``NOW()`` (:func:`now_compared`), and the first step
    that does."""
    found: dict[URIRef, Node] = {}
    for step, select in pattern_selects(steps):
        for prop in now_compared(select.algebra):
            found.setdefault(prop, step.iri)
    return found


def pattern_selects(steps: Iterable[Step]) -> Iterator[tuple[Step, Any]]:
    """Each step of ``steps`` with the parsed query of each of its patterns, in order: its
    ``horis:requires``, a wait's ``horis:until``, a decision's rules' (those a query holds)."""
    for step in steps:
        patterns = [getattr(step, "requires", None), getattr(step, "until", None)]
        patterns += [r.requires for r in getattr(step, "rules", ())]
        for pattern in patterns:
            select = getattr(pattern, "select", None)
            if select is not None:
                yield step, select
