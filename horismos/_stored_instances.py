"""Instances as the world stores them: their state read back, found by focus or short id.

An instance's workflow, focus, current step, version, variables and status live in the
world's instances graph, so any process can read what another left: a resume, a wake, a
rerun that continues what a killed run left, ``instances``. What is read here is what every
lane reads; what a wait does with it is :mod:`._waits`'s.
"""

from __future__ import annotations

import datetime as dt
import re
import typing
from dataclasses import dataclass, field
from typing import cast

from rdflib import RDFS, Literal, URIRef
from rdflib.term import Node

from ._errors import UsageError, stored_failure
from ._literals import plain_literal
from ._records import InstanceRun
from ._stores import RUNTIME, Store, StoreError
from ._stores.base import INSTANCE, QueryRefused
from ._vocab import HORIS, NS, PROV
from ._world import (
    INDEXED_EVERY_INSTANCE,
    INSTANCES,
    SHORT_IDS,
    indexes_every_instance,
)

__all__ = [
    "OpenWait",
    "StoredInstance",
    "batch_left",
    "find_instance",
    "finished_foci",
    "instance_for",
    "open_wait",
    "read_instance",
    "short_id",
    "short_id_quad",
    "unfinished",
]

_NS = {"horis": NS, "prov": str(PROV), "rdfs": str(RDFS)}
_STATUS = {
    HORIS.Running: "running",
    HORIS.Completed: "completed",
    HORIS.Waiting: "waiting",
    HORIS.Blocked: "blocked",
    HORIS.Failed: "failed",
}


@dataclass(frozen=True)
class StoredInstance:
    """A workflow instance as the world graph holds it."""

    instance: URIRef
    workflow: URIRef
    focus: URIRef
    status: str
    current: URIRef | None
    version: int
    variables: dict[str, Node] = field(default_factory=dict)
    blocked_by: str | None = None
    error: str | None = None
    blocked_at: Literal | None = None
    """Since when it is blocked (``horis:blockedAt``), as stored: a continued instance's state
    is replaced by the quads it was written as."""
    error_kind: str | None = None
    """A failed instance's error's kind (``horis:errorKind``), read back as its class."""

    def instance_run(self) -> InstanceRun:
        """The instance to drive on from where it stands."""
        return InstanceRun(
            self.instance,
            self.workflow,
            self.focus,
            self.status,  # type: ignore[arg-type]
            self.current,
            variables=dict(self.variables),
        )

    def as_found(self, store: Store) -> InstanceRun:
        """The instance as a run reports one, read back instead of driven: its status, where
        it stands, why it is blocked or failed, and an open wait's brief (no steps)."""
        found = self.instance_run()
        found.error = stored_failure(self.error_kind, self.error) if self.error else None
        found.blocked_by = self.blocked_by
        if self.status == "waiting" and self.current is not None:
            wait = open_wait(store, self.instance, self.current)
            found.brief = (
                wait.brief
                if wait is not None
                else approval_brief(store, self.instance, self.current)
            )
        return found


def read_instance(store: Store, iid: URIRef) -> StoredInstance | None:
    """The stored state of ``iid``, or ``None`` when the world holds no such instance."""
    rows = store.select(
        f"""
        SELECT ?workflow ?focus ?status ?version ?current ?blocked ?blockedAt ?error ?kind
        WHERE {{
            GRAPH <{INSTANCES}> {{
            ?i horis:workflow ?workflow ; horis:focus ?focus ; horis:status ?status ;
               horis:version ?version .
            OPTIONAL {{ ?i horis:currentStep ?current }}
            OPTIONAL {{ ?i horis:blockedBy ?blocked }}
            OPTIONAL {{ ?i horis:blockedAt ?blockedAt }}
            OPTIONAL {{ ?i horis:error ?error }}
            OPTIONAL {{ ?i horis:errorKind ?kind }} }} }}""",
        {"i": iid},
        _NS,
    )
    if not rows:
        return None
    row = rows[0]
    variables: dict[str, Node] = {"this": row["focus"]}
    for v in store.select(
        f"""
            SELECT ?name ?value WHERE {{ GRAPH <{INSTANCES}> {{
                ?i horis:variable ?v . ?v horis:name ?name ; horis:value ?value }} }}""",
        {"i": iid},
        _NS,
    ):
        variables[str(v["name"])] = v["value"]
    current = row.get("current")
    return StoredInstance(
        iid,
        row["workflow"],  # type: ignore[arg-type]
        row["focus"],  # type: ignore[arg-type]
        _STATUS.get(cast(URIRef, row["status"]), str(row["status"])),
        current if isinstance(current, URIRef) else None,
        int(cast(Literal, row["version"]).toPython()),
        variables,
        str(row["blocked"]) if "blocked" in row else None,
        str(row["error"]) if "error" in row else None,
        cast(Literal, row["blockedAt"]) if "blockedAt" in row else None,
        str(row["kind"]) if "kind" in row else None,
    )


def unfinished(
    store: Store,
    workflow: URIRef,
    foci: list[URIRef],
) -> dict[URIRef, StoredInstance]:
    """For each of ``foci``, its instance of ``workflow`` that has not finished, if any:
    running (its process died), blocked (a precondition did not hold) or waiting.

    A rerun of ``run`` on a world that outlives processes continues these rather than
    starting new ones: a running one's open intent then settles as ``OutcomeUnknown``
    instead of a second call, and a focus that stays blocked keeps one instance, not one a
    rerun. The instances read are those of the foci or the world's unfinished ones,
    whichever are fewer (:func:`_smaller_sides`)."""
    (rows,) = _smaller_sides(store, workflow, foci, (_UNFINISHED,))
    return _unfinished_of(store, foci, rows)


def finished_foci(store: Store, workflow: URIRef, foci: list[URIRef]) -> set[Node]:
    """Those of ``foci`` that have an instance of ``workflow`` that finished (completed or
    failed), which ``run --all`` leaves out: started again, a batch killed after some of its
    instances ended — or run again from its own ``--out`` — made their calls a second time. A
    shared world's ``--all`` leaves them out the same way, by its done claims (``_claims``).

    It read every finished instance of the workflow, its whole history, whatever the batch
    (10 foci beside 100,000 finished: 101,000 rows, 1.1 s in memory, seconds on disk; 21 rows
    and 0.3 ms now, bench_unfinished.py); the instances read are those of the foci or the
    world's finished ones, whichever are fewer, as :func:`unfinished` reads."""
    (rows,) = _smaller_sides(store, workflow, foci, (_FINISHED,))
    return _foci_of(foci, rows)


def batch_left(
    store: Store, workflow: URIRef, foci: list[URIRef]
) -> tuple[dict[URIRef, StoredInstance], set[Node]]:
    """What ``run --all`` asks before its batch: :func:`unfinished` and
    :func:`finished_foci` at once. Asked one after the other, each counted the foci's
    instances again to learn which side is smaller; the count is the same for both, so it
    is made once, and when the foci's side is the smaller one query reads it for both."""
    left, ended = _smaller_sides(store, workflow, foci, (_UNFINISHED, _FINISHED))
    return _unfinished_of(store, foci, left), _foci_of(foci, ended)


def _unfinished_of(
    store: Store, foci: list[URIRef], rows: list[dict[str, Node]]
) -> dict[URIRef, StoredInstance]:
    """Each of ``foci``'s first unfinished instance among ``rows``, by IRI, read whole."""
    wanted = set(foci)
    found: dict[URIRef, StoredInstance] = {}
    for r in sorted(rows, key=lambda r: str(r["i"])):
        focus = cast(URIRef, r["f"])
        if focus in wanted and focus not in found:
            stored = read_instance(store, cast(URIRef, r["i"]))
            if stored is not None:
                found[focus] = stored
    return found


def _foci_of(foci: list[URIRef], rows: list[dict[str, Node]]) -> set[Node]:
    """Those of ``foci`` among ``rows`` (rows of other foci may come from the world's side)."""
    wanted = set(foci)
    return {r["f"] for r in rows if r["f"] in wanted}


_FINISHED = (HORIS.Completed, HORIS.Failed)


def instance_for(store: Store, workflow: URIRef, focus: URIRef) -> StoredInstance | None:
    """The instance of ``workflow`` for ``focus`` a repeated request to run it is answered
    with (``run_workflow`` retried by an agent after a timeout): its unfinished one
    (:func:`unfinished`), else the one last active; None when the focus has none. One row
    reaches Python however many instances the focus has had: the store picks the last."""
    left = unfinished(store, workflow, [focus]).get(focus)
    if left is not None:
        return left
    rows = store.select(_LAST_OF_FOCUS, {"f": focus, "wf": workflow}, _NS)
    return read_instance(store, cast(URIRef, rows[0]["i"])) if rows else None


_LAST_OF_FOCUS = f"""
    SELECT ?i (MAX(?t) AS ?last) WHERE {{
        GRAPH <{INSTANCES}> {{ ?i horis:focus ?f ; horis:workflow ?wf }}
        OPTIONAL {{ ?a horis:instance ?i .
                    {{ ?a prov:startedAtTime ?t }} UNION {{ ?a prov:endedAtTime ?t }} }} }}
    GROUP BY ?i ?f ?wf ORDER BY DESC(?last) DESC(?i) LIMIT 1"""
"""Grouped by the bound ?f and ?wf too: a store that substitutes them projects them."""

_UNFINISHED = (HORIS.Running, HORIS.Blocked, HORIS.Waiting)


def _by_status(statuses: tuple[URIRef, ...]) -> str:
    """The instances of one workflow (``?wf``, bound) in ``statuses``, each status's first
    (an index range each): the workflow is asked of the store, not of each row handed to
    Python, which read every unfinished instance of every workflow (100,000 waiting
    elsewhere: 2 s a ``run --all`` on disk)."""
    each = " UNION ".join(
        f"{{ ?i horis:status <{s}> ; horis:workflow ?wf ; horis:focus ?f }}" for s in statuses
    )
    return f"SELECT ?i ?f WHERE {{ GRAPH <{INSTANCES}> {{ {each} }} }}"


def _of_foci(values: str, statuses: tuple[URIRef, ...]) -> str:
    """The instances in ``statuses`` of some foci (``values``, their IRIs) and one workflow,
    with their status, the foci leading (a ``VALUES`` block of the statuses would be joined
    first: every such instance of the world). Inside the graph: outside it, Oxigraph 0.5
    took 730 ms for 1,000 foci where this takes 5. (A ``FILTER EXISTS`` a focus took 29 s
    there for 1,000.)"""
    among = ", ".join(f"<{s}>" for s in statuses)
    return f"""
    SELECT ?i ?f ?s WHERE {{ GRAPH <{INSTANCES}> {{ VALUES ?f {{ {values} }}
        ?i horis:focus ?f ; horis:workflow ?wf ; horis:status ?s .
        FILTER (?s IN ({among})) }} }}"""


def _counted(statuses: tuple[URIRef, ...]) -> str:
    """The world's instances in ``statuses``, of any workflow: ids only, read to a bound (a
    row of ids costs a quarter of one of three terms)."""
    each = " UNION ".join(f"{{ ?i horis:status <{s}> }}" for s in statuses)
    return f"SELECT ?i WHERE {{ GRAPH <{INSTANCES}> {{ {each} }} }}"


_OF_THE_FOCI = (
    f"SELECT ?i WHERE {{ GRAPH <{INSTANCES}> {{ VALUES ?f {{ %s }} ?i horis:focus ?f }} }}"
)
"""How many instances the foci have, ids only, read to a bound."""

_PROBE = 64
"""Ids each side is counted to before the other is (times 8 each round)."""


def _smaller_sides(
    store: Store,
    workflow: URIRef,
    foci: list[URIRef],
    groups: tuple[tuple[URIRef, ...], ...],
) -> list[list[dict[str, Node]]]:
    """For each group of statuses, the instances of ``workflow`` in it for ``foci`` (rows of
    ``i`` and ``f``; read from the world's instances in those statuses, rows of other foci
    may come too).

    Neither side is small in every world: a focus that has run once per event for years has
    thousands of finished instances (5,000: a run on disk 11 -> 88 ms, nearly all of it
    reading them), and a world where people answer slowly holds thousands waiting (9,000: 77
    ms a run while the waiting were read first). Oxigraph cannot tell which is smaller, so
    each side is counted up to a bound in turn until one ends within it, and that one is
    read: the cost is that of the smaller side, a few times over at most. The foci's side is
    the same for every group: counted once a round, and read once for the groups left."""
    if not foci:  # a world with no node of the focus type: rdflib's parser takes
        return [[] for _ in groups]  # ``VALUES ?f { }`` for a list, and raised on it
    values = " ".join(f.n3() for f in foci)
    answers: list[list[dict[str, Node]] | None] = [None] * len(groups)
    limit = _PROBE
    while True:
        left = [k for k, answer in enumerate(answers) if answer is None]
        if not left:
            return cast(list[list[dict[str, Node]]], answers)
        rows: list[dict[str, Node]] | None = None  # the foci's, when their side ended
        try:
            if len(store.select(f"{_OF_THE_FOCI % values} LIMIT {limit}", {}, _NS)) < limit:
                wanted = tuple(s for k in left for s in groups[k])
                rows = store.select(_of_foci(values, wanted), {"wf": workflow}, _NS)
            refused = False
        except QueryRefused:  # a focus IRI only rdflib takes (two '#') cannot be query text
            refused = True
        for k in left:
            if rows is not None:
                answers[k] = [r for r in rows if r["s"] in groups[k]]
            elif (
                refused
                or len(store.select(f"{_counted(groups[k])} LIMIT {limit}", {}, _NS)) < limit
            ):
                answers[k] = store.select(_by_status(groups[k]), {"wf": workflow}, _NS)
        limit *= 8


def find_instance(store: Store, text: str, verb: str = "resume") -> URIRef:
    """An instance IRI from its IRI or from the short id a run prints (a unique prefix);
    ``verb``, what the command would do with it, for the message when the world has none.

    A short id of the length a run prints, or longer, is looked up in the index each
    instance is written into at its creation (:func:`short_id_quad`): one index range however
    many instances the world holds. One the index does not hold names no instance once the
    store says its index holds every instance; until then (instances written before the index,
    or loaded from a file, which holds no runtime graph) the first such miss on a store that
    outlives the process files every instance under its short id and says so
    (:func:`_index_every_instance`), once. A shorter id, or one on another store, is looked
    for among every instance's id, by the store, two at most."""
    if ":" in text:
        return URIRef(text.strip("<>"))
    found = []
    if _SHORT_ID.fullmatch(text):  # else no instance id starts so (and nothing is quoted)
        indexed = len(text) >= SHORT_LENGTH
        found = _indexed(store, text) if indexed else []
        index = _index_every_instance(store) if not found and indexed else None
        if index == "filed now":  # asked again of the index; "held" answered it already
            found = _indexed(store, text)
        elif not found and index is None:
            rows = store.select(
                f"SELECT ?i WHERE {{ GRAPH <{INSTANCES}> {{ ?i a horis:Instance }} "
                f'FILTER(STRSTARTS(STR(?i), "{INSTANCE}{text}")) }} LIMIT 2',
                {},
                _NS,
            )
            found = [r["i"] for r in rows]
    if len(found) == 1:
        return found[0]  # type: ignore[return-value]
    if not found and not store.select(
        f"SELECT ?i WHERE {{ GRAPH <{INSTANCES}> {{ ?i a horis:Instance }} }} LIMIT 1", {}, _NS
    ):
        raise UsageError(
            f"this world holds no workflow instances, so there is none to {verb}; "
            "give the world the run committed to (the same --store, or the run's "
            "--out as --world)"
        )
    if not found:
        raise UsageError(
            f"no instance in this world with the id {text!r}: ids are new on every run; give "
            "the one the run printed in [brackets], or list the world's instances with: "
            "horismos instances --world F (or --store S) --status waiting"
        )
    raise UsageError(
        f"more than one instance in this world with the id {text!r}; give the instance IRI "
        "(urn:horismos:instance:…) as the run's brief or trace shows it"
    )


def short_id(instance: URIRef) -> str:
    """An instance's id as a run prints it: short enough to type."""
    return str(instance).rsplit(":", 1)[-1][:SHORT_LENGTH]


def short_id_quad(instance: URIRef) -> tuple[URIRef, URIRef, Literal, URIRef]:
    """What an instance's creation writes so its short id is found by an index look-up: in a
    runtime graph, so the world's digest, its export and a replay's comparison do not see it.

    Finding a prefix among the instance IRIs reads every one of them: Oxigraph keys an IRI by
    a hash of its text, so no prefix of one is a range of keys (100,000 instances on disk:
    ~0.8 s a ``resume SHORTID``, benchmarks/bench_short_id.py). The literal is rdflib's own,
    built without its general constructor (every instance writes one)."""
    return (instance, _SHORT_ID_OF, plain_literal(short_id(instance)), SHORT_IDS)


def _index_every_instance(store: Store) -> typing.Literal["held", "filed now"] | None:
    """Whether the store's short-id index holds every instance: ``"held"`` by the store
    already (a miss is then a miss), ``"filed now"``, once — one update of the store's own
    that files each instance not filed yet under its short id and says the index holds them
    all (a runtime graph: the digest does not see it).
    Every instance's id was read at every short id no instance has (the error path of
    ``resume``/``approve``: 0.8 s on disk beside 100,000, bench_short_id.py).

    The filing costs about ten reads of the ids where none is filed, two or three where all
    are (each is filed at its creation; inserting a quad held costs as much as a new one), so
    a store that does not outlive the process is not filed: every process reading a world
    from a file would pay it. Nor is one that takes no writes (``oxigraph serve-read-only``
    behind ``sparql:``). On those the ids are read, as before: None."""
    if indexes_every_instance(store):
        return "held"
    if not store.persistent:  # each process would index anew (a world read from a file)
        return None
    s, p, o, g = INDEXED_EVERY_INSTANCE
    try:
        store.update(
            f"""INSERT {{ GRAPH <{SHORT_IDS}> {{ ?i <{_SHORT_ID_OF}> ?short }} }}
            WHERE {{ GRAPH <{INSTANCES}> {{ ?i a <{HORIS.Instance}> }}
                FILTER NOT EXISTS {{ GRAPH <{SHORT_IDS}> {{ ?i <{_SHORT_ID_OF}> ?filed }} }}
                BIND (SUBSTR(REPLACE(STR(?i), "^.*:", ""), 1, {SHORT_LENGTH}) AS ?short) }} ;
            INSERT DATA {{ GRAPH <{g}> {{ <{s}> <{p}> <{o}> }} }}""",
            runtime_only=True,
        )
    except StoreError:  # every look-up reads the ids, as before the index
        return None
    return "filed now"


def _indexed(store: Store, text: str) -> list[Node]:
    """The instances whose id starts with ``text`` among those the index files under its
    first :data:`SHORT_LENGTH` characters (a few at most), two at most."""
    rows = store.select(
        f"SELECT ?i WHERE {{ GRAPH <{SHORT_IDS}> {{ ?i <{_SHORT_ID_OF}> ?short }} }}",
        {"short": Literal(text[:SHORT_LENGTH])},
        _NS,
    )
    return [r["i"] for r in rows if str(r["i"]).startswith(INSTANCE + text)][:2]


_SHORT_ID = re.compile(r"[0-9A-Za-z_-]+")
"""What an instance's id is written with (the hex of a UUID; a replay's own ids too)."""

SHORT_LENGTH = 8
"""The characters of an instance's id a run prints, and the index files it under."""

_SHORT_ID_OF = URIRef(RUNTIME + "shortId")


@dataclass(frozen=True)
class OpenWait:
    """A wait begun and not ended, read back from the world: all a resumed instance, maybe in
    another process, needs to settle it (when it began, its graph, its brief)."""

    activity: URIRef
    graph: URIRef
    started: dt.datetime
    brief: str | None


def approval_brief(store: Store, iid: URIRef, step: URIRef) -> str | None:
    """The brief of the latest approval the instance's action ``step`` asked for (what its
    run answered: the payloads, their fingerprints, how to approve), or None. A request
    asked again found it waiting with no brief (:func:`open_wait` reads a wait step's): an
    event delivered again, or an agent's ``run_workflow`` asked again, could not be told
    which fingerprint to approve."""
    rows = store.select(
        """
        SELECT ?started ?brief WHERE {
            ?a horis:instance ?i ; horis:step ?s ; prov:startedAtTime ?started ;
               horis:brief ?brief .
            ?g prov:wasGeneratedBy ?a .
            FILTER (STRSTARTS(STR(?g), "urn:horismos:approval:")) }""",
        {"i": iid, "s": step},
        _NS,
    )
    if not rows:
        return None
    return str(max(rows, key=lambda r: str(r["started"]))["brief"])


def open_wait(store: Store, iid: URIRef, step: URIRef) -> OpenWait | None:
    """The instance's wait at ``step`` not ended yet (the latest, if several), read from the
    instance in the union of the graphs: its graph is the one its activity generated."""
    rows = store.select(
        """
        SELECT ?a ?g ?started ?brief WHERE {
            ?a horis:instance ?i ; horis:step ?s ; prov:startedAtTime ?started ;
               a horis:StepExecution .
            ?g prov:wasGeneratedBy ?a .
            FILTER (STRSTARTS(STR(?g), "urn:horismos:wait:"))
            OPTIONAL { ?a horis:brief ?brief }
            FILTER NOT EXISTS { ?a prov:endedAtTime ?ended } }""",
        {"i": iid, "s": step},
        _NS,
    )
    if not rows:
        return None
    row = max(rows, key=lambda r: str(r["started"]))
    brief = row.get("brief")
    return OpenWait(
        row["a"],  # type: ignore[arg-type]
        row["g"],  # type: ignore[arg-type]
        dt.datetime.fromisoformat(str(row["started"])),
        str(brief) if brief is not None else None,
    )
