"""A wait's ``horis:until`` that, once it does not hold, never holds again.

``horis:until "?this :dueAt ?t . FILTER (?t > NOW())"`` reads as "until the due time", but the
runtime asks the until when the instance reaches the wait and at each resume or ``horismos
wake``: an order reaching it before its due time went straight on, and one reaching it after
waited for ever. And ``FILTER NOT EXISTS { ?this :withdrawn true }`` in an until with no
``horis:timeout``: once a request was withdrawn, no answer could make the until hold (facts
are only added), and the instance waited for ever. Both validated; both are warnings now, at
their line, with what to write."""

from __future__ import annotations

from pathlib import Path

from forked import horismos_forked

from horismos import AuthoringError, Problem, load_definitions

FLOW = """\
@prefix :      <http://example.org/shop#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Order a owl:Class .
:dueAt a owl:DatatypeProperty ; rdfs:range xsd:dateTime .
:approvedBy a owl:DatatypeProperty ; rdfs:range xsd:string .
:withdrawn a owl:DatatypeProperty ; rdfs:range xsd:boolean .
:note a owl:DatatypeProperty ; rdfs:range xsd:string .

:shop.note a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "order" ; horis:type :Order ] ] ;
    horis:effect [ horis:subject "order" ;
                   horis:asserts [ horis:property :note ; horis:type xsd:string ] ] ;
    horis:binding "python:shop.note" ; horis:idempotent true .

:Orders a horis:Workflow ; horis:focusType :Order ; horis:start :Wait .

:Wait a horis:WaitStep ;
    horis:reason "a manager approves" ;
    horis:wake horis:OperatorInput ;
    horis:delivery horis:Final ;
    horis:until \"\"\" UNTIL \"\"\" EXTRA ;
    horis:next :Note .

:Note a horis:ActionStep ; horis:tool :shop.note ;
    horis:bind [ horis:arg "order" ; horis:var "this" ] .
"""

FUTURE = "?this :dueAt ?t .\n        FILTER (?t > NOW())"
WITHDRAWN = "?this :approvedBy ?m .\n        FILTER NOT EXISTS { ?this :withdrawn true }"


def _written(tmp_path: Path, until: str, extra: str = "") -> Path:
    path = tmp_path / "shop.ttl"
    path.write_text(FLOW.replace("UNTIL", until).replace("EXTRA", extra), encoding="utf-8")
    return path


def _found(path: Path) -> list[Problem]:
    try:
        return [p for p in load_definitions([path]).warnings if "horis:until" in p.message]
    except AuthoringError as e:
        return list(e.problems)


def _line_with(path: Path, text: str) -> int:
    return next(i for i, t in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                if text in t)


def test_an_until_requiring_a_time_to_come_is_a_warning_with_the_test_to_write(
    tmp_path: Path,
) -> None:
    path = _written(tmp_path, FUTURE)
    (p,) = _found(path)
    assert (p.severity, p.line, p.node) == ("warning", _line_with(path, "NOW()"), ":Wait"), p
    assert p.message == (
        "horis:until requires ?t later than NOW(), but the runtime asks the until only when an "
        "instance reaches :Wait and at each resume or `horismos wake`: one reaching it before "
        "?t finds it holding and goes straight on without waiting, and one reaching it after ?t "
        "never finds it holding again (the clock only moves on), so it waits for ever"
    ), p.message
    assert p.hint == "to wait until ?t has come, write FILTER (?t <= NOW())", p.hint


def test_with_a_timeout_it_waits_for_that_instead(tmp_path: Path) -> None:
    path = _written(tmp_path, "?this :dueAt ?t . FILTER (NOW() < ?t)",
                    '; horis:timeout "P1D" ; horis:onTimeout :Note')
    (p,) = _found(path)
    assert p.message.endswith("so it waits until its horis:timeout passes"), p.message


def test_an_until_requiring_what_only_an_outside_fact_gives_absent_with_no_timeout_is_a_warning(
    tmp_path: Path,
) -> None:
    path = _written(tmp_path, WITHDRAWN)
    (p,) = _found(path)
    assert (p.severity, p.line, p.node) == ("warning", _line_with(path, "NOT EXISTS"), ":Wait")
    assert p.message == (
        "horis:until holds only while ?this :withdrawn true is absent (FILTER NOT EXISTS), and "
        ":Wait has no horis:timeout: facts are only ever added (an effect's, an answer's), "
        "never taken away, so an instance at :Wait once ?this :withdrawn true holds never finds "
        "the until holding again, and waits for ever"
    ), p.message
    assert (p.hint or "").startswith(
        'add horis:timeout "P7D" and horis:onTimeout :SomeStep (an escalation or a reminder) '
        "to :Wait"
    ), p.hint


def test_said_nothing_of_with_a_timeout_a_past_time_or_what_the_flows_tools_write(
    tmp_path: Path,
) -> None:
    timed = '; horis:timeout "P1D" ; horis:onTimeout :Note'
    assert _found(_written(tmp_path, WITHDRAWN, timed)) == []
    assert _found(_written(tmp_path, "?this :dueAt ?t . FILTER (?t <= NOW())")) == []
    noted = "?this :approvedBy ?m . FILTER NOT EXISTS { ?this :note ?n }"
    assert _found(_written(tmp_path, noted)) == []


def test_validate_says_it_at_file_line_and_still_passes(tmp_path: Path) -> None:
    path = _written(tmp_path, WITHDRAWN)
    done = horismos_forked(tmp_path, "validate", "shop.ttl")
    assert done.returncode == 0, done.stdout + done.stderr
    line = _line_with(path, "NOT EXISTS")
    assert f"shop.ttl:{line}: warning: :Wait: horis:until holds only while ?this :withdrawn " \
        "true is absent" in done.stdout, done.stdout
    assert "Traceback" not in done.stdout + done.stderr
