"""A domain shape that contradicts itself, or says other than it means, in ways SHACL loads.

Each of these loads in every SHACL engine and validated "valid"; the gate then rejected the
result of every tool landing a node the shape targets, after the tool had acted, or the shape
checked nothing at all:

- bounds that no count or value meets (``sh:minCount 2 ; sh:maxCount 1``, ``sh:minLength 12 ;
  sh:maxLength 3``, ``sh:minInclusive`` above ``sh:maxInclusive``): no node, or no value,
  conforms (a warning for a shape inside ``sh:or``, ``sh:xone`` or ``sh:not``, which a node
  may fail and still conform: :func:`unmet`);
- a ``sh:maxLength`` below the length of the shortest text its ``sh:pattern`` matches
  (``sh:pattern "^Q-[A-Z]+-[0-9]+$" ; sh:maxLength 4``): a value short enough is too short
  to match (a warning for such a shape);
- a ``sh:pattern`` on booleans (``sh:datatype xsd:boolean``, or a path whose ``rdfs:range``
  is): it reads a boolean's text, and the stores write every boolean ``true`` or ``false``
  (``"1"^^xsd:boolean`` too), so a pattern matching neither (``"^(yes|no)$"``, ``"^1$"``)
  leaves no value that conforms (an error, a warning for such a shape). On numbers and dates
  a pattern on the lexical form can be meant (digits, a time zone), so those are not judged;
- a ``sh:pattern`` written with what Python's regular expressions add to SHACL's (XPath's):
  a lookahead, ``\\b``, a possessive quantifier, inline flags ``(?i)`` (a warning): the gate
  judges it, and the shape means something else, or nothing, to every other SHACL engine;
- ``sh:flags`` with a letter other than ``i`` and ``m`` (``"s"``, or ``"g"`` from
  JavaScript): the gate and pyshacl read those two only, and checked the pattern without it;
- a shape with no target that nothing names (no ``sh:targetClass``…, no ``sh:node`` or
  ``horis:shape`` pointing at it): it judged no node, and the constraints it says were never
  checked;
- ``sh:closed true`` on a shape targeting a class, without ``rdf:type`` among what it allows:
  every node of the class holds ``rdf:type``, which the closed shape does not allow;
- ``sh:targetNode :Patient`` naming a class: the shape checks the class's own node, never an
  instance of it (``sh:targetClass`` was meant);
- ``sh:path`` on a node declared ``a sh:NodeShape``: no engine loads it, and the gate's load
  check could only say so with no file or line;
- a constraint SHACL allows on a property shape only (``sh:maxCount``, ``sh:minCount``,
  ``sh:uniqueLang``, ``sh:lessThan``, ``sh:lessThanOrEquals``, ``sh:qualified…``) on a node
  shape: no engine loads it, and the gate's load check said so in pySHACL's words
  ("MaxCountConstraintComponent can only be present on a PropertyShape") at the shape's
  first line;
- a shape that reaches itself (``sh:node``, ``sh:property``, ``sh:qualifiedValueShape``,
  ``sh:not``, ``sh:and``, ``sh:or``, ``sh:xone``, directly or through others): SHACL leaves
  the validation of recursive shapes undefined. pySHACL, the gate's reference, takes the
  shape as met where it comes back to it, and printed a Python warning amid the output (a
  warning).

Found on the definitions' graph alone, a few look-ups per shape.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal as Severity

from rdflib import OWL, RDF, RDFS, SH, XSD, Graph, Literal, URIRef
from rdflib.term import Node

from ._literals import INTEGER_TYPES
from ._rdf_lists import list_head, list_members
from ._regex_dialects import UNREAD_FLAGS, python_only, shortest_match
from ._shacl import deactivated, refused_alone
from ._shacl_constraints import closed_properties

__all__ = ["ShapeSlip", "shape_slips", "unmet"]


@dataclass(frozen=True)
class ShapeSlip:
    """One slip: at ``at`` (a statement of ``holder``), what it does and what to write."""

    severity: Severity["error", "warning"]
    holder: Node
    at: tuple[Node, URIRef, Node | None]
    message: str
    hint: str


# (lower, upper, whether equal bounds leave nothing): what no count or value can meet
_BOUNDS = (
    (SH.minCount, SH.maxCount, False),
    (SH.qualifiedMinCount, SH.qualifiedMaxCount, False),
    (SH.qualifiedMinCount, SH.maxCount, False),  # that many conforming values, among fewer
    (SH.minLength, SH.maxLength, False),
    (SH.minInclusive, SH.maxInclusive, False),
    (SH.minInclusive, SH.maxExclusive, True),
    (SH.minExclusive, SH.maxInclusive, True),
    (SH.minExclusive, SH.maxExclusive, True),
)
_COUNTS = {SH.minCount, SH.qualifiedMinCount}


def _no_integer_between(
    g: Graph, holder: Node, low: URIRef, high: URIRef, lo: object, hi: object
) -> bool:
    """Whether ``sh:minExclusive lo`` and ``sh:maxExclusive hi`` on ``holder``, whose values
    are integers (its ``sh:datatype``, else its path's ``rdfs:range``), leave none between
    them: ``5`` and ``6`` admit no integer, though they are not crossed."""
    if (low, high) != (SH.minExclusive, SH.maxExclusive):
        return False
    if type(lo) is not int or type(hi) is not int or hi - lo != 1:
        return False
    return _value_datatype(g, holder) in INTEGER_TYPES


# how a file writes the value of a statement (``002.0``), when it can be read back
Written = Callable[[Node, URIRef, Literal], str | None]


def shape_slips(g: Graph, n: Callable[[Node], str], written: Written) -> Iterator[ShapeSlip]:
    """Every slip of the shapes of ``g``; ``n`` writes a term as the files do, ``written``
    a bound's value as its file does. That no value or node meets a shape is not said of a
    deactivated one, nor of one inside it: the gate and pyshacl judge nothing by them."""

    def judged(slips: Iterator[ShapeSlip]) -> Iterator[ShapeSlip]:
        return (slip for slip in slips if not deactivated(g, slip.holder))

    yield from judged(_crossed_bounds(g, n, written))
    yield from judged(_pattern_beyond_max_length(g, n))
    yield from judged(_pattern_on_booleans(g, n))
    yield from _unknown_flags(g)
    yield from _beyond_xpath(g)
    yield from _judging_nothing(g)
    yield from judged(_closed_to_type(g, n))
    yield from _class_as_target_node(g, n)
    yield from _path_on_node_shape(g, n)
    yield from _path_constraint_on_node_shape(g, n, written)
    yield from _reaching_itself(g, n)


def _crossed_bounds(g: Graph, n: Callable[[Node], str], written: Written) -> Iterator[ShapeSlip]:
    for low, high, strict in _BOUNDS:
        for holder, least in g.subject_objects(low):
            most = g.value(holder, high)
            if not (isinstance(least, Literal) and isinstance(most, Literal)):
                continue
            lo, hi = least.toPython(), most.toPython()
            if isinstance(lo, Literal) or isinstance(hi, Literal):  # ill-typed: said elsewhere
                continue
            try:
                crossed = lo >= hi if strict else lo > hi
            except TypeError:  # values of kinds that do not compare: the engine's to say
                continue
            gap = not crossed and _no_integer_between(g, holder, low, high, lo, hi)
            if not (crossed or gap):
                continue
            path = g.value(holder, SH.path)
            of = f" of {n(path)}" if isinstance(path, URIRef) else ""
            shown_low = f"{n(low)} {_written(holder, low, least, written)}"
            shown_high = f"{n(high)} {_written(holder, high, most, written)}"
            if gap:
                said = (
                    f"{shown_low} and {shown_high} leave no integer between them, and the "
                    f"values{of} are integers, so no value{of} conforms"
                )
                fix = f"write sh:minInclusive {hi} ; sh:maxInclusive {hi} for {hi} alone, or "
                fix += "bounds further apart"
            else:
                what = "no node conforms" if low in _COUNTS else f"no value{of} conforms"
                said = (
                    f"{shown_low} is {'not below' if strict else 'above'} {shown_high}, so {what}"
                )
                fix = f"write {n(low)} {'below' if strict else 'no higher than'} {n(high)}"
            severity, does = unmet(g, holder)
            yield ShapeSlip(severity, holder, (holder, high, most), f"{said}: {does}", fix)


_THROUGH = (SH.property, SH.node, SH.qualifiedValueShape)
"""What names a shape that must hold wherever its owner must."""
_BRANCHES = (SH["or"], SH.xone)
"""What lists shapes of which one may fail and the owner still conform."""


def logical_branch(g: Graph, shape: Node) -> URIRef | None:
    """The ``sh:or``, ``sh:xone`` or ``sh:not`` that ``shape`` is a member (or the object)
    of, or is reached from by ``sh:property``, ``sh:node`` or ``sh:and``: a node failing it
    may still conform to its owner. None when it is in none, or under an even number of
    ``sh:not`` only (``sh:not [ sh:not [ … ] ]`` holds where its innermost shape does, so
    that shape must hold). Walks ``rdf:first``/``rdf:rest`` back to each list's owner,
    counting the ``sh:not`` passed on each way up."""
    seen, todo = {(shape, False)}, [(shape, False)]
    negated = False
    while todo:
        node, odd = todo.pop()
        owners = [(s, not odd) for s in g.subjects(SH["not"], node)]
        owners += [(s, odd) for p in _THROUGH for s in g.subjects(p, node)]
        for cell in g.subjects(RDF.first, node):
            head = list_head(g, cell)
            branch = next((p for p in _BRANCHES if (None, p, head) in g), None)
            if branch is not None and not odd:
                return branch
            negated |= branch is not None  # the sh:not inside it is what excludes nothing
            owners.extend((s, odd) for s in g.subjects(SH["and"], head))
        negated |= odd and not owners
        for owner in owners:
            if owner not in seen:
                seen.add(owner)
                todo.append(owner)
    return SH["not"] if negated else None


def unmet(g: Graph, shape: Node) -> tuple[Severity["error", "warning"], str]:
    """How to say what it does that no value (or no node) meets ``shape``: an error that
    the gate rejects every result it judges, when it must hold; inside ``sh:or`` or
    ``sh:xone`` (:func:`logical_branch`) a warning that its branch never holds, and inside
    ``sh:not`` one that the ``sh:not`` excludes nothing — a node may fail such a shape and
    conform, so the other branches take the results, but a branch that never holds is
    rarely what was meant. One wording for every check of a shape no value meets."""
    op = logical_branch(g, shape)
    if op is None:
        return "error", (
            "the gate rejects the result of every tool that lands a node the shape judges, "
            "after the tool has acted"
        )
    if op == SH["not"]:
        return "warning", (
            "as the shape of a sh:not, it never holds where it applies, so the sh:not excludes "
            "no such node"
        )
    name = "sh:or" if op == SH["or"] else "sh:xone"
    return "warning", (
        f"as a branch of {name}, it never holds where it applies, and only the other branches "
        "can take such a node"
    )


def _pattern_beyond_max_length(g: Graph, n: Callable[[Node], str]) -> Iterator[ShapeSlip]:
    for holder, most in g.subject_objects(SH.maxLength):
        limit = most.toPython() if isinstance(most, Literal) else None
        if not isinstance(limit, int) or isinstance(limit, bool):
            continue
        for pattern in sorted(g.objects(holder, SH.pattern), key=str):
            shortest = shortest_match(str(pattern)) if isinstance(pattern, Literal) else None
            if shortest is None or shortest <= limit:
                continue
            yield _no_value_conforms(
                g,
                n,
                (holder, SH.maxLength, most),
                f'sh:maxLength {limit} is below the {shortest} characters sh:pattern "{pattern}" '
                f"needs at the least (one short enough is too short to match)",
                f"write sh:maxLength {shortest} or more, or the pattern meant",
            )


def _no_value_conforms(
    g: Graph, n: Callable[[Node], str], at: tuple[Node, URIRef, Node], why: str, hint: str
) -> ShapeSlip:
    """The slip of the shape stating ``at`` that no value of its path meets, for ``why``:
    what that does said one way (:func:`unmet`)."""
    holder = at[0]
    path = g.value(holder, SH.path)
    of = f" of {n(path)}" if isinstance(path, URIRef) else ""
    severity, does = unmet(g, holder)
    return ShapeSlip(severity, holder, at, f"{why}, so no value{of} conforms: {does}", hint)


_BOOLEANS = (Literal(True), Literal(False))
"""The booleans a gate reads: rdflib and pyoxigraph write ``"1"^^xsd:boolean`` as ``true`` and
``"0"`` as ``false``, so no other text reaches a pattern."""


def _pattern_on_booleans(g: Graph, n: Callable[[Node], str]) -> Iterator[ShapeSlip]:
    for holder in sorted(set(g.subjects(SH.pattern)), key=str):
        if _value_datatype(g, holder) != XSD.boolean:
            continue
        # judged by the gate's own compiled check of all the shape's patterns (with its
        # sh:flags), once; one it cannot compile (no regular expression: the gate's load
        # check says so) refuses nothing here
        if not all(refused_alone(g, holder, b, [SH.pattern]) for b in _BOOLEANS):
            continue
        patterns = sorted(g.objects(holder, SH.pattern), key=str)
        said = " ".join(f'sh:pattern "{p}"' for p in patterns)
        yield _no_value_conforms(
            g,
            n,
            (holder, SH.pattern, patterns[0]),
            f"{said} {'is' if len(patterns) == 1 else 'are'} on booleans, which "
            f"{'it reads' if len(patterns) == 1 else 'they read'} as their text, true or "
            f"false, and {'it matches' if len(patterns) == 1 else 'together they match'} "
            "neither",
            "drop sh:pattern, or write sh:in ( true ) or sh:in ( false ) for the value meant",
        )


def _value_datatype(g: Graph, holder: Node) -> Node | None:
    """The datatype of the values ``holder`` judges: its ``sh:datatype``, else its path's
    ``rdfs:range``."""
    kind = g.value(holder, SH.datatype)
    path = g.value(holder, SH.path)
    if kind is None and isinstance(path, URIRef):
        kind = g.value(path, RDFS.range)
    return kind


def _unknown_flags(g: Graph) -> Iterator[ShapeSlip]:
    for holder, flags in g.subject_objects(SH.flags):
        unknown = sorted(set(str(flags).lower()) - {"i", "m"})
        if not unknown:
            continue
        kept = "".join(c for c in str(flags).lower() if c in "im")
        of_xpath = [c for c in unknown if c in UNREAD_FLAGS]
        yield ShapeSlip(
            "warning",
            holder,
            (holder, SH.flags, flags),
            f'sh:flags "{flags}" has {", ".join(unknown)}, which the gate ignores (it checks a '
            'pattern with the flags "i" and "m" only), so the pattern is checked without '
            + ("it" if len(unknown) == 1 else "them"),
            ("; ".join(f"for {c}, {UNREAD_FLAGS[c]}" for c in of_xpath) + "; " if of_xpath else "")
            + (f'write sh:flags "{kept}"' if kept else "delete sh:flags"),
        )


def _beyond_xpath(g: Graph) -> Iterator[ShapeSlip]:
    for holder, pattern in g.subject_objects(SH.pattern):
        if not isinstance(pattern, Literal):
            continue
        found = python_only(str(pattern))
        if not found:
            continue
        what = [w for w, _ in found]
        yield ShapeSlip(
            "warning",
            holder,
            (holder, SH.pattern, pattern),
            f'sh:pattern "{pattern}" uses {" and ".join(what)}, which Python\'s regular '
            "expressions read (the gate judges with them) and SHACL's do not (XPath's, by "
            "which sh:pattern is defined): other SHACL engines refuse the shape, or match "
            "otherwise",
            "; ".join(f"for {w.split(',')[0]}, {fix}" for w, fix in found),
        )


def _judging_nothing(g: Graph) -> Iterator[ShapeSlip]:
    for kind in (SH.NodeShape, SH.PropertyShape):
        for shape in sorted(set(g.subjects(RDF.type, kind)), key=str):
            if any((shape, t, None) in g for t in _TARGETS) or (None, None, shape) in g:
                continue
            if any((shape, RDF.type, c) in g for c in (RDFS.Class, OWL.Class)):
                continue  # a class that is a shape targets its own instances (SHACL 2.1.3.3)
            yield ShapeSlip(
                "warning",
                shape,
                (shape, RDF.type, kind),
                "the shape has no target (sh:targetClass, sh:targetNode, sh:targetSubjectsOf, "
                "sh:targetObjectsOf) and no shape or effect names it (sh:node, sh:property, "
                "horis:shape), so it judges no node and its constraints are never checked",
                "add sh:targetClass with the class of the nodes it judges",
            )


_TARGETS = (SH.targetClass, SH.targetNode, SH.targetSubjectsOf, SH.targetObjectsOf, SH.target)


def _closed_to_type(g: Graph, n: Callable[[Node], str]) -> Iterator[ShapeSlip]:
    for shape, flag in g.subject_objects(SH.closed):
        if not (isinstance(flag, Literal) and flag.toPython() is True):
            continue
        classes = sorted(str(c) for c in g.objects(shape, SH.targetClass))
        if not classes:
            continue
        if RDF.type in closed_properties(g, shape):
            continue
        cls = n(URIRef(classes[0]))
        yield ShapeSlip(
            "error",
            shape,
            (shape, SH.closed, flag),
            f"sh:closed true allows only the properties of its sh:property shapes, and every "
            f"{cls} it targets holds rdf:type {cls}, so no node conforms: the gate rejects the "
            "result of every tool that lands one, after the tool has acted",
            "add sh:ignoredProperties ( rdf:type ) to the shape (rdf: is "
            "<http://www.w3.org/1999/02/22-rdf-syntax-ns#>), and a sh:property for every other "
            "property its nodes hold (rdfs:label, …)",
        )


def _class_as_target_node(g: Graph, n: Callable[[Node], str]) -> Iterator[ShapeSlip]:
    for shape, target in g.subject_objects(SH.targetNode):
        if not any((target, RDF.type, kind) in g for kind in (OWL.Class, RDFS.Class)):
            continue
        yield ShapeSlip(
            "warning",
            shape,
            (shape, SH.targetNode, target),
            f"sh:targetNode {n(target)} names a class: the shape checks the node {n(target)} "
            f"itself, never a node of that class",
            f"write sh:targetClass {n(target)} to check each node of {n(target)}",
        )


def _path_on_node_shape(g: Graph, n: Callable[[Node], str]) -> Iterator[ShapeSlip]:
    for shape in g.subjects(RDF.type, SH.NodeShape):
        path = g.value(shape, SH.path)
        if path is None:
            continue
        written = n(path) if isinstance(path, URIRef) else ":queueRef"
        yield ShapeSlip(
            "error",
            shape,
            (shape, SH.path, path),
            "a sh:NodeShape has no sh:path (a node shape judges nodes, a property shape the "
            "values of a path), so no SHACL engine can load the shape",
            f"move sh:path and the constraints on its values into a property shape: "
            f"sh:property [ sh:path {written} ; … ]",
        )


_OF_A_PATH = {
    SH.minCount: "counts the values of a path",
    SH.maxCount: "counts the values of a path",
    SH.uniqueLang: "compares the language tags of a path's values",
    SH.lessThan: "compares the values of a path with another property's",
    SH.lessThanOrEquals: "compares the values of a path with another property's",
    SH.qualifiedValueShape: "counts the values of a path that conform to a shape",
    SH.qualifiedMinCount: "counts the values of a path that conform to a shape",
    SH.qualifiedMaxCount: "counts the values of a path that conform to a shape",
    SH.qualifiedValueShapesDisjoint: "counts the values of a path that conform to a shape",
}
"""What each constraint SHACL allows on a property shape only reads of the path."""


def _path_constraint_on_node_shape(
    g: Graph, n: Callable[[Node], str], written: Written
) -> Iterator[ShapeSlip]:
    """A node shape (declared one, or targeting nodes, and without a ``sh:path``: one with
    a path is :func:`_path_on_node_shape`'s) holding a constraint on a path's values."""
    shapes = set(g.subjects(RDF.type, SH.NodeShape))
    shapes |= {s for t in _TARGETS for s in g.subjects(t, None)}
    for shape in sorted(shapes, key=str):
        if (shape, SH.path, None) in g:
            continue
        for p, does in _OF_A_PATH.items():
            for o in g.objects(shape, p):
                value = (
                    _written(shape, p, o, written)
                    if isinstance(o, Literal)
                    else n(o)
                    if isinstance(o, URIRef)
                    else "[ … ]"
                )
                yield ShapeSlip(
                    "error",
                    shape,
                    (shape, p, o),
                    f"{n(p)} {does}, and a node shape has none (it judges the node itself), so no "
                    "SHACL engine can load the shape",
                    f"move it into a property shape: sh:property [ sh:path … ; {n(p)} {value} ]",
                )


_NESTING = (SH.node, SH.property, SH.qualifiedValueShape, SH["not"])
_NESTING_LISTS = (SH["and"], SH["or"], SH.xone)


def _nested(g: Graph, shape: Node) -> Iterator[tuple[URIRef, Node]]:
    """The shapes ``shape`` names, each with the predicate naming it (a list's member by its
    list's predicate)."""
    for p in _NESTING:
        for inner in g.objects(shape, p):
            yield p, inner
    for p in _NESTING_LISTS:
        for lst in g.objects(shape, p):
            for inner in _items(g, lst):
                yield p, inner


def _reaching_itself(g: Graph, n: Callable[[Node], str]) -> Iterator[ShapeSlip]:
    """Each cycle of shapes naming shapes, said once, at its first named shape's statement
    that leads on round it."""
    said: set[frozenset[Node]] = set()
    shapes = {s for p in (*_NESTING, *_NESTING_LISTS) for s in g.subjects(p, None)}
    named = {s: list(_nested(g, s)) for s in shapes}  # read once, not again from each start
    for start in sorted(shapes, key=lambda s: (not isinstance(s, URIRef), str(s))):
        # a way back to start: breadth first, each shape with the edge it was reached by
        way: dict[Node, tuple[Node, URIRef]] = {}
        todo, back = [start], None
        while todo and back is None:
            shape = todo.pop(0)
            for p, inner in named[shape]:
                if inner == start:
                    back = (shape, p)
                    break
                if inner not in way and inner in shapes:
                    way[inner] = (shape, p)
                    todo.append(inner)
        if back is None:
            continue
        edges = [(back[0], back[1], start)]  # walked back to start, then turned round
        while edges[-1][0] != start:
            shape = edges[-1][0]
            edges.append((way[shape][0], way[shape][1], shape))
        edges.reverse()
        ring = frozenset(e[0] for e in edges)
        if ring in said:
            continue
        said.add(ring)
        first = next((i for i, e in enumerate(edges) if isinstance(e[0], URIRef)), 0)
        edges = edges[first:] + edges[:first]  # told from its first named shape
        holder, p, nxt = edges[0]
        told = ", ".join(f"{_named(a, n)} {n(q)} {_named(c, n)}" for a, q, c in edges)
        yield ShapeSlip(
            "warning",
            holder,
            (holder, p, nxt if p in _NESTING else None),
            f"the shape {n(holder)} reaches itself ({told}): SHACL leaves the "
            "validation of a recursive shape undefined, so engines differ: pySHACL, the gate's "
            "reference, takes the shape as met where it comes back to it",
            "end the recursion: name the nested nodes' constraints in a shape of their own "
            "that does not lead back to this one",
        )


def _named(shape: Node, n: Callable[[Node], str]) -> str:
    return n(shape) if isinstance(shape, URIRef) else "[ ]"


def _items(g: Graph, lst: Node) -> list[Node]:
    """The members of the RDF list ``lst``; none when it is no list."""
    return list_members(g, lst) if (lst, RDF.first, None) in g or lst == RDF.nil else []


def _written(holder: Node, p: URIRef, value: Literal, written: Written) -> str:
    """``value`` as its file writes it, else as a modeler would: a number bare, anything
    else in quotes (its normal form: ``"2026-03-01T07:30:00+00:00"`` for ``…T07:30:00Z``)."""
    as_written = written(holder, p, value)
    if as_written is not None:
        return as_written
    plain = value.toPython()
    return (
        str(value)
        if isinstance(plain, int | float) and not isinstance(plain, bool)
        else f'"{value}"'
    )
