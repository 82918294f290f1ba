"""A ``cmd:`` binding's slips, told the fix that fits them: a placeholder naming an argument
declared ``horis:sent false`` was told to "declare the argument in horis:takes" (it is
declared), a misspelt placeholder or command name got no did-you-mean."""

from __future__ import annotations

from pathlib import Path

import pytest

from horismos import AuthoringError, load_definitions

DEFS = """@prefix :      <http://example.org/shop#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Order a owl:Class .
:labelCode a owl:DatatypeProperty .

:label.print a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "order" ; horis:type :Order ; horis:sent false ] ;
                  horis:arg [ horis:name "sku" ; horis:type xsd:string ] ] ;
    horis:effect [ horis:subject "order" ;
        horis:asserts [ horis:property :labelCode ; horis:type xsd:string ] ] ;
    horis:binding "cmd:labeler" .

:labeler a horis:CommandBinding ;
    horis:argv ( "python3" "labeler.py" "--sku={sku}" ) ;
    horis:root "." .
"""
ARGV = '"--sku={sku}" )'


def _error(tmp_path: Path, old: str, new: str) -> tuple[str, str, int]:
    assert DEFS.count(old) == 1
    path = tmp_path / "shop.ttl"
    path.write_text(DEFS.replace(old, new), encoding="utf-8")
    with pytest.raises(AuthoringError) as e:
        load_definitions([path])
    (p,) = e.value.problems
    assert p.hint is not None and p.line is not None, str(p)
    return p.message, p.hint, p.line


def test_a_placeholder_of_an_unsent_argument_says_to_send_it(tmp_path: Path) -> None:
    message, hint, line = _error(tmp_path, ARGV, '"--sku={sku}" "{order}" )')
    assert "uses {order}, which is not a sent argument of the tool (sent: sku)" in message
    assert hint == 'drop horis:sent false from "order" (a placeholder sends it to the program)'
    assert line == DEFS[: DEFS.index('horis:binding "cmd:labeler"')].count("\n") + 1


def test_a_misspelt_placeholder_gets_the_argument_meant(tmp_path: Path) -> None:
    _, hint, _ = _error(tmp_path, ARGV, '"--sku={skuu}" "{case}" )')
    assert hint == ("write {sku} for {skuu}; declare 'case' in horis:takes, or take the "
                    "placeholder out of horis:argv / horis:workdir"), hint


def test_a_misspelt_command_name_gets_the_command_meant(tmp_path: Path) -> None:
    message, hint, _ = _error(tmp_path, '"cmd:labeler"', '"cmd:labeller"')
    assert "names no horis:CommandBinding 'labeller' (declared: labeler)" in message
    assert hint == 'did you mean "cmd:labeler"?'
