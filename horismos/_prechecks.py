"""What a run checks of its definitions before the first step, worked out once per agent.

Before any step fires, a run refuses definitions in which nothing binds a tool's required
argument, resolves the binding of every tool its workflow can reach and lets each refuse
(:meth:`~horismos._runner.Runner.check_before_first_step`). Three of those answers depend
only on what the agent was made with, so they are worked out on its first run and kept, as
the gate's compiled shapes are: the unbound arguments and the tools a workflow reaches
(functions of the loaded definitions), and whether a Python function's parameters fit the
arguments its tool declares (``inspect.signature`` per tool, per run, was about a tenth of a
single-focus run's fixed cost), with its resolved binding. A function is remembered as
fitting only after it passed, and only while the agent's registry still maps the tool's name
to it, so a misfit is refused on every run, in the same words. Every other binding is still
checked on every run: an HTTP binding's headers and a command's program are read from the
environment, and an MCP tool's schema from its server, any of which may change between runs.

One check reads the world, and is made by every lane that can call a tool (``run``,
``resume``, ``wake``, a worker's task, ``tools call``, ``serve``'s calls and its
``run_workflow``) before it acts: a property a domain shape requires that no file declares and
no tool writes (:attr:`~._definitions.Definitions.unmeetable`) must be stated somewhere in the
world, or every result the gate judges by that shape is rejected after its tool has acted
(:func:`unmet_requirements`). One look-up by predicate per such property, usually none.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from rdflib import Literal, URIRef
from rdflib.term import Node

from ._bindings import Binding
from ._bindings.function_source import function_of, not_dicts, returned
from ._contract import (
    binding_problems,
    no_dict_problems,
    returned_key_problems,
    unbound_arguments,
)
from ._definitions import Definitions
from ._errors import AuthoringError, Problem, ToolError
from ._model import ActionStep, ProposalStep, Step, Tool, Workflow
from ._returned_values import returned_value_problems
from ._vocab import HORIS
from ._world import World, states

if TYPE_CHECKING:
    from ._bindings.python import PythonBinding

__all__ = [
    "Prechecks",
    "refuse_unmet",
    "unmeetable_errors",
    "unmet_properties",
    "unmet_requirements",
    "unstated",
]


def unmet_properties(
    defs: Definitions, world: World, landing: Collection[Node] = ()
) -> list[URIRef]:
    """The properties of :attr:`Definitions.unmeetable` that ``world`` holds no statement of,
    nor ``landing`` (the properties of facts landing first: a resume's)."""
    return unstated(world, [p for p in defs.unmeetable if p not in landing])


def unstated(world: World, properties: Iterable[URIRef]) -> list[URIRef]:
    """Those of ``properties`` no statement of ``world`` has as its predicate: one look-up
    by predicate (an index's) each, whatever the world holds."""
    return [p for p in properties if not states(world.store, p, "predicate")]


def unmet_requirements(
    defs: Definitions, world: World, landing: Collection[Node] = ()
) -> list[Problem]:
    """The errors, each at its shape's ``sh:path``, about the properties a domain shape
    requires that no file declares, no tool writes and ``world`` does not hold (nor the
    facts ``landing`` with them): what every lane refuses before a tool acts, as
    ``validate --world`` does."""
    return unmeetable_errors(defs, unmet_properties(defs, world, landing))


def unmeetable_errors(defs: Definitions, unmet: Iterable[URIRef]) -> list[Problem]:
    """The errors about the properties of ``unmet`` (:attr:`Definitions.unmeetable`), which
    the world holds no statement of."""
    return [error for prop in unmet for _, error in defs.unmeetable[prop]]


def refuse_unmet(defs: Definitions, world: World, landing: Collection[Node] = ()) -> None:
    """Raise :class:`AuthoringError` with :func:`unmet_requirements`, when there are any: for
    a lane that calls a tool, or records what lets one be called, outside a run's steps."""
    unmet = unmet_requirements(defs, world, landing)
    if unmet:
        raise AuthoringError(unmet)


class Prechecks:
    """The definition-only answers of a run's checks for one agent's definitions. Shared by
    the runs of that agent, on any thread: each answer is computed whole, then stored."""

    def __init__(self, defs: Definitions) -> None:
        self.defs = defs
        self._unbound: list[Problem] | None = None
        self._steps: dict[URIRef, tuple[Step, ...]] = {}
        self._fitting: dict[URIRef, PythonBinding] = {}
        self._returns_fit: dict[URIRef, Callable[..., Any]] = {}
        """The function each tool's returns were found to fit (:meth:`refuse_rejected_returns`),
        held so its identity is not another's: an allowed module's is checked on every run
        and every catalog call, and walked its syntax tree each time."""

    def unbound(self) -> list[Problem]:
        """Each required tool argument nothing binds (:func:`~._contract.unbound_arguments`)."""
        if self._unbound is None:
            self._unbound = unbound_arguments(self.defs)
        return self._unbound

    def refuse_unrunnable(self, world: World, landing: Collection[Node] = ()) -> None:
        """Raise :class:`AuthoringError` for what ``validate --world`` refuses beside ``world``:
        a required argument nothing binds, a property a shape requires that ``world`` does not
        hold nor the facts ``landing`` first state (read unrecorded: no step made the reads)."""
        unrunnable = [*self.unbound(), *unmet_requirements(self.defs, world, landing)]
        if unrunnable:
            raise AuthoringError(unrunnable)

    def tools(self, workflow: Workflow) -> tuple[Tool, ...]:
        """The tool of each ActionStep ``workflow`` can reach, in the order of its steps."""
        return tuple(
            step.tool
            for step in self._reachable(workflow)
            if isinstance(step, ActionStep) and step.tool is not None
        )

    def binding_errors(
        self, workflow: Workflow, registry: Mapping[str, Callable[..., Any]]
    ) -> list[Problem]:
        """Each ``python:`` binding of ``workflow``'s tools that ``validate --tools`` refuses
        (:func:`~._contract.binding_problems`), by file and line as validate lists them: asked
        once one has failed, so a run refuses them all at once, not one per try."""
        found = binding_problems(self.defs, registry, self.tools(workflow))
        errors = [p for p in found if p.severity == "error"]
        return sorted(errors, key=lambda p: (p.file or "~", p.line or 0))

    def proposals(self, workflow: Workflow) -> tuple[ProposalStep, ...]:
        """The ProposalSteps ``workflow`` can reach: their models' hosts are checked too."""
        return tuple(s for s in self._reachable(workflow) if isinstance(s, ProposalStep))

    def _reachable(self, workflow: Workflow) -> tuple[Step, ...]:
        """The steps ``workflow`` can reach, in order; kept for a workflow of these
        definitions (one built apart, as a test may, is walked each time)."""
        own = self.defs.workflows.get(workflow.iri) is workflow
        steps = self._steps.get(workflow.iri) if own else None
        if steps is None:
            steps = tuple(workflow.reachable())
            if own:
                self._steps[workflow.iri] = steps
        return steps

    def fitting(self, tool: Tool, registry: Mapping[str, Callable[..., Any]]) -> Binding | None:
        """The binding of ``tool`` found to fit on an earlier run, if it is still what
        ``registry`` gives: the same function registered under its ``python:`` name."""
        known = self._fitting.get(tool.iri)
        if known is None or known.tool is not tool:
            return None
        if registry.get(tool.binding[len("python:") :]) is not known.func:
            return None
        return known

    def refuse_rejected_returns(self, binding: Binding) -> None:
        """Refuse a Python function every ``return`` of which the gate rejects, whatever its
        values (:func:`~._contract.returned_key_problems`: a dict written out with a key the
        effect does not declare, or none for a value it requires), as a misfit of its
        parameters is refused: every call would act, and land nothing. Its source is read
        once per function (:func:`~._bindings.function_source.function_of`), and one found to fit
        is not judged again."""
        from ._bindings.python import PythonBinding  # loaded with the first Python binding

        if not isinstance(binding, PythonBinding) or binding.tool is None:
            return
        tool = binding.tool
        if self._returns_fit.get(tool.iri) is binding.func:
            return
        source = function_of(binding.func)
        if source is not None:
            at = (tool.iri, HORIS.binding, Literal(tool.binding))
            returns = returned(*source)
            found = (
                returned_key_problems(self.defs, tool, returns, at)
                or returned_value_problems(self.defs, tool, returns, at)
                or no_dict_problems(self.defs, tool, not_dicts(*source), at)
            )
            for p in found:
                if p.severity == "error":
                    raise ToolError(f"{p.message} — {p.hint}", tool=str(tool.iri))
        self._returns_fit[tool.iri] = binding.func

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
