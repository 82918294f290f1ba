"""``cmd:NAME`` bindings with real subprocesses: argv never a shell, a root that holds, only
declared environment, and output safety (preview, retention, quota, waterline, timeout)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from forked import Popen, horismos_forked
from rdflib import Namespace, URIRef

from horismos import Agent, AuthoringError, LowDisk, World, replay
from horismos._definitions import load_definitions
from horismos._outcomes import play
from horismos._trace import read_trace

EX = Namespace("http://example.org/clinic#")

PROGRAMS = {
    # the result is what the program saw: its argv, cwd and environment
    "echo_args.py": """
        import json, os, sys
        print(json.dumps({"received": json.dumps({"argv": sys.argv[1:], "cwd": os.getcwd(),
                                                  "env": dict(os.environ)})}))
    """,
    # 200 MB on stderr, streamed in 1 MiB blocks, then a small JSON result on stdout
    "flood.py": """
        import sys
        block = b"x" * (1 << 20)
        sys.stderr.buffer.write(b"HEAD-MARK")
        for _ in range(int(sys.argv[1])):
            sys.stderr.buffer.write(block)
        sys.stderr.buffer.write(b"TAIL-MARK")
        sys.stderr.flush()
        print('{"received": "flooded"}')
    """,
    "stubborn.py": """
        import signal, sys, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        open(sys.argv[1], "w").write("started")
        time.sleep(60)
    """,
    # the parent answers and exits; its child keeps stdout open and would live on
    "orphan.py": """
        import subprocess, sys
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        open(sys.argv[1], "w").write(str(child.pid))
        print('{"received": "parent done"}', flush=True)
    """,
    "fail.py": """
        import sys
        sys.stderr.write("the ledger is locked\\n")
        sys.exit(3)
    """,
    "prose.py": """
        print("done, probably")
    """,
    # it acts (a line in its ledger), then dies by a signal nobody here sent, as the OOM
    # killer or an operator's kill -9 would leave it
    "act_then_die.py": """
        import os, signal, sys
        with open(sys.argv[1], "a") as f:
            f.write("acted\\n")
        os.kill(os.getpid(), signal.SIGKILL)
    """,
    # it says it started, takes a while, then acts (a line in its ledger) and answers
    "slow_charge.py": """
        import json, os, sys, time
        open(sys.argv[2], "w").write(str(os.getpid()))
        time.sleep(3)
        with open(sys.argv[1], "a") as f:
            f.write("acted\\n")
        print(json.dumps({"received": "charged"}))
    """,
    # it acts (a line in its ledger), then answers in prose: a success nobody can read
    "act_then_prose.py": """
        import sys
        with open(sys.argv[1], "a") as f:
            f.write("acted\\n")
        print("Charged OK, ref CH-1")
    """,
    # it acts, then its capture folder goes (a tmp cleaner), then it answers well
    "act_then_clean.py": """
        import shutil, sys
        with open(sys.argv[1], "a") as f:
            f.write("acted\\n")
        shutil.rmtree(sys.argv[2])
        print('{"received": "charged"}')
    """,
}


def command(name: str, argv: str, root: Path, *, extra: str = "") -> str:
    return (f':{name} a horis:CommandBinding ; horis:argv ( {argv} ) ; '
            f'horis:root "{root}" {extra} .\n')


def tool(name: str, binding: str, args: str = "", timeout: str = "10s") -> str:
    return f"""
:{name} a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] {args} ] ;
    horis:effect [ horis:subject "patient" ;
        horis:asserts [ horis:property :received ; horis:type xsd:string ] ] ;
    horis:binding "{binding}" ;
    horis:timeout "{timeout}" .
"""


HEAD = """\
@prefix :      <http://example.org/clinic#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .
:Patient a rdfs:Class .
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    (folder / "cases" / "c1").mkdir(parents=True)
    for name, text in PROGRAMS.items():
        (folder / name).write_text(textwrap.dedent(text))
    return folder


def agent_for(tmp_path: Path, body: str) -> tuple[Agent, World]:
    (tmp_path / "defs.ttl").write_text(HEAD + body)
    world = World.from_files()
    (tmp_path / "world.ttl").write_text(
        "@prefix : <http://example.org/clinic#> .\n:p1 a :Patient .\n")
    world.load(tmp_path / "world.ttl")
    return Agent.from_files(tmp_path / "defs.ttl"), world


HORISMOS = [sys.executable, "-m", "horismos"]


def _run_in_background(tmp_path: Path, defs: str) -> subprocess.Popen[bytes]:
    """``horismos run --focus :p1`` of ``defs`` on an on-disk store holding the world, started
    and left running: a test kills it mid-call."""
    agent_for(tmp_path, defs)
    loaded = horismos_forked(tmp_path, "load", "world.ttl", "--store", "oxigraph:store",
                             timeout=120)
    assert loaded.returncode == 0, loaded.stderr
    return Popen([*HORISMOS, "run", "defs.ttl", "--store", "oxigraph:store",
                             "--focus", ":p1"], cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def call(agent: Agent, world: World, name: str, **args: Any) -> Any:
    return agent.catalog.call(name, {"patient": ":p1", **args}, world)


def received(result: Any) -> Any:
    return json.loads(next(b["json"] for b in result.content if b["type"] == "json")["received"])


def capture_of(result: Any) -> dict[str, Any]:
    return next(a for a in result.artifacts if a["type"] == "output_capture")


# -- argv, working directory, environment ---------------------------------------------------------

def test_arguments_fill_the_argv_and_nothing_else_reaches_the_program(tmp_path, root,
                                                                     monkeypatch) -> None:
    monkeypatch.setenv("SERVER_SECRET", "must not leak")
    monkeypatch.setenv("CLINIC_TOKEN", "t-123")
    defs = command("echo", '"python" "echo_args.py" "--note={note}" "--" "{note}" "{patient}"',
                   root, extra='; horis:workdir "." ; horis:env [ horis:name "LANG" ; '
                   'horis:value "C.UTF-8" ] , [ horis:name "TOKEN" ; '
                   'horis:fromEnv "CLINIC_TOKEN" ]')
    defs += tool("t.echo", "cmd:echo",
                 args='; horis:arg [ horis:name "note" ; horis:type xsd:string ]')
    agent, world = agent_for(tmp_path, defs)
    result = call(agent, world, "t.echo", note="x; touch pwned && -rf")
    assert result.status == "completed", result.receipt()
    seen = received(result)
    # one argv member each, never a shell: no second command ran
    assert seen["argv"] == ["--note=x; touch pwned && -rf", "--", "x; touch pwned && -rf",
                            str(EX.p1)]
    assert not (root / "pwned").exists()
    assert Path(seen["cwd"]) == root.resolve()
    assert {k: v for k, v in seen["env"].items() if k not in ("LC_CTYPE",)} == {
        "LANG": "C.UTF-8", "TOKEN": "t-123"}
    capture = capture_of(result)
    assert capture["exit_status"] == 0 and capture["truncated"] is False
    assert capture["stdout"]["emitted_bytes"] > 0 and capture["dropped_bytes"] == 0


def test_a_value_starting_with_a_dash_is_never_an_option(tmp_path, root) -> None:
    defs = command("echo", '"python" "echo_args.py" "{note}"', root) + tool(
        "t.echo", "cmd:echo", args='; horis:arg [ horis:name "note" ; horis:type xsd:string ]')
    agent, world = agent_for(tmp_path, defs)
    before = world.canonical()
    result = call(agent, world, "t.echo", note="--output=/etc/passwd")
    assert result.status == "failed"
    assert result.error["kind"] == "not_sent"
    assert "starts with '-'" in result.error["message"] and '"--"' in result.error["message"]
    assert world.canonical() == before


def test_a_working_directory_cannot_leave_the_root(tmp_path, root) -> None:
    (root / "cases" / "out").symlink_to(tmp_path)  # a symlink that leads outside
    defs = command("echo", '"python" "../../echo_args.py"', root,
                   extra='; horis:workdir "cases/{case}"') + tool(
        "t.echo", "cmd:echo", args='; horis:arg [ horis:name "case" ; horis:type xsd:string ]')
    agent, world = agent_for(tmp_path, defs)
    assert call(agent, world, "t.echo", case="c1").status == "completed"
    for case, why in (("../..", "without '..'"), ("out", "a symlink leads out"),
                      ("/etc", "is not a folder under")):
        result = call(agent, world, "t.echo", case=case)
        assert result.status == "failed" and result.error["kind"] == "not_sent", case
        assert why in result.error["message"], result.error["message"]


def test_authoring_errors_name_the_command(tmp_path, root) -> None:
    bad = command("echo", '"python" "echo_args.py" "{nurse}"', root,
                  extra='; horis:workdir "../elsewhere"') + tool("t.echo", "cmd:echo")
    bad += tool("t.other", "cmd:missing")
    (tmp_path / "bad.ttl").write_text(HEAD + bad)
    with pytest.raises(AuthoringError) as e:
        load_definitions([tmp_path / "bad.ttl"])
    text = "\n".join(str(p) for p in e.value.problems)
    assert "without '..'" in text
    assert "{nurse}" in text and "not a sent argument" in text
    assert "names no horis:CommandBinding 'missing'" in text


# -- exit status and stdout -----------------------------------------------------------------------

def test_a_non_zero_exit_is_a_tool_error_with_the_stderr_preview(tmp_path, root) -> None:
    defs = (command("fail", '"python" "fail.py"', root) + tool("t.fail", "cmd:fail")
            + command("prose", '"python" "prose.py"', root) + tool("t.prose", "cmd:prose"))
    agent, world = agent_for(tmp_path, defs)
    failed = call(agent, world, "t.fail")
    assert failed.status == "failed" and failed.error["kind"] == "tool_error"
    assert "exited with status 3" in failed.error["message"]
    assert "the ledger is locked" in failed.error["message"]
    prose = call(agent, world, "t.prose")
    assert prose.status == "failed" and "one JSON object" in prose.error["message"]
    # the declared text mapping: a text-only answer lands whole as the fromText value
    (tmp_path / "text.ttl").write_text(HEAD + command("prose", '"python" "prose.py"', root) + """
:t.note a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:subject "patient" ; horis:asserts [ horis:property :note ;
        horis:type xsd:string ; horis:fromText true ] ] ;
    horis:binding "cmd:prose" .
""")
    texts = Agent.from_files(tmp_path / "text.ttl")
    # t.prose's call on :p1 answered in prose after it may have acted: in doubt, and t.note,
    # bound to the same program, is held by it until it is reconciled under t.prose's IRI
    held = texts.catalog.call("t.note", {"patient": ":p1"}, world)
    assert held.status == "refused" and "<http://example.org/clinic#t.prose>" in held.receipt()
    assert texts.catalog.reconcile(EX + "t.prose", {"patient": ":p1"}, world) is not None
    noted = texts.catalog.call("t.note", {"patient": ":p1"}, world)
    assert noted.status == "completed", noted.receipt()
    assert [str(o) for _, _, o in noted.effects] == ["done, probably"]


def test_a_program_killed_by_a_signal_after_it_acted_is_held_in_doubt(tmp_path, root) -> None:
    """It never answered, so it may have acted: a tool that is not idempotent is not called
    again (a plain tool error before, and the next call acted a second time)."""
    ledger = tmp_path / "acts.txt"
    defs = command("charge", f'"python" "act_then_die.py" "{ledger}"', root) + tool(
        "t.charge", "cmd:charge")
    agent, world = agent_for(tmp_path, defs)
    first = call(agent, world, "t.charge")
    again = call(agent, world, "t.charge")
    assert first.status == "failed" and first.error["kind"] == "outcome_unknown", first.error
    assert again.status == "refused" and again.error["kind"] == "outcome_unknown"
    assert ledger.read_text() == "acted\n"


def test_a_success_answered_in_prose_after_acting_is_held_in_doubt(tmp_path, root) -> None:
    """Exit status 0 says it did what it does; its stdout is no result, so nothing landed:
    the next call acted a second time (a plain tool error, as for a failure it reported)."""
    ledger = tmp_path / "acts.txt"
    defs = command("charge", f'"python" "act_then_prose.py" "{ledger}"', root) + tool(
        "t.charge", "cmd:charge")
    agent, world = agent_for(tmp_path, defs)
    first = call(agent, world, "t.charge")
    assert first.status == "failed" and first.error["kind"] == "unreadable_answer", first.error
    assert "tools reconcile t.charge" in first.error["message"]
    again = call(agent, world, "t.charge")
    assert again.status == "refused" and again.error["kind"] == "outcome_unknown"
    assert ledger.read_text() == "acted\n"


def test_a_capture_that_cannot_be_written_does_not_hold_back_the_answer(tmp_path, root) -> None:
    """The program acted and answered; its capture folder was gone when the output was to be
    kept. The answer lands and the capture says what was not written (before, the call
    failed as a plain tool error and the next one acted again)."""
    ledger, captures = tmp_path / "acts.txt", tmp_path / "captures"
    defs = command("charge", f'"python" "act_then_clean.py" "{ledger}" "{captures}"', root,
                   extra=f'; horis:captureDir "{captures}"') + tool("t.charge", "cmd:charge")
    agent, world = agent_for(tmp_path, defs)
    first = call(agent, world, "t.charge")
    assert first.status == "completed", first.receipt()
    assert [str(o) for _, _, o in first.effects] == ["charged"]
    capture = capture_of(first)
    assert capture["stdout"]["file"] is None
    assert capture["unwritten"] and capture["unwritten"][0].startswith("stdout: ")
    assert ledger.read_text() == "acted\n"


# -- output safety --------------------------------------------------------------------------------

def test_a_200_mb_writer_is_drained_keeping_head_and_tail(tmp_path, root) -> None:
    defs = command("flood", '"python" "flood.py" "200"', root,
                   extra=f'; horis:retainBytes 65536 ; horis:previewBytes 16 ; '
                         f'horis:quotaBytes 300000000 ; horis:captureDir "{tmp_path}/cap"'
                   ) + tool("t.flood", "cmd:flood", timeout="60s")
    agent, world = agent_for(tmp_path, defs)
    result = call(agent, world, "t.flood")
    assert result.status == "completed", result.receipt()
    capture = capture_of(result)
    err = capture["stderr"]
    assert err["emitted_bytes"] == 200 * (1 << 20) + 18
    assert err["retained_bytes"] == 32768 and err["truncated"] is True
    assert err["dropped_bytes"] == err["emitted_bytes"] - 32768
    assert err["preview"] == "HEAD-MARKxxxxxxx" and err["preview_truncated"] is True
    kept = Path(err["file"]).read_bytes()
    assert kept.startswith(b"HEAD-MARK") and kept.endswith(b"TAIL-MARK")
    assert len(kept) == 32768
    # the evidence is in the trace too
    step = next(e for e in result.trace.events if e["type"] == "step")
    assert f'"dropped_bytes": {capture["dropped_bytes"]}' in json.dumps(step)


def test_the_emitted_byte_quota_kills_the_writer_quickly(tmp_path, root) -> None:
    defs = command("flood", '"python" "flood.py" "200"', root,
                   extra='; horis:retainBytes 65536 ; horis:quotaBytes 2000000'
                   ) + tool("t.flood", "cmd:flood", timeout="60s")
    agent, world = agent_for(tmp_path, defs)
    before = world.canonical(include_instances=False)
    started = time.monotonic()
    result = call(agent, world, "t.flood")
    took = time.monotonic() - started
    assert result.status == "failed" and result.error["kind"] == "output_quota"
    assert "process group was killed" in result.error["message"]
    assert world.canonical(include_instances=False) == before
    # it ran until it was killed, so it may have acted: not idempotent, it is held in doubt
    assert "tools reconcile t.flood" in result.error["message"]
    assert took < 30  # far from writing all 200 MB through Python at a crawl


def test_a_capture_folder_under_its_waterline_starts_nothing(tmp_path, root) -> None:
    marker = tmp_path / "started"
    defs = command("stubborn", f'"python" "stubborn.py" "{marker}"', root,
                   extra='; horis:minFreeBytes 999999999999999999') + tool(
        "t.stubborn", "cmd:stubborn")
    agent, world = agent_for(tmp_path, defs)
    result = call(agent, world, "t.stubborn")
    assert result.status == "failed" and result.error["kind"] == "low_disk"
    assert not marker.exists()


def test_a_run_stopped_by_the_waterline_replays_as_it_ran(tmp_path, root) -> None:
    """Replay raised a recorded LowDisk as a plain NotSent, which is retried where LowDisk is
    not (the disk does not empty a moment later): a tool with horis:retries failed once live
    and was tried again on replay, which then found no recorded call for the retry. It is
    raised again as LowDisk, with the free space and waterline the run saw."""
    marker = tmp_path / "started"
    defs = command("stubborn", f'"python" "stubborn.py" "{marker}"', root,
                   extra='; horis:minFreeBytes 999999999999999999') + tool(
        "t.stubborn", "cmd:stubborn").replace(
        'horis:timeout "10s"', 'horis:timeout "10s" ; horis:retries 2 ; horis:idempotent true'
    ) + """
:Check a horis:Workflow ; horis:focusType :Patient ; horis:start :Run .
:Run a horis:ActionStep ; horis:tool :t.stubborn ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""
    agent, world = agent_for(tmp_path, defs)
    run = agent.run(world, workflow=EX.Check, focus=EX.p1)
    assert run.status == "failed" and isinstance(run.steps[-1].error, LowDisk), run.steps
    live = run.steps[-1].error
    run.trace.save(tmp_path / "run.trace.jsonl")
    report = replay(tmp_path / "run.trace.jsonl", agent)
    assert not report.diverged and report.complete, str(report)
    (step,) = [e for e in read_trace(tmp_path / "run.trace.jsonl") if e["type"] == "step"]
    assert len(step["outcomes"]) == 1  # not retried
    with pytest.raises(LowDisk) as played:
        play(step["outcomes"][0])
    assert (played.value.free, played.value.waterline) == (live.free, live.waterline)
    assert live.waterline == 999999999999999999 and not marker.exists()


def test_a_mistyped_capture_folder_is_refused_before_anything_starts(tmp_path, root) -> None:
    """A ``horis:captureDir`` under a folder that does not exist (a typo) was made in full,
    silently, and the waterline measured whatever disk held it; one that could not be made
    (a file in the way) failed as "the tool raised NotADirectoryError". Both refuse the call
    before the program starts, naming the folder and what to do."""
    marker = tmp_path / "started"
    (tmp_path / "a-file").write_text("in the way")
    for folder, why in [(tmp_path / "var-lib-horismso" / "captures", "which does not exist"),
                        (tmp_path / "a-file" / "captures", "cannot be used (Not a directory)")]:
        defs = command("stubborn", f'"python" "stubborn.py" "{marker}"', root,
                       extra=f'; horis:captureDir "{folder}"') + tool("t.stubborn",
                                                                      "cmd:stubborn")
        agent, world = agent_for(tmp_path, defs)
        result = call(agent, world, "t.stubborn")
        assert result.status == "refused" and result.error["kind"] == "binding", result.error
        assert f"capture folder '{folder}'" in result.error["message"]
        assert why in result.error["message"] and "horis:captureDir" in result.error["message"]
        assert not marker.exists() and not folder.exists()
    # a declared folder whose parent exists is made, as the default one is
    made = tmp_path / "captures"
    defs = command("echo", '"python" "echo_args.py"', root,
                   extra=f'; horis:captureDir "{made}"') + tool("t.echo", "cmd:echo")
    agent, world = agent_for(tmp_path, defs)
    assert call(agent, world, "t.echo").status == "completed" and made.is_dir()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie is dead, only not reaped yet
        return f.read().split(") ")[1][0] != "Z"


def test_a_timeout_kills_a_program_that_ignores_sigterm(tmp_path, root) -> None:
    marker = tmp_path / "started"
    defs = command("stubborn", f'"python" "stubborn.py" "{marker}"', root) + tool(
        "t.stubborn", "cmd:stubborn", timeout="1500ms")
    agent, world = agent_for(tmp_path, defs)
    started = time.monotonic()
    result = call(agent, world, "t.stubborn")
    assert result.status == "timed_out", result.receipt()
    assert time.monotonic() - started < 10
    assert marker.exists()
    gone = [p for p in os.listdir("/proc") if p.isdigit() and _cmdline(p).endswith(
        f"stubborn.py\0{marker}\0")]
    assert [p for p in gone if _alive(int(p))] == []


def _cmdline(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text()
    except OSError:
        return ""


def test_a_child_that_outlives_its_parent_is_killed(tmp_path, root) -> None:
    marker = tmp_path / "child"
    defs = command("orphan", f'"python" "orphan.py" "{marker}"', root) + tool(
        "t.orphan", "cmd:orphan", timeout="30s")
    agent, world = agent_for(tmp_path, defs)
    started = time.monotonic()
    result = call(agent, world, "t.orphan")
    assert result.status == "completed", result.receipt()
    assert time.monotonic() - started < 15  # the child's open stdout did not hold the call
    child = int(marker.read_text())
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


DAEMONIZE = """\
# a grandchild in a session of its own, its parent gone at once (double fork), acting later
( setsid sh -c 'sleep 2.5; echo acted >> "$1"' sh "$1" & )
nohup sh -c 'sleep 2.5; echo acted >> "$1"' sh "$1" >/dev/null 2>&1 &
echo launched > "$2"
if [ "$3" = fail ]; then sleep 0.5; exit 3; fi  # once setsid has run
sleep 60
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a subreaper is Linux's")
@pytest.mark.parametrize(("end", "timeout"), [
    ("timeout", "500ms"),  # while the shepherd is still a fork of this process
    ("timeout", "1500ms"),  # after it handed over to a fresh interpreter
    ("fail", "10s"),
])
def test_a_grandchild_that_left_the_group_dies_with_the_call(tmp_path, root, end,
                                                             timeout) -> None:
    """A script that daemonizes a grandchild (``setsid`` after a double fork, ``nohup … &``)
    and then times out, or fails: the call is over, judged failed or in doubt, and the group
    was killed, yet the grandchild acted seconds later — a charge nobody will see in the
    trace, made again by the next call. Every descendant dies with the call."""
    (root / "daemonize.sh").write_text(DAEMONIZE)
    ledger, launched = tmp_path / "acts.txt", tmp_path / "launched"
    defs = command("daemonize", f'"sh" "daemonize.sh" "{ledger}" "{launched}" "{end}"', root,
                   extra='; horis:env [ horis:name "PATH" ; horis:value "/usr/bin:/bin" ]'
                   ) + tool("t.daemonize", "cmd:daemonize", timeout=timeout)
    agent, world = agent_for(tmp_path, defs)
    started = time.monotonic()
    result = call(agent, world, "t.daemonize")
    assert launched.exists()
    assert result.status == ("timed_out" if end == "timeout" else "failed"), result.receipt()
    time.sleep(max(0.0, started + 3.5 - time.monotonic()))  # past when they would have acted
    assert not ledger.exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_program_does_not_outlive_a_run_killed_mid_call(tmp_path, root) -> None:
    """``kill -9`` of the run while its program works: the program, in a session of its own,
    ran on and acted seconds later, after the step was found in doubt, when an operator who
    had checked and seen nothing yet would clear it and call again: two charges. It dies
    with the run, so what the call did is done by the time anyone checks."""
    ledger, started = tmp_path / "acts.txt", tmp_path / "started"
    defs = command("charge", f'"python" "slow_charge.py" "{ledger}" "{started}"', root) + tool(
        "t.charge", "cmd:charge", timeout="30s") + """
:Charge a horis:Workflow ; horis:focusType :Patient ; horis:start :Go .
:Go a horis:ActionStep ; horis:tool :t.charge ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""
    run = _run_in_background(tmp_path, defs)
    deadline = time.monotonic() + 60  # its pid written (not just the file made): it runs
    while not (started.exists() and started.read_text()) and run.poll() is None and (
            time.monotonic() < deadline):
        time.sleep(0.02)
    assert started.exists() and started.read_text(), "the program never started"
    program = int(started.read_text())
    run.send_signal(signal.SIGKILL)
    run.wait()
    deadline = time.monotonic() + 5
    while _alive(program) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(program)
    time.sleep(3.5)  # past when it would have acted
    assert not ledger.exists()
    again = horismos_forked(tmp_path, "run", "defs.ttl", "--store", "oxigraph:store", "--focus",
                            ":p1", timeout=120)
    assert again.returncode == 1 and "tools reconcile t.charge" in again.stdout, again.stdout


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a subreaper is Linux's")
def test_a_grandchild_that_left_the_group_dies_with_a_run_killed_mid_call(tmp_path,
                                                                          root) -> None:
    """``kill -9`` of the run while its script waits, the script having daemonized a
    grandchild that charges three seconds later: the script died with the run, the
    grandchild, in a session of its own, charged after the step was found in doubt."""
    (root / "daemonize.sh").write_text(DAEMONIZE.replace("2.5", "3"))
    ledger, launched = tmp_path / "acts.txt", tmp_path / "launched"
    defs = command("daemonize", f'"sh" "daemonize.sh" "{ledger}" "{launched}" "wait"', root,
                   extra='; horis:env [ horis:name "PATH" ; horis:value "/usr/bin:/bin" ]'
                   ) + tool("t.daemonize", "cmd:daemonize", timeout="30s") + """
:Charge a horis:Workflow ; horis:focusType :Patient ; horis:start :Go .
:Go a horis:ActionStep ; horis:tool :t.daemonize ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""
    run = _run_in_background(tmp_path, defs)
    deadline = time.monotonic() + 60
    while not launched.exists() and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert launched.exists(), "the script never started"
    time.sleep(0.3)  # its grandchildren in their own session by now
    run.send_signal(signal.SIGKILL)
    run.wait()
    time.sleep(4)  # past when they would have acted
    assert not ledger.exists()


def test_catalog_and_validate_see_command_bindings(tmp_path, root) -> None:
    defs = command("echo", '"python" "echo_args.py"', root) + tool("t.echo", "cmd:echo")
    defs += command("nowhere", '"no-such-program-here"', root) + tool("t.gone", "cmd:nowhere")
    agent, _ = agent_for(tmp_path, defs)
    entries = {e.name: e for e in agent.catalog.list()}
    assert entries["t.echo"].lane == "command"
    assert entries["t.echo"].readiness == "model_callable"
    assert entries["t.gone"].readiness == "catalog_only"
    assert URIRef(EX["t.echo"]) in agent.definitions.tools
    out = horismos_forked(tmp_path, "validate", str(tmp_path / "defs.ttl"), timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "program 'no-such-program-here' is not found on PATH" in out.stdout


def test_a_brace_that_makes_no_placeholder_is_a_warning(tmp_path, root) -> None:
    """``"{patient"`` and ``"{ patient }"`` were given to the program as written; a program may
    want braces (``find -exec {}``), so it is said, not refused."""
    for member in ('"{patient"', '"{ patient }"'):
        defs = command("echo", f'"python" "echo_args.py" {member}', root) + tool(
            "t.echo", "cmd:echo")
        (tmp_path / "defs.ttl").write_text(HEAD + defs)
        (warned,) = [w for w in load_definitions([tmp_path / "defs.ttl"]).warnings
                     if "brace" in w.message]
        assert "brace that opens or closes no placeholder" in warned.message, warned
        assert warned.file.endswith("defs.ttl") and warned.line


def script_warnings(tmp_path: Path, defs: str) -> list[Any]:
    """What validate says of the script a command's interpreter is given."""
    from horismos._contract import command_problems

    (tmp_path / "defs.ttl").write_text(HEAD + defs)
    return [p for p in command_problems(load_definitions([tmp_path / "defs.ttl"]))
            if "working directory" in p.message]


@pytest.mark.parametrize(("argv", "workdir", "looked_for"), [
    ('"python3" "queue_cli.py" "{patient}"', "", "queue_cli.py"),
    ('"/usr/bin/node" "bin/queue.js" "--" "{patient}"', "", "bin/queue.js"),
    ('"bash" "echo_args.py"', "cases", "cases/echo_args.py"),  # in the root, not the workdir
])
def test_an_interpreters_script_missing_from_the_working_directory_is_a_warning(
        tmp_path, root, argv, workdir, looked_for) -> None:
    """It validated, and every call exited 2 (python3: can't open file 'queue_cli.py')."""
    extra = f'; horis:workdir "{workdir}"' if workdir else ""
    (warned,) = script_warnings(tmp_path, command("queue", argv, root, extra=extra)
                                + tool("t.queue", "cmd:queue"))
    assert warned.severity == "warning" and warned.file.endswith("defs.ttl"), warned
    assert warned.line == HEAD.count("\n") + 1 and warned.node == ":queue", warned
    assert f"there is no '{root / looked_for}'" in warned.message, warned
    assert "put the script there" in (warned.hint or "")


@pytest.mark.parametrize(("argv", "workdir"), [
    ('"python3" "echo_args.py" "{patient}"', ""),  # there
    ('"python" "../echo_args.py"', "cases"),  # there, from the working directory
    ('"python3" "-m" "queue_cli"', ""),  # an option first: the interpreter reads it
    ('"python3" "{patient}.py"', ""),  # a placeholder: known at the call only
    ('"python3" "queue_cli.py"', "cases/{patient}"),
    ('"wc" "queue_cli.py"', ""),  # not an interpreter: a file it reads may come later
    ('"python3" "queue_cli"', ""),  # not named like a script
])
def test_a_script_that_is_there_or_cannot_be_known_says_nothing(
        tmp_path, root, argv, workdir) -> None:
    extra = f'; horis:workdir "{workdir}"' if workdir else ""
    defs = command("queue", argv, root, extra=extra) + tool("t.queue", "cmd:queue")
    assert script_warnings(tmp_path, defs) == []
