"""A FILTER bounding a value by a number its domain shapes never allow it. The shape keeps a
claim's ``:fraudScore`` between 0 and 1, and the decision was written on a percentage:
``FILTER (?s > 80)`` was never true, so no likely fraud was sent to the denial and every claim
was paid; ``FILTER (?s < 80)`` guarding the payout held for every claim. Both validated."""

from __future__ import annotations

from pathlib import Path

import pytest
from forked import horismos_forked

FILE = """@prefix :      <http://example.org/claims#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix sh:    <http://www.w3.org/ns/shacl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .

:Claim a owl:Class .
:fraudScore a owl:DatatypeProperty ; rdfs:range xsd:decimal .
:deniedAt a owl:DatatypeProperty ; rdfs:range xsd:dateTime .

:ClaimShape a sh:NodeShape ; sh:targetClass :Claim ;
    sh:property [ sh:path :fraudScore ; sh:minInclusive 0.0 ; sh:maxInclusive 1.0 ] .

:letters.deny a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "claim" ; horis:type :Claim ] ] ;
    horis:effect [ horis:subject "claim" ;
        horis:asserts [ horis:property :deniedAt ; horis:value horis:now ] ] ;
    horis:binding "python:deny" .

:Screen a horis:Workflow ; horis:focusType :Claim ; horis:start :FraudGate .
:FraudGate a horis:DecisionStep ;
    horis:when [ horis:order 1 ;
                 horis:requires \"\"\" ?this :fraudScore ?s .
                                    FILTER (FILTERED) \"\"\" ;
                 horis:next :Deny ] ;
    horis:otherwise :Deny .
:Deny a horis:ActionStep ;
    horis:tool :letters.deny ;
    horis:bind [ horis:arg "claim" ; horis:var "this" ] .
"""

LINE = FILE[: FILE.index("FILTER (FILTERED)")].count("\n") + 1


def _said(tmp_path: Path, filtered: str) -> list[str]:
    (tmp_path / "claims.ttl").write_text(FILE.replace("FILTERED", filtered), encoding="utf-8")
    out = horismos_forked(tmp_path, "validate", "claims.ttl").stdout
    return [x for x in out.splitlines() if "lies beyond" in x]


@pytest.mark.parametrize(("filtered", "outcome"), [
    ("?s > 80", "no value meets the comparison, so the FILTER is never true"),
    ("80 < ?s", "no value meets the comparison, so the FILTER is never true"),
    ("?s < 80", "every value meets the comparison, so the FILTER excludes nothing"),
    ("?s >= 0.5 && ?s <= 95", "every value meets the comparison, so the FILTER excludes nothing"),
])
def test_a_number_beyond_the_shapes_bounds_is_said_at_its_line(
        tmp_path: Path, filtered: str, outcome: str) -> None:
    said = _said(tmp_path, filtered)
    shown = {"80 < ?s": "?s > 80", "?s >= 0.5 && ?s <= 95": "?s <= 95"}.get(filtered, filtered)
    number = shown.split()[-1]
    assert said == [
        f"claims.ttl:{LINE}: warning: :FraudGate: horis:requires: FILTER ({shown}) compares ?s, "
        f"a value of :fraudScore, with {number}, but shape :ClaimShape allows :fraudScore only "
        f"within sh:minInclusive 0.0 and sh:maxInclusive 1.0, which {number} lies beyond: "
        f"{outcome} — write {int(number) / 100:g} for {number}%: :fraudScore is a fraction, "
        "0.0 to 1.0"
    ], said


@pytest.mark.parametrize("filtered", [
    "?s > 0.8",
    "?s >= 1.0",  # at the bound: not beyond it
    "?s < 0",
    "NOT EXISTS { ?this :fraudScore ?t . FILTER (?t > 80) }",  # not the group's own FILTER
])
def test_a_number_the_shapes_allow_is_not_said(tmp_path: Path, filtered: str) -> None:
    assert _said(tmp_path, filtered) == []
