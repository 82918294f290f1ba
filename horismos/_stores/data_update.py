"""An update of data alone (``INSERT DATA``, ``DELETE DATA``) read as the quads it writes.

Why: Oxigraph runs a SPARQL update and says nothing of what it wrote, so a store whose digest
must follow a user's update recomputed it from the whole world after each one (``sparql:``
folded it: a read of the whole store). A service that applies an update per event then paid a
pass over millions of triples to write one. An update made only of ``INSERT DATA`` and
``DELETE DATA`` operations names every quad it writes: read as those quads, it is landed by
the store's own commit (``apply``: atomic, journalled, the digest moved by the quads that
really were added or removed, asking only whether each is stored).

Oxigraph's parser reads the quads, so they are the ones the update itself would write (its
``BASE`` resolution, its literals' stored forms, a blank node of ``INSERT DATA`` a new node
each time: SPARQL's rule). rdflib's update parser was the other reader at hand, and took 4 s
for an ``INSERT DATA`` of 1,000 triples (Oxigraph: 9 ms). Its tokens (those of
:mod:`.update_text`) split the text into its prologue and operations; each operation's data is
run as ``INSERT DATA`` on an empty scratch store, which then holds its quads. The whole text
is first run on an empty scratch store too: one Oxigraph refuses (``DELETE DATA`` of a blank
node, a blank node shared by two blocks, a relative IRI without ``BASE``) is refused here with
its words; and where a ``DELETE DATA`` is among them, the text is run once more on a scratch
store holding the quads found, which it must leave holding exactly those added: a text split
otherwise than Oxigraph reads it is not taken as data. Anything else (``DELETE``/``INSERT …
WHERE``, ``LOAD``, ``CLEAR``, …) is not data: ``None``, and the store runs it as before.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import pyoxigraph as ox

from .base import StoreError
from .update_text import TOKENS

__all__ = ["data_quads"]

_Operation = tuple[bool, str]
"""Whether it inserts, and its data as an ``INSERT DATA`` of its own, prologue included."""


def data_quads(text: str) -> tuple[list[ox.Quad], list[ox.Quad]] | None:
    """The quads ``text`` adds and those it removes, where it is ``INSERT DATA`` and ``DELETE
    DATA`` operations alone (a quad's last operation decides which, as they run in order);
    ``None`` for any other update. One Oxigraph's parser refuses raises :class:`StoreError`.
    Costs the size of the update, never a read of a store."""
    if "DATA" not in text.upper():  # a claim's DELETE WHERE, a CLEAR: read no further
        return None
    operations = _operations(text)
    if operations is None:
        return None
    whole = ox.Store()
    try:  # Oxigraph's parser is the judge of what is SPARQL; on an empty store
        whole.update(text)
    except SyntaxError as e:
        raise StoreError(f"the update was refused, and wrote nothing: {e}") from None
    except (RuntimeError, OSError, ValueError):
        return None
    if all(inserts for inserts, _ in operations):
        return list(whole), []  # what they insert, on an empty store: all of it
    last: dict[ox.Quad, bool] = {}
    for inserts, data in operations:
        scratch = ox.Store()
        try:
            scratch.update(data)
        except (SyntaxError, RuntimeError, OSError, ValueError):
            return None  # split otherwise than Oxigraph reads it
        for q in scratch:
            last.pop(q, None)
            last[q] = inserts
    added = [q for q, inserts in last.items() if inserts]
    removed = [q for q, inserts in last.items() if not inserts]
    return (added, removed) if _as_oxigraph_runs_it(text, added, removed) else None


def _operations(text: str) -> list[_Operation] | None:
    """``text``'s operations, each with the prologue declared before it, where every one is
    ``INSERT DATA`` or ``DELETE DATA`` (SPARQL 1.1's grammar: ``Prologue ( Update1 ( ';'
    Update )? )?``); ``None`` at anything else."""
    tokens = [(m.lastgroup, m[0], m.start(), m.end()) for m in TOKENS.finditer(text)]
    tokens = [t for t in tokens if t[0] != "skip"]
    prologue: list[str] = []
    operations: list[_Operation] = []
    i = 0
    while i < len(tokens):
        kind, token, _, _ = tokens[i]
        word = token.upper() if kind == "word" else ""
        if word == "BASE" and _kinds(tokens, i + 1, 1) == ["term"]:
            prologue.append(f"BASE {tokens[i + 1][1]}")
            i += 2
        elif word == "PREFIX" and _kinds(tokens, i + 1, 2) == ["term", "term"]:
            prologue.append(f"PREFIX {tokens[i + 1][1]} {tokens[i + 2][1]}")
            i += 3
        elif word in ("INSERT", "DELETE") and [t[1].upper() for t in tokens[i + 1 : i + 3]] == [
            "DATA",
            "{",
        ]:
            end = _closing(tokens, i + 2)
            if end is None:
                return None
            data = text[tokens[i + 2][2] : tokens[end][3]]
            operations.append((word == "INSERT", "\n".join([*prologue, f"INSERT DATA {data}"])))
            i = end + 1
            if i < len(tokens):
                if tokens[i][1] != ";":
                    return None
                i += 1
        else:
            return None
    return operations


def _kinds(tokens: list[tuple[str | None, str, int, int]], start: int, n: int) -> list[str]:
    """The kinds of the ``n`` tokens from ``start``: a ``BASE`` or ``PREFIX`` is followed by
    terms (a prefix, an IRI), else it is not a prologue this module knows."""
    return [str(t[0]) for t in tokens[start : start + n]]


def _closing(tokens: list[tuple[str | None, str, int, int]], opening: int) -> int | None:
    """The index of the ``}`` that closes the ``{`` at ``opening``."""
    depth = 0
    for j in range(opening, len(tokens)):
        if tokens[j][0] == "mark":
            depth += {"{": 1, "}": -1}.get(tokens[j][1], 0)
            if depth == 0:
                return j
    return None


def _as_oxigraph_runs_it(text: str, added: list[ox.Quad], removed: list[ox.Quad]) -> bool:
    """Whether ``text``, run on a store holding ``removed`` and the ``added`` quads that name
    no blank node, leaves it holding ``added`` alone (blank nodes, new at each run, compared
    by shape)."""
    ground = [q for q in added if not _has_blank(q)]
    scratch = ox.Store()
    scratch.extend([*removed, *ground])
    try:
        scratch.update(text)
    except (SyntaxError, RuntimeError, OSError, ValueError):
        return False
    held = list(scratch)
    return set(q for q in held if not _has_blank(q)) == set(ground) and _shapes(held) == _shapes(
        added
    )


def _has_blank(q: ox.Quad) -> bool:
    """Whether ``q`` names a blank node (new at each run, so compared by shape alone)."""
    return isinstance(q.subject, ox.BlankNode) or isinstance(q.object, ox.BlankNode)


def _shapes(quads: Iterable[ox.Quad]) -> Counter[tuple[str, ...]]:
    """The quads naming a blank node, each as its terms with every blank node one mark."""
    return Counter(
        tuple(
            "_:" if isinstance(t, ox.BlankNode) else str(t)
            for t in (q.subject, q.predicate, q.object, q.graph_name)
        )
        for q in quads
        if _has_blank(q)
    )
