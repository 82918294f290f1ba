"""Loaded Turtle → checked → typed models, once.

Every problem an author can make is collected (not raised one at a time) and located by file,
line and node, with what to write instead.

The checking and modelling are parts, one concern to a module, each a class that inherits only
the parts it calls (:class:`~._builder_base.BuilderBase` under them all): patterns
(``_define_patterns``), bindings, tools, steps and workflows (``_define_*``), and the checks of
terms, typed terms, shapes, arguments, focus, pattern values and pattern structure
(``*_checks``). :class:`_Builder` composes them and :meth:`_Builder.build` runs them in one
order, the order problems are found and said in.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

from rdflib import OWL, RDF, RDFS, Graph, URIRef
from rdflib.term import Node

from ._adapter_decl import read_adapters
from ._any_answer import any_answers
from ._datatypes import literal_hint, range_refusing
from ._define_tools import ToolBuilding
from ._define_workflows import WorkflowBuilding
from ._definitions_digest import RDFC_DIGEST, definitions_digest, legacy_definitions_digest
from ._definitions_model import Definitions
from ._errors import AuthoringError, Problem
from ._focus_checks import FocusChecks
from ._for_each_items import ForEachItems
from ._hazards import Hazard, endless_loops, hazards, node_hazards
from ._held_waits import held_waits, written_before
from ._individuals import individuals
from ._mended_flow import mended_steps, mended_workflows, near_steps, unsure_steps
from ._model import ActionStep, Rule, Step, Workflow
from ._near_names import closest_term, nearest_variable, slip_distance
from ._pattern_checks import PatternChecks
from ._pattern_value_checks import PatternValueChecks
from ._read_sources import read_sources
from ._rerun_guards import unguarded_reruns
from ._settled_rules import settled_rules
from ._shadowed_rules import shadowed_rules
from ._shape_counts import minimum_counts, single_values, single_values_of_subjects
from ._shape_hazards import required_before_written, written_twice
from ._shipped_vocabulary import STEP_CLASSES, authoring_shapes, vocabulary_graph

# read here by tests/test_startup.py
from ._shipped_vocabulary import _package_graph as _package_graph
from ._sources import Where
from ._timeouts import parse_timeout
from ._tripped_guards import shut_once_done, tripped_guards
from ._typed_term_checks import TypedTermChecks
from ._unchosen_options import unchosen_options
from ._vacuous_patterns import vacuous_rules, vacuous_waits
from ._vocab import HORIS

__all__ = [
    "Definitions",
    "closest_term",
    "literal_hint",
    "load_definitions",
    "nearest_variable",
    "parse_timeout",
    "range_refusing",
    "vocabulary_graph",
]


def load_definitions(paths: Iterable[str | Path], *, extra: Iterable[Graph] = ()) -> Definitions:
    """Read, check and model ``paths``; raises :class:`AuthoringError` listing every error."""
    with _collector_paused():
        sources = read_sources(paths, extra=extra)
        return _Builder(sources, authoring_shapes()).build()


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector held off while definitions load.

    A load makes a few hundred thousand objects (rdflib terms, graphs, parsed queries) that
    all live on, so each of the collector's passes over them finds nothing and costs more as
    the project grows: ~15% of loading the shipped workflows, more for a larger project. The
    collector is on again afterwards, as it was (left off if the caller had turned it off)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


class _Builder(
    PatternChecks,
    PatternValueChecks,
    FocusChecks,
    ForEachItems,
    WorkflowBuilding,
    ToolBuilding,
    TypedTermChecks,
):
    """The loader: every part of checking and modelling composed, run in the order
    :meth:`build` gives, so the problems come in the same order whatever part finds them."""

    def build(self) -> Definitions:
        self.refer_to_misbound_prefixes()
        self.check_vocabulary()
        self.check_literals()
        self.check_shapes()
        self.defs.subclasses = self.subclass_closure()
        for s in sorted(set(self.g.subjects(RDF.type, HORIS.McpServer)), key=str):
            self.mcp_server(s)
        self.defs.adapters = read_adapters(self.g, self.short)
        for s in sorted(set(self.g.subjects(RDF.type, HORIS.CommandBinding)), key=str):
            self.command(s)
        for s in sorted(set(self.g.subjects(RDF.type, HORIS.Tool)), key=str):
            tool = self.tool(s)
            if tool is not None:
                self.defs.tools[tool.iri] = tool
        for cls in STEP_CLASSES:
            for s in sorted(set(self.g.subjects(RDF.type, cls)), key=str):
                step = self.step(s, cls)
                if step is not None:
                    self.defs.steps[step.iri] = step
        for s in sorted(set(self.g.subjects(RDF.type, HORIS.Workflow)), key=str):
            wf = self.workflow(s)
            if wf is not None:
                self.defs.workflows[wf.iri] = wf
        self.check_tool_names()
        self.check_references()
        self.check_decision_loops()
        self.check_step_budgets()
        self.check_placement()
        named, declared = self.terms()
        self.check_pattern_terms(named)
        self.note_unheld_nodes(named)
        self.check_focus_typos()
        self.check_wait_focus()
        self.check_patterns_about_focus()
        self.check_commented_patterns()
        self.check_lone_variables()
        self.check_graph_blocks()
        self.check_schema_links()
        self.check_derived_reads()
        self.check_class_cycles()
        self.check_subselects()
        self.check_kind_clashes()
        self.check_filter_variables()
        self.check_pattern_literals()
        self.check_compared_kinds()
        self.check_compared_datatypes()
        self.check_text_ordered_numbers()
        self.check_pattern_iris()
        self.check_values_kinds()
        self.check_string_reads()
        self.check_pattern_datatypes()
        self.check_filter_bounds()
        self.check_contradicted_filters()
        self.check_wait_untils()
        self.check_pattern_regexes()
        self.check_type_tests()
        self.check_typed_terms(declared)
        self.check_term_kinds()
        self.check_focus_arguments()
        self.check_chained_workflows()
        self.check_focus_properties()
        self.check_own_writes()
        self.check_replaced_values()
        self.check_refused_answers()
        self.check_refused_requirements()
        self.check_later_writes()
        self.check_unclosed_guards()
        self.check_error_routes()
        self.check_argument_kinds()
        self.check_option_kinds()
        self.check_argument_classes()
        self.check_defined_focus_types()
        self.check_for_each_subjects()
        self.check_for_each_items(self.entailed_from)
        self.check_shacl_terms()
        self.check_closed_terms()
        self.check_range_kinds()
        self.check_shape_kinds()
        self.check_domain_shapes()
        self.check_prefix_clashes(declared)
        self.check_namespaces()
        self.check_split_definitions()
        self.check_imports()
        # a tool's or a step's own hazards, beside the errors too: a tool found wrong is read
        # as written (its retries beside its timeout's error), but not one whose
        # horis:idempotent is wrong, which it would then be warned of as if it said false
        misread = {
            about[0]
            for said in self.said_of.values()
            for about in said
            if about is not None and about[1] == HORIS.idempotent
        }
        for h in node_hazards(self.writers(), self.defs.steps, self.n):
            if h.node not in misread:
                self.hazard(h)
        # the flow-wide hazards walk the flow the errors give once mended, and are not said
        # of a step an error leaves unsure, nor after it (:mod:`._mended_flow`)
        mended = self.mended_flow(misread)
        if mended is not None:
            steps, workflows, doubted = mended
            unsure = unsure_steps(steps, doubted)  # after a step found wrong: all it walks
            near = near_steps(steps, doubted)  # beside one: what reads it, its exits, loop
            users: dict[URIRef, set[URIRef]] = {}  # a tool's hazard is of the steps calling it
            for a in steps.values():
                if isinstance(a, ActionStep) and a.tool is not None:
                    users.setdefault(a.tool.iri, set()).add(a.iri)

            def say(h: Hazard, beside: set[URIRef] = unsure) -> None:
                if h.node not in beside and not users.get(h.node, set()) & beside:
                    self.hazard(h)

            # read of a step, its exits and its loop alone: said whatever the workflows
            for h in endless_loops(steps, self.entailed_from, self.n):
                say(h, near)
            for h in any_answers(steps, self.g, self.n):
                say(h, near)
            for decision, rule, h in shadowed_rules(steps, self.n):
                if h.node not in doubted:  # its own rules alone
                    self.warn(h.node, h.message, h.hint, at=self.when_of(decision.iri, rule))
            for decision, rule, h in vacuous_rules(steps, self.n):
                if h.node not in doubted:  # its own rules alone
                    self.warn(h.node, h.message, h.hint, at=self.when_of(decision.iri, rule))
            for h in vacuous_waits(steps, self.n):
                say(h, set(doubted))
            if workflows is not None:  # a workflow started nowhere: no way is known
                erred = any(p.severity == "error" for p in self.problems)
                self.check_reachability(steps, workflows, written=erred)
                for h in hazards(
                    steps,
                    workflows,
                    self.entailed_from,
                    self.n,
                    shut_once_done,
                ):
                    say(h)
                # a tool given commit scopes and no adapter is said at the tool: meant for one
                unadapted = {
                    s.iri
                    for s in steps.values()
                    if isinstance(s, ActionStep)
                    and s.tool is not None
                    and (s.tool.iri, HORIS.commitScope, None) in self.g
                }
                conditions = self.condition_guards
                for h in unguarded_reruns(
                    steps,
                    workflows,
                    self.entailed_from,
                    self.n,
                    shut_once_done,
                    (self.guards_said - conditions.keys()) | unadapted,
                ):
                    if h.node in unsure:
                        continue
                    if h.node in conditions:  # its guard's warning says it, until a world drops it
                        problem = self.src.problem("warning", h.node, h.message, h.hint, None)
                        self.defs.stated_reruns.setdefault(conditions[h.node], []).append(problem)
                    else:
                        say(h)
                written = written_before(workflows)
                for h in held_waits(steps, written, self.n):
                    say(h)
                for h in tripped_guards(steps, workflows, written, self.n):
                    say(h)
                for decision, rule, h in settled_rules(
                    steps, workflows, written, self.n, self.defs.classes_of
                ):
                    if h.node not in unsure:
                        self.warn(h.node, h.message, h.hint, at=self.when_of(decision.iri, rule))
                self.unchosen_option_warnings(steps, unsure, near)
                required = minimum_counts(self.g)
                for h in required_before_written(workflows, required, self.defs.classes_of, self.n):
                    say(h)
                single = single_values(self.g)
                of_subjects = single_values_of_subjects(self.g)
                classes = self.defs.classes_of
                for h in written_twice(workflows, single, classes, self.n, of_subjects):
                    say(h)
        try:
            self.defs.digest = definitions_digest(self.g)
        except MemoryError:  # pyoxigraph's, reading a term longer than its buffer
            if not self.check_term_sizes():
                raise
        self.defs.individuals = individuals(self.g)
        # The loader's own message (with its hint) wins over a shape's at the same place.
        # A shape's finding about another property of the node the loader's errors at the
        # same place are about is another problem (horis:retries "one" ; horis:idempotent
        # "yes" on one line); anything else there is most likely the loader's, said better.
        said = {(p.file, p.line, p.node) for p in self.problems if p.severity == "error"}

        def another(place: tuple[str | None, int | None, str | None], about: Any) -> bool:
            loader = self.said_of.get(place, set())
            return (
                about is not None
                and bool(loader)
                and all(x is not None and x[0] == about[0] for x in loader)
                and about not in loader
            )

        self.problems += [
            p
            for p, about in dict.fromkeys(self.shape_problems)
            if about not in self.said_better
            and ((place := (p.file, p.line, p.node)) not in said or another(place, about))
        ]
        problems = sorted(self.problems, key=_order)
        self.defs.warnings = [p for p in problems if p.severity == "warning"]
        if any(p.severity == "error" for p in problems):
            self.defs.errors = tuple(p for p in problems if p.severity == "error")
            self.defs.broken_tools = {t.iri: t for t in self.broken_tools.values()}
            raise AuthoringError(problems, definitions=self.defs)
        return self.defs

    def unchosen_option_warnings(
        self, steps: dict[URIRef, Step], unsure: set[URIRef], near: set[URIRef]
    ) -> None:
        """A proposal whose way on when nothing is chosen (or whose horis:next) reads the
        option it chooses: the choice dropped, or the step acting on what its own pattern
        binds. Not said of a proposal :mod:`._mended_flow` leaves ``unsure`` or ``near`` an
        error, nor where the step it reaches is unsure."""
        waits = sorted(self.n(s) for s in self.g.subjects(RDF.type, HORIS.WaitStep))
        for proposal, how, target, reached in unchosen_options(steps):
            if proposal.iri in unsure or proposal.iri in near or reached in unsure:
                continue  # read of the steps it goes on to too
            var, pred = f"?{proposal.as_var}", HORIS[how]
            if how == "next":
                if _misspelt_choice(target, proposal.as_var, steps):
                    continue  # the unbound argument's error names the choice meant
                slips = _choice_slips(target, proposal.as_var, steps)
                self.warn(
                    proposal.iri,
                    f"horis:next {self.n(target)} never reads {var}, the option this "
                    "proposal chooses: the choice is dropped, and the step acts on "
                    "whatever its own pattern binds"
                    + (
                        f"; it reads {', '.join(f'?{v}' for v in slips)} instead, which "
                        "its own pattern binds to any node it allows"
                        if slips
                        else ""
                    ),
                    f"did you mean {var}? write {var} for "
                    + ", ".join(f"?{v}" for v in slips)
                    + f" wherever {self.n(target)} names it"
                    if slips
                    else f"read {var} in {self.n(target)}: in its horis:requires, or "
                    f'horis:bind [ horis:arg "…" ; horis:var "{proposal.as_var}" ]',
                    at=(proposal.iri, pred, target),
                )
                continue
            way = (
                f"horis:{how} {self.n(target)}"
                if reached == target
                else f"horis:{how} {self.n(target)} leads on to {self.n(reached)}, which"
            )
            at_step = steps.get(reached)
            if isinstance(at_step, ActionStep) and not (
                at_step.requires and proposal.as_var in at_step.requires.binds
            ):  # nothing binds it there: the step fails, it acts on nothing
                self.warn(
                    proposal.iri,
                    f"{way} reads {var}: this proposal binds it only when its choice is "
                    f"taken, and on the horis:{how} nothing was chosen and nothing on the "
                    f"way gives {var}, so {self.n(reached)} fails there, its argument not "
                    "given, and the instance fails or takes its horis:onError",
                    f"have {self.n(reached)} read the answer that gives {var} in its "
                    "horis:requires (the triple of a wait's horis:until that names "
                    f"{var}), "
                    f"or send horis:{how} to a step that does not read {var}",
                    at=(proposal.iri, pred, target),
                )
                continue
            self.warn(
                proposal.iri,
                f"{way} reads {var}: this proposal binds it only when its choice is "
                f"taken, and on the horis:{how} nothing was chosen, so {self.n(reached)}'s "
                f"pattern binds {var} itself, to any node it allows, and the tool acts on "
                "an option neither the model nor a person chose",
                f"send horis:{how} to a step that does not read {var}, such as a "
                "horis:WaitStep where an operator chooses"
                + (f" ({', '.join(waits)})" if waits else "")
                if reached == target
                else f"lead {self.n(target)} on to a step that does not read {var}, or "
                f"have {self.n(reached)} read the operator's answer instead",
                at=(proposal.iri, pred, target),
            )

    def mended_flow(
        self, misread: set[Node]
    ) -> tuple[dict[URIRef, Step], dict[URIRef, Workflow] | None, list[URIRef]] | None:
        """The steps and workflows the flow-wide hazards walk, as the load's errors give them
        once mended as they say, and the steps they leave unsure (:mod:`._mended_flow`);
        None when the errors leave the flow unknown (an edge to no step they name), no
        workflows when one starts nowhere (no way to a step is known, what a step and its
        exits hold alone is). ``misread``: the tools whose ``horis:idempotent`` is wrong.
        With no error, the flow as loaded, all of it sure."""
        errors = [p for p in self.problems if p.severity == "error"]
        if not errors:
            return dict(self.defs.steps), dict(self.defs.workflows), []
        declared = set(self.defs.steps)

        def meant(target: URIRef) -> URIRef | None:
            """The step the edge's error says to point at: the one a misspelling is closest
            to, the one step calling a tool, the start of a workflow."""
            if (target, RDF.type, HORIS.Tool) in self.g:
                users = {u for u in self.g.subjects(HORIS.tool, target) if u in declared}
                return cast(URIRef, users.pop()) if len(users) == 1 else None
            if (target, RDF.type, HORIS.Workflow) in self.g:
                start = self.g.value(target, HORIS.start)
                return start if isinstance(start, URIRef) and start in declared else None
            return closest_term(target, declared)

        steps = mended_steps(self.defs.steps, meant)
        if steps is None:
            return None  # an edge to no step its error names
        workflows = mended_workflows(
            [*self.defs.workflows.values(), *self.broken_workflows.values()], steps
        )
        if any(
            wf not in self.defs.workflows and wf not in self.broken_workflows
            for wf in self.g.subjects(RDF.type, HORIS.Workflow)
        ):
            workflows = None  # a workflow started nowhere
        astray = {id(p) for p in self.astray_edges}
        wrong = {p.node for p in errors if id(p) not in astray}
        unsure_tools = {t.iri for t in self.writers() if t.iri in misread or self.effect_unread(t)}
        doubted = [
            iri
            for iri, step in steps.items()
            if self.n(iri) in wrong
            or (
                isinstance(step, ActionStep)
                and (step.tool is None or step.tool.iri in unsure_tools)
            )
        ]
        return steps, workflows, doubted

    def when_of(self, decision: URIRef, rule: Rule) -> Where:
        """Where ``rule`` of ``decision`` is written: its horis:requires, under the
        horis:when that goes to its step with its order; the decision when none is found."""
        for w in self.g.objects(decision, HORIS.when):
            order = self.g.value(w, HORIS.order)
            try:
                same = order is None or float(str(order)) == rule.order
            except ValueError:
                same = False
            if (w, HORIS.next, rule.next) in self.g and same:
                return (w, HORIS.requires, None)
        return decision

    def entailed_from(self, prop: URIRef) -> set[URIRef]:
        """What a statement of ``prop`` may make a pattern see besides ``prop``: its super-,
        equivalent and inverse properties, transitively, and the classes their domains and
        ranges give a node, with those classes' superclasses and equivalents (what OWL-RL
        entailment derives from it)."""
        g = self.g

        def closure(start: URIRef, ways: tuple[tuple[URIRef, bool], ...]) -> set[URIRef]:
            found: set[URIRef] = set()
            todo = [start]
            while todo:
                x = todo.pop()
                for p, forward in ways:
                    for y in g.objects(x, p) if forward else g.subjects(p, x):
                        if isinstance(y, URIRef) and y not in found and y != start:
                            found.add(y)
                            todo.append(y)
            return found

        props = {prop} | closure(
            prop,
            (
                (RDFS.subPropertyOf, True),
                (OWL.equivalentProperty, True),
                (OWL.equivalentProperty, False),
                (OWL.inverseOf, True),
                (OWL.inverseOf, False),
            ),
        )
        classes = {
            c
            for p in props
            for c in [*g.objects(p, RDFS.domain), *g.objects(p, RDFS.range)]
            if isinstance(c, URIRef)
        }
        up = ((RDFS.subClassOf, True), (OWL.equivalentClass, True), (OWL.equivalentClass, False))
        return (props - {prop}) | classes | {s for c in classes for s in closure(c, up)}


def _misspelt_choice(target: URIRef, chosen: str, steps: Mapping[URIRef, Step]) -> bool:
    """Whether ``target`` gives a tool argument from a variable its pattern does not bind
    and that is most likely the proposal's ``?chosen`` misspelt (``horis:var "mech"`` for
    ``?mechanic``): the step does mean to read the choice, and the unbound argument's error
    says which variable was meant."""
    step = steps.get(target)
    if not isinstance(step, ActionStep) or step.tool is None:
        return False
    bound = step.requires.binds if step.requires is not None else set()
    return any(
        var not in bound | {"this", chosen} and nearest_variable(var, [chosen]) == chosen
        for var in step.arg_vars
    )


def _choice_slips(target: URIRef, chosen: str, steps: Mapping[URIRef, Step]) -> list[str]:
    """The variables ``target`` reads that are most likely the proposal's ``?chosen``
    misspelt, where its own pattern binds them (``?optoin`` in its horis:requires and its
    horis:bind, for ``?option``): no argument is left unbound, so no error names the
    choice, and the step acts on any node the slip matches."""
    step = steps.get(target)
    if not isinstance(step, ActionStep) or step.requires is None:
        return []
    # one slip (a letter left out, added, changed, two swapped, a case): a name merely
    # beginning like it (?o, ?opt) is another variable
    return sorted(
        v for v in step.requires.binds - {"this", chosen} if slip_distance(v, chosen) <= 1
    )


def _order(p: Problem) -> tuple[str, int, str, str]:
    return (p.file or "~", p.line or 0, p.node or "", p.message)


def same_definitions(defs: Definitions, recorded: str | None) -> bool:
    """Whether ``recorded`` (a trace header's digest) is the digest of ``defs``, in the form
    it was recorded in."""
    if recorded is None or recorded == defs.digest:
        return recorded is not None
    if recorded.startswith(RDFC_DIGEST) or not defs.digest.startswith(RDFC_DIGEST):
        return False
    if defs._legacy_digest is None:  # a folder of old traces asks once
        defs._legacy_digest = legacy_definitions_digest(defs.graph)
    return recorded == defs._legacy_digest
