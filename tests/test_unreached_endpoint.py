"""A step whose HTTP endpoint is down when it runs — at a first run, or once a wait it
followed is answered — and that declares no ``horis:onError``: nothing was sent, so the
instance is blocked at that step, not failed for good, and the answer to its wait is kept.
Once the endpoint answers again, ``resume`` (without facts) or ``run --focus`` calls the tool,
once. A step that declares ``horis:onError`` still takes it, and an instance failed for any
other reason stays failed. A real HTTP server on 127.0.0.1, stopped and started again on
its port.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from forked import horismos_forked
from listening import serve_in_thread
from rdflib import Namespace

from horismos import Agent, Unreachable, UsageError, World

EX = Namespace("http://example.org/down#")

PREFIXES = """\
@prefix :      <http://example.org/down#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .
"""

ONTOLOGY = """
:Patient a owl:Class .
:queueRef a owl:DatatypeProperty ; rdfs:domain :Patient ; rdfs:range xsd:string .
:confirmed a owl:DatatypeProperty ; rdfs:domain :Patient ; rdfs:range xsd:boolean .
:noted a owl:DatatypeProperty ; rdfs:domain :Patient ; rdfs:range xsd:string .
"""

WORLD = ":p1 a :Patient .\n:p2 a :Patient .\n"


def definitions(url: str, on_error: bool = False) -> str:
    """A workflow waiting for a confirmation, then queueing its patient at ``url`` (a tool
    that is not idempotent), and one that queues at once."""
    caught = "horis:onError :Note ;" if on_error else ""
    return (
        ONTOLOGY
        + f"""
:t.queue a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:subject "patient" ;
                   horis:asserts [ horis:property :queueRef ; horis:type xsd:string ] ] ;
    horis:binding "{url}" ;
    horis:timeout "5s" .
:Confirmed a horis:Workflow ; horis:focusType :Patient ; horis:start :Ask .
:Ask a horis:WaitStep ; horis:reason "confirm the patient" ; horis:wake horis:OperatorInput ;
    horis:delivery horis:Final ; horis:until "?this :confirmed true ." ; horis:next :Queue .
:Queue a horis:ActionStep ; horis:tool :t.queue ; {caught}
    horis:bind [ horis:arg "patient" ; horis:var "this" ] ;
    horis:requires "FILTER NOT EXISTS {{ ?this :queueRef ?r }}" .
:Direct a horis:Workflow ; horis:focusType :Patient ; horis:start :QueueNow .
:QueueNow a horis:ActionStep ; horis:tool :t.queue ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] ;
    horis:requires "FILTER NOT EXISTS {{ ?this :queueRef ?r }}" .
:Note a horis:WaitStep ; horis:reason "queue by hand" ; horis:wake horis:OperatorInput ;
    horis:delivery horis:Final ; horis:until "?this :noted ?n ." .
"""
    )


class Endpoint:
    """A JSON endpoint on 127.0.0.1 that can be stopped and started again on its port;
    every request it received, kept."""

    def __init__(self) -> None:
        self.received: list[Any] = []
        self.status = 200
        self._stop: Callable[[], None] | None = None
        self.start(0)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/queue"

    def start(self, port: int | None = None) -> None:
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                endpoint.received.append(body)
                data = json.dumps({"queueRef": "Q-1"}).encode()
                self.send_response(endpoint.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", self.port if port is None else port), Handler)
        server.daemon_threads = True
        self.port = server.server_address[1]
        self._stop = serve_in_thread(server)

    def stop(self) -> None:
        if self._stop is not None:
            self._stop()
            self._stop = None


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    e = Endpoint()
    e.stop()  # down from the start: each test starts it when it is back
    yield e
    e.stop()


def load(folder: Path, url: str, on_error: bool = False) -> tuple[Agent, World]:
    (folder / "defs.ttl").write_text(PREFIXES + definitions(url, on_error), encoding="utf-8")
    (folder / "world.ttl").write_text(PREFIXES + WORLD, encoding="utf-8")
    return Agent.from_files(folder / "defs.ttl"), World.from_files(folder / "world.ttl")


CONFIRM = "@prefix : <http://example.org/down#> . :p1 :confirmed true ."


def test_a_first_run_is_blocked_and_goes_on_once_the_endpoint_is_back(endpoint, tmp_path):
    agent, world = load(tmp_path, endpoint.url)
    run = agent.run(world, workflow=EX.Direct, focus=EX.p1)
    assert run.status == "blocked", run.error
    (step,) = run.steps
    assert step.status == "blocked" and isinstance(step.error, Unreachable)
    said = str(step.error)
    assert "nothing was sent" in said and "blocked, not failed" in said
    assert f"--instance {str(run.instance).rsplit(':', 1)[-1][:8]}" in said
    assert (EX.p1, EX.queueRef, None) not in world.graph  # nothing of the call landed
    (listed,) = world.instances()
    assert listed.status == "blocked" and listed.error_kind == "not_sent"
    endpoint.start()
    again = agent.resume(world, run.instance)
    assert again.status == "completed"
    assert again.instance == run.instance
    assert endpoint.received == [{"patient": str(EX.p1)}]  # sent once
    assert str(world.graph.value(EX.p1, EX.queueRef)) == "Q-1"


def test_an_answered_wait_is_kept_and_resume_calls_the_tool_once_it_answers(endpoint, tmp_path):
    agent, world = load(tmp_path, endpoint.url)
    run = agent.run(world, workflow=EX.Confirmed, focus=EX.p1)
    assert run.status == "waiting"
    blocked = agent.resume(world, run.instance, CONFIRM)
    assert blocked.status == "blocked"
    assert [s.status for s in blocked.steps] == ["completed", "blocked"]
    assert (EX.p1, EX.confirmed, None) in world.graph  # the answer is not lost
    (stored,) = world.instances()
    assert stored.status == "blocked" and stored.current == EX.Queue
    # still down: blocked again, still nothing sent
    assert agent.resume(world, run.instance).status == "blocked"
    with pytest.raises(UsageError, match="takes no facts"):
        agent.resume(world, run.instance, CONFIRM)
    endpoint.start()
    done = agent.resume(world, run.instance)
    assert done.status == "completed", done.error
    assert [s.status for s in done.steps] == ["completed"]
    assert endpoint.received == [{"patient": str(EX.p1)}]
    with pytest.raises(UsageError, match="completed, not waiting"):
        agent.resume(world, run.instance)


def test_a_declared_on_error_still_fires(endpoint, tmp_path):
    agent, world = load(tmp_path, endpoint.url, on_error=True)
    run = agent.run(world, workflow=EX.Confirmed, focus=EX.p1)
    went = agent.resume(world, run.instance, CONFIRM)
    assert went.status == "waiting"
    assert [s.status for s in went.steps] == ["completed", "failed", "waiting"]
    assert isinstance(went.steps[1].error, Unreachable)
    assert world.instances()[0].current == EX.Note
    assert endpoint.received == []


def test_an_instance_failed_for_another_reason_stays_failed(endpoint, tmp_path):
    endpoint.status = 500
    endpoint.start()
    agent, world = load(tmp_path, endpoint.url)
    run = agent.run(world, workflow=EX.Direct, focus=EX.p1)
    assert run.status == "failed"
    with pytest.raises(UsageError, match="failed, not waiting"):
        agent.resume(world, run.instance)
    assert len(endpoint.received) == 1


def test_the_command_line_blocks_lists_and_resumes(endpoint, tmp_path):
    load(tmp_path, endpoint.url)
    store = ["--store", "oxigraph:store"]
    ran = horismos_forked(
        tmp_path,
        "run",
        "defs.ttl",
        "--world",
        "world.ttl",
        *store,
        "--workflow",
        str(EX.Confirmed),
        "--focus",
        str(EX.p1),
    )
    assert ran.returncode == 3, ran.stderr
    listed = horismos_forked(tmp_path, "instances", "defs.ttl", *store, "--format", "json")
    iid = json.loads(listed.stdout)[0]["instance"]
    answered = horismos_forked(
        tmp_path, "resume", "defs.ttl", *store, "--instance", iid, "--facts", CONFIRM
    )
    assert answered.returncode == 4, answered.stderr  # blocked, not 1 (failed)
    assert "Traceback" not in answered.stderr
    assert ":Queue is blocked, not failed" in answered.stdout
    assert "horismos resume … --instance" in answered.stdout
    listed = horismos_forked(tmp_path, "instances", "defs.ttl", *store, "--format", "json")
    (row,) = json.loads(listed.stdout)
    assert row["status"] == "blocked" and "nothing was sent" in row["why"]
    endpoint.start()
    resumed = horismos_forked(
        tmp_path, "resume", "defs.ttl", *store, "--instance", iid, "--trace", "resumed.jsonl"
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert endpoint.received == [{"patient": str(EX.p1)}]
    endpoint.stop()  # a first run: blocked, and `run --focus` again picks it up
    first = ["run", "defs.ttl", *store, "--workflow", str(EX.Direct), "--focus", str(EX.p2)]
    ran = horismos_forked(tmp_path, *first)
    assert ran.returncode == 4, ran.stdout + ran.stderr
    assert ":QueueNow is blocked, not failed" in ran.stdout
    endpoint.start()
    ran = horismos_forked(tmp_path, *first)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert endpoint.received == [{"patient": str(EX.p1)}, {"patient": str(EX.p2)}]
    listed = horismos_forked(tmp_path, "instances", "defs.ttl", *store, "--format", "json")
    assert sorted(r["status"] for r in json.loads(listed.stdout)) == ["completed"] * 2
    replayed = horismos_forked(tmp_path, "replay", "resumed.jsonl", "defs.ttl")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr


def test_a_served_run_is_blocked_and_run_again_goes_on(endpoint, tmp_path):
    """``serve``'s run_workflow: blocked, said so; asked again it answers the instance as it
    stands, and with ``"again": true`` (a world kept on disk) it goes on with it, once."""
    import asyncio

    from horismos._serve import ServedTools

    agent, _ = load(tmp_path, endpoint.url)
    world = World.from_files(tmp_path / "world.ttl", store=f"oxigraph:{tmp_path / 'store'}")
    served = ServedTools(agent, world, run_workflow=True)
    asked = {"workflow": ":Direct", "focus": ":p1"}

    def call(args: dict[str, Any]) -> dict[str, Any]:
        answer = asyncio.run(served.call("run_workflow", args))
        assert not answer.is_error, answer
        return dict(answer.structured_content)

    blocked = call(asked)
    assert blocked["status"] == "blocked", blocked
    assert blocked["error"]["kind"] == "not_sent"
    assert "blocked, not failed" in blocked["error"]["message"]
    endpoint.start()
    stands = call(asked)
    assert (stands["ran"], stands["status"]) == (False, "blocked")
    assert endpoint.received == []
    went = call({**asked, "again": True})
    assert went["status"] == "completed", went
    assert went["instance"] == blocked["instance"]
    assert endpoint.received == [{"patient": str(EX.p1)}]


def test_a_worker_leaves_it_blocked_and_a_task_submitted_again_goes_on(
    endpoint, tmp_path, server, broker
):
    """``worker``: nothing is probed as it starts (the endpoint is down then); its task
    leaves the instance blocked, and the same task submitted again once the endpoint is
    back drives it on, calling the tool once."""
    import time

    from in_process import horismos_load
    from triage_ward import instances
    from worker_process import start_worker, stop_workers

    load(tmp_path, endpoint.url)
    horismos_load(tmp_path, server.store, "world.ttl")
    log = tmp_path / "worker.log"
    worker = start_worker(
        tmp_path, log, "--store", server.store, "--broker", broker.url, "-c", "1", "-v"
    )
    p1 = str(EX.p1)

    def until(status: str) -> None:
        deadline = time.monotonic() + 60
        while [s for _, s in instances(server.store).get(p1, [])] != [status]:
            assert worker.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)

    def submit() -> None:
        sent = horismos_forked(
            tmp_path,
            "submit",
            "defs.ttl",
            "--store",
            server.store,
            "--broker",
            broker.url,
            "--workflow",
            str(EX.Direct),
            "--focus",
            p1,
            timeout=60,
        )
        assert sent.returncode == 0, sent.stderr

    try:
        submit()
        until("Blocked")
        assert endpoint.received == []
        endpoint.start()
        submit()
        until("Completed")
        assert endpoint.received == [{"patient": p1}]
        assert "Traceback" not in log.read_text(), log.read_text()
    finally:
        stop_workers(worker)


@pytest.mark.parametrize("idempotent", ["false", "true"])
def test_an_approved_call_never_sent_keeps_its_approval(endpoint, tmp_path, idempotent):
    """A person approved one call; it was not made (the endpoint down), so the approval is
    not used up: once the endpoint is back, resume makes the call without asking again."""
    agent, world = load(tmp_path, endpoint.url)
    text = (
        (tmp_path / "defs.ttl")
        .read_text()
        .replace(
            'horis:timeout "5s" .',
            f'horis:timeout "5s" ; horis:requiresApproval true ; horis:idempotent {idempotent} .',
        )
    )
    (tmp_path / "defs.ttl").write_text(text)
    agent = Agent.from_files(tmp_path / "defs.ttl")
    run = agent.run(world, workflow=EX.Direct, focus=EX.p1)
    assert run.status == "waiting"
    fingerprint = agent.catalog.approve("t.queue", {"patient": str(EX.p1)})
    agent.approve(world, run.instance, fingerprint)
    blocked = agent.resume(world, run.instance)
    assert blocked.status == "blocked", blocked.error
    endpoint.start()
    done = agent.resume(world, run.instance)
    assert done.status == "completed", done.error
    assert endpoint.received == [{"patient": str(EX.p1)}]


def test_wake_tries_it_again_each_pass_until_the_endpoint_answers(endpoint, tmp_path):
    # A service woken by cron: the instance blocked where its endpoint was down stayed
    # blocked for good, since wake woke only due waits and only a person's resume went on.
    load(tmp_path, endpoint.url)
    store = ["--store", "oxigraph:store"]
    first = ["run", "defs.ttl", "--world", "world.ttl", *store, "--workflow", str(EX.Direct),
             "--focus", str(EX.p1)]
    ran = horismos_forked(tmp_path, *first)
    assert ran.returncode == 4, ran.stdout + ran.stderr
    still = horismos_forked(tmp_path, "wake", "defs.ttl", *store)
    assert still.returncode == 2, still.stdout + still.stderr  # not reached, as run exits
    assert "Traceback" not in still.stderr
    assert "each pass of `horismos wake`" in still.stdout, still.stdout
    listed = horismos_forked(tmp_path, "instances", "defs.ttl", *store, "--format", "json")
    (row,) = json.loads(listed.stdout)
    assert row["status"] == "blocked" and endpoint.received == []
    endpoint.start()
    woken = horismos_forked(tmp_path, "wake", "defs.ttl", *store)
    assert woken.returncode == 0, woken.stdout + woken.stderr
    assert endpoint.received == [{"patient": str(EX.p1)}]
    listed = horismos_forked(tmp_path, "instances", "defs.ttl", *store, "--format", "json")
    assert [r["status"] for r in json.loads(listed.stdout)] == ["completed"]
    again = horismos_forked(tmp_path, "wake", "defs.ttl", *store)
    assert again.returncode == 0 and "no wait is due" in again.stdout, again.stdout
    assert endpoint.received == [{"patient": str(EX.p1)}]


def test_an_endpoint_that_never_accepts_is_blocked_whichever_timeout_comes_first(
        endpoint, tmp_path):
    # A host that drops what is sent to it (here a socket whose queue is full, which never
    # accepts): the step's 5 s ran out while it connected, a ToolTimeout "was not sent", and
    # the instance failed for good; had the connection's own timeout come first, the same
    # outage was an Unreachable, and blocked. Nothing was sent either way.
    from listening import dropping

    with dropping() as port:
        agent, world = load(tmp_path, f"http://127.0.0.1:{port}/queue")
        run = agent.run(world, workflow=EX.Direct, focus=EX.p1)
    assert run.status == "blocked", run.error
    (step,) = run.steps
    assert "was not sent within 5s" in str(step.error), step.error
    assert "blocked, not failed" in str(step.error)
    (listed,) = world.instances()
    assert listed.status == "blocked" and listed.error_kind == "not_sent"
    assert (EX.p1, EX.queueRef, None) not in world.graph  # nothing of the call landed
