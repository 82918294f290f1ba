"""Checks of the SHACL shapes that gate effects: what a shape says and whether it can hold.

A shape that names no real term, requires what no tool writes, or lists values of the wrong
kind rejects every result after the tool has acted; these checks say so at load, at the
shape's line."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import replace
from functools import cached_property
from typing import cast

from rdflib import OWL, RDF, RDFS, SH, XSD, BNode, Graph, Literal, URIRef
from rdflib.collection import Collection
from rdflib.term import Node

from ._closed_terms import unknown_terms
from ._datatypes import (
    _COMPARED,
    DATATYPES,
    NUMERIC,
    _base_datatype,
    derives_from,
    is_datatype,
    literal_datatype,
    literal_hint,
    range_refusing,
    turtle_term,
)
from ._effect_shapes import refusing
from ._errors import Problem
from ._listed_values import refused_members
from ._model import ActionStep, DecisionStep, Tool
from ._prefix_clash import NearMiss, PrefixClash, misbound, prefix_clashes
from ._rdf_lists import unended_list
from ._refused_answers import focus_types, refused_answers, refused_requirements
from ._shacl import deactivated, path_properties
from ._shape_datatypes import datatype_slips
from ._shape_hazards import landing_tools
from ._shape_slips import shape_slips, unmet
from ._shipped_vocabulary import STEP_CLASSES, vocabulary_graph
from ._term_kinds import kind_against_range, object_kind, range_class
from ._value_list_checks import ValueListChecks
from ._vocab import HORIS, NS

__all__ = ["ShapeChecks"]


# what a shape only uses: naming a term there does not declare it (RDF.first: a path's list)
_SHAPE_USES = frozenset(
    {
        SH.targetClass,
        SH.targetSubjectsOf,
        SH.targetObjectsOf,
        SH.path,
        SH["class"],
        SH.node,
        SH.datatype,
        RDF.first,
        HORIS.shape,
    }
)


# what makes a node a shape: a type, or a property only a shape has
_SHAPE_TYPES = frozenset({SH.NodeShape, SH.PropertyShape})


_SHAPE_MARKS = frozenset(
    {
        SH.property,
        SH.path,
        SH.targetClass,
        SH.targetNode,
        SH.targetSubjectsOf,
        SH.targetObjectsOf,
        SH.sparql,
    }
)
"""Predicates that only use a term: a typo under them must not count as its declaration."""


def _required(g: Graph, pshape: Node) -> bool:
    """``pshape`` asks for at least one value (``sh:minCount`` 1 or more, or a
    ``sh:hasValue``): of a node holding no value of its path, it never holds."""
    least = g.value(pshape, SH.minCount)
    counted = isinstance(least, Literal) and isinstance(least.toPython(), int)
    return (counted and cast(Literal, least).toPython() > 0) or (pshape, SH.hasValue, None) in g


class ShapeChecks(ValueListChecks):
    """Checks of the SHACL shapes that gate effects: their terms, kinds, the values they name
    and what they require of the nodes tools land (their ``sh:in`` lists:
    :class:`ValueListChecks`)."""

    def check_shacl_terms(self) -> None:
        """``sh:patern`` is not SHACL: a shape that says it checks nothing, silently."""
        known = set(SH.__annotations__) | {t.split("-")[-1] for t in getattr(SH, "_extras", [])}
        seen: set[Node] = set()
        for s, p, o in self.g:
            for term in (p, o):
                if not isinstance(term, URIRef) or not str(term).startswith(str(SH)):
                    continue
                local = str(term)[len(str(SH)) :]
                if local in known or term in seen:
                    continue
                seen.add(term)
                close = difflib.get_close_matches(local, sorted(known), n=1)
                self.error(
                    s,
                    f"sh:{local} is not a SHACL term, so the shape does not check what it says",
                    f"did you mean sh:{close[0]}?"
                    if close
                    else "see https://www.w3.org/TR/shacl/ for the vocabulary",
                    at=(s, cast(URIRef, p), o),
                )

    def check_closed_terms(self) -> None:
        """``owl:DataTypeProperty``, ``rdfs:range xsd:strng``: no term of its vocabulary
        (:mod:`._closed_terms`). A warning: what the ontology meant is not known, and the
        checks that read it were skipped."""
        for u in unknown_terms(self.g):
            s, p, o = u.statement
            self.warn(
                s,
                f"{self.n(u.term)} is not a term of {u.vocabulary}, so the statement declares "
                "nothing a reader of the ontology knows, and the checks that read it are "
                "skipped",
                f"did you mean {self.n(u.meant)}?"
                if u.meant is not None
                else f"write a term {u.vocabulary} defines",
                at=(s, p, o),
            )

    def check_refused_answers(self) -> None:
        """A wait whose horis:until requires of ?this a value the domain shapes refuse as an
        answer (:mod:`._refused_answers`): ``?this :changeStatus :Approved`` where the shape
        lists ``sh:in ( :Scheduled :Deployed )``, or allows one status the step before wrote.
        Resume refused the answer, and the instance waited for ever. At the property's line."""

        for wait, r in refused_answers(
            self.defs.steps,
            self.defs.workflows,
            self.g,
            self.defs.domain_targets,
            self.defs.classes_of,
            self.refuses_alone,
        ):
            severity, message, hint = r.words(self.n, self.sparql_term, bool(wait.timeout))
            prop = re.escape(self.n(r.triple[1])), re.escape(str(r.triple[1]))
            needle = rf"(?:{prop[0]}|<{prop[1]}>)(?![\w-])"
            self.at_text(severity, needle, wait.iri, message, hint, (wait.iri, HORIS.until))

    def check_refused_requirements(self) -> None:
        """A step's ``horis:requires`` or a decision rule requiring of ?this a value the domain
        shapes refuse by the value alone (:func:`~._refused_answers.refused_requirements`):
        ``?this :riskLevel "high"`` under ``sh:in ( "LOW" "MEDIUM" "HIGH" )``. No focus that
        meets the shapes holds it, so the rule never held and every high-risk change took
        ``horis:otherwise``, unapproved. A warning at the value's line, with the listed
        spelling to write."""
        types = focus_types(self.defs.workflows)
        for owner, holder, pred, pre in self.patterns:
            step = self.defs.steps.get(owner) if isinstance(owner, URIRef) else None
            if pred != HORIS.requires or not isinstance(step, (ActionStep, DecisionStep)):
                continue
            for r in refused_requirements(
                step.iri,
                pre.select.algebra,
                types,
                self.g,
                self.defs.domain_targets,
                self.refuses_alone,
            ):
                _, prop, value = r.triple
                if self.range_refuses(prop, value):
                    continue  # said of the range, with what to write (check_pattern_datatypes)
                p, shape, written = self.n(prop), self.n(r.shape), self.sparql_term(value)
                why = (
                    f"shape {shape} is closed (sh:closed true) and names {p} in no sh:property"
                    " nor sh:ignoredProperties"
                    if r.closed
                    else f"shape {shape} requires {r.why} of {p}"
                )
                if isinstance(step, DecisionStep):
                    rule = next((x for x in step.rules if x.requires is pre), None)
                    later = [x for x in step.rules if rule is not None and x.order > rule.order]
                    after = list(dict.fromkeys(x.next for x in later))
                    ways = [self.n(x) for x in after] + (
                        [f"horis:otherwise {self.n(step.otherwise)}"] if step.otherwise else []
                    )
                    outcome = "this rule never holds: every instance goes on " + (
                        f"at {_or(ways)}" if ways else "nowhere: the instance fails"
                    )
                else:
                    outcome = "the step never fires: every instance stops there, blocked"
                meant = self.listed_spelling(r.shape, prop, value)
                self.at_text(
                    "warning",
                    re.escape(written),
                    owner,
                    f"{self.n(pred)} requires ?this to hold {p} {written}, but {why}: no node "
                    f"that meets the shapes holds that value (a tool's result giving it is "
                    f"rejected by the gate), so {outcome}",
                    f"write {self.sparql_term(meant)}, the value {shape} lists"
                    if meant is not None
                    else f"require a value {shape} allows, or correct the shape",
                    (holder, pred),
                    also=written,
                )

    def range_refuses(self, prop: URIRef, value: Node) -> bool:
        """A literal whose datatype (or language tag) ``prop``'s ``rdfs:range`` refuses
        already: the pattern checks say so, and what to write."""
        if not isinstance(value, Literal):
            return False
        return range_refusing(literal_datatype(value), self.g.objects(prop, RDFS.range)) is not None

    def refuses_alone(self, pshape: Node, value: Node) -> str | None:
        """What of property shape ``pshape`` refuses ``value`` by itself
        (:func:`~._effect_shapes.refusing`, as the gate's compiled checks judge it)."""
        misled = lambda ps: (w := self.wrong_listed(ps)) is not None and w.every  # noqa: E731
        unheld, n = self.unheld_datatype, self.n
        return refusing(self.g, pshape, value, n, self.unknown_datatype, unheld, misled)

    def listed_spelling(self, shape: URIRef, prop: URIRef, value: Node) -> Node | None:
        """The member of ``shape``'s ``sh:in`` for ``prop`` that ``value`` misspells: the same
        text in another case, else the one nearest (``"high"`` for ``"HIGH"``)."""
        members: list[Node] = []
        for pshape in [*self.g.objects(shape, SH.property), shape]:
            if self.g.value(pshape, SH.path) == prop:
                listed = self.g.value(pshape, SH["in"])
                if listed is not None:
                    members += list(Collection(self.g, listed))
        texts = {str(m): m for m in members}
        same = [m for m in members if str(m).casefold() == str(value).casefold()]
        if same:
            return same[0]
        near = difflib.get_close_matches(str(value), list(texts), n=1)
        return texts[near[0]] if near else None

    def check_range_kinds(self) -> None:
        """An ``owl:ObjectProperty`` whose ``rdfs:range`` is a datatype, or an
        ``owl:DatatypeProperty`` whose range is a class: the ontology says both kinds of value,
        and what reads it takes one or the other (an effect's value, a world's fact, a shape's
        sh:in), so one of them is refused, with nothing said at the declaration. A warning: an
        ontology loaded as it was published may say so, and its own users still run."""
        for prop, declared, r in kind_against_range(
            self.g, lambda t: self.datatype(t) and not self.unknown_datatype(t)
        ):
            if declared == OWL.ObjectProperty:
                what = "an owl:ObjectProperty, whose values are nodes"
                other = "a datatype, whose values are literals"
                hint = (
                    f"declare {self.n(prop)} a owl:DatatypeProperty if its values are "
                    f"literals, or give it the class of its values as rdfs:range"
                )
            else:
                what = "an owl:DatatypeProperty, whose values are literals"
                other = "a class, whose members are nodes"
                hint = (
                    f"declare {self.n(prop)} a owl:ObjectProperty if its values are nodes, or "
                    "give it the datatype of its values as rdfs:range (xsd:string, …)"
                )
            self.warn(
                prop,
                f"{self.n(prop)} is {what}, but its rdfs:range {self.n(r)} is {other}: no "
                "value is both, so a tool's value, a world's fact or a shape on it is refused "
                "by whichever reads the other kind",
                hint,
                at=(prop, RDFS.range, r),
            )
        # an inverse of a property whose values are literals: a literal is never a subject
        for a, b in sorted(self.g.subject_objects(OWL.inverseOf), key=str):
            literal = next(
                (
                    p
                    for p in (a, b)
                    if (p, RDF.type, OWL.DatatypeProperty) in self.g
                    and (p, RDF.type, OWL.ObjectProperty) not in self.g
                ),
                None,
            )
            if literal is None:
                continue
            self.warn(
                a,
                f"{self.n(a)} owl:inverseOf {self.n(b)}, but {self.n(literal)} is an "
                "owl:DatatypeProperty, whose values are literals: a literal is never the "
                "subject of a statement, so no value of the one is a node the other could "
                "start from",
                f"drop owl:inverseOf, or declare {self.n(literal)} a owl:ObjectProperty if its "
                "values are nodes",
                at=(a, OWL.inverseOf, b),
            )

    def check_domain_shapes(self) -> None:
        """A domain shape that names what nothing declares checks nothing, silently: a
        ``sh:targetClass :Patinet`` or ``sh:targetSubjectsOf :queueRf`` never applies, a
        ``sh:path :queueRf`` or ``sh:class :Nurs`` reads a property or class no node has, a
        ``sh:node`` or ``horis:shape`` naming no shape is skipped, ``sh:deactivated "false"``
        (a string) switches the shape off. The names are warnings (world data may use them;
        ``validate --world`` checks), the rest errors."""
        g = self.g
        declared = self.declared_beside_shapes
        shapes = {s for s, p, o in g if p in _SHAPE_MARKS or (p == RDF.type and o in _SHAPE_TYPES)}
        what = {
            SH.targetClass: "the shape never applies: no node is of that class",
            SH.targetSubjectsOf: "the shape never applies: no node has that property",
            SH.targetObjectsOf: "the shape never applies: no node is a value of that property",
            SH["class"]: "no value can be of that class",
        }
        for p, why in what.items():
            for holder, cls in g.subject_objects(p):
                self.check_declared(holder, (holder, p, cls), why, declared)
        for holder, path in g.subject_objects(SH.path):
            requires = self.requirement(holder)
            for prop in sorted(path_properties(g, path), key=str):
                if not self.unknown(prop, declared):
                    if requires and path == prop:
                        self.note_unwritten(holder, prop, requires)
                    continue
                # on a path of several properties (:a|:b) another one may meet it
                if requires and path == prop and self.check_unmeetable(holder, prop, requires):
                    continue
                self.undeclared(
                    prop,
                    holder,
                    f"sh:path names {self.n(prop)}, which no loaded ontology declares and no "
                    "loaded data uses, so "
                    + (
                        f"its {requires} fails every node the shape applies to, and the gate "
                        "rejects the result of every tool that lands on one, after the tool "
                        "has acted"
                        if requires
                        else "the shape checks a property no node has"
                    ),
                    declared,
                    at=(holder, SH.path, path),
                )
        for holder, dt in g.subject_objects(SH.datatype):
            if self.unknown_datatype(dt):
                self.error(
                    holder,
                    f"sh:datatype {self.n(dt)} is not an XML Schema datatype, so no value "
                    "can conform",
                    self.did_you_mean(cast(URIRef, dt), DATATYPES) or "see the XSD datatypes",
                    at=(holder, SH.datatype, dt),
                )
            elif self.unheld_datatype(dt):
                self.undeclared(
                    cast(URIRef, dt),
                    holder,
                    f"sh:datatype {self.n(dt)} is declared by no loaded ontology (as "
                    f"{self.n(dt)} a rdfs:Datatype) and used by no loaded data, so no value "
                    "is of it and the shape rejects every value it judges",
                    [*DATATYPES, *g.subjects(RDF.type, RDFS.Datatype)],
                    at=(holder, SH.datatype, dt),
                )
        for p in (SH.node, SH.property, HORIS.shape):
            for holder, named in g.subject_objects(p):
                if p == HORIS.shape and isinstance(named, BNode):
                    self.error(
                        holder,
                        "horis:shape names a shape written in place; the gate judges shapes "
                        "by their IRI, so it would check nothing",
                        "declare the shape with an IRI (:RefShape a sh:NodeShape ; …) and "
                        "write horis:shape :RefShape",
                        at=(holder, p, named),
                    )
                elif isinstance(named, URIRef) and named not in shapes:
                    self.error(
                        holder,
                        f"{self.n(p)} {self.n(named)} names no shape the files declare, so "
                        "nothing it would check is checked",
                        self.did_you_mean(named, shapes)
                        or "declare it: :Name a sh:NodeShape ; sh:property [ … ]",
                        at=(holder, p, named),
                    )
        for pshape in sorted(
            set(g.subjects(RDF.type, SH.PropertyShape)) | set(g.objects(None, SH.property)),
            key=str,
        ):
            if (pshape, SH.path, None) not in g and (isinstance(pshape, BNode) or pshape in shapes):
                self.error(
                    pshape,
                    "a property shape names no sh:path, so no SHACL engine can load it",
                    "give it the property it checks: sh:path :queueRef",
                )
        for p in (SH["in"], SH.languageIn, SH.ignoredProperties, SH["and"], SH["or"], SH.xone):
            for holder, items in g.subject_objects(p):
                if items != RDF.nil and (items, RDF.first, None) not in g:
                    self.error(
                        holder,
                        f"{self.n(p)} takes a list, and {items.n3()} is none, so the "
                        "constraint cannot hold as meant",
                        f"write the values in parentheses: {self.n(p)} ( … )",
                        at=(holder, p, items),
                    )
                elif (broken := unended_list(g, items)) is not None:
                    # rdflib's Collection stops at the break: an engine read fewer members,
                    # and the gate rejected the values the list was written to allow
                    self.error(
                        holder,
                        f"{self.n(p)} takes a list, and its list is broken: {broken}, so the "
                        "constraint reads fewer members than written",
                        f"write the values in parentheses: {self.n(p)} ( … ), not by "
                        "rdf:first and rdf:rest by hand",
                        at=(holder, p, items),
                    )
        self.check_shape_parameters()
        self.check_shape_value_lists()
        self.check_has_value_refused()
        self.check_severities()
        for slip in (
            *shape_slips(g, self.n, self.src.written_literal),
            *datatype_slips(g, self.n, self.written_properties),
        ):
            report = self.error if slip.severity == "error" else self.warn
            report(slip.holder, slip.message, slip.hint, at=slip.at)
        for p in (SH.deactivated, SH.closed, SH.uniqueLang):
            for holder, flag in g.subject_objects(p):
                if isinstance(flag, Literal) and flag.datatype != XSD.boolean:
                    self.error(
                        holder,
                        f"{self.n(p)} {flag.n3()} is not a boolean; a SHACL engine reads a "
                        "non-boolean as set, so the shape does not do what it says",
                        f"write {self.n(p)} true or {self.n(p)} false, without quotes",
                        at=(holder, p, flag),
                    )

    def requirement(self, pshape: Node) -> str | None:
        """What of property shape ``pshape`` no node without a value of its path meets, as
        written (``sh:minCount 1``, ``sh:qualifiedMinCount 2``, ``sh:hasValue :x``); None
        when it requires no value."""
        for p in (SH.minCount, SH.qualifiedMinCount):
            least = self.g.value(pshape, p)
            if isinstance(least, Literal) and str(least).isdigit() and int(least) > 0:
                return f"{self.n(p)} {least}"
        value = self.g.value(pshape, SH.hasValue)
        return None if value is None else f"sh:hasValue {self.n(value)}"

    def check_unmeetable(self, pshape: Node, prop: URIRef, requires: str) -> bool:
        """A property no loaded file declares or uses, that no tool's effect writes, which
        ``pshape`` requires (``requires``) of a class some step's tool lands a node of: the
        gate rejects every such result after the tool has acted (a charge went out, over and
        over, per instance), unless the world holds the property. Said as a warning here, kept
        in :attr:`Definitions.unmeetable` with the error it is beside a world that holds no
        statement of it (:func:`~._cli_validate.beside_world`), which ``run`` refuses. False
        when no step's tool lands a node it judges: the plain undeclared warning then."""
        fails = self.fails_every_result(pshape, prop, requires)
        if fails is None:
            return False
        warning = self.undeclared(
            prop,
            pshape,
            f"sh:path names {self.n(prop)}, which no loaded ontology declares, no tool's "
            f"effect writes and no loaded data uses, {fails}, unless the world holds "
            f"{self.n(prop)} (`horismos validate FILES --world DATA` decides)",
            [*self.declared_beside_shapes, *self.written_properties],
            at=(pshape, SH.path, prop),
            fix=(
                "drop its sh:hasValue"
                if requires.startswith("sh:hasValue")
                else f"give the property shape {requires.split()[0]} 0"
            )
            + f", or declare {self.n(prop)} and have a tool's effect write it",
        )
        error = replace(
            warning,
            severity="error",
            message=f"sh:path names {self.n(prop)}, which no loaded ontology declares, no "
            f"tool's effect writes and the world does not hold, {fails}",
        )
        self.defs.unmeetable.setdefault(prop, []).append((warning, error))
        return True

    def note_unwritten(self, pshape: Node, prop: URIRef, requires: str) -> None:
        """A property the files declare, that no tool's effect writes, which ``pshape``
        requires of a class some step's tool lands a node of: kept in
        :attr:`Definitions.unwritten` with the warning to give beside a world that holds no
        statement of it; said of no world, as the world's data may well bring it."""
        fails = self.fails_every_result(pshape, prop, requires)
        if fails is None:
            return
        fix = (
            "drop the shape's sh:hasValue"
            if requires.startswith("sh:hasValue")
            else f"give the property shape {requires.split()[0]} 0"
        )
        self.defs.unwritten.setdefault(prop, []).append(
            self.src.problem(
                "warning",
                pshape,
                f"sh:path names {self.n(prop)}, which no tool's effect writes and the world "
                f"holds no statement of, {fails}, unless something else (an import, an "
                f"operator's answer to a wait) gives the node a value of {self.n(prop)} first",
                f"load the data that holds {self.n(prop)}, or have a tool's effect write it; "
                f"if it is given only after the tool acts, {fix}",
                at=(pshape, SH.path, prop),
            )
        )

    def fails_every_result(self, pshape: Node, prop: URIRef, requires: str) -> str | None:
        """What ``pshape``'s ``requires`` does to the result of every tool some step calls
        that lands a node of a class it targets, when no tool's effect writes ``prop``; None
        when one does, or no step's tool lands such a node."""
        shapes = {pshape, *self.g.subjects(SH.property, pshape)}
        classes = sorted(
            {c for s in shapes for c in self.g.objects(s, SH.targetClass) if isinstance(c, URIRef)},
            key=str,
        )
        kinds = {k for c in classes for k in self.defs.classes_of(c)}  # a subclass's nodes too
        landing = {iri: t for k in kinds for iri, t in self.landing.get(k, {}).items()}
        tools = sorted(landing.values(), key=lambda t: str(t.iri))
        if not tools or prop in self.written_properties:
            return None
        judged = " or ".join(self.n(c) for c in classes)
        acting = ", ".join(self.n(t.iri) for t in tools)
        return (
            f"so its {requires} fails every {judged}: every result of {acting} on a {judged} "
            "would be rejected by the gate, after the tool has acted"
        )

    @cached_property
    def landing(self) -> dict[URIRef, dict[URIRef, Tool]]:
        """The tools whose results land a node of each class
        (:func:`~._shape_hazards.landing_tools`), for every shape a load asks about."""
        return landing_tools(self.defs.workflows)

    @cached_property
    def written_properties(self) -> frozenset[URIRef]:
        """Every property some tool's effect writes."""
        return frozenset(
            a.property for t in self.writers() if t.effect is not None for a in t.effect.asserts
        )

    @cached_property
    def declared_beside_shapes(self) -> frozenset[URIRef]:
        """Every IRI the files name other than where a shape only uses it (its target, path,
        class, datatype): what a domain shape's terms are held to."""
        return frozenset(
            t
            for triple in self.g
            if triple[1] not in _SHAPE_USES  # a tool's effect or argument names it: the
            # checks of horis:property and horis:type say whether that is declared
            for t in triple
            if isinstance(t, URIRef)
        )

    def unheld_datatype(self, dt: Node) -> bool:
        """Whether a shape's ``sh:datatype dt`` is one of the files' own namespace that
        nothing declares (``:RefCode``, no ``:RefCode a rdfs:Datatype``): the effect checks
        were told to write it in the effect too, copying a datatype no literal has."""
        return (
            isinstance(dt, URIRef)
            and not is_datatype(dt)
            and (dt, RDF.type, RDFS.Datatype) not in self.g
            and self.unknown(dt, self.declared_beside_shapes)
        )

    def check_has_value_refused(self) -> None:
        """A ``sh:hasValue`` its shape's own constraints refuse (``sh:hasValue "urgent"``
        beside ``sh:pattern "^Q-"``, or outside its ``sh:in``): every node must hold the value
        and none may, so no node conforms (:func:`._shape_slips.unmet`). One of the other kind
        than its property's is left to :meth:`check_shape_kinds`."""
        g = self.g
        for holder, value in sorted(g.subject_objects(SH.hasValue), key=str):
            path = g.value(holder, SH.path)
            if deactivated(g, holder) or (
                isinstance(path, URIRef) and self.has_value_of_other_kind(holder, path, value)
            ):
                continue
            refused = refused_members(g, holder, [value], listed=True)
            if not refused:
                continue
            (r,) = refused
            by = self.refusing(r)
            severity, does = unmet(g, holder)
            (self.error if severity == "error" else self.warn)(
                holder,
                f"sh:hasValue {turtle_term(value, self.n)} is refused by {by} of the same "
                f"shape: every node must hold the value and none may, so no node conforms: "
                f"{does}",
                f"write the value meant, or correct {by}",
                at=(holder, SH.hasValue, value),
            )

    def has_value_of_other_kind(self, holder: Node, path: URIRef, value: Node) -> bool:
        """Whether :meth:`kind_slips` says ``holder``'s ``sh:hasValue`` ``value`` is of the
        other kind than ``path``'s values, or of a datatype its range refuses."""
        kind = object_kind(self.g, path)
        if kind is None:
            return False
        ranges = [r for r in self.g.objects(path, RDFS.range) if isinstance(r, URIRef)]
        rng = next((r for r in ranges if r in DATATYPES), None)
        return any(
            p == SH.hasValue and v == value
            for p, v, _, _ in self.kind_slips(holder, path, kind, ranges, rng)
        )

    def check_shape_kinds(self) -> None:
        """A property shape asking for the other kind of value than its property's:
        ``sh:class`` on a property whose values are literals, ``sh:datatype`` on one whose
        values are nodes, a ``sh:hasValue`` of the other kind or of a datatype the range
        refuses, a bound (``sh:minInclusive 3``) that does not compare with the range's values
        (a string). Every node holding the property broke the shape: the gate rejected the
        result of every tool landing one, after it had acted. The sh:class and sh:datatype of a
        property some tool writes are judged against its effect instead
        (:mod:`._effect_shapes`), where the tool is named. Of a shape inside ``sh:or``,
        ``sh:xone`` or ``sh:not``, which a node may fail and conform, it is a warning that the
        branch never holds (:func:`._shape_slips.unmet`). A shape ``sh:deactivated true``
        judges nothing, at the gate as in pyshacl: neither it nor a nested ``sh:property`` of
        the kind is said."""
        g = self.g
        for holder, path in sorted(g.subject_objects(SH.path), key=str):
            if not isinstance(path, URIRef) or deactivated(g, holder):
                continue
            kind = object_kind(g, path)
            if kind is None:
                continue
            ranges = [r for r in g.objects(path, RDFS.range) if isinstance(r, URIRef)]
            rng = next((r for r in ranges if r in DATATYPES), None)
            values = (
                f"{self.n(path)}'s values are nodes"
                if kind == "node"
                else f"{self.n(path)}'s values are literals"
                + (f" of {self.n(rng)}, its rdfs:range" if rng is not None else "")
            )
            slips = list(self.kind_slips(holder, path, kind, ranges, rng))
            severity, does = unmet(g, holder) if slips else ("error", "")
            for p, v, asks, hint in slips:
                written = (
                    f"[ sh:path {self.n(cast(URIRef, g.value(v, SH.path)))} … ]"
                    if p == SH.property
                    else "[ … ]"
                    if isinstance(v, BNode)
                    else turtle_term(v, self.n)
                )
                (self.error if severity == "error" else self.warn)(
                    holder,
                    f"{self.n(p)} {written} asks for {asks}, but {values}, so "
                    f"no value conforms: {does}",
                    hint,
                    at=(holder, p, v),
                )

    def kind_slips(
        self, holder: Node, path: URIRef, kind: str, ranges: list[URIRef], rng: URIRef | None
    ) -> Iterator[tuple[URIRef, Node, str, str]]:
        """Each constraint of ``holder`` (a shape on ``path``, whose values are of ``kind``)
        that no value of that kind meets: the constraint, its value, what it asks for and
        what to write."""
        g = self.g
        fits = f"sh:datatype {self.n(rng)}" if rng is not None else "sh:nodeKind sh:Literal"
        effect = path in self.written_properties  # its effect's check names the tool
        for c in g.objects(holder, SH["class"]):
            if kind == "literal" and not effect:
                yield SH["class"], c, "nodes of a class", f"write {fits}, or drop sh:class"
        for dt in g.objects(holder, SH.datatype):
            if kind == "node" and not effect and isinstance(dt, URIRef) and self.datatype(dt):
                cls = range_class(g, path)
                yield (
                    SH.datatype,
                    dt,
                    "literals",
                    f"write sh:class {self.n(cls)}" if cls else "write sh:class with its class",
                )
        for inner in g.objects(holder, SH.property):
            held = g.value(inner, SH.path)
            if (
                kind == "literal"
                and isinstance(held, URIRef)
                and _required(g, inner)
                and not deactivated(g, inner)
            ):
                yield (
                    SH.property,
                    inner,
                    f"values that hold {self.n(held)} (a literal holds no property)",
                    f"put this sh:property [ sh:path {self.n(held)} … ] on the shape of the "
                    f"node that holds {self.n(held)}, beside the one on {self.n(path)}",
                )
        least = g.value(holder, SH.qualifiedMinCount)
        some = isinstance(least, Literal) and isinstance(least.value, int) and least.value > 0
        for q in g.objects(holder, SH.qualifiedValueShape) if some else ():
            # some values must meet it: one of the other kind leaves every node failing
            if (q, SH.path, None) in g or deactivated(g, q):
                continue
            if kind == "node" and any(
                self.datatype(d) for d in g.objects(q, SH.datatype) if isinstance(d, URIRef)
            ):
                cls = range_class(g, path)
                yield (
                    SH.qualifiedValueShape,
                    q,
                    f"sh:qualifiedMinCount {least} values that are literals",
                    f"write sh:class {self.n(cls)} in it" if cls else "write sh:class in it",
                )
            elif kind == "literal" and (q, SH["class"], None) in g:
                yield (
                    SH.qualifiedValueShape,
                    q,
                    f"sh:qualifiedMinCount {least} values that are nodes of a class",
                    f"write {fits} in it, or drop sh:class",
                )
        for v in g.objects(holder, SH.hasValue):
            if kind == "node" and isinstance(v, Literal):
                yield SH.hasValue, v, "a literal", "write the node meant, without quotes"
            elif kind == "literal" and not isinstance(v, Literal):
                yield SH.hasValue, v, "a node", "write the literal meant"
            elif isinstance(v, Literal) and rng is not None:
                dt = literal_datatype(v)
                refused = range_refusing(dt, ranges)
                if refused is not None and not (dt in NUMERIC and refused in NUMERIC):
                    yield (
                        SH.hasValue,
                        v,
                        f"a literal of {self.n(dt)}",
                        literal_hint(v, refused, self.n),
                    )
        family = _COMPARED.get(_base_datatype(rng)) if rng is not None else None
        for bound in (SH.minInclusive, SH.maxInclusive, SH.minExclusive, SH.maxExclusive):
            for v in g.objects(holder, bound):
                if not isinstance(v, Literal) or family is None:
                    continue
                given = _COMPARED.get(_base_datatype(literal_datatype(v)))
                if given is not None and given != family:
                    yield (
                        bound,
                        v,
                        f"values that compare with {given}",
                        "write the bound as a number, without quotes"
                        if family == "numbers"
                        else 'write the bound in quotes ("…"), or sh:minLength / sh:maxLength '
                        "for a length"
                        if family == "text"
                        else f'write the bound as {family}, e.g. "…"^^{self.n(cast(URIRef, rng))}',
                    )

    def check_shape_parameters(self) -> None:
        """A domain shape's parameter written as what SHACL does not read it as, said at its
        statement with what to write. ``sh:targetClass "Patient"`` (a string) targets no
        class, so the shape is silently off; ``sh:minCount "1"``, ``sh:maxLength "3"`` and
        ``sh:path "queueRef"`` stop every SHACL engine loading the shape, which the gate's
        load check (``_gate.shape_problems``) could only place at the shape's first line,
        with no word of what to write."""
        g = self.g
        for p, why in (
            (SH.targetClass, "not a class, so the shape never applies and checks nothing"),
            (SH["class"], "not a class, so no value can be of it"),
        ):
            for holder, o in g.subject_objects(p):
                if isinstance(o, Literal):
                    self.error(
                        holder,
                        f'{self.n(p)} "{o}" is a string, {why}',
                        f"{self.n(p)} names a class: write {self.n(p)} "
                        f"{self.unquoted(str(o), self.types())} without quotes",
                        at=(holder, p, o),
                    )
        properties = {p for _, p, _ in g} | self.properties()
        for holder, o in g.subject_objects(SH.path):
            if isinstance(o, Literal):
                self.error(
                    holder,
                    f'sh:path "{o}" is a string, not a property, so no SHACL engine can load '
                    "the shape",
                    "write the property IRI, e.g. sh:path "
                    f"{self.unquoted(str(o), properties) if str(o).strip() else ':queueRef'}",
                    at=(holder, SH.path, o),
                )
        for p in (SH.minCount, SH.maxCount, SH.qualifiedMinCount, SH.qualifiedMaxCount,
                  SH.minLength, SH.maxLength):  # fmt: skip
            counts = p not in (SH.minLength, SH.maxLength)  # pyshacl: xsd:integer itself
            for holder, o in g.subject_objects(p):
                dt = o.datatype if isinstance(o, Literal) and not o.ill_typed else None
                if dt == XSD.integer or (not counts and dt and derives_from(dt, XSD.integer)):
                    continue
                whole = re.fullmatch(r"\s*\+?(\d+)\s*", str(o)) if isinstance(o, Literal) else None
                self.error(
                    holder,
                    f"{self.n(p)} {turtle_term(o, self.n)} is not an integer, so no SHACL "
                    "engine can load the shape",
                    f"write {self.n(p)} {int(whole.group(1))} without quotes"
                    if whole is not None
                    else f"write {self.n(p)} with a whole number, e.g. {self.n(p)} 1",
                    at=(holder, p, o),
                )

    def check_severities(self) -> None:
        """``sh:severity sh:Warning`` (or ``sh:Info``) on a domain shape reads as "report, do
        not block", and validated so; but the gate rejects a result on any finding, whatever
        its severity (docs/gate.md), so every call the constraint finds fault with was rejected
        after the tool had acted."""
        g = self.g
        for holder, level in sorted(g.subject_objects(SH.severity), key=str):
            if level not in (SH.Warning, SH.Info):
                continue
            path = g.value(holder, SH.path)
            owner = next(g.subjects(SH.property, holder), None)
            shape = (
                f"the {self.n(path)} property shape of {self.n(owner)}"
                if isinstance(holder, BNode) and owner is not None and isinstance(path, URIRef)
                else self.n(holder)
            )
            self.warn(
                holder,
                f"sh:severity {self.n(level)} on {shape} does not let its findings through: "
                "the gate rejects the result on any finding, whatever its severity, after the "
                "tool has acted",
                "remove the constraint if it should not block the step (sh:severity changes "
                "nothing the gate does)",
                at=(holder, SH.severity, level),
            )

    def refer_to_misbound_prefixes(self) -> None:
        """Before anything is said: every finding that names a term of a standard prefix
        bound to a near miss of its namespace names it as the file writes it and sends the
        modeler to that ``@prefix`` line (:attr:`~._sources.Sources.referrals`), where
        ``xsd1:decimal``, a prefix the file never wrote, and "write horis:type xsd:decimal",
        what it did write, were said."""
        self.near_misses: list[NearMiss] = misbound(self.src)
        self.src.referrals = sorted(
            (
                (self.n(URIRef(iri)), m.written(iri), m.referral(iri))
                for m in self.near_misses
                for iri in m.named
            ),
            key=lambda r: -len(r[0]),
        )

    def check_prefix_clashes(self, declared: set[URIRef]) -> None:
        """A prefix bound to one namespace here and another there (:func:`prefix_clashes`):
        said once, at its ``@prefix`` line, in place of the warnings about each term it
        leaves undeclared — as the error that a standard prefix is bound to a near miss of its
        namespace (:func:`~._prefix_clash.misbound`), when it is one. They stay the clash's
        under each term, so ``validate --world`` drops it when the world does use the
        namespace."""
        misses = {(p.file, p.line): p for p in (m.problem for m in self.near_misses)}
        typed = {t for t in self.g.subjects(RDF.type, None) if isinstance(t, URIRef)}
        clashes: set[int] = set()  # a term two files lose is the clash of each: both said
        for clash in prefix_clashes(self.src, self.defs.undeclared, declared, typed):
            folded = {
                id(p)
                for t in clash.terms
                for p in self.defs.undeclared.get(t, ())
                if id(p) not in clashes
            }
            self.problems = [p for p in self.problems if id(p) not in folded]
            # a standard namespace misspelt is said once, as that, at the same @prefix
            said = misses.get((clash.problem.file, clash.problem.line), clash.problem)
            if said is clash.problem:
                said = self._with_unknown_tools(clash)
            clashes.add(id(said))
            for t in clash.terms:
                kept = [p for p in self.defs.undeclared.get(t, ()) if id(p) in clashes]
                self.defs.undeclared[t] = kept if id(said) in map(id, kept) else [*kept, said]
            if said is not misses.get((clash.problem.file, clash.problem.line)):
                self.problems.append(said)
        self.problems.extend(misses.values())

    def _with_unknown_tools(self, clash: PrefixClash) -> Problem:
        """``clash``'s problem, an error naming the steps whose ``horis:tool`` it leaves
        undeclared, in place of each step's "referenced but not declared" error (removed):
        they were one error a step beside the warning that explained them all, each with the
        other namespace's full IRI to pick. The problem stays at the ``@prefix`` line, with
        its fix; ``clash`` itself where no step's tool is lost."""
        lost = [
            (tool, step, p)
            for tool in sorted(clash.terms & self.unknown_tools.keys(), key=str)
            for step, p in self.unknown_tools[tool]
            if p.file == clash.problem.file
        ]
        if not lost:
            return clash.problem
        gone = {id(p) for _, _, p in lost}
        self.problems = [p for p in self.problems if id(p) not in gone]
        by_tool: dict[URIRef, list[str]] = {}
        for tool, step, p in lost:
            by_tool.setdefault(tool, []).append(
                f"{self.n(step)}" + (f" (line {p.line})" if p.line is not None else "")
            )
        said = "; ".join(
            f"horis:tool {clash.written(tool)} of {_and(steps)}" for tool, steps in by_tool.items()
        )
        steps = sum(len(v) for v in by_tool.values())
        return replace(
            clash.problem,
            severity="error",
            message=f"{clash.problem.message}. So {said} names no declared tool: "
            f"{'that step' if steps == 1 else 'those steps'} cannot run",
        )

    def check_namespaces(self) -> None:
        """A file whose horis: prefix is not the Horismos namespace declares nothing: a
        warning, or an error when the file types its nodes with the near-miss's Tool (or
        Workflow or step classes) and nothing loaded declares a tool (a workflow): validate
        said "0 tools, 0 workflows: valid", exit 0, of a set emptied by that one prefix, and
        "4 tools, 0 workflows: valid" of the workflow file beside the tools."""
        terms = {
            str(k)[len(NS) :] for k in vocabulary_graph().subjects() if str(k).startswith(NS)
        } - {""}
        for f in self.src.files:
            for prefix, ns in f.graph.namespace_manager.namespaces():
                text = str(ns)
                if text == NS or "horis" not in (prefix + text).lower():
                    continue
                used = {
                    str(t)[len(text) :]
                    for triple in f.graph
                    for t in triple
                    if isinstance(t, URIRef) and str(t).startswith(text)
                }
                if not used & terms:  # another vocabulary that happens to say "horis"
                    continue
                line = next(
                    (
                        i
                        for i, ln in enumerate(f.text_lines(), 1)
                        if text in ln and "prefix" in ln.lower()
                    ),
                    None,
                )

                # This file types its nodes with the near-miss's Tool (Workflow, step classes)
                # and nothing else declares one: that kind is empty by this one mistake, and
                # "valid" would hide it ("4 tools, 0 workflows: valid", nothing to run).
                def near(k: URIRef, text: str = text) -> URIRef:
                    return URIRef(text + str(k)[len(NS) :])

                lost = [
                    kind
                    for kind, typing in (
                        (HORIS.Tool, (HORIS.Tool,)),
                        (HORIS.Workflow, (HORIS.Workflow, *STEP_CLASSES)),
                    )
                    if (None, RDF.type, kind) not in self.g
                    and any((None, RDF.type, near(k)) in f.graph for k in typing)
                ]
                self.problems.append(
                    Problem(
                        "error" if lost else "warning",
                        f"the prefix {prefix}: is bound to <{text}>, not the Horismos "
                        f"namespace, so nothing written with it is a Horismos term and the file "
                        "declares no tools, steps or workflows",
                        file=str(f.path),
                        line=line,
                        hint=f"write @prefix {prefix}: <{NS}> .",
                    )
                )


def _and(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _or(items: list[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"
