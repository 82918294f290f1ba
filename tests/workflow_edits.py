"""One line of a shipped workflow changed, loaded as ``horismos validate`` loads it: what the
authoring tests (test_authoring_checks, _structure, _terms) make each mistake from. The line
is found by its text, so an edit of the workflow cannot make a test pass by missing."""

from __future__ import annotations

from pathlib import Path

from horismos import AuthoringError, Problem, load_definitions

ROOT = Path(__file__).resolve().parent.parent
TRIAGE = (ROOT / "workflows" / "triage.ttl", ROOT / "ontologies" / "ehr.ttl")
LAB = (ROOT / "workflows" / "lab_review.ttl", ROOT / "ontologies" / "lab.ttl")
REBOOKING = (ROOT / "workflows" / "rebooking.ttl", ROOT / "ontologies" / "travel.ttl")


def edited(tmp_path: Path, pair: tuple[Path, Path], old: str, new: str) -> tuple[Path, int]:
    """The workflow of ``pair`` with its one ``old`` replaced by ``new``, and that line."""
    text = pair[0].read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} is not written once in {pair[0].name}"
    path = tmp_path / pair[0].name
    path.write_text(text.replace(old, new), encoding="utf-8")
    line = text[: text.index(old)].count("\n") + 1
    return path, line


def ontology_edited(tmp_path: Path, old: str, new: str) -> tuple[Path, int]:
    """ehr.ttl with its one ``old`` replaced by ``new``, and that line."""
    text = TRIAGE[1].read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} is not written once in {TRIAGE[1].name}"
    path = tmp_path / TRIAGE[1].name
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path, text[: text.index(old)].count("\n") + 1


def problems(path: Path, pair: tuple[Path, Path], ontology: Path | None = None) -> list[Problem]:
    """Every error and warning loading the edited workflow with its ontology gives."""
    try:
        return list(load_definitions([path, ontology or pair[1]]).warnings)
    except AuthoringError as e:
        return list(e.problems)


def the_error(found: list[Problem]) -> Problem:
    """The one error: a second message for the same mistake would be noise."""
    errors = [p for p in found if p.severity == "error"]
    assert len(errors) == 1, "\n".join(map(str, found))
    return errors[0]


def the_one(found: list[Problem], severity: str) -> Problem:
    """The only problem found, of ``severity``."""
    assert len(found) == 1 and found[0].severity == severity, "\n".join(map(str, found))
    return found[0]
