"""A ``VALUES`` joined with a triple pattern that binds its variable through a property.

``?this :acuity ?queue . VALUES ?queue { "urgent" }`` where :acuity's values are nodes (an
``owl:ObjectProperty``, or a class for its range): the group's solutions join the two on
``?queue``, and no node is the literal ``"urgent"``, so the group has no solution — the step
blocked for every instance, and validate said valid, for a VALUES is not a FILTER (``FILTER
(?queue = "urgent")`` was warned of). The mirror, ``VALUES ?ref { :High }`` beside a property
whose values are literals, the same. What a property's values are is the ontology's to say
(:func:`~._term_kinds.object_kind`); this finds the joins.

Only what one group joins is looked at: an ``OPTIONAL``'s, a ``UNION`` branch's, a
``MINUS``'s and a sub-SELECT's triples are groups of their own (a ``UNION`` binding the
variable in one branch only, a sub-SELECT's variable of the same name unprojected, join
otherwise), so nothing is claimed across them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from rdflib import URIRef, Variable
from rdflib.term import Node

__all__ = ["JoinedValues", "joined_values"]

_SOLUTION_MODIFIERS = frozenset(
    {"SelectQuery", "Project", "Distinct", "Reduced", "Slice", "OrderBy", "ToMultiSet"}
)
"""What wraps a pattern's own group (a candidates query's SELECT … WHERE): not a group."""
_SAME_GROUP = frozenset({"Filter", "ToMultiSet", "Extend", "Graph"})
"""What holds a part of the group it is in (the ``p`` it wraps is joined with the rest)."""


@dataclass(frozen=True)
class JoinedValues:
    """A variable a ``VALUES`` gives a value in every row, joined in its group with triples
    that bind it through ``properties``."""

    var: str
    values: tuple[Node, ...]
    """Each row's value of ``var``, in written order."""
    properties: tuple[URIRef, ...]
    own: bool
    """The pattern's own group, which every solution matches; else a nested one (an
    ``OPTIONAL``'s, a ``UNION`` branch's…), which only that group's solutions do."""


@dataclass
class _Group:
    own: bool
    triples: list[tuple[Any, Any, Any]] = field(default_factory=list)
    values: list[Any] = field(default_factory=list)
    assigned: set[str] = field(default_factory=set)


def joined_values(algebra: Any) -> Iterator[JoinedValues]:
    """Each variable a ``VALUES`` of a group of a parsed pattern gives a value in every row
    (no ``UNDEF``) and the group's triples bind through IRI predicates only (none when a
    variable predicate or a path binds it too, or a ``BIND`` assigns it: what it takes is
    then unknown), in no particular order."""
    node = algebra
    while getattr(node, "name", None) in _SOLUTION_MODIFIERS:
        node = node.get("p")
    todo = [(node, True)]
    while todo:
        root, own = todo.pop()
        group = _Group(own)
        todo += _collect(root, group)
        for values in group.values:
            for var in {str(v) for row in values.res for v in row}:
                yield from _joined(group, values, var)


def _joined(group: _Group, values: Any, var: str) -> Iterator[JoinedValues]:
    given = [row.get(Variable(var)) for row in values.res]
    if not given or not all(isinstance(v, Node) for v in given) or var in group.assigned:
        return
    binders = [p for _, p, o in group.triples if isinstance(o, Variable) and str(o) == var]
    if binders and all(isinstance(p, URIRef) for p in binders):
        yield JoinedValues(var, tuple(given), tuple(dict.fromkeys(binders)), group.own)


def _collect(node: Any, group: _Group) -> list[tuple[Any, bool]]:
    """Add to ``group`` the triples and VALUES ``node`` joins into it; return the nested
    groups found on the way, each with whether it is the pattern's own (never)."""
    name = getattr(node, "name", None)
    if name == "BGP":
        group.triples += node.triples
        return []
    if name == "values":
        group.values.append(node)
        return []
    if name in _SAME_GROUP:
        if name == "Extend":
            group.assigned.add(str(node.var))
        return _collect(node.get("p"), group)
    if name == "Join":
        return _collect(node.p1, group) + _collect(node.p2, group)
    if name in ("LeftJoin", "Minus"):
        return [*_collect(node.p1, group), (node.p2, False)]
    if name == "Union":
        return [(node.p1, False), (node.p2, False)]
    if name == "Project":  # a sub-SELECT: a group of its own, inside its modifiers
        return [(node.p, False)]
    return []
