"""A ``horis:key`` written as a JSON path (``data.ref``): Horismos reads one top-level field by
its name, so a value nested in the answer never landed — the HTTP service reserved, the gate
refused the answer, the call was held in doubt — and it validated without a word."""

from __future__ import annotations

from pathlib import Path

import pytest
from workflow_edits import TRIAGE, edited, problems, the_one

QUEUE_REF = "horis:asserts [ horis:property :queueRef ; horis:type xsd:string ]"


@pytest.mark.parametrize(("key", "field"), [
    ("data.queue_ref", "queue_ref"), ("$.queue_ref", "queue_ref"),
    ("/data/queue_ref", "queue_ref"), ("items[0]", None),
])
def test_a_key_written_as_a_json_path_is_a_warning_at_the_key(
    tmp_path: Path, key: str, field: str | None
) -> None:
    path, line = edited(tmp_path, TRIAGE, QUEUE_REF,
                        QUEUE_REF.replace(" ]", f' ; horis:key "{key}" ]'))
    p = the_one(problems(path, TRIAGE), "warning")
    assert (p.file, p.line, p.node) == (str(path), line, ":ehr.assign_queue"), str(p)
    assert f'horis:key "{key}" reads like a JSON path' in p.message
    assert "a value nested under another field is never read" in p.message
    wanted = f'horis:key "{field}"' if field else "name that field in horis:key"
    assert p.hint is not None and p.hint.endswith(wanted), p.hint


def test_a_plain_field_name_says_nothing(tmp_path: Path) -> None:
    path, _ = edited(tmp_path, TRIAGE, QUEUE_REF,
                     QUEUE_REF.replace(" ]", ' ; horis:key "queue_ref-v2" ]'))
    assert problems(path, TRIAGE) == []
