"""World data the parser refused, said at the line to mend: a file's, or text given in memory.

Why a module of its own: a file (``World.load``, ``horismos load``) and text given from memory
(``World.load_data``) are read by the same parser, which names the wrong line for the two
slips made most (a last ``.`` missing, a ``.`` missing between statements) and says a string
or an IRI left open as an "Unexpected end of file"; each is said the same way for both, at
the line where the slip was written, with what to write (``horismos load`` says it too).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from ._errors import Problem
from ._turtle_syntax import parser_reason, written

__all__ = ["syntax_problem", "text_syntax_problem"]

_ENDS_INSIDE = "the file ends inside a statement"
_ENDS_INSIDE_FIX = "end it with ' .', and close every string, '[' and '(' it opens"

Lines = Callable[[], Iterable[bytes]]
"""The lines of the data the parser refused, read again when asked (a file is read a line at
a time: a world file may be large)."""


def _dot_missing(line: int) -> str:
    """What to change for the line :func:`_dot_missing_before` found."""
    return f"end the statement on line {line} with ' .'"


def syntax_problem(path: Path, e: SyntaxError) -> Problem:
    """The parser's refusal of the RDF file ``path``, at its line, with what to change."""
    return _problem(_file_lines(path), e, str(path), e.msg)


def text_syntax_problem(text: bytes, e: SyntaxError, where: str) -> Problem:
    """The parser's refusal of RDF ``text`` given in memory (``where`` names it in the
    problem, as a file's path would), at its line, with what to change: as a file's."""
    return _problem(lambda: text.splitlines(keepends=True), e, where, parser_reason(e))


def _problem(lines: Lines, e: SyntaxError, where: str, why: str) -> Problem:
    left_open = _left_open(lines, e)
    if left_open is not None:
        what, fix = left_open
        return Problem(
            "error", f"cannot read world data: {what}", file=where, line=e.lineno, hint=fix
        )
    last = _ended_inside(lines, e)
    if last is not None:
        return Problem(
            "error",
            f"cannot read world data: {_ENDS_INSIDE}",
            file=where,
            line=last,
            hint=_ENDS_INSIDE_FIX,
        )
    before = _dot_missing_before(lines, e)
    if before is not None:
        return Problem(
            "error",
            f"cannot read world data: a statement has no ' .' at its end (the parser read on "
            f"to line {e.lineno})",
            file=where,
            line=before,
            hint=_dot_missing(before),
        )
    return Problem(
        "error",
        f"cannot read world data: {why}",
        file=where,
        line=e.lineno,
        hint=getattr(e, "fix", None) or "fix the syntax at that line",  # ours, with its own
    )


def _file_lines(path: Path) -> Lines:
    """``path``'s lines, read a line at a time when asked; none when it cannot be read."""

    def lines() -> Iterator[bytes]:
        try:
            with open(path, "rb") as f:
                yield from f
        except OSError:
            return

    return lines


_RUNS_TO_THE_END = re.compile(
    r"between line \d+ column \d+ and line \d+ column \d+: Unexpected end of file$"
)


def _left_open(lines: Lines, e: SyntaxError) -> tuple[str, str] | None:
    """What is wrong, and what to write, when a string or an IRI never closes: the parser
    reads on to the end of the data and says "Parser error between line 2 column 7 and line
    50002 column 1: Unexpected end of file", with "fix the syntax at that line". Said as the
    quote or bracket it is, at the line that opens it. None for any other refusal."""
    if not (_RUNS_TO_THE_END.search(e.msg) and e.lineno and e.offset):
        return None
    line = next((text for number, text in enumerate(lines(), 1) if number == e.lineno), b"")
    opener = line.decode("utf-8", "replace")[e.offset - 1 : e.offset]
    if opener in ('"', "'"):
        return (
            f"a string opened at line {e.lineno}, column {e.offset}, is never closed (the "
            "parser read on to the end of the data)",
            f"close it with {opener} on line {e.lineno} (a text of several lines is written "
            f"between {opener * 3} and {opener * 3})",
        )
    if opener == "<":
        return (
            f"an IRI opened at line {e.lineno}, column {e.offset}, is never closed (the parser "
            "read on to the end of the data)",
            f"close it with '>' on line {e.lineno}",
        )
    return None


def _ended_inside(lines: Lines, e: SyntaxError) -> int | None:
    return _last_written_line(lines) if e.msg.endswith("Unexpected end") else None


def _dot_missing_before(lines: Lines, e: SyntaxError) -> int | None:
    """The line of the statement before the one the parser refused for a missing dot, when
    only blanks come before the token it stopped at: ``:p42 :acuity :urgent`` written without
    its ``.``, the parser reads the next subject on and names that line, so "fix the syntax
    at that line" sent the reader to a line with nothing wrong. Else None."""
    if not e.msg.endswith("A dot is expected at the end of statements"):
        return None
    if not e.lineno or not e.offset:
        return None
    last = None
    for number, line in enumerate(lines(), 1):
        if number == e.lineno:
            before = line.decode("utf-8", "replace")[: e.offset - 1]
            return last if not before.strip() else None
        if written(line):
            last = number
    return None


def _last_written_line(lines: Lines) -> int | None:
    """The number of the last line that holds more than blanks or a comment
    (:func:`~._turtle_syntax.written`): where a statement the data ends inside was written
    (the parser says the line after the end). One pass, on a load that failed."""
    last = None
    for number, line in enumerate(lines(), 1):
        if written(line):
            last = number
    return last
