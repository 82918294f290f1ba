"""Each trace line reads back as its event, and what orjson cannot write as the stdlib's
json.dumps wrote it is written by the stdlib, byte for byte as earlier releases did.

A line is serialised once with a placeholder hash and cut (horismos._trace._hashed_line), by
orjson where the event is JSON's own types with finite floats, else by the reference:
``json.dumps`` with sorted keys, no spaces, UTF-8 text (ASCII escapes when a lone surrogate
makes that impossible), ``default=str``; the event hashed without its ``hash`` member and
written with it. ``read_trace`` checks the hash over the line's own text, whichever wrote it."""

from __future__ import annotations

import collections
import enum
import hashlib
import json
import math
import tempfile
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from horismos import Agent, World, replay
from horismos._errors import TraceTampered
from horismos._event_shape import _ANY_EVENT, _SHAPES
from horismos._outcomes import decode, encode
from horismos._trace import (
    _PLACEHOLDER,
    Trace,
    _hashed_line,
    _quick_line,
    _without,
    read_trace,
)


def _reference_line(event: dict[str, Any]) -> str:
    line = json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    try:
        line.encode()
    except UnicodeEncodeError:
        line = json.dumps(event, sort_keys=True, separators=(",", ":"), default=str)
    return line


def _reference(event: dict[str, Any]) -> tuple[str, str]:
    """(the written line, the event's own hash) as serialising it twice gave them."""
    own = "sha256:" + hashlib.sha256(_reference_line(event).encode()).hexdigest()
    return _reference_line({**event, "hash": own}), own


def _same(written: Any, read: Any) -> bool:
    """Whether ``read`` is ``written`` as JSON carries it: types kept (a float stays a float,
    -0.0 keeps its sign, a NaN is a NaN), a tuple as a list, a Decimal as its string."""
    if isinstance(written, Decimal):
        return read == str(written)
    if type(written) is float:
        if type(read) is not float:
            return False
        if math.isnan(written):
            return math.isnan(read)
        return read == written and math.copysign(1, read) == math.copysign(1, written)
    if isinstance(written, dict):
        return (
            type(read) is dict
            and read.keys() == written.keys()
            and all(_same(v, read[k]) for k, v in written.items())
        )
    if isinstance(written, list | tuple):
        return (
            type(read) is list
            and len(read) == len(written)
            and all(map(_same, written, read))
        )
    return type(read) is type(written) and read == written


# every character (lone surrogates too), and text a cut could trip on
_TEXT = st.text(st.characters(exclude_categories=()), max_size=8) | st.sampled_from(
    [_PLACEHOLDER, f'"hash":"{_PLACEHOLDER}"', '"hash":"', ",", "{", "\\", '"', "é", "\u2028"]
)
_KEYS = _TEXT | st.sampled_from(["hash", "has", "hasg", "hasi", "hash\x00", "Hash", "seq", ""])
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**63 - 2, max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([3.2e-05, 1e16, 1e-7, -0.0, 5e-324, 0.1])
    | _TEXT
    | st.builds(Decimal, st.integers())  # not JSON: default=str
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3)
    | st.tuples(inner, inner)
    | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=600, deadline=None)
@given(st.dictionaries(_KEYS, _JSON, max_size=7))
def test_a_line_reads_back_as_its_event_hashed_without_its_hash(fields: dict[str, Any]) -> None:
    event = {k: v for k, v in fields.items() if k != "hash"}
    hashed = dict(event)
    line = _hashed_line(hashed)
    own = hashed["hash"]
    assert hashed == {**event, "hash": own}
    assert _same({**event, "hash": own}, json.loads(line))
    # the hash is of the line's own text without its hash member, as read_trace cuts it (an
    # ambiguous cut is re-serialised by the stdlib: held to the reference below)
    unhashed = _without(line.decode(), "hash", own)
    if unhashed is not None:
        assert own == "sha256:" + hashlib.sha256(unhashed.encode()).hexdigest()


@settings(max_examples=600, deadline=None)
@given(st.dictionaries(_KEYS, _JSON, max_size=7))
def test_what_orjson_cannot_write_as_the_stdlib_does_is_the_reference_byte_for_byte(
    fields: dict[str, Any],
) -> None:
    event = {k: v for k, v in fields.items() if k != "hash"}
    if _quick_line({**event, "hash": _PLACEHOLDER}) is not None:
        return  # orjson's line: held to its event above
    line, own = _reference(event)
    hashed = dict(event)
    assert _hashed_line(hashed).decode() == line
    assert hashed["hash"] == own


# not the fields a reader of a step event takes apart: a value of the wrong kind there is a
# malformed event, refused on reading (tests/test_cli.py); any other field holds any JSON
_TAKEN_APART = {"type", "seq", "prev", "hash", "sig", *_ANY_EVENT, *_SHAPES["step"]}
_EVENT_FIELDS = st.dictionaries(_KEYS.filter(lambda k: k not in _TAKEN_APART), _JSON, max_size=6)


@settings(max_examples=300, deadline=None)
@given(_EVENT_FIELDS)
def test_a_written_trace_verifies_and_reads_back_its_events(fields: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.jsonl"
        trace = Trace(path)
        trace.emit("header", trace_version=2)
        emitted = dict(trace.emit("step", **fields))
        trace.emit("end", status="completed")
        trace.close()
        events = read_trace(path)
    assert [e["type"] for e in events] == ["header", "step", "end"]
    assert _same(emitted, events[1])


def test_a_value_that_is_the_placeholder_itself_is_written_as_it_is() -> None:
    for event in (
        {"a": _PLACEHOLDER},
        {"z": [_PLACEHOLDER, {"hash": _PLACEHOLDER}]},
        {"a": 1, "hat": _PLACEHOLDER},
        {},
        {"type": "end"},
        {"a": "\ud800", "z": "é"},
        {"a": math.nan, "b": math.inf},
    ):
        line, own = _reference(event)
        hashed = dict(event)
        assert _hashed_line(hashed).decode() == line
        assert hashed["hash"] == own


def test_a_streamed_trace_is_the_bytes_an_in_memory_one_saves(tmp_path: Path) -> None:
    events = [
        ("header", {"trace_version": 2, "note": "é \ud800", "t": 3.2e-05}),
        ("step", {"reads": [["s", "x", {"this": "<urn:a>"}, [{}]]], "hash_like": _PLACEHOLDER}),
        ("end", {"status": "completed"}),
    ]
    streamed = Trace(tmp_path / "streamed.jsonl")
    kept = Trace()
    for kind, fields in events:
        streamed.emit(kind, **fields)
        kept.emit(kind, **fields)
    streamed.close()
    kept.save(tmp_path / "kept.jsonl")
    written = (tmp_path / "streamed.jsonl").read_bytes()
    assert written == (tmp_path / "kept.jsonl").read_bytes()
    assert written.count(b"\n") == 3 and written.endswith(b"\n")
    assert [e["type"] for e in read_trace(tmp_path / "streamed.jsonl")] == [
        "header",
        "step",
        "end",
    ]


# a step event as the runner writes one (benchmarks/peers' refill workflow), with a float in
# the shortest form orjson writes and non-ASCII text
_STEP = {
    "instance": "urn:horismos:instance:ccfc467ef57f492ca36d5427b8aa5017",
    "step": "http://example.org/pharmacy#Notify",
    "kind": "ActionStep",
    "status": "completed",
    "args": [{"ref": '"D-1"', "rx": "<http://example.org/pharmacy#rx0>"}],
    "attempts": 1,
    "narrowed": [],
    "precondition": {"failing": None, "holds": True},
    "effects": [["<http://example.org/ph#rx0>", "<http://example.org/ph#by>", '"sms é"']],
    "gate": {"conforms": True, "messages": []},
    "error": None,
    "timings": {"arguments": 3.4e-05, "commit": 0.000253, "gate": 1e-7},
    "clock": ["2026-12-02T08:02:56.619400+00:00"],
    "ids": ["4793f7ebf061449583ee16cf995cb72a"],
    "outcomes": [{"returned": {"@map": {"notifiedBy": "sms", "n": 2**63 - 1, "x": -0.0}}}],
}


def _trace_of(path: Path, *steps: dict[str, Any]) -> list[str]:
    trace = Trace(path)
    trace.emit("header", trace_version=2)
    for fields in steps:
        trace.emit("step", **fields)
    trace.emit("end", status="completed")
    trace.close()
    return path.read_text(encoding="utf-8").splitlines()


def test_a_step_event_is_written_by_orjson_and_reads_back(tmp_path: Path) -> None:
    assert _quick_line({"type": "step", **_STEP, "hash": _PLACEHOLDER}) is not None
    lines = _trace_of(tmp_path / "t.jsonl", _STEP)
    assert '"arguments":0.000034' in lines[1]  # orjson's form of it, not the stdlib's 3.4e-05
    assert "é" in lines[1]  # UTF-8 text, as ensure_ascii=False wrote it
    (step,) = [e for e in read_trace(tmp_path / "t.jsonl") if e["type"] == "step"]
    assert _same(_STEP, {k: step[k] for k in _STEP})


def test_editing_any_character_of_an_orjson_line_is_refused(tmp_path: Path) -> None:
    lines = _trace_of(tmp_path / "t.jsonl", _STEP, _STEP)
    line = lines[1]
    edited = tmp_path / "edited.jsonl"
    tried = 0
    for i, ch in enumerate(line):
        if ch.isdigit():
            new = str((int(ch) + 1) % 10)
        elif ch.isalpha():
            new = "b" if ch == "a" else "a"
        else:
            continue
        edited.write_text("\n".join([lines[0], line[:i] + new + line[i + 1 :], *lines[2:]]) + "\n",
                          encoding="utf-8")
        with pytest.raises(TraceTampered) as refused:
            read_trace(edited)
        assert refused.value.line == 2, (i, line[max(0, i - 20) : i + 20])
        tried += 1
    assert tried > 500


class _Colour(enum.Enum):
    RED = 1


_Point = collections.namedtuple("_Point", "x y")


@pytest.mark.parametrize(
    "value",
    [
        math.nan,
        math.inf,
        -math.inf,
        {"wait": {"timeout": math.inf}},
        [1.0, math.nan],
        np.float64(1.5),  # a float subclass: a number to the stdlib, a string to orjson
        np.float64("nan"),
        _Colour.RED,  # its str to the stdlib, its value to orjson
        _Point(1, 2),  # a list to the stdlib, a string to orjson
        2**64,
        "\ud800",
        {1: "a"},
    ],
    ids=repr,
)
def test_a_value_orjson_would_write_otherwise_is_written_by_the_stdlib(value: Any) -> None:
    """Not null for a NaN, which replay would hand back as None: the stdlib's line, byte for
    byte as before orjson (a step event's members walked too, but its text and outcomes)."""
    for event in ({"type": "step", "proposal": value}, {"type": "header", "args": value}):
        line, own = _reference(event)
        hashed = dict(event)
        assert _hashed_line(hashed).decode() == line
        assert hashed["hash"] == own


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, np.float64("-inf")], ids=repr)
def test_a_float_that_is_not_finite_is_recorded_tagged_and_played_back_as_itself(
    value: float,
) -> None:
    tagged = encode({"score": value, "all": [value]})
    assert json.loads(json.dumps(tagged)) == tagged  # plain JSON: no NaN, no Infinity
    back = decode(json.loads(_hashed_line({"returned": tagged}))["returned"])
    for got in (back["score"], back["all"][0]):
        assert type(got) is float
        assert (math.isnan(got) and math.isnan(value)) or got == value


DEFS = """\
@prefix :      <http://example.org/clinic#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .
:Patient a owl:Class .
:t.score a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:effect [ horis:subject "patient" ;
                   horis:asserts [ horis:property :score ; horis:type xsd:double ] ] ;
    horis:binding "python:score" ; horis:idempotent true .
:Flow a horis:Workflow ; horis:focusType :Patient ; horis:start :Score .
:Score a horis:ActionStep ; horis:tool :t.score ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf], ids=repr)
def test_a_tool_returning_nan_or_infinity_replays_equal(tmp_path: Path, value: float) -> None:
    (tmp_path / "defs.ttl").write_text(DEFS, encoding="utf-8")
    (tmp_path / "world.ttl").write_text(
        "@prefix : <http://example.org/clinic#> .\n:p1 a :Patient .\n", encoding="utf-8"
    )
    agent = Agent.from_files(
        tmp_path / "defs.ttl", tools={"score": lambda patient: {"score": value}}
    )
    run = agent.run(World.from_files(tmp_path / "world.ttl"), all=True, trace=tmp_path / "t.jsonl")
    assert run.status == "completed", run.status
    (step,) = [e for e in read_trace(tmp_path / "t.jsonl") if e["type"] == "step"]
    assert "null" not in json.dumps(step["outcomes"])
    handed = decode(step["outcomes"][0]["returned"])["score"]
    assert (math.isnan(handed) and math.isnan(value)) or handed == value
    assert replay(tmp_path / "t.jsonl", agent).diverged is False
