"""Hydration: the world's projection of resources held by a system of record.

Why: a workflow decides against facts; when those facts live in an external system (an EHR),
the world holds a *projection* of them, and each resource's projection says which version it
is, so a commit decided against it can be made conditional on that version. Each resource
lands in its own named graph (:func:`horismos._fhir.projection_graph`) with its source
version, remote id, location and read time, under ``horis:AdapterProvenance``. Hydrating a
resource again replaces its projection, and one hydration lands as one change through the
store's transaction: all of it, or none of it.

An adapter step whose commit was accepted replaces a projection too, so a hydration never
lands over what it did not read: each replacement is conditional on the projection it read
(``expect`` its graph's quads, ``absent`` when there was none), and when another writer landed
first it reads again and decides again. A resource whose stored projection changed after the
hydration's remote reads began (read later than they began, or at another version than
before them) holds what the system of record answered after this read: that projection is
kept, and :class:`Hydrated` says so (``kept``).

It reads the store only to find what a projection replaces (through ``outgoing``, a read a
run records), so the runner can land an accepted commit's new projection the same way: an
adapter step's and a catalog call's alike (:func:`land_projections`). A stored projection at a
version neither the commit's own nor the one the commit was made from (its ``If-Match``;
unknown, the one the landing first read) is newer than the commit (the system of record made
the commit's version from that one, and a hydration keeps what is newer than its reads): it
is kept, whether the landing finds it at its first read (landed between the remote answer and
that read) or reads it again after a conflict.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rdflib import RDF, URIRef
from rdflib.term import Node

from ._bindings.reach import Hosts
from ._errors import ToolError, UsageError
from ._fhir import (
    PROJECTION,
    projection_graph,
    projection_of,
    projection_quads,
    resource_iri,
    timestamp,
    to_triples,
    version_of,
)
from ._fhir_client import FhirClient
from ._model import Adapter
from ._stores import Change, Conflict, Store
from ._vocab import HORIS, PROV

__all__ = [
    "Hydrated",
    "hydrate",
    "hydration_change",
    "land_projections",
    "landing_guard",
    "read_resources",
    "replaced",
    "reread",
]

Quad = tuple[Node, Node, Node, URIRef | None]  # as a Change takes them


@dataclass(frozen=True)
class Hydrated:
    """One resource now projected in the world."""

    resource: URIRef
    remote_id: str
    version: str | None
    read_at: str
    graph: URIRef
    kept: bool = False
    """The world's projection changed after this hydration's remote reads began (an adapter
    commit landed, another hydration): it was kept, not replaced by this older read;
    ``version`` and ``read_at`` are the kept projection's."""


Stamp = tuple[str | None, str | None]
"""A stored projection's version and read time, as written (None, None: none stored)."""


def stamp(store: Store, graph: URIRef) -> Stamp:
    """The version and read time of the projection ``graph`` stored now."""
    return _stamp_of((graph, p, o, graph) for p in _STAMP for o in store.objects(graph, p))


_STAMP = (HORIS.sourceVersion, HORIS.readAt)


def _stamp_of(quads: Iterable[Quad]) -> Stamp:
    """The version and read time ``quads`` (a projection's, as :func:`replaced` reads them)
    say."""
    found = {p: str(o) for _, p, o, _ in quads if p in _STAMP}
    return found.get(HORIS.sourceVersion), found.get(HORIS.readAt)


def replaced(store: Store, graph: URIRef, base: str) -> list[Quad]:
    """The quads of the projection ``graph`` as stored now: what a new projection removes.

    Read without a query: what is said about the graph node is said in that graph only, and
    the resource's own triples are exactly what its stored ``horis:sourceJson`` maps to (the
    mapping names every node, so it gives the same triples again)."""
    meta = [(s, p, o) for s, p, o in store.outgoing(graph)]
    source = next((o for _, p, o in meta if p == HORIS.sourceJson), None)
    triples = meta + (to_triples(json.loads(str(source)), base) if source is not None else [])
    return [(s, p, o, graph) for s, p, o in triples]


def _landed(add: Iterable[Quad]) -> dict[URIRef, tuple[Node, Node]]:
    """The projection graphs ``add`` lands, each with its resource node and remote id."""
    nodes: dict[URIRef, Node] = {}
    ids: dict[URIRef, Node] = {}
    for s, p, o, g in add:
        if g is not None and s == g and str(g).startswith(PROJECTION):
            if p == HORIS.resource:
                nodes[g] = o
            elif p == HORIS.remoteId:
                ids[g] = o
    return {g: (node, ids[g]) for g, node in nodes.items() if g in ids}


def landing_guard(
    remove: Sequence[Quad], add: Sequence[Quad]
) -> tuple[tuple[Quad, ...], tuple[Quad, ...]]:
    """What landing the projections in ``add`` in place of those in ``remove`` (as
    :func:`replaced` read them) is conditional on: each replaced projection's quads about its
    graph still stored, and no projection stored where none was read."""
    graphs = set(_landed(add))
    expect = tuple(q for q in remove if q[3] in graphs and q[0] == q[3])
    had = {q[3] for q in expect}
    absent = tuple((g, RDF.type, PROV.Entity, g) for g in sorted(graphs - had))
    return expect, absent


def reread(store: Store, remove: Sequence[Quad], add: Sequence[Quad]) -> list[Quad]:
    """``remove`` with what it says of the projections ``add`` lands read again: after another
    writer replaced one of them between the first read and the landing."""
    landed = _landed(add)
    out = [q for q in remove if q[3] not in landed]
    for graph, (node, remote_id) in landed.items():
        base = str(node)[: -len(str(remote_id)) - 1]  # the node is {base}/{Type/id}
        out += replaced(store, graph, base)
    return out


def read_resources(
    adapter: Adapter, ids: Sequence[str], searches: Sequence[str], hosts: Hosts | None = None
) -> list[dict[str, Any]]:
    """Every resource named by id (``Type/id``) or found by a search (``Type?param=value``),
    each once (the last read wins)."""
    if not ids and not searches:
        raise UsageError(
            "hydrate what? give resource ids (Patient/p1) or searches "
            "(MedicationRequest?status=active)"
        )
    for ref in ids:
        if ref.count("/") != 1 or "?" in ref:
            raise UsageError(f"resource id {ref!r}: write Type/id, e.g. Patient/p1")
    client = FhirClient(adapter, hosts)
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for res in [*(client.read(r) for r in ids), *(r for q in searches for r in client.search(q))]:
        if not res.get("id"):
            raise ToolError(
                f"adapter {adapter.name} answered a {res.get('resourceType')} "
                "without an id; it cannot be projected"
            )
        found[(res["resourceType"], res["id"])] = res
    return [found[k] for k in sorted(found)]


def _later(read_at: str | None, began: dt.datetime) -> bool:
    """Whether a stored ``horis:readAt`` is later than ``began`` (unreadable: not known to be)."""
    if read_at is None:
        return False
    try:
        when = dt.datetime.fromisoformat(read_at)
    except ValueError:
        return False
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when > began


def hydration_change(
    store: Store,
    adapter: Adapter,
    resources: Iterable[dict[str, Any]],
    now: dt.datetime | None = None,
    *,
    began: dt.datetime | None = None,
    before: Mapping[URIRef, Stamp] | None = None,
) -> tuple[Change, list[Hydrated]]:
    """One change replacing each resource's projection, and what it projects.

    Each replacement expects the projection it read (or its absence). ``began``: when the
    remote reads began; ``before``: the stamps of projections read before them. A stored
    projection read later than ``began``, or whose stamp is no longer what ``before`` says,
    is newer than this read: it is kept (``Hydrated.kept``), not replaced."""
    at = (now or dt.datetime.now(dt.UTC)).isoformat()
    add: list[Quad] = []
    remove: list[Quad] = []
    expect: list[Quad] = []
    absent: list[Quad] = []
    done: list[Hydrated] = []
    for res in resources:
        node = resource_iri(adapter.base_url, res["resourceType"], res["id"])
        graph = projection_graph(node)
        remote_id = f"{res['resourceType']}/{res['id']}"
        old = replaced(store, graph, adapter.base_url)
        about = [q for q in old if q[0] == graph]  # what says which projection it is
        now_stamp = _stamp_of(about)
        if old and (
            (began is not None and _later(now_stamp[1], began))
            or (before is not None and graph in before and before[graph] != now_stamp)
        ):
            version, read_at = now_stamp
            done.append(Hydrated(node, remote_id, version, read_at or "", graph, kept=True))
            continue
        if old:
            expect += about
        else:
            absent.append((graph, RDF.type, PROV.Entity, graph))
        remove += old
        add += projection_quads(adapter.iri, adapter.base_url, res, timestamp(at))
        done.append(Hydrated(node, remote_id, version_of(res), at, graph))
    return Change(add=add, remove=remove, expect=tuple(expect), absent=tuple(absent)), done


TRIES = 3
"""How many times a hydration reads the stored projections and decides again when another
writer's commit landed between its read and its own."""


def _versions(quads: Iterable[Quad]) -> dict[URIRef | None, str]:
    """The ``horis:sourceVersion`` each projection graph in ``quads`` says."""
    return {g: str(o) for s, p, o, g in quads if p == HORIS.sourceVersion and s == g}


def _newer(
    stored: Iterable[Quad], ours: Mapping[URIRef | None, str], since: Mapping[URIRef | None, str]
) -> set[URIRef | None]:
    """The projection graphs ``stored`` holds at a version neither ``ours`` (the commit's)
    nor ``since`` (the one the commit was made from): newer than the commit. Versions are
    opaque, compared only for equality; a graph with no ``since`` is not known to be newer."""
    return {
        g
        for g, v in _versions(stored).items()
        if g in ours and g in since and v not in (since[g], ours[g])
    }


def _without_newer(
    add: Sequence[Quad],
    remove: Sequence[Quad],
    ours: Mapping[URIRef | None, str],
    since: Mapping[URIRef | None, str],
) -> tuple[list[Quad], list[Quad]]:
    """``add`` and ``remove`` without the projection graphs ``remove`` holds newer than the
    commit (:func:`_newer`): those stay as stored."""
    newer = _newer(remove, ours, since)
    return [q for q in add if q[3] not in newer], [q for q in remove if q[3] not in newer]


def land_projections(
    store: Store,
    land: Callable[[list[Quad], list[Quad], tuple[Quad, ...], tuple[Quad, ...]], object],
    remove: Sequence[Quad],
    add: Sequence[Quad],
    made_from: Mapping[URIRef, str] | None = None,
) -> None:
    """Land ``add`` in place of ``remove`` (an accepted commit's projections and what it read
    they replace, beside any other quads) through ``land(add, remove, expect, absent)``, each
    projection conditional on the one it read (:func:`landing_guard`).

    ``made_from``: the version each projection graph's commit was made from (the ``If-Match``
    it was sent with), where known. A projection stored at a version neither ``add``'s nor the
    one its commit was made from (unknown: the one first read) is newer than this commit: it
    is kept, and ``add``'s for it left out. That is decided on what was first read (read after
    the remote answer, it may already be newer) and again on each re-read; where neither a
    ``made_from`` nor a first read says which version the commit replaced, nothing says which
    is newer, and ``add``'s lands.

    On a :class:`Conflict` the replaced projections are read again (:func:`reread`) and it
    lands again; only ``land`` is called again, so the remote commit is never made twice. The
    last try lands unguarded; a Conflict of what ``land`` guards itself (an instance's
    version) is raised when no projection is guarded."""
    ours = _versions(add)
    # what each commit replaced: the version it was made from, else the one first read
    since = _versions(remove)
    since.update((made_from or {}).items())
    if made_from:
        add, remove = _without_newer(add, remove, ours, since)
    else:  # since is what was first read: nothing in it is newer, nothing left out yet
        add, remove = list(add), list(remove)
    expect, absent = landing_guard(remove, add)
    for tries in reversed(range(TRIES)):
        try:
            land(add, remove, expect, absent)
            return
        except Conflict:
            if not (expect or absent):
                raise
            add, remove = _without_newer(add, reread(store, remove, add), ours, since)
            expect, absent = landing_guard(remove, add) if tries > 1 else ((), ())


def hydrate(
    store: Store,
    commit: Callable[[Change], object],
    adapter: Adapter,
    ids: Sequence[str],
    searches: Sequence[str],
    hosts: Hosts | None = None,
) -> list[Hydrated]:
    """Read the resources, then land their projections through ``commit`` (guarded; decided
    again when another writer landed first, :func:`hydration_change`)."""
    began = dt.datetime.now(dt.UTC)
    before: dict[URIRef, Stamp] = {}
    for ref in ids:  # the named ones: their projections as they stand before the reads
        if (graph := projection_of(adapter.base_url, ref)) is not None:
            before[graph] = stamp(store, graph)
    resources = read_resources(adapter, ids, searches, hosts)
    for attempt in range(TRIES):
        change, done = hydration_change(store, adapter, resources, began=began, before=before)
        try:
            commit(change)
        except Conflict:
            if attempt == TRIES - 1:
                raise
            continue
        return done
    raise AssertionError("unreachable")
