"""A text a pattern matches a property with, where the world writes that text under another
language tag or none: ``?d rdfs:label "Finance"`` beside ``:Finance rdfs:label
"Finance"@en``. The two literals are not equal, so the rule never held and every finance hire
took ``horis:otherwise`` (the base access bundle), while the definitions and the world each
validated: ``rdfs:label`` has no range to hold the world's value to."""

from __future__ import annotations

from pathlib import Path

from forked import horismos_forked

DEFS = """@prefix :      <http://example.org/onboard#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Hire a owl:Class .
:Department a owl:Class .
:AccessBundle a owl:Class .
:inDepartment a owl:ObjectProperty ; rdfs:domain :Hire ; rdfs:range :Department .
:accessBundle a owl:ObjectProperty ; rdfs:domain :Hire ; rdfs:range :AccessBundle .
:FinanceBundle a :AccessBundle .
:BaseBundle a :AccessBundle .

:hr.assign_bundle a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "hire" ; horis:type :Hire ] ;
                  horis:arg [ horis:name "bundle" ; horis:type :AccessBundle ] ] ;
    horis:effect [ horis:subject "hire" ;
        horis:asserts [ horis:property :accessBundle ; horis:type :AccessBundle ] ] ;
    horis:binding "python:assign_bundle" ;
    horis:idempotent true .

:Onboard a horis:Workflow ; horis:focusType :Hire ; horis:start :ChooseBundle .

:ChooseBundle a horis:DecisionStep ;
    horis:when [ horis:order 1 ;
                 horis:requires "?this :inDepartment ?d . ?d rdfs:label LABEL ." ;
                 horis:next :GiveFinance ] ;
    horis:otherwise :GiveBase .

:GiveFinance a horis:ActionStep ;
    horis:tool :hr.assign_bundle ;
    horis:requires "BIND(:FinanceBundle AS ?bundle) FILTER NOT EXISTS { ?this :accessBundle ?b }" ;
    horis:bind [ horis:arg "hire" ; horis:var "this" ] .

:GiveBase a horis:ActionStep ;
    horis:tool :hr.assign_bundle ;
    horis:requires "BIND(:BaseBundle AS ?bundle) FILTER NOT EXISTS { ?this :accessBundle ?b }" ;
    horis:bind [ horis:arg "hire" ; horis:var "this" ] .
"""

WORLD = """@prefix :     <http://example.org/onboard#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .

:Engineering a :Department ; rdfs:label "Engineering"@en .
:Finance a :Department ;
    rdfs:label "Finance"@en .
:bob a :Hire ; :inDepartment :Finance .
"""


def _warned(tmp_path: Path, label: str, world: str = WORLD) -> list[str]:
    (tmp_path / "defs.ttl").write_text(DEFS.replace("LABEL", label), encoding="utf-8")
    (tmp_path / "world.ttl").write_text(world, encoding="utf-8")
    p = horismos_forked(tmp_path, "validate", "defs.ttl", "--world", "world.ttl", timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    return [x for x in p.stdout.splitlines() if x.startswith("world.ttl:")]


def test_a_text_the_world_tags_otherwise_is_a_warning_at_the_worlds_line(tmp_path) -> None:
    assert _warned(tmp_path, '\\"Finance\\"') == [
        'world.ttl:6: warning: :Finance: the world gives rdfs:label "Finance"@en, and '
        ":ChooseBundle's pattern matches rdfs:label with \"Finance\", with no language tag: a "
        "literal equals none of another tag or of none, so that pattern never matches this "
        'value — write "Finance"@en in the pattern (or FILTER (str(?v) = "Finance") to take '
        'any tag), or "Finance" in the world']
    assert _warned(tmp_path, '\\"Finance\\"@de')[0].startswith(
        'world.ttl:6: warning: :Finance: the world gives rdfs:label "Finance"@en, and '
        ':ChooseBundle\'s pattern matches rdfs:label with "Finance"@de, with the tag @de')


def test_a_text_written_as_the_world_writes_it_says_nothing(tmp_path) -> None:
    assert _warned(tmp_path, '\\"Finance\\"@en') == []
    assert _warned(tmp_path, '\\"Finance\\"@EN') == []          # tags compare case-blind
    assert _warned(tmp_path, '\\"Finance\\"', WORLD.replace(
        '"Finance"@en .', '"Finance"@en, "Finance" .')) == []   # the untagged one is there too
    assert _warned(tmp_path, '\\"Accounts\\"') == []           # no such text: not judged here
