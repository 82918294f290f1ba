"""A step's timestamps as ``xsd:dateTime`` literals, built from the value the clock handed out.

Every step writes two (its activity's start and end) and every step event notes the clock's
values as text. ``Literal(value)`` would serialise the value a second time and walk rdflib's
general constructor (~7 µs) to arrive at the literal this module builds directly from the
text the clock already wrote: the same lexical form, datatype and value, so the world, its
digest and the trace are unchanged (``tests/test_step_terms.py`` holds it to ``Literal``).
It sets the attributes rdflib's constructor sets (``_language``, ``_datatype``, ``_value``,
``_ill_typed``): rdflib is bounded below 8 in pyproject.toml for that reason among others.
"""

from __future__ import annotations

import datetime as dt

from rdflib import XSD, Literal

__all__ = ["datetime_term"]

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
