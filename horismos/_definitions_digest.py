"""The digest of loaded definitions, recorded in each trace so replay can tell them apart.

Canonical (blank-node labels and file order do not change it) and fast; the legacy digest is
kept only to read traces recorded before it."""

from __future__ import annotations

import hashlib

import pyoxigraph as ox
from rdflib import Graph

__all__ = ["RDFC_DIGEST", "definitions_digest", "legacy_definitions_digest"]


def definitions_digest(graph: Graph) -> str:
    """A content digest of the definitions, the same whatever their blank nodes' labels and
    their files' order: SHA-256 of their canonical N-Quads by W3C RDF Dataset Canonicalization
    (RDFC-1.0, pyoxigraph's), fast for the tree-shaped blank nodes definitions hold. rdflib's
    canonical graph, used before (:func:`legacy_definitions_digest`), took time growing with the
    square of the definitions — 3 s for 1,500 triples — on every command that loads them.
    Definitions pyoxigraph cannot read (an IRI only rdflib accepts) are digested as before."""
    try:
        dataset = ox.Dataset(
            ox.parse(
                graph.serialize(format="nt", encoding="utf-8"),
                format=ox.RdfFormat.N_TRIPLES,
                lenient=True,
            )
        )
    except (SyntaxError, ValueError):
        return legacy_definitions_digest(graph)
    dataset.canonicalize(ox.CanonicalizationAlgorithm.RDFC_1_0)
    lines = sorted(f"{q} ." for q in dataset)
    return RDFC_DIGEST + hashlib.sha256("\n".join(lines).encode()).hexdigest()


RDFC_DIGEST = "rdfc:sha256:"
"""How a digest of :func:`definitions_digest` begins; one without it is a legacy digest."""


def legacy_definitions_digest(graph: Graph) -> str:
    """The definitions digest traces recorded before :func:`definitions_digest`: of rdflib's
    canonical graph. Computed only to tell whether such a trace's definitions changed."""
    from rdflib.compare import to_canonical_graph

    lines = sorted(to_canonical_graph(graph).serialize(format="nt").splitlines())
    return "sha256:" + hashlib.sha256("\n".join(lines).encode()).hexdigest()
