"""FILTER comparisons of one variable that no value meets together.

``FILTER (?a > 1000 && ?a < 500)`` (two rules' bounds written in one) and ``FILTER (?s =
"open") FILTER (?s = "reopened")`` (``||`` meant) validated, and the rule they guarded was
never taken: every order went to ``horis:otherwise``. ``validate`` now warns at the FILTER's
line, with the ``||`` to write."""

from __future__ import annotations

from pathlib import Path

import pytest
from forked import horismos_forked

from horismos import AuthoringError, Problem, load_definitions

FLOW = """\
@prefix :      <http://example.org/shop#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Order a owl:Class .
:Urgent a owl:Class .
:amount a owl:DatatypeProperty ; rdfs:range xsd:decimal .
:status a owl:DatatypeProperty ; rdfs:range xsd:string .
:queue a owl:ObjectProperty .
:note a owl:DatatypeProperty ; rdfs:range xsd:string .

:shop.note a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "order" ; horis:type :Order ] ] ;
    horis:effect [ horis:subject "order" ;
                   horis:asserts [ horis:property :note ; horis:type xsd:string ] ] ;
    horis:binding "python:shop.note" ; horis:idempotent true .

:Orders a horis:Workflow ; horis:focusType :Order ; horis:start :Route .

:Route a horis:DecisionStep ;
    horis:when [ horis:order 1 ;
        horis:requires \"\"\" ?this :amount ?a ; :status ?s ; :queue ?q .
            RULE \"\"\" ;
        horis:next :Note ] ;
    horis:otherwise :Note .

:Note a horis:ActionStep ; horis:tool :shop.note ;
    horis:bind [ horis:arg "order" ; horis:var "this" ] .
"""


def _written(tmp_path: Path, rule: str) -> Path:
    path = tmp_path / "shop.ttl"
    path.write_text(FLOW.replace("RULE", rule), encoding="utf-8")
    return path


def _found(path: Path) -> list[Problem]:
    try:
        return list(load_definitions([path]).warnings)
    except AuthoringError as e:
        return list(e.problems)


@pytest.mark.parametrize(
    ("rule", "both"),
    [
        ("FILTER (?a > 1000 && ?a < 500)", "?a > 1000 and ?a < 500"),
        ("FILTER (?a >= 10 && ?a < 10.0)", "?a >= 10 and ?a < 10.0"),
        ("FILTER (?a = 5 && ?a > 7)", "?a = 5 and ?a > 7"),
        ('FILTER (?s = "open")\n            FILTER (?s = "reopened")',
         '?s = "open" and ?s = "reopened"'),
        ('FILTER (?s = "open" && ?s != "open")', '?s = "open" and ?s != "open"'),
        ("FILTER (?q = :urgent && ?q = :routine)", "?q = :urgent and ?q = :routine"),
    ],
)
def test_comparisons_no_value_meets_together_are_a_warning_at_the_filter(
    tmp_path: Path, rule: str, both: str
) -> None:
    path = _written(tmp_path, rule)
    (p,) = [p for p in _found(path) if "no value of" in p.message]
    line = path.read_text(encoding="utf-8").splitlines().index(
        next(t for t in path.read_text(encoding="utf-8").splitlines() if "FILTER" in t)) + 1
    assert (p.severity, p.file, p.line, p.node) == ("warning", str(path), line, ":Route"), p
    var = both.split()[0]
    assert p.message == (
        f"horis:requires: the FILTER requires both {both}, which no value of {var} meets: "
        "it is never true, so its pattern never matches"
    ), p.message
    first, second = both.split(" and ")
    assert f"join them with || (FILTER ({first} || {second}))" in (p.hint or ""), p.hint


@pytest.mark.parametrize(
    "rule",
    [
        "FILTER (?a > 500 && ?a < 1000)",
        "FILTER (?a > 1000 || ?a < 500)",
        "FILTER (?a >= 10 && ?a <= 10)",
        'FILTER (?s = "open" || ?s = "reopened")',
        'FILTER (?s != "open" && ?s != "reopened")',
        "FILTER (!(?a > 1000 && ?a < 500))",
        "FILTER (?a > 10 && ?a > 20)",
        'FILTER (?s = "open" && ?s = "open"^^xsd:string)',
        'FILTER (?s = "open"@en && ?s = "open"@EN)',
    ],
)
def test_comparisons_some_value_meets_are_said_nothing_of(tmp_path: Path, rule: str) -> None:
    assert not [p for p in _found(_written(tmp_path, rule)) if "no value of" in p.message]


def test_validate_says_it_as_file_line_and_still_passes(tmp_path: Path) -> None:
    _written(tmp_path, "FILTER (?a > 1000 && ?a < 500)")
    done = horismos_forked(tmp_path, "validate", "shop.ttl")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "shop.ttl:25: warning: :Route: horis:requires: the FILTER requires both ?a > 1000 " \
        "and ?a < 500" in done.stdout, done.stdout
    assert "Traceback" not in done.stdout + done.stderr
