"""The contract of a binding.

``call`` receives the tool's arguments already resolved from the graph and type-checked
(class-typed ones as :class:`rdflib.URIRef`, datatype-typed ones as Python values; those
declared ``horis:sent false`` are the runtime's alone and never reach it) and returns
the tool's raw result: a mapping from declared property to value, or ``None``. It raises
:class:`~horismos.ToolError` for anything that is not a result. Timeouts, retries and the gate
are the runner's, the same for every kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rdflib import URIRef

__all__ = ["Binding"]


class Binding:
    """What the runner calls a tool through, whatever reaches it (Python, MCP, HTTP, a command):
    the module's docstring is the contract, so a new kind of binding is one subclass."""

    kind = "binding"

    async def call(self, args: Mapping[str, Any]) -> Any:
        raise NotImplementedError

    async def check(self) -> None:
        """Refuse, before any call, a binding that cannot honour the declared contract."""

    def refused_at(self) -> URIRef | None:
        """The statement of its tool that :meth:`check` found wrong (``horis:binding``,
        ``horis:takes``), to say the refusal at its line; None when it was no statement's
        fault (a server that did not start)."""
        return None

    async def aclose(self) -> None:
        """Release sessions or connections held across calls."""
