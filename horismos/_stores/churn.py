"""When an in-memory Oxigraph store should be copied afresh, so a lookup costs what the node
holds, not every value it ever held.

pyoxigraph's in-memory store keeps every quad it was ever given, removed ones too (Oxigraph's
``MemoryStorage`` has no garbage collection yet), and answers a pattern by walking the list of
quads of its least used bound term, removed ones included. What replaces a node's values again
and again (each step of a long-lived instance its state, an adapter re-reading a resource its
projection) grows that list by each value it replaced: a node whose 5 values were replaced and
read 3 times a step, in a world of 100,000 quads, cost 1.6 ms a step at first and 14 ms after
20,000 steps (benchmarks/bench_churn.py), and the memory was never given back. Only a fresh
store forgets, and copying one costs ~4.5 µs a live quad, so it is done when it pays:

- when one subject's removed quads reach ``√(256 · live)`` (at least 1,024): the copy's cost
  is then about what the longer walks would cost until the next copy, so a hot node costs
  what grows with the square root of the world, not with its history;
- when the removed quads outnumber the live ones (and 65,536): memory stays within about twice
  what the world holds, the copies' cost within a removal's own.

Counted here per commit from the quads it removed, by subject: the runtime looks nodes up by
subject (their types, their values, an instance's state), where a removed quad would be walked
past on every step. A value removed many times (``horis:Running``, a class) is walked only by a
query from the value, and the second rule bounds those lists; counted too, it had the store
copied every few thousand instances of a plain run for nothing (1,800 to 1,500 steps/s).

Not helped here: a node that *holds* many values is walked in full by every lookup on it in
memory (a loop on one focus adding a value each pass). On disk none of this arises: RocksDB
indexes every pattern and compacts by itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .base import Quad

__all__ = ["Churn"]

HOT_FLOOR = 1024
"""Removed quads of one subject below which no copy is made, whatever the world's size."""

DEAD_FLOOR = 65536
"""Removed quads below which the second rule never copies."""

KEPT_SUBJECTS = 65536
"""Subjects counted at most before the rarely removed are forgotten: a plain run removes a few
quads of each instance and then never again, and counting them all grew with every instance
a process ran."""

RARE = 16
"""Removals below which a subject is forgotten when :data:`KEPT_SUBJECTS` are counted: far
below any rule's floor, so a subject on its way to one keeps its count."""

BALANCE = 256
"""The rule's factor: one subject's removals reach ``√(BALANCE · live)``. A copy costs ~4.5 µs a
live quad; a removed quad ~80 ns each time a lookup walks past it. Tuned with
benchmarks/bench_churn.py (a node's 5 values replaced and read 3 times a step, 100,000 quads):
128 to 512 alike at ~0.7 ms a step over 20,000 steps, 32 and 8 copying too often (0.9-1.9 ms);
never copying, 1.4 ms at first and 21 ms after 15,000 steps."""


class Churn:
    """The quads removed from a store since it was last copied, counted per subject."""

    def __init__(self) -> None:
        self.removed = 0
        self.hottest = 0  # the most removals one subject has had
        self._by_subject: dict[object, int] = {}

    def count(self, quads: Iterable[Quad]) -> None:
        """Count the quads a commit removed."""
        by_subject, hottest = self._by_subject, self.hottest
        n = 0
        for s, _, _, _ in quads:
            n += 1
            count = by_subject[s] = by_subject.get(s, 0) + 1
            if count > hottest:
                hottest = count
        self.removed += n
        self.hottest = hottest
        if len(by_subject) > KEPT_SUBJECTS:
            self._by_subject = {s: k for s, k in by_subject.items() if k >= RARE}

    def updated(self) -> None:
        """Count a SPARQL update (a claim taken or given back): what it removed is not known,
        so it counts as one removal, and the second rule still bounds a store that only
        updates write to."""
        self.removed += 1

    def due(self, live: Callable[[], int]) -> bool:
        """Whether copying the store now pays, ``live`` counting what it holds (asked only
        once a floor is passed)."""
        hot, dead = self.hottest >= HOT_FLOOR, self.removed >= DEAD_FLOOR
        if not hot and not dead:
            return False
        held = live()
        return (hot and self.hottest * self.hottest >= BALANCE * held) or (
            dead and self.removed >= held
        )

    def reset(self) -> None:
        """Start counting again: the store was copied."""
        self.removed = self.hottest = 0
        self._by_subject = {}
