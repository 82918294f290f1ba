"""A ``GRAPH`` block in a pattern reads named graphs only, and loaded facts are in none.

Why: a pattern is asked of the world's default graph, which is already the union of every
graph. ``GRAPH ?g { ?this :acuity ?queue }`` matches only what is in a named graph: what
steps' effects landed (each transaction in a graph of its own), never what the world's
Turtle files hold, which load into the default graph. The step reading loaded data there
was blocked for every instance ("has no solution for ?this = :patient42"), and the
definitions validated. ``GRAPH <iri> { … }`` reads that one graph, which no step's effects
land in: only a TriG or N-Quads world file that names it gives it facts.

Left alone: a graph variable the pattern reads outside its block (``GRAPH ?g { … } ?g
prov:wasGeneratedBy ?activity``: which write said it, a question about provenance), and
Horismos' own graphs (``urn:horismos:…``), read on purpose.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from rdflib import URIRef, Variable
from rdflib.term import Node

from ._stores.base import OWN

__all__ = ["named_graph_reads"]

_GRAPH = ("Graph", "GraphGraphPattern")
"""A GRAPH block's algebra, and its parse inside an ``EXISTS`` (rdflib leaves those unlowered)."""


def named_graph_reads(algebra: Any) -> list[Node]:
    """The graph of each ``GRAPH`` block of ``algebra`` (a variable or an IRI) that only
    narrows what the pattern sees, first written first, each once."""
    blocks = list(_graphs(algebra))
    uses = Counter(v for v in _variables(algebra) if isinstance(v, Variable))
    inside = Counter(t for t in blocks if isinstance(t, Variable))
    found: list[Node] = []
    for term in blocks:
        if term in found:
            continue
        if isinstance(term, Variable) and uses[term] > inside[term]:
            continue  # read outside its block: which graph said it is the question
        if isinstance(term, URIRef) and str(term).startswith(OWN):
            continue
        found.append(term)
    return found


def _graphs(node: Any) -> Iterator[Node]:
    """The term of every ``GRAPH`` block under ``node``, in the order written."""
    for key, value in _children(node):
        if getattr(node, "name", None) in _GRAPH and key == "term":
            yield value
        else:
            yield from _graphs(value)


def _variables(node: Any) -> Iterator[Any]:
    """Every term ``node`` names (graph terms too), once per place it is written."""
    if isinstance(node, Variable):
        yield node
    for _, value in _children(node):
        yield from _variables(value)


def _children(node: Any) -> Iterator[tuple[str, Any]]:
    """The parts of an algebra node as written: not rdflib's bookkeeping (``_vars``, the
    projection ``PV``, which names every variable again)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if not key.startswith("_") and key != "PV":
                yield key, value
    elif isinstance(node, list | tuple):
        for value in node:
            yield "", value
