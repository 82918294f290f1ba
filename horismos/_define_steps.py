"""Steps, from Turtle to frozen models: action, decision, proposal and wait steps.

A step's pattern, rules, argument bindings, candidates and timeout are read and checked
here, once, so a run never meets a step it cannot try."""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import replace
from typing import Any, cast

from rdflib import RDF, Literal, URIRef
from rdflib.term import Node

from ._adapter_decl import partial_without_adapter
from ._define_patterns import PatternReading, sparql_why, variable_needle
from ._model import RANKERS, ActionStep, DecisionStep, ProposalStep, Rule, Step, Tool, WaitStep
from ._near_names import slip_distance
from ._preconditions import bound_by, remote_reads
from ._shipped_vocabulary import STEP_CLASSES, kind_names
from ._sources import literal_warnings_off
from ._sparql_parse import prepare_query
from ._timeouts import parse_timeout, timeout_problem
from ._vocab import HORIS

__all__ = ["MODEL_ALIASES", "StepBuilding"]


MODEL_ALIASES = {"claude": "anthropic"}
"""Providers written by another name: ``claude:MODEL`` is ``anthropic:MODEL``."""


_SPARQL_HEAD = re.compile(r"^(\s*(#[^\n]*)?\n)*")


def _number(node: Node | None) -> float | None:
    """A literal's finite number; None for any other node, whose mistake check_literals or
    the authoring shapes report where it is written (``"high"^^xsd:decimal``, ``"NaN"``)."""
    try:
        value = float(str(node)) if isinstance(node, Literal) else None
    except ValueError:
        return None
    return value if value is not None and math.isfinite(value) else None


def _unbound_as_hint(as_var: str, text: str) -> str:
    """What to write when a candidates pattern never binds ``?as_var``: the variable it binds
    that is nearest in name, else those it binds, else the shape of such a pattern."""
    used = sorted(set(re.findall(r"[?$](\w+)", text)) - {"this"})
    near = difflib.get_close_matches(as_var, used, n=1)
    if near:
        return (
            f'did you mean ?{near[0]}? Write ?{as_var} for it, or name it with horis:as "{near[0]}"'
        )
    if used:
        return (
            f"it binds {', '.join(f'?{v}' for v in used)}: write ?{as_var} for the one whose "
            "values are the options, or name that one with horis:as"
        )
    return (
        f'write a pattern such as "?{as_var} a :Flight ; :to ?dest .", or name the variable '
        "with horis:as"
    )


class StepBuilding(PatternReading):
    """Building each step: action, decision, proposal and wait, with their patterns,
    rules, bindings, options and timeouts."""

    def check_rule_orders(
        self, s: Node, rules: list[Rule], whens: list[tuple[Node, float | None, Node]]
    ) -> None:
        """Two rules of one order going different ways: which is tried first would be the
        graph's order, so the branch taken could change from one load of the files to the
        next (a rule written without horis:order is at 0). Said at the horis:order of the
        last rule written with it: the copied one, most often."""
        ways: dict[float, set[URIRef]] = {}
        count: dict[float, int] = {}
        for rule in rules:
            ways.setdefault(rule.order, set()).add(rule.next)
            count[rule.order] = count.get(rule.order, 0) + 1
        for order, targets in sorted(ways.items()):
            if len(targets) > 1:
                shown = f"{order:g}" if order else "0 (none written)"
                tied = [w for w, o, _ in whens if (o or 0.0) == order]
                last = max(tied, key=lambda w: self.written_line(s, w), default=None)
                self.error(
                    s,
                    f"{count[order]} horis:when rules have horis:order {shown} and go to "
                    f"{', '.join(sorted(self.n(t) for t in targets))}: which is tried first "
                    "would depend on the order the graph happens to list them in",
                    "give each rule its own horis:order (1 is tried first)",
                    at=(last, HORIS.order, None) if order and last is not None else last,
                )

    def written_line(self, s: Node, w: Node) -> int:
        """The line ``w`` (a rule of step ``s``) is written at, 0 when it cannot be told."""
        return self.src.problem("warning", s, "", None, at=w).line or 0

    def check_unnumbered_rule(self, s: Node, whens: list[tuple[Node, float | None, Node]]) -> None:
        """A rule written without horis:order after rules that have one: it is at 0, so it
        is tried before them all, not where it is written. The claims rule ``amount <= 1000
        → :Pay``, left unnumbered after ``horis:order 1`` (over the policy limit → reject),
        paid a claim over its limit. Written first, or going where the rules above it go, it
        decides as it reads: no warning. Two unnumbered rules going different ways are
        :meth:`check_rule_orders`'s error."""
        unnumbered = [(w, target) for w, order, target in whens if order is None]
        numbered = [(w, order, target) for w, order, target in whens if order is not None]
        if len(unnumbered) != 1 or not numbered:
            return

        w, goes = unnumbered[0]
        line = self.written_line(s, w)
        if not any(self.written_line(s, v) < line and target != goes for v, _, target in numbered):
            return
        orders = [order for _, order, _ in numbered]
        self.warn(
            s,
            "this horis:when rule has no horis:order, so it is at 0 and tried before the rule "
            f"of horis:order {min(orders):g} written above it: when both hold, it decides",
            f"give it its own horis:order, after the last: horis:order {max(orders) + 1:g}",
            at=w,
        )

    def step_timeout(self, s: Node) -> float | None:
        """A step's ``horis:timeout`` in seconds (None when it gives none), read once here."""
        node = self.one(s, HORIS.timeout)
        if node is None:
            return None
        try:
            return parse_timeout(node)
        except ValueError as e:
            self.error(s, *timeout_problem(node, e), at=(s, HORIS.timeout, node))
            return None

    def step(self, s: Node, cls: URIRef) -> Step | None:
        iri = URIRef(str(s))
        nxt = self.one(s, HORIS.next)
        on_error = self.one(s, HORIS.onError)
        common: dict[str, Any] = {"iri": iri, "next": nxt, "on_error": on_error}
        if cls == HORIS.ActionStep:
            tool_node = self.one(s, HORIS.tool)
            tool = (
                self.defs.tools.get(cast(URIRef, tool_node), self.broken_tools.get(tool_node))
                if tool_node is not None
                else None
            )
            if tool_node is None and s in self.miskinded:
                pass  # ``horis:Tool :x`` for ``horis:tool :x``: said where it is written
            elif tool_node is None:
                self.error(
                    s,
                    "the ActionStep names no tool",
                    "write horis:tool :some.tool (a declared horis:Tool)",
                )
            elif isinstance(tool_node, Literal):
                self.quoted(s, HORIS.tool, tool_node, self.g.subjects(RDF.type, HORIS.Tool))
            elif any((tool_node, RDF.type, c) in self.g for c in STEP_CLASSES):
                # looked up, not found among every step gathered for each step that has a tool
                steps = self.step_nodes()  # a step naming itself calls no tool to point at
                called = [
                    self.n(x) for x in self.g.objects(tool_node, HORIS.tool) if x not in steps
                ]
                self.error(
                    s,
                    f"horis:tool {self.n(tool_node)} is a step, not a tool",
                    f"point horis:tool at the tool it calls: horis:tool {called[0]}"
                    if len(called) == 1
                    else "point horis:tool at a horis:Tool, one of: "
                    + self.some(self.g.subjects(RDF.type, HORIS.Tool)),
                    at=(s, HORIS.tool, tool_node),
                )
            elif (
                tool is None
                and (tool_node, RDF.type, HORIS.Tool) not in self.g
                and tool_node not in self.miskinded
            ):
                # described as a tool, its type left out: the fix is at its description
                marks = (HORIS.binding, HORIS.takes, HORIS.effect)
                described = next((m for m in marks if (tool_node, m, None) in self.g), None)
                if described is not None:
                    self.error(
                        s,
                        f"horis:tool {self.n(tool_node)} is described as a tool (it has "
                        f"{self.n(described)}) but not declared one: nothing says "
                        f"{self.n(tool_node)} a horis:Tool, so the step has no tool to call",
                        f"write {self.n(tool_node)} a horis:Tool ; at the start of its description",
                        at=tool_node,
                    )
                else:
                    self.error(
                        s,
                        f"horis:tool {self.n(tool_node)} is referenced but not declared",
                        self.meant(tool_node, self.g.subjects(RDF.type, HORIS.Tool))
                        + f"declare {self.n(tool_node)} a horis:Tool with a binding, or point "
                        "horis:tool at one of: " + self.some(self.g.subjects(RDF.type, HORIS.Tool)),
                        at=(s, HORIS.tool, tool_node),
                    )
                if isinstance(tool_node, URIRef):
                    self.unknown_tools.setdefault(tool_node, []).append((s, self.problems[-1]))
            binds = []
            bound: dict[str, list[Node]] = {}  # argument -> each horis:bind naming it
            for b in self.g.objects(s, HORIS.bind):
                arg, var = self.text(b, HORIS.arg), self.text(b, HORIS.var)
                if arg is None or var is None:
                    self.error(
                        s,
                        "a horis:bind needs horis:arg and horis:var",
                        'write horis:bind [ horis:arg "patient" ; horis:var "this" ]',
                        at=b,
                    )
                    continue
                if tool is not None and tool.arg(arg) is None:
                    takes = sorted(a.name for a in tool.args)
                    close = difflib.get_close_matches(arg, takes, n=1)
                    self.error(
                        s,
                        f'horis:bind names argument "{arg}", which '
                        f"{self.n(tool.iri)} does not take",
                        (f'did you mean "{close[0]}"? ' if close else "")
                        + "use one of: "
                        + ", ".join(takes)
                        if takes
                        else f"it takes no arguments: remove the horis:bind, or declare the "
                        f"argument in {self.n(tool.iri)}'s horis:takes [ horis:arg [ … ] ]",
                        at=(b, HORIS.arg, None),
                    )
                binds.append((arg, var.lstrip("?$")))
                bound.setdefault(arg, []).append(b)
            self.check_binds(s, bound)
            requires = self.precondition(s, s)
            partial_without_adapter(self.g, s, tool.adapter if tool else None, self.warn)
            each_run = self.flag(s, HORIS.eachRun)
            if each_run and tool is not None and tool.idempotent:
                self.each_run_on_idempotent(s, tool)
            return ActionStep(
                **common,
                tool=tool,
                requires=requires,
                binds=tuple(binds),
                for_each=self.flag(s, HORIS.forEach),
                each_run=each_run,
                on_partial=cast("URIRef | None", self.one(s, HORIS.onPartial)),
            )
        if cls == HORIS.DecisionStep and self.written_as_another_kind(s):
            return DecisionStep(**common, rules=(), otherwise=None)
        if cls != HORIS.ActionStep:
            self.check_untried_requires(s, cls)
        if cls == HORIS.DecisionStep:
            rules = []
            whens: list[tuple[Node, float | None, Node]] = []
            for w in self.g.objects(s, HORIS.when):
                target = self.one(w, HORIS.next)
                if self.one(w, HORIS.requires) is None or target is None:
                    self.error(
                        s,
                        "a horis:when needs horis:requires and horis:next",
                        'write horis:when [ horis:requires "?this :x ?y" ; horis:next :SomeStep ]',
                        at=w,
                    )
                    continue
                pre = self.precondition(s, w)
                order = self.one(w, HORIS.order)
                try:
                    position = float(str(order)) if order is not None else 0.0
                except ValueError:
                    self.error(
                        s,
                        f'horis:order "{order}" is not a number: rules are tried from the '
                        "lowest horis:order up",
                        "write horis:order 1, horis:order 2, … one for each rule",
                        at=(w, HORIS.order, order),
                    )
                    continue
                whens.append((w, position if order is not None else None, target))
                if pre is not None:
                    rules.append(Rule(pre, URIRef(str(target)), position))
            self.check_rule_orders(s, rules, whens)
            self.check_unnumbered_rule(s, whens)
            rules.sort(key=lambda r: r.order)
            otherwise = self.one(s, HORIS.otherwise)
            if otherwise is None:
                self.error(
                    s,
                    "the DecisionStep has no horis:otherwise: when no horis:when rule "
                    "holds it would have nowhere to go",
                    "add horis:otherwise :SomeStep (one of: " + self.some(self.step_nodes()) + ")",
                )
            return DecisionStep(
                **common, rules=tuple(rules), otherwise=cast("URIRef | None", otherwise)
            )
        if cls == HORIS.ProposalStep:
            cands = self.one(s, HORIS.candidates)
            as_var = self.as_variable(s)
            if isinstance(cands, Literal):
                self.candidates_as_text(s, cands)
                cands = None
            query = self.candidates(s, cands, as_var) if cands is not None else None
            conf = self.one(s, HORIS.confidence)
            if conf is not None and self.one(s, HORIS.fallback) is None and on_error is None:
                waits = self.some(self.g.subjects(RDF.type, HORIS.WaitStep))
                # a step nothing leads to is most likely the fallback that was meant (a
                # horis:fallback line deleted with the ";" before it): named first
                astray = self.some(
                    n for n in self.step_nodes() if n != s and (None, None, n) not in self.g
                )
                self.warn(
                    s,
                    f"horis:confidence {conf} but no horis:fallback: whenever the model is "
                    "less sure than that the step has nowhere to go and the instance fails",
                    "add horis:fallback :SomeStep, where a choice the model is unsure of goes ("
                    + (
                        ""
                        if astray == "none declared"
                        else f"{astray}, which no step leads to, or "
                    )
                    + "typically a horis:WaitStep for an operator"
                    + ("" if waits == "none declared" else f": {waits}")
                    + "), or horis:onError",
                    at=(s, HORIS.confidence, conf),
                )
            fallback = self.one(s, HORIS.fallback)
            if conf is None and fallback is not None:
                self.warn(
                    s,
                    f"horis:fallback {self.n(fallback)} but no horis:confidence: the step acts on "
                    "whatever the model ranks first, however unsure (confidence 0 too): the "
                    "fallback is taken only when there is no candidate or the model fails",
                    "add horis:confidence 0.7 (how sure the model must be to act without "
                    f"{self.n(fallback)}), or remove horis:fallback",
                    at=(s, HORIS.fallback, fallback),
                )
            model = self.check_model(s)
            if (
                model is not None
                and not model.startswith("lexical:")
                and conf is None
                and fallback is None
                and on_error is None
            ):
                self.unfallen_model(s, model)
            least = _number(conf)
            if (
                (model is None or model.startswith("lexical:"))
                and least is not None
                and (0 < least <= 0.5 and fallback is not None)
            ):
                self.warn(
                    s,
                    f"horis:confidence {conf} lets a tie through: the offline ranker scores two "
                    "options that fit horis:rankBy equally at exactly 0.5, and the step then "
                    "acts on the first of them by IRI, which nobody chose",
                    f"write horis:confidence above 0.5 (0.6, say), so a tie goes to "
                    f"{self.n(fallback)}",
                    at=(s, HORIS.confidence, conf),
                )
            return ProposalStep(
                **common,
                query=query,
                rank_by=self.text(s, HORIS.rankBy),
                model=model,
                confidence=least,
                fallback=cast("URIRef | None", self.one(s, HORIS.fallback)),
                as_var=as_var,
                timeout=self.step_timeout(s),
                namespaces=tuple(self.namespaces(s, query or "").items()),
            )
        timeout = self.step_timeout(s)
        until = self.precondition(s, s, HORIS.until)
        self.check_wait(s)
        return WaitStep(
            **common,
            reason=self.text(s, HORIS.reason),
            wake=tuple(w for w in self.g.objects(s, HORIS.wake) if isinstance(w, URIRef)),
            delivery=cast("URIRef | None", self.one(s, HORIS.delivery)),
            until=until,
            timeout=timeout,
            on_timeout=cast("URIRef | None", self.one(s, HORIS.onTimeout)),
        )

    def step_kind(self, node: Node) -> URIRef:
        """The kind of step ``node``'s properties say it is (horis:tool: an action step),
        horis:ActionStep when they say none."""
        said = self.written_kind(node)
        return HORIS.ActionStep if said is None else said[1]

    def written_kind(self, node: Node) -> tuple[URIRef, URIRef] | None:
        """The first property of ``node`` that only one kind of step takes, and that kind;
        None when it has none."""
        kinds = (
            (HORIS.when, HORIS.DecisionStep),
            (HORIS.otherwise, HORIS.DecisionStep),
            (HORIS.candidates, HORIS.ProposalStep),
            (HORIS.until, HORIS.WaitStep),
            (HORIS.wake, HORIS.WaitStep),
            (HORIS.tool, HORIS.ActionStep),
        )
        return next(((p, k) for p, k in kinds if (node, p, None) in self.g), None)

    def written_as_another_kind(self, s: Node) -> bool:
        """Whether ``s``, declared ``a horis:DecisionStep``, has no horis:when rule nor
        horis:otherwise but is written as another kind of step (``horis:tool``: an action
        step), which is then said, once, at the type. A declaration copied from a decision
        step was said only by what followed from it: "has no horis:otherwise … add
        horis:otherwise" as if a branch were missing, and that its horis:tool, horis:requires
        and horis:bind each "do nothing" on a decision step."""
        said = self.written_kind(s)
        if said is None or said[1] == HORIS.DecisionStep or (s, RDF.type, said[1]) in self.g:
            return False
        prop, kind = said
        self.mistyped.add(s)
        self.said_better |= {(s, HORIS.when), (s, HORIS.otherwise)}  # the shapes': "needs"
        self.error(
            s,
            f"the step is declared a horis:DecisionStep, but it is written as "
            f"{kind_names({kind}, self.n)} (it names {self.n(prop)}, and has no horis:when "
            "rule nor horis:otherwise)",
            f"did you mean `{self.n(s)} a {self.n(kind)}`?",
            at=(s, RDF.type, HORIS.DecisionStep),
        )
        return True

    def each_run_on_idempotent(self, s: Node, tool: Tool) -> None:
        """``horis:eachRun true`` on a step whose tool is ``horis:idempotent true``: it only
        silences the warning that a second run of the focus calls a tool that is not
        idempotent again, which is never given for this one, so it says nothing — and reads
        as if the tool acted again each run (a notice), which its own declaration denies. A
        warning at the flag, with both ways to make the two agree (on a wait or decision
        step the vocabulary's domain check says it does nothing)."""
        t = self.n(tool.iri)
        self.warn(
            s,
            f"horis:eachRun true says nothing here: its tool {t} is horis:idempotent true, so "
            "calling it again on a second run of the focus changes nothing, and there is no "
            "rerun warning for horis:eachRun to silence",
            f"remove horis:eachRun true; or, if {t} does act again on each call (sends a "
            f"notice, charges), it is not idempotent: remove horis:idempotent true from {t}",
            at=(s, HORIS.eachRun, None),
        )

    def check_untried_requires(self, s: Node, cls: URIRef) -> None:
        """``horis:requires`` is tried on an action step (and its tool) and in a decision
        step's ``horis:when`` rules; written on a wait, a proposal or a decision step itself
        nothing reads it, nor on a workflow. On a wait it read as "wait until this holds": a
        resume without facts ended the wait and the next step blocked; on a workflow, as a
        guard on its instances, which every focus node ran past. A warning at the pattern,
        saying where the pattern is read: for a workflow, the step it starts at only when
        that is an action step (a decision, wait or proposal step's own is never tried)."""
        texts = list(self.g.objects(s, HORIS.requires))
        if not texts:
            return
        nxt = self.one(s, HORIS.next)
        start = self.one(s, HORIS.start)
        hint = {
            HORIS.Workflow: f"write it on the step the workflow starts at ({self.n(start)}), "
            "whose horis:requires is tried before anything acts"
            if start is not None and (start, RDF.type, HORIS.ActionStep) in self.g
            else f"write it in the horis:when rules of {self.n(start)}, the decision step the "
            "workflow starts at, or on the first action step after it"
            if start is not None and (start, RDF.type, HORIS.DecisionStep) in self.g
            else "write it on the first action step the workflow reaches, whose "
            "horis:requires is tried before it acts",
            HORIS.WaitStep: "write it as horis:until: the wait continues at horis:next once "
            "it holds",
            HORIS.ProposalStep: "put it in the horis:candidates query, or in the horis:requires "
            f"of the step the proposal goes to{f' ({self.n(nxt)})' if nxt else ''}, which "
            "drops the candidates it does not hold for",
            HORIS.DecisionStep: 'write it inside a rule: horis:when [ horis:requires "…" ; '
            "horis:next :SomeStep ]",
        }[cls]
        for text in texts:
            pattern = str(text).strip()
            self.warn(
                s,
                f"horis:requires on {kind_names({cls}, self.n)} is never tried: it is read on "
                "an action step, its tool and a decision step's horis:when rules only",
                f'write horis:until "{pattern}": the wait continues at horis:next once it holds'
                if cls == HORIS.WaitStep and "\n" not in pattern and len(pattern) < 80
                else hint,
                at=(s, HORIS.requires, text),
            )

    def check_binds(self, step: Node, bound: dict[str, list[Node]]) -> None:
        """One argument bound twice: the run would take one of the variables and drop the
        other without a word (which one is the graph's order). The same variable written twice
        (a line copied) loses nothing: a warning, where it was this error and the run was
        refused."""
        for arg, nodes in sorted(bound.items()):
            if len(nodes) < 2:
                continue
            variables = sorted({f"?{str(self.text(b, HORIS.var)).lstrip('?$')}" for b in nodes})
            last = max(nodes, key=lambda b: (self.src.locate(b)[1] or 0, str(b)))
            if len(variables) == 1:  # the same written twice: the run takes it, nothing lost
                self.warn(
                    step,
                    f'horis:bind gives argument "{arg}" from {variables[0]} '
                    f"{'twice' if len(nodes) == 2 else f'{len(nodes)} times'}, the same each "
                    "time",
                    "delete the copies",
                    at=(last, HORIS.arg, None),
                )
                continue
            self.error(
                step,
                f'horis:bind gives argument "{arg}" '
                f"{'twice' if len(nodes) == 2 else f'{len(nodes)} times'} "
                f"({', '.join(variables)}): the run would take one and silently drop the rest",
                f'keep one horis:bind [ horis:arg "{arg}" ; horis:var "…" ] for the argument',
                at=(last, HORIS.arg, None),
            )

    def unfallen_model(self, s: Node, model: str) -> None:
        """A ProposalStep asking a hosted model with no ``horis:fallback`` and no
        ``horis:onError``: when the model does not answer in time or with an HTTP error, or
        answers nothing usable, the step has nowhere to go and the run fails the instance;
        when its endpoint is down (a refused connection) or its candidates query finds no
        option, the instance stops there, blocked (:mod:`._proposal`). Both validated, and a
        provider answering errors failed every instance that reached the step."""
        waits = self.some(self.g.subjects(RDF.type, HORIS.WaitStep))
        self.warn(
            s,
            f'horis:model "{model}" with no horis:fallback and no horis:onError: when the '
            "model does not answer in time or answers an HTTP error or nothing usable, the "
            "step has nowhere to go and the instance fails, and when its endpoint is down (a "
            "refused connection) or the candidates query finds no option the instance stops "
            "there, blocked",
            "add horis:fallback :SomeStep, where such an instance goes — typically a "
            "horis:WaitStep where an operator chooses"
            + ("" if waits == "none declared" else f" ({waits})"),
            at=(s, HORIS.model, self.one(s, HORIS.model)),
        )

    def check_model(self, s: Node) -> str | None:
        """The step's ``provider:model``, an alias (``claude:``) written as its provider."""
        model = self.one(s, HORIS.model)
        if model is None:
            return None
        provider, _, name = str(model).partition(":")
        provider = MODEL_ALIASES.get(provider, provider)
        if provider not in RANKERS or not name:
            meant = _meant_model(str(model))
            self.error(
                s,
                f'horis:model "{model}" names no provider Horismos can ask',
                (f'did you mean "{meant}"? ' if meant else "")
                + 'write "provider:model" with provider one of '
                + ", ".join([*RANKERS, *MODEL_ALIASES])
                + ', e.g. "lexical:bm25" or '
                '"anthropic:claude-sonnet-4-5"',
                at=(s, HORIS.model, model),
            )
        elif provider == "lexical" and name != "bm25":  # it would rank as bm25, and the
            # trace would name a model that never ranked
            self.error(
                s,
                f'horis:model "{model}": the offline ranker is "lexical:bm25", the only one',
                'write "lexical:bm25", or a hosted model ("anthropic:MODEL", "openai:MODEL")',
                at=(s, HORIS.model, model),
            )
        return f"{provider}:{name}"

    def as_variable(self, s: Node) -> str:
        """The variable a ProposalStep's ``horis:as`` names, ``option`` when none: written
        bare (``"option"``) or as in the pattern (``"?option"``, ``"$option"``), as
        ``horis:var`` is — read raw, ``"?option"`` made the step look for ``??option``."""
        written = self.one(s, HORIS["as"])
        if written is None:
            return "option"
        name = str(written).strip().lstrip("?$")
        if not re.fullmatch(r"[A-Za-z_]\w*", name):
            self.error(
                s,
                f'horis:as "{written}" names no SPARQL variable',
                'write horis:as "option": the name of the variable the candidates pattern '
                "binds, as in ?option",
                at=(s, HORIS["as"], written),
            )
            return "option"
        if name == "this":
            self.error(
                s,
                f'horis:as "{written}" names ?this, the node the instance runs for: the '
                "candidates query is asked with ?this bound to the focus, so its one option is "
                "the focus itself, and the choice would stand for the focus in the steps after",
                'name the choice after what it is, e.g. horis:as "flight", and write that '
                "variable in the candidates query",
                at=(s, HORIS["as"], written),
            )
        return name

    def candidates_as_text(self, s: Node, text: Literal) -> None:
        """``horis:candidates "…"``: the query written as the value of horis:candidates,
        which takes a node holding it as its ``horis:query``. One error at that line: the
        authoring shapes said it twice, once at the step and once, at ``<graph>`` (no file
        or line), named by the whole query text, the literal being the node they judged."""
        written = str(text).strip()
        shown = f'"{written}"' if "\n" not in written and len(written) <= 60 else '"""…"""'
        self.error(
            s,
            "horis:candidates is given the query itself, as a string; it takes a node that "
            "holds the query as its horis:query",
            f"write horis:candidates [ horis:query {shown} ]: the same pattern (or SELECT), "
            "in brackets after horis:query",
            at=(s, HORIS.candidates, text),
        )
        self.said_better |= {(s, HORIS.candidates), (text, HORIS.query)}

    def candidates(self, s: Node, cands: Node, as_var: str) -> str | None:
        """The candidates query: a SELECT as written, or a graph pattern that binds the
        ``horis:as`` variable, made the SELECT of that variable. Checked to parse."""
        text = self.text(cands, HORIS.query)
        if text is None:
            return None
        as_written = text
        written = _SPARQL_HEAD.sub("", text).lstrip()
        wrapper = 0  # the lines put before the pattern: the parser's count is the text's
        if not written.upper().startswith(("SELECT", "PREFIX", "BASE")):
            if not re.search(rf"[?$]{re.escape(as_var)}\b", text):
                self.error(
                    s,
                    f"the horis:candidates pattern never binds ?{as_var}, the "
                    "variable the candidates are read from",
                    _unbound_as_hint(as_var, text),
                    at=(cands, HORIS.query, None),
                )
                return None
            text = f"SELECT DISTINCT ?{as_var} WHERE {{\n{text}\n}}"
            wrapper = 1
        ns = self.namespaces(s, text)  # parsed with, and given the store with, these
        try:
            with literal_warnings_off():  # said at its line: check_pattern_datatypes
                parsed = prepare_query(text, ns)
            remote = remote_reads(parsed)
        except Exception as e:
            why, row = sparql_why((str(e).strip().splitlines() or [type(e).__name__])[0], wrapper)
            hint = f'write a graph pattern ("?{as_var} a :Option .") or a SELECT of ?{as_var}'
            line: int | None = None  # a bracket's left open: named at its line, as horis:requires
            left = self.left_open(as_written, (cands, HORIS.query, None))
            if left is not None:
                why, hint, line = left
            problem = self.src.problem(
                "error",
                s,
                f"the horis:candidates query does not parse: {why}",
                hint,
                at=(cands, HORIS.query, None),
            )
            if line is not None:
                problem = replace(problem, line=line)
            elif row is not None and problem.line is not None:  # the slip's own line, as
                problem = replace(problem, line=problem.line + row - 1)  # horis:requires
            self.problems.append(problem)
            return None
        if remote:
            self.remote(s, cands, HORIS.query, cast(Node, self.one(cands, HORIS.query)), remote[0])
            return None
        if self.store_refuses(s, cands, HORIS.query, text, ns, parsed.algebra):
            return None
        self.queries.append((s, cands, parsed.algebra))
        projected = [str(v) for v in parsed.algebra["PV"]]
        if as_var not in projected and self.options_lost(parsed.algebra, projected, as_var):
            binds = as_var in {str(v) for v in dict.get(parsed.algebra, "_vars") or ()}
            self.error(
                s,
                f"the horis:candidates SELECT gives {', '.join('?' + v for v in projected)}, "
                f"not ?{as_var}, the variable the options are read from (horis:as)"
                + (", which its WHERE binds" if binds else "")
                + ": the model is never asked, and every instance goes to the fallback with "
                "no options",
                f"SELECT ?{as_var} WHERE {{ … }}: the query must select ?{as_var}, the options "
                "(as workflows/rebooking.ttl does)"
                + ("" if binds else ", or name the projected variable with horis:as"),
                at=(cands, HORIS.query, None),
            )
            return None
        named = re.findall(r"[?$](\w+)", str(self.one(cands, HORIS.query)))
        if "this" not in named and not any(slip_distance(v, "this") <= 1 for v in named):
            self.at_text(
                "warning",
                variable_needle(named[0] if named else as_var),
                s,
                "the horis:candidates query never names ?this, the instance's focus: every "
                "instance is offered the same options, whatever its focus, and the model "
                "chooses among all of them",
                "tie the candidates to the focus, e.g. ?this :flight ?old . ?"
                f"{as_var} :to ?dest . ?old :to ?dest .",
                (cands, HORIS.query),
            )
        return text

    def options_lost(self, algebra: Any, projected: list[str], as_var: str) -> bool:
        """Whether a candidates SELECT that does not project ``as_var`` gives no options: one
        of several columns is none in particular; a lone column is read as the options only
        when the WHERE binds it and does not bind ``as_var`` too (``SELECT ?flight WHERE {
        … ?option a :Flight … }`` gave an empty row per solution: "no candidates" every
        time)."""
        if len(projected) != 1:
            return len(projected) > 1
        certain, maybe = bound_by(algebra.p)
        named = {str(v) for v in dict.get(algebra, "_vars") or ()}
        return projected[0] not in certain | maybe or as_var in named

    def check_wait(self, s: Node) -> None:
        """The wait contract: why (non-empty), what wakes it, and how it is delivered, each
        said explicitly, so nobody has to guess why an instance stopped or what ends it."""
        reason = self.text(s, HORIS.reason)
        if reason is None or not reason.strip():
            self.error(
                s,
                "a horis:WaitStep needs a non-empty horis:reason: why it waits, "
                "for whoever answers it",
                'write horis:reason "a manager approves the leave request"',
            )
        if self.one(s, HORIS.wake) is None:
            self.error(
                s,
                "a horis:WaitStep needs horis:wake: what ends the wait",
                "write horis:wake horis:OperatorInput (a person answers with resume), "
                "horis:Timer (its horis:timeout passes; `horismos wake` settles it), "
                "horis:External, horis:TaskResult or horis:System",
            )
        if self.one(s, HORIS.delivery) is None:
            self.error(
                s,
                "a horis:WaitStep states its delivery explicitly",
                "write horis:delivery horis:Final (publish a brief for the operator) or "
                "horis:delivery horis:Silent (no brief)",
            )
        if self.one(s, HORIS.timeout) is None:
            self.check_untimed_wait(s)

    def check_untimed_wait(self, s: Node) -> None:
        """A wait with no horis:timeout never times out. Woken by horis:Timer, no timer ever
        ends it (``horismos wake`` finds it due only once its horis:until holds, and without
        one never: it waits until resumed by hand); its horis:onTimeout branch can never be
        taken. Neither has a meaning of its own (horis:Timer is "ends when its horis:timeout
        elapses"), so both are errors."""
        if (s, HORIS.wake, HORIS.Timer) in self.g:
            self.error(
                s,
                "horis:wake horis:Timer, but the step has no horis:timeout, so no timer ever "
                "ends the wait"
                + (
                    ": only its horis:until can"
                    if self.one(s, HORIS.until) is not None
                    else ": `horismos wake` never finds it due, and unless resumed by hand "
                    "it waits for ever"
                ),
                'add horis:timeout "2h" (or "PT2H"): once it has passed the wait continues '
                "at horis:onTimeout, else horis:next",
                at=(s, HORIS.wake, HORIS.Timer),
            )
        for target in self.g.objects(s, HORIS.onTimeout):
            self.error(
                s,
                f"horis:onTimeout {self.n(target)}, but the step has no horis:timeout: "
                f"the wait never times out, so {self.n(target)} is never taken",
                'add horis:timeout "2h" (or "PT2H"), after which the wait continues at '
                f"{self.n(target)}; or remove horis:onTimeout",
                at=(s, HORIS.onTimeout, target),
            )


_FAMILIES = (
    ("gpt-", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("claude-", "anthropic"),
)
"""The model names whose provider their name says (``gpt-4o``: OpenAI's)."""


def _meant_model(model: str) -> str | None:
    """The ``provider:model`` a model written without its provider, or with a slash for the
    colon (``gpt-4o``, ``openai/gpt-4o``), most likely means; None when it says no provider.
    Why: the hint listed the providers and left the author to guess the form."""
    text = model.strip()
    head, sep, rest = text.partition("/")
    if sep and rest and MODEL_ALIASES.get(head.lower(), head.lower()) in RANKERS:
        return f"{head.lower()}:{rest}"
    if ":" in text:
        return None
    for start, provider in _FAMILIES:
        if text.lower().startswith(start) and provider in RANKERS:
            return f"{provider}:{text}"
    return None
