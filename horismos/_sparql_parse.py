"""SPARQL text prepared as rdflib prepares it, in about half the time when it has no comment.

rdflib's grammar (pyparsing) skips ``# …`` comments by trying its comment rule before each of
the ~1,300 elements a parse tries, each try failing with an exception: about half of parsing
a precondition, and parsing was most of loading a project. A text without ``#`` holds no
comment, so a copy of the grammar without the rule reads it to the very same parse tree; a
text with ``#`` (a comment, an IRI's fragment) is read by rdflib's own grammar. The copy is
made once per process (a few milliseconds); rdflib's grammar, the whole process's, is only
streamlined first, as its own first parse does.

rdflib's SPARQL package (its grammar, pyparsing, the algebra: ~80 ms) is imported by the first
parse, not by ``import horismos``: a command that reads no query never pays for it.

One parse at a time among Horismos's own (:data:`parsing`): pyparsing's grammar objects are
shared, and each parse action learns how many arguments it takes on its first calls, so
threads parsing at once (catalog calls from a thread pool) failed with a ``TypeError`` or a
``ParseException`` on valid SPARQL. Held by every parse Horismos makes (a query, the memory
store's updates) and by the first imports of rdflib's SPARQL package, never while anything
else is waited for, so it cannot be one of two locks taken in opposite orders. pyshacl's
queries (SPARQL constraints, a custom component's validator) are parsed through it too: the
graphs the gate hands pyshacl are :class:`PreparingGraph`. Not held by a parse a tool's own
rdflib makes on its own thread. Parsing is pure Python, so threads only took turns at it
anyway: the lock costs them nothing but the order.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

from rdflib import Graph, Literal

if TYPE_CHECKING:
    from pyparsing import ParserElement
    from rdflib.plugins.sparql.sparql import Query, Update

__all__ = ["PreparingGraph", "parsing", "prepare_query", "prepare_update", "thread_query"]

parsing = threading.RLock()
"""Held while Horismos parses SPARQL (reentrant: :func:`_uncommented` runs inside it)."""


def prepare_query(text: str, init_ns: Mapping[str, Any]) -> Query:
    """``rdflib.plugins.sparql.prepareQuery(text, initNs=init_ns)``: the same query, the same
    errors, but a constant ``FILTER`` kept (:func:`_constant_filter_kept`): rdflib's
    ``FILTER(false)`` kept every row, of a select, a precondition or a shape's query."""
    with parsing:  # the imports too: a package half imported by another thread is refused
        from rdflib.plugins.sparql import parser
        from rdflib.plugins.sparql.algebra import translateQuery, traverse

        expanded = parser.expandUnicodeEscapes(text)  # as rdflib's parseQuery does, first
        grammar = parser.Query if "#" in expanded else _uncommented()
        parsed = grammar.parse_string(expanded, parse_all=True)
        parsed[1] = traverse(parsed[1], visitPost=_constant_filter_kept)
        query = translateQuery(parsed, None, init_ns)
    query._original_args = (text, init_ns, None)  # as prepareQuery records them
    return query


def prepare_update(text: str) -> tuple[Update, list[str]]:
    """``text`` parsed and translated as rdflib's ``Graph.update`` does it, under
    :data:`parsing`: rdflib then evaluates the prepared update as it would have the text; and
    the IRI of each of its ``BASE`` declarations as written (the translation keeps only the
    last, resolved or not). A text of no operation (blank, a comment, prefixes) is an update
    of none, as on Oxigraph."""
    with parsing:
        from rdflib.plugins.sparql.algebra import translateUpdate, traverse
        from rdflib.plugins.sparql.parser import parseUpdate
        from rdflib.plugins.sparql.sparql import Prologue
        from rdflib.plugins.sparql.sparql import Update as Translated

        parsed = traverse(parseUpdate(text), visitPost=_constant_filter_kept)
        bases = [str(x.iri) for p in parsed.prologue or [] for x in p if x.name == "Base"]
        update = translateUpdate(parsed)
        if not isinstance(update, Translated):  # no operation: rdflib gives a bare list
            update = Translated(Prologue(), [])
        return update, bases


def _constant_filter_kept(node: Any) -> None:
    """A ``FILTER`` of a constant literal given it inside a ``COALESCE``, which evaluates to
    the same: rdflib's translation keeps a group's filters only if their conjunction is
    truthy as a Python value, so ``FILTER(false)`` (or ``0``, ``""``) was dropped and every
    row kept (rdflib 7's algebra.py, ``translateGroupGraphPattern``). A quoted literal
    (``FILTER("")``) is still its parse node here, made a literal by the translation."""
    from rdflib.plugins.sparql.operators import Builtin_COALESCE, simplify
    from rdflib.plugins.sparql.parserutils import CompValue, Expr

    if isinstance(node, CompValue) and node.name == "Filter":
        expr = simplify(node.get("expr"))  # as the translation will: the wrappers gone
        if isinstance(expr, Literal) or (isinstance(expr, CompValue) and expr.name == "literal"):
            node["expr"] = Expr("Builtin_COALESCE", Builtin_COALESCE, arg=[expr])


class PreparingGraph(Graph):
    """An rdflib graph whose SPARQL text is parsed under :data:`parsing`, once per text: the
    graph the gate hands pyshacl. pyshacl queries a data graph with text (a SPARQL
    constraint's, a custom component's validator's), which rdflib parsed on the gate's thread
    outside the lock: two catalog calls from threads judging a shape that was not parsed
    when it was loaded (a validator run per value, none in the empty graph the load judges)
    both failed with a TypeError, after their tool had acted, and so did every later parse of
    its grammar in the process.

    It cannot deadlock: the lock is held only while the text is parsed and translated, which
    takes no other lock and reads no store; the query is evaluated (the world read through
    the gate's view, a store's lock taken) once the lock is given back."""

    def query(
        self,
        query_object: Any,
        processor: Any = "sparql",
        result: Any = "sparql",
        initNs: Mapping[str, Any] | None = None,  # rdflib's names
        initBindings: Mapping[str, Any] | None = None,
        use_store_provided: bool = True,
        **kwargs: Any,
    ) -> Any:
        if isinstance(query_object, str) and not kwargs:  # pyshacl gives no base IRI
            # the prefixes rdflib would parse it with: the graph's when none are given
            ns = tuple(sorted((initNs or dict(self.namespaces())).items()))
            query_object = thread_query(query_object, ns)
        return super().query(
            query_object, processor, result, initNs, initBindings, use_store_provided, **kwargs
        )


_own = threading.local()
"""Each thread's prepared queries (:func:`thread_query`)."""
_HELD = 256  # prepared queries a thread keeps
_SPARE_EACH = 8  # queries of ended threads kept per text: as many threads as end at once
_SPARE_TEXTS = 1024

_Key = tuple[str, tuple[tuple[str, Any], ...], "Callable[[Query], None] | None"]
_spare: dict[_Key, list[Query]] = {}
"""The prepared queries of threads that have ended, by text and prefixes, for the threads
started after them: each is evaluated by one live thread at a time, as :func:`thread_query`
needs, and a server starting a thread per request parses each text a few times, not on every
request (~50 ms a call, 13x a pooled thread's, in ``bench_gate_sparql.py --new-thread``)."""
_spare_lock = threading.Lock()


class _Ending:
    """Kept in a thread's local data beside its prepared queries, and nowhere else: freed
    when the thread ends, when it hands them on (:func:`_hand_on`). Never held by a frame of
    :func:`thread_query`: the exceptions rdflib's parser raises and keeps would keep that
    frame, and so it, until the collector ran."""

    __slots__ = ("__weakref__",)


def _hand_on(queries: OrderedDict[_Key, Query]) -> None:
    """An ended thread's ``queries`` made spare: no thread evaluates them any more."""
    with _spare_lock:
        for key, query in queries.items():
            spare = _spare.get(key)
            if spare is None:
                if len(_spare) >= _SPARE_TEXTS:
                    continue
                spare = _spare[key] = []
            if len(spare) < _SPARE_EACH:
                spare.append(query)


def thread_query(
    text: str,
    ns: tuple[tuple[str, Any], ...],
    adapted: Callable[[Query], None] | None = None,
) -> Query:
    """``text`` prepared with the prefixes ``ns``, once per thread (256 texts a thread), or
    taken over from a thread that has ended: a query the same thread asks again is not parsed
    again, and no prepared query is ever evaluated by two threads. rdflib evaluates an
    expression by writing the row it is on onto the expression itself (``Expr.eval`` sets its
    ``ctx``, then clears it), so one query evaluated by two threads at once gave each the
    other's rows: wrong counts, and a gate's verdict another call's (29 of 40 in a two-thread
    reproduction). ``adapted``: changes the query in place once, when it is prepared (a
    store's own form of it); kept apart from the query the text prepares as it is, which
    others (preconditions, the gate's pyshacl graphs) are given."""
    queries: OrderedDict[_Key, Query] | None
    queries = getattr(_own, "queries", None)
    if queries is None:
        queries = _own.queries = OrderedDict()
        _own.ending = _Ending()
        weakref.finalize(_own.ending, _hand_on, queries)
    key = (text, ns, adapted)
    query = queries.get(key)
    if query is not None:
        queries.move_to_end(key)
        return query
    with _spare_lock:
        spare = _spare.get(key)
        query = spare.pop() if spare else None
    if query is None:
        query = prepare_query(text, dict(ns))
        if adapted is not None:
            adapted(query)
    queries[key] = query
    if len(queries) > _HELD:
        queries.popitem(last=False)
    return query


@cache
def _uncommented() -> ParserElement:
    """rdflib's query grammar, copied element by element, each copy without the comment
    rule: what it parses without a ``#``, it parses to the same tree as the original. Should a
    pyparsing build its elements so that they cannot be copied so, rdflib's own grammar: a
    slower load, never a project that no longer loads."""
    from rdflib.plugins.sparql import parser

    try:
        return _copied_without_comments()
    except Exception:
        return parser.Query


def _copied_without_comments() -> ParserElement:
    from pyparsing import ParserElement
    from rdflib.plugins.sparql import parser

    copies: dict[int, ParserElement] = {}

    def copied(e: ParserElement) -> ParserElement:
        if id(e) not in copies:
            clone = copies[id(e)] = object.__new__(type(e))
            clone.__dict__.update(vars(e))  # shallow: its lists are replaced below
            pending.append(e)
        return copies[id(e)]

    pending: list[ParserElement] = []
    parser.Query.streamline()  # as rdflib's first parse leaves it: not done again for the copy
    top = copied(parser.Query)
    while pending:
        original = pending.pop()
        clone = copies[id(original)]
        for name, value in vars(original).items():
            if name == "ignoreExprs":
                clone.ignoreExprs = []
            elif isinstance(value, ParserElement):
                setattr(clone, name, copied(value))
            elif isinstance(value, list):  # an And's, a MatchFirst's elements
                setattr(
                    clone, name, [copied(v) if isinstance(v, ParserElement) else v for v in value]
                )
    return top
