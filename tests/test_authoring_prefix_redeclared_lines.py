"""A file that declares ``:`` again further down (a block pasted from another file): every
term written above that line was located by the file's last binding of ``:``, so an error
about ``:ManageChange`` (written under the first ``:``) had no line, and one about the same
local name under the second ``:`` was placed at the first's line. Each is now found with
the prefix bound where it is written; the redeclaration is said once, at its line."""

from __future__ import annotations

from pathlib import Path

from forked import horismos_forked

from horismos import AuthoringError, load_definitions

WORKFLOW = """\
@prefix :      <http://example.org/chg#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .

:Change a owl:Class .

:ManageChange a horis:Workflow ;
    horis:focusType :Change ;
    horis:start :Apply .

@prefix : <http://example.org/other#> .

:Thing a owl:Class .

:ManageChange a horis:Workflow ;
    horis:focusType :Thing ;
    horis:start :Review .
"""


def _errors(tmp_path: Path) -> dict[str, int | None]:
    (tmp_path / "workflow.ttl").write_text(WORKFLOW)
    try:
        load_definitions([tmp_path / "workflow.ttl"])
    except AuthoringError as e:
        return {p.message: p.line for p in e.problems if p.severity == "error"}
    raise AssertionError("the dangling starts were not refused")


def test_each_error_is_at_the_line_where_its_term_is_written(tmp_path: Path) -> None:
    errors = _errors(tmp_path)
    first = next(m for m in errors if "chg#Apply>" in m)
    second = next(m for m in errors if "points to :Review," in m)
    assert errors[first] == 9, errors
    assert errors[second] == 17, errors


def test_the_redeclaration_is_said_once_at_its_line(tmp_path: Path) -> None:
    (tmp_path / "workflow.ttl").write_text(WORKFLOW)
    done = horismos_forked(tmp_path, "validate", "workflow.ttl", timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stdout.count("declared a second time") == 1, done.stdout
    assert "workflow.ttl:11: warning: the prefix : is declared a second time" in done.stdout
    assert "a prefix of its own" in done.stdout, done.stdout
    assert "workflow.ttl:9: error:" in done.stdout, done.stdout
    assert "workflow.ttl:17: error:" in done.stdout, done.stdout
