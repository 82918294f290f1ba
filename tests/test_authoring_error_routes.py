"""A horis:onError to a step that requires of the focus what only the failed step's tool
writes: the call that failed wrote nothing, so every instance whose assessment failed sat
blocked at the review meant to handle it, and the definitions validated."""

from __future__ import annotations

from pathlib import Path

from forked import horismos_forked
from test_authoring_later_writes import FILE

from horismos import AuthoringError, Problem, load_definitions

REVIEWED = FILE.replace(
    "    horis:next :Decide .", "    horis:next :Decide ;\n    horis:onError :Review ."
).replace(":Deny a horis:ActionStep ;", """:Review a horis:ActionStep ;
    horis:tool :claims.deny ;
    horis:requires "REVIEW FILTER NOT EXISTS { ?this :deniedAt ?d }" ;
    horis:bind [ horis:arg "claim" ; horis:var "this" ] .

:Deny a horis:ActionStep ;""").replace("RULE", "FILTER (?a > 0)")


def _found(tmp_path: Path, review: str) -> tuple[list[Problem], int]:
    path = tmp_path / "claims.ttl"
    text = REVIEWED.replace("REVIEW", review)
    path.write_text(text, encoding="utf-8")
    line = text[: text.index("horis:onError :Review")].count("\n") + 1
    try:
        return list(load_definitions([path]).warnings), line
    except AuthoringError as e:
        return list(e.problems), line


def test_the_workflow_these_tests_edit_is_clean(tmp_path: Path) -> None:
    assert _found(tmp_path, "OPTIONAL { ?this :assessedAmount ?a }")[0] == []


def test_an_error_route_needing_the_failed_steps_write_is_a_warning(tmp_path: Path) -> None:
    (p,), line = _found(tmp_path, "?this :assessedAmount ?a .")
    assert (p.severity, p.line, p.node) == ("warning", line, ":Assess"), p
    assert p.message == (
        "horis:onError :Review, whose horis:requires needs :assessedAmount of ?this, which "
        "only :claims.assess writes — the call that failed, and wrote nothing: after a failure "
        ":Review never fires, and the instance stops there, blocked"), p.message
    assert (p.hint or "").startswith("send horis:onError to a step that does not need"), p.hint


def test_no_alarm_when_the_world_gives_it(tmp_path: Path) -> None:
    _, line = _found(tmp_path, "?this :assessedAmount ?a .")
    (tmp_path / "world.ttl").write_text(
        "@prefix : <http://example.org/claims#> .\n:c1 a :Claim ; :assessedAmount 5.0 .\n",
        encoding="utf-8")
    bare = horismos_forked(tmp_path, "validate", "claims.ttl", timeout=120)
    assert f"claims.ttl:{line}: warning: :Assess: horis:onError :Review" in bare.stdout, (
        bare.stdout)
    given = horismos_forked(tmp_path, "validate", "claims.ttl", "--world", "world.ttl",
                            timeout=120)
    assert given.returncode == 0 and "warning" not in given.stdout, given.stdout
