"""A process paused past its lease between announcing a call and sending it sends nothing.

On a shared store (``sparql:``) a process that announced a call of a tool that is not
idempotent, then stopped before sending it (a machine put to sleep, a VM paused, ``SIGSTOP``)
past its lease, is taken for gone: another process takes its focus over and finds the call
announced, so it holds it in doubt; the operator asks the payment provider, which made no
such charge, clears it as not made (``tools reconcile --verdict not-acted``) and charges.
The paused process, woken, went on where it stopped and sent its charge: the order was
charged twice, and the second charge was recorded nowhere (its commit refused, the doubt
cleared). It now checks its lease before it sends, and finding it lapsed, sends nothing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from charge_ledger import ledger
from forked import horismos_forked
from oxigraph_server import ServerPool
from shop_files import CHARGE_GUARD, CHARGE_TOOL, GUARDED_PAY, PAY_HEAD

KILL_AT = Path(__file__).parent / "kill_at.py"

DEFS = PAY_HEAD + CHARGE_TOOL + CHARGE_GUARD + """\
    horis:binding "python:payments.charge" ;
    horis:idempotent false .
""" + GUARDED_PAY + """ ;
    horis:onError :Check .
:Check a horis:WaitStep ;
    horis:reason "The charge may have gone through: check with the payment provider." ;
    horis:wake horis:OperatorInput ;
    horis:delivery horis:Final ;
    horis:until "?this :paymentRef ?r ." .
"""

PAYMENTS = '''
import os, signal

def charge(order):
    with open("ledger.txt", "a") as f:
        f.write(f"charge {order} by {os.getpid()}\\n")
        f.flush()
        os.fsync(f.fileno())
    if os.environ.get("PAUSE_AFTER_CHARGE"):  # paused once it acted, before its answer lands
        os.kill(os.getpid(), signal.SIGSTOP)
    return {"paymentRef": f"P-{os.getpid()}"}
'''

CHARGE = ["t.charge", "pay.ttl", "--tools", "payments.py", "--args", '{"order": ":o1"}']


@pytest.fixture
def shop(tmp_path: Path, oxigraph_pool: ServerPool) -> Iterator[tuple[Path, str]]:
    if not Path("/proc/self/stat").exists():
        pytest.skip("reads a stopped process's state from /proc")
    (tmp_path / "pay.ttl").write_text(DEFS)
    (tmp_path / "payments.py").write_text(PAYMENTS)
    (tmp_path / "world.ttl").write_text("@prefix : <http://example.org/pay#> .\n:o1 a :Order .\n")
    store = oxigraph_pool.fresh()
    assert cli(tmp_path, "load", "world.ttl", "--store", store).returncode == 0
    yield tmp_path, store
    oxigraph_pool.release()


def environ(cwd: Path) -> dict[str, str]:
    return dict(os.environ, HORISMOS_LEASE="1", PYTHONPATH=os.pathsep.join(sys.path))


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return horismos_forked(cwd, *args, env=environ(cwd), timeout=300)


def paused_after_its_intent(cwd: Path, *args: str, charged: bool = False
                            ) -> subprocess.Popen[str]:
    """``horismos ARGS`` stopped (SIGSTOP) just after its first commit, the intent of its
    call, landed (``charged``: once the charge acted): returned once it is stopped."""
    paused = {"PAUSE_AFTER_CHARGE": "1"} if charged else {"KILL_AT": "pause:1"}
    proc = subprocess.Popen(
        [sys.executable, str(KILL_AT), *args], cwd=cwd, env=dict(environ(cwd), **paused),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + 120
    while Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "T":
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "it never reached its intent"
        time.sleep(0.02)
    return proc


def lapsed(cwd: Path, store: str) -> None:
    """Wait until no live process holds the instance: the paused one's lease ran out."""
    deadline = time.monotonic() + 60
    while True:
        listed = cli(cwd, "instances", "pay.ttl", "--store", store, "--format", "json")
        if any(i["live"] is False for i in json.loads(listed.stdout)):
            return
        assert time.monotonic() < deadline, listed.stdout
        time.sleep(0.2)


def woken(proc: subprocess.Popen[str]) -> tuple[int, str]:
    proc.send_signal(signal.SIGCONT)
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out + err


def test_a_run_paused_past_its_lease_does_not_charge_after_the_operator_did(shop) -> None:
    cwd, store = shop
    paused = paused_after_its_intent(
        cwd, "run", "pay.ttl", "--tools", "payments.py", "--store", store, "--focus", ":o1")
    try:
        lapsed(cwd, store)
        # resume says what continues it (it named only `run --all` workers)
        resumed = cli(cwd, "resume", "pay.ttl", "--tools", "payments.py", "--store", store,
                      "--instance", json.loads(cli(cwd, "instances", "pay.ttl", "--store",
                                                   store, "--format", "json").stdout)[0]
                      ["instance"])
        assert resumed.returncode == 2, resumed.stdout + resumed.stderr
        assert "`horismos run … --focus :o1` continues it" in resumed.stderr, resumed.stderr
        # another process takes the focus over: the call announced is held in doubt
        taken = cli(cwd, "run", "pay.ttl", "--tools", "payments.py", "--store", store,
                    "--focus", ":o1")
        assert taken.returncode == 3, taken.stdout + taken.stderr
        assert "not called again" in taken.stdout
        # the operator asks the provider: no charge was made; so it is cleared and made
        assert ledger(cwd) == []
        cleared = cli(cwd, "tools", "reconcile", *CHARGE[:2], "--store", store,
                      "--args", '{"order": ":o1"}', "--verdict", "not-acted")
        assert cleared.returncode == 0, cleared.stdout + cleared.stderr
        charged = cli(cwd, "tools", "call", *CHARGE, "--store", store)
        assert charged.returncode == 0, charged.stdout + charged.stderr
        assert len(ledger(cwd)) == 1
    finally:
        code, said = woken(paused)
    assert len(ledger(cwd)) == 1, ledger(cwd)  # the woken run charged again before
    assert code == 2, said
    assert "lost its lease" in said and "Traceback" not in said


def test_a_catalog_call_paused_past_its_lease_does_not_charge_after_the_operator_did(
    shop,
) -> None:
    cwd, store = shop
    paused = paused_after_its_intent(cwd, "tools", "call", *CHARGE, "--store", store)
    try:
        time.sleep(2.5)  # its lease (1 s) runs out: a call holds no instance to list
        held = cli(cwd, "tools", "call", *CHARGE, "--store", store)
        assert held.returncode == 5, held.stdout + held.stderr  # in doubt: not called
        assert ledger(cwd) == []
        cleared = cli(cwd, "tools", "reconcile", *CHARGE[:2], "--store", store,
                      "--args", '{"order": ":o1"}', "--verdict", "not-acted")
        assert cleared.returncode == 0, cleared.stdout + cleared.stderr
        charged = cli(cwd, "tools", "call", *CHARGE, "--store", store)
        assert charged.returncode == 0, charged.stdout + charged.stderr
        assert len(ledger(cwd)) == 1
    finally:
        code, said = woken(paused)
    assert len(ledger(cwd)) == 1, ledger(cwd)
    assert code != 0 and "Traceback" not in said, said


def test_a_run_paused_past_its_lease_after_charging_says_the_charge_may_have_acted(
    shop,
) -> None:
    """Woken after another process took the call over, its commit is refused; it said only
    "nothing of it landed", which read as no charge made: it says the charge was made."""
    cwd, store = shop
    paused = paused_after_its_intent(
        cwd, "run", "pay.ttl", "--tools", "payments.py", "--store", store, "--focus", ":o1",
        charged=True)
    try:
        lapsed(cwd, store)
        taken = cli(cwd, "run", "pay.ttl", "--tools", "payments.py", "--store", store,
                    "--focus", ":o1")
        assert taken.returncode == 3 and "not called again" in taken.stdout, taken.stdout
    finally:
        code, said = woken(paused)
    assert len(ledger(cwd)) == 1
    assert code == 2, said
    assert "lost its lease" in said and "Traceback" not in said, said
    assert "t.charge was called and may have acted" in said, said
    assert "held in doubt" in said and "horismos tools reconcile" in said, said
