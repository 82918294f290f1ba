"""A worker whose MCP server is down as it takes a task keeps the task, and drives it once the
server answers again.

A ``horismos worker`` checks its workflows' bindings as it starts, so a server down then
refuses the worker. One that went down later (a restart, a deploy) raised ``Unreachable``
from every task taken meanwhile: Celery printed a traceback into the worker's log and
acknowledged the task, so the submitted instance was never started, and nothing said to
submit it again. Nothing was sent to the server, so waiting it out is safe, as a worker waits
out a store it cannot reach.
"""

from __future__ import annotations

import time
from pathlib import Path

from forked import horismos_forked
from in_process import horismos_load
from listening import free_port, mcp_http_server
from oxigraph_server import OxigraphServer
from redis_server import RedisServer
from triage_ward import instances
from worker_process import start_worker, stop_workers

DEFS = """\
@prefix :      <http://example.org/ehr#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
:Patient a owl:Class .
:remote a horis:McpServer ; horis:url "http://127.0.0.1:{port}/mcp" .
:t.noop a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:binding "mcp://remote/noop" ; horis:idempotent true ; horis:timeout "5s" .
:W a horis:Workflow ; horis:focusType :Patient ; horis:start :S .
:S a horis:ActionStep ; horis:tool :t.noop ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""


def test_a_task_taken_while_its_mcp_server_is_down_waits_for_it(
    tmp_path: Path, server: OxigraphServer, broker: RedisServer
) -> None:
    port = free_port()
    (tmp_path / "defs.ttl").write_text(DEFS.format(port=port))
    (tmp_path / "ward.ttl").write_text("@prefix : <http://example.org/ehr#> .\n:p1 a :Patient .\n")
    horismos_load(tmp_path, server.store, "ward.ttl")
    log = tmp_path / "worker.log"
    with mcp_http_server(port=port):  # up as the worker starts: its check passes
        worker = start_worker(tmp_path, log, "--store", server.store, "--broker", broker.url,
                              "-c", "1", "-v")
        try:
            deadline = time.monotonic() + 30
            while "taking tasks" not in log.read_text():
                assert worker.poll() is None and time.monotonic() < deadline, log.read_text()
                time.sleep(0.05)
        except BaseException:
            worker.kill()
            raise
    try:  # the server is down now
        sent = horismos_forked(tmp_path, "submit", "defs.ttl", "--store", server.store,
                               "--broker", broker.url, "--focus", ":p1", timeout=60)
        assert sent.returncode == 0, sent.stderr
        deadline = time.monotonic() + 20
        while "trying again" not in log.read_text():
            assert "Traceback" not in log.read_text(), log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        with mcp_http_server(port=port):  # back: the kept task drives the instance
            deadline = time.monotonic() + 20
            while [s for _, s in instances(server.store).get("http://example.org/ehr#p1", [])] \
                    != ["Completed"]:
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.1)
        assert "Traceback" not in log.read_text(), log.read_text()
    finally:
        stop_workers(worker)
