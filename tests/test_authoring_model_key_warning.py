"""A proposal's model whose key the environment lacks: ``run`` refuses it before any step,
but ``validate`` said "valid" with nothing about it, and the modeler met the refusal only at
the run. A warning at the ``horis:model`` line naming the variable; no model is asked."""

from __future__ import annotations

import os
from pathlib import Path

from forked import horismos_forked
from test_authoring_model_keys import FILE

KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL")


def _validate(tmp_path: Path, model: str, **given: str) -> tuple[str, int]:
    text = FILE.replace("MODEL", model)
    (tmp_path / "ops.ttl").write_text(text, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in KEYS} | given
    p = horismos_forked(tmp_path, "validate", "ops.ttl", env=env, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout, text[: text.index("horis:model")].count("\n") + 1


def test_a_model_without_its_key_is_a_warning_at_its_line(tmp_path: Path) -> None:
    for model, needs in (("anthropic:claude-test", "ANTHROPIC_API_KEY"),
                         ("openai:gpt-test", "OPENAI_API_KEY")):
        out, line = _validate(tmp_path, model)
        assert (
            f'ops.ttl:{line}: warning: :Pick: horis:model "{model}" needs {needs} in the '
            "environment"
        ) in out, out
        assert "`run` here refuses the workflow before its first step" in out, out


def test_no_warning_with_the_key_or_a_local_server_or_the_offline_ranker(
    tmp_path: Path,
) -> None:
    for model, given in (("anthropic:claude-test", {"ANTHROPIC_API_KEY": "k"}),
                         ("openai:gpt-test", {"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}),
                         ("lexical:bm25", {})):
        out, _ = _validate(tmp_path, model, **given)
        assert "in the environment" not in out, out  # its key; not the fallback's warning
