"""Horismos: ontology-driven workflows whose tools fire behind a SHACL effect gate.

Domain modelers declare tools and workflows in Turtle; :class:`Agent` runs them against a
:class:`World`, every step traced.
"""

from __future__ import annotations

from . import _quiet_start  # first: a Ctrl-C while the rest imports is one line

try:
    from . import _negative_durations  # noqa: F401  first: rdflib then writes "-P1Y1D"
    from ._agent import Agent
    from ._call import CallError, CallResult
    from ._catalog import ToolEntry, check_inventory
    from ._claims import NotHeld
    from ._definitions import Definitions, load_definitions
    from ._digest import Digest
    from ._discovery import Discovery
    from ._environment import Environment
    from ._errors import (
        AmbiguousName,
        ArgumentTypeError,
        AuthoringError,
        BrokerError,
        CallInFlight,
        Divergence,
        GateRejected,
        HorismosError,
        InstanceFailed,
        LeaseLost,
        LowDisk,
        NotSent,
        OutcomeUnknown,
        OutputQuotaExceeded,
        PartialCommit,
        PolicyRefused,
        PreconditionError,
        Problem,
        ProgramMissing,
        RemoteConflict,
        ResultTooLarge,
        RunError,
        ScopeRefused,
        ShaclMessage,
        ShapesBrokenAlready,
        StepBudgetExceeded,
        ToolError,
        ToolTimeout,
        TraceError,
        TraceExists,
        TraceTampered,
        TraceVersionError,
        Unreachable,
        UnreadableAnswer,
        Unstartable,
        UsageError,
    )
    from ._hydrate import Hydrated
    from ._instances import InstanceSummary
    from ._intents import Intent
    from ._model import (
        Adapter,
        Arg,
        Assertion,
        Command,
        Effect,
        Header,
        McpServer,
        Step,
        Tool,
        Workflow,
    )
    from ._preconditions import Pattern, Precondition
    from ._queue import submit, wait_for_instances
    from ._records import InstanceRun, Run, StepRecord
    from ._replay import ReplayReport, replay
    from ._stores import Change, Conflict, Store, StoreError
    from ._surfaces import Catalog
    from ._trace import Trace, iter_trace, read_trace
    from ._vocab import HORIS
    from ._world import World
except KeyboardInterrupt:
    raise  # left to the command line's hook, which says so in one line
except BaseException:
    _quiet_start.started()  # an import failed: whoever imported keeps their own hook
    raise
_quiet_start.started()

__version__ = "0.1.0"

__all__ = [
    "HORIS",
    "Adapter",
    "Agent",
    "AmbiguousName",
    "Arg",
    "ArgumentTypeError",
    "Assertion",
    "AuthoringError",
    "BrokerError",
    "CallError",
    "CallInFlight",
    "CallResult",
    "Catalog",
    "Change",
    "Command",
    "Conflict",
    "Definitions",
    "Digest",
    "Discovery",
    "Divergence",
    "Effect",
    "Environment",
    "GateRejected",
    "Header",
    "HorismosError",
    "Hydrated",
    "InstanceFailed",
    "InstanceRun",
    "InstanceSummary",
    "Intent",
    "LeaseLost",
    "LowDisk",
    "McpServer",
    "NotHeld",
    "NotSent",
    "OutcomeUnknown",
    "OutputQuotaExceeded",
    "PartialCommit",
    "Pattern",
    "PolicyRefused",
    "Precondition",
    "PreconditionError",
    "Problem",
    "ProgramMissing",
    "RemoteConflict",
    "ReplayReport",
    "ResultTooLarge",
    "Run",
    "RunError",
    "ScopeRefused",
    "ShaclMessage",
    "ShapesBrokenAlready",
    "Step",
    "StepBudgetExceeded",
    "StepRecord",
    "Store",
    "StoreError",
    "Tool",
    "ToolEntry",
    "ToolError",
    "ToolTimeout",
    "Trace",
    "TraceError",
    "TraceExists",
    "TraceTampered",
    "TraceVersionError",
    "Unreachable",
    "UnreadableAnswer",
    "Unstartable",
    "UsageError",
    "Workflow",
    "World",
    "__version__",
    "check_inventory",
    "iter_trace",
    "load_definitions",
    "read_trace",
    "replay",
    "submit",
    "wait_for_instances",
]
