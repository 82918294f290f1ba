"""What a run returns: one :class:`StepRecord` a step, grouped per instance, with the trace."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Literal

from rdflib import URIRef
from rdflib.term import Node

from ._errors import RunError, ShaclMessage, UsageError
from ._trace import Trace

__all__ = ["InstanceRun", "Run", "Status", "StepRecord"]

Status = Literal["completed", "waiting", "blocked", "failed", "running"]
"""Where an instance stands. ``running`` only for one answered as it stands, not driven
(``again=False``): another run drives it now (of this process, or of another holding its
claim on a shared world); one whose process stopped (or whose ``arun`` was cancelled)
mid-step is continued instead. A run that drives an instance ends it in one of the other
four."""
StepStatus = Literal[
    "completed", "blocked", "failed", "rejected", "timed_out", "waiting", "partial"
]


@dataclass
class StepRecord:
    """One step of one instance, as the runtime saw it."""

    step: URIRef
    kind: str
    status: StepStatus
    instance: URIRef
    tool: URIRef | None = None
    args: list[dict[str, Any]] = field(default_factory=list)
    result: list[Any] = field(default_factory=list)
    effects: list[tuple[Node, Node, Node]] = field(default_factory=list)
    graph: URIRef | None = None
    messages: tuple[ShaclMessage, ...] = ()
    error: RunError | None = None
    blocked_by: str | None = None
    next: URIRef | None = None
    attempts: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    brief: str | None = None
    """The brief a wait with ``horis:delivery horis:Final`` published for the operator."""
    receipts: list[dict[str, Any]] = field(default_factory=list)
    """An adapter-bound step's remote outcome per effect: ``ref``, ``method``, ``outcome``
    (accepted, conflicted, failed, unknown), ``status``, ``expected_version``, ``version``,
    ``location``, ``message``, ``call``."""
    detail: dict[str, Any] = field(default_factory=dict)
    """Kind-specific trace fields: ``proposal`` (candidates, dropped, ranking, choice) or
    ``wait`` (reason, wake, until, timeout, start)."""
    started: dt.datetime | None = None
    """When an action or proposal step began, as the clock handed it out: a step that blocks
    its instance blocked it then (``horis:blockedAt``), with no second reading of the clock."""


@dataclass
class InstanceRun:
    """One workflow instance: its focus node, where it ended and why."""

    instance: URIRef
    workflow: URIRef
    focus: URIRef
    status: Status = "completed"
    current: URIRef | None = None
    steps: list[StepRecord] = field(default_factory=list)
    error: RunError | None = None
    blocked_by: str | None = None
    variables: dict[str, Node] = field(default_factory=dict)
    """``this`` and every ``horis:as`` choice made so far; persisted with the instance."""
    brief: str | None = None


@dataclass
class Run:
    """The outcome of :meth:`Agent.run`: its instances, how many ended in each status, and the
    trace of all of them. A run with ``keep=False`` keeps ``counts`` and no instances."""

    instances: list[InstanceRun]
    trace: Trace
    counts: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.counts:
            for inst in self.instances:
                self.counts[inst.status] = self.counts.get(inst.status, 0) + 1

    @property
    def status(self) -> Status:
        """The instance's status; for several, the worst of them (failed > blocked > waiting >
        running). An instance found running (``again=False``: another run drives it) was said
        "completed"."""
        order: list[Status] = ["failed", "blocked", "waiting", "running", "completed"]
        return next((s for s in order if self.counts.get(s)), "completed")

    @property
    def instance(self) -> URIRef:
        """The instance's IRI (for ``agent.resume``); with several (``all=True``) the first,
        ``instances`` has each. A run that holds none — ``keep=False`` keeps none, and
        ``all=True`` may find no focus node to run — raises UsageError saying where to read
        them: it raised a bare ``IndexError``."""
        if not self.instances:
            ran = sum(self.counts.values())
            raise UsageError(
                f"this run holds no instance: it ran {ran} and kept none (keep=False), so read "
                "each one as it ends with on_instance=, or run with keep=True"
                if ran
                else "this run ran no instance: with all=True no focus node was left to run "
                "(a node with a finished instance of the workflow is left out; give focus= to "
                "run one again)"
            )
        return self.instances[0].instance

    @property
    def steps(self) -> list[StepRecord]:
        """One record a step, each instance's in turn: ``.step``, ``.tool``, ``.args`` (one
        mapping of argument to N-Triples text per call), ``.status``, ``.effects`` (the
        triples that landed), ``.error``."""
        return [s for i in self.instances for s in i.steps]

    @property
    def error(self) -> RunError | None:
        """The first instance's error that has one (a typed `RunError`), else None."""
        return next((i.error for i in self.instances if i.error is not None), None)

    @property
    def blocked_by(self) -> str | None:
        """The pattern that blocked the first blocked instance, else None."""
        return next((i.blocked_by for i in self.instances if i.blocked_by), None)

    @property
    def brief(self) -> str | None:
        """The operator brief of the first waiting instance that published one."""
        return next((i.brief for i in self.instances if i.status == "waiting" and i.brief), None)
