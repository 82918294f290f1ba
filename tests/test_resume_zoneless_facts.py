"""A date-time with no time zone given by ``resume --facts`` to a property a wait compares
with ``NOW()``: ``:r1 :parcelArrivedAt "2026-12-07T10:00:00"`` under ``horis:until "?this
:parcelArrivedAt ?t . FILTER (?t <= NOW())"``.

SPARQL orders a date-time without a zone against ``NOW()``, which has one, in neither store:
the fact landed, the wait said it did not hold yet, and the instance waited until its timeout
took it to the rejection — the parcel had arrived. Now the facts are refused, nothing landing,
with the zone to add; with it the wait ends.
"""

from __future__ import annotations

import re
from pathlib import Path

from forked import horismos_forked

DEFS = """@prefix : <http://example.org/returns#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
:ReturnRequest a owl:Class .
:parcelArrivedAt a owl:DatatypeProperty ; rdfs:domain :ReturnRequest ; rdfs:range xsd:dateTime .
:Returns a horis:Workflow ; horis:focusType :ReturnRequest ; horis:start :AwaitParcel .
:AwaitParcel a horis:WaitStep ;
    horis:reason "The warehouse scans the parcel in." ;
    horis:wake horis:External ;
    horis:delivery horis:Silent ;
    horis:until "?this :parcelArrivedAt ?t . FILTER (?t <= NOW())" .
"""


def test_a_zoneless_date_time_compared_with_now_is_refused_and_a_zoned_one_ends_the_wait(
        tmp_path: Path) -> None:
    defs = tmp_path / "defs.ttl"
    defs.write_text(DEFS)
    world = tmp_path / "world.ttl"
    world.write_text("@prefix : <http://example.org/returns#> .\n:r1 a :ReturnRequest .\n")
    out = tmp_path / "after.trig"
    run = horismos_forked(tmp_path, "run", str(defs), "--world", str(world), "--focus", ":r1",
                          "--out", str(out), "--quiet", timeout=120)
    assert run.returncode == 3, run.stdout + run.stderr
    (iid,) = set(re.findall(r"urn:horismos:instance:[0-9a-f]+", out.read_text()))
    before = out.read_bytes()

    def resume(when: str):
        return horismos_forked(
            tmp_path, "resume", str(defs), "--world", str(out), "--instance", iid, "--out",
            str(out), "--quiet", "--facts",
            f':r1 :parcelArrivedAt "{when}"^^xsd:dateTime .', timeout=120)

    refused = resume("2026-12-07T10:00:00")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert refused.stderr.strip() == (
        'horismos resume: error: the facts give :r1 :parcelArrivedAt "2026-12-07T10:00:00"'
        "^^xsd:dateTime, a date-time with no time zone, and :AwaitParcel compares "
        ":parcelArrivedAt with NOW(), which has one: SPARQL never orders the two, so that "
        'comparison would never hold (nothing landed) — write "2026-12-07T10:00:00Z" for UTC, '
        'or the offset it was taken in ("2026-12-07T10:00:00+01:00")'), refused.stderr
    assert out.read_bytes() == before
    done = resume("2026-12-07T10:00:00Z")
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_world_date_time_with_no_zone_compared_with_now_is_a_warning_at_its_line(
        tmp_path: Path) -> None:
    """The same in the world's files: the instance of :r2 would wait to its timeout though
    its parcel is in. A date-time with a zone, and a property nothing compares with NOW(),
    say nothing."""
    defs = tmp_path / "defs.ttl"
    defs.write_text(DEFS + ":scannedAt a owl:DatatypeProperty ; rdfs:range xsd:dateTime .\n")
    world = tmp_path / "world.ttl"
    world.write_text(
        "@prefix : <http://example.org/returns#> .\n"
        "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
        ':r1 a :ReturnRequest ; :parcelArrivedAt "2026-12-07T09:00:00Z"^^xsd:dateTime .\n'
        ":r2 a :ReturnRequest ;\n"
        '    :parcelArrivedAt "2026-12-07T10:00:00"^^xsd:dateTime ;\n'
        '    :scannedAt "2026-12-07T10:00:00"^^xsd:dateTime .\n')
    p = horismos_forked(tmp_path, "validate", str(defs), "--world", str(world), "--store",
                        "memory", timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert [x for x in p.stdout.splitlines() if str(world) in x] == [
        f'{world}:5: warning: :r2: the world gives :parcelArrivedAt "2026-12-07T10:00:00"'
        "^^xsd:dateTime, a date-time with no time zone, and :AwaitParcel compares "
        ":parcelArrivedAt with NOW(), which has one: SPARQL never orders the two, so that "
        'comparison never holds for this node — write "2026-12-07T10:00:00Z" for UTC, or the '
        'offset it was taken in ("2026-12-07T10:00:00+01:00")'], p.stdout
