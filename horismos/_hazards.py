"""Declarations that run but may do harm an author did not mean: ``validate`` warns about them.

- ``horis:retries`` on a tool that is not idempotent. Retries there repeat only a call that
  never reached the tool (see :mod:`._attempt`); one that was sent is never repeated, so the
  author should know the retries will not cover a timeout.
- A cycle made only of DecisionSteps (:func:`decision_loops`): nothing on it changes the
  world, so an instance that goes round it comes back to a decision that reads what it read
  before, and the run stops it as a loop that would never end. The loader makes it an error.
- A cycle of steps through a tool that is not idempotent. Each time round calls it again; the
  loop ends only when a ``horis:requires`` stops holding, or at the instance's step budget
  (``horis:maxSteps``).

The checks read the built steps and tools and say what they found; the loader words and
locates the warnings like its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from rdflib import URIRef
from rdflib.term import Node

from ._digraph import Digraph, add_edge, shortest_path, strongly_connected
from ._model import (
    DEFAULT_MAX_STEPS,
    ActionStep,
    DecisionStep,
    ProposalStep,
    Step,
    Tool,
    WaitStep,
    Workflow,
)

__all__ = ["Hazard", "cycle_through", "decision_loops", "flow_graph", "hazards"]


@dataclass(frozen=True)
class Hazard:
    node: URIRef
    message: str
    hint: str


def flow_graph(steps: Mapping[URIRef, Step]) -> Digraph[URIRef]:
    """Every edge a step can take: next, onError, rules, otherwise, fallback, onTimeout."""
    flow: Digraph[URIRef] = {}
    for step in steps.values():
        flow.setdefault(step.iri, {})
        targets = [step.next, step.on_error, getattr(step, "on_partial", None)]
        if isinstance(step, DecisionStep):
            targets += [r.next for r in step.rules] + [step.otherwise]
        if isinstance(step, ProposalStep):
            targets.append(step.fallback)
        if isinstance(step, WaitStep):
            targets.append(step.on_timeout)
        for t in targets:
            if t is not None:
                add_edge(flow, step.iri, t)
    return flow


def cycle_through(steps: Mapping[URIRef, Step], step: URIRef) -> list[URIRef]:
    """The shortest loop of the flow from ``step`` back to it (``[step]`` when none)."""
    flow = flow_graph(steps)
    loops = [
        path for nxt in flow.get(step, ()) if (path := shortest_path(flow, nxt, step)) is not None
    ]
    return [step, *min(loops, key=len)] if loops else [step]


def decision_loops(steps: Mapping[URIRef, Step]) -> Iterator[list[URIRef]]:
    """Each cycle of the flow made only of DecisionSteps, as the shortest loop from its first
    step (by IRI) back to it: ``[a, b, a]``, ``[a, a]`` for a step that goes to itself."""
    flow = flow_graph(steps)
    decisions: Digraph[URIRef] = {}
    for iri, step in steps.items():
        if isinstance(step, DecisionStep):
            decisions.setdefault(iri, {})
            for nxt in flow.get(iri, ()):
                if isinstance(steps.get(nxt), DecisionStep):
                    add_edge(decisions, iri, nxt)
    for component in strongly_connected(decisions):
        first = min(component, key=str)
        if len(component) > 1 or first in decisions[first]:
            yield cycle_through({s: steps[s] for s in component}, first)


def hazards(
    tools: Mapping[URIRef, Tool],
    steps: Mapping[URIRef, Step],
    workflows: Mapping[URIRef, Workflow],
    name: Callable[[Node], str],
) -> Iterator[Hazard]:
    for tool in tools.values():
        if tool.retries and not tool.idempotent:
            yield Hazard(
                tool.iri,
                f"horis:retries {tool.retries} on a tool that is not idempotent: a call is "
                "retried only when it never reached the tool (the connection was refused, the "
                "MCP server did not start); a call that was sent is never repeated — a timeout "
                "or lost connection is OutcomeUnknown and takes horis:onError, an error the "
                "tool answers with is not retried",
                "declare horis:idempotent true if calling it twice does no harm, or drop "
                "horis:retries",
            )
    flow = flow_graph(steps)
    budget = min((w.max_steps for w in workflows.values()), default=DEFAULT_MAX_STEPS)
    for component in strongly_connected(flow):
        looped = len(component) > 1 or any(s in flow[s] for s in component)
        if not looped:
            continue
        for iri in sorted(component, key=str):
            step = steps.get(iri)
            called = step.tool if isinstance(step, ActionStep) else None
            if called is None or called.idempotent:
                continue
            back = min(
                (
                    path
                    for nxt in flow[iri]
                    if nxt in component and (path := shortest_path(flow, nxt, iri)) is not None
                ),
                key=len,
            )
            cycle = " → ".join(name(s) for s in [iri, *back])
            yield Hazard(
                iri,
                f"the step is on a cycle ({cycle}) and its tool {called.name} is not idempotent: "
                "each time round calls it again, until a horis:requires on the way stops "
                f"holding or the instance runs out of steps (horis:maxSteps, {budget} here)",
                "make the loop's horis:requires depend on something the tool writes, or "
                f"declare {called.name} horis:idempotent true if calling it again does no harm",
            )
