"""Every lane that can call a tool refuses a shape no result can meet, as ``run`` does.

``sh:minCount 1`` on a property no file declares, no tool's effect writes and the world does
not hold: the gate rejects every result on a node the shape targets, after the tool has acted.
``run`` and ``validate --world`` refused it; ``resume``, ``wake``, ``tools call`` and ``serve``'s
calls called the tool (a rebooking sent, then rejected), and ``approve`` recorded an approval
of a call bound to be rejected. Each now refuses before anything acts, at the shape's line,
with exit 2, leaving the world file as it was.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest
from forked import horismos_forked

ROOT = Path(__file__).resolve().parent.parent
REBOOKING = ROOT / "examples" / "rebooking"

COUNTED = f"""
import sys
sys.path.insert(0, {str(REBOOKING)!r})
import airline_client


def rebook(*args, **kwargs):
    with open("calls.log", "a") as log:
        log.write("rebook\\n")
    return airline_client.rebook(*args, **kwargs)
"""

SHAPE = ":BookingShape a sh:NodeShape ;\n    sh:targetClass :Booking ;\n"
SAID = "error: :BookingShape: sh:path names :checkedInAt, which no loaded ontology declares"


def horismos(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return horismos_forked(cwd, *args, timeout=120)


@pytest.fixture
def waiting(tmp_path: Path) -> tuple[Path, str, int]:
    """The rebooking example run to its operator's wait (``after.trig``), then its ontology
    made to require ``:checkedInAt`` of every booking; the waiting instance's short id, and
    the line of that ``sh:path``."""
    wf = (ROOT / "workflows" / "rebooking.ttl").read_text(encoding="utf-8")
    (tmp_path / "rebooking.ttl").write_text(
        wf.replace("python:airline_client.rebook", "python:counted.rebook"), encoding="utf-8")
    (tmp_path / "counted.py").write_text(COUNTED, encoding="utf-8")
    travel = (ROOT / "ontologies" / "travel.ttl").read_text(encoding="utf-8")
    assert travel.count(SHAPE) == 1
    (tmp_path / "travel.ttl").write_text(travel, encoding="utf-8")
    ran = horismos("run", "rebooking.ttl", "travel.ttl", "--world", str(REBOOKING / "world.ttl"),
                   "--tools", "counted.py", "--all", "--out", "after.trig", cwd=tmp_path)
    assert ran.returncode == 3, ran.stdout + ran.stderr
    (tmp_path / "calls.log").unlink()
    short = next(line.split()[0] for line in ran.stdout.splitlines()
                 if line.split()[1:3] == [":booking2", "waiting"])
    (tmp_path / "travel.ttl").write_text(travel.replace(
        SHAPE, SHAPE + "    sh:property [ sh:path :checkedInAt ; sh:minCount 1 ] ;\n"),
        encoding="utf-8")
    (tmp_path / "choice.ttl").write_text(
        "@prefix : <http://example.org/travel#> .\n:booking2 :operatorChoice :VS3 .\n")
    return tmp_path, short, travel[: travel.index(SHAPE)].count("\n") + 3


def refused(p: subprocess.CompletedProcess[str], cwd: Path, line: int) -> None:
    assert p.returncode == 2, p.stdout + p.stderr
    assert f"travel.ttl:{line}: {SAID}" in p.stderr, p.stderr
    assert "give the property shape sh:minCount 0" in p.stderr
    assert "Traceback" not in p.stderr
    assert not (cwd / "calls.log").exists(), "a tool was called"


def test_resume_and_wake_refuse_it_and_call_no_tool(waiting: tuple[Path, str, int]) -> None:
    cwd, short, line = waiting
    before = (cwd / "after.trig").read_bytes()
    world = ["--world", "after.trig", "--world", "choice.ttl"]  # the operator's choice: due
    p = horismos("resume", "rebooking.ttl", "travel.ttl", *world, "--tools", "counted.py",
                 "--instance", short, "--out", "after.trig", cwd=cwd)
    refused(p, cwd, line)
    p = horismos("wake", "rebooking.ttl", "travel.ttl", *world, "--tools", "counted.py",
                 "--out", "after.trig", cwd=cwd)
    refused(p, cwd, line)
    assert (cwd / "after.trig").read_bytes() == before


def test_resume_with_facts_says_the_shape_not_the_facts_is_wrong(
        waiting: tuple[Path, str, int]) -> None:
    """The operator's answer broke the shape only for want of :checkedInAt: it was refused
    as "the facts break the domain shapes", sending the operator to mend an answer that was
    right."""
    cwd, short, line = waiting
    p = horismos("resume", "rebooking.ttl", "travel.ttl", "--world", "after.trig", "--tools",
                 "counted.py", "--instance", short, "--facts", ":booking2 :operatorChoice :VS3 .",
                 cwd=cwd)
    refused(p, cwd, line)
    assert "the facts break" not in p.stderr


def test_facts_that_state_it_let_the_resume_go_on(waiting: tuple[Path, str, int]) -> None:
    """The facts answering the wait land first: a property they state is held."""
    cwd, short, _ = waiting
    p = horismos("resume", "rebooking.ttl", "travel.ttl", "--world", "after.trig", "--tools",
                 "counted.py", "--instance", short, "--facts",
                 ':booking2 :operatorChoice :VS3 ; :checkedInAt "2026-12-05T08:00:00Z" .',
                 cwd=cwd)
    assert p.returncode == 0, p.stdout + p.stderr
    assert (cwd / "calls.log").read_text() == "rebook\n"


def test_tools_call_and_approve_refuse_it(waiting: tuple[Path, str, int]) -> None:
    cwd, short, line = waiting
    p = horismos("tools", "call", "airline.rebook", "rebooking.ttl", "travel.ttl", "--world",
                 "after.trig", "--tools", "counted.py", "--args",
                 '{"booking": ":booking2", "flight": ":VS3"}', "--trace", "call.jsonl", cwd=cwd)
    refused(p, cwd, line)
    assert not (cwd / "call.jsonl").exists()
    p = horismos("approve", "rebooking.ttl", "travel.ttl", "--world", "after.trig",
                 "--instance", short, "--fingerprint", "0" * 64, cwd=cwd)
    refused(p, cwd, line)


def test_served_calls_and_run_workflow_refuse_it(
        waiting: tuple[Path, str, int], monkeypatch: pytest.MonkeyPatch) -> None:
    """``serve`` refuses such definitions as it starts; a world that lost the property since
    (one others write) has each call refused, as an MCP error result, the world untouched."""
    from horismos import Agent, World
    from horismos._serve import ServedTools

    cwd, _, line = waiting
    monkeypatch.chdir(cwd)  # where the counted tool writes its calls
    monkeypatch.syspath_prepend(str(cwd))
    import counted
    agent = Agent.from_files(cwd / "rebooking.ttl", cwd / "travel.ttl",
                             tools={"counted.rebook": counted.rebook})
    world = World.from_files(REBOOKING / "world.ttl")
    digest = world.digest()
    served = ServedTools(agent, world, allow="ReadOnly,HostStateWrite,ExternalCommit",
                         run_workflow=True)

    async def calls() -> list[object]:
        return [
            await served.call("airline.rebook", {"booking": ":booking1", "flight": ":VS3"}),
            await served.call("run_workflow", {"workflow": ":Rebooking", "focus": ":booking1"}),
        ]

    for result in asyncio.run(calls()):
        assert result.is_error  # type: ignore[attr-defined]
        text = result.content[0].text  # type: ignore[attr-defined]
        assert f"travel.ttl:{line}: {SAID}" in text, text
    assert world.digest() == digest
    assert not (cwd / "calls.log").exists(), "a tool was called"
