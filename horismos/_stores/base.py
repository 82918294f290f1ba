"""The contract every world store keeps.

A store holds quads: the world's facts in the default graph, each committed step's effects in
a named graph of its own, and runtime state (instances) in ``urn:horismos:instances``. Graphs
named under ``urn:horismos:runtime:`` (worker claims, commit receipts) are bookkeeping, not
world: ``quads`` and ``dataset`` leave them out, so digests and snapshots never see them.

- ``solutions``, ``failing`` and ``explain`` evaluate a :class:`Precondition` with bound
  variables, in the store's own SPARQL engine (the last two through ``select``); values
  never enter the patterns' text (rdflib ``initBindings``,
  pyoxigraph ``substitutions``, a ``VALUES`` block of serialised terms over the protocol).
  Queries see the union of all graphs as their default graph.
- ``apply`` applies one :class:`Change` atomically: all of it lands, or none of it. When
  ``change.expect`` names quads, they must all be stored at the moment the change lands,
  or nothing lands and :class:`Conflict` is raised; this is how a step's commit is guarded by
  its instance's ``horis:version``.
- ``load`` adds quads; ``load_file`` parses a Turtle, N-Triples, N-Quads or TriG file
  straight into the store and returns how many quads it read.
- ``update`` runs a SPARQL 1.1 Update as one transaction (a user's own; claims and leases
  use it too): all of its operations land, or none, and a refused one raises
  :class:`StoreError` and leaves the digest as it was. One that ran moves the digest by what
  it wrote: one of ``INSERT DATA`` and ``DELETE DATA`` alone by exactly the quads it names
  (landed through ``apply``: no read of the world but of those quads); any other exactly
  where the store sees its writes (``memory``), else recomputed once it has run (one pass
  over the world: such an update can write anything; on ``sparql:`` a delta, the change
  between a read of the whole store before it and one after, so a write around Horismos
  before it stays found).
  ``runtime_only`` is the caller's word that it writes only bookkeeping graphs, which the
  digest never counts (a claim, a lease, the short-id index): the digest is then left alone,
  and no pass made. A run's commits never go through ``update`` (``apply``), so no step
  pays the pass.
- ``quads`` lists what is stored, for snapshots; ``lines`` the same as N-Quads lines;
  ``dataset`` is an rdflib view of it (a copy for stores that are not rdflib).
- ``digest`` is the :class:`~horismos._digest.Digest` of what ``quads`` yields, kept up to date
  by every write (``apply`` returns the delta it made: only quads that really were added or
  removed count; a :class:`Conflict` changes nothing). ``recompute_digest`` recomputes it in
  one linear pass; ``check_digest`` returns both, read at one moment; ``rebase_digest`` makes
  the recomputed value the kept one. World data is skolemised where it enters (``load``,
  ``load_file``; ``World.commit``), so the digest never depends on blank-node labels.
- ``shared`` says other processes may write the same store at once, so ``run --all`` splits
  focus nodes through claims; ``persistent`` says the store outlives the process.
- An operation a store cannot do raises :class:`NotImplementedError`, and one it cannot do with
  these arguments raises :class:`~horismos.UsageError`; none silently does nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from rdflib import RDF, Dataset, Literal, URIRef
from rdflib.plugins.serializers.nt import _quoteLiteral
from rdflib.term import Node

from .._digest import ZERO, Digest
from .._errors import HorismosError, UsageError

if TYPE_CHECKING:
    from .._preconditions import Precondition

__all__ = [
    "DIGEST_GRAPH",
    "INSTANCE",
    "INSTANCES",
    "LTHASH",
    "OWN",
    "RUNTIME",
    "Change",
    "Conflict",
    "Progress",
    "Quad",
    "QueryRefused",
    "ReadAhead",
    "Store",
    "StoreError",
    "WrappedStore",
    "delta_of",
    "is_world_quad",
    "nquad_line",
    "nt_text",
]

Quad = tuple[Node, Node, Node, URIRef | None]
Progress = Callable[[int], None]
"""Called with the number of quads read so far while a file loads."""

OWN = "urn:horismos:"
"""Every node and graph the runtime names is under this prefix (instances, their state, steps'
activities, doubts, approvals, bookkeeping), and so are the skolemised blank nodes of world
data (``skolem.GENID``), which are the world's."""
INSTANCE = f"{OWN}instance:"
"""An instance's IRI is this prefix and its id."""
RUNTIME = "urn:horismos:runtime:"
"""Graphs named under this prefix are store bookkeeping, never part of the world."""
INSTANCES = URIRef("urn:horismos:instances")
"""The named graph that holds workflow instance state."""
CLAIMS = URIRef(RUNTIME + "claims")
"""The named graph of a shared world's claims (:mod:`horismos._claims`): who drives what."""
CLAIM_TERMS = RUNTIME + "claim#"
"""The namespace of the claims graph's terms (``c:`` in its queries)."""
DOUBT = "urn:horismos:doubt:"
"""Nodes under this prefix keep a call that may have acted, one per tool and subject
(:func:`doubt_node`, ``_intents.py``)."""


def doubt_node(tool: URIRef, key: Node) -> URIRef:
    """Where a call of ``tool`` on ``key`` that may have acted is kept: the same node for
    every call there, so the next one finds it. A ``sparql:`` read-ahead computes the same
    name in SPARQL (``SHA256``) to fetch it with a step's precondition."""
    term = f"<{key}>" if type(key) is URIRef else key.n3()  # n3()'s text, without its checks
    digest = hashlib.sha256(f"{tool}\n{term}".encode()).hexdigest()[:32]
    return URIRef(f"{DOUBT}{digest}")


DIGEST_GRAPH = URIRef(RUNTIME + "digest")
"""Where a persistent store keeps its digest (``oxigraph:PATH``) or its deltas (``sparql:``)."""
LTHASH = URIRef(RUNTIME + "lthash16")
"""The predicate whose object is a digest state, base64."""


class StoreError(HorismosError):
    """The store could not be reached, or refused a request; the message says which and why.

    ``status``: the HTTP status a server answered the request with, when it answered one (a
    ``sparql:`` store's). :attr:`repeats` tells a refusal that will come again from a store
    that is away for a while."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status

    @property
    def repeats(self) -> bool:
        """Whether the store refused this request and will refuse it again, sent as it is: a
        query its engine refuses, or a 4xx answer about the request (a 400, a 413). Not one
        of :data:`_AWAY`: a server busy for a while (408, 429), as a 5xx is and as a store
        that cannot be reached is (no status), or one refusing every request alike until
        someone mends its credentials or its address (401, 403, 404, 407): a worker that
        dropped its tasks for those would empty its queue one task at a time."""
        if isinstance(self, QueryRefused):
            return True
        return self.status is not None and 400 <= self.status < 500 and self.status not in _AWAY


_AWAY = (401, 403, 404, 407, 408, 429)
"""4xx answers that say the server is busy or refuses every request alike (credentials, an
address), not that this request is wrong: waited out."""


class QueryRefused(StoreError):
    """The store's query engine refused a query (a function it does not have, SPARQL its
    parser does not take): a mistake in the pattern, not in the world. ``validate`` reports
    what it can find; this is what is left, typed, so the runner fails the step (through its
    horis:onError) instead of a traceback ending the run."""


class Conflict(HorismosError):
    """Another writer changed what a guarded commit expected; nothing of it landed.

    The runner re-reads the instance and re-checks the step's preconditions rather than
    committing over the other writer's work.
    """

    def __init__(
        self, message: str, *, expected: tuple[Quad, ...] = (), present: tuple[Quad, ...] = ()
    ) -> None:
        super().__init__(message)
        self.expected = expected
        self.present = present
        """Of the quads the commit required absent, those found stored (all of them when a
        store cannot tell which)."""


@dataclass
class Change:
    """What one commit removes and adds, as quads (graph ``None`` is the default graph).

    ``expect``: quads that must all be stored for the change to land, ``absent``: quads that
    must not be (else :class:`Conflict`, nothing landed) — checked in the same transaction as
    the write, so two writers that both read "not there" cannot both land.

    ``fresh``: graphs the writer has just named (a step's effect graph, a new UUID), so none
    of ``add``'s quads in them (the very graph objects given here) can be stored yet. A hint:
    a store may then skip asking about each of those quads once it has seen the graph is not
    there, and a graph that is there costs nothing but the look.
    """

    add: list[Quad] = field(default_factory=list)
    remove: list[Quad] = field(default_factory=list)
    expect: tuple[Quad, ...] = ()
    absent: tuple[Quad, ...] = ()
    fresh: tuple[URIRef, ...] = ()


@dataclass(frozen=True)
class ReadAhead:
    """What a step will read about the values of a precondition's solutions right after them.

    ``types``: variables whose values' ``rdf:type`` it reads (argument typing, the gate);
    ``outgoing``: variables whose values' triples it reads (the gate, about the effect's
    subject), only those whose predicate is among ``predicates`` when that is given (what
    the shapes judging the subject name; ``rdf:type`` always); ``also``: preconditions it
    may evaluate next with the same bindings (a DecisionStep's later rules). A store that
    pays a round trip per request (``sparql:URL``) fetches them with the solutions, in one
    request, and answers those reads from what it fetched until its next write (a write that
    only adds, an intent, keeps what it does not touch); the others ignore it. What the reads
    answer is the same either way, so traces and replay do not see it.
    """

    types: frozenset[str] = frozenset()
    outgoing: frozenset[str] = frozenset()
    also: tuple[Precondition, ...] = ()
    predicates: frozenset[Node] | None = None


class Store:
    """The world store's contract (this module's docstring): the world and the runner speak
    only to it, so a backend is one subclass, chosen by name."""

    name = "store"
    shared = False
    persistent = False

    def solutions(
        self, pre: Precondition, bindings: Mapping[str, Node], _ahead: ReadAhead | None = None
    ) -> list[dict[str, Node]]:
        """``_ahead``: what the caller reads next (:class:`ReadAhead`), a hint."""
        raise NotImplementedError

    def held(self, pre: Precondition, each: Sequence[Mapping[str, Node]]) -> list[bool]:
        """For each of ``each``, whether ``pre`` has a solution with those bindings: what
        ``bool(solutions(pre, bindings))`` answers, asked for many bindings at once. Here,
        one :meth:`solutions` each; a store that pays a round trip per request
        (``sparql:URL``) asks for all of them in one (``horismos wake`` asks a wait's
        ``horis:until`` for every instance waiting at it)."""
        return [bool(self.solutions(pre, bindings)) for bindings in each]

    def failing(self, pre: Precondition, bindings: Mapping[str, Node]) -> str:
        """The first pattern of ``pre`` with no solution on its own, or all of them joined
        (asked through :meth:`select`, one ``LIMIT 1`` query per pattern). This text is kept
        in instance state and traces, so it stays what it has always been; :meth:`explain`
        says more."""
        from .._preconditions import first_failing

        return first_failing(pre, bindings, self.select)

    def explain(self, pre: Precondition, bindings: Mapping[str, Node]) -> str:
        """Which triple pattern or FILTER of ``pre`` has no solution, with the values bound
        when it was reached (one ``LIMIT 1`` query per part; for people, not for traces)."""
        from .._preconditions import explain

        return explain(pre, bindings, self.select)

    def select(
        self,
        query: str,
        bindings: Mapping[str, Node],
        ns: Mapping[str, str],
    ) -> list[dict[str, Node]]:
        """The solutions of the SPARQL SELECT ``query`` (its prefixes ``ns``, its variables
        bound first by ``bindings``), each a mapping of variable name to term."""
        raise NotImplementedError

    def objects(self, subject: Node, predicate: Node) -> Iterator[Node]:
        """The objects of ``subject predicate ?o`` in the default graph."""
        raise NotImplementedError

    def noted(self, subject: Node, predicate: Node) -> list[Node]:
        """:meth:`objects`, for what a trace records for its reader and nothing is decided
        from (who approved a call, and when): a replay of a trace recorded before such a
        value was read answers none (:class:`~horismos._reads.ReplayedStore`), where a read
        the recording lacks is a divergence."""
        return list(self.objects(subject, predicate))

    def outgoing(
        self, subject: Node, predicates: frozenset[Node] | None = None
    ) -> Iterator[tuple[Node, Node, Node]]:
        """``subject``'s triples, in any graph but the runtime's bookkeeping; with
        ``predicates``, only those whose predicate is one of them (what the gate reads of a
        node is what its shapes name: a node with thousands of triples costs a step no more
        than one with three)."""
        raise NotImplementedError

    def types(self, node: Node) -> set[Node]:
        """``node``'s ``rdf:type`` values, in any graph."""
        return set(self.objects(node, RDF.type))

    def match(
        self, s: Node | None, p: Node | None, o: Node | None, g: Node | None
    ) -> Iterator[Quad]:
        """The quads matching a pattern (None: any term; ``g`` None: any graph, rdflib's
        ``DATASET_DEFAULT_GRAPH_ID``: the default graph), the runtime's bookkeeping left out:
        what ``world.graph`` reads for one look-up, never the whole store.
        NotImplementedError where the store cannot (its ``world.graph`` is then a copy)."""
        raise NotImplementedError

    def schema_mark(self) -> int | None:
        """A number that changes whenever a write may have changed the world's type rules
        (:mod:`~horismos._stores.schema_mark`), so what is compiled from them is kept while
        it stays the same; ``None`` when the store cannot tell (others write it, or its data
        can be changed around it): they are read again each time."""
        return None

    def which(self, quads: Sequence[Quad]) -> list[Quad]:
        """Those of ``quads`` the store holds: one look-up each (on ``sparql:``, one request
        a few thousand), never a read of the whole store. What a command that lends data to
        the store for a while (:mod:`~horismos._cli_lent_world`) must not take back with it."""
        raise NotImplementedError

    def fence_holds(self) -> bool:
        """Whether this process may still send a call that others would hold in doubt once
        its lease ran out: always, but for a worker's view of a shared store
        (:class:`~horismos._claims.FencedStore`), whose lease may have run out unseen."""
        return True

    def apply(self, change: Change) -> Digest:
        """Land ``change`` atomically; the delta it made to :meth:`digest`."""
        raise NotImplementedError

    def update(self, text: str, *, runtime_only: bool = False) -> None:
        """Run a SPARQL 1.1 Update; the digest follows what it wrote (this module's
        docstring), unless ``runtime_only`` says it writes only bookkeeping graphs."""
        raise NotImplementedError

    def load(self, quads: Iterable[Quad]) -> None:
        """Add ``quads`` as they are, in one write."""
        raise NotImplementedError

    def load_file(self, path: Path, progress: Progress | None = None) -> int:
        """Add the RDF file at ``path`` (its syntax from its suffix); the number of quads
        new to the store. ``progress`` is called with the number read so far."""
        raise NotImplementedError

    def quads(self) -> Iterator[Quad]:
        """Every stored quad (graph ``None`` is the default graph)."""
        raise NotImplementedError

    def lines(self) -> Iterator[str]:
        """Each stored quad as its N-Quads line (no newline): what the digest hashes."""
        for s, p, o, g in self.quads():
            yield nquad_line(s, p, o, g)

    def digest(self) -> Digest:
        """The digest of what :meth:`quads` yields, as kept up to date by every write."""
        raise NotImplementedError

    def recompute_digest(self) -> Digest:
        """The digest recomputed from every stored quad: one pass, bounded memory."""
        return Digest.of_lines(self.lines())

    def check_digest(self) -> tuple[Digest, Digest]:
        """The kept digest and the recomputed one, as of the same moment."""
        return self.digest(), self.recompute_digest()

    def rebase_digest(self, *, only_if_equal: bool = False) -> tuple[Digest, Digest]:
        """Make the recomputed digest the kept one (after writes that bypassed Horismos);
        with ``only_if_equal``, only when they already agree (``sparql:`` then folds its
        deltas into one). Returns the kept and the recomputed digest as they were."""
        raise NotImplementedError

    def backup(self, dest: Path) -> Digest:
        """Copy the world, as of one moment between commits, into the new folder ``dest``,
        which opens as a store of the same kind, and give the digest of exactly that copy
        (read in the same hold of the store's lock: read after it, a commit landing between
        made the backup's reported digest describe a world the copy does not hold). Only an
        on-disk store has a folder to copy: any other is a :class:`UsageError` saying how
        its world is kept instead."""
        raise UsageError(
            f"--store {self.name} has no folder to back up: back up an oxigraph:PATH or "
            "journal:PATH world with horismos backup, a sparql:URL world on its server "
            '(docs/deployment.md, "Backups")'
        )

    def dataset(self) -> Dataset:
        """An rdflib view of everything stored."""
        raise NotImplementedError

    def close(self) -> None:
        """Release files and connections; the store is not used afterwards."""


class WrappedStore(Store):
    """``inner`` seen through a wrapper that changes a few operations (a worker's fenced
    commits, a run's recorded reads): everything it does not override goes to ``inner``.

    All but :meth:`~Store.held`, left to the base, which asks :meth:`solutions` once for each
    binding: answered the same, and through the wrapper, so a run's recorded reads note each
    (sent to ``inner`` at once, none would be recorded). Only
    ``wake`` asks it, of a store it opened itself, never wrapped."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.name = inner.name
        self.shared = inner.shared
        self.persistent = inner.persistent

    def solutions(
        self, pre: Precondition, bindings: Mapping[str, Node], _ahead: ReadAhead | None = None
    ) -> list[dict[str, Node]]:
        return self.inner.solutions(pre, bindings, _ahead)

    def failing(self, pre: Precondition, bindings: Mapping[str, Node]) -> str:
        return self.inner.failing(pre, bindings)

    def select(
        self,
        query: str,
        bindings: Mapping[str, Node],
        ns: Mapping[str, str],
    ) -> list[dict[str, Node]]:
        return self.inner.select(query, bindings, ns)

    def objects(self, subject: Node, predicate: Node) -> Iterator[Node]:
        return self.inner.objects(subject, predicate)

    def noted(self, subject: Node, predicate: Node) -> list[Node]:
        return self.inner.noted(subject, predicate)

    def outgoing(
        self, subject: Node, predicates: frozenset[Node] | None = None
    ) -> Iterator[tuple[Node, Node, Node]]:
        return self.inner.outgoing(subject, predicates)

    def types(self, node: Node) -> set[Node]:
        return self.inner.types(node)

    def schema_mark(self) -> int | None:
        return self.inner.schema_mark()

    def which(self, quads: Sequence[Quad]) -> list[Quad]:
        return self.inner.which(quads)

    def apply(self, change: Change) -> Digest:
        return self.inner.apply(change)

    def fence_holds(self) -> bool:
        return self.inner.fence_holds()

    def update(self, text: str, *, runtime_only: bool = False) -> None:
        self.inner.update(text, runtime_only=runtime_only)

    def load(self, quads: Iterable[Quad]) -> None:
        self.inner.load(quads)

    def load_file(self, path: Path, progress: Progress | None = None) -> int:
        return self.inner.load_file(path, progress)

    def quads(self) -> Iterator[Quad]:
        return self.inner.quads()

    def lines(self) -> Iterator[str]:
        return self.inner.lines()

    def digest(self) -> Digest:
        return self.inner.digest()

    def recompute_digest(self) -> Digest:
        return self.inner.recompute_digest()

    def check_digest(self) -> tuple[Digest, Digest]:
        return self.inner.check_digest()

    def rebase_digest(self, *, only_if_equal: bool = False) -> tuple[Digest, Digest]:
        return self.inner.rebase_digest(only_if_equal=only_if_equal)

    def match(
        self, s: Node | None, p: Node | None, o: Node | None, g: Node | None
    ) -> Iterator[Quad]:
        return self.inner.match(s, p, o, g)

    def backup(self, dest: Path) -> Digest:
        """``inner``'s backup: the base's refusal said a store with a folder had none."""
        return self.inner.backup(dest)

    def dataset(self) -> Dataset:
        return self.inner.dataset()

    def close(self) -> None:
        """The caller opened ``inner``, and closes it."""


def is_world_quad(q: Quad) -> bool:
    """Whether ``q`` is world (not in a ``urn:horismos:runtime:`` graph)."""
    return q[3] is None or not str(q[3]).startswith(RUNTIME)


def delta_of(added: Iterable[Quad], removed: Iterable[Quad]) -> Digest:
    """The digest delta of quads that were really added and removed (each given once)."""
    plus = [nquad_line(*q) for q in added if is_world_quad(q)]
    minus = [nquad_line(*q) for q in removed if is_world_quad(q)]
    return (Digest.of_lines(plus) if plus else ZERO) - (Digest.of_lines(minus) if minus else ZERO)


def nt_text(node: Node) -> str:
    """N-Triples form (``Literal.n3()`` writes a multi-line string in triple quotes)."""
    return _quoteLiteral(node) if isinstance(node, Literal) else node.n3()


def nquad_line(s: Node, p: Node, o: Node, g: URIRef | None) -> str:
    """One quad as a line of N-Quads (without its newline), as a world's digest is made of."""
    return f"{s.n3()} {p.n3()} {nt_text(o)}" + (f" {g.n3()} ." if g is not None else " .")
