"""Ctrl-C during `horismos run --focus` on a kept world (`journal:PATH`) while a slow tool
that is not idempotent is being called, then the same command again, as the interrupted run
told the person to do.

A tool called inline (`horis:inline true`) runs on the loop's thread, so a first Ctrl-C
cannot stop it: the call ends, its result lands, the instance finishes, and only then does
the run stop, saying "interrupted; … an instance stopped mid-step is continued by running
the same command again". The focus's instance had finished, so running again started
another and the tool charged twice. The message now says that a finished instance is not
continued, and where to look first. A second Ctrl-C (0.3 s later) stops the call itself:
its intent stays, and the run again holds the call in doubt. Neither prints a traceback.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from in_process import horismos_load
from test_cli import sigint_at
from test_client_retries import _env, ledger, shop

BILLED = "bill http://example.org/pay#o1"
RUN = ("run", "pay.ttl", "--tools", "payments.py", "--store", "journal:world", "--focus", ":o1")


def _inline(root: Path) -> None:
    pay = root / "pay.ttl"
    pay.write_text(pay.read_text().replace(
        'horis:binding "python:payments.bill" ;',
        'horis:binding "python:payments.bill" ; horis:inline true ;'))


def _interrupted(root: Path, gaps: list[float]) -> subprocess.CompletedProcess[str]:
    """The run, given a Ctrl-C once its tool has begun to act and one after each gap."""
    proc = subprocess.Popen([sys.executable, "-m", "horismos", *RUN], cwd=root,
                            env=_env(root, 1.5), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=sigint_at(signal.default_int_handler))
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
    assert first.returncode == 130, first.stdout + first.stderr
    assert "Traceback" not in first.stdout + first.stderr
    said = first.stderr.strip().splitlines()[-1]
    assert said.startswith("horismos run: interrupted; what had been committed stays"), said
    listed = subprocess.run([sys.executable, "-m", "horismos", "instances", "--store",
                             "journal:world"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=60)
    finished = " completed " in listed.stdout
    # the inline call once interrupted lands; any other is stopped with its intent left
    assert finished == (inline and not gaps), listed.stdout
    # it said running again continues an instance stopped mid-step, and nothing else: the
    # person ran again, and a finished focus got a second instance, its tool a second charge
    assert "one that had finished is not" in said, said
    assert "horismos instances --store journal:world" in said, said
    if finished:
        return  # running again starts another instance: `run --focus` on purpose
    again = subprocess.run([sys.executable, "-m", "horismos", *RUN], cwd=tmp_path,
                           env=_env(tmp_path), capture_output=True, text=True, timeout=60)
    assert again.returncode == 1, again.stdout + again.stderr
    assert "is not called again" in again.stdout, again.stdout
    assert "Traceback" not in again.stdout + again.stderr
    assert ledger(tmp_path) == [BILLED]
