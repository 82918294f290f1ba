"""``sh:lessThan`` between two properties one tool writes whose values are never ordered:
``sh:path :enrolledAt ; sh:lessThan :enrolmentId`` (a time stamp and a string reference,
``:enrolmentExpires`` meant) validated, and the gate rejected every enrolment (the tool is not
idempotent) after the patient had been enrolled, nothing landing. Found walking a clinical
trial enrolment."""

from __future__ import annotations

from pathlib import Path

import pytest
from forked import horismos_forked

FILE = """@prefix :      <http://example.org/trial#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix sh:    <http://www.w3.org/ns/shacl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Patient a owl:Class .
:Trial a owl:Class .
:enrolledAt a owl:DatatypeProperty ; rdfs:range xsd:dateTime .
:enrolmentExpires a owl:DatatypeProperty ; rdfs:range xsd:dateTime .
:enrolmentId a owl:DatatypeProperty ; rdfs:range xsd:string .
:enrolledIn a owl:ObjectProperty ; rdfs:range :Trial .

:PatientShape a sh:NodeShape ;
    sh:targetClass :Patient ;
    sh:property [ sh:path :enrolledAt ;
                  sh:lessThan OTHER ] .

:ctms.enrol a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:subject "patient" ;
        horis:asserts [ horis:property :enrolledIn ; horis:type :Trial ] ;
        horis:asserts [ horis:property :enrolmentId ; horis:type xsd:string ] ;
        horis:asserts [ horis:property :enrolmentExpires ; horis:type xsd:dateTime ] ;
        horis:asserts [ horis:property :enrolledAt ; horis:value horis:now ] ] ;
    horis:binding "python:trial.enrol" ;
    horis:idempotent false .

:Enrolment a horis:Workflow ; horis:focusType :Patient ; horis:start :Enrol .

:Enrol a horis:ActionStep ;
    horis:tool :ctms.enrol ;
    horis:requires "FILTER NOT EXISTS { ?this :enrolledIn ?t }" ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""


def _validate(tmp_path: Path, other: str) -> str:
    (tmp_path / "trial.ttl").write_text(FILE.replace("OTHER", other), encoding="utf-8")
    return horismos_forked(tmp_path, "validate", "trial.ttl").stdout


def test_a_less_than_between_two_written_times_is_clean(tmp_path: Path) -> None:
    out = _validate(tmp_path, ":enrolmentExpires")
    assert ": error: " not in out and ": warning: " not in out, out


@pytest.mark.parametrize(("other", "written", "why"), [
    (":enrolmentId", "a literal of xsd:string", "a date or time and a string are never ordered"),
    (":enrolledIn", "a node of :Trial", "a node is never ordered"),
])
def test_a_less_than_between_values_never_ordered_is_an_error_at_the_shape(
    tmp_path: Path, other: str, written: str, why: str
) -> None:
    out = _validate(tmp_path, other)
    line = FILE[: FILE.index("sh:lessThan OTHER")].count("\n") + 1
    assert out.splitlines()[0] == (
        f"trial.ttl:{line}: error: :ctms.enrol: the effect writes :enrolledAt as a literal of "
        f"xsd:dateTime and {other} as {written}, but shape :PatientShape requires :enrolledAt "
        f"sh:lessThan {other}, and {why}: the gate would reject every call of :ctms.enrol that "
        f"writes them, after the tool has acted — compare :enrolledAt with a property of its "
        "kind in sh:lessThan, or drop the sh:lessThan"), out
