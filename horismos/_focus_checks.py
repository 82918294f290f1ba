"""Checks of a workflow's focus: what ``?this`` is, and whether steps read and write it.

A run is about one focus node; a pattern that never mentions it, an argument of another
class than the focus type, or a chained workflow that cannot receive it does nothing or
acts on the wrong node: these checks say so at load."""

from __future__ import annotations

import re
from collections.abc import Set
from typing import cast

from rdflib import OWL, RDF, RDFS, URIRef
from rdflib.term import Node, Variable

from ._argument_checks import ArgumentChecks
from ._define_patterns import variable_needle
from ._effect_domain import subject_outside_domain
from ._error_routes import failed_writes
from ._fhir import FHIR
from ._guard_writes import unclosed_guard, unused_variable
from ._model import ActionStep, Arg, DecisionStep, ProposalStep, Tool, Workflow
from ._near_names import closest_term, slip_distance
from ._own_writes import (
    only_later_writes,
    only_own_writes,
    only_own_writes_of_tool,
    wait_before,
)
from ._replaced_values import replaced_values
from ._shape_counts import single_values
from ._term_kinds import algebra_triples, pattern_variables
from ._vocab import HORIS

__all__ = ["FocusChecks"]


class FocusChecks(ArgumentChecks):
    """Checks of how a workflow's focus (``?this``) reaches its steps' patterns,
    arguments and writes."""

    def check_focus_arguments(self) -> None:
        """An argument given from ?this whose class the workflow's focus is unrelated to
        (``horis:focusType :Clinician`` for a tool taking a ``:LabResult``, or a step reached
        from a workflow of another focus type): every call was refused after the steps
        before it had acted. A warning, at the step's horis:bind: a node may be of two
        unrelated classes, as the domain check allows (:mod:`._effect_domain`)."""

        def fits(focus: URIRef, a: Arg) -> bool:
            return self.related(focus, a.type)

        reached = {
            wf.iri: [s for s in wf.reachable() if isinstance(s, ActionStep)]
            for wf in self.defs.workflows.values()
        }
        # each step's workflows, in the definitions' order: asked of every step off focus
        reaching: dict[URIRef, list[Workflow]] = {}
        for o in self.defs.workflows.values():
            for s in reached[o.iri]:
                reaching.setdefault(s.iri, []).append(o)
        crossed: set[tuple[URIRef, tuple[Node, URIRef, Node]]] = set()
        # each (workflow, owners) pair's crossing: the same for every step of theirs it reaches
        crossings: dict[tuple[URIRef, tuple[URIRef, ...]], tuple[Node, URIRef, Node] | None] = {}

        def owners_of(step: ActionStep, a: Arg) -> list[Workflow]:
            return [o for o in reaching.get(step.iri, []) if fits(o.focus_type, a)]

        for wf in sorted(self.defs.workflows.values(), key=lambda w: str(w.iri)):
            focus = wf.focus_type
            for step in reached[wf.iri]:
                if not isinstance(step, ActionStep) or step.tool is None:
                    continue
                for a in step.tool.args:
                    if step.var_for(a.name) != "this" or not a.is_class or fits(focus, a):
                        continue
                    self.off_focus.add(wf.iri)
                    theirs = owners_of(step, a)
                    owners = [self.n(o.iri) for o in theirs]
                    key = (wf.iri, tuple(o.iri for o in theirs))
                    if key not in crossings:
                        crossings[key] = self.crossing(wf, theirs)
                    crossing = crossings[key]
                    if crossing is not None:
                        if (wf.iri, crossing) in crossed:
                            continue
                        crossed.add((wf.iri, crossing))
                        src, pred, dst = crossing
                        self.warn(
                            self.step_of(src),
                            f"{self.n(pred)} {self.n(dst)} leads {self.n(wf.iri)} into a step of "
                            f"{' and '.join(sorted(owners))}: {self.n(step.iri)} gives "
                            f'argument "{a.name}" of {self.n(step.tool.iri)} '
                            f"(a {self.n(a.type)}) from "
                            f"?this, but {self.n(wf.iri)} runs for nodes of {self.n(focus)} "
                            "(its horis:focusType): unless a node is both, every call is refused, "
                            "after the steps before it have acted",
                            f"point {self.n(pred)} at a step of {self.n(wf.iri)}'s own",
                            at=crossing,
                        )
                        continue
                    bind = self.bind_of(step.iri, a.name)
                    self.warn(
                        step.iri,
                        f'horis:bind gives argument "{a.name}" of {self.n(step.tool.iri)} (a '
                        f"{self.n(a.type)}) from ?this, but {self.n(wf.iri)} runs for nodes "
                        f"of {self.n(focus)} (its horis:focusType): unless a node is both, "
                        "every call is refused, after the steps before it have acted",
                        f"{self.n(step.iri)} is a step of {' and '.join(sorted(owners))}: "
                        f"send {self.n(wf.iri)} to a step of its own"
                        if owners
                        else f"make {self.n(wf.iri)}'s horis:focusType {self.n(a.type)}, or "
                        f'give "{a.name}" from a variable the pattern binds to a '
                        f"{self.n(a.type)}",
                        at=(bind, HORIS.arg, None) if bind is not None else step.iri,
                    )

    def check_focus_properties(self) -> None:
        """A property a step's pattern reads of ?this that the ontology gives to a class the
        workflow's focus type is unrelated to: ``?this :available true`` (``:available
        rdfs:domain :Mechanic``) in a workflow for ``:Vehicle`` never holds, so the rule it
        guards was never taken and every vehicle went down the other branch, tools called,
        with nothing said. Read as ``?x :p ?this``, it is ``:p``'s ``rdfs:range`` that is
        held to the focus type. A warning, at the line the property is written on: a node
        may be of two unrelated classes, as the argument check allows. A workflow whose
        arguments from ?this already said its focus type is off is not said again at each
        pattern."""
        focus_of: dict[URIRef, list[Workflow]] = {}
        for wf in sorted(self.defs.workflows.values(), key=lambda w: str(w.iri)):
            if wf.iri in self.off_focus:
                continue
            for step in wf.reachable():
                focus_of.setdefault(step.iri, []).append(wf)
        this = Variable("this")
        for owner, holder, pred, algebra in self.parsed_patterns():
            said: set[URIRef] = set()
            for subject, prop, value in sorted(algebra_triples(algebra), key=str):
                for end, side in ((subject, RDFS.domain), (value, RDFS.range)):
                    if end != this or prop in said or prop == RDF.type:
                        continue
                    classes = [c for c in self.g.objects(prop, side) if isinstance(c, URIRef)]
                    off = next(
                        (
                            (w, c)
                            for w in focus_of.get(cast(URIRef, owner), [])
                            for c in classes
                            if not self.related(w.focus_type, c)
                        ),
                        None,
                    )
                    if off is None:
                        continue
                    wf, cls = off
                    said.add(prop)
                    name = self.n(prop)
                    on = self.written_elsewhere(owner, prop) if side == RDFS.domain else None
                    self.at_text(
                        "warning",
                        rf"(?:{re.escape(name)}|<{re.escape(str(prop))}>)(?![\w-])",
                        owner,
                        f"{self.n(pred)} reads {name} "
                        + ("of ?this" if side == RDFS.domain else "pointing at ?this")
                        + f", but {name} has {self.n(side)} {self.n(cls)} and "
                        f"{self.n(wf.iri)} runs for nodes of {self.n(wf.focus_type)} (its "
                        "horis:focusType): unless a node is both, that part of the pattern "
                        "never matches",
                        self.focus_property_hint(prop, side, wf)
                        if on is None
                        else f"the step's tool writes {name} on ?{on}: write ?{on} for ?this "
                        f"where the pattern reads {name} (a guard: FILTER NOT EXISTS {{ ?{on} "
                        f"{name} ?{unused_variable(pattern_variables(algebra))} }})",
                        (holder, pred),
                    )

    def written_elsewhere(self, owner: Node, prop: URIRef) -> str | None:
        """The variable the tool of action step ``owner`` writes ``prop`` on, when that is
        not ?this (a ``horis:forEach`` over line items writing each line's amount); None
        otherwise. Why: ``FILTER NOT EXISTS { ?this
        :assessedAmount ?a }`` meant of ``?line`` was told to read a property of the focus
        type, or to change the workflow's focus type."""
        step = self.defs.steps.get(cast(URIRef, owner))
        if not isinstance(step, ActionStep) or step.tool is None or step.tool.effect is None:
            return None
        effect = step.tool.effect
        if all(a.property != prop for a in effect.asserts):
            return None
        on = step.var_for(effect.subject)
        return None if on == "this" else on

    def check_own_writes(self) -> None:
        """A pattern that requires of the node a tool writes a property only that tool
        writes (:mod:`._own_writes`): ``?this :queuedAt ?t .`` on the step that queues, or
        ``?patient :queuedAt ?t .`` in the tool's own horis:requires, meant as a guard
        against running twice, held every instance (every call) back. A warning at the line
        the property is written on; not when the files state it of some node, a property is
        entailed from it, or it is in FHIR's namespace (what an adapter's hydration
        brings)."""
        workflows = list(self.defs.workflows.values())
        writers = {t.iri: t for t in self.writers()}
        for owner, holder, pred, pre in self.patterns:
            if pred != HORIS.requires or holder != owner:
                continue
            step = self.defs.steps.get(cast(URIRef, owner))
            tool = self.defs.tools.get(cast(URIRef, owner))
            if isinstance(step, ActionStep) and step.tool is not None:
                found = only_own_writes(step, pre.select.algebra, workflows, writers)
                by = f"this step's tool ({self.n(step.tool.iri)})"
                blocked = (
                    "the step can never fire before it has fired, and every instance stops here"
                )
                elsewhere = "have a step before it write {}"
            elif tool is not None:
                found = only_own_writes_of_tool(tool, pre.select.algebra, workflows, writers)
                by = "this tool"
                blocked = (
                    "no call of it can pass its horis:requires before one has, so every call "
                    "(each step's, and tools call's) is blocked"
                )
                elsewhere = "have another tool write {}"
            else:
                continue
            for triple in found:
                prop = triple[1]
                if self.given_otherwise(prop):
                    continue
                name = self.n(prop)
                problem = self.placed_in_text(
                    "warning",
                    rf"(?:{re.escape(name)}|<{re.escape(str(prop))}>)(?![\w-])",
                    owner,
                    f"{self.n(pred)} requires {name}, which only {by} writes: {blocked}",
                    "if it is a guard against running twice, write FILTER NOT EXISTS { "
                    + " ".join(self.sparql_term(t) for t in triple)
                    + f" }}; else {elsewhere.format(name)}",
                    (holder, pred),
                )
                self.problems.append(problem)
                self.defs.own_writes.setdefault(prop, []).append(problem)
                # a guard written as its opposite: said here, not again as no guard at all
                self.guards_said.update(
                    s.iri
                    for s in self.defs.steps.values()
                    if s is step or (isinstance(s, ActionStep) and tool and s.tool is tool)
                )

    def check_replaced_values(self) -> None:
        """A step requiring of ?this a value of a property its tool writes on ?this again,
        where a domain shape allows one value of it (:mod:`._replaced_values`): ``?this
        :status :Open`` on the payout whose effect writes ``:status :Approved``. The effect
        adds the second value, and the gate rejected every result after the tool had acted.
        At the line the property is written on in the pattern."""
        single = list(single_values(self.g))
        if not single:
            return
        # the focus types of the workflows reaching each step: one walk of each workflow
        types: dict[URIRef, set[URIRef]] = {}
        for wf in self.defs.workflows.values():
            for s in wf.reachable():
                types.setdefault(s.iri, set()).add(wf.focus_type)
        for owner, holder, pred, pre in self.patterns:
            step = self.defs.steps.get(cast(URIRef, owner))
            ruled = None  # a decision's rule: the action step it leads straight to
            if isinstance(step, DecisionStep) and holder != owner:
                ruled = self.defs.steps.get(cast(URIRef, self.g.value(holder, HORIS.next)))
                step = ruled
            elif holder != owner:
                continue
            if pred != HORIS.requires or not isinstance(step, ActionStep):
                continue
            focus = types.get(step.iri, ())
            said = (  # said at the step's own pattern: not again at the rule
                {
                    r.assertion.property
                    for r in replaced_values(
                        step, step.requires.select.algebra, focus, single, self.defs.classes_of
                    )
                }
                if ruled is not None and step.requires is not None
                else set()
            )
            for r in replaced_values(step, pre.select.algebra, focus, single, self.defs.classes_of):
                if r.assertion.property in said:
                    continue
                tool, prop = cast(Tool, step.tool), r.assertion.property
                name, shapes = self.n(prop), ", ".join(self.n(s) for s in r.shapes)
                held = self.sparql_term(r.held)
                writes = (
                    f"{name} {self.sparql_term(r.assertion.value)}"
                    if r.assertion.value is not None
                    else f"{name} (the value it returns)"
                )
                self.at_text(
                    "error" if r.certain else "warning",
                    rf"(?:{re.escape(name)}|<{re.escape(str(prop))}>)(?![\w-])",
                    owner,
                    f"{self.n(pred)} requires ?this to hold {name} {held}, and "
                    + (f"leads straight to {self.n(step.iri)}, where " if ruled else "")
                    + f"{self.n(tool.iri)} writes {writes} on ?this, but {shapes} allows one "
                    f"value of {name} (sh:maxCount 1): an effect adds a value and never "
                    f"replaces one, so the node holds two once it lands and the gate rejects "
                    f"what {self.n(tool.iri)} returns"
                    + (" every time" if r.certain else ", unless it is the value held")
                    + " — after the tool has acted",
                    f"record the new state under a property of its own (not {name}), or drop "
                    f"sh:maxCount 1 on {name} from {shapes}: no effect removes "
                    + ("the value ?this holds" if isinstance(r.held, Variable) else held),
                    (holder, pred),
                )
                # said here in full: not also that only this step's tool writes it
                own = self.defs.own_writes.get(prop, [])
                dropped = [p for p in own if p.node == self.n(owner)]
                if dropped:
                    self.problems = [p for p in self.problems if p not in dropped]
                    self.defs.own_writes[prop] = [p for p in own if p not in dropped]

    def check_later_writes(self) -> None:
        """A decision's rule that requires of ?this a property only steps after the decision
        write (:func:`~._own_writes.only_later_writes`): ``?this :paymentRef ?r`` before the
        payout never held, so every instance took the next rule or horis:otherwise — a
        claim denied where it was meant to be closed. A warning at the property's line;
        dropped, as a step's own writes are, when the files or the world state it."""
        workflows = list(self.defs.workflows.values())
        writers = {t.iri: t for t in self.writers()}
        for owner, holder, pred, pre in self.patterns:
            step = self.defs.steps.get(cast(URIRef, owner))
            if pred != HORIS.requires or holder == owner or not isinstance(step, DecisionStep):
                continue
            for triple, by in only_later_writes(step, pre.select.algebra, workflows, writers):
                prop = triple[1]
                if self.given_otherwise(prop):
                    continue
                name = self.n(prop)
                at = sorted(
                    self.n(s.iri)
                    for s in self.defs.steps.values()
                    if isinstance(s, ActionStep) and s.tool is not None and s.tool in by
                )
                problem = self.placed_in_text(
                    "warning",
                    rf"(?:{re.escape(name)}|<{re.escape(str(prop))}>)(?![\w-])",
                    owner,
                    f"a horis:when rule requires {name} of ?this, which only "
                    + ", ".join(self.n(t.iri) for t in by)
                    + (f" (at {', '.join(at)})" if at else "")
                    + f" writes, and no step that can run before {self.n(step.iri)} does: "
                    "the rule never holds here, and every instance goes on as if it were false "
                    "(to the next rule, or horis:otherwise)",
                    f"test what a step before {self.n(step.iri)} writes, or move the decision "
                    f"after the step that writes {name}",
                    (holder, pred),
                )
                self.problems.append(problem)
                self.defs.own_writes.setdefault(prop, []).append(problem)

    def check_unclosed_guards(self) -> None:
        """A step whose tool is not idempotent, guarded by ``FILTER NOT EXISTS`` on what its
        own call never writes where the guard tests it (:mod:`._guard_writes`): the guard
        still held after the call, and a rerun or a way back called the tool again. A
        warning at the guard's property; the one about a property nothing writes is dropped,
        as a step's own writes are, beside a world that states it."""
        workflows = list(self.defs.workflows.values())

        def widen(p: URIRef) -> set[URIRef]:
            return {
                *(x for x in self.g.objects(p, RDFS.subPropertyOf) if isinstance(x, URIRef)),
                *(x for x in self.g.objects(p, OWL.equivalentProperty) if isinstance(x, URIRef)),
                *(x for x in self.g.subjects(OWL.equivalentProperty, p) if isinstance(x, URIRef)),
            }

        # a tool whose effect is found wrong is said at the tool: its effect, not the guard,
        # is to mend; one found wrong otherwise (its timeout) writes what its effect says
        tools = self.writers()
        wrong = {t.iri for t in tools if self.effect_unread(t)}
        for owner, holder, pred, pre in self.patterns:
            step = self.defs.steps.get(cast(URIRef, owner))
            if pred != HORIS.requires or holder != owner or not isinstance(step, ActionStep):
                continue
            waited = wait_before(step, workflows)
            if waited is None or step.tool is None or step.tool.iri in wrong:
                continue
            found = unclosed_guard(
                step,
                pre.select.algebra,
                tools,
                widen,
                self.given_otherwise,
                waited,
            )
            if found is None:
                continue
            self.guards_said.add(step.iri)
            s, prop, _ = found.triple
            if found.misplaced and self.hung_elsewhere(step.tool, prop):
                continue  # the effect's subject is the mistake, said at the tool
            if prop in self.defs.undeclared:
                continue  # a misspelt property: said at the pattern, with the one meant
            name, tool, me = self.n(prop), self.n(step.tool.iri), self.n(step.iri)
            tested = self.sparql_term(s)
            writes = sorted(
                self.n(a.property) for a in (step.tool.effect.asserts if step.tool.effect else ())
            )
            again = (
                "its call never closes the guard, so a second run over the same world, or a "
                f"way back to {me}, calls it again"
            )
            free = unused_variable(pattern_variables(pre.select.algebra))
            if found.misplaced:
                message = (
                    f"horis:requires holds only while {tested} has no {name}, but {tool} (not "
                    f"idempotent) writes {name} on ?{found.written_on}, not on {tested}: {again}"
                )
                hint = (
                    "test it where the tool writes it: FILTER NOT EXISTS { "
                    f"?{found.written_on} {name} ?{free} }}"
                )
            else:
                message = (
                    f"horis:requires holds only while {tested} has no {name}, which {tool} (not "
                    f"idempotent) never writes (it writes {', '.join(writes) or 'nothing'}) and "
                    f"nothing else gives: {again}"
                )
                hint = (
                    "guard on what the tool writes"
                    + (
                        f": FILTER NOT EXISTS {{ ?{found.written_on} {writes[0]} ?{free} }}"
                        if writes
                        else ""
                    )
                    + f"; if {name} is a condition of the domain, validate with the world that "
                    "states it (--world)"
                )
            problem = self.placed_in_text(
                "warning",
                rf"(?:{re.escape(name)}|<{re.escape(str(prop))}>)(?![\w-])",
                owner,
                message,
                hint,
                (holder, pred),
            )
            self.problems.append(problem)
            if not found.misplaced:
                self.defs.own_writes.setdefault(prop, []).append(problem)
                # dropped beside a world that states it, the step has no guard: said then
                self.condition_guards[step.iri] = prop

    def check_error_routes(self) -> None:
        """A horis:onError to a step that requires of ?this what only the failed step's tool
        writes (:mod:`._error_routes`): every instance whose call failed stopped there,
        blocked. A warning at the edge; dropped, as a step's own writes are, when the files
        or the world state the property."""
        for step, target, prop in failed_writes(self.defs.steps, self.writers()):
            if self.given_otherwise(prop):
                continue
            if step.tool is None or prop in self.defs.undeclared:
                continue
            name, there = self.n(prop), self.n(target.iri)
            problem = self.src.problem(
                "warning",
                step.iri,
                f"horis:onError {there}, whose horis:requires needs {name} of ?this, which only "
                f"{self.n(step.tool.iri)} writes — the call that failed, and wrote nothing: "
                "after a "
                f"failure {there} never fires, and the instance stops there, blocked",
                f"send horis:onError to a step that does not need {name} (a horis:WaitStep "
                f"for an operator), or read it in an OPTIONAL in {there}'s pattern",
                at=(step.iri, HORIS.onError, target.iri),
            )
            self.problems.append(problem)
            self.defs.own_writes.setdefault(prop, []).append(problem)

    def hung_elsewhere(self, tool: Tool, prop: URIRef) -> bool:
        """Whether ``tool``'s effect writes ``prop`` on an argument of a class its
        rdfs:domain is unrelated to: the effect check says so at the tool
        (:mod:`._effect_domain`), with the argument to write instead."""
        effect = tool.effect
        arg = next((a for a in tool.args if effect and a.name == effect.subject), None)
        if effect is None or arg is None or not arg.is_class:
            return False
        asserted = [a for a in effect.asserts if a.property == prop]
        return (
            subject_outside_domain(self.g, arg, tool.args, asserted, self.defs.subclasses, self.n)
            is not None
        )

    def given_otherwise(self, prop: URIRef) -> bool:
        """Whether ``prop`` may be there without a tool of these files writing it: the files
        state or entail it (:meth:`stated_or_entailed`), or it is in FHIR's namespace (what an
        adapter's hydration brings). The one test every own-writes warning drops on."""
        return self.stated_or_entailed(prop) or str(prop).startswith(FHIR)

    def stated_or_entailed(self, prop: URIRef) -> bool:
        """Whether the files state ``prop`` of some node, or a property they relate to it
        (a subproperty, an inverse, an equivalent) can entail it."""
        return (
            (None, prop, None) in self.g
            or (None, RDFS.subPropertyOf, prop) in self.g
            or any(
                (None, link, prop) in self.g or (prop, link, None) in self.g
                for link in (OWL.inverseOf, OWL.equivalentProperty)
            )
        )

    def focus_property_hint(self, prop: URIRef, side: URIRef, wf: Workflow) -> str:
        """What to read instead of ``prop``: a property of a near name the ontology gives to
        the focus type (or a class it is one of), else the focus type to write."""
        fitting = [
            p
            for p in self.g.subjects(side, None)
            if isinstance(p, URIRef)
            and p != prop
            and any(
                isinstance(c, URIRef) and wf.focus_type in self.defs.classes_of(c)
                for c in self.g.objects(p, side)
            )
        ]
        near = closest_term(prop, fitting, cutoff=0.8)
        other = f"make {self.n(wf.iri)}'s horis:focusType the class meant"
        if near is not None:
            return f"did you mean {self.n(near)}? Else {other}"
        return f"read a property of {self.n(wf.focus_type)}, or {other}"

    def crossing(
        self,
        wf: Workflow,
        owners: list[Workflow],
    ) -> tuple[Node, URIRef, Node] | None:
        """The edge by which ``wf`` goes into the steps of ``owners`` (workflows of another
        focus type): the first step of ``wf``'s own with a way out to one of theirs. That edge
        is the mistake (a horis:next to the other workflow's step), not the step it reaches,
        whose horis:bind is right for its own workflow: ``wf``'s horis:start when it starts
        among them."""
        theirs = {s.iri for o in owners for s in o.reachable()}
        if not owners:
            return None
        if wf.start in theirs:
            return (wf.iri, HORIS.start, wf.start)
        for s in wf.reachable():
            if s.iri in theirs:
                continue
            # where its flow goes, not every step of theirs tried (quadratic in the steps)
            into = [t for t in self.flow_targets(s.iri) if t in theirs]
            if into:
                return self.edge(s.iri, min(into, key=str))
        return None

    def check_chained_workflows(self) -> None:
        """A flow edge to another workflow's first step (``:TellOwner horis:next
        :TellRecall``, :TellRecall the horis:start of :Recall): most likely meant to start
        that workflow when this one is done, which no term of the vocabulary does. The step
        and those after it run as steps of this workflow's instance, once more beside
        :Recall's own instances. Said at the edge; a workflow of another focus type is said
        by :meth:`check_focus_arguments`, as its steps' arguments are the wrong kind."""
        starts = {wf.start: wf for wf in self.defs.workflows.values()}
        said: set[tuple[Node, URIRef, Node]] = set()
        for wf in sorted(self.defs.workflows.values(), key=lambda w: str(w.iri)):
            if wf.iri in self.off_focus:
                continue
            for step in wf.reachable():
                for target in self.flow_targets(step.iri):
                    other = starts.get(cast(URIRef, target))
                    edge = self.edge(step.iri, target)
                    if other is None or target == wf.start or edge is None or edge in said:
                        continue
                    said.add(edge)
                    mine, theirs, first = self.n(wf.iri), self.n(other.iri), self.n(target)
                    self.warn(
                        step.iri,
                        f"{self.n(edge[1])} {first} goes to the first step of another "
                        f"workflow, {theirs}: no {theirs} instance is started here; {first} "
                        f"and the steps after it run as steps of this {mine} instance",
                        "no horis: term starts another workflow: to run "
                        f"{theirs} after {mine}, end {mine} here (remove this "
                        f"{self.n(edge[1])}), let {first}'s horis:requires read a fact "
                        f"{mine} writes, and run {theirs} too (run --workflow {theirs}); to "
                        "run the same action in both, give each workflow its own step",
                        at=edge,
                    )

    def step_of(self, node: Node) -> Node:
        """The step a flow statement is written under: ``node`` itself, or the step whose
        horis:when rule ``node`` is."""
        return next(self.g.subjects(HORIS.when, node), node)

    def check_defined_focus_types(self) -> None:
        """A horis:focusType the ontology defines by an OWL class expression (``:HighResult
        owl:equivalentClass [ owl:onProperty :interpretation ; owl:hasValue :High ]``): under
        the default ``rdfs`` entailment a node is of it only when typed so, and ``run --all``
        found none and exited 0 with nothing done; ``--entailment owl-rl`` classifies them."""
        for wf in sorted(self.defs.workflows.values(), key=lambda w: str(w.iri)):
            if self.class_expression(wf.focus_type):
                self.warn(
                    wf.iri,
                    f"horis:focusType {self.n(wf.focus_type)} is defined by an OWL class "
                    "expression: under the default entailment (rdfs) a node is of it only "
                    "when the world types it so, and a run finds no other",
                    'run with --entailment owl-rl (Agent(..., entailment="owl-rl")) to '
                    f"classify nodes into {self.n(wf.focus_type)}, or type them in the world",
                    at=(wf.iri, HORIS.focusType, wf.focus_type),
                )

    def check_focus_typos(self) -> None:
        """A variable of a step's pattern a slip away from ?this (``?ths``, ``?This``,
        ``?tihs``): ?this is the instance's focus, bound before the pattern is tried, while
        ``?ths`` is free and matches any node. Without ?this the pattern is no longer about
        the focus at all and holds for any match in the world; beside it (``?ths :acuity
        ?queue . FILTER NOT EXISTS { ?this :queuedAt ?t }``) its values come from another
        node. A warning: a pattern may leave the focus out on purpose, but not with a
        variable named like it. A tool's own horis:requires binds its arguments, not ?this,
        so only steps' patterns are read."""
        steps = self.step_nodes()
        for owner, holder, pred, pre in self.patterns:
            if owner not in steps:
                continue
            for var in sorted(
                v for v in pre.variables if v != "this" and slip_distance(v, "this") <= 1
            ):
                self.at_text(
                    "warning",
                    variable_needle(var),
                    owner,
                    f"{self.n(pred)} uses ?{var} but never ?this, the instance's focus: as "
                    "written it is not about the focus and holds for any match in the world"
                    if "this" not in pre.variables
                    else f"{self.n(pred)} uses ?{var} beside ?this: ?{var} is not the "
                    "instance's focus but any node that matches",
                    "did you mean ?this?",
                    (holder, pred),
                )

    def check_patterns_about_focus(self) -> None:
        """A step's horis:requires (an ActionStep's, a DecisionStep rule's) that never names
        ?this: it is about no instance in particular. A rule ``?result :value ?v . FILTER
        (?v > 6)`` held for every instance as soon as any result was critical, and a normal
        result paged the doctor; an ActionStep's pattern picked its arguments from any node,
        or from several. A tool's own horis:requires is the other way round: it sees the
        tool's arguments, and a ?this there is bound to nothing, so the guard held for every
        call. A pattern with no variable (a condition on the world) is left alone, as is one
        reading a proposal's choice, or a ?this misspelt (:meth:`check_focus_typos`)."""
        steps = self.step_nodes()
        chosen = {s.as_var for s in self.defs.steps.values() if isinstance(s, ProposalStep)}
        for owner, holder, pred, pre in self.patterns:
            names = pre.variables
            if owner in steps:
                if pred != HORIS.requires:
                    continue
                step = self.defs.steps.get(cast(URIRef, owner))
                given = (
                    {a.name: step.var_for(a.name) for a in step.tool.args}
                    if isinstance(step, ActionStep) and step.tool is not None
                    else {}
                )
                if given:
                    self.check_shadowed_arguments(
                        cast(ActionStep, step), given, holder, pred, names, chosen
                    )
                if (
                    not names
                    or "this" in names
                    or "this" in given.values()  # its other arguments may come from anywhere
                    # given to an argument the tool lacks: its error names the one meant
                    or (isinstance(step, ActionStep) and any(v == "this" for _, v in step.binds))
                    or names & chosen
                    or any(slip_distance(v, "this") <= 1 for v in names)
                ):
                    continue
                text = " ".join(str(x) for x in self.g.objects(holder, pred))
                var = next((m for m in re.findall(r"[?$](\w+)", text) if m in names), min(names))
                what = "rule" if holder != owner else "step"
                self.at_text(
                    "warning",
                    variable_needle(var),
                    owner,
                    f"{self.n(pred)} never names ?this, the instance's focus: the {what} is "
                    "about no instance in particular — it holds, and binds "
                    f"?{var}, for any match in the world, the same for every instance",
                    f"tie the pattern to the focus: write ?this where ?{var} stands for it, "
                    f"or link ?{var} to ?this (?this :prop ?{var} .)",
                    (holder, pred),
                )
            elif (owner, RDF.type, HORIS.Tool) in self.g:
                args = sorted(self.arg_names(owner))
                for var in sorted(names - {*args, "this"}):
                    near = [a for a in args if len(a) > 3 and slip_distance(var, a) <= 1]
                    if near:  # a misspelt argument is a free variable: any node matches
                        self.at_text(
                            "warning",
                            variable_needle(var),
                            owner,
                            f"{self.n(pred)} of a tool uses ?{var}, which is no argument of "
                            "the tool: it is bound to nothing, so it matches any node and the "
                            "guard does not ask about the call's arguments",
                            f"did you mean ?{near[0]}?",
                            (holder, pred),
                        )
                if "this" not in names or "this" in args:
                    continue
                self.at_text(
                    "error",
                    variable_needle("this"),
                    owner,
                    f"{self.n(pred)} of a tool sees its arguments, not ?this: no focus is "
                    "bound here, so ?this matches any node and the guard holds for every call",
                    "name the argument the guard is about"
                    + (f" ({', '.join('?' + a for a in args)})" if args else "")
                    + ", e.g. ?"
                    + (args[0] if args else "patient")
                    + " :acuity :urgent .",
                    (holder, pred),
                )

    def check_shadowed_arguments(
        self,
        step: ActionStep,
        given: dict[str, str],
        holder: Node,
        pred: URIRef,
        names: frozenset[str],
        chosen: Set[str],
    ) -> None:
        """A pattern variable named as an argument that horis:bind gives from another
        variable (``?patient :queueRef ?ref`` with ``patient`` bound from ``?this``): the
        tool receives ?this, and ``?patient`` in the pattern is any node that matches, so the
        step's other values come from any patient, or from several. A variable nothing
        binds (not in ``names``, neither ?this nor a proposal's choice in ``chosen``) is
        another mistake, the unbound argument's: "write ?mechnic for ?mechanic" would copy
        the slip into the pattern. In a ``horis:forEach`` step given the argument from ?this
        it is the bind that is wrong (``?line`` is the item, the same in every call from
        ?this): writing ?this for ?line in the pattern, as was said, gave it no items."""
        for arg, var in sorted(given.items()):
            bound = var in names or var == "this" or var in chosen
            if var != arg and bound and arg in names and arg not in given.values():
                self.at_text(
                    "warning",
                    variable_needle(arg),
                    step.iri,
                    f'{self.n(pred)} uses ?{arg}, but horis:bind gives argument "{arg}" '
                    f"from ?{var}: ?{arg} in the pattern is not what the tool receives but "
                    "any node that matches, so the values the pattern binds beside it come "
                    "from any such node",
                    f'give "{arg}" from ?{arg}: horis:bind [ horis:arg "{arg}" ; horis:var '
                    f'"{arg}" ] (a horis:forEach step calls its tool once per ?{arg}; from '
                    "?this, every call is given the focus)"
                    if step.for_each and var == "this"
                    else f"write ?{var} for ?{arg} in the pattern",
                    (holder, pred),
                )

    def check_wait_focus(self) -> None:
        """A wait's horis:until that never names ?this: it is about no instance in
        particular, so one answer (any booking's :operatorChoice) ends the wait of every
        instance waiting there alike. A variable a slip from ?this is said by
        :meth:`check_focus_typos`; one a proposal chose (?option) is the instance's own."""
        steps = self.step_nodes()
        chosen = {s.as_var for s in self.defs.steps.values() if isinstance(s, ProposalStep)}
        for owner, holder, pred, pre in self.patterns:
            names = pre.variables
            if (
                pred != HORIS.until
                or owner not in steps
                or "this" in names
                or names & chosen
                or any(slip_distance(v, "this") <= 1 for v in names)
            ):
                continue
            message = (
                "?this is not in the horis:until pattern, so it holds for every instance "
                "alike: once it holds for one, the wait of every instance waiting here ends"
            )
            text = " ".join(str(x) for x in self.g.objects(holder, pred))
            first = re.search(r"[?$](\w+)", text)
            if first is None:
                self.warn(
                    owner,
                    message,
                    'write the pattern about the instance\'s focus, e.g. "?this :approved true ."',
                    at=(holder, pred, self.one(holder, pred)),
                )
                continue
            var = first.group(1)
            self.at_text(
                "warning",
                variable_needle(var),
                owner,
                message,
                f"did you mean ?this in place of ?{var}? ?this is the node the instance runs for",
                (holder, pred),
            )
