"""A change's quads as N-Triples text, each term converted once, for a ``sparql:`` commit.

A commit on ``sparql:URL`` writes each quad twice: as text in the SPARQL Update (the template
the server parses) and as the N-Quads line its digest delta hashes. Both were built from the
rdflib terms, each on its own (``nt`` for the update, ``nquad_line``'s ``n3()`` for the
delta), and the quads were deduplicated and compared as rdflib tuples, whose terms hash and
compare in Python (a ``Literal`` several calls deep) and whose ``isinstance`` checks go through
``ABCMeta``: ~40% of a step's client CPU. Here a quad becomes one tuple of ``str`` once — its
four terms as the update writes them and its line as the digest hashes it — and everything
after (deduplicating, the delta, the update's text, the guard) works on those strings, which
hash and compare in C.

What it keeps: the texts are those the two conversions wrote. An IRI is ``<iri>`` in both
(validated by pyoxigraph as before, so an IRI a server refuses is still a ``UsageError``
here); a literal is written by pyoxigraph in the update and by rdflib's N-Triples quoting in
the line, as before; literals are first put in the form Oxigraph stores them (``canonical``),
so two quads are the same text exactly when the server stores them as one.
``tests/test_sparql_text.py`` holds this equal to the general conversions.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import NamedTuple

import pyoxigraph as ox
from rdflib import BNode, Literal, URIRef
from rdflib.term import Node

from .._errors import UsageError
from .base import RUNTIME, Quad, nt_text
from .ox_terms import canonical, to_ox

__all__ = ["Texted", "block", "has_blank", "nt", "texted"]

_RUNTIME = f"<{RUNTIME}"


class Texted(NamedTuple):
    """One quad as text: its terms as a SPARQL Update writes them (``g`` is ``""`` for the
    default graph) and its N-Quads line as the world's digest hashes it."""

    s: str
    p: str
    o: str
    g: str
    line: str

    @property
    def key(self) -> tuple[str, str, str, str]:
        """What makes two quads one stored quad."""
        return self.s, self.p, self.o, self.g

    @property
    def world(self) -> bool:
        """Not in a ``urn:horismos:runtime:`` graph (bookkeeping, outside the digest)."""
        return not self.g.startswith(_RUNTIME)


def has_blank(quads: Iterable[Quad]) -> bool:
    """Whether a term of ``quads`` is a blank node (exact types first: ``isinstance`` against
    rdflib's term classes goes through ``ABCMeta``)."""
    for q in quads:
        for t in q:
            if type(t) is not URIRef and type(t) is not Literal and isinstance(t, BNode):
                return True
    return False


def texted(quads: Iterable[Quad]) -> list[Texted]:
    """Each quad as text, its literal put in the form Oxigraph stores it first. A blank node
    is written as its label: refuse or skolemise them before."""
    quads = list(quads)
    literal = [
        i for i, q in enumerate(quads) if type(q[2]) is not URIRef and isinstance(q[2], Literal)
    ]
    if literal:
        for i, q in zip(literal, canonical([quads[i] for i in literal]), strict=True):
            quads[i] = q
    out = []
    for s, p, o, g in quads:
        st = _iri(str(s)) if type(s) is URIRef else nt(s)
        pt = _iri(str(p)) if type(p) is URIRef else nt(p)
        if type(o) is URIRef:
            ot = oline = _iri(str(o))
        else:
            ot = nt(o)
            oline = nt_text(o) if isinstance(o, Literal) else ot
        if g is None:
            out.append(Texted(st, pt, ot, "", f"{st} {pt} {oline} ."))
        else:
            gt = _iri(str(g)) if type(g) is URIRef else nt(g)
            out.append(Texted(st, pt, ot, gt, f"{st} {pt} {oline} {gt} ."))
    return out


def block(quads: Iterable[Texted]) -> str:
    """Quads as an update's template or a group pattern (``GRAPH`` blocks for named graphs),
    a subject's consecutive triples written once as ``s p o ; p o .``: the server parses
    each character of an update one at a time, and a step's quads repeat ~55-character
    subjects (its activity, its effect graph, the instance) a dozen times."""
    by_graph: dict[str, list[Texted]] = {}
    for q in quads:
        by_graph.setdefault(q.g, []).append(q)
    return "\n".join(
        _triples(qs) if not g else f"GRAPH {g} {{\n{_triples(qs)}\n}}" for g, qs in by_graph.items()
    )


def _triples(quads: list[Texted]) -> str:
    parts, subject = [], None
    for q in quads:
        if q.s == subject:
            parts.append(f" ;\n  {q.p} {q.o}")
        else:
            parts.append(f" .\n{q.s} {q.p} {q.o}" if subject is not None else f"{q.s} {q.p} {q.o}")
            subject = q.s
    return "".join(parts) + " ."


def nt(term: Node) -> str:
    """A term in N-Triples syntax (pyoxigraph escapes it); an IRI RFC 3987 refuses, which
    rdflib and the embedded stores keep, is refused here before a server refuses it."""
    if type(term) is URIRef or isinstance(term, URIRef):
        return _iri(str(term))
    return str(to_ox(term))


@lru_cache(maxsize=16_384)
def _iri(iri: str) -> str:
    """An IRI's N-Triples text, kept: a step's update and query name ~50 IRIs, most of them
    (predicates, graphs, the instance, its focus) again and again."""
    try:
        return str(ox.NamedNode(iri))
    except ValueError as e:
        raise UsageError(
            f"<{iri}> is not an IRI a SPARQL server accepts ({e}); "
            "percent-encode the offending character"
        ) from None
