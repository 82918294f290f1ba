"""An effect its domain shapes forbid, found at load: every call writing it would be rejected.

Why: a tool whose effect writes ``:dose`` as ``xsd:integer``, judged by a shape that requires
``sh:datatype xsd:decimal`` for ``:dose``, validated, ran, called the tool — which may have
acted — and then had its answer rejected by the gate, on every call. The loader compares what
each effect writes (a fixed value, a literal of its ``horis:type``, or a node) with the
constraints of the shapes that judge its subject (found as the gate finds them: their
``sh:targetClass`` is the subject argument's class or a superclass of it, their
``sh:targetSubjectsOf`` a property the effect writes; or the effect names them with
``horis:shape``), and reports the contradictions it can
prove without the world: a datatype, a node kind, ``sh:maxCount 0``, an ``sh:in`` that no value
the effect can write meets, an ``sh:class`` on what the effect writes as a literal, an
``sh:languageIn`` judging what carries no language tag (a node, a literal of any datatype but
``rdf:langString``). A value the effect fixes (``horis:value``) is also run through the gate's
own compiled checks of ``sh:pattern`` (with ``sh:flags``), ``sh:minLength``, ``sh:maxLength``,
the ranges, ``sh:languageIn`` and ``sh:hasValue`` (:func:`~horismos._shacl.refused_alone`), so
the loader refuses exactly what the gate would: ``horis:value "pending"`` under ``sh:pattern
"^Q-[A-Z]+-[0-9]+$"`` validated, and the gate rejected every call after the tool had acted.
``horis:value horis:now`` is a time stamp no one knows yet: it is judged by its datatype. And,
a warning, ``sh:maxCount 1`` on what it writes ``horis:many`` (a call returning one value
passes).
Constraints that depend on the world (``sh:class`` of a node, counts of values already there)
or on the values a tool returns (``sh:pattern`` of a ``horis:type``, ranges) are the gate's to
judge.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import cast

from rdflib import RDF, RDFS, XSD, Graph, Literal, URIRef
from rdflib.namespace import SH
from rdflib.term import Node

from ._compared_kinds import compared_as
from ._model import Assertion
from ._near_names import near_individual
from ._rdf_lists import list_members
from ._shacl import Targets, deactivated, refused_alone
from ._shacl_constraints import closed_allows
from ._sources import Where
from ._vocab import HORIS

__all__ = ["Contradiction", "contradictions", "one_valued", "refusing"]

_KINDS = {  # what each sh:nodeKind admits of what an effect writes: a node or a literal
    SH.IRI: {"node"},
    SH.Literal: {"literal"},
    SH.BlankNode: set(),
    SH.BlankNodeOrIRI: {"node"},
    SH.BlankNodeOrLiteral: {"literal"},
    SH.IRIOrLiteral: {"node", "literal"},
}


@dataclass(frozen=True)
class Contradiction:
    """One asserted property a shape forbids: at ``assertion`` (its ``horis:asserts`` node)."""

    assertion: Node
    message: str
    hint: str
    some_pass: bool
    """Some calls pass, so it is a warning: the tool may leave the property out
    (``horis:optional``), or return one value of a ``horis:many`` property the shape allows
    one of."""
    at: Where | None = None
    """Where the mistake is more likely written than at ``assertion``: the shape's own
    constraint (an ``sh:class`` on a property whose values are literals)."""


@dataclass(frozen=True)
class _Written:
    """What an assertion writes: a ``node`` or a ``literal`` of ``datatype``, and ``value``
    when the effect fixes it."""

    kind: str
    datatype: URIRef | None
    value: Node | None
    cls: URIRef | None = None
    """The class a node is declared of (``horis:type``): named, as it may be the mistake
    (``xsd:decimal`` under a misbound ``xsd:``, read as a class)."""

    def said(self, name: Callable[[Node], str]) -> str:
        if self.value is not None and self.value != HORIS.now:
            return _said(self.value, name)
        if self.kind == "node":
            return f"a node of {name(self.cls)}" if self.cls is not None else "a node"
        return f"a literal of {name(self.datatype)}" if self.datatype is not None else "a literal"


_PLAIN = frozenset({XSD.integer, XSD.decimal, XSD.double, XSD.boolean})  # Turtle's bare forms


def _said(term: Node, name: Callable[[Node], str]) -> str:
    """``term`` as Turtle writes it in the files: ``:queued``, ``"seen"``, ``2``."""
    if not isinstance(term, Literal):
        return name(term)
    if term.datatype in _PLAIN:
        return str(term)
    if term.datatype is not None:
        return f'"{term}"^^{name(term.datatype)}'
    return term.n3()


def _written(a: Assertion) -> _Written:
    if a.value == HORIS.now:
        return _Written("literal", XSD.dateTime, a.value)
    if isinstance(a.value, Literal):
        dt = a.value.datatype or (RDF.langString if a.value.language else XSD.string)
        return _Written("literal", dt, a.value)
    if a.value is not None:
        return _Written("node", None, a.value)
    if a.is_class:
        return _Written("node", None, None, a.type)
    return _Written("literal", a.type, None)


def _judging(
    targets: Targets, cls: URIRef, written: set[URIRef], named: Iterable[URIRef]
) -> set[Node]:
    """The shapes that judge a subject of ``cls`` the effect writes ``written`` of, as the
    gate finds them (:func:`~horismos._shacl.domain_targets`), and those it names."""
    found: set[Node] = {*named, *targets.by_class.get(cls, ())}
    for prop in written:
        found |= targets.by_subject_of.get(prop, set())
    return found


def _property_shapes(
    g: Graph, targets: Targets, cls: URIRef, written: set[URIRef], named: Iterable[URIRef]
) -> Iterator[tuple[Node, list[Node]]]:
    """Each active shape judging the effect's subject (:func:`_judging`), in a stable order,
    with its active property shapes: itself too when it is a property shape targeted
    itself."""
    for shape in sorted(_judging(targets, cls, written, named), key=str):
        if deactivated(g, shape):
            continue
        pshapes = [p for p in g.objects(shape, SH.property) if not deactivated(g, p)]
        if (shape, SH.path, None) in g:  # a property shape targeted itself
            pshapes.append(shape)
        yield shape, pshapes


@dataclass(frozen=True)
class _Forbidden:
    """What of a property shape no value can meet, in words; how to mend it; and, when the
    shape's constraint is the likelier mistake, where that is written."""

    why: str
    hint: str
    at: Where | None = None
    maybe: bool = False
    """Some values may meet it: a node of the effect's class may be of the shape's too."""


def _class_of_literal(
    g: Graph, pshape: Node, w: _Written, name: Callable[[Node], str]
) -> _Forbidden | None:
    """An ``sh:class`` judging what the effect writes as a literal: a literal is an instance
    of no class (not even ``sh:class xsd:string``), so every value fails it. The constraint is
    what is most likely wrong — the property's values are literals — so it is named there."""
    cls = g.value(pshape, SH["class"])
    if w.kind != "literal" or not isinstance(cls, URIRef):
        return None
    fix = (
        f"sh:datatype {name(w.datatype)}"
        if w.datatype is not None
        else "sh:datatype with the literal's datatype"
    )
    return _Forbidden(
        f"sh:class {name(cls)} (a node of that class; a literal is an instance of no class)",
        f"write {fix} instead of sh:class {name(cls)} in the shape, or make the effect "
        "write a node",
        (pshape, SH["class"], cls),
    )


def _one_allowed(g: Graph, pshape: Node) -> bool:
    """``sh:maxCount 1``: a ``horis:many`` property returned as a list of two fails it, and
    an ``sh:hasValue`` is then the one value the property may hold."""
    most = g.value(pshape, SH.maxCount)
    return isinstance(most, Literal) and str(most).strip() == "1"


def _constraint(g: Graph, pshape: Node, p: URIRef, name: Callable[[Node], str]) -> str:
    """``p`` of ``pshape`` as the shape writes it: ``sh:pattern "^Q-"``, ``sh:languageIn
    ("en" "fr")``, with the ``sh:flags`` a pattern is read with."""
    said = []
    for o in sorted(g.objects(pshape, p), key=str):
        items = list_members(g, o) if (o, RDF.first, None) in g else None
        said.append(
            _said(o, name) if items is None else f"({' '.join(_said(i, name) for i in items)})"
        )
    flags = g.value(pshape, SH.flags) if p == SH.pattern else None
    return f"{name(p)} {', '.join(said)}" + (f" (sh:flags {_said(flags, name)})" if flags else "")


def _untagged(
    g: Graph, pshape: Node, w: _Written, name: Callable[[Node], str]
) -> _Forbidden | None:
    """An ``sh:languageIn`` judging what the effect writes without a fixed value: only a
    language-tagged string can meet it, so a node, or a literal of ``xsd:string`` or any other
    datatype but ``rdf:langString`` (``rdfs:Literal`` admits one), is refused every time. A
    time stamp (``horis:now``) is judged so, by its datatype."""
    if (pshape, SH.languageIn, None) not in g or w.value not in (None, HORIS.now):
        return None
    if w.kind == "literal" and w.datatype in (None, RDF.langString, RDFS.Literal):
        return None
    return _Forbidden(
        f"{_constraint(g, pshape, SH.languageIn, name)} (a language-tagged string; "
        f"{w.said(name)} carries no language tag)",
        "take sh:languageIn out of the shape, or correct the effect",
    )


def _refused(g: Graph, pshape: Node, w: _Written, name: Callable[[Node], str]) -> _Forbidden | None:
    """A constraint the value the effect fixes fails, as the gate's compiled check judges it
    (:func:`~horismos._shacl.refused_alone`). ``sh:hasValue`` only where the shape allows one
    value at most (``sh:maxCount 1``): else the world may hold the value required beside it."""
    if w.value == HORIS.now:
        return _refused_stamp(g, pshape, name)
    if w.value is None:
        return None
    one = _one_allowed(g, pshape)
    for p in refused_alone(g, pshape, w.value):
        if p != SH.hasValue or one:
            return _Forbidden(
                _constraint(g, pshape, p, name)
                + (" with sh:maxCount 1" if p == SH.hasValue else ""),
                "write a horis:value that meets it, or correct the shape",
            )
    return None


@functools.cache
def _stamps() -> tuple[Literal, ...]:
    """What ``horis:now`` writes, as the runtime makes it (``env.now().isoformat()`` in UTC):
    with the microseconds, and on a whole second without them. Made when first asked, not at
    import: a literal built then casts through rdflib's mappings, which ``import horismos``
    must not need (tests/test_stores.py)."""
    return tuple(
        Literal(at.isoformat(), datatype=XSD.dateTime)
        for at in (
            dt.datetime(2026, 12, 7, 10, 0, 0, 123456, tzinfo=dt.UTC),
            dt.datetime(2026, 12, 7, 10, 0, 0, tzinfo=dt.UTC),
        )
    )


_STAMP_TEXT = (SH.pattern, SH.minLength, SH.maxLength)
"""The constraints on a stamp's text: its bounds hang on when the call is made, not judged."""


def _refused_stamp(g: Graph, pshape: Node, name: Callable[[Node], str]) -> _Forbidden | None:
    """A constraint on its text that every time stamp ``horis:now`` writes fails, judged by the
    gate's compiled check (``sh:pattern "Z$"``: the clock writes ``+00:00``). Why: it validated,
    and every call acted and landed nothing."""
    first, *others = _stamps()
    refused = set(refused_alone(g, pshape, first, _STAMP_TEXT))
    for stamp in others:
        refused &= set(refused_alone(g, pshape, stamp, _STAMP_TEXT))
    p = next((p for p in _STAMP_TEXT if p in refused), None)
    if p is None:
        return None
    return _Forbidden(
        _constraint(g, pshape, p, name),
        f'horis:now writes the time of the call in UTC as "{first}" (an offset, not Z; '
        f"the fraction left out on a whole second): write a {name(p)} that matches it, or drop "
        f"the {name(p)}",
    )


def _forbids(
    g: Graph,
    pshape: Node,
    w: _Written,
    name: Callable[[Node], str],
    misspelt: Callable[[Node], bool] = lambda _: False,
    unheld: Callable[[Node], bool] = lambda _: False,
    misled: Callable[[Node], bool] = lambda _: False,
    depth: int = 0,
) -> _Forbidden | None:
    """What of ``pshape`` no value ``w`` can meet; or None (``depth``: how many logical
    constraints led here, :func:`_logical`). A ``sh:datatype`` that is
    ``misspelt`` (``xsd:strng``, said at the shape with the datatype meant) is no datatype to
    hold the effect to: the hint would have the effect copy the typo. One that is ``unheld``
    (``:RefCode``, declared nowhere) still rejects every value, but is corrected in the
    shape: the effect told to write it would write a literal nothing declares. A property
    shape whose ``sh:in`` is ``misled`` (lists values of the other kind than its property's,
    said at the shape) is not held against the effect either: that is one mistake, the
    shape's."""
    either = "make the effect write what the shape allows, or correct the shape"
    dt = g.value(pshape, SH.datatype)
    if isinstance(dt, URIRef) and not misspelt(dt):
        if w.kind == "node":
            return _Forbidden(f"sh:datatype {name(dt)} (a literal)", either)
        if w.datatype is not None and w.datatype != dt:
            if unheld(dt):
                hint = (
                    f"write sh:datatype {name(w.datatype)} in the shape: {name(dt)} is no "
                    f"datatype the files declare (or declare it: {name(dt)} a rdfs:Datatype)"
                )
            elif w.value == HORIS.now:  # the run's clock: it writes a date-time, nothing else
                hint = (
                    f"write sh:datatype {name(w.datatype)} in the shape: horis:now writes the "
                    f"time of the call as {name(w.datatype)}"
                )
            else:
                fix = (
                    f"write horis:type {name(dt)} in the effect"
                    if w.value is None
                    else f"write a horis:value of {name(dt)}"
                )
                hint = f"{fix}, or sh:datatype {name(w.datatype)} in the shape"
            return _Forbidden(f"sh:datatype {name(dt)}", hint)
    kind = g.value(pshape, SH.nodeKind)
    if isinstance(kind, URIRef) and w.kind not in _KINDS.get(kind, {w.kind}):
        return _Forbidden(f"sh:nodeKind {name(kind)}", either)
    most = g.value(pshape, SH.maxCount)
    if isinstance(most, Literal) and str(most).strip() == "0":
        return _Forbidden("sh:maxCount 0", "drop the property from the effect, or the constraint")
    members = g.value(pshape, SH["in"])
    if members is not None and misled(pshape):
        members = None
    allowed = list_members(g, members) if members is not None else []
    # sh:in ( ), or a list with members: a broken one reads as none, and the shape checks say so
    if members == RDF.nil or allowed:
        shown = "sh:in (" + " ".join(_said(m, name) for m in allowed) + ")"
        if w.value is not None and w.value != HORIS.now:
            if w.value not in allowed:
                slip = next(
                    (
                        m
                        for m in allowed
                        if isinstance(m, URIRef)
                        and isinstance(w.value, URIRef)
                        and near_individual(m, [w.value]) is not None
                    ),
                    None,
                )  # the list's member misspelt (:Rejectd for :Rejected), not the effect's
                return _Forbidden(
                    shown,
                    f"correct {name(slip)} in the list to {w.said(name)}, or write another "
                    "of the listed values"
                    if slip is not None
                    else f"write one of the listed values, or add {w.said(name)} to the list",
                )
        else:
            fits = (
                any(isinstance(m, URIRef) for m in allowed)
                if w.kind == "node"
                else any(
                    isinstance(m, Literal) and (m.datatype or XSD.string) == w.datatype
                    for m in allowed
                )
            )
            if not fits:
                return _Forbidden(shown, either)
    return (
        _refused(g, pshape, w, name)
        or _untagged(g, pshape, w, name)
        or _class_of_literal(g, pshape, w, name)
        or _unrelated_class(g, pshape, w, name)
        or _logical(
            g,
            pshape,
            w,
            name,
            lambda m: _forbids(g, m, w, name, misspelt, unheld, misled, depth + 1),
            depth,
        )
    )


_DEPTH = 8
"""How deep :func:`_logical` follows ``sh:and``/``sh:or``/``sh:node`` inside each other: a
shape naming itself through them is not followed round for ever."""

_SAYS_NOTHING = frozenset({SH.message, SH.name, SH.description, SH.severity, SH.order, SH.group})


def _members(g: Graph, shape: Node, p: URIRef) -> list[Node]:
    return [m for lst in g.objects(shape, p) for m in list_members(g, lst)]


def _admits_every(g: Graph, shape: Node, w: _Written, name: Callable[[Node], str]) -> str | None:
    """``shape``'s one or two constraints, in words, when they are ``sh:datatype`` and
    ``sh:nodeKind`` only and every value ``w`` can be meets them (``sh:datatype xsd:string``
    for an effect writing ``xsd:string``); else None. Under ``sh:not`` such a shape refuses
    every value."""
    said = {p for p in g.predicates(shape, None) if str(p).startswith(str(SH))}
    if not said or said - _SAYS_NOTHING - {SH.datatype, SH.nodeKind}:
        return None
    dt, kind = g.value(shape, SH.datatype), g.value(shape, SH.nodeKind)
    if dt is None and kind is None:
        return None
    if dt is not None and (w.kind != "literal" or w.datatype != dt):
        return None
    if kind is not None and w.kind not in _KINDS.get(cast(URIRef, kind), set()):
        return None
    return " ; ".join(
        f"{p} {name(o)}" for p, o in (("sh:datatype", dt), ("sh:nodeKind", kind)) if o is not None
    )


def _logical(
    g: Graph,
    pshape: Node,
    w: _Written,
    name: Callable[[Node], str],
    forbids: Callable[[Node], _Forbidden | None],
    depth: int = 0,
) -> _Forbidden | None:
    """What of ``pshape``'s ``sh:and``, ``sh:or``, ``sh:xone``, ``sh:not`` and ``sh:node``
    no value ``w`` can meet, each member judged as the value's own shape is (``forbids``):
    a member of ``sh:and`` or the shape of ``sh:node`` that refuses it; ``sh:or`` or
    ``sh:xone`` every member of which does; a ``sh:not`` of a datatype or node kind every
    value meets. Why: ``sh:or ( [ sh:datatype xsd:integer ] [ sh:class :Supplier ] )`` on the
    payment reference a payout writes as ``xsd:string`` validated, and the gate rejected the
    answer of every payout after it had paid. A member with a ``sh:path`` asks about the value's
    own properties, which the loader cannot see: it may hold, and is not judged."""
    if depth > _DEPTH:
        return None

    def judged(member: Node) -> _Forbidden | None:
        if (member, SH.path, None) in g or deactivated(g, member):
            return None
        return forbids(member)  # its own logical constraints too, a level deeper

    said = w.said(name)
    for member in _members(g, pshape, SH["and"]):
        found = judged(member)
        if found is not None and not found.maybe:
            return _Forbidden(f"sh:and (…) with a member requiring {found.why}", found.hint)
    for member in g.objects(pshape, SH.node):
        found = judged(member)
        if found is not None and not found.maybe:
            return _Forbidden(
                f"sh:node {name(member)}, whose shape requires {found.why}",
                f"make the effect write what {name(member)} allows, or correct it",
            )
    for p in (SH["or"], SH.xone):
        members = _members(g, pshape, p)
        refusals = [judged(m) for m in members]
        if members and all(r is not None for r in refusals):
            whys = "; ".join(cast(_Forbidden, r).why for r in refusals)
            return _Forbidden(
                f"{name(p)} (…), and each of its members refuses {said} ({whys})",
                f"make the effect write what one member of {name(p)} allows, or add a member "
                "that allows it",
                maybe=any(cast(_Forbidden, r).maybe for r in refusals),
            )
    for member in g.objects(pshape, SH["not"]):
        if (member, SH.path, None) in g:
            continue
        met = _admits_every(g, member, w, name)
        if met is not None:
            return _Forbidden(
                f"sh:not [ {met} ], which {said} always meets",
                "take the sh:not out of the shape, or make the effect write what it allows",
            )
    return None


def _unrelated_class(
    g: Graph, pshape: Node, w: _Written, name: Callable[[Node], str]
) -> _Forbidden | None:
    """An ``sh:class`` judging a node the effect declares of a class neither it nor a
    subclass of it is (``horis:type :Book`` under ``sh:class :Genre``): the gate takes the
    node only if the world also types it of the shape's class, which a book seldom is. A
    warning (``maybe``): a node may be of two unrelated classes."""
    cls = g.value(pshape, SH["class"])
    if w.kind != "node" or w.value is not None or w.cls is None or not isinstance(cls, URIRef):
        return None
    if cls in g.transitive_objects(w.cls, RDFS.subClassOf) or w.cls in g.transitive_objects(
        cls, RDFS.subClassOf
    ):
        return None
    return _Forbidden(
        f"sh:class {name(cls)}, a class {name(w.cls)} is unrelated to (unless the world types "
        f"each value of both)",
        f"write horis:type {name(cls)} in the effect, or sh:class {name(w.cls)} in the shape",
        maybe=True,
    )


def contradictions(
    g: Graph,
    tool: str,
    asserts: list[tuple[Node, Assertion]],
    targets: Targets,
    cls: URIRef,
    named: Iterable[URIRef],
    name: Callable[[Node], str],
    misspelt: Callable[[Node], bool] = lambda _: False,
    unheld: Callable[[Node], bool] = lambda _: False,
    misled: Callable[[Node], bool] = lambda _: False,
) -> list[Contradiction]:
    """Each of ``asserts`` (``(node, assertion)``) a shape judging the effect's subject
    forbids: a node of ``cls`` (its argument's class), judged by the domain shapes
    ``targets`` finds and by ``named`` (the effect's ``horis:shape``s). A ``sh:datatype``
    that is ``unheld`` (declared nowhere) is the shape's to correct, not the effect's."""
    written = {a.property for _, a in asserts}
    found = []
    for shape, pshapes in _property_shapes(g, targets, cls, written, named):
        found += _closed_out(g, tool, shape, asserts, name)
        for pshape in pshapes:
            path = g.value(pshape, SH.path)
            for node, a in asserts:
                if a.property != path:
                    continue
                w = _written(a)
                forbidden = _forbids(g, pshape, w, name, misspelt, unheld, misled)
                if forbidden is None and a.many and _one_allowed(g, pshape):
                    found.append(
                        Contradiction(
                            node,
                            f"the effect writes {name(a.property)} as horis:many (a list of "
                            f"values), but shape {name(shape)} allows one (sh:maxCount 1): the "
                            f"gate would reject every call of {tool} that returns more than "
                            "one, after the tool has acted",
                            "drop horis:many if the tool returns one value, or raise "
                            f"sh:maxCount for {name(a.property)} in the shape",
                            True,
                        )
                    )
                found += _unordered(g, tool, shape, pshape, a, asserts, name)
                if forbidden is None:
                    continue
                found.append(
                    Contradiction(
                        node,
                        f"the effect writes {name(a.property)} as {w.said(name)}, but shape "
                        f"{name(shape)} requires {forbidden.why}: the gate would reject every "
                        f"call of {tool} that writes it, after the tool has acted",
                        forbidden.hint,
                        a.optional or forbidden.maybe,
                        forbidden.at,
                    )
                )
    return found


def _unordered(
    g: Graph,
    tool: str,
    shape: Node,
    pshape: Node,
    a: Assertion,
    asserts: list[tuple[Node, Assertion]],
    name: Callable[[Node], str],
) -> list[Contradiction]:
    """``sh:lessThan`` (``sh:lessThanOrEquals``) between two properties one effect writes,
    whose values are never ordered: a node, or literals of two families SPARQL never compares
    (a date or time and a string, a number and a boolean). Why: ``sh:path :enrolledAt ;
    sh:lessThan :enrolmentId`` (``:enrolmentExpires`` meant) validated, and the gate rejected
    every enrolment after the tool had enrolled the patient, saying the time stamp was not less
    than the reference. Only two properties the same effect writes are judged: the other's
    values may not be there otherwise, and a shape holds where they are not."""
    found = []
    for p in (SH.lessThan, SH.lessThanOrEquals):
        for other in g.objects(pshape, p):
            for node, b in asserts:
                if b.property != other or b is a:
                    continue
                wa, wb = _written(a), _written(b)
                fa = "a node" if wa.kind == "node" else compared_as(wa.datatype)
                fb = "a node" if wb.kind == "node" else compared_as(wb.datatype)
                if fa is None or fb is None or (fa == fb and fa != "a node"):
                    continue
                why = (
                    "a node is never ordered"
                    if "a node" in (fa, fb)
                    else f"{fa} and {fb} are never ordered"
                )
                found.append(
                    Contradiction(
                        node,
                        f"the effect writes {name(a.property)} as {wa.said(name)} and "
                        f"{name(b.property)} as {wb.said(name)}, but shape {name(shape)} "
                        f"requires {name(a.property)} {name(p)} {name(b.property)}, and "
                        f"{why}: the gate would reject every call of {tool} that writes "
                        "them, after the tool has acted",
                        f"compare {name(a.property)} with a property of its kind in "
                        f"{name(p)}, or drop the {name(p)}",
                        a.optional or b.optional,
                        (pshape, p, other),
                    )
                )
    return found


def one_valued(
    g: Graph, targets: Targets, cls: URIRef, written: set[URIRef], named: Iterable[URIRef]
) -> set[URIRef]:
    """Those of ``written`` (properties an effect writes on a node of ``cls``) that a domain
    shape judging that node allows one value of (``sh:maxCount 1``), found as
    :func:`contradictions` finds the shapes."""
    found = set()
    for _, pshapes in _property_shapes(g, targets, cls, written, named):
        for pshape in pshapes:
            path = g.value(pshape, SH.path)
            if path in written and _one_allowed(g, pshape):
                found.add(cast(URIRef, path))
    return found


def _closed_out(
    g: Graph,
    tool: str,
    shape: Node,
    asserts: list[tuple[Node, Assertion]],
    name: Callable[[Node], str],
) -> list[Contradiction]:
    """Each of ``asserts`` a ``sh:closed true`` ``shape`` does not allow: no ``sh:property``
    of it has the property as its ``sh:path``, nor do its ``sh:ignoredProperties`` list it
    (as the gate's closed check reads them, deactivated property shapes too). The shape is
    the likelier mistake (``:renewedAt``, the time stamp, left out of the list), so it is said
    at its ``sh:closed``."""
    allowed = closed_allows(g, shape)
    if allowed is None:
        return []
    flag = g.value(shape, SH.closed)
    return [
        Contradiction(
            node,
            f"the effect writes {name(a.property)} as {_written(a).said(name)}, but shape "
            f"{name(shape)} requires only the properties its sh:property shapes name (sh:closed "
            f"true), and none names {name(a.property)}: the gate would reject every call of "
            f"{tool} that writes it, after the tool has acted",
            f"add sh:property [ sh:path {name(a.property)} ] to shape {name(shape)} (or list "
            f"it in its sh:ignoredProperties), or drop {name(a.property)} from the effect",
            a.optional,
            (shape, SH.closed, flag),
        )
        for node, a in asserts
        if a.property not in allowed
    ]


def refusing(
    g: Graph,
    pshape: Node,
    value: Node,
    name: Callable[[Node], str],
    misspelt: Callable[[Node], bool] = lambda _: False,
    unheld: Callable[[Node], bool] = lambda _: False,
    misled: Callable[[Node], bool] = lambda _: False,
) -> str | None:
    """What of property shape ``pshape`` refuses ``value`` as its path's one value (a fact a
    person's answer would give: :mod:`._refused_answers`), in words; or None. Judged as a value
    an effect fixes is, so the loader and the gate cannot disagree."""
    if isinstance(value, Literal):
        dt = value.datatype or (RDF.langString if value.language else XSD.string)
        w = _Written("literal", dt, value)
    else:
        w = _Written("node", None, value)
    forbidden = _forbids(g, pshape, w, name, misspelt, unheld, misled)
    return None if forbidden is None else forbidden.why
