"""Checks of the values SPARQL patterns write: literals, IRIs and VALUES rows.

``?p :acuity "urgent"`` where ``:acuity`` holds nodes never matches; a VALUES row of the
wrong kind, a literal of a datatype the property never has, or a node no file declares
makes a step silently never (or always) hold: said here, at the pattern's line."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import cast

from rdflib import RDF, RDFS, XSD, Literal, URIRef
from rdflib.term import Node

from ._builder_base import LOCAL_NAME, STANDARD_NAMESPACES
from ._compared_kinds import (
    CrossedDatatypes,
    Side,
    crossed_comparisons,
    crossed_datatypes,
    text_ordered_numbers,
)
from ._datatypes import NUMERIC, literal_datatype, literal_hint, range_refusing, turtle_term
from ._define_patterns import PatternReading, variable_needle
from ._guard_writes import affirmations, negations
from ._near_names import near_individual
from ._preconditions import InList, LiteralMatch, iri_matches, literal_matches, string_reads
from ._shape_bounded_filters import beyond_bounds, said
from ._term_kinds import (
    algebra_literals,
    algebra_triples,
    expression_nodes,
    object_kind,
    pattern_nodes,
    range_class,
)
from ._terms import split_iri
from ._values_joins import JoinedValues, joined_values
from ._vocab import HORIS, NS
from ._world_lexical import ill_typed_text, well_typed_hint

__all__ = ["PatternValueChecks"]


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


def _excludes_nothing(negation: str) -> str:
    """What a ``negation`` (``FILTER NOT EXISTS``, ``MINUS``) whose group never matches
    does: it takes nothing away, so the pattern holds as if it were not written; a ``FILTER
    EXISTS`` that never matches is never true, so the pattern never holds."""
    if negation == "FILTER EXISTS":
        return "so the FILTER EXISTS never finds it and the pattern never holds"
    return (
        f"so the {negation} never finds it and excludes nothing: the pattern holds as if "
        "it were not written"
    )


def _only_inside(node: URIRef, algebra: object, guards: list[tuple[str, object]]) -> bool:
    """Whether ``node`` is named only inside ``guards``, the negated groups of ``algebra``
    (:func:`~._guard_writes.negations`): as often there as in the whole pattern."""

    def count(x: object) -> int:
        return sum(1 for s, p, o in algebra_triples(x) if node in (s, None if p == RDF.type else o))

    return count(algebra) == sum(count(g) for _, g in guards)


_IRI_TEXT = re.compile(r"[A-Za-z][\w+.-]*:")
"""How an IRI's text begins (its scheme): ``str(?v) = "http://…"`` may hold of a node."""


class PatternValueChecks(PatternReading):
    """Checks of the values patterns compare and list: literals against the property's
    range, IRIs, VALUES rows, datatypes."""

    def note_unheld_nodes(self, named: set[URIRef]) -> None:
        """The nodes patterns and fixed effect values name that nothing loaded names
        (:attr:`Definitions.unheld`): a typo there (``:Urgent``) made a pattern that never
        matched, every instance blocked, or an effect that pointed at no node; whether the
        world holds them is asked only when validate is given one."""

        def unheld(node: URIRef) -> bool:
            return node not in named and not str(node).startswith((*STANDARD_NAMESPACES, NS))

        declared = self.declared_individuals
        for owner, holder, pred, algebra in self.parsed_patterns():
            guards = negations(algebra)
            in_triples = pattern_nodes(algebra)
            nodes = in_triples | expression_nodes(algebra)
            for node in sorted(filter(unheld, nodes), key=str):
                name = self.n(node)
                so = (
                    "that part of the pattern never matches"
                    if node in in_triples
                    else "it is no node of the world: a FILTER's = with it never holds (its "
                    "!= always does), and a call given it by BIND or VALUES as a node of a "
                    "class is refused"
                )
                kinds = {kind for kind, g in guards if node in pattern_nodes(g)}
                if len(kinds) == 1 and _only_inside(node, algebra, guards):
                    so = _excludes_nothing(next(iter(kinds))).removeprefix("so ")
                near = near_individual(node, declared)
                said = rf"(?:{re.escape(name)}|<{re.escape(str(node))}>)(?![\w-])"
                meant = f"did you mean {self.n(near)}?" if near is not None else None
                self.defs.unheld.setdefault(node, []).append(
                    self.placed_in_text(
                        "warning",
                        said,
                        owner,
                        f"{self.n(pred)} names {name}, which neither the definitions nor the "
                        f"world hold, so {so}",
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
                            f"world holds {name}, {so}",
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
            self.refused_literals(owner, holder, pred, literal_matches(algebra, minus=False), seen)
            for kind, group in negations(algebra):
                self.refused_literals(
                    owner, holder, pred, literal_matches(group, minus=False), seen, kind
                )
            for group in affirmations(algebra):
                self.refused_literals(
                    owner, holder, pred, literal_matches(group, minus=False), seen, "FILTER EXISTS"
                )

    def refused_literals(
        self,
        owner: Node,
        holder: Node,
        pred: URIRef,
        matches: list[LiteralMatch],
        seen: set[tuple[Node, URIRef, Literal]],
        negation: str | None = None,
    ) -> None:
        """:meth:`check_pattern_literals` of one group's ``matches``. Inside a ``negation``
        (``FILTER NOT EXISTS``, ``MINUS``) a match no value meets makes it find nothing, so
        it excludes nothing: the guard against acting twice, or on a reserved book, lets
        every instance through; inside a ``FILTER EXISTS`` (given as ``negation`` too) it
        makes the pattern never hold — said only of a match the group needs (a triple, a
        FILTER's ``=`` joined by ``&&``), the one way it says that."""
        binders: dict[tuple[str, Literal, bool], set[URIRef]] = {}
        for m in matches:
            if m.var is not None:
                binders.setdefault((m.var, m.literal, m.as_string), set()).add(m.property)
        lists: set[tuple[str, InList]] = set()
        for m in matches:
            prop, lit, var = m.property, m.literal, m.var
            if (holder, prop, lit) in seen or (var, m.in_list) in lists:
                continue
            if (
                negation is not None
                and var is not None
                and (m.op == "!=" or not m.needed or m.in_list is not None)
            ):
                continue
            refusal = self.match_refusal(m, prop)
            if refusal is None or (
                var is not None
                and any(
                    self.match_refusal(m, q) != refusal for q in binders[(var, lit, m.as_string)]
                )
            ):
                continue
            seen.add((holder, prop, lit))
            if refusal == "node" and negation is None and self.every_member_a_literal(m, binders):
                lists.add((cast(str, var), cast(InList, m.in_list)))
                self.node_literals(owner, holder, pred, m)
                continue
            if refusal == "node":
                self.node_literal(owner, holder, pred, m, negation)
                continue
            given = literal_datatype(lit)
            r = cast(URIRef, range_refusing(given, self.g.objects(prop, RDFS.range)))
            written = turtle_term(lit, self.n)
            is_a = "a string" if given == XSD.string else f"a literal of {self.n(given)}"
            if negation is not None:
                said = (
                    f"the {negation} matches it with {written}, {is_a}, which no value of "
                    f"{self.n(prop)} equals"
                    if var is None
                    else f"the FILTER inside the {negation} compares ?{var} (its value) with "
                    f"{written}, {is_a}, which is never equal to or ordered with a value of "
                    f"{self.n(r)}"
                ) + f", {_excludes_nothing(negation)}"
            elif var is None:
                said = (
                    f"the pattern matches it with {written}, {is_a}, which no value of "
                    f"{self.n(prop)} equals, so the pattern never holds"
                )
            else:
                said = (
                    f"the FILTER compares ?{var} (its value) with {written}, {is_a}, "
                    f"which is never equal to or ordered with a value of {self.n(r)}, so "
                    + _comparison_outcome(m, f"?{var}", written)
                )
            self.at_text(
                "warning",
                re.escape(written) if var is None else rf"[?$]{re.escape(var)}\b",
                owner,
                f"{self.n(pred)}: {self.n(prop)} has rdfs:range {self.n(r)}, but {said}",
                literal_hint(lit, r, self.n),
                (holder, pred),
                after="" if var is None else "FILTER",
                also=written,
            )

    def check_compared_kinds(self) -> None:
        """A FILTER ordering or equating a variable holding nodes with one holding literals
        (:mod:`._compared_kinds`): never true, so the pattern never holds. A warning at the
        line of the comparison, with the variables holding literals to compare instead."""
        for owner, holder, pred, pre in self.patterns:
            for c in crossed_comparisons(self.g, pre.select.algebra):
                literal = c.right if c.node == c.left else c.left
                instead = (
                    "compare ?"
                    + literal
                    + " with "
                    + " or ".join(f"?{v}" for v in c.literals)
                    + f" in place of ?{c.node}"
                    if c.literals
                    else f"compare ?{literal} with a value of its own kind, not the node ?{c.node}"
                )
                self.at_text(
                    "warning",
                    rf"\?{c.left}\s*{re.escape(c.op)}\s*\?{c.right}(?![\w])",
                    owner,
                    f"{self.n(pred)}: FILTER (?{c.left} {c.op} ?{c.right}) compares ?{c.node}, "
                    f"which the pattern binds to nodes, with ?{literal}, which it binds to "
                    "literals: a node and a literal are never equal nor ordered, so the FILTER "
                    "is never true and the pattern never holds",
                    instead,
                    (holder, pred),
                )

    def check_compared_datatypes(self) -> None:
        """A FILTER ordering or equating literals SPARQL never compares (a number with a date
        or time, a date-time with a string: :func:`~._compared_kinds.crossed_datatypes`):
        never true, so the pattern never holds. A warning at the line of the comparison."""

        def said(s: Side) -> str:
            by = f", the rdfs:range of {self.n(s.prop)}" if s.prop is not None else ""
            return f"{s.written} ({s.family}{by})"

        def instead(c: CrossedDatatypes) -> str:
            for const, other in ((c.left, c.right), (c.right, c.left)):
                text = const.written[1:].partition('"')[0]
                if const.written.startswith('"') and other.family == "a date or time":
                    stamp = text if "T" in text else f"{text}T00:00:00Z"
                    return f'write "{stamp}"^^xsd:dateTime for {const.written}'
            return (
                f"compare {c.left.written} with {c.left.family}, and {c.right.written} with "
                f"{c.right.family}"
            )

        for owner, holder, pred, pre in self.patterns:
            for c in crossed_datatypes(self.g, pre.select.algebra):
                self.at_text(
                    "warning",
                    re.escape(c.left.written) + r"\s*" + re.escape(c.op),
                    owner,
                    f"{self.n(pred)}: FILTER ({c.left.written} {c.op} {c.right.written}) "
                    f"compares {said(c.left)} with {said(c.right)}: SPARQL never orders nor "
                    f"equates {c.left.family} and {c.right.family}, so the FILTER is never true "
                    "and the pattern never holds",
                    instead(c),
                    (holder, pred),
                )

    def check_text_ordered_numbers(self) -> None:
        """``FILTER (str(?amount) > "100")`` where ``?amount`` is a number: the texts are
        ordered character by character (``"49.9" > "100"``), so the FILTER holds of the wrong
        amounts (:func:`~._compared_kinds.text_ordered_numbers`). A warning at its line, with
        the comparison of values to write."""
        for owner, holder, pred, pre in self.patterns:
            for c in text_ordered_numbers(self.g, pre.select.algebra):
                self.at_text(
                    "warning",
                    rf"(?i)\bstr\s*\(\s*[?$]{re.escape(c.var)}\s*\)",
                    owner,
                    f'{self.n(pred)}: str(?{c.var}) {c.op} "{c.text}" orders the text of '
                    f"?{c.var}, a number ({self.n(c.prop)}'s rdfs:range), character by "
                    'character: "49.9" > "100" and "9" > "10" hold, so the FILTER holds of the '
                    "wrong values",
                    f"compare the values: ?{c.var} {c.op} {c.text}",
                    (holder, pred),
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

    def node_literal(
        self,
        owner: Node,
        holder: Node,
        pred: URIRef,
        m: LiteralMatch,
        negation: str | None = None,
    ) -> None:
        """A pattern holding ``m``'s property, whose values are nodes, to its literal: as
        ``?s prop lit``, in a FILTER comparing ``?var`` with it (``!=`` is then always true,
        the others never), or ``str(?var)``, the text of the node's IRI, which is never the
        literal (no IRI's text, :meth:`match_refusal`). A warning, with the node of that
        name the files declare (``:urgent`` for ``"urgent"``), else one of that name in the
        range's namespace. Inside a ``negation`` (``FILTER NOT EXISTS``, ``MINUS``), that
        negation finds nothing, so it excludes nothing."""
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
                f"the {negation} "
                + (
                    f"matches it with {written}, a literal, which no node equals"
                    if var is None
                    else f"holds a FILTER comparing {compared}"
                )
                + f", {_excludes_nothing(negation)}"
                if negation is not None
                else f"the pattern matches it with {written}, a literal, which no node equals, "
                "so the pattern never holds"
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
        binding the variable takes literals. An ``IN`` / ``NOT IN`` list of several, every
        member a node, is said once for the list (as :meth:`node_literals` says the mirror),
        not member by member as if the others could hold."""
        for owner, holder, pred, algebra in self.parsed_patterns():
            matches = iri_matches(algebra)
            binders: dict[str, set[URIRef]] = {}
            for m in matches:
                binders.setdefault(m.var, set()).add(m.property)
            said: set[tuple[str, URIRef]] = set()
            lists: set[tuple[str, InList]] = set()
            for m in matches:
                literal_valued = all(object_kind(self.g, q) == "literal" for q in binders[m.var])
                if not literal_valued or (m.var, m.iri) in said:
                    continue
                said.add((m.var, m.iri))
                written, var = self.n(m.iri), m.var
                in_list = m.in_list
                if in_list is not None and all(isinstance(x, URIRef) for x in in_list.members):
                    if (var, in_list) in lists:
                        continue
                    lists.add((var, in_list))
                    shown = ", ".join(self.n(x) for x in in_list.members)
                    test = f"?{var} {'NOT IN' if m.op == '!=' else 'IN'} ({shown})"
                    compared = f"{shown}, nodes, which no literal equals, so " + _outcome(
                        m.op == "!=", in_list.needed, in_list.enough, m.bound, test, var, True
                    )
                else:
                    compared = f"{written}, a node, which no literal equals, so " + _outcome(
                        m.op == "!=", m.needed, m.enough, m.bound, f"?{var} {m.op} {written}", var
                    )
                self.at_text(
                    "warning",
                    variable_needle(var),
                    owner,
                    f"{self.n(pred)}: {self.n(m.property)}'s values are literals, but the "
                    f"FILTER compares ?{var} (its value) with {compared}",
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
                if len(kinds) != 1 and var not in said:
                    said.add(var)
                    self.some_rows_never_match(owner, holder, pred, joined)
                    continue
                if kinds == {"literal"} and prop is None and var not in said:
                    if self.rows_out_of_range(owner, holder, pred, joined):
                        said.add(var)
                    continue
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

    def rows_out_of_range(
        self, owner: Node, holder: Node, pred: URIRef, joined: JoinedValues
    ) -> bool:
        """A ``VALUES`` of literals joined with a property whose rdfs:range refuses some of
        them: ``?this :queuedAt ?t . VALUES ?t { "2026-12-01" }`` where the range is
        xsd:dateTime gives a string, which no value equals, as the triple pattern ``?this
        :queuedAt "2026-12-01"`` would (:meth:`check_pattern_literals`). A warning at the
        VALUES, with the literal to write; whether one was said."""
        var = joined.var
        for prop in joined.properties:
            wrong = [
                v
                for v in joined.values
                if isinstance(v, Literal) and self.literal_refusal(prop, v, False) == "range"
            ]
            if not wrong:
                continue
            first = wrong[0]
            given = literal_datatype(first)
            r = cast(URIRef, range_refusing(given, self.g.objects(prop, RDFS.range)))
            one, every = len(wrong) == 1, len(wrong) == len(joined.values)
            shown = ", ".join(turtle_term(v, self.n) for v in wrong)
            kinds = {literal_datatype(v) for v in wrong}
            is_a = (
                ("a string" if one else "strings")
                if kinds == {XSD.string}
                else f"{'a literal' if one else 'literals'} of "
                + ", ".join(sorted(self.n(k) for k in kinds))
            )
            self.at_text(
                "warning",
                rf"(?i)\bVALUES\b[^{{]*[?$]{re.escape(var)}\b",
                owner,
                f"{self.n(pred)}: {self.n(prop)} has rdfs:range {self.n(r)}, but the VALUES of "
                f"?{var} {'gives it only' if every else 'also lists'} {shown}, {is_a}, which no "
                f"value of {self.n(prop)} equals, so … {self.n(prop)} ?{var} never matches "
                + (
                    ("it" if one else "them")
                    + " and "
                    + (
                        "the pattern never holds"
                        if joined.own
                        else "the group it is in (an OPTIONAL, a UNION's branch…) never matches"
                    )
                    if every
                    else ("that row" if one else "those rows") + ": only the others can hold"
                ),
                literal_hint(first, r, self.n),
                (holder, pred),
            )
            return True
        return False

    def some_rows_never_match(
        self, owner: Node, holder: Node, pred: URIRef, joined: JoinedValues
    ) -> None:
        """A ``VALUES`` giving a variable nodes and literals, joined with a property whose
        values are of one kind: ``?this :acuity ?queue . VALUES ?queue { :urgent "routine" }``
        holds for :urgent, and the ``"routine"`` row never matches, which reads as though it
        did. A warning at the VALUES naming the rows, with the values meant."""
        var = joined.var
        for prop in joined.properties:
            kind = object_kind(self.g, prop)
            if kind is None:
                continue
            wrong = [
                v for v in joined.values if ("node" if isinstance(v, URIRef) else "literal") != kind
            ]
            given = "literal" if kind == "node" else "node"
            one = len(wrong) == 1
            shown = ", ".join(turtle_term(v, self.n) for v in wrong)
            meant: dict[Node, Node] = {
                v: m
                for v in wrong
                if isinstance(v, Literal) and (m := self.meant_node(prop, v)) is not None
            }
            if kind == "node" and len(meant) == len(wrong):
                fixed = " ".join(turtle_term(meant.get(v, v), self.n) for v in joined.values)
                hint = f"write the nodes meant, without quotes: VALUES ?{var} {{ {fixed} }}"
            else:
                hint = (
                    f"write the {kind}{'' if one else 's'} meant"
                    + (", quoted" if kind == "literal" else ", without quotes")
                    + f", or drop the row{'' if one else 's'}"
                )
            self.at_text(
                "warning",
                rf"(?i)\bVALUES\b[^{{]*[?$]{re.escape(var)}\b",
                owner,
                f"{self.n(pred)}: {self.n(prop)}'s values are {kind}s, but the VALUES of ?{var} "
                f"also lists {shown}, {f'a {given}' if one else f'{given}s'}, which no {kind} "
                f"equals, so … {self.n(prop)} ?{var} never matches "
                + ("that row" if one else "those rows")
                + ": only the others can hold",
                hint,
                (holder, pred),
            )
            return

    def check_filter_bounds(self) -> None:
        """A FILTER bounding a value by a number its domain shapes never allow it
        (:mod:`._shape_bounded_filters`): ``FILTER (?s > 80)`` for a score the shape keeps
        between 0 and 1 was never true, and the rule sending a likely fraud to a denial was
        never taken. A warning at the number's line: world data the gate never judged may
        hold such a value."""
        for owner, holder, pred, algebra in self.parsed_patterns():
            for b in beyond_bounds(self.g, algebra):
                message, hint = said(b, self.n)
                self.at_text(
                    "warning",
                    rf"(?<![\w.]){re.escape(b.number)}(?![\w])",
                    owner,
                    f"{self.n(pred)}: {message}",
                    hint,
                    (holder, pred),
                    after="FILTER",
                )

    def check_pattern_datatypes(self) -> None:
        """A literal of a pattern whose datatype is a typo in XSD's or RDF's namespace
        (``FILTER (?v > "6.0"^^xsd:decmal)``): the world holds no value of it, so the pattern
        never matches it, a FILTER comparing with it is never true, and the rule it guards is
        never taken. An error, as in a statement (:meth:`check_literals`). And one whose text
        is not of its datatype (``FILTER (?s < "0,8"^^xsd:decimal)``): no value compares with
        it, so the step it guards never fires — rdflib said so in one line naming neither the
        file nor the pattern, with Python's exception as its reason."""
        for owner, holder, pred, algebra in self.parsed_patterns():
            literals = algebra_literals(algebra)
            ill = (x for x in literals if x.datatype and ill_typed_text(str(x), x.datatype))
            for lit in sorted(ill, key=str):
                dt = cast(URIRef, lit.datatype)
                name = self.n(dt)
                self.at_text(
                    "error",
                    rf"[\"']{re.escape(str(lit))}[\"']\^\^",
                    owner,
                    f'{self.n(pred)}: {turtle_term(lit, self.n)}: "{lit}" is not a valid {name}, '
                    f"so it is kept as text, which no value of {name} equals or is ordered "
                    "with: a FILTER comparing with it is never true, and a triple pattern "
                    "naming it never matches",
                    well_typed_hint(str(lit), dt, self.n),
                    (holder, pred),
                    also=str(lit),
                )
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
