"""Every error Horismos raises, with structured fields as well as a message.

HorismosError
├── AuthoringError          the Turtle definitions are wrong (carries ``problems``)
├── UsageError              an API or CLI call asks for something that cannot be
│   ├── AmbiguousName           a CURIE means more than one IRI in the loaded files
│   ├── NotHeld                 another live run drives the focus now: ask again (_claims)
│   ├── TraceExists             a trace file given to write holds a trace already
│   └── ProgramMissing          a program a command needs (Graphviz's dot) is not installed
├── StoreError              the store cannot be reached or refused a request (_stores)
├── Conflict                another writer moved the instance first; nothing landed
├── LeaseLost               a worker's lease ran out; it commits nothing more
├── BrokerError             the task broker (horismos submit / worker) cannot be reached
├── RunError                a step could not complete; the world is unchanged
│   ├── PreconditionError       the graph does not give exactly what the step needs
│   ├── ArgumentTypeError       a graph value does not have the argument's declared type
│   ├── ToolError               the tool raised, or its binding failed
│   │   ├── ToolTimeout             the tool did not answer in its ``horis:timeout``
│   │   ├── ResultTooLarge          the result is past the tool's ``horis:maxResultBytes``
│   │   ├── UnreadableAnswer        it answered as succeeding, with no result Horismos reads
│   │   ├── NotSent                 the call never reached the tool: safe to retry
│   │   │   ├── LowDisk                 a command's capture folder is under its waterline
│   │   │   ├── Unreachable             its endpoint (HTTP, MCP server) is down for now
│   │   │   └── Unstartable             its MCP server is declared so it cannot start
│   │   ├── OutputQuotaExceeded     a command emitted more than its quota; its group killed
│   │   ├── OutcomeUnknown          a non-idempotent call was sent and no answer landed
│   │   └── RemoteConflict          the system of record changed since it was hydrated
│   ├── GateRejected            the result breaks the declared effect or a domain shape
│   ├── ShapesBrokenAlready     the subject breaks a domain shape no result can mend: not called
│   ├── PolicyRefused           the tool's side-effect class is outside the policy
│   ├── CallInFlight            another step is calling the tool on the same subject
│   ├── ScopeRefused            a commit outside the adapter's granted scopes; nothing sent
│   ├── PartialCommit           some effects of an adapter commit were accepted, some not
│   ├── StepBudgetExceeded      an instance ran its ``horis:maxSteps``: a loop that never ends
│   └── InstanceFailed          an error with no ``horis:onError`` ended the instance
└── TraceError              a trace cannot be trusted or read
    ├── TraceTampered           the hash chain breaks
    ├── TraceVersionError       a ``trace_version`` this runtime does not read
    └── Divergence              replay did not do what the trace recorded
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "AmbiguousName",
    "ArgumentTypeError",
    "AuthoringError",
    "BrokerError",
    "CallInFlight",
    "Divergence",
    "GateRejected",
    "HorismosError",
    "InstanceFailed",
    "LeaseLost",
    "LowDisk",
    "NotSent",
    "OutcomeUnknown",
    "OutputQuotaExceeded",
    "PartialCommit",
    "PolicyRefused",
    "PreconditionError",
    "Problem",
    "ProgramMissing",
    "RemoteConflict",
    "ResultTooLarge",
    "RunError",
    "ScopeRefused",
    "ShaclMessage",
    "ShapesBrokenAlready",
    "StepBudgetExceeded",
    "ToolError",
    "ToolTimeout",
    "TraceError",
    "TraceTampered",
    "TraceVersionError",
    "Unreachable",
    "UnreadableAnswer",
    "UsageError",
]


class HorismosError(Exception):
    """Base of every error Horismos raises on purpose."""

    def __reduce__(self) -> tuple[Any, ...]:
        # rebuilt from its message and its fields, never by calling __init__ again: an error
        # whose fields are keyword-only (GateRejected's messages=) could not be pickled (a
        # process pool's result, a task queue) nor copied (copy.deepcopy(run)): "missing 1
        # required keyword-only argument"
        return (_rebuilt, (type(self), self.args), dict(self.__dict__))


def _rebuilt(cls: type[HorismosError], args: tuple[Any, ...]) -> HorismosError:
    """An error of ``cls`` with ``args``, its fields to be set from its pickled state."""
    return cls.__new__(cls, *args)


@dataclass(frozen=True)
class Problem:
    """One authoring finding, located as precisely as the sources allow."""

    severity: Literal["error", "warning"]
    message: str
    node: str | None = None
    file: str | None = None
    line: int | None = None
    hint: str | None = None

    def __str__(self) -> str:
        where = self.file or "<graph>"
        if self.line is not None:
            where += f":{self.line}"
        text = f"{where}: {self.severity}: "
        if self.node:
            text += f"{self.node}: "
        text += self.message
        if self.hint:
            text += f" — {self.hint}"
        return text


class AuthoringError(HorismosError):
    """The definitions cannot be run; ``problems`` says where and what to write instead.

    ``definitions`` is the :class:`Definitions` the loader made of them before it gave up
    (None when a file could not be read at all): only checked further, so that ``validate``
    reports the later checks' findings in the same pass; an :class:`~horismos.Agent` built
    from it raises this error again, so it is never run."""

    def __init__(self, problems: Sequence[Problem], definitions: Any = None) -> None:
        self.problems = tuple(problems)
        self.definitions = definitions
        errors = [p for p in self.problems if p.severity == "error"]
        head = f"{len(errors)} authoring error(s)"
        super().__init__(head + ":\n" + "\n".join(f"  {p}" for p in errors))


class UsageError(HorismosError):
    """A call names something that does not exist or combines options that cannot go together."""


class AmbiguousName(UsageError, KeyError):
    """A CURIE whose prefix the loaded files bind to several namespaces, with a node in more
    than one of them (or in none: ``held`` is False when the world was asked and holds none,
    so the name is misspelt); ``candidates`` are the full IRIs it could mean. Also a
    :class:`KeyError`, as every name that does not resolve to one IRI is."""

    def __init__(self, name: str, candidates: Sequence[str], *, held: bool = True) -> None:
        self.name = name
        self.candidates = tuple(candidates)
        self.held = held
        """False when the world was asked and holds none of them: a misspelt name."""
        listed = ", ".join(f"<{c}>" for c in self.candidates)
        super().__init__(
            f"{name} is ambiguous: the loaded files bind its prefix to several "
            f"namespaces, so it could mean {listed}; write the full IRI in <…>"
            if held
            else f"{name} is no node of the world: the loaded files bind its prefix to "
            f"several namespaces, and the world holds none of {listed}: check its spelling, "
            "and that the world it is in is given"
        )

    def __str__(self) -> str:
        return str(self.args[0])


class NotAnIRI(UsageError, KeyError):
    """A name written as an IRI (``<…>``, ``scheme://…``, ``urn:…``, or a CURIE's local part)
    that no IRI can be: ``why`` says what it holds. Also a :class:`KeyError`, as every name
    that does not resolve to one IRI is; found before rdflib is asked to make a term of it,
    which logs a warning and makes one no store can hold."""

    def __init__(self, name: str, why: str) -> None:
        self.name = name
        self.why = why
        super().__init__(f"{name!r} is not an IRI: {why}")

    def __str__(self) -> str:
        return str(self.args[0])


class TraceExists(UsageError):
    """A trace file given to write holds a trace already (an earlier run's, perhaps the only
    record of an incident): a trace is never written over unless asked to
    (``Trace(path, overwrite=True)``, ``trace.save(path, overwrite=True)``). ``path``: the
    file."""

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path


class ProgramMissing(UsageError):
    """A program a command runs is not installed; ``package`` is what to install."""

    def __init__(self, message: str, *, program: str, package: str) -> None:
        super().__init__(message)
        self.program = program
        self.package = package


@dataclass(frozen=True)
class ShaclMessage:
    """One SHACL validation result, kept in the run and the trace."""

    focus: str
    path: str | None
    message: str
    shape: str | None = None
    value: str | None = None

    def __str__(self) -> str:
        path = f" {self.path}" if self.path else ""
        return f"{self.focus}{path}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        """The message's fields that are set, as in a trace's gate verdict."""
        return {k: v for k, v in self.__dict__.items() if v is not None}


class LeaseLost(HorismosError):
    """This worker's lease ran out and other workers took its claims; it commits nothing more."""


class BrokerError(HorismosError):
    """The task broker cannot be reached, so nothing was enqueued past the count given."""


class RunError(HorismosError):
    """A step could not complete. Nothing it would have written has landed.

    ``step`` and ``tool``: the full IRIs (as text) of the step and of the tool it called, when
    there is one; ``kind``: the class's short name (``tool_error``, ``timeout``,
    ``gate_rejected``…), as a trace, ``horismos instances`` and a call's envelope name it. The
    instance and its focus are those of the :class:`~horismos.InstanceRun` whose ``error`` it
    is (``run.instances``); the message says what to change. A tool's own exception is its
    ``__cause__``."""

    kind = "error"

    def __init__(self, message: str, *, step: str | None = None, tool: str | None = None) -> None:
        super().__init__(message)
        self.step = step
        self.tool = tool


class PreconditionError(RunError):
    """The graph gives no binding, or several where the step takes one (no ``horis:forEach``)."""

    kind = "precondition"


class ArgumentTypeError(RunError):
    """A graph value is not of the argument's declared type; the tool is not called."""

    kind = "argument_type"

    def __init__(self, message: str, *, arg: str, value: str, expected: str, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.arg = arg
        self.value = value
        self.expected = expected


class ToolError(RunError):
    """The tool raised, returned something unusable, or its binding could not be reached.
    ``unanswered``: the call's last try never reached the tool, or reached it and no answer
    came back (a timeout, a lost connection): what it did is not known here."""

    kind = "tool_error"
    unanswered = False


class ToolTimeout(ToolError):
    """The tool did not answer within its ``horis:timeout``; a late answer is discarded.
    ``sent``: False when the call never left (an HTTP or MCP tool's connection still being
    made when the timeout ran out): it did not act."""

    kind = "timeout"
    sent = True


class NotSent(ToolError):
    """The call never reached the tool — its MCP server did not start, the connection was
    refused, the binding could not be resolved — so it cannot have acted, and a retry is safe
    even for a tool that is not idempotent. Bindings raise it for failures before sending."""

    kind = "not_sent"


class LowDisk(NotSent):
    """A command binding's capture folder has less free space than its ``horis:minFreeBytes``
    waterline: the command was not started."""

    kind = "low_disk"
    terminal = True  # not retried: the disk will not have emptied a moment later

    def __init__(self, message: str, *, free: int, waterline: int, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.free, self.waterline = free, waterline


class Unreachable(NotSent):
    """The endpoint a binding names is down for now: an HTTP binding's connection refused or
    never made, an MCP server's HTTP connection refused or dropped, or no handshake in time.
    Nothing was sent, and nothing about the call or its policy is wrong — a later try may
    reach it. A server declared so it cannot start (:class:`Unstartable`), or a TLS
    certificate refused (a plain :class:`NotSent`), is not: trying later gets the same answer.
    ``wake`` leaves an instance so refused before its first step waiting for its next pass,
    where one the policy refuses (a host outside the allowed hosts, a schema that does not
    fit) is blocked. A step whose call is so refused and that declares no ``horis:onError``
    blocks its instance there, rather than failing it: ``resume`` (or ``run --focus``) tries
    the step again once the endpoint answers."""


class Unstartable(NotSent):
    """The MCP server a binding names is declared so it cannot start: no such program or
    module, a stdio process that exits before its handshake, an environment variable its
    declaration reads unset. Nothing was sent, and trying later gets the same answer: its
    ``horis:command``, ``horis:args``, ``horis:url`` or environment is to mend, so ``run``
    and ``validate --connect`` say it at that line. Its own class, where ``run`` told it
    from a server that is down by the words of its message."""


class OutputQuotaExceeded(ToolError):
    """A command emitted more bytes (stdout and stderr together) than its ``horis:quotaBytes``:
    its whole process group was killed, and the call is a terminal failure."""

    kind = "output_quota"
    terminal = True  # not retried, even for an idempotent tool with horis:retries
    may_have_acted = True  # the command ran until it was killed

    def __init__(self, message: str, *, emitted: int, quota: int, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.emitted, self.quota = emitted, quota


class ResultTooLarge(ToolError):
    """The result is larger than the tool's ``horis:maxResultBytes`` (as JSON; default 1 MiB);
    it was refused as it arrived, and nothing of it landed or was traced."""

    kind = "result_too_large"
    may_have_acted = True  # the tool answered: it did what it does, and its result was refused

    def __init__(self, message: str, *, limit: int, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.limit = limit


class UnreadableAnswer(ToolError):
    """The tool answered as one that succeeded (a command's exit status 0, an HTTP 2xx, an
    MCP result that is not an error) with something that is not a result Horismos can read:
    prose, a JSON array, more output than is kept. It did what it does, and nothing of it
    landed, so a tool that is not idempotent is held in doubt, as for a result refused too
    large; a tool that *answers* an error (exit status 1, HTTP 500) says it did not act."""

    kind = "unreadable_answer"
    may_have_acted = True


class OutcomeUnknown(ToolError):
    """A non-idempotent tool was called and no answer landed: it timed out, the connection
    was lost, or the process stopped before its result was committed. It is not called again,
    so an operator must find out whether it acted. ``cause`` is the failure seen, if any;
    ``running``, for a call that goes on in a thread of this process (a sync Python tool
    abandoned at its timeout), is set when that thread returns."""

    kind = "outcome_unknown"

    def __init__(
        self,
        message: str,
        *,
        cause: RunError | None = None,
        running: threading.Event | None = None,
        **kw: Any,
    ) -> None:
        super().__init__(message, **kw)
        self.cause = cause
        self.running = running

    def __reduce__(self) -> tuple[Any, ...]:
        rebuild, args, state = super().__reduce__()
        return rebuild, args, {**state, "running": None}  # a thread of this process: not carried


class RemoteConflict(ToolError):
    """A conditional commit met a newer version than the world's projection was hydrated at:
    the system of record answered ``412``/``409``, or the adapter saw the mismatch before
    sending. Nothing of it landed; re-hydrate, then decide again. ``resources`` are the
    ``Type/id`` of the effects that conflicted."""

    kind = "remote_conflict"

    def __init__(self, message: str, *, resources: Sequence[str] = (), **kw: Any) -> None:
        super().__init__(message, **kw)
        self.resources = tuple(resources)


class GateRejected(RunError):
    """The tool's result breaks its declared effect or a domain shape; nothing landed."""

    kind = "gate_rejected"

    def __init__(self, message: str, *, messages: Sequence[ShaclMessage], **kw: Any) -> None:
        super().__init__(message, **kw)
        self.messages = tuple(messages)


class ShapesBrokenAlready(RunError):
    """The subject of a call to a tool that is not idempotent breaks a domain shape already,
    in a way no result can mend (a value its pattern refuses, one value too many: a result
    only adds values), so the tool is not called: the gate would reject whatever it returned,
    after it had acted. The step blocks its instance; correct the world's data and run again.
    ``broken`` are the shapes' results on the subject as it is (each value in the message)."""

    kind = "broken_already"

    def __init__(self, message: str, *, broken: Sequence[ShaclMessage], **kw: Any) -> None:
        super().__init__(message, **kw)
        self.broken = tuple(broken)


class PolicyRefused(RunError):
    """The tool's side-effect class is not among those the run or call allows (``--allow``,
    ``allow=``); it is not called. A step that needs it blocks its instance."""

    kind = "policy"

    def __init__(
        self, message: str, *, side_effect: str, allowed: Sequence[str], **kw: Any
    ) -> None:
        super().__init__(message, **kw)
        self.side_effect = side_effect
        self.allowed = tuple(allowed)


class CallInFlight(RunError):
    """Another instance's step is calling this tool, which is not idempotent, on the same
    subject (or its process stopped mid-call): the tool is not called. The step blocks its
    instance; run again once that call has landed, its preconditions are checked anew.
    ``holder`` is that instance."""

    kind = "in_flight"

    def __init__(self, message: str, *, holder: str, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.holder = holder


class ScopeRefused(RunError):
    """An adapter-bound tool would commit outside the scopes granted: refused before anything
    was sent. ``missing`` is the scope that would allow it, ``granted`` what is granted."""

    kind = "scope"

    def __init__(self, message: str, *, missing: str, granted: Sequence[str], **kw: Any) -> None:
        super().__init__(message, **kw)
        self.missing = missing
        self.granted = tuple(granted)


class PartialCommit(RunError):
    """An adapter commit of several effects (a ``horis:forEach`` step, a batch Bundle) was
    accepted for some and not for others; the accepted ones landed. ``accepted`` and
    ``others`` (``(Type/id, outcome)``) name them; nothing is claimed atomic across systems."""

    kind = "partial"

    def __init__(
        self, message: str, *, accepted: Sequence[str], others: Sequence[tuple[str, str]], **kw: Any
    ) -> None:
        super().__init__(message, **kw)
        self.accepted = tuple(accepted)
        self.others = tuple(others)


class StepBudgetExceeded(RunError):
    """An instance ran the steps its workflow allows (``horis:maxSteps``) and is failed, not
    driven on; ``cycle`` names the steps it kept going round, ``max_steps`` the budget."""

    kind = "step_budget"

    def __init__(self, message: str, *, cycle: Sequence[str], max_steps: int, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.cycle = tuple(cycle)
        self.max_steps = max_steps


class InstanceFailed(RunError):
    """A step failed and declared no ``horis:onError``; the instance is failed."""

    kind = "failed"

    def __init__(self, message: str, *, cause: RunError, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.cause = cause


def stored_failure(kind: str | None, message: str) -> InstanceFailed:
    """A failed instance's error as the world keeps it (``horis:error``, ``horis:errorKind``)
    and a run answers it read back (``again=False``): an :class:`InstanceFailed` whose
    ``cause`` is of the class the kind names, with the stored words. It was a plain
    ``RunError(text)``, and a handler could tell a call held in doubt (``OutcomeUnknown``,
    ``tools reconcile``) from a tool that raised only by parsing them. The cause carries its
    class and message, not the fields a live run's has besides (``messages``, ``holder``…);
    an instance stored before kinds were (no kind) reads back a plain ``RunError``."""
    cls = _of_kind().get(kind or "", RunError)
    cause = cls.__new__(cls, message)  # its fields are not kept: not built by its __init__
    cause.step = cause.tool = None
    return InstanceFailed(message, cause=cause)


def _of_kind() -> dict[str, type[RunError]]:
    """Each ``RunError`` subclass by the ``kind`` it declares itself (a subclass that declares
    none, ``Unreachable``, is its parent's kind and is not told apart from it)."""
    found: dict[str, type[RunError]] = {}
    todo: list[type[RunError]] = [RunError]
    while todo:
        cls = todo.pop()
        if "kind" in cls.__dict__:
            found.setdefault(cls.kind, cls)
        todo.extend(cls.__subclasses__())
    return found


class TraceError(HorismosError):
    """A trace cannot be read or trusted."""


class TraceTampered(TraceError):
    """An event's ``prev`` hash does not match the event before it."""

    def __init__(self, message: str, *, line: int) -> None:
        super().__init__(message)
        self.line = line


class TraceVersionError(TraceError):
    """The trace was written in a ``trace_version`` this runtime does not read."""


class Divergence(TraceError):
    """Replay did something other than what the trace recorded."""

    def __init__(self, message: str, *, event: int, field: str, recorded: Any, now: Any) -> None:
        super().__init__(message)
        self.event = event
        self.field = field
        self.recorded = recorded
        self.now = now
