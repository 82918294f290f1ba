"""``validate --world`` says a forEach item the world gives without a property the step's
pattern joins on it, at the world file's line.

A hire's Jira request reached a system written with no ``:systemCode``: the step's pattern
``?s :systemCode ?system`` had no solution for it, so the step provisioned the other systems,
said "completed", and the hire never got a Jira account; ``validate --world`` said "valid".
"""

from __future__ import annotations

from pathlib import Path

from forked import horismos_forked

DEFS = """\
@prefix :      <http://example.org/onboard#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .
:Hire a owl:Class . :AccessRequest a owl:Class . :System a owl:Class .
:hasRequest a owl:ObjectProperty . :forSystem a owl:ObjectProperty .
:systemCode a owl:DatatypeProperty . :accountId a owl:DatatypeProperty .
:create a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "request" ; horis:type :AccessRequest ] ;
                  horis:arg [ horis:name "system" ; horis:type xsd:string ] ] ;
    horis:effect [ horis:subject "request" ;
        horis:asserts [ horis:property :accountId ; horis:type xsd:string ] ] ;
    horis:binding "python:create" ; horis:idempotent true .
:Onboard a horis:Workflow ; horis:focusType :Hire ; horis:start :Provision .
:Provision a horis:ActionStep ; horis:tool :create ; horis:forEach true ;
    horis:requires \"\"\" ?this :hasRequest ?request . ?request :forSystem ?s .
                       ?s :systemCode ?system .
                       FILTER NOT EXISTS { ?request :accountId ?a } \"\"\" .
"""

WORLD = """\
@prefix : <http://example.org/onboard#> .
:github a :System ; :systemCode "github" .
:jira a :System .
:cy a :Hire ; :hasRequest :cy_github, :cy_jira .
:cy_github a :AccessRequest ; :forSystem :github .
:cy_jira a :AccessRequest ; :forSystem :jira .
"""


def test_an_item_without_a_joined_property_is_a_warning_at_its_line(tmp_path: Path) -> None:
    (tmp_path / "defs.ttl").write_text(DEFS)
    (tmp_path / "world.ttl").write_text(WORLD)
    said = horismos_forked(tmp_path, "validate", "defs.ttl", "--world", "world.ttl",
                           timeout=120)
    assert said.returncode == 0, said.stdout + said.stderr
    assert "world.ttl:3: warning: :jira: :Provision (horis:forEach) reaches :jira as an item " \
        "and its pattern joins ?s :systemCode ?system on it, but :jira has no :systemCode: " \
        "the step calls :create for the other items" in said.stdout, said.stdout
    assert "give :jira its :systemCode" in said.stdout
    assert ":github" not in said.stdout  # it has its code
    assert "(1 warning)" in said.stdout


def test_every_item_with_its_properties_says_nothing(tmp_path: Path) -> None:
    (tmp_path / "defs.ttl").write_text(DEFS)
    (tmp_path / "world.ttl").write_text(WORLD.replace(":jira a :System .",
                                                      ':jira a :System ; :systemCode "jira" .'))
    said = horismos_forked(tmp_path, "validate", "defs.ttl", "--world", "world.ttl",
                           timeout=120)
    assert said.returncode == 0, said.stdout + said.stderr
    assert "warning" not in said.stdout, said.stdout


CODES = """
:System a owl:Class .
:codes a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "system" ; horis:type :System ] ] ;
    horis:effect [ horis:subject "system" ;
        horis:asserts [ horis:property PROP ; horis:type TYPE ] ] ;
    horis:binding "python:codes" ; horis:idempotent true ; horis:timeout "0s" .
"""


def test_a_property_a_tool_found_wrong_writes_is_no_gap(tmp_path: Path) -> None:
    # beside the tool's zero timeout, validate --world said :jira lacked a :systemCode no
    # tool writes, and that :forSystem, which the world never states, no tool writes: the
    # tool writes both once its timeout is mended
    for prop, kind, world in ((":systemCode", "xsd:string", WORLD),
                              (":forSystem", ":System", WORLD.replace(" ; :forSystem :github", "")
                               .replace(" ; :forSystem :jira", ""))):
        (tmp_path / "defs.ttl").write_text(DEFS + CODES.replace("PROP", prop)
                                           .replace("TYPE", kind))
        (tmp_path / "world.ttl").write_text(world)
        said = horismos_forked(tmp_path, "validate", "defs.ttl", "--world", "world.ttl",
                               timeout=120)
        found = [line.split(": ")[1] for line in said.stdout.splitlines() if ".ttl:" in line]
        assert found == ["error"], said.stdout
        assert 'horis:timeout "0s"' in said.stdout, said.stdout
