"""A commit on an on-disk Oxigraph store as the one SPARQL Update that lands it.

Why a module: on disk a commit that removes quads removes and adds them in one transaction,
one SPARQL Update, so its quads become update text, written here. Most commits are ground
data: every term is written as pyoxigraph escapes it (twice as fast as the alternative). A
commit with a blank node, or an IRI only rdflib accepts (which Oxigraph's parser would
refuse), names every term through a variable a custom function binds: no value is written
into the text, and a blank node keeps its identity.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pyoxigraph as ox
from rdflib import BNode, URIRef
from rdflib.term import Node

from .base import Quad
from .ox_terms import LENIENT, TERM_FN, Encoded, to_ox

__all__ = ["quad_block", "write_commit"]


def write_commit(store: ox.Store, remove: list[Encoded], add: list[Encoded]) -> None:
    """One update that removes and adds, atomically."""
    quads = [e[0] for e in remove] + [e[0] for e in add]
    if not any(isinstance(t, BNode) or (LENIENT and str(t) in LENIENT) for q in quads for t in q):
        # one update of ground data, every term escaped by pyoxigraph (2x faster)
        store.update(
            f"DELETE {{\n{_ox_block(e[1] for e in remove)}\n}}\n"
            f"INSERT {{\n{_ox_block(e[1] for e in add)}\n}}\n"
            "WHERE {}"
        )
        return
    # one update whose terms are variables bound by a custom function: a blank node
    # keeps its identity, and an IRI only rdflib accepts needs no text at all
    terms: dict[Node, str] = {}

    def term(t: Node) -> str:
        return terms.setdefault(t, f"?t{len(terms)}")

    text = (
        f"DELETE {{\n{quad_block([e[0] for e in remove], term)}\n}}\n"
        f"INSERT {{\n{quad_block([e[0] for e in add], term)}\n}}\nWHERE {{\n"
    )
    values = [to_ox(t) for t in terms]
    text += "\n".join(
        f"BIND(<{TERM_FN.value}>({i}) AS {var})" for i, var in enumerate(terms.values())
    )
    store.update(text + "\n}", custom_functions={TERM_FN: lambda i: values[int(i.value)]})


def quad_block(quads: Iterable[Quad], term: Callable[[Node], str]) -> str:
    """Quads as a SPARQL quad pattern (``GRAPH`` blocks for named graphs), terms by ``term``."""
    by_graph: dict[URIRef | None, list[str]] = {}
    for s, p, o, g in quads:
        by_graph.setdefault(g, []).append(f"{term(s)} {term(p)} {term(o)} .")
    return "\n".join(
        "\n".join(lines) if g is None else f"GRAPH {term(g)} {{\n" + "\n".join(lines) + "\n}"
        for g, lines in by_graph.items()
    )


def _ox_block(quads: Iterable[ox.Quad]) -> str:
    """pyoxigraph quads as a SPARQL quad pattern, terms as pyoxigraph writes them (escaped)."""
    by_graph: dict[str, list[str]] = {}
    for q in quads:
        g = q.graph_name
        by_graph.setdefault("" if type(g) is ox.DefaultGraph else str(g), []).append(
            f"{q.subject} {q.predicate} {q.object} ."
        )
    return "\n".join(
        "\n".join(lines) if not g else f"GRAPH {g} {{\n" + "\n".join(lines) + "\n}"
        for g, lines in by_graph.items()
    )
