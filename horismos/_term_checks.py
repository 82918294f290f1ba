"""Checks of the vocabulary the definitions write: terms, their places, kinds and literals.

A misspelt or misplaced term in Turtle is silently another term; these checks say where a
``horis:`` property is written on the wrong kind of node, a term is undeclared or of the
wrong kind (a class used as a property), a typed literal cannot be read, a declared type or
range cannot be met."""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable, Set
from decimal import Decimal
from typing import Any, cast

from rdflib import OWL, RDF, RDFS, SH, XSD, BNode, Graph, Literal, URIRef
from rdflib.graph import ReadOnlyGraphAggregate
from rdflib.term import Node

from ._builder_base import STANDARD_NAMESPACES
from ._closed_pattern_terms import undefined_in_pattern
from ._datatypes import turtle_term
from ._define_patterns import PatternReading
from ._errors import Problem
from ._language_tags import caused_by_tag, string_properties, tagged_strings
from ._near_names import slip_distance
from ._shacl_graph import compiled_all, judged_by_compiled, report_results
from ._shacl_report import Result
from ._shipped_vocabulary import (
    _AUTHORED,
    STEP_CLASSES,
    authoring_shapes,
    compiled_authoring_shapes,
    kind_names,
    property_homes,
    taken_inside,
    vocabulary_graph,
)
from ._sources import Where
from ._stores.ox_files import MAX_TERM
from ._term_kinds import algebra_triples, path_terms, pattern_terms
from ._terms import split_iri
from ._vocab import HORIS, NS

__all__ = ["TermChecks"]


_USES = frozenset({HORIS.type, HORIS.property, HORIS.focusType})


_POLICY = frozenset({HORIS.requiresApproval, HORIS.sideEffect})
"""What the policy reads of a tool: written where nothing reads it, the tool acts unguarded."""


_POLICY_UNHELD = (
    ": the policy never reads it, so the tool acts without the approval or side-effect class "
    "written here"
)


def _iris(algebra: Any) -> set[URIRef]:
    """The ontology terms a parsed SPARQL query's triple patterns use: each IRI predicate and
    each class of ``?x a :Class``. (Other IRIs are mostly individuals, which world data
    declares: a warning about each of them would be noise.)"""
    return (
        {term for term, _ in pattern_terms(algebra)}
        | {p for _, p, _ in algebra_triples(algebra)}
        | {term for term, _ in path_terms(algebra)}
    )


def _without_not_exists(algebra: Any) -> Any:
    """A parsed query's algebra with its ``NOT EXISTS`` patterns left out: what must match
    for it to have a solution."""
    from rdflib.plugins.sparql.parserutils import CompValue

    if isinstance(algebra, CompValue):
        if algebra.name == "Builtin_NOTEXISTS":
            return None
        pruned = CompValue(algebra.name)
        for key, value in algebra.items():
            pruned[key] = _without_not_exists(value)
        return pruned
    if isinstance(algebra, list | tuple):
        return type(algebra)(_without_not_exists(x) for x in algebra)
    return algebra


def _is_nan(node: Node) -> bool:
    """A number literal that is no number (``"NaN"^^xsd:double``): it is neither above, below
    nor equal to any bound, and a SHACL engine comparing it with a decimal raises."""
    value = node.value if type(node) is Literal else None
    if isinstance(value, Decimal):
        return value.is_nan()  # sNaN too, which raises when compared at all
    return isinstance(value, float) and math.isnan(value)


def _values_taken(prop: URIRef) -> list[URIRef]:
    """The vocabulary's individuals of a ``horis:`` property's range (``horis:delivery``:
    horis:Final, horis:Silent): the values it takes, each a term; none for another range."""
    vocab = vocabulary_graph()
    return sorted(
        (
            v
            for r in vocab.objects(prop, RDFS.range)
            for v in vocab.subjects(RDF.type, r)
            if isinstance(v, URIRef) and str(v).startswith(NS)
        ),
        key=str,
    )


_RETRY_SPACING = re.compile(r"back-?off|delay|interval|jitter|spacing|retry-?(after|wait)", re.I)
"""A term for spacing retries (``horis:backoff``, ``horis:retryDelay``): no Horismos term is
one, and the nearest spelling (if any) would mislead."""


_NO_RETRY_SPACING = (
    "Horismos has no backoff or retry delay: horis:retries N tries a failed call again at "
    "once, up to N times (a tool that is not idempotent only while its calls never reached it, "
    "docs/guide/doing-no-harm.md); to space them, retry inside the tool's own client, within "
    "its horis:timeout"
)


_SECRET_WORD = re.compile(
    r"(api_?key|access_?token|bearer|auth(orization)?|credentials?|password|secret|token)", re.I
)
"""A term naming a secret written in the file (``horis:token "…"``, ``horis:apiKey``): no
Horismos term is one, since a secret is read from the environment; the nearest spelling
(``horis:takes`` for ``horis:token``) would mislead."""


def _secret_hint(g: Graph, node: Node) -> str:
    """Where the secret ``node`` was given goes instead, by what ``node`` is: an adapter's
    token variable, a command's environment, else a header read from the environment (an
    HTTP tool, an MCP server reached over HTTP)."""
    if (node, RDF.type, HORIS.Adapter) in g:
        how = 'horis:tokenFromEnv "EHR_TOKEN" (the variable\'s name, sent as a Bearer token)'
    elif (node, RDF.type, HORIS.CommandBinding) in g or (node, HORIS.command, None) in g:
        how = 'horis:env [ horis:name "API_TOKEN" ; horis:fromEnv "API_TOKEN" ]'
    else:
        how = 'horis:header [ horis:name "Authorization" ; horis:fromEnv "API_TOKEN" ]'
    return f"a secret is never written in the file: it is read from the environment — write {how}"


def _written_size(term: Node) -> int:
    """The bytes ``term`` takes written in N-Triples, as :func:`definitions_digest` parses it."""
    return len(term.n3().encode())


_EXAMPLE = {
    XSD.integer: ' such as "42"',
    XSD.int: ' such as "42"',
    XSD.nonNegativeInteger: ' such as "0"',
    XSD.positiveInteger: ' such as "1"',
    XSD.decimal: ' such as "4.2"',
    XSD.double: ' such as "4.2E0"',
    XSD.boolean: ' ("true" or "false")',
    XSD.date: ' such as "2026-12-01"',
    XSD.dateTime: ' such as "2026-12-01T09:30:00Z"',
    XSD.duration: ' such as "PT5S"',
}
"""How a valid literal of a common datatype is written, for :meth:`_Builder.check_literals`."""


_ONTOLOGY_TERMS = (
    OWL.Class,
    RDFS.Class,
    OWL.ObjectProperty,
    OWL.DatatypeProperty,
    RDF.Property,
    SH.NodeShape,
)
"""What an ontology file declares: one declaring these under an import's IRI is its file."""


def written_needle(term: URIRef) -> str | None:
    """What finds ``term`` in a pattern's text, for :meth:`PatternReading.placed_in_text`,
    however its prefix is spelt there (``<…>`` or ``pre:local``, the local name not running
    on); None for a term with no local name. The prefix is left open: a pattern's prefixes
    are its file's, which the merged graph's short name need not match."""
    local = split_iri(term)[1]
    if not local:
        return None
    return rf"<{re.escape(str(term))}>|:{re.escape(local)}(?![\w.-]*\w)"


class TermChecks(PatternReading):
    """Checks of the terms the files write: each in its place, of its kind, declared,
    its literals well-formed."""

    def check_term_sizes(self) -> bool:
        """A literal or IRI longer than pyoxigraph's parser reads in one term (16 MiB), which
        :func:`definitions_digest` cannot read, nor an Oxigraph world hold: an error at its
        statement, instead of the parser's MemoryError. Whether there was one; a term's
        written size is measured only when its text could reach the limit."""
        found = False
        for s, p, o in self.g:
            big = [
                (t, size)
                for t in (s, p, o)
                if len(str(t)) > MAX_TERM // 4 and (size := _written_size(t)) > MAX_TERM
            ]
            if big:
                found = True
                term, size = big[0]
                kind = "literal" if isinstance(term, Literal) else "IRI"
                self.error(
                    s,
                    f"a {kind} of {size // (1024 * 1024)} MiB is longer than "
                    "16 MiB, more than the RDF parser reads in one term",
                    "keep large content outside the definitions and refer to it by IRI",
                    at=(s, cast(URIRef, p), o),
                )
        return found

    def check_placement(self) -> None:
        """A horis: property written on a kind of node that does not take it: nothing reads
        it there, so it does nothing, silently — ``horis:retries 3`` on a step retries
        nothing (retries are the tool's), ``horis:onError`` on a tool catches nothing (the
        step that calls it says where an error goes), ``horis:otherwise`` on an action step
        is no branch. Which kinds take which property is read from the vocabulary and the
        authoring shapes (:func:`property_homes`). A warning: the definitions run, only not
        as written."""
        homes = property_homes()
        for kind in _AUTHORED:
            for node in sorted(set(self.g.subjects(RDF.type, kind)) - self.mistyped, key=str):
                kinds = {k for k in _AUTHORED if (node, RDF.type, k) in self.g}
                for p, o in sorted(self.g.predicate_objects(node), key=lambda po: str(po[0])):
                    home = homes.get(cast(URIRef, p))
                    if home is None or home & kinds or kind != min(kinds, key=_AUTHORED.index):
                        continue
                    self.misplaced(
                        node,
                        (node, cast(URIRef, p), o),
                        f"{kind_names(home, self.n)}; on {kind_names({kind}, self.n)}",
                        self.placement_hint(node, cast(URIRef, p), home),
                    )
        for tool in sorted(set(self.g.subjects(RDF.type, HORIS.Tool)), key=str):
            inside = [
                (n, where)
                for where, parts in ((HORIS.takes, HORIS.arg), (HORIS.effect, HORIS.asserts))
                for top in self.g.objects(tool, where)
                for n in (top, *self.g.objects(top, parts))
            ]
            for n, where in inside:
                for p, o in sorted(self.g.predicate_objects(n), key=lambda po: str(po[0])):
                    home = homes.get(cast(URIRef, p))
                    if home is None or HORIS.Tool not in home:
                        continue
                    self.misplaced(
                        tool,
                        (n, cast(URIRef, p), o),
                        f"the tool; inside its {self.n(where)} [ … ]",
                        f"move it out of the brackets, onto the tool: {self.n(tool)} "
                        f"{self.n(p)} {self.n(o)}",
                    )

    def misplaced(
        self, node: Node, at: tuple[Node, URIRef, Node], home_here: str, hint: str
    ) -> None:
        """``at``'s property written where it does nothing (``home_here``: its home; where it
        stands): an error for a policy property, which then does not hold, else a warning."""
        p = at[1]
        self.problems.append(
            self.src.problem(
                "error" if p in _POLICY else "warning",
                node,
                f"{self.n(p)} is a property of {home_here} it does nothing"
                + (_POLICY_UNHELD if p in _POLICY else ""),
                hint,
                at=at,
            )
        )

    def placement_hint(self, node: Node, p: URIRef, home: frozenset[URIRef]) -> str:
        """Where ``p`` written on ``node`` belongs: the tool the step calls, the steps that
        call the tool, or else any node of a kind that takes it; on an action step a
        horis:fallback is most likely its horis:onError."""
        if p == HORIS.fallback and (node, RDF.type, HORIS.ActionStep) in self.g:
            return (
                "where an action step goes when its tool fails is horis:onError: write "
                f"horis:onError {self.n(self.one(node, p) or node)}"
            )
        if HORIS.Tool in home:
            tools = sorted(self.n(t) for t in self.g.objects(node, HORIS.tool))
            if tools:
                return f"declare it on {', '.join(tools)}, the step's tool, or remove it"
        callers = sorted(self.n(s) for s in self.g.subjects(HORIS.tool, node))
        if callers and home & set(STEP_CLASSES):
            return f"write it on the step that calls the tool ({', '.join(callers)}), or remove it"
        return f"write it on {kind_names(home, self.n)}, or remove it"

    def check_imports(self) -> None:
        """An ``owl:imports`` of an ontology no loaded file declares: Horismos reads the files
        it is given and never follows an import, so a workflow file importing the domain
        ontology, validated or run without it, had none of its classes, properties or domain
        shapes (the gate's) loaded, while the import read as if it had. A warning at the
        import; not when a loaded file declares the ontology, or declares classes, properties
        or shapes under its IRI (an ontology file written without ``a owl:Ontology``)."""
        imports = sorted(self.g.subject_objects(OWL.imports), key=str)
        declared = [  # read once, not once an import
            str(t)
            for kind in (_ONTOLOGY_TERMS if imports else ())
            for t in self.g.subjects(RDF.type, kind)
            if isinstance(t, URIRef)
        ]
        for ontology, target in imports:
            if not isinstance(target, URIRef) or (target, RDF.type, OWL.Ontology) in self.g:
                continue
            if any(d.startswith(str(target)) and d != str(target) for d in declared):
                continue
            self.warn(
                ontology,
                f"owl:imports <{target}> names an ontology no loaded file declares: Horismos "
                "reads only the files it is given and never fetches an import, so what that "
                "ontology says (its classes, properties and the domain shapes the gate holds "
                "results to) is not loaded",
                f"give the file of <{target}> to validate and run beside this one (or a folder "
                "holding both)",
                at=(ontology, OWL.imports, target),
            )

    def check_split_definitions(self) -> None:
        """A tool, step or workflow that two files describe with horis: terms: the files are
        merged into one graph, so both descriptions hold at once — two horis:requires both
        apply, two horis:tool make the step ambiguous — which reads like a copy edited in one
        place and forgotten in the other."""
        if len(self.src.files) < 2:
            return
        # read from the graph, not the modelled definitions: a tool two files contradict
        # (two horis:timeout, an argument declared twice) is not modelled, and was the one
        # whose second file most needed naming
        described = (
            *self.g.subjects(RDF.type, HORIS.Tool),
            *self.g.subjects(RDF.type, HORIS.Workflow),
            *self.step_nodes(),
        )
        nodes = {s for s in described if isinstance(s, URIRef)}
        for node in sorted(nodes, key=str):
            files = [
                f
                for f in self.src.files_with(node, as_subject=True)
                if any(str(p).startswith(NS) for _, p, _ in f.graph.triples((node, None, None)))
            ]
            if len(files) < 2:
                continue
            first, *others = files
            for f in others:
                self.problems.append(
                    Problem(
                        "warning",
                        f"{self.n(node)} is also described in {first.path}"
                        + (f":{line}" if (line := first.subject_line(node)) else "")
                        + ": the two are merged, so what each says holds at once",
                        node=self.n(node),
                        file=str(f.path),
                        line=f.subject_line(node),
                        hint="describe it in one file: remove or rename one of the two",
                    )
                )

    def check_vocabulary(self) -> None:
        """A ``horis:`` term the vocabulary does not have (a typo, with the nearest term), and
        a real one of the wrong kind (:meth:`check_term_roles`)."""
        known = {t for t in vocabulary_graph().subjects() if str(t).startswith(NS)}
        self.check_term_roles()
        unknown: dict[URIRef, list[tuple[Node, Node, Node]]] = {}
        for s, p, o in self.g:
            for term in (p, o) if p != RDF.type else (o,):
                if isinstance(term, URIRef) and str(term).startswith(NS) and term not in known:
                    unknown.setdefault(term, []).append((s, p, o))
        # each said once, at the statement written first: the graph's order is a hash's, and
        # another check may say something else at a later one
        loaded = {str(f.path): i for i, f in enumerate(self.src.files)}

        def written(t: tuple[Node, Node, Node]) -> tuple[int, int, str]:
            file, line = self.src.locate_statement(t[0], cast(URIRef, t[1]), t[2])
            return loaded.get(file or "", len(loaded)), line or 0, str(t)

        vocab = vocabulary_graph()
        properties = {
            t for kind in _PROPERTY_KINDS for t in vocab.subjects(RDF.type, kind) if t in known
        }
        classes = {t for t in vocab.subjects(RDF.type, OWL.Class) if t in known}
        # a term is meant as what it stands for: a predicate as a property, a type as a
        # class, a value as neither (``horis:needsApproval true`` was told horis:Approval, a
        # class, where horis:requiresApproval was meant)
        roles = {
            "predicate": sorted(str(k)[len(NS) :] for k in properties),
            "type": sorted(str(k)[len(NS) :] for k in classes),
            "value": sorted(str(k)[len(NS) :] for k in known - properties),
        }
        for term in sorted(unknown):
            s, p, o = min(unknown[term], key=written)
            local = str(term)[len(NS) :]
            names = roles["predicate" if term == p else "type" if p == RDF.type else "value"]
            meant = _MEANT.get(local.lower())
            close = [meant] if meant in names else difflib.get_close_matches(local, names, n=1)
            values = _values_taken(cast(URIRef, p)) if term == o else []
            place = self.place_taking(s) if term == p else None
            hint = (
                _NO_RETRY_SPACING
                if _RETRY_SPACING.search(local)
                else _secret_hint(self.g, s)
                if term == p and _SECRET_WORD.fullmatch(local)
                else self.inside_hint(place, local, close[0] if close else None)
                if place is not None and not (close and HORIS[close[0]] in place[1])
                else f"did you mean horis:{close[0]}?"
                if close
                else f"{self.n(p)} takes one of: {', '.join(map(self.n, values))}"
                if values
                else "see ontologies/horis.ttl for the vocabulary"
            )
            self.error(s, f"horis:{local} is not a Horismos term", hint, at=(s, cast(URIRef, p), o))
            if p == RDF.type:  # `a horis:WaitStp`: the node is no step, said here alone
                self.miskinded.update(x for x, _, _ in unknown[term])

    def place_taking(self, node: Node) -> tuple[URIRef, tuple[URIRef, ...]] | None:
        """The ``horis:`` property ``node`` is written inside as ``[ … ]`` (``horis:when``),
        with the terms such a node takes (:func:`~._shipped_vocabulary.taken_inside`); None
        for a node of its own name, or one whose place says nothing of its terms."""
        if not isinstance(node, BNode):
            return None
        inside = taken_inside()
        held = sorted(
            {q for q in self.g.predicates(None, node) if isinstance(q, URIRef)} & {*inside}
        )
        return (held[0], inside[held[0]]) if held else None

    def inside_hint(
        self, place: tuple[URIRef, tuple[URIRef, ...]], local: str, near: str | None
    ) -> str:
        """What ``horis:local``, a term the vocabulary lacks, written inside ``place``, is
        told: the terms the place takes, after the term of another place ``near`` its
        spelling when it is a slip of it (``horis:otherwize``), not the place's own
        (``horis:condition`` in a ``horis:when [ … ]``: not another when) nor a term it
        merely begins like (``horis:currency``, ``horis:currentStep``)."""
        prop, takes = place
        names = [self.n(t) for t in takes]
        listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        if near is None or HORIS[near] == prop or slip_distance(local, near) > 1:
            return f"{self.n(prop)} [ … ] takes {listed}"
        return (
            f"did you mean horis:{near}? It is not written inside {self.n(prop)} [ … ], "
            f"which takes {listed}"
        )

    def check_term_roles(self) -> None:
        """A horis: property written as a class (``:Triage a horis:workflow``) or a horis:
        class written as a predicate (``horis:Tool :ehr.notify``): each is a real term, so
        no typo check sees it, yet the node is then no workflow, the step names no tool,
        and what is reported is far from the slip (an unreachable step, an undeclared tool
        at the step that calls it). An error at the slip, naming the term of the right kind
        that differs by case; the nodes it leaves undeclared are noted in ``miskinded`` so
        the checks that would blame their users stay quiet."""
        vocab = vocabulary_graph()
        classes = {t for t in vocab.subjects(RDF.type, OWL.Class) if str(t).startswith(NS)}
        properties = {
            t
            for kind in (OWL.ObjectProperty, OWL.DatatypeProperty, RDF.Property)
            for t in vocab.subjects(RDF.type, kind)
            if str(t).startswith(NS)
        }

        def meant(term: URIRef, among: set[Node]) -> URIRef | None:
            local = str(term)[len(NS) :].lower()
            same = sorted(str(t) for t in among if str(t)[len(NS) :].lower() == local)
            return URIRef(same[0]) if same else None

        # Looked up by the terms, not found in a pass over every statement: check_vocabulary
        # makes that pass already. The problems are sorted by place when reported.
        for o in properties:
            for s in self.g.subjects(RDF.type, o):
                right = meant(cast(URIRef, o), classes)
                self.miskinded.add(s)
                self.error(
                    s,
                    f"{self.n(o)} is a property, not a class: `a {self.n(o)}` declares "
                    f"{self.n(s)} as nothing Horismos reads",
                    f"did you mean {self.n(right)}?"
                    if right is not None
                    else "write a horis: class after `a`, such as horis:Tool, "
                    "horis:Workflow or horis:ActionStep",
                    at=(s, RDF.type, o),
                )
        for p in classes:
            for s, o in self.g.subject_objects(p):
                right = meant(cast(URIRef, p), properties)
                self.miskinded.add(s)
                if right is not None:
                    self.said_better.add((s, right))
                self.error(
                    s,
                    f"{self.n(p)} is a class, not a property: as a predicate it says nothing "
                    "Horismos reads",
                    f"did you mean {self.n(right)}?"
                    if right is not None
                    else f"write `{self.n(s)} a {self.n(p)}` to declare it one, or use a "
                    "horis: property here",
                    at=(s, cast(URIRef, p), o),
                )

    def check_literals(self) -> None:
        """A literal whose text is not of its datatype (``"abc"^^xsd:integer``). rdflib keeps
        it as text and says so once, nowhere in particular; every comparison, shape and effect
        that reads it as its datatype then fails at run time — an effect's ``horis:value``
        breaks its own ``sh:datatype`` after the tool has acted. An error where the runtime or
        the gate reads it (a ``horis:`` or ``sh:`` statement), a warning elsewhere."""
        for s, p, o in self.g:
            if _is_nan(o):
                self.nan(s, cast(URIRef, p), cast(Literal, o))
                continue
            if type(o) is Literal and self.unknown_datatype(o.datatype):
                self.error(
                    s,
                    f"{self.n(p)} {turtle_term(o, self.n)}: "
                    f"{self.n(cast(URIRef, o.datatype))} is no "
                    "XSD or RDF datatype and is not declared a rdfs:Datatype, so the literal is "
                    "of a datatype nothing reads: it is never equal to, nor ordered with, a "
                    "string, a number or a date",
                    self.datatype_hint(cast(URIRef, o.datatype)),
                    at=(s, cast(URIRef, p), o),
                )
                continue
            if type(o) is not Literal or o.ill_typed is not True or o.datatype is None:
                continue
            read = str(p).startswith((NS, str(SH)))
            kind = self.n(o.datatype)
            (self.error if read else self.warn)(
                s,
                f'{self.n(p)} "{o}"^^{kind}: "{o}" is not a valid {kind}, so it is kept as '
                f"text, and whatever compares it or checks it as {kind} "
                + ("fails when the workflow runs" if read else "finds it wrong"),
                f"write a value of {kind}{_EXAMPLE.get(o.datatype, '')}, or the datatype its "
                "text is",
                at=(s, cast(URIRef, p), o),
            )

    def nan(self, s: Node, p: URIRef, o: Literal) -> None:
        """``"NaN"^^xsd:double`` where a number is read: no threshold, order or bound holds
        for it (an error where the runtime or the gate reads it, as check_literals)."""
        read = str(p).startswith((NS, str(SH)))
        (self.error if read else self.warn)(
            s,
            f'{self.n(p)} "NaN"^^{self.n(o.datatype or XSD.double)} is no number: nothing is '
            "above, below or equal to it, so whatever compares it "
            + ("fails when the workflow runs" if read else "finds it wrong"),
            f"write {self.n(p)} with the number meant, in digits (e.g. 0.8)",
            at=(s, p, o),
        )

    def check_shapes(self) -> None:
        shapes = self.shapes
        if shapes is None:
            return
        # NaN (check_literals has said it) held out for the while: pyshacl raises comparing
        # it with a bound such as horis:confidence's sh:minInclusive 0.0
        held = [t for t in self.g if _is_nan(t[2])]
        for t in held:
            self.g.remove(t)
        try:
            compiled = (
                compiled_authoring_shapes()
                if shapes is authoring_shapes()
                else compiled_all(shapes)
            )
            # read with the vocabulary beside them: its subclasses are what sh:class and
            # sh:targetClass follow
            beside = ReadOnlyGraphAggregate([self.g, vocabulary_graph()])
            results = judged_by_compiled(beside, shapes, compiled)
            if results is None:  # pyshacl, the reference, where the compiled shapes cannot
                results = self._judged_by_pyshacl(shapes)
        finally:
            self.g.addN((s, p, o, self.g) for s, p, o in held)
        tagged = set(tagged_strings(self.g, string_properties(shapes)))
        for s, p, o in sorted(tagged, key=str):
            short = "\n" not in o and len(o) <= 60
            shown = f'"{o}"' if short else '"…"'
            self.error(
                s,
                f"{self.n(p)} {shown}@{o.language} carries the language tag @{o.language}, "
                f"which makes it text in a language, not the plain string {self.n(p)} takes, "
                "so it is read as no value",
                f'write {self.n(p)} "{o}", without @{o.language}'
                if short
                else f"delete the @{o.language} after the closing quotes",
                at=(s, p, o),
            )
        for r in results:
            if tagged and caused_by_tag(r, shapes, self.g, tagged):
                continue
            focus, msg, path, value = r.focus, r.message, r.path, r.value
            at: Where | None = (focus, path, value) if isinstance(path, URIRef) else None
            hint = None
            if r.component == SH.MaxCountConstraintComponent:
                written = self.values_written(focus, path) if isinstance(path, URIRef) else None
                if written is not None:
                    msg = f"{written}: {msg}"
                    hint = (
                        None
                        if "remove the others" in msg
                        else "keep the one meant, delete the rest"
                    )
            self.shape_problems.append(
                (
                    self.src.problem("error", focus, str(msg), hint, at=at),
                    (focus, path) if isinstance(path, URIRef) else None,
                )
            )

    def _judged_by_pyshacl(self, shapes: Graph) -> list[Result]:
        """pyshacl's results, the definitions validated in place with the vocabulary lent
        for the while: a copy of both for pyshacl was half of its check."""
        from pyshacl import validate

        lent = [t for t in vocabulary_graph() if t not in self.g]
        self.g.addN((s, p, o, self.g) for s, p, o in lent)
        try:
            _, report, _ = validate(self.g, shacl_graph=shapes, inference="none")
        finally:
            for t in lent:
                self.g.remove(t)
        return report_results(report)

    def values_written(self, node: Node, p: URIRef) -> str | None:
        """What ``node`` is given for ``p`` when it takes one and was given several, and
        where: the shapes' "at most one" alone named neither the values nor, for a node two
        files describe, the other file (a tool's ``horis:idempotent`` written ``true`` in one
        file and ``false`` in another was told to be written "without quotes")."""
        if len(values := list(self.g.objects(node, p))) < 2:
            return None
        loaded = {str(f.path): i for i, f in enumerate(self.src.files)}
        placed = sorted(
            ((self.src.locate_statement(node, p, v), v) for v in values),
            key=lambda pv: (loaded.get(pv[0][0] or "", len(loaded)), pv[0][1] or 0, str(pv[1])),
        )
        files = {f for (f, _), _ in placed}

        def where(v: Node, place: tuple[str | None, int | None]) -> str:
            file, line = place
            at = f"{file}:{line}" if len(files) > 1 else f"line {line}"
            if isinstance(v, BNode):
                return f"one at {at}"
            if isinstance(v, Literal):
                return f'"{v}" at {at}' if v.datatype in (None, XSD.string) else f"{v} at {at}"
            return f"{self.n(v)} at {at}"

        return f"{self.n(p)} is given {len(values)} values, " + ", ".join(
            where(v, place) for place, v in placed
        )

    def terms(self) -> tuple[set[URIRef], set[URIRef]]:
        """Every IRI the loaded files name, and those named by some statement other than a
        horis:type, horis:property or horis:focusType (which only use a term, and would
        otherwise declare their own typos): what the undeclared-term checks hold patterns
        and typed terms to, read in one pass over the files."""
        named: set[URIRef] = set()
        declared: set[URIRef] = set()
        for triple in self.g:
            terms = [t for t in triple if isinstance(t, URIRef)]
            named.update(terms)
            if triple[1] not in _USES:
                declared.update(terms)
        return named, declared

    def check_pattern_terms(self, known: set[URIRef]) -> None:
        """An IRI in a pattern that nothing loaded declares or uses is most likely a typo
        (``:severty``): the pattern can never match. A warning, since world data may use it
        (``horismos validate --world`` checks against the world too)."""
        for owner, holder, pred, algebra in self.parsed_patterns():
            unknown = _iris(algebra) - known
            negated = unknown - _iris(_without_not_exists(algebra)) if unknown else set()
            for term in sorted(unknown, key=str):
                # in a FILTER NOT EXISTS alone, a term nothing holds makes the guard hold
                # always: it never holds the step back (the step fires again, and again)
                consequence = (
                    "so its FILTER NOT EXISTS never finds it and never holds the step back"
                    if term in negated
                    else "so the pattern cannot match"
                )
                if str(term).startswith(STANDARD_NAMESPACES) or str(term).startswith(NS):
                    self.closed_pattern_term(term, known, owner, (holder, pred), consequence)
                    continue
                self.undeclared(
                    term,
                    owner,
                    f"{self.n(pred)} uses {self.n(term)}, which no loaded ontology "
                    f"declares and no loaded data uses, {consequence}",
                    known,
                    at=(holder, pred, None),
                    in_text=(holder, pred),
                )

    def closed_pattern_term(
        self,
        term: URIRef,
        known: set[URIRef],
        owner: Node,
        where: tuple[Node, URIRef],
        consequence: str,
    ) -> None:
        """A term of a closed vocabulary a pattern names that it does not define
        (:mod:`._closed_pattern_terms`): ``?this horis:risk :high``. A warning at its line,
        kept with the terms declared nowhere (``--world`` drops it where the world states it)."""
        slip = undefined_in_pattern(term)
        if slip is None:
            return
        vocabulary, meant = slip
        why = (
            ": no loaded file uses it, the runtime writes only the terms it defines, and an "
            "answer may write none"
            if str(term).startswith(NS)
            else ", and no loaded file uses it"
        )
        near = self.in_another_namespace(term, known - self.definition_nodes)
        hint = near or (
            f"did you mean {self.n(meant)}?" if meant is not None else "write the domain's own term"
        )
        name = self.n(term)
        problem = self.placed_in_text(
            "warning",
            rf"{re.escape(name)}(?![\w-])|<{re.escape(str(term))}>",
            owner,
            f"{self.n(where[1])} uses {name}, which is not a term of {vocabulary}{why}, "
            f"{consequence}",
            hint,
            where,
        )
        self.defs.undeclared.setdefault(term, []).append(problem)
        self.problems.append(problem)

    def check_declared(
        self, node: Node, at: tuple[Node, URIRef, Node], so: str, known: Set[URIRef]
    ) -> None:
        """A warning (:meth:`undeclared`) when the IRI ``at`` names is in none of ``known``:
        ``so`` says what naming it there does."""
        _, p, term = at
        if isinstance(term, URIRef) and self.unknown(term, known):
            self.undeclared(
                term,
                node,
                f"{self.n(p)} {self.n(term)} is declared by no loaded ontology and used by no "
                f"loaded data, so {so}",
                known,
                at=at,
            )

    def undeclared(
        self,
        term: URIRef,
        node: Node,
        message: str,
        known: Iterable[Node],
        at: Where,
        in_text: tuple[Node, URIRef] | None = None,
        fix: str | None = None,
    ) -> Problem:
        """A warning that ``term`` is declared nowhere, with a did-you-mean among ``known``
        and then ``fix`` (what else to change, when there is more than a spelling); reported,
        and returned. Only a warning, kept by term: world data may use it, and ``validate
        --world`` drops the warnings about the terms the world uses. ``in_text``: the (holder,
        predicate) of the pattern that names it, for the line the term is written on, not the
        pattern's first."""
        known = [k for k in known if k not in self.definition_nodes]
        near = self.did_you_mean(term, known) or self.in_another_namespace(term, known)
        if fix is None:
            hint = near or "declare it in the ontology, or check the spelling"
        else:
            hint = f"{near.removesuffix('?')}, or {fix}" if near else fix
        if in_text is not None:
            written = written_needle(term) or "$^"
            problem = self.placed_in_text("warning", written, node, message, hint, in_text)
        else:
            problem = self.src.problem("warning", node, message, hint, at=at)
        self.defs.undeclared.setdefault(term, []).append(problem)
        self.problems.append(problem)
        return problem


_PROPERTY_KINDS = (OWL.ObjectProperty, OWL.DatatypeProperty, RDF.Property)
"""What the vocabulary types its properties as."""

_MEANT = {
    "then": "next",
    "else": "otherwise",
    "if": "when",
    "condition": "when",
    "needsapproval": "requiresApproval",
    "approvalrequired": "requiresApproval",
    "approval": "requiresApproval",
    "onfailure": "onError",
}
"""Words of other rule languages, and other ways of saying a Horismos term, for the terms
Horismos names otherwise: spelt close to another term (``then`` to ``horis:when``,
``approvalRequired`` to ``horis:approvalsAsked``, which the runtime writes), the near-name was
the wrong one."""
