"""Bound IRIs written into a query's patterns, so Oxigraph plans the query from them.

A query's bound variables reach Oxigraph as ``substitutions`` (embedded) or as a ``VALUES``
row (``sparql:``). Either way its planner orders the joins without them: a precondition that
starts ``?o rdfs:label ?l . ?this :owner ?o`` walked every label in the world before joining on
``?this`` (36 ms in a 400,000-triple world against 0.09 ms with the IRI in the text), and a
``VALUES`` row helps only in the group it stands in, not inside a ``GRAPH ?g { … }`` (the open
wait of an instance: 20 ms over 20,000 finished instances against 0.2 ms). Written into the
patterns, the IRI is a constant the planner starts from, wherever it is.

Only IRIs are written, each by pyoxigraph (validated, so never more than one term); literals
and blank nodes stay bound the store's own way (a literal's stored form may differ from its
text; a blank node in a query is a variable). The variables stay bound that way too, so a
projected one still comes back. A query where writing an IRI would change what it says — a
subquery, or a bound variable after ``AS`` or in ``VALUES`` — is left as it is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import NamedTuple

from rdflib import URIRef
from rdflib.term import Node

__all__ = ["with_iris"]

# one token of SPARQL where it matters here: an IRI, a string, a comment, a variable, a word,
# a brace or parenthesis; anything else one character at a time
_IRI_TEXT = r"[^<>\"{}|^`\\\x00-\x20]*"  # what SPARQL allows between < and >
_TOKEN = re.compile(
    rf"(?P<iri><{_IRI_TEXT}>)"
    r'''|(?P<string>"""(?:[^"\\]|\\.|"(?!""))*"""|\'\'\'(?:[^'\\]|\\.|'(?!''))*\'\'\''''
    r"""|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')"""
    r"|(?P<comment>#[^\n]*)"
    r"|(?P<var>[?$][A-Za-z0-9_\u00b7\u00c0-\U000effff]+)"
    r"|(?P<word>[A-Za-z_][A-Za-z0-9_\-]*)"
    r"|(?P<other>[\s\S])",
)


_SAFE_IRI = re.compile(_IRI_TEXT)


class _Cut(NamedTuple):
    """A query cut where its patterns name variables."""

    pieces: tuple[tuple[str, str | None], ...]  # text, then a variable's token (or None: end)
    fixed: frozenset[str]  # named after ``AS`` or in ``VALUES``: never written as a constant
    outside: frozenset[str]  # named outside the patterns (projection, ORDER BY)


@lru_cache(maxsize=512)
def _cut(query: str) -> _Cut | None:
    """``query`` cut at the variables of its first group; None for one with a subquery."""
    out: list[tuple[str, str | None]] = []
    text: list[str] = []
    fixed: set[str] = set()
    outside: set[str] = set()
    depth, previous, naming = 0, "", False  # naming: between VALUES and its '{'
    for m in _TOKEN.finditer(query):
        token, kind = m.group(), m.lastgroup
        if kind == "var" and depth > 0:
            if previous == "AS" or naming:
                fixed.add(token[1:])
            out.append(("".join(text), token))
            text = []
        else:
            if kind == "var":
                outside.add(token[1:])
            text.append(token)
        if kind == "word":
            word = token.upper()
            if depth > 0 and word == "SELECT":
                return None  # a subquery projects its own variables
            naming = naming or word == "VALUES"
        elif token == "{":
            depth += 1
            naming = False
        elif token == "}":
            depth -= 1
        if kind != "comment" and not token.isspace():
            previous = token.upper()
    out.append(("".join(text), None))
    return _Cut(tuple(out), frozenset(fixed), frozenset(outside))


def with_iris(query: str, bindings: Mapping[str, Node]) -> tuple[str, frozenset[str]]:
    """``query`` with each variable its patterns name that is bound to an IRI written as that
    IRI, and the variables it no longer names at all (a ``SELECT *`` no longer projects them:
    Oxigraph refuses to substitute those). ``query`` itself when there is none to write, or
    when it cannot be done."""
    iris = {
        k: f" <{v}> "
        for k, v in bindings.items()
        if isinstance(v, URIRef) and _SAFE_IRI.fullmatch(v) is not None
    }
    cut = _cut(query) if iris else None
    if cut is None:
        return query, frozenset()
    for name in cut.fixed & iris.keys():
        del iris[name]
    if not iris or len(cut.pieces) == 1:
        return query, frozenset()
    written: list[str] = []
    for text, token in cut.pieces:
        written.append(text)
        if token is not None:  # spaced: never "<<" with a '<' before it
            written.append(iris.get(token[1:], token))
    return "".join(written), frozenset(iris.keys() - cut.outside)
