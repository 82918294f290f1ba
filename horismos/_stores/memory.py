"""The embedded in-memory store: an rdflib :class:`Dataset` whose default graph is the union.

Literals are stored in the canonical form Oxigraph gives them (``"1.50"^^xsd:decimal`` is
``"1.5"``, ``xsd:int`` is ``xsd:integer``, language tags are lower case), so a world holds the
same terms, digests the same and type-checks the same on every backend.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from rdflib import Dataset, Graph, URIRef, Variable
from rdflib.graph import DATASET_DEFAULT_GRAPH_ID
from rdflib.plugins.sparql import prepareQuery
from rdflib.term import Node

from .._preconditions import Precondition
from .base import RUNTIME, Change, Conflict, Progress, Quad, Store
from .oxigraph import OxigraphStore, canonical

__all__ = ["MemoryStore"]


class MemoryStore(Store):
    name = "memory"

    def __init__(self) -> None:
        self._ds = Dataset(default_union=True)
        self._lock = threading.Lock()
        self._graphs: dict[URIRef | None, Graph] = {}

    def _graph(self, name: URIRef | None) -> Graph:
        g = self._graphs.get(name)
        if g is None:
            g = self._ds.graph(name if name is not None else DATASET_DEFAULT_GRAPH_ID)
            self._graphs[name] = g
        return g

    def solutions(self, pre: Precondition, bindings: Mapping[str, Node]) -> list[dict[str, Node]]:
        return pre.solutions(self._ds, bindings)

    def select(self, query: str, bindings: Mapping[str, Node], ns: Mapping[str, str],
               ) -> list[dict[str, Node]]:
        q = prepareQuery(query, initNs=dict(ns))
        rows = self._ds.query(q, initBindings={Variable(k): v for k, v in bindings.items()})
        return [{str(k): v for k, v in r.asdict().items()} for r in rows]

    def objects(self, subject: Node, predicate: Node) -> Iterator[Node]:
        return self._ds.objects(subject, predicate)

    def outgoing(self, subject: Node) -> Iterator[tuple[Node, Node, Node]]:
        return self._ds.triples((subject, None, None))

    def apply(self, change: Change) -> None:
        change = Change(canonical(change.add), canonical(change.remove),
                        tuple(canonical(change.expect)))
        with self._lock:
            for q in change.expect:
                if q[:3] not in self._graph(q[3]):
                    raise Conflict(f"expected {q[0].n3()} {q[1].n3()} {q[2].n3()} is no longer "
                                   "stored: another writer changed it first",
                                   expected=change.expect)
            for s, p, o, g in change.remove:
                self._graph(g).remove((s, p, o))
            for s, p, o, g in change.add:
                self._graph(g).add((s, p, o))

    def update(self, text: str) -> None:
        with self._lock:
            self._ds.update(text)

    def load(self, quads: Iterable[Quad]) -> None:
        self.apply(Change(add=list(quads)))

    def load_file(self, path: Path, progress: Progress | None = None) -> int:
        """Read by pyoxigraph (30x rdflib's Turtle parser) into a scratch Oxigraph store, whose
        literals come out canonical, then added in one change."""
        scratch = OxigraphStore()
        n = scratch.load_file(path, progress)
        with self._lock:
            for s, p, o, g in scratch.quads():
                self._graph(g).add((s, p, o))
        scratch.close()
        return n

    def quads(self) -> Iterator[Quad]:
        for s, p, o, g in self._ds.quads((None, None, None, None)):
            name = g.identifier if isinstance(g, Graph) else g
            if name is not None and str(name).startswith(RUNTIME):
                continue
            yield s, p, o, (None if name == DATASET_DEFAULT_GRAPH_ID else name)

    def dataset(self) -> Dataset:
        return self._ds
