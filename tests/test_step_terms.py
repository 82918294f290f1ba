"""The runner's shortcuts for a step's terms, held to what rdflib and uuid give.

A step's timestamps are built from the text the clock noted (``_stamps``), its arguments and
effects are written in N3 without rdflib where nothing needs escaping (``_step_records.n3``), and
its ids are drawn without a ``uuid.UUID`` object: same literals, same text, same format — so
the world, its digest and the trace bytes are what the general path gives.
"""

from __future__ import annotations

import datetime as dt
import os
import uuid
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rdflib import RDF, XSD, Literal, URIRef

from horismos._environment import Environment
from horismos._literals import plain_literal
from horismos._stamps import datetime_term
from horismos._step_records import _IRI_TEXT, _IRI_TEXTS, n3
from horismos._stores.ox_terms import _TERMS, datetime_literal

_ZONES = st.sampled_from(
    [
        None,
        dt.UTC,
        dt.timezone(dt.timedelta(hours=5, minutes=30)),
        dt.timezone(-dt.timedelta(hours=3)),
    ]
)
_TIMES = st.builds(
    lambda d, tz: d.replace(tzinfo=tz),
    st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31)),
    _ZONES,
)


def _same_literal(a: Literal, b: Literal) -> None:
    assert type(a) is type(b) is Literal
    assert str.__str__(a) == str.__str__(b)
    assert (a.value, a.datatype, a.language, a.ill_typed) == (
        b.value,
        b.datatype,
        b.language,
        b.ill_typed,
    )
    assert a == b and hash(a) == hash(b) and a.eq(b)
    assert a.n3() == b.n3() and repr(a) == repr(b)


@settings(max_examples=300)
@given(st.text() | st.booleans())
def test_a_plain_value_is_the_literal_rdflib_builds_from_it(value: str | bool) -> None:
    """A tool's text or flag, as the gate makes it a literal: rdflib's own literal."""
    _same_literal(plain_literal(value), Literal(value))


@settings(max_examples=300)
@given(_TIMES)
def test_a_stamp_is_the_literal_rdflib_builds_from_the_time(value: dt.datetime) -> None:
    _same_literal(datetime_term(value, value.isoformat()), Literal(value))
    _same_literal(datetime_literal(value, value.isoformat()), datetime_literal(value))
    _same_literal(datetime_literal(value), Literal(value))


def test_a_stamp_of_a_datetime_subclass_goes_through_rdflib() -> None:
    class Later(dt.datetime):
        pass

    value = Later(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    _same_literal(datetime_term(value, "ignored"), Literal(value))


def test_the_clock_hands_its_noted_text_to_the_stamp_of_the_same_time() -> None:
    env = Environment()
    value = env.now()
    assert env.text(value) == value.isoformat() == env.handed()["clock"][0]
    other = value + dt.timedelta(seconds=1)  # a time it did not hand out: written anew
    assert env.text(other) == other.isoformat()


def test_stamps_of_steps_that_never_commit_to_oxigraph_are_not_kept_for_good() -> None:
    """A run on the memory or sparql: store, or a replay, stamps each step and never commits
    through Oxigraph's conversion cache: a service running for days kept every stamp."""
    before = len(_TERMS.now) + len(_TERMS.before)
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    for i in range(10 * _TERMS.size):
        datetime_literal(start + dt.timedelta(microseconds=i))
    assert len(_TERMS.now) + len(_TERMS.before) <= max(before, 2 * _TERMS.size + 2)


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)
_DATATYPES = st.sampled_from(
    [
        None,
        XSD.string,
        XSD.integer,
        XSD.boolean,
        XSD.dateTime,
        XSD.decimal,
        XSD.double,
        XSD.float,
        URIRef("http://example.org/dt#custom"),
        RDF.langString,
    ]
)
_LITERALS = st.one_of(
    st.builds(lambda t, d: Literal(t, datatype=d), _TEXT, _DATATYPES),
    st.builds(lambda t: Literal(t, lang="en-GB"), _TEXT),
    st.builds(Literal, st.integers()),
    st.builds(Literal, st.booleans()),
    st.builds(Literal, st.floats()),
    st.builds(Literal, st.decimals()),
    st.builds(Literal, _TIMES),
)
_IRIS = st.builds(lambda t: URIRef("http://example.org/" + t), _TEXT)


@settings(max_examples=600)
@given(st.one_of(_LITERALS, _IRIS))
def test_a_terms_n3_is_rdflibs(term: Any) -> None:
    try:
        expected = term.n3()
    except Exception as e:  # an IRI rdflib refuses: refused the same way
        try:
            n3(term)
        except Exception as mine:
            assert type(mine) is type(e)
            return
        raise AssertionError(f"{term!r}: rdflib refuses it, n3 does not") from None
    assert n3(term) == expected
    # asked again, and for an equal IRI made anew: an IRI's text is kept (_IRI_TEXT)
    assert n3(term) == expected
    if isinstance(term, URIRef):
        assert n3(URIRef(str(term))) == expected


def test_the_iri_texts_kept_stay_few() -> None:
    """A run over many subjects writes each one's text a few times: the texts kept start
    over when full, so memory stays flat, and a text kept before is written alike after."""
    first = URIRef("http://example.org/kept")
    assert n3(first) == "<http://example.org/kept>"
    for i in range(_IRI_TEXTS + 10):
        assert n3(URIRef(f"http://example.org/s{i}")) == f"<http://example.org/s{i}>"
    assert len(_IRI_TEXT) <= _IRI_TEXTS
    assert n3(first) == "<http://example.org/kept>"


def test_n3_of_the_values_that_need_rdflib() -> None:
    for term in (
        Literal('say "hi"'),
        Literal("two\nlines"),
        Literal("back\\slash"),
        Literal(float("inf")),
        Literal(float("nan")),
        Literal(Decimal("1.5")),
        Literal("", lang="en"),
        Literal(""),
    ):
        assert n3(term) == term.n3()


def test_an_id_has_the_form_of_a_uuid4s_hex() -> None:
    ids = [Environment().new_id() for _ in range(2000)]
    assert len(set(ids)) == len(ids)
    for text in ids:
        parsed = uuid.UUID(hex=text)
        assert parsed.hex == text and len(text) == 32
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122


@given(st.binary(min_size=16, max_size=16))
def test_an_id_is_what_uuid4_makes_of_the_same_random_bytes(raw: bytes) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "urandom", lambda n: raw)
        assert Environment().new_id() == uuid.UUID(bytes=raw, version=4).hex
