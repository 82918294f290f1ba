"""An unchanged run replays `same`, whatever order a tool lists its fields or values in.

A tool's answer is a mapping, and a multi-valued property may come as a list or a set: none of
that order means anything, and the trace writes outcomes with sorted keys. Effects (and every
other set-valued field) are compared as sets; when they truly differ, the divergence names the
triples added and missing.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rdflib import URIRef

from horismos import Agent, World, read_trace, replay
from horismos._trace import Trace

DEFS = """
@prefix :      <http://example.org/o#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .

:Item a rdfs:Class .  :Tag a rdfs:Class .
:t.describe a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "item" ; horis:type :Item ] ] ;
    horis:effect [ horis:subject "item" ;
        horis:asserts [ horis:property :name ; horis:type xsd:string ; horis:optional true ] ;
        horis:asserts [ horis:property :count ; horis:type xsd:integer ; horis:optional true ] ;
        horis:asserts [ horis:property :weight ; horis:type xsd:double ; horis:optional true ] ;
        horis:asserts [ horis:property :ok ; horis:type xsd:boolean ; horis:optional true ] ;
        horis:asserts [ horis:property :seen ; horis:type xsd:date ; horis:optional true ] ;
        horis:asserts [ horis:property :tag ; horis:type :Tag ; horis:optional true ;
                        horis:many true ] ;
        horis:asserts [ horis:property :alias ; horis:type xsd:string ; horis:optional true ;
                        horis:many true ] ] ;
    horis:binding "python:describe" .
:Describe a horis:Workflow ; horis:focusType :Item ; horis:start :D .
:D a horis:ActionStep ; horis:tool :t.describe ;
    horis:bind [ horis:arg "item" ; horis:var "this" ] .
"""
WORLD = """
@prefix : <http://example.org/o#> .
:i1 a :Item .  :red a :Tag .  :blue a :Tag .  :green a :Tag .
"""
NS = "http://example.org/o#"

values = st.fixed_dictionaries({}, optional={
    "name": st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=12),
    "count": st.integers(min_value=-(10**30), max_value=10**30),
    "weight": st.floats(allow_nan=False, allow_infinity=False, width=64),
    "ok": st.booleans(),
    "seen": st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2100, 1, 1)),
    "tag": st.sets(st.sampled_from([URIRef(NS + t) for t in ("red", "blue", "green")]),
                   min_size=1),
    "alias": st.one_of(st.sets(st.text("abcxyz", min_size=1, max_size=5), min_size=1,
                               max_size=4),
                       st.lists(st.text("abcxyz", min_size=1, max_size=5), min_size=1,
                                max_size=4, unique=True)),
})


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("orders")
    (folder / "d.ttl").write_text(DEFS)
    (folder / "w.ttl").write_text(WORLD)
    return folder


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(answer=values, order=st.randoms(use_true_random=False))
def test_record_then_replay_is_same_whatever_the_order(files: Path, answer: dict[str, Any],
                                                       order: Any) -> None:
    keys = list(answer)
    order.shuffle(keys)
    shuffled = {k: answer[k] for k in keys}
    agent = _agent(files, lambda item: dict(shuffled))
    # each example records anew over the last one's trace, on purpose
    run = agent.run(World.from_files(files / "w.ttl"), focus=NS + "i1",
                    trace=Trace(files / "t.jsonl", overwrite=True))
    assert run.status == "completed", run.error
    report = replay(files / "t.jsonl", agent)
    assert not report.diverged, str(report)


_AGENTS: dict[Path, Agent] = {}


def _agent(files: Path, describe: Any) -> Agent:
    """One loaded agent for every example (loading definitions is the slow part); each
    example brings its own tool."""
    agent = _AGENTS.get(files)
    if agent is None:
        agent = _AGENTS[files] = Agent.from_files(files / "d.ttl", tools={"describe": describe})
    agent.tools["describe"] = describe
    return agent


def test_truly_different_effects_name_the_triples_added_and_missing(files: Path) -> None:
    agent = _agent(files, lambda item: {"name": "first", "alias": ["a", "b"]})
    agent.run(World.from_files(files / "w.ttl"), focus=NS + "i1", trace=files / "d.jsonl")
    events = read_trace(files / "d.jsonl")
    step = next(e for e in events if e["type"] == "step")
    step["outcomes"] = [{"returned": {"@map": {"name": "second", "alias": ["a", "b"]}}}]
    forged = Trace()
    for e in events:
        forged.emit(e["type"], **{k: v for k, v in e.items()
                                  if k not in ("type", "seq", "prev", "hash")})
    report = replay(forged.save(files / "forged.jsonl"), agent)
    d = report.first_divergence
    assert d is not None and d.field == "effects", str(report)
    text = str(report)
    assert "1 now that were not recorded" in text and '\\"second\\"' in text
    assert "1 recorded that are not now" in text and '\\"first\\"' in text
    assert '\\"a\\"' not in text  # what stayed the same is not listed
