"""Hydration: the world's projection of resources held by a system of record.

Why: a workflow decides against facts; when those facts live in an external system (an EHR),
the world holds a *projection* of them, and each resource's projection says which version it
is, so a commit decided against it can be made conditional on that version. Each resource
lands in its own named graph (:func:`horismos._fhir.projection_graph`) with its source
version, remote id, location and read time, under ``horis:AdapterProvenance``. Hydrating a
resource again replaces its projection, and one hydration lands as one change through the
store's transaction: all of it, or none of it.

It reads the store only to find what a projection replaces (through ``outgoing``, a read a
run records), so the runner can land an accepted commit's new projection the same way.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rdflib import URIRef
from rdflib.term import Node

from ._bindings.reach import Hosts
from ._errors import ToolError, UsageError
from ._fhir import (
    projection_graph,
    projection_quads,
    resource_iri,
    timestamp,
    to_triples,
    version_of,
)
from ._fhir_client import FhirClient
from ._model import Adapter
from ._stores import Change, Store
from ._vocab import HORIS

__all__ = ["Hydrated", "hydration_change", "read_resources", "replaced"]

Quad = tuple[Node, Node, Node, URIRef | None]  # as a Change takes them


@dataclass(frozen=True)
class Hydrated:
    """One resource now projected in the world."""

    resource: URIRef
    remote_id: str
    version: str | None
    read_at: str
    graph: URIRef


def replaced(store: Store, graph: URIRef, base: str) -> list[Quad]:
    """The quads of the projection ``graph`` as stored now: what a new projection removes.

    Read without a query: what is said about the graph node is said in that graph only, and
    the resource's own triples are exactly what its stored ``horis:sourceJson`` maps to (the
    mapping names every node, so it gives the same triples again)."""
    meta = [(s, p, o) for s, p, o in store.outgoing(graph)]
    source = next((o for _, p, o in meta if p == HORIS.sourceJson), None)
    triples = meta + (to_triples(json.loads(str(source)), base) if source is not None else [])
    return [(s, p, o, graph) for s, p, o in triples]


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


def hydration_change(
    store: Store,
    adapter: Adapter,
    resources: Iterable[dict[str, Any]],
    now: dt.datetime | None = None,
) -> tuple[Change, list[Hydrated]]:
    """One change replacing each resource's projection, and what it projects."""
    at = (now or dt.datetime.now(dt.UTC)).isoformat()
    add: list[Quad] = []
    remove: list[Quad] = []
    done: list[Hydrated] = []
    for res in resources:
        node = resource_iri(adapter.base_url, res["resourceType"], res["id"])
        graph = projection_graph(node)
        remove += replaced(store, graph, adapter.base_url)
        add += projection_quads(adapter.iri, adapter.base_url, res, timestamp(at))
        done.append(
            Hydrated(node, f"{res['resourceType']}/{res['id']}", version_of(res), at, graph)
        )
    return Change(add=add, remove=remove), done
