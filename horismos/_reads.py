"""What a run read from the world, recorded in its trace, so replay needs no copy of the world.

A world is a knowledge graph of millions of triples; a run touches a few dozen of them. So a
trace does not carry the world: it carries the answer to every question the run asked of it.
Every read the runner and its step kinds make goes through a :class:`RecordingStore`, which
asks the real store and notes ``[op, key…, answer]`` in the event the read belongs to
(``"reads"``, beside the clock values, ids and tool outcomes). Replay runs the same runner on a
:class:`ReplayedStore`, which answers each read from the recording of that event (matched by
what is asked, since a set's iteration order differs between processes; commits by their
order), and refuses a read the recording does not hold: when changed definitions ask the world
something the recorded run never asked, that is where the replay diverges.

The reads, by op:

=====  ==========================================================================
``s``  the solutions of a precondition: query id, bound values, the new values
``f``  the first failing pattern of a precondition: query id, bound values, its text
``q``  a SELECT: query id, bound values, its rows
``o``  the objects of a subject and predicate
``g``  a subject's outgoing edges (what the gate judges a result against); with the
       predicates it was limited to (those the shapes judging it name) before the edges
``t``  a node's types (``rdf:type``, or the OWL-RL entailed ones)
``c``  a commit that landed
``c!`` a commit another writer beat (:class:`Conflict`; with the positions in its
       ``absent`` of the quads found there, when some were), or the worker's lost lease
=====  ==========================================================================

A query id is the first 12 hex digits of the SHA-256 of the query's text; bound values are
those of the variables the query names. Terms are written compactly (``<iri>``,
``"lexical"^^<datatype>``, ``"text"@lang``) and read back by :func:`term`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol, cast

from rdflib import RDF, BNode, Literal, URIRef
from rdflib.term import Node

from ._digest import ZERO, Digest
from ._errors import LeaseLost
from ._stores import Change, Conflict, Store
from ._stores.base import ReadAhead, WrappedStore

if TYPE_CHECKING:
    from ._preconditions import Precondition

__all__ = ["ReadLog", "RecordingStore", "ReplayedStore", "term", "text"]

_TYPE = RDF.type  # rdflib answers RDF.type through a metaclass __getattr__ on each use

Entry = list[Any]


class ReadLog(Protocol):
    """Where reads are noted (live) or served from (replay): the run's environment."""

    def note(self, kind: str, value: Any) -> Any: ...


class RecordedReads(Protocol):
    """A replay's source of recorded reads: those of the event the runner works towards."""

    def take_where(self, kind: str, match: Callable[[Any], bool]) -> Any | None: ...

    def note(self, kind: str, value: Any) -> Any: ...


# -- terms ------------------------------------------------------------------------------


def text(node: Node) -> str:
    """``node`` as a compact N-Triples-like string (a JSON string escapes it)."""
    kind = type(node)  # most terms: one comparison (a miss of rdflib's isinstance is ~0.5 µs)
    if kind is URIRef:
        return f"<{node}>"
    if kind is Literal:
        return _literal_text(cast(Literal, node))
    if isinstance(node, URIRef):
        return f"<{node}>"
    if isinstance(node, Literal):
        return _literal_text(node)
    return f"_:{node}"


def _literal_text(node: Literal) -> str:
    """A literal as :func:`text` writes it."""
    if node.language:
        return f'"{node}"@{node.language}'
    if node.datatype is not None:
        return f'"{node}"^^<{node.datatype}>'
    return f'"{node}"'


@lru_cache(maxsize=8192)  # terms recur (predicates, classes); ids and times do not
def term(value: str) -> Node:
    """The term :func:`text` wrote."""
    if value.startswith("<"):
        return URIRef(value[1:-1])
    if value.startswith("_:"):
        return BNode(value[2:])
    end = value.rfind('"')
    lexical, rest = value[1:end], value[end + 1 :]
    if rest.startswith("@"):
        return Literal(lexical, lang=rest[1:])
    if rest.startswith("^^<"):
        return Literal(lexical, datatype=URIRef(rest[3:-1]))
    return Literal(lexical)


@lru_cache(maxsize=4096)
def query_id(query: str) -> str:
    """A short stable name for a query's text: a read notes it instead of the text, which each
    step would otherwise repeat."""
    return hashlib.sha256(query.encode()).hexdigest()[:12]


@lru_cache(maxsize=256)
def _texts(nodes: frozenset[Node]) -> tuple[str, ...]:
    """Predicates a read was limited to, in one order whatever the set's. The gate limits a
    subject's reads to one set per tool and class (the same object every step, its hash
    kept by the set), so each is written and sorted once; a read notes a list of them."""
    return tuple(sorted(text(n) for n in nodes))


def _bound(bindings: Mapping[str, Node], names: Iterable[str] | None) -> dict[str, str]:
    """The bound values of ``names`` (sorted; None: every bound variable, sorted)."""
    if names is None:
        return {k: text(v) for k, v in sorted(bindings.items())}
    return {k: text(bindings[k]) for k in names if k in bindings}


def _rows(rows: list[dict[str, Node]], bindings: Mapping[str, Node]) -> list[dict[str, str]]:
    return [{k: text(v) for k, v in row.items() if k not in bindings} for row in rows]


def _solutions(
    rows: list[dict[str, str]],
    bindings: Mapping[str, Node],
) -> list[dict[str, Node]]:
    out = []
    for row in rows:
        sol = dict(bindings)
        sol.update({k: term(v) for k, v in row.items()})
        out.append(sol)
    return out


# -- live: ask the store, note the answer -------------------------------------------------


class RecordingStore(WrappedStore):
    """``inner`` as a run reads it: every answer is noted in the run's trace."""

    def __init__(
        self, inner: Store, log: ReadLog, types_of: Callable[[Node], set[Node]] | None = None
    ) -> None:
        super().__init__(inner)
        self.log = log
        self._types_of = types_of

    def solutions(
        self, pre: Precondition, bindings: Mapping[str, Node], _ahead: ReadAhead | None = None
    ) -> list[dict[str, Node]]:
        # what ``_ahead`` fetches is noted as the reads it answers are made
        rows = self.inner.solutions(pre, bindings, _ahead)
        self.log.note(
            "reads",
            [
                "s",
                query_id(pre.select_text),
                _bound(bindings, pre.projected),
                _rows(rows, bindings),
            ],
        )
        return rows

    def failing(self, pre: Precondition, bindings: Mapping[str, Node]) -> str:
        found = self.inner.failing(pre, bindings)
        self.log.note(
            "reads", ["f", query_id(pre.select_text), _bound(bindings, pre.projected), found]
        )
        return found

    def select(
        self,
        query: str,
        bindings: Mapping[str, Node],
        ns: Mapping[str, str],
    ) -> list[dict[str, Node]]:
        rows = self.inner.select(query, bindings, ns)
        self.log.note("reads", ["q", query_id(query), _bound(bindings, None), _rows(rows, {})])
        return rows

    def objects(self, subject: Node, predicate: Node) -> Iterator[Node]:
        found = list(self.inner.objects(subject, predicate))
        self.log.note("reads", ["o", text(subject), text(predicate), [text(o) for o in found]])
        return iter(found)

    def noted(self, subject: Node, predicate: Node) -> list[Node]:
        """Noted as any ``o`` read is: a replay answers it from the recording."""
        return list(self.objects(subject, predicate))

    def outgoing(
        self, subject: Node, predicates: frozenset[Node] | None = None
    ) -> Iterator[tuple[Node, Node, Node]]:
        found = list(self.inner.outgoing(subject, predicates))
        edges = [[text(p), text(o)] for _, p, o in found]
        if predicates is None:
            self.log.note("reads", ["g", text(subject), edges])
        else:
            self.log.note("reads", ["g", text(subject), list(_texts(predicates)), edges])
        return iter(found)

    def types(self, node: Node) -> set[Node]:
        """``node``'s types: asserted, or entailed when the run was given ``types_of``."""
        found = (
            self._types_of(node)
            if self._types_of is not None
            else set(self.inner.objects(node, _TYPE))
        )
        self.log.note("reads", ["t", text(node), sorted(text(t) for t in found)])
        return found

    def apply(self, change: Change) -> Digest:
        try:
            delta = self.inner.apply(change)
            self.log.note("reads", ["c"])
            return delta
        except Conflict as e:
            found = [i for i, q in enumerate(change.absent) if q in e.present]
            self.log.note("reads", ["c!", "conflict", *([found] if found else [])])
            raise
        except LeaseLost as e:
            self.log.note("reads", ["c!", "lease", str(e)])
            raise


# -- replay: answer from the recording ------------------------------------------------------


class ReplayedStore(Store):
    """The world as a replay sees it: the recorded answers, served in the recorded order.

    ``diverge(recorded, now)`` builds the error raised when the run asks something other than
    what was recorded at this point (the replay's :class:`~horismos.Divergence`). Commits land
    nowhere: a replay has no world to change, only decisions to compare.
    """

    name = "replay"

    def __init__(self, recorded: RecordedReads, diverge: Callable[[Any, Any], Exception]) -> None:
        self.recorded = recorded
        self._diverge = diverge
        # a node's whole triples, as a trace recorded before the gate read only what its
        # shapes name: what this step's narrower reads of it are answered from
        self._whole: dict[str, list[list[str]]] = {}

    def _answer(self, key: Entry) -> Any:
        found = self._take(key)
        if found is None:
            raise self._diverge(None, [*key, "…"])
        return found

    def _take(self, key: Entry) -> Any | None:
        # matched by what is asked, not by position: a set's order differs between processes
        n = len(key)
        entry = self.recorded.take_where("reads", lambda e: len(e) == n + 1 and e[:n] == key)
        if entry is None:
            return None
        self.recorded.note("reads", entry)
        return entry[n]

    def solutions(
        self, pre: Precondition, bindings: Mapping[str, Node], _ahead: ReadAhead | None = None
    ) -> list[dict[str, Node]]:
        rows = self._answer(["s", query_id(pre.select_text), _bound(bindings, pre.projected)])
        return _solutions(rows, bindings)

    def failing(self, pre: Precondition, bindings: Mapping[str, Node]) -> str:
        return str(self._answer(["f", query_id(pre.select_text), _bound(bindings, pre.projected)]))

    def select(
        self,
        query: str,
        bindings: Mapping[str, Node],
        ns: Mapping[str, str],
    ) -> list[dict[str, Node]]:
        return _solutions(self._answer(["q", query_id(query), _bound(bindings, None)]), {})

    def objects(self, subject: Node, predicate: Node) -> Iterator[Node]:
        return iter([term(o) for o in self._answer(["o", text(subject), text(predicate)])])

    def noted(self, subject: Node, predicate: Node) -> list[Node]:
        """The recorded answer, or none: a trace recorded before the value was read (the
        event it goes into then differs from the recorded one only by a member the recording
        lacks, which is not compared)."""
        found = self._take(["o", text(subject), text(predicate)])
        return [term(o) for o in found] if isinstance(found, list) else []

    def outgoing(
        self, subject: Node, predicates: frozenset[Node] | None = None
    ) -> Iterator[tuple[Node, Node, Node]]:
        node = text(subject)
        if predicates is None:
            edges = self._answer(["g", node])
        else:
            wanted = list(_texts(predicates))
            edges = self._take(["g", node, wanted])
            if edges is None:  # an older trace read the whole node: its read, narrowed
                whole = self._take(["g", node])
                if whole is not None:
                    self._whole[node] = whole
                elif node not in self._whole:
                    raise self._diverge(None, ["g", node, wanted, "…"])
                keep = set(wanted)
                edges = [e for e in self._whole[node] if e[0] in keep]
        return iter([(subject, term(p), term(o)) for p, o in edges])

    def types(self, node: Node) -> set[Node]:
        return {term(t) for t in self._answer(["t", text(node)])}

    def apply(self, change: Change) -> Digest:
        """The commit lands nowhere; it fails where the recorded one failed (commits are
        matched in their order)."""
        self._whole.clear()  # a step's reads end with its commit
        entry = self.recorded.take_where("reads", lambda e: e[0] in ("c", "c!"))
        if entry is None:
            raise self._diverge(None, ["c", "…"])
        self.recorded.note("reads", entry)
        if entry[0] == "c":
            return ZERO
        if entry[1] == "lease":
            raise LeaseLost(str(entry[2]))
        found = entry[2] if len(entry) > 2 else []
        if any(not isinstance(i, int) or not 0 <= i < len(change.absent) for i in found):
            raise self._diverge(entry, ["c!", "conflict", "…"])  # the definitions changed
        present = tuple(change.absent[i] for i in found)
        raise Conflict(
            "another writer changed the instance first (as recorded)",
            expected=change.expect,
            present=present,
        )
