"""SPARQL text prepared as rdflib prepares it, in about half the time when it has no comment.

rdflib's grammar (pyparsing) skips ``# …`` comments by trying its comment rule before each of
the ~1,300 elements a parse tries, each try failing with an exception: about half of parsing
a precondition, and parsing was most of loading a project. A text without ``#`` holds no
comment, so a copy of the grammar without the rule reads it to the very same parse tree; a
text with ``#`` (a comment, an IRI's fragment) is read by rdflib's own grammar. The copy is
made once per process (a few milliseconds); rdflib's grammar, the whole process's, is only
streamlined first, as its own first parse does.

rdflib's SPARQL package (its grammar, pyparsing, the algebra: ~80 ms) is imported by the first
parse, not by ``import horismos``: a command that reads no query never pays for it.

One parse at a time in a process: pyparsing's grammar objects are shared and set themselves
up on their first parse, so threads parsing at once (catalog calls from a thread pool) failed
with a ``TypeError`` or a ``ParseException`` on a valid query. A parse holds the GIL
throughout, so the lock takes nothing from threads that were not already waiting.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyparsing import ParserElement
    from rdflib.plugins.sparql.sparql import Query

__all__ = ["prepare_query"]


def prepare_query(text: str, init_ns: Mapping[str, Any]) -> Query:
    """``rdflib.plugins.sparql.prepareQuery(text, initNs=init_ns)``: the same query, the same
    errors."""
    from rdflib.plugins.sparql import parser
    from rdflib.plugins.sparql.algebra import translateQuery

    with _ONE_AT_A_TIME:
        expanded = parser.expandUnicodeEscapes(text)  # as rdflib's parseQuery does, first
        grammar = parser.Query if "#" in expanded else _uncommented()
        query = translateQuery(grammar.parse_string(expanded, parse_all=True), None, init_ns)
    query._original_args = (text, init_ns, None)  # as prepareQuery records them
    return query


_ONE_AT_A_TIME = threading.RLock()  # reentrant: _uncommented runs inside it


@cache
def _uncommented() -> ParserElement:
    """rdflib's query grammar, copied element by element, each copy without the comment
    rule: what it parses without a ``#``, it parses to the same tree as the original. Should a
    pyparsing build its elements so that they cannot be copied so, rdflib's own grammar: a
    slower load, never a project that no longer loads."""
    from rdflib.plugins.sparql import parser

    try:
        return _copied_without_comments()
    except Exception:
        return parser.Query


def _copied_without_comments() -> ParserElement:
    from pyparsing import ParserElement
    from rdflib.plugins.sparql import parser

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
                setattr(
                    clone, name, [copied(v) if isinstance(v, ParserElement) else v for v in value]
                )
    return top
