"""A horis:next into the middle of another workflow where a step of this one was meant: no
instance of the other is started, the step runs without what the other's steps before it
did, and validate said only "unreachable" at the step meant, naming no edge."""

from __future__ import annotations

from pathlib import Path

from claims_files import CLAIMS_PREFIXES, problems

from horismos import Problem

FILE = CLAIMS_PREFIXES + """
:Claim a owl:Class .
:assessedAmount a owl:DatatypeProperty ; rdfs:range xsd:decimal .
:paymentRef a owl:DatatypeProperty ; rdfs:range xsd:string .
:noticeAt a owl:DatatypeProperty ; rdfs:range xsd:dateTime .

:claims.assess a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "claim" ; horis:type :Claim ] ] ;
    horis:effect [ horis:subject "claim" ;
        horis:asserts [ horis:property :assessedAmount ; horis:type xsd:decimal ] ] ;
    horis:binding "python:assess" ; horis:idempotent true .

:claims.pay a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "claim" ; horis:type :Claim ] ] ;
    horis:effect [ horis:subject "claim" ;
        horis:asserts [ horis:property :paymentRef ; horis:type xsd:string ] ] ;
    horis:binding "python:pay" .

:claims.notify a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "claim" ; horis:type :Claim ] ] ;
    horis:effect [ horis:subject "claim" ;
        horis:asserts [ horis:property :noticeAt ; horis:value horis:now ] ] ;
    horis:binding "python:notify" .

:Assessing a horis:Workflow ; horis:focusType :Claim ; horis:start :Assess .

:Assess a horis:ActionStep ;
    horis:tool :claims.assess ;
    horis:bind [ horis:arg "claim" ; horis:var "this" ] ;
    horis:next NEXT .

MEANT

:Payout a horis:Workflow ; horis:focusType :Claim ; horis:start :Pay .

:Pay a horis:ActionStep ;
    horis:tool :claims.pay ;
    horis:requires "FILTER NOT EXISTS { ?this :paymentRef ?r }" ;
    horis:bind [ horis:arg "claim" ; horis:var "this" ] ;
    horis:next :Notify .

:Notify a horis:ActionStep ;
    horis:tool :claims.notify ;
    horis:eachRun true ;
    horis:bind [ horis:arg "claim" ; horis:var "this" ] .
"""

TELL = """:TellAssessed a horis:ActionStep ;
    horis:tool :claims.notify ;
    horis:eachRun true ;
    horis:bind [ horis:arg "claim" ; horis:var "this" ] ."""


def _found(tmp_path: Path, nxt: str, meant: str = TELL) -> tuple[list[Problem], int]:
    path = tmp_path / "claims.ttl"
    text = FILE.replace("NEXT", nxt).replace("MEANT", meant)
    path.write_text(text, encoding="utf-8")
    line = text[: text.index("horis:next " + nxt)].count("\n") + 1
    return problems(path), line


def test_the_workflows_these_tests_edit_are_clean(tmp_path: Path) -> None:
    assert _found(tmp_path, ":TellAssessed")[0] == []


def test_a_next_into_another_workflows_middle_is_said_at_the_edge(tmp_path: Path) -> None:
    problems, line = _found(tmp_path, ":Notify")
    (p,) = [p for p in problems if p.node == ":Assess"]
    assert (p.severity, p.line) == ("warning", line), p
    assert p.message == (
        "horis:next :Notify goes into the middle of another workflow, :Payout: no :Payout "
        "instance is started; :Notify and the steps after it run as steps of this :Assessing "
        "instance, without what :Payout's steps before it do, and :TellAssessed, written "
        "next, is reached by no workflow"), p.message
    assert (p.hint or "").startswith("did you mean horis:next :TellAssessed?"), p.hint
    # the step meant is still said unreachable, at its own line
    assert [p.node for p in problems if "unreachable" in p.message] == [":TellAssessed"]


def test_a_step_two_workflows_share_on_purpose_is_not_said(tmp_path: Path) -> None:
    assert _found(tmp_path, ":Notify", meant="")[0] == []
