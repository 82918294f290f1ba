"""``horismos trace show T`` without the definitions named every term by its full IRI
(``<http://example.org/ehr#QueuePatient>``) where, given them, it printed ``:QueuePatient``;
the gate's messages, recorded with the definitions' prefixes, said ``:patient42`` beside
them. A trace records no prefixes: the namespace of the run's workflow is read as ``:``,
said once under the header, and the timeline reads as it does with the definitions."""

from __future__ import annotations

from pathlib import Path

from forked import horismos_forked

ROOT = Path(__file__).resolve().parent.parent
TRACES = Path(__file__).resolve().parent / "fixtures" / "traces"
TRACE = TRACES / "recorded" / "triage-failures.jsonl"


def _show(*args: Path) -> list[str]:
    done = horismos_forked(ROOT, "trace", "show", *map(str, args), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    return done.stdout.splitlines()


def test_without_the_definitions_the_workflow_namespace_is_named_as_colon() -> None:
    bare = _show(TRACE)
    assert bare[0].startswith("run of :Triage for "), bare
    assert bare[1] == (
        "  : is <http://example.org/ehr#>, the namespace of its workflow (give the "
        "definitions to name every term by their prefixes)"
    ), bare
    assert not any("<http://example.org/ehr#" in line for line in bare[2:]), bare
    step = next(line for line in bare if ":QueuePatient" in line)
    assert ":ehr.assign_queue(patient=:patient42, queue=:urgent)" in step, step


def test_the_timeline_reads_as_it_does_with_the_definitions() -> None:
    bare = _show(TRACE)
    full = _show(TRACE, TRACES / "definitions")
    assert bare[:1] + bare[2:] == full, (bare, full)
