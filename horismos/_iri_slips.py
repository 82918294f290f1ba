"""An IRI written in a definitions file with a character no IRI holds, at its line.

Why: rdflib's Turtle parser takes whatever stands between ``<`` and ``>``, and decodes a
``\\u0001`` escape there into the character: ``validate`` said "valid" of a file whose IRI held
a control character (or a tab, a space, a ``{``) and the first store to meet it refused it
(pyoxigraph: "Invalid IRI code point"), or the digest of the definitions died inside rdflib
with a traceback. RFC 3987 allows none of them in an IRI, so each is an error at the line
that writes the IRI, with the fix: percent-encode the character, or remove it.

Only a file whose parsed graph (or its prefixes) holds such an IRI has its text read again,
so a clean file costs one pass over its own terms.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path

from rdflib import Graph, Literal

from ._errors import Problem
from ._terms import NOT_IN_IRI, is_iri
from ._turtle_syntax import printable

__all__ = ["iri_slips"]

_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")
_NAMED = {"\t": "a tab", "\n": "a line break", "\r": "a carriage return", " ": "a space"}


def iri_slips(path: Path, g: Graph) -> list[Problem]:
    """Each IRI ``path`` writes that holds a character no IRI may hold, as an error at its
    line; [] when every IRI of its parsed graph ``g`` is one (the usual case: its text is
    then not read again)."""
    bad = sorted(_bad_iris(g))
    if not bad:
        return []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):  # it parsed a moment ago: said without a line
        text = ""
    found = [
        _problem(path, line, printable(written), decoded)
        for line, written, decoded in _written_iris(text)
        if NOT_IN_IRI.search(decoded)
    ]
    # written where the scan does not look (an N3 form): named, without a line
    return found or [_problem(path, None, printable(iri), iri) for iri in bad]


def _bad_iris(g: Graph) -> set[str]:
    """The IRIs of ``g`` (its terms, its literals' datatypes, its prefixes) no IRI may be."""
    bad: set[str] = set()
    seen: set[object] = set()
    for triple in g:
        for term in triple:
            if term in seen:
                continue
            seen.add(term)
            iri = term.datatype if isinstance(term, Literal) else term if is_iri(term) else None
            if iri is not None and NOT_IN_IRI.search(str(iri)):
                bad.add(str(iri))
    for _, namespace in g.namespace_manager.namespaces():
        if NOT_IN_IRI.search(str(namespace)):
            bad.add(str(namespace))
    return bad


def _problem(path: Path, line: int | None, shown: str, decoded: str) -> Problem:
    bad = NOT_IN_IRI.search(decoded)
    assert bad is not None
    char = bad.group()
    encoded = "".join(f"%{b:02X}" for b in char.encode("utf-8"))
    return Problem(
        "error",
        f"<{shown}> is not an IRI: it holds {_named(char)}, which no IRI may hold (RFC 3987), "
        "and a store refuses it",
        file=str(path),
        line=line,
        hint=f"write the character percent-encoded ({encoded}), or remove it",
    )


def _named(char: str) -> str:
    """The character in words a terminal shows: a control character by its code point."""
    if char in _NAMED:
        return _NAMED[char]
    if unicodedata.category(char) == "Cc":
        return f"a control character (U+{ord(char):04X})"
    if char in "\ufffe\uffff":
        return f"U+{ord(char):04X}, which is no character"
    return f"'{char}'"


def _written_iris(text: str) -> Iterator[tuple[int, str, str]]:
    """Each ``<…>`` of Turtle, TriG, N-Triples or N-Quads text outside its strings and
    comments, as (its line, as written, with its ``\\u``/``\\U`` escapes decoded)."""
    i, line, end = 0, 1, len(text)
    while i < end:
        ch = text[i]
        if ch == "\n":
            line += 1
            i += 1
        elif ch == "#":
            i = text.find("\n", i)
            i = end if i < 0 else i
        elif ch == "\\":  # an escape outside strings (ex:it\'s): its character opens nothing
            i += 2
        elif ch in "\"'":
            closer = ch * 3 if text.startswith(ch * 3, i) else ch
            j = i + len(closer)
            while j < end and not text.startswith(closer, j):
                if closer == ch and text[j] == "\n":  # a short string ends with its line,
                    break
                j += 2 if text[j] == "\\" else 1
            line += text.count("\n", i, j)
            # ...whose line break is counted as the loop meets it
            i = j if j < end and text[j] == "\n" and closer == ch else j + len(closer)
        elif text.startswith("<<", i):  # an RDF-star quoted triple opens: its IRIs follow
            i += 2
        elif ch == "<":
            j = text.find(">", i + 1)
            j = end if j < 0 else j
            written = text[i + 1 : j]
            yield line, written, _ESCAPE.sub(_unescaped, written)
            line += written.count("\n")
            i = j + 1
        else:
            i += 1


def _unescaped(m: re.Match[str]) -> str:
    code = int(m[1] or m[2], 16)
    return chr(code) if code <= 0x10FFFF else m[0]
