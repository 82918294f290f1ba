"""Operating instances: what a world holds, and which waits are due to be woken.

A run leaves instances in the world (``urn:horismos:instances``): completed, waiting, blocked,
failed, or running when their process died. An operator needs to see them without reading
RDF, and a wait whose ``horis:wake horis:Timer`` promises a timeout needs something to wake
it when nobody answers: ``horismos wake``, run from cron or a systemd timer, resumes exactly
the waits that are due — past their ``horis:timeout``, or whose ``horis:until`` now holds —
and leaves the others untouched (no write, no trace), so running it every minute costs a
query per waiting instance.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import cast

from rdflib import URIRef

from ._definitions import Definitions
from ._model import WaitStep
from ._stores import Store
from ._vocab import NS, PROV
from ._waits import open_wait, read_instance
from ._world import INSTANCES

__all__ = ["InstanceRow", "due_waits", "list_instances"]

STATUSES = ("running", "waiting", "blocked", "failed", "completed")


@dataclass(frozen=True)
class InstanceRow:
    """One instance as ``horismos instances`` lists it; ``since`` is its last recorded
    activity (a step's end, a wait's start, an answer), ``None`` when it has none."""

    instance: URIRef
    workflow: URIRef
    focus: URIRef
    status: str
    current: URIRef | None
    since: str | None


def list_instances(store: Store, status: str | None = None) -> list[InstanceRow]:
    """The world's instances, oldest activity first; only those with ``status`` when given.

    With ``status``, only those instances are read, and only their activities' times: ``wake``
    from cron asks for the waiting ones of a world that keeps every instance it ever ran."""
    rows = store.select(
        f"""
        SELECT ?i ?workflow ?focus ?status ?current WHERE {{ GRAPH <{INSTANCES}> {{
            ?i a horis:Instance ; horis:workflow ?workflow ; horis:focus ?focus ;
               horis:status ?status .
            OPTIONAL {{ ?i horis:currentStep ?current }} }} }}""",
        {} if status is None else {"status": URIRef(NS + status.capitalize())},
        {"horis": NS},
    )
    since: dict[URIRef, str] = {}
    which = ""  # every instance's activities, or those of the instances found
    if status is not None:
        if not rows:
            return []
        which = "VALUES ?i { " + " ".join(r["i"].n3() for r in rows) + " } "
    for r in store.select(
        f"""
            SELECT ?i ?t WHERE {{ GRAPH ?g {{ {which}?a horis:instance ?i .
                {{ ?a prov:startedAtTime ?t }} UNION {{ ?a prov:endedAtTime ?t }} }} }}""",
        {},
        {"horis": NS, "prov": str(PROV)},
    ):
        i, t = r["i"], str(r["t"])
        if isinstance(i, URIRef) and t > since.get(i, ""):
            since[i] = t
    out = []
    for r in rows:
        name = status or str(r["status"]).removeprefix(NS).lower()
        current = r.get("current")
        out.append(
            InstanceRow(
                r["i"],  # type: ignore[arg-type]
                r["workflow"],  # type: ignore[arg-type]
                r["focus"],  # type: ignore[arg-type]
                name,
                current if isinstance(current, URIRef) else None,
                since.get(cast(URIRef, r["i"])),
            )
        )
    return sorted(out, key=lambda x: (x.since or "", str(x.instance)))


def due_waits(defs: Definitions, store: Store, now: dt.datetime) -> list[URIRef]:
    """The waiting instances whose wait would settle if resumed now, without facts."""
    due = []
    for row in list_instances(store, "waiting"):
        step = defs.steps.get(row.current) if row.current is not None else None
        if not isinstance(step, WaitStep):
            continue  # waits at a step these definitions do not declare: resume names it
        stored = read_instance(store, row.instance)
        started = open_wait(store, row.instance, step.iri)
        if stored is None or started is None:
            continue
        timed_out = (
            step.timeout is not None and (now - started.started).total_seconds() >= step.timeout
        )
        if timed_out or (step.until is not None and store.solutions(step.until, stored.variables)):
            due.append(row.instance)
    return due
