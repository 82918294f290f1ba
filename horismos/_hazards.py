"""Declarations that run but may do harm an author did not mean: ``validate`` warns about them,
and refuses the one certain to (a cycle that never ends through a tool that is not idempotent).

- ``horis:retries`` on a tool that is not idempotent. Retries there repeat only a call that
  never reached the tool (see :mod:`._attempt`); one that was sent is never repeated, so the
  author should know the retries will not cover a timeout.
- ``horis:sideEffect horis:ReadOnly`` on a tool that is not idempotent (:func:`_read_only_acting`):
  a policy allowing only reads lets a tool that acts when called through.
- A cycle made only of DecisionSteps (:func:`decision_loops`): nothing on it changes the
  world, so an instance that goes round it comes back to a decision that reads what it read
  before, and the run stops it as a loop that would never end. The loader makes it an error.
- A cycle of steps through a tool that is not idempotent. Each time round calls it again; the
  loop ends only when a ``horis:requires`` stops holding, or at the instance's step budget
  (``horis:maxSteps``). A loop back through a wait only a person ends goes round once per
  answer and is left out, unless its ``horis:until``, once answered, holds ever after — and
  then a step is still left out when what gates it (its own or its tool's ``horis:requires``,
  or the rules that lead to it) holds only while a tool on the loop has not written
  (``FILTER NOT EXISTS``, ``MINUS``, ``OPTIONAL { … ?t } FILTER (!BOUND(?t))``:
  :func:`gated`): the second time round stops there. A pattern that only reads what the
  tool writes (an ``OPTIONAL``) does not stop it. When the step's own ``horis:onError`` leads
  back onto the loop, a call that failed wrote nothing: the gate closes after a failure only
  when every way from that edge back to the step passes a step of another tool that writes
  what the gate requires absent and goes on by its ``horis:next`` (it succeeded: a failure
  recorded on the way back, ``:rejectionReason``; :func:`_failure_route`). Otherwise the
  warning names the way back that writes nothing (``:Pay —onError→ :Repick → :Pay``): only
  a call that succeeds, or the step budget, ends it.
- A domain shape that requires a property (``sh:minCount``) a step of the workflow writes, on
  a node a step before it writes without it
  (:func:`~._shape_hazards.required_before_written`). The gate judges the node as the earlier
  step leaves it, so it rejects that step's result — after its tool has acted — unless the
  world already held the property: the load cannot know that.
- A ProposalStep whose ``horis:fallback`` (or ``horis:onError``) goes to an action step that
  reads the proposal's ``horis:as`` variable, or whose ``horis:next`` goes to one that never
  reads it (:func:`~._unchosen_options.unchosen_options`): on the way a fallback goes nothing
  was chosen, so the step binds the variable itself, to any node its pattern allows; the
  choice a ``horis:next`` leads from is dropped.
- A workflow whose ``horis:maxSteps`` is below the fewest steps any of its instances must run
  to end (:func:`fewest_steps`): every step entered counts, so every instance stopped with
  ``StepBudgetExceeded`` before it could end — after its first tools had acted — and the
  run's message spoke of a loop where there was none. The loader makes it an error.
- A ``horis:onError`` that names its own step: read as "try again", it stops the instance at
  once (nothing was done since it was last there).
- A wait with a ``horis:timeout`` and no ``horis:onTimeout`` whose next step does not test
  again what its ``horis:until`` tests: past the timeout it goes on as if the until had held.
- A property a domain shape allows one value of, written on the focus by two steps on one
  path (:func:`~._shape_hazards.written_twice`): the gate rejects the later step's result
  every time.

The checks read the built steps and tools and say what they found; the loader words and
locates the warnings like its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import pairwise

from rdflib import RDF, URIRef, Variable
from rdflib.term import Node

from ._digraph import Digraph, add_edge, shortest_path, simple_cycles, strongly_connected
from ._guard_writes import forbids_on
from ._model import (
    DEFAULT_MAX_STEPS,
    ActionStep,
    DecisionStep,
    ProposalStep,
    Step,
    Tool,
    WaitStep,
    Workflow,
    ways_out,
)
from ._preconditions import Precondition
from ._term_kinds import algebra_parts, algebra_triples, gating_reads, negated_reads
from ._vocab import HORIS

__all__ = [
    "Hazard",
    "cycle_through",
    "decision_loops",
    "endless_loops",
    "fewest_steps",
    "flow_graph",
    "gated",
    "hazards",
    "node_hazards",
    "path_text",
    "written_on_focus",
]


@dataclass(frozen=True)
class Hazard:
    """One declaration that may do harm when run, found on the built steps and tools; the loader
    words and locates it like its own problems, as a warning unless ``harmful``."""

    node: URIRef
    message: str
    hint: str
    predicate: URIRef | None = None
    """The statement of ``node`` it is about, when one is: where it is reported."""
    asserted: URIRef | None = None
    """The property of the tool ``node``'s effect it is about, when one is: it is reported at
    that ``horis:asserts``."""
    harmful: bool = False
    """Certain to do harm when run (a tool that is not idempotent called over and over): an
    error, not a warning."""


def flow_graph(steps: Mapping[URIRef, Step]) -> Digraph[URIRef]:
    """Every edge a step can take (:func:`~._model.ways_out`)."""
    flow: Digraph[URIRef] = {}
    for step in steps.values():
        flow.setdefault(step.iri, {})
        for _, t in ways_out(step):
            add_edge(flow, step.iri, t)
    return flow


def cycle_through(steps: Mapping[URIRef, Step], step: URIRef) -> list[URIRef]:
    """The shortest loop of the flow from ``step`` back to it (``[step]`` when none)."""
    flow = flow_graph(steps)
    loops = [
        path for nxt in flow.get(step, ()) if (path := shortest_path(flow, nxt, step)) is not None
    ]
    return [step, *min(loops, key=len)] if loops else [step]


def decision_loops(steps: Mapping[URIRef, Step]) -> Iterator[list[URIRef]]:
    """Each cycle of the flow made only of DecisionSteps, as the shortest loop from its first
    step (by IRI) back to it: ``[a, b, a]``, ``[a, a]`` for a step that goes to itself."""
    flow = flow_graph(steps)
    decisions: Digraph[URIRef] = {}
    for iri, step in steps.items():
        if isinstance(step, DecisionStep):
            decisions.setdefault(iri, {})
            for nxt in flow.get(iri, ()):
                if isinstance(steps.get(nxt), DecisionStep):
                    add_edge(decisions, iri, nxt)
    for component in strongly_connected(decisions):
        first = min(component, key=str)
        if len(component) > 1 or first in decisions[first]:
            yield cycle_through({s: steps[s] for s in component}, first)


def _read_only_acting(tool: Tool) -> Hazard:
    """``horis:sideEffect horis:ReadOnly`` on a tool not declared idempotent: read-only means a
    second call changes nothing outside the graph, which is what idempotent says; a tool not
    so declared acts when called (it reserves, sends, charges), and a run under ``--allow
    ReadOnly`` (a policy meant to let nothing act) called it, the catalog and ``serve`` listing
    it as one that only reads."""
    return Hazard(
        tool.iri,
        "horis:sideEffect horis:ReadOnly on a tool that is not idempotent: read-only means "
        "calling it again changes nothing outside the graph, yet the tool is declared to act "
        "when called (horis:idempotent is false unless declared true), and a policy allowing "
        "only ReadOnly (--allow ReadOnly) would let every call of it through",
        "declare horis:idempotent true if it only reads, else declare horis:sideEffect "
        "horis:HostStateWrite (or horis:ExternalCommit for a system of record) or drop "
        "horis:sideEffect",
        HORIS.sideEffect,
    )


def node_hazards(
    tools: Iterable[Tool], steps: Mapping[URIRef, Step], name: Callable[[Node], str]
) -> Iterator[Hazard]:
    """The hazards a tool or a step has on its own, read from its own statements alone
    (retries or ``horis:ReadOnly`` on a tool that is not idempotent, an edge back to the
    step itself): the loader says them beside its errors too. Held back with the flow's
    hazards until every error was mended, they met the author who had mended them as new
    warnings on the next run, where ``validate`` says every mistake in one pass."""
    for tool in tools:
        if tool.retries and not tool.idempotent:
            yield Hazard(
                tool.iri,
                f"horis:retries {tool.retries} on a tool that is not idempotent: a call is "
                "retried only when it never reached the tool (the connection was refused, the "
                "MCP server did not start); a call that was sent is never repeated — a timeout "
                "or lost connection is OutcomeUnknown and takes horis:onError, an error the "
                "tool answers with is not retried",
                "declare horis:idempotent true if calling it twice does no harm, or drop "
                "horis:retries",
                HORIS.retries,
            )
        if tool.side_effect == HORIS.ReadOnly and not tool.idempotent:
            yield _read_only_acting(tool)
    for each in steps.values():
        if each.on_error == each.iri:
            yield _own_error(each, name)
        if isinstance(each, WaitStep) and each.on_timeout == each.iri:
            yield _own_timeout(each, name)
        if isinstance(each, WaitStep) and each.next == each.iri:
            me = name(each.iri)
            yield Hazard(
                each.iri,
                f"horis:next {me} is the wait itself: once its horis:until holds the instance "
                f"comes straight back to {me}, where it holds still, with nothing done since, "
                "and the run stops it there as a loop that never ends — the instance fails "
                "once answered",
                "send horis:next to the step that acts on the answer",
                HORIS.next,
            )


def hazards(
    steps: Mapping[URIRef, Step],
    workflows: Mapping[URIRef, Workflow],
    widen: Callable[[URIRef], Iterable[URIRef]],
    name: Callable[[Node], str],
    shut_once_done: Callable[[ActionStep], bool],
) -> Iterator[Hazard]:
    """Every hazard of the built flow, for the loader to word and locate, once the
    definitions hold no error (a step it found broken misleads them); each kind is found by
    a function of its own, named in the module's docstring. ``widen`` is what
    :func:`endless_loops` takes; ``shut_once_done``, whether a step's own guard forbids what
    its tool surely writes on the focus, or on each item of a ``horis:forEach``
    (:func:`._tripped_guards.shut_once_done`), which
    reads guards with what this module's callers build on it."""
    for each in steps.values():
        if isinstance(each, WaitStep) and (h := _timeout_goes_on(each, steps, name)) is not None:
            yield h
    # a loop through a wait only a person ends goes round once per answer, each time round
    # called again by that person's decision, not by the runtime: it is left out — unless
    # its horis:until, once answered, holds ever after, so it never waits again
    asked = {
        s.iri
        for s in steps.values()
        if isinstance(s, WaitStep)
        and set(s.wake) == {HORIS.OperatorInput}
        and (s.until is None or not _stays_true(s.until))
    }
    flow = {s: {t: None for t in out if t not in asked} for s, out in flow_graph(steps).items()}
    budget = min((w.max_steps for w in workflows.values()), default=DEFAULT_MAX_STEPS)
    for component in strongly_connected(flow):
        # a step back to itself by its own horis:onError alone is stopped at once: said above
        looped = len(component) > 1 or any(
            t in component
            for s in component
            if s in steps
            for p, t in ways_out(steps[s])
            if p != HORIS.onError
        )
        if not looped:
            continue
        members = [steps[s] for s in component if s in steps]
        answered_loop = any(
            isinstance(s, WaitStep) and set(s.wake) == {HORIS.OperatorInput} for s in members
        )
        for iri in sorted(component, key=str):
            step = steps.get(iri)
            if not isinstance(step, ActionStep):
                continue
            called = step.tool
            if called is None or called.idempotent:
                continue
            # through a person's wait that does not wait again, the step is left out as such
            # a loop was when what gates it holds only while a tool on the loop has not
            # written (FILTER NOT EXISTS on the property): past the first answer it stops
            # there, so the tool is not called again. When its own horis:onError leads back
            # onto the loop, a failed call wrote nothing: the gate closes after a failure only
            # when every way back from it passes a step that wrote what the gate tests
            shut = gated(iri, members, widen)
            errs_back = step.on_error in component and step.on_error != iri
            failure = (
                _failure_route(step, members, flow, steps, widen) if errs_back and shut else None
            )
            # a step its own guard shuts once its call has succeeded on the focus is called
            # again only after a failure: the way back from that is what a warning names
            if ((answered_loop and shut) or shut_once_done(step)) and failure is None:
                continue
            # gated by what the loop writes, but not after its own call failed: the way back
            # from a failure is what calls it again, so that is the cycle to name
            route = failure or [
                iri,
                *min(
                    (
                        path
                        for nxt in flow[iri]
                        if nxt in component and (path := shortest_path(flow, nxt, iri)) is not None
                    ),
                    key=len,
                ),
            ]
            yield _repeated_call(step, called, route, steps, budget, failure is not None, name)


def _failure_route(
    step: ActionStep,
    members: list[Step],
    flow: Digraph[URIRef],
    steps: Mapping[URIRef, Step],
    widen: Callable[[URIRef], Iterable[URIRef]],
) -> list[URIRef] | None:
    """The shortest way from ``step`` by its ``horis:onError`` back to it (``[step, on_error,
    …, step]``) on which nothing is written that closes its gate (:func:`gated`), or None
    when every way back writes it. A step writes on the way only when its tool writes what
    the gate requires absent, is not ``step``'s own tool (whose call, failed here, may fail
    there too), and the way leaves it by ``horis:next`` — by its ``horis:onError`` it failed
    and wrote nothing. So each writer's exits but ``horis:onError`` are cut from ``flow``
    and the failure's way back is looked for in what is left."""
    if step.on_error is None:
        return None
    own = step.tool.iri if step.tool is not None else None
    writers = {
        s.iri
        for s in members
        if isinstance(s, ActionStep)
        and s.tool is not None
        and s.tool.iri != own
        and gated(step.iri, members, widen, [s])
    }
    unwritten: Digraph[URIRef] = {}
    for here, out in flow.items():
        unwritten.setdefault(here, {})
        for p, there in ways_out(steps[here]) if here in steps else ():
            if there in out and (here not in writers or p == HORIS.onError):
                add_edge(unwritten, here, there)
    back = shortest_path(unwritten, step.on_error, step.iri)
    return [step.iri, *back] if back is not None else None


def _repeated_call(
    step: ActionStep,
    tool: Tool,
    route: list[URIRef],
    steps: Mapping[URIRef, Step],
    budget: int,
    failing: bool,
    name: Callable[[Node], str],
) -> Hazard:
    """The warning that ``step``'s ``tool``, not idempotent, is called each time round the
    cycle ``route`` (``[step, …, step]``). ``failing``: its horis:requires already stops
    holding once the loop writes, but not after its own call failed (which wrote nothing):
    ``route`` is then the way back from its horis:onError on which nothing closes it
    (:func:`_failure_route`), so only a call that succeeds or the step budget ends it, and
    the advice is about that way back, not about the loop's patterns."""
    answered = sorted(
        name(s)
        for s in route
        if isinstance(w := steps.get(s), WaitStep) and set(w.wake) == {HORIS.OperatorInput}
    )
    me, back = name(step.iri), name(route[1])
    again = (
        f"each time it fails it is called again — horis:onError leads back to {me}, and a "
        f"call that failed wrote nothing, so {me}'s horis:requires holds again (nothing "
        "written on the way back closes it) — until a call succeeds"
        if failing
        else "each time round calls it again, until a horis:requires on the way stops holding"
    )
    return Hazard(
        step.iri,
        f"the step is on a cycle ({path_text(route, steps, name)}) and its tool "
        f"{name(tool.iri)} is "
        f"not idempotent: {again} or the instance runs out of steps (horis:maxSteps, {budget} here)"
        + (
            f"; the horis:until of {', '.join(answered)}, once a person's answer makes "
            "it hold, holds every time round after (nothing on it can stop holding), "
            "so it does not wait for another answer"
            if answered
            else ""
        ),
        (
            f"record the failure on the error path (a step from {back} onward whose tool writes "
            f"it, as a rejection does) and have {me}'s horis:requires require its absence "
            "(FILTER NOT EXISTS), or send horis:onError to a step off the loop, or "
            if failing
            else "make the loop's horis:requires depend on something the tool writes, or "
        )
        + f"declare {name(tool.iri)} horis:idempotent true if calling it again does no harm",
    )


def path_text(
    route: list[URIRef], steps: Mapping[URIRef, Step], name: Callable[[Node], str]
) -> str:
    """``route`` as the cycle a warning names, each edge taken only by ``horis:onError``
    marked as such (``:Pay —onError→ :Repick → :Pay``): the way a failure goes round reads
    apart from the way a success does."""
    text = name(route[0])
    for here, there in pairwise(route):
        by = {p for p, t in ways_out(steps[here]) if t == there} if here in steps else set()
        text += f" {'—onError→' if by == {HORIS.onError} else '→'} {name(there)}"
    return text


def endless_loops(
    steps: Mapping[URIRef, Step],
    widen: Callable[[URIRef], Iterable[URIRef]],
    name: Callable[[Node], str],
) -> Iterator[Hazard]:
    """Each cycle of action steps (and decisions) that nothing on it can end: no pattern on
    it (a step's or its tool's horis:requires, a decision's rules) reads a property a tool on
    it writes, or tests a class with ``a`` that writing it may entail (``widen`` gives a
    written property's super-, equivalent and inverse properties, and the classes its
    domains and ranges and their superclasses give a node). Once an instance has gone
    round, it finds the world as every pattern on the cycle last saw it, so it goes round
    again, calling each tool each time, until it has run the steps its workflow allows
    (``horis:maxSteps``) and fails. A wait or a proposal on the cycle may end it (an
    answer, a model's choice), so such a cycle is left alone, as is one whose reads cannot be
    told (a variable predicate or class, a property path). Each cycle is judged by what is
    on it, not by the loops it shares steps with; the shortest such cycle of steps that
    reach each other is reported, at its first action step (by IRI)."""
    flow = flow_graph(steps)
    for component in strongly_connected(flow):
        found = _unended_cycle(component, flow, steps, widen)
        if found is None:
            continue
        cycle, actions = found
        first = actions[0]
        at = cycle.index(first.iri)
        shown = [*cycle[at:-1], *cycle[:at], first.iri]
        tools = sorted({name(a.tool.iri) for a in actions if a.tool is not None})
        # acting each time round unattended: a tool that asks for approval waits for a
        # person's yes to each call, as a wait only a person ends does
        acting = sorted(
            {
                name(a.tool.iri)
                for a in actions
                if a.tool and not a.tool.idempotent and not a.tool.requires_approval
            }
        )
        yield Hazard(
            first.iri,
            f"the cycle {' → '.join(name(x) for x in shown)} never ends by itself: no "
            f"horis:requires or rule on it reads what its tools ({', '.join(tools)}) write, so "
            "each time round it finds the world as it was the time before and goes round "
            "again, calling each tool each time, until the instance has run the steps its "
            "workflow allows (horis:maxSteps) and fails"
            + (
                f"; {', '.join(acting)} {'is' if len(acting) == 1 else 'are'} not idempotent, "
                "so each instance would act that many times over: it is not run"
                if acting
                else ""
            ),
            "give a step on the cycle a horis:requires that stops holding once the work is "
            "done (e.g. FILTER NOT EXISTS on a property its tool writes), or end the cycle: "
            "drop the horis:next that leads back",
            HORIS.next if first.next == shown[1] else None,
            harmful=bool(acting),
        )


def _unended_cycle(
    component: set[URIRef],
    flow: Digraph[URIRef],
    steps: Mapping[URIRef, Step],
    widen: Callable[[URIRef], Iterable[URIRef]],
) -> tuple[list[URIRef], list[ActionStep]] | None:
    """The shortest cycle of ``component`` that nothing on it can end (:func:`endless_loops`),
    with its action steps by IRI; None when there is none. Each cycle is judged by its own
    steps: judged as the whole component, a decision's branch that loops back alone (urgent:
    dispense, then decide again) passed as guarded by a pattern on another branch (the check
    it takes otherwise reads what the check writes), and dispensed up to the step budget."""
    order = sorted(component, key=str)
    said = {s: _reads_and_writes(steps[s], widen) if s in steps else None for s in order}
    found: tuple[list[URIRef], list[ActionStep]] | None = None
    for cycle in simple_cycles(flow, order):
        if found is not None and len(cycle) >= len(found[0]):
            continue
        members = [steps[s] for s in dict.fromkeys(cycle) if s in steps]
        if len(cycle) == 2 and all(
            p == HORIS.onError for p, t in ways_out(members[0]) if t == cycle[0]
        ):  # a step back to itself by its own horis:onError alone is stopped at once
            continue
        actions = sorted(
            (s for s in members if isinstance(s, ActionStep)), key=lambda s: str(s.iri)
        )
        if not actions or any(isinstance(s, WaitStep | ProposalStep) for s in members):
            continue
        reads: set[URIRef] = set()
        writes: set[URIRef] = set()
        for s in cycle:
            if (told := said[s]) is None:  # what it reads or writes cannot be told
                break
            reads |= told[0]
            writes |= told[1]
        else:
            if not reads & writes:
                found = cycle, actions
    return found


def _reads_and_writes(
    step: Step, widen: Callable[[URIRef], Iterable[URIRef]]
) -> tuple[set[URIRef], set[URIRef]] | None:
    """What ``step``'s patterns read (a step's or its tool's horis:requires, a decision's
    rules) and what its tool writes, widened to what writing it may entail (``widen``, as
    :func:`endless_loops` says): a cycle on which one is read that another writes may stop
    going round. None when that cannot be told: a step without its tool, a tool that commits
    through an adapter, a pattern whose reads are not all named."""
    written = _written_on_cycle([step], widen)
    if written is None:
        return None
    read: set[URIRef] = set()
    for pre in _patterns(step):
        got = gating_reads(pre.select.algebra)
        if got is None:
            return None
        read |= got
    return read, written


def gated(
    step: URIRef,
    members: Iterable[Step],
    widen: Callable[[URIRef], Iterable[URIRef]],
    writers: Iterable[Step] | None = None,
) -> bool:
    """Whether ``step``, on a cycle of ``members``, is entered only while a tool on the cycle
    has not written (``widen``, as :func:`endless_loops` says): its own or its tool's
    horis:requires, or every rule on the cycle that leads to it, reads what the tool writes
    under ``FILTER NOT EXISTS``, ``MINUS``, or an ``OPTIONAL`` the group's ``FILTER
    (!BOUND(?v))`` requires empty (:func:`~._term_kinds.negated_reads`). A pattern that
    merely reads it (an ``OPTIONAL``) holds the second time round as the first. The test
    for silencing the warning that a tool is called each time round, and, asked of one step
    alone, whether its own guard stops a second run (:mod:`._rerun_guards`);
    :func:`_unended_cycle`, that the cycle may end at all, is too weak for it. ``writers``:
    the steps whose writes count, when not all of ``members`` (one that records a failure on
    the way back from ``step``'s horis:onError: :func:`_failure_route`)."""
    members = list(members)
    written = _written_on_cycle(members if writers is None else writers, widen)
    if not written:
        return False

    def negating(patterns: Iterable[Precondition]) -> bool:
        return any(negated_reads(pre.select.algebra) & written for pre in patterns)

    own = next((s for s in members if s.iri == step), None)
    if own is not None and _own_guard(own, members if writers is None else writers, widen):
        return True
    entering = [s for s in members if any(t == step for _, t in ways_out(s))]
    return bool(entering) and all(
        isinstance(s, DecisionStep)
        and not any(t == step for p, t in ways_out(s) if p != HORIS.when)
        and negating(r.requires for r in s.rules if r.next == step)
        for s in entering
    )


def _own_guard(
    own: Step, writers: Iterable[Step], widen: Callable[[URIRef], Iterable[URIRef]]
) -> bool:
    """Whether ``own``'s patterns forbid what ``writers``' tools write, of the node written
    (:func:`~._guard_writes.forbids_on`): its own tool's on the variable it gives the effect's
    subject (in its tool's ``horis:requires``, the argument), another's on ``?this`` when
    written on the focus, else on a node its pattern cannot name. A decision's rules, which
    call nothing, read another step's writes as such. A guard on the right property of
    another node (``?order`` where the refund is written on ``?refund``) stops nothing."""
    pairs: set[tuple[URIRef, Variable | None]] = set()
    tool_pairs: set[tuple[URIRef, Variable | None]] = set()
    for w in writers:
        if not isinstance(w, ActionStep) or w.tool is None or w.tool.effect is None:
            continue
        effect = w.tool.effect
        written = {x for a in effect.asserts for x in (a.property, *widen(a.property))}
        var = w.var_for(effect.subject) if effect.subject else None
        if var not in {*(w.requires.binds if w.requires is not None else ()), "this"}:
            var = None  # a variable nothing binds (?thiss): its own error says it
        if w.iri == own.iri:
            pairs |= {(p, Variable(var) if var else None) for p in written}
            arg = Variable(effect.subject) if effect.subject else None
            tool_pairs |= {(p, arg) for p in written}
        else:
            elsewhere = _THIS if var == "this" else None
            pairs |= {(p, elsewhere) for p in written}
            tool_pairs |= {(p, None) for p in written}
    if isinstance(own, ActionStep):
        tool = own.tool
        return (own.requires is not None and forbids_on(own.requires.select.algebra, pairs)) or (
            tool is not None
            and tool.requires is not None
            and forbids_on(tool.requires.select.algebra, tool_pairs)
        )
    return any(forbids_on(pre.select.algebra, pairs) for pre in _patterns(own))


_THIS = Variable("this")


def _patterns(step: Step) -> list[Precondition]:
    """The patterns ``step`` reads the world by: an action step's and its tool's
    horis:requires, a decision's rules."""
    if isinstance(step, ActionStep):
        found = [step.requires, step.tool.requires if step.tool is not None else None]
        return [pre for pre in found if pre is not None]
    if isinstance(step, DecisionStep):
        return [r.requires for r in step.rules]
    return []


def _written_on_cycle(
    members: Iterable[Step], widen: Callable[[URIRef], Iterable[URIRef]]
) -> set[URIRef] | None:
    """What the tools of ``members`` write, widened (``widen``); None when that cannot be
    told: a step without its tool, a tool that commits through an adapter."""
    written: set[URIRef] = set()
    for s in members:
        if isinstance(s, ActionStep):
            if s.tool is None or s.tool.adapter is not None:
                return None
            for a in s.tool.effect.asserts if s.tool.effect else ():
                written.update({a.property, *widen(a.property)})
    return written


def written_on_focus(step: ActionStep) -> set[URIRef]:
    """The properties ``step``'s tool writes on the instance's focus."""
    effect = step.tool.effect if step.tool is not None else None
    if effect is None or step.var_for(effect.subject) != "this":
        return set()
    return {a.property for a in effect.asserts}


def _own_error(step: Step, name: Callable[[Node], str]) -> Hazard:
    """``horis:onError`` to the step itself. It reads as "try again", but the instance comes
    back with nothing done since its last visit, so the run stops it there as a loop that
    would never end (``_runner._livelock``): the call is not made again and the instance
    fails. ``horis:retries`` on the tool is what tries a failed call again."""
    me = name(step.iri)
    return Hazard(
        step.iri,
        f"horis:onError {me} is the step itself: when it fails the instance comes straight "
        f"back to {me} with nothing done since, and the run stops it there as a loop that "
        "would never end — the failed call is not tried again, and the instance fails",
        "horis:retries on the tool is what tries a failed call again (never one that may "
        "have reached a tool that is not idempotent); send horis:onError to a step that "
        "deals with the failure, such as a horis:WaitStep for an operator, or leave it out",
        HORIS.onError,
    )


def _own_timeout(wait: WaitStep, name: Callable[[Node], str]) -> Hazard:
    """``horis:onTimeout`` to the wait itself. It reads as "wait again", but the instance
    comes back with nothing done since its last visit, so the run stops it there as a loop
    that would never end (``_runner._livelock``): at its first timeout the instance fails."""
    me = name(wait.iri)
    return Hazard(
        wait.iri,
        f"horis:onTimeout {me} is the wait itself: when it times out the instance comes "
        f"straight back to {me} with nothing done since, and the run stops it there as a loop "
        "that would never end — the instance fails at its first timeout instead of waiting "
        "again",
        f"to remind someone and wait again, send horis:onTimeout to an action step that "
        f"reminds and leads back (horis:next {me}); to wait with no time limit, leave "
        "horis:timeout and horis:onTimeout out",
        HORIS.onTimeout,
    )


def _tested(pre: Precondition) -> set[URIRef]:
    """What a pattern tests of the world: each property it matches (for ``rdf:type``, the
    class), in ``FILTER NOT EXISTS`` too."""
    return {
        o if p == RDF.type and isinstance(o, URIRef) else p
        for _, p, o in algebra_triples(pre.select.algebra)
    }


_MAY_STOP_HOLDING = frozenset(
    {
        "Minus",
        "LeftJoin",
        "Builtin_EXISTS",
        "Builtin_NOTEXISTS",
        "Builtin_BOUND",
        "Builtin_NOW",
        "Builtin_RAND",
        "Group",
        "AggregateJoin",
        "Slice",
    }
)
"""Parts of a pattern's algebra that can make it stop holding as facts are added (a negation,
an OPTIONAL tested with BOUND, the clock, a count, a limit)."""


def _stays_true(pre: Precondition) -> bool:
    """Once it holds, ``pre`` holds ever after: facts are only added (an effect adds values,
    a person's answer adds facts), and nothing in it reads what is not there, the clock or a
    count (:data:`_MAY_STOP_HOLDING`)."""
    from rdflib.plugins.sparql.parserutils import CompValue

    return not any(
        isinstance(x, CompValue) and x.name in _MAY_STOP_HOLDING
        for x in algebra_parts(pre.select.algebra)
    )


def _timeout_goes_on(
    wait: WaitStep, steps: Mapping[URIRef, Step], name: Callable[[Node], str]
) -> Hazard | None:
    """A wait with a ``horis:until``, a ``horis:timeout`` and no ``horis:onTimeout``: past
    the timeout it goes on at ``horis:next``, as documented, but the way an answered wait
    does — the step after it acted as if the approval it waited for had come (the nurse was
    paged with no lead's approval). Not when the step after tests every term the until does
    (a decision's rules count, they route on it), nor for a wait ``horis:Timer`` wakes: its
    timeout is what it waits for, the until only ends it sooner."""
    if (
        wait.until is None
        or wait.timeout is None
        or wait.on_timeout is not None
        or wait.next is None
        or HORIS.Timer in wait.wake
    ):
        return None
    after = steps.get(wait.next)
    checks = [after.requires] if isinstance(after, ActionStep) else []
    if isinstance(after, DecisionStep):
        checks = [r.requires for r in after.rules]
    waited = _tested(wait.until)
    untested = waited - {t for pre in checks if pre is not None for t in _tested(pre)}
    if waited and not untested:
        return None
    nxt, pattern = name(wait.next), " ".join(p.text.strip() for p in wait.until.patterns)
    return Hazard(
        wait.iri,
        "horis:timeout with no horis:onTimeout: once it passes with the wait unanswered, the "
        f"instance goes on to {nxt} (horis:next) as if horis:until had held, though it never "
        "did"
        + (
            f", and {nxt}'s horis:requires does not test "
            + ", ".join(sorted(name(t) for t in untested))
            + ": it acts all the same"
            if untested
            else ""
        ),
        "add horis:onTimeout :SomeStep for a wait nobody answered in time (an escalation, a "
        f"reminder), or repeat the until's pattern ({pattern}) in {nxt}'s horis:requires so "
        "it acts only once that holds",
        HORIS.timeout,
    )


def fewest_steps(steps: Mapping[URIRef, Step], flow: Digraph[URIRef], start: URIRef) -> int | None:
    """The fewest steps an instance entering ``start`` runs before it ends: a breadth-first
    walk of every edge to a step it may end at (one with no ``horis:next``; a decision always
    goes on); ``flow`` is :func:`flow_graph` of ``steps``. None when no end is reachable (a
    cycle: the hazards above say so)."""
    depth = {start: 1}
    queue = [start]
    for iri in queue:  # the list grows as it is walked: breadth first, each step once
        step = steps.get(iri)
        if step is None:
            continue
        if step.next is None and not isinstance(step, DecisionStep):
            return depth[iri]
        for nxt in flow.get(iri, ()):
            if nxt not in depth:
                depth[nxt] = depth[iri] + 1
                queue.append(nxt)
    return None
