"""A world kept in a SPARQL 1.1 server (``sparql:URL``), shared by every process that opens it.

The layout is Oxigraph's (``oxigraph serve``): queries at ``URL/query`` (asked with its
``union-default-graph`` option, so the default graph is the union of all graphs, as on the
embedded stores), updates at ``URL/update``, the whole dataset at ``URL/store`` (Graph Store
Protocol: loads POST N-Quads there, snapshots GET them). One kept-alive connection
(:mod:`horismos._stores.http1`); a query is sent as the request's body, not URL-encoded.

Bound variables reach a query as a ``VALUES`` row at the top of each pattern's group (terms
serialised by pyoxigraph, so escaped), never pasted into the patterns. A commit is one SPARQL
Update, one request, whether guarded or not. A guarded commit (``Change.expect``) puts the
expected quads in its ``WHERE``, inserts a receipt into a graph of its own and, as the same
request's second operation, drops that graph. SPARQL 1.1 Update makes ``DROP GRAPH`` of a graph
that does not exist fail, and Oxigraph runs a request's operations as one transaction: when the
``WHERE`` did not match (another writer got in first), no receipt was inserted, the ``DROP``
fails, nothing of the request lands and :class:`Conflict` is raised — no read afterwards to
learn whether it landed, and no receipt left behind. Oxigraph evaluates an update's ``WHERE``
on a snapshot without detecting write conflicts, so two guarded updates racing on the same
snapshot can both land; ``horismos._claims`` makes sure only one worker drives an instance, so
they never race.

Reads: one request a step. A precondition asked with a :class:`ReadAhead` also fetches, as
``UNION`` branches of the same query, the types and triples the step reads next (its
arguments' types, its effect subject's triples) and its later rules' solutions; ``objects``,
``outgoing`` and ``solutions`` answer from them until this store next writes (a write that only
adds keeps what it does not touch: the intent announced between the read and the call). The
text a read sends and the terms its rows become are :mod:`.sparql_reads`.

Blank nodes: the protocol cannot name a stored blank node, so quads to remove or expect, and
bound variables, must not contain one (:class:`UsageError`); added blank nodes become fresh
server blank nodes; ``objects`` of a blank node answers for those ``outgoing`` met since the
store last wrote (the gate asks about a subject's neighbours just after reading its triples).
Added blank nodes are skolemised first (:mod:`horismos._stores.skolem`), so none is stored.

The digest: the server serialises nothing for us, so no process may read-modify-write one
global value. Each update Horismos makes also inserts its own delta as a node of its own in
``urn:horismos:runtime:digest``; :meth:`SparqlStore.digest` sums them (one query). A delta is
exact when it counts only quads that really were added or removed: a guarded commit (the
runner's) is taken to remove quads that are stored and add quads that are not — its guard,
the instance's version, says the runner read them — while an unguarded change and every load
first asks which of its quads are stored. A user's SPARQL update (:meth:`SparqlStore.update`)
of ``INSERT DATA`` and ``DELETE DATA`` alone is such an unguarded change; any other is
followed by a delta of its own, the change between a read of the whole store before it and
one after (a write another client makes between the two is counted as the update's): the
server does not say what it wrote. Writes that
bypass Horismos are not counted; the recomputation (``horismos digest --check``) finds them,
from one consistent read of the whole store, and ``--fold`` replaces the deltas that read saw
by one base value when they agree with it (``--rebase`` whether or not).
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import islice
from pathlib import Path
from typing import Any, cast

import pyoxigraph as ox
from rdflib import BNode, Dataset, Literal, URIRef
from rdflib.graph import DATASET_DEFAULT_GRAPH_ID
from rdflib.term import Node

from .._digest import ZERO, Digest, sum_of_texts
from .._errors import UsageError
from .._preconditions import Precondition
from .._redact import redact_text, redact_url
from .base import (
    DIGEST_GRAPH,
    INSTANCES,
    LTHASH,
    RUNTIME,
    Change,
    Conflict,
    Progress,
    Quad,
    QueryRefused,
    ReadAhead,
    Store,
    StoreError,
    is_world_quad,
)
from .bound import with_iris
from .http1 import LOAD_TIMEOUT, Connection, HttpError
from .ox_files import parse_file
from .ox_terms import from_ox, is_runtime, normalised, ox_line, to_ox_quad
from .skolem import skolemise, skolemise_anew
from .sparql_reads import (
    ahead_branches,
    edge,
    first_group,
    named,
    one_of,
    read_ahead,
    result_term,
    solutions_key,
    values_row,
)
from .sparql_text import Texted, block, has_blank, nt, texted
from .user_update import data_change, refuse_triple_terms

__all__ = ["SparqlStore"]

_BY = URIRef(RUNTIME + "by")
_QUERY, _PLAIN, _STORE = "/query?union-default-graph", "/query", "/store"
_TSV = {"Accept": "text/tab-separated-values", "Content-Type": "application/sparql-query"}
_DIRECT = {  # the query as the body (SPARQL protocol's POST directly): nothing to URL-encode
    "Accept": "application/sparql-results+json",
    "Content-Type": "application/sparql-query",
}
_UPDATE = {"Content-Type": "application/sparql-update"}
_CHUNK = 5_000  # quads a load checks and inserts per update
_ASSUMED = 64  # quads an unguarded change checks in its own update, not by a read first
_ROW = "horis_held_row"
"""The variable numbering :meth:`SparqlStore.held`'s rows (with a ``_`` more while a
precondition names it)."""
_HELD_ROWS = 500
"""Bindings :meth:`SparqlStore.held` asks in one request: a query of some tens of kB."""


class SparqlStore(Store):
    """A SPARQL 1.1 server that several processes read and write at once."""

    shared = True
    persistent = True

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")
        self.name = f"sparql:{self.url}"
        self._http = Connection(self.url)
        self._prologues: dict[tuple[tuple[tuple[str, str], ...], str | None], str] = {}
        self._seen: dict[tuple[Node, Node], list[Node]] = {}
        """``objects`` answers since this store last wrote: reads between two of its own
        commits see the world as at the first of them."""
        # a node's triples a read-ahead fetched: with the predicates it was limited to
        self._out: dict[Node, tuple[frozenset[Node] | None, list[tuple[Node, Node]]]] = {}
        """``outgoing`` answers a step's read-ahead fetched (:class:`ReadAhead`), kept as
        ``_seen`` is."""
        self._later: dict[tuple[str, tuple[tuple[str, Node], ...]], list[dict[str, Node]]] = {}
        """Solutions of the preconditions a read-ahead named in ``also``, until a write."""

    # -- protocol -------------------------------------------------------------------------

    def _request(
        self,
        method: str,
        path: str,
        content: bytes | Iterator[bytes] | None = None,
        headers: Mapping[str, str] | None = None,
        *,
        timeout: float | None = None,
    ) -> bytes:
        try:
            if timeout is None:
                response = self._http.request(method, path, content, headers)
            else:
                response = self._http.request(method, path, content, headers, timeout=timeout)
        except HttpError as e:
            raise StoreError(
                f"the SPARQL server at {redact_url(self.url)} cannot be reached: "
                f"{redact_text(str(e))}; check the URL, and start the server if it is "
                "not running (oxigraph serve --location DIR --bind HOST:PORT)"
            ) from None
        if response.status >= 400:
            # a query the server's engine refuses (400): the pattern's mistake, typed so the
            # runner fails the step rather than the run
            refused = response.status == 400 and path.startswith(_PLAIN)
            raise (QueryRefused if refused else StoreError)(
                f"the SPARQL server at {redact_url(self.url)} refused {method} "
                f"{path.partition('?')[0]} ({response.status}): "
                f"{response.body.decode(errors='replace').strip()[:500]}",
                status=response.status,
            )
        return response.body

    def _query(self, text: str, path: str = _QUERY) -> Any:
        return json.loads(self._request("POST", path, text.encode(), _DIRECT))

    def _rows(self, text: str) -> list[dict[str, Node]]:
        body = self._query(text)
        return [{k: result_term(v) for k, v in b.items()} for b in body["results"]["bindings"]]

    def _ask(self, text: str, path: str = _QUERY) -> bool:
        return bool(self._query(text, path)["boolean"])

    def update(self, text: str, *, runtime_only: bool = False) -> None:
        """One of ``INSERT DATA`` and ``DELETE DATA`` alone lands as a commit of the quads it
        names (:func:`data_change`; its blank nodes new IRIs, as every blank node Horismos
        adds here, drawn anew each time): the digest moved by those, asking only which are
        stored. Of any other, the server says nothing of what it wrote, so one that landed
        (not ``runtime_only``) is moved by what one read of the whole store
        before it and one after say it wrote: the recomputed digest's change between them,
        less the kept one's (commits Horismos made meanwhile, whose deltas are kept). LtHash
        is a group, so the gap between the kept and the recomputed digest before the update,
        a write made around Horismos, is the gap after it: ``digest --check`` still finds
        it. A write another client makes between the two reads is counted as the update's:
        the server serialises nothing for us, and says nothing of what an update wrote. One
        the server refused raises before: no delta."""
        refuse_triple_terms(text)  # the server would take it, and its quads not be read
        change = None if runtime_only else data_change(text)
        if change is not None:
            self.apply(Change(add=skolemise_anew(change.add), remove=change.remove))
            return
        if runtime_only:
            self._post_update(text)
            return
        kept, recomputed, _, _ = self._read_all()
        self._post_update(text)
        try:
            kept_after, recomputed_after, _, _ = self._read_all()
            # what the update wrote, less what Horismos's own commits meanwhile wrote (their
            # deltas are kept already): the difference of the two reads' gaps, which leaves
            # the gap of the first, a write around Horismos before it, as it was
            moved = (recomputed_after - recomputed) - (kept_after - kept)
            if moved != ZERO:
                self._post_update(f"INSERT DATA {{{_delta_text(moved)}\n}}")
        except StoreError as e:
            store = f"sparql:{self.url}" if redact_url(self.url) == self.url else None
            raise StoreError(
                f"the update landed, but the world's digest could not be moved by it: {e}. "
                "Do not run the update again; once the server answers, run horismos digest "
                f"--check --store {store or '<your sparql: store>'} (it differs by what the "
                "update wrote, and by any write made around Horismos), then --rebase to "
                "adopt it",
                status=e.status,
            ) from None

    def _post_update(self, text: str) -> None:
        """``text`` sent as one update, the store's own (a load's, a fold's), whose digest
        it accounts for itself."""
        self._forget()
        self._request("POST", "/update", text.encode(), _UPDATE)

    # -- reads ----------------------------------------------------------------------------

    def _prologue(
        self,
        prefixes: tuple[tuple[str, str], ...],
        used_in: str | None = None,
    ) -> str:
        """``PREFIX`` lines for ``prefixes``; with ``used_in`` (a precondition's text, of which
        there are as many as the definitions hold), only those it names: the server parses
        every line of every request, and a vocabulary can bring dozens."""
        key = (prefixes, used_in)
        text = self._prologues.get(key)
        if text is None:
            text = self._prologues[key] = "".join(
                f"PREFIX {p}: <{ns}>\n"
                for p, ns in prefixes
                if used_in is None or not p or f"{p}:" in used_in
            )
        return text

    def solutions(
        self, pre: Precondition, bindings: Mapping[str, Node], _ahead: ReadAhead | None = None
    ) -> list[dict[str, Node]]:
        """With ``_ahead``, one request also fetches what the step reads next (the types and
        triples of its solutions' values, the solutions of its later rules), kept for
        :meth:`objects`, :meth:`outgoing` and these later ``solutions``."""
        later = self._later.pop(solutions_key(pre, bindings), None)
        if later is not None:
            return later
        values = values_row(bindings, pre.variables)
        body = "\n".join(f"{{ {values}{p.text}\n}}" for p in pre.patterns)
        prologue = self._prologue(pre.prefixes, pre.select_text)
        branches: list[str] = []
        also: list[Precondition] = []
        if _ahead is not None:
            branches, also = ahead_branches(body, bindings, pre, _ahead)
            if also:  # one prologue: the prefixes any of them names (they agree: compatible)
                merged = dict(pre.prefixes)
                for other in also:
                    merged.update(other.prefixes)
                prologue = self._prologue(
                    tuple(merged.items()),
                    "".join([pre.select_text, *(o.select_text for o in also)]),
                )
        if branches:
            body = "{\n" + body + "\n}\nUNION " + "\nUNION ".join(branches)
        rows = self._rows(f"{prologue}SELECT * WHERE {{\n{body}\n}}")
        if not branches:
            return [{**bindings, **row} for row in rows]
        self._forget()  # what this step reads replaces what an earlier one read
        read = read_ahead(rows, bindings, also, _ahead.predicates if _ahead else None)
        self._seen.update(read.objects)  # type: ignore[arg-type]
        self._out.update(read.outgoing)
        self._later.update(read.later)
        return read.found

    def held(self, pre: Precondition, each: Sequence[Mapping[str, Node]]) -> list[bool]:
        """One request for up to :data:`_HELD_ROWS` bindings: each is a row of the ``VALUES``
        block at the top of each pattern's group (a variable it does not bind, ``UNDEF``),
        numbered by a variable of its own, and the numbers of the rows that have a solution
        come back. A join distributes over a ``VALUES`` block's rows, and rows of different
        numbers join with nothing, so a row has a solution here exactly when its bindings, as
        the one row :meth:`solutions` sends, have one."""
        found: list[bool | None] = []
        for bindings in each:  # what a read-ahead already answered, as solutions() would
            later = self._later.pop(solutions_key(pre, bindings), None)
            found.append(None if later is None else bool(later))
        asked = [n for n, f in enumerate(found) if f is None]
        row = _ROW
        while row in pre.variables:
            row += "_"
        prologue = self._prologue(pre.prefixes, pre.select_text)
        for start in range(0, len(asked), _HELD_ROWS):
            chunk = asked[start : start + _HELD_ROWS]
            names = sorted({k for n in chunk for k in each[n] if k in pre.variables})
            rows = " ".join(
                f"({n} "
                + " ".join(named(each[n][k]) if k in each[n] else "UNDEF" for k in names)
                + ")"
                for n in chunk
            )
            values = f"VALUES ({' '.join('?' + k for k in [row, *names])}) {{ {rows} }}\n"
            body = "\n".join(f"{{ {values}{p.text}\n}}" for p in pre.patterns)
            held = {
                int(str(r[row]))
                for r in self._rows(f"{prologue}SELECT DISTINCT ?{row} WHERE {{\n{body}\n}}")
            }
            for n in chunk:
                found[n] = n in held
        return [bool(f) for f in found]

    def _forget(self, subjects: Iterable[Node] | None = None) -> None:
        """Drop what reads kept: all of it, or what is about ``subjects``."""
        self._later.clear()  # any write may change any precondition's solutions
        if subjects is None:
            self._seen.clear()
            self._out.clear()
            return
        gone = set(subjects)
        for key in [k for k in self._seen if k[0] in gone]:
            del self._seen[key]
        for node in gone:
            self._out.pop(node, None)

    def select(
        self,
        query: str,
        bindings: Mapping[str, Node],
        ns: Mapping[str, str],
    ) -> list[dict[str, Node]]:
        query, _ = with_iris(query, bindings)  # the server plans from them (:mod:`.bound`)
        at = first_group(query)
        text = query[: at + 1] + values_row(bindings, None) + query[at + 1 :]
        return self._rows(self._prologue(tuple(ns.items())) + text)

    def objects(self, subject: Node, predicate: Node) -> Iterator[Node]:
        found = self._seen.get((subject, predicate))
        if found is None:
            if isinstance(subject, BNode) and (subject, None) in self._seen:
                found = []  # described whole by outgoing: it has no such triple
            else:
                found = self._seen[subject, predicate] = [
                    r["o"]
                    for r in self._rows(
                        f"SELECT DISTINCT ?o WHERE {{ {named(subject)} {nt(predicate)} ?o }}"
                    )
                ]
        return iter(found)

    def outgoing(
        self, subject: Node, predicates: frozenset[Node] | None = None
    ) -> Iterator[tuple[Node, Node, Node]]:
        """The subject's triples. The same query describes the blank nodes among their objects
        and gives the types of the IRIs, so ``objects`` answers for them without asking again
        (and for blank nodes at all: the protocol cannot name them later)."""
        kept = self._out.get(subject)
        if kept is not None and (
            kept[0] is None or (predicates is not None and predicates <= kept[0])
        ):
            return iter(
                [(subject, p, o) for p, o in kept[1] if predicates is None or p in predicates]
            )
        only = "" if predicates is None else one_of("p", predicates)
        rows = self._rows(
            f"SELECT ?p ?o ?bp ?bo ?t WHERE {{ {only}{named(subject)} ?p ?o "
            "OPTIONAL { ?o ?bp ?bo FILTER(isBlank(?o)) } "
            "OPTIONAL { ?o a ?t FILTER(isIRI(?o)) } }"
        )
        out: dict[tuple[Node, Node], None] = {}
        seen: dict[tuple[Node, Node | None], dict[Node, None]] = {}
        for r in rows:
            edge(out, seen, r["p"], r["o"], r.get("bp"), r.get("bo"), r.get("t"))
        self._seen.update({k: list(v) for k, v in seen.items()})  # type: ignore[misc]
        return iter([(subject, p, o) for p, o in out])

    def quads(self) -> Iterator[Quad]:
        body = self._request("GET", _STORE, headers={"Accept": "application/n-quads"})
        for q in ox.parse(body, format=ox.RdfFormat.N_QUADS):
            if not is_runtime(q.graph_name):
                g = q.graph_name
                yield (
                    from_ox(q.subject),
                    from_ox(q.predicate),
                    from_ox(q.object),
                    None if isinstance(g, ox.DefaultGraph) else from_ox(g),
                )  # type: ignore[misc]

    def dataset(self) -> Dataset:
        """A copy as an rdflib :class:`Dataset`, fetched whole; writes to it stay local."""
        ds = Dataset(default_union=True)
        for s, p, o, g in self.quads():
            ds.graph(g if g is not None else DATASET_DEFAULT_GRAPH_ID).add((s, p, o))
        return ds

    # -- writes ---------------------------------------------------------------------------

    def apply(self, change: Change) -> Digest:
        # what this process read stays true of what its own write does not touch; a write that
        # only adds instance bookkeeping (an intent announced before a call, at a first step
        # with its instance's creation and its short id) keeps the rest of the step's reads.
        # Any other write ends the step: the next reads anew (an instance's first commit
        # removes nothing)
        mid_step = not change.remove and all(
            q[3] == INSTANCES or not is_world_quad(q) for q in change.add
        )
        self._forget({q[0] for q in change.add} if mid_step else None)
        for q in (*change.remove, *change.expect):
            if has_blank([q]):
                raise UsageError(
                    f"{q[0].n3()} {q[1].n3()} {q[2].n3()}: a stored blank node "
                    "cannot be named over the SPARQL protocol; give the node an IRI"
                )
        adds = texted(skolemise(list(change.add)) if has_blank(change.add) else change.add)
        add = {q.key: q for q in adds if q.world}
        removed = {q.key: q for q in texted(change.remove)}
        removes = [q for k, q in removed.items() if k not in add and q.world]
        if change.expect or change.absent:
            # the runner's commit: what it removes it read, what it adds is new
            delta = _delta([q for k, q in add.items() if k not in removed], removes)
            guard = _absent_and_present(texted(change.absent), texted(change.expect))
        elif not add and not removes:
            return self._plain(removed.values(), adds, ZERO)
        elif len(add) + len(removes) <= _ASSUMED:
            # taken to add only new quads and remove only stored ones (an instance's
            # creation, an intent: fresh IRIs), the update checking that itself, so the delta
            # needs no read first; when it does not hold, nothing lands and the read is made
            delta = _delta(add.values(), removes)
            guard = _absent_and_present(add.values(), removes)
        else:
            return self._plain(removed.values(), adds, self._exact_delta(add.values(), removes))
        tries = 3  # a hold can go between the update and the look at what stopped it
        while True:
            try:
                self._guarded(removed.values(), adds, delta, guard)
                return delta
            except _Unmatched:
                if not change.expect and not change.absent:
                    return self._plain(
                        removed.values(), adds, self._exact_delta(add.values(), removes)
                    )
            present = self.which(change.absent)
            if present:
                raise Conflict(
                    "another writer wrote first what this commit required absent ("
                    + "; ".join(f"{s.n3()} {p.n3()} {o.n3()}" for s, p, o, _ in present)
                    + ")",
                    present=tuple(present),
                )
            tries -= 1
            if (
                not change.absent
                or not tries
                or len(self.which(change.expect)) < len(change.expect)
            ):
                raise Conflict(
                    "another writer changed what this commit expected first ("
                    + "; ".join(f"{s.n3()} {p.n3()} {o.n3()}" for s, p, o, _ in change.expect)
                    + ")",
                    expected=change.expect,
                )
            # what stopped it went in between (its writer's next commit landed): again

    def which(self, quads: Sequence[Quad]) -> list[Quad]:
        """Those of ``quads`` the server holds (one request a few thousand)."""
        stored = self._stored([(q.s, q.p, q.o, q.g or None) for q in texted(quads)])
        return [q for i, q in enumerate(quads) if i in stored]

    def _exact_delta(self, add: Iterable[Texted], removes: list[Texted]) -> Digest:
        """The delta of adding ``add`` and removing ``removes``, from asking which are stored."""
        add = list(add)
        stored = self._stored([(q.s, q.p, q.o, q.g or None) for q in [*add, *removes]])
        return _delta(
            [q for i, q in enumerate(add) if i not in stored],
            [q for i, q in enumerate(removes, len(add)) if i in stored],
        )

    def _plain(self, remove: Iterable[Texted], adds: list[Texted], delta: Digest) -> Digest:
        """One update removing and adding, with ``delta`` kept beside them."""
        mine = _delta_text(delta) if delta else ""
        self._request("POST", "/update", _modify(remove, adds, mine, "").encode(), _UPDATE)
        return delta

    def _guarded(
        self, remove: Iterable[Texted], adds: list[Texted], delta: Digest, guard: str
    ) -> None:
        """One update removing and adding, with ``delta`` kept beside them, that lands only
        if ``guard`` (a group pattern) matches; :class:`_Unmatched` when it did not.

        The receipt: a graph of its own the update inserts only when its WHERE matches, and
        drops again in the same request; when the WHERE did not match, the DROP fails, the
        server rolls the whole request back and answers with an error."""
        receipt = f"<{RUNTIME}receipt:{uuid.uuid4().hex}>"
        mine = (_delta_text(delta) if delta else "") + (
            f'\nGRAPH {receipt} {{\n{receipt} <{_BY}> "pid {os.getpid()}" .\n}}'
        )
        text = _modify(remove, adds, mine, guard) + f";\nDROP GRAPH {receipt}"
        try:
            self._request("POST", "/update", text.encode(), _UPDATE)
        except StoreError as e:
            if f"{receipt} does not exist" not in str(e):
                raise
            raise _Unmatched from None

    @staticmethod
    def _delta_quad(delta: Digest) -> Quad:
        node = URIRef(f"{DIGEST_GRAPH}:{uuid.uuid4().hex}")
        return node, LTHASH, Literal(delta.to_text()), DIGEST_GRAPH

    def _stored(self, quads: list[tuple[str, str, str, str | None]]) -> set[int]:
        """Which of these quads (terms as N-Triples text) the server holds, by index."""
        found: set[int] = set()
        for start in range(0, len(quads), _CHUNK):
            default, named = [], []
            for i, (s, p, o, g) in enumerate(quads[start : start + _CHUNK], start):
                if g is None:
                    default.append(f"({i} {s} {p} {o})")
                else:
                    named.append(f"({i} {s} {p} {o} {g})")
            groups = []
            if default:
                groups.append(f"{{ VALUES (?i ?s ?p ?o) {{ {' '.join(default)} }} ?s ?p ?o }}")
            if named:
                groups.append(
                    f"{{ VALUES (?i ?s ?p ?o ?g) {{ {' '.join(named)} }} GRAPH ?g {{ ?s ?p ?o }} }}"
                )
            if groups:
                body = self._query(f"SELECT ?i WHERE {{ {' UNION '.join(groups)} }}", _PLAIN)
                found.update(int(b["i"]["value"]) for b in body["results"]["bindings"])
        return found

    def load(self, quads: Iterable[Quad]) -> None:
        quads = skolemise(list(quads))
        for i in range(0, len(quads), _CHUNK):
            self._insert_new(normalised(to_ox_quad(q) for q in quads[i : i + _CHUNK]))

    def load_file(self, path: Path, progress: Progress | None = None) -> int:
        """Parsed here by pyoxigraph (so a syntax error names its line). Into a world that
        holds data: a few thousand quads at a time, the server saying which it holds, one
        update inserting the others with their delta. Into an empty world: streamed as
        N-Quads in one request (5x faster), then the digest recomputed from one read of the
        store and folded (:meth:`rebase_digest`: deltas that concurrent commits write stay
        counted). Returns how many quads were new.

        Whether the world holds data is asked of the default graph first, then of the named
        graphs: Oxigraph answered the two as one ``UNION`` by reading the whole default graph
        (0.33 s at a million triples, a small file's whole load), and ``GRAPH ?g`` reads the
        default graph's quads before the named graphs' (``bench_load_small.py``)."""
        if self._ask("ASK { ?s ?p ?o }", _PLAIN) or self._ask(
            f'ASK {{ GRAPH ?g {{ ?s ?p ?o }} FILTER(!STRSTARTS(STR(?g), "{RUNTIME}")) }}',
            _PLAIN,
        ):
            quads = parse_file(path, progress)
            added = 0
            while chunk := list(islice(quads, _CHUNK)):
                added += self._insert_new(normalised(chunk))
            return added

        def chunks() -> Iterator[bytes]:
            quads = parse_file(path, progress)
            while batch := list(islice(quads, _CHUNK * 4)):
                yield cast(bytes, ox.serialize(batch, format=ox.RdfFormat.N_QUADS))

        self._post_nquads(chunks())
        return self._fold()[3]

    def _post_nquads(self, body: Iterator[bytes]) -> None:
        self._forget()
        # the server answers once the whole file is in: the wait of a load, not of a query
        self._request(
            "POST", _STORE, body, {"Content-Type": "application/n-quads"}, timeout=LOAD_TIMEOUT
        )

    def _insert_new(self, quads: list[ox.Quad]) -> int:
        """Insert those of ``quads`` (without repeats) the server does not hold yet, and their
        delta, in one update."""
        self._seen.clear()
        quads = [q for q in quads if not is_runtime(q.graph_name)]
        stored = self._stored(
            [
                (
                    str(q.subject),
                    str(q.predicate),
                    str(q.object),
                    None if isinstance(q.graph_name, ox.DefaultGraph) else str(q.graph_name),
                )
                for q in quads
            ]
        )
        new = [q for i, q in enumerate(quads) if i not in stored]
        if not new:
            return 0
        delta = Digest.of_lines(ox_line(q) for q in new)
        node, p, o, g = self._delta_quad(delta)
        by_graph: dict[str, list[str]] = {}
        for q in new:
            name = "" if isinstance(q.graph_name, ox.DefaultGraph) else str(q.graph_name)
            by_graph.setdefault(name, []).append(f"{q.subject} {q.predicate} {q.object} .")
        by_graph.setdefault(nt(cast(URIRef, g)), []).append(f"{nt(node)} {nt(p)} {nt(o)} .")
        self._post_update(
            "INSERT DATA {\n"
            + "\n".join(
                "\n".join(lines) if not name else f"GRAPH {name} {{\n" + "\n".join(lines) + "\n}"
                for name, lines in by_graph.items()
            )
            + "\n}"
        )
        return len(new)

    # -- digest ---------------------------------------------------------------------------

    def digest(self) -> Digest:
        """The sum of the deltas every Horismos update left in the store (one query, its
        answer as tab-separated values: base64 needs no JSON around it)."""
        body = self._request(
            "POST",
            _PLAIN,
            f"SELECT ?v WHERE {{ GRAPH {nt(DIGEST_GRAPH)} {{ ?d {nt(LTHASH)} ?v }} }}".encode(),
            _TSV,
        )
        rows = body.decode("ascii").split("\n")[1:]  # after the header line, ?v
        return sum_of_texts(row.strip('"') for row in rows if row)

    def _read_all(self) -> tuple[Digest, Digest, list[tuple[str, str]], int]:
        """From one read of the whole store: the sum of its deltas, the digest recomputed
        from its quads, the deltas (node, value) that read saw, and how many quads it has."""
        body = self._request("GET", _STORE, headers={"Accept": "application/n-quads"})
        deltas: list[tuple[str, str]] = []
        digest_graph, lthash = str(DIGEST_GRAPH), str(LTHASH)

        count = [0]

        def lines() -> Iterator[str]:
            for q in ox.parse(body, format=ox.RdfFormat.N_QUADS):
                g = q.graph_name
                if not is_runtime(g):
                    count[0] += 1
                    yield ox_line(q)
                elif g.value == digest_graph and q.predicate.value == lthash:
                    deltas.append((q.subject.value, q.object.value))

        recomputed = Digest.of_lines(lines())
        return sum_of_texts(value for _, value in deltas), recomputed, deltas, count[0]

    def recompute_digest(self) -> Digest:
        return self._read_all()[1]

    def check_digest(self) -> tuple[Digest, Digest]:
        kept, recomputed, _, _ = self._read_all()
        return kept, recomputed

    def rebase_digest(self, *, only_if_equal: bool = False) -> tuple[Digest, Digest]:
        """Replace the deltas one read saw by one base value, the digest recomputed by that
        read; deltas written since stay, so concurrent commits are not lost."""
        kept, recomputed, _, _ = self._fold(only_if_equal)
        return kept, recomputed

    def _fold(self, only_if_equal: bool = False) -> tuple[Digest, Digest, bool, int]:
        """Replace the deltas one read saw by one base value, in an update that lands only
        while every one of them is still there, under a name made from theirs.

        Two folds at once (two ``digest --fold``, a fold and a load into an empty world)
        each replaced the same deltas by a base of its own: the kept digest counted the
        world twice. Now two that read the same deltas write the same base quad, which the
        store holds once; one whose deltas another fold replaced since changes nothing (a
        commit's delta it read, the other did not, stays counted). Two folds that read
        different deltas and whose updates the server evaluates on one snapshot can still
        both land: the server detects no write conflicts (see ``_claims``)."""
        kept, recomputed, deltas, count = self._read_all()
        if only_if_equal and kept != recomputed:
            return kept, recomputed, False, count
        g, p = nt(DIGEST_GRAPH), nt(LTHASH)
        old = " ".join(f"<{node}> {p} {nt(Literal(value))} ." for node, value in deltas)
        name = hashlib.sha256(" ".join(sorted(node for node, _ in deltas)).encode()).hexdigest()
        base = f"<{DIGEST_GRAPH}:base:{name[:32]}> {p} {nt(Literal(recomputed.to_text()))} ."
        self._post_update(
            f"DELETE {{ GRAPH {g} {{ {old} }} }}\n"
            f"INSERT {{ GRAPH {g} {{ {base} }} }}\n"
            f"WHERE {{ GRAPH {g} {{ {old} }} }}"
            if old
            else f"INSERT DATA {{ GRAPH {g} {{ {base} }} }}"
        )
        return kept, recomputed, True, count

    def close(self) -> None:
        self._http.close()


class _Unmatched(Exception):
    """A guarded update's ``WHERE`` did not match, so nothing of it landed."""


def _delta(added: Iterable[Texted], removed: Iterable[Texted]) -> Digest:
    """The digest delta of world quads that were really added and removed (each given once)."""
    return Digest.of_change([q.line for q in added], [q.line for q in removed])


def _delta_text(delta: Digest) -> str:
    """A delta as the quad a store keeps in its digest graph, as update text."""
    node = f"<{DIGEST_GRAPH}:{uuid.uuid4().hex}>"
    return f'\nGRAPH <{DIGEST_GRAPH}> {{\n{node} <{LTHASH}> "{delta.to_text()}" .\n}}'


def _modify(remove: Iterable[Texted], add: Iterable[Texted], mine: str, where: str) -> str:
    """A DELETE/INSERT of the quads, ``mine`` (a delta, a receipt: text) inserted with them."""
    return (
        f"DELETE {{\n{block(remove)}\n}}\nINSERT {{\n{block(add)}{mine}\n}}\nWHERE {{\n{where}\n}}"
    )


def _absent_and_present(absent: Iterable[Texted], present: Iterable[Texted]) -> str:
    """A group pattern matching when no quad of ``absent`` is stored and every one of
    ``present`` is (none holds a blank node)."""
    return block(present) + "".join(f"\nFILTER NOT EXISTS {{ {block([q])} }}" for q in absent)
