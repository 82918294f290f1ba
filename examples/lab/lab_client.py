"""A stand-in lab system for the DecisionStep example."""

from __future__ import annotations

import itertools

from rdflib import URIRef

_refs = itertools.count(1)


def escalate(result: URIRef, clinician: URIRef) -> dict[str, object]:
    """Page ``clinician`` about ``result``; the pager confirms who was reached."""
    return {"escalatedTo": clinician}


def file_result(result: URIRef) -> dict[str, object]:
    """Archive a non-critical result."""
    return {"archiveRef": f"ARCH-{next(_refs):05d}"}
