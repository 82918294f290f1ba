"""What a process killed mid-call lent a persistent store, met by a command other than the
few that took it back: ``horismos approve``, ``hydrate``, ``serve``, ``worker`` and ``submit``
wrote the store without taking the lend back first, so the next take-back removed quads they
wrote that the lend also held. Every command that opens a store for writing now takes back
first (one opener, :func:`horismos._cli_common.open_for_writing`).
"""

from __future__ import annotations

import json
import re
import signal
import time
from pathlib import Path

from conftest import EX, PREFIXES
from test_lent_world_killed import (  # noqa: F401 (store: a fixture)
    ARGS,
    killed_mid_call,
    started,
    store,
)
from test_tools_store_lanes import TOOLS, digest, horismos, project, types_of

DISCHARGE = """
:Leave a horis:Workflow ; horis:focusType :Patient ; horis:start :Discharge .
:Discharge a horis:ActionStep ; horis:tool :c.discharge ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""
"""A workflow whose one step calls ``c.discharge``, which requires an approval: an instance
of it waits for one, for ``horismos approve`` to give."""


def waiting_for_approval(tmp_path: Path, kept: list[str]) -> tuple[list[str], str, str]:
    """The definitions, and an instance on the store ``kept`` (``--store S``) waiting at
    ``c.discharge`` for an approval: its IRI and the fingerprint it waits for; g.ttl written
    beside, holding :w9."""
    defs = project(tmp_path, TOOLS + DISCHARGE)
    asked = horismos("run", *defs, *kept, "--focus", ":p1", cwd=tmp_path)
    assert asked.returncode == 3, asked.stdout + asked.stderr
    iid = re.search(r"urn:horismos:instance:\w+", asked.stdout)
    fp = re.search(r"Fingerprint: (\w+)", asked.stdout)
    assert iid is not None and fp is not None, asked.stdout
    (tmp_path / "g.ttl").write_text(PREFIXES + ":w9 a :Ward ; :capacity 4 .\n",
                                    encoding="utf-8")
    return defs, iid[0], fp[1]


def test_approve_after_a_killed_call_keeps_what_it_wrote(
        tmp_path: Path, store: list[str]) -> None:  # noqa: F811
    """``horismos approve --world g.ttl`` after a call killed mid-call with F lent: g.ttl's
    :w9 (F held it too) landed beside the lend, and the next ``load`` took back F with :w9's
    quads. The approve takes the lend back first, and g.ttl's :w9 stays."""
    # an instance waiting for an approval: the approve is one that succeeds
    defs, iid, fp = waiting_for_approval(tmp_path, store)
    killed_mid_call(tmp_path, store, defs)
    approve = horismos("approve", *defs[:2], *store, "--world", "g.ttl", "--instance", iid,
                       "--fingerprint", fp, cwd=tmp_path)
    assert approve.returncode == 0, approve.stdout + approve.stderr
    assert "Traceback" not in approve.stderr, approve.stderr
    assert "took back 3 quads" in approve.stderr, approve.stdout + approve.stderr
    # on sparql: a lender alive but paused past its lease lost its lend too: both are said
    cause = ("stopped, or lost its lease, before it could" if store[1].startswith("sparql:")
             else "stopped before it could")
    assert cause in approve.stderr, approve.stderr
    later = horismos("load", "ward.ttl", *store, cwd=tmp_path)
    assert later.returncode == 0, later.stderr
    assert "took back" not in later.stderr, later.stderr
    assert types_of(store, EX.w9) == {EX.Ward}  # g.ttl's, written by the approve
    assert types_of(store, EX.p9) == set()  # F's only, taken back


HANGS = (
    "import os, time\n\n"
    "def transfer(patient, ward):\n    return {'ref': 'R-9'}\n\n"
    "def fail(patient):\n"
    "    open('started', 'w').write(str(os.getpid()))\n"
    "    time.sleep(120)\n\n"
    "def discharge(patient):\n    return {}\n"
)
"""``c.fail`` hangs once started: the moment to kill its call, F lent; ``c.transfer``
completes at once."""


def test_a_retry_within_a_killed_lenders_lease_keeps_what_its_call_read(
        tmp_path: Path, shared_ward: list[str]) -> None:
    """On ``sparql:``, a call killed mid-call keeps its lend's lease live a while. A call made
    meanwhile with the same F found F's quads stored (through the killed lend), lent nothing,
    and completed reading them; once the killed lease ran out, the next command took them
    back from under the completed call (:w9 gone, though a transfer to it was recorded).
    The quads the retry read are now its lend too, and stay with what its call committed."""
    defs = project(tmp_path)
    (tmp_path / "ward_tools.py").write_text(HANGS, encoding="utf-8")
    lease = 8.0  # the killed call's: the retry lands while it runs, on a loaded machine too
    call = started(tmp_path, ["tools", "call", "c.fail", *defs, *shared_ward, "--world",
                              "more.ttl", "--args", '{"patient": ":p1"}'], str(lease))
    call.send_signal(signal.SIGKILL)
    call.communicate()
    killed = time.monotonic()
    issued = horismos("tools", "approve", "c.transfer", *defs, *shared_ward, *ARGS, cwd=tmp_path)
    assert issued.returncode == 0, issued.stderr
    retry = horismos("tools", "call", "c.transfer", *defs, *shared_ward, "--world", "more.ttl",
                     *ARGS, "--approval", issued.stdout.strip(), cwd=tmp_path)
    assert retry.returncode == 0, retry.stdout + retry.stderr
    assert "took back" not in retry.stderr  # the killed lender's lease was live
    time.sleep(max(0.0, killed + lease + 1 - time.monotonic()))  # past the killed lease
    later = horismos("load", "ward.ttl", *shared_ward, cwd=tmp_path)
    assert later.returncode == 0, later.stderr
    assert types_of(shared_ward, EX.w9) == {EX.Ward}  # read by the completed transfer: kept
    assert types_of(shared_ward, EX.p9) == {EX.Patient}


PAUSES = (
    "import os, time\n\n"
    "def transfer(patient, ward):\n"
    "    open('calls.log', 'a').write(patient + '\\n')\n"
    "    open('started', 'w').write(str(os.getpid()))\n"
    "    time.sleep(3)\n"
    "    return {'ref': 'R-9'}\n\n"
    "def fail(patient):\n    raise RuntimeError('no')\n\n"
    "def discharge(patient):\n    return {}\n"
)
"""``c.transfer`` (not idempotent) takes a few seconds once started: the moment to pause it."""


def test_a_lender_paused_past_its_lease_lands_nothing(
        tmp_path: Path, shared_ward: list[str]) -> None:
    """On ``sparql:``, a call paused (``SIGSTOP``) past its lease has its lend taken back by
    the next writing command; resumed, its completed commit is refused by the call's own
    lease (the fence), so no effect lands that read the facts taken back, and the call is in
    doubt: the next call on its subject is refused, never made a second time."""
    defs = project(tmp_path)
    (tmp_path / "ward_tools.py").write_text(PAUSES, encoding="utf-8")  # the code approved
    issued = horismos("tools", "approve", "c.transfer", *defs, *shared_ward, *ARGS, cwd=tmp_path)
    assert issued.returncode == 0, issued.stderr
    call = started(tmp_path, ["tools", "call", "c.transfer", *defs, *shared_ward, "--world",
                              "more.ttl", *ARGS, "--approval", issued.stdout.strip(),
                              "--format", "json"], "0.5")
    try:
        call.send_signal(signal.SIGSTOP)
        time.sleep(1.5)  # past its lease (0.5 s)
        load = horismos("load", "ward.ttl", *shared_ward, cwd=tmp_path)
        assert "took back 3 quads" in load.stderr, load.stderr
        assert "or lost its lease" in load.stderr, load.stderr
    finally:
        call.send_signal(signal.SIGCONT)
        out, err = call.communicate(timeout=120)
    # in doubt, as any call that may have acted is: its envelope, exit 5 (it printed no
    # JSON and exited 2); in words, what happened and what to do (reconcile)
    assert call.returncode == 5, out + err
    error = json.loads(out)["error"]
    assert error["kind"] == "outcome_unknown", out
    said = error["message"]
    assert "the call of c.transfer lost its lease on the store before its commit" in said
    assert "--world data it lent may have been taken back meanwhile" in said
    assert "horismos tools reconcile c.transfer" in said, said
    assert "Traceback" not in err, err
    assert types_of(shared_ward, EX.w9) == set() and types_of(shared_ward, EX.p9) == set()
    again = horismos("tools", "call", "c.transfer", *defs, *shared_ward, "--world", "more.ttl",
                     *ARGS, "--approval", "whatever", cwd=tmp_path)
    assert again.returncode == 5 and "outcome_unknown" in again.stdout, again.stdout
    assert len((tmp_path / "calls.log").read_text().split()) == 1  # called once


def test_a_call_that_lent_nothing_and_lost_its_lease_says_so_without_world_data(
        tmp_path: Path, shared_ward: list[str]) -> None:
    """A call given no ``--world``, paused past its lease on ``sparql:``: its JSON envelope
    says it is in doubt (``outcome_unknown``, exit 5, as any call that may have acted), and
    says nothing of ``--world`` data it never lent."""
    defs = project(tmp_path)
    args = ("--args", '{"patient": ":p1", "ward": ":w1"}')
    (tmp_path / "ward_tools.py").write_text(PAUSES, encoding="utf-8")  # the code approved
    issued = horismos("tools", "approve", "c.transfer", *defs, *shared_ward, *args, cwd=tmp_path)
    assert issued.returncode == 0, issued.stderr
    call = started(tmp_path, ["tools", "call", "c.transfer", *defs, *shared_ward, *args,
                              "--approval", issued.stdout.strip(), "--format", "json"],
                   "0.5")
    try:
        call.send_signal(signal.SIGSTOP)
        time.sleep(1.5)  # past its lease (0.5 s)
        # another call on :p1 takes over the claim the paused call's lease held
        other = horismos("tools", "call", "c.transfer", *defs, *shared_ward, *args,
                         "--approval", "whatever", cwd=tmp_path)
        assert other.returncode == 5 and "outcome_unknown" in other.stdout, other.stdout
    finally:
        call.send_signal(signal.SIGCONT)
        out, err = call.communicate(timeout=120)
    assert call.returncode == 5, out + err
    error = json.loads(out)["error"]
    assert error["kind"] == "outcome_unknown", out
    assert "lost its lease on the store before its commit" in error["message"], out
    assert "--world" not in error["message"], out


def test_an_approve_refused_leaves_the_store_as_it_was_and_one_given_keeps_its_world(
        tmp_path: Path, store: list[str]) -> None:  # noqa: F811
    """``horismos approve --world g.ttl`` loaded g.ttl into the store before judging the
    approval: one refused (a fingerprint the instance does not wait for) left g.ttl's facts
    in the store. They are lent now: taken back when the approval is refused, kept with it
    when it is given, and no record of the lend is left for a later command to take back."""
    defs, iid, fp = waiting_for_approval(tmp_path, store)
    before = digest(store, tmp_path)
    wrong = horismos("approve", *defs[:2], *store, "--world", "g.ttl", "--instance", iid,
                     "--fingerprint", "0" * 64, cwd=tmp_path)
    assert wrong.returncode == 2, wrong.stdout + wrong.stderr
    assert "Traceback" not in wrong.stderr
    assert digest(store, tmp_path) == before
    assert types_of(store, EX.w9) == set()
    given = horismos("approve", *defs[:2], *store, "--world", "g.ttl", "--instance", iid,
                     "--fingerprint", fp, cwd=tmp_path)
    assert given.returncode == 0, given.stdout + given.stderr
    assert types_of(store, EX.w9) == {EX.Ward}  # kept with the approval
    later = horismos("load", "ward.ttl", *store, cwd=tmp_path)
    assert later.returncode == 0 and "took back" not in later.stderr, later.stderr
    assert types_of(store, EX.w9) == {EX.Ward}
