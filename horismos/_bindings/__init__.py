"""Bindings: how a declared tool reaches the code that does the work.

Each kind sits behind :class:`~horismos._bindings.base.Binding`; :func:`resolve` picks one by the
``horis:binding`` scheme: ``python:``, ``mcp://SERVER/TOOL`` (sessions shared through the run's
:class:`~horismos._bindings.mcp.McpSessions`), ``http://`` / ``https://``, ``cmd:NAME`` (a
declared command line, :mod:`.command`).
A binding reaches only the code, modules and hosts the user allowed (:class:`~.reach.Reach`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .._errors import ToolError
from .._model import Tool
from .base import Binding
from .mcp import McpBinding, McpSessions, mcp_server
from .python import static_problem
from .reach import Hosts, Reach, allowed_host, hosts_of

__all__ = [
    "Binding",
    "Hosts",
    "McpSessions",
    "Reach",
    "allowed_host",
    "code_of",
    "hosts_of",
    "mcp_server",
    "resolve",
    "static_problem",
]


def resolve(
    tool: Tool, registry: Mapping[str, Callable[..., Any]], sessions: McpSessions | None = None
) -> Binding:
    """The binding for ``tool``; raises :class:`ToolError` naming what cannot be resolved."""
    if tool.binding.startswith("python:"):
        from .python import PythonBinding

        return PythonBinding.resolve(tool, registry)
    if tool.binding.startswith("mcp://"):
        return McpBinding.resolve(tool, sessions or McpSessions({}), hosts_of(registry))
    if tool.binding.startswith(("http://", "https://")):
        from .http import HttpBinding

        return HttpBinding(tool, hosts_of(registry))
    if tool.binding.startswith("cmd:"):
        from .command import CommandBinding

        name = tool.binding[len("cmd:") :]
        return CommandBinding.resolve(tool, {name: tool.command} if tool.command else {})
    raise ToolError(
        f"binding {tool.binding!r} of {tool.name}: this kind of binding is not available in "
        'this runtime; bind the tool to "python:…", "mcp://SERVER/TOOL", "cmd:NAME" '
        "or an http(s) URL",
        tool=str(tool.iri),
    )


def code_of(tool: Tool, registry: Mapping[str, Callable[..., Any]]) -> str | None:
    """The code behind ``tool``'s ``python:`` binding as ``registry`` resolves it
    (:attr:`Binding.code`), for an approval to name; None for another binding (its
    definition says what it reaches), a tool needing no approval, or one not resolved here
    (its call says why, when it is made)."""
    if not tool.binding.startswith("python:") or static_problem(tool, registry) is not None:
        return None
    from .python import PythonBinding

    try:
        return PythonBinding.resolve(tool, registry).code
    except ToolError:
        return None
