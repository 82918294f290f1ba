"""A step without ``horis:forEach`` whose pattern the world gives several solutions for one
focus: a change is applied to each host it ``:affects`` (a ``forEach``), then verified by a
step reading ``?this :affects ?host`` written without ``horis:forEach true``. For a change
affecting two hosts the check had two solutions and failed, and its ``horis:onError`` rolled
back a change applied everywhere. It validated; ``validate --world`` now says so."""

from __future__ import annotations

from pathlib import Path

import pytest
from forked import horismos_forked

FILE = """\
@prefix :      <http://example.org/chg#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Change a owl:Class .
:Host a owl:Class .
:affects a owl:ObjectProperty ; rdfs:domain :Change ; rdfs:range :Host .
:hostname a owl:DatatypeProperty ; rdfs:domain :Host ; rdfs:range xsd:string .
:applyRef a owl:DatatypeProperty ; rdfs:domain :Host ; rdfs:range xsd:string .
:healthy a owl:DatatypeProperty ; rdfs:domain :Host ; rdfs:range xsd:boolean .
:rollbackRef a owl:DatatypeProperty ; rdfs:domain :Change ; rdfs:range xsd:string .

:chg.apply a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "host" ; horis:type :Host ] ] ;
    horis:effect [ horis:subject "host" ;
        horis:asserts [ horis:property :applyRef ; horis:type xsd:string ] ] ;
    horis:binding "python:apply" ; horis:idempotent false .

:chg.verify a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "host" ; horis:type :Host ] ;
                  horis:arg [ horis:name "hostname" ; horis:type xsd:string ] ] ;
    horis:effect [ horis:subject "host" ;
        horis:asserts [ horis:property :healthy ; horis:type xsd:boolean ] ] ;
    horis:binding "python:verify" ; horis:idempotent true .

:chg.rollback a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "change" ; horis:type :Change ] ] ;
    horis:effect [ horis:subject "change" ;
        horis:asserts [ horis:property :rollbackRef ; horis:type xsd:string ] ] ;
    horis:binding "python:rollback" ; horis:idempotent false .

:ManageChange a horis:Workflow ; horis:focusType :Change ; horis:start :Apply .

:Apply a horis:ActionStep ;
    horis:tool :chg.apply ;
    horis:forEach true ;
    horis:requires "?this :affects ?host . FILTER NOT EXISTS { ?host :applyRef ?r }" ;
    horis:next :Verify .

:Verify a horis:ActionStep ;
    horis:tool :chg.verify ;
    EACH
    horis:requires "?this :affects ?host . ?host :hostname ?hostname ." ;
    horis:onError :Rollback .

:Rollback a horis:ActionStep ;
    horis:tool :chg.rollback ;
    horis:requires "FILTER NOT EXISTS { ?this :rollbackRef ?r }" ;
    horis:bind [ horis:arg "change" ; horis:var "this" ] .
"""

TOOLS = """\
def apply(host):
    return {"applyRef": "APL-" + host.rsplit("#", 1)[1]}


def verify(host, hostname):
    return {"healthy": True}


def rollback(change):
    return {"rollbackRef": "RB-1"}
"""

SAID = "solutions of its horis:requires for the arguments of :chg.verify"
LINE = FILE[: FILE.index('horis:requires "?this :affects ?host . ?host')].count("\n") + 1


def _written(tmp_path: Path, each: str = "", hosts: str = ":h1, :h2") -> Path:
    path = tmp_path / "changes.ttl"
    path.write_text(FILE.replace("EACH", each), encoding="utf-8")
    (tmp_path / "world.ttl").write_text(
        "@prefix : <http://example.org/chg#> .\n"
        f":c1 a :Change ; :affects {hosts} .\n"
        ':h1 a :Host ; :hostname "web-01" .\n:h2 a :Host ; :hostname "db-02" .\n',
        encoding="utf-8",
    )
    (tmp_path / "tools.py").write_text(TOOLS, encoding="utf-8")
    return path


def _validated(tmp_path: Path, path: Path) -> str:
    done = horismos_forked(
        tmp_path, "validate", path.name, "--world", "world.ttl", "--tools", "tools.py", timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_validate_warns_at_the_requires_and_run_rolls_back_what_was_applied(
    tmp_path: Path,
) -> None:
    path = _written(tmp_path)
    said = _validated(tmp_path, path)
    assert (
        f"changes.ttl:{LINE}: warning: :Verify: the world gives :c1 2 solutions of its "
        f"horis:requires for the arguments of :chg.verify (host=:h1, "
    ) in said, said
    assert "the instance goes on at its horis:onError :Rollback" in said, said
    assert "write horis:forEach true to call :chg.verify once per solution" in said, said
    ran = horismos_forked(
        tmp_path,
        "run",
        path.name,
        "--world",
        "world.ttl",
        "--focus",
        ":c1",
        "--tools",
        "tools.py",
        timeout=120,
    )
    assert "2 solutions for the arguments of chg.verify" in ran.stdout, ran.stdout + ran.stderr
    assert ":chg.rollback(change=:c1)" in ran.stdout, ran.stdout


@pytest.mark.parametrize(
    ("each", "hosts"),
    [
        ("horis:forEach true ;", ":h1, :h2"),  # once per host, as meant
        ("", ":h1"),  # one host: one solution
    ],
)
def test_one_call_a_focus_or_a_for_each_is_not_said(tmp_path: Path, each: str, hosts: str) -> None:
    said = _validated(tmp_path, _written(tmp_path, each, hosts))
    assert SAID not in said, said
