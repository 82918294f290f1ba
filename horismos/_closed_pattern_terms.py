"""A term of a closed vocabulary — Horismos's own, RDF, RDFS, OWL, XSD — that a pattern names
and the vocabulary does not define.

Why: a rule written ``?this horis:risk :high`` (the domain's ``:risk`` under ``horis:``), a
guard ``FILTER NOT EXISTS { ?this horis:deployedAt ?t }``, an until ``?this rdfs:lable ?l``:
no file declares such a term and nothing writes it — the runtime writes only the ``horis:``
terms it defines, and a person's answer may write no ``horis:`` term at all. The rule never
held, so every high-risk change took ``horis:otherwise`` and was deployed without the board's
approval; the guard never held a step back; the wait never ended. It validated: the check of
terms declared nowhere (:meth:`~._term_checks.TermChecks.check_pattern_terms`) passes over
every term of these namespaces, which their vocabularies declare, and so passed over these.

A warning, as a term declared nowhere is (world data may still state it: ``validate --world``
drops it then), with the term meant: the files' own term of that local name (``:risk``), or the
vocabulary's close one (``rdfs:label``).
"""

from __future__ import annotations

import difflib
from functools import cache

from rdflib import URIRef

from ._closed_terms import undefined
from ._shipped_vocabulary import vocabulary_graph
from ._vocab import HORIS, NS

__all__ = ["undefined_in_pattern"]


def undefined_in_pattern(term: URIRef) -> tuple[str, URIRef | None] | None:
    """The name of the closed vocabulary ``term`` is of, when the vocabulary does not define
    it, with the close term meant; None for a term it defines, or of an open namespace."""
    if not str(term).startswith(NS):
        return undefined(term)
    local = str(term)[len(NS) :]
    known = _horis_terms()
    if local in known:
        return None
    close = difflib.get_close_matches(local, sorted(known), n=1, cutoff=0.7)
    return "Horismos's vocabulary", (URIRef(NS + close[0]) if close else None)


@cache
def _horis_terms() -> frozenset[str]:
    """The local names of ``horis:`` the vocabulary defines: the closed namespace's, and any
    more the shipped ontology declares."""
    shipped = {
        str(s)[len(NS) :]
        for s in vocabulary_graph().subjects()
        if isinstance(s, URIRef) and str(s).startswith(NS)
    }
    return frozenset({*HORIS.__annotations__, *HORIS._extras, *shipped})
