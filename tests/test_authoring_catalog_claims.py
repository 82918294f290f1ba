"""What a tool's catalog metadata claims, held to what the rest of its declaration says: a
claim the runtime's policy reads (``horis:sideEffect``) that the tool's own ``horis:idempotent``
contradicts is said at its line, before any policy lets a call through on its word."""

from __future__ import annotations

from pathlib import Path

from workflow_edits import TRIAGE, edited, problems, the_one

QUEUE_END = "    horis:idempotent false .\n\n:ehr.notify_nurse"


def test_read_only_on_a_tool_that_is_not_idempotent_is_a_warning_at_the_side_effect(
    tmp_path: Path,
) -> None:
    """``horis:sideEffect horis:ReadOnly`` on the queue assignment (not idempotent: it acts
    when called) validated without a word, and a run under ``--allow ReadOnly`` — a policy
    meant to let nothing act — assigned the queue."""
    path, line = edited(
        tmp_path, TRIAGE, QUEUE_END,
        "    horis:idempotent false ;\n    horis:sideEffect horis:ReadOnly .\n\n:ehr.notify_nurse",
    )
    p = the_one(problems(path, TRIAGE), "warning")
    assert (p.file, p.line, p.node) == (str(path), line + 1, ":ehr.assign_queue"), str(p)
    assert "horis:sideEffect horis:ReadOnly on a tool that is not idempotent" in p.message
    assert "--allow ReadOnly" in p.message
    assert p.hint is not None and "horis:idempotent true if it only reads" in p.hint
    assert "horis:sideEffect horis:HostStateWrite" in p.hint


def test_read_only_left_to_the_default_of_idempotent_is_said_too(tmp_path: Path) -> None:
    """No ``horis:idempotent`` at all is false: the claim is as wrong."""
    path, line = edited(
        tmp_path, TRIAGE, QUEUE_END,
        "    horis:sideEffect horis:ReadOnly .\n\n:ehr.notify_nurse",
    )
    p = the_one(problems(path, TRIAGE), "warning")
    assert p.line == line and "horis:sideEffect horis:ReadOnly" in p.message, str(p)


def test_read_only_on_an_idempotent_tool_says_nothing(tmp_path: Path) -> None:
    path, _ = edited(
        tmp_path, TRIAGE, "    horis:idempotent true .",
        "    horis:idempotent true ;\n    horis:sideEffect horis:ReadOnly .",
    )
    assert problems(path, TRIAGE) == []
