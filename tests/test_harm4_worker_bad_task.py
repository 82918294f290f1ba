"""A task whose focus is not an IRI is refused in one line, and the worker goes on to the next.

A task is whatever reaches the broker: ``horismos submit`` sends IRIs, but any client with a
Celery library can ``send_task("horismos.instance", [workflow, focus])``. A focus ``_:b0``
made the claim's update one the SPARQL server refused (400), which the worker took for a store
away and tried again for ever with backoff: a one-thread worker took nothing else, and the
task, never acknowledged, came back on every restart. A focus with a space in it, or a
number, was a traceback in the worker's log.
"""

from __future__ import annotations

import time
from pathlib import Path

from forked import horismos_forked
from in_process import horismos_load
from oxigraph_server import OxigraphServer
from redis_server import RedisServer
from shop_files import CHARGE_PY, ONE_ORDER, PYTHON_PAY
from worker_process import start_worker, stop_workers

SEND = """\
import sys
from celery import Celery
app = Celery(broker=sys.argv[1])
for workflow, focus in [("http://example.org/shop#Pay", "_:b0"),
                        ("http://example.org/shop#Pay", "http://example.org/shop#o1 "),
                        (1, 2),
                        ("http://example.org/shop#Pay", "http://example.org/shop#o1")]:
    app.send_task("horismos.instance", [workflow, focus], queue="horismos")
"""


def test_a_task_that_names_no_iri_is_refused_and_the_next_one_runs(
    tmp_path: Path, server: OxigraphServer, broker: RedisServer
) -> None:
    (tmp_path / "defs.ttl").write_text(PYTHON_PAY)
    (tmp_path / "shop.py").write_text(CHARGE_PY)
    (tmp_path / "send.py").write_text(SEND)
    (tmp_path / "world.ttl").write_text(ONE_ORDER)
    horismos_load(tmp_path, server.store, "world.ttl")
    log = tmp_path / "worker.log"
    worker = start_worker(tmp_path, log, "--store", server.store, "--broker", broker.url,
                          "--tools", "shop.py", "-c", "1", "-v")
    try:
        sent = horismos_forked(tmp_path, broker.url, script=tmp_path / "send.py", timeout=60)
        assert sent.returncode == 0, sent.stderr
        ledger = tmp_path / "ledger"
        deadline = time.monotonic() + 20
        while not ledger.exists():  # the good task, queued behind the bad ones, runs
            assert worker.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        said = log.read_text()
        assert "Traceback" not in said and "trying again" not in said, said
        assert "the task's focus '_:b0' is not an IRI" in said, said
        assert "the task's workflow 1 is not an IRI" in said, said
        assert ledger.read_text().split() == ["http://example.org/shop#o1"]
    finally:
        stop_workers(worker)
