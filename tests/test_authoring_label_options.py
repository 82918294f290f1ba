"""A proposal whose candidates are labels (``?r a :Region ; rdfs:label ?option``) where the
step after it takes the option as a node: the model chose a string, and the tool's argument
check refused every choice after the steps before had acted. The ontology's files never
load RDFS, so nothing told ``rdfs:label``'s values were literals, and it validated."""

from __future__ import annotations

from pathlib import Path

from horismos import AuthoringError, Problem, load_definitions

FILE = """\
@prefix :      <http://example.org/ops#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix skos:  <http://www.w3.org/2004/02/skos/core#> .

:Incident a owl:Class .
:Region a owl:Class .
:near a owl:ObjectProperty ; rdfs:range :Region .
:region a owl:ObjectProperty ; rdfs:range :Region .
:code a owl:AnnotationProperty ; rdfs:range rdfs:Literal .

:ops.failover a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "incident" ; horis:type :Incident ] ;
                  horis:arg [ horis:name "region" ; horis:type :Region ] ] ;
    horis:effect [ horis:subject "incident" ;
        horis:asserts [ horis:property :region ; horis:type :Region ] ] ;
    horis:binding "python:failover" .

:Runbook a horis:Workflow ; horis:focusType :Incident ; horis:start :Pick .

:Pick a horis:ProposalStep ;
    horis:candidates [ horis:query "?this :near ?r . CANDIDATE" ] ;
    horis:rankBy "the closest region" ;
    horis:model "lexical:bm25" ;
    horis:next :FailOver .

:FailOver a horis:ActionStep ;
    horis:tool :ops.failover ;
    horis:requires "FILTER NOT EXISTS { ?this :region ?done }" ;
    horis:bind [ horis:arg "incident" ; horis:var "this" ] ,
               [ horis:arg "region" ; horis:var "option" ] .
"""


def _found(tmp_path: Path, candidate: str) -> tuple[list[Problem], int]:
    path = tmp_path / "ops.ttl"
    text = FILE.replace("CANDIDATE", candidate)
    path.write_text(text, encoding="utf-8")
    line = text[: text.index("horis:candidates")].count("\n") + 1
    try:
        return list(load_definitions([path]).warnings), line
    except AuthoringError as e:
        return list(e.problems), line


def test_the_workflow_these_tests_edit_is_clean(tmp_path: Path) -> None:
    assert _found(tmp_path, "BIND (?r AS ?option)")[0] == []


def test_candidates_taken_from_a_label_are_refused_where_nodes_are_taken(tmp_path: Path) -> None:
    for label in ("rdfs:label", "skos:prefLabel", ":code"):
        problems, line = _found(tmp_path, f"?r {label} ?option .")
        (p,) = [p for p in problems if p.severity == "error"]  # skos: is not declared here
        assert (p.severity, p.line, p.node) == ("error", line, ":Pick"), p
        assert p.message.startswith(
            "the horis:candidates query binds ?option to a literal, but horis:next :FailOver "
            "takes the option as a node"), p.message
        assert "(the nodes, not a value of theirs)" in (p.hint or ""), p.hint


def test_a_label_the_ontology_makes_a_node_is_its_word(tmp_path: Path) -> None:
    text = FILE.replace(":code a owl:AnnotationProperty ; rdfs:range rdfs:Literal .",
                        "rdfs:label a owl:ObjectProperty .")
    path = tmp_path / "ops.ttl"
    path.write_text(text.replace("CANDIDATE", "?r rdfs:label ?option ."), encoding="utf-8")
    try:
        problems = list(load_definitions([path]).warnings)
    except AuthoringError as e:
        problems = list(e.problems)
    assert not [p for p in problems if "literal" in p.message], problems
