"""Each node's types as an in-memory Oxigraph store last read them, until a write may change
them: so asking a node's types costs what its types are, not what the node holds.

pyoxigraph's in-memory store answers ``node rdf:type ?t`` by walking every quad of the less
used of its two bound terms, and ``rdf:type`` is the world's most used predicate: it walks
every quad the node is the subject of. A case run once per event holds a value per earlier
run (each step's effect on it), and every run asks its focus's types three times (the focus
check, the argument's class, the gate's read of its subject): at 2,170 earlier runs a run
walked ~13,000 quads for three types (0.8 -> 1.3 ms a run in a world of 1M quads,
``bench_lanes.py``). A node's types change only by a quad whose predicate is ``rdf:type``
and whose subject is that node, which every commit names, so the types read once stay true
until such a quad is written or removed; an update or a file loaded forgets them all. On disk
RocksDB indexes subject and predicate together and none of this arises.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from rdflib import RDF
from rdflib.term import Node

from .base import Quad

__all__ = ["KeptTypes"]

_TYPE = str(RDF.type)

KEPT = 4096
"""Nodes whose types are kept at most: the foci and arguments of the runs going on, not every
node a long-lived process ever ran; past it the oldest half is forgotten."""


class KeptTypes:
    """Nodes' types as read, forgotten for a node when a change writes or removes one of its
    types. The store calls each method under its own lock, so a read and a commit never
    interleave."""

    def __init__(self) -> None:
        self._types: dict[Node, list[Node]] = {}

    def get(self, node: Node, read: Callable[[], list[Node]]) -> list[Node]:
        """``node``'s types, ``read`` from the store when not kept; the list is shared, not
        to be changed."""
        kept = self._types.get(node)
        if kept is None:
            kept = read()
            if len(self._types) >= KEPT:  # forget the oldest half (dicts keep their order)
                self._types = dict(list(self._types.items())[KEPT // 2 :])
            self._types[node] = kept
        return kept

    def forget(self, quads: Iterable[Quad]) -> None:
        """Forget the types of each subject ``quads`` (a change's, before it is written)
        give or take a type."""
        if self._types:
            for s, p, _, _ in quads:
                if _TYPE.__eq__(p):  # a str's own: rdflib's __eq__ is Python, on every commit
                    self._types.pop(s, None)

    def clear(self) -> None:
        """Forget every node's: the store was written by what names no quads (an update, a
        file loaded)."""
        self._types.clear()
