"""Lanes killed at every commit boundary: a timer's ``wake`` and an agent's approved call over
``serve``. tests/test_durable.py kills ``run`` and ``resume`` where the tool says (before and
after it acts); here the process kills itself just before or just after each store commit
(tests/kill_at.py), walking every boundary the command has, and an operator then does what the
docs say. The non-idempotent tool's own ledger (a file it appends to and syncs) holds at most
one charge whatever the moment, and a charge whose outcome the world does not hold is reported
as not made again, never silently repeated.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from charge_ledger import AFTER_CHARGE, CHARGE_TOOL, NOTIFY_TOOL, ledger
from forked import horismos_forked
from rdflib import Namespace
from shop_files import prefixes

from horismos import World

# an MCP stdio server the SDK starts is a zygote child (conftest.py's forked_popen)
pytestmark = pytest.mark.usefixtures("forked_popen")

KILL_AT = Path(__file__).parent / "kill_at.py"
P = Namespace("http://example.org/pay#")

PREFIXES = prefixes("http://example.org/pay#")

DEFINITIONS = PREFIXES + """
:Order a owl:Class .
:paid a owl:DatatypeProperty .
:chargeRef a owl:DatatypeProperty .
:notice a owl:DatatypeProperty .

""" + CHARGE_TOOL + """\
PRECONDITION
    horis:idempotent false APPROVAL.

""" + NOTIFY_TOOL + """
:Pay a horis:Workflow ; horis:focusType :Order ; horis:start :AwaitPayment .

:AwaitPayment a horis:WaitStep ;
    horis:reason "Waiting for the payment to clear." ;
    horis:wake horis:Timer ;
    horis:delivery horis:Silent ;
    horis:timeout "1h" ;
    horis:until "?this :paid true ." ;
    horis:next :Charge .

:Charge a horis:ActionStep ;
    horis:tool :t.charge ;
    horis:bind [ horis:arg "order" ; horis:var "this" ] ;
    horis:next :Notify ;
    horis:onError :Reconcile .

""" + AFTER_CHARGE

PAYMENTS = '''
import asyncio
import os

def _act(what):
    with open(os.environ["LEDGER"], "a") as f:
        f.write(what + "\\n")
        f.flush()
        os.fsync(f.fileno())

def charge(order):
    _act(f"charge {order}")
    return {"chargeRef": "CH-1"}

def notify(order):
    _act(f"notify {order}")
    return {"notice": "sent"}
'''

CHARGE = "charge http://example.org/pay#o1"
NOT_AGAIN = ("not called again", "not idempotent, so it is not called again")


def project(folder: Path, *, approval: bool = False) -> Path:
    """The payment project; a charge that needs approval is its payload's precondition (a
    second call is refused for want of one, not because the order holds a reference)."""
    folder.mkdir()
    (folder / "pay.ttl").write_text(
        DEFINITIONS.replace("APPROVAL", " ;\n    horis:requiresApproval true" if approval else "")
        .replace("PRECONDITION\n", "" if approval else
                 '    horis:requires "FILTER NOT EXISTS { ?order :chargeRef ?ref }" ;\n'))
    (folder / "world.ttl").write_text(PREFIXES + ":o1 a :Order .\n")
    (folder / "paid.ttl").write_text(PREFIXES + ":o1 :paid true .\n")
    (folder / "payments.py").write_text(PAYMENTS)
    return folder


def environ(cwd: Path, kill: str | None = None) -> dict[str, str]:
    env = dict(os.environ, LEDGER=str(cwd / "ledger.txt"))
    env.pop("KILL_AT", None)
    if kill is not None:
        env["KILL_AT"] = kill
    return env


def horismos(cwd: Path, *args: str, kill: str | None = None) -> subprocess.CompletedProcess[str]:
    """``horismos ARGS…`` in ``cwd``, killed at ``kill`` (tests/kill_at.py) if given."""
    return horismos_forked(cwd, *args, env=environ(cwd, kill), timeout=300, script=KILL_AT)


def copy(start: Path, to: Path) -> Path:
    shutil.copytree(start, to)
    return to


def charged_in_world(cwd: Path, kind: str = "oxigraph") -> bool:
    """Whether the charge's answer landed (read here: the processes have let the store go)."""
    world = World.open(f"{kind}:{cwd / 'store'}")
    try:
        return any(True for _ in world.graph.objects(P.o1, P.chargeRef))
    finally:
        world.store.close()


def killed_at_each_commit(start: Path, tmp_path: Path, when: str,
                          *command: str) -> tuple[list[Path], Path]:
    """``command`` run in copies of ``start``, killed ``when`` (before or after) its first
    commit, its second, … until it runs to its end: the copies it was killed in, in order,
    and the one it completed in."""
    killed: list[Path] = []
    for nth in range(1, 20):
        cwd = copy(start, tmp_path / f"{when}-{nth}")
        done = horismos(cwd, *command, kill=f"{when}:{nth}")
        if done.returncode != -signal.SIGKILL:  # past its last commit: it ran to its end
            assert done.returncode == 0, done.stdout + done.stderr
            return killed, cwd
        killed.append(cwd)
    raise AssertionError(f"{command[0]} never ended on its own")


@pytest.mark.parametrize(("when", "kind"), [("before", "oxigraph"), ("after", "oxigraph"),
                                           ("before", "journal"), ("after", "journal")])
def test_a_wake_killed_at_any_commit_never_charges_twice(
    tmp_path: Path, when: str, kind: str
) -> None:
    """A timer's tick (``wake``) resumes a payment wait whose ``horis:until`` now holds, and
    charges. Killed at each commit boundary, the next tick and a rerun of the focus, as the
    docs say, never charge again; a charge in doubt is said to be, and waits for its
    operator at :Reconcile."""
    start = project(tmp_path / "start")
    store = ("--store", f"{kind}:store")
    waiting = horismos(start, "run", "pay.ttl", "--world", "world.ttl", *store,
                       "--tools", "payments.py", "--focus", ":o1")
    assert waiting.returncode == 3, waiting.stdout + waiting.stderr  # at :AwaitPayment
    assert horismos(start, "load", "paid.ttl", *store).returncode == 0  # now due

    wake = ("wake", "pay.ttl", *store, "--tools", "payments.py")
    killed, completed = killed_at_each_commit(start, tmp_path, when, *wake)
    assert ledger(completed) == [CHARGE, "notify http://example.org/pay#o1"]
    for boundaries, cwd in enumerate(killed, 1):
        tick = horismos(cwd, *wake)  # the timer's next tick
        rerun = horismos(cwd, "run", "pay.ttl", *store, "--tools", "payments.py",
                         "--focus", ":o1")
        said = tick.stdout + tick.stderr + rerun.stdout + rerun.stderr
        assert "Traceback" not in said
        acted = ledger(cwd)
        assert acted.count(CHARGE) <= 1, (when, boundaries, said)
        if acted.count(CHARGE) and not charged_in_world(cwd, kind):
            # charged, and its answer never landed: reported, left to the operator
            assert any(s in said for s in NOT_AGAIN), (when, boundaries, said)
            assert rerun.returncode == 3 and ":Reconcile" in rerun.stdout, said
    assert len(killed) >= 3  # an instance's intent, its charge and its notice, at least


async def _served_call(cwd: Path, kill: str | None = None) -> dict[str, Any] | None:
    """An agent's call of t.charge on :o1 over ``serve`` (stdio, the ``mcp`` SDK's client);
    None when the server died under it."""
    from mcp import Client, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=[str(KILL_AT), "serve", "pay.ttl", "--store",
                                      "oxigraph:store", "--tools", "payments.py"],
        cwd=str(cwd), env=environ(cwd, kill))
    try:
        async with Client(stdio_client(params), cache=None) as client:
            result = await client.call_tool("t.charge", {"order": ":o1"})
            return dict(result.structured_content or {})
    except Exception:  # the server was killed mid-call: the agent saw its pipe close
        return None


@pytest.mark.parametrize("when", ["before", "after"])
def test_an_approved_served_call_killed_at_any_commit_is_never_made_twice(
        tmp_path: Path, when: str) -> None:
    """An operator approved the agent's charge; the server is killed at each commit boundary
    of the approved call (just before it, or just after: a test each, ~12 s apiece), restarted,
    and the agent calls again with the same arguments. At most one charge goes out on the one
    approval, and a charge whose answer never landed is refused as in doubt, not made again."""
    start = project(tmp_path / "start", approval=True)
    assert horismos(start, "load", "world.ttl", "--store", "oxigraph:store").returncode == 0
    asked = asyncio.run(_served_call(start))
    assert asked is not None and asked["error"]["kind"] == "approval", asked
    fp = asked["approval"]["fingerprint"]
    approved = horismos(start, "approve", "pay.ttl", "--store", "oxigraph:store", "--instance",
                        f"urn:horismos:served:{fp}", "--fingerprint", fp)
    assert approved.returncode == 0, approved.stdout + approved.stderr

    boundaries = 0
    for nth in range(1, 20):
        cwd = copy(start, tmp_path / f"{when}-{nth}")
        first = asyncio.run(_served_call(cwd, kill=f"{when}:{nth}"))
        if first is not None:  # past its last commit: the call ran to its end
            assert first["status"] == "completed", first
            assert ledger(cwd) == [CHARGE]
            break
        boundaries += 1
        again = asyncio.run(_served_call(cwd))
        assert ledger(cwd).count(CHARGE) <= 1, (when, nth, again)
        if ledger(cwd) and not charged_in_world(cwd):
            assert again is not None and again["error"]["kind"] == "outcome_unknown", again
    assert boundaries >= 3  # the approval used, the intent, the call's own commit


@pytest.mark.parametrize(("when", "kind"), [("before", "oxigraph"), ("after", "oxigraph"),
                                           ("before", "journal"), ("after", "journal")])
def test_a_run_all_killed_at_any_commit_and_run_again_charges_each_order_once(
        tmp_path: Path, when: str, kind: str) -> None:
    """A batch on an on-disk store: ``run --all`` over two orders, charged by a tool that is
    not idempotent and guarded by no precondition, is killed at each commit boundary and then
    run again, as the durability guide says a user may. The rerun continues what the kill
    left and leaves out each order whose instance finished: it used to start that order a
    new instance, and charge it a second time."""
    start = project(tmp_path / "start")
    pay = (start / "pay.ttl").read_text()
    (start / "pay.ttl").write_text(pay.replace("horis:start :AwaitPayment", "horis:start :Charge")
                                   .replace('    horis:requires "FILTER NOT EXISTS { ?order '
                                            ':chargeRef ?ref }" ;\n', ""))
    assert "horis:requires" not in (start / "pay.ttl").read_text().split(":t.notify")[0]
    (start / "world.ttl").write_text(PREFIXES + ":o1 a :Order .\n:o2 a :Order .\n")
    store = ("--store", f"{kind}:store")
    assert horismos(start, "load", "world.ttl", *store).returncode == 0
    run_all = ("run", "pay.ttl", *store, "--tools", "payments.py", "--all")
    charges = [CHARGE, "charge http://example.org/pay#o2"]
    killed, _ = killed_at_each_commit(start, tmp_path, when, *run_all)
    for boundaries, cwd in enumerate(killed, 1):
        again = horismos(cwd, *run_all)
        said = again.stdout + again.stderr
        assert "Traceback" not in said
        acted = ledger(cwd)
        assert max(acted.count(c) for c in charges) == 1, (when, boundaries, acted, said)
        if len(set(acted) & set(charges)) < 2:  # killed after an intent, before its call
            assert any(s in said for s in NOT_AGAIN), (when, boundaries, said)
        twice = horismos(cwd, *run_all)  # and once more: nothing left to do
        assert ledger(cwd) == acted, (when, boundaries, twice.stdout + twice.stderr)
    assert len(killed) >= 5  # each order's intent, charge and notice
