"""A wait whose horis:until tests what a step before it always writes: it already holds
when the wait is reached, so no instance waits. Made in a claims workflow: the approval
wait tested :assessedAmount, which the assessment writes, where :approvedAt was meant; every
payout went ahead unapproved, and the definitions validated."""

from __future__ import annotations

from pathlib import Path

from claims_files import ASSESS_AND_PAY_OUT, CLAIMS_PREFIXES, problems

from horismos import Problem

FILE = CLAIMS_PREFIXES + """
:Claim a owl:Class .
:assessedAmount a owl:DatatypeProperty ; rdfs:domain :Claim ; rdfs:range xsd:decimal .
:paymentRef a owl:DatatypeProperty ; rdfs:range xsd:string .
:approvedAt a owl:DatatypeProperty ; rdfs:range xsd:dateTime .

""" + ASSESS_AND_PAY_OUT + """
:Adjudicate a horis:Workflow ; horis:focusType :Claim ; horis:start :Assess .

:Assess a horis:ActionStep ;
    horis:tool :claims.assess ;
    horis:bind [ horis:arg "claim" ; horis:var "this" ] ;
    horis:next :Approve .

:Approve a horis:WaitStep ;
    horis:reason "a manager approves the payout" ;
    horis:wake horis:OperatorInput ;
    horis:delivery horis:Final ;
    horis:until "UNTIL" ;
    horis:next :PayOut .

:PayOut a horis:ActionStep ;
    horis:tool :claims.pay_out ;
    horis:requires "FILTER NOT EXISTS { ?this :paymentRef ?r }" ;
    horis:bind [ horis:arg "claim" ; horis:var "this" ] .
"""


def _found(tmp_path: Path, until: str, text: str = FILE) -> tuple[list[Problem], int]:
    path = tmp_path / "claims.ttl"
    written = text.replace("UNTIL", until)
    path.write_text(written, encoding="utf-8")
    line = written[: written.index("horis:until")].count("\n") + 1
    return problems(path), line


def test_the_workflow_these_tests_edit_is_clean(tmp_path: Path) -> None:
    assert _found(tmp_path, "?this :approvedAt ?t .")[0] == []


def test_an_until_a_step_before_always_writes_is_a_warning(tmp_path: Path) -> None:
    (p,), line = _found(tmp_path, "?this :assessedAmount ?a .")
    assert (p.severity, p.line, p.node) == ("warning", line, ":Approve"), p
    assert p.message == (
        "horis:until tests :assessedAmount of ?this, which a step before it (:Assess) writes "
        "on every way to :Approve: it already holds when the wait is reached, so the wait "
        "never waits and every instance goes straight on to :PayOut"), p.message
    assert (p.hint or "").startswith("test what only the answer gives"), p.hint


def test_no_alarm_where_it_may_not_hold_yet(tmp_path: Path) -> None:
    # a value the wait compares, or a way to the wait past a failed assessment
    assert _found(tmp_path, "?this :assessedAmount ?a . FILTER (?a > 1000)")[0] == []
    assert _found(tmp_path, "?this :assessedAmount ?a . ?this :approvedAt ?t .")[0] == []
    failing = FILE.replace("    horis:next :Approve .",
                           "    horis:next :Approve ;\n    horis:onError :Approve .")
    assert _found(tmp_path, "?this :assessedAmount ?a .", failing)[0] == []
    optional = FILE.replace("horis:property :assessedAmount ;",
                            "horis:property :assessedAmount ; horis:optional true ;")
    assert _found(tmp_path, "?this :assessedAmount ?a .", optional)[0] == []
