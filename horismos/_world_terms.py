"""A world file's own terms held to the ontology: ``validate --world`` warns of a property or
class the world's facts use, in a namespace the ontology declares terms in, that it does not
declare and no definition names.

A fact written with ``:acuty`` for ``:acuity``, or typed ``:Patinet``, loaded without a word:
no step's pattern ever matched it, and the run said the instance was blocked, as if the fact
were missing. Only the ontology's own namespaces are judged (a world may carry any other
vocabulary), and a term the world declares itself (``:note a owl:DatatypeProperty``) is its
own. Said once per term, at the first line of the world file that writes it, with the term
meant when one is close.

A value of the other kind than its property's range is said too, once per property and
kind of value: ``:onDuty "true"`` (a string) where the ontology gives :onDuty rdfs:range
xsd:boolean, or ``:acuity "urgent"`` where :acuity is an owl:ObjectProperty. It loaded as
written, no pattern (``:onDuty true``) matched it, and the instance was blocked as if no
nurse were on duty.

A Turtle list written as a property's value (``:ada :hasRequest ( :r1 :r2 )``) where the
property's values are nodes of a class is said too, once per property: the value is one node,
the list, so a pattern ``?this :hasRequest ?r`` binds the list and never a member, and a
``horis:forEach`` over the requests had one item, which no step's pattern matched.

An ``owl:sameAs`` the world states of a node the definitions name (``:FinanceDept owl:sameAs
:Finance`` beside a rule testing ``?this :inDepartment :Finance``) is said too, when the world
says anything else of the other name: no ``--entailment`` derives from it, so the rule never
matched a hire the world filed under the other name, and every one took ``horis:otherwise`` —
a base bundle for the finance hire. A link out (``:Finance owl:sameAs dbr:Finance``, nothing
else said of ``dbr:Finance``) hides nothing from a pattern.

A value whose text a pattern matches under another language tag, or none
(``:Finance rdfs:label "Finance"@en`` where a rule asks ``?d rdfs:label "Finance"``), is said
too (:mod:`._tagged_matches`): the two literals are not equal, and the rule never held.

A world can be millions of triples: its files are read as a stream, keeping only the set of
predicates and classes seen (a vocabulary, not the data), and read again, line by line, only
for the lines of the few terms found wrong.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path

import pyoxigraph as ox
from rdflib import OWL, RDF, RDFS, XSD, Literal, URIRef
from rdflib.term import Node

from ._closed_world import ClosedSeen
from ._compared_kinds import now_compared_in
from ._datatypes import NUMERIC, is_datatype, literal_hint, range_refusing, turtle_term
from ._definitions_model import Definitions
from ._errors import Problem
from ._near_names import closest_term
from ._shaped_world import ShapedSeen
from ._sources import RDF_SUFFIXES, expand_paths
from ._stores.ox_files import file_format
from ._tagged_matches import matched_texts, tag_of
from ._term_kinds import object_kind
from ._terms import split_iri
from ._unused_targets import unused_targets
from ._vocab import NS, PROV
from ._world_facts import fact_warning
from ._world_individuals import IndividualsSeen
from ._world_lexical import ill_typed, well_typed_hint

__all__ = ["first_lines", "world_term_problems", "written_as"]

_CLASS_KINDS = frozenset(map(str, (OWL.Class, RDFS.Class, RDFS.Datatype)))
_PROPERTY_KINDS = frozenset(
    map(
        str,
        (
            RDF.Property,
            OWL.ObjectProperty,
            OWL.DatatypeProperty,
            OWL.AnnotationProperty,
            OWL.FunctionalProperty,
            OWL.InverseFunctionalProperty,
            OWL.TransitiveProperty,
            OWL.SymmetricProperty,
            OWL.AsymmetricProperty,
            OWL.ReflexiveProperty,
            OWL.IrreflexiveProperty,
        ),
    )
)
_TYPE = ox.NamedNode(str(RDF.type))
_FIRST = ox.NamedNode(str(RDF.first))
_SAME = ox.NamedNode(str(OWL.sameAs))
_TEXTS = frozenset(ox.NamedNode(str(t)) for t in (XSD.string, RDF.langString))
_KINDS = frozenset(ox.NamedNode(k) for k in _CLASS_KINDS | _PROPERTY_KINDS)
_OPEN = ("http://www.w3.org/", NS, str(PROV), "urn:")
"""Namespaces never judged here: the standard vocabularies (validate judges their names in
the definitions), Horismos's and PROV's (a run's own records, which a run's --out holds)."""


def world_term_problems(defs: Definitions, paths: Iterable[str | Path]) -> list[Problem]:
    """A warning for each property or class the world files ``paths`` use that the loaded
    ontology's namespaces do not hold: declared by no ontology, named by no definition."""
    classes, properties = _declared(defs)
    spaces = {split_iri(t)[0] for t in classes | properties} - {""}
    spaces = {s for s in spaces if not s.startswith(_OPEN)}
    if not spaces:
        return []
    named = {str(t) for t in defs.nodes if isinstance(t, URIRef)}
    named |= {str(p) for p in defs.graph.predicates()}
    named |= {str(t) for t in defs.undeclared}  # a pattern's own: the world's use settles it
    found: list[Problem] = []
    ranges = _ranges(defs)
    seen = IndividualsSeen.of(defs)
    closed = ClosedSeen.of(defs)
    shaped = ShapedSeen.of(defs)
    zoned = {ox.NamedNode(str(p)): step for p, step in now_compared_in(defs.steps.values()).items()}
    listed = {ox.NamedNode(str(p)) for p in defs.graph.subjects(RDFS.range, RDF.List)}
    texts = {ox.NamedNode(p): t for p, t in matched_texts(defs.steps.values()).items()}
    files = expand_paths(paths, RDF_SUFFIXES)
    typed: set[str] = set()  # the classes the world types nodes with
    for path in files:
        found += _file_problems(
            path,
            typed,
            spaces,
            named,
            classes,
            properties,
            ranges,
            seen,
            closed,
            shaped,
            zoned,
            listed,
            texts,
            term_name=defs.name,
        )
    found += unused_targets(defs, typed)
    return found + seen.problems(files, named, defs.name, first_lines, written_as)


def _ranges(defs: Definitions) -> dict[ox.NamedNode, tuple[str, list[URIRef], str]]:
    """Each property whose values the ontology says are nodes (``"node"``) or literals
    (``"literal"``, with the built-in datatypes of its ranges), as ``_term_kinds`` reads it
    for the definitions, and why it says so; a property it says both or neither of is left
    out."""
    g = defs.graph
    found: dict[ox.NamedNode, tuple[str, list[URIRef], str]] = {}
    props = {p for p in g.subjects(RDFS.range) if isinstance(p, URIRef)}
    props |= {p for p in g.subjects(RDF.type, OWL.ObjectProperty) if isinstance(p, URIRef)}
    for p in props:
        kind = object_kind(g, p)
        if kind == "node":
            why = (
                "it is an owl:ObjectProperty"
                if (p, RDF.type, OWL.ObjectProperty) in g
                else "its rdfs:range is a class"
            )
            found[ox.NamedNode(str(p))] = ("node", [], why)
        elif kind == "literal":
            datatypes = [r for r in g.objects(p, RDFS.range) if isinstance(r, URIRef)]
            found[ox.NamedNode(str(p))] = ("literal", [r for r in datatypes if is_datatype(r)], "")
    return found


def _wrong_value(
    pred: ox.NamedNode, value: object, ranges: dict[ox.NamedNode, tuple[str, list[URIRef], str]]
) -> URIRef | str | None:
    """The range ``value`` is not of as a value of ``pred`` (``"node"`` for a literal where
    nodes go, ``"literal"`` for a node where literals go); None when it is of each range,
    the ontology does not say, or both are numbers (``71`` where a range is ``xsd:double``:
    a pattern compares numbers by value)."""
    kind, datatypes, _ = ranges[pred]
    if isinstance(value, ox.Literal):
        if kind == "node":
            return "node"
        given = URIRef(value.datatype.value)
        refused = range_refusing(given, datatypes)
        return None if given in NUMERIC and refused in NUMERIC else refused
    return "literal" if kind == "literal" else None


def _declared(defs: Definitions) -> tuple[set[str], set[str]]:
    """The classes and properties the definitions declare (by their kind, or as what
    ``rdfs:subClassOf``, ``rdfs:domain`` and ``rdfs:range`` relate)."""
    classes: set[str] = set()
    properties: set[str] = set()
    g = defs.graph
    for s, kind in g.subject_objects(RDF.type):
        if isinstance(s, URIRef):
            if str(kind) in _CLASS_KINDS:
                classes.add(str(s))
            elif str(kind) in _PROPERTY_KINDS:
                properties.add(str(s))
    for s, o in g.subject_objects(RDFS.subClassOf):
        classes.update(str(t) for t in (s, o) if isinstance(t, URIRef))
    for pred in (RDFS.domain, RDFS.range, RDFS.subPropertyOf):
        properties.update(str(s) for s in g.subjects(pred) if isinstance(s, URIRef))
    return classes, properties


def _file_problems(
    path: Path,
    typed: set[str],
    spaces: set[str],
    named: set[str],
    classes: set[str],
    properties: set[str],
    ranges: dict[ox.NamedNode, tuple[str, list[URIRef], str]],
    seen: IndividualsSeen,
    closed: ClosedSeen,
    shaped: ShapedSeen,
    zoned: dict[ox.NamedNode, Node],
    listed: set[ox.NamedNode],
    texts: dict[ox.NamedNode, dict[str, tuple[str, Node]]],
    *,
    term_name: Callable[[Node], str],
) -> list[Problem]:
    """One pass over ``path``'s quads: the predicates and classes it uses in ``spaces`` that
    nothing ``named``, less those it declares itself, and the values of the other kind than
    their property's ``ranges``; then their lines. ``seen`` is shown each typing of a class
    it watches and each value of a property ranging over a class; ``typed`` is given each
    class the file types a node with."""
    judged: set[ox.NamedNode] = set()  # predicates and classes seen: each judged once
    wrong: dict[str, tuple[str, str]] = {}  # term -> (kind, first subject)
    own: set[str] = set()  # terms the file declares itself
    kinds: set[tuple[ox.NamedNode, object]] = set()  # (property, kind of value) judged
    bad: set[tuple[ox.NamedNode, ox.NamedNode]] = set()  # (property, datatype) ill-typed
    values: list[tuple[ox.Quad, URIRef | str]] = []  # the first value of a wrong kind, and why
    zoneless: dict[ox.NamedNode, ox.Quad] = {}  # the first date-time with no zone NOW() meets
    # a Turtle list's head cell is parsed just before the triple giving it as a value: the
    # last cell seen is all that is kept (a list among a node property's values, said once)
    cell: tuple[object, object] | None = None
    lists: dict[ox.NamedNode, tuple[ox.Quad, object]] = {}
    retagged: dict[tuple[ox.NamedNode, str], ox.Quad] = {}  # a pattern's text, tagged otherwise
    met: set[tuple[ox.NamedNode, str]] = set()  # a pattern's text, as it is written
    same: dict[str, tuple[str, str]] = {}  # the first owl:sameAs of each node named: (s, o)
    parser = ox.parse(path=path, format=file_format(path), base_iri=path.resolve().as_uri())
    for quad in parser:  # ~4 µs a quad: the terms compared as nodes, made text once each
        pred = quad.predicate
        if pred == _FIRST:
            cell = (quad.subject, quad.object)
        elif (
            pred == _SAME
            and isinstance(quad.subject, ox.NamedNode)
            and isinstance(quad.object, ox.NamedNode)
        ):
            for end in (quad.object.value, quad.subject.value):
                if end in named:
                    same.setdefault(end, (quad.subject.value, quad.object.value))
                    break
        elif (
            cell is not None
            and quad.object == cell[0]
            and isinstance(quad.object, ox.BlankNode)
            and pred not in lists
            and pred not in listed
            and ranges.get(pred, ("",))[0] == "node"
        ):
            lists[pred] = (quad, cell[1])
        if pred in texts and isinstance(quad.object, ox.Literal):
            wanted = texts[pred].get(quad.object.value)
            if wanted is not None and quad.object.datatype in _TEXTS:
                if wanted[0] == tag_of(quad.object.language):
                    met.add((pred, quad.object.value))
                else:
                    retagged.setdefault((pred, quad.object.value), quad)
        closed.see(quad, path)
        shaped.see(quad, path)
        if pred == _TYPE:
            if quad.object in seen.watched:
                seen.see_type(quad)
        elif pred in seen.ranges:
            seen.see_value(quad, path)
        value = quad.object
        if (
            isinstance(value, ox.Literal)
            and ill_typed(value)
            and (pred, value.datatype) not in bad  # the first of each property and datatype
        ):
            bad.add((pred, value.datatype))
            values.append((quad, "ill-typed"))
        if (
            pred in zoned
            and pred not in zoneless
            and isinstance(value, ox.Literal)
            and value.datatype == _DATE_TIME
            and not _ZONED.fullmatch(value.value)
        ):
            zoneless[pred] = quad
        if pred in ranges:
            of = value.datatype if isinstance(value, ox.Literal) else None
            if (pred, of) not in kinds:
                kinds.add((pred, of))
                why = _wrong_value(pred, value, ranges)
                if why is not None:
                    values.append((quad, why))
        if pred not in judged:
            judged.add(pred)
            if pred.value not in named and split_iri(pred.value)[0] in spaces:
                wrong[pred.value] = ("property", _text(quad.subject))
        if pred == _TYPE:
            cls = quad.object
            if cls in _KINDS:
                own.add(_text(quad.subject))
            elif cls not in judged and isinstance(cls, ox.NamedNode):
                judged.add(cls)
                typed.add(cls.value)
                if cls.value not in named and split_iri(cls.value)[0] in spaces:
                    wrong[cls.value] = ("class", _text(quad.subject))
    terms = [t for t in wrong if t not in own]
    prefixes = dict(parser.prefixes)
    refused = closed.problems(
        path,
        term_name,
        lambda iri: written_as(iri, prefixes),
        lambda prop, mark: _line_with(path, _term_pattern(prop, prefixes), mark),
    )
    refused += shaped.problems(
        path,
        term_name,
        lambda iri: written_as(iri, prefixes),
        lambda prop, mark: _line_with(path, _term_pattern(prop, prefixes), mark),
    )
    refused += _zoneless_problems(path, zoneless, zoned, prefixes, term_name)
    refused += _list_problems(path, lists, ranges, prefixes)
    refused += _same_problems(path, same, prefixes)
    refused += _retagged_problems(
        path, {k: q for k, q in retagged.items() if k not in met}, texts, prefixes, term_name
    )
    if not terms and not values:
        return refused
    lines = first_lines(path, terms, prefixes)
    out = []
    for term in terms:
        kind, subject = wrong[term]
        name = written_as(term, prefixes)
        meant = closest_term(
            URIRef(term), map(URIRef, properties if kind == "property" else classes)
        )
        hint = (
            f"did you mean {written_as(str(meant), prefixes)}?"
            if meant is not None
            else f"declare the {kind} in the ontology, or check the spelling"
        )
        reads = (
            "so no step's pattern reads these facts"
            if kind == "property"
            else "so no step's pattern, argument or focus type matches these nodes"
        )
        out.append(
            Problem(
                "warning",
                f"the world uses the {kind} {name}, which no loaded ontology declares and no "
                f"definition names, {reads}",
                node=written_as(subject, prefixes) if subject else None,
                file=str(path),
                line=lines.get(term),
                hint=hint,
            )
        )
    return out + _value_problems(path, values, ranges, prefixes, term_name) + refused


_DATE_TIME = ox.NamedNode(str(XSD.dateTime))
_ZONED = re.compile(r".*(?:Z|[+-][0-9]{2}:[0-9]{2})\s*")


def _zoneless_problems(
    path: Path,
    zoneless: dict[ox.NamedNode, ox.Quad],
    zoned: dict[ox.NamedNode, Node],
    prefixes: dict[str, str],
    name: Callable[[Node], str],
) -> list[Problem]:
    """A warning for the first date-time with no time zone of each property a pattern
    compares with ``NOW()`` (``:r1 :parcelArrivedAt "2026-12-07T10:00:00"`` under ``FILTER
    (?t <= NOW())``): SPARQL orders the two in neither store, so the comparison never holds
    and the wait, or the rule, never does for that node."""
    out = []
    for pred, quad in zoneless.items():
        prop = written_as(pred.value, prefixes)
        text = quad.object.value if isinstance(quad.object, ox.Literal) else ""
        out.append(
            _said_at(
                path,
                quad,
                prefixes,
                f'the world gives {prop} "{text}"^^{name(XSD.dateTime)}, a date-time with no '
                f"time zone, and {name(zoned[pred])} compares {prop} with NOW(), which has one: "
                "SPARQL never orders the two, so that comparison never holds for this node",
                mark=text,
                hint=f'write "{text.strip()}Z" for UTC, or the offset it was taken in '
                f'("{text.strip()}+01:00")',
            )
        )
    return out


def _retagged_problems(
    path: Path,
    retagged: dict[tuple[ox.NamedNode, str], ox.Quad],
    texts: dict[ox.NamedNode, dict[str, tuple[str, Node]]],
    prefixes: dict[str, str],
    name: Callable[[Node], str],
) -> list[Problem]:
    """A warning for each text a pattern matches a property with that the world writes,
    for that property, only under another language tag or none."""
    out = []
    for (pred, text), quad in retagged.items():
        value = quad.object
        tag, step = texts[pred][text]
        prop = written_as(pred.value, prefixes)
        given = tag_of(value.language) if isinstance(value, ox.Literal) else ""
        quoted = json.dumps(text, ensure_ascii=False)
        world = f"{quoted}@{given}" if given else quoted
        asked = f"{quoted}@{tag}" if tag else quoted
        said = f"with the tag @{tag}" if tag else "with no language tag"
        out.append(
            _said_at(
                path,
                quad,
                prefixes,
                f"the world gives {prop} {world}, and {name(step)}'s pattern matches {prop} "
                f"with {asked}, {said}: a literal equals none of another tag or of none, so "
                "that pattern never matches this value",
                mark=text,
                hint=f"write {world} in the pattern (or FILTER (str(?v) = {quoted}) to take "
                f"any tag), or {asked} in the world",
            )
        )
    return out


def _same_problems(
    path: Path, same: dict[str, tuple[str, str]], prefixes: dict[str, str]
) -> list[Problem]:
    """A warning for the first ``owl:sameAs`` the world states of each node a definition
    names: no entailment Horismos applies derives from it (docs/entailment.md), so what the
    world says under the other name never meets a pattern naming this one."""
    out = []
    said = _said_of(path, {o if s == term else s for term, (s, o) in same.items()})
    for term, (s, o) in same.items():
        if (o if s == term else s) not in said:  # a link out (dbpedia's): nothing to miss
            continue
        named, written = written_as(term, prefixes), written_as(o if s == term else s, prefixes)
        out.append(
            Problem(
                "warning",
                f"the world says {written_as(s, prefixes)} owl:sameAs {written_as(o, prefixes)}, "
                f"and the definitions name {named}: no --entailment derives from owl:sameAs, "
                f"so a pattern naming {named} never matches what the world says of {written}",
                node=written_as(s, prefixes),
                file=str(path),
                line=_line_with(path, _term_pattern(str(OWL.sameAs), prefixes), written),
                hint=f"write {named} where the world writes {written}: one name for one node",
            )
        )
    return out


def _said_of(path: Path, others: set[str]) -> set[str]:
    """Those of ``others`` (IRIs) that ``path`` says anything of beside an ``owl:sameAs``: a
    second pass over the file, made only when the first found such a link."""
    if not others:
        return set()
    found: set[str] = set()
    for quad in ox.parse(path=path, format=file_format(path), base_iri=path.resolve().as_uri()):
        if quad.predicate == _SAME:
            continue
        for end in (quad.subject, quad.object):
            if isinstance(end, ox.NamedNode) and end.value in others:
                found.add(end.value)
        if found == others:
            break
    return found


def _list_problems(
    path: Path,
    lists: dict[ox.NamedNode, tuple[ox.Quad, object]],
    ranges: dict[ox.NamedNode, tuple[str, list[URIRef], str]],
    prefixes: dict[str, str],
) -> list[Problem]:
    """A warning for the first Turtle list given as a value of each property whose values
    are nodes (``:ada :hasRequest ( :r1 :r2 )``): the list is one node, not its members."""
    out = []
    for pred, (quad, first) in lists.items():
        prop = written_as(pred.value, prefixes)
        member = written_as(first.value, prefixes) if isinstance(first, ox.NamedNode) else "…"
        out.append(
            _said_at(
                path,
                quad,
                prefixes,
                f"the world gives {prop} a list ( {member} … ), which is one node, the list, "
                f"where its values are nodes ({ranges[pred][2]}): a pattern ?x {prop} ?v "
                "binds the list itself and never one of its members, so a step reading each "
                "member (a horis:forEach over them) finds one item, the list, and none of them",
                mark="(",
                hint=f"write the members as values of {prop}, with commas ({prop} {member}, "
                f"…), or read them with ?x {prop}/rdf:rest*/rdf:first ?v",
            )
        )
    return out


def _value_problems(
    path: Path,
    values: list[tuple[ox.Quad, URIRef | str]],
    ranges: dict[ox.NamedNode, tuple[str, list[URIRef], str]],
    prefixes: dict[str, str],
    name: Callable[[Node], str],
) -> list[Problem]:
    """A warning for each value of the wrong kind, at the first line writing its property
    with it; ``name`` writes a term as the definitions do."""
    out = []
    for quad, refused in values:
        pred, value = quad.predicate, quad.object
        prop = written_as(pred.value, prefixes)
        lexical, given = "", XSD.string
        if isinstance(value, ox.Literal):
            lexical, given = value.value, URIRef(value.datatype.value)
            shown = turtle_term(
                Literal(lexical, lang=value.language)
                if value.language
                else Literal(lexical, datatype=given),
                name,
            )
            mark = lexical
        else:
            shown = written_as(value.value, prefixes) if isinstance(value, ox.NamedNode) else "[]"
            mark = shown
        if refused == "ill-typed":
            shown = f'"{lexical}"^^{name(given)}'  # as written: rdflib's value is a guess
            why = (
                f"whose text is no value of {name(given)}: it is kept as text, and no "
                f"comparison with a value of {name(given)} holds for it"
            )
            hint = well_typed_hint(lexical, given, name)
        elif refused == "node":
            why = f"a literal, where its values are nodes ({ranges[pred][2]})"
            hint = f"write the node meant, with its prefix, or correct {prop}'s rdfs:range"
        elif refused == "literal":
            why = "a node, where its values are literals"
            hint = f"write a literal, or correct {prop}'s rdfs:range"
        else:
            why = f"a literal of {name(given)}, where its rdfs:range is {name(URIRef(refused))}"
            tagged = value.language if isinstance(value, ox.Literal) else None
            hint = literal_hint(Literal(lexical, lang=tagged or None), URIRef(refused), name)
        if refused != "ill-typed":
            why += f": a pattern matching {prop} with a value of its range never matches it"
        out.append(
            _said_at(
                path,
                quad,
                prefixes,
                f"the world gives {prop} {shown}, {why}",
                mark=mark,
                hint=hint,
            )
        )
    return out


def _said_at(
    path: Path, quad: ox.Quad, prefixes: dict[str, str], message: str, *, mark: str, hint: str
) -> Problem:
    """:func:`~._world_facts.fact_warning` of a fact of ``path``, written with its
    ``prefixes``."""
    return fact_warning(
        path,
        quad,
        lambda iri: written_as(iri, prefixes),
        lambda prop, text: _line_with(path, _term_pattern(prop, prefixes), text),
        message,
        mark=mark,
        hint=hint,
    )


def _term_pattern(term: str, prefixes: dict[str, str]) -> re.Pattern[str]:
    """How a file may write ``term``: as ``<IRI>``, or with one of its prefixes, a whole
    name (``:onDuty`` is not found in ``:onDutyFrom``)."""
    forms = [re.escape(f"<{term}>")]
    for prefix, ns in prefixes.items():
        local = term[len(ns) :] if term.startswith(ns) else ""
        if local:
            forms.append(rf"(?<![\w:.-]){re.escape(prefix)}:{re.escape(local)}(?![\w-])")
    return re.compile("|".join(forms))


def _line_with(path: Path, term: re.Pattern[str], mark: str) -> int | None:
    """The first line of ``path`` writing ``term`` and ``mark``: a pass over the file for
    each value warned of, which is one per property and kind of value."""
    with path.open(encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            if mark in line and term.search(line):
                return number
    return None


_NAMES = re.compile(r"<([^<>\s]*)>|(?<![\w:.-])([A-Za-z][\w.-]*)?:([\w-]+(?:\.+[\w-]+)*)?")
"""Each IRI or prefixed name a line of Turtle writes (``<…>``, ``ex:local``, ``:local``)."""


def first_lines(path: Path, terms: list[str], prefixes: dict[str, str]) -> dict[str, int]:
    """The first line of ``path`` writing each of ``terms``, as ``<IRI>`` or with one of the
    file's prefixes: one pass over its lines, each line's names read once and looked up
    (however many terms are sought: the world's last 150 values no level is took 3.4 s over
    5,000 patients, a search a term a line), ended once every term is found."""
    sought = set(terms)
    found: dict[str, int] = {}
    with path.open(encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            for iri, prefix, local in _NAMES.findall(line):
                ns = prefixes.get(prefix) if not iri else None
                term = iri or (ns + local if ns is not None else "")
                if term in sought and term not in found:
                    found[term] = number
            if len(found) == len(sought):
                break
    return found


def world_lines(
    paths: Iterable[str | Path],
    terms: list[str],
    *also: Callable[[Path, list[str], dict[str, str]], dict[str, int]],
) -> dict[str, tuple[str, int, dict[str, str]]]:
    """Where each of ``terms`` is first written in the world files ``paths``: the file, the
    line (:func:`first_lines`, then each locator of ``also``, whose line is kept over it) and
    the file's prefixes, which a warning writes the term with. A file that cannot be read is
    passed over: the world's pass has said why."""
    lines: dict[str, tuple[str, int, dict[str, str]]] = {}
    for path in expand_paths(paths, RDF_SUFFIXES):
        try:
            parser = ox.parse(path=path, format=ox.RdfFormat.from_extension(path.suffix[1:]))
            for _ in parser:  # its prefixes, wherever the file declares them
                pass
            prefixes = dict(parser.prefixes)
        except (OSError, SyntaxError, ValueError):
            continue
        unplaced = [t for t in terms if t not in lines]
        for locate in (first_lines, *also):
            for term, number in locate(path, unplaced, prefixes).items():
                lines[term] = (str(path), number, prefixes)
    return lines


def written_as(iri: str, prefixes: dict[str, str]) -> str:
    """``iri`` as the world file writes it: with the longest of its prefixes that fits."""
    fits = [(len(ns), p) for p, ns in prefixes.items() if iri.startswith(ns) and iri != ns]
    if fits:
        size, prefix = max(fits)
        local = iri[size:]
        if re.fullmatch(r"[\w-]+(?:\.[\w-]+)*", local):
            return f"{prefix}:{local}"
    return f"<{iri}>"


def _text(node: object) -> str:
    """A subject's IRI, or "" for a blank node (the warning then names none)."""
    return node.value if isinstance(node, ox.NamedNode) else ""
