"""Tool-call outcomes as trace JSON, and back, so replay hands the runner what the tool did.

A trace step's ``outcomes`` lists one entry per attempt, in order:

- ``{"returned": VALUE}`` — the raw result, its Python types kept (an ``rdflib`` term,
  a ``datetime`` or a ``Decimal`` reads back as itself, not as its string; a NaN or an
  infinity as itself, not as ``null``; a mapping keeps the ``narrowed`` fields its binding
  dropped and a command's ``capture`` evidence, as :class:`RecordedResult`);
- ``{"timeout": true}`` — the call did not answer within ``horis:timeout``;
- ``{"error": TYPE, "message": TEXT}`` — the call raised; ``"tool_error": true`` when it
  raised a :class:`~horismos.ToolError` itself.

A failed call's entry also says how far it got (:mod:`._attempt`): ``"sent": false`` when the
request never left, ``"answered": false`` when it left and no answer came back; absent, it
was sent and answered. Replay restores the marks, so it retries exactly as the live run did.

:func:`play` turns an entry back into the same return value or exception, so the runner words
errors exactly as it did live.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from rdflib import BNode, Literal, URIRef
from rdflib.util import from_n3

from . import _attempt
from ._errors import (
    LowDisk,
    NotSent,
    OutcomeUnknown,
    OutputQuotaExceeded,
    ResultTooLarge,
    ToolError,
    ToolTimeout,
    Unreachable,
    UnreadableAnswer,
    Unstartable,
)

__all__ = ["Expired", "RecordedResult", "decode", "encode", "message_of", "outcome_of", "play"]

_SCALARS = (str, bool, int, float, type(None))


class RecordedResult(dict[str, Any]):
    """A mapping result read back from a trace, with the fields its binding ``narrowed`` away
    (an MCP tool's output beyond the declared effect), as the runner traces them."""

    narrowed: tuple[str, ...] = ()
    capture: dict[str, Any] | None = None


def encode(value: Any) -> Any:
    """``value`` as JSON, tagged where JSON alone would lose its Python type."""
    kind = type(value)  # the exact JSON types first: most results are a dict of them
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        return value if math.isfinite(value) else _non_finite(value)
    if kind is dict:  # a plain dict has neither "narrowed" nor "capture"
        return {"@map": {str(k): encode(v) for k, v in value.items()}}
    if isinstance(value, URIRef | BNode | Literal):
        return {"@term": value.n3()}
    if isinstance(value, float) and not math.isfinite(value):  # a numpy float, say
        return _non_finite(value)
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, Mapping):
        out: dict[str, Any] = {"@map": {str(k): encode(v) for k, v in value.items()}}
        if getattr(value, "narrowed", ()):
            out["@narrowed"] = list(value.narrowed)  # type: ignore[attr-defined]
        if getattr(value, "capture", None):  # a command's output evidence (_bindings.command)
            out["@capture"] = value.capture  # type: ignore[attr-defined]
        return out
    if isinstance(value, list | tuple | set | frozenset):
        return [encode(v) for v in value]
    if isinstance(value, dt.datetime):
        return {"@datetime": value.isoformat()}
    if isinstance(value, dt.date):
        return {"@date": value.isoformat()}
    if isinstance(value, dt.time):
        return {"@time": value.isoformat()}
    if isinstance(value, Decimal):
        return {"@decimal": str(value)}
    return {"@repr": str(value)}


def _non_finite(value: float) -> dict[str, str]:
    """A NaN or an infinity, tagged: JSON has no literal for them (the stdlib writes ``NaN``,
    which is not JSON; orjson, which writes the trace, ``null``), and replay must hand the
    tool's value back as it was."""
    return {"@float": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}


def decode(data: Any) -> Any:
    """The value :func:`encode` wrote (``@repr`` values come back as their string)."""
    if isinstance(data, list):
        return [decode(v) for v in data]
    if not isinstance(data, dict):
        return data
    if "@map" in data:
        result = RecordedResult((k, decode(x)) for k, x in data["@map"].items())
        result.narrowed = tuple(data.get("@narrowed", ()))
        result.capture = data.get("@capture")
        return result
    ((tag, v),) = data.items()
    if tag == "@term":
        return from_n3(v)
    if tag == "@datetime":
        return dt.datetime.fromisoformat(v)
    if tag == "@date":
        return dt.date.fromisoformat(v)
    if tag == "@time":
        return dt.time.fromisoformat(v)
    if tag == "@decimal":
        return Decimal(v)
    if tag == "@float":
        return float(v)
    return v


class Expired(TimeoutError):
    """A recorded timeout, raised again on replay: the call's deadline ran out (the runner
    tells it from a ``TimeoutError`` the tool raised itself)."""


def message_of(exc: BaseException) -> str:
    """``str(exc)``, or what is known of it when its ``__str__`` raises: that raised within
    the runner's handling of the tool's error, and was reported as what the tool raised (a
    ``ValueError`` of its ``__str__``), its outcome left out of the trace, so replay
    diverged on a run that went as recorded."""
    try:
        return str(exc)
    except Exception as e:
        return f"(its message could not be read: {type(e).__name__} in its __str__)"


def outcome_of(exc: BaseException, *, own_timeouts: bool = False) -> dict[str, Any]:
    """The trace entry for a call that raised ``exc`` (cancelled: its timeout ran out).
    ``own_timeouts``: a ``TimeoutError`` is the tool's own (the runner's deadline reaches a
    tool's call as a cancellation), recorded as what it raised."""
    entry: dict[str, Any]
    if isinstance(exc, asyncio.CancelledError) or (
        isinstance(exc, TimeoutError) and not own_timeouts
    ):
        entry = {"timeout": True}
    else:
        entry = {"error": type(exc).__name__, "message": message_of(exc)}
        if isinstance(exc, ToolError):
            entry["tool_error"] = True
        if isinstance(exc, ResultTooLarge):
            entry["limit"] = exc.limit
        elif isinstance(exc, OutputQuotaExceeded):
            entry["emitted"], entry["quota"] = exc.emitted, exc.quota
        elif isinstance(exc, LowDisk):
            entry["free"], entry["waterline"] = exc.free, exc.waterline
    attempt = _attempt.current()
    if isinstance(exc, NotSent) or (attempt is not None and not attempt.sent):
        entry["sent"] = False
    elif attempt is not None and not attempt.answered:
        entry["answered"] = False
    return entry


def play(entry: Mapping[str, Any]) -> Any:
    """Return the recorded result, or raise what the call raised (a timeout, at once)."""
    if "returned" in entry:
        return decode(entry["returned"])
    attempt = _attempt.current()
    if attempt is not None:  # how far the call got, as the live run saw it
        attempt.sent = entry.get("sent", True)
        attempt.answered = attempt.sent and entry.get("answered", True)
    if entry.get("timeout"):
        raise Expired
    message = str(entry.get("message", ""))
    if entry.get("tool_error"):
        # the classes whose kind decides what the runner does next (retry, hold in doubt)
        error = entry.get("error")
        if error == "ResultTooLarge":
            raise ResultTooLarge(message, limit=int(entry.get("limit", 0)))
        if error == "OutputQuotaExceeded":
            raise OutputQuotaExceeded(
                message, emitted=int(entry.get("emitted", 0)), quota=int(entry.get("quota", 0))
            )
        if error == "LowDisk":  # not retried, as a NotSent would be
            raise LowDisk(
                message, free=int(entry.get("free", 0)), waterline=int(entry.get("waterline", 0))
            )
        # and the classes a caller catches (Unreachable: down for now, try later), so the
        # replayed step fails as the live one did, of the class its trace event names; a
        # class not named here (an older runtime's, a newer one's) is a plain ToolError
        kind = {
            "ToolTimeout": ToolTimeout,
            "NotSent": NotSent,
            "Unreachable": Unreachable,
            "Unstartable": Unstartable,
            "OutcomeUnknown": OutcomeUnknown,
            "UnreadableAnswer": UnreadableAnswer,
        }.get(str(error), ToolError)
        raise kind(message)
    # An exception of the recorded type's name, so the runner words it as it did live.
    raise type(str(entry.get("error", "Exception")), (Exception,), {})(message)
