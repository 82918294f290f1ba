"""An in-memory Oxigraph store copied afresh a slice at a time, behind the commits, not whole
inside the one commit that made the copy due.

Why: :mod:`.churn` has the store copied when its removed quads outnumber the live ones (or one
node's do). Done inside that commit, one step of a run paid a copy of the whole world: in a
world of 3,000,000 quads, once every ~250,000 single-focus runs (12 quads removed a run), a
step waited 15-40 s (~5-13 µs a quad on a loaded machine) where every other took ~0.5 ms.
The copy now starts at that commit from an iterator over the store (pyoxigraph's iterators
read the moment they start) and each later commit copies :data:`SLICE` quads
more, plus twice what it changed itself; each commit's own change (its removed and added
quads, or an update's text with ``NOW()`` written in) is logged meanwhile and replayed onto
the copy, in order, once the iterator ends. When the log is replayed to its end, the copy
holds what the store holds, and replaces it, between two commits, under the store's lock. A
step pays at most a slice (plus its own change twice), whatever the world's size. An update
that would write otherwise on the copy (a random value, a fresh blank node, rows taken in
their order: ``LIMIT``, ``SAMPLE``) drops the copy under way instead, to be begun again when
due.

A graph's name comes with its quads: only an empty named graph (its quads all removed, or
made by ``CREATE GRAPH``) would be missing from the copy. So the names are counted, not
listed, when the copy has replayed the last commit, on the store and on the copy (a count
inside Oxigraph, ~25 ms at 300,000 graphs), and only should the counts differ is the store's
list read, in that commit, to add the empty graphs to the copy. Listing them whole when the
copy began cost that commit 2.2-2.5 s at 300,000 graphs (benchmarks/bench_copy_graphs.py),
and a world that has taken a single catalog call holds an empty graph (its instance state's,
the call's intent removed). The names cannot be taken a slice a commit: pyoxigraph's
in-memory ``named_graphs()`` is no snapshot but walks its graph map holding a shard of it
read-locked, and a commit adding a quad to a graph of that shard waits for the lock forever.
An update is different: one may read which graphs there are (``GRAPH ?g {}``), so before
one runs on the store while a copy is under way (rare in memory: the store's own writes are
commits), the copy is given every graph the store names (:meth:`CopyBehind.hold_graphs`, a
list read whole in that update), and is replayed on the same graphs. An update replayed onto
the copy that the copy refuses drops the copy, as one that would write otherwise does.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from itertools import islice
from typing import cast

import pyoxigraph as ox

__all__ = ["SLICE", "CopyBehind", "Landed"]

Landed = tuple[list[ox.Quad], list[ox.Quad]] | str
"""What a commit landed: its removed and added quads, or an update's text, as replayed."""

SLICE = 64
"""Quads a commit copies, beyond twice its own change: ~0.3-0.8 ms, a step's own order. At
3,000,000 quads a copy then ends within ~47,000 commits; the next is due once as many quads
again have been removed (:mod:`.churn`), ~250,000 single-focus runs later."""


class CopyBehind:
    """A copy of a store under way: what it has taken of the store as it was, and the
    commits landed since, to replay."""

    def __init__(self, store: ox.Store) -> None:
        self.fresh = ox.Store()
        self.lost = False  # an update the copy refused: it can no longer follow
        self._store = store
        self._source = iter(store)
        self._copied = False  # the store as it was, all taken
        self._log: deque[Landed] = deque()

    def hold_graphs(self, names: Iterable[ox.NamedNode | ox.BlankNode]) -> None:
        """Hold every graph of ``names`` (the store's: as an update is about to run on it,
        and, should the counts differ, as the copy ends). The update is replayed here later,
        and one that reads which graphs there are (``GRAPH ?g {}``) must find the empty ones
        too, or what it writes into them is lost when the copy takes the store's place. A
        graph a later replayed update makes anew (``CREATE GRAPH``) is then refused here and
        the copy dropped: never put in place wrong."""
        fresh = self.fresh
        for name in names:
            if not fresh.contains_named_graph(name):
                fresh.add_graph(name)

    def follow(self, change: Landed) -> bool:
        """Log a commit landed on the store, then copy a slice; whether the copy now holds
        what the store holds (false for good once it is :attr:`lost`)."""
        self._log.append(change)
        budget = SLICE + 2 * (1 if isinstance(change, str) else len(change[0]) + len(change[1]))
        if not self._copied:
            taken = list(islice(self._source, budget))
            self.fresh.extend(taken)
            budget -= len(taken)
            self._copied = budget > 0
        while budget > 0 and self._copied and self._log:
            entry = self._log.popleft()
            if isinstance(entry, str):
                try:
                    self.fresh.update(entry)
                except RuntimeError:  # refused here, landed there: the copy is no longer one
                    self.lost = True
                    return False
                budget -= 1
                continue
            removed, added = entry
            for q in removed:
                self.fresh.remove(q)
            self.fresh.extend(added)
            budget -= len(removed) + len(added)
        if not self._copied or self._log:
            return False
        if _graph_count(self._store) != _graph_count(self.fresh):  # the store's empty graphs
            self.hold_graphs(self._store.named_graphs())
        return True


def _graph_count(store: ox.Store) -> int:
    """How many named graphs ``store`` holds, empty ones too, counted by Oxigraph: no name is
    made a Python object."""
    row = next(iter(cast(ox.QuerySolutions, store.query(_COUNT_GRAPHS))))
    return int(cast(ox.Literal, row["n"]).value)


_COUNT_GRAPHS = "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g {} }"
