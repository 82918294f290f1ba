"""SPARQL text prepared as rdflib prepares it, in about half the time when it has no comment.

rdflib's grammar (pyparsing) skips ``# …`` comments by trying its comment rule before each of
the ~1,300 elements a parse tries, each try failing with an exception: about half of parsing
a precondition, and parsing was most of loading a project. A text without ``#`` holds no
comment, so a copy of the grammar without the rule reads it to the very same parse tree; a
text with ``#`` (a comment, an IRI's fragment) is read by rdflib's own grammar. The copy is
made once per process (a few milliseconds); rdflib's grammar, the whole process's, is only
streamlined first, as its own first parse does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from pyparsing import ParserElement
from rdflib.plugins.sparql import parser
from rdflib.plugins.sparql.algebra import translateQuery
from rdflib.plugins.sparql.sparql import Query

__all__ = ["prepare_query"]


def prepare_query(text: str, init_ns: Mapping[str, Any]) -> Query:
    """``rdflib.plugins.sparql.prepareQuery(text, initNs=init_ns)``: the same query, the same
    errors."""
    expanded = parser.expandUnicodeEscapes(text)  # as rdflib's parseQuery does, first
    grammar = parser.Query if "#" in expanded else _uncommented()
    query = translateQuery(grammar.parse_string(expanded, parse_all=True), None, init_ns)
    query._original_args = (text, init_ns, None)  # as prepareQuery records them
    return query


@cache
def _uncommented() -> ParserElement:
    """rdflib's query grammar, copied element by element, each copy without the comment
    rule: what it parses without a ``#``, it parses to the same tree as the original. Should a
    pyparsing build its elements so that they cannot be copied so, rdflib's own grammar: a
    slower load, never a project that no longer loads."""
    try:
        return _copied_without_comments()
    except Exception:
        return parser.Query


def _copied_without_comments() -> ParserElement:
    copies: dict[int, ParserElement] = {}

    def copied(e: ParserElement) -> ParserElement:
        if id(e) not in copies:
            clone = copies[id(e)] = object.__new__(type(e))
            clone.__dict__.update(vars(e))  # shallow: its lists are replaced below
            pending.append(e)
        return copies[id(e)]

    pending: list[ParserElement] = []
    parser.Query.streamline()  # as rdflib's first parse leaves it: not done again for the copy
    top = copied(parser.Query)
    while pending:
        original = pending.pop()
        clone = copies[id(original)]
        for name, value in vars(original).items():
            if name == "ignoreExprs":
                clone.ignoreExprs = []
            elif isinstance(value, ParserElement):
                setattr(clone, name, copied(value))
            elif isinstance(value, list):  # an And's, a MatchFirst's elements
                setattr(clone, name, [_part(v, copied) for v in value])
    return top


def _part(value: Any, copied: Callable[[ParserElement], ParserElement]) -> Any:
    """An item of an element's list: its copy when it is an element."""
    return copied(value) if isinstance(value, ParserElement) else value
