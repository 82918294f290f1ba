"""A world file's fact as a warning of ``validate --world`` says it: its value shown as the
file writes it, its subject named, at the line that writes it.

Why a module of its own: every check of the world's pass (:mod:`._world_terms`, closed and
shaped domain shapes, time zones, language tags, Turtle lists, values of the wrong kind) warns
of one fact the same way, and each wrote the same warning out in full.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyoxigraph as ox
from rdflib import URIRef
from rdflib.term import Node

from ._errors import Problem

__all__ = ["fact_warning", "world_value"]


def fact_warning(
    path: Path,
    quad: ox.Quad,
    written: Callable[[str], str],
    line_of: Callable[[str, str], int | None],
    message: str,
    *,
    mark: str,
    hint: str,
) -> Problem:
    """A warning about ``quad`` of the world file ``path``: its subject named as ``written``
    writes an IRI, at ``line_of(its property's IRI, mark)``, where the value to mend is."""
    subject = quad.subject
    return Problem(
        "warning",
        message,
        node=written(subject.value) if isinstance(subject, ox.NamedNode) else None,
        file=str(path),
        line=line_of(quad.predicate.value, mark),
        hint=hint,
    )


def world_value(
    value: object, written: Callable[[str], str], typed: Callable[[Node], str] | None = None
) -> tuple[str, str]:
    """A world fact's value as a warning shows it, and the text its line is looked for by: a
    literal quoted (``typed`` given: with its language tag, or its datatype as ``typed``
    names it unless a plain string), an IRI as ``written`` writes it, a blank node
    ``[ … ]``."""
    if isinstance(value, ox.Literal):
        shown = f'"{value.value}"'
        if typed is not None:
            shown += (
                f"@{value.language}"
                if value.language
                else ""
                if value.datatype.value.endswith("#string")
                else f"^^{typed(URIRef(value.datatype.value))}"
            )
        return shown, value.value
    if isinstance(value, ox.NamedNode):
        return written(value.value), written(value.value)
    return "[ … ]", ""
