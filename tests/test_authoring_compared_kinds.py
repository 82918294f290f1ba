"""A FILTER comparing a variable that holds nodes with one that holds literals, the wrong
variable written (``?a <= ?p`` for ``?a <= ?limit``): never true, so the decision never took
its rule and every claim was denied, while the definitions validated."""

from __future__ import annotations

from pathlib import Path

import pytest
from claims_files import CLAIMS_PREFIXES, problems

from horismos import Problem

FILE = CLAIMS_PREFIXES + """
:Claim a owl:Class .
:Policy a owl:Class .
:policy a owl:ObjectProperty ; rdfs:domain :Claim ; rdfs:range :Policy .
:claimedAmount a owl:DatatypeProperty ; rdfs:domain :Claim ; rdfs:range xsd:decimal .
:coverageLimit a owl:DatatypeProperty ; rdfs:domain :Policy ; rdfs:range xsd:decimal .
:closedAt a owl:DatatypeProperty ; rdfs:range xsd:dateTime .

:claims.close a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "claim" ; horis:type :Claim ] ] ;
    horis:effect [ horis:subject "claim" ;
        horis:asserts [ horis:property :closedAt ; horis:value horis:now ] ] ;
    horis:binding "python:close" .

:Adjudicate a horis:Workflow ; horis:focusType :Claim ; horis:start :Decide .

:Decide a horis:DecisionStep ;
    horis:when [ horis:order 1 ;
        horis:requires \"\"\" ?this :claimedAmount ?a ; :policy ?p .
                           ?p :coverageLimit ?limit .
                           FILTER (FILTERED) \"\"\" ;
        horis:next :Close ] ;
    horis:otherwise :Close .

:Close a horis:ActionStep ;
    horis:tool :claims.close ;
    horis:requires "FILTER NOT EXISTS { ?this :closedAt ?t }" ;
    horis:bind [ horis:arg "claim" ; horis:var "this" ] .
"""

LINE = FILE[: FILE.index("FILTERED")].count("\n") + 1


def _found(tmp_path: Path, filtered: str) -> list[Problem]:
    path = tmp_path / "claims.ttl"
    path.write_text(FILE.replace("FILTERED", filtered), encoding="utf-8")
    return problems(path)


@pytest.mark.parametrize(("filtered", "said"), [
    ("?a <= ?p", "FILTER (?a <= ?p) compares ?p, which the pattern binds to nodes, with ?a"),
    ("?a > 0 && ?p = ?a", "FILTER (?p = ?a) compares ?p, which the pattern binds to nodes"),
])
def test_a_node_compared_with_a_literal_is_a_warning(
        tmp_path: Path, filtered: str, said: str) -> None:
    (p,) = _found(tmp_path, filtered)
    assert (p.severity, p.line, p.node) == ("warning", LINE, ":Decide"), p
    assert said in p.message and "the FILTER is never true" in p.message, p.message
    assert p.hint == "compare ?a with ?limit in place of ?p", p.hint


@pytest.mark.parametrize("filtered", [
    "?a <= ?limit",  # both literals
    "?a != ?p",  # always true: not this check's to say
    "?a > 0 || ?a <= ?p",  # need not hold
    "!(?a <= ?p)",
])
def test_no_alarm_where_the_comparison_can_hold_or_need_not(
        tmp_path: Path, filtered: str) -> None:
    assert _found(tmp_path, filtered) == []


@pytest.mark.parametrize(("filtered", "said", "hint"), [
    pytest.param(
        "?a <= ?limit && ?closed > ?a",
        "FILTER (?closed > ?a) compares ?closed (a date or time, the rdfs:range of :closedAt) "
        "with ?a (a number, the rdfs:range of :claimedAmount): SPARQL never orders nor equates",
        "compare ?closed with a date or time, and ?a with a number", id="two-variables"),
    pytest.param(
        'NOW() > "2026-01-01"',
        'FILTER (NOW() > "2026-01-01") compares NOW() (a date or time) with "2026-01-01" (a '
        "string)", 'write "2026-01-01T00:00:00Z"^^xsd:dateTime for "2026-01-01"', id="now"),
    pytest.param(
        "?a < NOW()", "FILTER (?a < NOW()) compares ?a (a number, the rdfs:range of "
        ":claimedAmount) with NOW() (a date or time)",
        "compare ?a with a number, and NOW() with a date or time", id="a-number-and-now"),
])
def test_literals_sparql_never_compares_are_a_warning(
        tmp_path: Path, filtered: str, said: str, hint: str) -> None:
    """``?closed > ?a`` for ``?a > ...``: a time stamp is never ordered with an amount, in any
    store; ``NOW() > "2026-01-01"`` compares a date-time with a string. Never true."""
    text = FILE.replace("?p :coverageLimit ?limit .", "?p :coverageLimit ?limit .\n"
                        "                           OPTIONAL { ?this :closedAt ?closed }")
    path = tmp_path / "claims.ttl"
    path.write_text(text.replace("FILTERED", filtered), encoding="utf-8")
    found = problems(path)
    (p,) = [p for p in found if "SPARQL never orders" in p.message]
    assert (p.severity, p.node) == ("warning", ":Decide"), p
    assert p.line == text[: text.index("FILTERED")].count("\n") + 1, p
    assert said in p.message and "the FILTER is never true" in p.message, p.message
    assert p.hint == hint, p.hint


@pytest.mark.parametrize("filtered", [
    "?a <= ?limit", "?a > 0", "?a != ?limit", 'STR(?a) > "1"',
])
def test_no_alarm_for_literals_of_one_kind(tmp_path: Path, filtered: str) -> None:
    assert [p for p in _found(tmp_path, filtered) if "SPARQL never" in p.message] == []
