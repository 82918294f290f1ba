"""An approved call whose resume was killed mid-call is not listed as waiting for approval.

A step whose tool requires approval waits; a person approves; ``resume`` announces the call
(its intent, the approval used up) and makes it. Killed (``kill -9``) after the tool acted
and before its commit, it left the instance's status as it was: ``horismos instances``
listed it "waits for approval of its call", nothing in doubt, so the transfer made was shown
nowhere and an operator would approve it again. The row now says the approved call was made
and may have acted, and what settles it. (Resumed, it was never called again: that held.)
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from forked import horismos_forked
from shop_files import TRANSFER_TERMS, TRANSFER_TOOL, prefixes

KILL_AT = Path(__file__).parent / "kill_at.py"

DEFS = prefixes("http://example.org/pay#") + TRANSFER_TERMS + TRANSFER_TOOL + """\
    horis:binding "python:payments.transfer" ;
    horis:requiresApproval true ;
    horis:idempotent false .
:Move a horis:Workflow ; horis:focusType :Transfer ; horis:start :Send .
:Send a horis:ActionStep ; horis:tool :t.transfer ;
    horis:bind [ horis:arg "transfer" ; horis:var "this" ] .
"""

PAYMENTS = '''
def transfer(transfer):
    with open("ledger.txt", "a") as f:
        f.write(f"transfer {transfer}\\n")
    return {"transferRef": "T-1"}
'''


def cli(cwd: Path, *args: str, kill: str | None = None) -> tuple[int, str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    env.pop("KILL_AT", None)
    if kill:
        env["KILL_AT"] = kill
    done = horismos_forked(cwd, *args, env=env, timeout=300, script=KILL_AT)
    return done.returncode, done.stdout + done.stderr


def test_an_approved_call_killed_after_acting_is_listed_as_made(tmp_path: Path) -> None:
    (tmp_path / "pay.ttl").write_text(DEFS)
    (tmp_path / "payments.py").write_text(PAYMENTS)
    (tmp_path / "world.ttl").write_text("@prefix : <http://example.org/pay#> .\n"
                                        ":x1 a :Transfer .\n")
    store = ("--store", "oxigraph:store")
    tools = ("--tools", "payments.py")
    assert cli(tmp_path, "load", "world.ttl", *store)[0] == 0
    code, asked = cli(tmp_path, "run", "pay.ttl", *tools, *store, "--focus", ":x1")
    assert code == 3, asked
    iid = re.search(r"urn:horismos:instance:\w+", asked)
    fp = re.search(r"Fingerprint: (\w+)", asked)
    assert iid is not None and fp is not None
    code, said = cli(tmp_path, "approve", "pay.ttl", *store, "--instance", iid[0],
                     "--fingerprint", fp[1])
    assert code == 0, said
    code, said = cli(tmp_path, "resume", "pay.ttl", *tools, *store, "--instance", iid[0],
                     kill="before:2")  # its intent landed, the tool acted: killed
    assert code == -9, said
    assert (tmp_path / "ledger.txt").read_text() == "transfer http://example.org/pay#x1\n"

    code, listed = cli(tmp_path, "instances", "pay.ttl", *store)
    assert code == 0, listed
    assert "waits for approval" not in listed, listed
    assert "its approved call of t.transfer was made" in listed, listed
    assert "may have acted" in listed and "horismos resume" in listed, listed

    code, settled = cli(tmp_path, "resume", "pay.ttl", *tools, *store, "--instance", iid[0])
    assert "not called again" in settled, settled
    assert (tmp_path / "ledger.txt").read_text() == "transfer http://example.org/pay#x1\n"
