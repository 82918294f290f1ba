"""Instances placed by Celery: ``horismos submit`` enqueues (workflow, focus) pairs on a
broker, ``horismos worker`` processes on any machine take them and drive them against one
shared ``sparql:`` world.

Why an existing engine: users who outgrow one machine already run one. Celery with a Redis
broker (docs/deployment.md says why it, and not Ray) gives a durable queue that outlives worker
and broker restarts (Redis with AOF), placement across machines, back-pressure (a worker takes
one task at a time, ``worker_prefetch_multiplier=1``) and a way to submit from any service.

What Celery is trusted with, and what not: delivery is *at least once* — a task is
acknowledged only after it ran (``acks_late``), and one whose worker died is delivered again
once its visibility timeout passes. So a task may run twice, or on two workers at once; that is
made safe here, not hoped away. A task is "drive the (workflow, focus) instance to a stop"
and goes through the claims of :mod:`horismos._claims` (the exclusivity guard inside the
store): the claim is held by one live worker at a time, an instance a dead worker left
running is continued from its stored step (its intent turns an unanswered non-idempotent call
into ``OutcomeUnknown``, never a second call), and a claim marked done makes a late duplicate
a no-op — but for a blocked instance, which a task goes on with under its worker's policy, as
``run --focus`` does (submitted again once the workers' ``--allow`` was widened, it did
nothing). Each (workflow, focus) gets at most one instance, as with ``run --all`` on a shared
world. Results and statuses are read from the world (``horismos instances``), never from a
Celery result backend (none is configured).

A store that cannot be reached (or answers 408, 429, a 5xx, or refuses every request alike:
401, 403, 404, 407) is waited for, with backoff, inside the task, and so is an MCP server a
workflow's binding names that is down as the task begins (:class:`Unreachable`, nothing sent:
the task is kept, where it was acknowledged and dropped with a traceback); a lease lost
meanwhile (another worker took the claim) makes the worker rejoin with a new lease and try the
task again, which finds the claim taken or done. A request the store refused (a 4xx answer
about the request, a query its engine refuses) would be refused on every try: the task is
dropped in one line, its claim given back and its instance left as the store has it; tried
again, it held the worker's thread for ever and came back on every restart.

Celery is an optional dependency (``horismos[distributed]``): nothing here is imported by a
single-process run.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import socket
import sys
import threading
import time
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from rdflib import URIRef

from . import _loop
from ._agent import Agent
from ._claims import Worker
from ._environment import Environment
from ._errors import AuthoringError, BrokerError, LeaseLost, ToolError, Unreachable, UsageError
from ._policy import DEFAULT_ALLOW, Policy, allowed
from ._redact import redact_url
from ._stores import StoreError
from ._trace import Trace, drop_if_empty, own_file
from ._unreachable import why_unreachable
from ._vocab import NS
from ._world import INSTANCES, World

if TYPE_CHECKING:
    from celery import Celery

    from ._model import Workflow

__all__ = [
    "QUEUE",
    "TASK",
    "InstanceDriver",
    "blocked_states",
    "broker_answers",
    "celery_app",
    "instance_statuses",
    "serve",
    "stop_reasons",
    "submit",
    "submit_instances",
    "untouched",
    "wait_for_instances",
    "wait_past",
]

ANSWER_WITHIN = 5.0
"""Seconds a worker at start, or ``submit``, waits for the broker to answer: a redis-server
answers in milliseconds, so a silent port is not a broker."""
_ANSWERING = {"socket_connect_timeout": ANSWER_WITHIN, "socket_timeout": ANSWER_WITHIN}

QUEUE = "horismos"
TASK = "horismos.instance"
VISIBILITY = 3600.0
"""Seconds a delivered, unacknowledged task waits before the broker gives it to another worker:
longer than an instance usually takes (an early redelivery is safe, the claim makes the second
worker wait, but it holds a worker)."""
BACKOFF = (0.2, 10.0)
"""First and longest wait, in seconds, between tries while the store cannot be reached."""

log = logging.getLogger("horismos.worker")


def celery_app(broker: str, *, visibility_timeout: float = VISIBILITY) -> Celery:
    """A Celery app on ``broker`` (``redis://HOST:PORT/DB``) configured for at-least-once
    delivery of Horismos tasks; no result backend."""
    try:
        from celery import Celery
    except ImportError:
        raise UsageError(
            "the distributed engine needs Celery: pip install 'horismos[distributed]'"
        ) from None
    if not broker.startswith(("redis://", "rediss://")):
        raise UsageError(f"broker {broker!r}: give a Redis URL, redis://HOST:PORT/DB")
    app = Celery("horismos", broker=broker, set_as_current=False)
    restore = max(1, min(10, int(visibility_timeout / 2)))
    app.conf.update(
        task_acks_late=True,  # acknowledged after the task ran: a dead worker's task comes back
        task_reject_on_worker_lost=True,
        task_acks_on_failure_or_timeout=True,  # a task that raised is done: its status is in
        # the world; only a worker's death (no ack at all) redelivers
        worker_prefetch_multiplier=1,  # back-pressure: a worker holds one task at a time
        task_ignore_result=True,
        task_default_queue=QUEUE,
        task_serializer="json",
        accept_content=["json"],
        broker_connection_retry_on_startup=True,
        broker_connection_max_retries=None,  # a broker restart is waited for, not fatal
        broker_transport_options={
            "visibility_timeout": visibility_timeout,
            # look for abandoned tasks every few seconds, not kombu's default 100
            "unacked_restore_interval": restore,
            "unacked_restore_throttle": 1,
            # the lock a worker takes to put abandoned tasks back: one killed while holding it
            # (it sweeps every few seconds) kept every other from doing so until it expired,
            # kombu's 300 s, and a killed worker's task came back 5 minutes late. Two sweeps
            # at once are harmless (each restore is a transaction watching the unacked tasks)
            "unacked_mutex_expire": restore,
        },
        # a broker restart is ridden out; one that stays away is reported (BrokerError)
        task_publish_retry_policy={
            "max_retries": 5,
            "interval_start": 0.2,
            "interval_step": 0.5,
            "interval_max": 2,
        },
        worker_hijack_root_logger=False,
        worker_send_task_events=False,
        worker_enable_remote_control=False,
    )
    return app


def broker_answers(app: Celery) -> None:
    """One connection to ``app``'s broker now, refused in words saying what to change in
    ``--broker`` (a :class:`BrokerError`) when it fails.

    Why: a worker whose broker answered but refused it (a password missing or wrong, a DB
    number past the server's) was told "cannot be reached … start it", then sat silent while
    Celery retried forever; a broker down at start was waited for, with nothing to show the
    address was mistyped. A broker that answers once is waited for if it goes away later.
    A port that takes the connection but never answers (another program, a firewall holding
    it) is refused after :data:`ANSWER_WITHIN` seconds rather than held forever."""
    from kombu.exceptions import OperationalError  # Celery's own dependency

    try:
        with app.connection_for_write(transport_options=_ANSWERING) as connection:
            connection.ensure_connection(max_retries=1, interval_start=0, interval_max=0.2)
    except (OSError, OperationalError) as e:
        raise BrokerError(_broker_refusal(app.conf.broker_url, e)) from None


def _broker_refusal(broker: str, e: BaseException) -> str:
    """What ``broker`` said to a first connection that failed with ``e``, and what to change.

    The redis client's error sits under kombu's: its class tells a refusal of the password
    from one of the DB number, and from a broker nobody answers for."""
    from redis.exceptions import AuthenticationError, ResponseError

    at = f"the broker at {redact_url(broker)}"
    cause: BaseException | None = e
    while cause is not None and not isinstance(cause, (AuthenticationError, ResponseError)):
        cause = cause.__cause__ or cause.__context__
    if isinstance(cause, AuthenticationError):
        given = "@" in broker.partition("://")[2].partition("/")[0]
        what = "refused the password given" if given else "asks for a password"
        return (
            f"{at} {what} ({cause}); give the one the server is started with "
            "(redis-server --requirepass) in --broker, between `redis://:` and `@HOST:PORT/DB`"
        )
    if isinstance(cause, ResponseError) and "DB index" in str(cause):
        db = broker.rpartition("/")[2]
        return (
            f"{at} holds no database {db} ({cause}); give a DB number it holds in --broker "
            "(redis-server holds 0 to 15 unless started with --databases N): "
            "redis://HOST:PORT/0"
        )
    if cause is not None:
        return f"{at} refused the connection ({cause}); check --broker"
    if _timed_out(e):
        return (
            f"{at} did not answer within {_ANSWERING['socket_timeout']:g} s "
            "(something there took the connection and said nothing, or a firewall held it); "
            "check the host and port in --broker: a redis-server answers at once"
        )
    return (
        f"{at} cannot be reached: {why_unreachable(e)}; check the host and port in --broker, "
        "and start the broker if it is not running (redis-server --port PORT)"
    )


def _timed_out(e: BaseException) -> bool:
    """Whether a timeout sits in ``e``'s chain of causes (a few links: kombu's over redis's)."""
    from redis.exceptions import TimeoutError as RedisTimeout

    seen: BaseException | None = e
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, (TimeoutError, RedisTimeout)):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def submit_instances(broker: str, workflow: URIRef, foci: Iterable[URIRef]) -> int:
    """Enqueue one task per focus node of ``workflow``; returns how many were enqueued.
    The workers' definitions must declare ``workflow`` (a worker refuses a task whose workflow
    it does not know, and logs why)."""
    app = celery_app(broker)
    from kombu.exceptions import OperationalError  # Celery's own dependency

    sent = 0
    try:
        with (
            app.connection_for_write(transport_options=_ANSWERING) as connection,
            app.amqp.Producer(connection) as producer,
        ):
            # the first connection once, as a worker's at start: a broker down or silent is
            # said at once, not after the publish retries (~4 s more), meant for one that
            # goes away between two tasks
            connection.ensure_connection(max_retries=1, interval_start=0, interval_max=0.2)
            for focus in foci:
                app.send_task(
                    TASK,
                    args=[str(workflow), str(focus)],
                    queue=QUEUE,
                    producer=producer,
                    retry=True,
                )
                sent += 1
    except (OSError, OperationalError) as e:
        raise BrokerError(
            f"{_broker_refusal(broker, e)}; {sent} task{'s' * (sent != 1)} were enqueued "
            "before that; submitting again is safe (a focus already done is not run twice)"
        ) from None
    return sent


def submit(
    agent: Agent,
    world: World,
    broker: str,
    workflow: str | URIRef | None = None,
    focus: str | URIRef | None = None,
    *,
    all: bool = False,
) -> list[URIRef]:
    """Enqueue instances for ``horismos worker`` processes on the Celery ``broker``
    (``redis://…``; needs ``horismos[distributed]``): one for ``focus``, or one per focus node
    of the workflow in ``world`` with ``all=True``. Returns the focus nodes submitted; their
    statuses are read from the world (:func:`wait_for_instances`, ``horismos instances``)."""
    if not world.store.shared:
        raise UsageError(
            f"{world.store.name} is not shared by other processes: workers "
            "need one world they all reach, a sparql:URL store"
        )
    wf = agent.workflow(workflow)
    foci = agent.focus_list(world, wf, focus, all=all)
    submit_instances(broker, wf.iri, foci)
    return foci


def instance_statuses(
    world: World,
    workflow: URIRef,
    foci: Sequence[URIRef],
) -> dict[URIRef, str | None]:
    """Per focus node: the status of its instance of ``workflow`` in the world (``running``,
    ``waiting``, ``blocked``, ``failed``, ``completed``), or ``None`` when it has none yet."""
    out: dict[URIRef, str | None] = dict.fromkeys(foci)
    if not foci:
        return out
    rows = world.store.select(
        f"""SELECT ?f ?s WHERE {{
        VALUES ?f {{ {" ".join(f.n3() for f in foci)} }}
        GRAPH <{INSTANCES}> {{ ?i horis:workflow ?wf ; horis:focus ?f ; horis:status ?s }} }}""",
        {"wf": workflow},
        {"horis": NS},
    )
    for r in rows:
        status = str(r["s"]).removeprefix(NS).lower()
        focus = URIRef(str(r["f"]))
        if out.get(focus) in (None, "running"):
            out[focus] = status
    return out


def stop_reasons(world: World, workflow: URIRef, foci: Sequence[URIRef]) -> dict[URIRef, str]:
    """Per focus node of ``foci``: why its instance of ``workflow`` failed or is blocked, as
    the world records it (``horis:error``, ``horis:blockedBy``), where it says."""
    if not foci:
        return {}
    rows = world.store.select(
        f"""SELECT ?f ?why WHERE {{
        VALUES ?f {{ {" ".join(f.n3() for f in foci)} }}
        GRAPH <{INSTANCES}> {{ ?i horis:workflow ?wf ; horis:focus ?f .
            {{ ?i horis:error ?why }} UNION {{ ?i horis:blockedBy ?why }} }} }}""",
        {"wf": workflow},
        {"horis": NS},
    )
    return {URIRef(str(r["f"])): str(r["why"]) for r in rows}


BlockedStates = dict[URIRef, frozenset[tuple[str, int]]]
"""Per focus node: its blocked instances, each with the version it stands at."""


def blocked_states(world: World, workflow: URIRef, foci: Sequence[URIRef]) -> BlockedStates:
    """Those of ``foci`` whose instance of ``workflow`` is blocked, with each such instance
    and its version (:func:`wait_past`'s ``since``, read before submitting)."""
    if not foci:
        return {}
    rows = world.store.select(
        f"""SELECT ?f ?i ?v WHERE {{
        VALUES ?f {{ {" ".join(f.n3() for f in foci)} }}
        GRAPH <{INSTANCES}> {{ ?i horis:workflow ?wf ; horis:focus ?f ;
                                horis:status horis:Blocked ; horis:version ?v }} }}""",
        {"wf": workflow},
        {"horis": NS},
    )
    found: dict[URIRef, set[tuple[str, int]]] = {}
    for r in rows:
        found.setdefault(URIRef(str(r["f"])), set()).add((str(r["i"]), int(str(r["v"]))))
    return {f: frozenset(states) for f, states in found.items()}


def wait_for_instances(
    world: World, workflow: URIRef, foci: Sequence[URIRef], *, timeout: float, poll: float = 0.25
) -> dict[URIRef, str | None]:
    """Poll the world until every focus node's instance has stopped (any status but
    ``running``), or ``timeout`` seconds pass; returns the statuses last read."""
    return wait_past(world, workflow, foci, timeout=timeout, poll=poll)[0]


def wait_past(
    world: World,
    workflow: URIRef,
    foci: Sequence[URIRef],
    *,
    timeout: float,
    poll: float = 0.25,
    since: BlockedStates | None = None,
) -> tuple[dict[URIRef, str | None], list[URIRef]]:
    """:func:`wait_for_instances`, waiting too for each blocked instance of ``since``
    (:func:`blocked_states`, read before submitting) until a task has gone on with it; the
    statuses last read, and those foci of ``since`` still :func:`untouched` when they were.

    Why: a task goes on with a blocked instance, so one still as it stood then has not been
    taken up yet. ``submit --wait`` ended at once and said the block, and why, of before
    the task ran: the advice to widen an ``--allow`` the operator had just widened.
    Untouched at the ``timeout``, it is returned ``blocked``, and among the untouched.

    Which are untouched is read before the statuses: read after, an instance a task
    completed between the two reads was moved on by the second and still ``blocked`` by the
    first, and ``submit --wait`` said "1 blocked" of an instance that had completed."""
    deadline = time.monotonic() + timeout
    while True:
        stale = untouched(world, workflow, since)
        statuses = instance_statuses(world, workflow, foci)
        stopped = all(s not in (None, "running") for s in statuses.values())
        if (stopped and not stale) or time.monotonic() > deadline:
            return statuses, stale
        time.sleep(poll)


def untouched(world: World, workflow: URIRef, since: BlockedStates | None) -> list[URIRef]:
    """Those focus nodes of ``since`` (:func:`blocked_states`) whose blocked instances still
    stand as they did: no task has gone on with them since."""
    if not since:
        return []
    now = blocked_states(world, workflow, list(since))
    return [f for f, states in since.items() if now.get(f) == states]


class InstanceDriver:
    """What one worker process keeps across tasks: the agent, and per thread of its pool a
    connection to the shared world and a lease (each thread is a claims worker of its own,
    so the tasks a process runs at once never share a claim, a fence or a connection)."""

    def __init__(
        self,
        agent: Agent,
        store: str,
        *,
        allow: Iterable[str] = DEFAULT_ALLOW,
        traces: Path | None = None,
        backoff: tuple[float, float] = BACKOFF,
    ) -> None:
        self.agent = agent
        self.store = store
        self.allow = allowed(allow)
        """Checked here, not by each task: a misspelt class refused every task it took, each
        acknowledged and dropped, while the worker looked ready."""
        self.traces = traces
        """A folder for one trace per task (``TASK-ID.jsonl``), or none."""
        self.backoff = backoff
        self._local = threading.local()
        self._opened: list[tuple[World, list[Worker | None]]] = []
        self._lock = threading.Lock()

    def check(self) -> None:
        """Refuse now what every task would be refused for, so a worker whose definitions
        the world does not let run, or whose tools do not fit them, refuses to start rather
        than failing each task it takes: what is checked of the world once, then every
        workflow's bindings."""

        async def check_all() -> None:
            world, _ = self._world()
            runner = self.agent._runner(world, Trace(None), Environment(), recorded=False)
            try:
                runner.prechecks.refuse_unrunnable(world)
                for wf in self.agent.definitions.workflows.values():
                    await runner.check_bindings(wf)
            finally:
                await runner.aclose()

        _loop.run(check_all())

    def drive(self, workflow: str, focus: str, task_id: str = "") -> str:
        """Drive the instance of ``workflow`` for ``focus`` until it stops; its status (or
        ``done elsewhere`` when another worker drove it). Waits out an unreachable store, and
        an MCP server down as the task begins (nothing was sent: the next try is safe).

        Raises the :class:`StoreError` of a request the store refused and would refuse again
        (:attr:`StoreError.repeats`: a 4xx answer, a query its engine refuses): tried again,
        it held the thread for ever. The thread's lease is given back first, so the claim is
        free at once (else it lapses with the lease); the instance, and the intent of a call
        it made, stay as the store has them, for a later try to continue from."""
        wf, node = _task_iri(workflow, "workflow"), _task_iri(focus, "focus")
        wait = self.backoff[0]
        while True:
            try:
                return _loop.run(self._drive(wf, node, task_id))
            except (StoreError, Unreachable) as e:
                if isinstance(e, StoreError) and e.repeats:
                    self._leave()
                    raise
                log.warning("horismos worker: %s; trying again in %.1fs", e, wait)
                time.sleep(wait)
                wait = min(wait * 2, self.backoff[1])
            except LeaseLost as e:
                log.warning("horismos worker: %s; joining again", e)
                self._local.held[0] = None

    def _world(self) -> tuple[World, list[Worker | None]]:
        if not hasattr(self._local, "world"):
            self._local.world = World.open(self.store)
            self._local.held = [None]
            with self._lock:
                self._opened.append((self._local.world, self._local.held))
        return self._local.world, self._local.held

    def _leave(self) -> None:
        """Give back this thread's lease and the claims it held (a store that does not answer
        then lets them lapse)."""
        _, held = self._world()
        worker, held[0] = held[0], None
        if worker is not None:
            worker.leave()  # a StoreError returned: the lease runs out by itself

    def _live_worker(self) -> Worker:
        world, held = self._world()
        worker = held[0]
        if worker is not None and not worker.lost and worker.alive():
            return worker
        held[0] = None
        if worker is not None:
            with contextlib.suppress(StoreError):  # else its lease runs out by itself
                worker.leave()
        fresh = held[0] = Worker.join(world)
        return fresh

    async def _drive(self, workflow: URIRef, focus: URIRef, task_id: str) -> str:
        wf = self.agent.workflow(workflow)
        worker = self._live_worker()
        world, _ = self._world()
        self.agent.place_individuals(world)
        # a file of its own for this delivery: a task delivered again (a worker killed and
        # restarted, a visibility timeout passed) truncated the trace of the one that called
        # the task's id names its file, kept to a name in the folder: any client may set it
        # ("../../srv/x" wrote a trace outside the folder, over one that was there)
        stem = re.sub(r"[^A-Za-z0-9_.-]", "_", task_id).lstrip(".") or str(os.getpid())
        trace = own_file(self.traces, stem) if self.traces else None
        try:
            return await self._drive_traced(wf, focus, worker, world, trace)
        finally:
            drop_if_empty(trace)

    async def _drive_traced(
        self, wf: Workflow, focus: URIRef, worker: Worker, world: World, trace: Path | None
    ) -> str:
        runner = self.agent._runner(
            worker.world,
            Trace(trace),
            Environment(),
            self.agent.types_in(world),
            policy=Policy(self.allow),
        )
        worker.settles_holds_of(runner)
        ended: list[str] = []
        try:
            await runner.check_before_first_step(wf, world)
            runner.header(wf, [focus], world_digest=None)
            # a focus submitted again: its blocked instance goes on under this worker's policy
            await worker.run(
                runner, wf, [focus], lambda inst: ended.append(inst.status), blocked=True
            )
        finally:
            await runner.aclose()
        runner.end(world_digest=None)
        return ended[0] if ended else "done elsewhere"

    def close(self) -> None:
        """Drop every thread's lease (their claims are free at once) and connection."""
        with self._lock:
            opened, self._opened = self._opened, []
        for world, held in opened:
            if held[0] is not None:
                with contextlib.suppress(StoreError):  # else its lease runs out by itself
                    held[0].leave()
                held[0] = None
            world.close()


def _task_iri(value: object, what: str) -> URIRef:
    """A task's workflow or focus as an IRI, refused (:class:`UsageError`) when it is not text
    a SPARQL server takes as one. A task is whatever reached the broker (``send_task`` from
    any client): a focus ``_:b0`` made an update the store refused, which the worker took
    for a store away and tried again for ever, holding a thread, and again on every
    redelivery; one with a space, or not text, was a traceback."""
    import pyoxigraph as ox

    try:
        if not isinstance(value, str):
            raise ValueError(f"{type(value).__name__}, not text")
        ox.NamedNode(value)
    except ValueError as e:
        raise UsageError(f"the task's {what} {value!r} is not an IRI ({e})") from None
    return URIRef(value)


def serve(
    app: Celery,
    driver: InstanceDriver,
    *,
    concurrency: int = 1,
    name: str | None = None,
    loglevel: str = "WARNING",
) -> None:
    """Run a Celery worker in this process until it is told to stop: ``concurrency`` tasks at
    a time, each in a thread of its own (a task mostly waits: on the store, on a tool, on the
    claim's settle)."""

    def instance(self: Any, workflow: str, focus: str) -> str:
        started = time.monotonic()
        try:
            status = driver.drive(workflow, focus, self.request.id or "")
        except (UsageError, AuthoringError, ToolError) as e:
            # not a task for these definitions, or definitions the world no longer lets run
            # (a property a shape requires gone from it), or a binding refused before the
            # first step (a stdio MCP server that exits before its handshake): said once,
            # the task dropped. Raised on, Celery said it again, with a traceback
            log.error(
                "horismos worker: task %s (%s, %s) refused: %s", self.request.id, workflow, focus, e
            )
            return "refused"
        except StoreError as e:  # refused by the store, and it would be again (drive)
            # said once, the task dropped: tried again for ever, it held the thread
            log.error(
                "horismos worker: task %s (%s, %s) dropped: the store refused it, and would "
                "refuse it again: %s. Its claim is given back and its instance left as the "
                "store has it (horismos instances shows it); change what the store refuses (the "
                "focus, the workflow's patterns, the server's limits) and submit it again",
                self.request.id,
                workflow,
                focus,
                e,
            )
            return "refused"
        log.info(
            "horismos worker: %s for %s: %s in %.2fs",
            workflow,
            focus,
            status,
            time.monotonic() - started,
        )
        return status

    app.task(name=TASK, bind=True)(instance)
    said = _BrokerSaid(app.conf.broker_url)
    logging.getLogger("celery.worker.consumer.consumer").addFilter(said)
    hostname = name or f"horismos-{os.getpid()}@{socket.gethostname()}"
    worker = app.Worker(
        pool="solo" if concurrency == 1 else "threads",
        concurrency=concurrency,
        hostname=hostname,
        loglevel=loglevel,
        without_gossip=True,
        without_mingle=True,
        without_heartbeat=True,
        quiet=True,
        queues=[QUEUE],
    )
    from celery.exceptions import CPendingDeprecationWarning

    # a broker lost: Celery's notice of a setting's future default, to its own users, not
    # ours; after the worker is made, whose logging setup shows every such warning
    warnings.filterwarnings("ignore", category=CPendingDeprecationWarning)
    try:
        worker.start()
    finally:
        driver.close()


class _BrokerSaid(logging.Filter):
    """Celery's own lines for a broker it cannot reach, said once in Horismos's words.

    Why: a worker whose broker was down printed "consumer: Cannot connect to redis://…: Error
    111 connecting to 127.0.0.1:6379. Connection refused.. Trying again in 2.00 seconds...
    (1/None)" at every retry, and "Connection to broker lost. Trying to re-establish the
    connection..." when it went away, in Celery's words and none of what to do. Celery goes
    on retrying (a broker restart is ridden out); each outage is said once, as it begins."""

    def __init__(self, broker: str) -> None:
        super().__init__()
        self.broker = redact_url(broker)
        self.said = False  # this outage is said: Celery's retries that follow are not

    def filter(self, record: logging.LogRecord) -> bool:
        from celery.worker.consumer.consumer import CONNECTION_ERROR, CONNECTION_RETRY

        args = record.args if isinstance(record.args, tuple) else ()
        if record.msg == CONNECTION_ERROR and len(args) > 1:
            lost = False
        elif len(args) > 1 and args[0] == CONNECTION_RETRY:
            lost = True  # it answered before: a new outage
        else:
            return True
        if lost or not self.said:
            went = "went away" if lost else "cannot be reached"
            print(
                f"horismos worker: the broker at {self.broker} {went}: "
                f"{why_unreachable(cast(BaseException, args[1])).rstrip('.')}; tasks are taken "
                "again once it answers (start it if it is not running: redis-server --port PORT)",
                file=sys.stderr,
                flush=True,
            )
        self.said = True
        return False
