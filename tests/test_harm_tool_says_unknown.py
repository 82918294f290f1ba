"""A Python tool that may have acted before it failed says so by raising ``OutcomeUnknown``.

A function that raises is a ToolError: its call is taken as not having acted, and a rerun
calls it again. A function that sent the charge and then lost the bank's answer cannot say
"I failed" truthfully; raising ``horismos.OutcomeUnknown`` tells the runtime the call may have
acted, and a tool that is not idempotent is then held in doubt in every lane (``run``,
``tools call``), as a call never answered is, until ``horismos tools reconcile``. The tool
appends to a ledger before it raises, so a second call shows. The world is an
``oxigraph:PATH`` store shared by the processes.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from forked import horismos_forked
from in_process import horismos_load
from shop_files import CHARGE_TOOL, ONE_ORDER, PAY_WORKFLOW, SHOP_HEAD

DEFS = SHOP_HEAD + CHARGE_TOOL + """\
    horis:binding "python:bank.charge" ;
    horis:idempotent false .
""" + PAY_WORKFLOW

# RAISE: what the function raises once it has charged; ASYNC: an async function
BANK = '''
import os
from horismos import OutcomeUnknown

def _charge(order):
    with open(os.environ["LEDGER"], "a") as f:
        f.write(f"charge {order}\\n")
    if os.environ["RAISE"] == "unknown":
        raise OutcomeUnknown("the bank's answer was cut off after the charge was sent")
    raise ValueError("the bank refused the card")

if os.environ.get("ASYNC"):
    async def charge(order):
        _charge(order)
else:
    def charge(order):
        _charge(order)
'''

RUN = ("run", "shop.ttl", "--tools", "bank.py", "--store", "oxigraph:world", "--focus", ":o1",
       "--allow", "ReadOnly,HostStateWrite,ExternalCommit")
CALL = ("tools", "call", "t.charge", "shop.ttl", "--tools", "bank.py", "--store",
        "oxigraph:world", "--args", '{"order": ":o1"}', "--format", "json")


def shop(root: Path, raises: str, asynchronous: bool = False) -> dict[str, str]:
    (root / "shop.ttl").write_text(DEFS)
    (root / "world.ttl").write_text(ONE_ORDER)
    (root / "bank.py").write_text(BANK)
    horismos_load(root, "oxigraph:world", "world.ttl")
    env = {"LEDGER": str(root / "ledger.txt"), "RAISE": raises}
    return env | ({"ASYNC": "1"} if asynchronous else {})


def horismos(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return horismos_forked(root, *args, env=dict(os.environ, **env), timeout=300)


def charges(root: Path) -> int:
    path = root / "ledger.txt"
    return len(path.read_text().splitlines()) if path.exists() else 0


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_a_step_whose_tool_says_its_outcome_is_unknown_is_not_made_again(
    tmp_path, asynchronous
) -> None:
    env = shop(tmp_path, "unknown", asynchronous)
    first = horismos(tmp_path, env, *RUN)
    assert "the bank's answer was cut off" in first.stdout + first.stderr
    again = horismos(tmp_path, env, *RUN)
    said = again.stdout + again.stderr
    assert charges(tmp_path) == 1, said
    assert "may already have acted on :o1" in said, said
    assert "horismos tools reconcile t.charge" in said, said
    assert "Traceback" not in first.stderr + again.stderr
    # nor through the catalog, on the same subject
    call = horismos(tmp_path, env, *CALL)
    assert call.returncode == 5, call.stdout + call.stderr
    assert json.loads(call.stdout)["error"]["kind"] == "outcome_unknown"
    assert charges(tmp_path) == 1


def test_a_catalog_call_whose_tool_says_its_outcome_is_unknown_is_held_until_reconciled(
    tmp_path,
) -> None:
    env = shop(tmp_path, "unknown")
    first = horismos(tmp_path, env, *CALL)
    assert json.loads(first.stdout)["error"]["kind"] == "outcome_unknown", first.stdout
    again = horismos(tmp_path, env, *CALL)
    assert again.returncode == 5, again.stdout + again.stderr
    assert json.loads(again.stdout)["status"] == "refused"
    run = horismos(tmp_path, env, *RUN)
    assert "may already have acted on :o1" in run.stdout + run.stderr
    assert charges(tmp_path) == 1
    cleared = horismos(tmp_path, env, "tools", "reconcile", "t.charge", "shop.ttl", "--store",
                       "oxigraph:world", "--args", '{"order": ":o1"}')
    assert cleared.returncode == 0, cleared.stdout + cleared.stderr
    horismos(tmp_path, env, *CALL)
    assert charges(tmp_path) == 2  # reconciled: called again


def test_a_catalog_call_whose_tool_says_its_outcome_is_unknown_says_what_the_tool_said(
    tmp_path,
) -> None:
    """The tool's own words lead the answer, then what to do: `tools call` said only that the
    outcome never landed ("the process stopped, the lease was lost…"), so the person asked to
    check with the bank did not learn what the tool knew (its answer was cut off after the
    charge was sent), which `run` prints for the same failure."""
    env = shop(tmp_path, "unknown")
    text = horismos(tmp_path, env, *CALL[:-2])  # the receipt, as a person reads it
    assert text.returncode == 1, text.stdout + text.stderr
    told = "the bank's answer was cut off after the charge was sent"
    assert told in text.stdout, text.stdout
    assert "horismos tools reconcile t.charge" in text.stdout, text.stdout
    (tmp_path / "world").rename(tmp_path / "used")
    horismos_load(tmp_path, "oxigraph:world", "world.ttl")
    answer = json.loads(horismos(tmp_path, env, *CALL).stdout)
    assert answer["error"]["kind"] == "outcome_unknown"
    assert answer["error"]["message"].startswith(told + ". t.charge is not idempotent"), answer


def test_a_tool_that_raises_anything_else_is_taken_as_not_having_acted(tmp_path) -> None:
    """Where the line is drawn: a plain exception is the tool's own failure, so a rerun calls
    it again. A tool that may have acted must raise OutcomeUnknown instead."""
    env = shop(tmp_path, "refused")
    for _ in range(2):
        done = horismos(tmp_path, env, *RUN)
        assert "the bank refused the card" in done.stdout + done.stderr
    assert charges(tmp_path) == 2


def test_a_run_whose_tool_says_its_outcome_is_unknown_says_the_call_is_held_and_what_clears_it(
    tmp_path,
) -> None:
    """docs/guide/bindings.md: a tool raising OutcomeUnknown is held in doubt until `horismos
    tools reconcile`. `run` printed only the tool's words under the step, and `instances`
    listed the instance `outcome_unknown: <the tool's words>`: nothing said that the call was
    held, nor what clears it, until the next run was refused."""
    env = shop(tmp_path, "unknown")
    first = horismos(tmp_path, env, *RUN)
    assert "the bank's answer was cut off" in first.stdout, first.stdout
    assert "held in doubt: t.charge is not idempotent" in first.stdout, first.stdout
    assert """horismos tools reconcile t.charge … --args '{"order": ":o1"}'""" in first.stdout
    listed = horismos(tmp_path, env, "instances", "shop.ttl", "--store", "oxigraph:world")
    row = listed.stdout.splitlines()[1]
    assert "held in doubt since" in row and "horismos tools reconcile t.charge" in row, row
    assert "outcome_unknown: the bank's answer was cut off" in row, row
