"""A decision rule copied from the one before it and not edited: the same pattern, another
step. It holds only when the earlier rule does, which is taken first, so its step was never
reached, and the definitions validated."""

from __future__ import annotations

from pathlib import Path

from test_authoring_later_writes import FILE

from horismos import AuthoringError, Problem, load_definitions

TWO = FILE.replace("        horis:next :PayOut ] ;", """        horis:next :PayOut ] ,
        [ horis:order 2 ;
          horis:requires "SECOND" ;
          horis:next :Deny ] ;""").replace("RULE", "FILTER (?a > 1000)")


def _found(tmp_path: Path, second: str) -> tuple[list[Problem], int]:
    path = tmp_path / "claims.ttl"
    text = TWO.replace("SECOND", second)
    path.write_text(text, encoding="utf-8")
    line = text[: text.index(second)].count("\n") + 1
    try:
        return list(load_definitions([path]).warnings), line
    except AuthoringError as e:
        return list(e.problems), line


def test_a_different_second_rule_is_clean(tmp_path: Path) -> None:
    assert _found(tmp_path, "?this :assessedAmount ?a . FILTER (?a < 100)")[0] == []


def test_a_rule_the_same_as_one_before_it_is_a_warning(tmp_path: Path) -> None:
    (p,), line = _found(tmp_path, "?this :assessedAmount  ?a .\\n FILTER (?a > 1000)")
    assert (p.severity, p.line, p.node) == ("warning", line, ":Decide"), p
    assert p.message == (
        "this horis:when rule is the same pattern as the one of horis:order 1 before it, "
        "which goes to :PayOut: it holds only when that one does, which is taken first, so "
        ":Deny is never taken by it"), p.message
