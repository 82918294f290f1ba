"""A world file's literal whose text is not of its datatype (``"1,200.00"^^xsd:decimal``):
``validate --world`` said nothing, and ``run`` loaded it as text with a one-line warning that
named neither the file nor the line; every comparison of it as a number was false, and the
claim took the other branch."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox
import pytest
from forked import horismos_forked
from rdflib import XSD

from horismos._world_lexical import ill_typed

ONTOLOGY = """\
@prefix :     <http://example.org/claims#> .
@prefix owl:  <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:  <http://www.w3.org/2001/XMLSchema#> .

:Claim a owl:Class .
:claimedAmount a owl:DatatypeProperty ; rdfs:domain :Claim ; rdfs:range xsd:decimal .
:filedOn a owl:DatatypeProperty ; rdfs:domain :Claim ; rdfs:range xsd:date .
:closedAt a owl:DatatypeProperty ; rdfs:domain :Claim ; rdfs:range xsd:dateTime .
:urgent a owl:DatatypeProperty ; rdfs:domain :Claim ; rdfs:range xsd:boolean .
:lineCode a owl:DatatypeProperty ; rdfs:domain :Claim ; rdfs:range xsd:string .
"""

WORLD = """\
@prefix :    <http://example.org/claims#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .

:c1 a :Claim ; :claimedAmount 1200.0 ; :filedOn "2026-12-01"^^xsd:date ; :urgent true .
:c2 a :Claim ; :claimedAmount 90 ; :filedOn "2026-12-01Z"^^xsd:date ; :urgent false .
"""


def _validate(tmp_path: Path, world: str) -> str:
    (tmp_path / "onto.ttl").write_text(ONTOLOGY, encoding="utf-8")
    (tmp_path / "world.ttl").write_text(world, encoding="utf-8")
    p = horismos_forked(tmp_path, "validate", "onto.ttl", "--world", "world.ttl", timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def test_a_well_typed_world_says_nothing(tmp_path: Path) -> None:
    assert "warning" not in _validate(tmp_path, WORLD)


def test_a_number_with_a_thousands_separator_is_a_warning_at_its_line(tmp_path: Path) -> None:
    world = WORLD + ':c3 a :Claim ;\n    :claimedAmount "1,200.00"^^xsd:decimal .\n'
    world += ':c4 a :Claim ; :claimedAmount "2,500"^^xsd:decimal .\n'  # said once a property
    out = _validate(tmp_path, world)
    line = world.splitlines().index('    :claimedAmount "1,200.00"^^xsd:decimal .') + 1
    assert out.count(": warning:") == 1, out
    assert (f'world.ttl:{line}: warning: :c3: the world gives :claimedAmount '
            '"1,200.00"^^xsd:decimal, whose text is no value of xsd:decimal: it is kept as '
            "text, and no comparison with a value of xsd:decimal holds for it — write 1200.00 "
            "without quotes (no thousands separator)") in out, out


@pytest.mark.parametrize(("written", "hint"), [
    (':urgent "yes"^^xsd:boolean', "write true or false, without quotes"),
    (':filedOn "01/12/2026"^^xsd:date',  # day or month first: both said, neither guessed
     'write "2026-12-01"^^xsd:date if it is the 1st of December, or "2026-01-12"^^xsd:date if '
     "it is the 12th of January (XSD writes a date year first: YYYY-MM-DD)"),
    # a date-time as people write one was told only "a literal of xsd:dateTime, e.g. "…""
    (':closedAt "2026-12-07 10:00"^^xsd:dateTime', 'write "2026-12-07T10:00:00"^^xsd:dateTime '
     "(a T between the date and the time, and its seconds)"),
    (':closedAt "2026-12-07T10:00Z"^^xsd:dateTime', 'write "2026-12-07T10:00:00Z"^^xsd:dateTime '
     "(its seconds)"),
])
def test_other_ill_typed_values_are_warnings(tmp_path: Path, written: str, hint: str) -> None:
    out = _validate(tmp_path, WORLD + f":c3 a :Claim ; {written} .\n")
    assert out.count(": warning:") == 1 and hint in out, out


@pytest.mark.parametrize(("text", "datatype", "bad"), [
    (t, dt, bad)
    for dt, good, bad_texts in (
        (XSD.integer, ["12", "-3", "+4", " 1 "], ["1.0", "1,000", "", "one"]),
        (XSD.decimal, ["1200.00", "-.5", "3.", "7"], ["1,200.00", "1e3", "abc", "."]),
        (XSD.double, ["1e3", "-1.5E-2", "INF", "NaN", "2"], ["1,5", "e3", "inf"]),
        (XSD.boolean, ["true", "false", "1", "0"], ["True", "yes", ""]),
        (XSD.date, ["2026-12-01", "2026-12-01Z", "2026-12-01+02:00"], ["01/12/2026", "2026-1-1"]),
        (XSD.dateTime, ["2026-12-01T10:00:00", "2026-12-01T10:00:00.5Z"],
         ["2026-12-01 10:00", "2026-12-01"]),
    )
    for texts, bad in ((good, False), (bad_texts, True))
    for t in texts
])
def test_the_lexical_forms_are_xsds(text: str, datatype: object, bad: bool) -> None:
    assert ill_typed(ox.Literal(text, datatype=ox.NamedNode(str(datatype)))) == bad, text


@pytest.mark.parametrize(("written", "hint"), [
    ('"1200,50"^^xsd:decimal', "write 1200.50 without quotes (a point, not a comma, before the "
     "decimals)"),
    ('"0,8"^^xsd:decimal', "write 0.8 without quotes"),
    ('"1,5"^^xsd:double', 'write "1.5"^^xsd:double'),
    ('"1200,50"^^xsd:integer', 'write a literal of xsd:integer, e.g. "…"^^xsd:integer'),
])
def test_a_decimal_comma_is_told_to_be_a_point_not_taken_out(
        tmp_path: Path, written: str, hint: str) -> None:
    """A claim of ``"1200,50"`` was told ``write 120050``: the comma taken for a thousands
    separator, and the amount a hundred times larger once the hint was followed."""
    out = _validate(tmp_path, WORLD + f":c3 a :Claim ; :claimedAmount {written} .\n")
    assert hint in out and "120050" not in out, out


def test_a_language_tag_on_a_string_is_told_to_be_dropped(tmp_path: Path) -> None:
    """``:lineCode "BUMPER"@en`` where the range is ``xsd:string`` was told ``write
    "BUMPER"^^xsd:string``: right, but the tag is what to take out."""
    out = _validate(tmp_path, WORLD + ':c3 a :Claim ; :lineCode "BUMPER"@en .\n')
    assert 'write "BUMPER", without its language tag @en' in out, out


def test_the_load_warning_names_no_python_exception(tmp_path: Path) -> None:
    """The world's loading said ``an ill-typed literal … is kept as text: [<class
    'decimal.ConversionSyntax'>]``: Python's reason, and nowhere to look."""
    (tmp_path / "onto.ttl").write_text(ONTOLOGY, encoding="utf-8")
    (tmp_path / "world.ttl").write_text(
        WORLD + ':c3 a :Claim ; :claimedAmount "1200,50"^^xsd:decimal .\n', encoding="utf-8")
    p = horismos_forked(tmp_path, "validate", "onto.ttl", "--world", "world.ttl", timeout=120)
    assert "ConversionSyntax" not in p.stderr and "<class" not in p.stderr, p.stderr
    assert ('an ill-typed literal "1200,50"^^<http://www.w3.org/2001/XMLSchema#decimal> (its '
            "text is no value of its datatype) is kept as text, and no comparison with a value "
            "of its datatype holds for it — `horismos validate` (with --world for the world's "
            "files) names its file and line") in p.stderr, p.stderr
