"""A ``sparql:`` store's reads as the text it sends, and their answers as the terms it keeps.

Why a module: over the SPARQL protocol a read can hand the server nothing but text. Bound
variables are written into the query (a ``VALUES`` row at the top of each pattern's group,
terms escaped by pyoxigraph, a blank node refused: the protocol cannot name a stored one), and
every answer comes back as JSON whose terms become rdflib's again. A step's reads are one
request: its precondition's query also fetches, as ``UNION`` branches told apart by variables
of their own, what the step reads next (:class:`~.base.ReadAhead`: its arguments' types, its
effect subject's triples, its later rules' solutions), and those rows are read back here into
the answers the store keeps until it next writes. That is text out and terms in, the same
whatever the connection or the store's state; the store keeps those (:mod:`.sparql`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import NamedTuple

from rdflib import RDF, BNode, Literal, URIRef
from rdflib.term import Node

from .._errors import UsageError
from .._preconditions import Precondition
from .base import ReadAhead
from .sparql_text import nt

__all__ = [
    "Ahead",
    "ahead_branches",
    "compatible",
    "edge",
    "first_group",
    "named",
    "one_of",
    "read_ahead",
    "result_term",
    "solutions_key",
    "values_row",
]

SolutionsKey = tuple[str, tuple[tuple[str, Node], ...]]
"""A precondition's query and the bindings of its variables: what one set of solutions is."""

# variables of a read-ahead's rows; a precondition's own are never named so
_K, _N, _T, _P, _O, _BP, _BO, _OT, _R = (
    f"horis_ahead_{n}" for n in ("k", "n", "t", "p", "o", "bp", "bo", "ot", "r")
)
_TYPES, _EDGES = Literal("t"), Literal("g")
_VARNAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def result_term(value: Mapping[str, str]) -> Node:
    """A term of a SPARQL JSON result; IRIs and literals come from bounded caches, since a
    step's read names the same ones again and again (building an rdflib term checks or
    parses its text)."""
    kind = value["type"]
    if kind == "uri":
        return URIRef(value["value"])
    if kind == "literal" or kind == "typed-literal":
        return _literal(value["value"], value.get("datatype"), value.get("xml:lang"))
    if kind == "bnode":
        return BNode(value["value"])
    raise UsageError(f"a SPARQL result holds a {kind} term, which a Horismos world does not")


@lru_cache(maxsize=16_384)
def _literal(text: str, datatype: str | None, lang: str | None) -> Literal:
    if lang is not None:
        return Literal(text, lang=lang)
    if datatype is None or datatype == "http://www.w3.org/2001/XMLSchema#string":
        return Literal(text)
    return Literal(text, datatype=URIRef(datatype))


def named(term: Node) -> str:
    """A term as a read names it: N-Triples, a blank node refused."""
    if isinstance(term, BNode):
        raise UsageError(
            f"{term.n3()}: a stored blank node cannot be named over the SPARQL "
            "protocol; give the node an IRI"
        )
    return nt(term)


def values_row(bindings: Mapping[str, Node], names: frozenset[str] | None) -> str:
    """One ``VALUES`` row binding the variables, or nothing."""
    items = sorted((k, v) for k, v in bindings.items() if names is None or k in names)
    if not items:
        return ""
    terms = " ".join(named(v) for _, v in items)
    return f"VALUES ({' '.join('?' + k for k, _ in items)}) {{ ({terms}) }}\n"


def one_of(var: str, terms: Iterable[Node]) -> str:
    """``VALUES ?var { … }``: ``var`` limited to ``terms`` (a read of some predicates)."""
    return f"VALUES ?{var} {{ " + " ".join(sorted(nt(t) for t in terms)) + " } "


def first_group(query: str) -> int:
    """Where the query's first ``{`` is, skipping IRIs, strings and comments before it."""
    i, n = 0, len(query)
    while i < n:
        c = query[i]
        if c == "<":
            i = query.index(">", i)
        elif c in "\"'":
            i = query.index(c, i + 1)
        elif c == "#":
            end = query.find("\n", i)
            i = n if end < 0 else end
        elif c == "{":
            return i
        i += 1
    raise UsageError(f"not a SPARQL query with a group pattern: {query[:80]!r}")


def solutions_key(pre: Precondition, bindings: Mapping[str, Node]) -> SolutionsKey:
    return pre.select_text, tuple(sorted((k, v) for k, v in bindings.items() if k in pre.variables))


def compatible(pre: Precondition, others: tuple[Precondition, ...]) -> list[Precondition]:
    """Those of ``others`` whose prefixes mean what ``pre``'s and those taken before them
    mean (one request, one prologue), and that name none of a read-ahead's own variables.
    Each carries only the prefixes it names, so two may agree with ``pre`` and not with
    each other."""
    ns = dict(pre.prefixes)
    taken = []
    for o in others:
        if all(ns.get(p, uri) == uri for p, uri in o.prefixes) and not any(
            v.startswith("horis_ahead_") for v in o.variables
        ):
            taken.append(o)
            ns.update(o.prefixes)
    return taken


def ahead_branches(
    body: str, bindings: Mapping[str, Node], pre: Precondition, ahead: ReadAhead
) -> tuple[list[str], list[Precondition]]:
    """``UNION`` branches fetching what ``ahead`` names beside ``pre``'s solutions (``body``,
    its groups), and the later preconditions among them (:func:`compatible`), in the order
    :func:`read_ahead` reads their rows back."""
    branches = _fetches(body, bindings, pre.variables, ahead)
    also = compatible(pre, ahead.also)
    for i, other in enumerate(also):
        other_values = values_row(bindings, other.variables)
        branches.append(
            "{ "
            + "\n".join(f"{{ {other_values}{p.text}\n}}" for p in other.patterns)
            + f"\nBIND({i} AS ?{_R}) }}"
        )
    return branches, also


def _fetches(
    body: str, bindings: Mapping[str, Node], variables: frozenset[str], ahead: ReadAhead
) -> list[str]:
    """The branches fetching each variable's values (bound, or the distinct ones of the
    precondition's solutions), with their types or their triples. A value the protocol
    cannot name (a blank node), a literal, or a variable the patterns do not bind is left to
    the read that asks for it."""

    def nodes(var: str) -> str:
        value = bindings.get(var)
        if value is not None:
            return "" if isinstance(value, (Literal, BNode)) else f"VALUES ?{_N} {{ {nt(value)} }}"
        if var not in variables or not _VARNAME.fullmatch(var):
            return ""
        return f"{{ SELECT DISTINCT (?{var} AS ?{_N}) WHERE {{\n{body}\n}} }}"

    out = []
    for var in sorted(ahead.types - ahead.outgoing):  # the others' types are among their triples
        if src := nodes(var):
            out.append(
                f"{{ {src} FILTER(!isLiteral(?{_N})) OPTIONAL {{ ?{_N} a ?{_T} }} "
                f"BIND({nt(_TYPES)} AS ?{_K}) }}"
            )
    # rdf:type always: the types kept for objects() come from the triples fetched
    only = "" if ahead.predicates is None else one_of(_P, ahead.predicates | {RDF.type})
    for var in sorted(ahead.outgoing):
        if src := nodes(var):
            out.append(
                f"{{ {src} FILTER(!isLiteral(?{_N})) OPTIONAL {{ {only}?{_N} ?{_P} ?{_O} "
                f"OPTIONAL {{ ?{_O} ?{_BP} ?{_BO} FILTER(isBlank(?{_O})) }} "
                f"OPTIONAL {{ ?{_O} a ?{_OT} FILTER(isIRI(?{_O})) }} }} "
                f"BIND({nt(_EDGES)} AS ?{_K}) }}"
            )
    return out


class Ahead(NamedTuple):
    """What one request with a read-ahead answered: the precondition's own solutions, and
    what the store answers from until it next writes."""

    found: list[dict[str, Node]]
    objects: dict[tuple[Node, Node | None], list[Node]]
    """``objects`` answers: a node's types, a blank object's triples (see :func:`edge`)."""
    outgoing: dict[Node, tuple[frozenset[Node] | None, list[tuple[Node, Node]]]]
    """``outgoing`` answers: a node's triples, with the predicates they were limited to."""
    later: dict[SolutionsKey, list[dict[str, Node]]]
    """The later preconditions' solutions."""


def read_ahead(
    rows: list[dict[str, Node]],
    bindings: Mapping[str, Node],
    also: list[Precondition],
    predicates: frozenset[Node] | None,
) -> Ahead:
    """The rows of a query with :func:`ahead_branches`, each told to what it answers: the
    types and triples fetched kept as ``objects`` and ``outgoing`` would have answered."""
    found = [{**bindings, **row} for row in rows if _K not in row and _R not in row]
    types: dict[Node, dict[Node, None]] = {}
    out: dict[Node, dict[tuple[Node, Node], None]] = {}
    seen: dict[tuple[Node, Node | None], dict[Node, None]] = {}
    for r in rows:
        if _K not in r:
            continue
        node = r[_N]
        if r[_K] == _TYPES:
            typed = types.setdefault(node, {})
            if _T in r:
                typed[r[_T]] = None
            continue
        edges = out.setdefault(node, {})
        if _P in r:
            edge(edges, seen, r[_P], r[_O], r.get(_BP), r.get(_BO), r.get(_OT))
    for node, edges in out.items():  # a node's triples fetched say its types too
        types.setdefault(node, dict.fromkeys(o for p, o in edges if p == RDF.type))
    objects: dict[tuple[Node, Node | None], list[Node]] = {
        (node, RDF.type): list(typed) for node, typed in types.items()
    }
    objects.update({k: list(v) for k, v in seen.items()})
    branch: dict[Node, list[dict[str, Node]]] = {}  # a later precondition's rows, by its ?r
    for row in rows:
        if _R in row:
            branch.setdefault(row[_R], []).append(row)
    later = {
        solutions_key(other, bindings): [
            {**bindings, **{k: v for k, v in row.items() if k != _R}}
            for row in branch.get(Literal(i), ())
        ]
        for i, other in enumerate(also)
    }
    return Ahead(
        found, objects, {node: (predicates, list(edges)) for node, edges in out.items()}, later
    )


def edge(
    out: dict[tuple[Node, Node], None],
    seen: dict[tuple[Node, Node | None], dict[Node, None]],
    p: Node,
    o: Node,
    bp: Node | None,
    bo: Node | None,
    t: Node | None,
) -> None:
    """One row of a subject's triples: the triple, and what it says of its object (a blank
    node's triples, an IRI's types) for ``objects``."""
    out[p, o] = None
    if isinstance(o, BNode):
        seen.setdefault((o, None), {})
        if bp is not None:
            seen.setdefault((o, bp), {})[bo] = None  # type: ignore[index]
    elif isinstance(o, URIRef):
        types = seen.setdefault((o, RDF.type), {})
        if t is not None:
            types[t] = None
