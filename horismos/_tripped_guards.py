"""A step whose ``horis:requires`` forbids of the focus what a step always before it writes:
it never runs; or what a loop back to it writes on its way round: it runs once, and the
next time round the steps before it act again, then it stops the instance.

Why: the dispense's guard against running twice, ``FILTER NOT EXISTS { ?this :dispensedAt
?t }``, copied onto the notification after it (meant: ``?this :notifiedAt ?t``, what the
notification's own tool writes). The dispense writes ``:dispensedAt`` on every way to the
notification, so its pattern never held there and every order stopped at it, blocked and
unnotified, while the definitions validated. And a refill that loops back from the wait for
the next request to the controlled-drug check before the dispense: the second time round the
check acted again, then the dispense's own guard (its tool wrote ``:dispensedAt`` the first
time) stopped the order there, blocked — validated too, since on the first way to the
dispense nothing had written it.

Only what is certain is said, as for a wait that never waits (:mod:`._held_waits`, whose
:func:`~._held_waits.surely_written` says what every way to a step has written): the
forbidden group must be a ``FILTER NOT EXISTS`` (or ``FILTER (!EXISTS …)``) every solution
passes, of the one triple ``?this :p ?v`` with ``?v`` a variable bound nowhere outside it,
and ``:p`` written on the focus on every way to the step in every workflow that reaches it.
A value compared, a second triple, a ``MINUS``: what is forbidden may be narrower than any
value, and nothing is said. A tool's own ``horis:requires``, tried at the step with the
tool's arguments bound, is held to the same of each argument the step gives from ?this
(``FILTER NOT EXISTS { ?order :dispensedAt ?t }`` on the notification's tool), its other
arguments counted as bound.

Round a loop, ``:p`` must be written (as :func:`~._held_waits.surely_writes` says) on a way
from the step back to it that passes an action step every way from the workflow's start to
the step passes: every instance at the step has been through it, so it acts again. A way a
step on it stops first (its own guard forbids what is written by then) or a decision's
rules turn aside is no way round. A loop straight back to the guarded step, through a wait
or a decision, acts nothing again: the guard ending the loop there is what it is for (paid
once), and nothing is said; nor of a step only some ways in pass. Written on every way
round or on one, it is a warning: whether an instance goes round is the world's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from rdflib import URIRef, Variable
from rdflib.term import Node

from ._digraph import Digraph, descendants, dominators
from ._guard_writes import negated_groups, unused_variable
from ._hazards import Hazard, flow_graph, path_text
from ._held_waits import Written, focus_read, plain_focus_reads, plain_triples, surely_writes
from ._model import ActionStep, DecisionStep, Step, Tool, Workflow, ways_out
from ._preconditions import Precondition
from ._vocab import HORIS

__all__ = ["shut_once_done", "tripped_guards"]


def tripped_guards(
    steps: Mapping[URIRef, Step],
    workflows: Mapping[URIRef, Workflow],
    written: Written,
    name: Callable[[Node], str],
) -> Iterator[Hazard]:
    """A warning at each guard of an action step (:func:`_guards`: its own ``horis:requires``,
    its tool's) that forbids of the focus a property every way to the step has written
    (:func:`~._held_waits.written_before`); failing that, one a way round a loop back to the
    step writes, past a step before it that acts again (:func:`_round_trip`). One warning at
    each of the two statements."""
    held, writers = written
    guards = {
        iri: list(_guards(step, name))
        for iri, step in steps.items()
        if isinstance(step, ActionStep)
    }
    gates = _Gates.of(steps, guards)
    flows = [_Flow.of(wf) for wf in sorted(workflows.values(), key=lambda w: str(w.iri))]
    for iri in sorted(held, key=str):
        said: set[URIRef] = set()  # one warning at each statement
        for guard in guards.get(iri, ()):
            if guard.predicate in said:
                continue
            if guard.forbidden & held[iri]:
                found = _tripped(guard.forbidden & held[iri], writers, name)
                hazard: Hazard | None = _first_pass(guard, found, name)
            else:
                hazard = _second_pass(guard, flows, gates, held[iri], name)
            if hazard is not None:
                said.add(guard.predicate)
                yield hazard


@dataclass(frozen=True)
class _Guard:
    """A pattern tried at an action step that forbids properties of the focus: the step's own
    ``horis:requires``, or its tool's of an argument the step gives from ?this; with the
    words the warnings say it in."""

    step: ActionStep
    me: str
    """The step, named."""
    predicate: URIRef
    """Where it is reported: the step's ``horis:requires``, or its ``horis:tool``."""
    forbidden: set[URIRef]
    whose: str
    """``horis:requires``, or ``the horis:requires of its tool, :t,``."""
    on: str
    """The variable it forbids them of: ``this``, or the tool's argument."""
    given: str
    """``, given from ?this here`` for a tool's argument."""
    owner: str
    """The step, or the tool, the guard is on."""
    own: str
    """What writes what the guard to write instead tests: ``its own tool``, or ``it``."""
    its: str
    """``the`` test of the step's pattern, or ``its`` (the tool's) test."""
    var_for: Callable[[str], str]
    """The variable each argument of the tool is given from, as the guard names it: the
    step's for its own pattern, the argument itself for its tool's."""

    def forbids(self, said: str) -> str:
        return f"{self.whose} forbids {said} of ?{self.on} (FILTER NOT EXISTS){self.given}"


def _guards(step: ActionStep, name: Callable[[Node], str]) -> Iterator[_Guard]:
    """The step's ``horis:requires``, then its tool's once for each argument the step gives
    from ?this, each that forbids anything of it (:func:`_forbidden`)."""
    me, tool = name(step.iri), step.tool
    if step.requires is not None and (forbidden := _forbidden(step.requires, {"this"}).get("this")):
        yield _Guard(
            step=step,
            me=me,
            predicate=HORIS.requires,
            forbidden=forbidden,
            whose="horis:requires",
            on="this",
            given="",
            owner=me,
            own="its own tool writes",
            its="the",
            var_for=step.var_for,
        )
    if tool is None or tool.requires is None:
        return
    forbids, named = _forbidden(tool.requires, {a.name for a in tool.args}), name(tool.iri)
    for arg in tool.args:
        if step.var_for(arg.name) == "this" and (forbidden := forbids.get(arg.name)):
            yield _Guard(
                step=step,
                me=me,
                predicate=HORIS.tool,
                forbidden=forbidden,
                whose=f"the horis:requires of its tool, {named},",
                on=arg.name,
                given=", given from ?this here",
                owner=named,
                own="it writes itself",
                its="its",
                var_for=lambda a: a,
            )


def shut_once_done(step: ActionStep) -> bool:
    """Whether ``step``'s guard (:func:`_guards`) forbids of the focus a property its own tool
    surely writes there: once its call has succeeded on a focus, the step never runs on it
    again, however the flow comes back. A loop through it calls its tool once, then stops
    there blocked (what :func:`tripped_guards` words), so the warning that the tool is
    called each time round does not apply. So does a guard of the node the tool writes on
    when that is not the focus (:func:`_shut_for_each_subject`).

    Not :func:`tripped_guards` again, though both read :func:`_guards`, and kept apart on
    purpose: that asks whether what *other* steps wrote before the step trips its guard
    (a warning, said of the guard), this whether what the step's *own* call writes shuts it
    after one success (no warning: a guard doing its job, which only quiets the loop
    warning of :func:`~._hazards.hazards`). A guard may do both or either: the dispense's
    ``FILTER NOT EXISTS { ?this :dispensedAt ?t }`` shuts it once done, and trips only when
    a step before it writes ``:dispensedAt`` too."""
    writes = surely_writes(step)
    if writes and any(g.forbidden & writes for g in _guards(step, str)):
        return True
    return _shut_for_each_subject(step)


def _shut_for_each_subject(step: ActionStep) -> bool:
    """Whether ``step``'s guard forbids, of the node its tool writes on (the effect's
    subject, whatever variable gives it: ``?line`` of a ``horis:forEach`` over an order's
    lines), a property every successful call lands there: ``FILTER NOT EXISTS { ?line
    :reservationId ?r }`` beside an effect asserting ``:reservationId`` on ``"line"``. A call
    that succeeded on a node shuts the step for that node ever after, so a loop back through
    the step calls its tool only for nodes not yet done — never twice for one — and the
    warning that each time round calls it again was false. Not for a tool that commits
    through an adapter, whose writes cannot be told."""
    tool = step.tool
    effect = tool.effect if tool is not None else None
    if tool is None or effect is None or not effect.subject or tool.adapter is not None:
        return False
    writes = {a.property for a in effect.asserts if not a.optional}
    on = step.var_for(effect.subject)
    forbidden: set[URIRef] = set()
    if step.requires is not None:
        forbidden |= _forbidden(step.requires, {"this"}).get(on, set())
    if tool.requires is not None:
        given = {a.name for a in tool.args}
        forbidden |= _forbidden(tool.requires, given).get(effect.subject, set())
    return bool(writes & forbidden)


def _first_pass(guard: _Guard, found: _Tripped, name: Callable[[Node], str]) -> Hazard:
    """The guard forbids what every way to its step has written: the step never runs."""
    tripped, said, by = found
    me = guard.me
    drop = f"drop {guard.its} test of {said}: {by} has always written it by then"
    used = frozenset(
        v
        for pre in (guard.step.requires, guard.step.tool.requires if guard.step.tool else None)
        if pre is not None
        for v in pre.variables
    )
    instead = _guard(guard.step.tool, guard.on, guard.var_for, tripped, name, used)
    return Hazard(
        guard.step.iri,
        f"{guard.forbids(said)}, which a step before it ({by}) writes on every way to {me}: the "
        "pattern never holds when the step is reached, so it never runs and every instance "
        "stops there, blocked",
        f"guard {guard.owner} with what {guard.own} ({instead}), or {drop}"
        if instead
        else f"{drop}; or move {me} before {by}",
        guard.predicate,
    )


@dataclass(frozen=True)
class _Gates:
    """What may stop an instance on its way round a loop before it comes back: an action
    step whose guards forbid what is written by then (it stops there, blocked, and acts
    nothing), a decision whose every rule to a step forbids it, or whose rule before them
    surely holds (it goes elsewhere)."""

    stops: dict[URIRef, set[URIRef]]
    """What each action step's guards forbid of the focus."""
    turns: dict[tuple[URIRef, URIRef], list[set[URIRef]]]
    """What each rule of a decision that leads to a step forbids of the focus."""
    holds: dict[URIRef, list[tuple[URIRef, set[URIRef] | None]]]
    """Each decision's rules in order, each with what written on the focus makes it hold
    (:func:`~._held_waits.plain_focus_reads`; None when nothing written surely does)."""
    read: set[URIRef]
    """Every property any of them reads: what a walk keeps track of having written."""

    @classmethod
    def of(cls, steps: Mapping[URIRef, Step], guards: Mapping[URIRef, list[_Guard]]) -> _Gates:
        stops = {iri: {p for g in gs for p in g.forbidden} for iri, gs in guards.items()}
        turns: dict[tuple[URIRef, URIRef], list[set[URIRef]]] = {}
        holds: dict[URIRef, list[tuple[URIRef, set[URIRef] | None]]] = {}
        for step in steps.values():
            for rule in step.rules if isinstance(step, DecisionStep) else ():
                forbids = _forbidden(rule.requires, {"this"}).get("this", set())
                turns.setdefault((step.iri, rule.next), []).append(forbids)
                reads = plain_focus_reads(rule.requires.select.algebra)
                holds.setdefault(step.iri, []).append((rule.next, reads or None))
        read = {
            p
            for s in [
                *stops.values(),
                *(f for fs in turns.values() for f in fs),
                *(r for rs in holds.values() for _, r in rs if r is not None),
            ]
            for p in s
        }
        return cls(stops, turns, holds, read)

    def closed(self, here: URIRef, way: URIRef, there: URIRef, written: frozenset[URIRef]) -> bool:
        """Whether an instance that has written ``written`` cannot go on from ``here`` by
        ``way`` into ``there``, nor act there."""
        rules = self.turns.get((here, there), []) if way == HORIS.when else []
        turned = bool(rules) and all(f & written for f in rules)
        return (
            turned
            or self._passed_by(here, way, there, written)
            or bool(self.stops.get(there, set()) & written)
        )

    def _passed_by(
        self, here: URIRef, way: URIRef, there: URIRef, written: frozenset[URIRef]
    ) -> bool:
        """Whether a rule of decision ``here`` that ``written`` makes hold comes before every
        rule to ``there`` (or ``way`` is its otherwise): the first that holds wins."""
        if way not in (HORIS.when, HORIS.otherwise):
            return False
        for target, reads in self.holds.get(here, ()):
            if way == HORIS.when and target == there:
                return False  # a rule to there is tried first
            if reads is not None and reads <= written:
                return True
        return False


@dataclass(frozen=True)
class _Round:
    """A way round a loop from a guarded step back to it, on which what the guard forbids is
    written and, past a step every way to the guarded step passes, a step acts again."""

    tripped: list[URIRef]
    """What the guard forbids that is written on the way round."""
    route: list[URIRef]
    """The steps, from the guarded step back to it."""
    ways: list[URIRef]
    """The predicate of each edge of ``route``."""
    heads: set[URIRef]
    """The steps every way from the workflow's start to the guarded step passes: the way
    round comes back into the loop at the first."""
    acting: set[URIRef]
    """Those that are action steps: each acts again when a way round passes it."""
    every: bool
    """Every way round writes it, not only ``route``."""


_State = tuple[URIRef, frozenset[URIRef], bool]


@dataclass(frozen=True)
class _Flow:
    """A workflow's flow, made once for every guard in it: each step's successors and the
    steps every way from its start to it passes (:func:`~._digraph.dominators`)."""

    wf: Workflow
    graph: Digraph[URIRef]
    passed: dict[URIRef, set[URIRef]]

    @classmethod
    def of(cls, wf: Workflow) -> _Flow:
        graph = flow_graph({s.iri: s for s in wf.reachable()})
        return cls(wf, graph, dominators(graph, wf.start))


def _round_trip(guard: _Guard, flow: _Flow, gates: _Gates, held: set[URIRef]) -> _Round | None:
    """The shortest way round a loop of ``flow``'s workflow from ``guard``'s step back to it
    that writes what the guard forbids of the focus (:func:`~._held_waits.surely_writes`, of
    the steps left by their ``horis:next``) and comes back through an action step every way
    to the guarded step passes (:attr:`_Flow.passed`): it acted on the way in, so it acts
    again, then the guard stops the instance. Not a way a step or a rule on it stops or
    turns aside first (:class:`_Gates`; ``held`` is written on every way to the step
    already). A loop straight back to the step (through a wait, a decision) acts nothing
    again: its guard stopping the instance there is what it is for (paid once), and nothing
    is said. None too where the workflow does not reach the step, or it is on no loop."""
    step, wf = guard.step.iri, flow.wf
    if step not in flow.passed or step not in descendants(flow.graph, step):
        return None  # not reached, or on no loop: the usual case
    heads = flow.passed[step] - {step}
    acting = {s for s in heads if isinstance(wf.steps[s], ActionStep)}
    if not acting:
        return None
    # a walk of (step, what is written of what the gates read, whether a head acted again)
    start: _State = (step, frozenset(held & gates.read), False)
    came: dict[_State, tuple[_State, URIRef] | None] = {start: None}
    queue, back = [start], []
    for state in queue:
        here, written, acted = state
        for way, there in ways_out(wf.steps[here]):
            wrote = written | (
                surely_writes(wf.steps[here]) & gates.read if way == HORIS.next else set()
            )
            if there == step:
                back.append((state, way, wrote))
            elif there in wf.steps and not gates.closed(here, way, there, wrote):
                nxt = (there, wrote, acted or there in acting)
                if nxt not in came:
                    came[nxt] = (state, way)
                    queue.append(nxt)
    found = next(((s, w, o) for s, w, o in back if s[2] and o & guard.forbidden), None)
    if found is None:
        return None
    state, way, wrote = found
    tripped = sorted(wrote & guard.forbidden, key=str)
    route, ways = [step], [way]
    at: tuple[_State, URIRef] | None = (state, way)
    while at is not None:
        route.insert(0, at[0][0])
        at = came[at[0]]
        if at is not None:
            ways.insert(0, at[1])
    every = all(set(tripped) <= o for _, _, o in back)
    return _Round(tripped, route, ways, heads, acting, every)


def _second_pass(
    guard: _Guard,
    flows: list[_Flow],
    gates: _Gates,
    held: set[URIRef],
    name: Callable[[Node], str],
) -> Hazard | None:
    """The guard forbids what a way round a loop back to its step writes, after a step before
    it has acted again (:func:`_round_trip`, in the first workflow that has one)."""
    for flow in flows:
        found = _round_trip(guard, flow, gates, held)
        if found is not None:
            break
    else:
        return None
    me, route, steps = guard.me, found.route, flow.wf.steps
    said = ", ".join(name(p) for p in found.tripped)
    by = ", ".join(
        dict.fromkeys(
            name(s)
            for s, way in zip(route[:-1], found.ways, strict=True)
            if way == HORIS.next and surely_writes(steps[s]) & set(found.tripped)
        )
    )
    back = next(i for i, s in enumerate(route) if i and s in found.heads)
    again = list(dict.fromkeys(name(s) for s in route[back:-1] if s in found.acting))
    return Hazard(
        guard.step.iri,
        f"{guard.forbids(said)}, which {by} writes on {'every' if found.every else 'one'} way "
        f"round the loop back to {me} ({path_text(route, steps, name)}): an instance that "
        f"goes round {'' if found.every else 'that way '}comes back by "
        f"{path_text(route[back - 1 : back + 1], steps, name)}, {', '.join(again)} "
        f"{'acts' if len(again) == 1 else 'act'} again, and then the pattern never holds, so "
        f"it stops at {me}, blocked",
        f"loop back from {name(route[back - 1])} to {me}, or to a step after it, instead of "
        f"to {name(route[back])}, so nothing acts again before {guard.its} guard stops the "
        f"instance; or make {guard.its} guard allow what an earlier time round wrote (a value "
        f"of {said} compared with what starts a round, not any value)",
        guard.predicate,
    )


_Tripped = tuple[list[URIRef], str, str]
"""What a guard forbids that is written before its step, in order; it named; and the steps
that write it, named."""


def _tripped(
    props: set[URIRef], writers: Mapping[URIRef, set[URIRef]], name: Callable[[Node], str]
) -> _Tripped:
    tripped = sorted(props, key=str)
    said = ", ".join(name(p) for p in tripped)
    by = ", ".join(sorted({name(s) for p in tripped for s in writers.get(p, ())}))
    return tripped, said, by


def _forbidden(pre: Precondition, given: set[str]) -> dict[str, set[URIRef]]:
    """For each variable ``?on``, the properties ``pre`` requires it to have no value of at
    all: each ``NOT EXISTS`` every solution passes that is the one triple ``?on :p ?v``,
    ``?v`` a variable bound nowhere else: not by the pattern, nor ``given`` it (?this, a
    tool's arguments). One walk of the pattern, for every argument of a tool."""
    outside = pre.binds | pre.may_bind | given
    found: dict[str, set[URIRef]] = {}
    for group in negated_groups(pre.select.algebra, minus=False):
        triples = plain_triples(group)
        if triples is None or len(triples) != 1:
            continue
        ((s, p, o),) = triples
        if isinstance(s, Variable) and focus_read(triples[0], [o], s) and str(o) not in outside:
            found.setdefault(str(s), set()).add(p)
    return found


def _guard(
    tool: Tool | None,
    on: str,
    var_for: Callable[[str], str],
    tripped: list[URIRef],
    name: Callable[[Node], str],
    used: frozenset[str] = frozenset(),
) -> str | None:
    """The guard most likely meant: ``FILTER NOT EXISTS { ?on :q ?v }`` of a property
    ``:q`` the tool surely writes on ``?on`` (its effect's subject, given as ``var_for``
    names it), other than those tripped, ``?v`` a name the patterns do not use (``used``);
    None when it writes none."""
    effect = tool.effect if tool is not None else None
    if effect is None or var_for(effect.subject) != on:
        return None
    for a in effect.asserts:
        if not a.optional and a.property not in tripped:
            return f"FILTER NOT EXISTS {{ ?{on} {name(a.property)} ?{unused_variable(used)} }}"
    return None
