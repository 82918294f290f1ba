"""The world: the facts workflows read and the effects they commit, in one store.

Every write goes through :meth:`World.commit`, one atomic :class:`Change` per step.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from rdflib import Dataset, Graph, URIRef
from rdflib.compare import to_canonical_graph

from ._errors import AuthoringError, Problem
from ._sources import RDF_SUFFIXES, expand_paths
from ._stores import DEFAULT_STORE, Change, Store, open_store
from ._stores.base import nquad_line
from ._stores.oxigraph import parse_nquads

__all__ = ["INSTANCES", "World", "digest_of"]

INSTANCES = URIRef("urn:horismos:instances")
"""The named graph that holds workflow instance state."""


class World:
    """The facts a workflow runs against; ``World.open("memory")`` or ``World.from_files(...)``."""

    def __init__(self, store: Store | None = None) -> None:
        self.store = store if store is not None else open_store(DEFAULT_STORE)

    @classmethod
    def open(cls, store: str = DEFAULT_STORE) -> World:
        """The world kept in ``store``: memory, oxigraph, oxigraph:PATH or sparql:URL."""
        return cls(open_store(store))

    @classmethod
    def from_files(cls, *paths: str | Path, store: str = DEFAULT_STORE) -> World:
        world = cls.open(store)
        world.load(*paths)
        return world

    @classmethod
    def from_snapshot(cls, nquads: str, store: str = DEFAULT_STORE) -> World:
        world = cls.open(store)
        world.store.load(parse_nquads(nquads))
        return world

    def load(self, *paths: str | Path) -> None:
        """Add the facts of RDF files (Turtle, N-Triples, TriG, N-Quads) or folders of them."""
        for path in expand_paths(paths, RDF_SUFFIXES):
            try:
                self.store.load_file(path)  # pyoxigraph's parser, into every kind of store
            except SyntaxError as e:
                raise AuthoringError([Problem(
                    "error", f"cannot read world data: {e.msg}", file=str(path),
                    line=e.lineno, hint="fix the syntax at that line")]) from None

    @property
    def graph(self) -> Dataset:
        """An rdflib view of everything the world holds (facts, effect graphs, instances)."""
        return self.store.dataset()

    def commit(self, change: Change) -> None:
        self.store.apply(change)

    def canonical(self, *, include_instances: bool = True) -> str:
        """Sorted N-Quads with blank nodes relabelled canonically: equal worlds, equal text."""
        by_graph: dict[URIRef | None, list[str]] = {}
        relabel: dict[URIRef | None, Graph] = {}  # graphs holding a blank node, relabelled whole
        for g, line in self.store.lines():
            if g == INSTANCES and not include_instances:
                continue
            if line is None:
                relabel.setdefault(g, Graph())
            else:
                by_graph.setdefault(g, []).append(line)
        if relabel:
            for s, p, o, g in self.store.quads():
                if g in relabel:
                    relabel[g].add((s, p, o))
            for name, graph in relabel.items():
                by_graph[name] = [nquad_line(s, p, o, name)
                                  for s, p, o in to_canonical_graph(graph)]
        lines = sorted(line for graph_lines in by_graph.values() for line in graph_lines)
        return "\n".join(lines) + ("\n" if lines else "")

    def digest(self) -> str:
        return digest_of(self.canonical())

    def snapshot(self) -> str:
        """Everything stored, as N-Quads, for a trace header."""
        return self.canonical()


def digest_of(canonical: str) -> str:
    """The digest of a world whose canonical text (:meth:`World.canonical`) is ``canonical``."""
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()
