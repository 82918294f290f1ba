"""What the authoring tests over a claims workflow share: the prefixes their files open
with, the assess and pay-out tools, and the problems ``load_definitions`` finds in one (its
warnings, or the errors that stopped it)."""

from __future__ import annotations

from pathlib import Path

from horismos import AuthoringError, Problem, load_definitions

CLAIMS_PREFIXES = """\
@prefix :      <http://example.org/claims#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .
"""

# assessing a claim (idempotent: it computes an amount), then paying it out (not idempotent)
ASSESS_AND_PAY_OUT = """\
:claims.assess a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "claim" ; horis:type :Claim ] ] ;
    horis:effect [ horis:subject "claim" ;
        horis:asserts [ horis:property :assessedAmount ; horis:type xsd:decimal ] ] ;
    horis:binding "python:assess" ; horis:idempotent true .

:claims.pay_out a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "claim" ; horis:type :Claim ] ] ;
    horis:effect [ horis:subject "claim" ;
        horis:asserts [ horis:property :paymentRef ; horis:type xsd:string ] ] ;
    horis:binding "python:pay_out" ;
    horis:idempotent false .
"""


def problems(path: Path) -> list[Problem]:
    """What validate says of ``path``: its warnings, or the errors that stopped the load."""
    try:
        return list(load_definitions([path]).warnings)
    except AuthoringError as e:
        return list(e.problems)
