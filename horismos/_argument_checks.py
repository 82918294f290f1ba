"""Checks of the arguments steps give tools: kind, class and datatype.

An argument bound from a pattern variable is only as right as the pattern: a literal where
the tool takes a node, a node of an unrelated class, or a value of another datatype is found
here by reading the pattern, not when the tool is called."""

from __future__ import annotations

import re
from typing import Any, cast

from rdflib import RDF, RDFS, XSD, Literal, URIRef
from rdflib.term import Node, Variable

from ._argument_datatypes import accepts, refused_by, written_as
from ._datatypes import DATATYPES, derives_from, literal_datatype, literal_hint, turtle_term
from ._define_patterns import PatternReading, variable_needle
from ._effect_shapes import one_valued
from ._model import ActionStep, Arg, ProposalStep, Tool
from ._preconditions import bound_constant, group_triples
from ._sources import literal_warnings_off
from ._term_kinds import range_class, value_kinds
from ._vocab import HORIS

__all__ = ["ArgumentChecks"]


class ArgumentChecks(PatternReading):
    """Checks that each argument a step gives a tool is of the kind, class and datatype
    the tool takes."""

    def arg_names(self, tool: Node) -> set[str]:
        """The names of the arguments ``tool``'s horis:takes declares, as written (read from
        the graph: a tool the loader could not build has its names too)."""
        return {
            str(n)
            for takes in self.g.objects(tool, HORIS.takes)
            for a in self.g.objects(takes, HORIS.arg)
            for n in self.g.objects(a, HORIS.name)
        }

    def bind_of(self, step: Node, arg: str) -> Node | None:
        """The ``horis:bind [ horis:arg "arg" ; … ]`` node of ``step``, where a problem about
        how the argument is given is reported."""
        return next(
            (b for b in self.g.objects(step, HORIS.bind) if self.text(b, HORIS.arg) == arg), None
        )

    def check_argument_kinds(self) -> None:
        """An argument given a variable that the step's pattern binds to the other kind of
        value: a literal (the object of an owl:DatatypeProperty) for an argument that takes
        a node of a class, or a node (a subject, ?this) for one that takes a literal. Every
        call was refused ("must be a node of class :Nurse; the graph gives "Q-URGENT-1""),
        after the steps before it had acted."""
        for step in sorted(self.defs.steps.values(), key=lambda s: str(s.iri)):
            if not isinstance(step, ActionStep) or step.tool is None:
                continue
            pre = step.requires
            kinds = {"this": "node"}
            if pre is not None:
                kinds |= value_kinds(self.g, group_triples(pre.select.algebra))
                kinds["this"] = "node"
            for a in step.tool.args:
                var = step.var_for(a.name)
                kind = kinds.get(var)
                wanted = "node" if a.is_class else "literal"
                if kind is None or kind == wanted:
                    continue
                bind = self.bind_of(step.iri, a.name)
                given = (
                    "the instance's focus, a node"
                    if var == "this"
                    else f"a {kind} in the step's horis:requires"
                )
                self.error(
                    step.iri,
                    f'argument "{a.name}" of {self.n(step.tool.iri)} takes a {wanted} '
                    f"({'of class ' if a.is_class else 'of '}{self.n(a.type)}), but ?{var} is "
                    f"{given}: every call is refused, after the steps before it have acted",
                    f'give "{a.name}" from a variable the pattern binds to a {wanted} '
                    f"of {self.n(a.type)}",
                    at=(bind, HORIS.var, None) if bind is not None else step.iri,
                )

    def check_option_kinds(self) -> None:
        """A proposal whose candidates are of the other kind than its horis:next takes them
        as: literals (``?option`` the object of an owl:DatatypeProperty in the candidates
        query) where the next step reads ``?option`` as a node (the subject of a triple of its
        horis:requires, or an argument of a class), or nodes where it takes a literal. The
        next step's pattern dropped every candidate, and every instance went to the fallback
        as if the graph had none; or the model's choice was refused by the tool's argument
        check after the steps before had acted."""
        for step, cands, algebra in self.queries:
            proposal = self.defs.steps.get(cast(URIRef, step))
            if not isinstance(proposal, ProposalStep) or proposal.next is None:
                continue
            var = proposal.as_var
            kind = value_kinds(self.g, group_triples(algebra)).get(var)
            nxt = self.defs.steps.get(proposal.next)
            if kind is None or not isinstance(nxt, ActionStep):
                continue
            wanted, why = None, ""
            if nxt.requires is not None and var in nxt.requires.variables:
                wanted = value_kinds(self.g, group_triples(nxt.requires.select.algebra)).get(var)
                why = f"its horis:requires reads ?{var} as a {wanted}"
                so = "its pattern drops every candidate, and every instance goes to the fallback"
            if wanted in (None, kind) and nxt.tool is not None:
                for a in nxt.tool.args:
                    if nxt.var_for(a.name) == var and (a.is_class != (kind == "node")):
                        wanted = "node" if a.is_class else "literal"
                        why = f'it gives ?{var} to argument "{a.name}" of {self.n(nxt.tool.iri)}'
                        why += f", which takes a {wanted} of {self.n(a.type)}"
                        so = "every choice is refused when the tool is called"
                        break
            if wanted in (None, kind):
                self.check_option_classes(proposal, cands, algebra, nxt)
                continue
            self.at_text(
                "error",
                variable_needle(var),
                step,
                f"the horis:candidates query binds ?{var} to a {kind}, but horis:next "
                f"{self.n(nxt.iri)} takes the option as a {wanted} ({why}): {so}",
                f"have the candidates query bind ?{var} to the {wanted}s to choose among"
                + (" (the nodes, not a value of theirs)" if wanted == "node" else ""),
                (cands, HORIS.query),
            )

    def var_classes(self, algebra: Any, var: str) -> set[URIRef]:
        """The classes a pattern says ``?var``'s nodes are of: ``?var a C``, or the object of a
        property whose rdfs:range is the class C (the triples every solution matches, and
        those of its OPTIONAL and UNION groups; not a MINUS's, which no solution matches)."""
        node = Variable(var)
        classes: set[URIRef] = set()
        for s, p, o in group_triples(algebra, minus=False):
            if s == node and p == RDF.type and isinstance(o, URIRef):
                classes.add(o)
            elif o == node and isinstance(p, URIRef) and p != RDF.type:
                r = range_class(self.g, p)
                if r is not None:
                    classes.add(r)
        return classes

    def unrelated_classes(self, algebra: Any, var: str, wanted: URIRef) -> str | None:
        """The classes a pattern says ``?var``'s nodes are of (:meth:`var_classes`), named,
        when it says some and none of them may be a ``wanted``; else None."""
        classes = self.var_classes(algebra, var)
        if not classes or any(self.related(c, wanted) for c in classes):
            return None
        return ", ".join(sorted(self.n(c) for c in classes))

    def check_argument_classes(self) -> None:
        """An argument of a class given from a variable its step's horis:requires says is a
        node of an unrelated class (``?this :acuity ?nurse`` for a :Nurse, :acuity's range
        being :AcuityLevel; ``?nurse a :AcuityLevel``): every call was refused ("must be a
        node of class :Nurse"), after the steps before it had acted. A warning, as for the
        focus: a node may be of two unrelated classes."""
        for step in sorted(self.defs.steps.values(), key=lambda s: str(s.iri)):
            if not isinstance(step, ActionStep) or step.tool is None or step.requires is None:
                continue
            algebra = step.requires.select.algebra
            for a in step.tool.args:
                var = step.var_for(a.name)
                if var == "this":
                    continue
                if self.check_bound_constant(step, a, var, algebra):
                    continue
                if not a.is_class:
                    self.check_argument_datatype(step, a, var, algebra)
                    continue
                self.warn_unrelated(
                    algebra,
                    var,
                    a,
                    self.n(step.tool.iri),
                    (f"horis:requires binds ?{var} to nodes of ", ""),
                    "it gives",
                    "call is refused, after the steps before it have acted",
                    f"bind ?{var} to a {self.n(a.type)} in the pattern, or give "
                    f'"{a.name}" from a variable that is one',
                    step.iri,
                    (step.iri, HORIS.requires),
                )

    def check_bound_constant(self, step: ActionStep, a: Arg, var: str, algebra: Any) -> bool:
        """An argument given from a variable its step's pattern gives one constant with
        ``BIND`` (``BIND("14" AS ?days)`` for an ``xsd:integer``, ``BIND(:loan1 AS ?days)``,
        ``BIND("loan1" AS ?loan)`` for a :Loan) that the call never takes, as it judges it
        (:mod:`._argument_datatypes`): every call is refused, each instance failing there or
        taking its ``horis:onError``, after the steps before it have acted. An error at the
        BIND's line, with the value to write; whether one was said."""
        if step.tool is None:
            return False
        value = bound_constant(algebra, var)
        if value is None:
            return False
        name = self.n(step.tool.iri)
        if a.is_class:
            if not isinstance(value, Literal):
                return False
            said, hint = (
                f"{turtle_term(value, self.n)}, a literal",
                f"BIND a node of {self.n(a.type)} (:name, without quotes) to ?{var}",
            )
        elif a.type not in DATATYPES or a.type == RDFS.Literal:
            return False
        elif isinstance(value, Literal):
            given = literal_datatype(value)
            if not refused_by(a.type, (given,)):
                return False
            is_a = "a string" if given == XSD.string else f"a literal of {self.n(given)}"
            said = f"{turtle_term(value, self.n)}, {is_a}"
            with literal_warnings_off():
                fits = not Literal(str(value), datatype=a.type).ill_typed
            hint = (
                literal_hint(value, a.type, self.n)
                if fits
                else f"BIND a value of {self.n(a.type)} to ?{var}, or declare "
                f'"{a.name}" horis:type {self.n(given)}'
            )
        else:
            said = f"{self.n(value)}, a node"
            hint = f"BIND a literal of {self.n(a.type)} to ?{var}"
        self.at_text(
            "error",
            rf"(?i)\bAS\s+[?$]{re.escape(var)}\b",
            step.iri,
            f'horis:requires binds ?{var} to {said}, but it gives argument "{a.name}" of '
            f"{name}, which takes "
            + (f"a node of {self.n(a.type)}" if a.is_class else f"a literal of {self.n(a.type)}")
            + (
                self.only_exactly(a.type, literal_datatype(value))
                if isinstance(value, Literal) and not a.is_class
                else ""
            )
            + ": every call is refused, after the steps before it have acted",
            hint,
            (step.iri, HORIS.requires),
        )
        return True

    def check_argument_datatype(self, step: ActionStep, a: Arg, var: str, algebra: Any) -> None:
        """A datatype argument given from the object of a property whose values it never
        takes, as the call judges them (:mod:`._argument_datatypes`): a range none of whose
        literals is one of the argument's (``?this :queueRef ?ref``, a string, for an
        xsd:integer; a bare ``1200`` of an xsd:integer range for an ``xsd:int``), or a
        datatype a tool's effect writes the property with (an amount written as xsd:decimal
        for an xsd:integer). The argument check refused every call, after the steps before it
        had acted. Built-in datatypes only."""
        if a.type not in DATATYPES or a.type == RDFS.Literal or step.tool is None:
            return
        node = Variable(var)
        for _, p, o in group_triples(algebra, minus=False):
            if o != node or not isinstance(p, URIRef) or p == RDF.type:
                continue
            for r in self.g.objects(p, RDFS.range):
                if not isinstance(r, URIRef) or r not in DATATYPES or r == RDFS.Literal:
                    continue
                if not refused_by(a.type, written_as(r)):
                    if not accepts(a.type, r):  # taken only as Turtle writes some bare
                        self.at_text(
                            "warning",
                            variable_needle(var),
                            step.iri,
                            f"horis:requires binds ?{var} to a value of {self.n(p)}, whose "
                            f'rdfs:range is {self.n(r)}, but it gives argument "{a.name}" of '
                            f"{self.n(step.tool.iri)}, which takes a literal of "
                            f"{self.n(a.type)}: a "
                            f"value of {self.n(r)} is taken only when written as an integer "
                            "(12); one with a fraction (2.5) is refused, after the steps before "
                            "it have acted",
                            f'declare "{a.name}" horis:type {self.n(r)}',
                            (step.iri, HORIS.requires),
                        )
                        return
                    continue
                self.at_text(
                    "warning",
                    variable_needle(var),
                    step.iri,
                    f"horis:requires binds ?{var} to a value of {self.n(p)}, whose rdfs:range "
                    f'is {self.n(r)}, but it gives argument "{a.name}" of {self.n(step.tool.iri)}, '
                    f"which takes a literal of {self.n(a.type)}"
                    + self.only_exactly(a.type, r)
                    + ": every call is refused, after the steps before it have acted",
                    f'declare "{a.name}" horis:type {self.n(r)}, or give it from a variable '
                    f"that holds a literal of {self.n(a.type)}",
                    (step.iri, HORIS.requires),
                )
                return
            for tool, written in self.effect_datatypes(p):
                if not refused_by(a.type, (written,)):
                    continue
                self.at_text(
                    "warning",
                    variable_needle(var),
                    step.iri,
                    f"horis:requires binds ?{var} to a value of {self.n(p)}, which "
                    f"{self.n(tool.iri)} writes as a literal of {self.n(written)} (its effect's "
                    f'horis:type), but it gives argument "{a.name}" of '
                    f"{self.n(step.tool.iri)}, which "
                    f"takes a literal of {self.n(a.type)}"
                    + self.only_exactly(a.type, written)
                    + ": every call given a value it wrote is refused, after the steps before "
                    "it have acted",
                    f'declare "{a.name}" horis:type {self.n(written)}, or write '
                    f"{self.n(p)} as {self.n(a.type)} in {self.n(tool.iri)}'s effect",
                    (step.iri, HORIS.requires),
                )
                return

    def only_exactly(self, argument: URIRef, given: URIRef) -> str:
        """Why a literal of ``given`` is refused where one derived from it or the other way
        round might be thought to fit: the call takes the argument's own datatype only."""
        if not (derives_from(given, argument) or derives_from(argument, given)):
            return ""
        return (
            f" (the call takes a literal of exactly {self.n(argument)}, not one of {self.n(given)})"
        )

    def effect_datatypes(self, p: URIRef) -> list[tuple[Tool, URIRef]]:
        """Each tool whose effect writes ``p`` as a returned literal, with its datatype."""
        return [
            (tool, asserted.type)
            for tool in sorted(self.defs.tools.values(), key=lambda t: str(t.iri))
            if tool.effect is not None
            for asserted in tool.effect.asserts
            if asserted.property == p
            and asserted.value is None
            and not asserted.is_class
            and asserted.type in DATATYPES
            and asserted.type != RDFS.Literal
        ]

    def check_option_classes(
        self, proposal: ProposalStep, cands: Node, algebra: Any, nxt: ActionStep
    ) -> None:
        """Candidates of a class (``?option a :Airport``, or the object of a property whose
        rdfs:range is one) unrelated to the class of the argument the next step gives the
        option to (``:Flight``): every choice was refused by the argument check, after the
        proposal was recorded. A warning, as for the focus: a node may be of both."""
        var = proposal.as_var
        if nxt.tool is None:
            return
        for a in nxt.tool.args:
            if nxt.var_for(a.name) != var or not a.is_class:
                continue
            self.warn_unrelated(
                algebra,
                var,
                a,
                self.n(nxt.tool.iri),
                ("the horis:candidates query gives nodes of ", f" as ?{var}"),
                f"horis:next {self.n(nxt.iri)} gives ?{var} to",
                "choice is refused when the tool is called",
                f"have the candidates query give nodes of {self.n(a.type)} as ?{var}",
                proposal.iri,
                (cands, HORIS.query),
            )

    def warn_unrelated(
        self,
        algebra: Any,
        var: str,
        a: Arg,
        tool: str,
        gives: tuple[str, str],
        via: str,
        refused: str,
        hint: str,
        owner: Node,
        where: tuple[Node, URIRef],
    ) -> None:
        """A warning, at ``?var`` in the ``where`` pattern, when that pattern gives ``?var``
        only nodes of classes unrelated to argument ``a``'s (:meth:`unrelated_classes`):
        ``gives`` words the pattern around those classes, ``via`` what hands ``?var`` to the
        argument of ``tool``, ``refused`` what then fails."""
        given = self.unrelated_classes(algebra, var, a.type)
        if given is None:
            return
        self.at_text(
            "warning",
            variable_needle(var),
            owner,
            f'{gives[0]}{given}{gives[1]}, but {via} argument "{a.name}" of {tool}, which '
            f"takes a {self.n(a.type)}: unless a node is both, every {refused}",
            hint,
            where,
        )

    def check_for_each_subjects(self) -> None:
        """A horis:forEach step whose calls all write on the focus (the effect's subject
        given from ?this) a property that takes one value: each call's answer is judged
        alone, so the focus ended with one value per call (a patient with two
        :assignedNurse) where the effect says one. A warning: the modeler may mean several,
        and then says so with horis:many."""
        for step in sorted(self.defs.steps.values(), key=lambda s: str(s.iri)):
            if not isinstance(step, ActionStep) or not step.for_each or step.tool is None:
                continue
            effect = step.tool.effect
            if effect is None or not effect.subject or step.var_for(effect.subject) != "this":
                continue
            subject = step.tool.arg(effect.subject)
            cls = subject.type if subject is not None else None
            # a fresh value each call: returned, or the time stamp the runtime writes
            fresh = [a for a in effect.asserts if a.value in (None, HORIS.now)]
            one = (
                one_valued(
                    self.g,
                    self.defs.domain_targets,
                    cls,
                    {a.property for a in fresh},
                    effect.shapes,
                )
                if cls is not None
                else set()
            )
            if one:
                props = ", ".join(sorted(self.n(p) for p in one))
                self.warn(
                    step.iri,
                    f"horis:forEach calls {self.n(step.tool.iri)} once per solution, and every "
                    "call "
                    f'writes {props} on the focus (horis:subject "{effect.subject}" is given '
                    f"from ?this), which a domain shape allows one value of (sh:maxCount 1): "
                    f"where the pattern has two solutions the focus would hold two, so the "
                    f"gate rejects the step's result after every call has acted",
                    f"raise sh:maxCount for {props} in the shape if the focus takes several, "
                    f'or give "{effect.subject}" from a variable that differs per solution',
                    at=(step.iri, HORIS.forEach, None),
                )
            single = [a for a in fresh if a.value is None and not a.many and a.property not in one]
            if not single:
                continue
            props = ", ".join(self.n(a.property) for a in single)
            self.warn(
                step.iri,
                f"horis:forEach calls {self.n(step.tool.iri)} once per solution, and every call "
                f'writes {props} on the focus (horis:subject "{effect.subject}" is given from '
                f"?this): the focus ends with a value per call where the effect says one",
                f"declare horis:many true on {props} if the focus takes several, or give "
                f'"{effect.subject}" from a variable that differs per solution',
                at=(step.iri, HORIS.forEach, None),
            )
