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

from forked import horismos_forked
from test_cli_no_again import SHOP
from test_event_service import DEFINITIONS, PREFIXES
from test_run_policy import EXTERNAL, TOOLS, WORLD, definitions


def _pay(tmp_path: Path) -> dict[str, str]:
    """The shop of ``test_cli_no_again``: a billing tool that is not idempotent, appending
    to a ledger what it bills, on ``:o1`` of a world kept in ``oxigraph:store``."""
    (tmp_path / "pay.ttl").write_text(DEFINITIONS)
    (tmp_path / "world.ttl").write_text(PREFIXES + ":o1 a :Order .\n")
    (tmp_path / "shop.py").write_text(SHOP)
    env = dict(os.environ, LEDGER=str(tmp_path / "ledger"), HORISMOS_LOCK_WAIT="60")
    loaded = horismos_forked(tmp_path, "load", "world.ttl", "--store", "oxigraph:store", env=env)
    assert loaded.returncode == 0, loaded.stderr
    return env


RUN = ("run", "pay.ttl", "--tools", "shop", "--store", "oxigraph:store", "--focus", ":o1")


def test_a_call_held_in_doubt_says_its_kind_in_the_trace_and_in_the_instances(
    tmp_path: Path,
) -> None:
    """A billing process killed mid-call, its retry (``--no-again``) holding the call in
    doubt: the retry's trace said ``failed:`` and the words, ``instances`` the words cut
    short, and neither the kind the failing commit stores (``outcome_unknown``), which is what
    tells a call that may have acted from a tool that raised. Both now say it first; the
    JSON listing gives it as ``error_kind``, and an operator's clearing leaves it said."""
    env = _pay(tmp_path)
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

    (tmp_path / "pay.ttl").write_text(DEFINITIONS)
    (tmp_path / "world.ttl").write_text(PREFIXES + ":o1 a :Order .\n")
    (tmp_path / "shop.py").write_text(SHOP)
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
