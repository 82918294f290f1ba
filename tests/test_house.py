"""The checks the project configures are run, so CI holds the code to them.

ruff (lint and format) and mypy are configured in pyproject.toml; without a test nothing ran
them and the code drifted. Each check runs as the pinned tool a developer runs by hand, over
the same paths, and its failure message is the tool's own report with the command to rerun.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _check(*command: str) -> None:
    done = subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        report = done.stdout + done.stderr
        if len(report) > 6000:
            report = report[:6000] + "\n… (cut; run the command to see all of it)"
        pytest.fail(f"`{' '.join(command)}` failed (exit {done.returncode}); run it from the "
                    f"repository root and fix what it reports:\n{report}", pytrace=False)


def test_ruff_check_passes() -> None:
    _check("ruff", "check", "horismos", "tests")


def test_the_package_is_ruff_formatted() -> None:
    _check("ruff", "format", "--check", "horismos")


def test_the_package_type_checks_under_mypy() -> None:
    # the files, the overrides and the strictness are in [tool.mypy] of pyproject.toml
    _check("mypy")
