"""Checks of how SPARQL patterns are built: what can never hold as written.

A FILTER on a variable nothing binds, a GRAPH block over graphs the world never has, a
sub-select that drops the focus, a regex the store refuses or a pattern commented out
leaves a step that never holds; these checks say why, at the pattern's line."""

from __future__ import annotations

import re
from collections.abc import Set
from typing import Any, cast

from rdflib import OWL, RDF, RDFS, SH, XSD, Literal, URIRef
from rdflib.term import Node, Variable

from ._argument_checks import ArgumentChecks
from ._contradicted_filters import contradictions, future_nows
from ._datatypes import turtle_term
from ._define_patterns import variable_needle
from ._derived_reads import derived_from, path_reading_both
from ._digraph import Digraph, add_edge, shortest_path, strongly_connected
from ._fhir import FHIR
from ._graph_blocks import named_graph_reads
from ._guard_writes import negations
from ._lone_variables import cut_pair, lone_variables
from ._model import ActionStep, ProposalStep, WaitStep
from ._near_names import nearest_variable
from ._pattern_comments import commented_out
from ._preconditions import (
    Precondition,
    bound_tests,
    detached_tests,
    filter_scopes,
    group_triples,
)
from ._schema_links import LINKS, dangling_links
from ._store_syntax import bad_regexes
from ._subselects import unselected_focus
from ._term_checks import TermChecks
from ._term_kinds import algebra_triples, blocks, kind_clashes
from ._type_tests import missed_subclasses
from ._vocab import HORIS

__all__ = ["PatternChecks"]


class PatternChecks(ArgumentChecks, TermChecks):
    """Checks of a pattern's structure: FILTERs, named graphs, sub-selects, commented
    lines, regexes, type tests and schema links."""

    def check_derived_reads(self) -> None:
        """A pattern reading a property no tool writes and no file states, that the ontology
        relates to another (an inverse, a subproperty, an equivalent: :mod:`._derived_reads`):
        patterns see the world as it is under either entailment, so ``?depot :holds ?this``
        beside ``:holds owl:inverseOf :stockedAt`` blocked every instance there, after the
        steps before had acted (a ``NOT EXISTS`` guard on it never tripped), and it
        validated. A warning at the property's line, with the path reading both; kept in
        :attr:`Definitions.derived_reads`, so a world stating the property drops it."""
        written = {
            a.property
            for tool in self.writers()
            if tool.effect is not None
            for a in tool.effect.asserts
        }
        own = (str(HORIS), str(RDF), str(RDFS), str(OWL), str(XSD), str(SH), FHIR)
        said: set[tuple[Node, URIRef, URIRef]] = set()
        for owner, holder, pred, algebra in self.parsed_patterns():
            for subject, prop, value in algebra_triples(algebra):
                if (
                    (owner, pred, prop) in said
                    or str(prop).startswith(own)
                    or prop in written
                    or (None, prop, None) in self.g
                ):
                    continue
                related = derived_from(self.g, prop)
                if not related:
                    continue
                said.add((owner, pred, prop))
                name = self.n(prop)
                links = ", ".join(
                    {
                        "inverse": f"owl:inverseOf {self.n(p)}",
                        "sub": f"its subproperty {self.n(p)}",
                        "equivalent": f"owl:equivalentProperty {self.n(p)}",
                    }[kind]
                    for p, kind in related
                )
                path = path_reading_both(prop, related, self.n)
                problem = self.placed_in_text(
                    "warning",
                    rf"(?:{re.escape(name)}|<{re.escape(str(prop))}>)(?![\w-])",
                    owner,
                    f"{self.n(pred)} reads {name}, which no tool writes and no file states, "
                    f"beside {links}: a pattern is matched against the world as it is, under "
                    "either entailment (rdfs, owl-rl), so no statement of "
                    f"{name} is derived from those — it matches {name} only where the world "
                    "states it itself",
                    f"write {self.sparql_term(subject)} {path} {self.sparql_term(value)} to "
                    "read both, or the property the world states",
                    (holder, pred),
                )
                self.problems.append(problem)
                self.defs.derived_reads.setdefault(prop, []).append(problem)

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

    def given_to(self, owner: Node, steps: Set[Node], chosen: Set[str]) -> set[str] | None:
        """The variables the run binds before a pattern of ``owner`` is asked: ?this and the
        proposals' ``chosen`` options to a step's (``steps``), its arguments to a tool's own
        horis:requires; None for any other owner, whose patterns are not judged."""
        if owner in steps:
            return {"this", *chosen}
        if (owner, RDF.type, HORIS.Tool) in self.g:
            return self.arg_names(owner)
        return None

    def check_lone_variables(self) -> None:
        """A variable a pattern names once, one slip from a variable it uses or the run gives
        (:mod:`._lone_variables`): ``?suplier :active true`` beside ``?this :suppliedBy
        ?supplier`` joins nothing, so it holds when any supplier is active and the step acted
        on an inactive one. A warning at its line, with the name meant: a variable of its own
        can be meant."""
        chosen = {s.as_var for s in self.defs.steps.values() if isinstance(s, ProposalStep)}
        steps = self.step_nodes()
        for owner, holder, pred, algebra in self.parsed_patterns():
            given = self.given_to(owner, steps, chosen)
            if given is None:
                continue
            used = set(given)  # a proposal's own horis:as is among the choices given
            step = self.defs.steps.get(cast(URIRef, owner)) if owner in steps else None
            if isinstance(step, ActionStep) and pred == HORIS.requires:
                used |= step.arg_vars
                used |= {var for _, var in step.binds}
            said: set[str] = set()
            triples = list(algebra_triples(algebra))
            for text in self.g.objects(holder, pred):
                for var, meant, alone in lone_variables(str(text), triples, given, used):
                    if var in said or (owner not in steps and meant in used):
                        continue  # a tool's misspelt argument: check_patterns_about_focus's
                    said.add(var)
                    cut = (
                        f"joined with nothing else, so what the pattern asks of ?{var} holds "
                        f"if any node at all matches it, and asks nothing of ?{meant}"
                        if alone
                        else f"so ?{meant} is joined with nothing the run gives ("
                        + ("?this" if owner in steps else "the tool's arguments")
                        + "): it "
                        "matches any node that meets the rest of the pattern, whatever the "
                        "focus"
                    )
                    self.at_text(
                        "warning",
                        variable_needle(var),
                        owner,
                        f"{self.n(pred)}: ?{var} is named once, beside ?{meant}: as written "
                        f"it is a variable of its own, {cut}",
                        f"did you mean ?{meant}? write ?{meant} for ?{var}, or rename ?{var} "
                        "if a node of its own is meant",
                        (holder, pred),
                    )
            if owner in steps and not said:
                self.check_cut_pair(step, holder, pred, algebra, given)

    def check_cut_pair(
        self, step: Any, holder: Node, pred: URIRef, algebra: Any, given: Set[str]
    ) -> None:
        """An argument of an action step, or a proposal's options, joined with nothing of
        ?this where each part names a variable once (:func:`._lone_variables.cut_pair`):
        ``?this :affects ?svc . ?option a :Runbook ; :appliesTo ?service`` offered every
        runbook of every service, whatever the incident, and the rollback acted on the one
        chosen. A warning at the lone variable beside the options, with the name to write."""
        if isinstance(step, ActionStep) and pred == HORIS.requires and step.tool is not None:
            targets = {step.var_for(a.name) for a in step.tool.args} - set(given)
            what = "argument"
        elif isinstance(step, ProposalStep) and pred == HORIS.query:
            targets = {step.as_var}
            what = "options"
        else:
            return
        triples = group_triples(algebra, every=True)
        for text in self.g.objects(holder, pred):
            found = cut_pair(str(text), triples, "this", targets)
            if found is None:
                continue
            target, lone, meant = found
            said = (
                f"the options, ?{target}, are"
                if what == "options"
                else f"?{target}, an argument of {self.n(step.tool.iri)}, is"
            )
            self.at_text(
                "warning",
                variable_needle(lone),
                step.iri,
                f"{self.n(pred)}: {said} joined with nothing of ?this: ?{lone} is named once "
                f"beside it and ?{meant} once beside ?this, so they are two variables, and "
                f"?{target} is any node that meets the rest of the pattern, whatever the focus",
                f"if one node is meant, write one name for both (?{meant} for ?{lone}); "
                f"else link ?{target} to ?this in the pattern",
                (holder, pred),
            )
            return

    def check_contradicted_filters(self) -> None:
        """Comparisons of one variable a FILTER needs together that no value meets
        (:func:`~._contradicted_filters.contradictions`): ``?a > 1000 && ?a < 500``, ``?s =
        "open" && ?s = "reopened"``. The FILTER was never true and the rule, step or wait it
        guards never held, and the definitions validated. A warning at the FILTER's line."""
        for owner, holder, pred, algebra in self.parsed_patterns():
            for c in contradictions(algebra):
                first, second = (self.said_test(t) for t in (c.first, c.second))
                self.at_text(
                    "warning",
                    rf"\?{re.escape(c.var)}(?!\w)",
                    owner,
                    f"{self.n(pred)}: the FILTER requires both {first} and {second}, which no "
                    f"value of ?{c.var} meets: it is never true, so its pattern never matches",
                    f"keep the comparison meant; for either, join them with || (FILTER ({first} "
                    f"|| {second})); for a range between two bounds, write each bound on its "
                    "side",
                    (holder, pred),
                    after="FILTER",
                )

    def said_test(self, test: tuple[str, str, object]) -> str:
        """``?var op constant`` as a pattern writes it, the constant named as the files do."""
        var, op, value = test
        shown = self.sparql_term(value) if isinstance(value, Literal | URIRef) else value
        return f"?{var} {op} {shown}"

    def check_wait_untils(self) -> None:
        """A wait's ``horis:until`` that, once it does not hold, never holds again: it
        requires a time to come (``FILTER (?t > NOW())``,
        :func:`~._contradicted_filters.future_nows`), or something absent (``FILTER NOT
        EXISTS``, ``MINUS``: facts are only added, an effect's or an answer's, never taken
        away) with no ``horis:timeout`` to end the wait — what no tool writes: a withdrawal,
        a cancellation an outside system or a person states. The instance waited for ever,
        and the definitions validated. What the flow's own tools write is left out: a wait
        that stops a loop once its tool has acted (paid) is meant to. A warning at the
        line, with what to write."""
        written = {
            a.property for t in self.writers() if t.effect is not None for a in t.effect.asserts
        }
        for owner, holder, pred, pre in self.patterns:
            wait = self.defs.steps.get(cast(URIRef, owner))
            if pred != HORIS.until or not isinstance(wait, WaitStep):
                continue
            me, algebra = self.n(wait.iri), pre.select.algebra
            timed = wait.timeout is not None
            later = future_nows(algebra)
            for var in later:
                self.at_text(
                    "warning",
                    r"NOW\s*\(\s*\)",
                    owner,
                    f"horis:until requires ?{var} later than NOW(), but the runtime asks the "
                    f"until only when an instance reaches {me} and at each resume or `horismos "
                    f"wake`: one reaching it before ?{var} finds it holding and goes straight "
                    f"on without waiting, and one reaching it after ?{var} never finds it "
                    "holding again (the clock only moves on), so it waits "
                    + ("until its horis:timeout passes" if timed else "for ever"),
                    f"to wait until ?{var} has come, write FILTER (?{var} <= NOW())",
                    (holder, pred),
                    after="FILTER",
                )
            if timed or later:
                continue
            for kind, group in negations(algebra):
                triples = sorted(algebra_triples(group), key=str)
                if not triples or any(p in written for _, p, _ in triples):
                    continue  # what the flow's own tools write: a stop meant (a loop, paid)
                s, p, o = triples[0]
                what = " ".join(self.sparql_term(t) for t in (s, p, o))
                self.at_text(
                    "warning",
                    rf"(?:{re.escape(self.n(p))}|<{re.escape(str(p))}>)(?![\w-])",
                    owner,
                    f"horis:until holds only while {what} is absent ({kind}), and {me} has no "
                    "horis:timeout: facts are only ever added (an effect's, an answer's), "
                    f"never taken away, so an instance at {me} once {what} holds never finds "
                    "the until holding again, and waits for ever",
                    f'add horis:timeout "P7D" and horis:onTimeout :SomeStep (an escalation or '
                    f"a reminder) to {me}, so an instance goes on once it passes; or route on "
                    f"{what} after the wait (an until that holds on either answer, then a "
                    "horis:DecisionStep)",
                    (holder, pred),
                    after=kind.split()[0],
                )
                break

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
                if isinstance(owner, URIRef):  # often a guard cut off: not said again as none
                    self.guards_said.add(owner)

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
        # a candidates query's FILTERs too: one on a variable nothing binds left the proposal
        # no option, and every instance took its horis:fallback (acting there) without a word
        parsed: list[tuple[Node, Node, URIRef, Any, Precondition | None]] = [
            (o, h, p, pre.select.algebra, pre) for o, h, p, pre in self.patterns
        ]
        parsed += [(step, c, HORIS.query, algebra, None) for step, c, algebra in self.queries]
        for owner, holder, pred, algebra, pre in parsed:
            given = self.given_to(owner, steps, chosen)
            if given is None:
                continue
            if pred == HORIS.requires and pre is not None:
                self.check_detached_tests(owner, holder, pred, pre, given)
            said: set[str] = set()
            for read, scope in filter_scopes(algebra):
                for var in sorted(read - scope - given - said):
                    said.add(var)
                    near = nearest_variable(var, sorted((scope | given) - read))
                    self.at_text(
                        "error",
                        variable_needle(var),
                        owner,
                        f"{self.n(pred)}: ?{var} in a FILTER is bound by no pattern of its "
                        "group, so the filter is never true",
                        (f"did you mean ?{near}? " if near else "")
                        + f"use a variable the pattern binds, or bind ?{var} in a triple "
                        "pattern beside the FILTER",
                        (holder, pred),
                        after="FILTER",
                    )
            for var, negated, decides, scope in bound_tests(algebra):
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
        self.at_text(
            "error" if decides and not negated else "warning",
            variable_needle(var),
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
            self.at_text(
                "warning",
                variable_needle(var),
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
