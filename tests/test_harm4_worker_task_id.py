"""A task's id names its trace inside ``--traces DIR``, whatever the client that sent it set.

Celery lets any client choose a task's id (``send_task(…, task_id=…)``), and the worker named
the task's trace ``DIR/TASK-ID.jsonl``: an id ``../../elsewhere/run`` wrote the trace outside
the folder, over a ``.jsonl`` file that was there (another run's trace). The id is now kept to
a file name in the folder.
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
app.send_task("horismos.instance", ["http://example.org/shop#Pay", "http://example.org/shop#o1"],
              queue="horismos", task_id="../elsewhere/kept")
"""


def test_a_task_id_naming_another_folder_is_traced_in_the_traces_folder(
    tmp_path: Path, server: OxigraphServer, broker: RedisServer
) -> None:
    (tmp_path / "defs.ttl").write_text(PYTHON_PAY)
    (tmp_path / "shop.py").write_text(CHARGE_PY)
    (tmp_path / "send.py").write_text(SEND)
    (tmp_path / "world.ttl").write_text(ONE_ORDER)
    (tmp_path / "traces").mkdir()
    (tmp_path / "elsewhere").mkdir()
    kept = tmp_path / "elsewhere" / "kept.jsonl"
    kept.write_text("another run's trace\n")
    horismos_load(tmp_path, server.store, "world.ttl")
    log = tmp_path / "worker.log"
    worker = start_worker(tmp_path, log, "--store", server.store, "--broker", broker.url,
                          "--tools", "shop.py", "-c", "1", "--traces", "traces")
    try:
        sent = horismos_forked(tmp_path, broker.url, script=tmp_path / "send.py", timeout=60)
        assert sent.returncode == 0, sent.stderr
        deadline = time.monotonic() + 20
        while not (tmp_path / "ledger").exists():
            assert worker.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        time.sleep(1)  # the task's end, its trace written
    finally:
        stop_workers(worker)
    assert (tmp_path / "ledger").read_text().split() == ["http://example.org/shop#o1"]
    assert kept.read_text() == "another run's trace\n"
    assert [p.name for p in (tmp_path / "traces").iterdir()] == ["_elsewhere_kept.jsonl"]
