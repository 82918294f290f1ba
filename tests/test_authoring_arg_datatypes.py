"""An argument declared with a datatype the values it is given never have, as the call judges
them: ``xsd:int`` for a bare ``1200`` (an ``xsd:integer``), ``xsd:integer`` for an amount an
earlier step's effect writes as ``xsd:decimal``. Each passed ``horismos validate`` before; the
run assessed the claim (the first tool acted), then refused every payout ("must be a literal
of datatype xsd:int")."""

from __future__ import annotations

from pathlib import Path

import pytest
from claims_files import CLAIMS_PREFIXES, problems
from rdflib import XSD, Literal, URIRef

from horismos import Problem
from horismos._argument_datatypes import accepts
from horismos._tool_calls import literal_fits

FILE = CLAIMS_PREFIXES + """
:Claim a owl:Class .
:claimedAmount a owl:DatatypeProperty ; rdfs:domain :Claim ; rdfs:range xsd:integer .
:assessedAmount a owl:DatatypeProperty ; rdfs:domain :Claim ; rdfs:range xsd:decimal .
:paymentRef a owl:DatatypeProperty ; rdfs:domain :Claim ; rdfs:range xsd:string .

:claims.assess a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "claim" ; horis:type :Claim ] ] ;
    horis:effect [ horis:subject "claim" ;
        horis:asserts [ horis:property :assessedAmount ; horis:type xsd:decimal ] ] ;
    horis:binding "python:assess" ; horis:idempotent true .

:claims.pay_out a horis:Tool ;
    horis:takes [
        horis:arg [ horis:name "claim" ; horis:type :Claim ] ;
        horis:arg [ horis:name "amount" ; horis:type AMOUNT_TYPE ]
    ] ;
    horis:effect [ horis:subject "claim" ;
        horis:asserts [ horis:property :paymentRef ; horis:type xsd:string ] ] ;
    horis:binding "python:pay_out" ;
    horis:idempotent false .

:Adjudicate a horis:Workflow ; horis:focusType :Claim ; horis:start :Assess .

:Assess a horis:ActionStep ;
    horis:tool :claims.assess ;
    horis:bind [ horis:arg "claim" ; horis:var "this" ] ;
    horis:next :PayOut .

:PayOut a horis:ActionStep ;
    horis:tool :claims.pay_out ;
    horis:requires \"\"\" ?this AMOUNT_PROPERTY ?amount .
                       FILTER NOT EXISTS { ?this :paymentRef ?r } \"\"\" ;
    horis:bind [ horis:arg "claim" ; horis:var "this" ] .
"""

REQUIRES_LINE = FILE[: FILE.index("AMOUNT_PROPERTY")].count("\n") + 1


def _found(tmp_path: Path, amount_type: str, prop: str) -> list[Problem]:
    path = tmp_path / "claims.ttl"
    path.write_text(FILE.replace("AMOUNT_TYPE", amount_type).replace("AMOUNT_PROPERTY", prop),
                    encoding="utf-8")
    return problems(path)


def test_an_int_argument_given_a_bare_integer_is_a_warning(tmp_path: Path) -> None:
    """``:claimedAmount 1200`` is an ``xsd:integer``: the call takes exactly ``xsd:int``."""
    (p,) = _found(tmp_path, "xsd:int", ":claimedAmount")
    assert (p.severity, p.line, p.node) == ("warning", REQUIRES_LINE, ":PayOut"), p
    assert p.message.startswith(
        "horis:requires binds ?amount to a value of :claimedAmount, whose rdfs:range is "
        'xsd:integer, but it gives argument "amount" of :claims.pay_out, which takes a literal '
        "of xsd:int (the call takes a literal of exactly xsd:int, not one of xsd:integer): "
        "every call is refused"), p.message
    assert p.hint is not None and p.hint.startswith('declare "amount" horis:type xsd:integer')


@pytest.mark.parametrize("amount_type", ["xsd:integer", "xsd:int"])
def test_an_integer_argument_given_what_an_effect_writes_as_decimal_is_a_warning(
        tmp_path: Path, amount_type: str) -> None:
    """``:assessedAmount`` (range ``xsd:decimal``) may be written ``1200`` in a world, and an
    ``xsd:integer`` argument takes that; but :claims.assess writes it as ``xsd:decimal``, and
    the payout refused every amount the assessment wrote."""
    (p,) = _found(tmp_path, amount_type, ":assessedAmount")
    assert (p.severity, p.line, p.node) == ("warning", REQUIRES_LINE, ":PayOut"), p
    assert "claims.assess writes as a literal of xsd:decimal" in p.message or (
        "whose rdfs:range is xsd:decimal" in p.message), p.message
    assert p.hint is not None and p.hint.startswith('declare "amount" horis:type xsd:decimal')


def test_an_integer_argument_given_a_decimal_property_no_tool_writes_is_a_warning(
        tmp_path: Path) -> None:
    """A parcel's ``:weight`` (range ``xsd:decimal``) given to an ``xsd:integer`` argument:
    the check let it pass since ``12`` is written bare as an integer; ``2.5`` was refused by
    the call, every parcel of the shipment left unlabelled. Said by the range alone."""
    path = tmp_path / "claims.ttl"
    path.write_text(
        FILE.replace("AMOUNT_TYPE", "xsd:integer").replace("AMOUNT_PROPERTY", ":listedAmount")
        + ":listedAmount a owl:DatatypeProperty ; rdfs:domain :Claim ; rdfs:range xsd:decimal .\n",
        encoding="utf-8",
    )
    (p,) = problems(path)
    assert (p.severity, p.line, p.node) == ("warning", REQUIRES_LINE, ":PayOut"), p
    assert p.message == (
        "horis:requires binds ?amount to a value of :listedAmount, whose rdfs:range is "
        'xsd:decimal, but it gives argument "amount" of :claims.pay_out, which takes a literal of '
        "xsd:integer: a value of xsd:decimal is taken only when written as an integer (12); one "
        "with a fraction (2.5) is refused, after the steps before it have acted"
    )
    assert p.hint == 'declare "amount" horis:type xsd:decimal'


@pytest.mark.parametrize(("amount_type", "prop"), [
    ("xsd:decimal", ":claimedAmount"),  # an integer is taken for a decimal
    ("xsd:integer", ":claimedAmount"),
    ("xsd:decimal", ":assessedAmount"),
    ("rdfs:Literal", ":assessedAmount"),
])
def test_no_alarm_where_the_call_takes_the_values(
        tmp_path: Path, amount_type: str, prop: str) -> None:
    assert _found(tmp_path, amount_type, prop) == []


@pytest.mark.parametrize("literal", [
    Literal(5), Literal("5", datatype=XSD.int), Literal("5.0", datatype=XSD.decimal),
    Literal("a"), Literal("a", datatype=XSD.normalizedString), Literal(1.5),
    Literal("2024-01-01", datatype=XSD.date), Literal(True),
])
@pytest.mark.parametrize("argument", [
    XSD.integer, XSD.int, XSD.decimal, XSD.double, XSD.string, XSD.normalizedString,
    XSD.date, XSD.boolean,
])
def test_the_load_check_takes_what_the_call_takes(literal: Literal, argument: URIRef) -> None:
    given = literal.datatype or XSD.string
    assert accepts(argument, given) == literal_fits(literal, argument)
