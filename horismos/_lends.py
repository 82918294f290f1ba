"""The durable record of world data lent to a persistent store for one command
(:mod:`~horismos._cli_lent_world`), so that a process killed between the lend and the
take-back does not leave the data in the store for good.

A lend lands in one commit with its record, in ``urn:horismos:runtime:`` graphs (bookkeeping:
out of digests and snapshots)::

    GRAPH <urn:horismos:runtime:lent> {
        <lend> l:owner "PID@HOST" ; l:graph <copy> … ; l:unindexed true ;   # when it lifted
            l:worker <worker> .                     # on a shared store: the lease it holds
    }
    GRAPH <copy> { s p o }     # one copy graph per graph of the lent quads (default or named)

The commit that takes it back removes the record with the lent quads; a call's completed
commit removes it with the call's effects (what was lent then stays with what read it). So a
record is left only by a process that stopped in between, and the next command that opens the
store for writing takes back what that process lent (:func:`take_back_abandoned`). A quad
two lends hold (the second found it stored through the first) is taken back by the last to let
it go, and a call that completes removes every lend's copy of what it read, found as its commit
is made (:func:`lent_elsewhere`): a take-back removes a lent quad only while its own lend's copy
of it is still stored, required so in its commit (:func:`give_back`), so no other lender,
failing or gone, takes it back from under the completed call's effects.

Whether the process that lent is gone is told as claims tell it (:mod:`~horismos._claims`):

- ``oxigraph:PATH`` and ``journal:PATH`` open in one process at a time (RocksDB's lock, a
  journal's ``flock``): the process that opened the store now is the only one that can be
  writing it, so a record there was left by a process that is gone;
- on ``sparql:``, which processes share, the lender holds a worker's lease for the length of
  the command (renewed by its heartbeat, judged by the server's clock): a record whose worker's
  lease has run out, or was given back, is abandoned; one whose lease is live belongs to a
  process mid-command, and is left alone.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import quote, unquote

from rdflib import Literal, URIRef

from ._claims import ALIVE, CLAIMS, Worker, evict_expired, lease_from_env
from ._stores import RUNTIME, Change, Conflict, Store
from ._stores.base import Quad
from ._world import INDEXED_EVERY_INSTANCE, World

__all__ = [
    "LENDS",
    "LEND_ATTEMPTS",
    "Lend",
    "Sharing",
    "give_back",
    "lends_of",
    "lent_elsewhere",
    "take_back_abandoned",
]

LENDS = URIRef(RUNTIME + "lent")
"""The graph naming each lend in force: its owner, its copy graphs, whether it lifted the mark."""
_L = RUNTIME + "lent#"
_OWNER, _GRAPH, _UNINDEXED, _WORKER, _SHARED = (
    URIRef(_L + n) for n in ("owner", "graph", "unindexed", "worker", "shared")
)
_DEFAULT = "/default"
_NAMED = "/graph/"


def _copy_graph(lend: URIRef, graph: URIRef | None) -> URIRef:
    """Where the record keeps a lent quad of ``graph``: its graph's name is in the copy's."""
    tail = _DEFAULT if graph is None else _NAMED + quote(str(graph), safe="")
    return URIRef(f"{lend}{tail}")


def _lend_of(copy: URIRef) -> URIRef:
    """The lend whose record keeps the copy graph ``copy`` (:func:`_copy_graph`: a lend's
    name holds no ``/``)."""
    return URIRef(str(copy).split("/", 1)[0])


def _lent_graph(lend: URIRef, copy: URIRef) -> URIRef | None:
    """The graph whose quads ``copy`` keeps (None: the default graph)."""
    tail = str(copy)[len(str(lend)) :]
    return None if tail == _DEFAULT else URIRef(unquote(tail[len(_NAMED) :]))


@dataclass
class Lend:
    """One command's lend, as recorded: land :meth:`record` with the lent quads, and
    :meth:`record` again among what the take-back (or the call's commit) removes."""

    iri: URIRef
    worker: Worker | None = None  # on a shared store, the lease that says the lender lives

    @classmethod
    def begin(cls, world: World) -> Lend:
        """A lend about to be made in ``world``; on a shared store, it holds a lease from now
        until :meth:`end`, so another process does not take it back mid-command."""
        worker = Worker.join(world, lease_from_env()) if world.store.shared else None
        return cls(URIRef(f"{RUNTIME}lent:{uuid.uuid4().hex}"), worker)

    def record(self, added: Sequence[Quad], unindexed: bool) -> list[Quad]:
        """The quads recording that ``added`` was lent (and the mark lifted, ``unindexed``)."""
        quads: list[Quad] = [
            (self.iri, _OWNER, Literal(f"{os.getpid()}@{socket.gethostname()}"), LENDS)
        ]
        graphs = {q[3] for q in added}
        quads += [(self.iri, _GRAPH, _copy_graph(self.iri, g), LENDS) for g in graphs]
        if unindexed:
            quads.append((self.iri, _UNINDEXED, Literal(True), LENDS))
        if self.worker is not None:
            quads.append((self.iri, _WORKER, self.worker.iri, LENDS))
        quads += [(s, p, o, _copy_graph(self.iri, g)) for s, p, o, g in added]
        return quads

    def end(self) -> None:
        """Give back the lease held for the lend (its record gone with the take-back or the
        call's commit); a store that did not answer raised, for the lend's note to tell."""
        if self.worker is not None:
            worker, self.worker = self.worker, None
            if (failed := worker.leave()) is not None:
                raise failed


def lent_elsewhere(
    store: Store, quads: Sequence[Quad], but: URIRef | None = None
) -> dict[Quad, list[Quad]]:
    """Those of ``quads`` that a lend other than ``but`` holds in its record, each with the
    record's copies of it. A quad two lends hold (the second found it stored through the
    first: a retry while a killed lender's lease runs) is taken back only by the last of them
    to let it go, and a call that completes removes the others' copies of what it read, so
    that no take-back removes it from under the call's effects."""
    if not quads:
        return {}
    ns = {"l": _L}
    copies = store.select(
        f"SELECT ?lend ?copy WHERE {{ GRAPH <{LENDS}> {{ ?lend l:graph ?copy }} }}", {}, ns
    )
    by_graph: dict[URIRef | None, list[URIRef]] = {}
    for row in copies:
        lend, copy = _iri(row["lend"]), _iri(row["copy"])
        if lend != but:
            by_graph.setdefault(_lent_graph(lend, copy), []).append(copy)
    asked: dict[Quad, Quad] = {
        (s, p, o, copy): (s, p, o, g) for s, p, o, g in quads for copy in by_graph.get(g, [])
    }
    found: dict[Quad, list[Quad]] = {}
    for stored in store.which(list(asked)) if asked else []:
        found.setdefault(asked[stored], []).append(stored)
    return found


@dataclass(frozen=True)
class Sharing:
    """How many times lends have come to share the quads of each of some lends, in a store
    processes share, as read before a commit that depends on which lends hold what:
    :meth:`guard` makes that commit a :class:`Conflict` if one more has since.

    Why: a lend of a quad stored only through another's lend keeps its own copy of it (a
    retry while a killed lender's lease runs: :func:`lent_elsewhere`). A call completing on
    the other lend removes every copy of what it read, and a take-back leaves a quad another
    lend holds; each reads the copies, then commits. A lend landing in between kept a copy
    neither had read, and its take-back later removed what the completed call had read, or
    what the other lend's call was still reading. Every lend that shares a quad counts itself,
    in its own commit, on each lend it shares with (the only way to come to share a lend's
    quad: it is stored, and only through lends); a completion and a take-back require their
    own lend's count as they read it, and read the copies again when it moved.

    A count per lend, not one for the store: with one, any lend sharing any quad refused every
    completion and take-back in flight on the store, and a call's completion, whose last try
    lands unguarded, met that try under unrelated lends alone. ``counts`` is None on a store
    one process opens at a time, where no lend lands meanwhile."""

    counts: dict[URIRef, int] | None

    @classmethod
    def read(cls, store: Store, lends: Iterable[URIRef]) -> Sharing:
        """The counts of ``lends`` (0: none shared with it yet)."""
        if not store.shared:
            return cls(None)
        asked = list(dict.fromkeys(lends))
        counts = dict.fromkeys(asked, 0)
        if asked:
            values = " ".join(f"<{lend}>" for lend in asked)
            rows = store.select(
                f"SELECT ?lend ?n WHERE {{ VALUES ?lend {{ {values} }} "
                f"GRAPH <{LENDS}> {{ ?lend <{_SHARED}> ?n }} }}",
                {},
                {},
            )
            for row in rows:
                n = row["n"].value if isinstance(row["n"], Literal) else None
                if isinstance(n, int):
                    lend = _iri(row["lend"])
                    counts[lend] = max(counts[lend], n)
        return cls(counts)

    def guard(self) -> Change:
        """A change requiring each count still read as it was (nothing else in it)."""
        if not self.counts:
            return Change()
        return Change(
            expect=tuple(_shared(lend, n) for lend, n in self.counts.items() if n),
            absent=tuple(_shared(lend, 1) for lend, n in self.counts.items() if not n),
        )

    def counted(self) -> Change:
        """:meth:`guard`, and one more lend sharing a quad counted on each."""
        if not self.counts:
            return Change()
        guard = self.guard()
        return Change(
            add=[_shared(lend, n + 1) for lend, n in self.counts.items()],
            remove=self.stored(),
            expect=guard.expect,
            absent=guard.absent,
        )

    def stored(self) -> list[Quad]:
        """The counts as stored: removed with their lend's record when it ends, guarded."""
        return [_shared(lend, n) for lend, n in (self.counts or {}).items() if n]


def _shared(lend: URIRef, count: int) -> Quad:
    return (lend, _SHARED, Literal(count), LENDS)


def lends_of(copies: Iterable[Quad]) -> list[URIRef]:
    """The lends whose records hold ``copies`` (quads in their copy graphs)."""
    return list(dict.fromkeys(_lend_of(_iri(c[3])) for c in copies))


def take_back_abandoned(world: World) -> int:
    """Take back, in one commit each, what the processes that are gone lent ``world``'s store
    and never took back (see the module's docstring); how many quads that removed. A store
    that keeps nothing after its process holds no lend to take back."""
    store = world.store
    if not store.persistent:
        return 0
    ns = {"l": _L}
    found = store.select(
        f"SELECT ?lend ?worker WHERE {{ GRAPH <{LENDS}> {{ ?lend l:owner ?o "
        "OPTIONAL { ?lend l:worker ?worker } } }",
        {},
        ns,
    )
    if not found:
        return 0
    if store.shared:
        evict_expired(store)  # a lease run out is dropped, as claims are taken over
        live = {
            row["w"]
            for row in store.select(
                f"SELECT ?w WHERE {{ GRAPH <{CLAIMS}> {{ ?w <{ALIVE}> true }} }}", {}, {}
            )
        }
        found = [row for row in found if row.get("worker") not in live]
    taken = 0
    for lend in {_iri(row["lend"]) for row in found}:
        record = [
            (lend, p, o, LENDS)
            for row in store.select(
                f"SELECT ?p ?o WHERE {{ GRAPH <{LENDS}> {{ <{lend}> ?p ?o }} }}", {}, {}
            )
            for p, o in [(row["p"], row["o"])]
        ]
        copies: list[Quad] = []
        for _, p, copy, _ in record:
            if p != _GRAPH:
                continue
            for row in store.select(
                f"SELECT ?s ?p ?o WHERE {{ GRAPH <{copy}> {{ ?s ?p ?o }} }}", {}, {}
            ):
                copies.append((row["s"], row["p"], row["o"], _iri(copy)))
        unindexed = any(p == _UNINDEXED for _, p, _, _ in record)
        taken += give_back(world, lend, record, copies, unindexed)
    return taken


def give_back(
    world: World, lend: URIRef, record: Sequence[Quad], copies: Sequence[Quad], unindexed: bool
) -> int:
    """Take back ``lend`` (its ``record`` in the lends' graph, its ``copies`` of what it lent)
    in one commit, setting the mark again if it lifted it (``unindexed``); how many lent quads
    that removed. A lent quad goes only while the lend's own copy of it is stored, required
    so in that commit: a call that completed on it (reading it through another lend, or
    lending it too) dropped the copy with its effects, and it stays with them; and only while
    no other lend holds it (that one's to take back)."""
    store = world.store
    mark: list[Quad] = [INDEXED_EVERY_INSTANCE] if unindexed else []
    for _ in range(LEND_ATTEMPTS):
        sharing = Sharing.read(store, [lend])
        held = store.which(list(copies)) if copies else []
        lent = [(s, p, o, _lent_graph(lend, _iri(c))) for s, p, o, c in held]
        kept = lent_elsewhere(store, lent, but=lend)
        lent = [q for q in lent if q not in kept]
        guard = sharing.guard()
        try:
            world.commit(
                Change(
                    add=mark,
                    remove=[*lent, *held, *record, *sharing.stored()],
                    expect=(*held, *guard.expect),
                    absent=guard.absent,
                )
            )
        except Conflict:
            # a call completed meanwhile and dropped a copy, or a lend came to share one of
            # these quads: read them again
            continue
        return len(lent)
    raise Conflict(f"the lend {lend} changed under each of {LEND_ATTEMPTS} take-backs")


LEND_ATTEMPTS = 5
"""How many times a lend, a take-back and the commit that ends a lend read the store again when
another writer's commit came between their read and their own."""


def _iri(node: object) -> URIRef:
    """``node``, an IRI the record holds."""
    assert isinstance(node, URIRef)
    return node
