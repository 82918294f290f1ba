"""A step's ``horis:onError`` to an action step whose pattern requires of ?this what only
the failed step's tool writes: after the failure it never holds, and the instance stops
there, blocked.

Why: ``:Assess horis:onError :Review``, :Review's ``horis:requires "?this :assessedAmount
?a"`` (to show the reviewer the amount), and only the assessment writes ``:assessedAmount``:
the assessment had failed, so it wrote nothing, and every claim whose assessment failed sat
blocked at :Review, never reviewed, while the definitions validated. Only what every
solution needs is held to this (not an ``OPTIONAL``, a ``UNION`` branch, a ``NOT EXISTS``);
a property another tool writes, or the files state, may be there another way, and beside a
world that states it the warning is dropped, as a step's own writes are.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from rdflib import RDF, URIRef, Variable

from ._hazards import written_on_focus
from ._model import ActionStep, Step, Tool
from ._preconditions import group_triples

__all__ = ["failed_writes"]


def failed_writes(
    steps: Mapping[URIRef, Step], tools: Iterable[Tool]
) -> Iterator[tuple[ActionStep, ActionStep, URIRef]]:
    """Each action step, the action step its ``horis:onError`` goes to, and the first
    property (by IRI) that one requires of ?this which only the failing step's tool writes
    (on ?this)."""
    tools = list(tools)
    this = Variable("this")
    for step in sorted(steps.values(), key=lambda s: str(s.iri)):
        if not isinstance(step, ActionStep) or step.on_error is None or step.tool is None:
            continue
        target = steps.get(step.on_error)
        if not isinstance(target, ActionStep) or target.requires is None:
            continue
        own = written_on_focus(step)
        if not own:
            continue
        others = {
            a.property
            for t in tools
            if t.iri != step.tool.iri and t.effect is not None
            for a in t.effect.asserts
        }
        needed = sorted(
            p
            for s, p, _ in group_triples(target.requires.select.algebra, every=True)
            if s == this and isinstance(p, URIRef) and p != RDF.type and p in own - others
        )
        if needed:
            yield step, target, needed[0]
