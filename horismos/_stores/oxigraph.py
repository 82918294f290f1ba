"""The pyoxigraph store: in memory (``oxigraph``) or on disk, transactional (``oxigraph:PATH``).

Preconditions run in Oxigraph's own SPARQL engine on the patterns' text, bound variables
passed as ``substitutions`` (SEP-0007); a bound IRI is also written into the patterns, escaped,
for Oxigraph to plan from (:mod:`.bound`). A commit is one SPARQL
Update (one transaction) whose templates name every term through a variable a custom function
binds, so no value is written into its text and a blank node keeps its identity. A guarded
commit checks its expected quads under the store's lock: an on-disk store opens in one process
only, so every writer goes through that lock. Files load through pyoxigraph's parser straight
into the store, without passing through Python terms; blank nodes are skolemised on the way
(:mod:`horismos._stores.skolem`).

The digest is kept in the object, its lines folded in batches when it is read
(:class:`~horismos._digest.Tally`: a line added then removed in between is never hashed). On
disk it is also written into the store (graph ``urn:horismos:runtime:digest``) every 1,000
commits, after each load and on close, each time followed by a flush; the first write after
that removes it again before anything else lands. So the stored digest is either absent or
true: a process that dies between two such points (SIGKILL, the OOM killer) leaves none.

The next process to open the store then does not know the digest, and opens at once all the
same: it computes it (one pass over the store, 12-20 s at 1,000,000 triples) only when it is
first read (:meth:`digest`, :meth:`check_digest`, :meth:`rebase_digest`), and writes it into
the store at once, so the process after opens knowing it. Read by ``horismos digest``; by a
``run``, ``resume`` or ``tools call`` with ``--trace`` (the trace's header), ``wake --traces``
and ``serve --trace-dir``; by a Python caller's run or call with a trace it keeps. Not read by
a ``worker`` task, ``instances``, nor those without a trace (:attr:`Trace.kept_nowhere
<horismos._trace.Trace.kept_nowhere>`). Until it is read, commits count no line (the
recompute reads the store as it then is, what they wrote included), an update that is not
data alone is not followed by a recompute, the 1,000-commit mark and the close flush and
write no digest (none stays stored: the next open knows it does not know it, never a wrong
one), and a load tells an empty store by one lookup per graph.

Why not replace the stored digest in every commit's own update: each value is a new
2.7 KB string, which RocksDB keeps forever — measured, +6.6 MB on disk per 1,000 commits and
commits growing from 0.8 to 5.5 ms. The periodic flush also bounds RocksDB's write-ahead log,
which otherwise grew ~3 MB per 1,000 commits until the process exited.

Terms converted to and from rdflib, and a commit's quads encoded, are :mod:`.ox_terms`; files
read by pyoxigraph's parser, :mod:`.ox_files`; a commit on disk as update text,
:mod:`.ox_commit`; the folder of a store on disk, :mod:`.ox_folder`; a user's update read
before it runs, :mod:`.user_update`.
"""

from __future__ import annotations

import atexit
import contextlib
import re
import signal
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from itertools import chain, islice
from pathlib import Path
from typing import IO, Any, cast

import pyoxigraph as ox
from rdflib import Dataset, URIRef
from rdflib.graph import DATASET_DEFAULT_GRAPH_ID
from rdflib.term import Node

from .._digest import ZERO, Digest, Tally
from .._errors import UsageError
from .._os_words import written
from .._patterns import Plan, Unsupported, number
from .._preconditions import Precondition
from .backup_folder import into_fresh_folder
from .base import (
    DIGEST_GRAPH,
    LTHASH,
    Change,
    Conflict,
    Progress,
    Quad,
    QueryRefused,
    ReadAhead,
    Store,
    StoreError,
)
from .bound import with_iris
from .churn import Churn
from .copy_behind import CopyBehind, Landed
from .kept_types import KeptTypes
from .ox_commit import write_commit
from .ox_files import (
    ProgressReader,
    file_format,
    may_hold_blank_nodes,
    oversized,
    parse_file,
)
from .ox_folder import held_elsewhere, open_refused, refuse_folder_of_files, waiting_for_lock
from .ox_terms import (
    LENIENT,
    TERM_FN,
    Encoded,
    encode_quads,
    from_ox,
    graph_name,
    is_runtime,
    named_node,
    normalised,
    ox_line,
    to_ox,
)
from .schema_mark import touches_schema
from .skolem import skolemise
from .update_text import pinned
from .user_update import data_change, refuse_triple_terms

__all__ = ["OxigraphStore"]

_PROJECTION = re.compile(r"(?is)^.*?\bSELECT\s+(?:DISTINCT\s+|REDUCED\s+)?(?!\*)")
_WHERE = re.compile(r"(?i)\bWHERE\b|\{")
_DIGEST_NODE = ox.NamedNode(str(DIGEST_GRAPH))
_DIGEST_GRAPH = ox.NamedNode(str(DIGEST_GRAPH))
_LTHASH = ox.NamedNode(str(LTHASH))
_CHUNK = 5000  # quads a load checks against the store at a time
_LOOKUPS = 8
"""Wanted predicates up to which a node's edges are looked up one predicate at a time, past
which they are read in one pass and filtered (each lookup costs about as much as a few edges)."""
_PERSIST_EVERY = 1000  # commits between writing an on-disk store's digest and flushing it


class OxigraphStore(Store):
    """pyoxigraph's ``Store``: in memory without a path, RocksDB on disk with one.

    pyoxigraph creates a store at a path that holds none, in a folder of other files too:
    without ``create`` a path that holds no store (no RocksDB ``CURRENT`` file) is a
    :class:`UsageError`, for the commands that read a world or act on one made before."""

    def __init__(self, path: str | Path | None = None, *, create: bool = True) -> None:
        self.path = Path(path) if path is not None else None
        if self.path is not None and not create and not (self.path / "CURRENT").is_file():
            raise UsageError(
                f"no store at {self.path}; create one with "
                f"`horismos load FILES --store oxigraph:{self.path}`"
            )
        if self.path is not None and create and not (self.path / "CURRENT").is_file():
            refuse_folder_of_files(self.path)
        self.name = f"oxigraph:{self.path}" if self.path is not None else "oxigraph"
        self._on_disk = self.persistent = self.path is not None
        try:
            where = str(self.path) if self.path is not None else None
            # only a store on disk has a lock to wait for (HORISMOS_LOCK_WAIT)
            self._store = (
                waiting_for_lock(lambda: ox.Store(where), held_elsewhere)
                if where is not None
                else ox.Store()
            )
        except OSError as e:
            raise open_refused(self.path, e) from None
        self._lock = threading.RLock()
        self._texts: dict[str, str] = {}
        self._tally = Tally()  # the digest, lines folded in batches
        self._known = True  # the tally holds the digest; on disk, not until read if none kept
        self._persisted = False  # the stored digest is there (and true)
        self._commits = 0  # since it was last written
        self._schema_mark = 0  # moved by each write that may change the type rules
        self._churn = Churn()  # in memory: what was removed since the store was copied
        self._behind: CopyBehind | None = None  # in memory: a copy under way, if one is
        # in memory: the quads it holds, kept by each commit from empty; None when unknown
        # (counting is a pass over the store: 3 s at 3,000,000 quads, inside a step)
        self._live: int | None = 0 if self.path is None else None
        self._kept = KeptTypes()  # in memory: nodes' types as read, until a commit writes one
        if self._on_disk:
            kept = list(self._store.quads_for_pattern(_DIGEST_NODE, _LTHASH, None, _DIGEST_GRAPH))
            if kept:
                self._tally.reset(Digest.from_text(cast(ox.Literal, kept[0].object).value))
                self._persisted = True
            elif next(iter(self._store), None) is None:  # new: the empty set's
                self._persist()
            else:  # the last process died between two writes of it: recomputed when read
                self._known = False
            atexit.register(self.close_at_exit)  # a process that never closes it still writes it

    # -- reads ----------------------------------------------------------------------------

    def _query(
        self,
        text: str,
        bindings: Mapping[str, Node],
        names: frozenset[str] | None,
        prefixes: Mapping[str, str],
    ) -> Any:
        if names is not None:
            bindings = {k: v for k, v in bindings.items() if k in names}
        as_ox = {k: to_ox(v) for k, v in bindings.items()}  # noting IRIs only rdflib takes
        if LENIENT:  # such an IRI is refused as query text: it stays a substitution
            bindings = {k: v for k, v in bindings.items() if str(v) not in LENIENT}
        text, gone = with_iris(text, bindings)  # planned from them (:mod:`.bound`)
        subs = {ox.Variable(k): v for k, v in as_ox.items() if k not in gone}
        with self._lock:  # started (its snapshot taken) between commits, never inside one
            try:
                return self._store.query(
                    text,
                    prefixes=dict(prefixes),
                    substitutions=subs,
                    use_default_graph_as_union=True,
                )
            except (SyntaxError, RuntimeError) as e:  # pyoxigraph's, for a query it refuses
                raise QueryRefused(f"the store refused the query: {e}") from None

    def solutions(
        self, pre: Precondition, bindings: Mapping[str, Node], _ahead: ReadAhead | None = None
    ) -> list[dict[str, Node]]:
        found = self._solve(pre._plan, bindings, pre.variables, 2)
        if found is not None and len(found) < 2:  # none or one: the query's answer exactly
            out = []
            for row in found:
                sol = dict(bindings)
                for name in pre.projected:  # as the query projects them
                    value = row.get(name)
                    if value is not None:
                        sol[name] = from_ox(value)
                out.append(sol)
            return out
        # two or more (the query's order is what the trace records), or not compiled
        text = self._texts.get(pre.select_text)
        if text is None:  # substitutions must be projected: name every variable, not ``*``
            projected = " ".join(f"?{v}" for v in sorted(pre.variables)) or "*"
            text = self._texts[pre.select_text] = pre.select_text.replace(
                "SELECT *", f"SELECT {projected}", 1
            )
        result = self._query(text, bindings, pre.variables, dict(pre.prefixes))
        names = [v.value for v in result.variables]
        out = []
        for row in result:
            sol = dict(bindings)
            for i, name in enumerate(names):
                value = row[i]
                if value is not None:
                    sol[name] = from_ox(value)
            out.append(sol)
        return out

    def failing(self, pre: Precondition, bindings: Mapping[str, Node]) -> str:
        """As :meth:`Store.failing`, each compiled pattern looked up without a query."""
        for p in pre.patterns:
            found = self._solve(p._plan, bindings, pre.variables, 1)
            if found is None:  # not compiled, or not decided: ask the queries
                return super().failing(pre, bindings)
            if not found:
                return p.text
        return " ".join(p.text for p in pre.patterns)

    def _solve(
        self,
        plan: Plan[Node] | None,
        bindings: Mapping[str, Node],
        names: frozenset[str],
        limit: int,
    ) -> list[dict[str, Any]] | None:
        """Up to ``limit`` solutions of ``plan`` (pyoxigraph terms) with ``bindings`` of
        ``names`` substituted, from the store's own lookups under its lock (one moment between
        commits, as a query's snapshot); None when there is no plan or it cannot decide (a
        literal or blank node bound: the query's substitution is the reference there)."""
        if plan is None:
            return None
        lowered = plan.lowered(_as_stored)
        bound = {}
        for k, v in bindings.items():
            if k in names:
                if type(v) is not URIRef:
                    return None
                bound[k] = named_node(str(v))
        try:
            with self._lock:
                return lowered.solve(bound, self._match, _number, limit)
        except Unsupported:
            return None

    def _match(self, s: Any, p: Any, o: Any) -> Iterable[ox.Quad]:
        """The stored quads matching ``s p o`` (None: any), in any graph, once per graph that
        holds it: what a pattern matches in the query's union default graph."""
        try:
            return self._store.quads_for_pattern(s, p, o, None)
        except TypeError:  # a literal subject, a non-IRI predicate: nothing, as in a query
            return ()

    def select(
        self,
        query: str,
        bindings: Mapping[str, Node],
        ns: Mapping[str, str],
    ) -> list[dict[str, Node]]:
        """``query`` with its bound variables added to the projection, where Oxigraph wants
        substituted variables; the rows leave them out again, as rdflib's do."""
        head = _PROJECTION.match(query)  # None for SELECT *
        extra: list[str] = []
        if head is not None:
            where = _WHERE.search(query, head.end())
            projected = _variables(query[head.end() : where.start() if where else len(query)])
            extra = sorted(k for k in bindings if k not in projected)
            query = f"{query[: head.end()]}{''.join(f'?{k} ' for k in extra)}{query[head.end() :]}"
        result = self._query(query, bindings, None, ns)
        names = [v.value for v in result.variables]
        return [
            {
                n: from_ox(row[i])
                for i, n in enumerate(names)
                if row[i] is not None and n not in extra
            }
            for row in result
        ]

    def objects(self, subject: Node, predicate: Node) -> Iterator[Node]:
        if predicate == _RDF_TYPE:
            return iter(self._types(subject))
        return iter(self._objects(subject, predicate))

    def types(self, node: Node) -> set[Node]:
        return set(self._types(node))

    def _types(self, node: Node) -> list[Node]:
        """``node``'s types; in memory, as read last until a commit writes one
        (:mod:`.kept_types`): there a lookup walks every quad of the node."""
        if self._on_disk:
            return self._objects(node, _RDF_TYPE)
        with self._lock:
            return self._kept.get(node, lambda: self._objects(node, _RDF_TYPE))

    def _objects(self, subject: Node, predicate: Node) -> list[Node]:
        """Each object once, in the store's order, runtime graphs left out; read when asked
        (a step reads these for every argument and effect: no generator, no conversion of a
        term seen before)."""
        with self._lock:
            found = self._store.quads_for_pattern(to_ox(subject), to_ox(predicate), None, None)
        seen: dict[Any, Node] = {}
        for q in found:
            o = q.object
            if o not in seen and not is_runtime(q.graph_name):
                seen[o] = from_ox(o)
        return list(seen.values())

    def outgoing(
        self, subject: Node, predicates: frozenset[Node] | None = None
    ) -> Iterator[tuple[Node, Node, Node]]:
        s = to_ox(subject)
        typed: list[Node] = []
        with self._lock:
            found: Iterable[ox.Quad]
            if predicates is None:
                found = self._store.quads_for_pattern(s, None, None, None)
            elif len(predicates) <= _LOOKUPS:
                if not self._on_disk and _RDF_TYPE in predicates:  # kept: see _types
                    typed = self._types(subject)
                    predicates = predicates - {_RDF_TYPE}
                found = [
                    q for p in predicates for q in self._store.quads_for_pattern(s, to_ox(p), None)
                ]
            else:  # one pass, only the wanted edges converted (a schema names many properties)
                wanted = {to_ox(p) for p in predicates}
                found = [
                    q
                    for q in self._store.quads_for_pattern(s, None, None, None)
                    if q.predicate in wanted
                ]
        seen: dict[tuple[Any, Any], tuple[Node, Node, Node]] = {
            (_RDF_TYPE, t): (subject, _RDF_TYPE, t) for t in typed
        }
        for q in found:
            key = (q.predicate, q.object)
            if key not in seen and not is_runtime(q.graph_name):
                seen[key] = (subject, from_ox(key[0]), from_ox(key[1]))
        return iter(seen.values())

    def _snapshot(self) -> Iterator[ox.Quad]:
        """Every stored quad, as of one moment between commits."""
        with self._lock:
            return iter(self._store)

    def quads(self) -> Iterator[Quad]:
        return _world_quads(self._snapshot())

    def match(
        self, s: Node | None, p: Node | None, o: Node | None, g: Node | None
    ) -> Iterator[Quad]:
        try:
            subject, predicate, value = (None if t is None else to_ox(t) for t in (s, p, o))
            graph = (
                None
                if g is None
                else ox.DefaultGraph()
                if g == DATASET_DEFAULT_GRAPH_ID
                else to_ox(g)
            )
            with self._lock:
                found = self._store.quads_for_pattern(subject, predicate, value, graph)
        except (UsageError, TypeError, ValueError):  # no term a store holds: nothing matches
            return
        yield from _world_quads(found)

    def lines(self) -> Iterator[str]:
        # written from Oxigraph's terms: building rdflib terms first made the digest of a
        # large world cost seconds
        for q in self._snapshot():
            if not is_runtime(q.graph_name):
                yield ox_line(q)

    def digest(self) -> Digest:
        with self._lock:
            return self._kept_digest()

    def _kept_digest(self) -> Digest:
        """The tally's digest; one not known (a store on disk opened without one) recomputed
        first, under the lock (the store as it is now, every commit since open in it), and
        written into the store at once, so the next process opens it known."""
        if not self._known:
            self._tally.reset(self.recompute_digest())
            self._known = True
            # an economy for the next open: a disk refusing it leaves none stored (or, the
            # write landed and not the flush, a true one the next commit removes)
            with contextlib.suppress(OSError):
                self._persist()
        return self._tally.value()

    def check_digest(self) -> tuple[Digest, Digest]:
        """As :meth:`Store.check_digest`; one not known is recomputed once, and is both."""
        with self._lock:
            if not self._known:
                found = self._kept_digest()
                return found, found
            return self._tally.value(), self.recompute_digest()

    def rebase_digest(self, *, only_if_equal: bool = False) -> tuple[Digest, Digest]:
        with self._lock:
            if not self._known:  # recomputed to be known: that is the rebased one
                found = self._kept_digest()
                return found, found
            kept, recomputed = self._tally.value(), self.recompute_digest()
            if not only_if_equal or kept == recomputed:
                self._tally.reset(recomputed)
                if self._on_disk:
                    self._persist()
            return kept, recomputed

    def close_at_exit(self) -> None:
        """:meth:`close`, for a process that never called it: what it raises said in one line
        on stderr, where the interpreter printed a traceback for an exit hook's error. The
        command has ended by then, so a Ctrl-C (a second one, pressed as it ended) has
        nothing left to stop but this close, and is held off until it is done: it printed a
        traceback from inside the journal's snapshot, left half written for the next open."""
        held = threading.current_thread() is threading.main_thread() and (
            signal.getsignal(signal.SIGINT) is signal.default_int_handler
        )
        if held:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            self.close()
        except StoreError as e:
            print(f"horismos: error: {e}", file=sys.stderr)
        finally:
            if held:
                signal.signal(signal.SIGINT, signal.default_int_handler)

    def _persist(self) -> None:
        """Write the kept digest into the store (replacing any), then flush; one not known
        is not written (none stays stored, so the next open knows it is not) nor recomputed
        (a close stays quick): the store is only flushed. Marked stored before the write, so
        that should the flush fail after the write landed, the next commit removes it."""
        if self._known:
            self._persisted = True
            self._store.update(
                f"DELETE WHERE {{ GRAPH {_DIGEST_GRAPH} {{ {_DIGEST_NODE} {_LTHASH} ?v }} }};\n"
                f"INSERT DATA {{ GRAPH {_DIGEST_GRAPH} {{ {_DIGEST_NODE} {_LTHASH} "
                f'"{self._tally.value().to_text()}" }} }}'
            )
        self._store.flush()
        self._commits = 0

    def _unpersist(self) -> None:
        """Remove the stored digest before a write lands, so it is never stale."""
        if self._persisted:
            self._store.update(
                f"DELETE WHERE {{ GRAPH {_DIGEST_GRAPH} {{ {_DIGEST_NODE} {_LTHASH} ?v }} }}"
            )
            self._persisted = False

    def dataset(self) -> Dataset:
        """A copy as an rdflib :class:`Dataset` (about 1 KB and 20 µs a quad to build); writes
        to it do not reach the store."""
        ds = Dataset(default_union=True)
        for s, p, o, g in self.quads():
            ds.graph(g if g is not None else DATASET_DEFAULT_GRAPH_ID).add((s, p, o))
        return ds

    def __len__(self) -> int:
        return len(self._store)

    # -- writes ---------------------------------------------------------------------------

    def which(self, quads: Sequence[Quad]) -> list[Quad]:
        with self._lock:
            store = self._store
            return [
                q for q, e in zip(quads, encode_quads(list(quads)), strict=True) if e[1] in store
            ]

    def apply(self, change: Change) -> Digest:
        """One transaction; on disk the persisted digest is replaced in the same update.

        Each quad is converted once (:func:`encode_quads`): its pyoxigraph quad checks the store
        and is written, its N-Quads line moves the digest. A step's commit used to convert
        each term through rdflib for each of those uses (~40 µs of ~17 quads)."""
        expect, absent, add = change.expect, change.absent, change.add
        with self._lock:
            store = self._store
            # one conversion for the whole change: what it guards, adds and removes
            encoded = encode_quads([*expect, *absent, *add, *change.remove])
            for q, e in zip(expect, encoded, strict=False):
                if e[1] not in store:
                    raise Conflict(
                        f"expected {_show(q)} is no longer stored: another writer changed it first",
                        expected=expect,
                    )
            first = len(expect)
            for q, e in zip(absent, encoded[first:], strict=False):
                if e[1] in store:
                    raise Conflict(
                        f"{_show(q)} is stored: another writer wrote it first", present=(q,)
                    )
            first += len(absent)
            # each quad once, by its line (a string keeps its hash, which the tally's count
            # of the same line uses again; pyoxigraph hashes a quad anew each time)
            adding = {e[2] or e[1]: e for e in encoded[first : first + len(add)]}
            removed = [
                e
                for k, e in {e[2] or e[1]: e for e in encoded[first + len(add) :]}.items()
                if k not in adding and e[1] in store
            ]
            # a quad of a graph just named and not stored is not stored: not asked about
            fresh = {
                id(g) for g in change.fresh if not store.contains_named_graph(named_node(str(g)))
            }
            added = [e for e in adding.values() if id(e[0][3]) in fresh or e[1] not in store]
            if not added and not removed:
                return ZERO
            if touches_schema(change.add) or touches_schema(change.remove):
                self._schema_mark += 1
            plus = [e[2] for e in added if e[2] is not None]
            minus = [e[2] for e in removed if e[2] is not None]
            if not self._on_disk:
                self._kept.forget(e[0] for e in (*added, *removed))
            # a copy under way is held here, not by the store, until it has followed this
            # commit: should anything cut the commit short (an exception, a Ctrl-C), the copy
            # is dropped, never put in the store's place missing what landed
            behind, self._behind = self._behind, None
            try:
                if self._on_disk:
                    self._unpersist()
                self._land(removed, added)
            except OSError as e:  # RocksDB's (no errno): a full disk, a file size limit
                if not self._on_disk:
                    raise
                raise self._refused("a commit", e, "nothing of it landed") from None
            if self._known:  # else the recompute, when asked, reads what landed
                self._tally.move(plus, minus)
            if not self._on_disk:
                if self._live is not None:
                    self._live += len(added) - len(removed)
                if removed:
                    self._churn.count([e[0] for e in removed])
                if behind is not None:
                    landed = ([e[1] for e in removed], [e[1] for e in added])
                    self._follow_copy(behind, landed)
                elif removed:
                    self._begin_copy()
            if self._on_disk:
                self._commits += 1
                if self._commits >= _PERSIST_EVERY:
                    self._persist()
            return Digest.of_change_later(plus, minus)  # hashed only if someone reads it

    def _refused(self, what: str, e: OSError, then: str) -> StoreError:
        """RocksDB's refusal of a write, ``e``, said with the store's path and what to do:
        its own text names a file inside the store (``st/000010.log: File too large``), and
        reached the command line as "an output could not be written", no store named."""
        disk = written(e)
        hint = disk[1] if disk else "check that the store's disk answers"
        why = f"{disk[0]} ({e})" if disk else str(e)
        return StoreError(
            f"the store at {self.path} could not write {what}: {why}; {then} — {hint}"
        )

    def _land(self, removed: list[Encoded], added: list[Encoded]) -> None:
        """Write a commit's quads, its guards judged: the step a journal writes ahead of."""
        if removed and self._on_disk:
            write_commit(self._store, removed, added)
        elif removed:
            self._swap([e[1] for e in removed], [e[1] for e in added])
        else:
            self._store.extend([e[1] for e in added])

    def _swap(self, remove: list[ox.Quad], add: list[ox.Quad]) -> None:
        """Remove, then add, in memory, under the store's lock, which every read of this
        store also takes to start (its snapshot): no reader sees one without the other. A
        SPARQL update did the same in ~10x the time (its text written, parsed, evaluated).
        Should the add fail, the removed quads are put back: all of the change, or none."""
        for q in remove:
            self._store.remove(q)
        try:
            self._store.extend(add)
        except BaseException:
            self._store.extend(remove)
            raise

    def _held(self) -> int:
        """How many quads the in-memory store holds: kept by each commit from an empty store
        or a file loaded whole; counted (a pass over it) only where that is not known. An
        update (rare in memory: a one-time index filing) is not counted, so the figure may
        drift by what updates wrote: it only decides when a copy pays, never what is held."""
        if self._live is None:
            self._live = len(self._store)
        return self._live

    def _begin_copy(self) -> None:
        """After an in-memory commit that removed quads: a copy afresh begun when it pays
        (:mod:`.churn`), taken behind the commits that follow (:mod:`.copy_behind`)."""
        if self._churn.due(self._held):
            self._churn.reset()
            self._behind = CopyBehind(self._store)

    def _follow_copy(self, behind: CopyBehind, landed: Landed) -> None:
        """The copy under way taken a slice further, after the commit that ``landed``, and
        put in the store's place once it holds what the store holds. Under the lock, as a
        commit: a read started before keeps the old store, its snapshot, until it is done."""
        try:
            done = behind.follow(landed)
        except MemoryError:  # an economy only: the commit that asked for it has landed
            return
        if done:
            self._store = behind.fresh
        elif not behind.lost:  # else dropped: begun again when due
            self._behind = behind

    def update(self, text: str, *, runtime_only: bool = False) -> None:
        """One of ``INSERT DATA`` and ``DELETE DATA`` alone lands as a commit of the quads
        it names (:func:`data_change`): the digest moved by those, no pass over the store.
        Any other, Oxigraph runs (:meth:`_run_update`)."""
        refuse_triple_terms(text)
        change = None if runtime_only else data_change(text)
        if change is not None:
            self.apply(change)
        else:
            self._run_update(text, runtime_only=runtime_only)

    def _run_update(self, text: str, *, runtime_only: bool) -> None:
        """Oxigraph runs it and says nothing of what it wrote, so one that ran has the digest
        recomputed (one pass over the store), unless ``runtime_only``; one refused moves
        neither the digest nor the schema mark. On disk the stored digest is taken out first
        and written again after: absent or true, should the process die in between."""
        with self._lock:
            self._kept.clear()
            behind, self._behind = self._behind, None  # as in apply: dropped if cut short
            replayed = text
            if behind is not None:  # replayed onto the copy: NOW() written in ...
                try:
                    replayed = pinned(text)
                except UsageError:  # ... it would write otherwise there (a random value,
                    behind = None  # rows taken in their order: another order there): dropped
            if behind is not None:  # replayed there on the graphs it names here, empty ones too
                behind.hold_graphs(self._store.named_graphs())
            if self._on_disk and not runtime_only:
                self._unpersist()
            try:  # the quads held, kept: a few more or fewer
                self._store.update(replayed)
            except (SyntaxError, RuntimeError, OSError) as e:  # as every store says it
                raise StoreError(f"the update was refused, and wrote nothing: {e}") from None
            self._schema_mark += 1  # whatever it wrote
            if not runtime_only and self._known:  # one not known stays so: read when asked
                self._tally.reset(self.recompute_digest())
                if self._on_disk:
                    self._persist()
            if not self._on_disk:
                self._churn.updated()
                if behind is not None:
                    self._follow_copy(behind, replayed)
                else:
                    self._begin_copy()

    def schema_mark(self) -> int:
        """Moved by every change that writes or removes a schema triple, every update that
        ran (not one refused) and every file loaded: only this process writes this store (on
        disk, RocksDB's lock), and :meth:`dataset` is a copy."""
        return self._schema_mark

    def load(self, quads: Iterable[Quad]) -> None:
        """Added in changes of a few thousand quads, blank nodes skolemised."""
        quads = skolemise(list(quads))
        for i in range(0, len(quads), _CHUNK):
            self.apply(Change(add=quads[i : i + _CHUNK]))

    def load_file(self, path: Path, progress: Progress | None = None) -> int:
        """Returns how many quads were new. Into an empty store: Oxigraph's loader (the bulk
        loader on disk), then the digest in one pass over the store. Into a store that holds
        a world: a few thousand quads at a time, each checked against the store, so the
        digest counts only what was new. In memory, a syntax error part-way leaves what was
        read before it (on disk too); the digest always matches what landed."""
        with self._lock:
            self._schema_mark += 1
            self._live = None
            self._kept.clear()
            self._behind = None  # written straight into the store: no copy can follow it
            if self._on_disk:  # none rather than wrong if this process dies part-way
                self._unpersist()
            empty = not self._holds_world()
            try:
                if not empty:  # counted as they land: len() of a store on disk reads it all
                    return self._load_checked(path, progress)
                before = len(self._store)  # its bookkeeping graphs alone
                try:
                    self._load_whole(path, progress)
                finally:
                    self._tally.reset(self.recompute_digest())
                    self._known = True
                self._live = len(self._store)
                return self._live - before
            finally:
                if self._on_disk:
                    self._persist()

    def _holds_world(self) -> bool:
        """Whether the store holds a quad outside the runtime graphs: a known digest other
        than the empty set's says so at once; else one lookup per graph, never a pass over
        the world (a digest not known is not computed for it), the default graph first and
        the named graphs listed only as far as the first that holds one (a store that has run
        names a graph for each wait and answer)."""
        if self._known and self._tally.value():
            return True
        store = self._store
        named = (g for g in store.named_graphs() if not is_runtime(g))
        return any(
            next(iter(store.quads_for_pattern(None, None, None, g)), None) is not None
            for g in chain([ox.DefaultGraph()], named)
        )

    def _load_whole(self, path: Path, progress: Progress | None) -> None:
        fmt = file_format(path)
        if may_hold_blank_nodes(path, fmt):  # parsed here, so they are skolemised
            quads = parse_file(path, progress)
            (self._store.bulk_extend if self._on_disk else self._store.extend)(quads)
            return
        reader = ProgressReader(path, progress)  # Oxigraph's own loader: 10% faster, less memory
        try:
            (self._store.bulk_load if self._on_disk else self._store.load)(
                cast("IO[bytes]", reader), fmt, base_iri=path.resolve().as_uri()
            )
        except MemoryError:
            raise oversized(path, reader.done) from None
        finally:
            reader.close()

    def _load_checked(self, path: Path, progress: Progress | None) -> int:
        """The file's quads a chunk at a time, each written unless stored already; how many
        were new. Each chunk is one transaction (``extend``), not the bulk loader: that
        writes each chunk as files of their own, and a few hundred of them made every later
        chunk's lookups and the compaction behind them slower (1.2 M quads into a store
        holding a world, alternated on a busy 2-core machine: 39-101 s, now 35-56 s)."""
        quads = parse_file(path, progress)
        added = 0
        while chunk := list(islice(quads, _CHUNK)):
            new = [q for q in normalised(chunk) if q not in self._store]
            if new:
                self._store.extend(new)
                if self._known:  # else the recompute, when asked, reads them
                    self._tally.move([ox_line(q) for q in new], ())
                added += len(new)
        return added

    def backup(self, dest: Path) -> Digest:
        """RocksDB's checkpoint of the store, taken under its lock after the digest is written
        and the memtable flushed: every commit this process made is in it, none half. The
        folder copied by hand, or by `oxigraph backup` beside a live or killed process, may
        miss the last commits, still only in RocksDB's log: an intent among them, restored,
        let a tool that is not idempotent be called again. The digest given is read in the
        same hold of the lock, before the checkpoint (one not known is recomputed and stored
        first, so the copy holds it too): no commit lands between the two."""
        if not self._on_disk:
            return super().backup(dest)  # refused: in memory, there is no folder to copy
        with self._lock:
            digest = self._kept_digest()
            if self._known and not self._persisted:
                self._persist()
            else:
                self._store.flush()
            into_fresh_folder(dest, self.name, lambda temp: self._store.backup(str(temp)))
            return digest

    def __getattr__(self, name: str) -> Any:
        """Asked only for what an instance does not hold: ``_store`` once :meth:`close` let it
        go. A run or a call still going on it (``world.close()`` while ``arun`` tasks were in
        flight, a service shutting down) failed with a bare ``AttributeError: 'OxigraphStore'
        object has no attribute '_store'``; it is told the store was closed under it (a
        :class:`StoreError`: for the run, the store went away, as one out of reach does)."""
        if name == "_store":  # a store gone away, as one out of reach is: not a usage error
            raise StoreError(
                f"the store {self.name} was closed while this was still using it "
                "(world.close() with a run or a call on it not ended): close a world once "
                "what runs on it has ended — await its tasks, or cancel them, first"
            )
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def close(self) -> None:
        """Writes an on-disk store's digest, flushes it and releases its lock; closing twice
        does nothing. A digest or a flush the disk refuses is a :class:`StoreError` saying so:
        RocksDB's bare "IO error: While appending to file: …/000045.log: File too large" was
        all a user read, after a run whose every commit had landed; and a flush's OSError,
        raised past ``World.__exit__``, replaced the error of the block it closed."""
        if self._on_disk:
            atexit.unregister(self.close_at_exit)
        try:
            if self._on_disk and "_store" in self.__dict__:
                with self._lock:
                    writes = self._known and not self._persisted  # else only flushed
                    try:
                        if writes:
                            self._persist()  # flushes
                        else:
                            self._store.flush()
                    except OSError as e:
                        disk = written(e)  # what a full disk and a size limit need differs
                        hint = disk[1] if disk else "check that the store's disk answers"
                        then = (
                            "what was committed stays, and the next command that asks for "
                            "its digest recomputes it once"
                            if writes
                            else "what was committed stays"
                        )
                        what = "write its digest" if writes else "flush"
                        raise StoreError(
                            f"the store at {self.path} could not {what} on closing ({e}); "
                            f"{then}: {hint}"
                        ) from None
        finally:  # released even when refused: it stayed open, locked, for the process
            self.__dict__.pop("_store", None)


_RDF_TYPE = URIRef("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")


def _as_stored(term: Node) -> Any:
    """A pattern's constant as the store holds it (a literal's canonical form, read back from
    a scratch store): a compiled plan then compares stored terms to it as the store would."""
    converted = to_ox(term)
    if type(converted) is not ox.Literal:
        return converted
    scratch = ox.Store()
    scratch.add(ox.Quad(TERM_FN, TERM_FN, converted))
    return next(iter(scratch)).object


def _number(term: Any) -> Any:
    """A stored literal's integer or decimal value, for a compiled FILTER (None: not one)."""
    return number(term.datatype.value, term.value) if type(term) is ox.Literal else None


@lru_cache(maxsize=4096)
def _variables(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"[?$]([A-Za-z_]\w*)", text))


def _show(q: Quad) -> str:
    s, p, o, g = q
    return f"{s.n3()} {p.n3()} {o.n3()}" + (f" in {g.n3()}" if g is not None else "")


def _world_quads(found: Iterable[ox.Quad]) -> Iterator[Quad]:
    """``found`` as rdflib quads, the runtime's bookkeeping left out."""
    for q in found:
        if not is_runtime(q.graph_name):
            yield (
                from_ox(q.subject),
                from_ox(q.predicate),
                from_ox(q.object),
                graph_name(q.graph_name),
            )
