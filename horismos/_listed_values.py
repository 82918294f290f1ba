"""The values a shape names (its ``sh:in``'s members, its ``sh:hasValue``) that its own
constraints refuse.

``sh:path :queueRef ; sh:pattern "^Q-[0-9]+$" ; sh:in ( "urgent" "routine" )`` loads in every
SHACL engine: each constraint is well formed alone. A value must meet them all, though, and
no member of the list matches the pattern: no value conforms, and the gate rejects the result
of every tool landing one, after the tool has acted. A member refused while others are not is
a value the list offers and the shape never takes. A ``sh:hasValue`` the shape's other
constraints refuse (``sh:hasValue "urgent"`` beside that pattern, or outside its ``sh:in``)
is a value every node must hold and no node may: no node conforms.

The members are judged by the gate's own compiled constraints (:mod:`._shacl_constraints`,
pyshacl's meaning), one value at a time, by the constraints that judge a value alone: its
datatype and kind, its text (``sh:pattern``, ``sh:minLength``, ``sh:maxLength``), its language
and its bounds. Not ``sh:class`` (the world's data decides it), nor counts or pairs of
properties. A parameter written wrong is left to the checks that say so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

from rdflib import SH, Graph, URIRef
from rdflib.term import Node

from ._shacl_constraints import COMPILERS
from ._shacl_graph import GraphData
from ._shacl_report import Check, NotCompiled

__all__ = ["Refusal", "refused_members"]

_ON_A_VALUE = (
    SH.datatype,
    SH.nodeKind,
    SH.pattern,
    SH.minLength,
    SH.maxLength,
    SH.languageIn,
    SH.minInclusive,
    SH.maxInclusive,
    SH.minExclusive,
    SH.maxExclusive,
)
"""The constraints that judge a value by itself, in the order a refusal is told."""


class Refusal(NamedTuple):
    """A value a shape names (a member of its ``sh:in``, its ``sh:hasValue``) and the
    constraint of the same shape that refuses it."""

    member: Node
    parameter: URIRef
    value: Node  # the parameter's value: the pattern, the bound


def refused_members(
    g: Graph, shape: Node, members: Iterable[Node], *, listed: bool = False
) -> list[Refusal]:
    """Each of ``members`` that a constraint of ``shape`` refuses, with the first that does;
    its ``sh:in`` among them when ``listed`` (the members are not its list's)."""
    path = g.value(shape, SH.path)
    checks: list[tuple[URIRef, Node, Check]] = []
    for parameter in (*_ON_A_VALUE, SH["in"]) if listed else _ON_A_VALUE:
        value = g.value(shape, parameter)
        if value is None:
            continue
        try:
            checks.append((parameter, value, COMPILERS[parameter][1](g, shape, path)))
        except (NotCompiled, re.error):  # written wrong: the load's checks say so
            continue
    refused = []
    for member in members:
        for parameter, value, check in checks:
            if next(iter(check(shape, (member,), _NO_DATA)), None) is not None:
                refused.append(Refusal(member, parameter, value))
                break
    return refused


_NO_DATA = GraphData(Graph())
"""The data of a value judged alone: the constraints of :data:`_ON_A_VALUE` read none."""
