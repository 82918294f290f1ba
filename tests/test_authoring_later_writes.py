"""A decision's rule that tests of the focus what only steps after the decision write: it never
holds when the decision is reached, and every instance takes the other branch. Made in a
claims workflow written from the guides (assess, decide, pay or deny); it validated, and the
run denied every claim it was meant to close."""

from __future__ import annotations

from pathlib import Path

import pytest
from claims_files import ASSESS_AND_PAY_OUT, CLAIMS_PREFIXES, problems
from forked import horismos_forked

from horismos import Problem

FILE = CLAIMS_PREFIXES + """
:Claim a owl:Class .
:assessedAmount a owl:DatatypeProperty ; rdfs:domain :Claim ; rdfs:range xsd:decimal .
:paymentRef a owl:DatatypeProperty ; rdfs:domain :Claim ; rdfs:range xsd:string .
:deniedAt a owl:DatatypeProperty ; rdfs:range xsd:dateTime .

""" + ASSESS_AND_PAY_OUT + """
:claims.deny a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "claim" ; horis:type :Claim ] ] ;
    horis:effect [ horis:subject "claim" ;
        horis:asserts [ horis:property :deniedAt ; horis:value horis:now ] ] ;
    horis:binding "python:deny" .

:Adjudicate a horis:Workflow ; horis:focusType :Claim ; horis:start :Assess .

:Assess a horis:ActionStep ;
    horis:tool :claims.assess ;
    horis:bind [ horis:arg "claim" ; horis:var "this" ] ;
    horis:next :Decide .

:Decide a horis:DecisionStep ;
    horis:when [ horis:order 1 ;
        horis:requires \"\"\" ?this :assessedAmount ?a .
                           RULE \"\"\" ;
        horis:next :PayOut ] ;
    horis:otherwise :Deny .

:PayOut a horis:ActionStep ;
    horis:tool :claims.pay_out ;
    horis:requires "FILTER NOT EXISTS { ?this :paymentRef ?r }" ;
    horis:bind [ horis:arg "claim" ; horis:var "this" ] .

:Deny a horis:ActionStep ;
    horis:tool :claims.deny ;
    horis:requires "FILTER NOT EXISTS { ?this :deniedAt ?t }" ;
    horis:bind [ horis:arg "claim" ; horis:var "this" ] .
"""

WRONG = "?this :paymentRef ?ref ."


def _written(tmp_path: Path, rule: str, text: str = FILE) -> tuple[Path, int]:
    path = tmp_path / "claims.ttl"
    written = text.replace("RULE", rule)
    path.write_text(written, encoding="utf-8")
    return path, written[: written.index("RULE" if rule == "" else rule)].count("\n") + 1


def _found(path: Path) -> list[Problem]:
    return problems(path)


def test_the_workflow_these_tests_edit_is_clean(tmp_path: Path) -> None:
    path, _ = _written(tmp_path, "FILTER (?a > 0)")
    assert _found(path) == []


@pytest.mark.parametrize("rule", [
    pytest.param(WRONG, id="a-triple"),
    # the same asked as FILTER EXISTS: it needs the match the triple does, and validated
    pytest.param("FILTER EXISTS { ?this :paymentRef ?ref }", id="filter-exists"),
])
def test_a_rule_reading_what_only_a_later_step_writes_is_a_warning(
        tmp_path: Path, rule: str) -> None:
    path, line = _written(tmp_path, rule)
    (p,) = _found(path)
    assert (p.severity, p.line, p.node) == ("warning", line, ":Decide"), p
    assert p.message == (
        "a horis:when rule requires :paymentRef of ?this, which only :claims.pay_out (at "
        ":PayOut) writes, and no step that can run before :Decide does: the rule never holds "
        "here, and every instance goes on as if it were false (to the next rule, or "
        "horis:otherwise)"), p.message
    assert p.hint == ("test what a step before :Decide writes, or move the decision after the "
                      "step that writes :paymentRef")


def test_no_alarm_when_a_step_before_the_decision_can_write_it(tmp_path: Path) -> None:
    # the deny loops back to the decision: the payout may have run before it the second time
    looped = FILE.replace(
        ":Deny a horis:ActionStep ;\n    horis:tool :claims.deny ;",
        ":Deny a horis:ActionStep ;\n    horis:tool :claims.deny ;\n    horis:next :Decide ;")
    looped = looped.replace(
        'horis:requires "FILTER NOT EXISTS { ?this :paymentRef ?r }" ;',
        'horis:requires "FILTER NOT EXISTS { ?this :paymentRef ?r }" ;\n    horis:next :Deny ;')
    path, _ = _written(tmp_path, WRONG, looped)
    assert not [p for p in _found(path) if ":paymentRef" in p.message]


def test_no_alarm_when_the_world_gives_it(tmp_path: Path) -> None:
    _, line = _written(tmp_path, WRONG)
    (tmp_path / "world.ttl").write_text(
        "@prefix : <http://example.org/claims#> .\n:c1 a :Claim ; :paymentRef \"PAY-1\" .\n",
        encoding="utf-8")
    bare = horismos_forked(tmp_path, "validate", "claims.ttl", timeout=120)
    assert f"claims.ttl:{line}: warning: :Decide: a horis:when rule" in bare.stdout, bare.stdout
    given = horismos_forked(tmp_path, "validate", "claims.ttl", "--world", "world.ttl",
                            timeout=120)
    assert given.returncode == 0 and "warning" not in given.stdout, given.stdout
