"""The world: the facts workflows read and the effects they commit, in one store.

Every write goes through :meth:`World.commit`, one atomic :class:`Change` per step.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from rdflib import BNode, Dataset, Graph, Literal, URIRef
from rdflib.compare import to_canonical_graph
from rdflib.plugins.serializers.nt import _quoteLiteral
from rdflib.term import Node

from ._errors import AuthoringError, Problem
from ._sources import RDF_SUFFIXES, expand_paths
from ._stores import DEFAULT_STORE, Change, Store, open_store
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
        by_graph: dict[URIRef | None, list[tuple[Node, Node, Node]]] = {}
        for s, p, o, g in self.store.quads():
            if g == INSTANCES and not include_instances:
                continue
            by_graph.setdefault(g, []).append((s, p, o))
        lines: list[str] = []
        for name, triples in by_graph.items():
            # an rdflib Graph only where blank nodes need relabelling: building one per named
            # graph made the digest of a 10,000-step world take seconds
            if any(isinstance(t, BNode) for triple in triples for t in triple):
                graph = Graph()
                for t in triples:
                    graph.add(t)
                triples = list(to_canonical_graph(graph))
            suffix = f" <{name}> ." if name is not None else " ."
            lines.extend(f"{s.n3()} {p.n3()} {_nt(o)}{suffix}" for s, p, o in triples)
        lines.sort()
        return "\n".join(lines) + ("\n" if lines else "")

    def digest(self) -> str:
        return digest_of(self.canonical())

    def snapshot(self) -> str:
        """Everything stored, as N-Quads, for a trace header."""
        return self.canonical()


def digest_of(canonical: str) -> str:
    """The digest of a world whose canonical text (:meth:`World.canonical`) is ``canonical``."""
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def _nt(node: Node) -> str:
    """N-Triples form: ``Literal.n3()`` writes a multi-line string in triple quotes."""
    return _quoteLiteral(node) if isinstance(node, Literal) else node.n3()
