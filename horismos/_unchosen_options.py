"""A ProposalStep's way out to an action step that acts on an option nobody chose: one of the
hazards ``validate`` warns of (:mod:`._hazards` lists them), a walk of the flow of its own.

A proposal's ``horis:fallback`` (or ``horis:onError``) that goes to an action step reading the
proposal's ``horis:as`` variable: the variable is bound only when the choice is taken; on the
way a fallback goes nothing was chosen, so the step's pattern binds ``?option`` itself, to any
node it allows: with several it failed as ambiguous, with one it acted on an option no ranker
and no person chose — unless it reads the variable through a triple a wait on the way holds
it to (``horis:until "?this :supervisorPick ?adjuster"``: the person's answer), or through one
that links it to ``?this`` (``?this :assignedAdjuster ?adjuster``: the focus's own, not any
node). The same when its ``horis:next`` is an action step that never reads the variable (in
its pattern, by ``horis:bind``, or as the argument of its name): the choice is made, then
dropped, and the step binds its own (``?flight`` for ``?option``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from rdflib import URIRef, Variable

from ._hazards import flow_graph
from ._model import ActionStep, ProposalStep, Step, WaitStep
from ._preconditions import Precondition, group_triples
from ._term_kinds import algebra_triples

__all__ = ["unchosen_options"]


def unchosen_options(
    steps: Mapping[URIRef, Step],
) -> Iterator[tuple[ProposalStep, str, URIRef, URIRef]]:
    """``(proposal, "next" | "fallback" | "onError", target, reached)`` for each way out of a
    proposal to an action step that acts on an option nobody chose: ``next`` to one that
    never reads the proposal's variable (``reached`` is ``target``); ``fallback`` /
    ``onError`` (taken without a choice) to one that does — at ``target`` or any step after
    it on the way (a wait's ``horis:onTimeout``, a decision's branch), short of a proposal
    binding the variable again."""
    flow = flow_graph(steps)

    def reads(step: ActionStep, var: str) -> bool:
        read = set(step.requires.variables if step.requires else ())
        given = dict(step.binds)
        # an argument no horis:bind maps is given by the variable of its own name
        named = {a.name for a in step.tool.args if a.name not in given} if step.tool else set()
        return var in read | set(given.values()) | named

    for step in steps.values():
        if not isinstance(step, ProposalStep) or step.as_var == "this":
            continue  # horis:as "this" is an error of its own; ?this is always given
        reached = steps.get(step.next) if step.next is not None else None
        if isinstance(reached, ActionStep) and not reads(reached, step.as_var):
            yield step, "next", reached.iri, reached.iri
        for how, target in (("fallback", step.fallback), ("onError", step.on_error)):
            if target is None:
                continue
            seen: set[URIRef] = {step.iri}
            queue: list[tuple[URIRef, frozenset[tuple[object, ...]]]] = [(target, frozenset())]
            for at, answered in queue:  # the list grows as it is walked: each step once
                if at in seen:
                    continue
                seen.add(at)
                here = steps.get(at)
                if isinstance(here, ProposalStep) and here.as_var == step.as_var:
                    continue  # chosen again from here on
                if isinstance(here, WaitStep) and here.until is not None:
                    answered |= _naming(here.until, step.as_var)
                if (
                    isinstance(here, ActionStep)
                    and reads(here, step.as_var)
                    and not (
                        here.requires
                        and (
                            answered & _naming(here.requires, step.as_var)
                            or _of_focus(here.requires, step.as_var)
                        )
                    )
                ):
                    yield step, how, target, at
                    continue
                queue.extend((nxt, answered) for nxt in flow.get(at, ()))


def _of_focus(pattern: Precondition, var: str) -> bool:
    """Whether ``pattern`` binds ``?var`` by a triple that links it to ``?this`` itself
    (``?this :assignedAdjuster ?adjuster``): the focus's own value, not any node the pattern
    allows."""
    v, this = Variable(var), Variable("this")
    return any(
        (s, o) in ((this, v), (v, this))
        for s, _, o in group_triples(pattern.select.algebra, minus=False)
    )


def _naming(pattern: Precondition, var: str) -> frozenset[tuple[object, ...]]:
    """The triple patterns of ``pattern`` that name ``?var``. A step after a wait that reads
    ``?var`` through a triple of the wait's ``horis:until`` (``?this :supervisorPick
    ?adjuster``) reads the answer the person gave, not whatever node its pattern allows."""
    if var not in pattern.binds:
        return frozenset()
    v = Variable(var)
    return frozenset(t for t in algebra_triples(pattern.select.algebra) if v in t)
