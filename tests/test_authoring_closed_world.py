"""A world's fact that a ``sh:closed true`` domain shape refuses. The shape judging every line
item named only ``:assessedAmount``, and the world's line items carry ``:lineCode`` and
``:lineAmount``: ``validate --world`` said "valid" (it judged a closed shape only against what
the effects write), and the run called the tool for each line, then had every result rejected
by the gate ("Node :l1 is closed. It cannot have value …"), after the tool had acted (a tool
not idempotent: every instance blocked at the step, found out only then). Now a warning at the
world file's line names the shape and the property to add to it."""

from __future__ import annotations

from pathlib import Path

import pytest
from forked import horismos_forked

ONTOLOGY = """@prefix :      <http://example.org/claims#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdf:   <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix sh:    <http://www.w3.org/ns/shacl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Item a owl:Class .
:SpecialItem a owl:Class ; rdfs:subClassOf :Item .
:lineCode a owl:DatatypeProperty ; rdfs:domain :Item ; rdfs:range xsd:string .
:assessedAmount a owl:DatatypeProperty ; rdfs:domain :Item ; rdfs:range xsd:decimal .

:ItemShape a sh:NodeShape ;
    sh:targetClass :Item ;
    sh:closed true ; sh:ignoredProperties ( rdf:type IGNORED ) ;
    sh:property [ sh:path :assessedAmount ; sh:datatype xsd:decimal ] .

:items.assess a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "item" ; horis:type :Item ] ] ;
    horis:effect [ horis:subject "item" ;
        horis:asserts [ horis:property :assessedAmount ; horis:type xsd:decimal ] ] ;
    horis:binding "python:assess" ;
    horis:idempotent false .

:Assess a horis:Workflow ; horis:focusType :Item ; horis:start :AssessItem .
:AssessItem a horis:ActionStep ;
    horis:tool :items.assess ;
    horis:requires "FILTER NOT EXISTS { ?this :assessedAmount ?a }" ;
    horis:bind [ horis:arg "item" ; horis:var "this" ] .
"""

WORLD = """@prefix : <http://example.org/claims#> .

:l1 a TYPE ;
    :lineCode "BUMPER" .
:l2 a :Item ; :lineCode "LIGHT" .
"""

TOOLS = """from pathlib import Path


def assess(item):
    Path("called").touch()
    return {"assessedAmount": 800}
"""


def _files(tmp_path: Path, ignored: str = "", typed: str = ":Item") -> None:
    (tmp_path / "onto.ttl").write_text(ONTOLOGY.replace("IGNORED", ignored), encoding="utf-8")
    (tmp_path / "world.ttl").write_text(WORLD.replace("TYPE", typed), encoding="utf-8")
    (tmp_path / "tools.py").write_text(TOOLS, encoding="utf-8")


FILES = ("onto.ttl", "--world", "world.ttl", "--tools", "tools.py")


@pytest.mark.parametrize("typed", [":Item", ":SpecialItem"])
def test_a_world_fact_a_closed_shape_refuses_is_said_at_its_line(
        tmp_path: Path, typed: str) -> None:
    _files(tmp_path, typed=typed)
    p = horismos_forked(tmp_path, "validate", *FILES, timeout=120)
    warnings = [x for x in p.stdout.splitlines() if ": warning: " in x]
    assert warnings == [
        'world.ttl:4: warning: :l1: the world gives :lineCode "BUMPER", but shape :ItemShape '
        "judging this node is sh:closed true and names no :lineCode in its sh:property shapes "
        "nor its sh:ignoredProperties: the node never conforms, so every step whose tool lands "
        "on it fails, the gate rejecting its result after the call, or is blocked before a "
        "tool that is not idempotent is called — add sh:property "
        "[ sh:path :lineCode ] to shape :ItemShape, or list :lineCode in its "
        "sh:ignoredProperties"
    ], p.stdout
    # what it warns of: the step is blocked there (the tool, not idempotent, is not called)
    run = horismos_forked(tmp_path, "run", *FILES, "--focus", ":l1", "--quiet", timeout=120)
    assert run.returncode == 4 and not (tmp_path / "called").exists(), run.stdout + run.stderr
    assert "is closed" in run.stdout, run.stdout


def test_a_property_the_shape_ignores_is_not_said(tmp_path: Path) -> None:
    _files(tmp_path, ignored=":lineCode")
    p = horismos_forked(tmp_path, "validate", *FILES, timeout=120)
    assert p.returncode == 0 and "warning" not in p.stdout, p.stdout + p.stderr
