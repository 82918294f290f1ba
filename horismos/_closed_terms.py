"""A term of RDF, RDFS, OWL or XSD that the vocabulary does not define.

These namespaces are closed: ``owl:DataTypeProperty``, ``rdfs:subclassOf`` or ``rdfs:range
xsd:strng`` parse, and say nothing any reader knows. The ontology then declares less than
its author wrote — a property of no kind, a class with no superclass, a range that is no
datatype — and every check that reads it (an argument's kind, an effect against the range,
a type test's subclasses) was silently skipped: validate said valid. Said once per term, at
the first statement that writes it, with the term meant when one is close. SHACL's (``sh:``)
and Horismos's own terms are judged where they are read."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import cast

from rdflib import OWL, RDF, RDFS, SH, XSD, Graph, URIRef
from rdflib.term import Node

from ._vocab import HORIS

__all__ = ["UnknownTerm", "unknown_terms"]

_VOCABULARIES: tuple[tuple[str, str, frozenset[str]], ...] = (
    (str(RDF), "RDF", frozenset(RDF.__annotations__) | {"dirLangString", "reifies"}),
    (str(RDFS), "RDF Schema", frozenset(RDFS.__annotations__)),
    (str(OWL), "OWL", frozenset(OWL.__annotations__)),
    (
        str(XSD),
        "XML Schema",
        frozenset(XSD.__annotations__) | {"anyType", "anySimpleType", "anyAtomicType"},
    ),
)
_MEMBER = re.compile(r"_[1-9][0-9]*")
"""``rdf:_1``, ``rdf:_2``…: a container's members, which no list of names holds."""

_JUDGED = frozenset({HORIS.type, SH.datatype})
"""Where an XSD name is judged already, as an error with a did-you-mean."""


@dataclass(frozen=True)
class UnknownTerm:
    statement: tuple[Node, URIRef, Node]
    term: URIRef
    vocabulary: str
    meant: URIRef | None


def unknown_terms(g: Graph) -> Iterator[UnknownTerm]:
    """Each term of a closed namespace ``g`` writes that its vocabulary does not define, once,
    at the first statement (in a stable order) that writes it."""
    seen: set[URIRef] = set()
    for s, p, o in sorted(g, key=lambda t: tuple(str(x) for x in t)):
        for term in (p, o):
            if not isinstance(term, URIRef) or term in seen or (term is o and p in _JUDGED):
                continue
            found = _vocabulary(term)
            if found is None:
                continue
            ns, name, known = found
            local = str(term)[len(ns) :]
            if local in known or _MEMBER.fullmatch(local):
                continue
            seen.add(term)
            close = difflib.get_close_matches(local, sorted(known), n=1, cutoff=0.7)
            meant = URIRef(ns + close[0]) if close else None
            yield UnknownTerm((s, cast(URIRef, p), o), term, name, meant)


def _vocabulary(term: URIRef) -> tuple[str, str, frozenset[str]] | None:
    text = str(term)
    return next((v for v in _VOCABULARIES if text.startswith(v[0])), None)
