"""A decision's rule that holds whenever the decision is reached: it tests what the step
before always writes (?this :assessedAmount ?a, with no value compared), or that the focus is
of the workflow's own focus type. Every claim went to the payout; the denial the otherwise
named was never taken, and the definitions validated."""

from __future__ import annotations

from pathlib import Path

from test_authoring_later_writes import FILE

from horismos import AuthoringError, Problem, load_definitions


def _found(tmp_path: Path, rule: str, text: str = FILE) -> tuple[list[Problem], int]:
    path = tmp_path / "claims.ttl"
    written = text.replace("RULE", rule)
    path.write_text(written, encoding="utf-8")
    line = written[: written.index("horis:requires")].count("\n") + 1
    try:
        return list(load_definitions([path]).warnings), line
    except AuthoringError as e:
        return list(e.problems), line


def test_a_rule_comparing_a_value_is_clean(tmp_path: Path) -> None:
    assert _found(tmp_path, "FILTER (?a > 1000)")[0] == []


def test_a_rule_testing_only_what_a_step_before_always_writes_is_a_warning(
    tmp_path: Path,
) -> None:
    (p,), line = _found(tmp_path, "")
    assert (p.severity, p.line, p.node) == ("warning", line, ":Decide"), p
    assert p.message == (
        "this horis:when rule always holds when :Decide is reached (a step before it writes "
        ":assessedAmount on every way to it): every instance goes to :PayOut, and what comes "
        "after it (horis:otherwise :Deny) is never taken"), p.message
    assert (p.hint or "").startswith("test what tells the cases apart"), p.hint


def test_a_rule_testing_the_focus_type_is_a_warning(tmp_path: Path) -> None:
    (p,), _ = _found(tmp_path, "", FILE.replace("?this :assessedAmount ?a .", "?this a :Claim ."))
    assert "(every focus is a :Claim)" in p.message, p


def test_no_alarm_where_it_may_not_hold(tmp_path: Path) -> None:
    # the assessment may have failed on the way to the decision
    failing = FILE.replace("    horis:next :Decide .",
                           "    horis:next :Decide ;\n    horis:onError :Decide .")
    assert _found(tmp_path, "", failing)[0] == []
    # a focus of a subclass is not typed :Claim unless entailment says so
    sub = FILE.replace(":Claim a owl:Class .",
                       ":Claim a owl:Class .\n:Big rdfs:subClassOf :Claim .")
    sub = sub.replace("?this :assessedAmount ?a .", "?this a :Claim .")
    assert not [p for p in _found(tmp_path, "", sub)[0] if "always holds" in p.message]
