"""A wait's ``horis:until`` or a decision's rule that holds whatever the world holds: only an
``OPTIONAL`` (meant: read the manager's answer, the audit's score), which never fails. No
expense waited for the manager, and every expense took the first rule to the payout, while
the definitions validated. Now a warning at the until, or at the rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from horismos import load_definitions

DEFS = '''@prefix :      <http://example.org/expense#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Expense a owl:Class .
:auditScore a owl:DatatypeProperty ; rdfs:domain :Expense ; rdfs:range xsd:integer .
:managerApproved a owl:DatatypeProperty ; rdfs:domain :Expense ; rdfs:range xsd:boolean .
:paidAt a owl:DatatypeProperty ; rdfs:domain :Expense ; rdfs:range xsd:dateTime .

:exp.pay a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "expense" ; horis:type :Expense ] ] ;
    horis:effect [ horis:asserts [ horis:property :paidAt ; horis:value horis:now ] ] ;
    horis:binding "python:pay" ;
    horis:timeout "5s" .

:Reimburse a horis:Workflow ; horis:focusType :Expense ; horis:start :Decide .

:Decide a horis:DecisionStep ;
    horis:when [ horis:order 1 ;
                 horis:requires "RULE" ;
                 horis:next :Pay ] ;
    horis:otherwise :ManagerReview .

:ManagerReview a horis:WaitStep ;
    horis:reason "A manager decides." ;
    horis:wake horis:OperatorInput ;
    horis:delivery horis:Silent ;
    horis:until "UNTIL" ;
    horis:next :Pay .

:Pay a horis:ActionStep ;
    horis:tool :exp.pay ;
    horis:requires "FILTER NOT EXISTS { ?this :paidAt ?t }" ;
    horis:bind [ horis:arg "expense" ; horis:var "this" ] .
'''
RULE = "?this :auditScore ?s . FILTER (?s >= 80)"
UNTIL = "?this :managerApproved true ."


def _said(tmp_path: Path, rule: str = RULE, until: str = UNTIL) -> list[tuple[str, int, str]]:
    text = DEFS.replace("RULE", rule).replace("UNTIL", until)
    path = tmp_path / "defs.ttl"
    path.write_text(text, encoding="utf-8")
    return [
        (p.node, p.line, p.message)
        for p in load_definitions([path]).warnings
        if "holds whatever the world holds" in p.message
    ]


def test_an_until_that_is_only_an_optional_is_a_warning_at_it(tmp_path: Path) -> None:
    [(node, line, message)] = _said(tmp_path, until="OPTIONAL { ?this :managerApproved ?ok }")
    assert (node, line) == (":ManagerReview", DEFS[: DEFS.index('"UNTIL"')].count("\n") + 1)
    assert message == (
        "horis:until holds whatever the world holds (an OPTIONAL never fails, and nothing else "
        "in it can): the wait never waits, and every instance goes straight on to :Pay"
    )


def test_a_rule_that_is_only_an_optional_is_a_warning_at_it(tmp_path: Path) -> None:
    [(node, line, message)] = _said(
        tmp_path, rule="OPTIONAL { ?this :auditScore ?s . FILTER (?s >= 80) }"
    )
    assert (node, line) == (":Decide", DEFS[: DEFS.index('"RULE"')].count("\n") + 1)
    assert message.startswith(
        "this horis:when rule holds whatever the world holds (an OPTIONAL never fails, and "
        "nothing else in it can): every instance goes to :Pay, and the rules after it and "
        "horis:otherwise are never taken"
    )


@pytest.mark.parametrize(("rule", "until"), [
    pytest.param(RULE, UNTIL, id="as-meant"),
    pytest.param(RULE, "OPTIONAL { ?this :managerApproved ?ok } FILTER (BOUND(?ok))",
                 id="an-optional-a-filter-reads"),
    pytest.param(RULE, "?this :managerApproved ?ok . OPTIONAL { ?this :auditScore ?s }",
                 id="a-triple-beside-the-optional"),
    pytest.param("OPTIONAL { ?this :auditScore ?s } FILTER (!BOUND(?s))", UNTIL,
                 id="not-yet-scored"),
])
def test_a_pattern_with_something_that_can_fail_is_said_nothing_of(
    tmp_path: Path, rule: str, until: str
) -> None:
    assert _said(tmp_path, rule, until) == []
