"""A SPARQL update as ``journal:PATH`` keeps it: its text, replayed when the store opens, so it
must write then what it wrote when it ran.

Why a module: what would replay otherwise is decided by reading the update as SPARQL, not by a
search of its letters. ``NOW()`` is written in as the moment it ran; a random value
(``RAND()``, ``UUID()``, ``STRUUID()``), a fresh blank node (``BNODE()``, ``_:b``, ``[]``,
and an RDF collection ``( … )`` in a triple, which mints one for each member) or rows taken
in the order they come (``LIMIT``, ``OFFSET``, ``SAMPLE``, ``GROUP_CONCAT``: the store's order
when it is replayed need not be the one it had) is refused.
Inside an IRI, a string or a comment those letters are only letters, and a parenthesis is a
collection only where a triple takes a term: not around an expression (``FILTER``, ``BIND``,
a function's arguments, ``IN``, a projection, ``GROUP BY``), a ``VALUES`` row or a property
path, nor the empty list ``()`` (``rdf:nil``, no blank node).

The reading follows each triple's subject, verb and object inside ``{ … }`` far enough to tell
a collection (a subject or an object) from a path (the verb); what it cannot place, it leaves
alone (Oxigraph refuses what is not SPARQL when the update runs).
"""

from __future__ import annotations

import datetime as dt_
import re
from dataclasses import dataclass

from .._errors import UsageError

__all__ = ["TOKENS", "pinned"]

TOKENS = re.compile(
    r"""(?P<skip>\s+|\#[^\n]*)  # whitespace, a comment
    | (?P<term><[^<>"{}|^`\\\x00-\x20]*>  # an IRI
        | (?:\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\" | '''(?:[^'\\]|\\.|'(?!''))*'''
          | "(?:[^"\\\n\r]|\\.)*" | '(?:[^'\\\n\r]|\\.)*')  # a string,
          (?:@[A-Za-z]+(?:-[A-Za-z0-9]+)* | \^\^(?:<[^<>"{}|^`\\\x00-\x20]*>
          | (?:[A-Za-z][\w-]*)?:[\w%-]*(?:\.+[\w%-]+)*))?  # its language or datatype
        | [?$]\w+  # a variable
        | (?:[A-Za-z][\w-]*(?:\.+[\w-]+)*)?:[\w:%-]*(?:\.+[\w:%-]+)*  # a prefixed name
        | \d+(?:\.\d*)?(?:[eE][+-]?\d+)? | \.\d+(?:[eE][+-]?\d+)?  # a number
        | \(\s*\))  # the empty list: rdf:nil
    | (?P<now>\bNOW\s*\(\s*\))
    | (?P<unreplayable>\b(?:RAND|UUID|STRUUID|BNODE)\s*\(|_:|\[)
    | (?P<word>[A-Za-z_]\w*)  # a keyword, a function's name, `a`, `true`
    | (?P<mark>[(){}.,;/|^!])
    | (?P<other>.)""",
    re.IGNORECASE | re.VERBOSE | re.DOTALL,
)
"""An update's text in tokens: what is only letters (an IRI, a string, a comment) told from
its marks. :mod:`.data_update` reads the same tokens to find an update's operations."""


def _maybe_pinned(text: str) -> bool:
    """Whether ``text`` has a letter the reading is for (a parenthesis, a bracket, ``_:``, a
    function's name that would replay otherwise); an update with none (a claim's marks) keeps
    its text as it is. Searched as plain substrings (~1 µs; a regular expression with word
    bounds took ~30 for a claim's marks); a hit that is only letters is read, and kept."""
    if "(" in text or "[" in text or "_:" in text:
        return True
    upper = text.upper()
    return any(word in upper for word in ("NOW", "RAND", "UUID", "BNODE", "LIMIT", "OFFSET"))


_EXPRESSION_CLAUSES = frozenset({"select", "group", "order", "having"})
_IN_ROW_ORDER = frozenset({"limit", "offset", "sample", "group_concat"})
_NEXT_ROLE = {"subject": "verb", "verb": "object", "object": "done", "done": "verb"}


@dataclass
class _Frame:
    """What a bracket opened: ``group`` (``{ … }`` of triples), ``expression`` (``( … )`` of
    one, or the update's top level), ``values`` (a ``VALUES`` block), ``collection``, ``path``;
    in a group, where its triple stands (``subject``, ``verb``, ``object``, ``done``: after
    one), and whether a clause whose parentheses hold expressions (``SELECT``) is open."""

    kind: str
    role: str = "subject"
    clause: bool = False

    def took_term(self) -> None:
        if self.kind == "group":
            self.role = _NEXT_ROLE[self.role]


def pinned(text: str) -> str:
    """``text`` as it will replay: ``NOW()`` written in as this moment; what would differ
    when replayed (a random value, a fresh blank node) refused with a :class:`UsageError`."""
    if not _maybe_pinned(text):  # most updates (a claim's marks): read no further
        return text
    now = f'"{dt_.datetime.now(dt_.UTC).isoformat()}"^^<http://www.w3.org/2001/XMLSchema#dateTime>'
    out: list[str] = []
    frames = [_Frame("expression")]
    values_next = False  # after VALUES: its block's parentheses are rows
    after_word = False  # a keyword or a function's name just before
    for found in TOKENS.finditer(text):
        kind, token = found.lastgroup, found[0]
        frame = frames[-1]
        if kind == "unreplayable":
            _refuse(repr(token))
        if kind == "now":
            out.append(now)
            frame.took_term()
            after_word = False
            continue
        out.append(token)
        if kind == "skip":
            continue
        a_term = kind == "term" or (kind == "word" and _is_term(token))
        if a_term:
            frame.took_term()
        elif kind == "word":
            word = token.lower()
            if word in _IN_ROW_ORDER:
                _refuse(f"{token} (rows come in another order when the update is replayed)")
            values_next |= word == "values"
            if word in _EXPRESSION_CLAUSES:
                frame.clause = True
            elif word == "where":
                frame.clause = False
        elif token == "(":
            frames.append(_Frame(_opened(frame, after_word or values_next)))
            if frames[-1].kind == "collection":
                _refuse(f"{_shown(text, found.start())!r} (an RDF collection)")
        elif token == ")" and len(frames) > 1:
            closed = frames.pop().kind
            frames[-1].role = "object" if closed == "path" else frames[-1].role
            if closed == "expression" and frames[-1].kind == "group":
                frames[-1].role = "subject"  # a FILTER or BIND ends what came before
        elif token == "{":
            frame.clause = False
            frames.append(_Frame("values" if values_next else "group"))
            values_next = False
        elif token == "}" and len(frames) > 1:
            frames.pop()
            frames[-1].role = "subject"
        elif frame.kind == "group":
            frame.role = {".": "subject", ";": "verb", ",": "object"}.get(token, frame.role)
            if token in "/|^!":  # a path goes on
                frame.role = "verb"
        after_word = kind == "word" and not a_term
    return "".join(out)


def _is_term(word: str) -> bool:
    """Whether ``word`` is a term (``a``, which alone is written in lower case, or a boolean),
    not a keyword or a function's name."""
    return word == "a" or word.lower() in ("true", "false")


def _opened(frame: _Frame, after_word: bool) -> str:
    """What a ``(`` opens in ``frame``: a collection only where a triple takes a term."""
    if frame.kind in ("expression", "values") or frame.clause or after_word:
        return "expression"  # arguments, IN ( … ), BIND ( … ), a projection, VALUES rows
    if frame.kind == "path" or (frame.kind == "group" and frame.role == "verb"):
        return "path"
    return "collection"


def _shown(text: str, at: int) -> str:
    """The collection starting at ``at``, as written (up to 40 characters)."""
    depth, end = 0, at
    for end in range(at, min(len(text), at + 40)):
        depth += {"(": 1, ")": -1}.get(text[end], 0)
        if depth == 0:
            return text[at : end + 1]
    return text[at : end + 1] + "…"


def _refuse(what: str) -> None:
    raise UsageError(
        f"journal:PATH keeps an update as its text, replayed when the store opens, and "
        f"{what} would write something else then: write the values into the update"
    )
