"""A date where the range is a date-time, a date-time where it is a date, a date written
day first: ``validate --world`` said each at its line, but its fix was no XSD literal either.

``:deliveredOn "2026-11-20T09:00:00"^^xsd:dateTime`` where the range is ``xsd:date`` was told to
write ``"2026-11-20T09:00:00"^^xsd:date`` (rdflib reads it, the stores do not: the next
``validate`` said it was no value of ``xsd:date``), and a date for ``xsd:dateTime`` the same
way round; ``"20/11/2026"^^xsd:date`` was told only to write "a literal of xsd:date".
"""

from __future__ import annotations

from pathlib import Path

from forked import horismos_forked
from workflow_edits import TRIAGE

ONTOLOGY = """@prefix : <http://example.org/ehr#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
:bornOn a owl:DatatypeProperty ; rdfs:range xsd:date .
:admittedAt a owl:DatatypeProperty ; rdfs:range xsd:dateTime .
:dischargedOn a owl:DatatypeProperty ; rdfs:range xsd:date .
"""


def _warnings(tmp_path: Path, facts: str) -> list[str]:
    """What ``validate --world`` of triage, with the dates' ontology, says of the world."""
    onto = tmp_path / "dates.ttl"
    onto.write_text(ONTOLOGY)
    world = tmp_path / "w.ttl"
    world.write_text("@prefix : <http://example.org/ehr#> .\n"
                     "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n" + facts)
    p = horismos_forked(".", "validate", *map(str, TRIAGE), str(onto), "--world", str(world),
                        "--store", "memory", timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    return [x.split(" — ", 1)[1] for x in p.stdout.splitlines() if str(world) in x]


def test_a_date_time_where_the_range_is_a_date_is_told_the_date_alone(tmp_path: Path) -> None:
    hints = _warnings(tmp_path, ':p1 a :Patient ; :bornOn "1980-05-02T09:00:00Z"^^xsd:dateTime .\n')
    assert hints == ['write "1980-05-02"^^xsd:date (the date alone: an xsd:date holds no time '
                     "of day), or make the rdfs:range xsd:dateTime"]


def test_a_date_where_the_range_is_a_date_time_is_told_a_time_of_day(tmp_path: Path) -> None:
    hints = _warnings(tmp_path, ':p1 a :Patient ; :admittedAt "2026-12-07"^^xsd:date .\n')
    assert hints == ['write "2026-12-07T00:00:00"^^xsd:dateTime (an xsd:dateTime needs a time '
                     "of day: midnight here, or the time it happened), or make the "
                     "rdfs:range xsd:date"]


def test_a_date_written_day_first_is_told_the_xsd_date(tmp_path: Path) -> None:
    """A day above 12 says which is the month; 05/11 could be either, and both are named."""
    hints = _warnings(tmp_path, ':p1 a :Patient ; :bornOn "20/11/2026"^^xsd:date .\n'
                                ':p2 a :Patient ; :dischargedOn "05/11/2026"^^xsd:date .\n')
    assert hints == [
        'write "2026-11-20"^^xsd:date (XSD writes a date year first: YYYY-MM-DD)',
        'write "2026-11-05"^^xsd:date if it is the 5th of November, or "2026-05-11"^^xsd:date '
        "if it is the 11th of May (XSD writes a date year first: YYYY-MM-DD)",
    ]
