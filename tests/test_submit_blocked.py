"""A focus submitted again: its blocked instance goes on under the worker's policy; a finished
or waiting one is left as it is.

A worker whose ``--allow`` leaves out what a step calls blocks the instance, and says to
widen the policy. The operator restarted the workers with the wider ``--allow`` and submitted
the focus again, and nothing happened: the task found the focus's claim done (it is marked
done when the instance stops) and ended, and ``submit --wait`` said "blocked" again at once,
with the old advice to widen what had been widened. Only ``run --focus`` went on with it. A
task now continues a blocked instance, as ``run --focus`` does; one whose instance completed,
failed or waits calls nothing again (a client submitting twice, a task redelivered), and a
wait is left to ``resume``/``wake``. Real ``oxigraph serve``, real redis, real workers; the
tool appends to a ledger, so a second call shows.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from in_process import horismos_in_process, horismos_load
from oxigraph_server import OxigraphServer
from redis_server import RedisServer
from shop_files import CHARGE_TOOL, ONE_ORDER, PAY_WORKFLOW, SHOP_HEAD
from worker_process import start_worker, stop_workers

from horismos import World

SHOP = """\
def charge(order):
    with open("ledger", "a") as f:
        f.write(str(order) + "\\n")
    return {"paymentRef": "P-1"}
"""

O1 = "http://example.org/shop#o1"
WIDE = "ReadOnly,HostStateWrite,ExternalCommit"


def _shop(tmp_path: Path, server: OxigraphServer, tool: str) -> None:
    """The pay workflow whose charge has ``tool``'s lines, and a world of one order."""
    (tmp_path / "defs.ttl").write_text(
        SHOP_HEAD + CHARGE_TOOL + tool + '    horis:binding "python:charge" .\n' + PAY_WORKFLOW
    )
    (tmp_path / "shop.py").write_text(SHOP)
    (tmp_path / "world.ttl").write_text(ONE_ORDER)
    horismos_load(tmp_path, server.store, "world.ttl")


def _worker(tmp_path: Path, server: OxigraphServer, broker: RedisServer, n: int, *allow: str
            ) -> subprocess.Popen[bytes]:  # fmt: skip
    return start_worker(tmp_path, tmp_path / f"worker{n}.log", "--store", server.store,
                        "--broker", broker.url, "--tools", "shop.py", "-c", "1", "-v",
                        *(("--allow", *allow) if allow else ()))  # fmt: skip


def _submit(tmp_path: Path, server: OxigraphServer, broker: RedisServer, *, wait: bool = True
            ) -> subprocess.CompletedProcess[str]:  # fmt: skip
    """``submit --focus :o1``, with ``--wait 30`` unless not ``wait``."""
    return horismos_in_process(tmp_path, "submit", "defs.ttl", "--store", server.store,
                               "--broker", broker.url, "--focus", ":o1",
                               *(("--wait", "30") if wait else ()))  # fmt: skip


def _calls(tmp_path: Path) -> list[str]:
    ledger = tmp_path / "ledger"
    return ledger.read_text().split() if ledger.exists() else []


def _instances(server: OxigraphServer) -> list[tuple[str, int]]:
    """The status and version of each instance the world holds."""
    with World.open(server.store) as world:
        rows = world.store.select(
            """SELECT ?s ?v WHERE { GRAPH <urn:horismos:instances> {
            ?i horis:status ?s ; horis:version ?v } }""",
            {},
            {"horis": "https://w3id.org/horismos#"},
        )
    return sorted((str(r["s"]).rpartition("#")[2], int(r["v"].toPython())) for r in rows)


def _said(log: Path, what: str) -> None:
    deadline = time.monotonic() + 30
    while what not in log.read_text():
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.05)


def _tasks_done(n: int, *logs: Path) -> None:
    """Wait until the workers writing ``logs`` logged ``n`` tasks for :data:`O1` as ended."""
    deadline = time.monotonic() + 30
    while (said := "".join(log.read_text() for log in logs)).count(f"for {O1}:") < n:
        assert time.monotonic() < deadline, said
        time.sleep(0.05)


def test_a_blocked_instance_submitted_again_goes_on_under_the_new_policy(
    tmp_path: Path, server: OxigraphServer, broker: RedisServer
) -> None:
    _shop(tmp_path, server, "    horis:idempotent false ;\n"
                            "    horis:sideEffect horis:ExternalCommit ;\n")  # fmt: skip
    worker = _worker(tmp_path, server, broker, 0)  # the default policy: no ExternalCommit
    try:
        first = _submit(tmp_path, server, broker)
    finally:
        stop_workers(worker)
    assert first.returncode == 4, first.stdout + first.stderr
    assert "(allowed: HostStateWrite, ReadOnly)" in first.stdout, first.stdout
    # restarted with another policy that still leaves ExternalCommit out: the task goes on
    # with the instance and --wait says why it blocks now, not what the first worker said
    worker = _worker(tmp_path, server, broker, 1, "ReadOnly")
    try:
        again = _submit(tmp_path, server, broker)
    finally:
        stop_workers(worker)
    assert again.returncode == 4, again.stdout + again.stderr
    assert "1 blocked" in again.stdout, again.stdout
    assert "(allowed: ReadOnly); widen it with --allow ExternalCommit,ReadOnly" in again.stdout
    assert "HostStateWrite" not in again.stdout, again.stdout
    # widened as it said, on two workers, and the focus submitted twice at once: the same
    # instance goes on, once, and the tool is called once
    wide = [_worker(tmp_path, server, broker, n, WIDE) for n in (2, 3)]
    try:
        for n in (2, 3):  # both take tasks: one each, at once
            _said(tmp_path / f"worker{n}.log", "taking tasks")
        assert _submit(tmp_path, server, broker, wait=False).returncode == 0
        done = _submit(tmp_path, server, broker)
        _tasks_done(2, tmp_path / "worker2.log", tmp_path / "worker3.log")
    finally:
        stop_workers(*wide)
    logs = "".join((tmp_path / f"worker{n}.log").read_text() for n in (1, 2, 3))
    assert done.returncode == 0, done.stdout + done.stderr + logs
    assert done.stdout.splitlines() == ["1 completed"], done.stdout
    assert _calls(tmp_path) == [O1]
    assert [s for s, _ in _instances(server)] == ["Completed"]
    assert logs.count(f"for {O1}: completed") == 1 and "Traceback" not in logs, logs


def test_a_finished_instance_submitted_again_calls_nothing(
    tmp_path: Path, server: OxigraphServer, broker: RedisServer
) -> None:
    _shop(tmp_path, server, "    horis:idempotent false ;\n")
    log = tmp_path / "worker0.log"
    worker = _worker(tmp_path, server, broker, 0)
    try:
        first = _submit(tmp_path, server, broker)
        assert first.returncode == 0, first.stdout + first.stderr + log.read_text()
        before = _instances(server)
        assert [s for s, _ in before] == ["Completed"] and _calls(tmp_path) == [O1]
        for n in (2, 3):  # a client submitting again, twice
            again = _submit(tmp_path, server, broker)
            assert again.returncode == 0 and "1 completed" in again.stdout, again.stdout
            _tasks_done(n, log)
    finally:
        stop_workers(worker)
    assert _calls(tmp_path) == [O1]
    assert _instances(server) == before  # no other instance, and this one untouched
    assert log.read_text().count(f"for {O1}: done elsewhere") == 2, log.read_text()


def test_a_waiting_instance_submitted_again_stays_waiting(
    tmp_path: Path, server: OxigraphServer, broker: RedisServer
) -> None:
    _shop(tmp_path, server, "    horis:idempotent false ;\n    horis:requiresApproval true ;\n")
    log = tmp_path / "worker0.log"
    worker = _worker(tmp_path, server, broker, 0)
    try:
        first = _submit(tmp_path, server, broker)
        assert first.returncode == 3 and "1 waiting" in first.stdout, first.stdout + first.stderr
        before = _instances(server)
        again = _submit(tmp_path, server, broker)
        assert again.returncode == 3 and "1 waiting" in again.stdout, again.stdout
        _tasks_done(2, log)
    finally:
        stop_workers(worker)
    assert _calls(tmp_path) == []
    assert _instances(server) == before == [("Waiting", before[0][1])]


def test_a_claim_taken_again_after_the_block_ended_elsewhere_drives_nothing(
    tmp_path: Path, server: OxigraphServer
) -> None:
    """The claim is taken again in an update that reads the instance blocked, judged on a
    snapshot: one judged before another worker went on with the instance can land after that
    worker completed it and gave the claim back. Its worker then wins the claim; it reads the
    instance again under it, finds it completed, and calls nothing. An update judged now
    takes nothing: the instance is no longer blocked."""
    from rdflib import URIRef

    from horismos import Agent
    from horismos._claims import CLAIMS, C, _claim_iri
    from horismos._queue import InstanceDriver

    calls: list[str] = []

    def charge(order: object) -> dict[str, str]:
        calls.append(str(order))
        return {"paymentRef": "P-1"}

    _shop(tmp_path, server, "    horis:idempotent false ;\n"
                            "    horis:sideEffect horis:ExternalCommit ;\n")  # fmt: skip
    agent = Agent.from_files(tmp_path / "defs.ttl", tools={"charge": charge})
    pay, focus = "http://example.org/shop#Pay", URIRef(O1)
    policies = ("ReadOnly,HostStateWrite", WIDE, WIDE)
    drivers = [InstanceDriver(agent, server.store, allow=p.split(",")) for p in policies]
    narrow, wide, late = drivers
    try:
        assert narrow.drive(pay, O1) == "blocked"
        stuck = _instances(server)
        assert wide.drive(pay, O1) == "completed" and calls == [O1]
        done = _instances(server)
        worker = late._live_worker()
        assert worker._claim(agent.workflow(pay), [focus], blocked=True) > 0
        claim = _claim_iri(URIRef(pay), focus)
        with World.open(server.store) as world:
            owners = world.store.select(
                f"SELECT ?w WHERE {{ GRAPH <{CLAIMS}> {{ <{claim}> <{C}worker> ?w }} }}", {}, {}
            )
            assert owners == []  # judged now: completed, so not taken again
            # the late update, judged when the instance was blocked, lands only now
            world.store.update(
                f"INSERT DATA {{ GRAPH <{CLAIMS}> {{ <{claim}> <{C}worker> <{worker.iri}> }} }}"
            )
        assert late.drive(pay, O1) == "done elsewhere"
    finally:
        for driver in drivers:
            driver.close()
    assert calls == [O1]
    assert [s for s, _ in stuck] == ["Blocked"] and _instances(server) == done


def test_an_instance_completed_between_two_reads_of_the_wait_is_said_completed(monkeypatch):
    """``submit --wait`` said "1 blocked" of an instance a task completed: it read the
    statuses (still blocked), then whether the block was still the one of before (by then the
    instance had completed, so it was not), and took the first reading. The task's commit is
    made here between the wait's reads, as a worker's landed in the run that showed it."""
    from rdflib import Literal, URIRef

    from horismos import Change
    from horismos._queue import blocked_states, instance_statuses, wait_past
    from horismos._stores.base import INSTANCES
    from horismos._vocab import HORIS

    world = World.open("oxigraph")
    instance, workflow, focus = (URIRef(f"urn:test:{n}") for n in ("i", "wf", "o1"))
    state = [(instance, HORIS.workflow, workflow, INSTANCES),
             (instance, HORIS.focus, focus, INSTANCES)]  # fmt: skip
    blocked = [(instance, HORIS.status, HORIS.Blocked, INSTANCES),
               (instance, HORIS.version, Literal(3), INSTANCES)]  # fmt: skip
    world.commit(Change(add=[*state, *blocked]))
    since = blocked_states(world, workflow, [focus])
    assert since  # as submit read it before handing the task over

    landed = []

    def the_task_lands_after(world, workflow, foci):  # the worker's commit, right after a read
        read = instance_statuses(world, workflow, foci)
        if not landed:
            landed.append(True)
            completed = [(instance, HORIS.status, HORIS.Completed, INSTANCES),
                         (instance, HORIS.version, Literal(4), INSTANCES)]  # fmt: skip
            world.commit(Change(add=completed, remove=blocked))
        return read

    monkeypatch.setattr("horismos._queue.instance_statuses", the_task_lands_after)
    statuses, untaken = wait_past(world, workflow, [focus], timeout=5, poll=0.01, since=since)
    assert statuses == {focus: "completed"} and untaken == []
