"""What traces say happened, counted per step and per edge: the overlay of a workflow diagram.

Why a module of its own: the diagram is drawn from the definitions alone, and the viewer's
instance table from one trace alone; the counts join them (how many instances took each edge,
where they blocked, failed or wait) and are read from any number of traces, so they are kept
apart from both. An instance's last step in a trace says how it stands there:
:func:`instance_status` is that rule, shared with the viewer's table.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ENDED", "RunCounts", "count_runs", "instance_status"]

ENDED = ("blocked", "failed", "waiting")
"""The ways an instance stops short of completing that a diagram shows at a step."""


def instance_status(last_step: Mapping[str, Any] | None) -> str:
    """How an instance stands after ``last_step`` (its last step event in a trace):
    completed, blocked, waiting, failed, or running (it goes on past where the trace ends)."""
    if last_step is None:
        return "running"
    status = last_step.get("status")
    if status in ("waiting", "blocked"):
        return str(status)
    if last_step.get("next"):
        return "running"
    return "completed" if status == "completed" else "failed"


@dataclass(frozen=True)
class RunCounts:
    """Counts read from traces, keyed by step IRI (and ``(step, next)`` for edges)."""

    traces: int = 0
    instances: int = 0
    started: Counter[str] = field(default_factory=Counter)
    """Instances started per workflow IRI (the edge from the workflow to its start)."""
    visits: Counter[str] = field(default_factory=Counter)
    """Step events per step."""
    statuses: dict[str, Counter[str]] = field(default_factory=dict)
    """Per step, its step events per step status (completed, rejected, timed_out…)."""
    ended: dict[str, Counter[str]] = field(default_factory=dict)
    """Per step, how many instances stopped there per :data:`ENDED` status."""
    edges: Counter[tuple[str, str]] = field(default_factory=Counter)
    """Times an instance went from a step to the next one."""


def count_runs(traces: Iterable[Iterable[Mapping[str, Any]]]) -> RunCounts:
    """Count the events of each trace (each an iterable of events, as read_trace gives)."""
    counts = RunCounts()
    n = 0
    instances: set[str] = set()
    for events in traces:
        n += 1
        last: dict[str, Mapping[str, Any]] = {}
        for e in events:
            kind = e.get("type")
            if kind == "instance":
                instances.add(str(e.get("instance")))
                if "continued_at" not in e:
                    counts.started[str(e.get("workflow"))] += 1
            elif kind == "step":
                step = str(e.get("step"))
                last[str(e.get("instance"))] = e
                counts.visits[step] += 1
                counts.statuses.setdefault(step, Counter())[str(e.get("status"))] += 1
                if e.get("next"):
                    counts.edges[(step, str(e["next"]))] += 1
        for e in last.values():
            status = instance_status(e)
            if status in ENDED:
                counts.ended.setdefault(str(e.get("step")), Counter())[status] += 1
    return RunCounts(
        n,
        len(instances),
        counts.started,
        counts.visits,
        counts.statuses,
        counts.ended,
        counts.edges,
    )
