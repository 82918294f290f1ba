"""A prepared query re-planned for the variables bound when it is evaluated (rdflib).

rdflib orders a basic graph pattern's triple patterns once, when the query is parsed, most
bound terms first. Values given as initial bindings are not in the text, so the parser counts
``?a horis:instance ?i`` as two unknowns and ``?a a horis:StepExecution`` as one, and the
evaluation starts by reading every step execution the world holds, then looks for the one
instance among them. The text cannot change to steer it: a run's reads are recorded by their
query's text and a recorded trace replays by matching it (:mod:`horismos._reads`).

So the ``memory`` store and a precondition evaluated by rdflib use the same text by a plan
made knowing which variables are bound (:func:`bound_first`, ``_ordered`` says how). Ordering
a basic graph pattern changes what it costs and the order its solutions come in, never which
they are, so long as each property path's ends are bound, or not, when it is reached as they
were in rdflib's order: rdflib answers a path by the ends bound (``?s ?p ?o . ?p :q* ?y``
gives a zero-length row with ``?p`` bound, none with ``?p`` unbound), so a path's ends keep
their state. A query whose answer depends on the order of its rows is left as parsed: a
``LIMIT``/``OFFSET`` not over an ``ORDER BY`` of every projected variable (a tie keeps the
order the rows came in), ``SAMPLE``, ``GROUP_CONCAT``, ``SUM`` and ``AVG`` (a float's sum
depends on its order). So the answer is the same multiset of rows as rdflib's; the rows of a
query without ``ORDER BY`` may come in another order.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from rdflib import RDF, BNode, Variable
from rdflib.paths import Path

from ._aggregate_names import ROW_ORDERED

if TYPE_CHECKING:  # rdflib's SPARQL package is imported by the first query parsed
    from rdflib.plugins.sparql.sparql import Query

__all__ = ["bound_first"]

_Triple = tuple[Any, Any, Any]


def bound_first(query: Query, bound: frozenset[str]) -> Query:
    """``query`` with each basic graph pattern ordered knowing ``bound``'s variables
    (``query`` itself when none of them occurs in it, or when its answer depends on the
    order of its rows). Kept per prepared query and set of bound names it writes: a store
    asks the same few queries with the same variables bound, and names bound beside them
    (a step's other values) do not make another plan."""
    named, fixed = _shape(query)
    used = frozenset(v for v in bound if v in named)
    if fixed or not used:
        return query
    return _planned(query, used)


@lru_cache(maxsize=512)
def _shape(query: Query) -> tuple[frozenset[str], bool]:
    """The names of the variables written in ``query``, and whether its answer depends on
    the order of its rows (:func:`_order_matters`); kept per prepared query."""
    return frozenset(map(str, _named(query.algebra))), _order_matters(query.algebra)


@lru_cache(maxsize=512)
def _planned(query: Query, bound: frozenset[str]) -> Query:
    from rdflib.plugins.sparql.sparql import Query

    return Query(query.prologue, _replanned(query.algebra, frozenset(map(Variable, bound))))


def _order_matters(algebra: Any) -> bool:
    """Whether the answer of ``algebra`` may change with the order its rows come in: a
    ``Slice`` (``LIMIT``/``OFFSET``) not over an ``ORDER BY`` of every projected variable,
    or an aggregate that keeps the first value or joins them in order."""
    from rdflib.plugins.sparql.parserutils import CompValue

    stack = [algebra]
    while stack:
        x = stack.pop()
        if isinstance(x, CompValue):
            if x.name == "AggregateJoin" and any(_first_of_many(a, x["p"]) for a in x["A"]):
                return True
            if x.name == "Slice" and not _fully_ordered(x["p"]):
                return True
            stack.extend(x.values())
        elif isinstance(x, list | tuple):
            stack.extend(x)
    return False


def _first_of_many(aggregate: Any, group: Any) -> bool:
    """Whether ``aggregate`` answers from the order of its group's rows: ``SAMPLE`` (but of a
    variable the rows are grouped by, as rdflib projects one), ``GROUP_CONCAT``, ``SUM`` or
    ``AVG``, by rdflib's name or the ``memory`` store's (:mod:`._aggregate_names`)."""
    if aggregate.name == "Aggregate_Sample":
        keys = group.get("expr") if getattr(group, "name", None) == "Group" else None
        return not (isinstance(aggregate["vars"], Variable) and aggregate["vars"] in (keys or ()))
    return aggregate.name in ROW_ORDERED


def _fully_ordered(node: Any) -> bool:
    """Whether ``node`` (what a ``Slice`` cuts) is ordered by an ``ORDER BY`` whose keys are
    plain variables naming every projected one: two rows it leaves tied project the same
    values. A key that is an expression may tie rows that differ."""
    projected: frozenset[Variable] | None = None
    while getattr(node, "name", None) in ("Distinct", "Reduced", "Project"):
        if node.name == "Project":
            projected = frozenset(node["PV"])
        node = node["p"]
    if getattr(node, "name", None) != "OrderBy" or projected is None:
        return False
    keys = [c["expr"] if getattr(c, "name", None) == "OrderCondition" else c for c in node["expr"]]
    return all(isinstance(k, Variable) for k in keys) and projected <= set(keys)


def _replanned(node: Any, known: frozenset[Variable]) -> Any:
    """A copy of the algebra ``node`` with every basic graph pattern in it re-ordered,
    ``known`` the variables bound when it is evaluated: in a join rdflib evaluates the
    second part once per solution of the first (an ``OPTIONAL``, and a group's ``VALUES``
    before its patterns), so the first part's variables are known in the second. An
    expression (a FILTER's, an ``EXISTS``'s pattern) is shared as it is: its evaluation
    function is bound to the very object it evaluates."""
    from rdflib.plugins.sparql.parserutils import CompValue, Expr

    if isinstance(node, CompValue) and not isinstance(node, Expr):
        out = CompValue(node.name)
        out.__dict__.update(vars(node))  # ``_vars`` and ``lazy``, which the evaluation reads
        joined = node.name == "LeftJoin" or (node.name == "Join" and node.get("lazy") is True)
        second = known | _named(node["p1"]) if joined else known
        for key, value in node.items():
            out[key] = _replanned(value, second if key == "p2" else known)
        if node.name == "BGP":
            out["triples"] = _ordered(node["triples"], known)
        return out
    if isinstance(node, list):
        return [_replanned(x, known) for x in node]
    return node


def _named(node: Any) -> frozenset[Variable]:
    """The variables written anywhere in ``node`` (a ``VALUES`` row's among them): those
    a part of a join may bind, a superset of those it does."""
    found: set[Variable] = set()
    stack = [node]
    while stack:
        x = stack.pop()
        if isinstance(x, Variable):
            found.add(x)
        elif isinstance(x, dict):
            stack.extend(x.keys())
            stack.extend(x.values())
        elif isinstance(x, list | tuple | set):
            stack.extend(x)
    return frozenset(found)


def _ordered(triples: list[_Triple], bound: frozenset[Variable]) -> list[_Triple]:
    """Each next pattern the one with the fewest variables still unknown; of those, one whose
    subject is known (a node's own edges: ``?this :item ?item`` before ``?item :rank 0``);
    then any but a class's members (``?a horis:instance ?i`` before ``?a a
    horis:StepExecution``). Ties keep rdflib's order (``?i horis:status horis:Waiting``
    before ``?i horis:workflow ?wf``: a bound value is not always the fewer).

    A property path is evaluated from the ends bound when it is reached, and answers by them
    (a ``*`` path's zero-length case, a falsy literal taken for an unbound end), so each
    path's ends are kept bound, or unbound, as they were in rdflib's order: a pattern binding
    an end the path reached unbound waits until the path is placed, and the path waits until
    the ends it reached bound are. Where no pattern can go next so, rdflib's order is kept."""
    external: set[Any] = set(bound)
    ends: dict[int, tuple[frozenset[Any], frozenset[Any]]] = {}  # a path's ends: bound, not
    seen: set[Any] = set(external)
    for i, triple in enumerate(triples):
        if isinstance(triple[1], Path):
            own = {t for t in (triple[0], triple[2]) if _variable(t) and t not in external}
            ends[i] = (frozenset(own & seen), frozenset(own - seen))
        seen.update(t for t in triple if _variable(t))
    known: set[Any] = set(bound)
    left, out = list(range(len(triples))), []
    while left:
        ready = [i for i in left if _may_go(i, triples, ends, left, known)]
        if not ready:
            return list(triples)
        chosen = min(ready, key=lambda i: (_cost(triples[i], known), left.index(i)))
        left.remove(chosen)
        out.append(triples[chosen])
        known.update(t for t in triples[chosen] if _variable(t))
    return out


def _variable(term: Any) -> bool:
    return isinstance(term, Variable | BNode)


def _may_go(
    i: int,
    triples: list[_Triple],
    ends: dict[int, tuple[frozenset[Any], frozenset[Any]]],
    left: list[int],
    known: set[Any],
) -> bool:
    """Whether pattern ``i`` may go next: a path's ends bound as in rdflib's order, and no
    end a path still to come reaches unbound bound by it."""
    if i in ends and not ends[i][0] <= known:
        return False
    names = {t for t in triples[i] if _variable(t)}
    return not any(j != i and names & ends[j][1] for j in left if j in ends)


def _cost(triple: _Triple, known: set[Any]) -> tuple[int, bool, bool]:
    s, p, o = triple
    unknown = sum(_variable(t) and t not in known for t in triple)
    subject_unknown = _variable(s) and s not in known
    members = subject_unknown and p == RDF.type and not _variable(o)
    return unknown, subject_unknown, members
