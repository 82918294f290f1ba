"""A step's ``horis:requires`` or a decision rule requiring of ?this a value the domain shapes
refuse: the change's risk is routed to the board's approval by ``?this :riskLevel "high"``,
where the shape lists ``sh:in ( "LOW" "MEDIUM" "HIGH" )`` and the score tool writes
``"HIGH"``. The rule never held, so every high-risk change was applied through
``horis:otherwise``, with nobody asked. It validated."""

from __future__ import annotations

from pathlib import Path

import pytest
from claims_files import CLAIMS_PREFIXES, problems
from forked import horismos_forked

FILE = CLAIMS_PREFIXES + """\
@prefix sh:    <http://www.w3.org/ns/shacl#> .

:Change a owl:Class .
:Status a owl:Class .
:Draft a :Status . :Scheduled a :Status .
:riskLevel a owl:DatatypeProperty ; rdfs:domain :Change ; rdfs:range xsd:string .
:status a owl:ObjectProperty ; rdfs:domain :Change ; rdfs:range :Status .
:appliedRef a owl:DatatypeProperty ; rdfs:domain :Change ; rdfs:range xsd:string .

:ChangeShape a sh:NodeShape ; sh:targetClass :Change ;
    sh:property [ sh:path :riskLevel ; sh:in ( "LOW" "MEDIUM" "HIGH" ) ; sh:maxCount 1 ] ;
    sh:property [ sh:path :status ; sh:in ( :Draft :Scheduled ) ] .

:chg.score a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "change" ; horis:type :Change ] ] ;
    horis:effect [ horis:subject "change" ;
        horis:asserts [ horis:property :riskLevel ; horis:type xsd:string ] ] ;
    horis:binding "python:score" ; horis:idempotent true .

:chg.apply a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "change" ; horis:type :Change ] ] ;
    horis:effect [ horis:subject "change" ;
        horis:asserts [ horis:property :appliedRef ; horis:type xsd:string ] ] ;
    horis:binding "python:apply" ; horis:idempotent false .

:chg.apply_approved a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "change" ; horis:type :Change ] ] ;
    horis:effect [ horis:subject "change" ;
        horis:asserts [ horis:property :appliedRef ; horis:type xsd:string ] ] ;
    horis:binding "python:apply" ; horis:idempotent false ; horis:requiresApproval true .

:ManageChange a horis:Workflow ; horis:focusType :Change ; horis:start :Score .

:Score a horis:ActionStep ;
    horis:tool :chg.score ;
    horis:bind [ horis:arg "change" ; horis:var "this" ] ;
    horis:next :RiskGate .

:RiskGate a horis:DecisionStep ;
    horis:when [ horis:order 1 ;
                 horis:requires \"\"\" ?this :riskLevel RISK . \"\"\" ;
                 horis:next :ApplyApproved ] ;
    horis:otherwise :Apply .

:ApplyApproved a horis:ActionStep ;
    horis:tool :chg.apply_approved ;
    horis:requires "FILTER NOT EXISTS { ?this :appliedRef ?r }" ;
    horis:bind [ horis:arg "change" ; horis:var "this" ] .

:Apply a horis:ActionStep ;
    horis:tool :chg.apply ;
    horis:requires \"\"\" ?this :status STATUS .
                       FILTER NOT EXISTS { ?this :appliedRef ?r } \"\"\" ;
    horis:bind [ horis:arg "change" ; horis:var "this" ] .
"""

SAID = "requires ?this to hold"


def _written(tmp_path: Path, risk: str = '"HIGH"', status: str = ":Scheduled") -> Path:
    path = tmp_path / "changes.ttl"
    path.write_text(FILE.replace("RISK", risk).replace("STATUS", status), encoding="utf-8")
    return path


def _line(marker: str) -> int:
    return FILE[: FILE.index(marker)].count("\n") + 1


def _said(path: Path) -> list[tuple[str, int | None, str, str | None]]:
    return [
        (p.severity, p.line, p.message, p.hint) for p in problems(path) if SAID in p.message
    ]


@pytest.mark.parametrize("risk", ['"HIGH"', '"MEDIUM"', "?level"])
def test_a_value_the_shapes_allow_is_not_said(tmp_path: Path, risk: str) -> None:
    assert _said(_written(tmp_path, risk=risk)) == []


def test_a_rule_testing_a_value_sh_in_does_not_list_is_said_with_the_listed_spelling(
    tmp_path: Path,
) -> None:
    [(severity, line, message, hint)] = _said(_written(tmp_path, risk='"high"'))
    assert (severity, line) == ("warning", _line("RISK"))
    assert ':riskLevel "high"' in message and 'sh:in ("LOW" "MEDIUM" "HIGH")' in message
    assert "this rule never holds: every instance goes on at horis:otherwise :Apply" in message
    assert hint == 'write "HIGH", the value :ChangeShape lists'


def test_a_step_requiring_a_node_sh_in_does_not_list_is_said_blocked(tmp_path: Path) -> None:
    [(severity, line, message, _)] = _said(_written(tmp_path, status=":Approved"))
    assert (severity, line) == ("warning", _line("STATUS"))
    assert ":status :Approved" in message and "the step never fires" in message


def test_validate_says_it_at_the_line_and_run_applies_the_high_risk_change_unapproved(
    tmp_path: Path,
) -> None:
    """What the warning is about: the score wrote "HIGH", the rule tested "high", and the
    change was applied without the approval its high risk asked for."""
    path = _written(tmp_path, risk='"high"')
    (tmp_path / "world.ttl").write_text(
        '@prefix : <http://example.org/claims#> .\n:c1 a :Change ; :status :Scheduled .\n',
        encoding="utf-8",
    )
    (tmp_path / "tools.py").write_text(
        'def score(change):\n    return {"riskLevel": "HIGH"}\n\n\n'
        'def apply(change):\n    return {"appliedRef": "APPLIED-1"}\n',
        encoding="utf-8",
    )
    done = horismos_forked(tmp_path, "validate", path.name, "--world", "world.ttl",
                           "--tools", "tools.py", timeout=120)
    assert f"changes.ttl:{_line('RISK')}: warning: :RiskGate: horis:requires {SAID}" in (
        done.stdout), done.stdout + done.stderr
    ran = horismos_forked(tmp_path, "run", path.name, "--world", "world.ttl", "--focus", ":c1",
                          "--tools", "tools.py", timeout=120)
    assert ran.returncode == 0 and ":chg.apply(change=:c1)" in ran.stdout, ran.stdout + ran.stderr
