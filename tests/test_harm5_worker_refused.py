"""A task the store refuses, and would refuse again, is dropped in one line; the next one runs.

The worker waits out a store that is away (connection refused, a timeout, a 5xx, a 408 or a
429; a 401, 403, 404 or 407, which refuse every request alike) and tries the task again. It
waited out a refusal too: a SPARQL server (or a proxy in front of it) answering 4xx to the
worker's request, say a 413 for a focus IRI longer than the request size it takes, or a 400 for
a commit. That answer comes again on every try, so the task held a worker thread for ever (a
``-c 1`` worker took nothing else) and, never acknowledged, came back on every restart. Here a
real proxy on 127.0.0.1 in front of a real ``oxigraph serve`` refuses some requests; the task
is dropped, said once, and a good task queued behind it runs. A refusal of the commit after the
tool was called leaves the instance and its intent as the store has them, the claim released,
and the line says the tool may have acted.
"""

from __future__ import annotations

import http.client
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from forked import horismos_forked
from in_process import horismos_load
from listening import serve_in_thread
from oxigraph_server import OxigraphServer
from redis_server import RedisServer
from shop_files import PYTHON_PAY
from worker_process import start_worker, stop_workers

DEFS = PYTHON_PAY

SHOP = """\
def charge(order):
    with open("ledger", "a") as f:
        f.write(str(order) + "\\n")
    return {"paymentRef": "P-" + str(order).rpartition("#")[2][:8]}
"""

SEND = """\
import sys
from celery import Celery
app = Celery(broker=sys.argv[1])
for focus in sys.argv[2:]:
    app.send_task("horismos.instance", ["http://example.org/shop#Pay", focus], queue="horismos")
"""

SHOP_NS = "http://example.org/shop#"
LONG = SHOP_NS + "o" + "x" * 100_000  # an IRI pyoxigraph takes, in a request over the limit
LIMIT = 64_000


class Proxy:
    """An HTTP proxy on a free loopback port in front of ``target``: each request whose body
    ``refuse`` answers a status for gets that status, the rest are passed on."""

    def __init__(self, target: str, refuse: Callable[[bytes], int | None]) -> None:
        where = urlsplit(target)
        host, port = where.hostname or "127.0.0.1", where.port or 80

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _pass(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status = refuse(body)
                if status is not None:
                    said = b"refused by the proxy"
                    self.send_response(status)
                    self.send_header("Content-Type", "text/plain")
                    self.send_header("Content-Length", str(len(said)))
                    self.end_headers()
                    self.wfile.write(said)
                    return
                conn = http.client.HTTPConnection(host, port, timeout=30)
                try:
                    headers = {
                        k: v
                        for k, v in self.headers.items()
                        if k.lower() not in ("host", "connection", "content-length")
                    }
                    conn.request(self.command, self.path, body or None, headers)
                    answer = conn.getresponse()
                    data = answer.read()
                finally:
                    conn.close()
                self.send_response(answer.status)
                for k, v in answer.getheaders():
                    if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.store = f"sparql:{self.url}"
        self.stop = serve_in_thread(self.server)


def _work(
    tmp_path: Path, server: OxigraphServer, broker: RedisServer, proxy: Proxy, *foci: str
) -> str:
    """Start a ``-c 1`` worker through ``proxy``, send ``foci``, wait until the last one (a
    good one) charged; the worker's log."""
    (tmp_path / "defs.ttl").write_text(DEFS)
    (tmp_path / "shop.py").write_text(SHOP)
    (tmp_path / "send.py").write_text(SEND)
    orders = "".join(f"<{f}> a :Order .\n" for f in foci)
    (tmp_path / "world.ttl").write_text(f"@prefix : <{SHOP_NS}> .\n{orders}")
    horismos_load(tmp_path, server.store, "world.ttl")
    log = tmp_path / "worker.log"
    worker = start_worker(tmp_path, log, "--store", proxy.store, "--broker", broker.url,
                          "--tools", "shop.py", "-c", "1", "-v")  # fmt: skip
    try:
        sent = horismos_forked(tmp_path, broker.url, *foci, script=tmp_path / "send.py",
                               timeout=60)
        assert sent.returncode == 0, sent.stderr
        ledger = tmp_path / "ledger"
        deadline = time.monotonic() + 30
        # the good task, queued behind the refused one on a one-thread worker, runs
        while foci[-1] not in (ledger.read_text().split() if ledger.exists() else []):
            assert worker.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        time.sleep(0.5)  # its commit lands
    finally:
        stop_workers(worker)
    said = log.read_text()
    assert "Traceback" not in said and "trying again" not in said, said
    return said


def test_a_request_over_the_servers_limit_is_dropped_and_the_next_task_runs(
    tmp_path: Path, server: OxigraphServer, broker: RedisServer
) -> None:
    proxy = Proxy(server.url, lambda body: 413 if len(body) > LIMIT else None)
    try:
        said = _work(tmp_path, server, broker, proxy, LONG, SHOP_NS + "o1")
    finally:
        proxy.stop()
    dropped = [line for line in said.splitlines() if "dropped" in line]
    assert len(dropped) == 1, said
    assert "refused POST /update (413)" in dropped[0], said
    assert "http://example.org/shop#Pay" in dropped[0], said
    assert (tmp_path / "ledger").read_text().split() == [SHOP_NS + "o1"]


def test_a_commit_refused_after_the_tool_acted_is_said_and_the_instance_kept(
    tmp_path: Path, server: OxigraphServer, broker: RedisServer
) -> None:
    # the charge's result is refused (400); the tool was called, and charged
    proxy = Proxy(server.url, lambda body: 400 if b"P-o2" in body else None)
    try:
        said = _work(tmp_path, server, broker, proxy, SHOP_NS + "o2", SHOP_NS + "o1")
    finally:
        proxy.stop()
    assert (tmp_path / "ledger").read_text().split() == [SHOP_NS + "o2", SHOP_NS + "o1"]
    assert "(400)" in said and "t.charge was called and may have acted" in said, said
    assert said.count("dropped") == 1, said
    # the instance stays as the store has it: running, its call held in doubt, and driven by
    # no process (the worker dropped the task and gave its claim back): interrupted
    shown = horismos_forked(tmp_path, "instances", "defs.ttl", "--store", server.store,
                            timeout=60)
    rows = {line.split()[2]: line.split()[3:5] for line in shown.stdout.splitlines()[1:]}
    assert rows == {":o2": ["interrupted", ":Charge"], ":o1": ["completed", "-"]}, shown.stdout
    assert "no live process holds its claim" in shown.stdout, shown.stdout


@pytest.mark.parametrize(
    ("status", "repeats"),
    [(400, True), (413, True), (422, True), (401, False), (403, False), (404, False),
     (407, False), (408, False), (429, False), (500, False),
     (503, False), (None, False)],
)  # fmt: skip
def test_a_refusal_repeats_where_the_server_is_not_only_away(
    status: int | None, repeats: bool
) -> None:
    from horismos import StoreError
    from horismos._stores.base import QueryRefused

    assert StoreError("refused", status=status).repeats is repeats
    assert QueryRefused("the store refused the query").repeats
