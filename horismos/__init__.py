"""Horismos: ontology-driven workflows whose tools fire behind a SHACL effect gate.

Domain modelers declare tools and workflows in Turtle; :class:`Agent` runs them against a
:class:`World`, every step traced.
"""

from __future__ import annotations

from ._agent import Agent
from ._call import CallResult
from ._catalog import ToolEntry, check_inventory
from ._definitions import Definitions, load_definitions
from ._digest import Digest
from ._discovery import Discovery
from ._errors import (
    ArgumentTypeError,
    AuthoringError,
    Divergence,
    GateRejected,
    HorismosError,
    InstanceFailed,
    LeaseLost,
    LowDisk,
    NotSent,
    OutcomeUnknown,
    OutputQuotaExceeded,
    PolicyRefused,
    PreconditionError,
    Problem,
    ProgramMissing,
    ResultTooLarge,
    RunError,
    ShaclMessage,
    StepBudgetExceeded,
    ToolError,
    ToolTimeout,
    TraceError,
    TraceTampered,
    TraceVersionError,
    UsageError,
)
from ._records import InstanceRun, Run, StepRecord
from ._replay import ReplayReport, replay
from ._stores import Conflict, StoreError
from ._surfaces import Catalog
from ._trace import Trace, read_trace
from ._vocab import HORIS
from ._world import World

__version__ = "0.1.0"

__all__ = [
    "HORIS",
    "Agent",
    "ArgumentTypeError",
    "AuthoringError",
    "CallResult",
    "Catalog",
    "Conflict",
    "Definitions",
    "Digest",
    "Discovery",
    "Divergence",
    "GateRejected",
    "HorismosError",
    "InstanceFailed",
    "InstanceRun",
    "LeaseLost",
    "LowDisk",
    "NotSent",
    "OutcomeUnknown",
    "OutputQuotaExceeded",
    "PolicyRefused",
    "PreconditionError",
    "Problem",
    "ProgramMissing",
    "ReplayReport",
    "ResultTooLarge",
    "Run",
    "RunError",
    "ShaclMessage",
    "StepBudgetExceeded",
    "StepRecord",
    "StoreError",
    "ToolEntry",
    "ToolError",
    "ToolTimeout",
    "Trace",
    "TraceError",
    "TraceTampered",
    "TraceVersionError",
    "UsageError",
    "World",
    "__version__",
    "check_inventory",
    "load_definitions",
    "read_trace",
    "replay",
]
