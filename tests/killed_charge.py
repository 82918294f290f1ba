"""The payment of the tests that kill a run where its tool says: test_durable, test_backup
and test_lock_wait. Its definitions (charge_ledger's charge, then the notice), payments.py
whose tools append each act to the ledger and, given ``HOLD=<point>``, stop there after
leaving a marker file until killed; the environment that says where; and a run started and
killed at a point. These lived in test_durable, which the other two imported.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from charge_ledger import AFTER_CHARGE, CHARGE_TOOL, NOTIFY_TOOL, PREFIXES
from forked import Popen

DEFINITIONS = PREFIXES + """
:Order a owl:Class .

""" + CHARGE_TOOL + """\
    horis:idempotent false .

""" + NOTIFY_TOOL + """
:Pay a horis:Workflow ; horis:focusType :Order ; horis:start :Charge .

:Charge a horis:ActionStep ;
    horis:tool :t.charge ;
    horis:requires "?this a :Order . FILTER NOT EXISTS { ?this :chargeRef ?ref }" ;
    horis:bind [ horis:arg "order" ; horis:var "this" ] ;
    horis:next :Notify ;
    horis:onError :Reconcile .

""" + AFTER_CHARGE

# Each tool appends to a ledger (fsynced) when it acts; HOLD=<point> makes it stop there and
# wait to be killed, after leaving a marker file.
PAYMENTS = '''
import os, time
from pathlib import Path

LEDGER = Path(os.environ["LEDGER"])

def _hold(point):
    if os.environ.get("HOLD") == point:
        (LEDGER.parent / f"at-{point}").write_text("here")
        time.sleep(600)

def _act(what):
    with open(LEDGER, "a") as f:
        f.write(what + "\\n")
        f.flush()
        os.fsync(f.fileno())

def charge(order):
    _hold("charge-before")
    _act(f"charge {order}")
    _hold("charge-after")
    return {"chargeRef": "CH-1"}

def notify(order):
    _hold("notify")
    _act(f"notify {order}")
    return {"notice": "sent"}
'''


def project(folder: Path, *orders: str) -> Path:
    """The payment in ``folder``: its definitions, payments.py, and a world of ``orders``."""
    (folder / "pay.ttl").write_text(DEFINITIONS)
    (folder / "world.ttl").write_text(PREFIXES + "".join(f":{o} a :Order .\n" for o in orders))
    (folder / "payments.py").write_text(PAYMENTS)
    return folder


def horismos(*args: str) -> list[str]:
    return [sys.executable, "-m", "horismos", *args]


def environ(cwd: Path, hold: str | None) -> dict[str, str]:
    env = dict(os.environ, LEDGER=str(cwd / "ledger.txt"))
    env.pop("HOLD", None)
    if hold:
        env["HOLD"] = hold
    return env


def run_until_killed(cwd: Path, point: str, *command: str, kind: str = "oxigraph") -> None:
    """Start ``horismos run`` (or ``command``) on the on-disk store (of ``kind``) and SIGKILL it
    once a tool reaches ``point``."""
    command = command or ("run", "pay.ttl", "--world", "world.ttl", "--store", f"{kind}:store",
                          "--tools", "payments.py", "--focus", ":o1", "--trace", "killed.jsonl")
    proc = Popen(horismos(*command), cwd=cwd, env=environ(cwd, point),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    marker = cwd / f"at-{point}"
    deadline = time.monotonic() + 120
    while not marker.exists():
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"the run ended before reaching {point}: {out.decode()}{err.decode()}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"the run did not reach {point}")
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
