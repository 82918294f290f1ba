"""A ``horismos worker`` started for a test, and stopped after it (the worker tests' one
start-and-stop sequence)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from forked import Popen


def start_worker(cwd: Path, log: Path, *args: str) -> subprocess.Popen[bytes]:
    """``horismos worker defs.ttl ARGS`` in ``cwd`` (leases of 1.5 s), its output in ``log``."""
    with log.open("w") as out:
        return Popen(
            [sys.executable, "-m", "horismos", "worker", "defs.ttl", *args],
            cwd=cwd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env={**os.environ, "HORISMOS_LEASE": "1.5"})  # fmt: skip


def stop_workers(*workers: subprocess.Popen[bytes]) -> None:
    """Each worker sent SIGTERM, then waited for (killed after 20 s)."""
    for w in workers:
        w.send_signal(signal.SIGTERM)
    for w in workers:
        try:
            w.wait(20)
        except subprocess.TimeoutExpired:
            w.kill()
            w.wait()
