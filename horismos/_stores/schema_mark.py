"""Which writes may change the type rules a world holds, so what is compiled from them can be
kept until one lands.

With ``entailment="owl-rl"`` a run reads the world's schema triples (``rdfs:domain``,
restrictions, symmetric properties; the ``rdfs:subClassOf`` and class expressions above the
classes it meets: :func:`horismos._entailment.schema_of`) to derive the types of the nodes it
touches. A knowledge graph's taxonomy holds hundreds of
thousands of them, and a step writes none: read on every event, they made a single-focus run
cost what the world's schema holds (1.1-1.6 s a run beside 100,000 ``rdfs:subClassOf``
triples). A store in this process counts the writes that may change them (a *mark*,
:meth:`~horismos._stores.base.Store.schema_mark`), and the compiled schema is kept while the
mark stays the same. A store other processes write (``sparql:``) cannot know, and says
``None``: what a run needs of its schema is read every run.
"""

from __future__ import annotations

from collections.abc import Iterable

from rdflib import OWL, RDF, RDFS
from rdflib.term import Node

__all__ = ["RULE_PREDICATES", "SCHEMA_PREDICATES", "touches_schema"]

RULE_PREDICATES = (
    RDFS.subClassOf,
    OWL.equivalentClass,
    RDFS.subPropertyOf,
    OWL.equivalentProperty,
    RDFS.domain,
    RDFS.range,
    OWL.inverseOf,
    OWL.onProperty,
    OWL.hasValue,
    OWL.someValuesFrom,
    OWL.allValuesFrom,
    OWL.intersectionOf,
    OWL.unionOf,
)
"""The predicates the world's type rules are written with (:mod:`horismos._entailment`)."""

SCHEMA_PREDICATES = frozenset({*RULE_PREDICATES, RDF.first, RDF.rest})
"""What a write of moves a store's schema mark: the rules' predicates and the members of a
class expression's list (and ``rdf:type owl:SymmetricProperty``)."""

_TYPE = frozenset({RDF.type})
_SYMMETRIC = frozenset({OWL.SymmetricProperty})


def touches_schema(quads: Iterable[tuple[Node, Node, Node, Node | None]]) -> bool:
    """Whether writing (or removing) ``quads`` may change the world's type rules: a few set
    look-ups a quad (rdflib hashes an IRI as its string, in C)."""
    for q in quads:
        p = q[1]
        if p in SCHEMA_PREDICATES or (p in _TYPE and q[2] in _SYMMETRIC):
            return True
    return False
