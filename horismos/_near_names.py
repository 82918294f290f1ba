"""Did-you-mean: the declared term, variable or individual nearest a misspelt one.

One measure of nearness for every hint the loader, the world check and the contract give, so
they suggest the same thing for the same slip."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from rdflib import URIRef
from rdflib.term import Node

from ._terms import split_iri

__all__ = ["closest_term", "near_individual", "nearest_variable", "slip_distance"]


def nearest_variable(var: str, candidates: list[str]) -> str | None:
    """The variable ``?var`` was most likely meant to be: the closest in spelling, else one
    that begins the other (``?v`` for ``?value``, ``?on`` for ``?onduty``)."""
    cased = [c for c in candidates if c.lower() == var.lower()]  # ?R for ?r: another name
    if cased:
        return cased[0]
    close = difflib.get_close_matches(var, candidates, n=1)
    if close:
        return close[0]
    prefixed = [c for c in candidates if var.startswith(c) or c.startswith(var)]
    return max(prefixed, key=len) if prefixed else None


def slip_distance(a: str, b: str) -> int:
    """The edits (insert, delete, replace, swap two neighbours) that turn ``a`` into ``b``,
    a change of case counting as none: ``?This`` is another variable, written as a slip."""
    a, b = a.lower(), b.lower()
    d = [[i + j if not i * j else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(
                d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])
            )
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


def closest_term(term: URIRef, candidates: Iterable[Node], cutoff: float = 0.6) -> URIRef | None:
    """The candidate in ``term``'s namespace whose local name is closest to ``term``'s (what
    a misspelling meant: ``:acuity`` for ``:acuty``), or None. ``cutoff``: how alike, from 0
    to 1 (:func:`difflib.get_close_matches`)."""
    ns, local = split_iri(term)
    near = {
        str(k)[len(ns) :]: k
        for k in candidates
        if isinstance(k, URIRef) and str(k).startswith(ns) and str(k)[len(ns) :]
    }
    close = difflib.get_close_matches(local, sorted(near), n=1, cutoff=cutoff)
    return near[close[0]] if close else None


def near_individual(node: URIRef, declared: Iterable[URIRef]) -> URIRef | None:
    """The one of ``declared`` that ``node`` most likely misspells: the same name in another
    case (``:Major`` for ``:major``), or a close one (``:majr``) that differs in more than its
    digits — ``:ward3`` beside a declared ``:ward2`` is another ward the world may hold."""
    ns, local = split_iri(node)
    same_ns = [d for d in declared if split_iri(d)[0] == ns]
    cased = [d for d in same_ns if split_iri(d)[1].lower() == local.lower()]
    if cased:
        return min(cased, key=str)
    close = closest_term(node, same_ns, cutoff=0.8)
    if close is None or re.sub(r"\d", "", split_iri(close)[1]) == re.sub(r"\d", "", local):
        return None
    return close
