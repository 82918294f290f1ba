"""A ``sh:qualifiedValueShape`` no value can meet, where ``sh:qualifiedMinCount`` asks for
some: ``[ sh:path :enrolledIn ; sh:qualifiedValueShape [ sh:datatype xsd:string ] ;
sh:qualifiedMinCount 1 ]`` on a property whose values are nodes, or ``sh:qualifiedMinCount 2``
beside ``sh:maxCount 1``. No patient conformed, so a person's consent was refused at the wait
("the facts break the domain shapes") and the patient waited for ever, and an enrolment (not
idempotent) was rejected by the gate after the tool had acted; both validated. Found walking a
clinical trial enrolment; the same constraints outside a qualified shape were errors already."""

from __future__ import annotations

from pathlib import Path

import pytest
from forked import horismos_forked

FILE = """@prefix :      <http://example.org/trial#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix sh:    <http://www.w3.org/ns/shacl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Patient a owl:Class .
:Trial a owl:Class .
:enrolledIn a owl:ObjectProperty ; rdfs:domain :Patient ; rdfs:range :Trial .
:enrolmentId a owl:DatatypeProperty ; rdfs:domain :Patient ; rdfs:range xsd:string .

:PatientShape a sh:NodeShape ;
    sh:targetClass :Patient ;
    sh:property [ sh:path PATH ;
                  CONSTRAINTS ] .
"""


def _validate(tmp_path: Path, path: str, constraints: str) -> tuple[str, int]:
    text = FILE.replace("PATH", path).replace("CONSTRAINTS", constraints)
    (tmp_path / "trial.ttl").write_text(text, encoding="utf-8")
    out = horismos_forked(tmp_path, "validate", "trial.ttl").stdout
    return out, text[: text.index(constraints)].count("\n") + 1


@pytest.mark.parametrize(("path", "constraints"), [
    (":enrolledIn", "sh:qualifiedValueShape [ sh:class :Trial ] ; sh:qualifiedMinCount 1"),
    (":enrolledIn", "sh:qualifiedValueShape [ sh:datatype xsd:string ] ; sh:qualifiedMaxCount 0"),
    (":enrolledIn", "sh:qualifiedValueShape [ sh:class :Trial ] ; sh:qualifiedMinCount 1 ; "
                    "sh:maxCount 1"),
    (":enrolmentId", "sh:qualifiedValueShape [ sh:pattern \"^ENR-\" ] ; sh:qualifiedMinCount 1"),
])
def test_a_qualified_shape_some_value_meets_is_clean(
    tmp_path: Path, path: str, constraints: str
) -> None:
    out, _ = _validate(tmp_path, path, constraints)
    assert ": error: " not in out and ": warning: " not in out, out


@pytest.mark.parametrize(("path", "constraints", "said"), [
    (":enrolledIn", "sh:qualifiedValueShape [ sh:datatype xsd:string ] ; sh:qualifiedMinCount 1",
     "sh:qualifiedValueShape [ … ] asks for sh:qualifiedMinCount 1 values that are literals, "
     "but :enrolledIn's values are nodes, so no value conforms: the gate rejects the result of "
     "every tool that lands a node the shape judges, after the tool has acted — write sh:class "
     ":Trial in it"),
    (":enrolmentId", "sh:qualifiedValueShape [ sh:class :Trial ] ; sh:qualifiedMinCount 1",
     "sh:qualifiedValueShape [ … ] asks for sh:qualifiedMinCount 1 values that are nodes of a "
     "class, but :enrolmentId's values are literals of xsd:string, its rdfs:range, so no value "
     "conforms: the gate rejects the result of every tool that lands a node the shape judges, "
     "after the tool has acted — write sh:datatype xsd:string in it, or drop sh:class"),
    (":enrolledIn", "sh:qualifiedValueShape [ sh:class :Trial ] ; sh:qualifiedMinCount 2 ; "
                    "sh:maxCount 1",
     "sh:qualifiedMinCount 2 is above sh:maxCount 1, so no node conforms: the gate rejects the "
     "result of every tool that lands a node the shape judges, after the tool has acted — write "
     "sh:qualifiedMinCount no higher than sh:maxCount"),
])
def test_a_qualified_shape_no_node_meets_is_an_error_at_its_line(
    tmp_path: Path, path: str, constraints: str, said: str
) -> None:
    out, line = _validate(tmp_path, path, constraints)
    assert out.splitlines()[0] == f"trial.ttl:{line}: error: :PatientShape: {said}", out
