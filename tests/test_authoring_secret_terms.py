"""A secret written as a made-up Horismos term (``horis:token "demo-token"`` on an adapter,
``horis:apiKey`` on an HTTP tool, ``horis:password`` on a command): the error said "did you
mean horis:takes?" — the nearest spelling, which would not load either and said nothing of
where a secret goes. It now says to read it from the environment, the way that node takes it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from workflow_edits import TRIAGE, edited, problems

from horismos import AuthoringError, load_definitions

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "fhir" / "pharmacy.ttl"


def test_a_token_written_on_an_adapter_points_at_token_from_env(tmp_path: Path) -> None:
    shutil.copy(EXAMPLE, tmp_path / "pharmacy.ttl")
    path = tmp_path / "pharmacy.ttl"
    text = path.read_text(encoding="utf-8")
    old = 'horis:tokenFromEnv "EHR_TOKEN"'
    assert text.count(old) == 1
    path.write_text(text.replace(old, 'horis:token "demo-token"'), encoding="utf-8")
    with pytest.raises(AuthoringError) as e:
        load_definitions([path])
    (p,) = e.value.problems
    assert p.line == text[: text.index(old)].count("\n") + 1, str(p)
    assert p.message == "horis:token is not a Horismos term" and p.node == ":ehr", str(p)
    assert p.hint is not None and "did you mean" not in p.hint
    assert p.hint.endswith('write horis:tokenFromEnv "EHR_TOKEN" (the variable\'s name, sent '
                           "as a Bearer token)"), p.hint


@pytest.mark.parametrize("term", ["horis:apiKey", "horis:authorization", "horis:secret"])
def test_a_secret_written_on_a_tool_points_at_a_header_from_the_environment(
    tmp_path: Path, term: str
) -> None:
    path, line = edited(tmp_path, TRIAGE, 'horis:timeout "5s" ;',
                        f'horis:timeout "5s" ; {term} "abc" ;')
    [p] = [p for p in problems(path, TRIAGE) if p.severity == "error"]
    assert p.line == line and f"{term} is not a Horismos term" in p.message, str(p)
    assert p.hint is not None and p.hint.endswith(
        'write horis:header [ horis:name "Authorization" ; horis:fromEnv "API_TOKEN" ]'), p.hint


def test_a_near_spelling_that_names_no_secret_keeps_its_did_you_mean(tmp_path: Path) -> None:
    path, line = edited(tmp_path, TRIAGE, 'horis:timeout "5s" ;', 'horis:timout "5s" ;')
    [p] = [p for p in problems(path, TRIAGE) if p.severity == "error"]
    assert p.line == line and p.hint == "did you mean horis:timeout?", str(p)
