"""World data lent to a persistent store by a ``tools call --store S --world F`` whose process
is killed mid-call, through the real command line and real stores: the lend was taken back
only by the process that made it, so ``kill -9`` (or the machine stopping) left F's quads in S
for good, read by every later command as S's own. The lend now lands with a record of it, and
the next command that opens S takes back what a process that is gone lent.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import EX, ward_store
from forked import Popen
from test_tools_store_lanes import horismos, project, types_of

SLEEPS = (
    "import os, time\n\n"
    "def transfer(patient, ward):\n"
    "    open('started', 'w').write(str(os.getpid()))\n"
    "    time.sleep(120)\n"
    "    return {'ref': 'R-9'}\n\n"
    "def fail(patient):\n    time.sleep(4)\n    raise RuntimeError('the ward system said no')\n\n"
    "def discharge(patient):\n    return {}\n"
)
"""``c.transfer`` (not idempotent) sleeps once it has started: the moment to kill its call;
``c.fail`` (idempotent) fails after a few seconds, its lend in force meanwhile."""

ARGS = ("--args", '{"patient": ":p9", "ward": ":w9"}')


def running(tmp_path: Path, argv: list[str], lease: str) -> subprocess.Popen[str]:
    """``horismos ARGV`` in ``tmp_path`` holding leases of ``lease`` seconds, running on while
    the test goes on."""
    return Popen(
        [sys.executable, "-m", "horismos", *argv], cwd=tmp_path, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
        env=os.environ | {"HORISMOS_LEASE": lease})


def started(tmp_path: Path, argv: list[str], lease: str,
            said: str = "started") -> subprocess.Popen[str]:
    """:func:`running`, returned once its tool has written the file ``said`` (its lend landed
    before the tool ran)."""
    call = running(tmp_path, argv, lease)
    while not (tmp_path / said).exists():
        assert call.poll() is None, call.communicate()
        time.sleep(0.05)
    return call


@pytest.fixture(params=["oxigraph", "journal", "sparql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[list[str]]:
    """``--store S`` of a store that outlives the process, holding the ward."""
    if request.param == "sparql":
        pool = request.getfixturevalue("oxigraph_pool")
        name = pool.fresh()
    else:
        name = f"{request.param}:{tmp_path / 'store'}"
    yield ward_store(tmp_path, name)
    if request.param == "sparql":
        pool.release()


def killed_mid_call(tmp_path: Path, store: list[str], defs: list[str]) -> None:
    """Run ``tools call c.transfer --world more.ttl`` on ``store`` and ``kill -9`` it while
    its tool sleeps: after the lend, before its take-back."""
    # the code the call runs is the code approved (an approval holds for that code alone)
    (tmp_path / "ward_tools.py").write_text(SLEEPS, encoding="utf-8")
    issued = horismos("tools", "approve", "c.transfer", *defs, *store, *ARGS, cwd=tmp_path)
    assert issued.returncode == 0, issued.stderr
    call = started(tmp_path, ["tools", "call", "c.transfer", *defs, *store, "--world",
                              "more.ttl", *ARGS, "--approval", issued.stdout.strip()], "0.5")
    call.send_signal(signal.SIGKILL)
    call.communicate()
    time.sleep(1)  # past the killed call's lease on a shared store (0.5 s)


def test_a_call_killed_mid_call_leaves_nothing_lent_to_the_next_call(
        tmp_path: Path, store: list[str]) -> None:
    """Killed mid-call, the call left F's :p9 and :w9 in S, and the next call on S, given F
    again, lent nothing (S held it all), took nothing back, and left them there for good. The
    next call takes back what the killed one lent, and is refused with the killed call held
    in doubt (what the tool did is unknown): S is as it was but for that record."""
    defs = project(tmp_path)
    killed_mid_call(tmp_path, store, defs)
    again = horismos("tools", "call", "c.transfer", *defs, *store, "--world", "more.ttl", *ARGS,
                     "--approval", "whatever", cwd=tmp_path)
    assert again.returncode == 5, again.stdout + again.stderr
    assert "outcome_unknown" in again.stdout and "reconcile" in again.stdout, again.stdout
    assert types_of(store, EX.p9) == set()  # {:Patient}: F's, left by the killed call
    assert types_of(store, EX.w9) == set()
    assert types_of(store, EX.p1) == {EX.Patient}  # S's own, held before the lend
    assert "took back 3 quads of --world data" in again.stderr, again.stderr
    assert "Traceback" not in again.stderr


def test_reconcile_after_a_killed_call_takes_back_what_it_lent(
        tmp_path: Path, store: list[str]) -> None:
    """``tools reconcile`` after a call killed mid-call cleared the call in doubt and left F's
    quads in S. It takes them back too, and the store is as it was before the lend."""
    defs = project(tmp_path)
    killed_mid_call(tmp_path, store, defs)
    cleared = horismos("tools", "reconcile", "c.transfer", *defs, *store, *ARGS, cwd=tmp_path)
    assert cleared.returncode == 0, cleared.stdout + cleared.stderr
    assert "cleared the call of c.transfer in doubt" in cleared.stdout
    assert types_of(store, EX.p9) == set() and types_of(store, EX.w9) == set()
    assert types_of(store, EX.p1) == {EX.Patient}
    assert "took back 3 quads" in cleared.stderr, cleared.stderr
    again = horismos("tools", "reconcile", "c.transfer", *defs, *store, *ARGS, cwd=tmp_path)
    assert again.returncode == 1 and "took back" not in again.stderr  # taken back once


def test_a_lend_whose_process_is_alive_is_not_taken_back(
        tmp_path: Path, shared_ward: list[str]) -> None:
    """On a store processes share (``sparql:``), a command opening it while another process
    is mid-call with F lent must not take F back from under that call: the lender's lease is
    live, so its lend is left alone, and taken back by the lender itself."""
    defs = project(tmp_path)
    (tmp_path / "ward_tools.py").write_text(SLEEPS, encoding="utf-8")
    call = running(tmp_path, ["tools", "call", "c.fail", *defs, *shared_ward, "--world",
                              "more.ttl", "--args", '{"patient": ":p9"}'], "0.5")
    try:
        while types_of(shared_ward, EX.w9) != {EX.Ward}:  # lent, and the call under way
            assert call.poll() is None, call.communicate()
            time.sleep(0.05)
        load = horismos("load", "ward.ttl", *shared_ward, cwd=tmp_path)
        assert load.returncode == 0, load.stderr
        assert "took back" not in load.stderr, load.stderr
        assert types_of(shared_ward, EX.w9) == {EX.Ward}  # still lent to the call under way
    finally:
        out, err = call.communicate(timeout=120)
    assert call.returncode == 1 and "the ward system said no" in out, out + err
    assert types_of(shared_ward, EX.w9) == set()  # taken back by the call itself


def test_what_a_completed_call_was_lent_stays_for_later_commands(
        tmp_path: Path, store: list[str]) -> None:
    """A call that completed keeps F with its effects: its commit removes the lend's record
    with them, so no later command takes F back from under what the call committed."""
    defs = project(tmp_path)
    issued = horismos("tools", "approve", "c.transfer", *defs, *store, *ARGS, cwd=tmp_path)
    assert issued.returncode == 0, issued.stderr
    done = horismos("tools", "call", "c.transfer", *defs, *store, "--world", "more.ttl", *ARGS,
                    "--approval", issued.stdout.strip(), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    later = horismos("load", "ward.ttl", *store, cwd=tmp_path)
    assert later.returncode == 0 and "took back" not in later.stderr, later.stderr
    assert types_of(store, EX.p9) == {EX.Patient} and types_of(store, EX.w9) == {EX.Ward}
