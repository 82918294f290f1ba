"""``FILTER (str(?v) > "7")`` where ``?v`` is a number: ``str()`` makes it text, and text is
ordered character by character — ``"49.9" > "100"`` holds — so a refund of 49.90 took the
branch for refunds above 100, and a lab value of 10 was not above 7 (``"10" < "7"``). It
validated without a word; a warning at its line now gives the comparison of values.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from workflow_edits import LAB, edited, problems

RULE = "FILTER (?v > ?limit)"


@pytest.mark.parametrize(("written", "op", "text"), [
    ('FILTER (str(?v) > "7")', ">", "7"),
    ('FILTER ("100" <= STR(?v))', "<=", "100"),
    ('FILTER (?v > ?limit && str(?v) >= "0.5")', ">=", "0.5"),
])
def test_a_numbers_text_ordered_against_a_numeral_is_a_warning_at_its_line(
        tmp_path: Path, written: str, op: str, text: str) -> None:
    path, line = edited(tmp_path, LAB, RULE, written)
    (p,) = [p for p in problems(path, LAB) if "character by character" in p.message]
    assert (p.severity, p.file, p.line, p.node) == ("warning", str(path), line,
                                                     ":IsCritical"), str(p)
    assert p.message.startswith(f'horis:requires: str(?v) {op} "{text}" orders the text of ?v, '
                                "a number (:value's rdfs:range)"), p.message
    assert p.hint == f"compare the values: ?v {op} {text}"


@pytest.mark.parametrize("written", [
    'FILTER (str(?v) = "7")',             # its text, equal: may be meant
    'FILTER (str(?kind) > "7")',          # ?kind is a node's IRI
    'FILTER (str(?v) > "seven")',         # no numeral: another mistake, said elsewhere
    'FILTER (!(str(?v) > "7") || ?v > ?limit)',  # not needed for the FILTER to hold
])
def test_what_is_not_a_numbers_text_ordered_says_nothing(tmp_path: Path, written: str) -> None:
    path, _ = edited(tmp_path, LAB, RULE, written)
    assert not [p for p in problems(path, LAB) if "character by character" in p.message]
