"""The approval brief names the focus with its label, as the wait brief does.

The wait brief said "(:Onboard for :bob — Bob Babbage)"; the approval brief for the same
hire said "(:Onboard for :bob)" alone, and an approver had to look up who :bob is.
"""

from __future__ import annotations

from pathlib import Path

from forked import horismos_forked

DEFS = """\
@prefix :      <http://example.org/onboard#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .
:Hire a owl:Class . :adminRef a owl:DatatypeProperty .
:grant a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "hire" ; horis:type :Hire ] ] ;
    horis:effect [ horis:subject "hire" ;
        horis:asserts [ horis:property :adminRef ; horis:type xsd:string ] ] ;
    horis:binding "python:pam.grant" ; horis:idempotent true ; horis:requiresApproval true .
:Onboard a horis:Workflow ; horis:focusType :Hire ; horis:start :Grant .
:Grant a horis:ActionStep ; horis:tool :grant ;
    horis:requires "FILTER NOT EXISTS { ?this :adminRef ?r }" ;
    horis:bind [ horis:arg "hire" ; horis:var "this" ] .
"""


def test_the_approval_brief_gives_the_focus_label(tmp_path: Path) -> None:
    (tmp_path / "defs.ttl").write_text(DEFS)
    (tmp_path / "world.ttl").write_text(
        "@prefix : <http://example.org/onboard#> .\n"
        "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
        ':bob a :Hire ; rdfs:label "Bob Babbage" .\n')
    (tmp_path / "pam.py").write_text("def grant(hire):\n    return {'adminRef': 'A-1'}\n")
    ran = horismos_forked(tmp_path, "run", "defs.ttl", "--world", "world.ttl",
                          "--tools", "pam.py", "--focus", ":bob", timeout=120)
    assert ran.returncode == 3, ran.stdout + ran.stderr  # waiting for approval
    assert "(:Onboard for :bob — Bob Babbage) waits at :Grant for approval." in ran.stdout, \
        ran.stdout
