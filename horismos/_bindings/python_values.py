"""A Python tool's returned values, as they return, in the form a trace records them and the
gate maps them: what a replay hands back is then what the live run judged and landed.

Why: a trace writes a value of a type JSON does not know, and that
:func:`~horismos._outcomes.encode` tags none for, as its ``str()`` (``{"@repr": …}``), which a
replay hands back as that string. A ``uuid.UUID``, a ``pathlib`` path, an ``ipaddress``
address or a plain ``enum.Enum`` member was refused by the gate live ("not a value RDF can
hold") and landed as text on replay; a ``datetime.timedelta`` landed live as an
``xsd:duration`` and was refused on replay; an ``(str, Enum)`` member landed live as its
``str()`` (``"Kind.RUSH"``) while the trace recorded its value (``"rush"``). Each replay
diverged from a run that went as recorded. Normalised here, before the value is judged or
recorded, live and replay see the same value; the trace's format is unchanged.

What each becomes:

- an ``enum.Enum`` member: its value (itself normalised) — what the trace recorded already
  for one mixed with ``str`` or ``int``;
- a ``uuid.UUID``, a ``pathlib`` path, an ``ipaddress`` address, network or interface: its
  ``str()``, the text the trace recorded;
- a ``datetime.timedelta`` or an ``xsd:duration`` value: the ``xsd:duration`` literal the
  gate landed live;
- an integer or a float of another type (``numpy.int64``, ``numpy.float64``): the ``int``
  or the ``float``. ``numpy.float64``'s ``repr`` (``np.float64(2.5)``) made the gate's
  ``xsd:decimal`` of it raise ``decimal.InvalidOperation``: a traceback, the run unended.

Any other object is left as it is: the gate refuses it, naming its type, which the trace does
not record (telling it on replay would take a new tag in the trace format).
"""

from __future__ import annotations

import enum
import ipaddress
import numbers
import uuid
from collections.abc import Mapping
from datetime import timedelta
from pathlib import PurePath
from typing import Any

from rdflib import Literal
from rdflib.xsd_datetime import Duration

__all__ = ["as_recorded"]

_PLAIN = frozenset({str, int, bool, float, type(None)})
"""Exact types kept as they are, told first: most results hold nothing else."""

_AS_TEXT = (
    uuid.UUID,
    PurePath,
    ipaddress.IPv4Address,
    ipaddress.IPv6Address,
    ipaddress.IPv4Network,
    ipaddress.IPv6Network,
    ipaddress.IPv4Interface,
    ipaddress.IPv6Interface,
)


def as_recorded(value: Any) -> Any:
    """``value`` with each value of the kinds above normalised, in a mapping's values, a
    list's, a tuple's or a set's, at any depth; ``value`` itself (not a copy) when none is."""
    if type(value) in _PLAIN:
        return value
    if type(value) is dict:  # a tool's usual answer: a dict of plain values, looked over once
        plain = _PLAIN
        for v in value.values():
            if type(v) not in plain:
                return _normalised(value)
        return value
    return _normalised(value)


def _normalised(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return as_recorded(value.value)
    if isinstance(value, _AS_TEXT):
        return str(value)
    if isinstance(value, timedelta | Duration):
        return Literal(value)
    if isinstance(value, numbers.Integral) and not isinstance(value, int):
        return int(value)
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Rational):
        return float(value)  # a float of its own type (numpy's), whose repr is not a float's
    if isinstance(value, Mapping):
        items = {k: as_recorded(v) for k, v in value.items()}
        return value if all(items[k] is v for k, v in value.items()) else items
    if isinstance(value, list | tuple | set | frozenset):
        listed = list(value)
        found = [as_recorded(v) for v in listed]
        # changed, as the trace records it (a list); else itself, its type kept
        return value if all(a is b for a, b in zip(found, listed, strict=True)) else found
    return value
