"""A step's timestamps as ``xsd:dateTime`` literals, built from the value the clock handed out.

Every step writes two (its activity's start and end) and every step event notes the clock's
values as text. ``Literal(value)`` would serialise the value a second time and walk rdflib's
general constructor (~7 µs) to arrive at the literal this module builds directly from the
text the clock already wrote: the same lexical form, datatype and value, so the world, its
digest and the trace are unchanged (``tests/test_step_terms.py`` holds it to ``Literal``).
"""

from __future__ import annotations

import datetime as dt

from rdflib import XSD, Literal

from ._stores.oxigraph import _literal_term

__all__ = ["stamp"]

_DATETIME = XSD.dateTime


def datetime_term(value: dt.datetime, text: str) -> Literal:
    """``Literal(value)``, given ``text``, the ``value.isoformat()`` already written: what
    rdflib's constructor sets for a ``datetime``, set directly. Any other type (a subclass,
    say) goes through rdflib."""
    if type(value) is not dt.datetime:
        return Literal(value)
    literal = str.__new__(Literal, text)
    literal._language = None
    literal._datatype = _DATETIME
    literal._value = value
    literal._ill_typed = None
    return literal


def stamp(value: dt.datetime, text: str) -> Literal:
    """``value`` as the literal a commit writes, known to the commit path as one Oxigraph
    keeps as it is (what ``_stores.oxigraph.datetime_literal`` does, without its rdflib
    constructor)."""
    literal = datetime_term(value, text)
    if type(value) is dt.datetime:  # kept as is: its text is its isoformat(), by construction
        _literal_term(literal, literal)
    return literal
