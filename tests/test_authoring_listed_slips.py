"""A misspelt member of a shape's ``sh:in``: ``sh:in ( :Approved :Rejectd )`` where the
ontology declares ``:Rejected a :Decision`` and the tool writes ``:Rejected``. For a value the
tool returns, ``validate`` said nothing and the gate rejected every rejection at run time,
after the tool had acted; for a fixed ``horis:value`` it told the modeler to add ``:Rejected``
to the list, beside the typo. The slip is now a warning at the ``sh:in`` line with the list to
write, and the effect's error names the member to correct."""

from __future__ import annotations

from pathlib import Path

from forked import horismos_forked

ONTOLOGY = """@prefix :      <http://example.org/pharmacy#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix sh:    <http://www.w3.org/ns/shacl#> .

:Order a owl:Class .
:Decision a owl:Class .
:Approved a :Decision .
:Rejected a :Decision .
:decision a owl:ObjectProperty ; rdfs:domain :Order ; rdfs:range :Decision .
:reviewedAt a owl:DatatypeProperty ; rdfs:domain :Order .

:OrderShape a sh:NodeShape ;
    sh:targetClass :Order ;
    sh:property [ sh:path :decision ;
                  sh:in LIST ] .
"""

WORKFLOW = """@prefix :      <http://example.org/pharmacy#> .
@prefix horis: <https://w3id.org/horismos#> .

:rx.review a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "order" ; horis:type :Order ] ] ;
    horis:effect [ horis:subject "order" ;
        horis:asserts [ horis:property :decision ; WRITES ] ;
        horis:asserts [ horis:property :reviewedAt ; horis:value horis:now ] ] ;
    horis:binding "python:rx.review" ;
    horis:idempotent true .

:Review a horis:Workflow ; horis:focusType :Order ; horis:start :ReviewOrder .
:ReviewOrder a horis:ActionStep ; horis:tool :rx.review ;
    horis:requires "FILTER NOT EXISTS { ?this :reviewedAt ?t }" ;
    horis:bind [ horis:arg "order" ; horis:var "this" ] .
"""

LINE = ONTOLOGY[: ONTOLOGY.index("sh:in LIST")].count("\n") + 1


def _said(tmp_path: Path, listed: str, writes: str, *world: str) -> list[str]:
    (tmp_path / "onto.ttl").write_text(ONTOLOGY.replace("LIST", listed), encoding="utf-8")
    (tmp_path / "wf.ttl").write_text(WORKFLOW.replace("WRITES", writes), encoding="utf-8")
    args = ["onto.ttl", "wf.ttl"]
    if world:
        (tmp_path / "world.ttl").write_text(
            "@prefix : <http://example.org/pharmacy#> .\n" + "\n".join(world) + "\n",
            encoding="utf-8",
        )
        args += ["--world", "world.ttl"]
    out = horismos_forked(tmp_path, "validate", *args).stdout
    return [line for line in out.splitlines() if ": warning: " in line or ": error: " in line]


def test_a_misspelt_member_of_a_returned_value_is_said_at_the_list(tmp_path: Path) -> None:
    said = _said(tmp_path, "( :Approved :Rejectd )", "horis:type :Decision")
    assert said == [
        f"onto.ttl:{LINE}: warning: :OrderShape: sh:in lists :Rejectd, which "
        "nothing loaded declares, though the files declare :Rejected (a :Decision): unless "
        "the world holds :Rejectd, :Rejected as a value of :decision breaks the shape, and the "
        "gate rejects the result of every tool that writes it, after the tool has acted — "
        "did you mean :Rejected? write sh:in ( :Approved :Rejected )"
    ], said


def test_the_effect_writing_the_member_meant_is_told_to_correct_the_list(
    tmp_path: Path,
) -> None:
    said = _said(tmp_path, "( :Approved :Rejectd )", "horis:value :Rejected")
    assert any(
        ": error: :rx.review: the effect writes :decision as :Rejected, but shape :OrderShape "
        "requires sh:in (:Approved :Rejectd)"
        in s
        and s.endswith(
            "— correct :Rejectd in the list to :Rejected, or write another of the listed values"
        )
        for s in said
    ), said
    assert any(f"onto.ttl:{LINE}: warning: :OrderShape: sh:in lists :Rejectd" in s for s in said)


def test_a_member_the_world_holds_is_its_own(tmp_path: Path) -> None:
    said = _said(
        tmp_path, "( :Approved :Rejectd )", "horis:type :Decision", ":o1 :decision :Rejectd ."
    )
    assert not any("sh:in lists" in s for s in said), said


def test_members_declared_or_near_nothing_are_not_said(tmp_path: Path) -> None:
    for listed in ("( :Approved :Rejected )", "( :Approved :Rejected :Withdrawn )"):
        said = _said(tmp_path, listed, "horis:type :Decision")
        assert not any("sh:in lists" in s for s in said), said
