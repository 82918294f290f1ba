"""Which process ran a run: its host, its pid and, from the command line, its lane.

A trace and the world said what ran, never where: two processes given the same event (a
broker's redelivery, two ``serve`` processes, a wrapper's retry beside the first attempt)
each left a trace, and "which of the two delivered it twice?" had no answer. A run's trace
header and the instance it starts record it once (not a step at a time: a step's event and
commit stay as they were). The pid is asked when a run starts, never kept from import: a
process forked after ``import horismos`` (a worker pool, the tests' zygote) is another pid.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rdflib import Literal, URIRef

from ._vocab import HORIS

__all__ = ["RanBy", "in_lane", "ran_by", "recorded_ran_by", "started_by_terms", "started_by_text"]

_lane: str | None = None


@contextmanager
def in_lane(lane: str) -> Iterator[None]:
    """Name the lane this process runs in (``run``, ``serve``, ``worker``, ``tools call``…)
    while the command line runs its command; the Python API names none, and a command run
    in-process (a test, a caller of ``main``) leaves none named after it."""
    global _lane
    before, _lane = _lane, lane
    try:
        yield
    finally:
        _lane = before


RanBy = dict[str, Any]
"""``{"host": …, "pid": …}``, with ``"lane"`` when one is named: a trace header's members."""


def ran_by() -> RanBy:
    """This process, now: its host name, its pid and its lane when named."""
    said: RanBy = {"host": socket.gethostname(), "pid": os.getpid()}
    if _lane is not None:
        said["lane"] = _lane
    return said


def recorded_ran_by(header: dict[str, Any]) -> RanBy | None:
    """What a trace's ``header`` recorded of its process, for its replay to write again
    (None for one recorded before it was: the instances it started stored nothing of it)."""
    said: RanBy = {k: header[k] for k in ("host", "pid", "lane") if k in header}
    return said or None


def started_by_terms(said: RanBy | None) -> list[tuple[URIRef, Literal]]:
    """What an instance's record says of the process that started it: ``horis:startedBy``
    and its ``lane@host:pid``, built once a run, each instance's first commit adding it under
    its IRI. One quad, not one a member: three cost a run --all ~4% more CPU a step, and the
    trace's header keeps host, pid and lane apart for whoever needs them so."""
    if not said:
        return []
    text = started_by_text(said.get("host"), said.get("pid"), said.get("lane"))
    return [(HORIS.startedBy, Literal(text))] if text else []


def started_by_text(host: object, pid: object, lane: object) -> str | None:
    """``lane@host:pid`` (``host:pid`` with no lane), as ``instances`` lists it; None when the
    instance recorded none (started before this was recorded)."""
    if host is None and pid is None:
        return None
    said = f"{host if host is not None else '?'}:{pid if pid is not None else '?'}"
    return f"{lane}@{said}" if lane else said
