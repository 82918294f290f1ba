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

from collections.abc import Iterable
from typing import NamedTuple

from rdflib import SH, Graph, URIRef
from rdflib.term import Node

from ._shacl import ALONE, refused_alone

__all__ = ["Refusal", "refused_members"]

_ON_A_VALUE = (SH.datatype, SH.nodeKind, *(p for p in ALONE if p != SH.hasValue))
"""The constraints that judge a value by itself, in the order a refusal is told: those the
loader judges an effect's fixed value by (:data:`~._shacl.ALONE`), its kind and datatype too;
not ``sh:hasValue``, which names the value a node must hold, not what a value may be."""


class Refusal(NamedTuple):
    """A value a shape names (a member of its ``sh:in``, its ``sh:hasValue``) and the
    constraint of the same shape that refuses it."""

    member: Node
    parameter: URIRef
    value: Node  # the parameter's value: the pattern, the bound


def refused_members(
    g: Graph, shape: Node, members: Iterable[Node], *, listed: bool = False
) -> list[Refusal]:
    """Each of ``members`` that a constraint of ``shape`` refuses, with the first that does
    (:func:`~._shacl.refused_alone`: the gate's own compiled checks); its ``sh:in`` among them
    when ``listed`` (the members are not its list's)."""
    parameters = (*_ON_A_VALUE, SH["in"]) if listed else _ON_A_VALUE
    refused = []
    for member in members:
        refusing = refused_alone(g, shape, member, parameters)
        if refusing:
            value = g.value(shape, refusing[0])
            assert value is not None  # refused_alone judges a parameter the shape states
            refused.append(Refusal(member, refusing[0], value))
    return refused
