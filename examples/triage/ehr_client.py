"""A stand-in EHR client for the triage example: plain functions Horismos binds to."""

from __future__ import annotations

import itertools

from rdflib import URIRef

_numbers = itertools.count(1)


def assign_queue(patient: URIRef, queue: URIRef) -> dict[str, object]:
    """Queue the patient; the EHR answers with a reference for the queue entry."""
    level = str(queue).rsplit("#", 1)[-1].upper()
    return {"queueRef": f"Q-{level}-{next(_numbers)}"}


def notify_nurse(patient: URIRef, nurse: URIRef, ref: str) -> dict[str, object]:
    """Page the nurse about the queue entry ``ref``; the pager confirms who was paged."""
    return {"assignedNurse": nurse}
