"""The contract of a binding.

``call`` receives the tool's arguments already resolved from the graph and type-checked
(class-typed ones as :class:`rdflib.URIRef`, datatype-typed ones as Python values; those
declared ``horis:sent false`` are the runtime's alone and never reach it) and returns
the tool's raw result: a mapping from declared property to value, or ``None``. It raises
:class:`~horismos.ToolError` for anything that is not a result. Timeouts, retries and the gate
are the runner's, the same for every kind.

A binding that reaches its tool through something it must open first (an MCP server's
session, started again if it died) sets ``opens`` and does that in :meth:`open`, which the
runner awaits before the call's ``horis:timeout`` starts: opening is not the call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rdflib import URIRef

if TYPE_CHECKING:
    from .._definitions_model import Definitions
    from .._errors import Problem

__all__ = ["Binding"]


class Binding:
    """What the runner calls a tool through, whatever reaches it (Python, MCP, HTTP, a command):
    the module's docstring is the contract, so a new kind of binding is one subclass."""

    kind = "binding"
    code: str | None = None
    """The code the binding runs, as :func:`.code_identity.code_identity` names it, where
    the definition does not say it (a ``python:`` binding resolves to whatever is registered):
    an approval holds only for the code that asked for it. None for a binding whose
    definition says what it reaches (an MCP server's command, a URL, an argv)."""
    opens = False
    """Whether :meth:`open` has anything to do; the runner reads this one attribute per call,
    so a binding with nothing to open costs nothing more."""

    async def open(self) -> None:
        """Make the binding ready to send, within a connect timeout of its own: start or
        reach what it sends through, again if it was lost since. Failing, it raises
        :class:`~horismos.NotSent` (:class:`~horismos.Unreachable` when a later try may get
        through). The runner awaits it with the call's ``horis:timeout`` held off: a server
        slow to start (a fresh interpreter importing its SDK on a busy machine) used up a
        5 s timeout and was reported as a tool that "did not answer", about a call never sent.
        :meth:`call` must still open what is not open, for a caller that did not ask."""

    async def call(self, args: Mapping[str, Any]) -> Any:
        raise NotImplementedError

    async def check(self) -> None:
        """Refuse, before any call, a binding that cannot honour the declared contract."""

    def refusal_problems(self, defs: Definitions) -> list[Problem]:
        """What :meth:`check` refused, as ``validate`` says it: each finding at its own line,
        in the definitions' prefixed names. Empty where the refusal's own words are those
        (the default): ``run`` then says them at :meth:`refused_at`'s line."""
        return []

    def refused_at(self) -> URIRef | None:
        """The statement of its tool that :meth:`check` found wrong (``horis:binding``,
        ``horis:takes``), to say the refusal at its line; None when it was no statement's
        fault (a server that did not start)."""
        return None

    async def aclose(self) -> None:
        """Release sessions or connections held across calls."""
