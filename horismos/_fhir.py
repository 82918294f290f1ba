"""FHIR R4 resources as RDF, and conditional writes with their remote outcomes: pure data.

Why JSON-LD (one small context, :data:`CONTEXT`) and not FHIR's own Turtle: the R4 Turtle
form names every property by the type that defines it (``fhir:Patient.name``,
``fhir:HumanName.family``) and wraps each primitive in ``[ fhir:value … ]``, which needs the
full set of R4 StructureDefinitions to produce. A resource's JSON read as JSON-LD with one
small context gives RDF in the same namespace (``http://hl7.org/fhir/``) with the short
property names FHIR R5's RDF moved to: the ``resourceType`` is the ``rdf:type``
(``fhir:MedicationRequest``), each field is ``fhir:FIELD``, nested elements are nodes named by
their path in the resource (``…/MedicationRequest/mr1#subject``, never blank nodes, so the same
resource always gives the same triples), and a ``reference`` is a link to the referenced
resource's IRI (``BASE/Type/id``), so a hydrated MedicationRequest's ``fhir:subject`` reaches
the hydrated Patient. What JSON-LD loses (array order, ``null``) is kept in the projection's
``horis:sourceJson``, the exact JSON the system gave, which adapter tools decide from.

Writes: a tool's decision (one resource, a list of them, or a ``batch``/``transaction``
Bundle) becomes :class:`Write` s — ``PUT Type/id`` with ``If-Match: W/"n"`` of the version the
world's projection holds, or ``POST Type`` for a new resource — sent as one request (one write)
or one Bundle. :func:`receipts` reads the answer back into one :class:`Receipt` per write:
accepted, conflicted, failed or unknown.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urljoin

from rdflib import RDF, XSD, Graph, URIRef
from rdflib import Literal as Lit
from rdflib.term import Node

from ._vocab import HORIS, PROV

__all__ = [
    "FHIR",
    "PROJECTION",
    "Outcome",
    "PlanError",
    "Receipt",
    "Request",
    "Write",
    "jsonld_triples",
    "plan",
    "projection_graph",
    "projection_of",
    "projection_quads",
    "receipts",
    "resource_iri",
    "stale",
    "timestamp",
    "to_triples",
    "unanswered",
    "version_of",
]

FHIR = "http://hl7.org/fhir/"
JSON = URIRef("http://www.w3.org/1999/02/22-rdf-syntax-ns#JSON")
Outcome = Literal["accepted", "conflicted", "failed", "unknown"]


def resource_iri(base: str, kind: str, rid: str) -> URIRef:
    """A resource's node: its URL on the system of record, as FHIR's RDF names it."""
    return URIRef(f"{base}/{kind}/{rid}")


PROJECTION = "urn:horismos:projection:"
"""What every projection graph's name begins with (:func:`projection_graph`)."""


def projection_graph(resource: URIRef) -> URIRef:
    """The named graph holding one resource's projection and where it came from."""
    return URIRef(f"{PROJECTION}{resource}")


def projection_of(base: str, ref: str) -> URIRef | None:
    """The projection graph of the resource ``ref`` names as ``Kind/id`` on the system of
    record at ``base`` (a receipt's ref, an id given to hydrate); None for a ref of another
    form (a search, a path)."""
    if ref.count("/") != 1 or "?" in ref:
        return None
    kind, rid = ref.split("/")
    return projection_graph(resource_iri(base, kind, rid))


def to_triples(resource: Mapping[str, Any], base: str) -> list[tuple[Node, Node, Node]]:
    """``resource`` as RDF: what JSON-LD gives for it under :data:`CONTEXT` (see the module's
    docstring), computed directly — that one context's rules are few, and a JSON-LD processor
    took ~10 ms a resource. :func:`jsonld_triples` runs the processor itself; a test checks
    the two agree.

    Each nested element is named by its path in the resource (``…/MedicationRequest/mr1#
    dosageInstruction.0.timing``) rather than left a blank node, so the same resource always
    gives the same triples: a replay compares them, and re-hydration replaces them."""
    iri = resource_iri(base, resource["resourceType"], resource["id"])
    out: list[tuple[Node, Node, Node]] = []
    start = base + "/"

    def node(subject: URIRef, obj: Mapping[str, Any], path: str) -> None:
        for key, value in obj.items():
            key = str(key)
            if key.startswith("@") or value is None:
                continue
            if key == "resourceType":  # @type, vocabulary-relative
                for t in value if isinstance(value, list) else [value]:
                    if isinstance(t, str):
                        out.append((subject, RDF.type, URIRef(FHIR + t)))
                continue
            pred = URIRef(FHIR + key)
            here = f"{path}{key}" if path.endswith("#") else f"{path}.{key}"
            items = list(enumerate(value)) if isinstance(value, list) else [(None, value)]
            for i, item in items:
                at = here if i is None else f"{here}.{i}"
                if isinstance(item, Mapping):
                    child = URIRef(at)
                    out.append((subject, pred, child))
                    node(child, item, at)
                elif item is None or isinstance(item, list):
                    continue
                elif key == "reference" and isinstance(item, str):  # "@type": "@id"
                    out.append((subject, pred, URIRef(urljoin(start, item))))
                else:
                    out.append((subject, pred, Lit(item)))

    node(iri, resource, f"{iri}#")
    return out


CONTEXT = {"@vocab": FHIR, "resourceType": "@type", "reference": {"@type": "@id"}}
"""The JSON-LD context FHIR JSON is read with (``@base`` is the adapter's base URL + ``/``)."""


def jsonld_triples(resource: Mapping[str, Any], base: str) -> list[tuple[Node, Node, Node]]:
    """:func:`to_triples` by a JSON-LD processor (rdflib's): the reference it is checked
    against."""
    iri = str(resource_iri(base, resource["resourceType"], resource["id"]))
    doc = {"@context": {**CONTEXT, "@base": base + "/"}, "@id": iri, **_named(resource, iri + "#")}
    return list(Graph().parse(data=json.dumps(doc), format="json-ld"))


def _named(value: Any, path: str) -> Any:
    """``value`` with an ``@id`` for every nested object, from its path; ``@`` keys dropped."""
    if isinstance(value, Mapping):
        out = {
            k: _named(v, f"{path}{'.' if not path.endswith('#') else ''}{k}")
            for k, v in value.items()
            if not str(k).startswith("@")
        }
        if not path.endswith("#"):
            out["@id"] = path
        return out
    if isinstance(value, list):
        return [_named(v, f"{path}.{i}") for i, v in enumerate(value)]
    return value


def version_of(resource: Mapping[str, Any] | None, etag: str | None = None) -> str | None:
    """The version a server gave: ``meta.versionId``, else the weak ETag ``W/"n"``."""
    meta = (resource or {}).get("meta") or {}
    if isinstance(meta, Mapping) and meta.get("versionId"):
        return str(meta["versionId"])
    if etag:
        return etag.removeprefix("W/").strip('"') or None
    return None


def projection_quads(
    adapter: URIRef,
    base: str,
    resource: Mapping[str, Any],
    at: Lit,
    location: str | None = None,
    activity: URIRef | None = None,
) -> list[tuple[Node, Node, Node, URIRef | None]]:
    """The projection of ``resource``: its RDF, the JSON it came as, its remote id, version,
    location and when it was read or accepted, with ``horis:AdapterProvenance``."""
    node = resource_iri(base, resource["resourceType"], resource["id"])
    graph = projection_graph(node)
    version = version_of(resource)
    meta: list[tuple[Node, Node, Node]] = [
        (graph, RDF.type, PROV.Entity),
        (graph, HORIS.provenance, HORIS.AdapterProvenance),
        (graph, HORIS.adapter, adapter),
        (graph, HORIS.resource, node),
        (graph, HORIS.remoteId, Lit(f"{resource['resourceType']}/{resource['id']}")),
        (graph, HORIS.readAt, at),
        (graph, HORIS.sourceJson, Lit(json.dumps(resource, sort_keys=True), datatype=JSON)),
    ]
    if version is not None:
        meta.append((graph, HORIS.sourceVersion, Lit(version)))
    meta.append(
        (
            graph,
            HORIS.location,
            Lit(
                location
                or f"{base}/{resource['resourceType']}/{resource['id']}"
                + (f"/_history/{version}" if version else "")
            ),
        )
    )
    if activity is not None:
        meta.append((graph, PROV.wasGeneratedBy, activity))
    return [(s, p, o, graph) for s, p, o in [*to_triples(resource, base), *meta]]


# -- writes ---------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Write:
    """One effect the tool decided: ``ref`` is ``Type/id`` (``Type`` alone for a create)."""

    method: Literal["PUT", "POST"]
    ref: str
    resource: dict[str, Any]
    expected: str | None = None

    @property
    def kind(self) -> str:
        return str(self.resource["resourceType"])


@dataclass(frozen=True)
class Request:
    """What is sent: one write on its own, or several as one Bundle of ``bundle`` type."""

    writes: tuple[Write, ...]
    bundle: str | None = None

    def http(self, base: str) -> tuple[str, str, dict[str, Any], dict[str, str]]:
        """Method, URL, JSON body and headers of the request."""
        if self.bundle is None:
            (w,) = self.writes
            headers = {"If-Match": f'W/"{w.expected}"'} if w.expected is not None else {}
            return w.method, f"{base}/{w.ref}", w.resource, headers
        entries = []
        for w in self.writes:
            req: dict[str, Any] = {"method": w.method, "url": w.ref}
            if w.expected is not None:
                req["ifMatch"] = f'W/"{w.expected}"'
            entries.append({"resource": w.resource, "request": req})
        return "POST", base, {"resourceType": "Bundle", "type": self.bundle, "entry": entries}, {}


class PlanError(ValueError):
    """The decision cannot be sent as it is; the message says why."""


def plan(decided: Any, projected: Callable[[str], str | None]) -> Request | None:
    """The request for a tool's decision; ``projected("Type/id")`` is the version the world's
    projection holds (None: not hydrated). None when the tool decided to write nothing."""
    bundle: str | None = None
    if isinstance(decided, Mapping) and decided.get("resourceType") == "Bundle":
        bundle = str(decided.get("type") or "")
        if bundle not in ("batch", "transaction"):
            raise PlanError(
                f"a decided Bundle must be of type batch or transaction, not {bundle!r}"
            )
        resources = [e.get("resource") for e in decided.get("entry") or []]
    elif isinstance(decided, Mapping):
        resources = [decided] if decided else []
    elif isinstance(decided, list | tuple):
        resources = list(decided)
        bundle = "batch" if len(resources) > 1 else None
    elif decided is None:
        resources = []
    else:
        raise PlanError(
            f"returned {type(decided).__name__}; an adapter-bound tool returns the "
            "FHIR resources to write: one resource, a list, or a batch or "
            "transaction Bundle"
        )
    writes = []
    for res in resources:
        if not isinstance(res, Mapping) or not isinstance(res.get("resourceType"), str):
            raise PlanError(
                f"{_short(res)} is not a FHIR resource (a JSON object with a resourceType)"
            )
        res = dict(res)
        kind = res["resourceType"]
        if res.get("id"):
            ref = f"{kind}/{res['id']}"
            expected = projected(ref)
            if expected is None:
                raise PlanError(
                    f"{ref} is updated but the world holds no projection of it, so "
                    "there is no version to make the update conditional on; "
                    "hydrate it first (World.hydrate / horismos hydrate)"
                )
            writes.append(Write("PUT", ref, res, expected))
        else:
            writes.append(Write("POST", kind, res))
    if not writes:
        return None
    return Request(tuple(writes), bundle)


def stale(request: Request) -> list[tuple[Write, str]]:
    """Writes whose resource carries a ``meta.versionId`` other than the projection's: a
    mismatch seen before sending."""
    out = []
    for w in request.writes:
        claimed = version_of(w.resource)
        if w.expected is not None and claimed is not None and claimed != w.expected:
            out.append((w, claimed))
    return out


# -- outcomes -------------------------------------------------------------------------------


@dataclass
class Receipt:
    """The remote outcome of one write, as the trace and ``run.steps`` show it."""

    ref: str
    method: str
    outcome: Outcome
    status: int | None = None
    expected_version: str | None = None
    version: str | None = None
    location: str | None = None
    message: str | None = None
    resource: dict[str, Any] | None = field(default=None, repr=False)
    """The accepted resource as it now stands remotely (what lands); not traced."""
    call: int | None = None
    """Which call of a ``horis:forEach`` step decided it (0 for a step that calls once)."""

    def to_json(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if v is not None and k != "resource"}
        return out


def _code(status: Any) -> int:
    try:
        return int(str(status).split()[0])
    except (ValueError, IndexError):
        return 0


def _diagnostics(body: Any) -> str | None:
    if isinstance(body, Mapping) and body.get("resourceType") == "OperationOutcome":
        texts = [
            str(i.get("diagnostics") or i.get("code") or "")
            for i in body.get("issue") or []
            if isinstance(i, Mapping)
        ]
        return "; ".join(t for t in texts if t) or None
    return None


def _settle(
    w: Write, code: int, resource: Any, etag: str | None, location: str | None, message: str | None
) -> Receipt:
    if 200 <= code < 300:
        landed = (
            dict(resource)
            if isinstance(resource, Mapping) and resource.get("resourceType") == w.kind
            else dict(w.resource)
        )
        if not landed.get("id") and location:  # a create answered without its body
            parts = location.split("/_history/")[0].rstrip("/").split("/")
            landed["id"] = parts[-1]
        version = version_of(resource if isinstance(resource, Mapping) else None, etag)
        if version is None and location and "/_history/" in location:
            version = location.rsplit("/_history/", 1)[1].strip("/")
        if version is not None:
            landed["meta"] = {**(landed.get("meta") or {}), "versionId": version}
        ref = f"{w.kind}/{landed.get('id')}"
        return Receipt(
            ref, w.method, "accepted", code, w.expected, version, location, resource=landed
        )
    outcome: Outcome = "conflicted" if code in (409, 412) else "failed"
    return Receipt(w.ref, w.method, outcome, code or None, w.expected, message=message)


def receipts(request: Request, response: Mapping[str, Any]) -> list[Receipt]:
    """One receipt per write from the recorded response ``{status, etag, location, body}``."""
    code = int(response.get("status") or 0)
    body = response.get("body")
    if request.bundle is None or not 200 <= code < 300:
        message = _diagnostics(body) or (f"HTTP {code}" if code else None)
        if request.bundle is not None:  # the Bundle as a whole was refused
            return [_settle(w, code, None, None, None, message) for w in request.writes]
        (w,) = request.writes
        return [_settle(w, code, body, response.get("etag"), response.get("location"), message)]
    entries = body.get("entry") if isinstance(body, Mapping) else None
    out = []
    for i, w in enumerate(request.writes):
        entry = entries[i] if isinstance(entries, list) and i < len(entries) else None
        if not isinstance(entry, Mapping):
            out.append(
                Receipt(
                    w.ref,
                    w.method,
                    "unknown",
                    None,
                    w.expected,
                    message="the response Bundle has no entry for this write",
                )
            )
            continue
        res = entry.get("response") or {}
        out.append(
            _settle(
                w,
                _code(res.get("status")),
                entry.get("resource"),
                res.get("etag"),
                res.get("location"),
                _diagnostics(res.get("outcome")),
            )
        )
    return out


def unanswered(request: Request, outcome: Outcome, message: str) -> list[Receipt]:
    """Every write of a request that got no answer: ``unknown`` when it was sent (it may
    have acted), ``failed`` when it never left."""
    return [
        Receipt(w.ref, w.method, outcome, None, w.expected, message=message) for w in request.writes
    ]


def _short(value: Any, limit: int = 80) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= limit else text[:limit] + "…"


def timestamp(value: str) -> Lit:
    """An ISO time as an ``xsd:dateTime`` literal: when a projection or a commit was made."""
    return Lit(value, datatype=XSD.dateTime)
