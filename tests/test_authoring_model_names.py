"""A ranker's model written without its provider, or with a slash for the colon
(``horis:model "gpt-4o"``, ``"openai/gpt-4o"``): the error listed the providers and left the
author to guess the form; it now says the ``provider:model`` meant first."""

from __future__ import annotations

from pathlib import Path

import pytest
from workflow_edits import REBOOKING, edited, problems, the_error


@pytest.mark.parametrize(("written", "meant"), [
    ("gpt-4o", "openai:gpt-4o"),
    ("openai/gpt-4o-mini", "openai:gpt-4o-mini"),
    ("claude-sonnet-4-5", "anthropic:claude-sonnet-4-5"),
    ("mistral-large", None),
])
def test_a_model_without_its_provider_is_told_the_one_meant(
        tmp_path: Path, written: str, meant: str | None) -> None:
    path, line = edited(tmp_path, REBOOKING, 'horis:model "lexical:bm25"',
                        f'horis:model "{written}"')
    e = the_error(problems(path, REBOOKING))
    assert (e.line, e.node) == (line, ":ProposeFlight"), str(e)
    assert e.message == f'horis:model "{written}" names no provider Horismos can ask'
    assert e.hint is not None
    said = f'did you mean "{meant}"? ' if meant else ""
    assert e.hint.startswith(said + 'write "provider:model" with provider one of '), e.hint
    assert ("did you mean" in e.hint) == (meant is not None), e.hint
