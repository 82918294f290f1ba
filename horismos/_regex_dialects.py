"""``sh:pattern``'s two dialects: SHACL's (XPath's ``fn:matches``, by which the pattern is
defined) and Python's (by which the gate and pyshacl judge it).

Where they part a modeler meets one of two things, both told at the pattern's line with what
to write instead:

- a construct SHACL defines and Python refuses (``\\p{Lu}``, ``\\i``, ``\\c``): the shape
  cannot be checked at all (:func:`xpath_only`, an error the gate's load check says);
- a construct Python reads and SHACL does not define (a lookaround, ``\\b``, ``(?i)``, a
  named group): the gate judges it, while every other SHACL engine refuses the shape or
  matches otherwise (:func:`python_only`, a warning among the shape slips).

Both, with what to do for an expression Python refuses for another reason
(:func:`refusal_fix`), the flags the gate does not read (:data:`UNREAD_FLAGS`) and the least
width of a match (:func:`shortest_match`), live here: one reading of what the two dialects
differ in, and one parse of each pattern (:func:`_parsed`) for the checks that walk it.

The walks read CPython's own regular expression parser (``re._parser``, the one
``re.compile`` uses), so they judge exactly what the gate will match with.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from re import _constants as _regex_constants  # type: ignore[attr-defined]
from re import _parser as _regex_parser  # type: ignore[attr-defined]

__all__ = ["UNREAD_FLAGS", "python_only", "refusal_fix", "shortest_match", "xpath_only"]


_XPATH_ONLY = {
    "bad escape \\p": (
        "\\p{…}, a Unicode category or block",
        "write the characters as a class, e.g. [A-Z] for \\p{Lu} in ASCII text",
    ),
    "bad escape \\P": (
        "\\P{…}, the complement of a Unicode category or block",
        "write the characters as a negated class, e.g. [^A-Z] for \\P{Lu} in ASCII text",
    ),
    **{
        f"bad escape \\{c}": (
            f"\\{c}, XML's {what}",
            "write the characters as a class, e.g. [A-Za-z_:][A-Za-z0-9._:-]* for an XML "
            "name in ASCII",
        )
        for c, what in (
            ("i", "name-start characters"),
            ("I", "characters that start no name"),
            ("c", "name characters"),
            ("C", "characters in no name"),
        )
    },
}
"""The escapes of XPath's expressions Python's ``re`` refuses, by ``re``'s refusal: what they
are, and how to write them for the gate."""


def xpath_only(why: str) -> tuple[str, str] | None:
    """What SHACL's construct ``re`` refused for ``why`` is, and how to write it for the gate;
    None when the refusal is of no construct of SHACL's (the expression is wrong in both)."""
    return _XPATH_ONLY.get(why)


def refusal_fix(why: str) -> str:
    """What to change in an expression ``re`` refused for ``why``: the advice for an open
    bracket was given for every refusal, a misplaced backslash or quantifier too."""
    if why.startswith("bad escape"):
        return (
            "a backslash starts no escape there; a backslash meant literally is \\\\ in the "
            'expression, written "\\\\\\\\" in a Turtle string (its own escape doubles it)'
        )
    if why.startswith("min repeat"):
        return "a {n,m} repeats n to m times, the smaller first: e.g. {2,5}"
    if why in ("nothing to repeat", "multiple repeat"):
        return (
            "a quantifier (* + ? {n,m}) follows nothing it can repeat; one meant literally is "
            "escaped (\\* \\+ \\?)"
        )
    if why.startswith(("unknown extension", "look-behind", "bad inline flags")):
        return (
            "SHACL's regular expressions (XPath's) have no (?…) groups but (?:…): write the "
            "pattern without them"
        )
    if why.startswith(("invalid group reference", "unknown group name")):
        return "a back-reference \\N names a ( ) group before it, counted from \\1"
    if why.startswith("bad character range"):
        return "a range in [ ] runs from its lower character to its higher, e.g. [a-z]"
    return "a ( or [ opened and not closed, or a bracket meant literally and not escaped (\\( \\[)"


_PYTHON_OPS: dict[object, tuple[str, str]] = {
    _regex_constants.ASSERT: ("a lookaround, (?=…) or (?<=…)", "write the pattern without it"),
    _regex_constants.ASSERT_NOT: (
        "a negative lookaround, (?!…) or (?<!…)",
        "write what must not match as its own shape: sh:not [ sh:path … ; sh:pattern … ]",
    ),
    _regex_constants.POSSESSIVE_REPEAT: (
        "a possessive quantifier (*+ ++ ?+)",
        "drop the + after the quantifier",
    ),
    _regex_constants.ATOMIC_GROUP: ("an atomic group, (?>…)", "write (?:…) or (…)"),
    _regex_constants.GROUPREF_EXISTS: (
        "a conditional, (?(1)…|…)",
        "write the alternatives with |",
    ),
}
_PYTHON_ATS: dict[object, tuple[str, str]] = {  # numbered apart from the ops: a dict of its own
    _regex_constants.AT_BOUNDARY: ("\\b", "write the characters around the word, e.g. (^|\\W)"),
    _regex_constants.AT_NON_BOUNDARY: ("\\B", "write the pattern without it"),
    _regex_constants.AT_BEGINNING_STRING: ("\\A", "write ^"),
    _regex_constants.AT_END_STRING: ("\\Z", "write $"),
}
"""What Python's regular expressions (the gate's) read and SHACL's do not, and how to write it
in theirs."""

_INLINE = re.I | re.M | re.S | re.X | re.A
_INLINE_FLAGS = ("inline flags, (?i)", 'write them in sh:flags, e.g. sh:flags "i"')
_NAMED_GROUP = ("a named group, (?P<name>…)", "write (…) and refer to it as \\1")
_SCOPED_FLAGS = (
    "a group's inline flags, (?i:…)",
    'write the letters both ways ([Qq]), or set the flag for the whole pattern in sh:flags "i"',
)
"""A group's own flags: sh:flags sets them for the whole pattern only, so not the same fix
as :data:`_INLINE_FLAGS` (one hint twice, when a pattern held both)."""


def python_only(pattern: str) -> list[tuple[str, str]]:
    """Each construct of Python's that SHACL's expressions lack in ``pattern``, once, as
    (what it is, how to write it in SHACL's), at any depth; none for an expression Python
    refuses (the gate's load check says so)."""
    parsed = _parsed(pattern)
    if parsed is None:
        return []
    found = dict.fromkeys(_constructs(parsed))
    if parsed.state.groupdict:
        found[_NAMED_GROUP] = None
    if parsed.state.flags & _INLINE:
        found[_INLINE_FLAGS] = None
    return list(found)


def _constructs(parsed: object) -> Iterator[tuple[str, str]]:
    """Each construct of :data:`_PYTHON_OPS` and :data:`_PYTHON_ATS` in a parsed expression,
    at any depth, and a group with inline flags (``(?i:…)``)."""
    todo = [parsed]
    while todo:
        item = todo.pop()
        if isinstance(item, _regex_parser.SubPattern):
            for op, av in item:
                if op is _regex_constants.AT:
                    if av in _PYTHON_ATS:
                        yield _PYTHON_ATS[av]
                elif op in _PYTHON_OPS:
                    yield _PYTHON_OPS[op]
                elif op is _regex_constants.SUBPATTERN and (av[1] or av[2]):
                    # a group's own case-blindness has a fix of its own; its other flags
                    # (?s:…), (?-i:…) are inline flags as a whole pattern's are
                    yield _SCOPED_FLAGS if av[1] & re.I else _INLINE_FLAGS
                todo.append(av)
        elif isinstance(item, list | tuple):
            todo.extend(item)


def shortest_match(pattern: str) -> int | None:
    """How many characters the shortest text ``pattern`` matches has, without matching;
    None when it is no regular expression (which the gate says)."""
    parsed = _parsed(pattern)
    return None if parsed is None else int(parsed.getwidth()[0])


@lru_cache(maxsize=256)
def _parsed(pattern: str) -> _regex_parser.SubPattern | None:
    """``pattern`` as ``re.compile`` parses it (its least width known), or None when ``re``
    refuses it: parsed once for every check that walks it (a load's shapes are few)."""
    try:
        return _regex_parser.parse(pattern)
    except (re.error, RecursionError):
        return None


UNREAD_FLAGS = {
    "s": "write [\\s\\S] where . should match a line break",
    "x": "write the pattern without its spaces",
    "q": "escape the pattern's special characters (\\. \\( …)",
}
"""The flags SHACL takes (XPath's) that the gate does not read (it reads ``i`` and ``m``), and
how to do without each."""
