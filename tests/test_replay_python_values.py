"""A Python tool's value of a type JSON does not know replays as it ran.

The trace records such a value as its ``str()`` (``{"@repr": …}``) and a replay hands that
string back: a ``uuid.UUID``, a path, an IP address, a plain ``enum.Enum`` member or a
``numpy.int64`` was refused by the gate live and landed as text on replay; an ``xsd:duration``
value landed live and was refused on replay; an ``(str, Enum)`` member landed live as its
``str()`` ("Kind.RUSH") while the trace recorded "rush". ``horismos replay`` said DIVERGED of a
run that went as recorded. Such values are now normalised as the tool returns, to the form
the trace records, so live and replay land the same literal; the trace's format is unchanged.
"""

from __future__ import annotations

import enum
import ipaddress
import json
import pathlib
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from forked import horismos_forked
from rdflib import XSD, Literal, Namespace
from rdflib.xsd_datetime import Duration

import horismos
from horismos import Agent, World

V = Namespace("http://example.org/v#")

DEFINITIONS = """\
@prefix :      <http://example.org/v#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Order a owl:Class .
:ref a owl:DatatypeProperty ; rdfs:range xsd:string .
:amount a owl:DatatypeProperty ; rdfs:range xsd:decimal .
:wait a owl:DatatypeProperty ; rdfs:range xsd:duration .

:t.make a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "order" ; horis:type :Order ] ] ;
    horis:effect [
        horis:subject "order" ;
        horis:asserts [ horis:property :ref ; horis:type xsd:string ] ;
        horis:asserts [ horis:property :amount ; horis:type xsd:decimal ;
                        horis:optional true ] ;
        horis:asserts [ horis:property :wait ; horis:type xsd:duration ;
                        horis:optional true ]
    ] ;
    horis:binding "python:vals.make" ;
    horis:timeout "5s" ;
    horis:idempotent false .

:Make a horis:Workflow ; horis:focusType :Order ; horis:start :DoMake .
:DoMake a horis:ActionStep ; horis:tool :t.make ;
    horis:requires "FILTER NOT EXISTS { ?this :ref ?r }" ;
    horis:bind [ horis:arg "order" ; horis:var "this" ] .
"""


class Kind(enum.Enum):
    RUSH = "rush"


class StrKind(str, enum.Enum):  # noqa: UP042  what users wrote before StrEnum
    RUSH = "rush"


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "defs.ttl").write_text(DEFINITIONS)
    (tmp_path / "world.ttl").write_text(
        "<http://example.org/v#o1> a <http://example.org/v#Order> .\n"
    )
    return tmp_path


@pytest.mark.parametrize(
    ("returned", "landed"),
    [
        ({"ref": uuid.UUID(int=5)}, {V.ref: Literal("00000000-0000-0000-0000-000000000005")}),
        ({"ref": pathlib.PurePosixPath("/srv/o1.pdf")}, {V.ref: Literal("/srv/o1.pdf")}),
        ({"ref": ipaddress.ip_address("10.0.0.1")}, {V.ref: Literal("10.0.0.1")}),
        ({"ref": Kind.RUSH}, {V.ref: Literal("rush")}),
        # landed as "StrKind.RUSH" live while the trace said "rush": now its value, as traced
        ({"ref": StrKind.RUSH}, {V.ref: Literal("rush")}),
        ({"ref": [uuid.UUID(int=7)]}, {V.ref: Literal("00000000-0000-0000-0000-000000000007")}),
        ({"ref": "r", "amount": np.int64(5)}, {V.amount: Literal("5", datatype=XSD.decimal)}),
        # numpy's float raised decimal.InvalidOperation in the gate: a traceback
        ({"ref": "r", "amount": np.float64(2.5)}, {V.amount: Literal("2.5", datatype=XSD.decimal)}),
        # landed live as before; the replay refused the string the trace kept
        ({"ref": "r", "wait": Duration(months=2)}, {V.wait: Literal("P2M", datatype=XSD.duration)}),
        # unchanged, and replayed as before
        (
            {"ref": "r", "amount": Decimal("12.50")},
            {V.amount: Literal("12.5", datatype=XSD.decimal)},
        ),
    ],
    ids=["uuid", "path", "ip", "enum", "str-enum", "uuids", "np.int64", "np.float64", "duration",
         "decimal"],
)
def test_a_value_of_a_type_json_does_not_know_replays_as_it_landed(
    files: Path, returned: dict[str, Any], landed: dict[Any, Literal]
) -> None:
    agent = Agent.from_files(files / "defs.ttl", tools={"vals.make": lambda order: returned})
    world = World.from_files(files / "world.ttl", store="memory")
    run = agent.run(world, focus=V.o1, trace=files / "t.jsonl")
    assert run.status == "completed", run.error
    for prop, value in landed.items():
        assert world.graph.value(V.o1, prop) == value
    report = horismos.replay(files / "t.jsonl", agent)
    assert report.first_divergence is None, report


def test_horismos_replay_of_a_run_whose_tool_returned_a_uuid_says_same(files: Path) -> None:
    (files / "vals.py").write_text(
        "import uuid\n\n\ndef make(order):\n    return {'ref': uuid.UUID(int=9)}\n"
    )
    run = horismos_forked(files, "run", "defs.ttl", "--world", "world.ttl", "--tools", "vals.py",
                          "--focus", ":o1", "--trace", "t.jsonl", "--out", "after.nq",
                          timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert '"00000000-0000-0000-0000-000000000009"' in (files / "after.nq").read_text()
    # the trace keeps its format: the value as the JSON string the run landed
    events = [json.loads(line) for line in (files / "t.jsonl").read_text().splitlines()]
    (outcome,) = next(e["outcomes"] for e in events if e.get("outcomes"))
    assert outcome["returned"]["@map"]["ref"] == "00000000-0000-0000-0000-000000000009"
    replayed = horismos_forked(files, "replay", "t.jsonl", "defs.ttl", "--tools", "vals.py",
                               timeout=120)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert replayed.stdout.startswith("same"), replayed.stdout


def test_a_value_no_trace_records_is_still_refused_by_the_gate(files: Path) -> None:
    """An object of no kind above is refused live, naming its type, as before."""

    class Receipt:
        pass

    agent = Agent.from_files(files / "defs.ttl",
                             tools={"vals.make": lambda order: {"ref": Receipt()}})
    world = World.from_files(files / "world.ttl", store="memory")
    run = agent.run(world, focus=V.o1)
    assert run.status == "failed"
    assert "a Receipt is not a value RDF can hold" in str(run.error)
    assert world.graph.value(V.o1, V.ref) is None
