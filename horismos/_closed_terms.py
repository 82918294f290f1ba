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

__all__ = ["UnknownTerm", "undefined", "unknown_terms"]

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
    """A closed namespace's term its vocabulary does not define, at the statement that writes it;
    ``meant`` is the close term the hint names, when there is one. The loader words the warning."""

    statement: tuple[Node, URIRef, Node]
    term: URIRef
    vocabulary: str
    meant: URIRef | None


def unknown_terms(g: Graph) -> Iterator[UnknownTerm]:
    """Each term of a closed namespace ``g`` writes that its vocabulary does not define, once,
    at the first statement (in a stable order) that writes it. One pass over ``g``, keeping
    each such term's first statement: sorting every statement to find them cost more than
    the rest of the check, and grew with the definitions, not with the slips."""
    first: dict[URIRef, tuple[tuple[str, str, str], int, tuple[Node, URIRef, Node]]] = {}
    for s, p, o in g:
        for place, term in enumerate((p, o)):
            if not isinstance(term, URIRef) or (term is o and p in _JUDGED):
                continue
            found = _vocabulary_of(term)
            if found is None:
                continue
            ns, _, known = found
            local = str(term)[len(ns) :]
            if local in known or _MEMBER.fullmatch(local):
                continue
            key = (str(s), str(p), str(o))
            if term not in first or (key, place) < first[term][:2]:
                first[term] = (key, place, (s, cast(URIRef, p), o))
    for term, (_, _, statement) in sorted(first.items(), key=lambda kv: kv[1][:2]):
        name, meant = cast("tuple[str, URIRef | None]", undefined(term))
        yield UnknownTerm(statement, term, name, meant)


def undefined(term: URIRef) -> tuple[str, URIRef | None] | None:
    """The name of the closed vocabulary ``term`` is of, when it does not define it, and the
    close term of it meant (None when none is close); None for a term it defines, or of
    another namespace."""
    found = _vocabulary_of(term)
    if found is None:
        return None
    ns, name, known = found
    local = str(term)[len(ns) :]
    if local in known or _MEMBER.fullmatch(local):
        return None
    close = difflib.get_close_matches(local, sorted(known), n=1, cutoff=0.7)
    return name, (URIRef(ns + close[0]) if close else None)


def _vocabulary_of(term: URIRef) -> tuple[str, str, frozenset[str]] | None:
    """The closed vocabulary ``term`` is of: its namespace, its name and the local names it
    defines; None for a term of any other namespace."""
    text = str(term)
    return next((v for v in _VOCABULARIES if text.startswith(v[0])), None)
