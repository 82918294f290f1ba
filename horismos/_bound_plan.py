"""A prepared query re-planned for the variables bound when it is evaluated (rdflib).

rdflib orders a basic graph pattern's triple patterns once, when the query is parsed, most
bound terms first. Values given as initial bindings are not in the text, so the parser counts
``?a horis:instance ?i`` as two unknowns and ``?a a horis:StepExecution`` as one, and the
evaluation starts by reading every step execution the world holds, then looks for the one
instance among them. The text cannot change to steer it: a run's reads are recorded by their
query's text and a recorded trace replays by matching it (:mod:`horismos._reads`).

So the ``memory`` store and a precondition evaluated by rdflib use the same text by a plan
made knowing which variables are bound (:func:`bound_first`, ``_ordered`` says how). Ordering
a basic graph pattern changes what it costs, never its solutions, so the answer, and what a
trace records of it, are the same.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from rdflib import RDF, BNode, Variable

if TYPE_CHECKING:  # rdflib's SPARQL package is imported by the first query parsed
    from rdflib.plugins.sparql.sparql import Query

__all__ = ["bound_first"]

_Triple = tuple[Any, Any, Any]


@lru_cache(maxsize=512)
def bound_first(query: Query, bound: frozenset[str]) -> Query:
    """``query`` with each basic graph pattern ordered knowing ``bound``'s variables
    (``query`` itself when none is bound). Kept per prepared query and set of bound names: a
    store asks the same few queries with the same variables bound."""
    if not bound:
        return query
    from rdflib.plugins.sparql.sparql import Query

    return Query(query.prologue, _replanned(query.algebra, frozenset(map(Variable, bound))))


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
    before ``?i horis:workflow ?wf``: a bound value is not always the fewer)."""
    known: set[Any] = set(bound)
    left, out = list(triples), []
    while left:
        best = min(range(len(left)), key=lambda i: _cost(left[i], known))
        chosen = left.pop(best)
        out.append(chosen)
        known.update(t for t in chosen if isinstance(t, Variable | BNode))
    return out


def _cost(triple: _Triple, known: set[Any]) -> tuple[int, bool, bool]:
    s, p, o = triple
    unknown = sum(isinstance(t, Variable | BNode) and t not in known for t in triple)
    subject_unknown = isinstance(s, Variable | BNode) and s not in known
    members = subject_unknown and p == RDF.type and not isinstance(o, Variable | BNode)
    return unknown, subject_unknown, members
