"""A ``horis:requires`` compiled to index lookups: the precondition without a query engine.

Why: a store with a SPARQL engine (pyoxigraph) spends ~100-200 µs parsing and planning any
query before it evaluates it, and a step asks one. Almost every precondition is the same
shape: triple patterns reachable from the bound ``?this``, and ``FILTER NOT EXISTS { … }``.
Those are compiled here once, when the definitions load, from rdflib's algebra of the very
query the store would run, into a plan a store evaluates with its own pattern lookups
(``quads_for_pattern``): a nested-loop join from the bound variables, each filter applied to
the solutions of the group it belongs to. Anything else (OPTIONAL, UNION, MINUS, BIND, VALUES,
GRAPH, property paths, sub-queries, a FILTER that is not listed below) is not compiled: the
store runs the query, as before.

What a plan keeps equal to the query (a differential test holds it, ``tests/test_patterns.py``):

- the default graph is the union of every graph, runtime ones included, and a triple stored in
  two graphs matches twice (Oxigraph's union does not de-duplicate);
- a bound variable is substituted everywhere, inside ``EXISTS`` too; an ``EXISTS`` sees the
  solution it is asked about substituted into it (Oxigraph's semantics);
- a FILTER sees only the variables of its own group (and the substituted ones);
- literals match as the store matches them: a store lowers each constant to the form it stores
  it in (:meth:`Plan.lowered`), so a literal compared to a stored term, rather than looked up,
  is equal exactly when the store's lookup would find it.

A plan gives at most two solutions: none and one are the query's answer exactly; with two or
more, the caller asks the query, whose order the trace records. A comparison the plan cannot
decide exactly (a type it does not evaluate) raises :class:`Unsupported`, and the caller asks
the query too. Supported FILTERs: ``[NOT] EXISTS``, conjunctions (``&&``, several FILTERs) and
``= != < > <= >=`` between IRIs (``=``/``!=``) or between ``xsd:integer``/``xsd:decimal``
values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from rdflib import XSD, BNode, Literal, URIRef, Variable
from rdflib.term import Node

if TYPE_CHECKING:  # rdflib's SPARQL package is imported by the first query parsed
    from rdflib.plugins.sparql.parserutils import CompValue

__all__ = ["LOOKUPS", "Plan", "Unsupported", "compile_plan"]

T = TypeVar("T")
U = TypeVar("U")


class Unsupported(Exception):
    """The plan cannot decide this case exactly, or not cheaply: ask the query."""


LOOKUPS = 200
"""The most index lookups one evaluation makes before it hands over to the query (a step's
precondition makes two or three; each costs ~1-3 µs, so the plan never wastes ~0.5 ms)."""


@dataclass(frozen=True)
class Var:
    """A variable (or a blank node of the pattern, which acts as one and is never projected)."""

    name: str


@dataclass(frozen=True)
class Triple(Generic[T]):
    """One triple pattern of a plan; ``T`` is a constant's term type, rdflib's until a store
    lowers the plan to its own."""

    s: Var | T
    p: Var | T
    o: Var | T


@dataclass(frozen=True)
class Bgp(Generic[T]):
    """A group's triple patterns: the nested-loop join's unit, looked up from the bound
    variables out."""

    triples: tuple[Triple[T], ...]


@dataclass(frozen=True)
class Join(Generic[T]):
    """Two groups joined, as the algebra writes a group beside another: kept apart so that a
    FILTER inside either still sees only its own group's variables."""

    left: Group[T]
    right: Group[T]


@dataclass(frozen=True)
class Exists(Generic[T]):
    """A ``FILTER [NOT] EXISTS``: the solution it is asked about substituted into ``group``, as
    Oxigraph does."""

    group: Group[T]
    negated: bool


@dataclass(frozen=True)
class Compare(Generic[T]):
    """A FILTER comparison the plan decides exactly (IRIs, integers, decimals); any other raises
    :class:`Unsupported` and the query decides."""

    op: str
    left: Var | T
    right: Var | T


Condition = Exists[T] | Compare[T]


@dataclass(frozen=True)
class Filter(Generic[T]):
    """``inner``'s solutions that meet every condition, judged on ``inner``'s own variables
    (its ``scope``) and the substituted ones: SPARQL applies a FILTER to its group only."""

    conditions: tuple[Condition[T], ...]
    inner: Group[T]
    scope: frozenset[str]


Group = Bgp[T] | Join[T] | Filter[T]


Match = Callable[[Any, Any, Any], Iterable[Any]]
"""``match(s, p, o)``: the stored triples (or quads) matching the given terms (``None``: any),
in any graph, once per graph that holds it; ``[0]``, ``[1]``, ``[2]`` are their terms."""
Numeric = Callable[[Any], "int | Decimal | None"]
"""A literal's ``xsd:integer`` or ``xsd:decimal`` value (None: not one)."""
Run = Callable[[dict[str, Any], Match, Numeric], Iterator[dict[str, Any]]]


@dataclass(frozen=True)
class Plan(Generic[T]):
    """A compiled precondition; ``root`` holds rdflib terms until a store lowers it to its own
    (:meth:`lowered`), once."""

    root: Group[T]
    _lowered: dict[Callable[[Any], Any], Plan[Any]] = field(
        default_factory=dict, compare=False, repr=False
    )
    _runs: dict[frozenset[str], Run] = field(default_factory=dict, compare=False, repr=False)

    def lowered(self, convert: Callable[[T], U]) -> Plan[U]:
        """The same plan with each constant converted by ``convert`` (to a store's terms),
        converted once and kept with this plan."""
        done = self._lowered.get(convert)
        if done is None:
            done = self._lowered[convert] = Plan(_lower(self.root, convert))
        return done

    def solve(
        self, bound: Mapping[str, T], match: Match, numeric: Numeric, limit: int = 2
    ) -> list[dict[str, T]]:
        """Up to ``limit`` solutions, each ``bound`` extended with the pattern's variables.
        Raises :class:`Unsupported` where the plan cannot decide exactly, or once it has
        made :data:`LOOKUPS` lookups: a pattern not anchored at a bound variable may scan
        much of a large world, which the store's query engine does far faster than this loop.

        The lookups' order is chosen once per set of bound variables (most-bound pattern
        first), and the plan specialised to it: no decision is left for each step."""
        names = frozenset(bound)
        run = self._runs.get(names)
        if run is None:
            run = self._runs[names] = _specialise(self.root, names, names)
        made = 0

        def counted(s: Any, p: Any, o: Any) -> Iterable[Any]:
            nonlocal made
            made += 1
            if made > LOOKUPS:
                raise Unsupported(f"more than {LOOKUPS} lookups")
            return match(s, p, o)

        out: list[dict[str, T]] = []
        for sol in run(dict(bound), counted, numeric):
            out.append(sol)
            if len(out) >= limit:
                break
        return out


def _specialise(g: Group[Any], known: frozenset[str], fixed: frozenset[str]) -> Run:
    """``g`` as a function of the solution so far, given the variables it binds (``known``)
    and those substituted everywhere (``fixed``)."""
    if isinstance(g, Bgp):
        return _bgp(g, known)
    if isinstance(g, Join):
        left = _specialise(g.left, known, fixed)
        right = _specialise(g.right, known | _scope(g.left), fixed)

        def join(mu: dict[str, Any], match: Match, numeric: Numeric) -> Iterator[dict[str, Any]]:
            for sol in left(mu, match, numeric):
                yield from right(sol, match, numeric)

        return join
    inner = _specialise(g.inner, known, fixed)
    visible = g.scope | fixed
    # a FILTER sees its group's variables and the substituted ones, not its siblings'
    whole = known | g.scope <= visible
    conditions = [_condition(c, visible) for c in g.conditions]

    def filtered(mu: dict[str, Any], match: Match, numeric: Numeric) -> Iterator[dict[str, Any]]:
        for sol in inner(mu, match, numeric):
            seen = sol if whole else {k: v for k, v in sol.items() if k in visible}
            if all(c(seen, match, numeric) for c in conditions):
                yield sol

    return filtered


def _condition(c: Condition[Any], visible: frozenset[str]) -> Callable[..., bool]:
    if isinstance(c, Exists):
        # the solution substituted into the pattern (Oxigraph's EXISTS)
        run, negated = _specialise(c.group, visible, visible), c.negated

        def exists(mu: dict[str, Any], match: Match, numeric: Numeric) -> bool:
            return (next(run(mu, match, numeric), None) is None) == negated

        return exists
    op, left_term, right_term = _COMPARE[c.op], c.left, c.right
    equality = c.op in ("=", "!=")

    def compare(mu: dict[str, Any], match: Match, numeric: Numeric) -> bool:
        left, right = _value(left_term, mu), _value(right_term, mu)
        if left is None or right is None:  # unbound: an error, and a FILTER drops the row
            return False
        a, b = numeric(left), numeric(right)
        if a is not None and b is not None:
            return op(a, b)
        if equality and _is_iri(left) and _is_iri(right):
            return op(left, right)
        raise Unsupported(c.op)

    return compare


_Position = tuple[bool, Any]  # (True, a bound variable's name) or (False, a constant or None)
_Step = tuple[_Position, _Position, _Position, tuple[tuple[int, str], ...], Any]
"""A step's three positions, the variables it binds (position, name: a name twice when it is
repeated in the pattern), and a literal the object must equal (None: none)."""


def _bgp(g: Bgp[Any], known: frozenset[str]) -> Run:
    """The triple patterns in lookup order, each a step: its three positions (a constant, or
    a variable bound by then), the positions whose value it binds, and a literal to compare."""
    have, left = set(known), list(g.triples)
    steps: list[_Step] = []
    while left:
        t = max(left, key=lambda t: _score(t, have))
        left.remove(t)
        given: list[_Position] = []
        new: list[tuple[int, str]] = []
        for i, x in enumerate((t.s, t.p, t.o)):
            if not isinstance(x, Var):
                given.append((False, x))
            elif x.name in have:
                given.append((True, x.name))
            else:
                given.append((False, None))
                new.append((i, x.name))
        literal = None
        if given[0][1] is not None and given[1][1] is not None and _is_literal(t.o):
            # a literal object of a known subject: its few objects compared, not the literal
            # looked up (the store encodes it first: 3-4 µs); the constant is as stored
            given[2], literal = (False, None), t.o
        have.update(n for _, n in new)
        steps.append((given[0], given[1], given[2], tuple(new), literal))
    count = len(steps)

    def walk(i: int, mu: dict[str, Any], match: Match) -> Iterator[dict[str, Any]]:
        (sv, s), (pv, p), (ov, o), new, literal = steps[i]
        last = i + 1 == count
        for found in match(mu[s] if sv else s, mu[p] if pv else p, mu[o] if ov else o):
            if literal is not None and found[2] != literal:
                continue
            sol = mu
            if new:
                sol = dict(mu)
                for pos, name in new:
                    sol.setdefault(name, found[pos])
                if len(new) > 1 and any(sol[name] != found[pos] for pos, name in new):
                    continue  # a variable repeated within the pattern, another value
            if last:
                yield sol
            else:
                yield from walk(i + 1, sol, match)

    def bgp(mu: dict[str, Any], match: Match, numeric: Numeric) -> Iterator[dict[str, Any]]:
        if count:
            return walk(0, mu, match)
        return iter((mu,))

    return bgp


_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "=": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    ">": lambda a, b: a > b,
    "<=": lambda a, b: a <= b,
    ">=": lambda a, b: a >= b,
}


def _is_iri(term: Any) -> bool:
    """An IRI, in rdflib's terms or pyoxigraph's."""
    return type(term).__name__ in ("NamedNode", "URIRef")


def _is_literal(term: Any) -> bool:
    """A literal, in rdflib's terms or pyoxigraph's (both name the class ``Literal``)."""
    return type(term).__name__ == "Literal"


def _value(x: Any, mu: Mapping[str, Any]) -> Any:
    return mu.get(x.name) if isinstance(x, Var) else x


def _score(t: Triple[Any], known: set[str]) -> int:
    def bound(x: Any) -> bool:
        return not isinstance(x, Var) or x.name in known

    return 4 * bound(t.s) + 2 * bound(t.o) + bound(t.p)


def _lower(g: Group[T], convert: Callable[[T], U]) -> Group[U]:
    def term(x: Var | T) -> Var | U:
        return x if isinstance(x, Var) else convert(x)

    if isinstance(g, Bgp):
        return Bgp(tuple(Triple(term(t.s), term(t.p), term(t.o)) for t in g.triples))
    if isinstance(g, Join):
        return Join(_lower(g.left, convert), _lower(g.right, convert))
    conditions: list[Condition[U]] = []
    for c in g.conditions:
        if isinstance(c, Exists):
            conditions.append(Exists(_lower(c.group, convert), c.negated))
        else:
            conditions.append(Compare(c.op, term(c.left), term(c.right)))
    return Filter(tuple(conditions), _lower(g.inner, convert), g.scope)


# -- from rdflib's algebra ------------------------------------------------------------------


class _NotCompiled(Exception):
    """A part of the pattern a plan does not evaluate: the query is asked instead."""


def compile_plan(algebra: CompValue) -> Plan[Node] | None:
    """The plan of a prepared ``SELECT`` (rdflib's algebra), or None when some part of it is
    not one a plan evaluates exactly."""
    node = algebra
    if node.name in ("SelectQuery", "AskQuery"):
        node = node.p
    if node.name == "Project":
        node = node.p
    try:
        return Plan(_group(node))
    except _NotCompiled:
        return None
    except (AttributeError, KeyError, TypeError, ValueError):
        # an algebra shape this module does not know: a plan is only a shortcut, and a
        # pattern rdflib accepted must never fail to load for want of one
        return None


def _group(node: Any) -> Group[Node]:
    from rdflib.plugins.sparql.algebra import translateGroupGraphPattern
    from rdflib.plugins.sparql.parserutils import CompValue

    if not isinstance(node, CompValue):
        raise _NotCompiled(type(node).__name__)
    if node.name == "GroupGraphPatternSub":  # an EXISTS's pattern, as parsed
        return _group(translateGroupGraphPattern(node))
    if node.name == "BGP":
        return Bgp(tuple(Triple(*(_term(x) for x in t)) for t in node.triples))
    if node.name == "Join":
        left, right = _group(node.p1), _group(node.p2)
        if isinstance(left, Bgp) and not left.triples:
            return right
        if isinstance(right, Bgp) and not right.triples:
            return left
        return Join(left, right)
    if node.name == "Filter":
        inner = _group(node.p)
        return Filter(tuple(_conditions(node.expr)), inner, frozenset(_scope(inner)))
    raise _NotCompiled(node.name)


def _scope(g: Group[Any]) -> set[str]:
    """The variables ``g``'s solutions bind."""
    if isinstance(g, Bgp):
        return {x.name for t in g.triples for x in (t.s, t.p, t.o) if isinstance(x, Var)}
    if isinstance(g, Join):
        return _scope(g.left) | _scope(g.right)
    return _scope(g.inner)


def _term(x: Any) -> Var | Node:
    if isinstance(x, Variable):
        return Var(str(x))
    if isinstance(x, BNode):
        return Var(f"_:{x}")  # a blank node of the pattern: a variable never projected
    if isinstance(x, (URIRef, Literal)):
        return x
    raise _NotCompiled(type(x).__name__)  # a property path, a quoted triple


def _conditions(expr: Any) -> Iterator[Condition[Node]]:
    from rdflib.plugins.sparql.parserutils import CompValue

    if not isinstance(expr, CompValue):
        raise _NotCompiled(type(expr).__name__)
    if expr.name == "ConditionalAndExpression":
        yield from _conditions(expr.expr)
        for other in expr.other or ():
            yield from _conditions(other)
    elif expr.name in ("Builtin_EXISTS", "Builtin_NOTEXISTS"):
        yield Exists(_group(expr.graph), expr.name == "Builtin_NOTEXISTS")
    elif expr.name == "RelationalExpression" and expr.op in _COMPARE:
        yield Compare(expr.op, _operand(expr.expr), _operand(expr.other))
    else:
        raise _NotCompiled(expr.name)


def _operand(x: Any) -> Var | Node:
    if isinstance(x, Variable):
        return Var(str(x))
    if isinstance(x, URIRef) or (isinstance(x, Literal) and str(x.datatype) in _NUMERIC):
        return x
    raise _NotCompiled(type(x).__name__)


_NUMERIC = {str(XSD.integer), str(XSD.decimal)}


def number(datatype: str, lexical: str) -> int | Decimal | None:
    """An ``xsd:integer`` or ``xsd:decimal`` literal's value (None for any other, or one that
    does not parse: an ill-typed literal compares as an error)."""
    try:
        if datatype == _INTEGER:
            value = int(lexical)
            return value if -(2**63) <= value < 2**63 else None  # Oxigraph's range
        if datatype == _DECIMAL:
            exact = Decimal(lexical)
            # Oxigraph's decimals: 18 fractional digits, below ~1.7e20; beyond, ask it
            if (
                exact.is_finite()
                and abs(exact) < Decimal(10) ** 20
                and (exact == exact.quantize(Decimal(10) ** -18))
            ):
                return exact
    except (ValueError, InvalidOperation, ArithmeticError):
        return None
    return None


_INTEGER, _DECIMAL = str(XSD.integer), str(XSD.decimal)
