"""Timeouts as authors write them (``"5s"``, ``"PT5S"``), read into seconds.

One reader for every ``horis:timeout`` and wait, with a hint that names the form meant when
a unit is written another way (``"14d"``, ``"2 weeks"``)."""

from __future__ import annotations

import re
from datetime import timedelta

from rdflib.term import Node

__all__ = ["DEFAULT_TIMEOUT", "MAX_TIMEOUT", "TimeoutTooLong", "parse_timeout", "timeout_problem"]


DEFAULT_TIMEOUT = 30.0


_TIMEOUT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)\s*$")


# an xsd:duration of days and time: a month or a year has no fixed length in seconds
_DURATION = re.compile(
    r"^P(?:(\d+(?:\.\d+)?)D)?(?:T(?=\d)(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?"
    r"(?:(\d+(?:\.\d+)?)S)?)?$"
)


_TIMEOUT_HINT = (
    'write "250ms", "5s", "2m", "1h" or an xsd:duration of days and time such as "PT5S" or '
    '"P1DT2H" (no years or months: they have no fixed length)'
)


MAX_TIMEOUT = timedelta.max.days * 86400.0
"""The longest timeout, ~2.7 million years: what a clock (a ``timedelta``) can count to."""


class TimeoutTooLong(ValueError):
    """A timeout longer than :data:`MAX_TIMEOUT`: a length of time, but none a clock can
    count to, so it is told apart from text that is no length of time at all."""


def parse_timeout(value: Node) -> float:
    """Seconds, more than zero, from ``"250ms"``, ``"5s"``, ``"2m"``, ``"1h"`` or an
    ``xsd:duration`` of days and time (``"PT5S"``, ``"P1DT2H"``); ValueError otherwise,
    :class:`TimeoutTooLong` when it is above :data:`MAX_TIMEOUT`."""
    text = str(value).strip()
    m = _TIMEOUT.match(text)
    if m:
        seconds = float(m.group(1)) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[m.group(2)]
    elif (d := _DURATION.match(text)) is not None and text not in ("P", "PT"):
        days, hours, minutes, secs = (float(g) if g else 0.0 for g in d.groups())
        seconds = days * 86400 + hours * 3600 + minutes * 60 + secs  # a timedelta overflows
    else:
        raise ValueError(text)
    if seconds <= 0:
        raise ValueError(text)
    if seconds > MAX_TIMEOUT:
        raise TimeoutTooLong(text)
    return seconds


def timeout_problem(node: Node, e: ValueError) -> tuple[str, str]:
    """What a horis:timeout that :func:`parse_timeout` refused is, as (message, hint)."""
    if isinstance(e, TimeoutTooLong):
        return (
            f'horis:timeout "{node}" is longer than any clock counts '
            f"(at most {timedelta.max.days:,} days), so it cannot be waited for",
            'write the time it should take, e.g. "30s", "2h" or "P7D"',
        )
    return f'horis:timeout "{node}" is not a length of time above zero', (
        _timeout_meant(str(node)) or _TIMEOUT_HINT
    )


_UNIT_SLIPS = re.compile(
    r"^\s*(\d+(?:\.\d+)?)\s*(?:(d|days?)|(w|wks?|weeks?)|(secs?|seconds?)|(mins?|minutes?)"
    r"|(hrs?|hours?)|(msecs?|milliseconds?)|(ms|s|m|h))?\s*$",
    re.IGNORECASE,
)


_ISO_WEEKS = re.compile(r"^P(\d+)W$")
_DAYS_AFTER_T = re.compile(r"^PT(\d+)D((?:\d+(?:\.\d+)?[HMS])*)$")
"""Days written after the ``T`` (``"PT21D"``, ``"PT1D2H"``): the T starts the times."""
_COMPOUND = re.compile(r"(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+(?:\.\d+)?)s)?")
"""Hours, minutes and seconds written together, ``"1h30m"``: one xsd:duration."""


def _days_duration(count: float) -> str:
    """``count`` days as an xsd:duration: ``"P3D"``, or for a fraction of a day the hours,
    minutes and seconds it is (``"P3DT12H"`` for 3.5): XSD allows a fraction only in the
    seconds, so ``"P3.5D"`` is no duration."""
    whole = int(count)
    rest = round((count - whole) * 86400, 3)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    times = "".join(f"{v:g}{u}" for v, u in ((hours, "H"), (minutes, "M"), (seconds, "S")) if v)
    if not whole and times:
        return f"PT{times}"
    return f"P{whole}D" + (f"T{times}" if times else "")


def _timeout_meant(text: str) -> str | None:
    """What to write for a timeout with a unit the parser does not take, when it is plain:
    ``"14d"`` (``"P14D"``), ``"2 weeks"`` or ISO's ``"P2W"`` (``"P14D"``), ``"30"`` or
    ``"30sec"`` (``"30s"``), ``"10 minutes"`` (``"10m"``). The general hint listed the
    forms, leaving the modeler to work out a day is an xsd:duration."""
    weeks = _ISO_WEEKS.match(text.strip())
    if weeks is not None:
        return f'write "P{int(weeks[1]) * 7}D": an xsd:duration counts days, not weeks'
    late = _DAYS_AFTER_T.match(text.strip())
    if late is not None:  # "PT21D": days written among the times
        rest = late[2] or ""
        return (
            f'write "P{late[1]}D{"T" + rest if rest else ""}": in an xsd:duration the days '
            "come before the T, the hours, minutes and seconds after it"
        )
    parts = _COMPOUND.fullmatch(text.strip().lower())
    if (
        parts is not None
        and sum(1 for p in parts.groups() if p) > 1  # "1h30m", "2m30s"
        and any(float(p) for p in parts.groups() if p)  # "0h0m" is no time at all
    ):
        h, m, s = parts.groups()
        return (
            'write "PT'
            + "".join(f"{v}{u}" for v, u in ((h, "H"), (m, "M"), (s, "S")) if v)
            + '" (an xsd:duration): a short form names one unit'
        )
    m = _UNIT_SLIPS.match(text)
    if m is None:
        return None
    n, days, weeks_, secs, mins, hours, millis, plain = m.groups()
    if float(n) == 0:
        return None
    if plain:  # "5S": the units are written in lower case
        return f'write "{n}{plain.lower()}"'
    if days or weeks_:
        count = float(n) * (7 if weeks_ else 1)
        shown = f"{count:g}"
        return f'write "{_days_duration(count)}" (an xsd:duration of {shown} days)'
    unit = "ms" if millis else "m" if mins else "h" if hours else "s"
    if not (secs or mins or hours or millis):  # a bare number
        return f'write "{n}s" for {n} seconds: a timeout names its unit (ms, s, m, h)'
    return f'write "{n}{unit}"'
