"""What Oxigraph, the query engine a run evaluates patterns with, refuses in a query rdflib parses.

Why: ``validate`` parses each pattern with rdflib, whose SPARQL is more lenient than
Oxigraph's: a call of a function neither engine has (a cast typo ``xsd:decmal(?v)``, a
custom ``:foo(?q)``) and a ``BIND`` of a variable its group has already bound both load, and
the first ``run`` died with Oxigraph's ``RuntimeError``/``SyntaxError`` as a traceback, or,
on the in-memory store, the FILTER was silently false and the instance went the wrong way.
A constant regular expression Oxigraph cannot read (``regex(?ref, "^Q-(URGENT")``) is no
refusal: the call is an error for every value, so the FILTER is never true and the step was
blocked "for ?ref = "Q-URGENT-1"", blaming the data. It is held here to Oxigraph's own regex
engine too (:func:`bad_regexes`). Each pattern's query is handed here to Oxigraph itself,
against an empty store (the function check is made when the query is planned, so no data is
needed): what it refuses is refused when the definitions load, with the author's line and a
fix. Cost: ~30 µs a pattern.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import pyoxigraph as ox
from rdflib import Literal as RDFLiteral

from ._preconditions import bound_by
from ._term_kinds import algebra_parts

__all__ = ["CASTS", "Refusal", "bad_regexes", "rebound", "refusal"]

_XSD = "http://www.w3.org/2001/XMLSchema#"

CASTS = tuple(
    _XSD + name
    for name in (
        "string",
        "boolean",
        "integer",
        "decimal",
        "float",
        "double",
        "dateTime",
        "date",
        "time",
        "duration",
        "dayTimeDuration",
        "yearMonthDuration",
        "gYear",
        "gYearMonth",
        "gMonth",
        "gMonthDay",
        "gDay",
    )
)
"""The XSD casts Oxigraph evaluates (``xsd:decimal(?v)``): the only functions named by IRI
that a pattern can call."""


@dataclass(frozen=True)
class Refusal:
    """Why Oxigraph refuses a query."""

    message: str
    """Oxigraph's own words."""
    function: str | None = None
    """The IRI of the function it does not have, when that is why."""
    syntax: bool = False
    """Refused by its parser (rather than when planned)."""

    @property
    def said(self) -> str:
        """Oxigraph's words, its character classes summarised: "expected one of ".", ":",
        ['-' | '0' ..= '9' | '\\u{00B7}' …" went on for five lines of Unicode ranges, which
        say only that a name's next character would have done."""
        classes = _CHAR_CLASS.sub(
            # a class of quoted characters is a name's; ``[_]``, none quoted, is any character
            lambda m: "\0" if m[0].startswith("[") and "'" in m[0] else m[0],
            " ".join(self.message.split()),
        )
        return re.sub(r"\0(?:, \0)*", "a character of a name", classes)


_CHAR_CLASS = re.compile(r'"(?:[^"\\]|\\.)*"' r"|\[(?:'(?:[^'\\]|\\.)*'|[^\]'])*\]")
"""A character class of Oxigraph's parser, ``['A' ..= 'Z' | 'a' ..= 'z' | …]``, or a token
it expects in quotes (``"["``), which is none."""


@cache
def _empty() -> ox.Store:
    """One empty in-memory store, kept: what a query is planned against."""
    return ox.Store()


def refusal(text: str, prefixes: Mapping[str, str]) -> Refusal | None:
    """What Oxigraph says of the query ``text`` (with ``prefixes``) when it is evaluated, or
    None when it evaluates it. Evaluated against one empty in-memory store, kept: a refused
    function is named when the query is planned, whatever the data."""
    used = {k: str(v) for k, v in prefixes.items() if f"{k}:" in text}
    try:
        result = _empty().query(text, prefixes=used, use_default_graph_as_union=True)
        if isinstance(result, ox.QuerySolutions):
            for _ in result:
                pass
    except SyntaxError as e:
        return Refusal(str(e), syntax=True)
    except (RuntimeError, ValueError) as e:
        said = str(e)
        start, end = said.find("<"), said.find(">")
        custom = "custom function" in said and 0 <= start < end
        return Refusal(said, function=said[start + 1 : end] if custom else None)
    return None


def rebound(algebra: Any) -> list[str]:
    """The variables a ``BIND(… AS ?v)`` of a parsed query (rdflib's algebra, ``EXISTS``
    patterns included) binds when its group has already bound them, in the order found:
    SPARQL forbids it, Oxigraph refuses the query, and rdflib does not say so."""
    from rdflib.plugins.sparql.algebra import translateGroupGraphPattern
    from rdflib.plugins.sparql.parserutils import CompValue

    found: list[str] = []
    stack: list[Any] = [algebra]
    while stack:
        x = stack.pop()
        if isinstance(x, CompValue):
            if x.name == "GroupGraphPatternSub":  # an EXISTS's pattern, as parsed
                stack.append(translateGroupGraphPattern(x))
                continue
            inner = dict.get(x, "p")  # CompValue.get answers a missing key with its name
            expr = dict.get(x, "expr")
            made = str(expr).startswith("__agg_")  # a grouped SELECT's projection, not a BIND
            if x.name == "Extend" and isinstance(inner, CompValue) and not made:
                certain, maybe = bound_by(inner)
                var = str(dict.get(x, "var"))
                if var in certain | maybe and var not in found:
                    found.append(var)
        if isinstance(x, Mapping):
            stack.extend(v for k, v in x.items() if not str(k).startswith("_"))
        elif isinstance(x, list | tuple):
            stack.extend(x)
    return found


_REGEX_TEST = 'SELECT ?r ?p ?f WHERE { BIND(regex("", ?p, ?f) AS ?r) }'
"""``regex`` of a pattern and flags given as values: unbound when Oxigraph cannot read them."""


def bad_regexes(algebra: Any) -> Iterator[tuple[str, str, str]]:
    """Each constant regular expression of a ``regex``/``replace`` call in a parsed query
    (rdflib's algebra, ``EXISTS`` patterns included) that Oxigraph's regex engine refuses,
    as (pattern, flags, why), each once. The store is the judge, not Python's ``re``: the
    run evaluates it there, and the two read different dialects (``\\p{L}``). ``why`` is
    Python's complaint when it has one (``missing ), unterminated subpattern``)."""
    from rdflib.plugins.sparql.parserutils import CompValue

    seen: set[tuple[str, str]] = set()
    for x in algebra_parts(algebra):
        if isinstance(x, CompValue) and x.name in ("Builtin_REGEX", "Builtin_REPLACE"):
            pattern, flags = dict.get(x, "pattern"), dict.get(x, "flags")
            if isinstance(pattern, RDFLiteral) and isinstance(flags, RDFLiteral | None):
                key = (str(pattern), "" if flags is None else str(flags))
                if key not in seen:
                    seen.add(key)
                    why = _refused_regex(*key)
                    if why is not None:
                        yield (*key, why)


def _refused_regex(pattern: str, flags: str) -> str | None:
    """Why Oxigraph cannot read ``pattern`` with ``flags``; None when it can."""
    subs: dict[ox.Variable, ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple] = {
        ox.Variable("p"): ox.Literal(pattern),
        ox.Variable("f"): ox.Literal(flags),
    }
    rows = _empty().query(_REGEX_TEST, substitutions=subs)
    if not isinstance(rows, ox.QuerySolutions) or any(row[0] is not None for row in rows):
        return None
    if set(flags) - set("imsxq"):
        return f'"{flags}" is not a flag of regex (i, m, s, x, q)'
    try:
        re.compile(pattern)
    except re.error as e:
        return str(e)
    return "the store's regex engine cannot read it"
