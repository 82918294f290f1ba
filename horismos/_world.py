"""The world: the facts workflows read and the effects they commit, in one store.

Every write goes through :meth:`World.commit`, one atomic :class:`Change` per step. The
world's digest is the store's, kept up to date by every write (:mod:`horismos._digest`), so
asking for it costs nothing however large the world is; blank nodes are skolemised where
data comes in (:mod:`horismos._stores.skolem`), so the digest never depends on their labels.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import chain
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Literal

from rdflib import BNode, Dataset, Graph, URIRef
from rdflib import Literal as RdfLiteral
from rdflib.term import Node

from ._bindings.reach import Hosts
from ._digest import Digest
from ._errors import AuthoringError, UsageError
from ._hydrate import Hydrated, hydrate
from ._instances import STATUSES, InstanceSummary, list_instances
from ._model import Adapter
from ._records import Status
from ._sources import RDF_SUFFIXES, expand_paths
from ._stores import DEFAULT_STORE, RUNTIME, Change, Store, open_store
from ._stores.base import INSTANCES, StoreError
from ._stores.ox_terms import parse_nquads
from ._stores.skolem import skolemise
from ._unreadable import each_opens, load_failed
from ._world_data import data_quads
from ._world_syntax import syntax_problem
from ._world_view import view_of

if TYPE_CHECKING:
    from ._trace import Trace

__all__ = [
    "INDEXED_EVERY_INSTANCE",
    "INSTANCES",
    "SHORT_IDS",
    "Place",
    "World",
    "given_world",
    "holds_subject",
    "indexes_every_instance",
    "states",
    "traced_digest",
    "unindexed",
]

_GROUND = frozenset({URIRef, RdfLiteral, type(None)})
"""The kinds of term (and the default graph's ``None``) a quad to commit holds that are never
a blank node, nor a subclass of one."""

SHORT_IDS = URIRef(RUNTIME + "short-ids")
"""The graph of each instance's short id, written with its creation (``_stored_instances``)."""
INDEXED_EVERY_INSTANCE = (
    SHORT_IDS,
    URIRef(RUNTIME + "indexes"),
    URIRef(RUNTIME + "everyInstance"),
    SHORT_IDS,
)
"""Stored once every instance of the store is in :data:`SHORT_IDS`: a short id it does not
hold then names no instance, with no instance's id read to say so."""


class World:
    """The facts a workflow runs against; ``World.open("memory")`` or ``World.from_files(...)``."""

    def __init__(self, store: Store | None = None) -> None:
        self._store = store if store is not None else open_store(DEFAULT_STORE)
        self._closed = False
        # set by the command line for a world read from --world files, which an earlier run's
        # --out may have written: a run of one focus then continues that focus's unfinished
        # instance (or refuses a waiting one), as on a store that outlives the process. A
        # world a Python program builds keeps its own runs' instances side by side.
        self._kept_in_files = False

    @property
    def store(self) -> Store:
        """The store the world is kept in; after :meth:`close`, a UsageError saying so."""
        if self._closed:  # a run after its with block: AttributeError from inside the store
            again = (
                f"open it again with World.open({self._store.name!r}) and use that world"
                if self._store.persistent
                else "an in-memory store keeps nothing once closed: make a new world "
                "(World.from_files(...)), and close it only when done"
            )
            raise UsageError(
                f"this world is closed (world.close(), or the end of its with block), so its "
                f"store {self._store.name} is released: {again}"
            )
        return self._store

    @classmethod
    def open(cls, store: str = DEFAULT_STORE, *, create: bool = True) -> World:
        """The world kept in ``store``: memory, oxigraph, oxigraph:PATH, journal:PATH or
        sparql:URL; without ``create``, a PATH that holds no store is a :class:`UsageError`."""
        return cls(open_store(store, create=create))

    @classmethod
    def from_files(cls, *paths: str | Path, store: str = DEFAULT_STORE) -> World:
        """A new world in ``store`` (by default in this process's memory) holding the facts of
        ``paths``: :meth:`open`, then :meth:`load`."""
        world = cls.open(store)
        world.load(*paths)
        return world

    @classmethod
    def from_snapshot(cls, nquads: str, store: str = DEFAULT_STORE) -> World:
        """A world holding the quads of N-Quads text (:meth:`snapshot`)."""
        world = cls.open(store)
        try:
            world.store.load(parse_nquads(nquads))
        finally:
            unindexed(world.store)  # its instances are in no short-id index
        return world

    def load(self, *paths: str | Path) -> None:
        """Add the facts of RDF files (Turtle, N-Triples, TriG, N-Quads) or folders of them."""
        # before and after: a short id missed meanwhile (another process, on a shared
        # store) may index every instance again while the files' are still landing
        unindexed(self.store)
        try:
            self._load(paths)
        finally:
            unindexed(self.store)

    def _load(self, paths: tuple[str | Path, ...]) -> None:
        for path in each_opens(expand_paths(paths, RDF_SUFFIXES)):
            try:
                self.store.load_file(path)  # pyoxigraph's parser, into every kind of store
            except OSError as e:  # the file's read error, or the store's write error
                raise load_failed(path, e, self.store.name) from None
            except SyntaxError as e:
                raise AuthoringError([syntax_problem(path, e)]) from None

    def load_data(
        self, data: str | bytes | Graph, format: str | None = None, *, base: str | None = None
    ) -> None:
        """Add the facts of ``data`` given in memory — an event's, say: RDF text in
        ``format`` (``"turtle"``, the default, ``"nt"``, ``"nquads"``, ``"trig"``, ``"n3"``
        or ``"json-ld"``; relative IRIs against ``base``), or an rdflib ``Graph`` (a
        ``Dataset``'s named graphs kept). Read by the parser files are read by, blank nodes
        named after the data's content as a file's are (:meth:`load`), and landed in one
        commit: text that does not parse raises AuthoringError at its line, and data stating
        runtime state (a ``horis:`` term, a ``urn:horismos:`` node: an instance, an approval)
        raises UsageError — in either case nothing of it lands. Held in memory whole: a large
        world is loaded from its files (:meth:`load`, ``horismos load``)."""
        quads = data_quads(data, format, base)
        if quads:
            self.commit(Change(add=quads))

    def hydrate(
        self,
        adapter: Adapter,
        ids: Iterable[str] = (),
        *,
        search: Iterable[str] = (),
        allow_hosts: Iterable[str] = (),
    ) -> list[Hydrated]:
        """Project resources of ``adapter``'s system of record into the world, each in its own
        named graph with its source version and read time (see :mod:`horismos._hydrate`).

        ``ids`` name resources (``"Patient/p1"``), ``search`` finds them
        (``"MedicationRequest?status=active"``). A resource hydrated before is replaced; all
        of it lands in one commit, or nothing does. A projection that changed after the remote
        reads began (an adapter step's accepted commit landed) is newer than them: it is kept,
        and its :class:`Hydrated` says so (``kept``). ``adapter`` is one the definitions declare:
        ``agent.adapter("ehr")``."""
        hosts = Hosts(tuple(allow_hosts)) if allow_hosts else None
        return hydrate(self.store, self.commit, adapter, list(ids), list(search), hosts)

    def instances(self, status: Status | None = None) -> list[InstanceSummary]:
        """The workflow instances the world holds, oldest activity first, as ``horismos
        instances`` lists them (one reading, shared): each one's IRI, workflow, focus,
        status, current step and since when; with ``status`` (``"running"``, ``"waiting"``,
        ``"blocked"``, ``"failed"``, ``"completed"``) only those, and only theirs read. A
        status of another name is a UsageError listing them."""
        if status is not None and status not in STATUSES:
            raise UsageError(f"status {status!r}: use one of {', '.join(STATUSES)}")
        return list_instances(self.store, status)

    @property
    def graph(self) -> Dataset:
        """An rdflib view of everything the world holds (facts, effect graphs, instances):
        each look-up asks the store for what it names, and sees every commit; its default
        graph is the union of the world's graphs, ``.graph(name)`` one of them. Read-only:
        a write raises UsageError (facts land through :meth:`load`, :meth:`load_data`, a step or
        a tool call).
        On a ``sparql:`` store it is a copy, fetched whole."""
        return view_of(self.store)

    def commit(self, change: Change) -> Digest:
        """Land ``change`` (its blank nodes skolemised); the delta it made to the digest."""
        add = change.add if type(change.add) is list else list(change.add)
        # the kinds of term it holds, then whether one is a blank node: asking each term
        # (isinstance through rdflib's ABC) was ~10 µs of a step's commit; kinds that are
        # never one, the usual, are told at once (asking each kind was ~1 µs more)
        kinds = set(map(type, chain.from_iterable(add)))
        if not kinds <= _GROUND and any(issubclass(kind, BNode) for kind in kinds):
            add = skolemise(add)
        elif add is change.add:  # as given: passed on, not copied
            return self.store.apply(change)
        return self.store.apply(
            Change(add, change.remove, change.expect, change.absent, change.fresh)
        )

    def canonical(self, *, include_instances: bool = True) -> str:
        """Every stored quad as sorted N-Quads: equal worlds, equal text. Linear but for the
        sort, with no relabelling: the world holds no blank node Horismos wrote."""
        suffix = f" <{INSTANCES}> ."
        lines = sorted(
            line for line in self.store.lines() if include_instances or not line.endswith(suffix)
        )
        return "\n".join(lines) + ("\n" if lines else "")

    def digest(self) -> str:
        """The fingerprint of the world's digest (``lthash16:…``), kept by the store: O(1),
        except the first read on an ``oxigraph:PATH`` store opened without a stored digest (its
        last process killed), which is one pass over the store
        (:mod:`horismos._stores.oxigraph`)."""
        return self.store.digest().fingerprint

    def snapshot(self) -> str:
        """Everything stored, as N-Quads, for a trace header."""
        return self.canonical()

    def close(self) -> None:
        """Release the store (an on-disk store stays locked until then); idempotent. The world
        is not used afterwards: whatever it is asked raises UsageError."""
        if self._closed:
            return
        self._store.close()
        self._closed = True

    def __enter__(self) -> World:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close the world; when the block raised, a store that cannot close (its digest
        refused) is a note on the block's own error, not in its place: a Ctrl-C after commits
        exited 2 with the digest's message instead of 130, "interrupted; what stays"."""
        if error is None:
            self.close()
            return
        try:
            self.close()
        except StoreError as e:
            error.add_note(f"also: {e}")


Place = Literal["subject", "predicate", "object"]

_ONE_STATEMENT: dict[str, tuple[str, str]] = {
    # the query and the variable bound. A run's reads are recorded by the query's text and
    # its bound names, and a trace replays by them: each is written as it always was
    "subject": ("SELECT ?p WHERE { ?s ?p ?o } LIMIT 1", "s"),
    "predicate": ("SELECT * WHERE { ?s ?t ?o } LIMIT 1", "t"),
    "object": ("SELECT * WHERE { ?s ?p ?t } LIMIT 1", "t"),
}


def states(store: Store, term: Node, place: Place) -> bool:
    """Whether a statement of ``store`` has ``term`` as its ``place``: one triple asked, by an
    index, never every triple of the term read (a node or a property of a knowledge graph may
    be in millions)."""
    query, bound = _ONE_STATEMENT[place]
    return bool(store.select(query, {bound: term}, {}))


def given_world(world: object) -> World:
    """``world`` when it is a :class:`World`; else a UsageError saying how to make one. A
    path given instead (``agent.run("world.ttl", …)``) raised ``AttributeError: 'str' object
    has no attribute 'store'`` from inside the run."""
    if isinstance(world, World):
        return world
    shown = repr(world)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    raise UsageError(
        f"the world must be a horismos.World, not {type(world).__name__} {shown}: "
        'World.from_files("world.ttl") reads files, World.open("oxigraph:PATH") opens a store'
    )


def traced_digest(world: World, trace: Trace) -> str | None:
    """The world's digest for ``trace``'s header, end or ``taken_back``; none for a store other
    processes write meanwhile, where a run's start and end say nothing of its own work
    (``horismos digest`` checks it), nor for a trace kept nowhere (a ``run`` without
    ``--trace``): the store is not asked for a digest it may not know
    (:mod:`horismos._stores.oxigraph`, after a killed process)."""
    return None if world.store.shared or trace.kept_nowhere else world.digest()


def holds_subject(world: World, node: URIRef) -> bool:
    """Whether ``world`` has a statement about ``node`` (:func:`states`). Asked to tell which
    of a prefix's namespaces a name means (a focus given as a CURIE, a node printed as
    one)."""
    return states(world.store, node, "subject")


def unindexed(store: Store) -> None:
    """Before a file is loaded into ``store``: the instances it may hold (an export's) are in
    no short-id index (a runtime graph, which exports leave out), so the store no longer says
    its index holds every instance; the next short id it does not hold indexes them anew. A
    look-up of one quad, on a store that outlives the process (no other is said so of)."""
    if store.persistent and indexes_every_instance(store):
        store.apply(Change(remove=[INDEXED_EVERY_INSTANCE]))


def indexes_every_instance(store: Store) -> bool:
    """Whether ``store`` says its short-id index holds every instance it holds."""
    s, p, _, g = INDEXED_EVERY_INSTANCE
    return bool(store.select(f"SELECT ?o WHERE {{ GRAPH <{g}> {{ <{s}> <{p}> ?o }} }}", {}, {}))
