"""World data given from memory (RDF text and its format, or an rdflib graph) as the quads to
land in one commit: parsed as a file is, checked, and refused whole.

Why: :meth:`~horismos.World.load` reads files only, and :meth:`~horismos.World.commit` takes
the runtime's own ``Change``; a service receiving each event's facts as Turtle or JSON-LD
text, or building them as an rdflib graph, wrote them to a temporary file to land them. Text
is read by the parser files are read by (pyoxigraph), its blank nodes skolemised under its
content's hash (the same text twice adds nothing the second time), its syntax errors said at
the line to mend (:mod:`._world_syntax`); a graph is written as N-Quads and read the same way.

Unlike a file, which may be a world's own export (instances, waits, approvals and all), data
given from memory is an event's facts, often from outside: runtime state in it — a
``horis:`` term, a ``urn:horismos:`` node or graph — is refused, as it is in the facts that
answer a wait (:func:`~._waits.parse_facts`). Given beside the store's own, an instance or
an approval record written by hand would be obeyed (the approval fingerprint is public).
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

import pyoxigraph as ox
from rdflib import Dataset, Graph, Literal, URIRef
from rdflib.graph import ConjunctiveGraph
from rdflib.term import Node

from ._errors import AuthoringError, UsageError
from ._stores.base import OWN, Quad
from ._stores.ox_terms import from_ox, graph_name
from ._stores.skolem import GENID, skolemise_ox
from ._turtle_syntax import parser_reason
from ._vocab import NS
from ._world_syntax import text_syntax_problem

__all__ = ["data_quads", "runtime_term"]

DATA_FORMATS: dict[str, ox.RdfFormat] = {
    "turtle": ox.RdfFormat.TURTLE,
    "ttl": ox.RdfFormat.TURTLE,
    "nt": ox.RdfFormat.N_TRIPLES,
    "ntriples": ox.RdfFormat.N_TRIPLES,
    "nquads": ox.RdfFormat.N_QUADS,
    "nq": ox.RdfFormat.N_QUADS,
    "trig": ox.RdfFormat.TRIG,
    "n3": ox.RdfFormat.N3,
    "json-ld": ox.RdfFormat.JSON_LD,
    "jsonld": ox.RdfFormat.JSON_LD,
}
"""The formats ``World.load_data`` reads text in, by name: those of the files ``World.load``
reads, and JSON-LD (its remote ``@context`` documents are not fetched: refused)."""


def runtime_term(term: Node | None) -> bool:
    """Whether ``term`` is the runtime's own: a ``horis:`` IRI (or a literal typed by one), or
    a ``urn:horismos:`` node but a skolemised blank node's (``urn:horismos:genid:``, which
    world data refers to as any other node)."""
    if isinstance(term, Literal):
        return term.datatype is not None and str(term.datatype).startswith(NS)
    if not isinstance(term, URIRef):
        return False
    text = str(term)
    return text.startswith(NS) or (text.startswith(OWN) and not text.startswith(GENID))


def data_quads(
    data: str | bytes | Graph, format: str | None = None, base: str | None = None
) -> list[Quad]:
    """The quads of ``data``, blank nodes skolemised, to land in one commit: RDF text in
    ``format`` (by default Turtle; see :data:`DATA_FORMATS`), relative IRIs resolved against
    ``base``, or an rdflib graph (a ``Dataset``'s named graphs kept). Raises AuthoringError
    for text that does not parse (at its line), UsageError for a format not known or data
    holding runtime state; either before anything lands."""
    if isinstance(data, Graph):
        if format is not None:
            raise UsageError(
                f"format={format!r} is for RDF text; an rdflib graph is given as it is: "
                "leave format out"
            )
        text = data.serialize(
            format="nquads" if isinstance(data, (Dataset, ConjunctiveGraph)) else "nt",
            encoding="utf-8",
        )
        rdf_format, where = ox.RdfFormat.N_QUADS, None
    elif isinstance(data, (str, bytes)):
        text = data.encode("utf-8") if isinstance(data, str) else data
        rdf_format, where = _format(format), f"<data {format or 'turtle'}>"
    else:
        raise UsageError(
            f"world data is RDF text (str or bytes, with its format=) or an rdflib Graph, not "
            f"{type(data).__name__}: a file is loaded with world.load(PATH)"
        )
    key = hashlib.sha256(text).hexdigest()[:32]
    try:
        parsed = list(skolemise_ox(ox.parse(text, format=rdf_format, base_iri=base), key))
    except SyntaxError as e:
        if where is None:  # written by rdflib: a term it holds that the parser refuses
            raise UsageError(
                f"the graph holds a term no store can hold: {parser_reason(e)}; nothing was loaded"
            ) from None
        problem = text_syntax_problem(text, e, where)
        if base is None and "absolute IRI" in problem.message:  # `<a>`, read with no base
            problem = replace(
                problem, hint="write the IRI in full, or give base= to resolve it against"
            )
        raise AuthoringError([problem]) from None
    quads: list[Quad] = [
        (from_ox(q.subject), from_ox(q.predicate), from_ox(q.object), graph_name(q.graph_name))
        for q in parsed
    ]
    for quad in quads:
        if any(runtime_term(t) for t in quad):
            s, p, o, g = quad
            within = f" in graph {g.n3()}" if g is not None else ""
            raise UsageError(
                f"the data writes {s.n3()} {p.n3()} {o.n3()}{within}: runtime state (horis: "
                "terms, urn:horismos: nodes and graphs: instances, waits, approvals) is "
                "written by the runtime only; give facts about the domain (a world's own "
                "export is loaded from its file, world.load(PATH)). Nothing was loaded"
            )
    return quads


def _format(name: str | None) -> ox.RdfFormat:
    """The parser's format for ``name`` (None: Turtle); UsageError listing them for another."""
    if name is None:
        return ox.RdfFormat.TURTLE
    found = DATA_FORMATS.get(name.lower())
    if found is None:
        raise UsageError(
            f"format {name!r} is not one world data is read in: use "
            + ", ".join(sorted({"turtle", "nt", "nquads", "trig", "n3", "json-ld"}))
        )
    return found
