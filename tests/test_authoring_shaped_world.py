"""A world's fact that a domain shape refuses by its value alone: ``:p1 :queueRef
"q-urgent-1"`` where the shape judging every ``:Patient`` says ``sh:pattern
"^Q-[A-Z]+-[0-9]+$"``, ``:refundAmount 4.99E1`` under ``sh:datatype xsd:decimal``, a currency
outside a ``sh:in``.

``validate --world`` said nothing; the gate judges the whole node an effect lands on, so the
run's first step writing anything on such a patient called its tool and then had its result
refused (``:p1 :queueRef: Value does not match pattern``), nothing of it landing.
"""

from __future__ import annotations

from pathlib import Path

from forked import horismos_forked
from workflow_edits import TRIAGE

WORLD = Path(__file__).resolve().parents[1] / "examples/triage/world.ttl"


def _validate(*files: Path | str, world: Path) -> list[str]:
    p = horismos_forked(".", "validate", *map(str, files), "--world", str(world),
                        "--store", "memory", timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    return [x for x in p.stdout.splitlines() if str(world) in x]


def test_a_world_value_a_domain_shape_refuses_is_a_warning_at_its_line(tmp_path: Path) -> None:
    world = tmp_path / "w.ttl"
    world.write_text(
        "@prefix : <http://example.org/ehr#> .\n"
        ":p1 a :Patient ; :acuity :urgent .\n"
        ":p2 a :Patient ;\n"
        '    :queueRef "q-urgent-1" .\n'
        ':p3 a :Patient ; :queueRef "Q-URGENT-3" .\n'
        ':p4 a :Patient ; :queueRef "also-wrong" .\n')
    assert _validate(*TRIAGE, world=world) == [
        f'{world}:4: warning: :p2: the world gives :queueRef "q-urgent-1", but shape '
        ':PatientShape judging this node requires sh:pattern "^Q-[A-Z]+-[0-9]+$": the node '
        "never conforms, so every step whose tool lands anything on it fails, the gate "
        "rejecting its result after the call has acted — write a value of :queueRef that meets "
        'sh:pattern "^Q-[A-Z]+-[0-9]+$", or correct the shape',
    ]


def test_a_number_of_another_datatype_and_a_value_outside_sh_in(tmp_path: Path) -> None:
    """A double where the shape says decimal is told the decimal; a plain string that is a
    member of the ``sh:in`` says nothing (the world's ``xsd:string`` is the list's plain
    literal)."""
    onto = tmp_path / "money.ttl"
    onto.write_text(
        "@prefix : <http://example.org/ehr#> .\n"
        "@prefix sh: <http://www.w3.org/ns/shacl#> .\n"
        "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
        "@prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
        "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
        ":copay a owl:DatatypeProperty ; rdfs:range xsd:decimal .\n"
        ":currency a owl:DatatypeProperty ; rdfs:range xsd:string .\n"
        ":MoneyShape a sh:NodeShape ; sh:targetClass :Patient ;\n"
        "    sh:property [ sh:path :copay ; sh:datatype xsd:decimal ] ;\n"
        '    sh:property [ sh:path :currency ; sh:in ( "EUR" "USD" ) ] .\n')
    world = tmp_path / "w.ttl"
    world.write_text(
        "@prefix : <http://example.org/ehr#> .\n"
        "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
        ':p1 a :Patient ; :copay 10.00 ; :currency "EUR" .\n'
        ':p2 a :Patient ; :copay "12.50"^^xsd:double ; :currency "eur" .\n')
    said = _validate(*TRIAGE, onto, world=world)
    assert [s.split(" — ")[1] for s in said] == [
        "write 12.50 without quotes, or correct the shape",
        'write a value of :currency that meets sh:in ("EUR" "USD"), or correct the shape',
    ], said
    assert all(s.startswith(f"{world}:4: warning: :p2: ") for s in said), said


def test_a_text_in_a_language_the_shape_does_not_list(tmp_path: Path) -> None:
    """``sh:languageIn ( "en" )`` and a world note in French: the gate refused the patient's
    first step after its tool acted, and ``validate --world`` said nothing (the gate's
    value-alone checks judged the world's facts, but for this one). A note in ``en-GB``
    matches ``en``, as SPARQL's langMatches does."""
    onto = tmp_path / "notes.ttl"
    onto.write_text(
        "@prefix : <http://example.org/ehr#> .\n"
        "@prefix sh: <http://www.w3.org/ns/shacl#> .\n"
        ":NoteShape a sh:NodeShape ; sh:targetClass :Patient ;\n"
        '    sh:property [ sh:path :note ; sh:languageIn ( "en" ) ] .\n')
    world = tmp_path / "w.ttl"
    world.write_text(
        "@prefix : <http://example.org/ehr#> .\n"
        ':p1 a :Patient ; :note "Seen at 9"@en-GB .\n'
        ':p2 a :Patient ; :note "Vu à 9 h"@fr .\n')
    said = _validate(*TRIAGE, onto, world=world)
    assert len(said) == 1 and said[0].startswith(f"{world}:3: warning: :p2: "), said
    assert 'sh:languageIn ("en")' in said[0], said


def test_the_shipped_world_says_nothing(tmp_path: Path) -> None:
    assert _validate(*TRIAGE, world=WORLD) == []
