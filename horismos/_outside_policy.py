"""The steps a run's policy will block, said before its first step.

Why: an incident workflow rolled a change back, paged the owners of each service, and only
then reached the step posting to the status page, a tool of ``horis:sideEffect
horis:ExternalCommit`` that the default policy (``ReadOnly,HostStateWrite``) does not allow:
the instance stopped there blocked, and the first the operator heard of ``--allow`` was after
the steps before it had acted. The run knows its policy and the workflow's steps before it
calls anything, so it says each step outside the policy once, at the step's ``horis:tool``
line, as a warning (a run may mean to stop there). Read once per run, never per step.

``resume`` says it of the steps ahead of where its instance stands, ``serve --run-workflow``
and ``worker`` of every workflow they may be asked to run, as they start: they blocked the
instance after earlier tools had acted, and only ``run`` said so before.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from rdflib import URIRef

from ._errors import Problem
from ._model import ActionStep, Workflow
from ._policy import allowed, side_effect
from ._vocab import HORIS

if TYPE_CHECKING:
    from ._definitions import Definitions

__all__ = ["every_outside_policy", "outside_policy"]


def outside_policy(
    defs: Definitions,
    workflow: Workflow,
    allow: Iterable[str] | str,
    start: URIRef | None = None,
) -> list[Problem]:
    """A warning for each action step ``workflow`` can reach (from its start, or from
    ``start``: a resumed instance's step) whose tool's side-effect class ``allow`` leaves out:
    every instance reaching it stops there, blocked, with what the steps before it did
    already done."""
    policy = allowed(allow, "--allow ")
    found: list[Problem] = []
    for step in workflow.reachable(start):
        if not isinstance(step, ActionStep) or step.tool is None:
            continue
        side = side_effect(step.tool)
        if side in policy:
            continue
        widened = ",".join(sorted(policy | {side}))
        found.append(
            defs._sources.problem(
                "warning",
                step.iri,
                f"its tool {defs.name(step.tool.iri)} is horis:{side}, which this run's policy "
                f"does not allow (allowed: {', '.join(sorted(policy)) or 'nothing'}): every "
                f"instance that reaches {defs.name(step.iri)} stops there blocked "
                "(PolicyRefused), after the steps before it have acted",
                f"give --allow {widened} if it may act; a blocked instance goes on with "
                f"`horismos run … --focus NODE --allow {widened}`",
                at=(step.iri, HORIS.tool, step.tool.iri),
            )
        )
    return found


def every_outside_policy(defs: Definitions, allow: Iterable[str] | str) -> list[Problem]:
    """:func:`outside_policy` of every declared workflow, each step said once: what a server
    or a worker that may be asked to run any of them says as it starts."""
    said: dict[str, Problem] = {}
    for workflow in defs.workflows.values():
        for problem in outside_policy(defs, workflow, allow):
            said.setdefault(str(problem), problem)
    return list(said.values())
