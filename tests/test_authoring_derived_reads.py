"""A pattern reading a property only entailment would give: an inverse, a superproperty or an
equivalent of what the world states. Patterns are matched against the world as it is, under
``rdfs`` and ``owl-rl`` alike (docs/entailment.md), so no such statement is ever seen:
``?queue :acuityOf ?this`` beside ``:acuityOf owl:inverseOf :acuity`` blocked every patient,
and it validated."""

from __future__ import annotations

from pathlib import Path

import pytest
from forked import horismos_forked
from workflow_edits import TRIAGE, edited, ontology_edited, problems, the_one

READ = "horis:requires \"\"\" ?this :acuity ?queue ."
DECLARED = ":acuity a owl:ObjectProperty ; rdfs:domain :Patient ; rdfs:range :AcuityLevel ."


@pytest.mark.parametrize(("declared", "read", "link", "path"), [
    pytest.param(":acuityOf a owl:ObjectProperty ; owl:inverseOf :acuity .",
                 "horis:requires \"\"\" ?queue :acuityOf ?this .", "owl:inverseOf :acuity",
                 "?queue :acuityOf|^:acuity ?this", id="inverse"),
    pytest.param(":acuityOf a owl:ObjectProperty .\n:acuity owl:inverseOf :acuityOf .",
                 "horis:requires \"\"\" ?queue :acuityOf ?this .", "owl:inverseOf :acuity",
                 "?queue :acuityOf|^:acuity ?this", id="inverse-written-the-other-way"),
    pytest.param(":triagedAs a owl:ObjectProperty .\n:acuity rdfs:subPropertyOf :triagedAs .",
                 "horis:requires \"\"\" ?this :triagedAs ?queue .", "its subproperty :acuity",
                 "?this :triagedAs|:acuity ?queue", id="superproperty"),
])
def test_a_pattern_reading_what_only_entailment_gives_is_a_warning_at_its_line(
    tmp_path: Path, declared: str, read: str, link: str, path: str
) -> None:
    ontology, _ = ontology_edited(tmp_path, DECLARED, DECLARED + "\n" + declared)
    (tmp_path / "wf").mkdir()
    workflow, line = edited(tmp_path / "wf", TRIAGE, READ, read)
    p = the_one(problems(workflow, TRIAGE, ontology), "warning")
    prop = read.split()[3]
    assert (p.file, p.line, p.node) == (str(workflow), line, ":QueuePatient"), str(p)
    assert f"horis:requires reads {prop}, which no tool writes and no file states, " \
        f"beside {link}" in p.message, str(p)
    assert "under either entailment (rdfs, owl-rl)" in p.message
    assert p.hint == f"write {path} to read both, or the property the world states", str(p)


def test_a_related_property_a_tool_writes_or_a_file_states_says_nothing(tmp_path: Path) -> None:
    """Reading what the world states is what a pattern does; an inverse declared beside it
    changes nothing."""
    ontology, _ = ontology_edited(
        tmp_path, DECLARED, DECLARED + "\n:acuityOf a owl:ObjectProperty ; owl:inverseOf :acuity ."
        "\n:urgent :acuityOf :p0 .")
    (tmp_path / "wf").mkdir()
    workflow, _ = edited(tmp_path / "wf", TRIAGE, READ,
                         "horis:requires \"\"\" ?queue :acuityOf ?this .")
    assert problems(workflow, TRIAGE, ontology) == []


WORLD = "@prefix : <http://example.org/shop#> .\n:o1 a :Order ; :stockedAt :d1 .\n:d1 a :Depot .\n"
SHOP = """@prefix :      <http://example.org/shop#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Order a owl:Class .
:Depot a owl:Class .
:stockedAt a owl:ObjectProperty ; rdfs:domain :Order ; rdfs:range :Depot .
:holds a owl:ObjectProperty ; owl:inverseOf :stockedAt .
:reservationRef a owl:DatatypeProperty ; rdfs:domain :Order ; rdfs:range xsd:string .
:pickedFrom a owl:ObjectProperty ; rdfs:domain :Order ; rdfs:range :Depot .

:stock.reserve a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "order" ; horis:type :Order ] ] ;
    horis:effect [ horis:subject "order" ;
        horis:asserts [ horis:property :reservationRef ; horis:type xsd:string ] ] ;
    horis:binding "python:reserve" .

:depot.pick a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "order" ; horis:type :Order ] ;
                  horis:arg [ horis:name "depot" ; horis:type :Depot ] ] ;
    horis:effect [ horis:subject "order" ;
        horis:asserts [ horis:property :pickedFrom ; horis:type :Depot ] ] ;
    horis:binding "python:pick" ;
    horis:idempotent true .

:Fulfil a horis:Workflow ; horis:focusType :Order ; horis:start :Reserve .
:Reserve a horis:ActionStep ; horis:tool :stock.reserve ;
    horis:requires "FILTER NOT EXISTS { ?this :reservationRef ?r }" ;
    horis:bind [ horis:arg "order" ; horis:var "this" ] ; horis:next :Pick .
:Pick a horis:ActionStep ; horis:tool :depot.pick ;
    horis:requires "?depot :holds ?this ." ;
    horis:bind [ horis:arg "order" ; horis:var "this" ] .
"""
TOOLS = """def reserve(order):
    open("calls.log", "a").write("reserve\\n")
    return {"reservationRef": "R-1"}

def pick(order, depot):
    return {"pickedFrom": depot}
"""


def test_validate_says_it_where_the_run_reserves_and_then_blocks(tmp_path: Path) -> None:
    """What the warning is about, run under owl-rl: the reservation acts, the pick blocks;
    the path the hint writes runs to the end; a world stating :holds drops the warning."""
    (tmp_path / "shop.ttl").write_text(SHOP, encoding="utf-8")
    (tmp_path / "world.ttl").write_text(WORLD, encoding="utf-8")
    (tmp_path / "tools.py").write_text(TOOLS, encoding="utf-8")
    checked = horismos_forked(tmp_path, "validate", "shop.ttl", "--world", "world.ttl")
    assert "shop.ttl:33: warning: :Pick: horis:requires reads :holds" in checked.stdout, (
        checked.stdout + checked.stderr)
    ran = horismos_forked(tmp_path, "run", "shop.ttl", "--world", "world.ttl", "--tools",
                          "tools.py", "--all", "--entailment", "owl-rl")
    assert "blocked" in ran.stdout and (tmp_path / "calls.log").read_text() == "reserve\n"
    fixed = SHOP.replace('"?depot :holds ?this ."', '"?depot :holds|^:stockedAt ?this ."')
    (tmp_path / "shop.ttl").write_text(fixed, encoding="utf-8")
    checked = horismos_forked(tmp_path, "validate", "shop.ttl", "--world", "world.ttl")
    assert checked.returncode == 0 and "warning" not in checked.stdout, checked.stdout
    ran = horismos_forked(tmp_path, "run", "shop.ttl", "--world", "world.ttl", "--tools",
                          "tools.py", "--all")
    assert ran.returncode == 0 and "1 completed" in ran.stdout, ran.stdout + ran.stderr
    (tmp_path / "shop.ttl").write_text(SHOP, encoding="utf-8")
    (tmp_path / "held.ttl").write_text(
        "@prefix : <http://example.org/shop#> .\n:d1 :holds :o1 .\n", encoding="utf-8")
    beside = horismos_forked(tmp_path, "validate", "shop.ttl", "--world", "world.ttl",
                             "--world", "held.ttl")
    assert beside.returncode == 0 and "warning" not in beside.stdout, beside.stdout


@pytest.mark.parametrize("inverse", [
    ":nursed a owl:ObjectProperty ; owl:inverseOf :queueRef .",
    ":nursed a owl:DatatypeProperty ; owl:inverseOf :assignedNurse .",
])
def test_an_inverse_of_a_property_of_literals_is_a_warning_at_the_inverse(
    tmp_path: Path, inverse: str
) -> None:
    """A literal is never a subject: the inverse relates nothing, and it loaded silently."""
    ontology, line = ontology_edited(tmp_path, DECLARED, DECLARED + "\n" + inverse)
    (tmp_path / "wf").mkdir()
    workflow, _ = edited(tmp_path / "wf", TRIAGE, READ, READ)
    p = the_one(problems(workflow, TRIAGE, ontology), "warning")
    literal = ":queueRef" if ":queueRef" in inverse else ":nursed"
    assert (p.file, p.line) == (str(ontology), line + 1), str(p)
    assert f"but {literal} is an owl:DatatypeProperty, whose values are literals" in p.message
    assert p.hint is not None and p.hint.startswith("drop owl:inverseOf"), str(p)


def test_an_inverse_of_two_properties_of_nodes_says_nothing(tmp_path: Path) -> None:
    ontology, _ = ontology_edited(
        tmp_path, DECLARED, DECLARED + "\n:nursed a owl:ObjectProperty ; owl:inverseOf "
        ":assignedNurse .")
    (tmp_path / "wf").mkdir()
    workflow, _ = edited(tmp_path / "wf", TRIAGE, READ, READ)
    assert problems(workflow, TRIAGE, ontology) == []
