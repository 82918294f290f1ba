"""Short paths a step takes for the common case, each held to the general path it stands for.

- A result's plain ``str``, ``int`` and ``bool`` values are judged by a short path (they are
  most of what tools return); it must say exactly what the general path says of the same
  value. A subclass of ``str`` or ``int`` takes the general path, so each value is held to
  itself.
- A result's size (the cap) and its recorded form (the trace's ``outcomes``) take the exact
  JSON types first; a value of subclasses of the same types takes the general path, and must
  measure and record the same.
- A step event's effects are written as rdflib's ``n3()`` writes them, an IRI without rdflib's
  character-by-character check: the same text, and the same refusal of an IRI it cannot write.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from rdflib import XSD, BNode, Literal, URIRef

from horismos._bindings.limits import json_size
from horismos._literals import _literal
from horismos._outcomes import encode
from horismos._step_records import n3


class _Str(str):
    __slots__ = ()


class _Int(int):
    pass


_DATATYPES = st.sampled_from(
    [None, XSD.string, XSD.decimal, XSD.double, XSD.float, XSD.integer, XSD.boolean]
)
# decimal-looking text, control characters and surrogates are where the checks differ
_TEXT = st.one_of(
    st.text(),
    st.from_regex(r"\s*[+-]?(\d+(\.\d*)?|\.\d+)?\s*", fullmatch=True),
    st.text(alphabet=st.sampled_from(["a", "1", ".", "\x00", "\x0b", "\ud800", "\ufffe"])),
)


@given(_TEXT, _DATATYPES)
def test_a_plain_string_is_judged_as_the_general_path_judges_it(text, datatype):
    assert _literal(text, datatype)[0] == _literal(_Str(text), datatype)[0]


@given(st.integers(), _DATATYPES)
def test_an_integer_is_judged_as_the_general_path_judges_it(n, datatype):
    assert _literal(n, datatype) == (None, n)
    assert _literal(_Int(n), datatype)[0] is None


@given(st.booleans(), _DATATYPES)
def test_a_boolean_always_fits(b, datatype):
    assert _literal(b, datatype) == (None, b)


def _written(term):
    try:
        return term.n3()
    except Exception as e:  # rdflib refuses an IRI it cannot write
        return type(e)


def _ours(term):
    try:
        return n3(term)
    except Exception as e:
        return type(e)


_IRI_TEXT = st.text(alphabet=st.sampled_from(list('ab:/#é <>"{}|\\^`\n\t')))


@given(_IRI_TEXT)
def test_an_iri_is_written_as_rdflib_writes_it(text):
    assert _ours(URIRef(text)) == _written(URIRef(text))


@given(
    st.one_of(
        st.builds(Literal, st.text()),
        st.builds(Literal, st.integers()),
        st.builds(lambda t: Literal(t, lang="en"), st.text()),
        st.builds(BNode),
    )
)
def test_other_terms_are_written_by_rdflib(term):
    assert _ours(term) == _written(term)


class _Dict(dict):
    pass


class _Float(float):
    pass


def _general(value):
    """``value`` with every container and scalar a subclass: the general path's input."""
    if isinstance(value, dict):
        return _Dict((k, _general(v)) for k, v in value.items())
    if isinstance(value, list):
        return [_general(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return _Int(value)
    if isinstance(value, float):
        return _Float(value)
    return _Str(value)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(_JSON, st.integers(min_value=0, max_value=200))
def test_a_results_size_is_measured_as_the_general_path_measures_it(value, limit):
    assert json_size(value, limit) == json_size(_general(value), limit)


@given(_JSON)
def test_a_result_is_recorded_as_the_general_path_records_it(value):
    assert encode(value) == encode(_general(value))
