"""A world node given as the value of a property a domain shape holds to ``sh:class`` that the
world never types with that class: ``:c50 :affects :h1`` under ``sh:class :Host``, where the
world writes ``:h1 :hostname "db-01"`` and forgot ``:h1 a :Host``.

Why: the gate judges the whole node an effect lands on, so the first step writing anything on
``:c50`` (scoring its risk) called its tool and had the result refused, ``Value does not have
class :Host``, for that change only, found out only then. ``validate --world`` judged values
alone (:mod:`._shaped_world`), and a class needs the value's own types: now, given a world, one
look-up per node of the classes a ``sh:class`` property shape judges (by the class, never a
scan; the first :data:`_NODES` of a class) finds such values, and a warning at the world
file's first line writing each says the type to add. Read at validate only, never on a run's
step path. A value typed by the definitions (an individual of the ontology) counts as typed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from rdflib import RDF, SH, URIRef
from rdflib.term import Node

from ._definitions_model import Definitions
from ._errors import Problem
from ._shacl import deactivated
from ._stores import Store
from ._world_terms import world_lines, written_as

__all__ = ["untyped_values"]

_SHOWN = 5
"""Values said a property shape at most: the first few tell what the data lacks."""

_NODES = 1_000
"""Nodes of a class looked at, at most: each is one look-up of its values and one of each
value's types (about half a second for a thousand changes of four hosts each), so a world
of millions of them is not walked whole: a type forgotten in a file is seen in its first
nodes."""


@dataclass(frozen=True)
class _Untyped:
    shape: URIRef
    prop: URIRef
    cls: URIRef
    subject: URIRef
    value: URIRef


def untyped_values(defs: Definitions, store: Store, paths: Iterable[str | Path]) -> list[Problem]:
    """A warning for each world node (at most :data:`_SHOWN` a property shape) given as a value
    of a property whose ``sh:class`` no type the world or the definitions give it meets, in a
    node a domain shape judges by its class."""
    g = defs.graph
    judged: dict[tuple[URIRef, URIRef, URIRef], set[URIRef]] = {}  # (shape, p, C) → classes
    for klass, shapes in defs.domain_targets.by_class.items():
        for shape in shapes:
            if not isinstance(klass, URIRef) or deactivated(g, shape):
                continue
            pshapes = list(g.objects(shape, SH.property))
            if (shape, SH.path, None) in g:
                pshapes.append(shape)
            for pshape in pshapes:
                path, cls = g.value(pshape, SH.path), g.value(pshape, SH["class"])
                if not isinstance(path, URIRef) or not isinstance(cls, URIRef):
                    continue
                if not deactivated(g, pshape):
                    judged.setdefault((shape, path, cls), set()).add(klass)
    found: list[_Untyped] = []
    for (shape, p, cls), classes in sorted(judged.items(), key=str):
        meets = defs.classes_of(cls)
        values: dict[URIRef, URIRef] = {}
        meeting: set[URIRef] = set()
        try:
            for subject in _members(store, classes):
                for v in store.objects(subject, p):
                    if not isinstance(v, URIRef) or v in values or v in meeting:
                        continue
                    typed = {*store.types(v), *g.objects(v, RDF.type)}  # or an individual
                    if any(t in meets for t in typed):
                        meeting.add(v)
                    else:
                        values[v] = subject
                if len(values) >= _SHOWN:
                    break
        except NotImplementedError:  # a store with no look-ups of its own (sparql:URL)
            return []
        for v in sorted(values, key=str)[:_SHOWN]:
            found.append(_Untyped(shape, p, cls, values[v], v))
    return _placed(defs, found, paths) if found else []


def _subject_lines(path: Path, terms: list[str], prefixes: dict[str, str]) -> dict[str, int]:
    """The first line of ``path`` that begins with one of ``terms`` (as the file writes it):
    the node's own statements, where its type is missing, rather than a fact naming it."""
    starts = {f"{written_as(t, prefixes)}": t for t in terms} | {f"<{t}>": t for t in terms}
    found: dict[str, int] = {}
    with path.open(encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            head = line.lstrip().split(maxsplit=1)
            term = starts.get(head[0]) if head else None
            if term is not None and term not in found:
                found[term] = number
    return found


def _shown(defs: Definitions, node: Node, prefixes: dict[str, str] | None) -> str:
    """A world node as its world file writes it, else as the definitions name it."""
    return written_as(str(node), prefixes) if prefixes is not None else defs.name(node)


def _members(store: Store, classes: set[URIRef]) -> Iterator[URIRef]:
    """The world's nodes typed with one of ``classes``, each once, at most :data:`_NODES` a
    class: look-ups by the class, never a scan of the world."""
    for k in sorted(classes, key=str):
        seen: set[URIRef] = set()
        for s, _, _, _ in store.match(None, RDF.type, k, None):
            if isinstance(s, URIRef) and s not in seen:
                seen.add(s)
                yield s
                if len(seen) >= _NODES:
                    break


def _placed(defs: Definitions, found: list[_Untyped], paths: Iterable[str | Path]) -> list[Problem]:
    """Each value as a warning at the first line of a world file writing it."""
    # where its type is to be written: its own description's line, over its first mention
    lines = world_lines(paths, [str(u.value) for u in found], _subject_lines)
    problems: list[Problem] = []
    for u in found:
        at = lines.get(str(u.value))
        value, subject = (_shown(defs, n, at[2] if at else None) for n in (u.value, u.subject))
        cls = defs.name(u.cls)
        problems.append(
            Problem(
                "warning",
                f"the world gives {subject} {defs.name(u.prop)} {value}, but shape "
                f"{defs.name(u.shape)} judging {subject} requires sh:class {cls} of "
                f"{defs.name(u.prop)}, and nothing types {value} a {cls} (nor a subclass): "
                f"{subject} never conforms, so every step whose tool lands anything on it "
                "fails, the gate rejecting its result after the call has acted",
                node=value,
                file=at[0] if at else None,
                line=at[1] if at else None,
                hint=f"write {value} a {cls} in the world, or correct the shape",
            )
        )
    return problems
