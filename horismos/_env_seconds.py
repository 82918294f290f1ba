"""A number of seconds read from an environment variable, or a usage error saying what to
write.

Why a module of its own: the settings an operator gives as ``HORISMOS_…`` seconds (a
worker's lease, how long opening a store waits for another process) are read when they are
needed, not at import, and a mistyped or out-of-range value must be a :class:`UsageError`
that names the variable, the range and what it does — never a traceback before the command
has started, and never NaN taken for a number.
"""

from __future__ import annotations

import math
import os

from ._errors import UsageError

__all__ = ["seconds_from_env"]


def seconds_from_env(name: str, default: float, bounds: tuple[float, float], does: str) -> float:
    """``name``'s value in seconds (``default`` when unset), between ``bounds``; ``does``:
    what the setting does, said when the value is refused."""
    text = os.environ.get(name, f"{default:g}")
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (bounds[0] <= value <= bounds[1]):  # NaN too
        raise UsageError(
            f"{name} is {text!r}: give a number of seconds from {bounds[0]:g} to "
            f"{bounds[1]:,.0f} (default {default:g}), {does}"
        )
    return value
