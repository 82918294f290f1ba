"""A task delivered twice keeps both traces: the one that called the tool is not overwritten.

Delivery is at least once: a task still running when its visibility timeout passes is handed
to another worker too (and one whose worker was killed comes back to the restarted worker).
Each delivery wrote its trace to ``--traces DIR/TASK-ID.jsonl``, opened afresh: the second
truncated the first's file while the first went on writing into it, so the trace of the
delivery that charged the order was lost, and the file left broke its hash chain (replay
refused it). Each delivery now writes a file of its own (``TASK-ID-2.jsonl``), and each replays.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from forked import horismos_forked
from in_process import horismos_load
from oxigraph_server import OxigraphServer
from redis_server import RedisServer
from shop_files import CHARGE_TOOL, PAY_WORKFLOW, SHOP_HEAD
from triage_ward import instances
from worker_process import start_worker, stop_workers

DEFS = SHOP_HEAD + CHARGE_TOOL + '    horis:binding "python:charge" ; horis:timeout "30s" .\n' + (
    PAY_WORKFLOW
)

SHOP = """\
import time

def charge(order):
    with open("ledger", "a") as f:
        f.write(str(order) + "\\n")
    time.sleep(2.5)  # past the visibility timeout: the task is handed to the other worker too
    return {"paymentRef": "P-1"}
"""


def test_a_task_delivered_again_leaves_the_trace_of_the_call_whole(
    tmp_path: Path, server: OxigraphServer, broker: RedisServer
) -> None:
    (tmp_path / "defs.ttl").write_text(DEFS)
    (tmp_path / "shop.py").write_text(SHOP)
    (tmp_path / "world.ttl").write_text("@prefix : <http://example.org/shop#> .\n:o1 a :Order .\n")
    (tmp_path / "traces").mkdir()
    horismos_load(tmp_path, server.store, "world.ttl")
    workers = [
        start_worker(tmp_path, tmp_path / f"worker{i}.log", "--store", server.store, "--broker",
                     broker.url, "--tools", "shop.py", "-c", "1", "-v", "--visibility-timeout",
                     "1", "--traces", "traces")
        for i in range(2)
    ]
    try:
        deadline = time.monotonic() + 30
        while not all("taking tasks" in (tmp_path / f"worker{i}.log").read_text()
                      for i in range(2)):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        sent = horismos_forked(tmp_path, "submit", "defs.ttl", "--store", server.store,
                               "--broker", broker.url, "--focus", ":o1", "--wait", "30",
                               timeout=60)
        assert sent.returncode == 0, sent.stdout + sent.stderr
        logs = ""
        while logs.count("succeeded") < 2:  # the call's delivery, and at least one again
            assert time.monotonic() < deadline + 30, logs
            time.sleep(0.1)
            logs = "".join((tmp_path / f"worker{i}.log").read_text() for i in range(2))
    finally:
        stop_workers(*workers)
    assert (tmp_path / "ledger").read_text().split() == ["http://example.org/shop#o1"]
    assert [s for _, s in instances(server.store)["http://example.org/shop#o1"]] == ["Completed"]
    traces = sorted((tmp_path / "traces").iterdir())
    assert len(traces) >= 2, traces  # one a delivery
    replayed = horismos_forked(tmp_path, "replay", "traces", "defs.ttl", timeout=60)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    called = [t for t in traces
              if any(json.loads(line).get("type") == "step" for line in t.open())]
    assert len(called) == 1, traces  # the delivery that charged kept its trace
