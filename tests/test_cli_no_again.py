"""``horismos run --focus F --no-again``: the command line's retry-safe run (issue: a service
running one process per event retried a timed-out ``run --focus`` and ran the workflow twice;
two such processes at once on one ``oxigraph:PATH`` store made the second exit 4, blocked by
the first's effect). With ``--no-again`` a focus that has an instance is answered it as it
stands, exiting by its status; one whose process was killed mid-call is gone on with (its
call held in doubt, never made again), not answered "running" for ever.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from billed_order import RUN, bills, loaded, project
from forked import horismos_forked


def test_a_run_retried_with_no_again_answers_the_instance_and_bills_once(tmp_path: Path) -> None:
    env = loaded(tmp_path)
    first = horismos_forked(tmp_path, *RUN, "--no-again", env=env)
    assert first.returncode == 0, first.stderr
    assert "completed after 1 step" in first.stdout
    again = horismos_forked(tmp_path, *RUN, "--no-again", env=env)
    assert again.returncode == 0, again.stderr
    assert "completed (not run again, --no-again: instance" in again.stdout
    assert "Traceback" not in again.stderr
    assert len(bills(tmp_path)) == 1
    # without it, as ever, the operator's "run this again": blocked by the first's effect
    assert horismos_forked(tmp_path, *RUN, env=env).returncode == 4


def test_a_retry_answered_as_it_stands_says_it_wrote_no_trace(tmp_path: Path) -> None:
    """A wrapper keeping each attempt's --trace found no file for the retry --no-again
    answered, and no word why. Nothing ran, so no trace is written (a trace records a run's
    steps, what replay decides again): the retry says so, naming the file and the instance;
    the run that ran it wrote its trace and says nothing of the kind."""
    env = loaded(tmp_path)
    first = horismos_forked(tmp_path, *RUN, "--no-again", "--trace", "first.jsonl", env=env)
    assert first.returncode == 0 and (tmp_path / "first.jsonl").stat().st_size, first.stderr
    assert "no trace written" not in first.stderr, first.stderr
    again = horismos_forked(tmp_path, *RUN, "--no-again", "--trace", "again.jsonl", env=env)
    assert again.returncode == 0, again.stderr
    assert not (tmp_path / "again.jsonl").exists()
    sid = again.stdout.split("instance ")[1].split()[0]
    assert (
        f"horismos run: note: no trace written to again.jsonl: nothing ran (--no-again "
        f"answered instance {sid} as it stands); a trace records a run's steps, and this "
        "instance's are in the trace of the run that made them"
    ) in again.stderr.splitlines(), again.stderr
    assert len(bills(tmp_path)) == 1


def test_two_processes_at_once_with_no_again_run_once_and_both_exit_completed(
    tmp_path: Path,
) -> None:
    env = dict(loaded(tmp_path), BILL_SECONDS="1")
    codes: list[subprocess.CompletedProcess[str]] = []

    def one() -> None:
        codes.append(horismos_forked(tmp_path, *RUN, "--no-again", env=env, timeout=120))

    threads = [threading.Thread(target=one) for _ in range(2)]
    for t in threads:
        t.start()
        time.sleep(0.3)
    for t in threads:
        t.join()
    assert [c.returncode for c in codes] == [0, 0], [c.stderr for c in codes]
    assert len(bills(tmp_path)) == 1


def test_a_retry_after_its_process_was_killed_mid_call_goes_on_with_the_instance(
    tmp_path: Path,
) -> None:
    """The first process killed in its call (a wrapper's timeout): its instance stays running.
    The retry with --no-again was answered "running" for ever (``horismos instances`` said it
    interrupted); it goes on with it, and the call whose outcome is unknown is held in doubt,
    not made again: failed, exit 1, saying to reconcile."""
    env = loaded(tmp_path)
    killed = subprocess.Popen(
        [sys.executable, "-m", "horismos", *RUN, "--no-again"],
        cwd=tmp_path,
        env=dict(env, BILL_SECONDS="60"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not bills(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.05)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    assert len(bills(tmp_path)) == 1
    retried = horismos_forked(tmp_path, *RUN, "--no-again", env=env)
    assert retried.returncode == 1, retried.stdout + retried.stderr
    assert "failed" in retried.stdout and "reconcile" in retried.stdout
    assert "Traceback" not in retried.stderr
    assert len(bills(tmp_path)) == 1  # held in doubt, not billed a second time
    listed = horismos_forked(tmp_path, "instances", "--store", "oxigraph:store", env=env)
    assert "failed" in listed.stdout and "running" not in listed.stdout


def test_no_again_with_all_is_a_usage_error_before_anything_runs(tmp_path: Path) -> None:
    env = loaded(tmp_path)
    refused = horismos_forked(
        tmp_path, "run", "pay.ttl", "--tools", "shop", "--store", "oxigraph:store", "--all",
        "--no-again", env=env,
    )
    assert refused.returncode == 2
    assert "give --focus NODE, or leave --no-again out" in refused.stderr
    assert bills(tmp_path) == []


def test_on_a_shared_world_a_live_run_is_answered_running_and_a_dead_ones_is_gone_on_with(
    tmp_path: Path,
) -> None:
    """On a ``sparql:`` world, a retry with --no-again while another process is in the call
    is answered ``running`` (exit 6: ask again later); once that process is killed and its
    lease has run out, the retry wins the focus's claim and goes on with the instance, the
    call held in doubt: failed, exit 1, billed once. It was answered "running" for ever."""
    from oxigraph_server import OxigraphServer

    project(tmp_path)
    server = OxigraphServer(tmp_path / "store")
    env = dict(os.environ, LEDGER=str(tmp_path / "ledger"), HORISMOS_LEASE="1.5")
    run = ("run", "pay.ttl", "--tools", "shop", "--store", server.store, "--focus", ":o1",
           "--no-again")
    first = None
    try:
        assert horismos_forked(tmp_path, "load", "world.ttl", "--store", server.store,
                               env=env).returncode == 0
        first = subprocess.Popen(
            [sys.executable, "-m", "horismos", *run], cwd=tmp_path,
            env=dict(env, BILL_SECONDS="60"), stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while not bills(tmp_path) and time.monotonic() < deadline:
            time.sleep(0.05)
        live = horismos_forked(tmp_path, *run, env=env)
        assert live.returncode == 6, live.stdout + live.stderr
        assert "another process is running it now; ask again later" in live.stdout
        # without --no-again the focus is refused as busy: the same exit, not a usage error
        busy = horismos_forked(tmp_path, *run[:-1], env=env)
        assert busy.returncode == 6, busy.stdout + busy.stderr
        assert "another live process is driving :Pay for :o1" in busy.stderr
        first.send_signal(signal.SIGKILL)
        first.wait()
        time.sleep(2.5)  # its lease runs out
        retried = horismos_forked(tmp_path, *run, env=env)
        assert retried.returncode == 1, retried.stdout + retried.stderr
        assert "reconcile" in retried.stdout and "Traceback" not in retried.stderr
        assert len(bills(tmp_path)) == 1
    finally:
        if first is not None and first.poll() is None:
            first.kill()
        server.stop()


def test_the_same_command_given_again_keeps_the_first_trace_and_answers(tmp_path: Path) -> None:
    """`run --no-again --trace t.jsonl` is the command a wrapper repeats as it was; the
    repeat exited 2 (t.jsonl is never written over) and answered nothing. It now answers the
    instance as it stands, exit 0, t.jsonl byte for byte the first run's, and no other file."""
    env = loaded(tmp_path)
    first = horismos_forked(tmp_path, *RUN, "--no-again", "--trace", "t.jsonl", env=env)
    assert first.returncode == 0, first.stderr
    kept = (tmp_path / "t.jsonl").read_bytes()
    again = horismos_forked(tmp_path, *RUN, "--no-again", "--trace", "t.jsonl", env=env)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "completed (not run again, --no-again: instance" in again.stdout
    assert (tmp_path / "t.jsonl").read_bytes() == kept
    assert sorted(p.name for p in tmp_path.glob("t*.jsonl")) == ["t.jsonl"]
    assert "t.jsonl, an earlier run's trace, is kept as it was" in again.stderr, again.stderr
    assert len(bills(tmp_path)) == 1
    # without --no-again a trace is still never written over: the command is refused
    assert horismos_forked(tmp_path, *RUN, "--trace", "t.jsonl", env=env).returncode == 2


def test_a_retry_that_runs_writes_the_next_numbered_trace(tmp_path: Path) -> None:
    """The first attempt killed mid-call (kill -9) left t.jsonl, its header and instance; the
    retry goes on with the instance, and its trace goes to t-2.jsonl, said on stderr: the
    first attempt's, the one record of the call in doubt, is kept as it was."""
    env = loaded(tmp_path)
    killed = subprocess.Popen(
        [sys.executable, "-m", "horismos", *RUN, "--no-again", "--trace", "t.jsonl"],
        cwd=tmp_path,
        env=dict(env, BILL_SECONDS="60"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not bills(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.05)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    kept = (tmp_path / "t.jsonl").read_bytes()
    assert kept
    retried = horismos_forked(tmp_path, *RUN, "--no-again", "--trace", "t.jsonl", env=env)
    assert retried.returncode == 1, retried.stdout + retried.stderr
    assert (tmp_path / "t.jsonl").read_bytes() == kept
    assert (
        "horismos run: note: t.jsonl holds an earlier run's trace, never written over: this "
        "run's trace is t-2.jsonl"
    ) in retried.stderr.splitlines(), retried.stderr
    shown = horismos_forked(tmp_path, "trace", "show", "t-2.jsonl", env=env)
    assert shown.returncode == 0 and "end: failed" in shown.stdout, shown.stdout + shown.stderr
    assert len(bills(tmp_path)) == 1
