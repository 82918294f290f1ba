"""The contract every world store keeps.

A store holds quads: the world's facts in the default graph, each committed step's effects in
a named graph of its own, and runtime state (instances) in ``urn:horismos:instances``.

- ``solutions`` and ``failing`` evaluate a prepared :class:`Precondition` with initial
  bindings, in the store's own SPARQL engine; values never enter query text.
- ``apply`` applies one :class:`Change` atomically: all of it lands, or none of it.
- ``quads`` lists what is stored, for snapshots and canonical digests.
- An operation a store cannot do raises :class:`NotImplementedError`; none silently does nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rdflib import Dataset, URIRef
from rdflib.term import Node

if TYPE_CHECKING:
    from .._preconditions import Precondition

__all__ = ["Change", "Quad", "Store"]

Quad = tuple[Node, Node, Node, URIRef | None]


@dataclass
class Change:
    """What one commit removes and adds, as quads (graph ``None`` is the default graph)."""

    add: list[Quad] = field(default_factory=list)
    remove: list[Quad] = field(default_factory=list)


class Store:
    name = "store"

    def solutions(self, pre: Precondition, bindings: Mapping[str, Node]) -> list[dict[str, Node]]:
        raise NotImplementedError

    def failing(self, pre: Precondition, bindings: Mapping[str, Node]) -> str:
        raise NotImplementedError

    def select(self, query: str, bindings: Mapping[str, Node], ns: Mapping[str, str],
               ) -> list[dict[str, Node]]:
        raise NotImplementedError

    def objects(self, subject: Node, predicate: Node) -> Iterator[Node]:
        raise NotImplementedError

    def outgoing(self, subject: Node) -> Iterator[tuple[Node, Node, Node]]:
        raise NotImplementedError

    def apply(self, change: Change) -> None:
        raise NotImplementedError

    def load(self, quads: Iterable[Quad]) -> None:
        raise NotImplementedError

    def quads(self) -> Iterator[Quad]:
        raise NotImplementedError

    def dataset(self) -> Dataset:
        """An rdflib view of everything stored."""
        raise NotImplementedError
