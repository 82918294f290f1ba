"""`horismos tools call` of a slow tool that is not idempotent, given an idempotency key and
killed (SIGKILL) once the tool has acted, on a world kept in a `journal:PATH`; then the
same call again with the same key, with another key, and with none.

The key was recorded with the call's intent, and no answer was: a retry with it has nothing
to replay and must not call, and a call under another key (or none) is a new call of a tool
whose last call there is in doubt. Each is refused `outcome_unknown` (exit 5) until
`horismos tools reconcile`, and the ledger holds one charge. (Killed once the call has
landed, the retry with its key is answered the first answer, `replayed`: a sweep of kill
times across the commit found no third outcome.)
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

from charge_ledger import ledger
from forked import Popen
from in_process import horismos_load
from retried_charge import cli, environ, shop

BILLED = "bill http://example.org/pay#o1"
CALL = ("tools", "call", "t.bill", "pay.ttl", "--tools", "payments.py", "--store",
        "journal:world", "--args", '{"order": ":o1"}', "--format", "json")


def test_a_keyed_call_killed_mid_call_is_not_made_again_under_any_key(tmp_path) -> None:
    shop(tmp_path)
    horismos_load(tmp_path, "journal:world", "world.ttl")
    proc = Popen([sys.executable, "-m", "horismos", *CALL, "--idempotency-key",
                             "k1"], cwd=tmp_path, env=environ(tmp_path, 30),
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not ledger(tmp_path):
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    for key in (["--idempotency-key", "k1"], ["--idempotency-key", "k2"], []):
        again = cli(tmp_path, *CALL, *key)
        assert again.returncode == 5, (key, again.stdout + again.stderr)
        assert json.loads(again.stdout)["error"]["kind"] == "outcome_unknown", again.stdout
        assert "Traceback" not in again.stderr
    assert ledger(tmp_path) == [BILLED]
