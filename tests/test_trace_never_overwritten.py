"""A trace file already there is never written over by a command given it as ``--trace``.

An incident reviewer's evidence is the trace of the run that went wrong; ``run --trace
run.jsonl`` typed again (up-arrow, a cron line, a script rerun) wrote the new run over it
without a word. ``run``, ``resume`` and ``tools call`` now refuse such a file before anything
runs (exit 2, naming it and what to do), as they refuse a missing folder; an empty file
(``mktemp``'s) holds no record and is taken.
"""

from __future__ import annotations

import datetime
import json
import subprocess
from pathlib import Path

from forked import horismos_forked
from in_process import horismos_in_process, horismos_load
from leave_files import WAITING

ROOT = Path(__file__).resolve().parent.parent
TRIAGE = [str(ROOT / "workflows" / "triage.ttl"), str(ROOT / "ontologies" / "ehr.ttl")]
WORLD = ["--world", str(ROOT / "examples" / "triage" / "world.ttl")]
TOOLS = ["--tools", str(ROOT / "examples" / "triage" / "ehr_client.py")]



def horismos(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m horismos ARGS`` in ``cwd``, as a user runs it."""
    return horismos_forked(cwd, *args, timeout=120)


def refused_for(p: subprocess.CompletedProcess[str], name: str) -> None:
    """Exit 2, one line naming the file and what to do instead, no traceback, no step run."""
    assert p.returncode == 2, p.stdout + p.stderr
    assert "Traceback" not in p.stderr
    assert f"--trace {name}: this file already exists" in p.stderr, p.stderr
    assert "never written over" in p.stderr and "give a new file name" in p.stderr
    assert p.stdout == ""  # nothing ran: no step, no receipt


def test_run_again_with_the_same_trace_keeps_the_first_run_s_trace(tmp_path: Path) -> None:
    first = horismos(tmp_path, "run", *TRIAGE, *WORLD, *TOOLS, "--focus", ":patient42",
                     "--trace", "run.jsonl")
    assert first.returncode == 0, first.stdout + first.stderr
    recorded = (tmp_path / "run.jsonl").read_bytes()
    again = horismos(tmp_path, "run", *TRIAGE, *WORLD, *TOOLS, "--focus", ":patient43",
                     "--trace", "run.jsonl")
    refused_for(again, "run.jsonl")
    assert (tmp_path / "run.jsonl").read_bytes() == recorded
    # the first run's trace still replays: it is the record of :patient42's run
    replayed = horismos(tmp_path, "replay", "run.jsonl", *TRIAGE)
    assert replayed.returncode == 0 and replayed.stdout.startswith("same"), replayed.stdout


def test_an_empty_file_is_taken_and_a_folder_refused(tmp_path: Path) -> None:
    """``mktemp``'s empty file records nothing: a run writes its trace there."""
    (tmp_path / "empty.jsonl").touch()
    run = horismos(tmp_path, "run", *TRIAGE, *WORLD, *TOOLS, "--focus", ":patient42",
                   "--trace", "empty.jsonl", "-q")
    assert run.returncode == 0, run.stdout + run.stderr
    assert (tmp_path / "empty.jsonl").read_text().startswith('{"')
    (tmp_path / "traces").mkdir()
    folder = horismos(tmp_path, "run", *TRIAGE, *WORLD, *TOOLS, "--focus", ":patient42",
                      "--trace", "traces")
    assert folder.returncode == 2 and "this is a folder; give a file name in it" in folder.stderr


def test_resume_refuses_a_trace_already_there_and_leaves_the_instance_waiting(
        tmp_path: Path) -> None:
    (tmp_path / "leave.ttl").write_text(WAITING)
    (tmp_path / "w.ttl").write_text("@prefix : <http://example.org/leave#> .\n:r1 a :Request .\n")
    horismos_load(tmp_path, "oxigraph:st", "w.ttl")
    first = horismos(tmp_path, "run", "leave.ttl", "--store", "oxigraph:st", "--focus", ":r1",
                     "--trace", "run.jsonl")
    assert first.returncode == 3, first.stdout + first.stderr
    recorded = (tmp_path / "run.jsonl").read_bytes()
    before = horismos_in_process(tmp_path, "digest", "--store", "oxigraph:st").stdout
    iid = horismos(tmp_path, "instances", "--store", "oxigraph:st", "--format", "json").stdout
    instance = json.loads(iid)[0]["instance"]
    resumed = horismos(tmp_path, "resume", "leave.ttl", "--store", "oxigraph:st",
                       "--instance", instance, "--facts", ":r1 a :Request .",
                       "--trace", "run.jsonl")
    refused_for(resumed, "run.jsonl")
    assert (tmp_path / "run.jsonl").read_bytes() == recorded
    assert horismos_in_process(tmp_path, "digest", "--store", "oxigraph:st").stdout == before


def test_tools_call_refuses_a_trace_already_there_before_calling(tmp_path: Path) -> None:
    horismos_load(tmp_path, "oxigraph:st", WORLD[1])
    before = horismos_in_process(tmp_path, "digest", "--store", "oxigraph:st").stdout
    (tmp_path / "call.jsonl").write_text("the record of an earlier call\n")
    call = horismos(tmp_path, "tools", "call", "ehr.assign_queue", *TRIAGE, *TOOLS, "--args",
                    '{"patient": ":patient42", "queue": ":urgent"}', "--store", "oxigraph:st",
                    "--trace", "call.jsonl")
    refused_for(call, "call.jsonl")
    assert (tmp_path / "call.jsonl").read_text() == "the record of an earlier call\n"
    assert horismos_in_process(tmp_path, "digest", "--store", "oxigraph:st").stdout == before


LEAVE = WAITING.replace(
    "horis:wake horis:OperatorInput ; horis:delivery horis:Final .",
    'horis:wake horis:Timer ; horis:delivery horis:Silent ; horis:timeout "1ms" ;\n'
    "    horis:onTimeout :Escalate .\n"
    ':Escalate a horis:WaitStep ; horis:reason "Nobody approved in time." ;\n'
    "    horis:wake horis:System ; horis:delivery horis:Silent .",
)


def test_wake_in_the_same_second_as_an_earlier_pass_keeps_that_pass_s_trace(
        tmp_path: Path) -> None:
    """``wake --traces DIR`` named each trace ``wake-ID-SECOND.jsonl``: a pass in the same
    second as one before it (a timer every second, a rerun by hand) wrote over its trace."""
    from horismos._stored_instances import short_id

    (tmp_path / "leave.ttl").write_text(LEAVE)
    (tmp_path / "w.ttl").write_text("@prefix : <http://example.org/leave#> .\n:r1 a :Request .\n")
    horismos_load(tmp_path, "oxigraph:st", "w.ttl")
    ran = horismos(tmp_path, "run", "leave.ttl", "--store", "oxigraph:st", "--focus", ":r1")
    assert ran.returncode == 3, ran.stdout + ran.stderr
    listed = horismos(tmp_path, "instances", "--store", "oxigraph:st", "--format", "json")
    sid = short_id(json.loads(listed.stdout)[0]["instance"])
    traces = tmp_path / "traces"
    traces.mkdir()
    now = datetime.datetime.now(datetime.UTC)
    earlier = []  # the names the pass below could take, each holding an earlier pass's trace
    for s in range(0, 30):
        stamp = (now + datetime.timedelta(seconds=s)).strftime("%Y%m%dT%H%M%S")
        (traces / f"wake-{sid}-{stamp}.jsonl").write_text(f"an earlier pass {s}\n")
        earlier.append(traces / f"wake-{sid}-{stamp}.jsonl")
    woken = horismos(tmp_path, "wake", "leave.ttl", "--store", "oxigraph:st", "--traces",
                     "traces")
    assert woken.returncode == 0 and "wait timed out" in woken.stdout, woken.stdout + woken.stderr
    assert [p.read_text() for p in earlier] == [f"an earlier pass {s}\n" for s in range(30)]
    (new,) = set(traces.iterdir()) - set(earlier)
    assert new.name.startswith(f"wake-{sid}-") and new.name.endswith("-2.jsonl")
    assert json.loads(new.read_text().splitlines()[0])["type"] == "header"


def test_trace_and_out_naming_one_file_is_refused_before_the_run(tmp_path: Path) -> None:
    """``--trace run.nq --out run.nq``: the world written after the run replaced the trace,
    and the record of the run was gone as it ended (replay: "not a trace")."""
    ran = horismos(tmp_path, "run", *TRIAGE, *WORLD, *TOOLS, "--focus", ":patient42",
                   "--trace", "run.nq", "--out", "./run.nq")
    assert ran.returncode == 2 and ran.stdout == "", ran.stdout + ran.stderr
    assert "--trace run.nq and --out ./run.nq name the same file" in ran.stderr
    assert not (tmp_path / "run.nq").exists()
