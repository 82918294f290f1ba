"""An IRI written in a definitions file with a character no IRI holds, at its line.

Why: rdflib's Turtle parser takes whatever stands between ``<`` and ``>``, and decodes a
``\\u0001`` escape there into the character: ``validate`` said "valid" of a file whose IRI held
a control character (or a tab, a space, a ``{``) and the first store to meet it refused it
(pyoxigraph: "Invalid IRI code point"), or the digest of the definitions died inside rdflib
with a traceback. RFC 3987 allows none of them in an IRI, so each is an error at the line
that writes the IRI, with the fix: percent-encode the character, or remove it.

Beyond those few characters, RFC 3987 leaves out U+FFFD, the noncharacters and more, which
the store refuses as well: an IRI outside plain ASCII is judged by the store's own IRI parser
(pyoxigraph's ``NamedNode``), so what validate takes a store takes. Only a file whose parsed
graph (or its prefixes) holds such an IRI has its text read again, so a clean file costs one
pass over its own terms.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path

from pyoxigraph import NamedNode
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
    bad = {iri: char for iri, char in _bad_iris(g)}
    if not bad:
        return []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):  # it parsed a moment ago: said without a line
        text = ""
    chars = set(bad.values())  # a character Oxigraph refuses in one place may stand in another
    found = [
        _problem(path, line, printable(written), char)
        for line, written, decoded in _written_iris(text)
        if (char := _slip(decoded, chars)) is not None
    ]
    # written where the scan does not look (an N3 form, a prefixed name): named, without a line
    return found or [_problem(path, None, printable(iri), bad[iri]) for iri in sorted(bad)]


def _bad_iris(g: Graph) -> Iterator[tuple[str, str]]:
    """The IRIs of ``g`` (its terms, its literals' datatypes, its prefixes) no IRI may be,
    each with the first character that keeps it from being one."""
    seen: set[object] = set()
    for triple in g:
        for term in triple:
            if term in seen:
                continue
            seen.add(term)
            iri = term.datatype if isinstance(term, Literal) else term if is_iri(term) else None
            if iri is not None and (char := _refused(str(iri))) is not None:
                yield str(iri), char
    for _, namespace in g.namespace_manager.namespaces():
        if (char := _refused(str(namespace))) is not None:
            yield str(namespace), char


def _refused(iri: str) -> str | None:
    """The character of ``iri`` that keeps it from being an IRI, or None. Beyond the few of
    :data:`NOT_IN_IRI`, RFC 3987 leaves out U+FFFD, the noncharacters, U+E0000–E0FFF and
    private use outside a query: the store judges them (pyoxigraph's own IRI parser, the
    one `load` and every commit go through), only for an IRI outside plain ASCII, which
    :data:`NOT_IN_IRI` has judged in full."""
    bad = NOT_IN_IRI.search(iri)
    if bad is not None:
        return bad.group()
    if iri.isascii() or _oxigraph_takes(iri):
        return None
    for char in iri:
        if not char.isascii() and not _oxigraph_takes(f"http://example.org/{char}"):
            return char
    return None  # refused for what no character of its own says: judged by the store later


@functools.lru_cache(maxsize=4096)
def _oxigraph_takes(iri: str) -> bool:
    """Whether Oxigraph holds ``iri`` as a named node; kept per IRI, as a file names each of
    its IRIs many times."""
    try:
        NamedNode(iri)
    except ValueError:
        return False
    return True


def _slip(decoded: str, chars: set[str]) -> str | None:
    """The character of a written IRI (``decoded``, maybe relative) that no IRI may hold:
    one of :data:`NOT_IN_IRI`, or one of ``chars`` the store refused in the file's IRIs."""
    bad = NOT_IN_IRI.search(decoded)
    if bad is not None:
        return bad.group()
    return None if decoded.isascii() else next((c for c in decoded if c in chars), None)


def _problem(path: Path, line: int | None, shown: str, char: str) -> Problem:
    encoded = "".join(f"%{b:02X}" for b in char.encode("utf-8", "surrogatepass"))
    return Problem(
        "error",
        f"<{shown}> is not an IRI: it holds {_named(char)}, which no IRI may hold (RFC 3987), "
        "and a store refuses it",
        file=str(path),
        line=line,
        hint=f"write the character percent-encoded ({encoded}), or remove it",
    )


def _named(char: str) -> str:
    """The character in words a terminal shows: one it does not show by its code point."""
    if char in _NAMED:
        return _NAMED[char]
    code = f"U+{ord(char):04X}"
    category = unicodedata.category(char)
    if category == "Cc":
        return f"a control character ({code})"
    if 0xFDD0 <= ord(char) <= 0xFDEF or ord(char) & 0xFFFE == 0xFFFE:
        return f"{code}, which is no character"
    if char == "\ufffd":
        return f"the replacement character ({code})"
    if category == "Co":
        return f"a private-use character ({code}) outside a query"
    if char.isascii():
        return f"'{char}'"
    return f"the character {code}"


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
