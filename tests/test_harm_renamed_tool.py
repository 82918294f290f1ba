"""A tool renamed while a call of it is in doubt is still not called again on that subject.

A call that may have acted is held under its tool's IRI. A modeler who renamed the tool
(``:t.charge`` to ``:t.pay``, the same ``horis:binding``) made a tool that doubt did not hold:
the next run, or ``tools call``, charged the order a second time. The doubt now records the
binding its call was made through, and a call of a tool bound the same under another IRI is
held there too, until ``tools reconcile`` is given the former IRI. Real processes on an
``oxigraph:PATH`` store; the tool appends each charge to a ledger file.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from charge_ledger import ledger
from forked import Popen, horismos_forked
from in_process import horismos_load
from shop_files import CHARGE_TOOL, PAY_WORKFLOW, SHOP_HEAD, TWO_ORDERS

FORMER = "http://example.org/shop#t.charge"
O1 = '{"order": ":o1"}'

# ANSWER=bad: the tool charges, then answers what cannot land (the gate rejects it): the
# call may have acted and nothing of it landed, so it is held in doubt
PAYMENTS = """
import os, time

def _charge(kind, order):
    with open(os.environ["LEDGER"], "a") as f:
        f.write(f"{kind} {order}\\n")
    time.sleep(float(os.environ.get("SLOW", "0")))  # SLOW: the test kills it meanwhile
    if os.environ.get("ANSWER") == "bad":
        return {"paymentRef": 42}
    return {"paymentRef": "P-1"}

def charge(order):
    return _charge("charge", order)

def refund(order):
    return _charge("refund", order)
"""


def defs(tool: str = "t.charge", function: str = "charge") -> str:
    """The shop's definitions, its charge tool named ``tool`` and bound to ``function``."""
    text = SHOP_HEAD + CHARGE_TOOL + f"""\
    horis:binding "python:payments.{function}" ;
    horis:timeout "10s" ;
    horis:idempotent false .
""" + PAY_WORKFLOW
    return text.replace(":t.charge", f":{tool}")


def shop(root: Path) -> Path:
    (root / "charge.ttl").write_text(defs())
    (root / "pay.ttl").write_text(defs("t.pay"))
    (root / "payments.py").write_text(PAYMENTS)
    (root / "world.ttl").write_text(TWO_ORDERS)
    horismos_load(root, "oxigraph:store", "world.ttl")
    return root


def _env(root: Path, bad: bool = False) -> dict[str, str]:
    env = dict(os.environ, LEDGER=str(root / "ledger.txt"))
    env.pop("ANSWER", None)
    env.pop("SLOW", None)
    if bad:
        env["ANSWER"] = "bad"
    return env


def horismos(root: Path, *args: str, bad: bool = False) -> subprocess.CompletedProcess[str]:
    env = _env(root, bad)
    return horismos_forked(root, *args, env=env, timeout=300)


def run(root: Path, files: str, focus: str = ":o1", bad: bool = False):
    return horismos(root, "run", files, "--tools", "payments.py", "--store", "oxigraph:store",
                    "--focus", focus, bad=bad)


def call(root: Path, files: str, tool: str, args: str = O1, bad: bool = False):
    return horismos(root, "tools", "call", tool, files, "--tools", "payments.py", "--store",
                    "oxigraph:store", "--args", args, bad=bad)


def reconcile_command(said: str) -> list[str]:
    """The ``tools reconcile`` command a message gives, as argv (``…`` left out: the
    definitions and the store are the caller's)."""
    start = said.index("`horismos tools reconcile ")
    words = shlex.split(said[start + 1 : said.index("`", start + 1)])
    return [w for w in words if w != "…"]


def reconcile(root: Path, said: str) -> subprocess.CompletedProcess[str]:
    """Run the command ``said`` gives, given the renamed definitions and the store."""
    words = reconcile_command(said)
    assert words[:4] == ["horismos", "tools", "reconcile", FORMER], words
    return horismos(root, *words[1:4], "pay.ttl", "--tools", "payments.py", "--store",
                    "oxigraph:store", *words[4:])


def test_a_run_step_in_doubt_is_not_made_again_by_the_renamed_tool(tmp_path) -> None:
    shop(tmp_path)
    first = run(tmp_path, "charge.ttl", bad=True)
    assert first.returncode == 1, first.stdout + first.stderr
    assert ledger(tmp_path) == ["charge http://example.org/shop#o1"]

    # renamed :t.charge -> :t.pay, the same binding: the rerun's step is not made
    again = run(tmp_path, "pay.ttl")
    said = again.stdout + again.stderr
    assert again.returncode == 1, said
    assert ledger(tmp_path) == ["charge http://example.org/shop#o1"], said
    assert f"under its former name <{FORMER}>" in said
    assert reconcile_command(said)[2:] == ["reconcile", FORMER, "--args", O1]

    # once reconciled under its former name, the renamed tool is called again
    cleared = reconcile(tmp_path, said)
    assert cleared.returncode == 0, cleared.stdout + cleared.stderr
    assert f"cleared the call of {FORMER} in doubt" in cleared.stdout
    done = run(tmp_path, "pay.ttl")
    assert done.returncode == 0, done.stdout + done.stderr
    assert ledger(tmp_path) == ["charge http://example.org/shop#o1"] * 2


def test_tools_call_of_the_renamed_tool_is_refused_while_its_call_is_in_doubt(tmp_path) -> None:
    shop(tmp_path)
    first = call(tmp_path, "charge.ttl", "t.charge", bad=True)
    assert first.returncode == 1 and "may already have acted" in first.stdout, first.stdout
    assert ledger(tmp_path) == ["charge http://example.org/shop#o1"]

    refused = call(tmp_path, "pay.ttl", "t.pay")
    said = refused.stdout + refused.stderr
    assert refused.returncode == 5, said
    assert "refused (outcome_unknown)" in said and f"<{FORMER}>" in said
    # nor does a run of the renamed workflow make it: the catalog call's doubt holds it too
    held = run(tmp_path, "pay.ttl")
    assert held.returncode == 1 and f"<{FORMER}>" in held.stdout + held.stderr
    assert ledger(tmp_path) == ["charge http://example.org/shop#o1"]

    cleared = reconcile(tmp_path, said)
    assert cleared.returncode == 0, cleared.stdout + cleared.stderr
    done = call(tmp_path, "pay.ttl", "t.pay")
    assert done.returncode == 0, done.stdout + done.stderr
    assert ledger(tmp_path) == ["charge http://example.org/shop#o1"] * 2


def test_a_renamed_tool_bound_to_other_code_is_not_held(tmp_path) -> None:
    """Precision: a tool of another IRI and another binding is another tool, whatever its
    arguments; so is the renamed tool on another subject."""
    shop(tmp_path)
    (tmp_path / "refund.ttl").write_text(defs("t.refund", "refund"))
    assert run(tmp_path, "charge.ttl", bad=True).returncode == 1
    other = call(tmp_path, "refund.ttl", "t.refund")
    assert other.returncode == 0, other.stdout + other.stderr
    elsewhere = run(tmp_path, "pay.ttl", ":o2")
    assert elsewhere.returncode == 0, elsewhere.stdout + elsewhere.stderr
    # while the renamed tool, bound as the call in doubt was, is held on that subject
    held = call(tmp_path, "pay.ttl", "t.pay")
    assert held.returncode == 5, held.stdout + held.stderr
    assert ledger(tmp_path) == [
        "charge http://example.org/shop#o1",
        "refund http://example.org/shop#o1",
        "charge http://example.org/shop#o2",
    ]


def test_the_normal_path_writes_no_binding_and_a_doubt_records_one(tmp_path) -> None:
    """A step that completes leaves nothing at its doubt node (its hold is two quads, not an
    intent, and no binding); one left in doubt records the binding it was made through."""
    shop(tmp_path)
    done = run(tmp_path, "charge.ttl", ":o2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert run(tmp_path, "charge.ttl", bad=True).returncode == 1
    dumped = _nquads(tmp_path)
    doubts = [
        line for line in dumped.stdout.splitlines() if line.startswith("<urn:horismos:doubt:")
    ]
    bindings = [line for line in doubts if "calledBinding" in line]
    assert len(bindings) == 1, doubts
    assert '"python:payments.charge"' in bindings[0]
    assert len({line.split()[0] for line in doubts}) == 1, doubts  # o2's call left nothing


def _nquads(root: Path) -> subprocess.CompletedProcess[str]:
    """The store's quads, as N-Quads, read by Oxigraph itself."""
    code = (
        "import sys, pyoxigraph as ox\n"
        "s = ox.Store.read_only('store')\n"
        "sys.stdout.write(ox.serialize(s, format=ox.RdfFormat.N_QUADS).decode())\n"
    )
    return subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                          text=True, timeout=120, check=True)


def test_reconcile_says_which_name_a_renamed_tool_is_held_under(tmp_path) -> None:
    """Reconciling the tool by its new name finds nothing under that name: it says that its
    calls are held under the former one, and how to clear that, rather than "nothing in
    doubt"; a name that is no tool, now or before, is told how a former name is given."""
    shop(tmp_path)
    assert run(tmp_path, "charge.ttl", bad=True).returncode == 1
    by_new = horismos(tmp_path, "tools", "reconcile", "t.pay", "pay.ttl", "--tools",
                      "payments.py", "--store", "oxigraph:store", "--args", O1)
    assert by_new.returncode == 2, by_new.stdout + by_new.stderr
    assert reconcile_command(by_new.stderr)[2:] == ["reconcile", FORMER, "--args", O1]
    unknown = horismos(tmp_path, "tools", "reconcile", "t.gone", "pay.ttl", "--tools",
                       "payments.py", "--store", "oxigraph:store", "--args", O1)
    assert unknown.returncode == 2, unknown.stdout + unknown.stderr
    assert "full IRI" in unknown.stderr and "Traceback" not in unknown.stderr
    assert reconcile(tmp_path, by_new.stderr).returncode == 0
    assert ledger(tmp_path) == ["charge http://example.org/shop#o1"]


def test_a_step_killed_mid_call_then_renamed_is_held_under_its_former_name(tmp_path) -> None:
    """The process is killed (SIGKILL) while the tool acts, leaving the instance's intent
    open; the tool is renamed before anyone continues it. Continued, the step fails as its
    call's outcome is unknown, and that call is held in doubt under the IRI it was made under:
    a rerun (a new instance) and a catalog call of the renamed tool are not made."""
    shop(tmp_path)
    proc = Popen(
        [sys.executable, "-m", "horismos", "run", "charge.ttl", "--tools", "payments.py",
         "--store", "oxigraph:store", "--focus", ":o1"],
        cwd=tmp_path, env=dict(_env(tmp_path), SLOW="60"), stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while not ledger(tmp_path):
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)

    continued = run(tmp_path, "pay.ttl")  # the unfinished instance, its intent open
    said = continued.stdout + continued.stderr
    assert continued.returncode == 1 and FORMER in said, said
    rerun = run(tmp_path, "pay.ttl")  # a new instance
    assert rerun.returncode == 1, rerun.stdout + rerun.stderr
    assert f"under its former name <{FORMER}>" in rerun.stdout + rerun.stderr
    refused = call(tmp_path, "pay.ttl", "t.pay")
    assert refused.returncode == 5, refused.stdout + refused.stderr
    assert ledger(tmp_path) == ["charge http://example.org/shop#o1"]
    assert reconcile(tmp_path, refused.stdout).returncode == 0
    assert call(tmp_path, "pay.ttl", "t.pay").returncode == 0
    assert ledger(tmp_path) == ["charge http://example.org/shop#o1"] * 2
