"""``HORISMOS_LOCK_WAIT``: an on-disk store another process holds is waited for, so a service
running one ``horismos`` process per event beside ``wake`` from cron takes turns instead of
refusing whichever came second (exit 2, the event's facts not applied). Real processes: one
holds the store mid-call; the other waits for it, or is refused at once without the setting,
in words saying what to do."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from forked import Popen, run
from killed_charge import environ, project


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    return project(tmp_path, "o1", "o2")


def horismos(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "horismos", *args], cwd=cwd,
               env={**environ(cwd, None), **env}, capture_output=True, text=True,
               timeout=300)


def holding(cwd: Path, kind: str) -> subprocess.Popen[bytes]:
    """A run on the store, held inside its charge (the store open) until killed."""
    proc = Popen(
        [sys.executable, "-m", "horismos", "run", "pay.ttl", "--store", f"{kind}:store",
         "--tools", "payments.py", "--focus", ":o1"],
        cwd=cwd, env=environ(cwd, "charge-after"), stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not (cwd / "at-charge-after").exists():
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    return proc


@pytest.mark.parametrize("kind", ["oxigraph", "journal"])
def test_an_open_waits_for_the_process_that_holds_the_store(shop: Path, kind: str) -> None:
    assert horismos(shop, "load", "world.ttl", "--store", f"{kind}:store").returncode == 0
    proc = holding(shop, kind)
    try:
        refused = horismos(shop, "wake", "pay.ttl", "--store", f"{kind}:store")
        assert refused.returncode == 2
        assert "run this again once that one ends, or set HORISMOS_LOCK_WAIT" in refused.stderr
        assert "Traceback" not in refused.stderr
        killer = threading.Timer(2, lambda: os.kill(proc.pid, signal.SIGKILL))
        killer.start()
        waited = horismos(shop, "wake", "pay.ttl", "--store", f"{kind}:store", "--tools",
                          "payments.py", HORISMOS_LOCK_WAIT="60")
        killer.join()
    finally:
        proc.kill()
        proc.wait()
    assert waited.returncode == 0, waited.stderr
    assert "no wait is due" in waited.stdout + waited.stderr


def test_a_mistyped_lock_wait_is_a_usage_error(shop: Path) -> None:
    assert horismos(shop, "load", "world.ttl", "--store", "journal:store").returncode == 0
    bad = horismos(shop, "instances", "--store", "journal:store", HORISMOS_LOCK_WAIT="soon")
    assert bad.returncode == 2
    assert "HORISMOS_LOCK_WAIT is 'soon': give a number of seconds" in bad.stderr
    assert "Traceback" not in bad.stderr


@pytest.mark.parametrize("kind", ["oxigraph", "journal"])
def test_a_store_this_process_holds_is_said_so_and_not_waited_for(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """An application that opened its on-disk world twice (a restart in the same process, the
    first ``World`` never closed) was told "a process holds it open … run this again once that
    one ends, or set HORISMOS_LOCK_WAIT", and with the setting waited it out in full: the
    holder was itself, and would never let go. It is told this process holds it, in a
    ``World`` not closed, at once; closed, the store opens again."""
    from horismos import UsageError, World

    monkeypatch.setenv("HORISMOS_LOCK_WAIT", "30")
    first = World.open(f"{kind}:{tmp_path / 'store'}")
    started = time.monotonic()
    with pytest.raises(UsageError, match="this process has it open already") as refused:
        World.open(f"{kind}:{tmp_path / 'store'}")
    assert time.monotonic() - started < 5
    assert "once that one ends" not in str(refused.value)
    first.close()
    World.open(f"{kind}:{tmp_path / 'store'}").close()
