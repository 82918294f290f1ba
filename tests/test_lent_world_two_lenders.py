"""Two live lenders of the same ``--world`` quads on a store processes share (``sparql:``),
through the real command line and a real ``oxigraph serve``: a call that completed read them,
and the other lender, failing or killed, took them back from under its effects. A completed
call's commit now drops every lend's copy of what it read, found as it commits, and a
take-back removes a lent quad only while its own lend's copy of it is still stored.
"""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import EX
from test_lent_world_killed import started
from test_tools_store_lanes import horismos, project, types_of

WAITS = (
    "import os, time\n\n"
    "def _wait(name):\n"
    "    while not os.path.exists(name):\n"
    "        time.sleep(0.05)\n\n"
    "def transfer(patient, ward):\n"
    "    open('a-started', 'w').write('')\n"
    "    _wait('a-go')\n"
    "    return {'ref': 'R-9'}\n\n"
    "def fail(patient):\n"
    "    open('b-started', 'w').write('')\n"
    "    _wait('b-go')\n"
    "    raise RuntimeError('the ward system said no')\n\n"
    "def discharge(patient):\n    return {}\n"
)
"""Each tool says it started, then waits for the test's word: the order the calls land in is
the test's, not a race's."""

LEASE = "1"


@pytest.fixture
def store(shared_ward: list[str]) -> list[str]:
    """``--store sparql:…`` of a real server holding the ward."""
    return shared_ward


def both_started(tmp_path: Path, store: list[str], first: str,
                 ) -> tuple[subprocess.Popen[str], subprocess.Popen[str]]:
    """A's and B's calls (:func:`calls`), ``first`` started first, each returned once its
    lend has landed."""
    argv_a, argv_b = calls(tmp_path, store)
    order = [("a", argv_a), ("b", argv_b)]
    running = {who: started(tmp_path, argv, LEASE, f"{who}-started")
               for who, argv in (order if first == "A" else order[::-1])}
    return running["a"], running["b"]


def calls(tmp_path: Path, store: list[str]) -> tuple[list[str], list[str]]:
    """A's ``tools call c.transfer`` (approved) and B's ``tools call c.fail``, both given
    ``--world more.ttl`` (which brings :p9 and :w9)."""
    defs = project(tmp_path)
    args = ("--args", '{"patient": ":p9", "ward": ":w9"}')
    (tmp_path / "ward_tools.py").write_text(WAITS, encoding="utf-8")  # the code approved
    issued = horismos("tools", "approve", "c.transfer", *defs, *store, *args, cwd=tmp_path)
    assert issued.returncode == 0, issued.stderr
    a = ["tools", "call", "c.transfer", *defs, *store, "--world", "more.ttl", *args,
         "--approval", issued.stdout.strip()]
    b = ["tools", "call", "c.fail", *defs, *store, "--world", "more.ttl",
         "--args", '{"patient": ":p9"}']
    return a, b


def completes(tmp_path: Path, a: subprocess.Popen[str]) -> None:
    """Let A's tool answer, and A's call complete."""
    (tmp_path / "a-go").write_text("", encoding="utf-8")
    out, err = a.communicate(timeout=120)
    assert a.returncode == 0, out + err


def kept(store: list[str]) -> None:
    """What A read is still stored, beside what A wrote."""
    assert types_of(store, EX.p9) == {EX.Patient}
    assert types_of(store, EX.w9) == {EX.Ward}


@pytest.mark.parametrize("first", ["A", "B"])
def test_a_failing_lender_leaves_what_a_completed_call_read(
        tmp_path: Path, store: list[str], first: str) -> None:
    """A and B lend :p9 and :w9 (one finds them through the other's lend); A completes, then
    B fails: B's take-back removed :p9 and :w9 from under A's effect. They stay."""
    a, b = both_started(tmp_path, store, first)
    completes(tmp_path, a)
    (tmp_path / "b-go").write_text("", encoding="utf-8")
    out, err = b.communicate(timeout=120)
    assert b.returncode == 1 and "the ward system said no" in out, out + err
    kept(store)
    later = horismos("load", "ward.ttl", *store, cwd=tmp_path)
    assert later.returncode == 0 and "took back" not in later.stderr, later.stderr
    kept(store)


@pytest.mark.parametrize("first", ["A", "B"])
def test_a_killed_lender_leaves_what_a_completed_call_read(
        tmp_path: Path, store: list[str], first: str) -> None:
    """As above, but B is killed mid-call: past its lease, the next command took back what
    it lent, :p9 and :w9 among it, from under A's effect. They stay."""
    a, b = both_started(tmp_path, store, first)
    b.send_signal(signal.SIGKILL)
    b.communicate()
    completes(tmp_path, a)
    time.sleep(2)  # past the killed call's lease (1 s)
    later = horismos("load", "ward.ttl", *store, cwd=tmp_path)
    assert later.returncode == 0, later.stderr
    kept(store)
