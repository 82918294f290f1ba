"""A result's plain ``str``, ``int`` and ``bool`` values are judged by a short path (they are
most of what tools return); it must say exactly what the general path says of the same value.
A subclass of ``str`` or ``int`` takes the general path, so each value is held to itself."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from rdflib import XSD

from horismos._literals import _literal


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
