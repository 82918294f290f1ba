"""``world.graph``: an rdflib view of the world, read from its store as it is asked.

Why: it was a copy of every quad, built on each access of ``world.graph`` (5.4 s at 150,000
triples on Oxigraph, and the memory of an rdflib graph besides the store's), so one look-up
(``(s, p, o) in world.graph``) cost the whole world; and a write to the copy was lost
without a word, or, on the ``memory`` store, landed past the digest and the trace. A view
asks the store for what a pattern names (:meth:`~._stores.base.Store.match`), sees every
commit as it lands, and refuses writes: facts land through the world (``World.load``,
``World.load_data``, a step, a tool call), checked, digested and traced.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import Any, cast

from rdflib import Dataset, Graph, URIRef
from rdflib.graph import DATASET_DEFAULT_GRAPH_ID
from rdflib.store import Store as RdflibStore
from rdflib.term import Node

from ._errors import UsageError
from ._stores import Store

__all__ = ["view_of"]

_READ_ONLY = (
    "world.graph is a read-only view of the world's store: facts land through the world — "
    "world.load(FILE), world.load_data(TEXT_OR_GRAPH), a workflow's step or a tool call — so "
    "that they are checked, digested and traced"
)


def view_of(store: Store) -> Dataset:
    """``store`` as an rdflib :class:`Dataset` whose default graph is the union of its
    graphs; a store that cannot match a pattern (``sparql:``) gives its copy, as before."""
    try:
        store.match(None, None, None, None)  # a generator where it can: nothing read yet
    except NotImplementedError:
        return store.dataset()
    return Dataset(store=_View(store), default_union=True)


class _View(RdflibStore):
    """An rdflib store answering from a Horismos store; prefixes are its own."""

    context_aware = True
    graph_aware = True
    formula_aware = False
    transaction_aware = False

    def __init__(self, source: Store) -> None:
        super().__init__()
        self._source = source
        self._by_prefix: dict[str, URIRef] = {}
        self._by_namespace: dict[URIRef, str] = {}

    # -- reads ---------------------------------------------------------------------------

    def triples(
        self, triple_pattern: tuple[Any, Any, Any], context: Graph | None = None
    ) -> Iterator[tuple[tuple[Node, Node, Node], Iterator[Graph]]]:
        s, p, o = triple_pattern
        graph = None if context is None else context.identifier
        for qs, qp, qo, qg in self._source.match(s, p, o, graph):
            yield (qs, qp, qo), iter((self._graph(qg),))

    def __len__(self, context: Graph | None = None) -> int:
        graph = None if context is None else context.identifier
        return sum(1 for _ in self._source.match(None, None, None, graph))

    def contexts(self, triple: Any = None) -> Generator[Graph, None, None]:
        s, p, o = triple if triple is not None else (None, None, None)
        seen: set[Node | None] = set()
        for *_, g in self._source.match(s, p, o, None):
            if g not in seen:
                seen.add(g)
                yield self._graph(g)

    def _graph(self, name: Node | None) -> Graph:
        return Graph(
            store=self, identifier=DATASET_DEFAULT_GRAPH_ID if name is None else cast(URIRef, name)
        )

    # -- writes: refused, but for naming a graph, which rdflib does to read one ------------

    def add_graph(self, graph: Graph) -> None:
        """``world.graph.graph(name)`` names a graph to read it: nothing to store."""

    def add(self, *args: Any, **kwargs: Any) -> None:
        raise UsageError(_READ_ONLY)

    def addN(self, *args: Any, **kwargs: Any) -> None:
        raise UsageError(_READ_ONLY)

    def remove(self, *args: Any, **kwargs: Any) -> None:
        raise UsageError(_READ_ONLY)

    def remove_graph(self, graph: Graph) -> None:
        raise UsageError(_READ_ONLY)

    def update(self, *args: Any, **kwargs: Any) -> None:
        raise UsageError(_READ_ONLY)

    # -- prefixes, as rdflib's memory store keeps them ------------------------------------

    def bind(self, prefix: str, namespace: URIRef, override: bool = True) -> None:
        bound = self._by_prefix.get(prefix)
        named = self._by_namespace.get(namespace)
        if not override and (bound is not None or named is not None):
            return
        if bound is not None:
            self._by_namespace.pop(bound, None)
        if named is not None:
            self._by_prefix.pop(named, None)
        self._by_prefix[prefix] = namespace
        self._by_namespace[namespace] = prefix

    def namespace(self, prefix: str) -> URIRef | None:
        return self._by_prefix.get(prefix)

    def prefix(self, namespace: URIRef) -> str | None:
        return self._by_namespace.get(namespace)

    def namespaces(self) -> Iterator[tuple[str, URIRef]]:
        yield from self._by_prefix.items()
