"""``horis:requires`` patterns: parsed and prepared once at load, evaluated with bound variables.

Values reach a query only as initial bindings, never pasted into its text. When no solution
exists, :func:`first_failing` names the pattern that fails on its own (the text kept in the
instance's state and trace, unchanged across versions so old traces replay), and — for
people — :func:`explain` says which part failed: the patterns are cut into their triple
patterns and FILTERs (FILTERs last, as SPARQL applies them to the whole group), and the first
one that leaves no solution is named with the values bound so far — "``?e :onCall true .``
has no solution for ?e = :alice" — asking the store one ``LIMIT 1`` query per part, only when
a step is blocked.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, cast

from rdflib import Graph, Literal, URIRef, Variable
from rdflib.query import ResultRow
from rdflib.term import Node

from ._bound_plan import bound_first
from ._patterns import Plan, compile_plan
from ._sparql_parse import prepare_query, thread_query
from ._term_kinds import algebra_parts

if TYPE_CHECKING:  # rdflib's SPARQL package is imported by the first query parsed
    from rdflib.plugins.sparql.parserutils import CompValue
    from rdflib.plugins.sparql.sparql import Query

__all__ = [
    "InList",
    "IriMatch",
    "LiteralMatch",
    "Precondition",
    "PreconditionSyntaxError",
    "RemotePatternError",
    "assigned_variables",
    "bound_tests",
    "compile_patterns",
    "elements",
    "explain",
    "filter_scopes",
    "first_failing",
    "group_triples",
    "iri_matches",
    "literal_matches",
    "pattern_groups",
    "remote_reads",
    "string_reads",
    "why_blocked",
]


class PreconditionSyntaxError(ValueError):
    """A pattern is not a valid SPARQL group graph pattern."""

    def __init__(self, pattern: str, why: str) -> None:
        super().__init__(why)
        self.pattern = pattern
        self.why = why


class RemotePatternError(ValueError):
    """A pattern reads a remote endpoint (``SERVICE <…> { … }``, ``FROM <…>``): evaluated,
    the query engine would open a connection no ``--allow-host`` governs."""

    def __init__(self, pattern: str, endpoint: str) -> None:
        super().__init__(endpoint)
        self.pattern = pattern
        self.endpoint = endpoint
        """How the pattern names it: ``SERVICE <http://…>``, ``FROM <http://…>``."""


def remote_reads(query: Query) -> list[str]:
    """What in a parsed query would read beyond the graph it is evaluated against, each as
    written: a ``SERVICE`` anywhere (in a ``FILTER EXISTS`` too), a ``FROM`` or ``FROM
    NAMED`` (rdflib loads a dataset clause's IRI from the web)."""
    from rdflib.plugins.sparql.parserutils import CompValue

    found: list[str] = []
    # dict.get: CompValue.get answers a key it lacks with the key's name
    for clause in query.algebra.get("datasetClause") or ():
        named = "named" in clause
        iri = dict.get(clause, "named" if named else "default")
        found.append(f"FROM {'NAMED ' if named else ''}<{iri}>")
    for x in algebra_parts(query.algebra):
        if isinstance(x, CompValue) and x.name == "ServiceGraphPattern":
            term = dict.get(x, "term")
            found.append(f"SERVICE {term.n3() if term is not None else ''}".rstrip())
    return found


@dataclass(frozen=True)
class Pattern:
    """One ``horis:requires`` of a step as written: its text is what a blocked step's trace names
    (unchanged across versions, so old traces replay), its plan what tests it alone."""

    text: str
    _plan: Plan[Node] | None = field(default=None, compare=False)
    """The pattern alone as index lookups (:mod:`horismos._patterns`), when it compiles."""


@dataclass(frozen=True)
class Precondition:
    """The conjunction of a step's patterns, as one prepared SELECT."""

    patterns: tuple[Pattern, ...]
    select: Query = field(compare=False)
    select_text: str
    prefixes: tuple[tuple[str, str], ...]
    variables: frozenset[str]
    _plan: Plan[Node] | None = field(default=None, compare=False)
    """The SELECT as index lookups (:mod:`horismos._patterns`), when it compiles: a store
    with its own lookups evaluates it without a query engine."""
    binds: frozenset[str] = frozenset()
    """The variables every solution binds (:func:`bound_by`)."""
    may_bind: frozenset[str] = frozenset()
    """The variables some solutions bind and others may not (an ``OPTIONAL``'s, one side of
    a ``UNION``'s). A variable in neither (one written only in ``FILTER NOT EXISTS`` or
    ``MINUS``) is never bound."""
    prepared_by: int = field(default_factory=threading.get_ident, compare=False)
    """The thread that prepared :attr:`select`, the one that evaluates it (:meth:`solutions`)."""

    @cached_property
    def projected(self) -> tuple[str, ...]:
        """``variables``, sorted: as a SELECT projects them and a read records them (sorted
        once, not on each step)."""
        return tuple(sorted(self.variables))

    @cached_property
    def _select_prefixes(self) -> tuple[tuple[str, str], ...]:
        """The prefixes :attr:`select_text` can name: what another thread prepares it with."""
        return tuple((k, v) for k, v in self.prefixes if f"{k}:" in self.select_text)

    def solutions(
        self,
        graph: Graph,
        bindings: Mapping[str, Node],
        adapted: Callable[[Query], None] | None = None,
    ) -> list[dict[str, Node]]:
        """``adapted``: a store's own form of the query (:func:`.._sparql_parse.thread_query`),
        evaluated instead of :attr:`select`, which other stores share as it was prepared."""
        init: dict[str, Any] = {Variable(k): v for k, v in bindings.items() if k in self.variables}
        # the thread that prepared it evaluates :attr:`select`; any other its own (rdflib
        # writes the row it is on onto a query's expressions: see thread_query)
        select = (
            self.select
            if adapted is None and threading.get_ident() == self.prepared_by
            else thread_query(self.select_text, self._select_prefixes, adapted)
        )
        planned = bound_first(select, frozenset(str(k) for k in init))
        rows = graph.query(planned, initBindings=init)
        out = []
        for row in rows:  # a SELECT's rows
            sol = dict(bindings)
            sol.update(
                {str(k): v for k, v in cast(ResultRow, row).asdict().items() if v is not None}
            )
            out.append(sol)
        return out


_VAR = re.compile(r"[?$]([A-Za-z_][\w]*)")


def _prepare(text: str, ns: Mapping[str, Any], pattern: str) -> Query:
    # only the prefixes the text can name: rdflib binds each one given, checking it against
    # every one bound before, and a project's files bind dozens (with rdflib's own)
    used = {k: v for k, v in ns.items() if f"{k}:" in text}
    try:
        return prepare_query(text, used)
    except Exception as e:
        why = str(e).strip().splitlines()
        msg = why[0] if why else type(e).__name__
        if "Unknown namespace prefix" in str(e) or "prefix" in msg.lower():
            msg = f"{msg} (declare the prefix with @prefix in the file)"
        raise PreconditionSyntaxError(pattern, msg) from None


def compile_patterns(patterns: Sequence[str], ns: Mapping[str, Any]) -> Precondition:
    """Prepare ``patterns`` (SPARQL group graph patterns) for evaluation; raises on bad syntax
    (:class:`PreconditionSyntaxError`) and on a read of a remote endpoint
    (:class:`RemotePatternError`): a pattern is evaluated against the world alone.

    Each is parsed alone, as ``ASK WHERE { … }``: that is what holds it to one group (a
    pattern that closes its group early, ``… } UNION { …``, is refused rather than changing
    the meaning of the queries it is joined into), and its plan names it when a step is
    blocked. Their conjunction, the ``SELECT`` that is evaluated, is parsed again only when
    there are several: one pattern's ``SELECT *`` has the very algebra of its ``ASK``, and
    rdflib's parser was most of a load (~13 ms a parse)."""
    from rdflib.plugins.sparql.parserutils import CompValue
    from rdflib.plugins.sparql.sparql import Query

    compiled = []
    for text in patterns:
        body = text.strip()
        ask = _prepare(f"ASK WHERE {{ {body}\n}}", ns, body)
        remote = remote_reads(ask)
        if remote:
            raise RemotePatternError(body, remote[0])
        compiled.append(Pattern(body, compile_plan(ask.algebra)))
    select_text = "SELECT * WHERE {\n" + "\n".join(f"{{ {p.text}\n}}" for p in compiled) + "\n}"
    if len(compiled) == 1:  # ``ask``: the one pattern's
        select = Query(ask.prologue, CompValue("SelectQuery", **ask.algebra))
        plan = compiled[0]._plan
    else:
        select = _prepare(select_text, ns, "\n".join(patterns))
        plan = compile_plan(select.algebra)
    variables = frozenset(m.group(1) for p in compiled for m in _VAR.finditer(p.text))
    binds, may_bind = bound_by(select.algebra)
    return Precondition(
        tuple(compiled),
        select,
        select_text,
        tuple((k, str(v)) for k, v in ns.items()),
        variables,
        plan,
        frozenset(binds),
        frozenset(may_bind - binds),
    )


def bound_by(node: Any) -> tuple[set[str], set[str]]:
    """The variables a SPARQL algebra ``node`` binds in every solution, and those it binds in
    some: what a step's arguments can be read from. Why: a variable the pattern's text names
    only inside ``FILTER NOT EXISTS`` or ``MINUS`` is never bound, and an argument read from
    it was refused only when the step fired. A form this does not know binds, as far as it
    is concerned, every variable it names: it never calls a usable pattern unusable."""
    name = getattr(node, "name", None)
    if name == "BGP":
        return {str(t) for triple in node.triples for t in triple if isinstance(t, Variable)}, set()
    if name in ("Join", "LeftJoin", "Union"):
        c1, m1 = bound_by(node.p1)
        c2, m2 = bound_by(node.p2)
        if name == "Join":
            return c1 | c2, m1 | m2
        if name == "LeftJoin":
            return c1, m1 | c2 | m2
        return c1 & c2, (c1 | c2 | m1 | m2) - (c1 & c2)
    if name == "Minus":
        return bound_by(node.p1)
    if name in ("Filter", "ToMultiSet", "SelectQuery", "Distinct", "Reduced", "Slice", "OrderBy"):
        return bound_by(node.p)
    if name == "Extend":
        certain, maybe = bound_by(node.p)
        return certain | {str(node.var)}, maybe
    if name == "Graph":
        certain, maybe = bound_by(node.p)
        return certain | ({str(node.term)} if isinstance(node.term, Variable) else set()), maybe
    if name == "Project" and getattr(node, "PV", None) is not None:
        certain, maybe = bound_by(node.p)
        kept = {str(v) for v in node.PV}
        return certain & kept, maybe & kept
    if name == "values":
        # rdflib writes UNDEF as the string "UNDEF"
        rows = [{str(v) for v, value in row.items() if isinstance(value, Node)} for row in node.res]
        every = set.intersection(*rows) if rows else set()
        return every, set().union(*rows) - every
    return {str(v) for v in getattr(node, "_vars", ())}, set()


_NOT_READ = frozenset({"Builtin_EXISTS", "Builtin_NOTEXISTS"})
"""Expressions whose pattern binds its own variables: what they name is not read from the group."""
_READS_UNBOUND = frozenset({"Builtin_BOUND", "Builtin_COALESCE"})
"""Expressions meant for variables that may be unbound: a FILTER with one is not judged."""


def _read_by(expr: Any, into: set[str]) -> bool:
    """Add to ``into`` the variables ``expr`` reads from its group; False when it asks
    whether one is bound (``BOUND``, ``COALESCE``), which an unbound variable answers."""
    from rdflib.plugins.sparql.parserutils import CompValue

    if isinstance(expr, Variable):
        into.add(str(expr))
        return True
    if isinstance(expr, (list, tuple)):
        return all(_read_by(e, into) for e in expr)
    if isinstance(expr, CompValue):
        if expr.name in _READS_UNBOUND:
            return False
        if expr.name in _NOT_READ:
            return True
        return all(_read_by(v, into) for k, v in expr.items() if not k.startswith("_"))
    return True


def filter_scopes(node: Any) -> list[tuple[frozenset[str], frozenset[str]]]:
    """For each FILTER of a SPARQL algebra ``node`` (an ``OPTIONAL``'s own too): the
    variables its expression reads, and those its group binds in some solution. A FILTER
    sees only its own group's variables, so one it reads that the group never binds is
    unbound in every solution: a comparison with it is an error and the FILTER is never true.
    Not listed: a FILTER that asks ``BOUND`` or ``COALESCE`` (meant for unbound variables),
    and what ``EXISTS``/``NOT EXISTS`` name (their pattern binds its own)."""
    found: list[tuple[frozenset[str], frozenset[str]]] = []
    for expr, scope in _filters(node):
        read: set[str] = set()
        if expr.name != "TrueFilter" and _read_by(expr, read):
            found.append((frozenset(read), scope))
    return found


def bound_tests(node: Any) -> list[tuple[str, bool, bool, frozenset[str]]]:
    """Each ``BOUND(?var)`` and ``!BOUND(?var)`` a FILTER of a SPARQL algebra ``node`` asks
    (outside EXISTS), as (var, whether under ``!``, whether it decides its FILTER, the
    variables the FILTER's group binds in some solution). ``BOUND`` decides when it is
    needed (reached through ``&&`` alone: the FILTER holds only if it does), ``!BOUND`` when
    it is enough (through ``||`` alone: the FILTER holds whenever it does). Of a variable
    its group never binds, ``BOUND`` is always false and ``!BOUND`` always true: what
    :func:`filter_scopes` leaves out, a FILTER asking BOUND being meant for unbound
    variables."""
    found: list[tuple[str, bool, bool, frozenset[str]]] = []
    for expr, scope in _filters(node):
        found += [(var, negated, decides, scope) for var, negated, decides in _bound_calls(expr)]
    return found


def _bound_calls(
    expr: Any, needed: bool = True, enough: bool = True
) -> list[tuple[str, bool, bool]]:
    """The ``BOUND(?var)`` calls of ``expr`` outside EXISTS, as (var, under ``!``, decides:
    :func:`bound_tests`)."""
    from rdflib.plugins.sparql.parserutils import CompValue

    if isinstance(expr, (list, tuple)):
        return [c for e in expr for c in _bound_calls(e, needed, enough)]
    if not isinstance(expr, CompValue) or expr.name in _NOT_READ:
        return []
    called = expr.get("expr") if expr.name == "UnaryNot" else expr
    if getattr(called, "name", None) == "Builtin_BOUND" and isinstance(called.arg, Variable):
        negated = called is not expr
        return [(str(called.arg), negated, enough if negated else needed)]
    return [c for v, *inner in _operands(expr, needed, enough) for c in _bound_calls(v, *inner)]


def _operands(expr: CompValue, needed: bool, enough: bool) -> list[tuple[Any, bool, bool]]:
    """``expr``'s operands, each with whether it is needed (the FILTER holds only if it does:
    reached through ``&&`` alone) and enough (it holds whenever it does: through ``||``
    alone), ``expr`` being needed and enough as given: how a FILTER's parts are walked."""
    inner = (
        needed and expr.name == "ConditionalAndExpression",
        enough and expr.name == "ConditionalOrExpression",
    )
    return [(v, *inner) for k, v in expr.items() if not k.startswith("_")]


def _filters(node: Any) -> list[tuple[CompValue, frozenset[str]]]:
    """Each FILTER expression of a SPARQL algebra ``node`` (an ``OPTIONAL``'s own too), with
    the variables its group binds in some solution: all it can see."""
    from rdflib.plugins.sparql.parserutils import CompValue

    found: list[tuple[CompValue, frozenset[str]]] = []
    name = getattr(node, "name", None)
    if name is None:
        return found
    expr = getattr(node, "expr", None)
    if name in ("Filter", "LeftJoin") and isinstance(expr, CompValue):
        scope: set[str] = set()
        for part in (node.p,) if name == "Filter" else (node.p1, node.p2):
            certain, maybe = bound_by(part)
            scope |= certain | maybe
        found.append((expr, frozenset(scope)))
    for key in ("p", "p1", "p2"):
        child = node.get(key)
        if isinstance(child, CompValue):
            found += _filters(child)
    return found


def detached_tests(node: Any) -> list[tuple[str, list[str]]]:
    """Each ``EXISTS`` / ``NOT EXISTS`` in a FILTER of a SPARQL algebra ``node`` whose pattern
    names variables and shares none with its FILTER's group, as ``("NOT EXISTS", its
    variables)``, in the order the pattern names them (the first is its first subject).
    Such a test does not ask about the solution at hand but about the whole world:
    ``FILTER NOT EXISTS { ?patient :queuedAt ?t }`` beside ``?this :acuity ?q`` holds only
    while no node at all is queued, so after the first patient the step is blocked for every
    other. (Which of the group's variables the run gives, ``?this`` say, is for the caller
    to add: those are shared too.)"""
    found: list[tuple[str, list[str]]] = []
    for expr, scope in _filters(node):
        for test in _tests(expr):
            named = list(dict.fromkeys(str(v) for v in _variables(test.get("graph"))))
            if named and not scope.intersection(named):
                kind = "NOT EXISTS" if test.name == "Builtin_NOTEXISTS" else "EXISTS"
                found.append((kind, named))
    return found


def _tests(expr: Any) -> list[CompValue]:
    """The ``EXISTS`` / ``NOT EXISTS`` an expression makes (not those nested in their
    patterns: those are their own FILTERs' business)."""
    from rdflib.plugins.sparql.parserutils import CompValue

    if isinstance(expr, (list, tuple)):
        return [t for e in expr for t in _tests(e)]
    if not isinstance(expr, CompValue):
        return []
    if expr.name in _NOT_READ:
        return [expr]
    return [t for k, v in expr.items() if not k.startswith("_") for t in _tests(v)]


def _variables(node: Any) -> list[Variable]:
    """Every variable a pattern names, in its triples, filters and nested groups, in the
    order it names them."""
    from rdflib.plugins.sparql.parserutils import CompValue

    if isinstance(node, Variable):
        return [node]
    if isinstance(node, (list, tuple)):
        return [v for n in node for v in _variables(n)]
    if isinstance(node, CompValue):
        return [v for k, n in node.items() if k != "_vars" for v in _variables(n)]
    return []


_COMPARED = frozenset({"=", "!=", "<", ">", "<=", ">="})
_LISTED = {"IN": "=", "NOT IN": "!="}
"""``?v IN (…)`` holds as ``?v = `` one of the list, ``?v NOT IN (…)`` as ``!=`` each."""


@dataclass(frozen=True, slots=True)
class InList:
    """The members of an ``IN`` / ``NOT IN`` list of several, and what the whole list does to
    its FILTER: ``needed`` (reached through ``&&`` alone: the FILTER holds only if it does),
    ``enough`` (through ``||`` alone, of a variable every solution binds). One member alone
    neither makes nor breaks the list; every member of the wrong kind does."""

    members: tuple[Node, ...]
    needed: bool
    enough: bool


@dataclass(frozen=True, slots=True)
class LiteralMatch:
    """A pattern holding ``property``'s values to ``literal``: as ``?s :p "lit"`` (``var``
    None), or in a FILTER comparing ``?var`` by ``op`` (``=`` for an ``IN`` list's member or
    ``sameTerm``, ``!=`` for a ``NOT IN``'s) — ``as_string`` when it is ``str(?var)`` that is
    compared (an IRI's text for a node, not the node); ``needed`` when the FILTER holds only
    if it does (reached through ``&&`` alone, not an ``IN`` of several members); ``enough``
    when the FILTER holds whenever it does (reached through ``||`` alone in its group's one
    FILTER, not a ``NOT IN`` of several members, of a variable every solution of the group
    binds). Under ``!`` or in a function's argument, neither. ``bound`` when every solution
    of the FILTER's group binds ``?var``: else, where it is unbound, a comparison is an
    error, and the FILTER drops that solution. ``in_list``: the list it is a member of, when
    it is one of several."""

    property: URIRef
    literal: Literal
    var: str | None = None
    op: str | None = None
    as_string: bool = False
    needed: bool = True
    enough: bool = True
    bound: bool = True
    in_list: InList | None = None


@dataclass(frozen=True, slots=True)
class IriMatch:
    """A FILTER comparing ``?var`` by ``op`` with the IRI ``iri`` (as :class:`LiteralMatch`
    with a literal), ``?var`` bound through ``property``: where its values are literals, no
    value is the node (``sameTerm(?ref, :urgent)``, ``?ref = :urgent``)."""

    property: URIRef
    iri: URIRef
    var: str
    op: str
    needed: bool = True
    enough: bool = True
    bound: bool = True
    in_list: InList | None = None
    """The ``IN`` / ``NOT IN`` list of several it is a member of, as :class:`LiteralMatch`'s."""


def group_triples(
    node: Any, *, minus: bool = True, every: bool = False
) -> list[tuple[Any, Any, Any]]:
    """The triple patterns of ``node``'s groups, nested ones (``OPTIONAL``, ``UNION``,
    subqueries) included: where a FILTER's variables are taken from. Without ``minus``, not
    a ``MINUS``'s, which no solution matches (what a solution's nodes are said to be). With
    ``every``, only those every solution matches: not an ``OPTIONAL``'s, a ``UNION``'s
    branches or a ``MINUS``'s (what must hold before the pattern has a solution)."""
    name = getattr(node, "name", None)
    if name is None or (every and name == "Union"):
        return []
    if name == "BGP":
        return list(node.triples)
    if name in ("Minus", "LeftJoin") and every:
        keys: tuple[str, ...] = ("p1",)
    else:
        keys = ("p", "p1") if name == "Minus" and not minus else ("p", "p1", "p2")
    return [t for key in keys for t in group_triples(node.get(key), minus=minus, every=every)]


@dataclass(frozen=True, slots=True)
class _Comparison:
    """One ``?var OP term`` a FILTER makes (:func:`_comparisons`)."""

    var: str
    term: Literal | URIRef
    op: str
    as_string: bool
    needed: bool
    enough: bool
    in_list: InList | None


def _comparisons(expr: Any, needed: bool = True, enough: bool = True) -> list[_Comparison]:
    """Each ``?var OP term`` (either way round, a literal or an IRI), ``sameTerm(?var,
    term)`` (as ``=``), ``?var IN (terms…)`` and ``NOT IN``, and each of these of
    ``str(?var)``, ``expr`` makes outside EXISTS, an ``IN`` member's OP ``=``, a ``NOT IN``'s
    ``!=``, with whether it is needed and enough (:class:`LiteralMatch`). Several FILTERs of
    a group are one ``&&``."""
    from rdflib.plugins.sparql.parserutils import CompValue

    if isinstance(expr, (list, tuple)):
        return [c for e in expr for c in _comparisons(e, needed, enough)]
    if not isinstance(expr, CompValue) or expr.name in _NOT_READ:
        return []
    found = [c for v, *inner in _operands(expr, needed, enough) for c in _comparisons(v, *inner)]
    in_list = None
    if expr.name == "Builtin_sameTerm":
        op, a, b = "=", expr.get("arg1"), expr.get("arg2")
    elif expr.name == "RelationalExpression":
        op, a, b = str(expr.get("op")), expr.get("expr"), expr.get("other")
    else:
        return found
    if op in _LISTED and isinstance(b, (list, tuple)):
        if len(b) > 1:  # of several members, one alone neither makes nor breaks it
            in_list = InList(tuple(b), needed, enough)
            needed, enough = needed and op == "NOT IN", enough and op == "IN"
        op, listed = _LISTED[op], [x for x in b if isinstance(x, Literal | URIRef)]
    elif op in _COMPARED:
        if isinstance(a, Literal | URIRef):
            a, b = b, a
        listed = [b] if isinstance(b, Literal | URIRef) else []
    else:
        return found
    as_string = isinstance(a, CompValue) and a.name == "Builtin_STR"
    if as_string:
        a = a.get("arg")
    if isinstance(a, Variable):
        found += [
            _Comparison(str(a), term, op, as_string, needed, enough, in_list) for term in listed
        ]
    return found


def literal_matches(node: Any, *, minus: bool = True) -> list[LiteralMatch]:
    """Where a SPARQL algebra ``node`` holds a property's values to a literal: each triple
    pattern ``?s :p "lit"``, and each FILTER comparison of ``?var`` (or ``str(?var)``) with
    a literal for every ``?s :p ?var`` of the FILTER's group (none when a triple of the group
    binds ``?var`` through a variable or a path: what it takes is unknown). What the
    property's rdfs:range says its values are can then be held against the literal; a
    variable several properties bind (in a ``UNION``'s branches) is judged by all of them.
    Without ``minus``, not inside a ``MINUS``: a match there that never holds takes nothing
    away, where one outside it leaves the pattern no solution."""
    found: list[LiteralMatch] = []
    for group in _groups(node, minus=minus):
        if group.name == "BGP":
            found += [
                LiteralMatch(p, o)
                for _, p, o in group.triples
                if isinstance(p, URIRef) and isinstance(o, Literal)
            ]
        for c, p, bound in _filter_comparisons(group):
            if isinstance(c.term, Literal):
                enough = c.enough and bound  # unbound, ``!=`` is an error: excluded
                found.append(
                    LiteralMatch(
                        p, c.term, c.var, c.op, c.as_string, c.needed, enough, bound, c.in_list
                    )
                )
    return found


def iri_matches(node: Any) -> list[IriMatch]:
    """Each FILTER (in)equality of ``?var`` itself with an IRI (``=``, ``!=``, ``sameTerm``,
    ``IN``, ``NOT IN``) in a SPARQL algebra ``node``, for every ``?s :p ?var`` of the FILTER's
    group, as :func:`literal_matches` finds those with a literal."""
    return [
        IriMatch(p, c.term, c.var, c.op, c.needed, c.enough and bound, bound, c.in_list)
        for group in _groups(node)
        for c, p, bound in _filter_comparisons(group)
        if isinstance(c.term, URIRef) and not c.as_string and c.op in ("=", "!=")
    ]


def _filter_comparisons(group: CompValue) -> Iterator[tuple[_Comparison, URIRef, bool]]:
    """Each comparison of ``group``'s FILTER, when it is one (:func:`_comparisons`), once for
    every property the group binds the variable through, with whether every solution of the
    group binds it."""
    for expr, binders in _filter_binders(group):
        parts = (group.p,) if group.name == "Filter" else (group.p1, group.p2)
        certain = set().union(*(bound_by(part)[0] for part in parts))
        for c in _comparisons(expr):
            for p in binders(c.var):
                yield c, p, c.var in certain


_STRING_ARGUMENT = {
    "REGEX": "text",
    "CONTAINS": "arg1",
    "STRSTARTS": "arg1",
    "STRENDS": "arg1",
    "STRBEFORE": "arg1",
    "STRAFTER": "arg1",
    "LCASE": "arg",
    "UCASE": "arg",
    "STRLEN": "arg",
    "SUBSTR": "arg",
    "REPLACE": "arg",
}
"""SPARQL's string functions and the argument each reads as a string: given an IRI there, the
call is an error, whatever the IRI (``regex(?queue, "urgent")`` for a node ``?queue``)."""


def string_reads(node: Any) -> list[tuple[URIRef, str, str]]:
    """Each call of a string function on a variable in a FILTER of a SPARQL algebra
    ``node`` (outside EXISTS), as (property, variable, function) for every ``?s :p ?var``
    of the FILTER's group — none when a triple of the group binds it through a variable or
    a path. Of a property whose values are nodes, the call is an error for every value."""
    found: list[tuple[URIRef, str, str]] = []
    for expr, binders in (f for group in _groups(node) for f in _filter_binders(group)):
        for call in _string_calls(expr):
            fn = call.name.removeprefix("Builtin_")
            var = call.get(_STRING_ARGUMENT[fn])
            if isinstance(var, Variable):
                found += [(p, str(var), fn) for p in binders(str(var))]
    return found


def _string_calls(expr: Any) -> list[CompValue]:
    """The string function calls ``expr`` makes, outside EXISTS (its own FILTERs' business)."""
    from rdflib.plugins.sparql.parserutils import CompValue

    if isinstance(expr, (list, tuple)):
        return [c for e in expr for c in _string_calls(e)]
    if not isinstance(expr, CompValue) or expr.name in _NOT_READ:
        return []
    inner = [c for k, v in expr.items() if not k.startswith("_") for c in _string_calls(v)]
    return [expr, *inner] if expr.name.removeprefix("Builtin_") in _STRING_ARGUMENT else inner


def _groups(node: Any, *, minus: bool = True) -> list[CompValue]:
    """Every group of a SPARQL algebra ``node``, nested ones too, each before those in it;
    without ``minus``, none a ``MINUS`` takes away."""
    name = getattr(node, "name", None)
    if name is None:
        return []
    keys = ("p", "p1") if name == "Minus" and not minus else ("p", "p1", "p2")
    return [node, *(g for key in keys for g in _groups(node.get(key), minus=minus))]


def _filter_binders(group: CompValue) -> list[tuple[CompValue, Callable[[str], list[URIRef]]]]:
    """The expression of ``group`` when it is a FILTER (or an ``OPTIONAL``'s), with what
    gives a variable the properties its group binds it through (``?s :p ?var``); none when a
    triple binds it through a variable or a path: what it takes is then unknown."""
    from rdflib.plugins.sparql.parserutils import CompValue

    expr = group.get("expr")
    if group.name not in ("Filter", "LeftJoin") or not isinstance(expr, CompValue):
        return []
    scope = group.p if group.name == "Filter" else group
    triples = group_triples(scope)
    assigned = _assigned(scope)

    def binders(var: str) -> list[URIRef]:
        if var in assigned:
            return []
        props = [p for _, p, o in triples if isinstance(o, Variable) and str(o) == var]
        return props if all(isinstance(p, URIRef) for p in props) else []

    return [(expr, binders)]


def _assigned(node: Any) -> set[str]:
    """The variables ``node``'s groups (as :func:`group_triples` walks them) give values other
    than through a triple: ``BIND (… AS ?v)``, ``VALUES ?v``, a subquery's projection. Such a
    variable may take what no property binding it does (``BIND (?ref AS ?queue)`` beside
    ``?this :acuity ?queue`` in a ``UNION``'s other branch)."""
    name = getattr(node, "name", None)
    if name is None:
        return set()
    found: set[str] = set()
    if name == "Extend":
        found.add(str(node.var))
    elif name == "values":
        found |= {str(v) for row in node.res for v in row}
    elif name == "Project":
        found |= {str(v) for v in getattr(node, "PV", None) or ()}
    for key in ("p", "p1", "p2"):
        found |= _assigned(node.get(key))
    return found


# -- why a precondition does not hold ------------------------------------------------------

Select = Callable[[str, Mapping[str, Node], Mapping[str, str]], list[dict[str, Node]]]
"""A store's ``select(query, bindings, prefixes)``."""


def _select_text(body: str) -> tuple[str, set[str]]:
    used = {m.group(1) for m in _VAR.finditer(body)}
    # every variable projected: a store may take values only for variables in scope
    names = " ".join(f"?{n}" for n in sorted(used)) or "*"
    return f"SELECT {names} WHERE {{\n{body}\n}} LIMIT 1", used


def first_failing(pre: Precondition, bindings: Mapping[str, Node], select: Select) -> str:
    """The first pattern with no solution on its own, or all of them joined: the text a
    blocked step records (in the instance's state and its trace)."""
    prefixes = dict(pre.prefixes)
    for p in pre.patterns:
        text, used = _select_text(p.text)
        if not select(text, {n: v for n, v in bindings.items() if n in used}, prefixes):
            return p.text
    return " ".join(p.text for p in pre.patterns)


def explain(pre: Precondition, bindings: Mapping[str, Node], select: Select) -> str:
    """The first part of ``pre`` with no solution, and the values bound when it was reached."""
    parts = [e for p in pre.patterns for e in elements(p.text)]
    parts = [e for e in parts if not _is_filter(e)] + [e for e in parts if _is_filter(e)]
    prefixes = dict(pre.prefixes)
    known: dict[str, Node] = dict(bindings)
    for k in range(1, len(parts) + 1):
        text, used = _select_text("\n".join(parts[:k]))
        try:
            rows = select(text, {n: v for n, v in bindings.items() if n in used}, prefixes)
        except Exception:  # a part that does not stand alone: name the whole pattern
            break
        if not rows:
            part = " ".join(parts[k - 1].split())
            shown = sorted({m.group(1) for m in _VAR.finditer(part)} & known.keys())
            values = ", ".join(f"?{n} = {_short(known[n], prefixes)}" for n in shown)
            verb = "does not hold" if _is_filter(part) else "has no solution"
            return f"{part} {verb}" + (f" for {values}" if values else "")
        known.update(rows[0])
    whole = " ".join(" ".join(p.text.split()) for p in pre.patterns)
    return f"{whole} has no solution"  # each part holds, the whole does not (or cannot cut)


def why_blocked(
    requires: Sequence[Precondition | None],
    blocked_by: str | None,
    explain: Callable[[Precondition, Mapping[str, Node]], str] | None,
    bindings: Mapping[str, Node],
) -> str:
    """Why a step was blocked, for a person: which part of the preconditions it recorded as
    failing (``blocked_by``, of its own or its tool's ``requires``) has no solution, with the
    values bound when it was reached, asked of the world (``explain``: its store's); the failing
    pattern on one line when it cannot be told (no world to ask, or a part that does not
    stand alone). ``run`` and ``serve``'s ``run_workflow`` say the same."""
    text = f"this pattern does not hold: {' '.join((blocked_by or '').split())}"
    for pre in requires:
        if explain is None or pre is None:
            continue
        written = [p.text for p in pre.patterns]
        if blocked_by not in (*written, " ".join(written)):
            continue
        try:
            return explain(pre, dict(bindings))
        except Exception:  # no diagnosis: the pattern stays shown
            return text
    return text


def _is_filter(part: str) -> bool:
    return part.lstrip()[:6].upper() == "FILTER"


def _short(node: Node, prefixes: Mapping[str, str]) -> str:
    if isinstance(node, URIRef):
        best = max(
            ((p, ns) for p, ns in prefixes.items() if str(node).startswith(ns)),
            key=lambda x: len(x[1]),
            default=None,
        )
        if best is not None and re.fullmatch(r"[\w.-]*", str(node)[len(best[1]) :]):
            return f"{best[0]}:{str(node)[len(best[1]) :]}"
    return node.n3()


_TOKEN = re.compile(
    r"""
    (?P<space>\s+|\#[^\n]*)
  | (?P<string>\"\"\"(?:[^\\]|\\.)*?\"\"\"|'\'\'(?:[^\\]|\\.)*?'\'\'
              |"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
              (?:@[A-Za-z]+(?:-[A-Za-z0-9]+)*|\^\^(?:<[^<>\s]*>|[\w-]*:(?:[\w.-]*\w)?))?
  | (?P<iri><[^<>"{}|^`\\\s]*>)
  | (?P<open>[{(\[])
  | (?P<close>[})\]])
  | (?P<punct>[.;,](?![0-9]))
  | (?P<word>[^\s{}()\[\];,"'<>]+?(?=[\s{}()\[\];,"'<]|\.(?:\s|$|[{}()\[\]])|$))
  | (?P<other>.)
""",
    re.VERBOSE | re.DOTALL,
)

_BLOCKS = {"FILTER", "OPTIONAL", "MINUS", "BIND", "VALUES", "GRAPH", "SERVICE"}


def _tokens(text: str) -> list[tuple[str, int, int]]:
    """(kind, start, end) at the top level; a bracketed group is one ``group`` token."""
    out: list[tuple[str, int, int]] = []
    depth, start = 0, 0
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup or "other"
        if kind == "space":
            continue
        if kind == "open":
            if depth == 0:
                start = m.start()
            depth += 1
        elif kind == "close":
            depth -= 1
            if depth == 0:
                out.append(("group", start, m.end()))
            elif depth < 0:
                raise ValueError("unbalanced")
        elif depth == 0:
            out.append((kind, m.start(), m.end()))
    if depth:
        raise ValueError("unbalanced")
    return out


def elements(text: str) -> list[str]:
    """A group graph pattern cut into its triple patterns (one per object, each ending in
    " .") and its other parts (FILTER, OPTIONAL, …, a nested group), in written order; the
    whole text as one part when it cannot be cut."""
    try:
        toks = _tokens(text)
        out: list[str] = []
        i = 0
        while i < len(toks):
            kind, a, b = toks[i]
            word = text[a:b].upper() if kind == "word" else ""
            if word in _BLOCKS or (kind == "group" and text[a] == "{"):
                j = i
                while j < len(toks) and not (
                    toks[j][0] == "group"
                    and (
                        text[toks[j][1]] in "{("
                        and (word not in ("VALUES", "GRAPH", "SERVICE") or text[toks[j][1]] == "{")
                    )
                ):
                    j += 1
                while j + 2 < len(toks) and text[toks[j + 1][1] : toks[j + 1][2]].upper() == (
                    "UNION"
                ):
                    j += 2
                if j >= len(toks):
                    return [text.strip()]
                out.append(text[a : toks[j][2]])
                i = j + 1
                if i < len(toks) and text[toks[i][1] : toks[i][2]] == ".":
                    i += 1
                continue
            subject = text[a:b]
            i += 1
            while i < len(toks):  # predicate-object lists
                pred = text[toks[i][1] : toks[i][2]]
                i += 1
                while True:
                    if i >= len(toks):
                        return [text.strip()]
                    obj = text[toks[i][1] : toks[i][2]]
                    out.append(f"{subject} {pred} {obj} .")
                    i += 1
                    sep = text[toks[i][1] : toks[i][2]] if i < len(toks) else "."
                    if sep != ",":
                        break
                    i += 1
                if sep == ";":
                    i += 1
                    if i < len(toks) and text[toks[i][1] : toks[i][2]] in (".", ";"):
                        sep = text[toks[i][1] : toks[i][2]]
                    else:
                        continue
                if sep == "." and i < len(toks):
                    i += 1
                break
        return out or [text.strip()]
    except ValueError:
        return [text.strip()]


def bound_constant(algebra: Any, var: str) -> Literal | URIRef | None:
    """The one constant every solution of ``algebra`` gives ``?var`` by a ``BIND`` of its
    own group (``BIND("14" AS ?days)``), or None: bound otherwise, by an expression, or only
    in an ``OPTIONAL``, a ``UNION``'s branch, a ``MINUS`` or an ``EXISTS``, where other
    solutions may give it another value or none."""
    stack = [algebra]
    while stack:
        x = stack.pop()
        name = getattr(x, "name", None)
        if name == "Extend" and str(x.var) == var:
            expr = x.expr
            return expr if isinstance(expr, Literal | URIRef) else None
        if name in ("Union", "Minus", "Builtin_EXISTS", "Builtin_NOTEXISTS"):
            if name == "Minus":
                stack.append(x.p1)
            continue
        if name == "LeftJoin":
            stack.append(x.p1)
        elif name in ("Extend", "Filter", "Project", "Distinct", "Reduced", "Slice"):
            stack.append(x.p)
        elif name in ("Join", "SelectQuery"):
            stack.extend(x[k] for k in ("p", "p1", "p2") if k in x)
    return None


def pattern_groups(node: Any) -> list[CompValue]:
    """Every group of a SPARQL algebra ``node``, nested ones too (:func:`_groups`)."""
    return _groups(node)


def assigned_variables(node: Any) -> set[str]:
    """The variables ``node`` gives values other than through a triple (:func:`_assigned`)."""
    return _assigned(node)
