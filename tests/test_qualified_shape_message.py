"""A gate rejection from a ``sh:qualifiedValueShape`` says the shape it quotes in Turtle.

pyshacl quotes the qualified shape in its message: the run printed
``[ sh:minCount Literal("1", datatype=xsd:integer) ; sh:path <http://example.org/…#accountId> ]``
where every other message writes ``1`` and ``:accountId``.
"""

from __future__ import annotations

from pathlib import Path

from forked import horismos_forked

DEFS = """\
@prefix :      <http://example.org/onboard#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix sh:    <http://www.w3.org/ns/shacl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .
:Hire a owl:Class . :hasRequest a owl:ObjectProperty .
:accountId a owl:DatatypeProperty . :intakeRef a owl:DatatypeProperty .
:HireShape a sh:NodeShape ; sh:targetClass :Hire ;
    sh:property [ sh:path :hasRequest ;
        sh:qualifiedValueShape [ sh:path :accountId ; sh:minCount 1 ] ;
        sh:qualifiedMinCount 1 ] .
:record a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "hire" ; horis:type :Hire ] ] ;
    horis:effect [ horis:subject "hire" ;
        horis:asserts [ horis:property :intakeRef ; horis:type xsd:string ] ] ;
    horis:binding "python:hr.record" ; horis:idempotent true .
:Onboard a horis:Workflow ; horis:focusType :Hire ; horis:start :Intake .
:Intake a horis:ActionStep ; horis:tool :record ;
    horis:bind [ horis:arg "hire" ; horis:var "this" ] .
"""


def test_a_qualified_shape_rejection_quotes_the_shape_in_turtle(tmp_path: Path) -> None:
    (tmp_path / "defs.ttl").write_text(DEFS)
    (tmp_path / "world.ttl").write_text(
        "@prefix : <http://example.org/onboard#> .\n:bob a :Hire ; :hasRequest :r1 .\n")
    (tmp_path / "hr.py").write_text("def record(hire):\n    return {'intakeRef': 'I-1'}\n")
    ran = horismos_forked(tmp_path, "run", "defs.ttl", "--world", "world.ttl",
                          "--tools", "hr.py", "--focus", ":bob", timeout=120)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    said = ran.stdout + ran.stderr
    assert "rejected by the gate" in said, said
    assert "[ sh:minCount 1 ; sh:path :accountId ]" in said, said
    assert "Literal(" not in said and "<http://example.org" not in said
