"""A bare word in a pattern that does not parse: ``FILTER (?queue = urgent)``.

Why apart: the parser says only where it gave up ("unexpected 'FILTER'", at the start of
the group it could not read), which points at the FILTER and not at the word, and its hint
("write triple patterns and FILTERs as inside WHERE { … }") does not say what is wrong. A
word with no ``?``, no prefix, no quotes and no brackets is no SPARQL term: the modeler
meant a node (``:urgent``) or a string (``"urgent"``). The text is read with its strings,
IRIs and comments blanked out, so a word inside them is never taken for a bare one, and
only up to a quote left open.

Two bare words are slips of SPARQL's own: a keyword misspelt (``FILTER NOT EXIST { … }``,
which was told to write ``:EXIST``) and a boolean written in capitals (``:onDuty True``,
which rdflib reads and Oxigraph, the run's store, refuses with a page of character ranges).
A number compared with a decimal comma (``?rate >= 0,25``) is said here too: the parser gave
up at the FILTER, and the comma was not named.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ._near_names import slip_distance

__all__ = [
    "BareWord",
    "CommaNumber",
    "bare_word",
    "decimal_comma",
    "meant_keyword",
    "miscased_boolean",
]

_HIDDEN = re.compile(
    r'"""(?:[^"\\]|\\.|"(?!""))*"""'
    r"|'''(?:[^'\\]|\\.|'(?!''))*'''"
    r'|"(?:[^"\\\n]|\\.)*"'
    r"|'(?:[^'\\\n]|\\.)*'"
    r"|<[^<>\"{}|^`\\\s]*>"
    r"|#[^\n]*"
)
"""What a word inside is no term of the pattern's: strings, IRIs and comments."""

_WORD = re.compile(r"(?<![\w?$:@^.\-])([A-Za-z_][\w\-]*)(?![\w:(\-])")
"""A name not after ``?``/``$`` (a variable), ``:`` (a prefixed name's local part), ``@`` (a
language tag) or ``^^``, and not before ``:`` (a prefix) or ``(`` (a function call)."""

_KEYWORDS = frozenset(
    {
        *("a", "as", "asc", "base", "bind", "by", "construct", "describe", "desc"),
        *("distinct", "exists", "false", "filter", "from", "graph", "group", "having"),
        *("in", "limit", "minus", "named", "not", "offset", "optional", "order", "prefix"),
        *("reduced", "select", "separator", "service", "silent", "true", "undef", "union"),
        *("values", "where"),
    }
)
"""The words SPARQL itself writes bare (in any case)."""

_GROUP_KEYWORDS = ("BIND", "EXISTS", "FILTER", "GRAPH", "MINUS", "OPTIONAL", "UNDEF", "UNION")
"""The keywords written bare inside a group graph pattern, long enough that one slip away
from one of them is no word of the modeler's own (not ``IN`` nor ``AS``)."""

_COMMA_NUMBER = re.compile(
    r"(?:(?:[<>]=?|!?=)\s*([+-]?[0-9]+),([0-9]+)(?![\w.,])"
    r"|(?<![\w.,?$])([+-]?[0-9]+),([0-9]+)(?=\s*(?:[<>]=?|!?=)))"
)
"""A number written with a decimal comma where a comparison takes it, ``?rate >= 0,25``
(either way round): in a function's arguments, ``IN (1,2)``, a comma is SPARQL's own."""

_BOOLEAN = re.compile(r"(?<![\w?$:@^.\-])(true|false)(?![\w:(\-])", re.IGNORECASE)
"""``true`` or ``false`` as a term, in any case."""


class BareWord(NamedTuple):
    """A bare word of a pattern, where it is, and the word before it."""

    word: str
    row: int
    """The line of the pattern it is on, 1 for the first."""
    before: str
    """The word written just before it (``NOT`` for ``NOT EXIST``), or ""."""
    after: str = ""
    """The character written just after it (``{`` for ``OPTINAL {``), or ""."""


def _hidden(text: str) -> str:
    """``text`` with its strings, IRIs and comments blanked (newlines kept), and cut at a
    quote left open: past it, what is a word and what is text of the string cannot be told."""
    hidden = _HIDDEN.sub(lambda m: re.sub(r"[^\n]", " ", m[0]), text)
    return re.split(r"[\"']", hidden, maxsplit=1)[0]


def bare_word(text: str) -> BareWord | None:
    """The first bare word of ``text`` (a pattern) that is no SPARQL keyword; None when
    there is none."""
    hidden = _hidden(text)
    for m in _WORD.finditer(hidden):
        if m[1].lower() not in _KEYWORDS:
            before = re.search(r"(\w+)\s*$", hidden[: m.start()])
            after = hidden[m.end() :].lstrip()[:1]
            row = hidden[: m.start()].count("\n") + 1
            return BareWord(m[1], row, before[1] if before else "", after)
    return None


def meant_keyword(bare: BareWord) -> str | None:
    """The SPARQL keyword ``bare`` is one slip from (``EXIST``: ``NOT EXISTS``, with the
    ``NOT`` written before it), or None. Only a word standing where a keyword can is one: in
    capitals, before a ``{`` or ``(``, or after ``NOT``; a word where a value stands
    (``FILTER (?queue != kind)``) was told "did you mean BIND?"."""
    where = bare.word.isupper() or bare.after in ("{", "(") or bare.before.upper() == "NOT"
    if not where:
        return None
    for keyword in _GROUP_KEYWORDS:
        if len(bare.word) >= 4 and slip_distance(bare.word, keyword) <= 1:
            return (
                f"NOT {keyword}"
                if keyword == "EXISTS" and bare.before.upper() == "NOT"
                else keyword
            )
    return None


def miscased_boolean(text: str) -> str | None:
    """The first ``true`` or ``false`` of ``text`` not written in lower case (``True``,
    ``FALSE``); None when there is none. SPARQL's booleans are lower case: rdflib reads
    ``True`` as true, Oxigraph refuses the query."""
    return next((m[1] for m in _BOOLEAN.finditer(_hidden(text)) if not m[1].islower()), None)


class CommaNumber(NamedTuple):
    """A number written with a decimal comma (:func:`decimal_comma`)."""

    written: str
    meant: str
    """The number with a point: ``0.25`` for ``0,25``."""
    row: int
    """The line of the pattern it is on, 1 for the first."""


def decimal_comma(text: str) -> CommaNumber | None:
    """The first number of ``text`` (a pattern that does not parse) compared with a decimal
    comma, ``FILTER (?rate >= 0,25)``; None when there is none. Why: the parser said
    "unexpected 'FILTER'", and to write the pattern "as inside WHERE { … }", which it was."""
    hidden = _hidden(text)
    m = _COMMA_NUMBER.search(hidden)
    if m is None:
        return None
    whole, fraction = (m[1], m[2]) if m[1] is not None else (m[3], m[4])
    row = hidden[: m.start()].count("\n") + 1
    return CommaNumber(f"{whole},{fraction}", f"{whole}.{fraction}", row)
