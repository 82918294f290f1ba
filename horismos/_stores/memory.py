"""The embedded in-memory store: an rdflib :class:`Dataset` whose default graph is the union.

Literals are stored in the canonical form Oxigraph gives them (``"1.50"^^xsd:decimal`` is
``"1.5"``, ``xsd:int`` is ``xsd:integer``, language tags are lower case), so a world holds the
same terms, digests the same and type-checks the same on every backend. The digest is kept
in the object, moved by each write's exact delta.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from rdflib import Dataset, Graph, URIRef, Variable
from rdflib.graph import DATASET_DEFAULT_GRAPH_ID
from rdflib.query import ResultRow
from rdflib.term import Node

from .._bound_plan import bound_first
from .._digest import ZERO, Digest
from .._preconditions import Precondition
from .._sparql_parse import thread_query
from .aggregates import as_oxigraph_aggregates, asks_aggregates
from .base import RUNTIME, Change, Conflict, Progress, Quad, ReadAhead, Store, delta_of
from .memory_update import parse_update, run_update
from .ox_terms import canonical
from .oxigraph import OxigraphStore
from .skolem import skolemise
from .stored_patterns import in_stored_form, read_otherwise

if TYPE_CHECKING:
    from rdflib.plugins.sparql.sparql import Query

__all__ = ["MemoryStore"]


def _as_oxigraph(query: Any) -> None:
    """``query`` matching literals as the store keeps them (``SELECT * { ?s ?p 1.50 }`` found
    nothing where it holds ``1.5``: :func:`.stored_patterns.in_stored_form`) and answering
    ``MIN``, ``MAX``, ``SUM`` and ``AVG`` as Oxigraph does (:mod:`.aggregates`), once a
    prepared query (:func:`.._sparql_parse.thread_query`)."""
    in_stored_form([query.algebra])
    as_oxigraph_aggregates([query.algebra])


_read_as_written: weakref.WeakKeyDictionary[Query, bool] = weakref.WeakKeyDictionary()
"""Whether a precondition is read in :func:`_as_oxigraph`'s form, by its prepared query:
hashed by identity (a precondition's own hash reads every prefix it was given)."""


def _read_otherwise(pre: Precondition) -> bool:
    """Whether ``pre`` is evaluated in its stored-literal form (:func:`_as_oxigraph`): a
    precondition ``{ ?rx :dose 1.50 }`` found nothing where the store holds ``1.5``, which
    Oxigraph found. One that has no such literal and none of those aggregates (most) is
    evaluated as prepared: no second parse."""
    found = _read_as_written.get(pre.select)
    if found is None:
        parts = [pre.select.algebra]
        found = _read_as_written[pre.select] = read_otherwise(parts) or asks_aggregates(parts)
    return found


class MemoryStore(Store):
    """The world in memory, for a run over ``--world`` files and for tests: nothing outlives the
    process, and nothing is shared with another."""

    name = "memory"

    def __init__(self) -> None:
        self._ds = Dataset(default_union=True)
        self._lock = threading.Lock()
        self._graphs: dict[URIRef | None, Graph] = {}
        self._digest = ZERO

    def _graph(self, name: URIRef | None) -> Graph:
        g = self._graphs.get(name)
        if g is None:
            g = self._ds.graph(name if name is not None else DATASET_DEFAULT_GRAPH_ID)
            self._graphs[name] = g
        return g

    def solutions(
        self, pre: Precondition, bindings: Mapping[str, Node], _ahead: ReadAhead | None = None
    ) -> list[dict[str, Node]]:
        return pre.solutions(self._ds, bindings, _as_oxigraph if _read_otherwise(pre) else None)

    def select(
        self,
        query: str,
        bindings: Mapping[str, Node],
        ns: Mapping[str, str],
    ) -> list[dict[str, Node]]:
        # parsed once per thread (rdflib's parser takes 10-70 ms a query; see thread_query)
        prepared = thread_query(query, tuple(sorted(ns.items())), _as_oxigraph)
        q = bound_first(prepared, frozenset(bindings))
        init: dict[str, Any] = {Variable(k): v for k, v in bindings.items()}
        rows = self._ds.query(q, initBindings=init)
        return [{str(k): v for k, v in cast(ResultRow, r).asdict().items()} for r in rows]

    def objects(self, subject: Node, predicate: Node) -> Iterator[Node]:
        return self._ds.objects(subject, predicate)

    def outgoing(
        self, subject: Node, predicates: frozenset[Node] | None = None
    ) -> Iterator[tuple[Node, Node, Node]]:
        if predicates is None:
            return self._ds.triples((subject, None, None))
        return (t for p in predicates for t in self._ds.triples((subject, p, None)))

    def _stored(self, q: Quad) -> bool:
        return q[:3] in self._graph(q[3])

    def which(self, quads: Sequence[Quad]) -> list[Quad]:
        with self._lock:
            return [q for q, c in zip(quads, canonical(quads), strict=True) if self._stored(c)]

    def apply(self, change: Change) -> Digest:
        change = Change(
            canonical(change.add),
            canonical(change.remove),
            tuple(canonical(change.expect)),
            tuple(canonical(change.absent)),
        )
        with self._lock:
            for q in change.expect:
                if not self._stored(q):
                    raise Conflict(
                        f"expected {q[0].n3()} {q[1].n3()} {q[2].n3()} is no longer "
                        "stored: another writer changed it first",
                        expected=change.expect,
                    )
            for q in change.absent:
                if self._stored(q):
                    raise Conflict(
                        f"{q[0].n3()} {q[1].n3()} {q[2].n3()} is stored: another writer "
                        "wrote it first",
                        present=(q,),
                    )
            add = dict.fromkeys(change.add)
            removed = [q for q in dict.fromkeys(change.remove) if q not in add and self._stored(q)]
            added = [q for q in add if not self._stored(q)]
            for s, p, o, g in removed:
                self._graph(g).remove((s, p, o))
            for s, p, o, g in added:
                self._graph(g).add((s, p, o))
            delta = delta_of(added, removed)
            self._digest += delta
            return delta

    def update(self, text: str, *, runtime_only: bool = False) -> None:
        """As on Oxigraph, and all or nothing (:mod:`.memory_update`); the digest moved by
        exactly what it wrote, read from its log (``runtime_only`` changes nothing here: the
        runtime graphs' quads count for nothing anyway)."""
        prepared = parse_update(text)  # before the store's lock: the parse takes its own
        with self._lock:
            added, removed = run_update(self._ds, prepared)
            self._digest += delta_of(added, removed)

    def load(self, quads: Iterable[Quad]) -> None:
        self.apply(Change(add=skolemise(list(quads))))

    def load_file(self, path: Path, progress: Progress | None = None) -> int:
        """Read by pyoxigraph (30x rdflib's Turtle parser) into a scratch Oxigraph store, whose
        literals come out canonical and blank nodes skolemised, then added in one change;
        returns how many quads were new."""
        scratch = OxigraphStore()
        scratch.load_file(path, progress)
        quads = list(scratch.quads())
        scratch.close()
        with self._lock:
            added = [q for q in quads if not self._stored(q)]
            for s, p, o, g in added:
                self._graph(g).add((s, p, o))
            self._digest += delta_of(added, ())
        return len(added)

    def digest(self) -> Digest:
        return self._digest

    def rebase_digest(self, *, only_if_equal: bool = False) -> tuple[Digest, Digest]:
        with self._lock:
            kept, recomputed = self._digest, self.recompute_digest()
            if not only_if_equal or kept == recomputed:
                self._digest = recomputed
            return kept, recomputed

    def quads(self) -> Iterator[Quad]:
        return self.match(None, None, None, None)

    def match(
        self, s: Node | None, p: Node | None, o: Node | None, g: Node | None
    ) -> Iterator[Quad]:
        for qs, qp, qo, qg in self._ds.quads((s, p, o, g)):  # type: ignore[arg-type]
            name = qg.identifier if isinstance(qg, Graph) else qg
            if name is not None and str(name).startswith(RUNTIME):
                continue
            graph = None if name == DATASET_DEFAULT_GRAPH_ID else cast(URIRef, name)
            yield qs, qp, qo, graph

    def dataset(self) -> Dataset:
        return self._ds
