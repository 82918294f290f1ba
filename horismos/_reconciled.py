"""Calls in doubt cleared by hand: who cleared which, when, and what they found.

``horismos tools reconcile`` clears a call of a tool that is not idempotent held in doubt
(:mod:`._intents`) once a person has checked with the system it acts on whether it took
effect. It removed the doubt and kept nothing: an incident reviewer found the tool called
again afterwards and could not tell who had let it be, when, or on what finding. So the commit
that removes the doubt adds, in the same transaction, a record in a named graph of its own,
with human provenance, as an approval is recorded (:func:`~._policy.given_issue`)::

    GRAPH <urn:horismos:reconciled:ID> {
        <urn:horismos:reconciled:ID> a horis:Reconciliation, prov:Activity ;
            horis:provenance horis:HumanProvenance ;
            prov:startedAtTime "…"^^xsd:dateTime ;        # when it was cleared
            prov:wasAssociatedWith <urn:horismos:reconciled:ID:operator> ;
            horis:verdict "acted" ;                         # or "not-acted"; none if not given
            horis:tool <tool> ;
            horis:reconciles <instance or urn:horismos:call:…> ;   # that made the call
            prov:used <doubt node> ;                        # the doubt it cleared
            horis:callStartedAt "…"^^xsd:dateTime ;         # the call in doubt's own start
            rdfs:comment "[{…arguments…}]" .
        <urn:horismos:reconciled:ID:operator> a prov:Person ; rdfs:label "alice" . }

The instance is named by ``horis:reconciles``, not ``horis:instance``: a node with
``horis:instance`` and ``prov:startedAtTime`` reads as one of the instance's activities
(``instances``' "since", a proposal's fallback), which a person's clearing is not.
``horismos instances`` shows it on the instance whose call it was. A record is world data:
a file loaded with ``horismos load`` could carry one that no reconcile wrote, as it could any
fact; nothing is decided from it, it is read only to be shown.
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import cast

from rdflib import RDF, RDFS, XSD, Literal, URIRef

from ._intents import Intent
from ._people import person_triples
from ._stores import Store
from ._stores.base import Quad
from ._stores.ox_terms import datetime_literal
from ._vocab import HORIS, NS, PROV

__all__ = ["VERDICTS", "Reconciled", "reconciliation", "reconciliations"]

VERDICTS = ("acted", "not-acted")
"""What the person who checked found: the call in doubt took effect, or it did not."""

_PREFIX = "urn:horismos:reconciled:"


@dataclass(frozen=True)
class Reconciled:
    """One call in doubt cleared by hand, as recorded: ``at`` when, ``operator`` by whom,
    ``verdict`` what they found (``None``: not said), and of the call: its ``tool``, the
    ``instance`` (or ``urn:horismos:call:…``) that made it, when it had ``started`` (``""``
    for a step's hold its instance had let go of), its ``args`` as the trace writes them."""

    at: str
    operator: str
    verdict: str | None
    tool: URIRef
    instance: URIRef | None
    started: str
    args: str

    def said(self) -> str:
        """One line: "call in doubt cleared by alice at 2026-12-07T09:10:00 (verdict: acted)"."""
        verdict = f"verdict: {self.verdict}" if self.verdict else "no verdict given"
        return f"call in doubt cleared by {self.operator} at {self.at[:19]} ({verdict})"


def reconciliation(
    intent: Intent,
    doubt: URIRef,
    tool: URIRef,
    *,
    operator: str,
    verdict: str | None,
    at: dt.datetime,
) -> list[Quad]:
    """The quads recording that ``operator`` cleared ``intent``, the call in doubt kept at
    ``doubt``, at ``at`` on finding ``verdict``: added by the commit that removes it."""
    node = URIRef(f"{_PREFIX}{uuid.uuid4().hex}")
    g = node
    quads: list[Quad] = [
        (node, RDF.type, HORIS.Reconciliation, g),
        (node, RDF.type, PROV.Activity, g),
        (node, HORIS.provenance, HORIS.HumanProvenance, g),
        (node, PROV.startedAtTime, datetime_literal(at), g),
        *((s, p, o, g) for s, p, o in person_triples(node, operator)),
        (node, HORIS.tool, tool, g),
        (node, PROV.used, doubt, g),
        (node, RDFS.comment, Literal(intent.args), g),
    ]
    if verdict is not None:
        quads.append((node, HORIS.verdict, Literal(verdict), g))
    if intent.instance is not None:
        quads.append((node, HORIS.reconciles, intent.instance, g))
    if intent.started:
        started = Literal(intent.started, datatype=XSD.dateTime)
        quads.append((node, HORIS.callStartedAt, started, g))
    return quads


def reconciliations(store: Store) -> dict[URIRef, list[Reconciled]]:
    """The calls in doubt cleared by hand, by the instance (or catalog call) that made them,
    oldest first. Found by their type: the few there are, not the world (one query, however
    many instances are listed)."""
    found: dict[URIRef, list[Reconciled]] = {}
    for r in store.select(
        """SELECT ?r ?at ?who ?verdict ?tool ?i ?started ?args WHERE {
            ?r a horis:Reconciliation ; prov:startedAtTime ?at ; horis:tool ?tool .
            OPTIONAL { ?r prov:wasAssociatedWith ?agent . ?agent rdfs:label ?who }
            OPTIONAL { ?r horis:verdict ?verdict }
            OPTIONAL { ?r horis:reconciles ?i }
            OPTIONAL { ?r horis:callStartedAt ?started }
            OPTIONAL { ?r rdfs:comment ?args } }""",
        {},
        {"horis": NS, "prov": str(PROV), "rdfs": str(RDFS)},
    ):
        instance = cast(URIRef | None, r.get("i"))
        found.setdefault(instance, []).append(  # type: ignore[arg-type]
            Reconciled(
                str(r["at"]),
                str(r.get("who", "someone unnamed")),
                str(r["verdict"]) if "verdict" in r else None,
                cast(URIRef, r["tool"]),
                instance,
                str(r.get("started", "")),
                str(r.get("args", "[]")),
            )
        )
    for records in found.values():
        records.sort(key=lambda x: x.at)
    return found
