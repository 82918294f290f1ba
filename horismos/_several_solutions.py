"""A step without ``horis:forEach`` whose ``horis:requires`` the world gives several solutions
for one focus: the step fails there, after the steps before it have acted.

Why: a change is applied to each host it ``:affects`` (a ``horis:forEach`` step), then
checked by a step calling the verification tool with ``?this :affects ?host``, written
without ``horis:forEach true``. For a change affecting four hosts the check has four
solutions, and a step that is not a ``forEach`` refuses several: it failed, and its
``horis:onError`` rolled back a change that had been applied everywhere. It validated. Given
a world, ``validate`` evaluates each such step's pattern for the world's nodes of the
workflow's focus type (at most :data:`_FOCI` of them, first found first said) and warns at
its ``horis:requires``. Read at validate only, never on a run's step path; only what the
world holds before any step is read, so a pattern reading what an earlier step writes has no
solution here and is not judged.
"""

from __future__ import annotations

from rdflib import RDF, URIRef
from rdflib.term import Node

from ._contract import carried_variables
from ._definitions_model import Definitions
from ._errors import Problem
from ._model import ActionStep
from ._stores import Store
from ._vocab import HORIS

__all__ = ["several_solutions"]

_FOCI = 200
"""Focus nodes tried a step at most: one with several solutions is enough to say it."""


def several_solutions(defs: Definitions, store: Store) -> list[Problem]:
    """A warning for each step, not a ``horis:forEach``, whose pattern gives the arguments
    its tool acts on several values for a focus the world holds, naming the first such
    focus and its calls."""
    found: list[Problem] = []
    said: set[URIRef] = set()
    carried = carried_variables(defs.steps)  # a proposal's choice: given by the run
    for wf in sorted(defs.workflows.values(), key=lambda w: str(w.iri)):
        foci: list[Node] | None = None
        for step in wf.reachable():
            if not isinstance(step, ActionStep) or not _judged(step) or step.iri in said:
                continue
            if carried.get(step.iri, set()) & step.arg_vars:
                continue  # ?flight is the proposal's one choice, not the pattern's solutions
            assert step.tool is not None and step.requires is not None
            if foci is None:
                foci = _foci(store, wf.focus_type)
            subject = step.tool.effect.subject if step.tool.effect else None
            acting = [a.name for a in step.tool.args if a.sent or a.name == subject]
            for focus in foci:
                calls = _calls(store, step, acting, focus)
                if len(calls) > 1:
                    said.add(step.iri)
                    found.append(_problem(defs, step, focus, calls))
                    break
    return found


def _foci(store: Store, focus_type: URIRef) -> list[Node]:
    """The world's nodes of ``focus_type``, at most :data:`_FOCI`, by look-ups of the class:
    never a query over the world; none where the store has no look-ups of its own."""
    found: dict[Node, None] = {}
    try:
        for s, _, _, _ in store.match(None, RDF.type, focus_type, None):
            if isinstance(s, URIRef):
                found[s] = None
                if len(found) >= _FOCI:
                    break
    except NotImplementedError:  # a store with no look-ups of its own (sparql:URL)
        return []
    return sorted(found, key=str)


def _judged(step: ActionStep) -> bool:
    """A step whose pattern may give its tool several calls: not a ``forEach``, with a tool
    and a ``horis:requires`` binding an argument's variable other than ``?this``."""
    if step.for_each or step.requires is None or step.tool is None:
        return False
    return any(v != "this" and v in step.requires.binds for v in step.arg_vars)


def _calls(
    store: Store, step: ActionStep, acting: list[str], focus: Node
) -> list[tuple[tuple[str, Node], ...]]:
    """The distinct calls ``step`` would make for ``focus`` (the arguments that are sent or
    name the effect's subject, as the runtime tells calls apart), in the world as it is."""
    assert step.requires is not None
    calls: dict[tuple[tuple[str, Node], ...], None] = {}
    for sol in store.solutions(step.requires, {"this": focus}):
        key = tuple((a, sol[step.var_for(a)]) for a in acting if step.var_for(a) in sol)
        calls[key] = None
    return sorted(calls, key=str)  # a stable order, whatever the store answers in


def _problem(
    defs: Definitions, step: ActionStep, focus: Node, calls: list[tuple[tuple[str, Node], ...]]
) -> Problem:
    assert step.tool is not None
    tool = defs.name(step.tool.iri)
    shown = "; ".join(
        ", ".join(f"{a}={defs.name(v) if isinstance(v, URIRef) else v.n3()}" for a, v in c)
        for c in calls[:3]
    ) + ("; …" if len(calls) > 3 else "")
    then = (
        f"the instance goes on at its horis:onError {defs.name(step.on_error)}"
        if step.on_error is not None
        else "the instance fails"
    )
    return defs._sources.problem(
        "warning",
        step.iri,
        f"the world gives {defs.name(focus)} {len(calls)} solutions of its horis:requires for "
        f"the arguments of {tool} ({shown}), and a step without horis:forEach true fails when "
        f"it has several: {then}, after the steps before it have acted",
        f"write horis:forEach true to call {tool} once per solution, or narrow horis:requires "
        "to one",
        at=(step.iri, HORIS.requires, None),
    )
