"""A ``sh:pattern`` on a time stamp the runtime writes (``horis:value horis:now``) that its
text never matches: ``"Z$"`` where the clock writes ``…+00:00``.

It validated without a word; every call of the tool acted, then the gate refused the result
(``Value does not match pattern 'Z$' (value: "2026-12-07T17:53:48.540006+00:00")``), nothing of
it landing. The stamp is judged as the gate judges it, with the text the runtime writes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from workflow_edits import TRIAGE, ontology_edited, problems

SHAPE = """    sh:property [
        sh:path :queueRef ;"""


def _with(tmp_path: Path, pattern: str) -> list:
    onto, _ = ontology_edited(
        tmp_path, SHAPE,
        f'    sh:property [ sh:path :queuedAt ; sh:pattern "{pattern}" ] ;\n' + SHAPE)
    return [p for p in problems(TRIAGE[0], TRIAGE, onto) if ":queuedAt" in p.message]


def test_a_pattern_the_runtimes_time_stamp_never_matches_is_an_error_at_the_effect(
        tmp_path: Path) -> None:
    (p,) = _with(tmp_path, "Z$")
    text = TRIAGE[0].read_text()
    line = text[: text.index(":queuedAt ; horis:value horis:now")].count("\n") + 1
    assert (p.severity, p.file, p.line, p.node) == ("error", str(TRIAGE[0]), line,
                                                     ":ehr.assign_queue"), str(p)
    assert 'sh:pattern "Z$"' in p.message and "after the tool has acted" in p.message, p.message
    assert p.hint == (
        'horis:now writes the time of the call in UTC as "2026-12-07T10:00:00.123456+00:00" '
        '(an offset, not Z; the fraction left out on a whole second): write a sh:pattern that '
        "matches it, or drop the sh:pattern"), p.hint


@pytest.mark.parametrize("pattern", ["^[0-9]{4}-", r"(Z|\\+00:00)$", "T"])
def test_a_pattern_the_time_stamp_matches_says_nothing(tmp_path: Path, pattern: str) -> None:
    assert _with(tmp_path, pattern) == []
