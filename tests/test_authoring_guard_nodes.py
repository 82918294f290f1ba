"""A guard against a second call recognised by the node it tests, not by its property alone.

A refund tool, not idempotent, writes ``:refundRef`` on the refund (``horis:subject
"refund"``). A guard on ``:refundRef`` of the order — in the tool's own ``horis:requires``, as
``OPTIONAL { ?this :refundRef ?r } FILTER (!BOUND(?r))`` in the step's, or in the rule leading
to the step — still held after the refund was paid, so a rerun paid it again; each was taken
as a guard, by its property, and ``validate`` said nothing. Each is now read by the node it
tests, as the step's own ``FILTER NOT EXISTS`` already was (:mod:`horismos._guard_writes`), and
every fix the warnings give names ``?refund``, where the tool writes."""

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
:Refund a owl:Class .
:refundOf a owl:ObjectProperty ; rdfs:domain :Refund ; rdfs:range :Order .
:refundRef a owl:DatatypeProperty ; rdfs:range xsd:string .

:shop.refund a horis:Tool ;
    horis:takes [
        horis:arg [ horis:name "order" ; horis:type :Order ] ;
        horis:arg [ horis:name "refund" ; horis:type :Refund ]
    ] ;
    horis:effect [
        horis:subject "refund" ;
        horis:asserts [ horis:property :refundRef ; horis:type xsd:string ]
    ] ;
    horis:binding "python:shop.refund" TOOL .

:Refunds a horis:Workflow ; horis:focusType :Order ; horis:start :Check .

:Check a horis:DecisionStep ;
    horis:when [ horis:order 1 ; horis:requires \"\"\" RULE \"\"\" ; horis:next :PayRefund ] ;
    horis:otherwise :AskOperator .

:AskOperator a horis:WaitStep ;
    horis:reason "the order was refunded already, or is not one to refund" ;
    horis:wake horis:OperatorInput ; horis:delivery horis:Final .

:PayRefund a horis:ActionStep ;
    horis:tool :shop.refund ;
    horis:requires \"\"\" ?refund :refundOf ?this . GUARD \"\"\" ;
    horis:bind [ horis:arg "order" ; horis:var "this" ] .
"""

ORDER_GUARD = "FILTER NOT EXISTS { ?this :refundRef ?r }"
REFUND_GUARD = "FILTER NOT EXISTS { ?refund :refundRef ?r }"


def _written(tmp_path: Path, rule: str = "?this a :Order .", guard: str = "",
             tool: str = "") -> Path:
    path = tmp_path / "shop.ttl"
    text = FLOW.replace("RULE", rule).replace("GUARD", guard).replace("TOOL", tool)
    path.write_text(text, encoding="utf-8")
    return path


def _guards(path: Path) -> list[Problem]:
    try:
        found = load_definitions([path]).warnings
    except AuthoringError as e:
        found = e.problems
    return [p for p in found if "second run" in p.message or "never closes" in p.message]


RERUN_FIX = "add FILTER NOT EXISTS { ?refund :refundRef ?x } to :PayRefund's horis:requires"


def test_a_guard_in_the_tools_requires_on_another_node_is_no_guard(tmp_path: Path) -> None:
    path = _written(tmp_path, tool='; horis:requires "FILTER NOT EXISTS { ?order :refundRef ?r }"')
    (p,) = _guards(path)
    assert "nothing stops :PayRefund on a second run" in p.message, p.message
    assert (p.hint or "").startswith(RERUN_FIX), p.hint


def test_an_optional_and_not_bound_guard_on_another_node_is_said_where_it_is(
    tmp_path: Path,
) -> None:
    path = _written(tmp_path, guard="OPTIONAL { ?this :refundRef ?r } FILTER (!BOUND(?r))")
    (p,) = _guards(path)
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if "!BOUND" in t)
    assert (p.line, p.node) == (line, ":PayRefund"), p
    assert "writes :refundRef on ?refund, not on ?this" in p.message, p.message
    assert p.hint == "test it where the tool writes it: FILTER NOT EXISTS { ?refund :refundRef ?v }"


def test_a_rule_forbidding_it_of_the_focus_stops_no_rerun_of_a_refund(tmp_path: Path) -> None:
    path = _written(tmp_path, rule=f"?this a :Order . {ORDER_GUARD}")
    (p,) = _guards(path)
    assert "nothing stops :PayRefund on a second run" in p.message, p.message
    assert (p.hint or "").startswith(RERUN_FIX), p.hint


@pytest.mark.parametrize(
    ("guard", "tool"),
    [
        (REFUND_GUARD, ""),
        ("OPTIONAL { ?refund :refundRef ?r } FILTER (!BOUND(?r))", ""),
        ("", '; horis:requires "FILTER NOT EXISTS { ?refund :refundRef ?r }"'),
    ],
)
def test_a_guard_on_the_node_written_is_said_nothing_of(
    tmp_path: Path, guard: str, tool: str
) -> None:
    assert _guards(_written(tmp_path, guard=guard, tool=tool)) == []


def test_validate_says_it_with_the_node_written(tmp_path: Path) -> None:
    _written(tmp_path, tool='; horis:requires "FILTER NOT EXISTS { ?order :refundRef ?r }"')
    done = horismos_forked(tmp_path, "validate", "shop.ttl")
    assert done.returncode == 0, done.stdout + done.stderr
    assert RERUN_FIX in done.stdout, done.stdout
    assert "?order :refundRef ?x" not in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_the_guard_to_write_names_a_value_variable_the_pattern_does_not_bind(
    tmp_path: Path,
) -> None:
    # ?v is the refund's amount here: FILTER NOT EXISTS { ?refund :refundRef ?v } would ask
    # for a reference equal to the amount, never written, so the fix would never close either
    path = _written(tmp_path, guard=f"?refund :amount ?v . {ORDER_GUARD}")
    path.write_text(path.read_text().replace(
        ":refundRef a owl:DatatypeProperty", ":amount a owl:DatatypeProperty .\n"
        ":refundRef a owl:DatatypeProperty"), encoding="utf-8")
    (p,) = _guards(path)
    assert "writes :refundRef on ?refund, not on ?this" in p.message, p.message
    assert p.hint == "test it where the tool writes it: FILTER NOT EXISTS { ?refund :refundRef ?x }"
    paid = "?refund :amount ?v . FILTER NOT EXISTS { ?this :paidOut ?p }"
    unwritten = _written(tmp_path, guard=paid)
    unwritten.write_text(unwritten.read_text().replace(
        ":refundRef a owl:DatatypeProperty", ":amount a owl:DatatypeProperty .\n"
        ":paidOut a owl:DatatypeProperty .\n:refundRef a owl:DatatypeProperty"), encoding="utf-8")
    (p,) = _guards(unwritten)
    assert (p.hint or "").startswith(
        "guard on what the tool writes: FILTER NOT EXISTS { ?refund :refundRef ?x }"), p.hint
