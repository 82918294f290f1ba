"""A tool written with its takes, effect and binding but no ``a horis:Tool``: the step calling
it was told the tool was "referenced but not declared", with another tool as the did-you-mean,
at the step's line. The fix is one word at the tool's own description: said there."""

from __future__ import annotations

from pathlib import Path

import pytest
from claims_files import CLAIMS_PREFIXES, problems

FILE = CLAIMS_PREFIXES + """\
:Change a owl:Class .
:appliedRef a owl:DatatypeProperty ; rdfs:domain :Change ; rdfs:range xsd:string .

:chg.notify a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "change" ; horis:type :Change ] ] ;
    horis:binding "python:notify" ; horis:idempotent true .

TOOL
    horis:takes [ horis:arg [ horis:name "change" ; horis:type :Change ] ] ;
    horis:effect [ horis:subject "change" ;
        horis:asserts [ horis:property :appliedRef ; horis:type xsd:string ] ] ;
    horis:binding "python:apply" ; horis:idempotent false .

:ManageChange a horis:Workflow ; horis:focusType :Change ; horis:start :Apply .

:Apply a horis:ActionStep ;
    horis:tool :chg.apply ;
    horis:requires "FILTER NOT EXISTS { ?this :appliedRef ?r }" ;
    horis:bind [ horis:arg "change" ; horis:var "this" ] .
"""


def _said(tmp_path: Path, tool: str) -> list:
    path = tmp_path / "changes.ttl"
    path.write_text(FILE.replace("TOOL", tool), encoding="utf-8")
    return [p for p in problems(path) if "horis:tool :chg.apply " in p.message]


def test_a_tool_described_without_its_type_is_said_at_its_description(tmp_path: Path) -> None:
    [said] = _said(tmp_path, ":chg.apply")
    assert said.severity == "error"
    assert said.line == FILE[: FILE.index("TOOL")].count("\n") + 1
    assert "is described as a tool (it has horis:binding) but not declared one" in said.message
    assert said.hint == "write :chg.apply a horis:Tool ; at the start of its description"


@pytest.mark.parametrize("tool", [":chg.apply a horis:Tool ;"])
def test_a_typed_tool_is_not_said(tmp_path: Path, tool: str) -> None:
    assert _said(tmp_path, tool) == []
