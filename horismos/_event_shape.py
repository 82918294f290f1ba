"""Trace events whose fields have the wrong shape: a :class:`~horismos.TraceError` that says
so, not the traceback of whatever reads them.

A trace's hash chain has no key (unless the trace is signed): whoever edits a trace can hash
it again, and every event then passes :func:`~horismos.iter_trace`. What reads the events —
the timeline, PROV-O, the viewer, a diagram's counts, a replay — takes their fields as the
runtime wrote them. :func:`check_shape` checks, as each event is read, the fields at the top
of it those readers take (a dict lookup and an ``isinstance`` a field: a large trace reads no
slower); :func:`reading` turns what slips past it — a value deeper in of the wrong kind — into
the same error, around the code that reads one event and nowhere else, so that the rest of a
command's errors stay its own.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from ._errors import TraceError

__all__ = ["check_shape", "reading"]

_Kinds = tuple[type, ...]

_TEXT: _Kinds = (str,)
_MAYBE_TEXT: _Kinds = (str, type(None))
_LIST: _Kinds = (list,)
_DICT: _Kinds = (dict,)
_INT: _Kinds = (int,)  # ``true`` is one (bool is an int), as the readers take it

_TEXT_MEMBERS = frozenset({"clock", "ids", "focus", "facts"})
"""Fields that are lists of text, their members checked too (a header's ``focus`` is a list;
an instance event's is one IRI)."""

_ANY_EVENT: dict[str, _Kinds] = {
    "clock": _LIST,
    "ids": _LIST,
    "reads": _LIST,
    "outcomes": _LIST,
    "code": _LIST,
}
"""Fields any event may carry: what the environment handed out for it."""

_SHAPES: dict[str, dict[str, _Kinds]] = {
    "header": {
        "workflow": _TEXT,
        "call": _TEXT,
        "focus": _LIST,
        "args": _DICT,
        "definitions_digest": _MAYBE_TEXT,
        "world_digest": _MAYBE_TEXT,
        "started": _TEXT,
        "policy": _DICT,
        "calls_in_doubt": _INT,
        "approvals_bound": _INT,
        "holds_settled": _INT,
        "snapshot": _DICT,
        "lent": _INT,
    },
    "instance": {
        "instance": _TEXT,
        "workflow": _TEXT,
        "focus": _TEXT,
        "continued_at": _INT,
        "step": _MAYBE_TEXT,
        "variables": _DICT,
        "status": _TEXT,
        "blocked_at": _TEXT,
    },
    "resume": {"instance": _TEXT, "step": _TEXT, "facts": _LIST, "operator": _TEXT},
    "step": {
        "instance": _TEXT,
        "step": _TEXT,
        "kind": _TEXT,
        "tool": _MAYBE_TEXT,
        "status": _TEXT,
        "args": _LIST,
        "next": _MAYBE_TEXT,
    },
    "taken_back": {"quads": _INT, "world_digest": _MAYBE_TEXT},
    "end": {"status": _TEXT, "instances": _DICT, "world_digest": _MAYBE_TEXT},
}
"""The fields each type of event is read by, and what each holds when it is there: of a step
event, the many of them, only those most readers take (the rest a reader's :func:`reading`
answers for), so a trace of a long run reads as fast as before."""

_WHAT: dict[type, str] = {list: "a list", dict: "an object"}


_ABSENT = object()
_CHECKS = {
    kind: tuple(
        (name, kinds, name in _TEXT_MEMBERS and kinds is _LIST)
        for name, kinds in {**_ANY_EVENT, **shape}.items()
    )
    for kind, shape in _SHAPES.items()
}
"""Each type's fields, their kinds, and whether their members are text, in one sequence."""


def check_shape(event: Mapping[str, Any], index: int, source: str, line: int) -> None:
    """Raise :class:`TraceError` when a field of ``event`` (the trace's event ``index``, at
    ``line`` of ``source``) that its readers take holds the wrong kind of value. A field that
    is not there is left to the reader that needs it: a :class:`~horismos.Trace` holds any
    events its writer emits, and only a replay needs, say, a header's ``workflow``."""
    kind = event.get("type")
    if not isinstance(kind, str) or kind not in _CHECKS:
        return  # a kind no reader takes apart (``refused``), shown by its type only
    for name, kinds, members_text in _CHECKS[kind]:
        value = event.get(name, _ABSENT)
        if value is _ABSENT or isinstance(value, kinds):
            if members_text and isinstance(value, list):
                odd = [v for v in value if type(v) is not str]
                if odd:
                    raise _malformed(
                        event, index, source, line, f"its {name!r} holds {_kind(odd[0])}"
                    )
            continue
        raise _malformed(event, index, source, line, f"its {name!r} is {_kind(value)}")


@contextmanager
def reading(
    event: Mapping[str, Any] | None, index: int, source: str, field: str | None = None
) -> Iterator[None]:
    """Around the code that reads ``event`` (the trace's event ``index``; its ``field`` when
    that code reads one): a value in it of a shape that code cannot take (a ``KeyError``,
    ``TypeError``, ``AttributeError``, ``ValueError`` or ``IndexError``) is a
    :class:`TraceError` naming the event."""
    try:
        yield
    except (KeyError, TypeError, AttributeError, ValueError, IndexError) as e:
        if isinstance(e, KeyError) and e.args and isinstance(e.args[0], str):
            why = f"it has no {e.args[0]!r}"
        elif field is not None:
            why = f"its {field!r} holds a value no run writes ({e})"
        else:
            why = f"a value in it is of a shape no run writes ({e})"
        raise _malformed(event or {}, index, source, None, why) from e


def _malformed(
    event: Mapping[str, Any], index: int, source: str, line: int | None, why: str
) -> TraceError:
    kind = event.get("type")
    what = f"{kind} event" if isinstance(kind, str) else "event"
    return TraceError(
        f"{source}: event {index} (line {line or index + 1}) is not a well-formed {what}: {why}; "
        "the trace was edited after it was written, or written by something other than "
        "Horismos"
    )


def _kind(value: object) -> str:
    """``value`` for a message: a short one as written, else what kind of value it is."""
    if value is None or isinstance(value, bool | int | float):
        return json.dumps(value)
    if isinstance(value, str):
        return json.dumps(value[:40] + ("…" if len(value) > 40 else ""), ensure_ascii=False)
    return _WHAT.get(type(value), f"a {type(value).__name__}")
