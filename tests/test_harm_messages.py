"""What a person is told about a result the gate refused: the value as the tool returned it.

A value RDF cannot carry (a control character in a string) is shown as Python writes it;
``run`` read that text as N3, took it for a blank node's label and printed ``_:'P1…'``.
"""

from __future__ import annotations

from pathlib import Path

from forked import horismos_forked

DEFS = """\
@prefix :      <http://example.org/shop#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .
:Order a owl:Class .
:paymentRef a owl:DatatypeProperty .
:t.charge a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "order" ; horis:type :Order ] ] ;
    horis:effect [ horis:subject "order" ;
        horis:asserts [ horis:property :paymentRef ; horis:type xsd:string ] ] ;
    horis:binding "python:charge" ;
    horis:idempotent false .
:Pay a horis:Workflow ; horis:focusType :Order ; horis:start :Charge .
:Charge a horis:ActionStep ; horis:tool :t.charge ;
    horis:bind [ horis:arg "order" ; horis:var "this" ] .
"""


def test_a_rejected_value_rdf_cannot_carry_is_shown_as_returned(tmp_path: Path) -> None:
    (tmp_path / "defs.ttl").write_text(DEFS, encoding="utf-8")
    (tmp_path / "world.ttl").write_text(
        "@prefix : <http://example.org/shop#> .\n:o1 a :Order .\n", encoding="utf-8")
    (tmp_path / "shop.py").write_text(
        'def charge(order):\n    return {"paymentRef": "P1\\x1bok"}\n', encoding="utf-8")
    p = horismos_forked(tmp_path, "run", "defs.ttl", "--world", "world.ttl", "--focus", ":o1",
                        "--tools", "shop", timeout=120)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "rejected by the gate" in p.stdout
    assert "(value: 'P1\\x1bok')" in p.stdout, p.stdout
    assert "_:" not in p.stdout
