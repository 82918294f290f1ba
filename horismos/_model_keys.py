"""A proposal's model whose key the environment lacks, said by ``validate`` at its
``horis:model`` line.

Why: ``run`` refuses such a workflow before its first step (:func:`~._proposal.refused_model`),
but ``validate`` said nothing of it: a modeler read "valid", started the run, and met the
refusal there — or, before ``run`` checked it, after the steps before the proposal had acted.
A warning, not an error: the machine that runs the workflow may have the key where
``validate`` ran without it. Only whether the variable is set is read; no model is asked, so
``validate`` needs no network.
"""

from __future__ import annotations

from ._definitions_model import Definitions
from ._errors import Problem
from ._model import ProposalStep
from ._proposal import DEFAULT_MODEL, endpoint, unkeyed
from ._vocab import HORIS

__all__ = ["unkeyed_models"]


def unkeyed_models(defs: Definitions) -> list[Problem]:
    """A warning at each proposal step's ``horis:model`` whose provider needs a key the
    environment does not give (nor a base URL of a local server instead)."""
    found = []
    for step in sorted(defs.steps.values(), key=lambda s: str(s.iri)):
        if not isinstance(step, ProposalStep):
            continue
        model = step.model or DEFAULT_MODEL
        url = endpoint(model)
        why = unkeyed(model, url) if url is not None else None
        if why is None:
            continue
        written = defs.graph.value(step.iri, HORIS.model)
        found.append(
            defs._sources.problem(
                "warning",
                step.iri,
                f"{why}, and this environment sets neither: `run` here refuses the "
                "workflow before its first step",
                "set the variable where the workflow runs (validate reads only whether it is "
                "set, and asks no model), or name a local server by the base URL",
                at=(step.iri, HORIS.model, written) if written is not None else step.iri,
            )
        )
    return found
