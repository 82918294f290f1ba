"""A bracket or string a pattern leaves open: ``FILTER (!BOUND(?t)``, ``{ ?this :p ?n``.

Why apart: the parser says only where it gave up, and that is not where the slip is. An
unclosed ``(`` was "unexpected 'FILTER' on line 2 of the pattern" (the parser backs up to the
start of what it could not read), and an unclosed ``{`` that "it ends before every '{', '('
and string is closed", at the line the Turtle string opens: neither named the bracket nor
its line. Brackets are matched here on the pattern's own text, its strings, IRIs and
comments read as such (a ``(`` in a regular expression or a ``#`` fragment is no bracket),
so the one left open is named with the line it was opened on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Unclosed", "unclosed"]

_TOKEN = re.compile(
    r'(?P<long>"""|\'\'\')'
    r'|(?P<short>["\'])'
    r"|(?P<iri><[^<>\"{}|^`\\\s]*>)"
    r"|(?P<comment>#[^\n]*)"
    r"|(?P<open>[({\[])"
    r"|(?P<close>[)}\]])"
)
"""What the scan stops at: a string's quotes, an IRI, a comment, a bracket."""

_STRING_END = {
    **{q: re.compile(r"(?:[^\\]|\\.)*?" + q, re.DOTALL) for q in ('"""', "'''")},
    **{q: re.compile(r"(?:[^\\\n]|\\.)*?" + q) for q in ('"', "'")},
}
"""The rest of a string opened by its quote: a long one to its closing quotes, a short one
to its closing quote on the same line (an escaped quote closes neither)."""

_CLOSER = {"(": ")", "{": "}", "[": "]"}

_WORD_BEFORE = re.compile(r"(?<![\w?$:])([A-Za-z_]\w*)\s*$")
"""The keyword or function a bracket belongs to (``FILTER (``, ``EXISTS {``, ``BOUND(``)."""


@dataclass(frozen=True)
class Unclosed:
    """What a pattern leaves open (or closes that was never open), where."""

    opener: str
    """``(``, ``{``, ``[``, or the quote of a string (``"``, ``'``, ``\"\"\"``, ``'''``); for a
    closer with nothing open, that closer."""
    row: int
    """The line of the text it is on, 1 for the first."""
    word: str = ""
    """The keyword or function written just before the bracket (``FILTER``), if any."""
    preempted: str = ""
    """The closer of another bracket met while this one was open: the ``}`` of
    ``FILTER (?q = :x }``."""
    stray: bool = False
    """A closer with no bracket open before it."""

    def why(self, at: str) -> str:
        """The slip, with ``at`` saying where ``row`` is (``line 60``)."""
        if self.stray:
            opener = _opener_of(self.opener)
            return f"the '{self.opener}' on {at} closes nothing: no '{opener}' is open before it"
        if self.opener in _QUOTES:
            return f"the string opened with {_quoted(self.opener)} on {at} is never closed"
        where = f"after {self.word} on {at}" if self.word else f"opened on {at}"
        said = f"the '{self.opener}' {where} is never closed"
        if self.preempted:
            said += f": a '{self.preempted}' comes first"
        return said

    def hint(self) -> str:
        """What to write."""
        if self.stray:
            return f"drop it, or open what it closes with '{_opener_of(self.opener)}'"
        if self.opener in _QUOTES:
            same = " on the same line" if len(self.opener) == 1 else ""  # a short string's end
            return f"close it with {_quoted(self.opener)}{same}"
        close = _CLOSER[self.opener]
        if self.preempted:
            return f"close it with '{close}' before that '{self.preempted}'"
        return f"close it with '{close}'"


_QUOTES = ('"', "'", '"""', "'''")


def _quoted(quote: str) -> str:
    """``quote`` as the messages quote a bracket: '"', "'"."""
    return f'"{quote}"' if "'" in quote else f"'{quote}'"


def _opener_of(closer: str) -> str:
    return next(o for o, c in _CLOSER.items() if c == closer)


def unclosed(text: str) -> Unclosed | None:
    """The bracket or string ``text`` (a pattern) leaves open, the innermost when several are,
    or the first closer it has nothing open for; None when every one is closed.

    Strings are read to their closing quote (a short one to the end of its line), IRIs and
    comments skipped: a bracket inside them is none of the pattern's."""
    stack: list[tuple[str, int, str]] = []  # (bracket, offset, word before it)
    at = 0
    while (m := _TOKEN.search(text, at)) is not None:
        at = m.end()
        kind, token = m.lastgroup, m[0]
        if kind in ("long", "short"):
            end = _STRING_END[token].match(text, at)
            if end is None:
                return Unclosed(token, _row(text, m.start()))
            at = end.end()
        elif kind == "open":
            before = _WORD_BEFORE.search(text, 0, m.start())
            word = before[1] if before and before[1] != "a" else ""  # ``a [``: rdf:type
            stack.append((token, m.start(), word))
        elif kind == "close":
            if not stack:
                return Unclosed(token, _row(text, m.start()), stray=True)
            bracket, offset, word = stack.pop()
            if _CLOSER[bracket] != token:
                return Unclosed(bracket, _row(text, offset), word, token)
    if stack:
        bracket, offset, word = stack[-1]
        return Unclosed(bracket, _row(text, offset), word)
    return None


def _row(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1
