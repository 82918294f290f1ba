"""Replay: recorded triage runs replayed through the live runner, diverging where they should."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from forked import horismos_forked
from rdflib import Graph, URIRef

from horismos import (
    Agent,
    Divergence,
    ReplayReport,
    Trace,
    TraceTampered,
    TraceVersionError,
    World,
    iter_trace,
    read_trace,
    replay,
)
from horismos import _replay as replay_module
from horismos._trace import TRACE_VERSION
from horismos._trace import _digest as _trace_digest
from horismos._trace import _line as _trace_line

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent / "fixtures" / "traces"
RECORDED = HERE / "recorded"
"""Traces as runs record them by default: what each run read of the world, not the world."""
SNAPSHOT = RECORDED / "snapshot"
"""The same runs recorded with their (small) world embedded: replay decides against it."""
DEFINITIONS = [HERE / "definitions" / "triage.ttl", HERE / "definitions" / "ehr.ttl"]
VARIANT = [HERE / "variants" / "triage-urgent-only.ttl", HERE / "definitions" / "ehr.ttl"]
SAME = ["triage-all.jsonl", "triage-patient42.jsonl", "triage-failures.jsonl",
        "triage-timeout.jsonl"]
EHR = "http://example.org/ehr#"


class Calls:
    """The triage tools, counting every call; ``nurse`` is who the pager says it reached."""

    def __init__(self, nurse: str | None = None) -> None:
        self.counts = {"assign_queue": 0, "notify_nurse": 0}
        self.nurse = nurse
        self.numbers = 0

    def assign_queue(self, patient: URIRef, queue: URIRef) -> dict[str, Any]:
        self.counts["assign_queue"] += 1
        self.numbers += 1
        return {"queueRef": f"Q-{str(queue).rsplit('#', 1)[-1].upper()}-{self.numbers}"}

    def notify_nurse(self, patient: URIRef, nurse: URIRef, ref: str) -> dict[str, Any]:
        self.counts["notify_nurse"] += 1
        return {"assignedNurse": URIRef(self.nurse) if self.nurse else nurse}

    def agent(self, definitions: list[Path] = DEFINITIONS) -> Agent:
        return Agent.from_files(*definitions, tools={
            "ehr_client.assign_queue": self.assign_queue,
            "ehr_client.notify_nurse": self.notify_nurse})


def step_events(path: Path) -> list[dict[str, Any]]:
    return [e for e in read_trace(path) if e["type"] == "step"]


def rechain(events: list[dict[str, Any]], path: Path) -> Path:
    """Write ``events`` as a trace with a valid hash chain (what a careful forger would do)."""
    trace = Trace()
    for e in events:
        trace.emit(e["type"], **{k: v for k, v in e.items()
                                 if k not in ("type", "seq", "prev", "hash")})
    return trace.save(path)


# -- recorded fixtures --------------------------------------------------------------------

@pytest.mark.parametrize("name", SAME)
def test_recorded_trace_replays_the_same_against_its_world(name: str) -> None:
    calls = Calls()
    report = replay(SNAPSHOT / name, calls.agent())
    assert isinstance(report, ReplayReport)
    assert not report.diverged, report.first_divergence
    assert report.first_divergence is None
    assert report.final_digest_matches is True
    assert report.definitions_changed is False
    assert report.steps == len(step_events(SNAPSHOT / name))
    assert calls.counts == {"assign_queue": 0, "notify_nurse": 0}
    assert str(report).startswith("same") and "final world digest matches" in str(report)


@pytest.mark.parametrize("name", SAME)
def test_recorded_trace_replays_the_same_from_what_it_read(name: str) -> None:
    calls = Calls()
    report = replay(RECORDED / name, calls.agent())
    assert not report.diverged, report.first_divergence
    assert report.final_digest_matches is None  # no world to digest: only what the run read
    assert report.steps == len(step_events(RECORDED / name))
    assert calls.counts == {"assign_queue": 0, "notify_nurse": 0}
    assert str(report).startswith("same") and "answered as recorded" in str(report)
    assert "snapshot" not in read_trace(RECORDED / name)[0]


@pytest.mark.parametrize("folder", [RECORDED, SNAPSHOT])
def test_recorded_errors_and_timeouts_replay_without_calling_anything(folder: Path) -> None:
    failures = step_events(folder / "triage-failures.jsonl")
    assert [e["status"] for e in failures] == ["rejected", "failed", "blocked"]
    timeout = step_events(folder / "triage-timeout.jsonl")[-1]
    assert timeout["status"] == "timed_out"
    assert timeout["outcomes"] == [{"timeout": True}, {"timeout": True}]  # one retry
    calls = Calls()
    for name in ("triage-failures.jsonl", "triage-timeout.jsonl"):
        report = replay(folder / name, calls.agent())
        assert not report.diverged, report.first_divergence
    assert calls.counts == {"assign_queue": 0, "notify_nurse": 0}


def test_diverging_fixture_names_the_event_and_what_changed() -> None:
    report = replay(SNAPSHOT / "urgent-only-diverges.jsonl", Calls().agent())
    assert report.diverged
    assert report.definitions_changed  # said up front, and replayed anyway
    d = report.first_divergence
    assert isinstance(d, Divergence)
    event = read_trace(SNAPSHOT / "urgent-only-diverges.jsonl")[d.event]
    assert (event["type"], event["step"]) == ("step", EHR + "NotifyNurse")
    assert d.field == "precondition"
    assert d.recorded["holds"] is False and d.now["holds"] is True
    assert report.steps == 3  # both steps for patient42, QueuePatient for patient43
    assert report.final_digest_matches is None
    text = str(report)
    assert text.startswith("DIVERGED")
    assert f"event {d.event} (line {d.event + 1})" in text
    assert ":NotifyNurse for :patient43" in text


def test_without_its_world_a_changed_precondition_diverges_where_it_reads_anew() -> None:
    """The recording holds the answers to the recorded run's questions; a precondition that
    asks another question has no recorded answer, and the replay says so at that step."""
    for trace, agent in ((RECORDED / "urgent-only-diverges.jsonl", Calls().agent()),
                         (RECORDED / "triage-all.jsonl", Calls().agent(VARIANT))):
        report = replay(trace, agent)
        d = report.first_divergence
        assert d is not None and d.field == "reads"
        first = next(e for e in step_events(trace) if e["step"] == EHR + "NotifyNurse")
        assert d.event == first["seq"]  # its first use: the answer to another question is not
        assert "--trace-snapshot" in str(report) and ":NotifyNurse for :patient42" in str(report)
        assert report.definitions_changed


def test_changed_precondition_diverges_at_the_first_affected_step() -> None:
    report = replay(SNAPSHOT / "triage-all.jsonl", Calls().agent(VARIANT))
    d = report.first_divergence
    assert d is not None and d.field == "precondition"
    assert read_trace(SNAPSHOT / "triage-all.jsonl")[d.event]["step"] == EHR + "NotifyNurse"
    assert d.recorded["holds"] is True and d.now["holds"] is False


@pytest.mark.parametrize("folder", [RECORDED, SNAPSHOT])
def test_changed_definitions_that_behave_the_same_are_reported_but_do_not_diverge(
        tmp_path: Path, folder: Path) -> None:
    changed = tmp_path / "triage.ttl"
    changed.write_text(DEFINITIONS[0].read_text() + '\n:Triage rdfs:comment "reviewed" .\n')
    report = replay(folder / "triage-all.jsonl", Calls().agent([changed, DEFINITIONS[1]]))
    assert report.definitions_changed
    assert not report.diverged
    assert report.final_digest_matches is (True if folder == SNAPSHOT else None)


def test_a_trace_replays_the_same_against_the_folders_that_hold_its_files(
        tmp_path: Path) -> None:
    """docs/guide/replay-in-ci.md: recorded with triage.ttl and ehr.ttl, replayed against
    workflows/ ontologies/ (as CI does), it says the definitions changed and replays `same`.
    It diverged on its first gate read: ontologies/ holds horis-shapes.ttl, whose authoring
    shapes then judged each patient as domain shapes (does it have a horis:adapter?)."""
    files = Calls().agent([ROOT / "workflows" / "triage.ttl", ROOT / "ontologies" / "ehr.ttl"])
    files.run(World.from_files(ROOT / "examples" / "triage" / "world.ttl"), all=True,
              trace=tmp_path / "run.jsonl")
    report = replay(tmp_path / "run.jsonl", Agent.from_files(ROOT / "workflows",
                                                             ROOT / "ontologies"))
    assert report.definitions_changed
    assert not report.diverged, report.first_divergence


# -- live runs, replayed ------------------------------------------------------------------

def test_a_live_run_replays_from_file_and_from_memory_without_calling_its_tools(
        tmp_path: Path) -> None:
    calls = Calls()
    run = calls.agent().run(World.from_files(HERE / "world.ttl"), all=True,
                            trace=tmp_path / "run.jsonl")
    assert calls.counts == {"assign_queue": 2, "notify_nurse": 2}
    snap = calls.agent().run(World.from_files(HERE / "world.ttl"), all=True,
                             trace=tmp_path / "snap.jsonl", trace_snapshot=True)
    replayer = Calls()
    for trace in (tmp_path / "run.jsonl", run.trace, tmp_path / "snap.jsonl", snap.trace):
        report = replay(trace, replayer.agent())
        assert not report.diverged and report.complete, str(report)
        assert report.final_digest_matches is (True if trace in (tmp_path / "snap.jsonl",
                                                                 snap.trace) else None)
        assert report.substituted == 4
    assert replayer.counts == {"assign_queue": 0, "notify_nurse": 0}


def test_a_rejection_by_the_domain_shapes_says_so_and_replays_as_recorded(
        tmp_path: Path) -> None:
    """The instance it fails holds the error's words: a trace recorded when they said "breaks
    its declared effect" (triage-failures.jsonl) replays to its recorded digest, and one
    recorded now with the shapes named replays the same."""
    calls = Calls()
    calls.assign_queue = lambda patient, queue: {"queueRef": "queue 7"}  # type: ignore[method-assign]
    run = calls.agent().run(World.from_files(HERE / "world.ttl"), focus=EHR + "patient42",
                            trace=tmp_path / "run.jsonl", trace_snapshot=True)
    assert run.status == "failed"
    assert str(run.steps[0].error).startswith(
        "the result of ehr.assign_queue breaks the domain shapes: :patient42 :queueRef: ")
    assert read_trace(tmp_path / "run.jsonl")[0]["names_shapes"] is True
    for trace in (tmp_path / "run.jsonl", SNAPSHOT / "triage-failures.jsonl"):
        report = replay(trace, Calls().agent())
        assert not report.diverged and report.final_digest_matches, str(report)


def test_the_definitions_digest_ignores_file_order_and_blank_node_labels(tmp_path: Path) -> None:
    """What a trace's header records, so replay can say whether the definitions changed. Its
    blank nodes (every horis:takes, horis:bind and effect) are labelled anew at each parse."""
    from horismos import load_definitions
    from horismos._definitions import legacy_definitions_digest, same_definitions

    relabelled = tmp_path / "triage.nt"
    relabelled.write_text(Graph().parse(DEFINITIONS[0]).serialize(format="nt"), encoding="utf-8")
    first = load_definitions(DEFINITIONS)
    assert first.digest.startswith("rdfc:sha256:")
    assert load_definitions([DEFINITIONS[1], relabelled]).digest == first.digest
    edited = tmp_path / "edited.ttl"
    edited.write_text(DEFINITIONS[0].read_text(encoding="utf-8").replace('"5s"', '"6s"'),
                      encoding="utf-8")
    assert load_definitions([edited, DEFINITIONS[1]]).digest != first.digest
    # a digest recorded before (rdflib's canonical graph) is still recognised for what it is
    legacy = legacy_definitions_digest(first.graph)
    assert same_definitions(first, legacy) and same_definitions(first, first.digest)
    assert not same_definitions(load_definitions([edited, DEFINITIONS[1]]), legacy)


def test_every_clock_value_and_id_is_recorded_in_its_event(tmp_path: Path) -> None:
    run = Calls().agent().run(World.from_files(HERE / "world.ttl"), focus=EHR + "patient42")
    header, instance, first, _, end = run.trace.events
    assert header["clock"] == [header["started"]]
    assert instance["instance"].endswith(instance["ids"][0])
    assert first["graph"].endswith(first["ids"][0])
    assert len(first["clock"]) == 2  # started, ended
    assert first["effects"][1][2].startswith(f'"{first["clock"][0]}"')  # horis:now
    assert end["world_digest"].startswith("lthash16:")


def test_reexecuting_idempotent_tools_calls_only_them_and_compares(tmp_path: Path) -> None:
    trace = RECORDED / "triage-all.jsonl"
    calls = Calls()
    report = replay(trace, calls.agent(), reexecute_idempotent=True)
    assert not report.diverged, report.first_divergence
    assert (report.substituted, report.reexecuted) == (2, 2)
    assert calls.counts == {"assign_queue": 0, "notify_nurse": 2}  # never the non-idempotent

    report = replay(trace, Calls(nurse=EHR + "nurse8").agent(), reexecute_idempotent=True)
    d = report.first_divergence
    assert d is not None and d.field == "outcomes"
    assert read_trace(trace)[d.event]["step"] == EHR + "NotifyNurse"
    assert EHR + "nurse8" in json.dumps(d.now)


def test_reexecuting_is_withheld_when_the_definitions_changed_since_recording(
        tmp_path: Path) -> None:
    """The trace does not say which tools were idempotent when it was recorded: the
    definitions do. Replayed with definitions that since declare assign_queue idempotent, it
    was called again, and the run had called it as a tool that must act once. With changed
    definitions nothing is re-executed, and the report says why."""
    edited = tmp_path / "triage.ttl"
    text = DEFINITIONS[0].read_text()
    assert text.count("horis:idempotent false") == 1
    edited.write_text(text.replace("horis:idempotent false", "horis:idempotent true"))
    calls = Calls()
    report = replay(RECORDED / "triage-all.jsonl", calls.agent([edited, DEFINITIONS[1]]),
                    reexecute_idempotent=True)
    assert not report.diverged, report.first_divergence
    assert report.definitions_changed and report.reexecute_withheld
    assert calls.counts == {"assign_queue": 0, "notify_nurse": 0}
    assert (report.substituted, report.reexecuted) == (4, 0)
    assert "no tool was re-executed" in str(report)


# -- tamper evidence and versions -----------------------------------------------------------

def test_an_edited_trace_is_refused_naming_its_line(tmp_path: Path) -> None:
    lines = (RECORDED / "triage-all.jsonl").read_text().splitlines(keepends=True)
    assert "Q-URGENT-1" in lines[2]
    lines[2] = lines[2].replace("Q-URGENT-1", "Q-URGENT-9")
    edited = tmp_path / "edited.jsonl"
    edited.write_text("".join(lines))
    with pytest.raises(TraceTampered) as e:
        replay(edited, Calls().agent())
    assert e.value.line == 3 and f"{edited}:3:" in str(e.value)

    del lines[2]
    (tmp_path / "cut.jsonl").write_text("".join(lines))
    with pytest.raises(TraceTampered) as e:
        replay(tmp_path / "cut.jsonl", Calls().agent())
    assert e.value.line == 3


EDITED_DIGEST = "sha256:" + "1" * 64


def end_edited(trace: Path, out: Path) -> int:
    """``trace`` with its end event's world digest edited (not re-hashed) written to ``out``;
    how many lines it has."""
    lines = trace.read_text().splitlines(keepends=True)
    end = json.loads(lines[-1])
    end["world_digest"] = EDITED_DIGEST
    lines[-1] = json.dumps(end, sort_keys=True, separators=(",", ":")) + "\n"
    out.write_text("".join(lines))
    return len(lines)


def test_an_edited_last_event_is_refused_and_a_rehashed_one_diverges(tmp_path: Path) -> None:
    lines = end_edited(SNAPSHOT / "triage-all.jsonl", tmp_path / "end.jsonl")
    with pytest.raises(TraceTampered) as e:
        replay(tmp_path / "end.jsonl", Calls().agent())
    assert e.value.line == lines

    events = read_trace(SNAPSHOT / "triage-all.jsonl")  # with its world, the digest is checked
    events[-1]["world_digest"] = EDITED_DIGEST
    report = replay(rechain(events, tmp_path / "rehashed.jsonl"), Calls().agent())
    assert report.first_divergence is not None
    assert report.first_divergence.field == "world_digest"
    assert report.final_digest_matches is False


def test_an_edit_past_the_calls_is_found_before_any_tool_is_called_again(tmp_path: Path) -> None:
    """Replay reads a trace as it goes; one that calls tools again reads it all first."""
    lines = end_edited(RECORDED / "triage-all.jsonl", tmp_path / "end.jsonl")
    for reexecute in (True, False):
        calls = Calls()
        with pytest.raises(TraceTampered) as e:
            replay(tmp_path / "end.jsonl", calls.agent(), reexecute_idempotent=reexecute)
        assert e.value.line == lines
        assert calls.counts == {"assign_queue": 0, "notify_nurse": 0}


def test_a_long_trace_replays_holding_a_few_events_at_a_time(tmp_path: Path) -> None:
    """A run's trace is ~7x its file as JSON values: replay reads each event as it gets there."""
    read: list[int] = []

    def counted(events: Any) -> Any:
        for n, event in enumerate(events):
            read.append(n)
            yield event

    held = []
    original = replay_module.Recorded.get

    def get(self: Any, index: int) -> Any:
        held.append(len(self._kept))
        return original(self, index)

    events = read_trace(RECORDED / "triage-all.jsonl")
    many = rechain([events[0], *(events[1:-1] * 40), events[-1]], tmp_path / "long.jsonl")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(replay_module, "iter_trace", lambda path: counted(iter_trace(path)))
        mp.setattr(replay_module.Recorded, "get", get)
        report = replay(many, Calls().agent())
    assert report.steps == 40 * len(step_events(RECORDED / "triage-all.jsonl"))
    assert len(read) == len(read_trace(many))  # every event read, each once
    assert max(held) <= 6  # the header, a resume, and the few at the replay's position


def test_an_unknown_trace_version_is_refused(tmp_path: Path) -> None:
    events = read_trace(RECORDED / "triage-patient42.jsonl")
    events[0]["trace_version"] = 99
    path = rechain(events, tmp_path / "future.jsonl")
    with pytest.raises(TraceVersionError, match="trace_version 99"):
        replay(path, Calls().agent())


def test_a_rechained_forgery_still_diverges(tmp_path: Path) -> None:
    events = read_trace(RECORDED / "triage-patient42.jsonl")
    events[2]["outcomes"] = [{"returned": {"@map": {"queueRef": "Q-URGENT-999"}}}]
    report = replay(rechain(events, tmp_path / "forged.jsonl"), Calls().agent())
    d = report.first_divergence
    assert d is not None and d.event == 2 and d.field == "effects"


@pytest.mark.parametrize("keep", [3, 5, -1])
def test_a_trace_without_its_end_replays_as_far_as_it_goes_and_says_so(tmp_path: Path,
                                                                       keep: int) -> None:
    """What a run killed mid-way leaves (or a file cut short): a prefix whose chain holds."""
    lines = (RECORDED / "triage-all.jsonl").read_text().splitlines(keepends=True)[:keep]
    (tmp_path / "short.jsonl").write_text("".join(lines))
    calls = Calls()
    report = replay(tmp_path / "short.jsonl", calls.agent())
    assert not report.diverged and report.first_divergence is None
    assert report.complete is False and report.final_digest_matches is None
    assert report.steps == len(step_events(tmp_path / "short.jsonl"))
    assert calls.counts == {"assign_queue": 0, "notify_nurse": 0}
    assert str(report).startswith("STOPPED") and "no end event" in str(report)


def test_a_last_line_cut_off_as_it_was_written_is_where_the_trace_stops(tmp_path: Path) -> None:
    text = (RECORDED / "triage-all.jsonl").read_text()
    lines = text.splitlines(keepends=True)
    torn = "".join(lines[:4]) + lines[4][:40]  # the process died writing line 5
    (tmp_path / "torn.jsonl").write_text(torn)
    assert len(read_trace(tmp_path / "torn.jsonl")) == 4
    report = replay(tmp_path / "torn.jsonl", Calls().agent())
    assert not report.diverged and not report.complete
    # cut anywhere but at the end, the same bytes are an edit
    (tmp_path / "middle.jsonl").write_text(torn + "\n" + "".join(lines[5:]))
    with pytest.raises(TraceTampered) as e:
        replay(tmp_path / "middle.jsonl", Calls().agent())
    assert e.value.line == 5


# -- reading traces -----------------------------------------------------------------------

PROV_STEPS = """
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX horis: <https://w3id.org/horismos#>
SELECT ?act ?plan ?agent ?start ?end ?generated WHERE {
  ?act a prov:Activity ; prov:startedAtTime ?start ; prov:endedAtTime ?end ;
       prov:qualifiedAssociation [ prov:hadPlan ?plan ; prov:agent ?agent ] .
  OPTIONAL { ?act prov:generated ?generated }
}"""


def test_prov_export_loads_and_answers_sparql(tmp_path: Path) -> None:
    out = tmp_path / "run.ttl"
    done = _cli("trace", "export", RECORDED / "triage-all.jsonl", "--format", "prov",
                "--output", out)
    assert done.returncode == 0, done.stderr
    g = Graph().parse(out, format="turtle")
    rows = list(g.query(PROV_STEPS))
    steps = step_events(RECORDED / "triage-all.jsonl")
    assert len(rows) == len(steps)
    by_graph = {str(r.generated): r for r in rows if r.generated is not None}
    first = steps[0]
    row = by_graph[first["graph"]]
    assert (str(row.plan), str(row.agent)) == (first["step"], first["tool"])
    assert row.start.toPython() <= row.end.toPython()
    used = {str(u) for u in g.objects(row.act, URIRef("http://www.w3.org/ns/prov#used"))}
    assert {EHR + "patient42", EHR + "urgent"} <= used


@pytest.mark.parametrize("name", [*SAME, "urgent-only-diverges.jsonl"])
def test_prov_export_gives_each_instance_the_status_it_ended_in(name: str) -> None:
    """The end event counts how instances ended; the export says which ended how (it wrote
    ``<completed> horis:status horis:Failed``, reading the counts as instances)."""
    events = read_trace(RECORDED / name)
    done = _cli("trace", "export", RECORDED / name)
    assert done.returncode == 0, done.stderr
    g = Graph().parse(data=done.stdout, format="turtle")
    status = {str(s): str(o).rsplit("#", 1)[-1].lower()
              for s, o in g.subject_objects(URIRef("https://w3id.org/horismos#status"))}
    started = {e["instance"] for e in events if e["type"] == "instance"}
    assert set(status) == started
    counted: dict[str, int] = {}
    for s in status.values():
        counted[s] = counted.get(s, 0) + 1
    assert counted == events[-1]["instances"]


def _edited_near_its_end(tmp_path: Path) -> tuple[Path, int]:
    """A recorded trace with its last but one event edited; that event's line."""
    lines = (RECORDED / "triage-all.jsonl").read_text().splitlines(keepends=True)
    lines[-2] = lines[-2].replace('"seq":', '"seq": ', 1)
    (tmp_path / "edited.jsonl").write_text("".join(lines))
    return tmp_path / "edited.jsonl", len(lines) - 1


def test_an_export_stopped_by_an_edit_leaves_its_output_as_it_was(tmp_path: Path) -> None:
    """The export streams, each event's PROV written once read and checked: an edit found
    on the way must not leave half an export where the last good one was."""
    edited, line = _edited_near_its_end(tmp_path)
    out = tmp_path / "run.ttl"
    out.write_text("the last good export\n")
    done = _cli("trace", "export", edited, "--output", out)
    assert done.returncode != 0
    assert f"edited.jsonl:{line}:" in done.stderr and "Traceback" not in done.stderr
    assert out.read_text() == "the last good export\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["edited.jsonl", "run.ttl"]


def _rehashed_with_a_space_in_a_step(tmp_path: Path) -> tuple[Path, str]:
    """A recorded trace whose event 8 names a step with a space in its IRI, its hash chain
    made again from there: the trace reads as whole, only its export stops on that IRI;
    the trace and what its error says."""
    events = [json.loads(line) for line in
              (RECORDED / "triage-all.jsonl").read_text().splitlines()]
    events[8]["step"] = "http://example.org/ehr#Notify Nurse"
    for i in range(8, len(events)):
        events[i]["prev"] = events[i - 1]["hash"]
        del events[i]["hash"]
        events[i]["hash"] = _trace_digest(_trace_line(events[i]))
    (tmp_path / "rehashed.jsonl").write_text("".join(_trace_line(e) + "\n" for e in events))
    assert len(read_trace(tmp_path / "rehashed.jsonl")) == len(events)
    return tmp_path / "rehashed.jsonl", "rehashed.jsonl: event 8 (line 9"


def _edited_near_its_end_said(tmp_path: Path) -> tuple[Path, str]:
    edited, line = _edited_near_its_end(tmp_path)
    return edited, f"edited.jsonl:{line}:"


@pytest.mark.parametrize("case", [_edited_near_its_end_said, _rehashed_with_a_space_in_a_step])
def test_an_export_to_stdout_stopped_by_an_edit_writes_nothing(
    tmp_path: Path, case: Callable[[Path], tuple[Path, str]]
) -> None:
    """``trace export T > run.ttl`` printed the Turtle of the events before the edit, then
    the error: the file piped into held half a document that parses. A trace whose chain
    holds but whose step IRI Turtle cannot write was stopped only once Turtle was out."""
    trace, said = case(tmp_path)
    done = _cli("trace", "export", trace)
    assert done.returncode == 2
    assert said in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""


# -- command line -------------------------------------------------------------------------

V2 = HERE / "v2"
"""Version-2 traces recorded by the runtime before version 3 (fixtures/traces/v2/README.md)."""


@pytest.mark.parametrize("name", ["triage-all-snapshot.jsonl", "triage-failures-snapshot.jsonl"])
def test_a_version_2_trace_replays_to_its_recorded_digests(name: str) -> None:
    """Its run wrote four activity quads a version-3 run leaves out; its replay writes them
    again, so the world reaches the final digest it recorded."""
    assert read_trace(V2 / name)[0]["trace_version"] == 2
    report = replay(V2 / name, Calls().agent())
    assert not report.diverged, report.first_divergence
    assert report.final_digest_matches is True


def test_a_version_2_trace_replays_from_what_it_read_and_on_the_cli() -> None:
    assert not replay(V2 / "triage-all.jsonl", Calls().agent()).diverged
    done = _cli("replay", V2, HERE / "definitions")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("same") == 3, done.stdout


def test_a_run_records_the_current_version_and_replays_to_its_digests(tmp_path: Path) -> None:
    Calls().agent().run(World.from_files(HERE / "world.ttl"), all=True,
                        trace=tmp_path / "now.jsonl", trace_snapshot=True)
    assert read_trace(tmp_path / "now.jsonl")[0]["trace_version"] == TRACE_VERSION
    report = replay(tmp_path / "now.jsonl", Calls().agent())
    assert not report.diverged, report.first_divergence
    assert report.final_digest_matches is True


def _cli(*args: Any) -> subprocess.CompletedProcess[str]:
    return horismos_forked(ROOT, *map(str, args), timeout=300)


def test_cli_replays_one_trace_and_exits_0_when_same() -> None:
    done = _cli("replay", RECORDED / "triage-all.jsonl", HERE / "definitions")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("same")


def test_cli_batch_replay_prints_one_line_per_trace_and_exits_1_on_any_divergence() -> None:
    done = _cli("replay", RECORDED, HERE / "definitions")
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == len(list(RECORDED.glob("*.jsonl")))
    diverged = [line for line in lines if line.startswith("DIVERGED")]
    assert len(diverged) == 1 and "urgent-only-diverges.jsonl" in diverged[0]
    assert all(line.startswith("same") for line in lines if line not in diverged)


def test_cli_exits_1_for_a_trace_whose_recording_stopped(tmp_path: Path) -> None:
    lines = (RECORDED / "triage-all.jsonl").read_text().splitlines(keepends=True)
    (tmp_path / "stopped.jsonl").write_text("".join(lines[:-1]))
    done = _cli("replay", tmp_path / "stopped.jsonl", HERE / "definitions")
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.startswith("STOPPED")
    shown = _cli("trace", "show", tmp_path / "stopped.jsonl")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[-1].startswith("no end event: the recording stopped here")
    full = _cli("trace", "show", RECORDED / "triage-all.jsonl")
    assert "no end event" not in full.stdout


def test_cli_says_up_front_that_the_definitions_changed() -> None:
    done = _cli("replay", SNAPSHOT / "triage-all.jsonl", *VARIANT)
    assert done.returncode == 1
    assert "definitions changed since recording" in done.stdout
    assert "precondition" in done.stdout
    done = _cli("replay", RECORDED / "triage-all.jsonl", *VARIANT)
    assert done.returncode == 1
    assert "definitions changed since recording" in done.stdout
    assert "reads" in done.stdout and "--trace-snapshot" in done.stdout


def test_a_trace_of_the_first_format_is_refused_saying_how_to_re_record(tmp_path: Path) -> None:
    events = read_trace(RECORDED / "triage-patient42.jsonl")
    events[0]["trace_version"] = 1
    path = rechain(events, tmp_path / "v1.jsonl")
    with pytest.raises(TraceVersionError, match="Re-record it") as e:
        replay(path, Calls().agent())
    assert "--trace" in str(e.value)
    done = _cli("replay", path, HERE / "definitions")
    assert done.returncode == 1 and "Re-record it" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def test_cli_trace_show_prints_a_timeline() -> None:
    done = _cli("trace", "show", RECORDED / "triage-failures.jsonl", HERE / "definitions")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert ":QueuePatient  :ehr.assign_queue(patient=:patient42, queue=:urgent)" in out
    assert "gate rejected: a queue reference looks like" in out
    assert "raised RuntimeError: EHR unavailable (503)" in out
    assert "end: failed (1 blocked, 2 failed)" in out


def test_a_trace_of_a_workflow_the_definitions_lack_says_which_files_to_give() -> None:
    """Not "workflow was … when recorded, is null now": the definitions given lack it."""
    lab = Agent.from_files(ROOT / "workflows" / "lab_review.ttl", ROOT / "ontologies" / "lab.ttl")
    report = replay(RECORDED / "triage-patient42.jsonl", lab)
    assert report.diverged and report.first_divergence is not None
    message = str(report.first_divergence)
    assert "which the definitions given do not declare" in message, message
    assert "null" not in message


def test_a_read_missing_from_an_unchanged_definitions_trace_does_not_blame_them(
        tmp_path: Path) -> None:
    """The trace lacks an answer the replay needs (here: removed, the chain recomputed),
    under the very definitions it was recorded with. The report said "the definitions now
    read the world other than the recorded run did" and to record with --trace-snapshot to
    replay changed definitions: a reviewer went looking for a change that was not there."""
    events = read_trace(RECORDED / "triage-patient42.jsonl")
    step = next(e for e in events if e["type"] == "step")
    step["reads"] = [r for r in step["reads"] if r[0] != "s"]
    done = _cli("replay", rechain(events, tmp_path / "edited.jsonl"), HERE / "definitions")
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.startswith("DIVERGED") and "reads" in done.stdout, done.stdout
    assert "definitions changed" not in done.stdout, done.stdout
    assert "the definitions now read the world" not in done.stdout, done.stdout
    assert "the definitions are those it was recorded with" in done.stdout, done.stdout


def test_a_reexecuted_call_answering_otherwise_is_made_once_and_said_once(
        tmp_path: Path) -> None:
    """`--reexecute-idempotent`, and the pager now answers another nurse: replay's verdict
    was taken for the tool's failure, so `:ehr.notify_nurse` (`horis:retries 1`) was called
    a second time, and the report said the run now made two calls where it made one."""
    (tmp_path / "now").mkdir()
    (tmp_path / "now" / "ehr_client.py").write_text(
        "from pathlib import Path\n"
        "from rdflib import URIRef\n\n"
        "def assign_queue(patient, queue):\n"
        "    raise AssertionError('not idempotent: never called on replay')\n\n"
        "def notify_nurse(patient, nurse, ref):\n"
        "    with open(Path(__file__).parent / 'pages.txt', 'a') as f:\n"
        "        f.write(str(patient) + '\\n')\n"
        "    return {'assignedNurse': URIRef('http://example.org/ehr#nurse8')}\n")
    done = _cli("replay", RECORDED / "triage-patient42.jsonl", HERE / "definitions",
                "--reexecute-idempotent", "--tools", tmp_path / "now" / "ehr_client.py")
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.startswith("DIVERGED"), done.stdout
    pages = (tmp_path / "now" / "pages.txt").read_text().splitlines()
    assert pages == [f"{EHR}patient42"], pages
    now = done.stdout.split(" when recorded, is ", 1)[1].rsplit(" now", 1)[0]
    assert json.loads(now) == [
        {"returned": {"@map": {"assignedNurse": {"@term": f"<{EHR}nurse8>"}}}}], now
