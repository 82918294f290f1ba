"""Loaded Turtle → checked → typed models, once.

Every problem an author can make is collected (not raised one at a time) and located by file,
line and node, with what to write instead.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterable, Iterator, Mapping, Set
from contextlib import contextmanager
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import Any, cast

from rdflib import OWL, RDF, RDFS, XSD, Graph, Literal, URIRef
from rdflib.term import Node, Variable

from ._adapter_decl import read_adapters
from ._builder_base import LOCAL_NAME, STANDARD_NAMESPACES
from ._datatypes import NUMERIC, literal_datatype, literal_hint, range_refusing, turtle_term
from ._define_tools import ToolBuilding
from ._define_workflows import WorkflowBuilding
from ._definitions_digest import RDFC_DIGEST, definitions_digest, legacy_definitions_digest
from ._definitions_model import Definitions
from ._digraph import Digraph, add_edge, shortest_path, strongly_connected
from ._errors import AuthoringError, Problem
from ._focus_checks import FocusChecks
from ._graph_blocks import named_graph_reads
from ._hazards import (
    endless_loops,
    hazards,
    minimum_counts,
    required_before_written,
    single_values,
    single_values_of_subjects,
    unchosen_options,
    written_twice,
)
from ._individuals import individuals
from ._model import ActionStep, ProposalStep, Step
from ._near_names import closest_term, near_individual, nearest_variable
from ._pattern_comments import commented_out
from ._preconditions import (
    InList,
    LiteralMatch,
    Precondition,
    bound_tests,
    detached_tests,
    filter_scopes,
    iri_matches,
    literal_matches,
    string_reads,
)
from ._schema_links import LINKS, dangling_links
from ._shipped_vocabulary import STEP_CLASSES, authoring_shapes, vocabulary_graph

# read here by tests/test_startup.py
from ._shipped_vocabulary import _package_graph as _package_graph
from ._sources import read_sources
from ._store_syntax import bad_regexes
from ._subselects import unselected_focus
from ._term_kinds import (
    algebra_literals,
    blocks,
    kind_clashes,
    object_kind,
    pattern_nodes,
    range_class,
)
from ._terms import split_iri
from ._timeouts import parse_timeout
from ._type_tests import missed_subclasses
from ._typed_term_checks import TypedTermChecks
from ._values_joins import joined_values
from ._vocab import HORIS, NS

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


class _Builder(FocusChecks, WorkflowBuilding, ToolBuilding, TypedTermChecks):
    """The loader: every part of checking and modelling composed, run in the order
    :meth:`build` gives, so the problems come in the same order whatever part finds them."""

    def build(self) -> Definitions:
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
        self.check_graph_blocks()
        self.check_schema_links()
        self.check_class_cycles()
        self.check_subselects()
        self.check_kind_clashes()
        self.check_filter_variables()
        self.check_pattern_literals()
        self.check_pattern_iris()
        self.check_values_kinds()
        self.check_string_reads()
        self.check_pattern_datatypes()
        self.check_pattern_regexes()
        self.check_type_tests()
        self.check_typed_terms(declared)
        self.check_term_kinds()
        self.check_focus_arguments()
        self.check_chained_workflows()
        self.check_focus_properties()
        self.check_own_writes()
        self.check_argument_kinds()
        self.check_option_kinds()
        self.check_argument_classes()
        self.check_defined_focus_types()
        self.check_for_each_subjects()
        self.check_shacl_terms()
        self.check_closed_terms()
        self.check_range_kinds()
        self.check_shape_kinds()
        self.check_domain_shapes()
        self.check_prefix_clashes(declared)
        self.check_namespaces()
        self.check_split_definitions()
        if not any(p.severity == "error" for p in self.problems):  # a broken flow misleads it
            self.check_reachability()
            for h in hazards(self.defs.tools, self.defs.steps, self.defs.workflows, self.n):
                self.hazard(h)
            for h in endless_loops(self.defs.steps, self.entailed_from, self.n):
                self.hazard(h)
            waits = sorted(self.n(s) for s in self.g.subjects(RDF.type, HORIS.WaitStep))
            for proposal, how, target, reached in unchosen_options(self.defs.steps):
                var, pred = f"?{proposal.as_var}", HORIS[how]
                if how == "next":
                    if _misspelt_choice(target, proposal.as_var, self.defs.steps):
                        continue  # the unbound argument's error names the choice meant
                    self.warn(
                        proposal.iri,
                        f"horis:next {self.n(target)} never reads {var}, the option this "
                        "proposal chooses: the choice is dropped, and the step acts on whatever "
                        "its own pattern binds",
                        f"read {var} in {self.n(target)}: in its horis:requires, or horis:bind "
                        f'[ horis:arg "…" ; horis:var "{proposal.as_var}" ]',
                        at=(proposal.iri, pred, target),
                    )
                    continue
                way = (
                    f"horis:{how} {self.n(target)}"
                    if reached == target
                    else f"horis:{how} {self.n(target)} leads on to {self.n(reached)}, which"
                )
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
            required = minimum_counts(self.g)
            for h in required_before_written(
                self.defs.workflows, required, self.defs.classes_of, self.n
            ):
                self.hazard(h)
            single = single_values(self.g)
            of_subjects = single_values_of_subjects(self.g)
            for h in written_twice(
                self.defs.workflows, single, self.defs.classes_of, self.n, of_subjects
            ):
                self.hazard(h)
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
            if (place := (p.file, p.line, p.node)) not in said or another(place, about)
        ]
        problems = sorted(self.problems, key=_order)
        self.defs.warnings = [p for p in problems if p.severity == "warning"]
        if any(p.severity == "error" for p in problems):
            self.defs.errors = tuple(p for p in problems if p.severity == "error")
            raise AuthoringError(problems, definitions=self.defs)
        return self.defs

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

    def note_unheld_nodes(self, named: set[URIRef]) -> None:
        """The nodes patterns and fixed effect values name that nothing loaded names
        (:attr:`Definitions.unheld`): a typo there (``:Urgent``) made a pattern that never
        matched, every instance blocked, or an effect that pointed at no node; whether the
        world holds them is asked only when validate is given one."""

        def unheld(node: URIRef) -> bool:
            return node not in named and not str(node).startswith((*STANDARD_NAMESPACES, NS))

        declared = self.declared_individuals
        for owner, holder, pred, algebra in self.parsed_patterns():
            for node in sorted(filter(unheld, pattern_nodes(algebra)), key=str):
                name = self.n(node)
                near = near_individual(node, declared)
                said = rf"(?:{re.escape(name)}|<{re.escape(str(node))}>)(?![\w-])"
                meant = f"did you mean {self.n(near)}?" if near is not None else None
                self.defs.unheld.setdefault(node, []).append(
                    self.placed_in_text(
                        "warning",
                        said,
                        owner,
                        f"{self.n(pred)} names {name}, which neither the definitions nor the "
                        "world hold, so that part of the pattern never matches",
                        meant,
                        (holder, pred),
                    )
                )
                if near is not None:  # said without a world too: kept by term, as the
                    # undeclared are, so that a world holding it drops it
                    self.defs.undeclared.setdefault(node, []).append(
                        problem := self.placed_in_text(
                            "warning",
                            said,
                            owner,
                            f"{self.n(pred)} names {name}, which the definitions do not "
                            f"declare, though they declare {self.n(near)} "
                            f"(a {', '.join(sorted(map(self.n, declared[near])))}): unless the "
                            f"world holds {name}, that part of the pattern never matches",
                            meant,
                            (holder, pred),
                        )
                    )
                    self.problems.append(problem)
        for tool in self.defs.tools.values():
            for a in tool.effect.asserts if tool.effect else ():
                v = a.value
                if (
                    isinstance(v, URIRef)
                    and v != HORIS.now
                    and not str(v).startswith((*STANDARD_NAMESPACES, NS))
                    and (v, None, None) not in self.g  # named only as this value
                    and all(p == HORIS.value for p in self.g.predicates(None, v))
                ):
                    written = self.g.value(predicate=HORIS.value, object=v)
                    self.defs.unheld.setdefault(v, []).append(
                        self.src.problem(
                            "warning",
                            tool.iri,
                            f"horis:value {self.n(v)} of {self.n(a.property)} is a node "
                            "neither the definitions nor the world hold: every call points "
                            f"{self.n(a.property)} at nothing",
                            None,
                            at=(written, HORIS.value, v) if written is not None else None,
                        )
                    )

    @cached_property
    def declared_individuals(self) -> dict[URIRef, set[URIRef]]:
        """The named nodes the files type with a domain class (``:major a :Severity``), with
        their classes: what a node a pattern names and nothing declares most likely meant."""
        found: dict[URIRef, set[URIRef]] = {}
        for s, c in self.g.subject_objects(RDF.type):
            if (
                isinstance(s, URIRef)
                and isinstance(c, URIRef)
                and not str(c).startswith((*STANDARD_NAMESPACES, NS))
                and s not in self.definition_nodes
            ):
                found.setdefault(s, set()).add(c)
        return found

    def check_pattern_literals(self) -> None:
        """A literal a pattern holds a property to that is not of the property's rdfs:range
        (``:onCall "true"`` where the range is xsd:boolean, ``FILTER (?v > "6.0")`` where
        ``?v`` is a ``:value``, an xsd:decimal): no value of the property equals it (a string
        is never the boolean true), and a string is never ordered with a number, so the
        pattern never holds — a rule never taken, a step blocked for ever. A warning: the
        world may hold values the ontology does not promise. Numbers of different types
        compare by value in a FILTER, so they are not judged there. A literal for a property
        whose values are nodes (``FILTER (?queue = "urgent")`` where :acuity is an
        owl:ObjectProperty) never equals one either (:meth:`node_literal`). A FILTER's
        variable is judged only when every property binding it (in each branch of a
        ``UNION``) refuses the literal the same way: one whose values may equal it makes the
        FILTER true there."""
        seen: set[tuple[Node, URIRef, Literal]] = set()
        for owner, holder, pred, algebra in self.parsed_patterns():
            matches = literal_matches(algebra)
            binders: dict[tuple[str, Literal, bool], set[URIRef]] = {}
            for m in matches:
                if m.var is not None:
                    binders.setdefault((m.var, m.literal, m.as_string), set()).add(m.property)
            lists: set[tuple[str, InList]] = set()
            for m in matches:
                prop, lit, var = m.property, m.literal, m.var
                if (holder, prop, lit) in seen or (var, m.in_list) in lists:
                    continue
                refusal = self.match_refusal(m, prop)
                if refusal is None or (
                    var is not None
                    and any(
                        self.match_refusal(m, q) != refusal
                        for q in binders[(var, lit, m.as_string)]
                    )
                ):
                    continue
                seen.add((holder, prop, lit))
                if refusal == "node" and self.every_member_a_literal(m, binders):
                    lists.add((cast(str, var), cast(InList, m.in_list)))
                    self.node_literals(owner, holder, pred, m)
                    continue
                if refusal == "node":
                    self.node_literal(owner, holder, pred, m)
                    continue
                given = literal_datatype(lit)
                r = cast(URIRef, range_refusing(given, self.g.objects(prop, RDFS.range)))
                written = turtle_term(lit, self.n)
                is_a = "a string" if given == XSD.string else f"a literal of {self.n(given)}"
                self.at_text(
                    "warning",
                    re.escape(written) if var is None else rf"[?$]{re.escape(var)}\b",
                    owner,
                    f"{self.n(pred)}: {self.n(prop)} has rdfs:range {self.n(r)}, but "
                    + (
                        f"the pattern matches it with {written}, {is_a}, which no value of "
                        f"{self.n(prop)} equals, so the pattern never holds"
                        if var is None
                        else f"the FILTER compares ?{var} (its value) with {written}, {is_a}, "
                        f"which is never equal to or ordered with a value of {self.n(r)}, so "
                        + _comparison_outcome(m, f"?{var}", written)
                    ),
                    literal_hint(lit, r, self.n),
                    (holder, pred),
                    after="" if var is None else "FILTER",
                    also=written,
                )

    def match_refusal(self, m: LiteralMatch, prop: URIRef) -> str | None:
        """How no value of ``prop`` matches ``m`` (:meth:`literal_refusal`). ``str(?v)``
        compared for (in)equality is judged only when ``prop``'s values are nodes and the
        literal is no IRI: its text is then never a node's IRI; of a literal, ``str()`` is
        its lexical form, which may well be the literal compared (``str(?n) = "6"``)."""
        if not m.as_string:
            return self.literal_refusal(prop, m.literal, m.var is not None)
        if m.op not in ("=", "!=") or _IRI_TEXT.match(m.literal):
            return None
        return "node" if object_kind(self.g, prop) == "node" else None

    def check_string_reads(self) -> None:
        """``regex(?queue, "urgent")`` (``CONTAINS``, ``STRSTARTS``, ``LCASE``… of
        ``?queue``) where every property binding ``?queue`` takes nodes: a string function
        given an IRI is an error in every store, so what the call tests is never true and a
        FILTER of it alone never holds — the step blocked for every instance, no word said.
        A warning at the call, with ``str(?queue)`` to write, or the node to compare with."""
        for owner, holder, pred, algebra in self.parsed_patterns():
            bound: dict[tuple[str, str], set[URIRef]] = {}
            for prop, var, fn in string_reads(algebra):
                bound.setdefault((var, fn), set()).add(prop)
            for (var, fn), props in bound.items():
                if not all(object_kind(self.g, p) == "node" for p in props):
                    continue
                called = fn.lower() if fn == "REGEX" else fn
                rest = "" if fn in ("LCASE", "UCASE", "STRLEN") else ", …"
                of = ", ".join(sorted(self.n(p) for p in props))
                self.at_text(
                    "warning",
                    rf"(?i)\b{fn}\s*\(\s*[?$]{re.escape(var)}\b",
                    owner,
                    f"{self.n(pred)}: {called}(?{var}{rest}) reads a string, but ?{var} is a node "
                    f"({of}'s values are nodes): the call is an error for every value, so what "
                    "it tests is never true",
                    f"write {called}(str(?{var}){rest}) to read the text of its IRI, or compare "
                    f"?{var} with the node meant (?{var} = :…)",
                    (holder, pred),
                )

    def literal_refusal(self, prop: URIRef, lit: Literal, compared: bool) -> str | None:
        """How no value of ``prop`` equals ``lit``: "node" when its values are nodes, "range"
        when its rdfs:range refuses the literal's datatype (numbers, ``compared`` in a
        FILTER, compare across types), else None."""
        if object_kind(self.g, prop) == "node":
            return "node"
        given = literal_datatype(lit)
        r = range_refusing(given, self.g.objects(prop, RDFS.range))
        if r is None or (compared and given in NUMERIC and r in NUMERIC):
            return None
        return "range"

    def node_literal(self, owner: Node, holder: Node, pred: URIRef, m: LiteralMatch) -> None:
        """A pattern holding ``m``'s property, whose values are nodes, to its literal: as
        ``?s prop lit``, in a FILTER comparing ``?var`` with it (``!=`` is then always true,
        the others never), or ``str(?var)``, the text of the node's IRI, which is never the
        literal (no IRI's text, :meth:`match_refusal`). A warning, with the node of that
        name the files declare (``:urgent`` for ``"urgent"``), else one of that name in the
        range's namespace."""
        prop, lit, var = m.property, m.literal, m.var
        written = turtle_term(lit, self.n)
        meant = self.meant_node(prop, lit)
        node = self.n(meant) if meant is not None else "the node meant, with its prefix"
        compared = (
            f"str(?{var}), the text of its IRI, with {written}, which is no IRI"
            if m.as_string
            else f"?{var} (its value) with {written}, a literal, which no node equals"
        )
        self.at_text(
            "warning",
            re.escape(written) if var is None else rf"[?$]{re.escape(var)}\b",
            owner,
            f"{self.n(pred)}: {self.n(prop)}'s values are nodes, but "
            + (
                f"the pattern matches it with {written}, a literal, which no node equals, so "
                "the pattern never holds"
                if var is None
                else f"the FILTER compares {compared}, so "
                + _comparison_outcome(m, f"str(?{var})" if m.as_string else f"?{var}", written)
            ),
            f"compare ?{var} itself with the node: ?{var} {m.op} {node}"
            if m.as_string
            else f"write the node {node}, without quotes"
            if meant is not None
            else "write the node meant, with its prefix and without quotes",
            (holder, pred),
            after="" if var is None else "FILTER",
            also=written,
        )

    def meant_node(self, prop: URIRef, lit: Literal) -> URIRef | None:
        """The node ``lit`` most likely names among ``prop``'s values: one of that name the
        files type with its range, in any case, else one of that name in the range's (or the
        property's) namespace; None when ``lit`` cannot be a local name."""
        cls = range_class(self.g, prop)
        named = [
            n
            for n in (self.g.subjects(RDF.type, cls) if cls is not None else ())
            if isinstance(n, URIRef) and split_iri(n)[1].lower() == str(lit).lower()
        ]
        if named:
            return min(named, key=str)
        return URIRef(split_iri(cls or prop)[0] + str(lit)) if LOCAL_NAME.fullmatch(lit) else None

    def nodes_meant(self, prop: URIRef, literals: Iterable[Node], many: str, sep: str) -> str:
        """The nodes meant by ``literals`` (:meth:`meant_node`), written ``many`` (a format
        of ``{}``, the nodes joined by ``sep``), or how to write them when one cannot be
        told."""
        meant = [self.meant_node(prop, x) if isinstance(x, Literal) else None for x in literals]
        if any(n is None for n in meant):
            return "write the nodes meant, with their prefix and without quotes"
        return "write the nodes meant, without quotes: " + many.format(
            sep.join(self.n(cast(URIRef, n)) for n in meant)
        )

    def every_member_a_literal(
        self, m: LiteralMatch, binders: Mapping[tuple[str, Literal, bool], set[URIRef]]
    ) -> bool:
        """Whether ``m`` is a member of an ``IN`` / ``NOT IN`` list of several every member
        of which is a literal no value of the variable's properties (nodes) equals."""
        if m.in_list is None or m.var is None:
            return False
        props = binders[(m.var, m.literal, m.as_string)]
        return all(
            isinstance(x, Literal)
            and all(self.match_refusal(replace(m, literal=x), q) == "node" for q in props)
            for x in m.in_list.members
        )

    def node_literals(self, owner: Node, holder: Node, pred: URIRef, m: LiteralMatch) -> None:
        """An ``IN`` / ``NOT IN`` list of a FILTER every member of which is a literal, of a
        variable whose values are nodes: said once for the list, which is never true (``NOT
        IN``: always true), not member by member as if the others could hold."""
        in_list, var, prop = cast(InList, m.in_list), cast(str, m.var), m.property
        shown = ", ".join(turtle_term(x, self.n) for x in in_list.members)
        compared = f"str(?{var})" if m.as_string else f"?{var}"
        negated = m.op == "!="
        test = f"{compared} {'NOT IN' if negated else 'IN'} ({shown})"
        self.at_text(
            "warning",
            rf"[?$]{re.escape(var)}\b",
            owner,
            f"{self.n(pred)}: {self.n(prop)}'s values are nodes, but the FILTER compares "
            + (
                f"str(?{var}), the text of its IRI, with {shown}, none of which is an IRI"
                if m.as_string
                else f"?{var} (its value) with {shown}, literals, which no node equals"
            )
            + ", so "
            + _outcome(negated, in_list.needed, in_list.enough, m.bound, test, var, whole=True),
            self.nodes_meant(prop, in_list.members, f"{compared} IN ({{}})", ", "),
            (holder, pred),
            after="FILTER",
            also=turtle_term(in_list.members[0], self.n),
        )

    def check_pattern_iris(self) -> None:
        """A FILTER comparing a variable whose values are literals with a node
        (``sameTerm(?ref, :urgent)``, ``?ref = :urgent`` where :queueRef is an
        owl:DatatypeProperty): no literal is the node, so ``=`` never holds and ``!=``
        always does, as :meth:`node_literal` says of the mirror. A warning, as that one: the
        world may hold values the ontology does not promise. Judged only when every property
        binding the variable takes literals."""
        for owner, holder, pred, algebra in self.parsed_patterns():
            matches = iri_matches(algebra)
            binders: dict[str, set[URIRef]] = {}
            for m in matches:
                binders.setdefault(m.var, set()).add(m.property)
            said: set[tuple[str, URIRef]] = set()
            for m in matches:
                literal_valued = all(object_kind(self.g, q) == "literal" for q in binders[m.var])
                if not literal_valued or (m.var, m.iri) in said:
                    continue
                said.add((m.var, m.iri))
                written, var = self.n(m.iri), m.var
                self.at_variable(
                    "warning",
                    var,
                    owner,
                    f"{self.n(pred)}: {self.n(m.property)}'s values are literals, but the "
                    f"FILTER compares ?{var} (its value) with {written}, a node, which no "
                    "literal equals, so "
                    + _outcome(
                        m.op == "!=", m.needed, m.enough, m.bound, f"?{var} {m.op} {written}", var
                    ),
                    f"compare ?{var} with a literal, or bind ?{var} by a property whose "
                    "values are nodes",
                    (holder, pred),
                    after="FILTER",
                )

    def check_values_kinds(self) -> None:
        """A ``VALUES`` giving a variable only values of the other kind than a property a
        triple of its group binds it through (:mod:`._values_joins`): ``?this :acuity ?queue
        . VALUES ?queue { "urgent" }`` where :acuity's values are nodes never matches, so
        the pattern never holds. A warning at the VALUES, as a literal written for such a
        property in a triple pattern is: the world may break the ontology's ranges."""
        for owner, holder, pred, algebra in self.parsed_patterns():
            said: set[str] = set()
            for joined in joined_values(algebra):
                kinds = {"node" if isinstance(v, URIRef) else "literal" for v in joined.values}
                var, given = joined.var, next(iter(kinds))
                prop = next(
                    (p for p in joined.properties if object_kind(self.g, p) not in (None, given)),
                    None,
                )
                if len(kinds) != 1 or prop is None or var in said:
                    continue
                said.add(var)
                one = len(joined.values) == 1
                shown = ", ".join(turtle_term(v, self.n) for v in joined.values)
                other = "node" if given == "literal" else "literal"
                self.at_text(
                    "warning",
                    rf"(?i)\bVALUES\b[^{{]*[?$]{re.escape(var)}\b",
                    owner,
                    f"{self.n(pred)}: {self.n(prop)}'s values are {other}s, but VALUES gives "
                    f"?{var} only {shown}, {f'a {given}' if one else f'{given}s'}, which no "
                    f"{other} equals, so … {self.n(prop)} ?{var} never matches "
                    + ("it" if one else "them")
                    + " and "
                    + (
                        "the pattern never holds"
                        if joined.own
                        else "the group it is in (an OPTIONAL, a UNION's branch…) never matches"
                    ),
                    self.nodes_meant(prop, joined.values, f"VALUES ?{var} {{{{ {{}} }}}}", " ")
                    if other == "node"
                    else f"write the literal{'' if one else 's'} meant, quoted, or bind ?{var} "
                    "by a property whose values are nodes",
                    (holder, pred),
                )

    def check_pattern_datatypes(self) -> None:
        """A literal of a pattern whose datatype is a typo in XSD's or RDF's namespace
        (``FILTER (?v > "6.0"^^xsd:decmal)``): the world holds no value of it, so the pattern
        never matches it, a FILTER comparing with it is never true, and the rule it guards is
        never taken. An error, as in a statement (:meth:`check_literals`)."""
        for owner, holder, pred, algebra in self.parsed_patterns():
            literals = algebra_literals(algebra)
            for lit in sorted((x for x in literals if self.unknown_datatype(x.datatype)), key=str):
                dt = cast(URIRef, lit.datatype)
                name = self.n(dt)
                self.at_text(
                    "error",
                    rf"\^\^(?:{re.escape(name)}|<{re.escape(str(dt))}>)(?![\w-])",
                    owner,
                    f"{self.n(pred)}: {turtle_term(lit, self.n)}: {name} is no XSD or RDF datatype "
                    "and is not declared a rdfs:Datatype, so no value the world holds equals the "
                    "literal, and a FILTER comparing with it is never true",
                    self.datatype_hint(dt),
                    (holder, pred),
                    also=str(lit),
                )

    def check_schema_links(self) -> None:
        """An ontology's ``rdfs:subClassOf :Persn`` (``rdfs:domain``, ``rdfs:range``,
        ``rdfs:subPropertyOf``) naming what nothing declares, beside a declared term of a
        near name (:mod:`._schema_links`): a warning at the link, with the name meant."""
        declared = {"class": self.types(), "property": self.properties()}
        for s, link, term in dangling_links(self.g, lambda t: not self.unknown(t, frozenset())):
            known = declared[LINKS[link]] - {s}  # never the term the link is said of
            if self.did_you_mean(term, known) is None:
                continue
            reach = (
                f"what is said of the class meant (a property's domain, a shape targeting it, "
                f"an argument typed by it) does not reach a {self.n(s)}"
                if link == RDFS.subClassOf
                else f"what reads {self.n(s)}'s {self.n(link)} (the checks of a pattern, "
                "RDFS entailment) reads a class no node is of"
                if link in (RDFS.domain, RDFS.range)
                else f"nothing is entailed from {self.n(s)}"
            )
            self.undeclared(  # dropped beside a world that uses it, as any such term
                term,
                s,
                f"{self.n(link)} {self.n(term)} names a {LINKS[link]} no loaded file declares "
                f"or says anything of: {reach}",
                known,
                at=(s, link, term),
            )

    def check_class_cycles(self) -> None:
        """An ``rdfs:subClassOf`` cycle among the files' classes (``:Patient rdfs:subClassOf
        :Nurse`` where ``:Nurse rdfs:subClassOf :Person`` and ``:Person rdfs:subClassOf
        :Patient``): under RDFS every class on it is a subclass of every other, so they are
        one class — every patient a nurse, an argument typed :Nurse taking any person. That
        is almost always a link written the wrong way round (``owl:equivalentClass`` says
        so when meant). A warning at the link that closes the cycle, naming it; a class its
        own subclass (``:A rdfs:subClassOf :A``) is what RDFS entails anyway."""
        graph: Digraph[URIRef] = {}
        for sub, sup in self.g.subject_objects(RDFS.subClassOf):
            if isinstance(sub, URIRef) and isinstance(sup, URIRef) and sub != sup:
                add_edge(graph, sub, sup)
        for component in strongly_connected(graph):
            if len(component) < 2:
                continue
            first = min(component, key=str)
            back = min((c for c in component if first in graph[c]), key=str)
            cycle = [*cast(list[URIRef], shortest_path(graph, first, back)), first]
            shown = " → ".join(self.n(c) for c in cycle)
            self.warn(
                back,
                f"rdfs:subClassOf {self.n(first)} closes a cycle of subclasses ({shown}): "
                "under RDFS every class on it is a subclass of every other, so they are one "
                f"class, and every {self.n(back)} is a {self.n(first)}",
                f"drop the rdfs:subClassOf that points the wrong way round (this one, or "
                f"another on the cycle); if {self.n(first)} and {self.n(back)} are one "
                "class, say so with owl:equivalentClass",
                at=(back, RDFS.subClassOf, first),
            )

    def check_graph_blocks(self) -> None:
        """A ``GRAPH`` block in a pattern (:mod:`._graph_blocks`): it reads named graphs
        only, and what the world's files load is in the default graph, so what it asks of
        loaded data never holds. A warning at the block's line, saying what it reads."""
        for owner, holder, pred, algebra in self.parsed_patterns():
            for term in named_graph_reads(algebra):
                written = self.sparql_term(term)
                if isinstance(term, Variable):
                    needle = rf"[?$]{re.escape(str(term))}\b"
                    reads = (
                        "matches only facts in named graphs, where steps' effects land, never "
                        "those the world's files load (they are in its default graph): what "
                        "it asks there of loaded data never holds, and a NOT EXISTS guard "
                        "on it never sees that data"
                    )
                else:
                    needle = rf"(?:{re.escape(written)}|<{re.escape(str(term))}>)"
                    reads = (
                        f"matches only facts in the named graph {written}, where no step's "
                        "effects land (each lands in a graph of its own) and no Turtle world "
                        "file loads (they load into the default graph): what it asks there, or "
                        "a NOT EXISTS guard on it, sees only what a TriG or N-Quads world file "
                        "puts in that graph"
                    )
                self.at_text(
                    "warning",
                    rf"(?i)\bGRAPH\s*{needle}",
                    owner,
                    f"{self.n(pred)} reads GRAPH {written} {{ … }}, which {reads}",
                    f"drop GRAPH {written} {{ and its closing }}: a pattern already reads "
                    "every graph, loaded and landed",
                    (holder, pred),
                )

    def check_commented_patterns(self) -> None:
        """A pattern on one line whose ``#`` comments out SPARQL (:mod:`._pattern_comments`):
        a warning at it, saying what is not read."""
        for owner, holder, pred, _ in self.patterns:
            for text in self.g.objects(holder, pred):
                lost = commented_out(str(text))
                if lost is None:
                    continue
                lost = lost if len(lost) <= 60 else lost[:59] + "…"
                self.at_text(
                    "warning",
                    "#",
                    owner,
                    f"{self.n(pred)} is written on one line, and SPARQL reads from # to the end "
                    f"of the line as a comment: `{lost}` is not read, so the pattern "
                    "asks less than it says",
                    'write the pattern in triple quotes (""" … """) with the comment on a line '
                    "of its own, or drop the #",
                    (holder, pred),
                )

    def check_pattern_regexes(self) -> None:
        """A ``regex(?ref, "^Q-(URGENT")`` whose constant regular expression the store cannot
        read: the call is an error for every value, so the FILTER is never true and the step
        is blocked for every instance, the block blaming the data. An error at its line, as
        ``sh:pattern`` gets in a shape."""
        for owner, holder, pred, algebra in self.parsed_patterns():
            for pattern, flags, why in bad_regexes(algebra):
                written = turtle_term(Literal(pattern), self.n)
                self.at_text(
                    "error",
                    re.escape(written),
                    owner,
                    f"{self.n(pred)}: the regular expression {written}"
                    + (f' (flags "{flags}")' if flags else "")
                    + f" cannot be read ({why}), so regex() is an error for every value and "
                    "the FILTER is never true",
                    "close each group and class it opens, or escape a ( or [ meant "
                    "literally; SPARQL's regex reads XPath's syntax "
                    "(https://www.w3.org/TR/xpath-functions/#regex-syntax)",
                    (holder, pred),
                    after="regex|replace",
                )

    def check_type_tests(self) -> None:
        """``?x a C`` in a pattern where the definitions give ``C`` subclasses: the pattern
        sees the types the world states, so a node of a subclass never matches
        (:mod:`._type_tests`). A warning at the line that names ``C``."""
        runs_for: dict[URIRef, dict[URIRef, URIRef]] = {}
        for wf in self.defs.workflows.values():
            for step in wf.reachable():
                runs_for.setdefault(step.iri, {})[wf.iri] = wf.focus_type
        for owner, holder, pred, algebra in self.parsed_patterns():
            for found in missed_subclasses(
                algebra,
                self.defs.subclasses,
                runs_for.get(cast(URIRef, owner), {}),
                self.n(pred),
                self.n,
            ):
                name = self.n(found.cls)
                self.at_text(
                    "warning",
                    rf"(?:{re.escape(name)}|<{re.escape(str(found.cls))}>)(?![\w-])",
                    owner,
                    found.message,
                    found.hint,
                    (holder, pred),
                )

    def check_filter_variables(self) -> None:
        """A variable a FILTER reads that no pattern of its group binds, nor the run gives
        (?this and the ProposalSteps' horis:as choices to a step; its arguments to a tool's
        own horis:requires): it is unbound in every solution, so the comparison is an error
        and the FILTER never holds. Why an error: ``FILTER (?value > ?limit)`` where the
        pattern binds ``?v`` made a DecisionStep's rule never hold, and a critical lab result
        was filed instead of escalated, without a word. A FILTER that asks ``BOUND`` or
        ``COALESCE`` is meant for unbound variables and is not judged."""
        steps = self.step_nodes()
        chosen = {s.as_var for s in self.defs.steps.values() if isinstance(s, ProposalStep)}
        for owner, holder, pred, pre in self.patterns:
            if owner in steps:
                given = {"this", *chosen}
            elif (owner, RDF.type, HORIS.Tool) in self.g:
                given = self.arg_names(owner)
            else:
                continue
            if pred == HORIS.requires:
                self.check_detached_tests(owner, holder, pred, pre, given)
            said: set[str] = set()
            for read, scope in filter_scopes(pre.select.algebra):
                for var in sorted(read - scope - given - said):
                    said.add(var)
                    near = nearest_variable(var, sorted((scope | given) - read))
                    self.at_variable(
                        "error",
                        var,
                        owner,
                        f"{self.n(pred)}: ?{var} in a FILTER is bound by no pattern of its "
                        "group, so the filter is never true",
                        (f"did you mean ?{near}? " if near else "")
                        + f"use a variable the pattern binds, or bind ?{var} in a triple "
                        "pattern beside the FILTER",
                        (holder, pred),
                        after="FILTER",
                    )
            for var, negated, decides, scope in bound_tests(pre.select.algebra):
                if var not in scope | given | said:
                    said.add(var)
                    self.unbound_test(owner, (holder, pred), var, negated, decides, scope | given)

    def unbound_test(
        self,
        owner: Node,
        where: tuple[Node, URIRef],
        var: str,
        negated: bool,
        decides: bool,
        bound: Set[str],
    ) -> None:
        """``FILTER (BOUND(?x))`` (or ``!BOUND``) of a variable no pattern of its group binds,
        nor the run gives (``bound`` is what they do): ``BOUND`` is always false, so a FILTER
        that needs it is never true (an error, as a comparison with such a variable is, else
        a warning); ``!BOUND`` is always true, so it excludes nothing (a warning: the guard
        was meant for a variable of an OPTIONAL, often one of a near name)."""
        test = f"{'!' if negated else ''}BOUND(?{var})"
        outcome = (
            f"{test} is always true" + (" and the FILTER excludes nothing" if decides else "")
            if negated
            else f"{test} is always false" + (" and the FILTER is never true" if decides else "")
        )
        near = nearest_variable(var, sorted(bound - {var}))
        self.at_variable(
            "error" if decides and not negated else "warning",
            var,
            owner,
            f"{self.n(where[1])}: ?{var} in a FILTER is bound by no pattern of its group, so "
            + outcome,
            (f"did you mean ?{near}? " if near else "")
            + f"test a variable the pattern binds (an OPTIONAL's), or bind ?{var} in a triple "
            "pattern beside the FILTER",
            where,
            after="FILTER",
        )

    def check_detached_tests(
        self, owner: Node, holder: Node, pred: URIRef, pre: Precondition, given: set[str]
    ) -> None:
        """A ``FILTER NOT EXISTS`` (or ``EXISTS``) that shares no variable with its pattern or
        with what the run gives asks about the whole world, not the focus: the usual guard
        against doing a step twice, written ``{ ?patient :queuedAt ?t }`` instead of
        ``{ ?this :queuedAt ?t }``, stopped every patient after the first, and validate said
        valid. A warning: a check over the whole world (no maintenance window open) is
        sometimes meant."""
        for kind, named in detached_tests(pre.select.algebra):
            if given.intersection(named):
                continue
            var = named[0]
            holds = (
                "holds only while no node anywhere matches it: once one does, the step is "
                "blocked for every instance"
                if kind == "NOT EXISTS"
                else "holds for every instance as soon as any node matches it"
            )
            self.at_variable(
                "warning",
                var,
                owner,
                f"{self.n(pred)}: FILTER {kind} names "
                + ", ".join(f"?{v}" for v in named)
                + f" and no variable the rest of the pattern binds, so it asks about the "
                f"whole world, not this instance's focus: it {holds}",
                f"to ask about the focus write ?this for ?{var}; to ask about another node, "
                f"bind ?{var} in the pattern beside the FILTER",
                (holder, pred),
                after="EXISTS",
            )

    def check_kind_clashes(self) -> None:
        """A variable a pattern makes a literal and a node at once (:func:`kind_clashes`):
        ``?this :amount ?amount . ?amount :coverageLimit ?l`` never holds, so the step was
        blocked for every instance, and validate said valid. A warning: world data may break
        the ontology's ranges."""
        for owner, holder, pred, algebra in self.parsed_patterns():
            said: set[str] = set()
            for block in blocks(algebra):
                for var, prop, (s, p, o) in kind_clashes(self.g, block):
                    if var in said:
                        continue
                    said.add(var)
                    how = (
                        f"typed {self.n(o)} (?{var} a {self.n(o)})"
                        if p == RDF.type
                        else f"the subject of ?{var} {self.n(p)} …"
                        if s == Variable(var)
                        else f"the object of … {self.n(p)} ?{var}"
                    )
                    self.at_text(
                        "warning",
                        rf"[?$]{re.escape(var)}\s+(?:{re.escape(self.n(p))}|a\b)"
                        if s == Variable(var)
                        else rf"[?$]{re.escape(var)}\b",
                        owner,
                        f"{self.n(pred)}: ?{var} is a literal, a value of {self.n(prop)}, and "
                        f"a node, {how}: no value is both, so the pattern never holds",
                        f"a literal has no properties: read what ?{var} is compared with in a "
                        f"FILTER, or if its values are nodes, make {self.n(prop)} an "
                        "owl:ObjectProperty with a class as its rdfs:range",
                        (holder, pred),
                    )

    def check_subselects(self) -> None:
        """A sub-SELECT naming ``?this`` it does not select (:mod:`._subselects`): its
        ``?this`` is any node, not the focus. A warning at its SELECT: an aggregate over every
        node may be meant, though ``?this`` is an odd name for it."""
        for owner, holder, pred, algebra in self.parsed_patterns():
            # a candidates query is a whole SELECT: its sub-SELECT is the one after WHERE
            after = r"\bWHERE\b" if pred == HORIS.query else ""
            for selected in unselected_focus(algebra):
                shown = " ".join(f"?{v}" for v in selected)
                self.at_text(
                    "warning",
                    r"(?i)\bSELECT\b",
                    owner,
                    f"{self.n(pred)}: the sub-SELECT (SELECT {shown}) names ?this but does not "
                    "select it, so its ?this is a variable of its own, bound to any node, not "
                    "the instance's focus: it matches every node's values, the same for every "
                    "instance",
                    f"select ?this too (SELECT ?this {shown} WHERE {{ … }}), or write the "
                    "pattern without SELECT … WHERE { }",
                    (holder, pred),
                    after,
                )


def _comparison_outcome(m: LiteralMatch, compared: str, written: str) -> str:
    """What a FILTER comparison ``m`` that no value of its property can meet does
    (:func:`_outcome`)."""
    test = f"{compared} {m.op} {written}"
    return _outcome(m.op == "!=", m.needed, m.enough, m.bound, test, cast(str, m.var))


def _outcome(
    negated: bool,
    needed: bool,
    enough: bool,
    bound: bool,
    test: str,
    var: str,
    whole: bool = False,
) -> str:
    """What ``test``, a comparison of ``?var`` no value of its property meets, does to its
    FILTER: ``=`` (``IN``) never holds, nor does the FILTER when it needs it (``needed``);
    ``!=`` (``NOT IN``, ``negated``) is always true, and the FILTER excludes nothing when that
    makes it true (``enough``) — where ``?var`` is bound: where it is not (``bound`` false:
    only an OPTIONAL or a UNION's branch binds it) ``!=`` is an error, so the FILTER needing
    it drops the solutions without ``?var``, as ``BOUND(?var)`` would. ``whole``: ``test``
    is said in full (a list) where it never holds."""
    if negated and not bound:
        return (
            f"{test} holds wherever ?{var} is bound, and is an error where it is not (only an "
            "OPTIONAL or a UNION's branch binds it)"
            + (
                f": the FILTER only drops the solutions without ?{var}, as BOUND(?{var}) would"
                if needed
                else ""
            )
        )
    if negated:
        return f"{test} is always true" + (" and the FILTER excludes nothing" if enough else "")
    if needed:
        return "the FILTER is never true"
    return f"{test} never holds" if whole else "that comparison never holds"


_IRI_TEXT = re.compile(r"[A-Za-z][\w+.-]*:")
"""How an IRI's text begins (its scheme): ``str(?v) = "http://…"`` may hold of a node."""


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
        for var in (step.var_for(a.name) for a in step.tool.args)
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
