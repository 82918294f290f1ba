"""A text a pattern matches a property with, written with another language tag (or none)
than the world writes the same text: ``?d rdfs:label "Finance"`` where the world says
``:Finance rdfs:label "Finance"@en``.

Why: a literal with a language tag equals no literal without one, nor one with another tag,
and SPARQL matches a triple's literal by equality. The decision rule testing the label never
held, every finance hire took ``horis:otherwise`` and got the base access bundle, and the
definitions and the world each validated: ``rdfs:label`` has no ``rdfs:range`` for the world
check of a value's kind to hold it to.

The texts are read once from the definitions (each pattern's triples with a literal object of
a named property: a handful); the world is judged as it streams past ``validate --world``
(:mod:`._world_terms`), a set lookup a quad, keeping the first value a property's texts meet
under another tag.
"""

from __future__ import annotations

from collections.abc import Iterable

from rdflib import RDF, XSD, Literal, URIRef
from rdflib.term import Node

from ._compared_kinds import pattern_selects
from ._model import Step
from ._preconditions import group_triples

__all__ = ["matched_texts", "tag_of"]

_TEXT = (None, XSD.string, RDF.langString)


def tag_of(language: str | None) -> str:
    """A language tag as written after ``@``, lower-cased (tags compare so); ``""`` for none."""
    return (language or "").lower()


def matched_texts(steps: Iterable[Step]) -> dict[str, dict[str, tuple[str, Node]]]:
    """Each property IRI a pattern of ``steps`` (a ``horis:requires``, a wait's
    ``horis:until``, a decision's rules) matches with a constant text, and for each text its
    tag as written (:func:`tag_of`) and the first step that writes it."""
    found: dict[str, dict[str, tuple[str, Node]]] = {}
    for step, select in pattern_selects(steps):
        for _, prop, value in group_triples(select.algebra):
            if isinstance(prop, URIRef) and isinstance(value, Literal) and value.datatype in _TEXT:
                texts = found.setdefault(str(prop), {})
                texts.setdefault(str(value), (tag_of(value.language), step.iri))
    return found
