"""FILTER comparisons no value meets, and a wait's ``horis:until`` that holds only before a time.

Why: ``FILTER (?amount > 1000 && ?amount < 500)`` (two bounds meant for two rules, written in
one) and ``FILTER (?status = "open" && ?status = "reopened")`` (``||`` meant) validated, and
the rule they guard was never taken: no value is above 1000 and below 500, nor two strings at
once. And ``horis:until "?this :dueAt ?t . FILTER (?t > NOW())"`` reads as "until the due
time", but the runtime asks the until when the instance reaches the wait and again at each
resume and ``horismos wake`` (:mod:`._waits`, :mod:`._due_waits`), never at ``?t`` itself: an
instance reaching it before ``?t`` finds it holding and goes straight on, without waiting, and
one reaching it after ``?t`` never finds it holding again, since the clock only moves on — it
waits for its timeout, or for ever. ``FILTER (?t <= NOW())`` is the wait until ``?t``.

Only what is certain is said: comparisons every solution of a FILTER's group needs (joined by
``&&``, several FILTERs of a group being one ``&&``; not under ``||`` or ``!``), of one
variable with constants — numbers ordered or equated, strings, language-tagged strings and IRIs
equated (``=``, ``!=``). A date, a time, a duration and a comparison of two variables are not
judged.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from itertools import combinations
from typing import Any

from rdflib import XSD, Literal, URIRef, Variable

from ._compared_kinds import is_now, needed_comparisons
from ._datatypes import numeric_literal
from ._preconditions import pattern_groups

__all__ = ["Contradiction", "contradictions", "future_nows"]

_FLIP = {">": "<", ">=": "<=", "<": ">", "<=": ">=", "=": "=", "!=": "!="}


@dataclass(frozen=True)
class _Test:
    """``?var op constant``, the variable read on the left: a number by its value, any other
    constant by the term itself; ``text`` as the comparison is written back."""

    var: str
    op: str
    value: Decimal | Literal | URIRef
    written: str | Literal | URIRef
    """The constant as written: a number's text, else the term."""

    @property
    def said(self) -> tuple[str, str, str | Literal | URIRef]:
        return self.var, self.op, self.written

    @property
    def number(self) -> bool:
        return isinstance(self.value, Decimal)


@dataclass(frozen=True)
class Contradiction:
    """Two comparisons of one FILTER group that no value of ``?var`` meets together."""

    var: str
    first: tuple[str, str, str | Literal | URIRef]
    """``(var, op, constant)``: the constant a number's text as written, else the term."""
    second: tuple[str, str, str | Literal | URIRef]


def _tests(expr: Any) -> Iterator[_Test]:
    """The needed comparisons of ``expr`` of a variable with a constant."""
    for c in needed_comparisons(expr):
        left, op, right = c.get("expr"), str(c.get("op")), c.get("other")
        if op not in _FLIP:
            continue
        if isinstance(right, Variable) and not isinstance(left, Variable):
            left, op, right = right, _FLIP[op], left
        if not isinstance(left, Variable):
            continue
        number = numeric_literal(right)
        if number is not None:
            yield _Test(str(left), op, number[0], number[1])
        elif op in ("=", "!=") and isinstance(right, Literal | URIRef):
            yield _Test(str(left), op, right, right)


def _holds(op: str, a: Decimal, b: Decimal) -> bool:
    return {
        "=": a == b,
        "!=": a != b,
        ">": a > b,
        ">=": a >= b,
        "<": a < b,
        "<=": a <= b,
    }[op]


def _clash(a: _Test, b: _Test) -> bool:
    """Whether no value meets both ``a`` and ``b`` (of one variable)."""
    if a.number and b.number:
        x, y = a.value, b.value
        assert isinstance(x, Decimal) and isinstance(y, Decimal)
        if a.op == "=":
            return not _holds(b.op, x, y)
        if b.op == "=":
            return not _holds(a.op, y, x)
        if "!=" in (a.op, b.op):
            return False
        lower, upper = (a, b) if a.op[0] == ">" else (b, a)
        if lower.op[0] != ">" or upper.op[0] != "<":
            return False  # two bounds on one side: the tighter one is met by some value
        lo, hi = lower.value, upper.value
        assert isinstance(lo, Decimal) and isinstance(hi, Decimal)
        return lo > hi or (lo == hi and (lower.op == ">" or upper.op == "<"))
    if a.number or b.number:
        return False  # a number against another kind: said by the crossed-kinds check
    if type(a.value) is not type(b.value):
        return False  # a node against a literal: said by the kinds check
    if a.op == "=" and b.op == "=":
        return _key(a.value) != _key(b.value)
    return {a.op, b.op} == {"=", "!="} and _key(a.value) == _key(b.value)


def _key(term: Decimal | Literal | URIRef) -> object:
    """What SPARQL's ``=`` compares of a constant: a literal's datatype (``xsd:string`` for a
    plain one, as RDF 1.1 has it), language and value (``"1"^^xsd:boolean`` is ``true``)."""
    if not isinstance(term, Literal):
        return term
    datatype = term.datatype or (None if term.language else XSD.string)
    value = term.value if term.value is not None else str(term)
    return datatype, (term.language or "").lower(), value


def contradictions(algebra: Any) -> list[Contradiction]:
    """Each FILTER group of ``algebra`` whose needed comparisons of one variable no value
    meets together: the first such pair of each variable, in the order written."""
    found: list[Contradiction] = []
    for group in pattern_groups(algebra):
        expr = group.get("expr")
        if group.name != "Filter" or expr is None:
            continue
        said: set[str] = set()
        for a, b in combinations(list(_tests(expr)), 2):
            if a.var == b.var and a.var not in said and _clash(a, b):
                said.add(a.var)
                found.append(Contradiction(a.var, a.said, b.said))
    return found


def future_nows(algebra: Any) -> list[str]:
    """The variables a needed FILTER of ``algebra`` requires to be later than ``NOW()``
    (``?t > NOW()``, ``?t >= NOW()``, ``NOW() < ?t``, ``NOW() <= ?t``), in the order
    written: in a wait's until, a test that holds only before ``?t`` (the module's
    docstring)."""
    found: list[str] = []
    for group in pattern_groups(algebra):
        expr = group.get("expr")
        if group.name != "Filter" or expr is None:
            continue
        for c in needed_comparisons(expr):
            left, op, right = c.get("expr"), str(c.get("op")), c.get("other")
            if is_now(left) and isinstance(right, Variable):
                left, op, right = right, _FLIP.get(op, op), left
            later = isinstance(left, Variable) and op in (">", ">=") and is_now(right)
            if later and str(left) not in found:
                found.append(str(left))
    return found
