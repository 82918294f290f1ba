"""The public surface is what ``horismos/__init__.py`` names; a change to it is deliberate."""

from __future__ import annotations

import horismos

PUBLIC = [
    "HORIS", "Adapter", "Agent", "ArgumentTypeError", "AuthoringError", "BrokerError",
    "CallInFlight", "CallResult", "Catalog", "Conflict", "Definitions", "Digest", "Discovery",
    "Divergence", "GateRejected", "HorismosError", "Hydrated", "InstanceFailed", "InstanceRun",
    "LeaseLost", "LowDisk", "NotSent", "OutcomeUnknown", "OutputQuotaExceeded", "PartialCommit",
    "PolicyRefused", "PreconditionError", "Problem", "ProgramMissing", "RemoteConflict",
    "ReplayReport", "ResultTooLarge", "Run", "RunError", "ScopeRefused", "ShaclMessage",
    "ShapesBrokenAlready",
    "StepBudgetExceeded", "StepRecord", "StoreError", "ToolEntry", "ToolError", "ToolTimeout",
    "Trace", "TraceError", "TraceTampered", "TraceVersionError", "Unreachable", "UnreadableAnswer",
    "UsageError",
    "World",
    "__version__", "check_inventory", "iter_trace", "load_definitions", "read_trace", "replay",
    "submit", "wait_for_instances",
]


def test_the_public_names_are_exactly_these():
    assert horismos.__all__ == PUBLIC


def test_every_public_name_is_importable_and_errors_share_one_root():
    for name in PUBLIC:
        obj = getattr(horismos, name)
        if isinstance(obj, type) and issubclass(obj, Exception):
            assert issubclass(obj, horismos.HorismosError), name


def test_the_command_line_starts_without_what_only_some_commands_use():
    """Every ``horismos`` command imports the CLI first: pydantic (the inventory's models)
    and httpx (HTTP bindings, model ranking, FHIR adapters) are imported where they are used,
    not by the ~0.1 s they added to every start; numpy (~0.06 s) when a digest is first
    summed, which validate, graph and trace show never do; networkx (~0.12 s) not at all, the
    load's graph walks are horismos/_digraph.py."""
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", "import sys, horismos._cli; print(*sorted(sys.modules))"],
        capture_output=True, text=True, check=True,
    ).stdout.split()
    assert "horismos._cli" in out
    assert not {"pydantic", "httpx", "networkx", "numpy"} & set(out)


def test_a_name_that_is_not_a_string_is_a_usage_error_saying_what_to_give():
    """``agent.run(world, focus=42)`` ended in ``AttributeError: 'int' object has no attribute
    'strip'``, from deep inside; it says what a name is."""
    from pathlib import Path

    import pytest

    root = Path(__file__).resolve().parent.parent
    agent = horismos.Agent.from_files(root / "workflows" / "triage.ttl",
                                      root / "ontologies" / "ehr.ttl",
                                      tools={"ehr_client.assign_queue": dict,
                                             "ehr_client.notify_nurse": dict})
    world = horismos.World.from_files(root / "examples" / "triage" / "world.ttl")
    before = world.digest()
    for given in ({"focus": 42}, {"workflow": 42, "focus": ":patient42"}, {"focus": [":p"]}):
        with pytest.raises(horismos.UsageError, match="is not a name: give a string"):
            agent.run(world, **given)
    assert world.digest() == before
