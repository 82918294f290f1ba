"""Blank nodes become IRIs where world data enters a store, named the same for the same input.

Why: a blank node's label means nothing outside the store that minted it, so a world holding
blank nodes has no digest that is the same on every store, after every reload, without
canonical relabelling (rdflib's canonicalisation took 134 s for a 38 KB world of 2,000 blank
nodes, and never finished on a 10,000-deep chain). Skolemising at entry (RDF 1.1 §3.5) is
linear and makes the digest a plain function of the quads stored.

A blank node becomes ``urn:horismos:genid:<key>:<n>``: ``key`` is 32 hex digits of SHA-256 of
the input (a file's bytes; a change's quads with its blank nodes numbered), ``n`` numbers the
input's blank nodes in order of first appearance. Loading the same file twice therefore adds
nothing the second time, on any store; two different inputs never share a node. After this, a
store holds no blank node Horismos wrote, and SPARQL's ``isBlank()`` does not match them
(``STRSTARTS(STR(?n), "urn:horismos:genid:")`` does).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import cast

import pyoxigraph as ox
from rdflib import BNode, URIRef

from .base import Quad, nquad_line

__all__ = ["GENID", "file_key", "skolemise", "skolemise_anew", "skolemise_ox"]

GENID = "urn:horismos:genid:"


def file_key(path: Path) -> str:
    """32 hex digits of SHA-256 of the file's bytes, read in blocks."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()[:32]


def skolemise_ox(quads: Iterable[ox.Quad], key: str) -> Iterator[ox.Quad]:
    """pyoxigraph quads with each blank node replaced by its IRI under ``key``."""
    names: dict[str, ox.NamedNode] = {}

    def iri(node: ox.BlankNode) -> ox.NamedNode:
        named = names.get(node.value)
        if named is None:
            named = names[node.value] = ox.NamedNode(f"{GENID}{key}:{len(names)}")
        return named

    blank = ox.BlankNode
    for q in quads:
        s, o, g = q.subject, q.object, q.graph_name
        if type(s) is blank or type(o) is blank or type(g) is blank:
            yield ox.Quad(
                iri(s) if type(s) is blank else s,
                q.predicate,
                iri(o) if type(o) is blank else o,
                iri(g) if type(g) is blank else g,
            )
        else:
            yield q


def skolemise(quads: list[Quad]) -> list[Quad]:
    """rdflib quads with their blank nodes as IRIs; ``quads`` itself when it holds none. The
    key hashes the quads in order, blank nodes numbered by first appearance, so the same
    quads give the same IRIs whatever labels the blank nodes had."""
    order = _in_order(quads)
    if not order:
        return quads
    placeholder = {b: BNode(f"b{n}") for b, n in order.items()}
    h = hashlib.sha256()
    for q in quads:
        s, p, o, g = cast(
            Quad, tuple(placeholder.get(t, t) if isinstance(t, BNode) else t for t in q)
        )
        h.update(nquad_line(s, p, o, g).encode() + b"\n")
    return _named_under(quads, order, h.hexdigest()[:32])


def skolemise_anew(quads: list[Quad]) -> list[Quad]:
    """As :func:`skolemise`, under a key drawn at random: the blank nodes of a SPARQL
    update's ``INSERT DATA`` are new nodes each time it runs (two runs write two), where the
    same file loaded twice adds nothing."""
    order = _in_order(quads)
    return _named_under(quads, order, secrets.token_hex(16)) if order else quads


def _in_order(quads: list[Quad]) -> dict[BNode, int]:
    """``quads``' blank nodes, numbered by first appearance."""
    order: dict[BNode, int] = {}
    for q in quads:
        for t in q:
            if isinstance(t, BNode) and t not in order:
                order[t] = len(order)
    return order


def _named_under(quads: list[Quad], order: dict[BNode, int], key: str) -> list[Quad]:
    named = {b: URIRef(f"{GENID}{key}:{n}") for b, n in order.items()}
    return [
        tuple(named.get(t, t) if isinstance(t, BNode) else t for t in q)  # type: ignore[misc]
        for q in quads
    ]
