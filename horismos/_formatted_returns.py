"""An f-string a Python tool returns whose fixed text its domain shape's ``sh:pattern`` refuses,
whatever fills its fields.

Why: a deploy function returning ``{"deployRef": f"DEPLOY-{n:04d}"}`` beside a shape requiring
``sh:pattern "^DEP-[0-9]{4}$"`` of ``:deployRef`` validated, ran, deployed — the tool acted, it
is not idempotent — and then the gate rejected the answer, on every call: nothing landed and
the step failed. A constant returned is judged already (:mod:`._returned_values`); a value
computed at the call was the gate's alone, though its fixed text decides it here.

Only what is certain is said: an ``sh:pattern`` (with no ``sh:flags``, no ``|``) anchored at
its start by ``^`` whose first characters are plain text, or at its end by ``$`` after plain
text, and an f-string whose text before its first field (after its last) agrees with neither
ending — neither is the start (end) of the other, so no field's text can mend it. Read from the
shapes that judge the effect's subject, as the gate finds them; the assertion's ``horis:type``
must be ``xsd:string`` (or none), so the text is the literal that lands.
"""

from __future__ import annotations

from collections.abc import Iterator

from rdflib import SH, XSD, Literal, URIRef

from ._definitions_model import Definitions
from ._model import Assertion, Tool
from ._shacl import Targets, deactivated

__all__ = ["fixed_ends", "refused_formats"]

_META = set(".^$*+?{}[]()|\\")
_QUANTIFIERS = set("*+?{")


def fixed_ends(pattern: str) -> tuple[str | None, str | None]:
    """The text every match of ``pattern`` begins with (when ``^`` anchors it) and ends with
    (when ``$`` does), as far as it is plain; None where the pattern fixes nothing."""
    if "|" in pattern:
        return None, None
    head = _head(pattern[1:]) if pattern.startswith("^") else None
    tail = None
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        tail = _head(pattern[:-1][::-1], reverse=True)
    return head or None, tail or None


def _head(text: str, reverse: bool = False) -> str:
    """The plain characters ``text`` opens with (read backwards: the reversed pattern's end),
    stopping before any character a quantifier makes optional or repeats."""
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if reverse:
            if c in _META or (i + 1 < len(text) and text[i + 1] == "\\"):
                break  # a quantifier or class ends here, or an escape: not plain
            out.append(c)
            i += 1
            continue
        if c == "\\" and i + 1 < len(text) and not text[i + 1].isalnum():
            c, step = text[i + 1], 2
        elif c in _META:
            break
        else:
            step = 1
        nxt = text[i + step] if i + step < len(text) else ""
        if nxt in _QUANTIFIERS:
            break  # optional or repeated: not fixed (a "+" keeps one, but say no more)
        out.append(c)
        i += step
    return "".join(reversed(out)) if reverse else "".join(out)


def _agree(fixed: str, required: str, at_start: bool) -> bool:
    if at_start:
        return fixed.startswith(required) or required.startswith(fixed)
    return fixed.endswith(required) or required.endswith(fixed)


def refused_formats(
    defs: Definitions,
    tool: Tool,
    a: Assertion,
    cls: URIRef,
    targets: Targets,
    ends: tuple[str, str],
) -> Iterator[tuple[URIRef, str, str]]:
    """``(shape, its sh:pattern, what of it the text fixed in ``ends`` (before the first field,
    after the last) refuses)`` for each shape judging a subject of ``cls`` whose pattern of
    ``a``'s property no text of that form matches."""
    if a.is_class or a.value is not None or a.type not in (None, XSD.string):
        return
    g = defs.graph
    shapes = {*targets.by_class.get(cls, ()), *targets.by_subject_of.get(a.property, ())}
    if tool.effect is not None:
        shapes |= set(tool.effect.shapes)
    before, after = ends
    for shape in sorted(shapes, key=str):
        if deactivated(g, shape):
            continue
        pshapes = [p for p in g.objects(shape, SH.property) if not deactivated(g, p)]
        for pshape in sorted(pshapes, key=str):
            pattern = g.value(pshape, SH.pattern)
            if g.value(pshape, SH.path) != a.property or not isinstance(pattern, Literal):
                continue
            if (pshape, SH.flags, None) in g:
                continue
            head, tail = fixed_ends(str(pattern))
            if head is not None and not _agree(before, head, True):
                yield shape, str(pattern), f'no text beginning "{before}" matches'
            elif tail is not None and not _agree(after, tail, False):
                yield shape, str(pattern), f'no text ending "{after}" matches'
