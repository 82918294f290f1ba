"""Namespaces found by the IRIs they begin, and prefixes by the text that writes them.

A project of N files binds about N namespaces (each file its own ``:``), and loading it names
about N nodes and reads about N patterns: trying every namespace for each node, or every
prefix for each pattern, made loading grow with N². Here an IRI is cut only at the lengths
some namespace has, each cut looked up in a dict, and a text is searched only at its colons.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["NamespaceIndex", "written_prefixes"]


class NamespaceIndex:
    """``(prefix, namespace)`` pairs, in the order given, looked up by the IRI a namespace
    begins: what a loop over every pair found, in as many dict lookups as the namespaces have
    distinct lengths (a few dozen however many files bind them)."""

    def __init__(self, pairs: Iterable[tuple[str, str]]) -> None:
        self._at: dict[str, list[tuple[int, str]]] = {}
        for order, (prefix, ns) in enumerate(pairs):
            self._at.setdefault(ns, []).append((order, prefix))
        self._lengths = sorted({len(ns) for ns in self._at})

    def matches(self, iri: str) -> list[tuple[str, str]]:
        """Each ``(prefix, namespace)`` whose namespace ``iri`` begins with (equal to it
        included), in the order the pairs were given."""
        found: list[tuple[int, str, str]] = []
        for length in self._lengths:
            if length > len(iri):
                break
            ns = iri[:length]
            for order, prefix in self._at.get(ns, ()):
                found.append((order, prefix, ns))
        found.sort()
        return [(prefix, ns) for _, prefix, ns in found]


def written_prefixes(text: str, longest: int) -> set[str]:
    """Every string of at most ``longest`` characters that ``text`` writes just before a
    colon: a prefix ``k`` (no longer than ``longest``) is among them exactly when
    ``f"{k}:" in text``, found without trying each prefix a project binds."""
    found: set[str] = set()
    colon = text.find(":")
    while colon != -1:
        found.update(text[start:colon] for start in range(max(0, colon - longest), colon + 1))
        colon = text.find(":", colon + 1)
    return found
