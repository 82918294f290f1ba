"""World nodes a ``horis:forEach`` step reaches as items and then drops for want of one
property its pattern joins on them.

Why: the step calls its tool once per solution of its ``horis:requires``. An item the world
gives without one property the pattern reads of it (``?s :systemCode ?system`` for a system
``:jira`` written with no ``:systemCode``) is no solution, so the step called its tool for the
other items, said "completed", and the hire never got a Jira account: nothing said so.
``validate --world`` says it at the line of the world file that writes the node, naming the
property. Read at validate only (one bounded query per joined property), never on a run's
step path.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from rdflib import RDF, URIRef
from rdflib.term import Literal, Node, Variable

from ._definitions_model import Definitions, every_tool
from ._errors import Problem
from ._model import ActionStep
from ._preconditions import group_triples
from ._stores import Store
from ._vocab import HORIS
from ._world_terms import world_lines, written_as

__all__ = ["item_gaps"]

_SHOWN = 5
"""Nodes said a property at most: the first few tell what the data lacks."""


def item_gaps(defs: Definitions, store: Store, paths: Iterable[str | Path]) -> list[Problem]:
    """A warning for each world node a forEach step's pattern reaches as an item (a value of
    a property every solution matches) and that lacks a property the pattern joins on it to
    give the tool an argument, which no tool writes; at the line of the world file that first
    writes the node."""
    # a tool the load found wrong (its timeout) still writes what its effect says
    written = {a.property for t in every_tool(defs) if t.effect for a in t.effect.asserts}
    gaps: list[tuple[ActionStep, URIRef, URIRef, str]] = []  # step, property, node, triple
    for step in sorted(defs.steps.values(), key=lambda s: str(s.iri)):
        if not isinstance(step, ActionStep) or not step.for_each or step.requires is None:
            continue
        if step.tool is None:
            continue
        triples = group_triples(step.requires.select.algebra, every=True)
        if not all(isinstance(x, (URIRef, Variable, Literal)) for t in triples for x in t):
            continue  # a blank node or a path: not read here
        items = step.arg_vars - {"this"}
        for x, p, v in triples:
            if (
                not isinstance(x, Variable)
                or str(x) == "this"
                or not isinstance(p, URIRef)
                or p == RDF.type
                or p in written
                or str(p).startswith(str(HORIS))
                or not isinstance(v, Variable)
                or str(v) not in items
                or not any(o == x and s != x for s, _, o in triples)
            ):
                continue
            # the items, without the one joined, nor what a step before writes (not yet in
            # the world validate reads)
            rest = [t for t in triples if v not in t and t[1] not in written]
            where = " ".join(f"{_n3(s)} {_n3(q)} {_n3(o)} ." for s, q, o in rest)
            query = (
                f"SELECT DISTINCT ?{x} WHERE {{ {where} FILTER(isIRI(?{x})) "
                f"FILTER NOT EXISTS {{ ?{x} <{p}> ?horis_any }} }} LIMIT {_SHOWN}"
            )
            for row in store.select(query, {}, {}):
                node = row.get(str(x))
                if isinstance(node, URIRef):
                    gaps.append((step, p, node, f"?{x} {defs.name(p)} ?{v}"))
    return _placed(defs, gaps, paths) if gaps else []


def _n3(term: Node) -> str:
    return f"?{term}" if isinstance(term, Variable) else term.n3()


def _placed(
    defs: Definitions,
    gaps: list[tuple[ActionStep, URIRef, URIRef, str]],
    paths: Iterable[str | Path],
) -> list[Problem]:
    """Each gap as a warning at the first line of a world file writing its node."""
    lines = world_lines(paths, [str(node) for _, _, node, _ in gaps])
    found: list[Problem] = []
    for step, p, node, joined in gaps:
        at = lines.get(str(node))
        file: str | None = at[0] if at else None
        line: int | None = at[1] if at else None
        shown = written_as(str(node), at[2]) if at else defs.name(node)
        name, tool = defs.name(p), defs.name(step.tool.iri) if step.tool else "its tool"
        found.append(
            Problem(
                "warning",
                f"{defs.name(step.iri)} (horis:forEach) reaches {shown} as an item and its "
                f"pattern joins {joined} on it, but {shown} has no {name}: the step calls "
                f'{tool} for the other items, says "completed", and never for {shown}',
                node=shown,
                file=file,
                line=line,
                hint=f"give {shown} its {name}, or read {name} in an OPTIONAL if {shown} is "
                "meant to go without",
            )
        )
    return found
