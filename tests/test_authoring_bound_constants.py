"""An argument given from a variable its step's pattern BINDs to one constant the call never
takes: ``BIND("14" AS ?days)`` for an ``xsd:integer``. validate said nothing; every call was
refused at run time ("must be a literal of datatype xsd:integer"), each instance failing
there or taking the step's ``horis:onError`` (to a proposal, a person's wait), after the
steps before it had acted. Now an error at the BIND's line, with the value to write, and
``run`` refuses it before any step."""

from __future__ import annotations

from pathlib import Path

import pytest
from forked import horismos_forked

from horismos import AuthoringError, load_definitions

DEFS = '''@prefix :      <http://example.org/library#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Loan a owl:Class .
:renewedAt a owl:DatatypeProperty ; rdfs:domain :Loan ; rdfs:range xsd:dateTime .

:lib.renew a horis:Tool ;
    horis:takes [
        horis:arg [ horis:name "loan" ; horis:type :Loan ] ;
        horis:arg [ horis:name "days" ; horis:type xsd:integer ]
    ] ;
    horis:effect [ horis:subject "loan" ;
                   horis:asserts [ horis:property :renewedAt ; horis:value horis:now ] ] ;
    horis:binding "python:renew" ;
    horis:timeout "5s" .

:Renewal a horis:Workflow ; horis:focusType :Loan ; horis:start :Renew .

:Renew a horis:ActionStep ;
    horis:tool :lib.renew ;
    horis:requires """ FILTER NOT EXISTS { ?this :renewedAt ?t }
                       BIND(14 AS ?days) """ ;
    horis:bind [ horis:arg "loan" ; horis:var "this" ] .
'''
GOOD_BIND = "BIND(14 AS ?days)"
LOAN = 'horis:var "this" ]'
CLIENT = '''def renew(loan, days):
    with open("calls.log", "a") as f:
        f.write(f"renew {loan} {days}\\n")
    return {}
'''


def _write(tmp_path: Path, *edits: tuple[str, str]) -> tuple[Path, int]:
    text = DEFS
    for old, new in edits:
        assert text.count(old) == 1
        text = text.replace(old, new)
    (tmp_path / "defs.ttl").write_text(text, encoding="utf-8")
    return tmp_path / "defs.ttl", DEFS[: DEFS.index(GOOD_BIND)].count("\n") + 1


@pytest.mark.parametrize(("bind", "said", "hint"), [
    pytest.param('BIND("14" AS ?days)', 'binds ?days to "14", a string, but it gives argument '
                 '"days" of :lib.renew, which takes a literal of xsd:integer: every call is '
                 "refused", "write 14 without quotes", id="quoted-number"),
    pytest.param('BIND("P14D" AS ?days)', 'binds ?days to "P14D", a string',
                 'BIND a value of xsd:integer to ?days, or declare "days" horis:type xsd:string',
                 id="duration-text"),
    pytest.param("BIND(14.0 AS ?days)", "(the call takes a literal of exactly xsd:integer, not "
                 "one of xsd:decimal)", 'BIND a value of xsd:integer to ?days, or declare "days" '
                 "horis:type xsd:decimal", id="decimal"),
    pytest.param("bind(:p14 as ?days)", "binds ?days to :p14, a node",
                 "BIND a literal of xsd:integer to ?days", id="node-lower-case-keywords"),
])
def test_a_constant_the_argument_never_takes_is_an_error_at_its_bind(
    tmp_path: Path, bind: str, said: str, hint: str
) -> None:
    path, line = _write(tmp_path, (GOOD_BIND, bind))
    with pytest.raises(AuthoringError) as e:
        load_definitions([path])
    [found] = e.value.problems
    assert (found.severity, found.node, found.line) == ("error", ":Renew", line), found
    assert said in found.message
    assert found.hint == hint


def test_a_literal_bound_for_a_class_argument_is_an_error(tmp_path: Path) -> None:
    path, line = _write(
        tmp_path, (GOOD_BIND, f'{GOOD_BIND} BIND("loan1" AS ?loan)'), (LOAN, 'horis:var "loan" ]')
    )
    with pytest.raises(AuthoringError) as e:
        load_definitions([path])
    [found] = [p for p in e.value.problems if p.severity == "error"]
    assert found.line == line
    assert 'binds ?loan to "loan1", a literal, but it gives argument "loan" of :lib.renew, ' \
        "which takes a node of :Loan" in found.message
    assert found.hint == "BIND a node of :Loan (:name, without quotes) to ?loan"


@pytest.mark.parametrize("bind", [
    pytest.param(GOOD_BIND, id="integer"),
    pytest.param('BIND("14"^^xsd:int AS ?days)', id="integer-subtype"),
    # other solutions give the argument another value: not every call is refused
    pytest.param('{ BIND("14" AS ?days) } UNION { BIND(7 AS ?days) }', id="union-branch"),
    pytest.param('OPTIONAL { BIND("14" AS ?days) }', id="optional"),
])
def test_a_constant_the_argument_takes_or_one_of_several_is_no_error(
    tmp_path: Path, bind: str
) -> None:
    path, _ = _write(tmp_path, (GOOD_BIND, bind))
    assert not [p for p in load_definitions([path]).warnings if "BIND" in p.message]


def test_run_refuses_it_before_calling_anything(tmp_path: Path) -> None:
    _, line = _write(tmp_path, (GOOD_BIND, 'BIND("14" AS ?days)'))
    (tmp_path / "client.py").write_text(CLIENT, encoding="utf-8")
    (tmp_path / "world.ttl").write_text(
        "@prefix : <http://example.org/library#> .\n:loan1 a :Loan .\n", encoding="utf-8"
    )
    args = ("defs.ttl", "--world", "world.ttl", "--tools", "client.py", "--all")
    ran = horismos_forked(tmp_path, "run", *args)
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert f"defs.ttl:{line}: error: :Renew: horis:requires binds ?days" in ran.stderr
    assert not (tmp_path / "calls.log").exists()
    _write(tmp_path)  # written right, it runs
    assert horismos_forked(tmp_path, "run", *args).returncode == 0
    assert (tmp_path / "calls.log").read_text() == "renew http://example.org/library#loan1 14\n"
