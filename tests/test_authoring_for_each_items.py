"""Where a ``horis:forEach`` step's items come from. An order's lines are reserved once each
(``?this :hasLine ?line``), but the world lists them under ``:line``: no tool writes
``:hasLine`` and the world holds no statement of it, so the step had no item for any order
and the run found it out at the step, every instance blocked. ``validate --world`` (and
``run``, before its first step) now says so at the pattern's line. A ``horis:forEach`` naming
what to go over (``horis:forEach :hasLine``, ``"line"``) is told where the items are named."""

from __future__ import annotations

from pathlib import Path

import pytest
from forked import horismos_forked

FILE = """@prefix :      <http://example.org/wh#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Order a owl:Class .
:Line a owl:Class .
:hasLine a owl:ObjectProperty ; rdfs:domain :Order ; rdfs:range :Line .
:quantity a owl:DatatypeProperty ; rdfs:range xsd:integer .
:reservationId a owl:DatatypeProperty ; rdfs:range xsd:string .

:stock.reserve a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "line" ; horis:type :Line ] ;
                  horis:arg [ horis:name "quantity" ; horis:type xsd:integer ] ] ;
    horis:effect [ horis:subject "line" ;
        horis:asserts [ horis:property :reservationId ; horis:type xsd:string ] ] ;
    horis:binding "python:stock.reserve" ;
    horis:idempotent false .

:Fulfil a horis:Workflow ; horis:focusType :Order ; horis:start :ReserveLines .

:ReserveLines a horis:ActionStep ;
    horis:tool :stock.reserve ;
    horis:forEach EACH ;
    horis:requires \"\"\" ?this a :Order .
                       ?this :hasLine ?line .
                       ?line :quantity ?quantity .
                       FILTER NOT EXISTS { ?line :reservationId ?r } \"\"\" .
"""

LINE = FILE[: FILE.index("?this :hasLine ?line")].count("\n") + 1
EACH_LINE = FILE[: FILE.index("horis:forEach EACH")].count("\n") + 1
SAID = (
    f"wh.ttl:{LINE}: warning: :ReserveLines: horis:forEach calls :stock.reserve once per "
    "?line, which the pattern reaches through :hasLine; no tool's effect writes :hasLine and "
    "the world holds no statement of it, so the step has no item for any instance, and every "
    "instance stops there, blocked — load the data that holds :hasLine, write in the pattern "
    "the property the world's data gives them by, or have a step before it write :hasLine"
)


def _said(tmp_path: Path, world: str | None, each: str = "true") -> list[str]:
    (tmp_path / "wh.ttl").write_text(FILE.replace("EACH", each), encoding="utf-8")
    args = ["wh.ttl"]
    if world is not None:
        (tmp_path / "world.ttl").write_text(
            "@prefix : <http://example.org/wh#> .\n" + world, encoding="utf-8"
        )
        args += ["--world", "world.ttl"]
    out = horismos_forked(tmp_path, "validate", *args).stdout
    return [line for line in out.splitlines() if ": warning: " in line or ": error: " in line]


def test_items_through_a_property_the_world_never_states_are_said(tmp_path: Path) -> None:
    said = _said(tmp_path, ":o1 a :Order ; :line :l1 .\n:l1 a :Line ; :quantity 2 .\n")
    assert SAID in said, said


def test_items_the_world_gives_are_not_said(tmp_path: Path) -> None:
    said = _said(tmp_path, ":o1 a :Order ; :hasLine :l1 .\n:l1 a :Line ; :quantity 2 .\n")
    assert said == [], said


def test_of_no_world_nothing_is_said(tmp_path: Path) -> None:
    assert _said(tmp_path, None) == []


@pytest.mark.parametrize(
    ("each", "items"),
    [
        (":hasLine", '(horis:requires "?this :hasLine ?item .")'),
        ('"line"', '(horis:requires "?this :p ?line .", :p the property that holds them)'),
        ('"?this :hasLine ?line ."', '(horis:requires "?this :hasLine ?line .")'),
    ],
)
def test_a_for_each_naming_what_to_go_over_is_told_where_items_are_named(
    tmp_path: Path, each: str, items: str
) -> None:
    said = _said(tmp_path, None, each)
    assert said == [
        f"wh.ttl:{EACH_LINE}: error: :ReserveLines: horis:forEach must be true or false, not "
        f"{each} — horis:forEach takes true or false, and with true the tool is called once per "
        f"solution of the step's horis:requires: name the items there {items} and write "
        "horis:forEach true"
    ], said


def test_run_says_it_before_its_first_step(tmp_path: Path) -> None:
    (tmp_path / "wh.ttl").write_text(FILE.replace("EACH", "true"), encoding="utf-8")
    (tmp_path / "world.ttl").write_text(
        "@prefix : <http://example.org/wh#> .\n:o1 a :Order ; :line :l1 .\n"
        ":l1 a :Line ; :quantity 2 .\n",
        encoding="utf-8",
    )
    (tmp_path / "stock.py").write_text(
        "def reserve(line, quantity):\n    return {'reservationId': 'R-1'}\n", encoding="utf-8"
    )
    done = horismos_forked(
        tmp_path, "run", "wh.ttl", "--world", "world.ttl", "--tools", "stock.py", "--all"
    )
    assert SAID in done.stderr, done.stderr
    assert done.returncode == 4, done.stdout + done.stderr  # blocked, as it said


def test_a_guard_on_the_focus_for_what_the_tool_writes_on_each_item_is_told_the_item(
        tmp_path: Path) -> None:
    """``FILTER NOT EXISTS { ?this :reservationId ?r }`` meant of each ``?line``: the focus,
    an order, never holds a line's reservation, so the guard held back nothing. The warning
    said to read a property of :Order or change the workflow's focus type; the fix is ?line."""
    text = (FILE.replace("EACH", "true")
            .replace(":reservationId a owl:DatatypeProperty ;",
                     ":reservationId a owl:DatatypeProperty ; rdfs:domain :Line ;")
            .replace("FILTER NOT EXISTS { ?line :reservationId ?r }",
                     "FILTER NOT EXISTS { ?this :reservationId ?r }")
            .replace("horis:idempotent false", "horis:idempotent true"))
    (tmp_path / "wh.ttl").write_text(text, encoding="utf-8")
    out = horismos_forked(tmp_path, "validate", "wh.ttl").stdout
    line = text[: text.index("?this :reservationId ?r")].count("\n") + 1
    said = [x for x in out.splitlines() if ": warning: " in x]
    assert said == [
        f"wh.ttl:{line}: warning: :ReserveLines: horis:requires reads :reservationId of ?this, "
        "but :reservationId has rdfs:domain :Line and :Fulfil runs for nodes of :Order (its "
        "horis:focusType): unless a node is both, that part of the pattern never matches — the "
        "step's tool writes :reservationId on ?line: write ?line for ?this where the pattern "
        "reads :reservationId (a guard: FILTER NOT EXISTS { ?line :reservationId ?v })"
    ], out
