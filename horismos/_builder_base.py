"""The loader's shared state and its ways of reporting: one small base for every part of it.

Each concern of checking and modelling definitions is a class of its own module
(``_define_*`` build the models, ``*_checks`` check them); they share only what is here: the
definitions being read, the problems collected so far, and how a problem is located, named
and given a did-you-mean. A part calls only what it inherits, so data flows one way:
:class:`~._definitions._Builder` composes them all and runs them in order."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Set
from functools import cached_property
from typing import Any

from rdflib import OWL, RDF, RDFS, SH, XSD, BNode, Graph, Literal, URIRef
from rdflib.term import Node, Variable

from ._datatypes import DATATYPES, is_datatype, turtle_term
from ._definitions_model import Definitions
from ._errors import Problem
from ._fhir import FHIR
from ._hazards import Hazard
from ._model import Tool, Workflow
from ._namespace_index import NamespaceIndex
from ._near_names import closest_term
from ._preconditions import Precondition
from ._shipped_vocabulary import STEP_CLASSES
from ._sources import Sources, Where
from ._term_kinds import term_kind
from ._terms import split_iri
from ._vocab import HORIS, NS

__all__ = ["LOCAL_NAME", "STANDARD_NAMESPACES", "BuilderBase"]


STANDARD_NAMESPACES = (str(RDF), str(RDFS), str(XSD), str(SH), "http://www.w3.org/2002/07/owl#")


LOCAL_NAME = re.compile(r"[A-Za-z_][\w-]*")
"""A name that can be a node's local name in a CURIE (``:minor``)."""


_FLOW = (
    HORIS.otherwise,
    HORIS.next,
    HORIS.onError,
    HORIS.fallback,
    HORIS.onTimeout,
    HORIS.onPartial,
)
"""The predicates by which a step's flow goes on to another step (besides a rule's next), in
the order :meth:`_Builder.edge` names them."""


_APPROVAL_ABOVE = (
    "horis:requiresApproval takes true (every call waits for a person) or false; to ask only "
    'above an amount, route with a horis:DecisionStep (horis:when [ horis:requires "?this '
    ':amount ?a . FILTER (?a > 100)" ; horis:next … ]) to a step whose tool says '
    "horis:requiresApproval true, and the rest to one whose tool does not"
)
"""The fix for an amount written on the approval flag (``horis:requiresApproval 100``): the
flag holds for every call; a threshold is a decision between two steps."""


class BuilderBase:
    """What every check and every model the loader builds shares: the definitions being
    read (``src``, ``g``), the problems found so far, and how a problem is said, located and
    named (with a did-you-mean)."""

    def __init__(self, sources: Sources, shapes: Graph | None) -> None:
        self.src = sources
        self.shapes = shapes
        """The shipped authoring shapes (:func:`~._shipped_vocabulary.authoring_shapes`), None
        when they are not there: read by :func:`~._definitions.load_definitions`."""
        self.g = sources.graph
        self.problems: list[Problem] = []
        self.shape_problems: list[tuple[Problem, tuple[Node, URIRef] | None]] = []
        """The authoring shapes' findings, each with the node and property it is about."""
        self.said_of: dict[
            tuple[str | None, int | None, str | None], set[tuple[Node, URIRef] | None]
        ] = {}
        """The node and property each of the loader's errors at a place is about (None: a
        node alone)."""
        self.defs = Definitions(self.g, sources)
        self.patterns: list[tuple[Node, Node, URIRef, Precondition]] = []
        self.queries: list[tuple[Node, Node, Any]] = []
        """Each horis:candidates query that parsed: its step, its candidates node, its algebra."""
        self.broken_tools: dict[Node, Tool] = {}
        """Tools declared wrongly but for their arguments: modelled only so that their steps'
        bindings are checked in the same pass, not after the tool is mended."""
        self.erred_at: set[Node] = set()
        """The node (or the subject of the statement) each of the loader's errors is placed
        at: a blank node of a tool's effect tells an error of the effect."""
        self.broken_workflows: dict[URIRef, Workflow] = {}
        """Workflows the load would not model for their focus type, whose start is a step:
        walked by the warnings about the flow said beside the errors
        (:mod:`._mended_flow`)."""
        self.astray_edges: list[Problem] = []
        """The errors of a flow edge to a node declared nowhere, a tool or a workflow: the
        warnings about the flow walk the edge to the step the error names instead
        (:mod:`._mended_flow`)."""
        self.merged_namespaces = {k: str(v) for k, v in self.g.namespace_manager.namespaces()}
        """The merged graph's prefixes, read once (rdflib lists them anew on every call)."""
        self.merged_index = NamespaceIndex(self.merged_namespaces.items())
        """:attr:`merged_namespaces` by the IRIs they begin (:meth:`short`)."""
        self.longest_prefix = max(
            (
                len(k)
                for ns in (self.merged_namespaces, *(f.namespaces for f in sources.files))
                for k in ns
            ),
            default=0,
        )
        """The longest prefix name a file or the merged graph binds (:meth:`namespaces`)."""
        self.unknown_tools: dict[URIRef, list[tuple[Node, Problem]]] = {}
        """Each ``horis:tool`` no loaded file declares, with each step naming it and the error
        said there: a prefix bound to another namespace than the tools' file explains them
        all, and is said once at its ``@prefix`` line in their place
        (:meth:`~._shape_checks.ShapeChecks.check_prefix_clashes`)."""
        self.miskinded: set[Node] = set()
        """Nodes typed with a horis: property, or given a horis: class as a predicate: the
        slip is reported where it is written (:meth:`check_term_roles`), not at their users."""
        self.mistyped: set[Node] = set()
        """Steps declared a horis:DecisionStep and written as another kind: said once at the
        type (:meth:`~._define_steps.StepBuilding.written_as_another_kind`), not at each of
        their properties that a decision step does not take (:meth:`check_placement`)."""
        self.guards_said: set[URIRef] = set()
        """Steps whose guard against running twice is said to be wrong already: one their own
        call never closes, or naming a property declared nowhere (:meth:`check_unclosed_guards`),
        or written as a triple that requires what only their tool writes
        (:meth:`check_own_writes`), or cut off by a ``#`` on one line
        (:meth:`check_commented_patterns`). The warning that nothing stops a rerun
        (:mod:`._rerun_guards`) would say the same mistake again."""
        self.condition_guards: dict[URIRef, URIRef] = {}
        """Of :attr:`guards_said`, the steps whose guard tests a property no tool writes and
        no file states, by that property: beside a world that states it, a condition of the
        domain (a cancellation), which guards nothing against a rerun — the warning about the
        guard is dropped there, and the rerun's is given instead
        (:attr:`~._definitions_model.Definitions.stated_reruns`)."""
        self.off_focus: set[URIRef] = set()
        """Workflows an argument given from ?this was found of another class than their
        focus type (:meth:`check_focus_arguments`)."""
        self.said_better: set[tuple[Node, URIRef]] = set()
        """``(node, property)`` whose authoring-shape findings follow from a slip the loader
        says where it is written, better: ``(node, horis:tool)`` for ``node horis:Tool …``
        (the property missing), ``(step, horis:candidates)`` and ``(the string,
        horis:query)`` for ``horis:candidates "…"`` (a node needed, with a query), a step's
        horis:when and horis:otherwise when it is typed a decision step by mistake
        (:attr:`mistyped`)."""

    def for_each_hint(self, v: Node) -> str:
        """What to write for a ``horis:forEach`` naming what to go over (``horis:forEach
        :hasLine``, ``"?line"``, a pattern): it takes only ``true``, and the items are the
        solutions of the step's ``horis:requires`` — the list, variable or query belongs
        there."""
        text, which = str(v).strip(), ""
        if isinstance(v, URIRef):
            items = f"?this {self.n(v)} ?item"
        elif re.fullmatch(r"\??[A-Za-z_]\w*", text):
            items = f"?this :p ?{text.lstrip('?')}"
            which = ", :p the property that holds them"
        elif "?" in text:
            items = " ".join(text.split()).rstrip(" .")
        else:
            return "write horis:forEach true or horis:forEach false, without quotes"
        return (
            "horis:forEach takes true or false, and with true the tool is called once per "
            "solution of the step's horis:requires: name the items there "
            f'(horis:requires "{items} ."{which}) and write horis:forEach true'
        )

    @cached_property
    def definition_nodes(self) -> frozenset[Node]:
        """The tools, workflows and steps the files declare (typed in the ``horis:``
        namespace): never what a domain term was meant to be, so never offered for one
        (``:fetchedAt``, declared nowhere, was told "did you mean :t.fetch?")."""
        return frozenset(
            s for s, t in self.g.subject_objects(RDF.type) if str(t).startswith(str(HORIS))
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

    def error(
        self, node: Node | None, message: str, hint: str | None = None, at: Where | None = None
    ) -> None:
        """An error about ``node``, located at ``at`` (a node or a statement) when more precise."""
        problem = self.src.problem("error", node, message, hint, at)
        self.problems.append(problem)
        place = (problem.file, problem.line, problem.node)
        self.said_of.setdefault(place, set()).add(at[:2] if isinstance(at, tuple) else None)
        if at is not None:
            self.erred_at.add(at[0] if isinstance(at, tuple) else at)

    def warn(
        self, node: Node | None, message: str, hint: str | None = None, at: Where | None = None
    ) -> None:
        self.problems.append(self.src.problem("warning", node, message, hint, at))

    def hazard(self, h: Hazard) -> None:
        """A warning of :mod:`._hazards` (an error when it is certain to do harm), at the
        statement or the assertion it is about."""
        at: Where | None = None
        if h.predicate is not None:
            at = (h.node, h.predicate, None)
        elif h.asserted is not None:
            at = next(
                (
                    a
                    for e in self.g.objects(h.node, HORIS.effect)
                    for a in self.g.objects(e, HORIS.asserts)
                    if (a, HORIS.property, h.asserted) in self.g
                ),
                None,
            )
        (self.error if h.harmful else self.warn)(h.node, h.message, h.hint, at=at)

    def n(self, node: Node) -> str:
        return self.src.name(node)

    def datatype(self, t: Node) -> bool:
        """Whether ``horis:type t`` means a literal: an IRI in a datatype's namespace, or one
        the files declare ``a rdfs:Datatype`` (``:Celsius``), which would otherwise be taken
        for a class and its values looked for as nodes."""
        return isinstance(t, URIRef) and (is_datatype(t) or (t, RDF.type, RDFS.Datatype) in self.g)

    def unknown_datatype(self, t: Node | None) -> bool:
        """Whether ``t`` is written in XSD's or RDF's namespace yet is none of their datatypes
        (:data:`DATATYPES`) nor declared ``a rdfs:Datatype``: a typo (``xsd:strng``), since no
        one else defines datatypes there. A domain's own datatypes (FHIR's) are not judged."""
        return (
            isinstance(t, URIRef)
            and is_datatype(t)
            and t not in DATATYPES
            and (t, RDF.type, RDFS.Datatype) not in self.g
        )

    def one(self, s: Node, p: URIRef) -> Node | None:
        return next(iter(self.g.objects(s, p)), None)

    def text(self, s: Node, p: URIRef) -> str | None:
        v = self.one(s, p)
        return None if v is None else str(v)

    def flag(self, s: Node, p: URIRef, default: bool = False) -> bool:
        """``s``'s boolean ``p``: the first value that is one, each value that is not an
        error. Every value is read, not only the first the graph lists: with ``"yes"`` beside
        ``true`` which of them was judged, and so whether ``"yes"`` was reported at all,
        followed the order the values were stored in (a second value is the authoring
        shapes' "takes one"). A quoted ``"true"`` is an error here, whether or not the
        authoring shapes are there to refuse it (theirs, at the same statement, is then not
        said), and is read as no value: read as true, it added the warnings of a
        ``horis:forEach`` step beside that error."""
        found: bool | None = None
        for v in self.g.objects(s, p):
            if isinstance(v, Literal) and isinstance(v.toPython(), bool):
                value = bool(v.toPython())
            elif isinstance(v, Literal) and str(v).lower() in ("true", "false"):
                self.error(
                    s,
                    f"{self.n(p)} takes one boolean, not {turtle_term(v, self.n)}, which is text",
                    f"write {self.n(p)} {str(v).lower()}, without quotes",
                    at=(s, p, v),
                )
                continue
            else:
                quoted = isinstance(v, Literal) and v.datatype in (None, XSD.string)
                shown = (
                    f'"{v}"'
                    if quoted
                    else self.n(v)
                    if isinstance(v, URIRef)
                    else str(v)
                    if isinstance(v, Literal)
                    else "[ … ], a node written in place"  # not its generated id
                )
                if p == HORIS.forEach:
                    hint = self.for_each_hint(v)
                elif p == HORIS.requiresApproval and not quoted:  # an amount, a threshold
                    hint = _APPROVAL_ABOVE
                else:
                    hint = f"write {self.n(p)} true or {self.n(p)} false, without quotes"
                self.error(s, f"{self.n(p)} must be true or false, not {shown}", hint, at=(s, p, v))
                continue
            found = value if found is None else found
        return default if found is None else found

    def sparql_term(self, term: Node) -> str:
        """``term`` as a pattern writes it: ``?var``, a CURIE or ``<IRI>``, a literal."""
        return f"?{term}" if isinstance(term, Variable) else turtle_term(term, self.n)

    def related(self, given: URIRef, wanted: URIRef) -> bool:
        """Whether a node of class ``given`` may be one of ``wanted``: one is a subclass of
        the other, or either is not a class named plainly (undeclared, a class expression)."""
        classes_of = self.defs.classes_of
        return (
            given in classes_of(wanted)
            or wanted in classes_of(given)
            or any(
                term_kind(self.g, c) != "class" or self.class_expression(c) for c in (given, wanted)
            )
        )

    def class_expression(self, cls: URIRef) -> bool:
        """Whether the files define ``cls`` by an OWL class expression (an equivalent class,
        an intersection or union, a restriction it is a subclass of): what the ``rdfs``
        entailment does not classify nodes into, and subclass closures do not relate."""
        return any(
            (cls, p, None) in self.g for p in (OWL.equivalentClass, OWL.intersectionOf, OWL.unionOf)
        ) or any(isinstance(o, BNode) for o in self.g.objects(cls, RDFS.subClassOf))

    def unknown(self, term: URIRef, known: Set[URIRef]) -> bool:
        """Declared nowhere: neither in ``known`` nor a standard or ``horis:`` term (those
        have their own checks), nor, with a FHIR adapter declared, a FHIR term: the
        adapter's resources bring those (a shape on ``fhir:MedicationDispense`` judges the
        dispenses a tool decides, though nothing in the files names the class)."""
        adapted = any(a.mapping == HORIS.FhirJsonLd for a in self.defs.adapters.values())
        return (
            term not in known
            and not str(term).startswith((*STANDARD_NAMESPACES, NS))
            and not (adapted and str(term).startswith(FHIR))
        )

    def datatype_hint(self, dt: URIRef) -> str:
        """Did you mean the datatype ``dt`` is a slip from, else which to write."""
        return (
            self.did_you_mean(dt, DATATYPES)
            or "write an XSD datatype such as xsd:string, xsd:integer, xsd:decimal, "
            f"xsd:boolean or xsd:dateTime, or declare {self.n(dt)} a rdfs:Datatype"
        )

    def kind(self, t: Node) -> str | None:
        """``literal`` or ``node``: what a value of type or range ``t`` is written as; None
        when it does not say (rdfs:Resource, a union written as a blank node)."""
        if isinstance(t, BNode):
            return "literal" if (t, RDF.type, RDFS.Datatype) in self.g else None
        if not isinstance(t, URIRef) or t == RDFS.Resource:
            return None
        return "literal" if self.datatype(t) or t in (OWL.real, OWL.rational) else "node"

    def did_you_mean(self, term: URIRef, candidates: Iterable[Node]) -> str | None:
        """``did you mean :acuity?`` for ``:acuty``: the closest local name of the same
        namespace among ``candidates``, written with the prefix ``term`` is written with."""
        found = closest_term(term, candidates)
        if found is None:
            return None
        ns, local = split_iri(term)
        meant = str(found)[len(ns) :]
        name = self.n(term)
        if name.startswith("<") or not name.endswith(local):  # no prefix writes it: an IRI
            return f"did you mean <{ns}{meant}>?"
        return f"did you mean {name[: len(name) - len(local)]}{meant}?"

    def in_another_namespace(self, term: URIRef, candidates: Iterable[Node]) -> str | None:
        """``did you mean :acuity?`` for ``<http://example.org/ehr/acuity>`` when the files
        name ``:acuity`` (``…/ehr#acuity``): the one term of the same local name in another
        namespace — a slash for a hash, http for https, a prefix bound to the wrong IRI."""
        ns, local = split_iri(term)
        if not local:
            return None
        found = {
            k
            for k in candidates
            if isinstance(k, URIRef)
            and k != term
            and str(k).endswith(local)
            and split_iri(k)[1] == local
        }
        if len(found) != 1:
            return None
        (meant,) = found
        if not ns:
            return f"did you mean {self.n(meant)}? <{local}> is a relative IRI"
        return f"did you mean {self.n(meant)} (in <{split_iri(meant)[0]}>, not <{ns}>)?"

    def edge(self, src: Node, dst: Node) -> tuple[Node, URIRef, Node] | None:
        """The statement of ``src``'s flow that goes to ``dst``: a branch, or a rule's next."""
        for p in _FLOW:
            if (src, p, dst) in self.g:
                return (src, p, dst)
        for w in self.g.objects(src, HORIS.when):
            if (w, HORIS.next, dst) in self.g:
                return (w, HORIS.next, dst)
        return None

    def flow_targets(self, src: Node) -> Iterator[Node]:
        """Where ``src``'s flow goes: each node :meth:`edge` finds a statement to."""
        for p in _FLOW:
            yield from self.g.objects(src, p)
        for w in self.g.objects(src, HORIS.when):
            yield from self.g.objects(w, HORIS.next)

    def quoted(
        self,
        s: Node,
        pred: URIRef,
        value: Literal,
        candidates: Iterable[Node],
        *,
        holder: Node | None = None,
        what: str | None = None,
    ) -> None:
        """``pred "X"`` where a node is meant: in quotes the name is a string and points at
        nothing (a message saying it is not declared would suggest the very name written).
        ``holder`` is the node the statement is written on when it is not ``s``."""
        label = self.n(pred)
        self.error(
            s,
            f'{label} "{value}"{" of " + what if what else ""} is a string, not a node: a '
            "name in quotes points at nothing",
            f"drop the quotes: {label} {self.unquoted(str(value), candidates)}",
            at=(s if holder is None else holder, pred, value),
        )

    def unquoted(self, text: str, candidates: Iterable[Node]) -> str:
        """``text``, written in quotes, as the node it most likely names."""
        text = text.strip()
        if re.fullmatch(r"(?:[A-Za-z][\w.-]*)?:[\w.-]+", text):  # a CURIE already
            return text
        if text.startswith("<") and text.endswith(">"):
            return text
        if "://" in text or text.startswith("urn:"):
            return self.n(URIRef(text))
        named = sorted(
            {self.n(c) for c in candidates if isinstance(c, URIRef) and split_iri(c)[1] == text}
        )
        if len(named) == 1:
            return named[0]
        if text in XSD.__annotations__:
            return f"xsd:{text}"
        return f":{text}" if re.fullmatch(r"[\w.-]+", text) else text

    def types(self) -> set[Node]:
        """The classes and datatypes the loaded files declare."""
        kinds = (OWL.Class, RDFS.Class, RDFS.Datatype)
        return {c for k in kinds for c in self.g.subjects(RDF.type, k)}

    def properties(self) -> set[Node]:
        """The properties the loaded files declare."""
        kinds = (RDF.Property, OWL.ObjectProperty, OWL.DatatypeProperty)
        return {p for k in kinds for p in self.g.subjects(RDF.type, k)}

    def writers(self) -> list[Tool]:
        """Every tool whose effect writes what it says: the right ones and those the load
        found wrong (a zero ``horis:timeout`` does not change what a tool writes). Where a
        check asks whether anything writes a property, a tool found wrong counts: said beside
        its error, "no tool writes it" was false once the error was mended."""
        return [*self.defs.tools.values(), *self.broken_tools.values()]

    def effect_unread(self, tool: Tool) -> bool:
        """Whether the load found ``tool``'s ``horis:effect`` wrong: one it could not read,
        or an error about the effect or one of its ``horis:asserts`` (a value its property
        cannot take: the property may be the slip). What it writes is not known until it is
        mended."""
        if tool.effect is None and (tool.iri, HORIS.effect, None) in self.g:
            return True
        effects = set(self.g.objects(tool.iri, HORIS.effect))
        held = effects | {a for e in effects for a in self.g.objects(e, HORIS.asserts)}
        return not held.isdisjoint(self.erred_at) or any(
            about == (tool.iri, HORIS.effect) for said in self.said_of.values() for about in said
        )

    def step_nodes(self) -> set[Node]:
        return {s for c in STEP_CLASSES for s in self.g.subjects(RDF.type, c)}

    def meant(self, term: Node, candidates: Iterable[Node]) -> str:
        """``"did you mean :X? "`` for the declared name closest to a misspelt ``term``, to
        lead a hint whose list (:meth:`some`) is cut at eight names in alphabetical order
        and so may not hold the one meant; "" when none is close."""
        if not isinstance(term, URIRef):
            return ""
        candidates = list(candidates)
        best = closest_term(term, candidates)
        if best is not None:
            return f"did you mean {self.n(best)}? Else "
        # the same name in another namespace: the file's prefix binds another one than the
        # file declaring it (``<…/ops/ops.intake>`` for ``<…/ops#ops.intake>``)
        ns, local = split_iri(term)
        same = sorted(
            (
                c
                for c in candidates
                if isinstance(c, URIRef) and split_iri(c)[1] == local and split_iri(c)[0] != ns
            ),
            key=str,
        )
        if len(same) != 1:
            return ""
        return (
            f"did you mean {self.n(same[0])}? The prefix it is written with here binds <{ns}>, "
            f"and it is declared under <{split_iri(same[0])[0]}>: write the @prefix as the "
            "file declaring it does. Else "
        )

    def some(self, nodes: Iterable[Node], limit: int = 8) -> str:
        """A few declared names for a hint, sorted so the message is stable."""
        names = sorted({self.n(x) for x in nodes if isinstance(x, URIRef)})
        return ", ".join(names[:limit]) + (", …" if len(names) > limit else "") or "none declared"
