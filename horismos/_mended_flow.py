"""The flow as it will be once the load's errors are mended as they say, for the flow-wide
warnings said beside them.

Why: ``validate`` held back every warning about the flow as a whole (a step nothing stops on a
second run, one nothing reaches, a loop that never ends, a wait that never waits…) while any
error stood, since a flow the load found wrong misleads them. A modeler who mended a tool's
``horis:timeout`` then met the rerun warning as new on the next run, where ``validate``
promises every mistake in one pass. Most errors do not touch the flow: a warning said beside
one must still hold once it is mended as its message says, and said once.

So the flow the warnings walk is the one the errors' own fixes give, and what they cannot
know is left out:

- an edge to a step declared nowhere (``horis:next :NotifyNurze``) goes to the step its error
  names (``did you mean :NotifyNurse?``), one to a tool to the one step calling it, one to a
  workflow to its start; with none named, no flow-wide warning is said (any step unreached
  may be the one meant);
- a workflow the load would not model for its focus type is walked from its start all the
  same; one with no start among the steps leaves no way to a step known, so only what a
  step, its exits and its loop hold alone is said (a loop that never ends, rules the same);
- a step the load found wrong (a pattern that does not parse, a ``horis:bind`` to an argument
  its tool lacks), or whose tool's effect or ``horis:idempotent`` is wrong, is *unsure*, and
  so is every step after it: what it guards, binds or writes is not what the mended step
  will, so no warning is said of them. What comes before it, and beside it, still holds;
  a warning read from a step alone (two rules the same, a pattern that always holds) waits
  only for an error of that step, and one read from a step with its exits or its loop (a
  "no" an until lets through, a loop that never ends) for an error of the step, of a step it
  goes on to, or of a step on its loop (:func:`near_steps`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping

from rdflib import URIRef

from ._digraph import descendants, strongly_connected
from ._hazards import flow_graph
from ._model import DecisionStep, Step, Workflow

__all__ = ["mended_steps", "mended_workflows", "near_steps", "unsure_steps"]

_EDGES = ("next", "on_error", "on_partial", "otherwise", "fallback", "on_timeout")


def mended_steps(
    steps: Mapping[URIRef, Step], meant: Callable[[URIRef], URIRef | None]
) -> dict[URIRef, Step] | None:
    """``steps`` with each edge to a node that is no step sent to the step ``meant`` gives
    for it (what its error says to write); None when one has no such step."""
    mended: dict[URIRef, Step] = {}
    for iri, step in steps.items():
        changes: dict[str, object] = {}
        for field in _EDGES:
            target = getattr(step, field, None)
            if target is None or target in steps:
                continue
            fixed = meant(target)
            if fixed is None:
                return None
            changes[field] = fixed
        if isinstance(step, DecisionStep) and any(r.next not in steps for r in step.rules):
            rules = []
            for r in step.rules:
                fixed = r.next if r.next in steps else meant(r.next)
                if fixed is None:
                    return None
                rules.append(dataclasses.replace(r, next=fixed))
            changes["rules"] = tuple(rules)
        mended[iri] = dataclasses.replace(step, **changes) if changes else step  # type: ignore[arg-type]
    return mended


def mended_workflows(
    workflows: Iterable[Workflow], steps: dict[URIRef, Step]
) -> dict[URIRef, Workflow] | None:
    """The workflows walking ``steps``; None when one starts at no step of them."""
    walked = {}
    for wf in workflows:
        if wf.start not in steps:
            return None
        walked[wf.iri] = dataclasses.replace(wf, steps=steps)
    return walked


def unsure_steps(steps: Mapping[URIRef, Step], wrong: Iterable[URIRef]) -> set[URIRef]:
    """The steps of ``wrong`` and every step after them in the flow of ``steps``."""
    wrong = list(wrong)
    if not wrong:
        return set()  # definitions without an error: the flow is not walked again
    flow = flow_graph(steps)
    found: set[URIRef] = set()
    for iri in wrong:
        if iri in steps and iri not in found:
            found |= {iri, *descendants(flow, iri)}
    return found


def near_steps(steps: Mapping[URIRef, Step], wrong: Iterable[URIRef]) -> set[URIRef]:
    """The steps of ``wrong``, those going on to one of them, and those on a loop with one:
    what a warning read from a step, its exits and its loop depends on."""
    wrong = list(wrong)
    if not wrong:
        return set()
    flow = flow_graph(steps)
    found = {iri for iri in wrong if iri in steps}
    found |= {iri for iri, out in flow.items() if any(t in found for t in out)}
    for component in strongly_connected(flow):
        if len(component) > 1 and any(iri in found for iri in component):
            found |= set(component)
    return found
