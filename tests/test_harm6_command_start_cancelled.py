"""A ``cmd:`` call whose ``horis:timeout`` runs out while its program is being started.

asyncio forks and execs at once, then awaits the setup of the pipes. A timeout that landed
there had asyncio kill the one process it forked, the shepherd, and the program the shepherd
had started lived on, orphaned: it acted, while the call read "was not sent ... so it did not
act". Nothing held it in doubt, so ``horis:retries`` started it again (three charges for one
call) and the next call on the patient charged again. Now the call counts as sent, the
program is stopped with everything it started, and the next call is refused until a
reconcile. Real subprocesses: a shell script that charges (a ledger line) half a second after
it starts.
"""

from __future__ import annotations

import time
from pathlib import Path

from horismos import Agent, World

CHARGE = """\
#!/bin/sh
sleep 0.5
echo charged >> "$1"
echo '{"received": "charged"}'
"""


def defs(root: Path, ledger: Path) -> str:
    return f"""\
@prefix :      <http://example.org/clinic#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .
:Patient a rdfs:Class .
:charge a horis:CommandBinding ; horis:argv ( "/bin/sh" "charge.sh" "{ledger}" ) ;
    horis:root "{root}" .
:t.charge a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:subject "patient" ;
        horis:asserts [ horis:property :received ; horis:type xsd:string ] ] ;
    horis:binding "cmd:charge" ; horis:retries 2 ; horis:timeout "1ms" .
"""


def test_a_timeout_while_the_program_starts_holds_the_call_in_doubt(tmp_path: Path) -> None:
    """1 ms runs out while the program is being started: it was started, so it may act. It
    is stopped with the call (no charge lands later), the call is held in doubt and not
    retried, and the next call on the patient is refused until a reconcile."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "charge.sh").write_text(CHARGE)
    ledger = tmp_path / "ledger.txt"
    (tmp_path / "defs.ttl").write_text(defs(root, ledger))
    (tmp_path / "world.ttl").write_text(
        "@prefix : <http://example.org/clinic#> .\n:p1 a :Patient .\n")
    world = World.from_files(tmp_path / "world.ttl")
    agent = Agent.from_files(tmp_path / "defs.ttl")

    first = agent.catalog.call("t.charge", {"patient": ":p1"}, world)
    assert first.error is not None, first
    assert first.error["kind"] == "outcome_unknown", first.error
    assert "was not sent" not in first.error["message"], first.error
    again = agent.catalog.call("t.charge", {"patient": ":p1"}, world)
    assert again.status == "refused" and again.error is not None, again
    assert again.error["kind"] == "outcome_unknown", again.error
    time.sleep(1.5)  # past the script's half second: a program left running has charged
    charges = ledger.read_text().splitlines() if ledger.exists() else []
    assert charges == [], charges  # stopped with its call, never started again
