"""An approval is used up somewhere a retry sees it, or not used at all.

``tools call --approval A --world F`` with no ``--out`` used A in a world kept nowhere: the
use landed in no file, so the same call from the same F was allowed again — one approval,
three charges for a script that retried it. ``tools approve`` already refuses to issue into
such a world, and ``wake`` to call in one; ``tools call`` now refuses to use an approval in
one, and calls nothing. So does ``resume`` of an instance waiting for approval: from the
approved file without ``--out``, every resume charged again.
"""

from __future__ import annotations

from pathlib import Path

from forked import horismos_forked
from shop_files import CHARGE_TOOL, ONE_ORDER, PAY_WORKFLOW, SHOP_HEAD

DEFS = SHOP_HEAD + CHARGE_TOOL + """\
    horis:binding "python:charge" ;
    horis:requiresApproval true ;
    horis:idempotent false .
"""

SHOP = """\
import os

def charge(order):
    with open("ledger", "a") as f:
        f.write(str(order) + "\\n")
    return {"paymentRef": "P-1"}
"""

ARGS = '{"order": ":o1"}'


def charges(folder: Path) -> int:
    ledger = folder / "ledger"
    return len(ledger.read_text().split()) if ledger.exists() else 0


def test_an_approval_is_not_used_in_a_world_kept_nowhere(tmp_path: Path) -> None:
    (tmp_path / "defs.ttl").write_text(DEFS, encoding="utf-8")
    (tmp_path / "world.ttl").write_text(ONE_ORDER, encoding="utf-8")
    (tmp_path / "shop.py").write_text(SHOP, encoding="utf-8")
    issued = horismos_forked(tmp_path, "tools", "approve", "t.charge", "defs.ttl", "--world",
                             "world.ttl", "--out", "approved.trig", "--args", ARGS, timeout=120)
    assert issued.returncode == 0, issued.stderr
    approval = issued.stdout.strip()
    call = ["tools", "call", "t.charge", "defs.ttl", "--tools", "shop", "--args", ARGS,
            "--approval", approval]

    for _ in range(3):  # a script retrying the call, forgetting --out
        p = horismos_forked(tmp_path, *call, "--world", "approved.trig", timeout=120)
        assert p.returncode == 2, p.stdout + p.stderr
        assert "kept nowhere" in p.stderr and "--out F" in p.stderr, p.stderr
        assert "Traceback" not in p.stderr
    assert charges(tmp_path) == 0

    # written back, it is used once; a retry from what was written is refused as used
    done = horismos_forked(tmp_path, *call, "--world", "approved.trig", "--out", "after.trig",
                           timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    again = horismos_forked(tmp_path, *call, "--world", "after.trig", timeout=120)
    assert again.returncode == 2 and "approval_used" in again.stdout, again.stdout
    assert charges(tmp_path) == 1


WORKFLOW = "\n" + PAY_WORKFLOW


def test_an_approved_instance_is_not_resumed_in_a_world_kept_nowhere(tmp_path: Path) -> None:
    (tmp_path / "defs.ttl").write_text(DEFS + WORKFLOW, encoding="utf-8")
    (tmp_path / "world.ttl").write_text(ONE_ORDER, encoding="utf-8")
    (tmp_path / "shop.py").write_text(SHOP, encoding="utf-8")
    ran = horismos_forked(tmp_path, "run", "defs.ttl", "--world", "world.ttl", "--focus", ":o1",
                          "--tools", "shop", "--out", "waiting.trig", timeout=120)
    assert ran.returncode == 3, ran.stdout + ran.stderr
    instance = next(w for w in ran.stdout.split() if w.startswith("urn:horismos:instance:"))
    fingerprint = ran.stdout.split("Fingerprint: ", 1)[1].split()[0]
    approved = horismos_forked(tmp_path, "approve", "defs.ttl", "--world", "waiting.trig",
                               "--instance", instance, "--fingerprint", fingerprint, "--out",
                               "approved.trig", timeout=120)
    assert approved.returncode == 0, approved.stderr
    resume = ["resume", "defs.ttl", "--instance", instance, "--tools", "shop"]

    for _ in range(3):  # resumed again and again from the approved file, forgetting --out
        p = horismos_forked(tmp_path, *resume, "--world", "approved.trig", timeout=120)
        assert p.returncode == 2, p.stdout + p.stderr
        assert "kept nowhere" in p.stderr and "--out F" in p.stderr, p.stderr
    assert charges(tmp_path) == 0

    done = horismos_forked(tmp_path, *resume, "--world", "approved.trig", "--out", "done.trig",
                           timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert charges(tmp_path) == 1
