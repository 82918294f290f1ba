"""A property written where a class goes, or a class where a property goes.

Both are declared, so the undeclared-term checks pass them: ``horis:type :acuity`` on an
argument (the property, for its range ``:AcuityLevel``) refused every call ("must be a node of
class :acuity"); ``horis:focusType :value`` ran no instance and exited 0; ``horis:property
:Patient`` on an assertion made the gate reject every answer after the tool had acted; ``?nurse
a :onDuty`` or ``?this :Patient ?ref`` in a pattern never matched, and the step was blocked
after the steps before it had acted. The ontology says which each term is, so the loader says
so before anything runs.

A term counts as a class when the files declare it one (``owl:Class``, ``rdfs:Class``,
``rdfs:subClassOf``) and as a property when they declare it one (a property type,
``rdfs:domain``, ``rdfs:range``, ``rdfs:subPropertyOf``); one declared as both (OWL 2
punning) or as neither is not judged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Literal

from rdflib import OWL, RDF, RDFS, XSD, Graph, URIRef, Variable
from rdflib import Literal as RDFLiteral
from rdflib.paths import AlternativePath, InvPath, MulPath, NegatedPath, Path, SequencePath

__all__ = [
    "Kind",
    "algebra_literals",
    "algebra_parts",
    "algebra_triples",
    "blocks",
    "declared_property",
    "expression_nodes",
    "kind_against_range",
    "kind_clashes",
    "negated_reads",
    "path_terms",
    "pattern_nodes",
    "pattern_terms",
    "pattern_variables",
    "range_class",
    "read_terms",
    "term_kind",
    "unbound_optionals",
    "value_kinds",
]

Kind = Literal["class", "property"]

_CLASS_TYPES = (OWL.Class, RDFS.Class)
_PROPERTY_TYPES = (
    RDF.Property,
    OWL.ObjectProperty,
    OWL.DatatypeProperty,
    OWL.AnnotationProperty,
    OWL.FunctionalProperty,
    OWL.TransitiveProperty,
    OWL.SymmetricProperty,
)


def _typed_class(g: Graph, term: URIRef) -> bool:
    return any((term, RDF.type, t) in g for t in _CLASS_TYPES)


def _said_property(g: Graph, term: URIRef) -> bool:
    """Declared a property: a property type, a domain, a range or a superproperty."""
    return any((term, RDF.type, t) in g for t in _PROPERTY_TYPES) or any(
        (term, p, None) in g for p in (RDFS.domain, RDFS.range, RDFS.subPropertyOf)
    )


def term_kind(g: Graph, term: URIRef) -> Kind | None:
    """What the files declare ``term`` to be, when they declare it one thing only."""
    is_class = _typed_class(g, term) or (term, RDFS.subClassOf, None) in g
    is_property = _said_property(g, term)
    if is_class == is_property:
        return None
    return "class" if is_class else "property"


def declared_property(g: Graph, term: URIRef) -> bool:
    """Whether the files declare ``term`` a property (a property type, a domain, a range or
    a superproperty) and no class type, whatever ``rdfs:subClassOf`` it is given: the slip
    of one written under another property with ``rdfs:subClassOf``."""
    return not _typed_class(g, term) and _said_property(g, term)


def range_class(g: Graph, prop: URIRef) -> URIRef | None:
    """The one class ``prop``'s ``rdfs:range`` names, if it names one: what a modeler who
    wrote the property for a class most likely meant."""
    found = [r for r in g.objects(prop, RDFS.range) if isinstance(r, URIRef)]
    classes = [r for r in found if term_kind(g, r) == "class"]
    return classes[0] if len(classes) == 1 else None


def pattern_variables(algebra: Any) -> set[str]:
    """The names of every variable a parsed pattern writes, inside its ``FILTER NOT EXISTS``
    groups too: what a variable suggested to add to it must not be named."""
    return {str(x) for x in algebra_parts(algebra) if isinstance(x, Variable)}


def algebra_parts(algebra: Any) -> Iterator[Any]:
    """Every part of a parsed pattern (its expressions, groups, triples and their terms),
    ``FILTER NOT EXISTS`` groups included, in no particular order."""
    stack = [algebra]
    while stack:
        x = stack.pop()
        yield x
        if isinstance(x, Mapping):
            stack.extend(x.values())
        elif isinstance(x, list | tuple | set | frozenset):
            stack.extend(x)


def algebra_triples(algebra: Any) -> Iterator[tuple[Any, URIRef, Any]]:
    """Every triple pattern with an IRI predicate in a parsed pattern, ``FILTER NOT EXISTS``
    groups included, in no particular order. An ``EXISTS`` group is kept as parsed, its
    triples written flat (``s p o s p o …``) in a ``TriplesBlock``: they are cut in threes."""
    for x in algebra_parts(algebra):
        if getattr(x, "name", None) == "TriplesBlock":
            for flat in x.triples:
                for i in range(0, len(flat) - 2, 3):
                    if isinstance(flat[i + 1], URIRef):
                        yield flat[i], flat[i + 1], flat[i + 2]
        elif isinstance(x, tuple) and len(x) == 3 and isinstance(x[1], URIRef):
            yield x


def read_terms(algebra: Any) -> set[URIRef] | None:
    """The predicates a parsed pattern reads, and the classes it tests with ``a``,
    ``FILTER NOT EXISTS`` groups included; None when that cannot be told (a variable
    predicate or class, a property path)."""
    for x in algebra_parts(algebra):
        if isinstance(x, Path):
            return None
        if getattr(x, "name", None) == "TriplesBlock":
            for flat in x.triples:
                if any(not isinstance(flat[i + 1], URIRef) for i in range(0, len(flat) - 2, 3)):
                    return None
        elif isinstance(x, tuple) and len(x) == 3 and isinstance(x[1], Variable):
            return None
    read: set[URIRef] = set()
    for _, p, o in algebra_triples(algebra):
        if p != RDF.type:
            read.add(p)
        elif isinstance(o, URIRef):
            read.add(o)
        else:
            return None
    return read


def gating_reads(algebra: Any) -> set[URIRef] | None:
    """:func:`read_terms` of what can stop a parsed pattern from holding: an ``OPTIONAL`` none
    of whose own variables is read outside it (by a ``FILTER``, a ``BIND``, a triple) never
    does — ``OPTIONAL { ?this :paidRef ?ref . BIND(CONCAT("paid: ", ?ref) AS ?note) }`` holds
    before the payment and after it alike — so what it reads is left out. One whose variable a
    ``FILTER (!BOUND(?t))`` tests is kept: that is a guard."""
    drop = _ungating_optionals(algebra)
    return read_terms(_without_optionals(algebra, drop) if drop else algebra)


def always_holds(algebra: Any) -> bool:
    """Whether a parsed pattern has a solution whatever the world holds: nothing in it can
    fail once the ``OPTIONAL`` groups that never do (:func:`gating_reads`) are left out — no
    triple, no ``FILTER``, ``MINUS``, ``VALUES``, ``GRAPH`` or subquery; only ``BIND``s.
    ``OPTIONAL { ?this :managerApproved ?ok }`` as a wait's until holds at once."""
    drop = _ungating_optionals(algebra)
    pruned = _without_optionals(algebra, drop) if drop else algebra
    for x in algebra_parts(pruned):
        if isinstance(x, Path) or getattr(x, "name", None) in _MAY_FAIL:
            return False
    return next(iter(algebra_triples(pruned)), None) is None


_MAY_FAIL = frozenset(
    {"Filter", "Minus", "LeftJoin", "values", "ToMultiSet", "Graph", "SubSelect", "Group"}
)
"""Parts of a parsed pattern that may leave it without a solution (a ``LeftJoin`` kept is
an ``OPTIONAL`` whose variables the rest reads)."""


_NOT_TERMS = ("_vars", "PV")
"""Keys of a parsed pattern that list variables without reading them."""


def _variables(x: Any, skip: Iterable[int] = ()) -> set[Variable]:
    """The variables ``x`` mentions, outside the parts whose ids are in ``skip``."""
    skipped = set(skip)
    found: set[Variable] = set()
    stack = [x]
    while stack:
        y = stack.pop()
        if isinstance(y, Variable):
            found.add(y)
        elif id(y) in skipped:
            continue
        elif isinstance(y, Mapping):
            stack.extend(v for k, v in y.items() if k not in _NOT_TERMS)
        elif isinstance(y, list | tuple | set | frozenset):
            stack.extend(y)
    return found


def _ungating_optionals(algebra: Any) -> set[int]:
    """The ids of the ``OPTIONAL`` (``LeftJoin``) nodes of ``algebra`` none of whose own
    variables (those its optional part binds that the part before it does not) the rest of
    the pattern mentions: they never make it fail."""
    found: set[int] = set()
    for x in algebra_parts(algebra):
        if getattr(x, "name", None) != "LeftJoin":
            continue
        own = _variables(x.p2) - _variables(x.p1)
        rest = _variables(algebra, (id(x.p2), id(x.get("expr"))))
        if not own & rest:
            found.add(id(x))
    return found


def _without_optionals(x: Any, drop: set[int]) -> Any:
    """``x`` with each ``LeftJoin`` whose id is in ``drop`` replaced by the part before it."""
    from rdflib.plugins.sparql.parserutils import CompValue

    if isinstance(x, CompValue):
        if id(x) in drop:
            return _without_optionals(x.p1, drop)
        copy = CompValue(x.name)
        for key, value in x.items():
            copy[key] = _without_optionals(value, drop)
        return copy
    if isinstance(x, list | tuple):
        return type(x)(_without_optionals(y, drop) for y in x)
    return x


_UNGATING = frozenset(
    {"Union", "Builtin_EXISTS", "ConditionalOrExpression", "UnaryNot", "Builtin_IF"}
)
"""Parts of a parsed pattern whose negations need not hold for it to: a branch of a UNION or
an OR, a negation negated again, an IF's arms. An OPTIONAL's group and filter are the other."""


def negated_reads(algebra: Any) -> set[URIRef]:
    """The predicates (and classes tested with ``a``) a parsed pattern holds only where the
    world lacks them: read in a ``FILTER NOT EXISTS`` (or ``!EXISTS``) or a ``MINUS`` that
    every solution passes (not inside an ``OPTIONAL``, a ``UNION``, an ``||``, another ``!``,
    a ``BIND``), or in an ``OPTIONAL`` whose variable the group's ``FILTER (!BOUND(?v))``
    requires unbound (:func:`_unbound_optional_reads`). A negated group whose reads cannot be
    told (:func:`read_terms`) counts for none."""
    found: set[URIRef] = set()
    stack = [algebra]
    while stack:
        x = stack.pop()
        name = getattr(x, "name", None)
        negated = x.expr if name == "UnaryNot" else None  # FILTER (!EXISTS { … })
        if negated is not None and getattr(negated, "name", None) == "Builtin_EXISTS":
            found |= read_terms(negated.graph) or set()
        elif name in _UNGATING:
            continue
        elif name == "Builtin_NOTEXISTS":
            found |= read_terms(x.graph) or set()
        elif name == "Minus":
            found |= read_terms(x.p2) or set()
            stack.append(x.p1)
        elif name == "LeftJoin":
            stack.append(x.p1)
        elif name == "Extend":
            stack.append(x.p)
        elif name == "Filter":
            found |= _unbound_optional_reads(x.expr, x.p)
            stack.extend((x.expr, x.p))
        elif isinstance(x, Mapping):
            stack.extend(x.values())
        elif isinstance(x, list | tuple):
            stack.extend(x)
    return found


def _unbound_optional_reads(expr: Any, group: Any) -> set[URIRef]:
    """What :func:`unbound_optionals` of ``expr`` and ``group`` read."""
    found: set[URIRef] = set()
    for optional in unbound_optionals(expr, group):
        found |= read_terms(optional) or set()
    return found


def unbound_optionals(expr: Any, group: Any) -> list[Any]:
    """The OPTIONAL groups the SPARQL 1.0 idiom for "not yet" reads, of a FILTER's ``expr``
    over its ``group``: ``OPTIONAL { ?this :paidAt ?t } FILTER
    (!BOUND(?t))`` holds only where the world lacks what the OPTIONAL reads, as ``FILTER NOT
    EXISTS { ?this :paidAt ?t }`` does. Only when the ``!BOUND`` is the group's FILTER (or one
    of its ``&&``) and its variable is bound by that one OPTIONAL of the group's top level and
    by nothing else there (another OPTIONAL, a triple, a BIND, a VALUES): bound elsewhere, an
    unbound ``?t`` no longer says the OPTIONAL found nothing."""
    conjuncts = (
        [expr.expr, *expr.other]
        if getattr(expr, "name", None) == "ConditionalAndExpression"
        else [expr]
    )
    unbound = {
        c.expr.arg
        for c in conjuncts
        if getattr(c, "name", None) == "UnaryNot"
        and getattr(c.expr, "name", None) == "Builtin_BOUND"
        and isinstance(c.expr.arg, Variable)
    }
    if not unbound:
        return []
    optionals: list[Any] = []
    bound_elsewhere: set[Variable] = set()
    stack = [group]
    while stack:  # the group's top level: its OPTIONALs, and what else binds there
        x = stack.pop()
        name = getattr(x, "name", None)
        if name == "LeftJoin":
            optionals.append(x.p2)
            stack.append(x.p1)
        elif name == "Join":
            stack.extend((x.p1, x.p2))
        elif name == "Minus":
            stack.append(x.p1)
        elif name == "Extend":
            bound_elsewhere.add(x.var)
            stack.append(x.p)
        elif name == "ToMultiSet":  # a VALUES (its rows name what they bind) or a subquery
            bound_elsewhere |= {v for row in getattr(x.p, "res", None) or () for v in row}
            bound_elsewhere |= {*(getattr(x, "_vars", None) or ()), *(x.p.get("PV") or ())}
        else:
            bound_elsewhere |= set(getattr(x, "_vars", None) or ())
    found: list[Any] = []
    for var in sorted(unbound - bound_elsewhere):
        binding = [o for o in optionals if var in (getattr(o, "_vars", None) or ())]
        if len(binding) == 1:
            found.append(binding[0])
    return found


def algebra_literals(algebra: Any) -> set[RDFLiteral]:
    """Every literal a parsed pattern writes: in a triple pattern, a FILTER, a BIND or a
    VALUES."""
    return {x for x in algebra_parts(algebra) if isinstance(x, RDFLiteral)}


def pattern_terms(algebra: Any) -> Iterator[tuple[URIRef, Kind]]:
    """The terms a parsed pattern uses as a property (an IRI predicate) or as a class (the
    object of ``a``), in no particular order."""
    for _, p, o in algebra_triples(algebra):
        if p != RDF.type:
            yield p, "property"
        elif isinstance(o, URIRef):
            yield o, "class"


def path_terms(algebra: Any) -> Iterator[tuple[URIRef, Kind]]:
    """The terms the property paths of a parsed pattern use (``FILTER NOT EXISTS`` groups
    included): each IRI of a path as a property, and the object of a class test written as
    a path (``?c a/rdfs:subClassOf* :Clinician``) as a class. Why: :func:`algebra_triples`
    keeps only IRI predicates, so a misspelt ``:assignedNurse/:onDutyy``, ``^:onDutyy`` or
    ``:acutiy*`` was never held to the ontology, and the pattern never matched."""
    for x in algebra_parts(algebra):
        if getattr(x, "name", None) == "TriplesBlock":
            found = [
                (flat[i + 1], flat[i + 2]) for flat in x.triples for i in range(0, len(flat) - 2, 3)
            ]
        elif isinstance(x, tuple) and len(x) == 3:
            found = [(x[1], x[2])]
        else:
            continue
        for path, o in found:
            if not isinstance(path, Path):
                continue
            for iri in _path_iris(path):
                yield iri, "property"
            if isinstance(o, URIRef) and _is_class_test(path):
                yield o, "class"


def _path_iris(path: Any) -> Iterator[URIRef]:
    """Every IRI a property path names, in sequences, alternatives, inverses, repetitions
    and negated sets."""
    if isinstance(path, URIRef):
        yield path
    elif isinstance(path, SequencePath | AlternativePath | NegatedPath):
        for arg in path.args:
            yield from _path_iris(arg)
    elif isinstance(path, InvPath):
        yield from _path_iris(path.arg)
    elif isinstance(path, MulPath):
        yield from _path_iris(path.path)


def _is_class_test(path: Any) -> bool:
    """``a/rdfs:subClassOf*`` (or ``+``, or a plain ``rdfs:subClassOf`` step): its object is a
    class."""
    if not isinstance(path, SequencePath) or not path.args or path.args[0] != RDF.type:
        return False
    return all(
        (isinstance(arg, MulPath) and arg.path == RDFS.subClassOf) or arg == RDFS.subClassOf
        for arg in path.args[1:]
    )


def pattern_nodes(algebra: Any) -> set[URIRef]:
    """The IRIs a parsed pattern names as a node (a subject, or an object other than a
    class of ``a``), ``FILTER NOT EXISTS`` groups included: mostly individuals
    (``:urgent``), which world data holds."""
    found: set[URIRef] = set()
    for s, p, o in algebra_triples(algebra):
        found.update(t for t in (s, None if p == RDF.type else o) if isinstance(t, URIRef))
    return found


def expression_nodes(algebra: Any) -> set[URIRef]:
    """The IRIs a parsed pattern names outside its triples: a ``BIND``'s, a ``VALUES``
    row's, a ``FILTER``'s (not a function's own IRI, ``xsd:integer(?x)``). Why:
    ``BIND(:SEV0 AS ?level)`` where the ontology declares ``:SEV1``…``:SEV3`` gave every
    call a node nothing holds, refused at the step after the steps before it had acted, and
    no check of the pattern's nodes saw it."""
    found: set[URIRef] = set()
    stack: list[Any] = [algebra]
    while stack:
        x = stack.pop()
        name = getattr(x, "name", None)
        if name == "BGP":
            continue
        if name in ("Extend", "Filter"):
            stack.append(x.get("p"))
            stack.append(_Expression(x.get("expr")))
        elif name == "values":
            found.update(
                v for row in x.get("res") or () for v in row.values() if isinstance(v, URIRef)
            )
        elif isinstance(x, _Expression):
            e = x.expr
            if isinstance(e, URIRef):
                found.add(e)
            elif getattr(e, "name", None) in ("Builtin_EXISTS", "Builtin_NOTEXISTS"):
                stack.append(e.get("graph"))
            elif isinstance(e, Mapping):
                stack.extend(_Expression(v) for k, v in e.items() if k != "iri")
            elif isinstance(e, list | tuple):
                stack.extend(_Expression(v) for v in e)
        elif isinstance(x, Mapping):
            stack.extend(x.values())
        elif isinstance(x, list | tuple):
            stack.extend(x)
    return found


class _Expression:
    """A part of a ``FILTER``'s or ``BIND``'s expression, walked for the IRIs it names."""

    __slots__ = ("expr",)

    def __init__(self, expr: Any) -> None:
        self.expr = expr


def value_kinds(g: Graph, triples: Iterable[tuple[Any, Any, Any]]) -> dict[str, str]:
    """What each variable of a pattern's triples is bound to, where the ontology says:
    ``node`` for a subject, the object of ``a`` or of an ``owl:ObjectProperty`` (or one whose
    range is a class); ``literal`` for the object of an ``owl:DatatypeProperty`` (or one
    whose range is a datatype). A variable said to be both is left out."""
    said: dict[str, set[str]] = {}
    for s, p, o in triples:
        if isinstance(s, Variable):
            said.setdefault(str(s), set()).add("node")
        if not isinstance(o, Variable) or not isinstance(p, URIRef):
            continue
        kind = "node" if p == RDF.type else object_kind(g, p)
        if kind is not None:
            said.setdefault(str(o), set()).add(kind)
    return {v: next(iter(k)) for v, k in said.items() if len(k) == 1}


def blocks(node: Any) -> Iterator[list[tuple[Any, Any, Any]]]:
    """The triples of each basic graph pattern of a parsed pattern that a solution must
    match together: the groups of ``OPTIONAL``, ``UNION`` and subqueries each on their own,
    a ``FILTER``'s ``EXISTS`` not (it matches nothing a solution holds)."""
    name = getattr(node, "name", None)
    if name is None:
        return
    if name == "BGP":
        yield list(node.triples)
        return
    for key in ("p", "p1", "p2"):
        yield from blocks(node.get(key))


def kind_clashes(
    g: Graph, triples: Iterable[tuple[Any, Any, Any]]
) -> Iterator[tuple[str, URIRef, tuple[Any, Any, Any]]]:
    """Each variable one block of a pattern's triples (:func:`blocks`) makes a literal (the
    object of an ``owl:DatatypeProperty``, or of a property whose range is a datatype) and a node
    (the subject of a triple, or the object of ``a`` or of an ``owl:ObjectProperty``): as
    ``(variable, the datatype property, a triple that makes it a node)``. No value is both,
    so the pattern never holds (``?this :amount ?a . ?a :currency ?c``)."""
    triples = list(triples)
    literal: dict[str, URIRef] = {}
    for _, p, o in triples:
        literal_valued = isinstance(p, URIRef) and p != RDF.type and object_kind(g, p) == "literal"
        if isinstance(o, Variable) and literal_valued:
            literal.setdefault(str(o), p)
    said: set[str] = set()
    for s, p, o in triples:
        if isinstance(s, Variable) and str(s) in literal:
            node = str(s)
        elif (
            isinstance(o, Variable)
            and str(o) in literal
            and isinstance(p, URIRef)
            and (p == RDF.type or object_kind(g, p) == "node")
        ):
            node = str(o)
        else:
            continue
        if node not in said:
            said.add(node)
            yield node, literal[node], (s, p, o)


_SKOS = "http://www.w3.org/2004/02/skos/core#"

LABELS = frozenset(
    {
        RDFS.label,
        RDFS.comment,
        URIRef(_SKOS + "prefLabel"),
        URIRef(_SKOS + "altLabel"),
        URIRef(_SKOS + "hiddenLabel"),
    }
)
"""Properties whose values their own vocabulary makes literals (``rdfs:range rdfs:Literal``
in RDFS, a plain literal in SKOS) though an ontology seldom declares them: a proposal's
candidates taken from ``rdfs:label`` were strings where the options had to be nodes, and
nothing said so, as the ontology's files never loaded RDFS."""

_LITERAL_RANGES = frozenset({RDFS.Literal, RDF.langString, RDF.PlainLiteral})


def object_kind(g: Graph, prop: URIRef) -> str | None:
    """What the files say ``prop``'s values are: ``"node"`` (an owl:ObjectProperty, or a
    range that is a class), ``"literal"`` (an owl:DatatypeProperty, or a range that is a
    datatype, built in or declared, or ``rdfs:Literal``); None when they say neither, or
    both. A label of RDFS or SKOS (:data:`LABELS`) the files say nothing of is a literal."""
    node = (prop, RDF.type, OWL.ObjectProperty) in g
    literal = (prop, RDF.type, OWL.DatatypeProperty) in g
    if node or literal:  # both: a punned property, whose values may be either
        return None if node and literal else "node" if node else "literal"

    def literal_range(r: URIRef) -> bool:
        return (
            str(r).startswith(str(XSD)) or r in _LITERAL_RANGES or (r, RDF.type, RDFS.Datatype) in g
        )

    kinds = {
        "literal" if literal_range(r) else "node"
        for r in g.objects(prop, RDFS.range)
        if isinstance(r, URIRef) and (term_kind(g, r) == "class" or literal_range(r))
    }
    if not kinds and prop in LABELS:
        return "literal"
    return next(iter(kinds)) if len(kinds) == 1 else None


def kind_against_range(
    g: Graph, datatype: Callable[[URIRef], bool]
) -> Iterator[tuple[URIRef, URIRef, URIRef]]:
    """Each property declared of one kind whose ``rdfs:range`` is of the other, as
    ``(property, its declared kind, the range)``: an ``owl:ObjectProperty`` ranging over a
    datatype (``datatype`` says which terms are), or an ``owl:DatatypeProperty`` over a term
    the files declare a class only. One declared both kinds (punning) is not judged."""
    for declared, other in (
        (OWL.ObjectProperty, OWL.DatatypeProperty),
        (OWL.DatatypeProperty, OWL.ObjectProperty),
    ):
        for prop in sorted(set(g.subjects(RDF.type, declared)), key=str):
            if not isinstance(prop, URIRef) or (prop, RDF.type, other) in g:
                continue
            for r in sorted(g.objects(prop, RDFS.range), key=str):
                if not isinstance(r, URIRef):
                    continue
                if (declared == OWL.ObjectProperty and datatype(r)) or (
                    declared == OWL.DatatypeProperty
                    and (not datatype(r) and term_kind(g, r) == "class")
                ):
                    yield prop, declared, r
