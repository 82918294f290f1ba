"""A domain shape targeting a declared class no node of the world is of (``:Server``, where
every host is a ``:Host``) judged nothing, and ``validate --world`` said nothing: the modeler
believed the hosts were constrained. Now a warning at the shape's ``sh:targetClass`` line,
naming the world's classes meant — only beside a world, and not for a class a tool brings
nodes of, nor one whose subclass the world uses."""

from __future__ import annotations

from pathlib import Path

from forked import horismos_forked

DEFS = """\
@prefix :      <http://example.org/chg#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix sh:    <http://www.w3.org/ns/shacl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Change a owl:Class .
:Host a owl:Class .
:Server a owl:Class .
:Rack a owl:Class .
:Cabinet a owl:Class ; rdfs:subClassOf :Rack .
:Ticket a owl:Class .
:affects a owl:ObjectProperty .
:ticket a owl:ObjectProperty ; rdfs:range :Ticket .
:hostname a owl:DatatypeProperty .
:applied a owl:DatatypeProperty ; rdfs:range xsd:boolean .

:chg.apply a horis:Tool ;
    horis:idempotent true ;
    horis:takes [ horis:arg [ horis:name "change" ; horis:type :Change ] ] ;
    horis:effect [ horis:subject "change" ;
        horis:asserts [ horis:property :applied ; horis:type xsd:boolean ] ,
                      [ horis:property :ticket ; horis:type :Ticket ] ] ;
    horis:binding "python:json.dumps" .

:ManageChange a horis:Workflow ; horis:focusType :Change ; horis:start :Apply .
:Apply a horis:ActionStep ; horis:tool :chg.apply ;
    horis:bind [ horis:arg "change" ; horis:var "this" ] .

:ServerShape a sh:NodeShape ;
    sh:targetClass :Server ;
    sh:property [ sh:path :hostname ; sh:minCount 1 ] .

:ChangeShape a sh:NodeShape ;
    sh:targetClass :Change ;
    sh:property [ sh:path :affects ; sh:minCount 1 ] .

:RackShape a sh:NodeShape ;
    sh:targetClass :Rack ;
    sh:property [ sh:path :hostname ; sh:maxCount 1 ] .

:TicketShape a sh:NodeShape ;
    sh:targetClass :Ticket ;
    sh:property [ sh:path :hostname ; sh:maxCount 1 ] .
"""

WORLD = """\
@prefix : <http://example.org/chg#> .
:h1 a :Host ; :hostname "a" .
:h2 a :Host ; :hostname "b" .
:k1 a :Cabinet .
:c1 a :Change ; :affects :h1 .
"""


def _validate(tmp_path: Path, *world: str) -> str:
    (tmp_path / "defs.ttl").write_text(DEFS)
    (tmp_path / "world.ttl").write_text(WORLD)
    done = horismos_forked(tmp_path, "validate", "defs.ttl", *world, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    return done.stdout


def test_a_shape_targeting_a_class_the_world_never_uses_is_said_at_its_target(
    tmp_path: Path,
) -> None:
    said = _validate(tmp_path, "--world", "world.ttl")
    assert (
        "defs.ttl:32: warning: :ServerShape: shape :ServerShape targets :Server, but no node "
        "of the world is of :Server"
    ) in said, said
    assert "the world's nodes are of :Host" in said, said
    # the world's :Cabinet is a :Rack; the tool's result brings :Ticket nodes
    assert ":RackShape" not in said and ":TicketShape" not in said, said
    assert said.count("never judges anything") == 1, said


def test_a_near_spelling_the_world_uses_is_offered(tmp_path: Path) -> None:
    (tmp_path / "servers.ttl").write_text(
        '@prefix : <http://example.org/chg#> .\n:s1 a :Servers ; :hostname "s" .\n'
    )
    said = _validate(tmp_path, "--world", "world.ttl", "--world", "servers.ttl")
    assert "did you mean :Servers?" in said, said


def test_without_a_world_nothing_is_said(tmp_path: Path) -> None:
    said = _validate(tmp_path)
    assert "never judges anything" not in said, said
