"""An incident reviewer's walk: what happened, reconstructed from the traces and the world
alone (``trace show``, ``instances``), with no code read and no run's output at hand. Each
test stages an incident with real processes on a world kept on disk (or served by ``oxigraph
serve``) and asks what a reviewer asks of it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from billed_order import DEFINITIONS, RUN, loaded, project
from forked import horismos_forked
from test_run_policy import EXTERNAL, TOOLS, WORLD, definitions


def test_a_call_held_in_doubt_says_its_kind_in_the_trace_and_in_the_instances(
    tmp_path: Path,
) -> None:
    """A billing process killed mid-call, its retry (``--no-again``) holding the call in
    doubt: the retry's trace said ``failed:`` and the words, ``instances`` the words cut
    short, and neither the kind the failing commit stores (``outcome_unknown``), which is what
    tells a call that may have acted from a tool that raised. Both now say it first; the
    JSON listing gives it as ``error_kind``, and an operator's clearing leaves it said."""
    env = loaded(tmp_path)
    killed = subprocess.Popen(
        [sys.executable, "-m", "horismos", *RUN, "--no-again", "--trace", "first.jsonl"],
        cwd=tmp_path, env=dict(env, BILL_SECONDS="60"), stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    ledger = tmp_path / "ledger"
    deadline = time.monotonic() + 60
    while not ledger.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    retried = horismos_forked(tmp_path, *RUN, "--no-again", "--trace", "retry.jsonl", env=env)
    assert retried.returncode == 1, retried.stdout + retried.stderr

    shown = horismos_forked(tmp_path, "trace", "show", "retry.jsonl", "pay.ttl", env=env)
    assert shown.returncode == 0, shown.stderr
    (step,) = [line for line in shown.stdout.splitlines() if "  :Bill  " in line]
    assert "  failed (outcome_unknown): t.bill was called at :Bill" in step, step

    listed = horismos_forked(tmp_path, "instances", "--store", "oxigraph:store", env=env)
    assert " failed " in listed.stdout and "  outcome_unknown: t.bill was called" in listed.stdout
    cleared = horismos_forked(
        tmp_path, "tools", "reconcile", "t.bill", "pay.ttl", "--tools", "shop", "--store",
        "oxigraph:store", "--args", '{"order": ":o1"}', "--verdict", "acted", "--operator",
        "alice", env=env,
    )
    assert cleared.returncode == 0, cleared.stdout + cleared.stderr
    listed = horismos_forked(tmp_path, "instances", "--store", "oxigraph:store", "--format",
                             "json", env=env)
    (row,) = json.loads(listed.stdout)
    assert row["error_kind"] == "outcome_unknown"
    assert [(c["operator"], c["verdict"]) for c in row["reconciled"]] == [("alice", "acted")]
    assert ledger.read_text().splitlines() == ["http://example.org/pay#o1"]


def test_a_step_the_policy_blocked_says_why_and_each_trace_its_policy(tmp_path: Path) -> None:
    """A discharge blocked by ``--allow ReadOnly``, then run again with ExternalCommit
    allowed. The first trace's step line read ``blocked:`` and nothing (only a failing
    precondition was printed), and neither trace said what its run allowed: the reviewer
    could not tell why it stopped, nor why the second run went through."""
    (tmp_path / "defs.ttl").write_text(definitions(EXTERNAL), encoding="utf-8")
    (tmp_path / "world.ttl").write_text(WORLD, encoding="utf-8")
    (tmp_path / "ward.py").write_text(TOOLS, encoding="utf-8")
    store = ("--store", "oxigraph:store")
    assert horismos_forked(tmp_path, "load", "world.ttl", *store).returncode == 0
    run = ("run", "defs.ttl", *store, "--tools", "ward", "--focus", ":p1")
    blocked = horismos_forked(tmp_path, *run, "--allow", "ReadOnly", "--trace", "b1.jsonl")
    assert blocked.returncode == 4, blocked.stdout + blocked.stderr
    went = horismos_forked(tmp_path, *run, "--allow", "ExternalCommit,ReadOnly", "--trace",
                           "b2.jsonl")
    assert went.returncode == 0, went.stdout + went.stderr

    first = horismos_forked(tmp_path, "trace", "show", "b1.jsonl", "defs.ttl").stdout
    assert "\n  policy allows ReadOnly\n" in first, first
    (step,) = [line for line in first.splitlines() if ":t.discharge(" in line]
    assert (
        "  blocked (policy): t.discharge has side effect ExternalCommit, which the policy "
        "does not allow (allowed: ReadOnly)" in step
    ), step
    second = horismos_forked(tmp_path, "trace", "show", "b2.jsonl", "defs.ttl").stdout
    assert "\n  policy allows ExternalCommit, ReadOnly\n" in second, second
    assert "continued at :Go (blocked)" in second and "gate ok  completed" in second


def test_a_trace_of_a_shared_world_says_why_it_has_no_world_digest(tmp_path: Path) -> None:
    """On a ``sparql:`` world other processes write, a run records no world digest; ``trace
    show`` printed ``world None``, as if the header were damaged."""
    from oxigraph_server import OxigraphServer

    project(tmp_path)
    env = dict(os.environ, LEDGER=str(tmp_path / "ledger"))
    server = OxigraphServer(tmp_path / "store")
    try:
        assert horismos_forked(tmp_path, "load", "world.ttl", "--store", server.store,
                               env=env).returncode == 0
        ran = horismos_forked(tmp_path, "run", "pay.ttl", "--tools", "shop", "--store",
                              server.store, "--focus", ":o1", "--trace", "t.jsonl", env=env)
        assert ran.returncode == 0, ran.stdout + ran.stderr
    finally:
        server.stop()
    shown = horismos_forked(tmp_path, "trace", "show", "t.jsonl", env=env).stdout
    assert "None" not in shown, shown
    assert (
        f"\n  world digest not recorded: {server.store} is a world other processes write "
        "meanwhile\n" in shown
    ), shown


GATED = """
@prefix sh: <http://www.w3.org/ns/shacl#> .
:flagged a owl:DatatypeProperty .
:OrderShape a sh:NodeShape ; sh:targetClass :Order ;
    sh:property [ sh:path :billRef ; sh:pattern "^B-[0-9]+$" ] .
:t.flag a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "order" ; horis:type :Order ] ] ;
    horis:effect [ horis:subject "order" ;
                   horis:asserts [ horis:property :flagged ; horis:type xsd:string ] ] ;
    horis:binding "python:shop.flag" ; horis:idempotent true .
:Bill horis:onError :Flag .
:Flag a horis:ActionStep ; horis:tool :t.flag ;
    horis:requires "?this a :Order ." ;
    horis:bind [ horis:arg "order" ; horis:var "this" ] .
"""

GATED_SHOP = """
import os
from pathlib import Path


def bill(order):
    with Path(os.environ["LEDGER"]).open("a") as f:
        f.write(str(order) + "\\n")
    return {"billRef": os.environ["BILL_REF"]}  # the payment system's reference, as it says it

def flag(order):
    return {"flagged": "billing answered a reference the shape refuses"}
"""


def _gated(tmp_path: Path) -> dict[str, str]:
    """:o1 billed, the reference answered refused by the gate, the instance gone on by
    ``horis:onError`` to :Flag and completed; its trace in ``run.jsonl``."""
    project(tmp_path, DEFINITIONS + GATED, GATED_SHOP)
    env = dict(os.environ, LEDGER=str(tmp_path / "ledger"), BILL_REF="bad ref")
    done = horismos_forked(tmp_path, "load", "world.ttl", "--store", "oxigraph:store", env=env)
    assert done.returncode == 0, done.stderr
    ran = horismos_forked(tmp_path, *RUN, "--trace", "run.jsonl", env=env)
    assert ran.returncode == 0 and "onError -> :Flag" in ran.stdout, ran.stdout + ran.stderr
    return env


def test_a_call_the_gate_rejected_is_listed_held_in_doubt_on_its_completed_instance(
    tmp_path: Path,
) -> None:
    """The payment system answered a reference the domain shape refuses: the gate rejected
    it after the tool had billed, the call is held in doubt, and the instance went on by
    ``horis:onError`` and completed. ``horismos instances`` listed it ``completed -``: no
    command said a call was held in doubt, nor whose. The row now says it with the
    command that clears it, which works, and the JSON lists it under ``in_doubt``."""
    env = _gated(tmp_path)
    store = ("--store", "oxigraph:store")

    listed = horismos_forked(tmp_path, "instances", *store, "pay.ttl", env=env).stdout
    (row,) = listed.splitlines()[1:]
    assert " completed " in row
    clear = "`horismos tools reconcile t.bill … --args "
    assert "call of t.bill at :Bill held in doubt since " in row and clear in row, row
    args = row.split(clear, 1)[1].rstrip("`")
    assert args == """'{"order": ":o1"}'"""
    data = json.loads(horismos_forked(tmp_path, "instances", *store, "--format", "json",
                                      env=env).stdout)
    assert [(d["tool"], d["args"]) for d in data[0]["in_doubt"]] == [
        ("http://example.org/pay#t.bill", [{"order": "<http://example.org/pay#o1>"}])
    ]

    cleared = horismos_forked(tmp_path, "tools", "reconcile", "t.bill", "pay.ttl", "--tools",
                              "shop", *store, "--args", args.strip("'"), "--verdict",
                              "acted", "--operator", "alice", env=env)
    assert cleared.returncode == 0, cleared.stdout + cleared.stderr
    listed = horismos_forked(tmp_path, "instances", *store, "pay.ttl", env=env).stdout
    assert "held in doubt" not in listed
    assert "call in doubt cleared by alice" in listed and "(verdict: acted)" in listed
    assert (tmp_path / "ledger").read_text().splitlines() == ["http://example.org/pay#o1"]


def test_the_trace_of_a_call_the_gate_rejected_says_it_was_held_in_doubt(tmp_path: Path) -> None:
    """``run`` said under the rejected step that the call was held in doubt, with the command
    that clears it; ``trace show`` of the same run showed the gate's message and the onError
    edge only. Given the definitions (a trace does not record whether a tool is idempotent)
    it says it where run did, in run's words."""
    env = _gated(tmp_path)
    shown = horismos_forked(tmp_path, "trace", "show", "run.jsonl", "pay.ttl", env=env)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if ":Bill  :t.bill(order=:o1)  gate rej" in line)
    assert lines[at + 1].startswith("    :o1 :billRef: Value does not match pattern"), lines
    held = lines[at + 2]
    assert held.startswith("    held in doubt: t.bill is not idempotent and may already have "
                           "acted on :o1"), lines
    clear = """`horismos tools reconcile t.bill … --args '{"order": ":o1"}'` on the same store"""
    assert clear in held, held
    assert lines[at + 3] == "    onError -> :Flag", lines
    assert sum("held in doubt" in line for line in lines) == 1  # not t.flag's: idempotent
