"""A ``horis:forEach`` step whose calls each write, on the focus, a property a domain shape
allows one value of: a replenishment ordering an item from each active supplier, each order
writing ``:orderedFrom`` on the item (``horis:many true``), beside ``sh:maxCount 1``. With two
suppliers both orders were placed (the tool is not idempotent), the gate rejected the step's
result, nothing landed, and both calls were held in doubt; ``validate`` warned only that a
call returning two values would be rejected, which no call did."""

from __future__ import annotations

from pathlib import Path

import pytest
from forked import horismos_forked

FILE = """@prefix :      <http://example.org/repl#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix sh:    <http://www.w3.org/ns/shacl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Item a owl:Class .
:Supplier a owl:Class .
:suppliedBy a owl:ObjectProperty ; rdfs:domain :Item ; rdfs:range :Supplier .
:orderedFrom a owl:ObjectProperty ; rdfs:domain :Item ; rdfs:range :Supplier .

:ItemShape a sh:NodeShape ;
    sh:targetClass :Item ;
    sh:property [ sh:path :orderedFrom ; MAX ] .

:sup.place_order a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "item" ; horis:type :Item ] ;
                  horis:arg [ horis:name "supplier" ; horis:type :Supplier ] ] ;
    horis:effect [ horis:subject "item" ;
        horis:asserts [ horis:property :orderedFrom ; horis:type :Supplier ; horis:many true ] ] ;
    horis:binding "python:supplier.place_order" ;
    horis:idempotent false .

:Replenish a horis:Workflow ; horis:focusType :Item ; horis:start :OrderFromSuppliers .

:OrderFromSuppliers a horis:ActionStep ;
    horis:tool :sup.place_order ;
    horis:forEach true ;
    horis:requires \"\"\" ?this :suppliedBy ?supplier .
                       FILTER NOT EXISTS { ?this :orderedFrom ?supplier } \"\"\" ;
    horis:bind [ horis:arg "item" ; horis:var "this" ] .
"""


def _validate(tmp_path: Path, most: str) -> list[str]:
    (tmp_path / "repl.ttl").write_text(FILE.replace("MAX", most), encoding="utf-8")
    out = horismos_forked(tmp_path, "validate", "repl.ttl").stdout
    return [line for line in out.splitlines() if ": warning: " in line or ": error: " in line]


@pytest.mark.parametrize("most", ["sh:maxCount 3", "sh:minCount 1"])
def test_a_for_each_the_shape_lets_write_several_is_clean(tmp_path: Path, most: str) -> None:
    assert _validate(tmp_path, most) == []


def test_a_for_each_writing_what_the_shape_allows_one_of_is_said_at_the_for_each(
    tmp_path: Path,
) -> None:
    said = _validate(tmp_path, "sh:maxCount 1")
    line = FILE[: FILE.index("horis:forEach true")].count("\n") + 1
    assert (
        f"repl.ttl:{line}: warning: :OrderFromSuppliers: horis:forEach calls :sup.place_order "
        "once per solution, and every call writes :orderedFrom on the focus (horis:subject "
        '"item" is given from ?this), which a domain shape allows one value of (sh:maxCount 1): '
        "where the pattern has two solutions the focus would hold two, so the gate rejects the "
        "step's result after every call has acted — raise sh:maxCount for :orderedFrom in the "
        'shape if the focus takes several, or give "item" from a variable that differs per '
        "solution"
    ) in said, said
