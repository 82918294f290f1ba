"""Wait steps: an instance stops until the world answers, and resumes — maybe in another process.

Entering a :class:`~horismos._model.WaitStep`:

- if its ``horis:until`` pattern already holds, the instance does not wait and moves on;
- otherwise the wait begins: an activity in a named graph of its own records when it began and,
  with ``horis:delivery horis:Final``, the brief published for the operator; it is committed
  with the instance's new state (``horis:Waiting``) in one change, then traced.

Resuming (:func:`prepare` checks, :meth:`Runner.resume_instance` lands and continues):

1. the instance's state — workflow, focus, current step, version, variables — is read back from
   the world graph, so a fresh process can resume what another one left waiting;
2. the answering facts are checked like a person's input: the domain shapes that target each
   node they touch must still hold (the gate's SHACL path), and they may not write runtime
   state; a violation raises and nothing changes;
3. the facts land in their own named graph (provenance: human), then the wait is settled: past
   its ``horis:timeout`` (the runtime clock against the recorded start) it continues at
   ``horis:onTimeout`` (else ``horis:next``); when ``horis:until`` holds, or the wait declares
   none, at ``horis:next``; otherwise it keeps waiting.
"""

from __future__ import annotations

import datetime as dt
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from rdflib import RDF, RDFS, XSD, BNode, Graph, Literal, URIRef
from rdflib.term import Node
from rdflib.util import from_n3

from ._activities import activity_graph
from ._definitions_model import Definitions
from ._errors import GateRejected, RunError, ShaclMessage, UsageError
from ._gate import Gate
from ._literals import plain_literal
from ._model import ActionStep, Step, WaitStep
from ._near_names import closest_term
from ._proposal import check_answer
from ._records import InstanceRun, StepRecord
from ._stores import RUNTIME, Change, Conflict, Store, StoreError
from ._stores.base import QueryRefused
from ._turtle_syntax import parser_reason
from ._vocab import HORIS, NS, PROV
from ._world import (
    INDEXED_EVERY_INSTANCE,
    INSTANCES,
    SHORT_IDS,
    World,
    indexes_every_instance,
    states,
)

__all__ = [
    "StoredInstance",
    "WaitContext",
    "Waiting",
    "batch_left",
    "find_instance",
    "finished_foci",
    "instance_for",
    "open_wait",
    "parse_facts",
    "prepare",
    "read_instance",
    "short_id",
    "short_id_quad",
    "summary",
    "unfinished",
    "wait_step",
]

_NS = {"horis": NS, "prov": str(PROV), "rdfs": str(RDFS)}
_STATUS = {
    HORIS.Running: "running",
    HORIS.Completed: "completed",
    HORIS.Waiting: "waiting",
    HORIS.Blocked: "blocked",
    HORIS.Failed: "failed",
}


class Clock(Protocol):
    """Where a wait's time and ids come from: the runner's environment, live or replayed."""

    def now(self) -> dt.datetime: ...
    def new_id(self) -> str: ...


class WaitContext(Protocol):
    """What a wait step and a resume read from the runner that drives them. The runner passes
    itself; this module never imports it, so step kinds sit below the runner."""

    @property
    def defs(self) -> Definitions: ...
    @property
    def store(self) -> Store: ...
    @property
    def world(self) -> World: ...
    @property
    def env(self) -> Clock: ...


# -- instance state, read back from the graph -------------------------------------------------


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
        found.error = RunError(self.error) if self.error else None
        found.blocked_by = self.blocked_by
        if self.status == "waiting" and self.current is not None:
            wait = open_wait(store, self.instance, self.current)
            found.brief = wait.brief if wait is not None else None
        return found


def read_instance(store: Store, iid: URIRef) -> StoredInstance | None:
    """The stored state of ``iid``, or ``None`` when the world holds no such instance."""
    rows = store.select(
        f"""
        SELECT ?workflow ?focus ?status ?version ?current ?blocked ?blockedAt ?error WHERE {{
            GRAPH <{INSTANCES}> {{
            ?i horis:workflow ?workflow ; horis:focus ?focus ; horis:status ?status ;
               horis:version ?version .
            OPTIONAL {{ ?i horis:currentStep ?current }}
            OPTIONAL {{ ?i horis:blockedBy ?blocked }}
            OPTIONAL {{ ?i horis:blockedAt ?blockedAt }}
            OPTIONAL {{ ?i horis:error ?error }} }} }}""",
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
                f'FILTER(STRSTARTS(STR(?i), "{_INSTANCE_PREFIX}{text}")) }} LIMIT 2',
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
    return [r["i"] for r in rows if str(r["i"]).startswith(_INSTANCE_PREFIX + text)][:2]


_INSTANCE_PREFIX = "urn:horismos:instance:"
_SHORT_ID = re.compile(r"[0-9A-Za-z_-]+")
"""What an instance's id is written with (the hex of a UUID; a replay's own ids too)."""

SHORT_LENGTH = 8
"""The characters of an instance's id a run prints, and the index files it under."""

_SHORT_ID_OF = URIRef(RUNTIME + "shortId")


# -- the step --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _OpenWait:
    """A wait begun and not ended, read back from the world: all a resumed instance, maybe in
    another process, needs to settle it (when it began, its graph, its brief)."""

    activity: URIRef
    graph: URIRef
    started: dt.datetime
    brief: str | None


def wait_step(
    runner: WaitContext,
    inst: InstanceRun,
    step: WaitStep,
    variables: dict[str, Node],
) -> tuple[StepRecord, URIRef | None, list[tuple]]:
    """Begin the wait, or — for an instance resumed at it — settle it."""
    rec = StepRecord(step.iri, "WaitStep", "completed", inst.instance)
    detail: dict[str, Any] = {
        "reason": step.reason,
        "wake": sorted(str(w) for w in step.wake),
        "delivery": str(step.delivery) if step.delivery else None,
        "until": _until_text(step),
        "timeout": step.timeout,
    }
    rec.detail["wait"] = detail
    begun = open_wait(runner.store, inst.instance, step.iri)
    if begun is not None:
        return _settle(runner, step, variables, rec, detail, begun)
    if step.until is not None and runner.store.solutions(step.until, variables):
        detail["outcome"] = "until_held"
        return rec, step.next, []
    started = runner.env.now()
    wid = runner.env.new_id()
    graph = URIRef(f"urn:horismos:wait:{wid}")
    activity = URIRef(f"urn:horismos:activity:{wid}")
    brief = compose_brief(runner, inst, step, variables) if step.delivery == HORIS.Final else None
    detail.update(outcome="waiting", started=started.isoformat(), brief=brief)
    rec.status, rec.brief, rec.graph = "waiting", brief, graph
    triples = activity_graph(
        graph,
        activity,
        step.iri,
        inst.instance,
        HORIS.SystemProvenance,
        f"{step.iri.fragment or step.iri} waits",
        _time(started),
    )
    if step.reason:
        triples.append((activity, HORIS.reason, Literal(step.reason)))
    if brief:
        triples.append((activity, HORIS.brief, Literal(brief)))
    return rec, None, [(s, p, o, graph) for s, p, o in triples]


def _settle(
    runner: WaitContext,
    step: WaitStep,
    variables: dict[str, Node],
    rec: StepRecord,
    detail: dict[str, Any],
    wait: _OpenWait,
) -> tuple[StepRecord, URIRef | None, list[tuple]]:
    now = runner.env.now()
    detail.update(started=wait.started.isoformat(), resumed=now.isoformat())
    rec.graph = wait.graph
    close = [(wait.activity, PROV.endedAtTime, _time(now), wait.graph)]
    if step.timeout is not None and (now - wait.started).total_seconds() >= step.timeout:
        detail["outcome"] = "timed_out"
        rec.status = "timed_out"
        return rec, step.on_timeout or step.next, close
    if step.until is None or runner.store.solutions(step.until, variables):
        detail["outcome"] = "ended"
        return rec, step.next, close
    detail.update(outcome="still_waiting", brief=wait.brief)
    rec.status, rec.brief = "waiting", wait.brief
    return rec, None, []


def open_wait(store: Store, iid: URIRef, step: URIRef) -> _OpenWait | None:
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
    return _OpenWait(
        row["a"],  # type: ignore[arg-type]
        row["g"],  # type: ignore[arg-type]
        dt.datetime.fromisoformat(str(row["started"])),
        str(brief) if brief is not None else None,
    )


def compose_brief(
    runner: WaitContext, inst: InstanceRun, step: WaitStep, variables: dict[str, Node]
) -> str:
    """What the operator is told: why, about what, what was proposed, how to answer."""
    n = runner.defs.name
    focus = variables["this"]
    label = next(iter(sorted(str(v) for v in runner.store.objects(focus, RDFS.label))), "")
    lines = [
        step.reason or f"{n(step.iri)} waits for the world to change.",
        f"Instance {inst.instance} ({n(inst.workflow)} for {n(focus)}"
        f"{' — ' + label if label else ''}) waits at {n(step.iri)}.",
    ]
    proposal = next(
        (r.detail["proposal"] for r in reversed(inst.steps) if "proposal" in r.detail), None
    )
    if proposal is not None:
        lines += _proposal_lines(runner.defs, proposal)
    if step.until is not None:
        lines.append(f"It continues when this holds: {_until_text(step)}")
    if step.timeout is not None:
        target = step.on_timeout or step.next
        lines.append(
            f"Without an answer within {_duration(step.timeout)} it continues at "
            f"{n(target) if target else 'the end'}."
        )
    lines.append(f"Answer with: horismos resume … --instance {inst.instance} --facts '<Turtle>'")
    return "\n".join(lines)


def _proposal_lines(defs: Definitions, proposal: dict[str, Any]) -> list[str]:
    labels = {c["node"]: c["label"] for c in proposal.get("candidates", ())}
    ranking = proposal.get("ranking")
    lines = []
    if proposal.get("message"):
        lines.append(f"The proposal did not decide: {proposal['message']}.")
    if ranking:
        lines.append(f"{proposal['model']} ranked (confidence {proposal['confidence']:g}):")
        for i, node in enumerate(ranking, 1):
            term = from_n3(node)
            name = defs.name(term) if isinstance(term, URIRef) else node
            lines.append(f"  {i}. {name}" + (f" — {labels[node]}" if labels.get(node) else ""))
    elif proposal.get("candidates"):
        lines.append(
            "Candidates: "
            + ", ".join(defs.name(from_n3(c["node"])) for c in proposal["candidates"])  # type: ignore[arg-type]
        )
    return lines


def _until_text(step: WaitStep) -> str | None:
    if step.until is None:
        return None
    return " ".join(" ".join(p.text.split()) for p in step.until.patterns)


def _duration(seconds: float) -> str:
    for unit, size in (("h", 3600), ("m", 60), ("s", 1)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


def _time(value: dt.datetime) -> Literal:
    return Literal(value.isoformat(), datatype=XSD.dateTime)


# -- resuming --------------------------------------------------------------------------------


@dataclass
class Waiting:
    """An instance to resume as stored — waiting, or running when its process died — and the
    checked facts that answer its wait; nothing written yet."""

    stored: StoredInstance
    step: Step
    facts: list[tuple[Node, Node, Node]]

    @property
    def version(self) -> int:
        return self.stored.version

    @property
    def workflow(self) -> URIRef:
        return self.stored.workflow

    @property
    def focus(self) -> URIRef:
        return self.stored.focus

    def instance_run(self) -> InstanceRun:
        return self.stored.instance_run()

    def land(self, runner: WaitContext) -> dict[str, Any]:
        """Commit the facts in their own named graph (provenance: human); the trace fields."""
        now = read_instance(runner.store, self.stored.instance)
        if now is None or now.version != self.version or now.status != self.stored.status:
            raise UsageError(
                f"instance {self.stored.instance} changed while it was being "
                "resumed (another process resumed it); read it again"
            )
        fields: dict[str, Any] = {
            "instance": str(self.stored.instance),
            "step": str(self.step.iri),
            "status": self.stored.status,
            "version": self.version,
            "facts": sorted(_nt(t) for t in self.facts),
            "graph": None,
        }
        if not self.facts:
            return fields
        fid = runner.env.new_id()
        at = _time(runner.env.now())
        graph = URIRef(f"urn:horismos:input:{fid}")
        activity = URIRef(f"urn:horismos:activity:{fid}")
        meta = activity_graph(
            graph,
            activity,
            self.step.iri,
            self.stored.instance,
            HORIS.HumanProvenance,
            f"answer to {self.step.iri.fragment or self.step.iri}",
            at,
            at,
            kinds=(),
        )
        iid = self.stored.instance
        guard = (
            (iid, HORIS.version, Literal(self.version), INSTANCES),
            (iid, HORIS.status, HORIS.Waiting, INSTANCES),
        )
        try:  # guarded in the same update: a resume racing this one lands nothing
            runner.world.commit(
                Change(add=[(s, p, o, graph) for s, p, o in [*self.facts, *meta]], expect=guard)
            )
        except Conflict:
            raise UsageError(
                f"instance {iid} changed while it was being resumed (another "
                "process resumed it); read it again"
            ) from None
        fields["graph"] = str(graph)
        return fields


def prepare(
    defs: Definitions,
    gate: Gate,
    world: World,
    iid: URIRef,
    facts: list[tuple[Node, Node, Node]],
    types_of: Callable[[Node], set[Node]] | None = None,
) -> Waiting:
    """Check that ``iid`` can be resumed and that ``facts`` (:func:`parse_facts`' triples)
    may answer it; writes nothing.

    A waiting instance resumes with facts or without. A *running* one is an instance whose
    process stopped mid-run (a crash): on a store no other process writes, it is continued
    from its stored step, without facts. Raises :class:`UsageError` for any other instance or
    facts that write runtime state, :class:`GateRejected` for facts that break the domain
    shapes.
    """
    stored = read_instance(world.store, iid)
    if stored is None and not world.store.select(
        f"SELECT ?i WHERE {{ GRAPH <{INSTANCES}> {{ ?i a horis:Instance }} }} LIMIT 1", {}, _NS
    ):
        raise UsageError(
            "this world holds no workflow instances, so there is none to resume; "
            "give the world the run committed to (the same --store, or the run's "
            "--out as --world)"
        )
    if stored is None:
        raise UsageError(
            f"the world holds no instance {iid}; resume needs the world the run "
            "committed to (the same --store, or the --out of the run as --world)"
        )
    step = defs.steps.get(stored.current) if stored.current is not None else None
    if stored.status == "running" and step is not None and stored.workflow in defs.workflows:
        if facts:
            raise UsageError(
                f"instance {iid} is running, not waiting, so it takes no facts; "
                "resume it without facts to continue it after its process died"
            )
        if world.store.shared:
            raise UsageError(
                f"instance {iid} is running, and on a shared store another "
                "process may be driving it; `run --all` workers continue an "
                "instance whose worker's lease ran out"
            )
        return Waiting(stored, step, [])
    if stored.status == "blocked":
        # what a blocked step says to do (widen --allow, wait for a call to land) is done
        # by running its focus again, which continues it: say so, not only what resume is not
        at = f" at {defs.name(stored.current)}" if stored.current is not None else ""
        raise UsageError(
            f"instance {iid} is blocked{at}, not waiting, so there is nothing to resume; "
            f"`horismos run … --focus {defs.name(stored.focus)}` (with the --allow its "
            "step needs) continues it, checking the step's preconditions, policy and calls "
            "in flight anew"
        )
    if stored.status != "waiting":
        raise UsageError(
            f"instance {iid} is {stored.status}, not waiting; only an instance "
            "stopped at a horis:WaitStep can be resumed"
        )
    if isinstance(step, ActionStep) and stored.workflow in defs.workflows:
        if facts:  # it waits for an approval of its call (see _policy), not for the world
            raise UsageError(
                f"instance {iid} waits at {defs.name(step.iri)} for approval of "
                "its call, not for facts; record the approval with `horismos "
                "approve … --instance … --fingerprint …`, then resume without "
                "facts"
            )
        return Waiting(stored, step, [])
    if not isinstance(step, WaitStep) or stored.workflow not in defs.workflows:
        raise UsageError(
            f"instance {iid} waits at {stored.current}, which the loaded "
            "definitions do not declare as a horis:WaitStep of "
            f"{defs.name(stored.workflow)}; load the definitions it ran with"
        )
    _check_terms(defs, facts)
    _check_spelling(defs, world.store, facts)
    check_answer(
        defs,
        world.store,
        iid,
        step.iri,
        facts,  # a person picks a legal option
        types_of or (lambda n: set(world.store.objects(n, RDF.type))),
    )
    _judge(defs, gate, world.store, facts, types_of)
    return Waiting(stored, step, facts)


def parse_facts(defs: Definitions, facts: str | Graph | None) -> list[tuple[Node, Node, Node]]:
    """The triples of ``facts`` (Turtle with the definitions' prefixes declared, or a graph),
    in a fixed order; :class:`UsageError` saying where Turtle that does not parse stops."""
    if facts is None:
        return []
    if isinstance(facts, Graph):
        g = facts
    else:
        g = Graph()
        prefixes = "".join(
            f"@prefix {p}: <{ns}> .\n" for p, ns in defs.graph.namespace_manager.namespaces()
        )
        try:
            g.parse(data=prefixes + facts, format="turtle")
        except Exception as e:
            raise UsageError(
                f"the facts are not valid Turtle: {_syntax_why(prefixes, facts, e)}; "
                "write triples such as ':booking7 :operatorChoice :FL200 .' (the "
                "definitions' prefixes are declared for you)"
            ) from None
    return sorted(g, key=lambda t: tuple(x.n3() for x in t))


def _syntax_why(prefixes: str, facts: str, e: Exception) -> str:
    """Where the facts stop being Turtle, in the facts' own lines (rdflib's parser can fail
    without a position, e.g. an IndexError for a missing final '.'; pyoxigraph's says where)."""
    import pyoxigraph

    shift = prefixes.count("\n")
    try:
        for _ in pyoxigraph.parse((prefixes + facts).encode(), format=pyoxigraph.RdfFormat.TURTLE):
            pass
    except SyntaxError as oe:
        # its own position counts the prefixes put before the facts: the line is said below
        msg = parser_reason(oe)
        line = (oe.lineno or shift + 1) - shift
        text = facts.splitlines()[line - 1].strip() if 0 < line <= len(facts.splitlines()) else ""
        hint = " (each statement ends with ' .')" if "end" in msg.lower() else ""
        return f"line {line}, column {oe.offset}: {msg}{hint}" + (
            f", at: {text[:60]}" if text else ""
        )
    except Exception:
        pass
    return str(getattr(e, "_why", None) or e)


def _check_terms(defs: Definitions, triples: list[tuple[Node, Node, Node]]) -> None:
    for s, p, o in triples:
        datatype = o.datatype if isinstance(o, Literal) else None  # "…"^^horis:X too
        if any(str(t).startswith(NS) for t in (s, p, o, datatype) if isinstance(t, URIRef)) or (
            str(s).startswith("urn:horismos:")
        ):
            raise UsageError(
                f"the facts write {defs.name(s)} {defs.name(p)} {defs.name(o)}: "
                "runtime state "
                "(horis: terms, urn:horismos: nodes) is written by the runtime "
                "only; give facts about the domain"
            )


def _check_spelling(
    defs: Definitions, store: Store, triples: list[tuple[Node, Node, Node]]
) -> None:
    """A property, or a class after ``a``, that neither the definitions nor the world name,
    close to one the definitions do (``:operatorChoise`` for ``:operatorChoice``): refused
    before anything lands, with the term meant. Let through, the facts landed under a
    property nothing reads, and the instance kept waiting with nothing saying why. A new
    term with no near one is let through: the world may take terms no ontology declares."""
    written = {p for _, p, _ in triples} | {o for _, p, o in triples if p == RDF.type}
    for term in sorted((t for t in written if isinstance(t, URIRef)), key=str):
        if (
            term == RDF.type
            or _named(defs.graph, term)
            or any(states(store, term, place) for place in ("predicate", "object"))
        ):
            continue
        meant = closest_term(term, defs.nodes, cutoff=0.8)
        if meant is not None:
            raise UsageError(
                f"the facts use {defs.name(term)}, which neither the definitions nor the world "
                f"name, so nothing would read what they say of it: did you mean "
                f"{defs.name(meant)}? (nothing landed)"
            )


def _named(g: Graph, term: URIRef) -> bool:
    """Whether ``g`` writes ``term`` anywhere: as subject, predicate or object."""
    return any(t in g for t in ((term, None, None), (None, term, None), (None, None, term)))


def _judge(
    defs: Definitions,
    gate: Gate,
    store: Store,
    triples: list[tuple[Node, Node, Node]],
    types_of: Callable[[Node], set[Node]] | None,
) -> None:
    """Each node the facts touch, after them, against the domain shapes that target it."""
    asserted: dict[Node, set[Node]] = {}
    for s, p, o in triples:
        if p == RDF.type:
            asserted.setdefault(s, set()).add(o)
    world_types = types_of or (lambda n: set(store.objects(n, RDF.type)))

    def types(node: Node) -> set[Node]:
        return world_types(node) | asserted.get(node, set())

    messages: list[ShaclMessage] = []
    for subject in sorted({s for s, _, _ in triples if not isinstance(s, BNode)}, key=str):
        added = [t for t in triples if t[0] == subject]
        # what the shapes judging it name, as a step's gate reads: not the whole node
        need = gate.reads(None, subject, types(subject))
        verdict = gate.domain(subject, added, store.outgoing(subject, need), types, world=store)
        messages.extend(verdict.messages)
    if messages:
        raise GateRejected(
            "the facts break the domain shapes, so none of them landed: "
            + "; ".join(str(m) for m in messages),
            messages=tuple(messages),
        )


def _nt(t: tuple[Node, Node, Node]) -> str:
    return " ".join(x.n3() for x in t) + " ."


def summary(rec: StepRecord, name: Callable[[Node], str]) -> str:
    """One line for a wait step, as ``horismos run`` prints it; ``name`` shortens IRIs."""
    d = rec.detail.get("wait", {})
    then = f" -> {name(rec.next)}" if rec.next else ""
    outcome = d.get("outcome")
    if outcome == "waiting":
        return "waiting" + ("" if d.get("brief") else f": {d.get('reason') or 'for the world'}")
    if outcome == "still_waiting":
        return f"still waiting: this does not hold yet: {d.get('until')}"
    return {
        "until_held": "no wait: until already holds",
        "ended": "wait ended",
        "timed_out": "wait timed out",
    }.get(str(outcome), str(outcome)) + then
