"""Checks of typed terms: each ``horis:type``, ``horis:property`` and ``horis:focusType``.

A contract typed with a misspelt datatype, an undeclared class, a property where a class
goes, or a type outside its property's range lands (or refuses) values against the
ontology; said at load, at the statement that types it."""

from __future__ import annotations

import re
from typing import cast

from rdflib import OWL, RDF, RDFS, SH, XSD, Literal, URIRef
from rdflib.term import Node

from ._datatypes import DATATYPES, literal_datatype, range_refusing
from ._term_checks import TermChecks
from ._term_kinds import declared_property, pattern_terms, range_class, term_kind
from ._vocab import HORIS

__all__ = ["TypedTermChecks"]


_CLASS_PLACES = (
    (
        RDFS.domain,
        "what reads the property's domain (a pattern's checks, RDFS entailment) "
        "reads a class of nothing",
    ),
    (
        RDFS.range,
        "what reads the property's range (an effect's value, a world's fact, "
        "entailment) reads a class of nothing",
    ),
    (RDFS.subClassOf, "nothing said of the class meant reaches its members"),
    (SH.targetClass, "the shape never applies"),
    (SH["class"], "no value conforms and the gate rejects every node the shape judges"),
)
"""Where an ontology or a shape names a class, and what naming a property there does."""


_VALUE_CLASS = frozenset({RDFS.range, SH["class"]})
"""Of :data:`_CLASS_PLACES`, those naming the class of a property's values: what a property
named there most likely stood for is its own range."""


class TypedTermChecks(TermChecks):
    """Checks of the terms a tool's contract is typed with: declared, of the kind their
    place needs, within their property's range."""

    def check_typed_terms(self, known: set[URIRef]) -> None:
        """The terms a contract is typed with, held to the loaded files before anything runs:
        a misspelt datatype (``xsd:sting``) lands literals nothing reads as strings; a class,
        property or focus type declared nowhere (``:Nurs``) is a term no node or value the
        world holds can match; and a horis:type of the wrong kind for its property (a literal
        for an owl:ObjectProperty) lands what the ontology says cannot be."""
        for tool in sorted(set(self.g.subjects(RDF.type, HORIS.Tool)), key=str):
            for takes in self.g.objects(tool, HORIS.takes):
                for a in self.g.objects(takes, HORIS.arg):
                    what = f'argument "{self.text(a, HORIS.name) or "?"}"'
                    for typ in self.g.objects(a, HORIS.type):
                        if isinstance(typ, URIRef):  # else the shapes say what to write
                            self.check_type(tool, a, what, typ, known, arg=True)
            for e in self.g.objects(tool, HORIS.effect):
                for a in self.g.objects(e, HORIS.asserts):
                    prop = self.one(a, HORIS.property)
                    if prop is not None:
                        self.check_declared(
                            tool,
                            (a, HORIS.property, prop),
                            "what the tool returns for it lands under a property nothing else "
                            "reads",
                            known,
                        )
                    what = "asserted property " + (self.n(prop) if prop is not None else "")
                    for typ in self.g.objects(a, HORIS.type):
                        if not isinstance(typ, URIRef):
                            continue
                        ok = self.check_type(tool, a, what, typ, known, arg=False)
                        if ok and isinstance(prop, URIRef):
                            self.check_range(tool, a, prop, typ)
                    for value in self.g.objects(a, HORIS.value):
                        if isinstance(prop, URIRef):
                            self.check_range(tool, a, prop, value, fixed=True)
        for wf in sorted(set(self.g.subjects(RDF.type, HORIS.Workflow)), key=str):
            for focus in self.g.objects(wf, HORIS.focusType):
                self.check_declared(
                    wf,
                    (wf, HORIS.focusType, focus),
                    "no node is one and the workflow has nothing to run for",
                    known,
                )

    def check_term_kinds(self) -> None:
        """A property written where a class goes (an argument's or an assertion's
        horis:type, a horis:focusType, ``?x a :onDuty``) or a class where a property goes (an
        assertion's horis:property, ``?this :Patient ?ref``): declared, so no undeclared-term
        check sees them, and each made every call, answer or match fail (:mod:`._term_kinds`)."""
        g = self.g
        kinds: dict[URIRef, str | None] = {}  # one look-up a term: the same few recur

        def is_(term: Node | None, kind: str) -> bool:
            if not isinstance(term, URIRef):
                return False
            if term not in kinds:
                kinds[term] = term_kind(g, term)
            return kinds[term] == kind

        def meant(prop: URIRef, via: URIRef) -> str | None:
            found = range_class(g, prop) if via == RDFS.range else None
            if via == RDFS.domain:
                domains = [d for d in g.objects(prop, RDFS.domain) if is_(d, "class")]
                found = cast(URIRef, domains[0]) if len(domains) == 1 else None
            return f"{self.n(found)}, the {self.n(via)} of {self.n(prop)}" if found else None

        def typed_by_property(
            tool: Node, holder: Node, what: str, so: str, of: Node | None
        ) -> None:
            """Each horis:type of ``holder`` that is a property: the hint is the range of
            ``of`` (the asserted property), or, without one, of the property written."""
            for typ in g.objects(holder, HORIS.type):
                if not is_(typ, "property"):
                    continue
                ranged = of if isinstance(of, URIRef) else cast(URIRef, typ)
                fits = meant(ranged, RDFS.range)
                self.error(
                    tool,
                    f"{what} has horis:type {self.n(typ)}, a property, not a class: no node is "
                    f"one, so {so}",
                    f"write horis:type {fits}"
                    if fits
                    else "write horis:type with the class of the nodes it takes",
                    at=(holder, HORIS.type, typ),
                )

        for tool in sorted(set(g.subjects(RDF.type, HORIS.Tool)), key=str):
            for takes in g.objects(tool, HORIS.takes):
                for a in g.objects(takes, HORIS.arg):
                    what = f'argument "{self.text(a, HORIS.name) or "?"}"'
                    typed_by_property(tool, a, what, "every call is refused", None)
            for e in g.objects(tool, HORIS.effect):
                for a in g.objects(e, HORIS.asserts):
                    prop = self.one(a, HORIS.property)
                    if is_(prop, "class"):
                        self.error(
                            tool,
                            f"horis:property {self.n(cast(URIRef, prop))} is a class, not a "
                            "property: the "
                            "gate refuses every answer, after the tool has acted",
                            "write the property the tool's value is written under",
                            at=(a, HORIS.property, prop),
                        )
                    typed_by_property(
                        tool,
                        a,
                        f"asserted property {self.n(prop or a)}",
                        "the gate refuses every value, after the tool has acted",
                        prop,
                    )
        for pred, holder_is in _CLASS_PLACES:
            for holder, prop in sorted(g.subject_objects(pred), key=str):
                if not is_(prop, "property"):
                    continue
                fits = meant(cast(URIRef, prop), RDFS.range) if pred in _VALUE_CLASS else None
                self.warn(
                    holder,
                    f"{self.n(pred)} {self.n(prop)} names a property, not a class: no node is "
                    f"one, so {holder_is}",
                    f"write sh:targetSubjectsOf {self.n(prop)} to judge the nodes holding it"
                    if pred == SH.targetClass
                    else f"write rdfs:subPropertyOf {self.n(prop)}: {self.n(holder)} is a "
                    "property too"
                    if pred == RDFS.subClassOf and declared_property(g, cast(URIRef, holder))
                    else f"write {self.n(pred)} {fits}"
                    if fits
                    else f"write the class meant after {self.n(pred)}",
                    at=(holder, pred, prop),
                )
        for wf in sorted(set(g.subjects(RDF.type, HORIS.Workflow)), key=str):
            for focus in g.objects(wf, HORIS.focusType):
                if is_(focus, "property"):
                    fits = meant(cast(URIRef, focus), RDFS.domain)
                    self.error(
                        wf,
                        f"horis:focusType {self.n(focus)} is a property, not a class: no node "
                        "is one, so the workflow has nothing to run for",
                        f"write horis:focusType {fits}"
                        if fits
                        else "write the class of the nodes each instance runs for",
                        at=(wf, HORIS.focusType, focus),
                    )
        for owner, holder, pred, algebra in self.parsed_patterns():
            said: set[URIRef] = set()
            for term, used_as in sorted(pattern_terms(algebra), key=str):
                if term in said or not is_(term, "property" if used_as == "class" else "class"):
                    continue
                said.add(term)
                name = self.n(term)
                needle = rf"(?:{re.escape(name)}|<{re.escape(str(term))}>)(?![\w-])"
                if used_as == "class":
                    message = (
                        f"{self.n(pred)} reads `a {name}`, but {name} is a property, not a "
                        "class: no node is one, so the pattern never matches"
                    )
                    hint = f"write ?x {name} ?value for the property, or a class after `a`"
                else:
                    message = (
                        f"{self.n(pred)} uses {name} as a property, but it is a class: no "
                        "statement has it as its predicate, so the pattern never matches"
                    )
                    hint = f"write ?x a {name} to ask for the class, or the property meant"
                self.at_text("error", needle, owner, message, hint, (holder, pred))

    def check_type(
        self, tool: Node, holder: Node, what: str, typ: URIRef, known: set[URIRef], arg: bool
    ) -> bool:
        """One ``horis:type`` of an argument (``arg``) or an asserted property: a datatype
        must be one a literal can have, a class must be declared somewhere. False when it is
        an error (the property's range is then not worth comparing)."""
        at = (holder, HORIS.type, typ)
        if self.unknown_datatype(typ):
            self.error(
                tool,
                f"{what} has horis:type {self.n(typ)}, which is no XSD or RDF datatype and "
                "is not declared a rdfs:Datatype, so "
                + (
                    "no value the graph holds is of it and every call is refused"
                    if arg
                    else "the tool's value would land as a literal of that unknown datatype, "
                    "which no query comparing text, numbers or dates matches"
                ),
                self.did_you_mean(typ, DATATYPES)
                or "write an XSD datatype such as xsd:string, xsd:integer, xsd:decimal, "
                f"xsd:boolean or xsd:dateTime, or declare {self.n(typ)} a rdfs:Datatype",
                at=at,
            )
            return False
        if not self.datatype(typ) and self.unknown(typ, known):
            self.undeclared(
                typ,
                tool,
                f"{what} has horis:type {self.n(typ)}, a class no loaded ontology declares "
                "and no loaded data uses, so no node is one and "
                + ("every call is refused" if arg else "the gate refuses every value"),
                known,
                at=at,
            )
        return True

    def check_range(
        self, tool: Node, holder: Node, prop: URIRef, typ: Node, fixed: bool = False
    ) -> None:
        """A value of the kind the ontology says ``prop`` takes: a literal for an
        owl:DatatypeProperty or a datatype range, a node for an owl:ObjectProperty or a class
        range. The other kind would pass the gate (it checks horis:type) and land in the world
        contradicting the ontology, which reasoners, shapes and queries then trip over.
        ``fixed``: ``typ`` is a horis:value (horis:now, a literal or a node), not a type."""
        given: str | None = (
            ("literal" if typ == HORIS.now or isinstance(typ, Literal) else "node")
            if fixed
            else self.kind(typ)
        )
        ranges = [r for r in self.g.objects(prop, RDFS.range) if self.kind(r) is not None]
        said: list[tuple[str, str | None]] = [
            (f"is an owl:{c}", kind)
            for c, kind in (("ObjectProperty", "node"), ("DatatypeProperty", "literal"))
            if (prop, RDF.type, OWL[c]) in self.g
        ]
        said += [(f"has rdfs:range {self.n(r)}", self.kind(r)) for r in ranges]
        against = [why for why, kind in said if kind != given]
        if given == "literal" and not against:
            self.check_datatype_range(tool, holder, prop, typ, fixed, ranges)
        if given is None or not against:
            return
        wanted = "node" if given == "literal" else "literal"
        fits = sorted(self.n(r) for r in ranges if self.kind(r) == wanted and isinstance(r, URIRef))
        if fixed:
            hint = (
                f'write horis:value with a literal ("…" or "…"^^{fits[0]})'
                if fits and wanted == "literal"
                else "write horis:value with a literal"
                if wanted == "literal"
                else "write horis:value with the IRI of a node (:someNode), not a literal"
            )
            said_by = f"horis:value {self.n(typ)} is a {given}"
        else:
            if fits:
                hint = f"write horis:type {fits[0]}, the rdfs:range of {self.n(prop)}"
            elif wanted == "literal":
                hint = "write horis:type with an XSD datatype such as xsd:string"
            else:
                hint = "write horis:type with the ontology class of the nodes it points to"
            said_by = f"horis:type {self.n(typ)} makes the tool's value a {given}"
        self.error(
            tool,
            f"asserted property {self.n(prop)} {' and '.join(against)} (its values are "
            f"{wanted}s), but {said_by}",
            hint,
            at=(holder, HORIS.value if fixed else HORIS.type, typ),
        )

    def check_datatype_range(
        self, tool: Node, holder: Node, prop: URIRef, typ: Node, fixed: bool, ranges: list[Node]
    ) -> None:
        """A literal of a datatype its property's rdfs:range does not allow (``xsd:string``
        where the range is ``xsd:dateTime``): the gate holds the value to horis:type, so it
        lands, and every query comparing it as the range says finds nothing. Only built-in
        datatypes are compared; one the files declare is the modeler's to judge."""
        if fixed:
            value = typ
            given = (
                XSD.dateTime
                if value == HORIS.now
                else literal_datatype(value)
                if isinstance(value, Literal)
                else None
            )
        else:
            given = typ if isinstance(typ, URIRef) else None
        r = range_refusing(given, ranges) if given is not None else None
        if given is not None and r is not None:
            shown = (
                f'horis:value "{typ}" is'
                if isinstance(typ, Literal)
                else f"horis:value {self.n(typ)} is"
                if fixed
                else f"horis:type {self.n(typ)} makes the tool's value"
            )
            self.error(
                tool,
                f"asserted property {self.n(prop)} has rdfs:range {self.n(r)}, but {shown} "
                f"a literal of {self.n(given)}, which is not one",
                f"write horis:value with a literal of {self.n(r)}"
                if fixed
                else f"write horis:type {self.n(r)}, the rdfs:range of {self.n(prop)}",
                at=(holder, HORIS.value if fixed else HORIS.type, typ),
            )
