"""The pay project of the tests of a call asked again: test_client_retries (a script or an
agent retrying), and the tests of serve, Ctrl-C, a killed call and idempotency keys that ask
it again. A charge that needs approval (idempotent or not) and a bill, both appending a line
to the ledger ``LEDGER`` names and held in their call ``SLOW`` seconds, so that two processes
overlap; and the command run on the project with that environment, in-process or not.
These lived in test_client_retries, which the other tests imported.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from charge_ledger import PREFIXES
from forked import Popen, horismos_forked

DEFINITIONS = PREFIXES + """
:Order a owl:Class .

:t.charge a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "order" ; horis:type :Order ] ] ;
    horis:effect [ horis:asserts [ horis:property :chargeRef ; horis:type xsd:string ;
                                   horis:many true ] ] ;
    horis:binding "python:payments.charge" ;
    horis:requiresApproval true ;
    horis:idempotent IDEMPOTENT .

:t.bill a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "order" ; horis:type :Order ] ] ;
    horis:effect [ horis:asserts [ horis:property :billRef ; horis:type xsd:string ;
                                   horis:many true ] ] ;
    horis:binding "python:payments.bill" ;
    horis:idempotent false .

:Pay a horis:Workflow ; horis:focusType :Order ; horis:start :Bill .
:Bill a horis:ActionStep ; horis:tool :t.bill ;
    horis:bind [ horis:arg "order" ; horis:var "this" ] .
"""

# SLOW=<seconds> keeps the tool in its call that long, so two processes overlap
PAYMENTS = '''
import os, time, uuid

def charge(order):
    with open(os.environ["LEDGER"], "a") as f:
        f.write(f"charge {order}\\n")
    time.sleep(float(os.environ.get("SLOW", "0")))
    return {"chargeRef": uuid.uuid4().hex}

def bill(order):
    with open(os.environ["LEDGER"], "a") as f:
        f.write(f"bill {order}\\n")
    time.sleep(float(os.environ.get("SLOW", "0")))
    return {"billRef": uuid.uuid4().hex}
'''


def shop(root: Path, idempotent: bool = False) -> Path:
    (root / "pay.ttl").write_text(
        DEFINITIONS.replace("IDEMPOTENT", "true" if idempotent else "false"))
    (root / "world.ttl").write_text(PREFIXES + ":o1 a :Order .\n")
    (root / "payments.py").write_text(PAYMENTS)
    return root


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return horismos_forked(cwd, *args, env=environ(cwd), timeout=300)


def start(cwd: Path, *args: str, slow: float) -> subprocess.Popen[str]:
    return Popen([sys.executable, "-m", "horismos", *args], cwd=cwd,
                            env=environ(cwd, slow), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def environ(cwd: Path, slow: float = 0) -> dict[str, str]:
    return dict(os.environ, LEDGER=str(cwd / "ledger.txt"), SLOW=str(slow))
