"""What an incident reviewer reconstructs from the artefacts alone (traces, the world,
`horismos instances`, `trace show`, `replay`): each test runs the command line as a user does,
on an ``oxigraph:PATH`` world in a scratch folder, and asserts what the artefacts now say."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from forked import Popen, horismos_forked

ROOT = Path(__file__).resolve().parent.parent
TRIAGE = [str(ROOT / "workflows" / "triage.ttl"), str(ROOT / "ontologies" / "ehr.ttl")]
EHR = ["--tools", str(ROOT / "examples" / "triage" / "ehr_client.py")]
ARGS = ["--args", '{"patient": ":patient42", "queue": ":urgent"}']


def horismos(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return horismos_forked(cwd, *args, timeout=120)


def loaded(tmp_path: Path) -> list[str]:
    """The triage example's world, loaded into a store on disk: its ``--store`` options."""
    store = ["--store", f"oxigraph:{tmp_path / 'st'}"]
    p = horismos("load", str(ROOT / "examples" / "triage" / "world.ttl"), *store, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    return store


def test_a_catalog_calls_line_names_the_call_by_its_short_id(tmp_path: Path) -> None:
    """A `tools call`'s step line in `trace show` gave the call as its whole IRI
    (`<urn:horismos:call:3552a8ee…>`) where a step's line gives the step's CURIE: it now
    names it `call 3552a8ee`, beside the tool's CURIE."""
    store = loaded(tmp_path)
    p = horismos("tools", "call", "ehr.assign_queue", *TRIAGE, *EHR, *store, *ARGS,
                 "--trace", "c.jsonl", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    call = json.loads((tmp_path / "c.jsonl").read_text().splitlines()[1])["instance"]
    shown = horismos("trace", "show", "c.jsonl", *TRIAGE, cwd=tmp_path)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    (line,) = [x for x in shown.stdout.splitlines() if ":ehr.assign_queue(" in x]
    assert re.search(rf"  call {call.rsplit(':', 1)[1][:8]}  :ehr\.assign_queue\(patient=", line)
    assert "urn:horismos:call" not in shown.stdout


def test_replay_of_a_calls_trace_says_why_not_and_what_reads_it(tmp_path: Path) -> None:
    """`replay` of a `tools call`'s trace said "replay replays runs" and stopped there; in a
    folder of traces (serve's --trace-dir holds runs' and calls' alike) every call's trace was
    REFUSED and made the folder's exit 1 though every run replayed the same. A call's trace
    is refused saying why and what reads it; in a folder it is SKIPPED, the runs' verdict
    standing."""
    store = loaded(tmp_path)
    (tmp_path / "traces").mkdir()
    p = horismos("tools", "call", "ehr.assign_queue", *TRIAGE, *EHR, *store, *ARGS,
                 "--trace", "traces/call.jsonl", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    one = horismos("replay", "traces/call.jsonl", *TRIAGE, cwd=tmp_path)
    assert one.returncode == 1, one.stdout + one.stderr
    assert one.stdout.startswith("REFUSED   traces/call.jsonl: this trace records a direct tool "
                                 "call (horismos tools call), not a workflow run"), one.stdout
    assert "`horismos trace show traces/call.jsonl FILE_OR_DIR…`" in one.stdout
    only_calls = horismos("replay", "traces", *TRIAGE, cwd=tmp_path)
    assert only_calls.returncode == 2, only_calls.stdout + only_calls.stderr
    assert ("no trace in this folder records a run replay can replay (direct tool calls"
            in only_calls.stderr), only_calls.stderr
    ran = horismos("run", *TRIAGE, *store, *EHR, "--focus", ":patient43",
                   "--trace", "traces/run.jsonl", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    both = horismos("replay", "traces", *TRIAGE, cwd=tmp_path)
    assert both.returncode == 0, both.stdout + both.stderr
    lines = both.stdout.splitlines()
    assert lines[0].startswith("SKIPPED   traces/call.jsonl: a direct tool call's trace"), lines
    assert "Traceback" not in both.stderr


def test_a_trace_and_the_instance_it_started_name_the_process_that_ran_it(
        tmp_path: Path) -> None:
    """Neither a trace nor the world named the process that ran a run, so of two processes
    given the same event nobody could say which started the instance. The header records
    the host, pid and lane once (no step event grows), `trace show` says it, the instance
    stores it with its first commit and `instances` lists it; the trace still replays the
    same, and a snapshot's replay still ends on the recorded world digest."""
    store = loaded(tmp_path)
    ran = horismos("run", *TRIAGE, *store, *EHR, "--focus", ":patient42", "--trace", "t.jsonl",
                   cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    events = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    header = events[0]
    assert header["lane"] == "run" and isinstance(header["pid"], int) and header["host"]
    assert all("pid" not in e and "host" not in e for e in events[1:])  # once a run
    by = f"run@{header['host']}:{header['pid']}"
    shown = horismos("trace", "show", "t.jsonl", cwd=tmp_path)
    assert f"  ran by process {by}" in shown.stdout.splitlines(), shown.stdout
    listed = horismos("instances", *store, cwd=tmp_path)
    head, row = listed.stdout.splitlines()
    assert head.split() == ["id", "workflow", "focus", "status", "step", "since", "by", "why"]
    assert row.split()[6] == by, listed.stdout
    as_json = json.loads(horismos("instances", *store, "--format", "json", cwd=tmp_path).stdout)
    assert [r["started_by"] for r in as_json] == [by]
    replayed = horismos("replay", "t.jsonl", *TRIAGE, cwd=tmp_path)
    assert replayed.returncode == 0 and replayed.stdout.startswith("same"), replayed.stdout
    snap = horismos("run", *TRIAGE, "--world", str(ROOT / "examples" / "triage" / "world.ttl"),
                    *EHR, "--focus", ":patient42", "--trace", "s.jsonl", "--trace-snapshot",
                    cwd=tmp_path)
    assert snap.returncode == 0, snap.stdout + snap.stderr
    again = horismos("replay", "s.jsonl", *TRIAGE, cwd=tmp_path)
    assert "the final world digest matches the recorded one" in again.stdout, again.stdout


def test_a_tools_call_killed_mid_call_is_listed_by_instances_until_reconciled(
        tmp_path: Path) -> None:
    """`tools call` of a tool that is not idempotent, killed (kill -9) while its tool acts:
    its call is held in doubt, and every further call of the tool on that subject refused.
    `instances` said "no instances in this world" and `trace show` "no end event" and no
    more; a reviewer looking for doubts found none. `instances` now lists it (text and
    JSON) with the command that clears it, `trace show` says the call was being made and
    where to look, and once reconciled the row is gone."""
    from billed_order import project

    project(tmp_path)
    env = dict(os.environ, LEDGER=str(tmp_path / "ledger"))
    store = ["--store", "oxigraph:store"]
    assert horismos_forked(tmp_path, "load", "world.ttl", *store, env=env).returncode == 0
    call = ["tools", "call", "t.bill", "pay.ttl", "--tools", "shop", *store,
            "--args", '{"order": ":o1"}']
    killed = Popen([sys.executable, "-m", "horismos", *call, "--trace", "c.jsonl"],
                   cwd=tmp_path, env=dict(env, BILL_SECONDS="60"),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not (tmp_path / "ledger").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    assert (tmp_path / "ledger").exists(), "the tool was never called"
    listed = horismos_forked(tmp_path, "instances", "pay.ttl", *store, env=env)
    assert listed.returncode == 0, listed.stderr
    _, row = listed.stdout.splitlines()
    assert row.split()[1:5] == ["(tools", "call)", "-", "in_doubt"], row
    assert " in_doubt " in row and "its process stopped mid-call" in row, row
    # by the process that made it, as a run's instance names its own (it said `by -`)
    by = f"@{socket.gethostname()}:{killed.pid}"
    assert by in row, row
    assert "`horismos tools reconcile t.bill … --args '{\"order\": \":o1\"}'`" in row, row
    as_json = json.loads(
        horismos_forked(tmp_path, "instances", *store, "--format", "json", env=env).stdout)
    (only,) = as_json
    assert only["catalog_call"] and only["status"] == "in_doubt", only
    assert only["started_by"].endswith(by), only
    assert only["instance"].startswith("urn:horismos:call:")
    assert only["in_doubt"][0]["args"] == [{"order": "<http://example.org/pay#o1>"}]
    shown = horismos_forked(tmp_path, "trace", "show", "c.jsonl", "pay.ttl", env=env)
    assert ("  the call of :t.bill was being made: what it did is not in the trace, and it may "
            "have acted; `horismos instances --store oxigraph:store` lists it, held in doubt"
            ) in shown.stdout.splitlines(), shown.stdout
    cleared = horismos_forked(tmp_path, "tools", "reconcile", "t.bill", "pay.ttl", *store,
                              "--args", '{"order": ":o1"}', "--verdict", "acted", env=env)
    assert cleared.returncode == 0, cleared.stdout + cleared.stderr
    after = horismos_forked(tmp_path, "instances", "pay.ttl", *store, env=env)
    assert after.stdout == "no instances in this world\n", after.stdout


def test_a_blocked_instance_stores_why_by_kind_as_a_failed_one_does(tmp_path: Path) -> None:
    """A failed instance stores its error's kind (`horis:errorKind`) and `instances` leads its
    why with it; a blocked one stored none, so a guard that does not hold and a policy that
    refuses the tool read alike until read through. Each now stores its kind (`precondition`,
    `policy`), `instances` says it first and gives it in JSON; a rerun that finds the same
    block keeps one kind, and both traces replay the same."""
    store = loaded(tmp_path)
    unmet = horismos("run", *TRIAGE, *store, *EHR, "--focus", ":patient44",
                     "--trace", "unmet.jsonl", cwd=tmp_path)
    assert unmet.returncode == 4, unmet.stdout + unmet.stderr
    refused = horismos("run", *TRIAGE, *store, *EHR, "--focus", ":patient42",
                       "--allow", "ReadOnly", "--trace", "policy.jsonl", cwd=tmp_path)
    assert refused.returncode == 4, refused.stdout + refused.stderr
    again = horismos("run", *TRIAGE, *store, *EHR, "--focus", ":patient44",
                     "--trace", "again.jsonl", cwd=tmp_path)
    assert again.returncode == 4, again.stdout + again.stderr
    rows = {r["focus"].rsplit("#", 1)[1]: r for r in json.loads(
        horismos("instances", *store, "--format", "json", cwd=tmp_path).stdout)}
    assert rows["patient44"]["status"] == "blocked"
    assert rows["patient44"]["error_kind"] == "precondition"
    assert rows["patient42"]["error_kind"] == "policy"
    text = horismos("instances", *TRIAGE, *store, cwd=tmp_path).stdout
    lines = {line.split()[2]: line for line in text.splitlines()[1:]}
    assert "  precondition: ?this :acuity ?queue ." in lines[":patient44"], text
    assert "  policy: ehr.assign_queue has side effect HostStateWrite" in lines[":patient42"], text
    for trace in ("unmet.jsonl", "policy.jsonl", "again.jsonl"):
        replayed = horismos("replay", trace, *TRIAGE, cwd=tmp_path)
        assert replayed.stdout.startswith("same"), replayed.stdout + replayed.stderr


def test_a_duplicate_delivery_refused_leaves_a_trace_naming_the_process_that_holds_it(
        tmp_path: Path) -> None:
    """The same event delivered to two processes on a shared (`sparql:`) world: the second
    run is refused (`NotHeld`, exit 6) while the first is in its call. It said "another live
    process" and wrote nothing to the --trace it was given, so a reviewer could neither see
    that the second delivery came nor which process had run it. The refusal now names the
    holder (`run@HOST:PID`, the first's pid), the refused run's trace records it (header,
    `refused`, `end: refused`), `trace show` says it, and replay says there is nothing to
    replay; the first's trace header names the same process. The same command given again
    once the first has died (its lease run out) is not refused for its --trace, which holds
    the refusal: it goes on with the instance and writes second-2.jsonl."""
    from billed_order import project
    from oxigraph_server import OxigraphServer

    project(tmp_path)
    server = OxigraphServer(tmp_path / "store")
    env = dict(os.environ, LEDGER=str(tmp_path / "ledger"), HORISMOS_LEASE="1.5")
    run = ("run", "pay.ttl", "--tools", "shop", "--store", server.store, "--focus", ":o1")
    first = None
    try:
        assert horismos_forked(tmp_path, "load", "world.ttl", "--store", server.store,
                               env=env).returncode == 0
        first = Popen([sys.executable, "-m", "horismos", *run, "--trace", "first.jsonl"],
                      cwd=tmp_path, env=dict(env, BILL_SECONDS="60"),
                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while not (tmp_path / "ledger").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (tmp_path / "ledger").exists(), "the first delivery never called its tool"
        second = horismos_forked(tmp_path, *run, "--trace", "second.jsonl", env=env)
        assert second.returncode == 6, second.stdout + second.stderr
        header = json.loads((tmp_path / "first.jsonl").read_text().splitlines()[0])
        holder = f"run@{header['host']}:{first.pid}"
        assert header["pid"] == first.pid
        assert f"(process {holder} holds the node's claim" in second.stderr, second.stderr
        events = [json.loads(x) for x in (tmp_path / "second.jsonl").read_text().splitlines()]
        assert [e["type"] for e in events] == ["header", "refused", "end"], events
        assert events[1]["kind"] == "not_held" and events[1]["holder"] == holder
        assert events[1]["focus"] == "http://example.org/pay#o1"
        assert events[2]["status"] == "refused"
        assert events[0]["pid"] != first.pid  # the refused run's own process
        shown = horismos_forked(tmp_path, "trace", "show", "second.jsonl", "pay.ttl", env=env)
        refused = [x for x in shown.stdout.splitlines() if x.startswith("refused before")]
        assert refused and f"process {holder} holds" in refused[0], shown.stdout
        assert "end: refused" in shown.stdout
        replayed = horismos_forked(tmp_path, "replay", "second.jsonl", "pay.ttl", env=env)
        assert "a run refused before its first step" in replayed.stdout, replayed.stdout
        assert "Traceback" not in second.stderr + shown.stderr + replayed.stderr
        kept = (tmp_path / "second.jsonl").read_bytes()
        first.send_signal(signal.SIGKILL)
        first.wait()
        time.sleep(2.5)  # its lease runs out
        again = horismos_forked(tmp_path, *run, "--trace", "second.jsonl", env=env)
        assert again.returncode == 1, again.stdout + again.stderr  # its call held in doubt
        assert "this run's trace is second-2.jsonl" in again.stderr, again.stderr
        assert (tmp_path / "second.jsonl").read_bytes() == kept
        assert (tmp_path / "second-2.jsonl").stat().st_size
    finally:
        if first is not None and first.poll() is None:
            first.kill()
            first.wait()
        server.stop()


def test_trace_view_of_a_calls_trace_with_the_definitions_writes_the_page(
        tmp_path: Path) -> None:
    """`trace view CALL.jsonl DEFS -o page.html` refused with "these definitions do not
    declare the trace's workflow <None>": a call has no workflow. The page is written, with
    a note that there is no workflow to draw."""
    store = loaded(tmp_path)
    p = horismos("tools", "call", "ehr.assign_queue", *TRIAGE, *EHR, *store, *ARGS,
                 "--trace", "c.jsonl", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    page = horismos("trace", "view", "c.jsonl", *TRIAGE, "-o", "c.html", cwd=tmp_path)
    assert page.returncode == 0, page.stdout + page.stderr
    assert (tmp_path / "c.html").stat().st_size
    assert "no workflow to draw" in page.stderr and "<None>" not in page.stderr
