"""A decision rule copied from the one before it and not edited: the same pattern, another
step. It holds only when the earlier rule does, which is taken first, so its step was never
reached, and the definitions validated."""

from __future__ import annotations

from pathlib import Path

from claims_files import problems
from forked import horismos_forked
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


# A later rule whose range of the same value lies within an earlier rule's: rules copied for
# tiers and left in the wrong order (?a > 1000 to one step, then ?a > 2000 to another), so the
# narrower tier's step was never taken, and the definitions validated.


def test_a_range_within_an_earlier_rules_is_a_warning(tmp_path: Path) -> None:
    (p,), line = _found(tmp_path, "?this :assessedAmount ?amount . FILTER (?amount > 2000)")
    assert (p.severity, p.line, p.node) == ("warning", line, ":Decide"), p
    assert p.message == (
        "this horis:when rule holds for :assessedAmount of ?this only where ?amount > 2000, "
        "within ?a > 1000 of the rule of horis:order 1 before it, which goes to :PayOut: it "
        "holds only when that one does, which is taken first, so :Deny is never taken by it"
    ), p.message
    assert p.hint == (
        "give this rule a lower horis:order than 1, so that the narrower range is tried first, "
        "or make it test the range it was meant to"), p.hint


def test_bounds_anded_or_reversed_are_read(tmp_path: Path) -> None:
    for within in ("FILTER (?a > 1000 && ?a <= 5000)", "FILTER (?a >= 1000.5)",
                   "FILTER (2000 < ?a)", "FILTER (?a > 1000) FILTER (?a < 1e6)",
                   "FILTER (?a > 1000)  "):
        found, _ = _found(tmp_path, f"?this :assessedAmount ?a . {within}")
        assert [p.node for p in found] == [":Decide"], (within, found)


def test_no_alarm_where_a_value_passes_the_later_rule_only(tmp_path: Path) -> None:
    for other in ("FILTER (?a >= 1000)", "FILTER (?a > 999)", "FILTER (?a > 2000 || ?a < 0)",
                  "FILTER (?a < 5000)", "FILTER (?a > -5)",
                  # another value, or a value with another triple: not compared
                  "?this :deniedAt ?d . FILTER (?a > 2000)",
                  "FILTER (?a > \\\"2000\\\")", "FILTER (!(?a <= 2000))"):
        found, _ = _found(tmp_path, f"?this :assessedAmount ?a . {other}")
        assert not [p for p in found if "horis:order 1 before it" in p.message], (other, found)


def test_as_the_modeler_runs_it(tmp_path: Path) -> None:
    _, line = _found(tmp_path, "?this :assessedAmount ?a . FILTER (?a > 2000)")
    done = horismos_forked(tmp_path, "validate", "claims.ttl", timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"claims.ttl:{line}: warning: :Decide: this horis:when rule holds for " in (
        done.stdout), done.stdout


def test_a_range_after_a_rule_taking_any_value_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "claims.ttl"
    text = TWO.replace("FILTER (?a > 1000)", "").replace(
        "SECOND", "?this :assessedAmount ?amount . FILTER (?amount < 100)")
    path.write_text(text, encoding="utf-8")
    found = [p for p in problems(path) if "of the rule of horis:order" in p.message]
    assert [p.message for p in found] == [
        "this horis:when rule holds for :assessedAmount of ?this only where ?amount < 100, "
        "within any ?a of the rule of horis:order 1 before it, which goes to :PayOut: it holds "
        "only when that one does, which is taken first, so :Deny is never taken by it"]


# An earlier rule of triples alone whose every triple a later rule asks too: the general case
# left before the particular one (?this :inDepartment :Engineering to the base bundle, then
# ?this :inDepartment :Engineering ; :hasRole :engineer to the engineers' bundle), so no
# engineer ever got theirs, and the definitions validated.

PLAIN = TWO.replace("FILTER (?a > 1000)", "")


def _plain(tmp_path: Path, second: str, first: str = "") -> tuple[list[Problem], int]:
    path = tmp_path / "claims.ttl"
    text = PLAIN.replace("?this :assessedAmount ?a .", f"?this :assessedAmount ?a . {first}", 1)
    text = text.replace("SECOND", second)
    path.write_text(text, encoding="utf-8")
    line = text[: text.index(second)].count("\n") + 1
    return [p for p in problems(path) if "rule of horis:order" in p.message], line


def test_a_rule_asking_more_than_an_earlier_plain_one_is_a_warning(tmp_path: Path) -> None:
    (p,), line = _plain(tmp_path, "?this :deniedAt ?d ; :assessedAmount ?a . "
                                  "FILTER NOT EXISTS { ?this :paidAt ?t }")
    assert (p.severity, p.line, p.node) == ("warning", line, ":Decide"), p
    assert p.message == (
        "this horis:when rule asks all that the rule of horis:order 1 before it asks (?this "
        ":assessedAmount ?a .), and more: it holds only when that one does, which is taken "
        "first and goes to :PayOut, so :Deny is never taken by it"), p.message
    assert p.hint.startswith("give this rule a lower horis:order than 1, so that the "
                             "particular case is tried before the general one"), p.hint


def test_no_alarm_where_the_later_rule_can_hold_alone(tmp_path: Path) -> None:
    for first, second in [
        ("", "?this :deniedAt ?d ."),                          # asks none of the earlier's
        ("", "?this :assessedAmount ?x ; :deniedAt ?d ."),     # another variable: not compared
        ("FILTER (?a > 5)", "?this :assessedAmount ?a ; :deniedAt ?d ."),  # earlier filtered
        ("?this :deniedAt ?d .", "?this :assessedAmount ?a ."),  # the particular first: right
        ("OPTIONAL { ?this :deniedAt ?d }", "?this :assessedAmount ?a ; :deniedAt ?d ."),
    ]:
        found, _ = _plain(tmp_path, second, first)
        assert found == [], (first, second, found)
