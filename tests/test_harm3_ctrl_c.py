"""Ctrl-C during `horismos run --focus` or `horismos tools call` on a kept world
(`journal:PATH`) while a slow tool that is not idempotent is being called, then the same
command again, as the interrupted command told the person to do.

A tool called inline (`horis:inline true`) runs on the loop's thread, so a first Ctrl-C
cannot stop it: the call ended, its result landed, the instance finished, and the command
then said "interrupted; … an instance stopped mid-step is continued by running the same
command again" (`tools call`: "… a call stopped … is in doubt"), exit 130, with no word of
what had landed — the coroutine had run to its end without waiting again, so asyncio marked
its task cancelled and dropped its result. Running again started another instance (made
another call) and the tool charged twice. The command now reports what landed, as it would
have without the Ctrl-C; and an interrupted `run --focus` no longer says only that running
again continues (an instance that finished is started anew). A second Ctrl-C (0.3 s later)
stops the call itself: its intent stays, and the command again holds the call in doubt.
Neither prints a traceback.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from charge_ledger import ledger
from forked import Popen, horismos_forked
from in_process import horismos_load
from retried_charge import environ, shop
from test_cli import sigint_at

BILLED = "bill http://example.org/pay#o1"
RUN = ("run", "pay.ttl", "--tools", "payments.py", "--store", "journal:world", "--focus", ":o1")
CALL = ("tools", "call", "t.bill", "pay.ttl", "--tools", "payments.py", "--store",
        "journal:world", "--args", '{"order": ":o1"}')


def _inline(root: Path) -> None:
    pay = root / "pay.ttl"
    pay.write_text(pay.read_text().replace(
        'horis:binding "python:payments.bill" ;',
        'horis:binding "python:payments.bill" ; horis:inline true ;'))


def _interrupted(root: Path, gaps: list[float],
                 command: tuple[str, ...] = RUN) -> subprocess.CompletedProcess[str]:
    """The command, given a Ctrl-C once its tool has begun to act and one after each gap."""
    proc = Popen([sys.executable, "-m", "horismos", *command], cwd=root,
                 env=environ(root, 1.5), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                 stderr=subprocess.PIPE, text=True)  # SIGINT: KeyboardInterrupt
    deadline = time.monotonic() + 60
    while not ledger(root):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    for gap in gaps:
        time.sleep(gap)
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.parametrize("inline", [True, False], ids=["inline", "thread"])
@pytest.mark.parametrize("gaps", [[], [0.3]], ids=["once", "twice"])
def test_ctrl_c_mid_call_then_the_same_run_again_charges_once(tmp_path, inline, gaps) -> None:
    shop(tmp_path)
    if inline:
        _inline(tmp_path)
    horismos_load(tmp_path, "journal:world", "world.ttl")
    first = _interrupted(tmp_path, gaps)
    assert "Traceback" not in first.stdout + first.stderr
    if inline and not gaps:  # the call could not be stopped: it landed, and is said to have
        assert first.returncode == 0, first.stdout + first.stderr
        assert ":Pay :o1: completed after 1 step" in first.stdout, first.stdout
        assert "interrupted" not in first.stderr, first.stderr
        assert ledger(tmp_path) == [BILLED]
        return  # running again starts another instance: `run --focus` on purpose
    assert first.returncode == 130, first.stdout + first.stderr
    said = first.stderr.strip().splitlines()[-1]
    assert said.startswith("horismos run: interrupted; what had been committed stays"), said
    # it said running again continues an instance stopped mid-step, and nothing else; one
    # that had finished (a Ctrl-C after its last commit) is started anew by running again
    assert "one that had finished is not" in said, said
    assert "horismos instances --store journal:world" in said, said
    again = horismos_forked(tmp_path, *RUN, env=environ(tmp_path), timeout=60)
    assert again.returncode == 1, again.stdout + again.stderr
    assert "is not called again" in again.stdout, again.stdout
    assert "Traceback" not in again.stdout + again.stderr
    assert ledger(tmp_path) == [BILLED]


@pytest.mark.parametrize("gaps", [[], [0.3]], ids=["once", "twice"])
def test_ctrl_c_mid_inline_call_then_the_same_call_again_charges_once(tmp_path, gaps) -> None:
    shop(tmp_path)
    _inline(tmp_path)
    horismos_load(tmp_path, "journal:world", "world.ttl")
    first = _interrupted(tmp_path, gaps, CALL)
    assert "Traceback" not in first.stdout + first.stderr
    if not gaps:  # it landed: said so, where it said "interrupted … in doubt" and exit 130
        assert first.returncode == 0, first.stdout + first.stderr
        assert first.stdout.startswith("t.bill(order=:o1): completed"), first.stdout
        assert ledger(tmp_path) == [BILLED]
        return  # the same call again is another call, as without the Ctrl-C
    assert first.returncode == 130, first.stdout + first.stderr
    assert "is in doubt" in first.stderr, first.stderr
    again = horismos_forked(tmp_path, *CALL, env=environ(tmp_path), timeout=60)
    assert again.returncode == 5 and "outcome_unknown" in again.stdout, again.stdout
    assert ledger(tmp_path) == [BILLED]


CTRL_C_AT_CLOSE = """
import os, signal, sys
from horismos._cli import main
real, armed = os.fsync, []
def fsync(fd):
    if armed:  # once the command has ended: in the store's close at exit
        armed.clear()
        open("ctrl-c-at-close", "w").close()
        signal.raise_signal(signal.SIGINT)
    return real(fd)
os.fsync = fsync
code = main(sys.argv[1:])
armed.append(True)
sys.exit(code)
"""
"""``python -c CTRL_C_AT_CLOSE ARGS…``: ``horismos ARGS…`` given a Ctrl-C as the journal
store it left open is closed at exit, where a second Ctrl-C pressed as a command ends lands
(a sweep of the second one's timing hit it for one call in three)."""


def test_ctrl_c_as_the_store_closes_at_exit_is_no_traceback(tmp_path) -> None:
    """`tools call` leaves its store to be closed at exit; a Ctrl-C there printed "Exception
    ignored in atexit callback" and a traceback from inside the journal's snapshot, which it
    left half written. The close is now finished first, and the call answered again."""
    shop(tmp_path)
    horismos_load(tmp_path, "journal:world", "world.ttl")
    keyed = (*CALL, "--idempotency-key", "k1")
    first = subprocess.run([sys.executable, "-c", CTRL_C_AT_CLOSE, *keyed], cwd=tmp_path,
                           env=environ(tmp_path), capture_output=True, text=True, timeout=60,
                           stdin=subprocess.DEVNULL,
                           preexec_fn=sigint_at(signal.default_int_handler))
    assert (tmp_path / "ctrl-c-at-close").exists(), first.stderr  # the Ctrl-C was pressed
    assert first.returncode == 0, first.stdout + first.stderr
    assert "Traceback" not in first.stderr, first.stderr
    again = horismos_forked(tmp_path, *keyed, env=environ(tmp_path), timeout=60)
    assert again.returncode == 0 and "replayed" in again.stdout, again.stdout + again.stderr
    assert ledger(tmp_path) == [BILLED]
