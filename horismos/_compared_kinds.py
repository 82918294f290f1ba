"""A FILTER comparing two variables one of which holds nodes and the other literals.

Why: ``FILTER (?a <= ?p)`` for ``FILTER (?a <= ?limit)``, ``?a`` an amount (the object of an
``owl:DatatypeProperty``) and ``?p`` the claim's policy (the object of an
``owl:ObjectProperty``): ordering a node against a literal is an error in SPARQL, ``=`` between
them is never true, so the FILTER never held, every claim was denied, and the definitions
validated. The variables' kinds are read from the triples of the FILTER's group as the other
kind checks read them (:func:`~._term_kinds.value_kinds`); a variable the group also gives a
value otherwise (``BIND``, ``VALUES``, a subquery) is not judged, nor a comparison under
``!`` or ``||`` (it need not hold), nor ``!=`` (always true between the two: excludes
nothing, said elsewhere of constants).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from rdflib import Graph, Variable
from rdflib.plugins.sparql.parserutils import CompValue

from ._preconditions import assigned_variables, group_triples, pattern_groups
from ._term_kinds import value_kinds

__all__ = ["CrossedComparison", "crossed_comparisons"]

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
    if not isinstance(expr, CompValue) or expr.name in _NOT_READ:
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
        if group.name != "Filter" or not isinstance(expr, CompValue):
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
