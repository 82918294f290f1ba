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

Who drives a running instance now is asked here too (:func:`driven_now`): on a shared world,
a live claim; on any other, a run noted here. ``world.instances()`` and ``horismos
instances`` both ask it, so they tell an interrupted instance from a live one alike.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import cast

from rdflib import URIRef

from ._stores.base import CLAIM_TERMS, CLAIMS, Store

__all__ = ["Driving", "drive_here", "driven_now", "live_claims", "runs_moved"]

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


def live_claims(store: Store) -> dict[tuple[URIRef, URIRef], str]:
    """The (workflow, focus) claims a live process holds now, each with when its lease was last
    renewed: an instance is being driven only under its focus's claim on a shared world, so a
    running instance with none was left by a process that is gone (``horismos instances``).
    A lease is live until it runs out by the store's clock, evicted or not: a process killed
    a moment ago still reads as live until then, as it does to the workers that would take
    its claims over. One read of the claims graph, which holds what is claimed now."""
    rows = store.select(
        f"""SELECT ?wf ?f ?renewed WHERE {{ GRAPH <{CLAIMS}> {{
            ?claim c:workflow ?wf ; c:focus ?f ; c:worker ?w .
            ?w c:alive true ; c:renewed ?renewed ; c:lease ?lease }}
            FILTER(NOW() - ?renewed <= ?lease) }}""",
        {},
        {"c": CLAIM_TERMS},
    )
    live: dict[tuple[URIRef, URIRef], str] = {}
    for r in rows:
        key = (cast(URIRef, r["wf"]), cast(URIRef, r["f"]))
        live[key] = max(live.get(key, ""), str(r["renewed"]))
    return live


def driven_now(
    store: Store, running: Iterable[tuple[URIRef, URIRef]]
) -> set[tuple[URIRef, URIRef]]:
    """Of the (workflow, focus) pairs of running instances, those a process drives now: on a
    shared world (``sparql:``), under a live claim (:func:`live_claims`); on any other, by a
    run of this process (:func:`drive_here`), the only process that has the store open. A
    running instance no one drives is one whose process (or ``arun``) stopped mid-step:
    ``horismos instances`` says it interrupted, ``InstanceSummary.interrupted`` too."""
    running = list(running)
    if not running:
        return set()
    if store.shared:
        claimed = live_claims(store)
        return {pair for pair in running if pair in claimed}
    with _LOCK:
        return {(wf, f) for wf, f in running if _DRIVING.get((id(store), wf, f))}
