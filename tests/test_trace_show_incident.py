"""`horismos trace show` as an incident reviewer reads it: the trace of a run that went wrong,
with no world at hand. Each test runs the command line as a user does, in a scratch folder."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from forked import Popen, horismos_forked
from rdflib import RDFS

from horismos import Agent, Trace, read_trace, replay
from horismos._view_model import view_model

ROOT = Path(__file__).resolve().parent.parent
TRIAGE = [str(ROOT / "workflows" / "triage.ttl"), str(ROOT / "ontologies" / "ehr.ttl")]
TRIAGE_WORLD = ["--world", str(ROOT / "examples" / "triage" / "world.ttl")]
REBOOKING = [str(ROOT / "workflows" / "rebooking.ttl"), str(ROOT / "ontologies" / "travel.ttl")]
REBOOKING_TOOLS = ["--tools", str(ROOT / "examples" / "rebooking" / "airline_client.py")]

BAD_EHR = '''
import os


def assign_queue(patient, queue):
    # the reference's form is the EHR's configuration, known only when it answers
    level = str(queue).rsplit("#", 1)[-1]
    prefix = os.environ.get("EHR_QUEUE_PREFIX", "queue")
    return {"queueRef": prefix + "-" + level}   # the domain shape wants Q-<LEVEL>-<number>


def notify_nurse(patient, nurse, ref):
    return {"assignedNurse": nurse}
'''


def bad_ehr(folder: Path) -> None:
    """The EHR client of the triage example, its queue references of the wrong form."""
    (folder / "bad").mkdir()
    (folder / "bad" / "ehr_client.py").write_text(BAD_EHR)


def horismos(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return horismos_forked(cwd, *args, timeout=120)


def _never_called(**kwargs: object) -> dict[str, object]:
    """A tool a replay resolves and never calls: it substitutes the recorded outcomes."""
    raise AssertionError(f"a replay called a tool: {kwargs}")


def test_a_rejected_step_shows_the_node_the_path_and_the_value_refused(tmp_path: Path) -> None:
    """The trace records each SHACL message's focus node, path and value; `trace show` printed
    the message's text alone ("gate rejected: a queue reference looks like …"), so a reviewer
    could not see which node nor what the tool had sent back, which `run` had printed."""
    bad_ehr(tmp_path)
    p = horismos("run", *TRIAGE, *TRIAGE_WORLD, "--tools", "bad/ehr_client.py",
                 "--focus", ":patient42", "--trace", "t.jsonl", cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    shown = horismos("trace", "show", "t.jsonl", *TRIAGE, cwd=tmp_path)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert ("    :patient42 :queueRef: a queue reference looks like Q-<LEVEL>-<number>, e.g. "
            'Q-URGENT-7 (value: "queue-urgent")') in shown.stdout.splitlines()


def test_a_resume_shows_the_instance_the_wait_and_the_facts_that_answered_it(
        tmp_path: Path) -> None:
    """A resumed run's trace holds a `resume` event with the facts an operator gave; `trace
    show` printed "resume (event 1)", neither the instance, the wait nor what answered it."""
    run = horismos("run", *REBOOKING, "--world",
                   str(ROOT / "examples" / "rebooking" / "world.ttl"), *REBOOKING_TOOLS, "--all",
                   "--out", "after.trig", cwd=tmp_path)
    assert run.returncode == 3, run.stdout + run.stderr
    waiting = re.search(r"^\[([0-9a-f]{8})\] :booking2  :AskOperator  waiting$", run.stdout,
                        re.MULTILINE)
    assert waiting is not None, run.stdout
    done = horismos("resume", *REBOOKING, "--world", "after.trig", *REBOOKING_TOOLS,
                    "--instance", waiting.group(1), "--facts", ":booking2 :operatorChoice :VS3 .",
                    "--trace", "resumed.jsonl", "--operator", "ops desk", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    shown = horismos("trace", "show", "resumed.jsonl", *REBOOKING, cwd=tmp_path)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    lines = shown.stdout.splitlines()
    at = lines.index(f"resume of instance {waiting.group(1)} at :AskOperator, answered "
                     "(given by ops desk) by:")
    assert lines[at + 1] == "    :booking2 :operatorChoice :VS3 ."


def test_a_refused_catalog_call_shows_why_it_was_refused(tmp_path: Path) -> None:
    """A `tools call` refused (here: the tool's earlier call on the patient is in doubt)
    records the refusal's kind and message; `trace show` printed "refused (event 1)"."""
    store = ["--store", f"oxigraph:{tmp_path / 'st'}"]
    bad_ehr(tmp_path)
    loaded = horismos("load", str(ROOT / "examples" / "triage" / "world.ttl"), *store,
                      cwd=tmp_path)
    assert loaded.returncode == 0, loaded.stdout + loaded.stderr
    args = ["--args", '{"patient": ":patient42", "queue": ":urgent"}']
    first = horismos("tools", "call", "ehr.assign_queue", *TRIAGE, "--tools", "bad/ehr_client.py",
                     *store, *args, cwd=tmp_path)
    assert first.returncode == 1, first.stdout + first.stderr  # rejected: now in doubt
    again = horismos("tools", "call", "ehr.assign_queue", *TRIAGE, "--tools", "bad/ehr_client.py",
                     *store, *args, "--trace", "refused.jsonl", cwd=tmp_path)
    assert "refused (outcome_unknown)" in again.stdout, again.stdout + again.stderr
    shown = horismos("trace", "show", "refused.jsonl", *TRIAGE, cwd=tmp_path)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    refused = [line for line in shown.stdout.splitlines() if "refused :ehr.assign_queue" in line]
    assert len(refused) == 1, shown.stdout
    assert refused[0].startswith("  refused :ehr.assign_queue: outcome_unknown: ")
    assert "horismos tools reconcile ehr.assign_queue" in refused[0]


def test_an_instance_another_run_left_shows_where_this_run_took_it_up(tmp_path: Path) -> None:
    """A run on a stored world continues an instance an earlier run left blocked; its trace's
    `instance` event says so, and `trace show` printed it as if it had started there."""
    store = ["--store", f"oxigraph:{tmp_path / 'st'}"]
    loaded = horismos("load", str(ROOT / "examples" / "triage" / "world.ttl"), *store,
                      cwd=tmp_path)
    assert loaded.returncode == 0, loaded.stdout + loaded.stderr
    tools = ["--tools", str(ROOT / "examples" / "triage" / "ehr_client.py")]
    for trace in ("first.jsonl", "second.jsonl"):
        p = horismos("run", *TRIAGE, *store, *tools, "--focus", ":patient44", "--trace", trace,
                     cwd=tmp_path)
        assert p.returncode == 4, p.stdout + p.stderr
    first = horismos("trace", "show", "first.jsonl", *TRIAGE, cwd=tmp_path).stdout.splitlines()
    second = horismos("trace", "show", "second.jsonl", *TRIAGE, cwd=tmp_path).stdout.splitlines()
    started = next(line for line in first if line.startswith("instance "))
    assert started.endswith(" for :patient44"), first
    continued = next(line for line in second if line.startswith("instance "))
    assert continued == f"{started}, continued at :QueuePatient (blocked)", second


def test_a_call_that_raised_keeps_the_time_it_took_in_the_trace(tmp_path: Path) -> None:
    """A step's `timings` held `tool` only for a call that answered: a call that raised or
    timed out recorded none, and `trace show` gave the step as its bookkeeping alone (a 5 s
    timeout read "0.7 ms"). Which timing is there is asserted, not what it measured."""
    (tmp_path / "down").mkdir()
    (tmp_path / "down" / "ehr_client.py").write_text(
        "def assign_queue(patient, queue):\n"
        "    raise RuntimeError('EHR returned 503 Service Unavailable')\n"
        "\n"
        "def notify_nurse(patient, nurse, ref):\n"
        "    return {'assignedNurse': nurse}\n"
    )
    p = horismos("run", *TRIAGE, *TRIAGE_WORLD, "--tools", "down/ehr_client.py",
                 "--focus", ":patient42", "--trace", "t.jsonl", cwd=tmp_path)
    assert p.returncode == 1 and "raised RuntimeError" in p.stdout, p.stdout + p.stderr
    events = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    (step,) = (e for e in events if e["type"] == "step")
    assert step["status"] == "failed"
    assert set(step["timings"]) >= {"precondition", "arguments", "tool"}, step["timings"]


def test_a_signed_trace_read_with_no_key_says_its_signatures_were_not_checked(
        tmp_path: Path) -> None:
    """A trace signed with `HORISMOS_TRACE_HMAC_KEY`, read where no key is set, replayed
    `same` and showed without a word, and its page said "signed": a reviewer took it for a
    trace whose writer was proven, when only its hash chain (which anyone can recompute after
    an edit) had been checked."""
    keyed = {**os.environ, "HORISMOS_TRACE_HMAC_KEY": "a secret of the deployment"}
    bare = {k: v for k, v in os.environ.items() if not k.startswith("HORISMOS_TRACE_")}
    tools = ["--tools", str(ROOT / "examples" / "triage" / "ehr_client.py")]
    p = horismos_forked(tmp_path, "run", *TRIAGE, *TRIAGE_WORLD, *tools, "--focus",
                        ":patient42", "--trace", "t.jsonl", env=keyed, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    said = "signatures were not checked, only the hash chain: set HORISMOS_TRACE_HMAC_KEY"
    for command in (["replay", "t.jsonl", *TRIAGE], ["trace", "show", "t.jsonl"]):
        unchecked = horismos_forked(tmp_path, *command, env=bare, timeout=120)
        assert unchecked.returncode == 0, unchecked.stdout + unchecked.stderr
        assert said in unchecked.stderr, (command, unchecked.stderr)
        checked = horismos_forked(tmp_path, *command, env=keyed, timeout=120)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert "not checked" not in checked.stderr, (command, checked.stderr)


def test_a_rejected_call_of_a_tool_not_idempotent_says_it_is_held_in_doubt(
        tmp_path: Path) -> None:
    """The tool answered, so it may have acted, and nothing of it landed: the runner holds
    further calls of it on the patient until someone reconciles it. `run` said only "rejected
    by the gate: nothing landed"; the operator learned of the doubt from the next run's
    refusal. It now says so at the step, with the command that clears it, which works."""
    bad_ehr(tmp_path)
    store = ["--store", f"oxigraph:{tmp_path / 'st'}"]
    loaded = horismos("load", str(ROOT / "examples" / "triage" / "world.ttl"), *store,
                      cwd=tmp_path)
    assert loaded.returncode == 0, loaded.stdout + loaded.stderr
    run = ["run", *TRIAGE, *store, "--tools", "bad/ehr_client.py", "--focus", ":patient42"]
    first = horismos(*run, cwd=tmp_path)
    assert first.returncode == 1, first.stdout + first.stderr
    held = [line for line in first.stdout.splitlines() if line.startswith("    held in doubt: ")]
    assert len(held) == 1, first.stdout
    assert "may already have acted on :patient42" in held[0]
    clear = "horismos tools reconcile ehr.assign_queue … --args "
    assert clear in held[0]
    args = held[0].split(clear, 1)[1].split("` on the same store", 1)[0]
    assert args == """'{"patient": ":patient42", "queue": ":urgent"}'"""
    second = horismos(*run, cwd=tmp_path)  # as it said: not called again
    assert second.returncode == 1 and "may already have acted" in second.stdout, second.stdout
    cleared = horismos("tools", "reconcile", "ehr.assign_queue", *TRIAGE, *store, "--args",
                       args.strip("'"), cwd=tmp_path)
    assert cleared.returncode == 0, cleared.stdout + cleared.stderr


def test_a_step_that_completed_on_a_retry_shows_the_attempt_that_failed(tmp_path: Path) -> None:
    """`:ehr.notify_nurse` (`horis:retries 1`, idempotent) fails once, then answers: the
    step read as one clean call, "gate ok  completed", the pager's failure only in the JSON."""
    (tmp_path / "flaky").mkdir()
    (tmp_path / "flaky" / "ehr_client.py").write_text(
        "import itertools\n"
        "_pages = itertools.count()\n"
        "\n"
        "def assign_queue(patient, queue):\n"
        "    return {'queueRef': 'Q-URGENT-1'}\n"
        "\n"
        "def notify_nurse(patient, nurse, ref):\n"
        "    if next(_pages) == 0:\n"
        "        raise ConnectionError('pager gateway reset the connection')\n"
        "    return {'assignedNurse': nurse}\n"
    )
    p = horismos("run", *TRIAGE, *TRIAGE_WORLD, "--tools", "flaky/ehr_client.py",
                 "--focus", ":patient42", "--trace", "t.jsonl", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    shown = horismos("trace", "show", "t.jsonl", *TRIAGE, cwd=tmp_path)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    lines = shown.stdout.splitlines()
    (notified,) = (i for i, line in enumerate(lines) if ":NotifyNurse  " in line)
    assert "gate ok  completed" in lines[notified]
    assert lines[notified + 1] == (
        "    attempt 1 of 2: ConnectionError: pager gateway reset the connection")
    (queued,) = (i for i, line in enumerate(lines) if ":QueuePatient  " in line)
    assert not lines[queued + 1].startswith("    attempt"), lines  # one attempt: nothing said


def test_a_run_killed_mid_call_shows_which_instance_was_mid_step(tmp_path: Path) -> None:
    """`kill -9` while the tool of `:QueuePatient` runs: the trace ends with the instance's
    event. `trace show` said only "no end event", and a reviewer could not tell that an
    instance had been mid-step, its call perhaps made, nor where to look."""
    (tmp_path / "hung").mkdir()
    (tmp_path / "hung" / "ehr_client.py").write_text(
        "import pathlib, time\n"
        "\n"
        "def assign_queue(patient, queue):\n"
        "    pathlib.Path('calling').write_text('')\n"
        "    time.sleep(600)\n"
        "\n"
        "def notify_nurse(patient, nurse, ref):\n"
        "    return {'assignedNurse': nurse}\n"
    )
    store = ["--store", f"oxigraph:{tmp_path / 'st'}"]
    loaded = horismos("load", str(ROOT / "examples" / "triage" / "world.ttl"), *store,
                      cwd=tmp_path)
    assert loaded.returncode == 0, loaded.stdout + loaded.stderr
    run = Popen(
        [sys.executable, "-m", "horismos", "run", *TRIAGE, *store, "--tools",
         "hung/ehr_client.py", "--focus", ":patient43", "--trace", "t.jsonl"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        for _ in range(1200):  # until the tool is called (at most a minute)
            if (tmp_path / "calling").exists() or run.poll() is not None:
                break
            time.sleep(0.05)
        assert (tmp_path / "calling").exists(), "the tool was never called"
    finally:
        run.kill()
        run.wait()
    shown = horismos("trace", "show", "t.jsonl", *TRIAGE, cwd=tmp_path)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    lines = shown.stdout.splitlines()
    at = lines.index(
        "no end event: the recording stopped here (its process died, or the file was cut)")
    started = next(line for line in lines if line.startswith("instance "))
    instance = started.split()[1]
    # the step it was at is named: "at its first step" sent the reviewer to the workflow
    assert lines[at + 1].startswith(
        f"  instance {instance} for :patient43 was still running, at :QueuePatient (its "
        "first step): "), lines
    assert "a call it sent may have acted" in lines[at + 1]
    assert f"`horismos instances --store oxigraph:{tmp_path / 'st'}` lists it" in lines[at + 1]
    bare = horismos("trace", "show", "t.jsonl", cwd=tmp_path)  # no definitions at hand
    assert (" was still running, at the first step of :Triage: "
            in bare.stdout), bare.stdout


def test_a_proposal_shows_what_was_ranked_and_what_was_dropped(tmp_path: Path) -> None:
    """The timeline gave a proposal's choice and confidence alone ("no choice: low
    confidence (confidence 0.5)"): not the ranking the person was then asked to decide
    between, nor the threshold, nor the candidate its conditions had dropped, all recorded."""
    run = horismos("run", *REBOOKING, "--world",
                   str(ROOT / "examples" / "rebooking" / "world.ttl"), *REBOOKING_TOOLS, "--all",
                   "--trace", "t.jsonl", cwd=tmp_path)
    assert run.returncode == 3, run.stdout + run.stderr
    shown = horismos("trace", "show", "t.jsonl", *REBOOKING, cwd=tmp_path)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    lines = shown.stdout.splitlines()
    (asked,) = (i for i, line in enumerate(lines) if "no choice: low confidence" in line)
    assert lines[asked + 1] == ("    lexical:bm25 ranked by the customer's stated preference: "
                                ":BA175, :VS3 (horis:confidence 0.7)")
    assert lines[asked + 2].startswith("    dropped :AA101: this does not hold of it: "
                                       "?option :operatedBy ?carrier ."), lines[asked + 2]


def test_an_approval_shows_the_payload_asked_for_and_the_call_made_on_it(
        tmp_path: Path) -> None:
    """`horis:requiresApproval true`: the step waiting for approval showed as "waiting:",
    nothing after the colon, and the call made once approved did not say it was approved,
    though the trace records the payload, its fingerprint and the approval used."""
    (tmp_path / "triage.ttl").write_text((ROOT / "workflows" / "triage.ttl").read_text().replace(
        "    horis:timeout \"5s\" ;\n    horis:idempotent false .",
        "    horis:timeout \"5s\" ;\n    horis:requiresApproval true ;\n"
        "    horis:idempotent false ."))
    defs = ["triage.ttl", str(ROOT / "ontologies" / "ehr.ttl")]
    tools = ["--tools", str(ROOT / "examples" / "triage" / "ehr_client.py")]
    asked = horismos("run", *defs, *TRIAGE_WORLD, *tools, "--focus", ":patient42", "--out",
                     "after.trig", "--trace", "asked.jsonl", cwd=tmp_path)
    assert asked.returncode == 3, asked.stdout + asked.stderr
    fingerprint = re.search(r"Fingerprint: ([0-9a-f]{64})", asked.stdout)
    waiting = re.search(r"^\[([0-9a-f]{8})\]", asked.stdout, re.MULTILINE)
    assert fingerprint and waiting, asked.stdout
    shown = horismos("trace", "show", "asked.jsonl", *defs, cwd=tmp_path).stdout.splitlines()
    (at,) = (i for i, line in enumerate(shown) if "  :QueuePatient  " in line)
    assert "  waiting for approval  " in shown[at], shown[at]
    assert shown[at + 1] == ('    payload {"patient": "http://example.org/ehr#patient42", '
                             '"queue": "http://example.org/ehr#urgent"}: fingerprint '
                             f"{fingerprint.group(1)}")
    approved = horismos("approve", *defs, "--world", "after.trig", "--instance",
                        waiting.group(1), "--fingerprint", fingerprint.group(1), "--out",
                        "approved.trig", "--operator", "Dr. Okafor", cwd=tmp_path)
    assert approved.returncode == 0, approved.stdout + approved.stderr
    resumed = horismos("resume", *defs, "--world", "approved.trig", *tools, "--instance",
                       waiting.group(1), "--out", "done.trig", "--trace", "called.jsonl",
                       cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    shown = horismos("trace", "show", "called.jsonl", *defs, cwd=tmp_path).stdout.splitlines()
    (at,) = (i for i, line in enumerate(shown) if "  :QueuePatient  " in line)
    assert "gate ok  completed" in shown[at]
    # who approved the call, and when, is in the step's event: a reviewer need not look the
    # fingerprint up in the world (the step event said neither)
    step = next(e for e in read_trace(tmp_path / "called.jsonl")
                if e["type"] == "step" and e["step"].endswith("#QueuePatient"))
    (given,) = step["approved"]
    assert given["fingerprint"] == fingerprint.group(1) and given["by"] == "Dr. Okafor"
    assert given["approval"].startswith("urn:horismos:activity:")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d.*", given["at"]), given["at"]
    assert shown[at + 1] == (f"    called on approval: fingerprint {fingerprint.group(1)}, "
                             f"approved by Dr. Okafor at {given['at']}")
    details = view_model(read_trace(tmp_path / "called.jsonl"), source="t")["details"]
    assert [d["approved"] for d in details if "approved" in d] == [[given]]
    # the trace replays the same; so does one recorded before steps said who approved:
    # without the member and the reads of it, hashed again
    never = {name: _never_called for name in ("ehr_client.assign_queue",
                                              "ehr_client.notify_nurse")}
    agent = Agent.from_files(*(tmp_path / d for d in defs), tools=never)
    assert not replay(tmp_path / "called.jsonl", agent).diverged
    prov = "http://www.w3.org/ns/prov#"
    noted = [["o", f"<{given['approval']}>", f"<{prov}startedAtTime>"],
             ["o", f"<{given['approval']}>", f"<{prov}wasAssociatedWith>"],
             ["o", f"<{given['approval']}:operator>", f"<{RDFS}label>"]]
    older = Trace()
    for e in read_trace(tmp_path / "called.jsonl"):
        if "approved" in e:
            del e["approved"]
            kept = [r for r in e["reads"] if r[:3] not in noted]
            assert len(e["reads"]) - len(kept) == 3, e["reads"]  # the three it added
            e["reads"] = kept
        older.emit(e["type"], {k: v for k, v in e.items()
                               if k not in ("type", "seq", "prev", "hash")})
    older.save(tmp_path / "older.jsonl")
    report = replay(tmp_path / "older.jsonl", agent)
    assert not report.diverged and report.complete, report
    shown = horismos("trace", "show", "older.jsonl", *defs, cwd=tmp_path).stdout.splitlines()
    (at,) = (i for i, line in enumerate(shown) if "  :QueuePatient  " in line)
    assert shown[at + 1] == f"    called on approval: fingerprint {fingerprint.group(1)}"


def test_graph_counts_every_trace_of_a_folder(tmp_path: Path) -> None:
    """`wake --traces DIR` writes a trace per instance. `graph --trace DIR` was refused ("this
    is a folder, not a file"), and `--trace DIR/*.jsonl` was "unrecognized arguments": the
    reviewer had to spell out a `--trace` per file to see where the instances went."""
    if shutil.which("dot") is None and not os.environ.get("CI"):
        pytest.skip("needs Graphviz's dot (apt-get install graphviz)")
    tools = ["--tools", str(ROOT / "examples" / "triage" / "ehr_client.py")]
    (tmp_path / "traces").mkdir()
    for focus in (":patient42", ":patient43"):
        p = horismos("run", *TRIAGE, *TRIAGE_WORLD, *tools, "--focus", focus, "--trace",
                     f"traces/{focus[1:]}.jsonl", cwd=tmp_path)
        assert p.returncode == 0, p.stdout + p.stderr
    (tmp_path / "traces" / "notes.txt").write_text("not a trace")
    drawn = horismos("graph", *TRIAGE, "--format", "svg", "--trace", "traces", "-o", "g.svg",
                     cwd=tmp_path)
    assert drawn.returncode == 0, drawn.stdout + drawn.stderr
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", (tmp_path / "g.svg").read_text())
    assert texts.count("ran ×2") == 2, texts  # both steps, once per traced run
    (tmp_path / "empty").mkdir()
    refused = horismos("graph", *TRIAGE, "--format", "svg", "--trace", "empty", cwd=tmp_path)
    assert refused.returncode == 2
    assert "empty: no *.jsonl traces in this folder" in refused.stderr, refused.stderr


def test_a_catalog_call_answered_under_its_key_shows_the_key(tmp_path: Path) -> None:
    """A retried `tools call --idempotency-key K` is answered the first call's answer and
    calls nothing; its trace holds a `replayed` event, which `trace show` printed as
    "replayed (event 1)": neither that nothing was called nor under which key."""
    store = ["--store", f"oxigraph:{tmp_path / 'st'}"]
    loaded = horismos("load", str(ROOT / "examples" / "triage" / "world.ttl"), *store,
                      cwd=tmp_path)
    assert loaded.returncode == 0, loaded.stdout + loaded.stderr
    call = ["tools", "call", "ehr.assign_queue", *TRIAGE, "--tools",
            str(ROOT / "examples" / "triage" / "ehr_client.py"), *store, "--args",
            '{"patient": ":patient42", "queue": ":urgent"}', "--idempotency-key", "order-7"]
    for trace in ("first.jsonl", "again.jsonl"):
        p = horismos(*call, "--trace", trace, cwd=tmp_path)
        assert p.returncode == 0, p.stdout + p.stderr
    shown = horismos("trace", "show", "again.jsonl", *TRIAGE, cwd=tmp_path)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    (line,) = (x for x in shown.stdout.splitlines() if x.startswith("  replayed "))
    assert line.startswith("  replayed :ehr.assign_queue: answered as the call first made "
                           "with its idempotency key order-7 ("), line
    assert line.endswith("), not called"), line
