"""A ``#`` in a pattern written on one line comments out the rest of it.

SPARQL reads ``#`` outside an IRI or a string as a comment to the end of the line, and a
pattern in plain quotes is one line: ``"?this :acuity ?queue . # not queued yet FILTER NOT
EXISTS { ?this :queuedAt ?t }"`` is read as ``?this :acuity ?queue .``. The guard is gone
without a word, the pattern parses, and ``validate`` said "valid" while the step fired on
every patient, queued or not. What follows such a ``#`` is looked at for SPARQL (a variable,
a brace, a keyword); a plain remark there is a comment as meant.
"""

from __future__ import annotations

import re

__all__ = ["commented_out"]

# what SPARQL text reads past before a comment can start: strings, then IRIs, then the comment
_TOKENS = re.compile(
    r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\''
    r"|<[^<>\"{}|^`\\\s]*>|#.*"
)
_SPARQL = re.compile(
    r"[?$][A-Za-z_]\w*|[{}]|\b(?:FILTER|OPTIONAL|MINUS|BIND|VALUES|UNION|EXISTS)\b", re.I
)


def commented_out(text: str) -> str | None:
    """The SPARQL a ``#`` comments out of ``text`` written on one line, from its first
    SPARQL-looking token on; None when ``text`` spans lines or its comment is a remark."""
    if "\n" in text.strip():
        return None
    for m in _TOKENS.finditer(text):
        if m.group().startswith("#"):
            found = _SPARQL.search(m.group(), 1)
            return m.group()[found.start() :].strip() if found else None
    return None
