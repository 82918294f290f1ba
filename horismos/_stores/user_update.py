"""A user's SPARQL update as a store reads it before Oxigraph runs it.

Why a module: the ``oxigraph`` and ``sparql:`` stores both hand a user's update to Oxigraph
(the embedded one, a server), and each first asks the same two things of its text here. Does
it write RDF-star triple terms? Oxigraph took such an update, and the store could then not be
read, so it is refused before it writes (the ``memory`` store, whose parser is rdflib's,
refuses it in the same words). Is it ``INSERT DATA`` and ``DELETE DATA`` alone? Then it names
every quad it writes (:mod:`.data_update`) and lands as the store's own commit, the digest
moved by those quads, with no pass over the world.
"""

from __future__ import annotations

import re

import pyoxigraph as ox

from .._sparql_parse import prepare_update
from .base import Change, Quad, StoreError
from .data_update import data_quads
from .ox_terms import from_ox, graph_name

__all__ = ["data_change", "refuse_triple_terms"]

_MAY_MAKE_TRIPLE_TERMS = re.compile(r"<<|\btriple\s*\(", re.IGNORECASE)


def data_change(text: str) -> Change | None:
    """The commit a user's update of ``INSERT DATA`` and ``DELETE DATA`` alone makes, its
    quads read by Oxigraph's parser (:mod:`.data_update`); ``None`` for any other update."""
    quads = data_quads(text)
    if quads is None:
        return None
    added, removed = ([_quad(q) for q in part] for part in quads)
    return Change(add=added, remove=removed)


def _quad(q: ox.Quad) -> Quad:
    """``q`` as the rdflib quad a :class:`Change` holds (converted back, once, by apply)."""
    return from_ox(q.subject), from_ox(q.predicate), from_ox(q.object), graph_name(q.graph_name)


def refuse_triple_terms(text: str) -> None:
    """An update that writes RDF-star triple terms (``<< … >>``, ``TRIPLE()``) refused with
    :class:`StoreError`, before it writes: Oxigraph took it, and then the store could not
    be read (its quads are RDF 1.1 terms here: :func:`from_ox` has no triple term, and
    neither have the digest's N-Quads). A text with neither token is let through at the cost
    of a search; one with either is parsed by rdflib, whose SPARQL has no triple terms:
    what rdflib refuses and Oxigraph's parser takes is SPARQL-star."""
    if not _MAY_MAKE_TRIPLE_TERMS.search(text):
        return
    try:
        prepare_update(text)
        return
    except Exception:  # pyparsing's, rdflib's: not SPARQL 1.1
        pass
    try:
        ox.Store().update(text)  # an empty scratch store: only its parse is asked
    except SyntaxError as e:
        raise StoreError(f"the update was refused, and wrote nothing: {e}") from None
    except (OSError, RuntimeError, ValueError):
        pass
    raise StoreError(
        "the update was refused, and wrote nothing: it writes RDF-star triple terms "
        "(<< … >>, TRIPLE()), which Horismos's stores do not hold; describe the statement "
        "with a node of its own (rdf:subject, rdf:predicate, rdf:object)"
    )
