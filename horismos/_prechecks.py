"""What a run checks of its definitions before the first step, worked out once per agent.

Before any step fires, a run refuses definitions in which nothing binds a tool's required
argument, resolves the binding of every tool its workflow can reach and lets each refuse
(:meth:`~horismos._runner.Runner.check_bindings`). Three of those answers depend only on what
the agent was made with, so they are worked out on its first run and kept, as the gate's
compiled shapes are: the unbound arguments and the tools a workflow reaches (functions of the
loaded definitions), and whether a Python function's parameters fit the arguments its tool
declares (``inspect.signature`` per tool, per run, was about a tenth of a single-focus run's
fixed cost), with its resolved binding. A function is remembered as fitting only after it
passed, and only while the agent's registry still maps the tool's name to it, so a misfit is
refused on every run, in the same words. Every other binding is still checked on every run:
an HTTP binding's headers and a command's program are read from the environment, and an MCP
tool's schema from its server, any of which may change between runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from rdflib import URIRef

from ._bindings import Binding
from ._contract import unbound_arguments
from ._definitions import Definitions
from ._errors import Problem
from ._model import ActionStep, Tool, Workflow

if TYPE_CHECKING:
    from ._bindings.python import PythonBinding

__all__ = ["Prechecks"]


class Prechecks:
    """The definition-only answers of a run's checks for one agent's definitions. Shared by
    the runs of that agent, on any thread: each answer is computed whole, then stored."""

    def __init__(self, defs: Definitions) -> None:
        self.defs = defs
        self._unbound: list[Problem] | None = None
        self._tools: dict[URIRef, tuple[Tool, ...]] = {}
        self._fitting: dict[URIRef, PythonBinding] = {}

    def unbound(self) -> list[Problem]:
        """Each required tool argument nothing binds (:func:`~._contract.unbound_arguments`)."""
        if self._unbound is None:
            self._unbound = unbound_arguments(self.defs)
        return self._unbound

    def tools(self, workflow: Workflow) -> tuple[Tool, ...]:
        """The tool of each ActionStep ``workflow`` can reach, in the order of its steps."""
        own = self.defs.workflows.get(workflow.iri) is workflow
        tools = self._tools.get(workflow.iri) if own else None
        if tools is None:
            tools = tuple(
                step.tool
                for step in workflow.reachable()
                if isinstance(step, ActionStep) and step.tool is not None
            )
            if own:
                self._tools[workflow.iri] = tools
        return tools

    def fitting(self, tool: Tool, registry: Mapping[str, Callable[..., Any]]) -> Binding | None:
        """The binding of ``tool`` found to fit on an earlier run, if it is still what
        ``registry`` gives: the same function registered under its ``python:`` name."""
        known = self._fitting.get(tool.iri)
        if known is None or known.tool is not tool:
            return None
        if registry.get(tool.binding[len("python:") :]) is not known.func:
            return None
        return known

    def fits(self, binding: Binding, registry: Mapping[str, Callable[..., Any]]) -> None:
        """``binding`` passed its check: a Python function registered under its tool's
        ``python:`` name is remembered with its binding, which holds no state of a run. A
        function imported from an allowed module is resolved and checked on every run."""
        from ._bindings.python import PythonBinding  # loaded with the first Python binding

        if not isinstance(binding, PythonBinding) or binding.tool is None:
            return
        tool = binding.tool
        if self.defs.tools.get(tool.iri) is not tool:
            return
        if registry.get(tool.binding[len("python:") :]) is binding.func:
            self._fitting[tool.iri] = binding
