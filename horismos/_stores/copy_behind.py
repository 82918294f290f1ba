"""An in-memory Oxigraph store copied afresh a slice at a time, behind the commits, not whole
inside the one commit that made the copy due.

Why: :mod:`.churn` has the store copied when its removed quads outnumber the live ones (or one
node's do). Done inside that commit, one step of a run paid a copy of the whole world: in a
world of 3,000,000 quads, once every ~250,000 single-focus runs (12 quads removed a run), a
step waited 15-40 s (~5-13 µs a quad on a loaded machine) where every other took ~0.5 ms.
The copy now starts at that commit from an iterator over the store (pyoxigraph's iterators
read the moment they start) and each later commit copies :data:`SLICE` quads (or graph names)
more, plus twice what it changed itself; each commit's own change (its removed and added
quads, or an update's text with ``NOW()`` written in) is logged meanwhile and replayed onto
the copy, in order, once the iterator ends. When
the log is replayed to its end, the copy holds what the store holds, and replaces it, between
two commits, under the store's lock. A step pays at most a slice (plus its own change twice),
whatever the world's size — but for the list of the store's graph names, read whole when the
copy starts (~0.25 s at 300,000 graphs; an iterator over them kept open across commits would
block the next commit that names a graph). An update that would write otherwise on the copy
(a random value, a fresh blank node, rows taken in their order: ``LIMIT``, ``SAMPLE``) drops
the copy under way instead, to be begun again when due.
"""

from __future__ import annotations

from collections import deque
from itertools import islice

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
        self._graphs = list(store.named_graphs())  # an emptied graph is still a graph
        self._source = iter(store)
        self._copied = False  # the store as it was, all taken
        self._log: deque[Landed] = deque()

    def follow(self, change: Landed) -> bool:
        """Log a commit landed on the store, then copy a slice; whether the copy now holds
        what the store holds."""
        self._log.append(change)
        budget = SLICE + 2 * (1 if isinstance(change, str) else len(change[0]) + len(change[1]))
        while budget > 0 and self._graphs:
            self.fresh.add_graph(self._graphs.pop())
            budget -= 1
        if not self._copied and budget > 0:
            taken = list(islice(self._source, budget))
            self.fresh.extend(taken)
            budget -= len(taken)
            self._copied = budget > 0
        while budget > 0 and self._copied and self._log:
            entry = self._log.popleft()
            if isinstance(entry, str):
                self.fresh.update(entry)
                budget -= 1
                continue
            removed, added = entry
            for q in removed:
                self.fresh.remove(q)
            self.fresh.extend(added)
            budget -= len(removed) + len(added)
        return self._copied and not self._log and not self._graphs
