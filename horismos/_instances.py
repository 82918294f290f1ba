"""Operating instances: what a world holds, and which waits are due to be woken.

A run leaves instances in the world (``urn:horismos:instances``): completed, waiting, blocked,
failed, or running when their process died. An operator needs to see them without reading
RDF, and a wait whose ``horis:wake horis:Timer`` promises a timeout needs something to wake
it when nobody answers: ``horismos wake``, run from cron or a systemd timer, resumes exactly
the waits that are due — past their ``horis:timeout``, or whose ``horis:until`` now holds —
and leaves the others untouched (no write, no trace), so running it every minute costs a
few queries a wait step, however many instances wait.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from rdflib import URIRef
from rdflib.term import Node

from ._model import WaitStep
from ._preconditions import Precondition
from ._records import Status
from ._stores import Store
from ._stores.base import INSTANCES
from ._vocab import NS, PROV

if TYPE_CHECKING:  # only named: the definitions reach the world, which lists instances here
    from ._definitions import Definitions

__all__ = ["STATUSES", "InstanceSummary", "due_waits", "list_instances"]

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
    read only "failed" and had to find the run's output or its trace."""

    instance: URIRef
    workflow: URIRef
    focus: URIRef
    status: Status
    current: URIRef | None
    since: str | None
    why: str | None = None


def list_instances(store: Store, status: Status | None = None) -> list[InstanceSummary]:
    """The world's instances, oldest activity first; only those with ``status`` when given.

    With ``status``, only those instances are read, and only their activities' times (in the
    union of the graphs, from the instances: a ``GRAPH ?g`` read every graph's activities).
    The status is written into the query: rdflib plans a query before its bindings are known,
    and with one bound it started from every instance the world ever ran."""
    which = "?status" if status is None else f"horis:{status.capitalize()}"
    rows = store.select(
        f"""
        SELECT ?i ?workflow ?focus ?status ?current ?blocked ?error ?by WHERE {{
            GRAPH <{INSTANCES}> {{
            ?i horis:status {which} ; horis:workflow ?workflow ; horis:focus ?focus .
            OPTIONAL {{ ?i horis:currentStep ?current }}
            OPTIONAL {{ ?i horis:blockedAt|horis:failedAt ?blocked }}
            OPTIONAL {{ ?i horis:error ?error }}
            OPTIONAL {{ ?i horis:blockedBy ?by }} }} }}""",
        {},
        {"horis": NS},
    )
    # a blocked instance is stuck since it was blocked, a failed one has failed since its
    # failing step began: later than any activity of its own
    since = {cast(URIRef, r["i"]): str(r["blocked"]) for r in rows if "blocked" in r}
    if status is not None and all(r["i"] in since for r in rows):
        return _rows(rows, status, since)  # none, or each stopped since a stored time
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
    return _rows(rows, status, since)


def _rows(
    rows: list[dict[str, Node]], status: Status | None, since: dict[URIRef, str]
) -> list[InstanceSummary]:
    """The rows read, oldest activity first."""
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
            )
        )
    return sorted(out, key=lambda x: (x.since or "", str(x.instance)))


def due_waits(defs: Definitions, store: Store, now: dt.datetime) -> list[URIRef]:
    """The waiting instances whose wait would settle if resumed now, without facts.

    What a resume would find, read for all of them at once: each instance's stored
    variables (as :func:`~._stored_instances.read_instance` reads them) in one query, the waits
    still open (as :func:`~._stored_instances.open_wait` finds them) in another, and each wait
    step's ``horis:until`` asked once for every instance waiting at it
    (:meth:`~horismos._stores.Store.held`). It was four requests an instance, ~2 ms each on
    ``sparql:``: seconds a tick for a world with thousands waiting."""
    waiting = _waiting(store)
    at = [
        (iid, step)
        for iid, (current, _) in waiting.items()
        if isinstance(step := defs.steps.get(current) if current is not None else None, WaitStep)
    ]  # waits at a step these definitions do not declare are left out: resume names them
    if not at:
        return []
    opened = _open_waits(store)
    settles: dict[tuple[URIRef, URIRef], bool] = {}
    asks: dict[URIRef, tuple[Precondition, dict[URIRef, None]]] = {}  # until, who waits
    for iid, step in at:
        started = opened.get((iid, step.iri))
        if started is None:
            continue
        if step.timeout is not None and (
            (now - dt.datetime.fromisoformat(started)).total_seconds() >= step.timeout
        ):
            settles[iid, step.iri] = True
        elif step.until is not None:
            asks.setdefault(step.iri, (step.until, {}))[1][iid] = None
    for step_iri, (until, held_by) in asks.items():
        held = store.held(until, [waiting[iid][1] for iid in held_by])
        settles.update(((iid, step_iri), h) for iid, h in zip(held_by, held, strict=True))
    due = [(opened[iid, step.iri], str(iid)) for iid, step in at if settles.get((iid, step.iri))]
    return [URIRef(iid) for _, iid in sorted(due)]  # the longest waiting first


def _waiting(store: Store) -> dict[URIRef, tuple[URIRef | None, dict[str, Node]]]:
    """Each waiting instance's current step and variables, ``this`` its focus unless one is
    stored so named: what :func:`~._stored_instances.read_instance` reads of each, for those it
    finds."""
    current: dict[URIRef, URIRef | None] = {}
    focus: dict[URIRef, Node] = {}
    stored: dict[URIRef, dict[str, Node]] = {}
    for r in store.select(
        f"""
        SELECT ?i ?focus ?current ?name ?value WHERE {{ GRAPH <{INSTANCES}> {{
            ?i horis:status horis:Waiting ; horis:workflow ?workflow ;
               horis:focus ?focus ; horis:version ?version .
            OPTIONAL {{ ?i horis:currentStep ?current }}
            OPTIONAL {{ ?i horis:variable ?v . ?v horis:name ?name ; horis:value ?value }} }} }}""",
        {},
        {"horis": NS},
    ):
        iid = cast(URIRef, r["i"])
        focus[iid] = r["focus"]
        step = r.get("current")
        current[iid] = step if isinstance(step, URIRef) else None
        if "name" in r:
            stored.setdefault(iid, {})[str(r["name"])] = r["value"]
    return {iid: (current[iid], {"this": focus[iid], **stored.get(iid, {})}) for iid in current}


def _open_waits(store: Store) -> dict[tuple[URIRef, URIRef], str]:
    """When each waiting instance's open wait at its current step began (the latest, if
    several): what :func:`~._stored_instances.open_wait` finds for the instance and the step.

    Read from the waiting instances, in the union of the graphs, a wait's graph found by its
    ``prov:wasGeneratedBy``: a ``GRAPH ?g { … }`` read every step activity the world held, so
    a tick's cost followed the world's history (on disk, 21 -> 121 ms for 200 waiting beside
    0 -> 20,000 past steps)."""
    out: dict[tuple[URIRef, URIRef], str] = {}
    for r in store.select(
        """
        SELECT ?i ?s ?started WHERE {
            ?i horis:status horis:Waiting ; horis:currentStep ?s .
            ?a horis:instance ?i ; horis:step ?s ; prov:startedAtTime ?started .
            ?g prov:wasGeneratedBy ?a .
            FILTER (STRSTARTS(STR(?g), "urn:horismos:wait:"))
            FILTER NOT EXISTS { ?a prov:endedAtTime ?ended } }""",
        {},
        {"horis": NS, "prov": str(PROV)},
    ):
        key = (cast(URIRef, r["i"]), cast(URIRef, r["s"]))
        started = str(r["started"])
        if started > out.get(key, ""):
            out[key] = started
    return out
