"""Instances placed by Celery on a real Redis broker, driven by ``horismos worker`` processes
against a real ``oxigraph serve`` world — and the faults: a worker killed mid-step, the broker
restarted with tasks queued, the store away for a while, a worker frozen past its lease.

The triage tools (tests/triage_ward.py) write a ledger line per call (process id, tool, patient),
and their queue reference carries the calling process's id, so a test sees exactly which
process called what and whose result landed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from forked import Popen, horismos_forked
from oxigraph_server import OxigraphServer
from rdflib import Literal, URIRef
from redis_server import RedisServer
from triage_ward import DEFINITIONS, EHR, ROOT, held_definitions, instances, ledger, load_ward

from horismos import Agent, BrokerError, World, _queue, wait_for_instances
from horismos import submit as horismos_submit
from horismos._stores import Change

LEASE = "1.5"
PATIENTS = 8  # few: each test starts servers and workers of its own


@pytest.fixture
def ward(tmp_path: Path, server: OxigraphServer) -> Path:
    load_ward(tmp_path, server.store, PATIENTS)
    return tmp_path


def horismos(cwd: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return horismos_forked(cwd, *args, timeout=timeout)


class Workers:
    """``horismos worker`` processes a test starts; all stopped at its end."""

    def __init__(self, ward: Path, store: str, broker: str) -> None:
        self.ward, self.store, self.broker = ward, store, broker
        self.procs: list[subprocess.Popen[str]] = []

    def start(self, *, visibility: float = 3600, concurrency: int = 4,
              definitions: list[str] = DEFINITIONS, more: tuple[str, ...] = (),
              **env: str) -> subprocess.Popen[str]:
        log = (self.ward / f"worker{len(self.procs)}.log").open("w")
        p = Popen(
            [sys.executable, "-m", "horismos", "worker", *definitions, *more,
             "--store", self.store,
             "--broker", self.broker, "--tools", str(self.ward / "ehr_client.py"),
             "--visibility-timeout", str(visibility), "--concurrency", str(concurrency), "-v"],
            cwd=self.ward, env={**os.environ, "HORISMOS_LEASE": LEASE, **env},
            stdout=log, stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL)
        log.close()
        self.procs.append(p)
        return p

    def log(self, i: int) -> str:
        return (self.ward / f"worker{i}.log").read_text()

    def stop(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                os.kill(p.pid, signal.SIGCONT)
                p.terminate()
        for p in self.procs:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


@pytest.fixture
def workers(ward: Path, server: OxigraphServer, broker: RedisServer) -> Iterator[Workers]:
    w = Workers(ward, server.store, broker.url)
    yield w
    w.stop()


def submit(ward: Path, server: OxigraphServer, broker: RedisServer, *which: str,
           wait: float | None = None) -> subprocess.CompletedProcess[str]:
    extra = ["--wait", str(wait)] if wait is not None else []
    return horismos(ward, "submit", *DEFINITIONS, "--store", server.store, "--broker",
                    broker.url, *which, *extra, timeout=(wait or 0) + 60)


def wait_until(check, what: str, timeout: float = 60) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def stopped(store: str) -> dict[str, list[tuple[str, str]]]:
    return {f: v for f, v in instances(store).items() if all(s != "Running" for _, s in v)}


def failure(store: str, patient: str) -> str:
    """The error the patient's instance stopped with (``horis:error``), "" if none."""
    world = World.open(store)
    rows = world.store.select("""SELECT ?e WHERE { GRAPH <urn:horismos:instances> {
        ?i horis:focus ?f ; horis:error ?e } }""", {"f": URIRef(patient)},
                              {"horis": "https://w3id.org/horismos#"})
    world.close()
    return " ".join(sorted(str(r["e"]) for r in rows))


def test_a_worker_says_as_it_starts_which_step_its_policy_will_block(ward, workers):
    """A worker under ``--allow ReadOnly`` took a triage task and blocked it at its first
    step that writes, after anything before it had acted, and only ``run`` said so before
    its first step. The worker says it once, in ``run``'s words, before it takes tasks."""
    workers.start(more=("--allow", "ReadOnly"))
    wait_until(lambda: " ready." in workers.log(0), "worker 0")
    lines = workers.log(0).splitlines()
    warned = [i for i, line in enumerate(lines) if "which this run's policy does not allow "
              "(allowed: ReadOnly)" in line and ":QueuePatient:" in line]
    taking = next(i for i, line in enumerate(lines) if "horismos worker: taking tasks" in line)
    assert len(warned) == 1 and warned[0] < taking, "\n".join(lines)


def test_a_worker_says_the_warnings_once_as_it_starts(ward, workers):
    """A worker is where definitions run for good: it says what `validate --world` warns of
    once, before it takes tasks, as `run` does before its first step."""
    (ward / "notes.ttl").write_text("""\
@prefix :      <http://example.org/ehr#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .
:ehr.note a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:subject "patient" ;
                   horis:asserts [ horis:property :notedd ; horis:type xsd:string ] ] ;
    horis:binding "python:ehr_client.notify_nurse" ; horis:idempotent true .
""")
    workers.start(more=("notes.ttl",))
    wait_until(lambda: " ready." in workers.log(0), "worker 0")
    lines = workers.log(0).splitlines()
    warned = [i for i, line in enumerate(lines)
              if line.startswith("notes.ttl:") and "horis:property :notedd" in line]
    taking = next(i for i, line in enumerate(lines) if "horismos worker: taking tasks" in line)
    assert len(warned) == 1 and warned[0] < taking, "\n".join(lines)


def test_a_worker_whose_store_is_down_refuses_to_start_as_run_does(ward, server, broker):
    """The world loaded, its server stopped: the worker said it was taking tasks, then
    failed each one it took (a store error a task), where `run` refuses at once."""
    server.stop()
    worker = horismos(ward, "worker", *DEFINITIONS, "--store", server.store, "--broker",
                      broker.url, "--tools", str(ward / "ehr_client.py"))
    assert worker.returncode == 2, worker.stdout + worker.stderr
    assert worker.stderr == (
        f"horismos worker: error: the SPARQL server at {server.url} cannot be reached: nothing "
        "listens at that address and port (the connection was refused); check the URL, and "
        "start the server if it is not running (oxigraph serve --location DIR --bind "
        "HOST:PORT)\n"), worker.stderr
    run = horismos(ward, "run", *DEFINITIONS, "--store", server.store, "--all")
    assert (run.returncode, run.stderr) == (2, worker.stderr.replace("worker", "run")), run


def test_a_broker_that_goes_away_is_said_once_in_words_not_in_celerys_retry_lines(
        ward, broker, workers):
    """Lost once the worker had taken it: Celery printed "consumer: Cannot connect to
    redis://…: Error 111 connecting to … Trying again in 2.00 seconds... (1/None)" at every
    retry, and "Connection to broker lost. Trying to re-establish the connection..." when it
    went away. The worker waits for it, and says it once."""
    workers.start()
    wait_until(lambda: " ready." in workers.log(0), "the worker taking tasks")
    broker.kill()
    went = f"horismos worker: the broker at {broker.url} went away: "
    wait_until(lambda: went in workers.log(0), "the broker said gone")
    broker.start()
    wait_until(lambda: workers.log(0).count(" ready.") == 2 or "Connected to" in
               workers.log(0).split(went)[1], "the worker back", 60)
    log = workers.log(0)
    assert log.count(went) == 1, log
    for celerys in ("Cannot connect to", "Trying again in", "Connection to broker lost",
                    "CPendingDeprecationWarning"):
        assert celerys not in log, log


def test_a_worker_whose_broker_refuses_it_says_what_to_change_in_broker(
        ward, server, broker, tmp_path):
    """A broker that answers but refuses (no password or a wrong one for a redis-server
    started with --requirepass, a DB number past its 16) was "cannot be reached … start it",
    then Celery retried forever in silence. Each is refused at start, exit 2, naming what to
    change in --broker; a broker down at start is refused too, naming the address."""
    locked = RedisServer(tmp_path / "locked", password="sekret")
    port = locked.port
    try:
        said = {}
        for url in (f"redis://127.0.0.1:{port}/0", f"redis://:wrong@127.0.0.1:{port}/0",
                    broker.url.rpartition("/")[0] + "/99"):
            done = horismos(ward, "worker", *DEFINITIONS, "--store", server.store, "--broker",
                            url, "--tools", str(ward / "ehr_client.py"), timeout=60)
            assert done.returncode == 2, done.stderr
            assert "Traceback" not in done.stderr and "taking tasks" not in done.stderr
            said[url] = done.stderr
    finally:
        locked.stop()
    no, wrong, db = said.values()
    assert no == (f"horismos worker: error: the broker at redis://127.0.0.1:{port}/0 asks for a "
                  "password (Authentication required.); give the one the server is started "
                  "with (redis-server --requirepass) in --broker, between `redis://:` and "
                  "`@HOST:PORT/DB`\n"), no
    assert wrong.startswith(f"horismos worker: error: the broker at redis://***@127.0.0.1:{port}"
                            "/0 refused the password given ("), wrong
    assert "wrong" not in wrong  # the password given is not shown
    assert db == (f"horismos worker: error: the broker at {broker.url[:-2]}/99 holds no "
                  "database 99 (DB index is out of range); give a DB number it holds in "
                  "--broker (redis-server holds 0 to 15 unless started with --databases N): "
                  "redis://HOST:PORT/0\n"), db
    broker.kill()
    done = horismos(ward, "worker", *DEFINITIONS, "--store", server.store, "--broker",
                    broker.url, "--tools", str(ward / "ehr_client.py"), timeout=60)
    assert (done.returncode, done.stderr) == (2, (
        f"horismos worker: error: the broker at {broker.url} cannot be reached: nothing listens "
        "at that address and port (the connection was refused); check the host and port in "
        "--broker, and start the broker if it is not running (redis-server --port PORT)\n"))


def test_two_workers_drive_a_submitted_batch_once_each(ward, server, broker, workers):
    """``submit --all --wait``: two workers share the batch, every patient gets one instance
    and one call of each tool, and submit reads the statuses from the world. Each call is
    held until both workers have called (at most 4 s under the 5 s timeout, it was: a loaded
    machine could outlast it before the second worker took a task)."""
    definitions = held_definitions(ward)
    for _ in range(2):
        workers.start(definitions=definitions, HOLD_FOR="2")
    for i in range(2):  # both taking tasks before any is queued
        wait_until(lambda i=i: " ready." in workers.log(i), f"worker {i}")
    done = submit(ward, server, broker, "--all", wait=90)
    assert done.returncode == 0, done.stdout + done.stderr + workers.log(0) + workers.log(1)
    assert f"{PATIENTS} completed" in done.stdout
    held = instances(server.store)
    assert len(held) == PATIENTS and all(
        len(v) == 1 and v[0][1] == "Completed" for v in held.values()), held
    calls = ledger(ward)
    assert Counter((tool, p) for _, tool, p in calls) == Counter(
        {(tool, f"{EHR}p{i:02d}"): 1 for i in range(PATIENTS) for tool in ("assign", "notify")})
    assert len({pid for pid, _, _ in calls}) == 2  # both workers took tasks


def test_a_duplicate_submission_runs_nothing_again(ward, server, broker, workers):
    """At-least-once delivery may hand a task out twice: the claim marked done makes the
    second a no-op, so a focus submitted twice (here the second time from Python) gets one
    instance and one call of each tool."""
    workers.start()
    first = submit(ward, server, broker, "--focus", f"<{EHR}p01>", wait=60)
    assert first.returncode == 0, first.stderr
    assert "1 completed" in first.stdout
    agent = Agent.from_files(*DEFINITIONS)
    with World.open(server.store) as world:
        foci = horismos_submit(agent, world, broker.url, focus=f"<{EHR}p01>")
        assert foci == [URIRef(f"{EHR}p01")]
        assert wait_for_instances(world, agent.workflow().iri, foci, timeout=60) == {
            URIRef(f"{EHR}p01"): "completed"}
    wait_until(lambda: "done elsewhere" in workers.log(0), "the duplicate task")
    assert [(t, p) for _, t, p in ledger(ward)] == [("assign", f"{EHR}p01"),
                                                   ("notify", f"{EHR}p01")]
    assert len(instances(server.store)[f"{EHR}p01"]) == 1


def test_a_worker_killed_mid_step_is_redelivered_and_never_calls_twice(
        ward, server, broker, workers):
    """SIGKILL during the non-idempotent assign call: the task comes back from the broker
    after the second worker's visibility timeout, that worker continues the instance from its
    intent and stops it with OutcomeUnknown; the call was made once.

    The killed worker keeps the default timeout: with 2 s it put its own task back on the
    queue while the slow call ran (a loaded machine took more than 2 s from the task to the
    call) and took it again at once, and the SIGKILL landing in that sweep lost the task
    (popped, not yet recorded as unacknowledged) or held the sweep's lock: the test timed out
    waiting for the redelivery, 2 runs in 4."""
    kill_mid_call_and_redeliver(ward, server, broker, workers)
    # submitted again, with --wait: nothing runs again, and it says which failed, and why
    again = submit(ward, server, broker, "--focus", f"<{EHR}p02>", wait=60)
    assert again.returncode == 1, again.stdout + again.stderr
    assert again.stdout.startswith("1 failed\n  :p02: failed: "), again.stdout
    assert "not called again" in again.stdout
    assert [t for _, t, p in ledger(ward) if p == f"{EHR}p02"] == ["assign"]


# A worker's sweep putting abandoned tasks back on the queue, taken as a worker takes it (the
# lock kombu holds meanwhile, with the expiry the app sets), until the process is killed.
SWEEPING = """
import sys, time
from kombu.transport.redis import Mutex, MutexHeld
from horismos._queue import celery_app

app = celery_app(sys.argv[1], visibility_timeout=float(sys.argv[2]))
with app.connection_for_write() as conn:
    channel = conn.default_channel
    with channel.conn_or_acquire() as client:
        while True:
            try:
                with Mutex(client, channel.unacked_mutex_key, channel.unacked_mutex_expire):
                    print("sweeping", flush=True)
                    time.sleep(3600)
            except MutexHeld:  # a live worker sweeping: it lets go within its sweep
                time.sleep(0.05)
"""


def test_a_worker_killed_while_it_puts_tasks_back_holds_no_redelivery_up(
        ward, server, broker, workers):
    """Every second a worker takes a lock to put abandoned tasks back on the queue. One
    SIGKILLed holding it (caught mid-sweep: killing worker a did so once in 3 runs on a
    loaded machine) kept it for kombu's 5 minutes, and a worker killed mid-step had its task
    come back that much later: the killed-worker test timed out waiting. The lock now lapses
    within a sweep's interval."""
    (ward / "sweeping.py").write_text(SWEEPING)
    sweeper = Popen([sys.executable, "sweeping.py", broker.url, "2"], cwd=ward,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert sweeper.stdout is not None and sweeper.stdout.readline() == "sweeping\n"
    finally:
        sweeper.kill()  # killed holding the lock
        sweeper.wait()
    kill_mid_call_and_redeliver(ward, server, broker, workers)


def kill_mid_call_and_redeliver(ward, server, broker, workers) -> None:
    """Worker a (the default visibility timeout: it never sweeps its own task back) is
    SIGKILLed in :p02's call, held in the tool until then (it was a 4 s sleep, which a
    loaded machine could outlast before the kill landed); a worker with a 2 s timeout takes
    the task up, finds the intent, and fails the instance without calling again."""
    definitions = held_definitions(ward)
    a = workers.start(definitions=definitions, ASSIGN_UNTIL=str(ward / "never"))
    done = submit(ward, server, broker, "--focus", f"<{EHR}p02>")
    assert done.returncode == 0, done.stderr
    wait_until(lambda: (ward / "assigning").exists(), "the held call")
    a.kill()
    a.wait()
    workers.start(visibility=2, definitions=definitions)
    wait_until(lambda: f"{EHR}p02" in stopped(server.store), "the redelivered task", 120)
    assert [(pid, t) for pid, t, p in ledger(ward) if p == f"{EHR}p02"] == [
        (str(a.pid), "assign")]
    assert instances(server.store)[f"{EHR}p02"][0][1] == "Failed"
    assert "not called again" in failure(server.store, f"{EHR}p02")


def test_tasks_queued_when_the_broker_dies_are_not_lost(ward, server, broker, workers):
    """Submitted with no worker up, the broker SIGKILLed and restarted on its folder: the
    queue comes back from the append-only file and a worker then drives every instance."""
    done = submit(ward, server, broker, "--all")
    assert done.returncode == 0, done.stderr
    assert broker.queued() == PATIENTS
    broker.kill()
    broker.start()
    assert broker.queued() == PATIENTS
    workers.start()
    wait_until(lambda: len(stopped(server.store)) == PATIENTS, "every instance", 120)
    held = instances(server.store)
    assert all(len(v) == 1 and v[0][1] == "Completed" for v in held.values()), held
    assert len(ledger(ward)) == 2 * PATIENTS


def test_a_worker_waits_out_an_unreachable_store_and_commits_nothing_half(
        ward, server, broker, workers):
    """The store is stopped while a worker is mid-batch and comes back 3 s later: the worker
    backs off and resumes; every patient ends with one stopped instance, assign_queue (not
    idempotent) is never called twice, and the digest recomputed from the quads matches the
    kept one. notify_nurse is idempotent with a retry: a call the outage (or a loaded
    machine's 2 s timeout) cut off before its commit is made again, as its contract allows."""
    workers.start(concurrency=1, SLOW_ASSIGN="0.3")  # one at a time: the outage hits the batch
    done = submit(ward, server, broker, "--all")
    assert done.returncode == 0, done.stderr
    wait_until(lambda: len(ledger(ward)) >= 3, "the first instances")
    server.stop()
    time.sleep(3)
    server.start()
    wait_until(lambda: len(stopped(server.store)) == PATIENTS, "every instance", 120)
    held = instances(server.store)
    assert all(len(v) == 1 for v in held.values()), held
    calls = Counter((t, p) for _, t, p in ledger(ward))
    assert max(n for (t, _), n in calls.items() if t == "assign") == 1, calls
    assert "trying again" in workers.log(0)
    check = horismos(ward, "digest", "--check", "--store", server.store)
    assert check.returncode == 0, check.stderr


def quads_but_claims(store: str) -> list[str]:
    """Every quad of ``store`` outside the claims' graph (where a worker keeps its lease),
    sorted, in N-Quads terms (a query's default graph is the union of the named ones)."""
    world = World.open(store)
    rows = world.store.select("""SELECT ?s ?p ?o ?g WHERE {
        GRAPH ?g { ?s ?p ?o } FILTER(?g != <urn:horismos:runtime:claims>) }""", {}, {})
    world.close()
    return sorted(" ".join(r[k].n3() for k in ("s", "p", "o", "g")) for r in rows)


def test_a_task_is_refused_when_the_world_no_longer_holds_what_a_shape_requires(
        ward, server, broker, workers):
    """A shape requires :triagedAt, which no file declares and no tool writes: the world held
    it when the worker started, so the worker took tasks; once the statement is gone every
    result the gate judges by that shape would be rejected after assign_queue had acted. The
    task is refused before its instance begins: no tool called, the world as it was, and the
    worker's log says which shape, where, and what to change."""
    old = "    sh:targetClass :Patient ;\n"
    ehr = (ROOT / "ontologies" / "ehr.ttl").read_text()
    assert ehr.count(old) == 1
    (ward / "ehr.ttl").write_text(
        ehr.replace(old, old + "    sh:property [ sh:path :triagedAt ; sh:minCount 1 ] ;\n"))
    line = ehr[: ehr.index(old)].count("\n") + 2
    stated = (URIRef(f"{EHR}nurse1"), URIRef(f"{EHR}triagedAt"), Literal("08:00"), None)
    with World.open(server.store) as world:
        world.commit(Change(add=[stated]))
    workers.start(definitions=[DEFINITIONS[0], str(ward / "ehr.ttl")])
    wait_until(lambda: " ready." in workers.log(0), "worker 0")
    with World.open(server.store) as world:
        world.commit(Change(remove=[stated]))
    before = quads_but_claims(server.store)
    done = submit(ward, server, broker, "--focus", f"<{EHR}p01>")
    assert done.returncode == 0, done.stderr
    wait_until(lambda: " succeeded in " in workers.log(0), "the task to end")
    said = workers.log(0)
    assert ": 'refused'" in said, said
    assert f"ehr.ttl:{line}: error: :PatientShape: sh:path names :triagedAt" in said, said
    assert "give the property shape sh:minCount 0" in said, said
    assert "Traceback" not in said, said
    assert ledger(ward) == []
    assert quads_but_claims(server.store) == before


def test_a_worker_frozen_past_its_lease_has_its_late_commit_refused(
        ward, server, broker, workers):
    """SIGSTOP during the assign call, longer than the lease and the visibility timeout:
    another worker gets the task, takes the claim and stops the instance with
    OutcomeUnknown. Thawed, the frozen worker's commit is refused by its fence: its queue
    reference (which carries its pid) never lands. (The frozen worker keeps the default
    visibility timeout, so that it is never frozen in a sweep putting its own task back:
    see the killed worker's test.) The call is held in the tool until the other worker has
    stopped the instance (it was a 2 s sleep, which a loaded machine could outlast before
    the SIGSTOP landed, and the call then answered and committed in time)."""
    definitions, release = held_definitions(ward), ward / "release"
    a = workers.start(definitions=definitions, ASSIGN_UNTIL=str(release))
    done = submit(ward, server, broker, "--focus", f"<{EHR}p03>")
    assert done.returncode == 0, done.stderr
    wait_until(lambda: (ward / "assigning").exists(), "the held call")
    os.kill(a.pid, signal.SIGSTOP)
    workers.start(visibility=2, definitions=definitions)
    wait_until(lambda: f"{EHR}p03" in stopped(server.store), "the other worker", 120)
    release.touch()  # the call answers as soon as the worker is thawed
    os.kill(a.pid, signal.SIGCONT)
    wait_until(lambda: "lost its lease" in workers.log(0), "the refused commit", 90)
    assert [(pid, t) for pid, t, p in ledger(ward) if p == f"{EHR}p03"] == [
        (str(a.pid), "assign")]
    world = World.open(server.store)
    refs = world.store.select("SELECT ?r WHERE { ?p ehr:queueRef ?r }",
                              {"p": URIRef(f"{EHR}p03")}, {"ehr": EHR})
    world.close()
    assert refs == []
    assert instances(server.store)[f"{EHR}p03"][0][1] == "Failed"


def test_submit_to_a_broker_that_is_down_says_so_without_a_traceback(ward, server):
    """A broker nobody listens on: exit 2 and a message naming it, after a few retries."""
    done = horismos(ward, "submit", *DEFINITIONS, "--store", server.store, "--broker",
                    "redis://127.0.0.1:1/0", "--focus", f"<{EHR}p01>")
    assert done.returncode == 2, done.stderr
    assert ("the broker at redis://127.0.0.1:1/0 cannot be reached: nothing listens at that "
            "address and port (the connection was refused); check the host and port in "
            "--broker, and start the broker if it is not running (redis-server --port PORT); "
            "0 tasks were enqueued before that; submitting again is safe") in done.stderr
    assert "Errno" not in done.stderr and "Error 111" not in done.stderr
    assert "Traceback" not in done.stderr


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that takes connections and never says a word: another program on the broker's
    port, or a firewall that holds connections open."""
    listener = socket.create_server(("127.0.0.1", 0))
    taken: list[socket.socket] = []

    def take() -> None:
        with contextlib.suppress(OSError):  # the listener closed at the end of the test
            while True:
                taken.append(listener.accept()[0])

    threading.Thread(target=take, daemon=True).start()
    yield listener.getsockname()[1]
    listener.close()
    for connection in taken:
        connection.close()


@pytest.mark.parametrize("what", ["worker", "submit"])
def test_a_broker_port_that_never_answers_is_refused_not_waited_on_forever(
        silent_port, monkeypatch, what):
    """A worker at start, or a submit, held its first connection to such a port forever: no
    socket timeout was set, so the command hung with nothing said. Both are refused once the
    broker has had its time to answer, naming the address and what to check."""
    monkeypatch.setitem(_queue._ANSWERING, "socket_connect_timeout", 0.1)
    monkeypatch.setitem(_queue._ANSWERING, "socket_timeout", 0.1)
    url = f"redis://127.0.0.1:{silent_port}/0"
    said: list[BaseException] = []

    def attempt() -> None:
        try:
            if what == "worker":
                _queue.broker_answers(_queue.celery_app(url))
            else:
                _queue.submit_instances(url, URIRef(f"{EHR}w"), [URIRef(f"{EHR}p01")])
        except BaseException as e:
            said.append(e)

    trying = threading.Thread(target=attempt, daemon=True)
    trying.start()
    trying.join(30)
    assert not trying.is_alive(), f"{what} still waits on a port that never answers"
    assert len(said) == 1 and isinstance(said[0], BrokerError), said
    assert str(said[0]).startswith(
        f"the broker at {url} did not answer within 0.1 s (something there took the connection "
        "and said nothing, or a firewall held it); check the host and port in --broker"), said


def test_a_worker_needs_a_world_other_processes_share(tmp_path):
    done = horismos(tmp_path, "worker", *DEFINITIONS, "--store", "memory", "--broker",
                    "redis://127.0.0.1:1/0")
    assert done.returncode == 2
    assert "not shared by other processes" in done.stderr and "sparql:URL" in done.stderr


def test_a_worker_given_a_misspelt_store_kind_says_unknown_store(tmp_path):
    """`--store sparq:http://…` was called "not shared by other processes", as if the kind
    were one; it is no kind at all, said as every command says it."""
    done = horismos(tmp_path, "worker", *DEFINITIONS, "--store", "sparq:http://127.0.0.1:1/q",
                    "--broker", "redis://127.0.0.1:1/0")
    assert done.returncode == 2, done.stderr
    assert "unknown store 'sparq:http://127.0.0.1:1/q'" in done.stderr, done.stderr
    assert "not shared" not in done.stderr and "Traceback" not in done.stderr
    for kind in ("oxigraph:st", "journal:j"):  # a kind that is one, but not shared
        done = horismos(tmp_path, "worker", *DEFINITIONS, "--store", kind, "--broker",
                        "redis://127.0.0.1:1/0")
        assert done.returncode == 2 and "not shared by other processes" in done.stderr
        assert not (tmp_path / kind.partition(":")[2]).exists()  # nothing made at the path


def test_a_worker_given_a_misspelt_policy_refuses_to_start_and_leaves_the_queue_be(
        ward, server, broker, workers):
    """``--allow`` was read by each task, not at start: a worker given ``ExternalComit`` said
    it was taking tasks, took each one queued, refused it (logged) and acknowledged it, so the
    batch was gone before anyone saw why. It stops with exit 2 naming the class meant, and
    the task queued waits for a worker that can run it."""
    queued = submit(ward, server, broker, "--focus", f"<{EHR}p01>")
    assert queued.returncode == 0, queued.stderr
    typo = workers.start(more=("--allow", "ReadOnly,HostStateWrite,ExternalComit"))
    assert typo.wait(60) == 2, workers.log(0)
    said = workers.log(0)
    assert "did you mean ExternalCommit?" in said and "Traceback" not in said, said
    assert "taking tasks" not in said and ledger(ward) == []
    workers.start()
    wait_until(lambda: [s for _, s in instances(server.store).get(f"{EHR}p01", [])]
               == ["Completed"], "the queued task")
    assert [(t, p) for _, t, p in ledger(ward)] == [("assign", f"{EHR}p01"),
                                                   ("notify", f"{EHR}p01")]


def test_a_worker_holds_each_step_to_its_policy_and_to_approval(ward, server, broker, workers):
    """A worker drives steps no person watches, so what it may call is its own ``--allow``
    and every approval: a step outside the policy blocks, one needing approval waits, and
    neither tool is called."""
    text = (ROOT / "workflows" / "triage.ttl").read_text()
    guarded = '    horis:idempotent false ;\n    horis:sideEffect horis:ExternalCommit ;\n' \
        '    horis:requiresApproval true .\n\n:ehr.notify_nurse'
    (ward / "triage.ttl").write_text(
        text.replace("    horis:idempotent false .\n\n:ehr.notify_nurse", guarded, 1))
    assert (ward / "triage.ttl").read_text() != text
    definitions = [str(ward / "triage.ttl"), DEFINITIONS[1]]
    narrow = workers.start(definitions=definitions)
    blocked = submit(ward, server, broker, "--focus", f"<{EHR}p01>", wait=60)
    assert "1 blocked" in blocked.stdout, blocked.stdout + blocked.stderr + workers.log(0)
    with World.open(server.store) as world:
        (row,) = world.store.select("SELECT ?why WHERE { GRAPH ?g { ?i horis:blockedBy ?why } }",
                                    {}, {"horis": "https://w3id.org/horismos#"})
        why = row["why"]
    assert "assign_queue has side effect ExternalCommit, which the policy does not allow" \
        in str(why), why
    narrow.terminate()
    narrow.wait(30)
    workers.start(definitions=definitions,
                  more=("--allow", "ReadOnly,HostStateWrite,ExternalCommit"))
    waits = submit(ward, server, broker, "--focus", f"<{EHR}p02>", wait=60)
    assert "1 waiting" in waits.stdout, waits.stdout + waits.stderr + workers.log(1)
    assert ledger(ward) == []
