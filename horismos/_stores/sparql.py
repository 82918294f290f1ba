"""A world kept in a SPARQL 1.1 server (``sparql:URL``), shared by every process that opens it.

The layout is Oxigraph's (``oxigraph serve``): queries at ``URL/query`` (asked with its
``union-default-graph`` option, so the default graph is the union of all graphs, as on the
embedded stores), updates at ``URL/update``, the whole dataset at ``URL/store`` (Graph Store
Protocol: loads POST N-Quads there, snapshots GET them). One kept-alive httpx connection.

Bound variables reach a query as a ``VALUES`` row at the top of each pattern's group (terms
serialised by pyoxigraph, so escaped), never pasted into the patterns. A commit is one SPARQL
Update. A guarded commit (``Change.expect``) puts the expected quads in its ``WHERE`` and inserts
a receipt of its own; if the receipt is not there afterwards, another writer got in first and
:class:`Conflict` is raised. Oxigraph evaluates an update's ``WHERE`` on a snapshot without
detecting write conflicts, so two guarded updates racing on the same snapshot can both land;
``horismos._claims`` makes sure only one worker drives an instance, so they never race.

Blank nodes: the protocol cannot name a stored blank node, so quads to remove or expect, and
bound variables, must not contain one (:class:`UsageError`); added blank nodes become fresh
server blank nodes; ``objects`` of a blank node answers for those ``outgoing`` met since the
store last wrote (the gate asks about a subject's neighbours just after reading its triples).
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pyoxigraph as ox
from rdflib import RDF, BNode, Dataset, Literal, URIRef
from rdflib.graph import DATASET_DEFAULT_GRAPH_ID
from rdflib.term import Node

from .._errors import UsageError
from .._preconditions import Precondition
from .base import RUNTIME, Change, Conflict, Progress, Quad, Store, StoreError
from .oxigraph import from_ox, is_runtime, parse_file, quad_block, to_ox, to_ox_quad

__all__ = ["SparqlStore"]

RECEIPTS = URIRef(RUNTIME + "receipts")
_BY = URIRef(RUNTIME + "by")
_QUERY, _STORE = "/query?union-default-graph", "/store"
_PATHS = (_QUERY, "/update", _STORE)
_FORM = {"Accept": "application/sparql-results+json",
         "Content-Type": "application/x-www-form-urlencoded"}
_TIMEOUT = {"connect": 5.0, "read": 120.0, "write": 120.0, "pool": 5.0}
_BATCH = 20_000


class SparqlStore(Store):
    """A SPARQL 1.1 server that several processes read and write at once."""

    shared = True
    persistent = True

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")
        self.name = f"sparql:{self.url}"
        # httpx's transport straight: one kept-alive connection, without the client's
        # per-request layers (a third of a step's time went there)
        self._http = httpx.HTTPTransport()
        self._urls = {path: httpx.URL(self.url + path) for path in _PATHS}
        self._prologues: dict[tuple[tuple[str, str], ...], str] = {}
        self._receipt: URIRef | None = None
        self._seen: dict[tuple[Node, Node], list[Node]] = {}
        """``objects`` answers since this store last wrote: reads between two of its own
        commits see the world as at the first of them."""

    # -- protocol -------------------------------------------------------------------------

    def _request(self, method: str, path: str, content: bytes | Iterator[bytes] | None = None,
                 headers: Mapping[str, str] | None = None) -> bytes:
        request = httpx.Request(method, self._urls[path], content=content, headers=headers,
                                extensions={"timeout": _TIMEOUT})
        try:
            response = self._http.handle_request(request)
            try:
                body = response.read()
            finally:
                response.close()
        except httpx.HTTPError as e:
            raise StoreError(f"the SPARQL server at {self.url} cannot be reached ({e}); start "
                             "it (oxigraph serve --location DIR --bind HOST:PORT) or fix the "
                             "URL") from None
        if response.status_code >= 400:
            raise StoreError(f"the SPARQL server at {self.url} refused {method} "
                             f"{path.partition('?')[0]} ({response.status_code}): "
                             f"{body.decode(errors='replace').strip()[:500]}")
        return body

    def _query(self, text: str) -> Any:
        return json.loads(self._request("POST", _QUERY, urlencode({"query": text}).encode(),
                                        _FORM))

    def _rows(self, text: str) -> list[dict[str, Node]]:
        body = self._query(text)
        return [{k: _term(v) for k, v in b.items()} for b in body["results"]["bindings"]]

    def _ask(self, text: str) -> bool:
        return bool(self._query(text)["boolean"])

    def update(self, text: str) -> None:
        self._seen.clear()
        self._request("POST", "/update", text.encode(),
                      {"Content-Type": "application/sparql-update"})

    # -- reads ----------------------------------------------------------------------------

    def _prologue(self, prefixes: tuple[tuple[str, str], ...]) -> str:
        text = self._prologues.get(prefixes)
        if text is None:
            text = self._prologues[prefixes] = "".join(
                f"PREFIX {p}: <{ns}>\n" for p, ns in prefixes)
        return text

    def solutions(self, pre: Precondition, bindings: Mapping[str, Node]) -> list[dict[str, Node]]:
        values = _values(bindings, pre.variables)
        body = "\n".join(f"{{ {values}{p.text}\n}}" for p in pre.patterns)
        rows = self._rows(f"{self._prologue(pre.prefixes)}SELECT * WHERE {{\n{body}\n}}")
        return [{**bindings, **row} for row in rows]

    def select(self, query: str, bindings: Mapping[str, Node], ns: Mapping[str, str],
               ) -> list[dict[str, Node]]:
        at = _first_group(query)
        text = query[:at + 1] + _values(bindings, None) + query[at + 1:]
        return self._rows(self._prologue(tuple(ns.items())) + text)

    def objects(self, subject: Node, predicate: Node) -> Iterator[Node]:
        found = self._seen.get((subject, predicate))
        if found is None:
            if isinstance(subject, BNode) and (subject, None) in self._seen:
                found = []  # described whole by outgoing: it has no such triple
            else:
                found = self._seen[subject, predicate] = [r["o"] for r in self._rows(
                    f"SELECT DISTINCT ?o WHERE {{ {_named(subject)} {nt(predicate)} ?o }}")]
        return iter(found)

    def outgoing(self, subject: Node) -> Iterator[tuple[Node, Node, Node]]:
        """The subject's triples. The same query describes the blank nodes among their objects
        and gives the types of the IRIs, so ``objects`` answers for them without asking again
        (and for blank nodes at all: the protocol cannot name them later)."""
        rows = self._rows(f"SELECT ?p ?o ?bp ?bo ?t WHERE {{ {_named(subject)} ?p ?o "
                          "OPTIONAL { ?o ?bp ?bo FILTER(isBlank(?o)) } "
                          "OPTIONAL { ?o a ?t FILTER(isIRI(?o)) } }")
        out: dict[tuple[Node, Node], None] = {}
        seen: dict[tuple[Node, Node | None], dict[Node, None]] = {}
        for r in rows:
            p, o = r["p"], r["o"]
            out[p, o] = None
            if isinstance(o, BNode):
                seen.setdefault((o, None), {})
                if "bp" in r:
                    seen.setdefault((o, r["bp"]), {})[r["bo"]] = None
            elif isinstance(o, URIRef):
                types = seen.setdefault((o, RDF.type), {})
                if "t" in r:
                    types[r["t"]] = None
        self._seen.update({k: list(v) for k, v in seen.items()})  # type: ignore[misc]
        return iter([(subject, p, o) for p, o in out])

    def quads(self) -> Iterator[Quad]:
        body = self._request("GET", _STORE, headers={"Accept": "application/n-quads"})
        for q in ox.parse(body, format=ox.RdfFormat.N_QUADS):
            if not is_runtime(q.graph_name):
                g = q.graph_name
                yield (from_ox(q.subject), from_ox(q.predicate), from_ox(q.object),
                       None if isinstance(g, ox.DefaultGraph) else from_ox(g))  # type: ignore[misc]

    def dataset(self) -> Dataset:
        """A copy as an rdflib :class:`Dataset`, fetched whole; writes to it stay local."""
        ds = Dataset(default_union=True)
        for s, p, o, g in self.quads():
            ds.graph(g if g is not None else DATASET_DEFAULT_GRAPH_ID).add((s, p, o))
        return ds

    # -- writes ---------------------------------------------------------------------------

    def apply(self, change: Change) -> None:
        self._seen.clear()
        for q in (*change.remove, *change.expect):
            if any(isinstance(t, BNode) for t in q):
                raise UsageError(f"{q[0].n3()} {q[1].n3()} {q[2].n3()}: a stored blank node "
                                 "cannot be named over the SPARQL protocol; give the node an IRI")
        if not change.expect:
            self.update(_modify(change.remove, change.add, ""))
            return
        receipt = URIRef(f"{RUNTIME}receipt:{uuid.uuid4().hex}")
        mine = (receipt, _BY, Literal(f"pid {os.getpid()}"), RECEIPTS)
        remove = list(change.remove)
        if self._receipt is not None:
            remove.append((self._receipt, _BY, Literal(f"pid {os.getpid()}"), RECEIPTS))
        self.update(_modify(remove, [*change.add, mine], quad_block(change.expect, nt)))
        if not self._ask(f"ASK {{ GRAPH {nt(RECEIPTS)} {{ {nt(receipt)} ?p ?o }} }}"):
            raise Conflict("another writer changed what this commit expected first ("
                           + "; ".join(f"{s.n3()} {p.n3()} {o.n3()}"
                                       for s, p, o, _ in change.expect) + ")",
                           expected=change.expect)
        self._receipt = receipt

    def load(self, quads: Iterable[Quad]) -> None:
        body = ox.serialize([to_ox_quad(q) for q in quads], format=ox.RdfFormat.N_QUADS)
        if body:
            self._post_nquads(body)

    def load_file(self, path: Path, progress: Progress | None = None) -> int:
        """Parsed here by pyoxigraph (so a syntax error names its line) and streamed to the
        server as N-Quads in one request."""
        count = [0]

        def chunks() -> Iterator[bytes]:
            batch: list[ox.Quad] = []
            for q in parse_file(path, progress):
                batch.append(q)
                if len(batch) == _BATCH:
                    count[0] += len(batch)
                    yield ox.serialize(batch, format=ox.RdfFormat.N_QUADS)
                    batch = []
            count[0] += len(batch)
            yield ox.serialize(batch, format=ox.RdfFormat.N_QUADS)

        self._post_nquads(chunks())
        return count[0]

    def _post_nquads(self, body: bytes | Iterator[bytes]) -> None:
        self._seen.clear()
        self._request("POST", _STORE, body, {"Content-Type": "application/n-quads"})

    def close(self) -> None:
        self._http.close()


def _term(value: Mapping[str, str]) -> Node:
    kind = value["type"]
    if kind == "uri":
        return URIRef(value["value"])
    if kind == "literal" or kind == "typed-literal":
        if "xml:lang" in value:
            return Literal(value["value"], lang=value["xml:lang"])
        dt = value.get("datatype")
        if dt is None or dt == "http://www.w3.org/2001/XMLSchema#string":
            return Literal(value["value"])
        return Literal(value["value"], datatype=URIRef(dt))
    if kind == "bnode":
        return BNode(value["value"])
    raise UsageError(f"a SPARQL result holds a {kind} term, which a Horismos world does not")


def nt(term: Node) -> str:
    """A term in N-Triples syntax (pyoxigraph escapes it); an IRI RFC 3987 refuses, which
    rdflib and the embedded stores keep, is refused here before a server refuses it."""
    if isinstance(term, URIRef):
        try:
            return str(ox.NamedNode(str(term)))
        except ValueError as e:
            raise UsageError(f"<{term}> is not an IRI a SPARQL server accepts ({e}); "
                             "percent-encode the offending character") from None
    return str(to_ox(term))


def _named(term: Node) -> str:
    if isinstance(term, BNode):
        raise UsageError(f"{term.n3()}: a stored blank node cannot be named over the SPARQL "
                         "protocol; give the node an IRI")
    return nt(term)


def _values(bindings: Mapping[str, Node], names: frozenset[str] | None) -> str:
    """One ``VALUES`` row binding the variables, or nothing."""
    items = sorted((k, v) for k, v in bindings.items() if names is None or k in names)
    if not items:
        return ""
    terms = " ".join(_named(v) for _, v in items)
    return f"VALUES ({' '.join('?' + k for k, _ in items)}) {{ ({terms}) }}\n"


def _modify(remove: Iterable[Quad], add: Iterable[Quad], where: str) -> str:
    def term(t: Node) -> str:
        return f"_:{t}" if isinstance(t, BNode) else nt(t)

    return (f"DELETE {{\n{quad_block(remove, term)}\n}}\nINSERT {{\n{quad_block(add, term)}\n}}"
            f"\nWHERE {{\n{where}\n}}")


def _first_group(query: str) -> int:
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
