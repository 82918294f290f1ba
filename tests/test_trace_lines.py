"""Each trace line is the text the json.dumps of earlier releases wrote, byte for byte.

A line is serialised once with a placeholder hash and cut (horismos._trace._hashed_line);
these properties hold it to the reference: ``json.dumps`` with sorted keys, no spaces, UTF-8
text (ASCII escapes when a lone surrogate makes that impossible), ``default=str``, the event
hashed without its ``hash`` member and written with it."""

from __future__ import annotations

import hashlib
import json
import math
from decimal import Decimal
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from horismos._trace import _PLACEHOLDER, Trace, _hashed_line, read_trace


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
def test_a_line_is_the_reference_serialisation_with_its_hash(fields: dict[str, Any]) -> None:
    event = {k: v for k, v in fields.items() if k != "hash"}
    line, own = _reference(event)
    hashed = dict(event)
    assert _hashed_line(hashed) == line
    assert hashed == {**event, "hash": own}


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
        assert _hashed_line(hashed) == line
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
