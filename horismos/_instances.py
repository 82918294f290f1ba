"""The instances a world holds, as an operator lists them.

A run leaves instances in the world (``urn:horismos:instances``): completed, waiting, blocked,
failed, or running when their process died. An operator needs to see them without reading
RDF (``horismos instances``, ``World.instances``); which waits are due is
:mod:`._due_waits`'s, which reads the definitions this module must not import (the world
lists instances here, and the definitions reach the world).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from rdflib import URIRef
from rdflib.term import Node

from ._driving import driven_now
from ._records import Status
from ._stores import Store
from ._stores.base import INSTANCES
from ._vocab import NS, PROV

__all__ = ["STATUSES", "InstanceSummary", "list_instances"]

STATUSES: tuple[Status, ...] = ("running", "waiting", "blocked", "failed", "completed")


@dataclass(frozen=True)
class InstanceSummary:
    """One instance a world holds, as ``world.instances()`` gives it and ``horismos
    instances`` lists it: its IRI (what :meth:`~horismos.Agent.resume` and
    :meth:`~horismos.Agent.approve` take), its workflow, its focus node, its status, the step
    it is at (``current``; None once it ended), and ``since``: when it was blocked
    (``horis:blockedAt``) or failed (``horis:failedAt``), or else its last recorded activity
    (a step's end, a wait's start, an answer), as ISO 8601 text in UTC; None when it has
    none. ``why``: what stopped a failed instance (its ``horis:error``) or blocks a blocked
    one (the pattern, ``horis:blockedBy``), else None: an operator listing what went wrong
    read only "failed" and had to find the run's output or its trace. ``error_kind``: a
    failed one's error's kind as the failing commit stored it (``horis:errorKind``:
    ``outcome_unknown``, ``tool_error``, ...), what tells a call held in doubt from a tool
    that raised without parsing ``why``; a blocked one's, why it is blocked
    (``precondition``: a pattern does not hold; ``policy``, ``broken_already``,
    ``in_flight``: what refused the call; ``not_sent``: its endpoint was down, nothing sent,
    and ``resume`` tries the step again); None for an instance failed or blocked before it
    was stored."""

    instance: URIRef
    workflow: URIRef
    focus: URIRef
    status: Status
    current: URIRef | None
    since: str | None
    why: str | None = None
    error_kind: str | None = None
    started_by: str | None = None
    """The process whose run started it, ``lane@host:pid`` (``host:pid`` from the Python
    API; :mod:`._process_identity`), as stored with it; None for one started before that was
    stored. Of two processes given the same event, the one that started it."""
    live: bool | None = None
    """Of a running instance, whether a process drives it now (:attr:`interrupted` when
    not); None for any other status. ``horismos instances --format json`` says the same."""

    @property
    def interrupted(self) -> bool:
        """Running, and no process drives it: its process, or its ``arun``, stopped mid-step
        (killed, cancelled). ``horismos instances`` lists it ``interrupted``. Nothing will
        move it on by itself: run its focus again (its call in flight is then held in doubt,
        not made twice) or resume it; a live one is left to the run driving it."""
        return self.status == "running" and self.live is False


def list_instances(store: Store, status: Status | None = None) -> list[InstanceSummary]:
    """The world's instances, oldest activity first; only those with ``status`` when given.

    With ``status``, only those instances are read, and only their activities' times (in the
    union of the graphs, from the instances: a ``GRAPH ?g`` read every graph's activities).
    The status is written into the query: rdflib plans a query before its bindings are known,
    and with one bound it started from every instance the world ever ran."""
    which = "?status" if status is None else f"horis:{status.capitalize()}"
    rows = store.select(
        f"""
        SELECT ?i ?workflow ?focus ?status ?current ?blocked ?error ?kind ?by ?started
        WHERE {{
            GRAPH <{INSTANCES}> {{
            ?i horis:status {which} ; horis:workflow ?workflow ; horis:focus ?focus .
            OPTIONAL {{ ?i horis:currentStep ?current }}
            OPTIONAL {{ ?i horis:blockedAt|horis:failedAt ?blocked }}
            OPTIONAL {{ ?i horis:error ?error }}
            OPTIONAL {{ ?i horis:errorKind ?kind }}
            OPTIONAL {{ ?i horis:blockedBy ?by }}
            OPTIONAL {{ ?i horis:startedBy ?started }} }} }}""",
        {},
        {"horis": NS},
    )
    # a blocked instance is stuck since it was blocked, a failed one has failed since its
    # failing step began: later than any activity of its own
    since = {cast(URIRef, r["i"]): str(r["blocked"]) for r in rows if "blocked" in r}
    if status is not None and all(r["i"] in since for r in rows):
        return _rows(store, rows, status, since)  # none, or each stopped since a stored time
    for r in store.select(  # every instance's activities, or those of the instances found
        f"""
            SELECT ?i ?t WHERE {{ ?i horis:status {which} . ?a horis:instance ?i .
                {{ ?a prov:startedAtTime ?t }} UNION {{ ?a prov:endedAtTime ?t }} }}""",
        {},
        {"horis": NS, "prov": str(PROV)},
    ):
        i, t = r["i"], str(r["t"])
        if isinstance(i, URIRef) and t > since.get(i, ""):
            since[i] = t
    return _rows(store, rows, status, since)


def _rows(
    store: Store, rows: list[dict[str, Node]], status: Status | None, since: dict[URIRef, str]
) -> list[InstanceSummary]:
    """The rows read, oldest activity first; a running one's :attr:`~InstanceSummary.live`
    told from who drives it now (:func:`~._driving.driven_now`, once for them all)."""
    running = NS + "Running"
    driven = driven_now(
        store,
        (
            (cast(URIRef, r["workflow"]), cast(URIRef, r["focus"]))
            for r in rows
            if status == "running" or (status is None and str(r["status"]) == running)
        ),
    )
    out = []
    for r in rows:
        name = status or cast(Status, str(r["status"]).removeprefix(NS).lower())
        current = r.get("current")
        why = r.get("error") or r.get("by")
        out.append(
            InstanceSummary(
                r["i"],  # type: ignore[arg-type]
                r["workflow"],  # type: ignore[arg-type]
                r["focus"],  # type: ignore[arg-type]
                name,
                current if isinstance(current, URIRef) else None,
                since.get(cast(URIRef, r["i"])),
                str(why) if why is not None else None,
                str(r["kind"]) if "kind" in r else None,
                str(r["started"]) if "started" in r else None,
                (r["workflow"], r["focus"]) in driven if name == "running" else None,
            )
        )
    return sorted(out, key=lambda x: (x.since or "", str(x.instance)))
