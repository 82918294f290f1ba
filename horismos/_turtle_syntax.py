"""A Turtle, N-Triples or N-Quads syntax error said at the line to mend, with what to write.

rdflib's parsers stop where they notice a slip, often lines after it (a ``]`` missing is
noticed at the statement's ``.``; a long string left open at the next one's quotes), and say
it in their own words or none. Reading the text again as Turtle reads it (strings, IRIs,
comments, brackets) finds the line that holds the slip. Kept apart from :mod:`._sources`,
which locates what parsed; :mod:`._read_sources` asks here only when a file does not parse.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path

from rdflib.plugins.parsers.notation3 import BadSyntax

from ._errors import Problem

__all__ = [
    "SYNTAX_HINT",
    "UNBOUND",
    "bracket_slip",
    "last_written_line",
    "line_parse_error",
    "near",
    "not_utf8",
    "parser_reason",
    "printable",
    "runaway_string",
    "sparql_variable",
    "syntax_hint",
    "syntax_line",
    "turtle_code",
    "written",
]


UNBOUND = re.compile(r'Prefix "([A-Za-z][\w.-]*|):" not bound')


def not_utf8(path: Path, e: UnicodeDecodeError) -> Problem:
    """A file that is not UTF-8, located at the first byte that is not: rdflib's error gives
    a position in whatever chunk it was decoding, not a line of the file."""
    data = path.read_bytes()
    try:
        data.decode("utf-8")
        at = None
    except UnicodeDecodeError as whole:
        at = whole.start
    line = _line_at(data, at) if at is not None else None
    byte = f"byte 0x{data[at]:02x} " if at is not None else ""
    return Problem(
        "error",
        f"the file is not UTF-8, as RDF text must be: {byte}cannot be read"
        + (f" (line {line})" if line else f" ({e.reason})"),
        file=str(path),
        line=line,
        hint="save it as UTF-8 (from Latin-1: iconv -f latin1 -t utf-8 FILE > NEW)",
    )


SYNTAX_HINT = (
    "end each statement with ' .', separate predicates with ';', and close every string, "
    "'[' and '(' on the line shown or just before it"
)


def _read_to(e: BadSyntax) -> tuple[bytes, int]:
    """The text a syntax error was found in, and where in it the parser stopped (its end when
    rdflib's position is past it)."""
    text: bytes = e._str
    return text, e._i if 0 <= e._i < len(text) else len(text)


def syntax_hint(e: BadSyntax, line: int) -> str:
    """What to write for a syntax error at ``line``: rdflib's "expected '.'" is a statement
    that lacks its ' .' when the parser stopped at the next statement's subject (a line's
    first column), and a predicate that lacks its ';' when it stopped at an indented line;
    a short string that runs to the line's end lacks its closing quote."""
    text, at = _read_to(e)
    why = str(e._why)
    if why == "newline found in string literal":
        return 'close the string on its line (a text of several lines is written """ … """)'
    if why == "bad escape":  # a regular expression's \d, a Windows path's \U
        return (
            'a backslash in a Turtle string starts an escape (\\n, \\t, \\", \\\\): '
            'write two for one, e.g. sh:pattern "^Q-\\\\d+$" for the expression ^Q-\\d+$'
        )
    word = re.match(rb"\s*(true|false)\b", text[at:], re.I)
    if why == "objectList expected" and word is not None:
        return f"a boolean is written in lower case: {word.group(1).decode().lower()}"
    if not why.startswith("expected '.'") or at >= len(text):
        return SYNTAX_HINT
    start = text.rfind(b"\n", 0, at) + 1
    if text[start:at].strip():
        return SYNTAX_HINT
    if at == start:
        return f"end the statement on line {line} with ' .'"
    return f"separate predicates with ';': add it at the end of line {line}"


def _line_at(text: bytes, at: int) -> int:
    """The 1-based line of ``text`` that offset ``at`` is on."""
    return text.count(b"\n", 0, at) + 1


def syntax_line(e: BadSyntax) -> int:
    """The line of a Turtle syntax error, from where in the text the parser stopped: rdflib's
    own count (``e.lines``) runs past the end of a short file (a 1-line file's error at line
    4). A statement without its closing dot is found at the next statement or the end of the
    file: the line shown is the last one written before that, where the dot is missing; a
    long string never closed, at the line that opens it."""
    text, at = _read_to(e)
    why = str(e._why)
    if why == "unterminated string literal":
        opened = _open_long_string(text[:at])
        if opened is None:
            opened = max(text.rfind(b'"""', 0, at), text.rfind(b"'''", 0, at))
        if opened >= 0:
            return _line_at(text, opened)
    if at == len(text) or why.startswith("expected '.'"):
        return last_written_line(text, at)
    return _line_at(text, at)


def _open_long_string(text: bytes) -> int | None:
    """Where the long string still open at the end of ``text`` starts, read as Turtle reads
    it from the top (comments, IRIs, short and long strings, escapes); None when none is.
    The last triple quote before the end is not it: a ``'''`` string never closed holds
    every ``\"\"\"`` after it, and the error was put at the last of those, lines later."""
    return next((start for start, end in _long_strings(text) if end is None), None)


# a statement's start (a blank line, then a subject typed in horis:) or a horis: predicate
# opening a line: Turtle that a pattern's text never holds
_STATEMENT = re.compile(rb"\n[ \t]*\n[ \t]*\S+[ \t]+a[ \t]+horis:|\n[ \t]*horis:[A-Za-z]+[ \t]")


def runaway_string(e: BadSyntax) -> tuple[int, int] | None:
    """The lines where a long string that swallowed statements opens and closes, when the
    syntax error follows it on its closing line: a pattern's closing ``\"\"\"`` written
    ``\"\"`` made the string run on to the next pattern's opening quotes, and the error was
    put there, lines after the slip, inside a step that is right."""
    text, at = _read_to(e)
    closed = [(a, b) for a, b in _long_strings(text[:at]) if b is not None]
    if not closed:
        return None
    start, end = closed[-1]
    if b"\n" in text[end:at] or not _STATEMENT.search(text, start, end):
        return None
    return _line_at(text, start), _line_at(text, end)


def _long_strings(text: bytes) -> Iterator[tuple[int, int | None]]:
    """Where each long string of ``text`` starts and where its closing quotes are (None: it
    never closes)."""
    return ((start, close) for start, close, opener in _quoted(text) if len(opener) == 3)


def _quoted(text: bytes) -> Iterator[tuple[int, int | None, bytes]]:
    """Each comment, IRI and string of ``text``, read as Turtle reads it from the top
    (escapes, a short string ending with its line): where it starts, where what closes it is
    (the newline, '>' or quotes; None: it runs to the end) and what opens it (its quotes,
    b"#" or b"<"). What lies between them is the Turtle's own syntax."""
    i, n = 0, len(text)
    while i < n:
        c = text[i : i + 1]
        if c in (b"#", b"<"):
            end = text.find(b"\n" if c == b"#" else b">", i + 1)
            yield i, None if end < 0 else end, c
            i = n if end < 0 else end + 1
        elif c in (b'"', b"'"):
            quote = c * 3 if text.startswith(c * 3, i) else c
            start, i = i, i + len(quote)
            while i < n and not text.startswith(quote, i):
                if len(quote) == 1 and text[i : i + 1] == b"\n":
                    break  # a short string ends with its line
                i += 2 if text[i : i + 1] == b"\\" else 1
            if i >= n:
                yield start, None, quote
                return
            yield start, i, quote
            i += len(quote)
        else:
            i += 1


def _brackets(text: bytes) -> tuple[list[int], dict[int, int]]:
    """Where each '[' and '(' still open at the end of ``text`` opens, outermost first, and
    where each one closed opens, by where its closing bracket is. The brackets inside
    strings, IRIs and comments are text, not Turtle's."""
    opened: list[int] = []
    closed: dict[int, int] = {}
    code = 0
    for start, close, opener in (*_quoted(text), (len(text), None, b"")):
        for i in range(code, start):
            if text[i] in b"[(":
                opened.append(i)
            elif text[i] in b"])" and opened:
                closed[i] = opened.pop()
        if close is None:
            break
        code = close + (0 if opener == b"#" else len(opener))
    return opened, closed


_CLOSER = {ord("["): "]", ord("("): ")"}


def bracket_slip(e: BadSyntax) -> tuple[int, str, str] | None:
    """The line of the '[' or '(' a syntax error follows from, what is wrong with it and what
    to write, when the parser stopped where no bracket may still be open (at a statement's
    closing ' .', at the end of the file, at a closing bracket of the other kind) or at a
    closing bracket with none open. rdflib put "']' expected" at that ' .', lines after the
    '[' of an argument or an effect that lacks its ']', with a hint to look "on the line
    shown or just before it"."""
    text, at = _read_to(e)
    opened, closed = _brackets(text[:at])
    stop = text[at : at + 1]
    if not opened:
        if stop not in (b"]", b")"):
            return None
        line = _line_at(text, at)
        mate = "[" if stop == b"]" else "("
        return line, f"a '{stop.decode()}' that closes no '{mate}'", "remove it"
    innermost = opened[-1]
    closer = _CLOSER[text[innermost]]
    if stop not in (b".", b"") and not (stop in (b"]", b")") and stop != closer.encode()):
        return None
    stopped = _line_at(text, at)
    ends = _block_end(text, innermost, stopped)
    if ends is not None:
        # the block's own closing bracket, where it ends, closed a bracket opened inside it:
        # that one is the bracket left open
        innermost = closed.get(_first_written(text, ends), innermost)
    line = _line_at(text, innermost)
    if ends is not None:
        where = f"before line {ends}, where its block ends"
    elif stopped == line:
        where = "where its block ends, on the same line"
    else:
        where = f"where its block ends, before line {stopped}"
    what = f"the '{chr(text[innermost])}' opened at line {line} is never closed"
    return line, what, f"close it with '{closer}' {where}"


def _first_written(text: bytes, line: int) -> int:
    """Where the first character that is not a blank of 1-based ``line`` of ``text`` is."""
    at = 0
    for _ in range(line - 1):
        at = text.index(b"\n", at) + 1
    return at + len(text[at:]) - len(text[at:].lstrip(b" \t"))


def _block_end(text: bytes, opened: int, stopped: int) -> int | None:
    """The first line after the one where ``opened``'s bracket ends its line that is less
    indented than the block's first line, up to ``stopped``: where the closing bracket
    belongs when the block is written one item a line. None when the block is not so
    written (the bracket opens mid-line's content, or nothing is less indented)."""
    lines = text.split(b"\n")
    first = text.count(b"\n", 0, opened)  # 0-based line of the bracket
    rest = lines[first][opened - text.rfind(b"\n", 0, opened) :].split(b"#")[0]
    if rest.strip():
        return None
    written = [
        (n, len(lines[n]) - len(lines[n].lstrip()))
        for n in range(first + 1, min(stopped, len(lines)))
        if lines[n].strip() and not lines[n].lstrip().startswith(b"#")
    ]
    if not written:
        return None
    indent = written[0][1]
    return next((n + 1 for n, at in written[1:] if at < indent), None)


def last_written_line(text: bytes, end: int) -> int:
    """The last line before ``end`` that holds more than blanks or a comment (1 if none)."""
    lines = text[:end].split(b"\n")
    for n in range(len(lines), 0, -1):
        if written(lines[n - 1]):
            return n
    return 1


def written(line: bytes) -> bool:
    """Whether ``line`` holds more than blanks or a comment: where a statement can be."""
    text = line.strip()
    return bool(text) and not text.startswith(b"#")


_PATTERN_PROPERTIES = ("requires", "until", "query")
"""The horis: properties whose value is SPARQL text (a pattern or a query)."""

_VARIABLE = re.compile(r"(?<![\w:?$])\?([A-Za-z_][\w]*)")
_PREDICATE = re.compile(r"([A-Za-z][\w.-]*)?:([A-Za-z_][\w.-]*)\s*$")


def sparql_variable(path: Path) -> Problem | None:
    """A SPARQL variable written bare in Turtle (``horis:var ?this``, ``horis:requires ?this``):
    rdflib's Turtle parser reads ``?this`` as an N3 variable and fails inside itself
    ("'NoneType' object has no attribute 'newUniversal'"), with no line and in its own words.
    The first ``?name`` outside a string, an IRI and a comment, with what to write instead:
    the name in quotes, or the pattern in a string where one is expected. None when there is
    no such variable (the parser failed for another reason)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    for number, written in turtle_code(lines):
        m = _VARIABLE.search(written)
        if m is None:
            continue
        var = m[1]
        before = _PREDICATE.search(written[: m.start()])
        pattern = before is not None and before[2] in _PATTERN_PROPERTIES
        predicate = f"{before[1] or ''}:{before[2]}" if before is not None else ""
        return Problem(
            "error",
            f"?{var} is a SPARQL variable where Turtle expects a value",
            file=str(path),
            line=number,
            hint=f'put the pattern in a string: {predicate} """ ?{var} … """'
            if pattern
            else f'quote it: "{var}"',
        )
    return None


def turtle_code(lines: list[str], line: int = 1, col: int = 0) -> Iterator[tuple[int, str]]:
    """Each line of Turtle from ``line``:``col`` on (1-based), as (its number, its text with
    every string, IRI and comment blanked): what is left is the Turtle's own syntax, columns
    kept. Before ``col`` the first line is blanked too. A short string ends with its line."""
    quote: str | None = None
    for i in range(line - 1, len(lines)):
        text = lines[i]
        j = col if i == line - 1 else 0
        code = [" "] * j
        while j < len(text):
            if quote is not None:
                if text.startswith(quote, j) and text[j - 1 : j] != "\\":
                    j += len(quote)
                    code.append(" " * len(quote))
                    quote = None
                    continue
                code.append(" ")
                j += 1
                continue
            ch = text[j]
            if ch == "#":
                break
            if ch in "\"'":
                quote = ch * 3 if text.startswith(ch * 3, j) else ch
                code.append(" " * len(quote))
                j += len(quote)
                continue
            if ch == "<":
                quote = ">"
            code.append(ch)
            j += 1
        if quote is not None and len(quote) == 1 and quote != ">":
            quote = None
        yield i + 1, "".join(code)


def parser_reason(e: SyntaxError) -> str:
    """What Oxigraph's parser says is wrong, without the position it puts first ("Parser
    error at line 3 column 14: …", "… between line 2 column 27 and line 3 column 1: …"):
    the caller says the line, counted as its reader counts lines."""
    return re.sub(r"^Parser error (?:at|between) line [^:]*: ", "", e.msg or "")


def line_parse_error(path: Path, fmt: str) -> Problem | None:
    """A line-based file's syntax error at its line, in Oxigraph's words: rdflib's N-Quads
    and N-Triples parsers name no line (and one said only "Failed to eat" and its own regex).
    None when Oxigraph reads the file (rdflib failed for another reason)."""
    import pyoxigraph

    formats = {"nquads": pyoxigraph.RdfFormat.N_QUADS, "nt": pyoxigraph.RdfFormat.N_TRIPLES}
    try:
        for _ in pyoxigraph.parse(path.read_bytes(), format=formats[fmt]):
            pass
    except SyntaxError as e:
        why = parser_reason(e)
        name, graph = ("N-Quads", " <graph>") if fmt == "nquads" else ("N-Triples", "")
        return Problem(
            "error",
            f"{name} syntax error: {why}{near(path, e.lineno or 0)}",
            file=str(path),
            line=e.lineno,
            hint=f"write one statement a line: <subject> <predicate> object{graph} .",
        )
    except (OSError, ValueError):
        return None
    return None


def near(path: Path, line: int) -> str:
    """The text of the line the parser stopped at, so the message shows what it choked on."""
    lines = path.read_text(encoding="utf-8").splitlines()
    text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    return f", at: {printable(text[:60])}" if text else ""


def printable(text: str) -> str:
    """``text`` with each control character but a tab (C0 and C1: a NUL byte of a binary
    file, a bell, an escape sequence, DEL) written as its escape, ``\\x00``: echoed as they
    were, they cleared or recoloured the user's terminal, or hid the rest of the message. A
    tab, a zero-width joiner or an ideographic space a terminal shows harmlessly, as text."""
    return "".join(
        c.encode("unicode_escape").decode() if c != "\t" and unicodedata.category(c) == "Cc" else c
        for c in text
    )
