"""Checks of a shape's ``sh:in``: members of the other kind than its property's, and members
its own constraints refuse.

``sh:path :acuity ; sh:in ( "urgent" )`` for an object property, or ``sh:in ( "urgent" )``
beside ``sh:pattern "^Q-"``: the list loads in every SHACL engine, and no value in it can land.
Every node holding the property broke the shape, and the gate rejected the result of every
tool that landed one, after the tool had acted. These checks say so at the list's line, with
the list to write.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

from rdflib import OWL, RDF, RDFS, SH, Literal, URIRef
from rdflib.term import Node

from ._builder_base import LOCAL_NAME, STANDARD_NAMESPACES
from ._datatypes import DATATYPES, literal_datatype, range_refusing, turtle_term
from ._listed_values import Refusal, refused_members
from ._near_names import near_individual
from ._rdf_lists import list_members
from ._shacl import deactivated
from ._shape_slips import unmet
from ._term_checks import TermChecks
from ._term_kinds import range_class
from ._terms import split_iri
from ._vocab import NS

__all__ = ["ValueListChecks"]


@dataclass(frozen=True)
class _WrongListed:
    """The values of a property shape's ``sh:in`` of the other kind than its property's."""

    values: tuple[Node, ...]
    every: bool
    """No value listed can be one of the property's: the shape holds of no node holding it."""
    why: str
    hint: str


def _listed_literals_hint(listed: list[Node], r: URIRef | None, name: Callable[[Node], str]) -> str:
    """What to write for an ``sh:in`` list of values of datatype ``r``: the list with each
    value as a literal of ``r`` (``sh:in ( 120000 30000 )``), when each can be one."""
    if r is None:
        return 'write literals, in quotes or as numbers or true/false: sh:in ( "a" "b" )'
    typed = [
        Literal(split_iri(v)[1] if isinstance(v, URIRef) else str(v), datatype=r) for v in listed
    ]
    if any(t.ill_typed for t in typed):
        return f"write values of {name(r)}, or correct the rdfs:range"
    return "write sh:in ( " + " ".join(turtle_term(t, name) for t in typed) + " )"


class ValueListChecks(TermChecks):
    """The checks of shapes' ``sh:in`` lists."""

    def check_shape_value_lists(self) -> None:
        """A property shape's ``sh:in`` whose values are of the other kind than the
        property's: literals for an owl:ObjectProperty (``sh:path :severity ; sh:in ( "minor"
        "major" )`` where the values are :minor and :major), or literals a property's
        rdfs:range refuses (``"120000"``, a string, for an xsd:integer). No value the property
        takes is in the list, so every node holding the property breaks the shape, and the
        gate rejected the result of every tool that landed on one, after the tool had acted.
        An error when no value listed can be one of the property's; a warning when some can,
        or when the shape is inside ``sh:or``, ``sh:xone`` or ``sh:not``: a node may fail it
        and still conform (:func:`._shape_slips.unmet`)."""
        for holder, items in sorted(self.g.subject_objects(SH["in"]), key=str):
            self.check_listed_slips(holder, items)
            wrong = self.wrong_listed(holder)
            if wrong is None or not wrong.every:
                self.check_listed_refused(holder, items, wrong.values if wrong else ())
            if wrong is None:
                continue
            path = self.n(cast(URIRef, self.g.value(holder, SH.path)))
            shown = ", ".join(turtle_term(v, self.n) for v in wrong.values)
            severity, does = unmet(self.g, holder) if wrong.every else ("warning", "")
            (self.error if severity == "error" else self.warn)(
                holder,
                f"sh:in lists {shown}, but {wrong.why}, so "
                + (
                    f"no value of {path} is in the list and every node holding it breaks the "
                    f"shape: {does}"
                    if wrong.every
                    else "no value of it equals "
                    + ("that one" if len(wrong.values) == 1 else "those")
                ),
                wrong.hint,
                at=(holder, SH["in"], items),
            )

    def check_listed_slips(self, holder: Node, items: Node) -> None:
        """A member of ``holder``'s ``sh:in`` that nothing loaded says anything of, beside an
        individual the files declare of a near name (``sh:in ( :Approved :Rejectd )`` where the
        ontology declares ``:Rejected a :Decision``): the list allows a node no one writes,
        and refuses the one meant, so the gate rejected every result landing ``:Rejected``,
        after its tool had acted — or, for a value a tool returns, at run time only. A warning
        kept by term (:meth:`~._term_checks.TermChecks.undeclared`): a world that holds the
        member drops it."""
        g = self.g
        if (items, RDF.first, None) not in g or deactivated(g, holder):
            return
        listed = list_members(g, items)
        for member in listed:
            if (
                not isinstance(member, URIRef)
                or str(member).startswith((*STANDARD_NAMESPACES, NS))
                or (member, None, None) in g  # declared, or described: the files' own
                or any(p != RDF.first for p in g.predicates(None, member))
            ):
                continue
            near = near_individual(member, self.declared_individuals)
            if near is None or near in listed:
                continue
            shown = " ".join(turtle_term(near if m == member else m, self.n) for m in listed)
            classes = ", ".join(sorted(map(self.n, self.declared_individuals[near])))
            path = g.value(holder, SH.path)
            of = f" as a value of {self.n(path)}" if isinstance(path, URIRef) else ""
            self.undeclared(
                member,
                holder,
                f"sh:in lists {self.n(member)}, which nothing loaded declares, though the "
                f"files declare {self.n(near)} (a {classes}): unless the world holds "
                f"{self.n(member)}, {self.n(near)}{of} breaks the shape, and the gate rejects "
                "the result of every tool that writes it, after the tool has acted",
                [],  # the near name is said here, with the list to write
                at=(holder, SH["in"], items),
                fix=f"did you mean {self.n(near)}? write sh:in ( {shown} )",
            )

    def check_listed_refused(self, holder: Node, items: Node, told: tuple[Node, ...]) -> None:
        """Members of ``holder``'s ``sh:in`` its own constraints refuse (``sh:in ( "urgent" )``
        beside ``sh:pattern "^Q-"``), those of the other kind than the property's (``told``)
        left to :meth:`check_shape_value_lists`: an error when every member is refused (no
        value conforms, :func:`._shape_slips.unmet`), else a warning naming those that are."""
        g = self.g
        if (items, RDF.first, None) not in g or deactivated(g, holder):
            return
        listed = list_members(g, items)
        refused = refused_members(g, holder, [v for v in listed if v not in told])
        if not refused:
            return
        by = {self.refusing(r): None for r in refused}
        shown = ", ".join(turtle_term(r.member, self.n) for r in refused)
        what = " and ".join(by)
        path = g.value(holder, SH.path)
        of = f" of {self.n(path)}" if isinstance(path, URIRef) else ""
        if len(refused) + len(told) == len(listed):
            severity, does = unmet(g, holder)
            message = (
                f"sh:in lists {shown}, and {what} refuses "
                + ("it" if len(refused) == 1 else "each")
                + f", so no value{of} is in the list and meets the shape: {does}"
            )
        else:
            severity = "warning"
            message = (
                f"sh:in lists {shown}, which {what} refuses, so a value{of} equal to "
                + ("it" if len(refused) == 1 else "one of them")
                + " breaks the shape though the list allows it"
            )
        (self.error if severity == "error" else self.warn)(
            holder,
            message,
            f"list only values that meet {what}, or correct {what}",
            at=(holder, SH["in"], items),
        )

    def refusing(self, refusal: Refusal) -> str:
        """The constraint that refuses a value, as a file writes it (a list as its members)."""
        value = refusal.value
        if (value, RDF.first, None) in self.g:
            members = " ".join(turtle_term(v, self.n) for v in list_members(self.g, value))
            return f"{self.n(refusal.parameter)} ( {members} )"
        return f"{self.n(refusal.parameter)} {turtle_term(value, self.n)}"

    def wrong_listed(self, pshape: Node) -> _WrongListed | None:
        """The values of ``pshape``'s ``sh:in`` of the other kind than its property's
        (literals for an owl:ObjectProperty, what the property's rdfs:range refuses for a
        datatype property), why, and what to write; None when there are none, or the
        property says nothing of its values."""
        g = self.g
        path, items = g.value(pshape, SH.path), g.value(pshape, SH["in"])
        if (
            not isinstance(path, URIRef)
            or items is None
            or (items, RDF.first, None) not in g
            or deactivated(g, pshape)
        ):
            return None
        listed = list_members(g, items)
        ranges = list(g.objects(path, RDFS.range))
        wrong: list[Node]
        if (path, RDF.type, OWL.ObjectProperty) in g or range_class(g, path):
            wrong = [v for v in listed if isinstance(v, Literal)]
            why = f"{self.n(path)} is an owl:ObjectProperty: its values are nodes"
            hint = self.listed_nodes_hint(path, listed)
        elif (path, RDF.type, OWL.DatatypeProperty) in g or ranges:
            wrong = [
                v
                for v in listed
                if not isinstance(v, Literal)
                or range_refusing(literal_datatype(v), ranges) is not None
            ]
            r = next((x for x in ranges if isinstance(x, URIRef) and x in DATATYPES), None)
            why = (
                f"{self.n(path)} has rdfs:range {self.n(r)}"
                if r is not None
                else f"{self.n(path)} is an owl:DatatypeProperty: its values are literals"
            )
            hint = _listed_literals_hint(listed, r, self.n)
        else:
            return None
        if not wrong:
            return None
        return _WrongListed(tuple(wrong), len(wrong) == len(listed), why, hint)

    def listed_nodes_hint(self, prop: URIRef, listed: list[Node]) -> str:
        """What to write in an object property's ``sh:in`` for the literals listed: the
        nodes of its range whose local names they are (``:minor`` for ``"minor"``), else
        nodes of that name in the range's namespace (the world may hold them)."""
        cls = range_class(self.g, prop)
        nodes = {
            split_iri(n)[1].lower(): n
            for n in (self.g.subjects(RDF.type, cls) if cls is not None else ())
            if isinstance(n, URIRef)
        }
        ns = split_iri(cls or prop)[0]
        meant = [
            nodes.get(str(v).lower(), URIRef(ns + str(v)) if LOCAL_NAME.fullmatch(v) else v)
            if isinstance(v, Literal)
            else v
            for v in listed
        ]
        if all(isinstance(v, URIRef) for v in meant):
            return "write the nodes: sh:in ( " + " ".join(self.n(v) for v in meant) + " )"
        return "write the nodes, without quotes: sh:in ( :a :b )"
