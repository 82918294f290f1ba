"""An ontology's link to a class or property of a near name that nothing declares: a typo.

Why: ``:Patient rdfs:subClassOf :Persn`` loaded and validated, and what the files say of
``:Person`` (a property's domain, a shape targeting it, an argument typed by it) never
reached a patient: a tool taking a ``:Person`` refused every patient, with no word at load.
``:onDuty rdfs:domain :Nurs``, ``rdfs:range :AcuityLevl``, ``rdfs:subPropertyOf :queuedAtt``
the same. Many ontologies name a superclass or a range they never declare, so only a term
that is said nothing of (no statement about it, no node of it, named by no other statement)
while a declared term of a near name exists is taken for a typo.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from rdflib import RDF, RDFS, Graph, URIRef
from rdflib.term import Node

__all__ = ["LINKS", "dangling_links"]

LINKS = {
    RDFS.subClassOf: "class",
    RDFS.domain: "class",
    RDFS.range: "class",
    RDFS.subPropertyOf: "property",
}
"""The links followed, and what each names."""


def dangling_links(
    g: Graph, standard: Callable[[URIRef], bool]
) -> Iterator[tuple[Node, URIRef, URIRef]]:
    """Each ``(subject, link, term)`` of ``g`` whose term is said nothing of: not described,
    no node of it, named by no statement but links; ``standard`` says which terms have
    checks of their own (XSD, RDF, OWL, ``horis:``)."""
    for link in LINKS:
        for s, term in sorted(g.subject_objects(link), key=str):
            if not isinstance(term, URIRef) or standard(term):
                continue
            if (term, None, None) in g or (None, RDF.type, term) in g:
                continue
            if any(p not in LINKS for _, p in g.subject_predicates(term)):
                continue
            yield s, link, term
