"""A service that opens one on-disk world and runs an instance per event, the same event
delivered twice at once: two ``arun`` awaited together (two requests of one async handler),
or two ``agent.run`` from two threads (a sync handler's thread pool). The tool that is not
idempotent bills a ledger; it must bill once, the world keep its answer, and the second
caller be told the focus is busy, not handed a ``Conflict`` or a failed instance.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from billed_order import DEFINITIONS
from charge_ledger import PREFIXES
from in_process import horismos_load
from oxigraph_server import OxigraphServer
from rdflib import URIRef

from horismos import Agent, NotHeld, World

PAY = "http://example.org/pay#"


def _service(tmp_path: Path, bill: object) -> tuple[Agent, World]:
    (tmp_path / "pay.ttl").write_text(DEFINITIONS)
    (tmp_path / "world.ttl").write_text(PREFIXES + ":o1 a :Order .\n")
    world = World.open(f"oxigraph:{tmp_path / 'store'}")
    world.load(tmp_path / "world.ttl")
    agent = Agent.from_files(tmp_path / "pay.ttl", tools={"shop.bill": bill})
    return agent, world


def _landed(world: World) -> list[str]:
    return [str(r) for r in world.graph.objects(URIRef(f"{PAY}o1"), URIRef(f"{PAY}billRef"))]


def test_one_event_twice_at_once_in_one_process_bills_once_and_keeps_the_answer(
    tmp_path: Path,
) -> None:
    ledger: list[str] = []

    async def bill(order: object) -> dict[str, str]:
        ledger.append(str(order))
        await asyncio.sleep(0.3)  # the second request comes while the first is in its call
        return {"billRef": f"B-{len(ledger)}"}

    agent, world = _service(tmp_path, bill)

    async def both() -> list[object]:
        first = asyncio.ensure_future(agent.arun(world, ":Pay", focus=":o1", keep=True))
        await asyncio.sleep(0.1)
        second = asyncio.ensure_future(agent.arun(world, ":Pay", focus=":o1"))
        return await asyncio.gather(first, second, return_exceptions=True)

    try:
        first, second = asyncio.run(both())
        assert ledger == [f"{PAY}o1"]
        # the first run was not taken over: it completed and its answer landed (it was
        # failed by the second, its bill held in doubt, and it raised Conflict)
        assert not isinstance(first, BaseException), first
        assert first.status == "completed"  # type: ignore[union-attr]
        assert _landed(world) == ["B-1"]
        # the second is told the focus is busy, as a handler can map to 409
        assert isinstance(second, NotHeld), second
        assert "another run in this process is driving :Pay for :o1" in str(second)
        # once the first has returned, the same event asked again runs nothing new
        again = asyncio.run(agent.arun(world, ":Pay", focus=":o1", again=False))
        assert again.status == "completed" and again.instance == first.instance  # type: ignore[union-attr]
        assert ledger == [f"{PAY}o1"]
    finally:
        world.close()


def test_again_false_asked_while_the_first_runs_is_answered_or_busy_never_a_second_bill(
    tmp_path: Path,
) -> None:
    ledger: list[str] = []
    calling = threading.Event()
    go_on = threading.Event()

    def bill(order: object) -> dict[str, str]:  # sync: called on a worker thread
        ledger.append(str(order))
        calling.set()
        go_on.wait(10)
        return {"billRef": "B-1"}

    agent, world = _service(tmp_path, bill)
    answers: list[object] = []

    def first() -> None:
        answers.append(agent.run(world, ":Pay", focus=":o1"))

    try:
        runner = threading.Thread(target=first)
        runner.start()
        assert calling.wait(10)
        # a sync handler's other thread, the event delivered again while the bill is made
        with pytest.raises(NotHeld, match="driving :Pay for :o1"):
            agent.run(world, ":Pay", focus=":o1")
        repeated = agent.run(world, ":Pay", focus=":o1", again=False)
        assert repeated.status == "running"  # its instance as it stands, nothing run
        go_on.set()
        runner.join(10)
        assert [a.status for a in answers] == ["completed"]  # type: ignore[attr-defined]
        assert ledger == [f"{PAY}o1"] and _landed(world) == ["B-1"]
    finally:
        go_on.set()
        world.close()


SLOW_SHOP = '''
import os, time
from pathlib import Path

def bill(order):
    Path(os.environ["CALLED"]).write_text("called")
    time.sleep(float(os.environ["SLOW"]))
    return {"billRef": "B-other"}
'''


def test_a_focus_another_process_drives_on_a_shared_world_is_named_as_the_run_names_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "pay.ttl").write_text(DEFINITIONS)
    (tmp_path / "world.ttl").write_text(PREFIXES + ":o1 a :Order .\n")
    (tmp_path / "shop.py").write_text(SLOW_SHOP)
    server = OxigraphServer(tmp_path / "store")
    other = None
    try:
        horismos_load(tmp_path, server.store, "world.ttl")
        called = tmp_path / "called"
        # another process of the service drives :o1, mid-call
        other = subprocess.Popen(
            [sys.executable, "-m", "horismos", "run", "pay.ttl", "--store", server.store,
             "--tools", "shop.py", "--focus", ":o1"],
            cwd=tmp_path, env={**os.environ, "CALLED": str(called), "SLOW": "3"},
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not called.exists():
            assert other.poll() is None and time.monotonic() < deadline, other.communicate()
            time.sleep(0.05)
        agent = Agent.from_files(tmp_path / "pay.ttl", tools={"shop.bill": lambda order: {}})
        with World.open(server.store) as world, pytest.raises(NotHeld) as refused:
            agent.run(world, ":Pay", focus=":o1")
        # it said "http://example.org/pay#Pay for http://example.org/pay#o1"
        assert "another live process is driving :Pay for :o1 on this shared world" in str(
            refused.value)
        assert other.wait(60) == 0
    finally:
        if other is not None and other.poll() is None:
            other.kill()
        server.stop()


def test_an_event_again_while_its_instance_waits_for_approval_is_told_what_to_approve(
    tmp_path: Path,
) -> None:
    ledger: list[str] = []

    def bill(order: object) -> dict[str, str]:
        ledger.append(str(order))
        return {"billRef": "B-1"}

    (tmp_path / "pay.ttl").write_text(
        DEFINITIONS.replace("horis:idempotent false .", "horis:idempotent false ;\n"
                            "    horis:requiresApproval true ."))
    (tmp_path / "world.ttl").write_text(PREFIXES + ":o1 a :Order .\n")
    agent = Agent.from_files(tmp_path / "pay.ttl", tools={"shop.bill": bill})
    with World.open(f"oxigraph:{tmp_path / 'store'}") as world:
        world.load(tmp_path / "world.ttl")
        first = agent.run(world, ":Pay", focus=":o1")
        assert first.status == "waiting" and "Fingerprint: " in (first.instances[0].brief or "")
        # the event delivered again (a client's retry, a queue's redelivery): nothing runs,
        # and the answer says what to approve, as the first did (it said no brief at all)
        again = agent.run(world, ":Pay", focus=":o1", again=False)
        assert again.status == "waiting" and not again.steps
        assert again.instances[0].brief == first.instances[0].brief
        fingerprint = again.instances[0].brief.split("Fingerprint: ")[1].split()[0]  # type: ignore[union-attr]
        agent.approve(world, again.instance, fingerprint, operator="alice")
        assert agent.resume(world, again.instance).status == "completed"
        assert ledger == [f"{PAY}o1"]


class _Shop:
    """Three orders on an on-disk world, whose bill of ``slow`` waits in the call (``calling``
    set) until ``go_on`` is; every bill is kept in ``ledger``."""

    def __init__(self, tmp_path: Path, slow: str) -> None:
        self.ledger: list[str] = []
        self.calling, self.go_on = threading.Event(), threading.Event()
        self.slow = slow
        self.agent, self.world = _service(tmp_path, self.bill)
        self.world.load_data(PREFIXES + ":o2 a :Order . :o3 a :Order .")

    def bill(self, order: object) -> dict[str, str]:
        self.ledger.append(str(order))
        if str(order).endswith(self.slow):
            self.calling.set()
            self.go_on.wait(10)
        return {"billRef": f"B-{str(order)[-2:]}"}


def test_a_batch_leaves_out_the_focus_another_run_of_the_process_drives(
    tmp_path: Path,
) -> None:
    """``run(all=True)`` beside a request's run of one order, in one process: the batch read
    the order's running instance as one a dead process left and continued it, holding the
    request's bill in doubt and failing its instance (the request then raised Conflict)."""
    shop = _Shop(tmp_path, slow="o2")
    agent, world, ledger = shop.agent, shop.world, shop.ledger
    calling, go_on = shop.calling, shop.go_on
    answers: list[object] = []
    request = threading.Thread(target=lambda: answers.append(
        agent.run(world, ":Pay", focus=":o2")))
    try:
        request.start()
        assert calling.wait(10)
        batch = agent.run(world, ":Pay", all=True)
        go_on.set()
        request.join(10)
        assert [str(i.focus)[-2:] for i in batch.instances] == ["o1", "o3"]
        assert batch.status == "completed"
        assert [a.status for a in answers] == ["completed"]  # type: ignore[attr-defined]
        assert sorted(ledger) == [f"{PAY}o1", f"{PAY}o2", f"{PAY}o3"]
        assert [str(o) for o in world.graph.objects(URIRef(f"{PAY}o2"),
                                                     URIRef(f"{PAY}billRef"))] == ["B-o2"]
    finally:
        go_on.set()
        world.close()


def test_a_batch_leaves_out_a_focus_another_run_finished_while_it_ran(tmp_path: Path) -> None:
    """A request's run of an order the batch had not reached yet, started and finished while
    the batch billed another: the batch, which had read the order as never run, started it
    again (its guard blocked it: a blocked instance, where --all leaves a finished focus out)."""
    shop = _Shop(tmp_path, slow="o1")
    agent, world, ledger = shop.agent, shop.world, shop.ledger
    calling, go_on = shop.calling, shop.go_on
    batches: list[object] = []
    runner = threading.Thread(target=lambda: batches.append(agent.run(world, ":Pay", all=True)))
    try:
        runner.start()
        assert calling.wait(10)
        assert agent.run(world, ":Pay", focus=":o2").status == "completed"
        go_on.set()
        runner.join(10)
        (batch,) = batches
        assert [(str(i.focus)[-2:], i.status) for i in batch.instances] == [  # type: ignore[attr-defined]
            ("o1", "completed"), ("o3", "completed")]
        assert sorted(ledger) == [f"{PAY}o1", f"{PAY}o2", f"{PAY}o3"]
        assert [i.status for i in world.instances()] == ["completed"] * 3
    finally:
        go_on.set()
        world.close()
