"""Workflows, from Turtle to frozen models, and the checks of their flow as a whole.

A workflow ties steps together: a reference to a step that is not there, a step no path
reaches or a decision that loops forever is said here, with the steps it concerns."""

from __future__ import annotations

from typing import cast

from rdflib import OWL, RDF, RDFS, Literal, URIRef
from rdflib.term import Node

from ._define_steps import StepBuilding
from ._digraph import Digraph, add_edge, descendants
from ._hazards import decision_loops, fewest_steps, flow_graph
from ._model import DEFAULT_MAX_STEPS, DecisionStep, Step, Workflow
from ._vocab import HORIS

__all__ = ["WorkflowBuilding"]


class WorkflowBuilding(StepBuilding):
    """Building workflows and checking their flow: references, budgets, decision loops,
    reachability."""

    def workflow(self, s: Node) -> Workflow | None:
        start = self.one(s, HORIS.start)
        focus = self.one(s, HORIS.focusType)
        self.check_untried_requires(s, HORIS.Workflow)
        ok = True
        if start is None:
            self.error(
                s,
                "the workflow has no horis:start, so no instance could begin",
                "write horis:start :FirstStep (one of: " + self.some(self.step_nodes()) + ")",
            )
            ok = False
        if isinstance(focus, Literal):
            self.quoted(s, HORIS.focusType, focus, self.types())
            ok = False
        elif not isinstance(focus, URIRef):
            self.error(
                s,
                "the workflow has no horis:focusType",
                "write horis:focusType :Patient (the class of the node each instance runs for)",
            )
            ok = False
        elif self.datatype(focus):
            classes = {c for k in (OWL.Class, RDFS.Class) for c in self.g.subjects(RDF.type, k)}
            self.error(
                s,
                f"horis:focusType {self.n(focus)} is a datatype: a value such as a string or "
                "a number is never the focus of an instance, so no instance could run",
                "name the class of the node each instance runs for, one of: " + self.some(classes),
                at=(s, HORIS.focusType, focus),
            )
            ok = False
        if not ok:
            if isinstance(start, URIRef) and start in self.step_nodes():
                # its flow is right: the warnings about it are said beside its error
                self.broken_workflows[URIRef(str(s))] = Workflow(
                    URIRef(str(s)),
                    focus if isinstance(focus, URIRef) else OWL.Thing,
                    start,
                    self.defs.steps,
                )
            return None
        budget = self.one(s, HORIS.maxSteps)  # its shape says what to write when it is wrong
        max_steps = budget.toPython() if isinstance(budget, Literal) else None
        if not isinstance(max_steps, int) or isinstance(max_steps, bool) or max_steps < 1:
            max_steps = DEFAULT_MAX_STEPS
        return Workflow(
            URIRef(s),  # type: ignore[arg-type]
            focus,  # type: ignore[arg-type]
            URIRef(start),  # type: ignore[arg-type]
            self.defs.steps,
            max_steps,
        )

    def check_step_budgets(self) -> None:
        """A ``horis:maxSteps`` below the fewest steps an instance runs to its end: every
        instance would stop, out of steps, before it could (:func:`~._hazards.fewest_steps`)."""
        flow: Digraph[URIRef] | None = None  # made once, for the first budget written
        for wf in self.defs.workflows.values():
            written = self.one(wf.iri, HORIS.maxSteps)
            if written is None:
                continue
            flow = flow if flow is not None else flow_graph(self.defs.steps)
            fewest = fewest_steps(self.defs.steps, flow, wf.start)
            if fewest is not None and wf.max_steps < fewest:
                self.error(
                    wf.iri,
                    f"horis:maxSteps {wf.max_steps}, but an instance of {self.n(wf.iri)} runs "
                    f"at least {fewest} steps from {self.n(wf.start)} to its end (every step "
                    "entered counts), so every instance would stop out of steps before it "
                    "could end, after its first tools have acted",
                    f"write horis:maxSteps {max(fewest * 2, 10)} or more: the budget is the "
                    "steps a whole instance may run, resumes included",
                    at=(wf.iri, HORIS.maxSteps, written),
                )

    def check_references(self) -> None:
        edges = {
            HORIS.next: "horis:next",
            HORIS.onError: "horis:onError",
            HORIS.start: "horis:start",
            HORIS.otherwise: "horis:otherwise",
            HORIS.fallback: "horis:fallback",
            HORIS.onTimeout: "horis:onTimeout",
            HORIS.onPartial: "horis:onPartial",
        }
        step_nodes = self.step_nodes()
        abstract: set[Node] = set()
        for pred, label in edges.items():
            for s, o in self.g.subject_objects(pred):
                if o in step_nodes:
                    continue
                # s may be a blank node (horis:when [ … horis:next :X ]); the problem names
                # the step it is written under and points at the statement itself.
                if isinstance(o, Literal):
                    self.quoted(s, pred, o, step_nodes)
                elif (o, RDF.type, HORIS.Tool) in self.g:
                    users = sorted(self.n(x) for x in self.g.subjects(HORIS.tool, o))
                    self.error(
                        s,
                        f"{label} {self.n(o)} is a tool, not a step: a flow goes from step "
                        "to step, and a horis:ActionStep calls the tool",
                        f"point {label} at a step that uses it: {', '.join(users)}"
                        if users
                        else f"declare a step that uses it (:SomeStep a horis:ActionStep ; "
                        f"horis:tool {self.n(o)} .) and point {label} at that step",
                        at=(s, pred, o),
                    )
                    self.astray_edges.append(self.problems[-1])
                elif (o, RDF.type, HORIS.Workflow) in self.g:
                    start = self.one(o, HORIS.start)
                    self.error(
                        s,
                        f"{label} {self.n(o)} is a workflow, not a step: a flow goes from step "
                        "to step within one workflow, and one workflow does not start another",
                        f"point {label} at {self.n(start)}, the step {self.n(o)} starts at"
                        if start is not None and start in step_nodes
                        else f"point {label} at a step (a horis:ActionStep, horis:DecisionStep, "
                        "horis:ProposalStep or horis:WaitStep)",
                        at=(s, pred, o),
                    )
                    self.astray_edges.append(self.problems[-1])
                elif (o, RDF.type, HORIS.Step) in self.g:
                    if o not in abstract:  # said once, where it is typed
                        abstract.add(o)
                        self.error(
                            o,
                            "horis:Step is the class of every step, not a kind of step: no "
                            f"step runs as one, so the {label} to it leads nowhere",
                            f"write {self.n(o)} a {self.n(self.step_kind(o))}",
                            at=(o, RDF.type, HORIS.Step),
                        )
                elif o in self.miskinded:
                    pass  # typed with a horis: term misspelt: said at its type, alone
                elif (o, None, None) in self.g:
                    self.error(
                        s,
                        f"{label} {self.n(o)} is not a step",
                        f"declare {self.n(o)} a horis:ActionStep, horis:DecisionStep, "
                        "horis:ProposalStep or horis:WaitStep",
                        at=(s, pred, o),
                    )
                else:
                    self.error(
                        s,
                        f"{label} points to {self.n(o)}, which is not declared",
                        self.meant(o, step_nodes)
                        + f"declare {self.n(o)} as a step, or point {label} at one of: "
                        + self.some(step_nodes),
                        at=(s, pred, o),
                    )
                    self.astray_edges.append(self.problems[-1])

    def check_decision_loops(self) -> None:
        """A cycle of DecisionSteps with no step on it that acts or waits: the world is the
        same each time round, so an instance that goes round once would go round for ever
        (the run stops it, failed, on coming back). An error at the edge that closes it."""
        for cycle in decision_loops(self.defs.steps):
            src, dst = cycle[-2], cycle[-1]
            at = self.edge(src, dst)
            label = self.n(at[1]) if at is not None else "horis:next"
            steps = self.defs.steps.items()
            others = [s for s, step in steps if not isinstance(step, DecisionStep)]
            self.error(
                src,
                f"{label} {self.n(dst)} closes a loop of decision steps only "
                f"({' → '.join(self.n(s) for s in cycle)}): no step on it acts or waits, so "
                "the world is the same each time round and an instance that takes it would "
                "loop forever",
                f"point {label} at a step that acts or waits (one of: {self.some(others)}), "
                "or put one on the loop",
                at=at,
            )

    def check_reachability(
        self, steps: dict[URIRef, Step], workflows: dict[URIRef, Workflow], *, written: bool
    ) -> None:
        """A step no workflow reaches, walking ``steps`` from ``workflows``' starts: the
        flow the load's errors give once mended (:mod:`._mended_flow`). With ``written``
        (beside errors), every edge written to a step is walked too: a rule whose pattern
        does not parse is left out of its decision's model, not out of the mended flow; and
        nothing is said where a decision reached lacks an exit its error asks for (no
        ``horis:otherwise``, a rule with no ``horis:next``): the step it will name may be
        any of those unreached."""
        flow = flow_graph(steps)
        for src in steps if written else ():
            for target in self.flow_targets(src):
                if isinstance(target, URIRef) and target in steps:
                    add_edge(flow, src, target)
        reached: set[Node] = set()
        for wf in workflows.values():
            if wf.start in flow:
                reached |= {wf.start, *descendants(flow, wf.start)}
        if written and any(
            isinstance(steps.get(cast(URIRef, s)), DecisionStep)
            and (
                self.one(s, HORIS.otherwise) is None
                or any(self.one(w, HORIS.next) is None for w in self.g.objects(s, HORIS.when))
            )
            for s in reached
        ):
            return
        for step in steps:
            if step not in reached:
                self.warn(
                    step,
                    "the step is unreachable from any workflow's start",
                    "point a horis:next, horis:onError or horis:start at it, or remove it",
                )
        unreached = {s for s in steps if s not in reached}
        self.check_crossings(unreached, flow, workflows)

    def check_crossings(
        self, unreached: set[URIRef], flow: Digraph[URIRef], workflows: dict[URIRef, Workflow]
    ) -> None:
        """A flow edge into the middle of another workflow, where a step of this one was
        meant (``:Assess horis:next :Notify``, :Notify a step of :Payout after its :Pay,
        where :Approve was meant): no :Payout instance is started, :Notify runs without
        what :Pay did, and the only words were "unreachable" at :Approve, which named no
        edge. Said at the edge, with the unreachable step meant, when a step no flow statement
        names is left unreached: the one written next after the edge's step in its file. A
        step two workflows share on purpose leaves none behind, and is not said."""
        pointed = {t for out in flow.values() for t in out}
        orphans = sorted((u for u in unreached if u not in pointed), key=str)
        if not orphans:
            return
        flows = sorted(workflows.values(), key=lambda w: str(w.iri))
        walked = {wf.iri: wf.reachable() for wf in flows}
        reach = {iri: {s.iri for s in steps} for iri, steps in walked.items()}
        starts = {wf.start for wf in flows}
        crossings: list[tuple[tuple[str, int], URIRef, URIRef, Workflow, Workflow]] = []
        for wf in flows:
            for step in walked[wf.iri]:
                for target in self.flow_targets(step.iri):
                    other = next(
                        (
                            o
                            for o in flows
                            if o.iri != wf.iri
                            and target in reach[o.iri]
                            and step.iri not in reach[o.iri]
                            and wf.start not in reach[o.iri]
                        ),
                        None,
                    )
                    file, line = self.src.locate(step.iri)
                    if other is None or target in starts or file is None or line is None:
                        continue
                    crossings.append(((file, line), step.iri, cast(URIRef, target), wf, other))
        said: set[URIRef] = set()
        for orphan in orphans:
            file, line = self.src.locate(orphan)
            before = [c for c in crossings if c[0][0] == file and line and c[0][1] < line]
            if not before:
                continue
            _, src, target, wf, other = max(before, key=lambda c: c[0][1])
            edge = self.edge(src, target)
            if edge is None or src in said:
                continue
            said.add(src)
            into, theirs, meant = self.n(target), self.n(other.iri), self.n(orphan)
            self.warn(
                src,
                f"{self.n(edge[1])} {into} goes into the middle of another workflow, {theirs}: "
                f"no {theirs} instance is started; {into} and the steps after it run as steps "
                f"of this {self.n(wf.iri)} instance, without what {theirs}'s steps before it "
                f"do, and {meant}, written next, is reached by no workflow",
                f"did you mean {self.n(edge[1])} {meant}? Else give {self.n(wf.iri)} a step "
                f"of its own for what {into} does",
                at=edge,
            )
