"""Terms a store can hold: a tool's result is held to them before the gate judges it.

A class-typed value is written as an IRI; text with a space or a ``>`` is no IRI, and no store
(nor N-Quads, nor a trace's snapshot) can hold it. A string with a lone surrogate — JSON allows
``"\\ud800"`` — is no Unicode text and cannot be written as UTF-8. Left to the commit, either
fails after the gate passed it and ends the whole run with the instance still running; found
here, it is a gate rejection of the one step whose tool returned it, which takes its
``horis:onError`` like any other.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from rdflib import Literal, URIRef
from rdflib.term import Node

from ._errors import ShaclMessage

__all__ = ["NOT_IN_IRI", "PREFIXED_LOCAL", "iri_problem", "is_iri", "split_iri", "unfit_terms"]

PREFIXED_LOCAL = re.compile(r"[A-Za-z_][\w.-]*(?<!\.)")
"""A local name written after a prefix as it reads back (no leading digit or dash, no
trailing dot): others are written in full."""

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
NOT_IN_IRI = re.compile(r'[\x00-\x20<>"{}|^`\\\x7f-\x9f\ufffe\uffff]')
"""A character no IRI holds (RFC 3987): controls (C0, DEL, C1), a space, the delimiters,
and the two noncharacters; Oxigraph refuses each."""
_SURROGATE = re.compile("[\ud800-\udfff]")


def iri_problem(text: str) -> str | None:
    """What keeps ``text`` from being an IRI (a character no IRI holds), or None."""
    bad = NOT_IN_IRI.search(text)
    return None if bad is None else f"it contains {bad.group()!r}"


def _problem(term: Node) -> str | None:
    text = str(term)
    if _SURROGATE.search(text):
        return (
            "holds a lone surrogate, which is not Unicode text (a broken \\uD800-\\uDFFF "
            "escape in the tool's JSON)"
        )
    if is_iri(term):
        bad = iri_problem(text)
        if bad is not None:
            return f"is not an IRI: {bad}"
        if not _SCHEME.match(text):
            return "is not an absolute IRI"
    elif (
        isinstance(term, Literal)
        and term.datatype is not None
        and _SURROGATE.search(str(term.datatype))
    ):
        return "has a datatype that is not Unicode text"
    return None


def split_iri(iri: str) -> tuple[str, str]:
    """An IRI's namespace (up to its last ``#`` or ``/``, where a prefix would end) and its
    local name: ``("http://example.org/ehr#", "Patient")``. A modeler's prefixes end there,
    so the names a message, a page or a listing writes are cut there too."""
    cut = max(iri.rfind("#"), iri.rfind("/")) + 1
    return iri[:cut], iri[cut:]


def is_iri(term: object) -> bool:
    """Whether ``term`` is an IRI, told by its type first: rdflib's terms are ABCs, and a
    miss of ``isinstance`` on one is ~0.5 µs, asked of every value of every step."""
    kind = type(term)
    return kind is URIRef or (kind is not Literal and isinstance(term, URIRef))


@lru_cache(maxsize=1024)
def _predicate_problem(term: Node) -> str | None:
    """:func:`_problem` of a predicate, kept: a tool's results use its few properties on
    every step (values are fresh each time, and are asked about each time)."""
    return _problem(term)


def unfit_terms(triples: Iterable[tuple[Node, Node, Node]]) -> list[ShaclMessage]:
    """A message for every term in ``triples`` that no store can hold; empty when all fit."""
    messages = []
    for s, p, o in triples:
        for term, why in ((p, _predicate_problem(p)), (o, _problem(o))):
            if why is not None:
                shown = str(term).encode("ascii", "backslashreplace").decode("ascii")
                messages.append(
                    ShaclMessage(
                        str(s),
                        str(p).encode("ascii", "backslashreplace").decode("ascii"),
                        f"the value {shown!r} {why}",
                        value=shown,
                    )
                )
    return messages
