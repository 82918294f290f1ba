"""A wait whose ``horis:until`` takes any value of a boolean answer (``?this :heavyApproved
?ok``, meant as "an answer came"): the supervisor's ``false`` ended the wait as ``true``
does, and the step after it, which never read the answer, printed the labels they had
refused. validate said nothing; now a warning at the until, with what to write."""

from __future__ import annotations

from pathlib import Path

import pytest
from forked import horismos_forked

from horismos import load_definitions

DEFS = '''@prefix :      <http://example.org/ship#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Shipment a owl:Class .
:heavyApproved a owl:DatatypeProperty ; rdfs:domain :Shipment ; rdfs:range xsd:boolean .
:approvedBy a owl:DatatypeProperty ; rdfs:domain :Shipment ; rdfs:range xsd:string .
:labelledAt a owl:DatatypeProperty ; rdfs:domain :Shipment ; rdfs:range xsd:dateTime .

:ship.label a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "shipment" ; horis:type :Shipment ] ] ;
    horis:effect [ horis:asserts [ horis:property :labelledAt ; horis:value horis:now ] ] ;
    horis:binding "python:label" ;
    horis:timeout "5s" .

:Dispatch a horis:Workflow ; horis:focusType :Shipment ; horis:start :ApproveHeavy .

:ApproveHeavy a horis:WaitStep ;
    horis:reason "A heavy parcel needs a supervisor's approval." ;
    horis:wake horis:OperatorInput ;
    horis:delivery horis:Final ;
    horis:until "?this :heavyApproved true ." ;
    horis:next :Label .

:Label a horis:ActionStep ;
    horis:tool :ship.label ;
    horis:requires "FILTER NOT EXISTS { ?this :labelledAt ?t }" ;
    horis:bind [ horis:arg "shipment" ; horis:var "this" ] .
'''
UNTIL = '"?this :heavyApproved true ."'
ANY = '"?this :heavyApproved ?ok ."'
LABEL_GUARD = '"FILTER NOT EXISTS { ?this :labelledAt ?t }"'
DECIDE = '''horis:next :Decide .

:Decide a horis:DecisionStep ;
    horis:when [ horis:requires "?this :heavyApproved true ." ; horis:next :Label ] ;
    horis:otherwise :Label .

:Label a'''


def _defs(tmp_path: Path, *edits: tuple[str, str]) -> Path:
    text = DEFS
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path = tmp_path / "defs.ttl"
    path.write_text(text, encoding="utf-8")
    return path


def _said(path: Path) -> list[str]:
    return [str(p) for p in load_definitions([path]).warnings if "false as well as" in p.message]


def test_an_until_taking_either_answer_is_a_warning_at_its_line(tmp_path: Path) -> None:
    path = _defs(tmp_path, (UNTIL, ANY))
    [found] = [p for p in load_definitions([path]).warnings if "false as well as" in p.message]
    assert (found.node, found.line) == (":ApproveHeavy", DEFS[: DEFS.index(UNTIL)].count("\n") + 1)
    assert found.message == (
        "horis:until holds for any value of :heavyApproved, false as well as true: an answer of "
        ":heavyApproved false ends the wait as true does, and the instance goes on at :Label, "
        "which never reads :heavyApproved"
    )
    assert found.hint == (
        "go on at a horis:DecisionStep whose rule tests ?this :heavyApproved true, its "
        'horis:otherwise taking the no; or write horis:until "?this :heavyApproved true ." if '
        "only a yes ends the wait"
    )


@pytest.mark.parametrize("edits", [
    pytest.param((), id="until-true"),
    pytest.param(((UNTIL, '"?this :heavyApproved ?ok . FILTER (?ok)"'),), id="until-filters"),
    pytest.param(((UNTIL, ANY), (LABEL_GUARD, '"?this :heavyApproved true ."')),
                 id="next-step-reads-it"),
    pytest.param(((UNTIL, ANY), ("horis:next :Label .\n\n:Label a", DECIDE)),
                 id="next-decision-reads-it"),
    pytest.param(((UNTIL, '"?this :approvedBy ?who ."'),), id="not-a-boolean"),
])
def test_an_until_whose_no_is_read_or_not_taken_is_said_nothing_of(
    tmp_path: Path, edits: tuple[tuple[str, str], ...]
) -> None:
    assert _said(_defs(tmp_path, *edits)) == []


def test_validate_says_it_where_the_no_would_label_the_shipment(tmp_path: Path) -> None:
    """What the warning is about, run: the supervisor's no ends the wait, and the tool acts."""
    _defs(tmp_path, (UNTIL, ANY))
    (tmp_path / "client.py").write_text(
        "def label(shipment):\n"
        "    open('calls.log', 'a').write(f'label {shipment}\\n')\n"
        "    return {}\n",
        encoding="utf-8",
    )
    (tmp_path / "world.ttl").write_text(
        "@prefix : <http://example.org/ship#> .\n:s2 a :Shipment .\n", encoding="utf-8"
    )
    checked = horismos_forked(tmp_path, "validate", "defs.ttl", "--tools", "client.py")
    assert "defs.ttl:24: warning: :ApproveHeavy: horis:until holds for any value" in checked.stdout
    ran = horismos_forked(tmp_path, "run", "defs.ttl", "--world", "world.ttl", "--tools",
                          "client.py", "--focus", ":s2", "--out", "after.trig", "-q")
    assert ran.returncode == 3, ran.stdout + ran.stderr
    waiting = horismos_forked(tmp_path, "instances", "--world", "after.trig", "--status",
                              "waiting")
    instance = waiting.stdout.splitlines()[1].split()[0]
    resumed = horismos_forked(tmp_path, "resume", "defs.ttl", "--world", "after.trig", "--tools",
                              "client.py", "--instance", instance, "--facts",
                              ":s2 :heavyApproved false .", "--out", "done.trig")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert (tmp_path / "calls.log").read_text() == "label http://example.org/ship#s2\n"
