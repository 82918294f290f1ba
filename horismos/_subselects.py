"""A sub-SELECT that names ``?this`` without selecting it.

A pattern runs with ``?this`` bound to the instance's focus. Inside a nested ``{ SELECT …
WHERE { … } }`` only the variables the SELECT projects meet the pattern around it: the
``?this`` of its WHERE is a variable of its own, bound to any node. So a ``horis:requires``
written as ``SELECT ?amount WHERE { ?this :amount ?amount }`` (the form a candidates query
may take, written where a pattern goes) gave every claim's amount to every instance: "2
solutions for the arguments of claims.pay", or with one other claim in the world, its
amount paid on this one. Validate said valid. The way out is to select ``?this`` too, or to
write the pattern bare.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rdflib import Variable

from ._term_kinds import algebra_parts

__all__ = ["unselected_focus"]

_THIS = Variable("this")


def unselected_focus(algebra: Any) -> Iterator[list[str]]:
    """For each sub-SELECT of a parsed query whose WHERE names ``?this`` and whose projection
    leaves it out, the variables it does select. The query's own projection (a candidates
    query's ``SELECT ?option``) is not one: the run binds ``?this`` in the query itself."""
    from rdflib.plugins.sparql.parserutils import CompValue

    top = algebra
    while isinstance(top, CompValue) and top.name != "Project" and "p" in top:
        top = top["p"]
    for part in algebra_parts(algebra):
        if not isinstance(part, CompValue) or part.name != "Project" or part is top:
            continue
        body = dict.get(part, "_vars") or ()
        selected = list(dict.get(part, "PV") or ())
        if _THIS in body and _THIS not in selected:
            yield [str(v) for v in selected]
