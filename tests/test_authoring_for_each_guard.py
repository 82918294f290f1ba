"""A ``horis:forEach`` step on a loop whose own guard excludes the items already done: an order
reserves stock for each of its lines not yet reserved (``FILTER NOT EXISTS { ?line
:reservationId ?r }``, the property the reservation writes on the line), checks the order, and
goes round again while it is incomplete. ``validate`` warned that each time round called the
reservation again: the guard the modeler wrote to stop exactly that was read only when it
tested the focus, so the warning was false and taught modelers to ignore it. A guard of the
item the tool writes on now counts; a loop whose guard does not stop a second call is still
said."""

from __future__ import annotations

from pathlib import Path

import pytest
from forked import horismos_forked

FILE = """@prefix :      <http://example.org/wh#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Order a owl:Class .
:Line a owl:Class .
:hasLine a owl:ObjectProperty ; rdfs:domain :Order ; rdfs:range :Line .
:quantity a owl:DatatypeProperty ; rdfs:range xsd:integer .
:reservationId a owl:DatatypeProperty ; rdfs:range xsd:string .
:shippedAt a owl:DatatypeProperty ; rdfs:range xsd:dateTime .
:checkedAt a owl:DatatypeProperty .
:complete a owl:DatatypeProperty ; rdfs:range xsd:boolean .

:stock.reserve a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "line" ; horis:type :Line ] ;
                  horis:arg [ horis:name "quantity" ; horis:type xsd:integer ] ] ;
    TOOL_REQUIRES
    horis:effect [ horis:subject "line" ;
        horis:asserts [ horis:property :reservationId ; horis:type xsd:string ] ] ;
    horis:binding "python:stock.reserve" ;
    horis:idempotent false .

:stock.check a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "order" ; horis:type :Order ] ] ;
    horis:effect [ horis:subject "order" ;
        horis:asserts [ horis:property :checkedAt ; horis:value horis:now ] ;
        horis:asserts [ horis:property :complete ; horis:type xsd:boolean ] ] ;
    horis:binding "python:stock.check" ;
    horis:idempotent true .

:Fulfil a horis:Workflow ; horis:focusType :Order ; horis:start :ReserveLines .

:ReserveLines a horis:ActionStep ;
    horis:tool :stock.reserve ;
    horis:forEach true ;
    horis:requires \"\"\" ?this :hasLine ?line .
                       ?line :quantity ?quantity .
                       GUARD \"\"\" ;
    horis:next :Check .

:Check a horis:ActionStep ;
    horis:tool :stock.check ;
    horis:bind [ horis:arg "order" ; horis:var "this" ] ;
    horis:next :Done .

:Done a horis:DecisionStep ;
    horis:when [ horis:order 1 ; horis:requires "?this :complete false ." ;
                 horis:next :ReserveLines ] ;
    horis:otherwise :Finish .

:Finish a horis:ActionStep ; horis:tool :stock.check ;
    horis:bind [ horis:arg "order" ; horis:var "this" ] .
"""

AGAIN = "each time round calls it again"


def _said(tmp_path: Path, guard: str, tool_requires: str = "") -> list[str]:
    text = FILE.replace("GUARD", guard).replace("TOOL_REQUIRES", tool_requires)
    (tmp_path / "wh.ttl").write_text(text, encoding="utf-8")
    out = horismos_forked(tmp_path, "validate", "wh.ttl").stdout
    return [line for line in out.splitlines() if ": warning: " in line or ": error: " in line]


def test_a_for_each_whose_guard_excludes_the_items_done_is_not_said(tmp_path: Path) -> None:
    said = _said(tmp_path, "FILTER NOT EXISTS { ?line :reservationId ?r }")
    assert said == [], said


def test_the_tools_own_guard_of_the_item_counts_too(tmp_path: Path) -> None:
    said = _said(
        tmp_path,
        "",
        'horis:requires "FILTER NOT EXISTS { ?line :reservationId ?r }" ;',
    )
    assert not any(AGAIN in s for s in said), said


@pytest.mark.parametrize(
    "guard",
    [
        "",  # no guard: every line is reserved again each time round
        "FILTER NOT EXISTS { ?line :shippedAt ?t }",  # a property the tool never writes
        "OPTIONAL { ?line :reservationId ?r }",  # reads it, excludes nothing
    ],
)
def test_a_loop_its_guard_does_not_stop_is_still_said(tmp_path: Path, guard: str) -> None:
    said = _said(tmp_path, guard)
    line = FILE[: FILE.index(":ReserveLines a horis:ActionStep")].count("\n") + 1
    assert any(
        s.startswith(f"wh.ttl:{line}: warning: :ReserveLines: the step is on a cycle")
        and AGAIN in s
        for s in said
    ), said
