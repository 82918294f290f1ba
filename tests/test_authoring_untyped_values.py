"""A world node given as the value of a property a domain shape holds to ``sh:class``, which
the world never types with that class: ``:c2 :affects :h2`` under ``sh:class :Host`` where
the world wrote ``:h2 :hostname "db-02"`` and forgot ``:h2 a :Host``. The first step landing
anything on ``:c2`` called its tool and had its result refused (``Value does not have class
:Host``); ``validate --world`` said nothing. Now a warning at the world file's line."""

from __future__ import annotations

from pathlib import Path

import pytest
from forked import horismos_forked

FILE = """\
@prefix :      <http://example.org/chg#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix sh:    <http://www.w3.org/ns/shacl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Change a owl:Class .
:Host a owl:Class .
:Server rdfs:subClassOf :Host .
:affects a owl:ObjectProperty ; rdfs:domain :Change ; rdfs:range :Host .
:riskLevel a owl:DatatypeProperty ; rdfs:domain :Change ; rdfs:range xsd:string .
:hostname a owl:DatatypeProperty ; rdfs:domain :Host ; rdfs:range xsd:string .

:ChangeShape a sh:NodeShape ; sh:targetClass :Change ;
    sh:property [ sh:path :affects ; sh:class :Host ] .

:chg.score a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "change" ; horis:type :Change ] ] ;
    horis:effect [ horis:subject "change" ;
        horis:asserts [ horis:property :riskLevel ; horis:type xsd:string ] ] ;
    horis:binding "python:score" ; horis:idempotent true .

:ScoreChange a horis:Workflow ; horis:focusType :Change ; horis:start :Score .

:Score a horis:ActionStep ;
    horis:tool :chg.score ;
    horis:requires "FILTER NOT EXISTS { ?this :riskLevel ?r }" ;
    horis:bind [ horis:arg "change" ; horis:var "this" ] .
"""

WORLD = """\
@prefix : <http://example.org/chg#> .
:c1 a :Change ; :affects :h1 .
:c2 a :Change ; :affects :h2 .
:h1 a :Host ; :hostname "web-01" .
:h2 HOST_TYPE:hostname "db-02" .
"""

SAID = "requires sh:class :Host of :affects"


def _validated(tmp_path: Path, host_type: str) -> str:
    (tmp_path / "changes.ttl").write_text(FILE, encoding="utf-8")
    (tmp_path / "world.ttl").write_text(WORLD.replace("HOST_TYPE", host_type), encoding="utf-8")
    (tmp_path / "tools.py").write_text('def score(change):\n    return {"riskLevel": "LOW"}\n')
    done = horismos_forked(tmp_path, "validate", "changes.ttl", "--world", "world.ttl", timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_an_untyped_value_is_said_at_its_line_and_the_run_refuses_the_step_on_it(
    tmp_path: Path,
) -> None:
    said = _validated(tmp_path, "")
    assert (
        "world.ttl:5: warning: :h2: the world gives :c2 :affects :h2, but shape :ChangeShape "
        f"judging :c2 {SAID}, and nothing types :h2 a :Host (nor a subclass)"
    ) in said, said
    assert "write :h2 a :Host in the world, or correct the shape" in said, said
    assert ":h1" not in said, said
    ran = horismos_forked(
        tmp_path,
        "run",
        "changes.ttl",
        "--world",
        "world.ttl",
        "--focus",
        ":c2",
        "--tools",
        "tools.py",
        timeout=120,
    )
    assert "Value does not have class" in ran.stdout, ran.stdout + ran.stderr


@pytest.mark.parametrize("host_type", ["a :Host ; ", "a :Server ; "])
def test_a_value_of_the_class_or_a_subclass_is_not_said(tmp_path: Path, host_type: str) -> None:
    said = _validated(tmp_path, host_type)
    assert SAID not in said, said
