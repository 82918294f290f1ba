"""A domain shape's ``sh:datatype`` other than its property's ``rdfs:range``: ``sh:datatype
xsd:int`` on ``:quantity`` (range ``xsd:integer``) beside ``:r1 :quantity 30``. The shape
and the ontology each validated; then every refill broke the shape (``sh:datatype`` matches
a literal's datatype exactly, and ``30`` is an ``xsd:integer``), so every dispense was
blocked, and only ``run`` said why."""

from __future__ import annotations

from pathlib import Path

import pytest
from claims_files import problems
from forked import horismos_forked
from rdflib import Graph

from horismos._shape_datatypes import datatype_slips

ROOT = Path(__file__).resolve().parent.parent

FILE = """\
@prefix :      <http://example.org/pharmacy#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix sh:    <http://www.w3.org/ns/shacl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Refill a owl:Class .
:quantity a owl:DatatypeProperty ; rdfs:domain :Refill ; rdfs:range xsd:integer .
:dispensedAt a owl:DatatypeProperty ; rdfs:domain :Refill ; rdfs:range xsd:dateTime .

:RefillShape a sh:NodeShape ;
    sh:targetClass :Refill ;
    sh:property [ sh:path :quantity ; sh:datatype DATATYPE ] .

:pharmacy.dispense a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "refill" ; horis:type :Refill ] ;
                  horis:arg [ horis:name "quantity" ; horis:type xsd:integer ] ] ;
    horis:effect [ horis:subject "refill" ;
        horis:asserts [ horis:property :dispensedAt ; horis:value horis:now ] ] ;
    horis:binding "python:dispense" .

:Fill a horis:Workflow ; horis:focusType :Refill ; horis:start :Dispense .

:Dispense a horis:ActionStep ;
    horis:tool :pharmacy.dispense ;
    horis:requires "?this :quantity ?quantity . FILTER NOT EXISTS { ?this :dispensedAt ?t }" ;
    horis:bind [ horis:arg "refill" ; horis:var "this" ] .
"""

LINE = FILE[: FILE.index("sh:datatype DATATYPE")].count("\n") + 1


def _written(tmp_path: Path, datatype: str, text: str = FILE) -> Path:
    path = tmp_path / "pharmacy.ttl"
    path.write_text(text.replace("DATATYPE", datatype), encoding="utf-8")
    return path


def test_the_shape_as_the_range_says_is_clean(tmp_path: Path) -> None:
    assert problems(_written(tmp_path, "xsd:integer")) == []


def test_a_datatype_no_value_of_the_range_has_is_an_error_at_it(tmp_path: Path) -> None:
    (p,) = problems(_written(tmp_path, "xsd:string"))
    assert (p.severity, p.line, p.node) == ("error", LINE, ":RefillShape"), p
    assert p.message == (
        "sh:datatype xsd:string on :quantity, whose rdfs:range is xsd:integer: sh:datatype "
        "matches a literal's datatype exactly, so no value of xsd:integer conforms and every "
        "node holding :quantity breaks the shape: every step whose tool lands on such a node "
        "is blocked, the tool not called, and the run says the world's data breaks the domain "
        "shapes"), p.message
    assert p.hint == "write sh:datatype xsd:integer, as the range says, or correct the range"


@pytest.mark.parametrize("datatype", ["xsd:int", "xsd:decimal", "xsd:long"])
def test_a_datatype_the_range_may_meet_is_a_warning_saying_when_it_is_fine(
        tmp_path: Path, datatype: str) -> None:
    (p,) = problems(_written(tmp_path, datatype))
    assert (p.severity, p.line, p.node) == ("warning", LINE, ":RefillShape"), p
    assert "a value written as the range says (a literal of xsd:integer) does not conform" in (
        p.message), p.message
    assert p.hint == (
        "write sh:datatype xsd:integer, as the range says; fine as it is only when every value "
        f'of :quantity is written "…"^^{datatype}'), p.hint


def test_the_modeler_sees_it_at_the_line_and_run_is_blocked_as_it_says(tmp_path: Path) -> None:
    path = _written(tmp_path, "xsd:int")
    done = horismos_forked(tmp_path, "validate", path.name, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"pharmacy.ttl:{LINE}: warning: :RefillShape: sh:datatype xsd:int on :quantity" in (
        done.stdout), done.stdout
    (tmp_path / "world.ttl").write_text(
        "@prefix : <http://example.org/pharmacy#> .\n:r1 a :Refill ; :quantity 30 .\n",
        encoding="utf-8")
    (tmp_path / "tools.py").write_text(
        "def dispense(refill, quantity):\n    return {}\n", encoding="utf-8")
    ran = horismos_forked(tmp_path, "run", path.name, "--world", "world.ttl", "--focus", ":r1",
                          "--tools", "tools.py", timeout=120)
    assert ran.returncode == 4, ran.stdout + ran.stderr
    assert "already breaks the domain shapes" in ran.stdout + ran.stderr, ran.stdout


def test_a_written_property_a_custom_range_or_an_open_one_says_nothing(tmp_path: Path) -> None:
    # :batchSize's shape (xsd:int, its range xsd:integer) is judged against the tool's
    # effect, where the tool is named, and the effect writes xsd:int
    written = (
        FILE.replace("sh:path :quantity ; sh:datatype DATATYPE",
                     "sh:path :batchSize ; sh:datatype xsd:int")
        .replace(":dispensedAt a owl:", ":batchSize a owl:DatatypeProperty ; "
                 "rdfs:domain :Refill ; rdfs:range xsd:integer .\n:dispensedAt a owl:")
        .replace("horis:value horis:now ] ]", "horis:value horis:now ] ;\n"
                 "        horis:asserts [ horis:property :batchSize ; horis:type xsd:int ] ]"))
    assert problems(_written(tmp_path, "", written)) == []
    for rng in ("rdfs:Literal", ":Count"):
        text = FILE.replace("rdfs:range xsd:integer", f"rdfs:range {rng}")
        text += "\n:Count a rdfs:Datatype .\n"
        assert not [p for p in problems(_written(tmp_path, "xsd:string", text))
                    if "sh:datatype xsd:string on" in p.message]


def test_a_branch_of_an_or_that_never_holds_is_a_warning(tmp_path: Path) -> None:
    text = FILE.replace(
        "sh:property [ sh:path :quantity ; sh:datatype DATATYPE ] .",
        "sh:or ( [ sh:path :quantity ; sh:datatype xsd:string ]\n"
        "            [ sh:path :quantity ; sh:minCount 1 ] ) .")
    (p,) = problems(_written(tmp_path, "", text))
    assert p.severity == "warning" and "as a branch of sh:or" in p.message, p


SHIPPED = sorted(p for f in ("workflows", "examples", "ontologies")
                 for p in (ROOT / f).rglob("*.ttl"))


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_no_shipped_file_has_a_shape_datatype_other_than_its_range(path: Path) -> None:
    g = Graph().parse(path, format="turtle")
    for onto in (ROOT / "ontologies").glob("*.ttl"):
        g.parse(onto, format="turtle")
    assert list(datatype_slips(g, str, frozenset())) == []
