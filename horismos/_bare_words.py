"""A bare word in a pattern that does not parse: ``FILTER (?queue = urgent)``.

Why apart: the parser says only where it gave up ("unexpected 'FILTER'", at the start of
the group it could not read), which points at the FILTER and not at the word, and its hint
("write triple patterns and FILTERs as inside WHERE { … }") does not say what is wrong. A
word with no ``?``, no prefix, no quotes and no brackets is no SPARQL term: the modeler
meant a node (``:urgent``) or a string (``"urgent"``). The text is read with its strings,
IRIs and comments blanked out, so a word inside them is never taken for a bare one, and
only up to a quote left open.
"""

from __future__ import annotations

import re

__all__ = ["bare_word"]

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


def bare_word(text: str) -> tuple[str, int] | None:
    """The first bare word of ``text`` (a pattern) that is no SPARQL keyword, and the line
    of ``text`` it is on (1 for the first); None when there is none."""
    hidden = _HIDDEN.sub(lambda m: re.sub(r"[^\n]", " ", m[0]), text)
    # past a quote left open, what is a word and what is text of the string cannot be told
    hidden = re.split(r"[\"']", hidden, maxsplit=1)[0]
    for m in _WORD.finditer(hidden):
        if m[1].lower() not in _KEYWORDS:
            return m[1], hidden[: m.start()].count("\n") + 1
    return None
