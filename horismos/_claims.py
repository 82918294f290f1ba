"""Claims: processes running ``run --all`` on one shared world split its focus nodes, and no
instance runs twice — not even when a worker is killed half-way.

What the store holds, in ``urn:horismos:runtime:claims`` (bookkeeping, outside world digests)::

    <worker> c:alive true ; c:renewed "…"^^xsd:dateTime ; c:lease "PT10S"^^xsd:dayTimeDuration .
    <claim>  c:workflow <wf> ; c:focus <f> ; c:worker <worker> ; c:done true .
    <call claim> c:worker <worker> .

A catalog call's claim (:data:`CALLS`) is found by its IRI, made from its node, and holds
owners only: given back, nothing of it is left (a claim per key a call was given stayed,
two triples each, for good).

A worker joins with a lease its heartbeat thread renews (every third of ``HORISMOS_LEASE``
seconds, default 10) — times are the server's ``NOW()``, so workers on machines whose clocks
disagree still agree on who expired. Every commit a worker makes expects its ``c:alive``
triple (the *fence*), so one whose lease was taken away commits nothing more (:class:`LeaseLost`).

Oxigraph evaluates an update's ``WHERE`` on a snapshot and detects no write conflicts: two
"claim it if nobody has" updates racing on one snapshot both land (we measured 6 double wins in
680 four-way contended rounds). So a claim is never taken on the update's word:

1. *claim*: one update adds this worker as an owner of each claim of a batch that is not done
   and has no live owner; another evicts workers whose lease has expired (drops ``c:alive``);
2. *verify*: read the owners back; of the live ones, the least IRI wins; losers withdraw;
3. *decide*: a winner marks its claims decided and reads the others' marks on the same nodes;
   it keeps only those nobody else marked (:meth:`Worker._decide`). Two owners whose claims
   raced may read different owners (one's update landed after the other's read) and both
   win; of two that both mark, the later reader sees the other's mark, whatever the timing.
   Two that each see the other's both stand back, and the node is claimed again. A worker
   alone (no other is alive, none owned these claims: :meth:`Worker._owners`) marks
   nothing: a worker claims only after its lease lands, so a later one claims on a snapshot
   holding ours.

It used to be a *settle* that kept two apart: wait ``SETTLE`` seconds, longer than a small
update takes from its snapshot to its commit, then read the owners; everyone read the same.
That held only while the server was quick (with no settle: 2 double wins in 200 four-way
rounds) and cost 0.2 s a claim beside another worker. It is still waited before a claim an
evicted worker owned is read, for that worker's last commit to land.

A claim won after its owner was evicted is read (its instance, if any) only after the settle,
by when any commit the evicted worker had in flight has landed; a running instance is then
continued from its stored step and version, a stopped one is left alone. Claims are marked
done when their instance stops, and given back in the same update, so each focus node gets at
most one instance of the workflow from ``--all`` on a shared world. A queued task names its
focus, and takes a done claim again while the focus's instance is blocked, to go on with it
(``Worker.run``'s ``blocked``): the status is read in the update that claims, and again under
the claim won. The catalog's guarded
calls claim their subjects as a work of their own (:data:`CALLS`); a call and a run keep each
other off a node by reading, once their own claims have landed, the other kind's live claims
on it (:meth:`Worker._crossing`). Claiming runs one batch ahead, and batches grow until their
work outlasts the settle, so the wait overlaps work instead of adding to it; a worker that sees
no other claims a large second batch with its first and keeps batches large to the end.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import random
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, cast

from rdflib import Literal, URIRef
from rdflib.term import Node

from ._digest import Digest
from ._env_seconds import seconds_from_env
from ._errors import LeaseLost, UsageError
from ._intents import yields_to
from ._process_identity import ran_by, started_by_text
from ._records import InstanceRun
from ._stored_instances import read_instance
from ._stores import RUNTIME, Change, Conflict, Store, StoreError, open_store
from ._stores.base import CLAIM_TERMS, CLAIMS, Quad, WrappedStore
from ._vocab import NS
from ._world import INSTANCES, World

if TYPE_CHECKING:
    from ._model import Workflow
    from ._runner import Runner

__all__ = [
    "ALIVE",
    "CALLS",
    "CATALOG",
    "CLAIMS",
    "SETTLE",
    "FencedStore",
    "NotHeld",
    "Work",
    "Worker",
    "busy_here",
    "evict_expired",
    "keep_subject",
    "lease_from_env",
]

_clock: Callable[[], float] = (
    functools.partial(time.clock_gettime, time.CLOCK_BOOTTIME)
    if hasattr(time, "CLOCK_BOOTTIME")
    else time.monotonic
)
"""A clock that runs on while the machine sleeps (Linux's boot time), as the store's does."""

_LEASES = (0.1, 31_536_000.0)
"""The leases a worker may be given, in seconds: renewed every third of it (a tenth of a
second is already ten requests a second), written as an ``xsd:dayTimeDuration`` (a year)."""


def lease_from_env() -> float:
    """Seconds a worker's claims outlive its last heartbeat: ``HORISMOS_LEASE``, default 10.
    Read when a worker joins, not at import, so a mistyped value is a usage error that says
    what to write, not a traceback before the command has started."""
    return seconds_from_env(
        "HORISMOS_LEASE", 10, _LEASES, "how soon a stopped worker's claims are taken over"
    )


SETTLE = 0.2
"""Seconds between claiming and reading the claims back."""
BATCH = 8
_TRIES = 5  # a single-focus hold tried again after a tie (:meth:`Worker._decide`)
MAX_BATCH = 64

C = CLAIM_TERMS
_PREFIXES = (
    f"PREFIX c: <{C}>\nPREFIX horis: <{NS}>\nPREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"
)
ALIVE = URIRef(C + "alive")
CALLS = URIRef(RUNTIME + "catalog-call")
"""The work of the catalog's guarded calls on a shared world: a claim per subject (``_call``),
and one per idempotency key a call is given, held with it (:meth:`Worker.hold`'s ``also``).
It and a workflow keep each other off a node (:meth:`Worker._crossing`)."""


class NotHeld(UsageError):
    """A run could not hold its focus: another live run drives it now — another process's,
    holding the node's claim on a shared world (:meth:`Worker.hold`), or another run in this
    process (`horismos._driving`). Nothing was run; ask again once that run has finished (a
    service maps it to 409 Conflict, not to a client's mistake). ``node``: the focus."""

    def __init__(self, message: str, node: URIRef, holder: str | None = None) -> None:
        super().__init__(message)
        self.node = node
        self.holder = holder
        """The process holding the focus, ``lane@host:pid`` (:mod:`._process_identity`), when
        known: another process's on a shared world, this one's for another run of it."""


class Work(Protocol):
    """What a claim is for, named by its IRI: a workflow (its instances' foci), or the
    catalog's guarded calls (:data:`CALLS`: their subjects)."""

    @property
    def iri(self) -> URIRef: ...


_EVICT = f"""{_PREFIXES}DELETE {{ GRAPH <{CLAIMS}> {{ ?w c:alive true }} }}
    WHERE {{ GRAPH <{CLAIMS}> {{ ?w c:alive true ; c:renewed ?r ; c:lease ?lease }}
             FILTER(NOW() - ?r > ?lease) }}"""


def evict_expired(store: Store) -> None:
    """Drop the ``c:alive`` of every worker whose lease has run out (by the store's clock): what
    it held (claims, a lend of world data: :mod:`~horismos._lends`) is then another's to take."""
    store.update(_EVICT, runtime_only=True)


@dataclass(frozen=True)
class _Owners:
    """What :meth:`Worker._owners` read of a batch's claims."""

    owners: dict[Node, set[str]]
    done: frozenset[Node]
    crossed: frozenset[Node]  # held by the other kind of work (:meth:`Worker._crossing`)
    company: bool  # another worker is alive, or owns (or owned) one of them
    evicted: bool  # one no longer alive owns one of them
    alive: bool  # this worker's lease is still there


class Worker:
    """One process's part in a shared ``run --all``: its lease, fence and claims."""

    def __init__(self, store: Store, *, lease: float | None = None, settle: float = SETTLE) -> None:
        self.store = store
        self.lease = lease_from_env() if lease is None else lease
        self.settle = settle
        self.iri = URIRef(f"{RUNTIME}worker:{uuid.uuid4().hex}")
        self.fence: tuple[Quad, ...] = ((self.iri, ALIVE, Literal(True), CLAIMS),)
        self.world = World(FencedStore(store, self))
        self.lost = False
        # when the latest renewal that landed was sent, by this machine's clock: the store's
        # clock started the lease no sooner, so it runs at least a lease from here (fresh)
        self._renewed = _clock()
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None
        self._held: list[URIRef] = []  # claims held (:meth:`hold`), given back on leaving
        self.collided = False  # the last verify stood back from another's decided mark

    @classmethod
    def join(cls, world: World, lease: float | None = None) -> Worker:
        """Register a lease in ``world``'s store and keep it alive until :meth:`leave`;
        ``lease``: seconds, read from the environment when not given."""
        worker = cls(world.store, lease=lease)
        # which process it is: a run refused because this one holds its focus names it
        said = ran_by()
        who = f"c:host {Literal(said['host']).n3()} ; c:pid {int(said['pid'])} ;"
        if "lane" in said:
            who += f" c:lane {Literal(said['lane']).n3()} ;"
        worker._renewed = _clock()
        worker.store.update(
            f"""{_PREFIXES}INSERT {{ GRAPH <{CLAIMS}> {{
            <{worker.iri}> c:alive true ; c:renewed ?now ; {who}
                c:lease "PT{worker.lease:.3f}S"^^xsd:dayTimeDuration }} }}
            WHERE {{ BIND(NOW() AS ?now) }}""",
            runtime_only=True,
        )
        worker._beat = threading.Thread(
            target=worker._heartbeat, daemon=True, name="horismos-lease"
        )
        worker._beat.start()
        return worker

    def leave(self) -> StoreError | None:
        """Give back the claims it holds (:meth:`hold`), stop the heartbeat and drop the
        lease: claims left undone are free at once.

        A store that does not answer then is not raised, only returned (for a caller that
        tells of it: a lend's note): with the heartbeat stopped, the lease runs out by itself
        and its claims with it. Raised from the ``finally`` that leaves, the store's error
        stood in for what was being raised — a call's commit that failed after the tool had
        acted said only that the server could not be reached."""
        self._stop.set()
        if self._beat is not None:
            self._beat.join()
        try:
            if self._held:
                self._give_back(self._held)
                self._held.clear()
            self.store.update(
                f"DELETE WHERE {{ GRAPH <{CLAIMS}> {{ <{self.iri}> ?p ?o }} }}", runtime_only=True
            )
        except StoreError as e:
            return e
        return None

    def _give_back(self, claims: Sequence[Node], *, done: bool = False) -> None:
        """Stop owning ``claims`` (on leaving, on losing a verify) and, when their instances
        have stopped, mark them done in the same update."""
        owning = " ".join(
            f"{c.n3()} <{C}worker> <{self.iri}> ; <{C}decided> <{self.iri}> ." for c in claims
        )
        update = f"DELETE DATA {{ GRAPH <{CLAIMS}> {{ {owning} }} }}"
        if done:
            marked = " ".join(f"{c.n3()} <{C}done> true ." for c in claims)
            update += f";\nINSERT DATA {{ GRAPH <{CLAIMS}> {{ {marked} }} }}"
        self.store.update(update, runtime_only=True)

    def _heartbeat(self) -> None:
        store = open_store(self.store.name)  # a connection of its own
        try:
            while not self._stop.wait(self.lease / 3):
                sent = _clock()
                try:
                    store.update(
                        f"""{_PREFIXES}
                        DELETE {{ GRAPH <{CLAIMS}> {{ ?w c:renewed ?old }} }}
                        INSERT {{ GRAPH <{CLAIMS}> {{ ?w c:renewed ?now }} }}
                        WHERE {{ GRAPH <{CLAIMS}> {{ ?w c:alive true ; c:renewed ?old }}
                                 VALUES ?w {{ <{self.iri}> }} BIND(NOW() AS ?now) }}""",
                        runtime_only=True,
                    )
                    alive = self.alive(store)
                except StoreError:
                    # the store is away for a while: keep beating. If it stays away past the
                    # lease, the store's own clock expires the lease, and the fence refuses
                    # this worker's late commits; the next beat that lands then sees it lost
                    continue
                if not alive:
                    self.lost = True
                    return
                self._renewed = sent
        finally:
            store.close()

    def fresh(self) -> bool:
        """Whether the lease surely still holds by the store's clock: less than a lease has
        passed since the latest renewal that landed was sent. A process paused past it
        (``SIGSTOP``, a machine asleep) or cut off from the store may have been evicted
        without knowing it yet, its claims taken and the call it announced settled in doubt
        by another: a call sent then could act after an operator cleared it as not made."""
        return not self.lost and _clock() - self._renewed < self.lease

    def alive(self, store: Store | None = None) -> bool:
        rows = (store or self.store).select(
            f"SELECT ?a WHERE {{ GRAPH <{CLAIMS}> {{ <{self.iri}> c:alive ?a }} }}", {}, {"c": C}
        )
        return bool(rows)

    # -- the run --------------------------------------------------------------------------

    async def run(
        self,
        runner: Runner,
        workflow: Workflow,
        foci: list[URIRef],
        on_instance: Callable[[InstanceRun], None],
        *,
        blocked: bool = False,
    ) -> None:
        """Run the instances of ``foci`` this worker wins, until every claim is done; each
        finished instance goes to ``on_instance`` (nothing is kept here: a batch of 100,000
        instances must not grow the worker's memory).

        A lone worker goes in focus order; one joining others, or finding its batch taken,
        jumps to a random place in what is left, so workers spread out.

        ``blocked``: a claim marked done is taken again while its focus's instance is blocked,
        and that instance goes on under this worker's policy (a queued task: submitted again
        once the workers' ``--allow`` is widened, it did nothing, its claim done). Done means
        no ``--all`` worker drives the focus again (:meth:`hold`); a task names its focus. An
        instance that finished or waits is left alone as before: a task submitted twice, or
        delivered again, acts once, and a wait is settled by ``resume`` or ``wake``.
        """
        # (one focus, as a queued task brings: nothing to spread, so no query for others)
        crowded = len(foci) > 1 and self._others()
        # the focus nodes earlier runs finished are left out before claiming: claimed one
        # batch after another, each of their batches cost a settle (0.2 s per 8 done foci)
        todo = self._free(workflow, foci) if len(foci) > 1 else list(foci)
        if crowded:
            todo = _rotated(todo)
        ahead: deque[tuple[list[URIRef], float]] = deque()  # claimed, not yet verified

        def claim(size: int) -> None:
            nonlocal todo
            batch, todo = todo[:size], todo[size:]
            ahead.append((batch, self._claim(workflow, batch, blocked=blocked)))

        size = BATCH
        if todo:
            claim(size)
        if todo:
            # a second batch claimed at once: its settle then passes while the first settles
            # and runs, instead of after (a wait of its own). A lone worker's is large, at most
            # half of what is left, so a worker starting beside it unseen still finds a share
            claim(size if crowded else min(MAX_BATCH, len(todo) // 2 + 1))
        while True:
            if not todo and not ahead:  # nothing to claim: is anything still open?
                left = self._open(workflow, foci)
                if not left:
                    return
                self._evict()
                todo = _rotated(self._free(workflow, left))
                if not todo:  # live workers hold them: wait for them to finish, or to die
                    await asyncio.sleep(min(self.lease / 4, 0.25))
                    continue
            if not ahead:
                claim(size)
            mine, contested = await self._verify(workflow, *ahead.popleft(), reopen=blocked)
            if contested:  # others work here: drop what they hold, go elsewhere
                crowded = True
                todo = _rotated(self._free(workflow, todo))
            if todo and not ahead:  # claim the next batch now: its settle overlaps this work
                claim(size)
            started = time.monotonic()
            if mine:
                await self._run_batch(runner, workflow, mine, on_instance, blocked=blocked)
                # batches big enough that their work outlasts the next one's settle; where
                # others work, small again near the end, so the last of it is shared
                rate = len(mine) / max(time.monotonic() - started, 1e-3)
                size = max(
                    BATCH // 2,
                    min(
                        MAX_BATCH,
                        int(rate * self.settle * 1.25) + 1,
                        len(todo) // 2 + 1 if crowded else MAX_BATCH,
                    ),
                )

    async def hold(
        self,
        workflow: Work,
        focus: URIRef,
        *also: URIRef,
        name: Callable[[URIRef], str] = str,
    ) -> None:
        """Claim ``focus`` for a single-focus run (``run --focus``, resume) on a shared world,
        or raise :class:`NotHeld` when a live process holds it: an instance another process
        is driving is never taken over, even by ``--all``, whose workers skip live claims.
        A claim ``--all`` marked done is held too: done means no ``--all`` worker drives that
        focus again, not that nobody may (a waiting instance is resumed, ``run --focus``
        starts another on purpose, a queued task goes on with a blocked one: :meth:`run`'s
        ``blocked``). :meth:`leave` gives the claim back as it was.

        ``also``: nodes held with ``focus``, all or none, in the same requests (a catalog
        call's idempotency key, which two calls on different subjects may share). ``name``:
        how the refusal names a node (the definitions' CURIEs, as the run's other messages)."""
        nodes = [focus, *also]
        for attempt in range(1, _TRIES + 1):
            claimed = self._claim(workflow, nodes, reopen=True)
            mine, _ = await self._verify(workflow, nodes, claimed, reopen=True)
            if len(mine) == len(nodes) or not self.collided:
                break
            # both stood back from each other's mark (:meth:`_decide`): again, apart in time
            await asyncio.sleep(random.uniform(0.01, 0.05) * attempt)
        if len(mine) < len(nodes):
            if mine:  # all or none: what it won is given back at once
                self._give_back([_claim_iri(workflow.iri, n) for n in mine])
            lost = next(n for n in nodes if n not in mine)
            doing = (
                f"a catalog call on {name(lost)} (or a step's call there abandoned at its "
                "timeout, whose function still acts)"
                if self._crossed(workflow, [lost])
                else f"{name(workflow.iri)} for {name(lost)}"
            )
            holder = self.holder(workflow, lost)
            by = f"process {holder}" if holder else "it"
            raise NotHeld(
                f"another live process is driving {doing} on this shared world ({by} holds "
                "the node's claim and renews its lease); wait for it to finish, or for its "
                "lease to run out if it died",
                lost,
                holder=holder,
            )
        self._held.extend(_claim_iri(workflow.iri, n) for n in nodes)

    def holder(self, workflow: Work, node: URIRef) -> str | None:
        """Which live process holds ``node``'s claim, ``lane@host:pid`` as it joined (None
        when it recorded none, or let go meanwhile): read once, for the refusal to name it. A
        refused duplicate delivery said "another live process", and a reviewer could not tell
        which of the two had run it."""
        try:
            rows = self.store.select(
                f"""{_PREFIXES}SELECT ?host ?pid ?lane WHERE {{ GRAPH <{CLAIMS}> {{
                {_claim_iri(workflow.iri, node).n3()} c:worker ?w . ?w c:alive true ;
                    c:host ?host ; c:pid ?pid . OPTIONAL {{ ?w c:lane ?lane }}
                FILTER (?w != <{self.iri}>) }} }} LIMIT 1""",
                {},
                {},
            )
        except StoreError:  # said without it: the refusal stands
            return None
        if not rows:
            return None
        row = rows[0]
        return started_by_text(row.get("host"), row.get("pid"), row.get("lane"))

    def settles_holds_of(self, runner: Runner) -> None:
        """Have ``runner``'s steps settle their holds on doubt nodes through this worker
        (``Runner._contested``), and keep the subject of a call abandoned at its timeout held
        while it acts on (:func:`keep_subject`): on a shared world, in every lane."""
        runner.settled_holders, runner.holds_settled = self.settled_holders, 4
        runner.keep_subject = functools.partial(keep_subject, self.store)

    def _keep(self, subject: URIRef) -> bool:
        """Own the catalog calls' claim on ``subject`` (:data:`CALLS`), waiting up to a lease
        for one another live process holds (a reconcile or a call, each refusing the node as
        in flight) to go; whoever holds ``subject`` for a run (this process's own run, which
        is why :meth:`hold` would not do) is no matter. Whether it is owned."""
        claim = _claim_iri(CALLS, subject)
        deadline = time.monotonic() + self.lease
        while True:
            self._claim(CATALOG, [subject], reopen=True)
            rows = self.store.select(
                f"SELECT ?w WHERE {{ GRAPH <{CLAIMS}> {{ ?claim c:worker ?w . "
                "?w c:alive true } }",
                {"claim": claim},
                {"c": C},
            )
            if any(str(r["w"]) == str(self.iri) for r in rows):
                self._held.append(claim)
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)

    async def settled_holders(
        self, nodes: list[URIRef], landed_at: float, me: URIRef
    ) -> list[list[list[str]]]:
        """Who holds each of ``nodes`` — doubt nodes the step of instance ``me`` holds since
        ``landed_at``, on no focus of its — and whether each holder settles too
        (``[iri, "settles" | ""]``), read once every hold that raced with its own has landed:
        a shared store lands two holds racing on one snapshot. The settle is waited only while
        another process may be holding: another worker is alive, asked in the same request.
        One not alive now holds only once its lease has landed, on a snapshot holding this.

        Where ``me`` goes first (:func:`._intents.yields_to`), it then marks that it calls,
        and reads which other holders marked so too (``"decided"``; :meth:`_calling`)."""
        values = " ".join(n.n3() for n in nodes)
        query = f"""SELECT ?node ?by ?settles ?other WHERE {{
            {{ VALUES ?node {{ {values} }} GRAPH <{INSTANCES}> {{ ?node horis:instance ?by .
                OPTIONAL {{ ?node horis:settles ?settles FILTER(?settles = ?by) }} }} }}
            UNION {{ GRAPH <{CLAIMS}> {{ ?other c:alive true }} FILTER(?other != <{self.iri}>) }}
        }}"""
        rows = self.store.select(query, {}, {"c": C, "horis": NS})
        company = any("other" in r for r in rows)
        left = landed_at + self.settle - time.monotonic()
        if left > 0 and company:
            await asyncio.sleep(left)
            rows = self.store.select(query, {}, {"c": C, "horis": NS})
        found: dict[Node, dict[str, str]] = {n: {} for n in nodes}
        for r in rows:
            if "by" in r:
                found[r["node"]][str(r["by"])] = "settles" if "settles" in r else ""
        if company:  # alone, no other holder can come after it
            first = [n for n in nodes if yields_to(found[n].items(), str(me)) is None]
            for node, by in self._calling(first, me) if first else ():
                found[node][str(by)] = "decided"
        return [sorted([by, mark] for by, mark in found[n].items()) for n in nodes]

    def _calling(self, nodes: list[URIRef], me: URIRef) -> list[tuple[Node, Node]]:
        """Mark that ``me`` calls at ``nodes``; which other instances holding them marked so
        too (``(node, instance)``). As claims are decided (:meth:`_decide`): two holders that
        read different holders (one's hold landed past the settle) both went first and both
        called; of two that both mark, the later reader sees the other's mark. A mark counts
        while its instance holds the node: each update drops those whose hold is gone."""
        marks = " ".join(f"{n.n3()} c:calling {me.n3()} ." for n in nodes)
        self.store.update(
            f"""{_PREFIXES}DELETE {{ GRAPH <{CLAIMS}> {{ ?n c:calling ?by }} }}
            WHERE {{ GRAPH <{CLAIMS}> {{ ?n c:calling ?by }}
                     FILTER NOT EXISTS {{ GRAPH <{INSTANCES}> {{ ?n horis:instance ?by }} }} }};
            INSERT DATA {{ GRAPH <{CLAIMS}> {{ {marks} }} }}""",
            runtime_only=True,
        )
        rows = self.store.select(
            f"""SELECT ?n ?by WHERE {{ VALUES ?n {{ {" ".join(n.n3() for n in nodes)} }}
                GRAPH <{CLAIMS}> {{ ?n c:calling ?by }}
                GRAPH <{INSTANCES}> {{ ?n horis:instance ?by }} FILTER(?by != {me.n3()}) }}""",
            {},
            {"c": C, "horis": NS},
        )
        return [(r["n"], r["by"]) for r in rows]

    def _owners(self, work: Work, claims: dict[URIRef, URIRef]) -> _Owners:
        """Who owns ``claims`` (claim: node) now that this worker's have landed, in one read:
        their live owners, which are done, which nodes the other kind of work holds
        (:meth:`_crossing`), whether this worker is still alive, and whether another process
        could hold or take them — another worker is alive, or has owned one — and whether
        one that is no longer alive owns one.

        Alive: a worker claims only after its lease has landed, so one whose lease is not
        seen now claims later, on a snapshot that holds these claims, and leaves them alone.
        Owned by one evicted: that worker may still have a commit in flight (its intent, say),
        which the settle lets land before the instance is read."""
        values = " ".join(c.n3() for c in claims)
        me = f"<{self.iri}>"
        owners: dict[Node, set[str]] = {c: set() for c in claims}
        done: set[Node] = set()
        crossed: set[Node] = set()
        company = evicted = alive = False
        for r in self.store.select(
            f"""SELECT ?claim ?w ?done ?crossed ?other ?gone ?me WHERE {{ {{
                VALUES ?claim {{ {values} }}
                GRAPH <{CLAIMS}> {{ ?claim c:worker ?w . ?w c:alive true }}
                OPTIONAL {{ GRAPH <{CLAIMS}> {{ ?claim c:done ?done }} }} }}
                UNION {self._crossing(work, list(claims.values()))}
                UNION {{ GRAPH <{CLAIMS}> {{ ?other c:alive true }} FILTER(?other != {me}) }}
                UNION {{ VALUES ?claim {{ {values} }} GRAPH <{CLAIMS}> {{ ?claim c:worker ?gone
                    FILTER NOT EXISTS {{ ?gone c:alive true }} }} FILTER(?gone != {me}) }}
                UNION {{ GRAPH <{CLAIMS}> {{ {me} c:alive ?me }} }} }}""",
            {},
            {"c": C},
        ):
            if "crossed" in r:
                crossed.add(r["crossed"])
            elif "w" in r:
                owners[r["claim"]].add(str(r["w"]))
                company |= str(r["w"]) != str(self.iri)
                if "done" in r:
                    done.add(r["claim"])
            elif "gone" in r:
                company = evicted = True
            elif "other" in r:
                company = True
            elif "me" in r:
                alive = True
        return _Owners(owners, frozenset(done), frozenset(crossed), company, evicted, alive)

    def _others(self) -> bool:
        return bool(
            self.store.select(
                f"""SELECT ?w WHERE {{ GRAPH <{CLAIMS}> {{
            ?w c:alive true }} FILTER(?w != <{self.iri}>) }} LIMIT 1""",
                {},
                {"c": C},
            )
        )

    def _evict(self) -> None:
        """Drop the ``c:alive`` of every worker whose lease has run out."""
        evict_expired(self.store)

    def _free(self, workflow: Workflow, foci: list[URIRef]) -> list[URIRef]:
        """Those of ``foci`` that are neither done nor held by a live worker."""
        taken = {
            r["f"]
            for r in self.store.select(
                f"""SELECT ?f WHERE {{ GRAPH <{CLAIMS}> {{ {_named(workflow, foci)}
            ?claim c:workflow ?wf ; c:focus ?f .
            {{ ?claim c:done true }} UNION {{ ?claim c:worker ?w . ?w c:alive true }} }} }}""",
                {"wf": workflow.iri},
                {"c": C},
            )
        }
        return [f for f in foci if f not in taken]

    def _claim(
        self, workflow: Work, batch: list[URIRef], *, reopen: bool = False, blocked: bool = False
    ) -> float:
        """Add this worker as an owner of each claim of ``batch`` no live worker holds and
        (unless ``reopen``) that is not done, or (``blocked``) whose focus's instance of
        ``workflow`` is blocked.

        The instance's status is read in the update that claims, on the snapshot that finds
        the claim free: what the claim is taken again for is what the store held as it was
        taken, not what an earlier read said. The instance is read again once the claim is won
        (:meth:`_run_batch`), for an update on an older snapshot may land after another
        worker went on with it and gave the claim back."""
        rows = " ".join(f"({_claim_iri(workflow.iri, f).n3()} {f.n3()})" for f in batch)
        done = f"EXISTS {{ GRAPH <{CLAIMS}> {{ ?claim c:done true }} }}"
        stuck = f"""EXISTS {{ GRAPH <{INSTANCES}> {{ ?i horis:workflow <{workflow.iri}> ;
            horis:focus ?f ; horis:status horis:Blocked }} }}"""
        undone = (
            "" if reopen else f"FILTER (!{done} || {stuck})" if blocked else f"FILTER (!{done})"
        )
        # a call's claim names no work and no node: read by its IRI alone (:meth:`_crossing`),
        # it leaves nothing once given back. Those two triples are every owner's, so deleting
        # them on giving back could land after, and delete, another owner's claim of them
        # (an update is judged on a snapshot), hiding its claim from the other kind of work
        named = "" if workflow.iri == CALLS else f"c:workflow <{workflow.iri}> ; c:focus ?f ;"
        self.store.update(
            f"""{_EVICT};
            INSERT {{ GRAPH <{CLAIMS}> {{ ?claim {named} c:worker <{self.iri}> }} }}
            WHERE {{ VALUES (?claim ?f) {{ {rows} }}
                {undone}
                FILTER NOT EXISTS {{ GRAPH <{CLAIMS}> {{ ?claim c:worker ?w . ?w c:alive true }} }}
            }}""",
            runtime_only=True,
        )
        return time.monotonic()

    async def _verify(
        self, workflow: Work, batch: list[URIRef], claimed_at: float, *, reopen: bool = False
    ) -> tuple[list[URIRef], bool]:
        """The focus nodes of ``batch`` this worker won (``reopen``: done ones too), and
        whether others work there.

        The settle is waited only for a claim an evicted worker owned (:meth:`_owners`):
        what keeps two workers off one node is the decided marks (:meth:`_decide`), made
        whenever another worker is in the picture. A lone worker — one ``run --all``, a ``run
        --focus`` or ``resume`` of a focus no other process has claimed — marks nothing. Every
        claim waited the settle while another worker was alive: 0.2 s a task in a queue
        worker beside others, so that two one-thread workers did half the work of one."""
        claims = {_claim_iri(workflow.iri, f): f for f in batch}
        seen = self._owners(workflow, claims)
        left = claimed_at + self.settle - time.monotonic()
        if left > 0 and seen.evicted:  # its last commit may be in flight: let it land
            await asyncio.sleep(left)
            seen = self._owners(workflow, claims)
        if self.lost or not seen.alive:
            raise LeaseLost(
                f"worker {self.iri} lost its lease (no heartbeat for "
                f"{self.lease:g}s); its claims went to other workers"
            )
        owners, done, crossed = seen.owners, set(seen.done), seen.crossed
        if reopen:
            done.clear()
        # won: the least live owner, and not held by the other kind of work (given up, to be
        # claimed again later)
        won = [
            c
            for c in claims
            if c not in done
            and owners[c]
            and min(owners[c]) == str(self.iri)
            and claims[c] not in crossed
        ]
        # alone, nobody can own these after it: a later worker claims on a snapshot holding them
        beaten = self._decide({c: claims[c] for c in won}) if won and seen.company else set()
        won = [c for c in won if claims[c] not in beaten]
        withdrawn = [c for c, ws in owners.items() if str(self.iri) in ws and c not in won]
        if withdrawn:
            self._give_back(withdrawn)
        contested = bool(beaten) or any(
            c in done or (ws and min(ws) != str(self.iri)) for c, ws in owners.items()
        )
        self.collided = bool(beaten)
        return [claims[c] for c in won], contested

    def _decide(self, won: dict[URIRef, URIRef]) -> set[Node]:
        """Of the nodes of the claims ``won`` (claim: node) when the owners were read, those
        another live worker has decided to work on too: this worker marks each claim decided,
        then reads the others' marks on the same claims. It keeps those no other has marked;
        a mark stays until the claim is given back.

        Two owners of one claim whose claims raced can read different owners (one's update
        landed after the other's read: a busy server, or no settle) and both read themselves
        the least. The marks need no timing: of two that both keep a node, the one whose read
        came later read after the other's mark had landed, and stood back. Two that each read
        the other's mark both stand back, and the node is claimed again later. (The other
        kind of work needs no mark: its claim is another, and of two kinds that race, the
        later to read its owners sees the other's claim, :meth:`_crossing`.)"""
        values = " ".join(c.n3() for c in won)
        marks = " ".join(f"{c.n3()} c:decided <{self.iri}> ." for c in won)
        self.store.update(
            f"{_PREFIXES}INSERT DATA {{ GRAPH <{CLAIMS}> {{ {marks} }} }}", runtime_only=True
        )
        rows = self.store.select(
            f"""SELECT DISTINCT ?claim WHERE {{ VALUES ?claim {{ {values} }}
                GRAPH <{CLAIMS}> {{ ?claim c:decided ?by . ?by c:alive true }}
                FILTER(?by != <{self.iri}>) }}""",
            {},
            {"c": C},
        )
        return {won[cast(URIRef, r["claim"])] for r in rows}

    def _crossing(self, work: Work, nodes: list[URIRef]) -> str:
        """A query group binding ``?crossed`` to those of ``nodes`` another live worker holds
        for the other kind of work: a catalog call on a run's focus, or a run of any
        workflow on a call's subject.

        Claims are per work, so a ``tools call`` and a run's step on one patient each won
        their own and both checked the tool's precondition: a tool that is not idempotent
        acted twice. Each side reads the other's claims only after its own have settled, as
        :meth:`_verify` reads owners (in the same query), so of two that race at least one
        sees the other and stands back. A finished ``--all`` instance no longer holds its
        focus (:meth:`_run_batch`), so calls on it are not refused for the rest of the run.

        A run finds the calls' claims by their IRIs (they name no node, :meth:`_claim`); a
        call finds a run's of any workflow by the node they name."""
        if work.iri != CALLS:
            held = " ".join(f"({_claim_iri(CALLS, n).n3()} {n.n3()})" for n in nodes)
            return f"""{{ VALUES (?held ?crossed) {{ {held} }}
                GRAPH <{CLAIMS}> {{ ?held c:worker ?by . ?by c:alive true }}
                FILTER(?by != <{self.iri}>) }}"""
        return f"""{{ VALUES ?crossed {{ {" ".join(n.n3() for n in nodes)} }}
            GRAPH <{CLAIMS}> {{ ?held c:workflow ?wf ; c:focus ?crossed ; c:worker ?by .
                                ?by c:alive true }}
            FILTER(?by != <{self.iri}> && ?wf != <{CALLS}>) }}"""

    def _crossed(self, work: Work, nodes: list[URIRef]) -> set[Node]:
        """:meth:`_crossing`'s nodes, asked alone (to say why a hold was refused)."""
        rows = self.store.select(
            f"SELECT DISTINCT ?crossed WHERE {self._crossing(work, nodes)}", {}, {"c": C}
        )
        return {r["crossed"] for r in rows}

    async def _run_batch(
        self,
        runner: Runner,
        workflow: Workflow,
        foci: list[URIRef],
        on_instance: Callable[[InstanceRun], None],
        *,
        blocked: bool = False,
    ) -> None:
        """Run the focus nodes this worker won: an instance a dead worker left running goes on
        from where it stopped, a stopped one is left alone (``blocked``: but for a blocked one,
        which goes on too), none starts one; then their claims are marked done (one update
        for the batch).

        The instances are read here, under the won claims: no other process drives them now,
        and each commit expects the version read (a :class:`Conflict` otherwise)."""
        existing: dict[Node, list[tuple[str, str]]] = {}
        for r in self.store.select(
            f"""SELECT ?f ?i ?status WHERE {{
                VALUES ?f {{ {" ".join(f.n3() for f in foci)} }}
                GRAPH <{INSTANCES}> {{ ?i horis:workflow ?wf ; horis:focus ?f ;
                                        horis:status ?status }} }}""",
            {"wf": workflow.iri},
            {"horis": NS},
        ):
            existing.setdefault(r["f"], []).append((str(r["i"]), str(r["status"])))
        finished: list[URIRef] = []
        try:
            for focus in foci:
                if self.lost:
                    raise LeaseLost(f"worker {self.iri} lost its lease; it starts nothing more")
                rows = existing.get(focus, [])
                running = sorted(i for i, status in rows if status == NS + "Running")
                if blocked and not running:
                    running = sorted(i for i, status in rows if status == NS + "Blocked")
                stored = read_instance(self.store, URIRef(running[0])) if running else None
                inst = (
                    await runner.continue_instance(stored)
                    if stored is not None
                    else None
                    if rows
                    else await runner.run_instance(workflow, focus)
                )
                finished.append(focus)
                if inst is not None:
                    on_instance(inst)
        finally:
            if finished:  # done, and no longer held: a catalog call on one is not refused
                self._give_back([_claim_iri(workflow.iri, f) for f in finished], done=True)

    def _open(self, workflow: Workflow, foci: list[URIRef]) -> list[URIRef]:
        """The focus nodes whose claims are not done yet."""
        done = {
            r["f"]
            for r in self.store.select(
                f"""SELECT ?f WHERE {{ GRAPH <{CLAIMS}> {{ {_named(workflow, foci)}
            ?claim c:workflow ?wf ; c:focus ?f ; c:done true }} }}""",
                {"wf": workflow.iri},
                {"c": C},
            )
        }
        return [f for f in foci if f not in done]


def _rotated(foci: list[URIRef]) -> list[URIRef]:
    start = random.randrange(len(foci)) if foci else 0
    return foci[start:] + foci[:start]


def _named(workflow: Work, foci: Sequence[URIRef]) -> str:
    """The claims of ``foci`` named, for a query that reads claims of ``workflow``, when they
    are few: the store then looks each up by its IRI. A queued task's single focus read every
    claim the workflow ever had (done claims stay), so a task cost what the world had run:
    ~0.2 s a task beside 8,000 done claims, ~1.8 s beside 80,000 on ``sparql:``. Many foci
    (``--all``) are left unnamed: one read of the workflow's claims, not a clause as long."""
    if len(foci) > MAX_BATCH:
        return ""
    pairs = " ".join(f"({_claim_iri(workflow.iri, f).n3()} {f.n3()})" for f in foci)
    return f"VALUES (?claim ?f) {{ {pairs} }}"


@dataclass(frozen=True)
class _Catalog:
    """The catalog's guarded calls as a :class:`Work`: their claims are on subjects."""

    iri: URIRef = CALLS


CATALOG = _Catalog()
"""What a catalog call's claim on its subject is for (:data:`CALLS`)."""


def keep_subject(store: Store, subject: URIRef) -> Callable[[], object]:
    """Hold ``subject`` as a catalog call being made does, under a lease of its own, for a
    workflow step's call abandoned at its timeout whose function acts on in its thread (a
    sync Python function cannot be stopped): ``tools reconcile`` and calls from other
    processes are busy meanwhile, as for a catalog call so abandoned (:mod:`._call`). The
    step's own claims go with its run, which may end first. Returns what gives it back, once
    the function has returned; should the process end first, the lease lapses."""
    while isinstance(store, WrappedStore):  # the store itself, not a worker's fenced view
        store = store.inner
    keeper = Worker.join(World(store))
    try:
        keeper._keep(subject)
    except Exception:
        keeper.leave()
        raise
    return keeper.leave


def _claim_iri(workflow: URIRef, focus: URIRef) -> URIRef:
    digest = hashlib.sha256(f"{workflow} {focus}".encode()).hexdigest()[:32]
    return URIRef(f"{RUNTIME}claim:{digest}")


class FencedStore(WrappedStore):
    """The worker's view of the shared store: every commit also expects the worker's lease."""

    def __init__(self, inner: Store, worker: Worker) -> None:
        super().__init__(inner)
        self.worker = worker

    def fence_holds(self) -> bool:
        return self.worker.fresh()

    def apply(self, change: Change) -> Digest:
        try:
            return self.inner.apply(
                Change(
                    change.add,
                    change.remove,
                    (*change.expect, *self.worker.fence),
                    change.absent,
                )
            )
        except Conflict:
            if not self.worker.alive():
                self.worker.lost = True
                raise LeaseLost(
                    f"worker {self.worker.iri} lost its lease before this commit; "
                    "nothing of it landed and other workers took its claims"
                ) from None
            raise

    def load(self, quads: Iterable[Quad]) -> None:
        self.apply(Change(add=list(quads)))


def busy_here(workflow: str, focus: URIRef, name: Callable[[URIRef], str]) -> NotHeld:
    """The error for a run refused because another run of this process drives its focus
    (:func:`~._driving.drive_here`)."""
    return NotHeld(
        f"another run in this process is driving {workflow} for {name(focus)} right now (an "
        "agent.run or agent.arun, or a resume, not finished yet): it was not taken over. Ask "
        "again once that run has returned; with again=False a run answers the focus's "
        "instance as it stands instead of running",
        focus,
        holder=started_by_text(*(ran_by().get(k) for k in ("host", "pid", "lane"))),
    )
