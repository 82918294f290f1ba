"""A stand-in airline reservation system for the rebooking example."""

from __future__ import annotations

import itertools

from rdflib import URIRef

_tickets = itertools.count(4711)


def rebook(booking: URIRef, flight: URIRef) -> dict[str, object]:
    """Move ``booking`` onto ``flight``; the reservation system issues a new ticket."""
    return {"rebookedOn": flight, "ticketRef": f"TK-{next(_tickets)}"}
