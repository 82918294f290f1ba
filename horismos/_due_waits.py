"""Which waits are due to be woken, read for all the waiting instances at once.

A wait whose ``horis:wake horis:Timer`` promises a timeout needs something to wake it when
nobody answers: ``horismos wake``, run from cron or a systemd timer, resumes exactly the
waits that are due — past their ``horis:timeout``, or whose ``horis:until`` now holds — and
leaves the others untouched (no write, no trace), so running it every minute costs a few
queries a wait step, however many instances wait. Apart from :mod:`._instances`: this reads
the definitions (each wait step's timeout and ``horis:until``), which the world's listing of
instances must not import.
"""

from __future__ import annotations

import datetime as dt
from typing import cast

from rdflib import URIRef
from rdflib.term import Node

from ._definitions import Definitions
from ._model import WaitStep
from ._preconditions import Precondition
from ._stores import Store
from ._stores.base import INSTANCES
from ._vocab import NS, PROV

__all__ = ["due_waits", "due_waits_at", "unreached_blocked"]


def due_waits(defs: Definitions, store: Store, now: dt.datetime) -> list[URIRef]:
    """The waiting instances whose wait would settle if resumed now, without facts
    (:func:`due_waits_at`, without the steps)."""
    return [iid for iid, _ in due_waits_at(defs, store, now)]


def due_waits_at(
    defs: Definitions, store: Store, now: dt.datetime
) -> list[tuple[URIRef, WaitStep]]:
    """The waiting instances whose wait would settle if resumed now, without facts, each with
    the wait step it stands at: ``wake`` says from there, as ``resume`` does, which steps
    ahead its policy blocks, with no query more.

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
    due = [
        (opened[iid, step.iri], str(iid), step) for iid, step in at if settles.get((iid, step.iri))
    ]
    due.sort(key=lambda d: (d[0], d[1]))  # the longest waiting first
    return [(URIRef(iid), step) for _, iid, step in due]


def unreached_blocked(store: Store) -> list[URIRef]:
    """The instances blocked at a step whose call did not reach its endpoint (``horis:errorKind
    "not_sent"``: an HTTP endpoint or MCP server down, nothing sent), the longest blocked
    first: ``wake`` tries each again at every pass, as it wakes a due wait, so one woken into
    an outage goes on once the endpoint answers; before, only a person's ``resume`` did, and
    a service woken by cron left it blocked for good. Read from the blocked instances only."""
    found: dict[URIRef, str] = {}
    for r in store.select(
        f"""
        SELECT ?i ?at WHERE {{ GRAPH <{INSTANCES}> {{
            ?i horis:status horis:Blocked ; horis:errorKind "not_sent" .
            OPTIONAL {{ ?i horis:blockedAt ?at }} }} }}""",
        {},
        {"horis": NS},
    ):
        found[cast(URIRef, r["i"])] = str(r.get("at", ""))
    return sorted(found, key=lambda iid: (found[iid], str(iid)))


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
