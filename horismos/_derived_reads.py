"""Patterns reading a property only entailment would give: none is ever derived for them.

A pattern (``horis:requires``, a rule, ``horis:until``, a candidates query) is matched
against the world as it is, under either entailment (``docs/entailment.md``): ``rdfs`` and
``owl-rl`` decide what a node's *types* are, never which statements a pattern sees. So a
property the ontology relates to another (``:holds owl:inverseOf :stockedAt``,
``:stockedAt rdfs:subPropertyOf :locatedAt``, ``owl:equivalentProperty``), read in a pattern
where no tool writes it and no file states it, is seen only where the world states it
itself: ``?depot :holds ?this`` blocked every order whose world said ``:o1 :stockedAt :d1``,
after the steps before had acted. The property path reading both is what to write instead
(``?depot :holds|^:stockedAt ?this``).

This module finds, for one property, the properties whose statements an author most likely
meant the pattern to see; the loader decides whether the property is written or stated."""

from __future__ import annotations

from collections.abc import Callable

from rdflib import OWL, RDFS, Graph, URIRef

__all__ = ["DerivedFrom", "derived_from", "path_reading_both"]

DerivedFrom = tuple[URIRef, str]
"""A property related to the one read, and how: ``"inverse"``, ``"sub"`` (a subproperty of
it) or ``"equivalent"``."""


def derived_from(g: Graph, prop: URIRef) -> list[DerivedFrom]:
    """The properties whose statements entailment would turn into statements of ``prop``:
    its inverses (either way written), its direct subproperties and its equivalents, in
    the order of their IRIs. A pattern never sees those derived statements."""
    found: dict[URIRef, str] = {}
    for link, kind in ((OWL.inverseOf, "inverse"), (OWL.equivalentProperty, "equivalent")):
        for other in [*g.objects(prop, link), *g.subjects(link, prop)]:
            if isinstance(other, URIRef) and other != prop:
                found.setdefault(other, kind)
    for sub in g.subjects(RDFS.subPropertyOf, prop):
        if isinstance(sub, URIRef) and sub != prop:
            found.setdefault(sub, "sub")
    return sorted(found.items(), key=lambda kv: str(kv[0]))


def path_reading_both(
    prop: URIRef, related: list[DerivedFrom], name: Callable[[URIRef], str]
) -> str:
    """The SPARQL property path reading ``prop`` and every related property as the world
    states it (an inverse read backwards): ``:holds|^:stockedAt``."""
    return "|".join(
        [name(prop), *(("^" if kind == "inverse" else "") + name(p) for p, kind in related)]
    )
