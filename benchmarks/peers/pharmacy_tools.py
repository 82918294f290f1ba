"""The pharmacy's tools, shared by both engines in benchmarks/bench_peers.py: plain functions."""

from __future__ import annotations

import itertools
from typing import Any

_numbers = itertools.count(1)


def decide_refill(rx: Any, refills: int) -> dict[str, object]:
    """A refill is approved while refills are left."""
    return {"refillApproved": refills > 0}


def dispense(rx: Any) -> dict[str, object]:
    """The pharmacy system answers with a dispense reference."""
    return {"dispenseRef": f"D-{next(_numbers)}"}


def notify(rx: Any, ref: str) -> dict[str, object]:
    """The notifier confirms which channel it used."""
    return {"notifiedBy": "sms"}
