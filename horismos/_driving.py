"""The foci this process's runs are driving right now, on a world no other process writes.

A service that opens one ``oxigraph:PATH`` or ``journal:PATH`` world and runs an instance per
event may be asked for one focus twice at once (an event delivered twice, a client retrying
before its first request was answered). On a shared ``sparql:`` world the focus's claim
keeps two runs apart; a world only this process writes has no claims, and a second
``arun`` found the first one's instance running, took it for one a dead process had left,
and continued it: the call the first was making was held in doubt as if its process had
stopped, its instance failed, and the first run, whose tool had acted, raised ``Conflict``
and dropped the answer. Here each single-focus run (and each resume) notes its focus while
it drives it, so a second one in this process is refused as busy instead of taking it over.

A batch (``all=True``) on such a world notes each focus as it comes to it and leaves out one
another run drives (it read that run's instance as one a dead process left, and continued
it); once a single run has begun or ended since the batch read its foci
(:func:`runs_moved`), the batch reads each focus again before it runs it: one that finished
meanwhile is left out, as a batch leaves out every finished focus, and one whose instance
it read running, since ended, is not continued from what it read.

Taken once a run (a batch: once an instance), never by a step: a set look-up and add under
a lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from rdflib import URIRef

from ._claims import NotHeld
from ._process_identity import ran_by, started_by_text

__all__ = ["Driving", "busy_here", "drive_here", "runs_moved"]

_DRIVING: dict[tuple[int, URIRef, URIRef], int] = {}
"""(the store's id, the workflow, the focus) of each run in this process driving it now, and
how many (several only in memory, where Python's own runs of a focus may overlap). A store is
kept alive by the run that noted it, so its id is not reused meanwhile."""

_MOVES = [0]
"""How many times a single-focus run (or a resume) of this process began or ended, on any
store: a batch that sees the count change knows what it read of its foci may have changed.
Counted for the process, not kept per store: a service opening a world in memory for each
event left an entry per world for good (a batch beside runs on other worlds reads its foci
again for nothing, one query each, rather than the process growing)."""

_LOCK = threading.Lock()  # sync runs are made in threads (agent.run from several at once)


class Driving:
    """A focus noted as driven by one run of this process; :meth:`release` when it stops."""

    __slots__ = ("_batch", "_key", "alone")

    def __init__(self, key: tuple[int, URIRef, URIRef], batch: bool, alone: bool) -> None:
        self._key: tuple[int, URIRef, URIRef] | None = key
        self._batch = batch
        self.alone = alone
        """No other run of this process drove the focus when this one was noted: an
        instance of it found running then is one no run drives (its process, or its
        ``arun``, stopped mid-step)."""

    def release(self) -> None:
        """Let other runs of this process drive the focus again (once; again does nothing)."""
        if self._key is not None:
            with _LOCK:
                left = _DRIVING.get(self._key, 1) - 1
                if left > 0:
                    _DRIVING[self._key] = left
                else:
                    _DRIVING.pop(self._key, None)
                if not self._batch:
                    _MOVES[0] += 1
            self._key = None


def drive_here(
    store: object,
    workflow: URIRef,
    focus: URIRef,
    *,
    batch: bool = False,
    beside: bool = False,
) -> Driving | None:
    """Note that a run of this process drives ``workflow`` for ``focus`` in ``store`` (a
    ``batch``'s instance: not counted by :func:`runs_moved`); None when another run of this
    process is driving it now (the caller refuses, answers the instance as it stands, or, a
    batch, leaves the focus out). ``beside``: noted even then (a world in memory, where
    Python's runs of one focus may overlap, each its own instance), its
    :attr:`Driving.alone` saying whether another was."""
    key = (id(store), workflow, focus)
    with _LOCK:
        others = _DRIVING.get(key, 0)
        if others and not beside:
            return None
        _DRIVING[key] = others + 1
        if not batch:
            _MOVES[0] += 1
    return Driving(key, batch, not others)


def runs_moved() -> int:
    """How many times a single-focus run or resume of this process has begun or ended."""
    return _MOVES[0]


def busy_here(workflow: str, focus: URIRef, name: Callable[[URIRef], str]) -> NotHeld:
    """The error for a run refused because another run of this process drives its focus."""
    return NotHeld(
        f"another run in this process is driving {workflow} for {name(focus)} right now (an "
        "agent.run or agent.arun, or a resume, not finished yet): it was not taken over. Ask "
        "again once that run has returned; with again=False a run answers the focus's "
        "instance as it stands instead of running",
        focus,
        holder=started_by_text(*(ran_by().get(k) for k in ("host", "pid", "lane"))),
    )
