"""A step whose tool is not idempotent that nothing stops on a second run of the same focus.

Why: the shipped lab workflow's ``:Escalate`` paged the on-call clinician through a tool that
is not idempotent, with no ``horis:requires`` on what the page writes. ``run --focus :k1``
again on a world kept on disk (``agent.run(…, again=True)``, ``serve``'s ``"again": true``)
starts another instance on purpose, as docs/deployment.md says, and that instance found the
step's pattern holding as the first had: it paged the clinician again about the same result,
and the definitions validated. What limits a rerun is the step's guard, and nothing told a
modeler who forgot it.

A warning at each action step whose tool is not idempotent that a second instance on the same
focus reaches and calls again. What stops it, read as :func:`~._hazards.gated` reads a guard on
a loop (``FILTER NOT EXISTS``, ``MINUS``, ``OPTIONAL … FILTER (!BOUND(?v))`` on a property the
tool writes, or one writing it entails):

- its own or its tool's ``horis:requires`` forbids what the tool writes, or forbids it of the
  node written, each item of a ``horis:forEach`` too (:func:`~._tripped_guards.shut_once_done`,
  passed in: that module builds on this one's);
- every way to it from a workflow's start is closed on a rerun: it passes a decision rule or a
  wait's ``horis:until`` that forbids what the tool wrote, or goes on by the ``horis:next`` of
  an action step (not a ``horis:forEach``) that shuts itself so — the first instance went on
  there after its call succeeded, so the second stops there, blocked;
- ``horis:requiresApproval`` on the tool: an approval holds for one instance and one call
  (:func:`~._policy.pending` uses it up), so a second instance waits for a person's new
  approval before it can act;
- ``horis:eachRun true`` on the step: acting on every run is meant (a notice sent each time).

A tool that commits through an adapter is left out (its writes are its adapter rules', not
told here, as :mod:`._guard_writes` leaves it out), and so is ``horis:sideEffect
horis:ReadOnly`` on a tool that is not idempotent, said at the tool (:mod:`._hazards`): one
mistake said once. So is a step the loader said wrong already (``said``): its guard is one its
call never closes (:mod:`._guard_writes`), or a triple requiring what only its tool writes
(:mod:`._own_writes`), where ``FILTER NOT EXISTS`` was meant, or a pattern cut off by a
``#`` on one line (:mod:`._pattern_comments`); or its tool says ``horis:commitScope`` with no
``horis:adapter``, meant to commit through one. Of a guard on what no tool writes and no file
states, the loader keeps this warning for a world that states it (a cancellation: a condition
of the domain, no guard), where the guard's own warning is dropped. The check reads the built
steps once, at load: nothing here is on a run's step path.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Iterator, Mapping
from dataclasses import dataclass

from rdflib import URIRef, Variable
from rdflib.term import Node

from ._guard_writes import forbids_on, negated_triples, unused_variable
from ._hazards import Hazard
from ._model import ActionStep, DecisionStep, Step, WaitStep, Workflow, ways_out
from ._vocab import HORIS

__all__ = ["unguarded_reruns"]


def unguarded_reruns(
    steps: Mapping[URIRef, Step],
    workflows: Mapping[URIRef, Workflow],
    widen: Callable[[URIRef], Iterable[URIRef]],
    name: Callable[[Node], str],
    shut_once_done: Callable[[ActionStep], bool],
    said: Container[URIRef],
) -> Iterator[Hazard]:
    """A warning at each action step a second instance on the same focus reaches and calls
    its tool, not idempotent, again (the module's docstring says what stops one). ``widen``:
    what writing a property entails (:func:`~._hazards.gated`'s); ``said``: steps the loader
    already said wrong (the module's docstring says which)."""
    judged: list[tuple[ActionStep, frozenset[_Written]]] = []
    for step in sorted(steps.values(), key=lambda s: str(s.iri)):
        if not isinstance(step, ActionStep) or step.each_run or step.iri in said:
            continue
        tool = step.tool
        if tool is None or tool.idempotent or tool.adapter is not None or tool.requires_approval:
            continue
        if tool.side_effect == HORIS.ReadOnly:
            continue  # said at the tool: read-only, yet acting when called
        if _shuts_itself(step, widen, shut_once_done):
            continue
        effect = tool.effect
        asserted = effect.asserts if effect is not None else ()
        on_this = effect is not None and step.var_for(effect.subject) == "this"
        written = frozenset(
            (w, on_this) for a in asserted for w in (a.property, *widen(a.property))
        )
        judged.append((step, written))
    if not judged:
        return  # the flow is walked only for a step that may act again
    shut = {
        iri
        for iri, s in steps.items()
        if isinstance(s, ActionStep) and not s.for_each and _shuts_itself(s, widen, shut_once_done)
    }
    flow = _Flow.of(steps)
    starts = sorted({w.start for w in workflows.values()}, key=str)
    # one walk for each set of written properties an edge forbids: most steps share one
    reached: dict[frozenset[_Written], set[URIRef]] = {}
    for step, written in judged:
        closing = written & flow.forbidden
        if closing not in reached:
            reached[closing] = flow.reached(starts, shut, closing)
        if step.iri in reached[closing]:
            yield _rerun(step, name)


def _shuts_itself(
    step: ActionStep,
    widen: Callable[[URIRef], Iterable[URIRef]],
    shut_once_done: Callable[[ActionStep], bool],
) -> bool:
    """Whether ``step``'s own or its tool's ``horis:requires`` forbids what its tool writes,
    of the node it writes it on (:func:`~._guard_writes.forbids_on`: the step's variable for
    the effect's subject, the tool's argument), or forbids of the node written what the tool
    surely writes there (``shut_once_done``: also each item of a ``horis:forEach``): once
    its call has succeeded, a second instance does not pass it. A guard on the right
    property of another node (``FILTER NOT EXISTS { ?order :refundRef ?r }`` where the
    refund is written on ``?refund``) held after the call, and was taken as one."""
    tool = step.tool
    effect = tool.effect if tool is not None else None
    if tool is None or effect is None or tool.adapter is not None:
        return shut_once_done(step)
    props = {w for a in effect.asserts for w in (a.property, *widen(a.property))}
    subject = effect.subject or None
    var = step.var_for(subject) if subject else None
    bound = step.requires.binds if step.requires is not None else set()
    # a variable nothing binds (?thiss): the unbound argument's error says it; any node
    on: Variable | None = Variable(var) if var in {*bound, "this"} else None
    arg: Variable | None = Variable(subject) if subject else None
    return (
        (
            step.requires is not None
            and forbids_on(step.requires.select.algebra, [(p, on) for p in props])
        )
        or (
            tool.requires is not None
            and forbids_on(tool.requires.select.algebra, [(p, arg) for p in props])
        )
        or shut_once_done(step)
    )


@dataclass(frozen=True)
class _Flow:
    """The flow's edges, each with what a second instance must find absent to take it: a
    decision's rule that forbids what it reads (``FILTER NOT EXISTS``, ``MINUS``, ``OPTIONAL``
    with ``!BOUND``: :func:`_forbidden`, node-aware), a wait's ``horis:next`` when its
    ``horis:until`` does and no timeout goes on there. Read once for every step judged."""

    edges: dict[URIRef, list[tuple[URIRef, URIRef, frozenset[_Written]]]]
    """Each step's ``(predicate, target, forbidden)``."""
    forbidden: frozenset[_Written]
    """What any edge forbids: what else a step writes closes no edge."""

    @classmethod
    def of(cls, steps: Mapping[URIRef, Step]) -> _Flow:
        edges: dict[URIRef, list[tuple[URIRef, URIRef, frozenset[_Written]]]] = {}
        for iri, s in steps.items():
            out = edges.setdefault(iri, [])
            for p, t in ways_out(s):
                if p != HORIS.when:  # a rule's edge is its own, below
                    out.append((p, t, _until_forbids(s) if p == HORIS.next else frozenset()))
            for r in s.rules if isinstance(s, DecisionStep) else ():
                out.append((HORIS.when, r.next, _forbidden(r.requires.select.algebra)))
        return cls(edges, frozenset(w for out in edges.values() for *_, f in out for w in f))

    def reached(
        self, starts: Iterable[URIRef], shut: Container[URIRef], written: frozenset[_Written]
    ) -> set[URIRef]:
        """The steps a second instance, started where a workflow starts, can reach once the
        first has called a tool that wrote ``written``: no edge is taken whose rule or wait
        forbids what was written, nor the ``horis:next`` of a step in ``shut`` (the first
        instance went on by it after its call succeeded, so the second stops there, blocked;
        one whose call failed went by its ``horis:onError``, which stays open)."""
        seen = set(starts)
        todo = list(seen)
        while todo:
            here = todo.pop()
            for p, there, forbidden in self.edges.get(here, ()):
                if there in seen or forbidden & written:
                    continue
                if here in shut and p not in (HORIS.onError, HORIS.onPartial):
                    continue
                seen.add(there)
                todo.append(there)
        return seen


_Written = tuple[URIRef, bool]
"""A property written, and whether on the focus (``?this``): what a rule or a wait on the
way can forbid, node-aware as far as another step's pattern can name the node."""


def _forbidden(algebra: object) -> frozenset[_Written]:
    """What a rule or a wait's until forbids (:func:`~._guard_writes.negated_triples`,
    ``OPTIONAL … !BOUND`` too), each property with whether it is forbidden of ``?this``:
    it stops a second instance only where a tool wrote it on the node so tested — on the
    focus for ``?this``; a node of another variable may be the one written on another."""
    return frozenset(
        (p, s == _THIS)
        for s, p, _ in negated_triples(algebra, optional=True)
        if isinstance(p, URIRef)
    )


_THIS = Variable("this")


def _until_forbids(step: Step) -> frozenset[_Written]:
    """What a wait's ``horis:until`` forbids, when its ``horis:next`` is taken only once it
    holds: no ``horis:timeout``, or one with a ``horis:onTimeout`` of its own (without one,
    the timeout goes on at ``horis:next`` as if it held). Nothing for another kind of step."""
    if not isinstance(step, WaitStep) or step.until is None:
        return frozenset()
    if step.timeout is not None and step.on_timeout is None:
        return frozenset()
    return _forbidden(step.until.select.algebra)


def _rerun(step: ActionStep, name: Callable[[Node], str]) -> Hazard:
    """The warning: what a rerun does, and the guard to add, written with the variable the
    step gives the node its tool writes on and a property the tool writes there."""
    tool = step.tool
    assert tool is not None  # only steps with their tool are judged
    me, called = name(step.iri), name(tool.iri)
    effect = tool.effect
    asserts = effect.asserts if effect is not None else ()
    written = next((a for a in asserts if not a.optional), asserts[0] if asserts else None)
    silence = (
        f"if acting again on every run is meant (a notice sent each time), declare "
        f"horis:eachRun true on {me}"
    )
    if effect is None or written is None:
        return Hazard(
            step.iri,
            f"its tool {called} is not idempotent and writes nothing, so nothing can stop "
            f"{me} on a second run of the same focus: run --focus again on a world kept on "
            'disk (agent.run(…, again=True), serve\'s "again": true) starts another instance, '
            f"which reaches {me} as the first did and calls {called} again: it acts twice on "
            "the same subject",
            f"declare in {called}'s horis:effect what its call records (horis:asserts) and "
            f"add FILTER NOT EXISTS on it to {me}'s horis:requires; {silence}",
        )
    on = step.var_for(effect.subject)
    used = step.requires.variables if step.requires is not None else frozenset()
    free = unused_variable(used, "x")
    guard = f"FILTER NOT EXISTS {{ ?{on} {name(written.property)} ?{free} }}"
    return Hazard(
        step.iri,
        f"its tool {called} is not idempotent and nothing stops {me} on a second run of the "
        f"same focus: run --focus again on a world kept on disk (agent.run(…, again=True), "
        f'serve\'s "again": true) starts another instance, which reaches {me} as the first '
        f"did — nothing on the way, its own horis:requires included, holds only while what "
        f"{called} writes on ?{on} is absent — and calls {called} again: it acts twice on the "
        "same subject",
        f"add {guard} to {me}'s horis:requires, so a rerun stops there, blocked, once "
        f"{called} has acted; {silence}",
    )
