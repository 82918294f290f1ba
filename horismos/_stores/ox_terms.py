"""Terms between rdflib and pyoxigraph, as an Oxigraph store keeps them, and a commit's quads
encoded once.

Why a module of its own: every store that speaks to Oxigraph (on disk, in memory, the SPARQL
protocol store, the memory store's canonical literals) converts terms the same way, and a
commit's path converts each of its quads once (:func:`encode_quads`): its pyoxigraph quad and the
N-Quads line the digest hashes, from terms kept across commits. Oxigraph keeps values, not
lexical forms (``"01"^^xsd:integer`` is stored as ``"1"``), so a literal it would rewrite is
asked about in a scratch store, and the quad kept is the one Oxigraph holds.
"""

from __future__ import annotations

import datetime as dt_
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import Any, cast, overload

import pyoxigraph as ox
from rdflib import XSD, BNode, Literal, URIRef
from rdflib.plugins.serializers.nt import _quote_encode
from rdflib.term import Node

from .._errors import UsageError
from .._stamps import datetime_term
from .base import INSTANCES, RUNTIME, Quad, nt_text

__all__ = [
    "LENIENT",
    "TERM_FN",
    "Encoded",
    "canonical",
    "datetime_literal",
    "encode_quads",
    "from_ox",
    "graph_name",
    "is_runtime",
    "named_node",
    "normalised",
    "nt",
    "ox_line",
    "parse_nquads",
    "stored_literals",
    "to_ox",
    "to_ox_quad",
]

_XSD_STRING = str(XSD.string)
_DATETIME, _INTEGER, _BOOLEAN = str(XSD.dateTime), str(XSD.integer), str(XSD.boolean)
TERM_FN = ox.NamedNode("urn:horismos:runtime:term")
"""A name of the runtime's own for what only lives in a scratch store or a query: the predicate
of a scratch store's quads, each holding one literal to ask about; a custom function's name."""
_DEFAULT = ox.DefaultGraph()

LENIENT: set[str] = set()
"""IRIs Oxigraph's parser would refuse (see :func:`named_node`): never written as text."""


@lru_cache(maxsize=8192)  # bounded: every step names fresh graphs, which never recur
def named_node(iri: str) -> ox.NamedNode:
    try:
        return ox.NamedNode(iri)
    except ValueError:
        # rdflib keeps IRIs RFC 3987 refuses (two '#'); keep them too, as the memory store does
        if any(c in iri for c in '<>"{}|^`\\ \n'):
            raise
        line = f"<{iri}> <{iri}> <{iri}> .".encode()
        LENIENT.add(iri)
        return next(ox.parse(line, format=ox.RdfFormat.N_TRIPLES, lenient=True)).subject


def to_ox(term: Node) -> Any:
    """An rdflib term as a pyoxigraph term; an IRI Oxigraph cannot store is a UsageError."""
    try:
        if type(term) is URIRef:  # most terms: one lookup (isinstance was 0.4 µs a miss)
            return named_node(str(term))  # a str key: hashed and compared in C, not rdflib's __eq__
        if isinstance(term, URIRef):
            return named_node(str(term))
        if isinstance(term, Literal):
            if term.language:
                return ox.Literal(str(term), language=term.language)
            if term.datatype is not None:
                return ox.Literal(str(term), datatype=named_node(str(term.datatype)))
            return ox.Literal(str(term))
        if isinstance(term, BNode):
            return ox.BlankNode(str(term))
    except ValueError as e:
        raise UsageError(f"{term!r} cannot be stored: {e}") from None
    raise UsageError(f"{term!r} is not an RDF term a store can hold")


@lru_cache(maxsize=8192)
def from_ox(term: Any) -> Node:
    """A pyoxigraph term as the rdflib term the memory store would hold."""
    kind = type(term)
    if kind is ox.NamedNode:
        return URIRef(term.value)
    if kind is ox.Literal:
        return _literal(term)
    if kind is ox.BlankNode:
        return BNode(term.value)
    raise UsageError(f"{term!r}: RDF-star triple terms are not part of a Horismos world")


@lru_cache(maxsize=16384)  # building an rdflib Literal parses its value: ~17 µs, a hit ~0.3
def _literal(term: ox.Literal) -> Literal:
    if term.language:
        return Literal(term.value, lang=term.language)
    dt = term.datatype.value
    if dt == _XSD_STRING:
        return Literal(term.value)
    try:
        return Literal(term.value, datatype=URIRef(dt))
    except ValueError:  # a value rdflib parses but cannot write back (a negative duration of
        # years and days, -P1Y1D): kept as Oxigraph holds it, as written
        return Literal(term.value, datatype=URIRef(dt), normalize=False)


_CANONICAL: dict[Literal, Literal] = {}
"""Literals Oxigraph stores in another form (by value): what the scratch store gave back."""


def _kept_as_is(o: Literal) -> bool:
    """Whether Oxigraph keeps ``o`` as rdflib holds it (read back, it is ``o`` again), known
    without asking it: the literals every step writes (its timestamps, a version number, a
    flag). Each fresh timestamp used to cost a scratch store per commit.
    tests/test_stores.py holds this against the scratch store on random values."""
    datatype = o.datatype
    if datatype is None or o.language or getattr(o, "ill_typed", False):
        return False
    dt = str(datatype)  # compared as a str: rdflib's URIRef.__eq__ is Python, ~0.3 µs each
    if dt == _DATETIME:  # rdflib writes a parsed dateTime back as its isoformat()
        value = o.value
        return type(value) is dt_.datetime and str(o) == value.isoformat()
    if dt == _INTEGER:
        value = o.value
        return type(value) is int and str(o) == str(value)
    if dt == _BOOLEAN:
        return str(o) in ("true", "false")
    return False


def datetime_literal(value: dt_.datetime, text: str | None = None) -> Literal:
    """``value`` as an ``xsd:dateTime`` literal, built from the value (rdflib parses a lexical
    form: twice the time; given ``text``, the ``value.isoformat()`` a clock already wrote, not
    even rdflib's constructor: :func:`~horismos._stamps.datetime_term`) and made known to the
    commit path as one Oxigraph keeps as it is, so landing it costs no second
    ``isoformat()`` (~3 µs)."""
    literal = datetime_term(value, value.isoformat() if text is None else text)
    if type(value) is dt_.datetime:  # what _kept_as_is asks, true by construction
        # kept through current(), which turns the cache over when full: a run on another
        # store never commits through this one, and every step's stamps were kept for good
        _TERMS.current()
        _literal_term(literal, literal)
    return literal


def _ask_oxigraph(literals: Iterable[Literal]) -> None:
    """Learn how Oxigraph stores each of ``literals`` (into :data:`_CANONICAL`): one scratch
    store for all of them, since a commit's literals are asked about together."""
    todo = list(dict.fromkeys(literals))
    if not todo:
        return
    if len(_CANONICAL) > 8192:  # each step brings fresh values: keep it small
        _CANONICAL.clear()
    scratch = ox.Store()
    scratch.extend(
        ox.Quad(named_node(f"urn:l:{i}"), TERM_FN, to_ox(lit)) for i, lit in enumerate(todo)
    )
    for q in scratch:
        _CANONICAL[todo[int(q.subject.value[6:])]] = from_ox(q.object)  # type: ignore[assignment]


def _as_is(o: Literal) -> bool:
    """Whether Oxigraph stores ``o`` as it is, known without asking it: a plain literal, or
    one :func:`_kept_as_is`."""
    return not (o.language or o.datatype is not None) or _kept_as_is(o)


def _stored_literal(o: Literal) -> Literal:
    """``o`` as Oxigraph stores it (it keeps values, not lexical forms)."""
    if _as_is(o):
        return o
    found = _CANONICAL.get(o)
    if found is None:  # not asked with the others (or forgotten since): asked alone
        _ask_oxigraph([o])
        found = _CANONICAL[o]
    return found


def canonical(quads: Iterable[Quad]) -> list[Quad]:
    """``quads`` with their literals as Oxigraph stores them (it keeps values, not lexical
    forms), so the memory store holds what an Oxigraph store would."""
    quads = list(quads)
    _ask_oxigraph(
        o
        for _, _, o, _ in quads
        if isinstance(o, Literal) and not _as_is(o) and o not in _CANONICAL
    )
    return [
        (s, p, _stored_literal(o), g) if isinstance(o, Literal) else (s, p, o, g)
        for s, p, o, g in quads
    ]


def stored_literals(terms: Iterable[Node]) -> dict[Literal, Literal]:
    """Each literal of ``terms`` Oxigraph stores in another form, to that form (the others
    left out): what a pattern must hold to match what the store keeps."""
    literals = [t for t in terms if isinstance(t, Literal) and not _as_is(t)]
    _ask_oxigraph(o for o in literals if o not in _CANONICAL)
    return {o: _stored_literal(o) for o in literals}


_Term = tuple[Node, Node, Any, str, bool]
"""A term; the term as the store keeps it (a literal in Oxigraph's form); that as pyoxigraph's
term; its N-Triples text as :func:`ox_line` writes it; whether it names a bookkeeping graph."""


Encoded = tuple[Quad, ox.Quad, "str | None"]
"""A quad as the store keeps it (rdflib), as pyoxigraph's quad, and its N-Quads line (None in
a bookkeeping graph, which the digest leaves out)."""


class _Recent:
    """Entries ``(key, ...)`` kept by the identity of their key object for a while: two small
    generations, the older dropped when the newer fills, an entry found in the older moved
    to the newer. What every commit uses stays; what one commit made is gone a few hundred
    entries later. Small on purpose: looked up ~80 times a commit, a dict of thousands of
    entries missed the CPU's caches on a busy machine (4x the lookups' cost). An entry holds
    its key, so the key's id is not reused while it is here."""

    __slots__ = ("before", "now", "size")

    def __init__(self, size: int) -> None:
        self.size = size
        self.now: dict[int, Any] = {}
        self.before: dict[int, Any] = {}

    def current(self) -> dict[int, Any]:
        """The newer generation, a fresh one when it is full (asked between commits)."""
        if len(self.now) > self.size:
            self.before, self.now = self.now, {}
        return self.now

    def older(self, key: object) -> Any:
        """The entry of ``key`` in the older generation (moved to the newer), or None."""
        entry = self.before.get(id(key))
        if entry is None or entry[0] is not key:
            return None
        self.now[id(key)] = entry
        return entry


_TERMS = _Recent(256)
"""Terms converted lately (:data:`_Term`): the vocabulary, a step's and its tool's IRIs, the
state a step wrote; a commit's own graph and activity name most of its quads."""


_QUADS = _Recent(128)
"""Quads of the instance state encoded lately (``(quad, Encoded)``): the state a step writes
is guarded and removed by the next commit, an intent is removed by its step's: the same
tuples. Only those (the runner names their graph by the :data:`INSTANCES` object): a step's
effects and provenance are written once and never asked about again, and keeping them churned
the cache ~5x as fast, each turnover freeing hundreds of entries."""


_KEPT_TEXT = 1024  # a longer literal is not kept: it would hold its text twice more


@overload
def _term(t: Node) -> _Term: ...


@overload
def _term(t: Node, alone: bool) -> _Term | None: ...


def _term(t: Node, alone: bool = True) -> _Term | None:
    """``t`` converted (or found in the older generation of :data:`_TERMS`), and kept. A
    literal Oxigraph would rewrite and was not asked about yet is asked about alone, or, not
    ``alone``, left to be asked with a commit's others (None)."""
    found: _Term | None = _TERMS.older(t)
    if found is not None:
        return found
    if isinstance(t, Literal):
        if _as_is(t):
            return _literal_term(t, t)
        if not alone and t not in _CANONICAL:
            return None
        return _literal_term(t, _stored_literal(t), False)
    as_ox = to_ox(t)
    name = str(t)  # an IRI's or a blank node's, as pyoxigraph's term holds it
    text = f"_:{name}" if type(as_ox) is ox.BlankNode else f"<{name}>"
    entry = _TERMS.now[id(t)] = (t, t, as_ox, text, name.startswith(RUNTIME))
    return entry


def _literal_term(t: Literal, kept: Literal, as_is: bool = True) -> _Term:
    """:func:`_term` of a literal that Oxigraph stores as ``kept`` (``as_is``: ``t`` itself,
    known without asking it)."""
    if as_is:  # plain, or one of the datatypes _kept_as_is knows: built from its own text
        lexical, dt = str(t), t.datatype
        if dt is None:
            as_ox, text = ox.Literal(lexical), _quote_encode(lexical)
        else:
            iri = str(dt)
            as_ox = ox.Literal(lexical, datatype=named_node(iri))
            text = f"{_quote_encode(lexical)}^^<{iri}>"
    else:
        as_ox = to_ox(kept)
        # its text from the rdflib literal when that is what is stored (rdflib's form of a
        # dateTime), as ox_line wrote a kept quad's
        rdf = kept if type(kept) is Literal and _kept_as_is(kept) else None
        text = _literal_text(as_ox, rdf)
    entry = (t, kept, as_ox, text, False)
    if len(entry[3]) <= _KEPT_TEXT:
        _TERMS.now[id(t)] = entry
    return entry


_SLICE = 128
"""Quads of a commit encoded between two looks at the caches' sizes (:func:`encode_quads`)."""


def encode_quads(quads: list[Quad]) -> list[Encoded]:
    """``quads`` as a commit lands them (:func:`_encode`), a slice of :data:`_SLICE` at a time
    when they are many: the caches are renewed between slices, so they stay a few hundred
    entries and a large commit frees what it made as it goes. Encoded whole, a commit of
    50,000 quads (a world written in one change) left ~150,000 terms in :data:`_TERMS`, held
    until the next two commits, and a step's commit spent 75-140 ms freeing them."""
    if len(quads) <= _SLICE:
        return _encode(quads)
    out: list[Encoded] = []
    for start in range(0, len(quads), _SLICE):
        out += _encode(quads[start : start + _SLICE])
    return out


def _encode(quads: list[Quad]) -> list[Encoded]:
    """``quads`` as a commit lands them, each term converted once per object: the N-Quads
    line is written from the terms' texts, the literals Oxigraph would rewrite asked about in
    one scratch store. Lines equal :func:`ox_line` of the stored quad (what a recomputation
    hashes) and :func:`~horismos._stores.base.nquad_line` of the kept rdflib quad.

    One pass: a quad whose literal must be asked about is left for a second pass, after one
    scratch store has answered for all of them (a pass over every quad looking for those
    literals first cost a step more than the rare scratch store)."""
    get = _TERMS.current().get
    states = _QUADS.current()
    out: list[Encoded] = []
    asked: list[int] = []  # where quads whose literal Oxigraph would rewrite go
    quad = ox.Quad
    for q in quads:
        s, p, o, g = q
        if g is INSTANCES:  # only instance-state quads are kept (:data:`_QUADS`)
            known = states.get(id(q))
            if (known is not None and known[0] is q) or (known := _QUADS.older(q)) is not None:
                out.append(known[1])
                continue
        eo = get(id(o))
        if eo is None or eo[0] is not o:
            eo = _term(o, alone=False)
            if eo is None:
                asked.append(len(out))
                out.append((q, None, None))  # type: ignore[arg-type]  # filled in below
                continue
        es = get(id(s))
        if es is None or es[0] is not s:
            es = _term(s)
        ep = get(id(p))
        if ep is None or ep[0] is not p:
            ep = _term(p)
        kept = q if eo[1] is o else (s, p, eo[1], g)
        encoded: Encoded
        if g is None:  # three terms: pyoxigraph spends ~2 µs refusing DefaultGraph as a name
            encoded = (kept, quad(es[2], ep[2], eo[2]), f"{es[3]} {ep[3]} {eo[3]} .")
        else:
            eg = get(id(g))
            if eg is None or eg[0] is not g:
                eg = _term(g)
            line = None if eg[4] else f"{es[3]} {ep[3]} {eo[3]} {eg[3]} ."
            encoded = (kept, quad(es[2], ep[2], eo[2], eg[2]), line)
            if g is INSTANCES and len(eo[3]) <= _KEPT_TEXT:
                states[id(q)] = (q, encoded)
        out.append(encoded)
    if asked:  # their literals asked about together, then encoded as known ones
        later = [out[i][0] for i in asked]
        _ask_oxigraph([cast(Literal, q[2]) for q in later])
        for i, encoded in zip(asked, _encode(later), strict=True):
            out[i] = encoded
    return out


def to_ox_quad(q: Quad) -> ox.Quad:
    """An rdflib quad as pyoxigraph's, with the default graph for None."""
    s, p, o, g = q
    return ox.Quad(
        named_node(str(s)) if type(s) is URIRef else to_ox(s),
        named_node(str(p)) if type(p) is URIRef else to_ox(p),
        to_ox(o),
        _DEFAULT if g is None else named_node(str(g)) if type(g) is URIRef else to_ox(g),
    )


def graph_name(g: Any) -> URIRef | None:
    return None if isinstance(g, ox.DefaultGraph) else from_ox(g)  # type: ignore[return-value]


def is_runtime(g: Any) -> bool:
    """Whether a graph holds runtime bookkeeping (claims, receipts), which the world's quads,
    digests and snapshots leave out."""
    return isinstance(g, ox.NamedNode) and g.value.startswith(RUNTIME)


def normalised(quads: Iterable[ox.Quad]) -> list[ox.Quad]:
    """``quads`` without repeats and with literals as a store keeps them (a scratch store)."""
    scratch = ox.Store()
    scratch.extend(quads)
    return list(scratch)


def ox_line(q: ox.Quad) -> str:
    """A stored quad's N-Quads line, as :func:`~horismos._stores.base.nquad_line` writes the
    rdflib quad it stands for."""
    s, g = cast("ox.NamedNode | ox.BlankNode", q.subject), q.graph_name  # no RDF-star here
    head = f"_:{s.value}" if type(s) is ox.BlankNode else f"<{s.value}>"
    o = q.object
    obj = f"_:{o.value}" if type(o) is ox.BlankNode else _literal_text(o)
    if type(g) is ox.DefaultGraph:
        return f"{head} <{q.predicate.value}> {obj} ."
    return f"{head} <{q.predicate.value}> {obj} {g!s} ."


def parse_nquads(text: str) -> Iterator[Quad]:
    """The quads of N-Quads text as rdflib terms (pyoxigraph's parser: 10x rdflib's)."""
    for q in ox.parse(text.encode(), format=ox.RdfFormat.N_QUADS):
        yield from_ox(q.subject), from_ox(q.predicate), from_ox(q.object), graph_name(q.graph_name)


_AS_STORED = {_XSD_STRING, str(XSD.integer), str(XSD.boolean)}  # lexical forms rdflib keeps


def _literal_text(term: Any, rdf: Literal | None = None) -> str:
    """``term`` as :func:`~horismos._stores.base.nt_text` writes the rdflib term it stands for
    (``rdf``: the literal ``term`` was converted from, when that is how Oxigraph keeps it)."""
    if type(term) is ox.NamedNode:
        return f"<{term.value}>"
    if term.language:
        return f"{_quote_encode(term.value)}@{term.language}"
    dt = term.datatype.value
    if dt == _XSD_STRING:
        return _quote_encode(term.value)
    if dt in _AS_STORED or rdf is not None:  # ``rdf``: its lexical form is rdflib's already
        return f"{_quote_encode(term.value)}^^<{dt}>"
    # rdflib rewrites some lexical forms (a dateTime's "Z")
    return nt_text(from_ox(term))


def nt(term: Node) -> str:
    """An rdflib term in N-Triples syntax, escaped by pyoxigraph: safe inside SPARQL text."""
    return str(to_ox(term))
