"""Traces: JSON Lines an operator can trust — versioned, complete per step, hash-chained.

The header pins the world the run started from (its digest; a snapshot that reloads to it
when asked) and the definitions in force; each step event says what fired with what and what
came of it; an edited line is found and named.
"""

from __future__ import annotations

import hashlib
import json

import pytest
from conftest import EX, TRIAGE, step_events
from forked import horismos_forked
from hypothesis import given, settings
from hypothesis import strategies as st

from horismos import TraceTampered, TraceVersionError, World, read_trace
from horismos._outcomes import decode
from horismos._trace import TRACE_VERSION

STEP_FIELDS = {"step", "tool", "args", "outcomes", "effects", "gate", "status", "timings"}


def returned(event):
    """What the tool returned on each call of a step: its ``outcomes`` (kept once)."""
    return [decode(o["returned"]) for o in event.get("outcomes", []) if "returned" in o]


@pytest.fixture
def traced(build, recorder, tmp_path):
    """A completed two-step run (queue, then a rejected re-queue) and its saved trace. The
    tool is idempotent here: a rejected call of one that is not is held in doubt (it may have
    acted), and :Again2 would not call it again on the same patient."""
    defs = TRIAGE.replace('horis:timeout "2s" .', 'horis:timeout "2s" ; horis:idempotent true .')
    defs = defs.replace('horis:bind [ horis:arg "patient" ; horis:var "this" ] .',
                          'horis:bind [ horis:arg "patient" ; horis:var "this" ] ;'
                          ' horis:next :Again .') + """
:Again a horis:ActionStep ; horis:tool :t.assign ;
    horis:requires "?this :acuity ?queue ." ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] ;
    horis:onError :Again2 .
:Again2 a horis:ActionStep ; horis:tool :t.assign ;
    horis:requires "?this :acuity ?queue ." ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""
    refs = iter([{"ref": "R-1"}, {"ref": "bad-ref"}, {"ref": "R-3"}])
    agent, world = build(defs, tools={"assign": recorder.tool("assign",
                                                              lambda **_: next(refs))})
    digest_before = world.digest()
    run = agent.run(world, focus=str(EX.p1))
    path = run.trace.save(tmp_path / "run.jsonl")
    return agent, world, digest_before, run, path


def test_a_trace_is_json_lines_starting_with_a_versioned_header(traced):
    *_, run, path = traced

    lines = path.read_text(encoding="utf-8").splitlines()
    events = [json.loads(line) for line in lines]

    assert len(events) == len(run.trace.events) >= 5
    assert events[0]["type"] == "header"
    assert events[0]["trace_version"] == TRACE_VERSION == 4
    assert events[-1]["type"] == "end" and events[-1]["status"] == "completed"
    assert [e["type"] for e in events].count("step") == 3


def test_the_header_pins_the_world_and_definitions_the_run_started_from(traced):
    agent, world, digest_before, _, path = traced
    header = read_trace(path)[0]

    if world.store.shared:  # other processes write it meanwhile: `horismos digest` checks it
        assert header["world_digest"] is None
    else:
        assert header["world_digest"] == digest_before
        assert world.digest() != digest_before  # the run changed the world; the header did not
    assert header["workflow"] == str(EX.Triage)
    assert header["focus"] == [str(EX.p1)]
    assert header["definitions_digest"] == agent.definitions.digest
    assert header["definitions_digest"].startswith("rdfc:sha256:")
    assert "snapshot" not in header  # the world is not in the trace unless asked for


def test_a_snapshot_embedded_on_request_reloads_to_the_world_digest(build, recorder):
    agent, world = build(TRIAGE, tools={"assign": recorder.tool("assign", {"ref": "R-1"})})
    before = world.digest()

    run = agent.run(world, focus=str(EX.p1), trace_snapshot=True)

    snapshot = run.trace.header["snapshot"]
    assert snapshot["format"] == "application/n-quads"
    assert World.from_snapshot(snapshot["data"]).digest() == before


def test_a_snapshot_with_blank_nodes_reloads_to_the_same_digest(build, recorder):
    world_ttl = """
:urgent a :AcuityLevel .
:p1 a :Patient ; :acuity :urgent ; :address [ :city "Lyon" ; :zip "69001" ] .
:p1 :contact [ :phone "555" ] .
"""
    agent, world = build(TRIAGE, world_ttl,
                         tools={"assign": recorder.tool("assign", {"ref": "R-1"})})
    before = world.digest()

    run = agent.run(world, focus=str(EX.p1), trace_snapshot=True)

    header = run.trace.header
    assert header["world_digest"] == (None if world.store.shared else before)
    assert World.from_snapshot(header["snapshot"]["data"]).digest() == before


def test_every_step_event_says_what_fired_with_what_and_what_came_of_it(traced):
    *_, run, path = traced
    steps = [e for e in read_trace(path) if e["type"] == "step"]

    for event in steps:
        assert set(event) >= STEP_FIELDS, STEP_FIELDS - set(event)
        assert event["tool"] == str(EX["t.assign"])
        assert event["args"] == [{"patient": EX.p1.n3(), "queue": EX.urgent.n3()}]
        assert {"precondition", "tool", "gate"} <= set(event["timings"])
    first, rejected, third = steps
    assert first["step"] == str(EX.Queue) and first["status"] == "completed"
    assert returned(first) == [{"ref": "R-1"}] and "result" not in first  # stored once
    assert [EX.p1.n3(), EX.ref.n3(), '"R-1"'] in first["effects"]
    assert any(p == EX.queuedAt.n3() for _, p, _ in first["effects"])
    assert first["gate"] == {"conforms": True, "messages": []}
    assert first["graph"] == str(run.steps[0].graph)
    assert rejected["status"] == "rejected" and rejected["effects"] == []
    assert returned(rejected) == [{"ref": "bad-ref"}]
    assert rejected["gate"]["conforms"] is False
    (message,) = rejected["gate"]["messages"]
    assert message["focus"] == ":p1" and message["path"] == ":ref"
    assert rejected["error"]["type"] == "GateRejected"
    assert rejected["next"] == str(EX.Again2)
    assert third["status"] == "completed"


def test_a_blocked_step_event_names_the_failing_pattern(build, recorder):
    agent, world = build(TRIAGE, tools={"assign": recorder.tool("assign", {"ref": "R-1"})})

    run = agent.run(world, focus=str(EX.p3))

    (event,) = step_events(run)
    assert event["status"] == "blocked"
    assert event["precondition"] == {"holds": False, "failing": "?this :acuity ?queue ."}
    assert returned(event) == [] and event["effects"] == []


def test_an_untouched_trace_reads_back_event_for_event(traced):
    *_, run, path = traced

    events = read_trace(path)

    assert [e["type"] for e in events] == [e["type"] for e in run.trace.events]
    assert [e["seq"] for e in events] == list(range(len(events)))


def test_a_trace_streamed_during_the_run_reads_back(build, recorder, tmp_path):
    agent, world = build(TRIAGE, tools={"assign": recorder.tool("assign", {"ref": "R-1"})})
    streamed = tmp_path / "streamed.jsonl"

    run = agent.run(world, focus=str(EX.p1), trace=streamed)

    assert [e["type"] for e in read_trace(streamed)] == [e["type"] for e in run.trace.events]


def test_a_trace_that_cannot_be_written_is_refused_before_the_run_in_words(
        build, recorder, tmp_path):
    """``trace=`` a path in no folder raised the system's FileNotFoundError from the run; a
    folder, IsADirectoryError. Both are a UsageError now, as the command line says them, and
    nothing ran."""
    from horismos import UsageError

    called = recorder.tool("assign", {"ref": "R-1"})
    agent, world = build(TRIAGE, tools={"assign": called})
    for trace, said in ((tmp_path / "no" / "run.jsonl", "does not exist; create it first"),
                        (tmp_path, "this is a folder; give a file name in it")):
        with pytest.raises(UsageError, match=said):
            agent.run(world, focus=str(EX.p1), trace=trace)
    assert recorder.calls == []


def test_a_tool_given_that_is_no_function_is_refused_as_the_agent_is_made(build):
    """``tools={"assign": 5}`` made an agent, and its first call failed the step with
    "'int' object is not callable"."""
    from horismos import UsageError

    with pytest.raises(UsageError, match=r"tools\['assign'\] is int 5, not a function"):
        build(TRIAGE, tools={"assign": 5})


def test_a_batch_that_keeps_nothing_and_writes_no_trace_holds_no_events(build, recorder):
    """``run --all`` keeps no instance records (``keep=False``), yet with no ``--trace`` it
    held every event of the run in memory until it ended: ~34 MB per 1,000 instances of
    three steps (benchmarks/bench_run_memory.py). Such a run keeps no events; asking for them
    says how to keep a trace."""
    from horismos import TraceError

    agent, world = build(TRIAGE, tools={"assign": recorder.tool("assign", {"ref": "R-1"})})
    run = agent.run(world, all=True, keep=False)
    assert sum(run.counts.values()) == 3 and len(run.trace) > 3  # chained and counted
    assert run.trace._events == [] and run.trace._lines == []
    with pytest.raises(TraceError, match=r"kept no trace.*give trace=PATH"):
        run.trace.events  # noqa: B018
    kept = agent.run(build(TRIAGE, tools={"assign": recorder.tool("assign", {"ref": "R-2"})})[1],
                     all=True)
    assert len(kept.trace.events) == len(run.trace)  # the same run, its events kept


def _edit(path, line_no: int, old: str, new: str) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    assert old in lines[line_no - 1]
    lines[line_no - 1] = lines[line_no - 1].replace(old, new, 1)
    path.write_text("".join(lines), encoding="utf-8")


def test_editing_one_character_of_a_middle_line_is_caught_on_that_line(traced):
    *_, path = traced
    lines = path.read_text(encoding="utf-8").splitlines()
    middle = next(n for n, line in enumerate(lines, 1)
                  if '"R-1"' in line and json.loads(line)["type"] == "step")
    assert 1 < middle < len(lines)

    _edit(path, middle, '"R-1"', '"R-2"')

    with pytest.raises(TraceTampered) as caught:
        read_trace(path)
    assert caught.value.line == middle
    assert f":{middle}:" in str(caught.value)


def test_trace_show_prints_up_to_an_edited_line_then_says_where_it_is(traced):
    """trace show reads a trace event by event (a run's events in memory were ~9x its
    file): what it prints before an edited event was checked, and the edit stops it there."""
    *_, path = traced
    lines = path.read_text(encoding="utf-8").splitlines()
    middle = next(n for n, line in enumerate(lines, 1)
                  if '"R-1"' in line and json.loads(line)["type"] == "step")
    whole = horismos_forked(".", "trace", "show", str(path), timeout=60)
    assert whole.returncode == 0, whole.stderr
    _edit(path, middle, '"R-1"', '"R-2"')

    done = horismos_forked(".", "trace", "show", str(path), timeout=60)

    assert done.returncode != 0
    assert f"{path}:{middle}: this event was edited after it was written" in done.stderr
    assert "Traceback" not in done.stderr
    shown = done.stdout.splitlines()
    assert shown and whole.stdout.splitlines()[: len(shown)] == shown  # the events before it
    assert len(shown) < len(whole.stdout.splitlines())  # and none from the edited one on


def test_a_trace_with_windows_line_ends_reads_as_written(traced):
    *_, path = traced
    events = read_trace(path)
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert read_trace(path) == events


def test_editing_the_last_line_is_caught(traced):
    *_, path = traced
    last = len(path.read_text(encoding="utf-8").splitlines())

    _edit(path, last, '"completed"', '"failed"')

    with pytest.raises(TraceTampered) as caught:
        read_trace(path)
    assert caught.value.line == last


def test_removing_a_middle_line_is_caught(traced):
    *_, path = traced
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    del lines[2]
    path.write_text("".join(lines), encoding="utf-8")

    with pytest.raises(TraceTampered) as caught:
        read_trace(path)
    assert caught.value.line == 3


def test_an_unknown_trace_version_is_refused(traced):
    *_, path = traced
    _edit(path, 1, f'"trace_version":{TRACE_VERSION}', '"trace_version":99')

    with pytest.raises(TraceVersionError, match="99"):
        read_trace(path)


def _rechain_without_own_hashes(path) -> list[str]:
    """The trace as written before events carried their own hash: ``prev`` chains whole lines."""
    prev, lines = "sha256:" + "0" * 64, []
    for event in read_trace(path):
        event = {k: v for k, v in event.items() if k != "hash"} | {"prev": prev}
        line = json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        prev = "sha256:" + hashlib.sha256(line.encode()).hexdigest()
        lines.append(line)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return lines


def test_a_trace_without_own_hashes_is_refused(traced):
    # Without its own hash an edit of the last event could never be found: not a weaker
    # check that passes silently, a refusal.
    *_, path = traced
    _rechain_without_own_hashes(path)

    with pytest.raises(TraceTampered, match="has no hash") as caught:
        read_trace(path)
    assert caught.value.line == 1


def test_stripping_an_events_own_hash_is_caught_on_that_line(traced):
    *_, path = traced
    lines = path.read_text(encoding="utf-8").splitlines()
    event = json.loads(lines[2])
    del event["hash"]
    lines[2] = json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")

    with pytest.raises(TraceTampered) as caught:
        read_trace(path)
    assert caught.value.line == 3


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=6), _JSON, max_size=6))
def test_an_event_serialised_once_is_the_line_serialising_it_twice_wrote(fields):
    """A trace line is written with one serialisation (its hash spliced in); it is the text
    hashing the event and then serialising it with its hash gave, byte for byte — by orjson,
    or by the stdlib where orjson is not used (tests/test_trace_lines.py)."""
    from horismos._trace import _PLACEHOLDER, _digest, _hashed_line, _line, _quick_line

    def serialised(e):
        quick = _quick_line(e) if _PLACEHOLDER not in _line(e) else None
        return quick.decode() if quick is not None else _line(e)

    event = {k: v for k, v in fields.items() if k != "hash"}
    spliced = dict(event)
    line = _hashed_line(spliced)
    twice = {**event, "hash": _digest(serialised(event))}
    assert line.decode() == serialised(twice)
    assert spliced == twice
