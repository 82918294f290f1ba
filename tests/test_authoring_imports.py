"""``owl:imports`` of an ontology no loaded file declares: Horismos reads only the files it is
given. A tools file importing the domain ontology, validated and run without that file, had
none of its domain shapes loaded — the gate let through a payment reference the shape's
``sh:pattern`` refuses — while the import read as if the ontology came with it. Found walking
a replenishment domain split across an ontology, a tools file and a workflow file."""

from __future__ import annotations

from pathlib import Path

import pytest
from forked import horismos_forked

ONTOLOGY = """@prefix :     <http://example.org/repl#> .
@prefix owl:  <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix sh:   <http://www.w3.org/ns/shacl#> .
@prefix xsd:  <http://www.w3.org/2001/XMLSchema#> .

HEADER
:Item a owl:Class .
:paymentRef a owl:DatatypeProperty ; rdfs:domain :Item ; rdfs:range xsd:string .
:ItemShape a sh:NodeShape ; sh:targetClass :Item ;
    sh:property [ sh:path :paymentRef ; sh:pattern "^PAY-" ] .
"""

TOOLS = """@prefix r:     <http://example.org/repl#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

<http://example.org/repl/tools> a owl:Ontology ;
    owl:imports <http://example.org/repl> .

r:fin.pay a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "item" ; horis:type r:Item ] ] ;
    horis:effect [ horis:subject "item" ;
        horis:asserts [ horis:property r:paymentRef ; horis:type xsd:string ] ] ;
    horis:binding "python:finance.pay" ;
    horis:idempotent false .

r:Settle a horis:Workflow ; horis:focusType r:Item ; horis:start r:Pay .

r:Pay a horis:ActionStep ;
    horis:tool r:fin.pay ;
    horis:requires "FILTER NOT EXISTS { ?this r:paymentRef ?p }" ;
    horis:bind [ horis:arg "item" ; horis:var "this" ] .
"""


def _write(tmp_path: Path, header: str) -> None:
    (tmp_path / "ontology.ttl").write_text(ONTOLOGY.replace("HEADER", header), encoding="utf-8")
    (tmp_path / "tools.ttl").write_text(TOOLS, encoding="utf-8")


@pytest.mark.parametrize("header", ["<http://example.org/repl> a owl:Ontology .", ""])
def test_an_import_given_beside_its_file_is_clean(tmp_path: Path, header: str) -> None:
    _write(tmp_path, header)
    out = horismos_forked(tmp_path, "validate", "ontology.ttl", "tools.ttl").stdout
    assert "warning" not in out and "error" not in out, out


def test_an_import_whose_file_is_not_given_is_a_warning_at_the_import(tmp_path: Path) -> None:
    _write(tmp_path, "<http://example.org/repl> a owl:Ontology .")
    out = horismos_forked(tmp_path, "validate", "tools.ttl").stdout
    line = TOOLS[: TOOLS.index("owl:imports")].count("\n") + 1
    assert (
        f"tools.ttl:{line}: warning: <http://example.org/repl/tools>: owl:imports "
        "<http://example.org/repl> names an ontology no loaded file declares: Horismos reads "
        "only the files it is given and never fetches an import, so what that ontology says "
        "(its classes, properties and the domain shapes the gate holds results to) is not "
        "loaded — give the file of <http://example.org/repl> to validate and run beside this "
        "one (or a folder holding both)"
    ) in out.splitlines(), out
