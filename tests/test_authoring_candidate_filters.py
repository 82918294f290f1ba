"""A FILTER of a proposal's candidates query on a variable nothing binds: ``FILTER (?age >=
?minAge)`` where the trial's triple binds ``?min`` (or ``?Min`` beside ``FILTER (?age >=
?min)``: SPARQL's names are case-sensitive, in both stores). The FILTER was never true, so the
proposal had no option and every patient took the ``horis:fallback``, whose tool closed the
screening; ``validate`` said "valid", where the same FILTER in a ``horis:requires`` was an
error. Found walking a clinical trial enrolment."""

from __future__ import annotations

from pathlib import Path

import pytest
from forked import horismos_forked

FILE = """@prefix :      <http://example.org/trial#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Patient a owl:Class .
:Trial a owl:Class .
:age a owl:DatatypeProperty ; rdfs:domain :Patient ; rdfs:range xsd:integer .
:minAge a owl:DatatypeProperty ; rdfs:domain :Trial ; rdfs:range xsd:integer .
:closedAt a owl:DatatypeProperty ; rdfs:domain :Patient ; rdfs:range xsd:dateTime .
:enrolledIn a owl:ObjectProperty ; rdfs:domain :Patient ; rdfs:range :Trial .

:ctms.enrol a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ;
                  horis:arg [ horis:name "trial" ; horis:type :Trial ] ] ;
    horis:effect [ horis:subject "patient" ;
        horis:asserts [ horis:property :enrolledIn ; horis:type :Trial ] ] ;
    horis:binding "python:trial.enrol" ;
    horis:idempotent false .

:ctms.close a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:subject "patient" ;
        horis:asserts [ horis:property :closedAt ; horis:value horis:now ] ] ;
    horis:binding "python:trial.close" ;
    horis:idempotent true .

:Screen a horis:Workflow ; horis:focusType :Patient ; horis:start :PickTrial .

:PickTrial a horis:ProposalStep ;
    horis:candidates [ horis:query \"\"\"
        ?this :age ?age .
        ?trial a :Trial ; :minAge MIN .
        FILTER (?age >= LIMIT)\"\"\" ] ;
    horis:as "trial" ;
    horis:rankBy "the closest match" ;
    horis:confidence 0.7 ;
    horis:next :Enrol ;
    horis:fallback :Close .

:Enrol a horis:ActionStep ;
    horis:tool :ctms.enrol ;
    horis:requires "FILTER NOT EXISTS { ?this :enrolledIn ?t }" ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .

:Close a horis:ActionStep ;
    horis:tool :ctms.close ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""


def _validate(tmp_path: Path, bound: str, read: str) -> tuple[list[str], int]:
    text = FILE.replace("MIN", bound).replace("LIMIT", read)
    (tmp_path / "trial.ttl").write_text(text, encoding="utf-8")
    out = horismos_forked(tmp_path, "validate", "trial.ttl").stdout
    said = [line for line in out.splitlines() if ": warning: " in line or ": error: " in line]
    return said, text[: text.index("FILTER (?age")].count("\n") + 1


def test_the_candidates_query_as_written_is_clean(tmp_path: Path) -> None:
    assert _validate(tmp_path, "?min", "?min")[0] == []


@pytest.mark.parametrize(("bound", "read"), [("?min", "?minAge"), ("?Min", "?min")])
def test_a_filter_on_a_variable_the_query_never_binds_is_an_error_at_its_line(
    tmp_path: Path, bound: str, read: str
) -> None:
    said, line = _validate(tmp_path, bound, read)
    assert said == [
        f"trial.ttl:{line}: error: :PickTrial: horis:query: {read} in a FILTER is bound by no "
        f"pattern of its group, so the filter is never true — did you mean {bound}? use a "
        f"variable the pattern binds, or bind {read} in a triple pattern beside the FILTER"
    ], said
