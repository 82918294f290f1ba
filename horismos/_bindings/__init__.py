"""Bindings: how a declared tool reaches the code that does the work.

Each kind sits behind :class:`~horismos._bindings.base.Binding`; :func:`resolve` picks one by the
``horis:binding`` scheme: ``python:``, ``mcp://SERVER/TOOL`` (sessions shared through the run's
:class:`~horismos._bindings.mcp.McpSessions`), ``http://`` / ``https://``.
A ``python:`` binding reaches only code the user named (:class:`~.python.PythonTools`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .._errors import ToolError
from .._model import Tool
from .base import Binding
from .mcp import McpBinding, McpSessions, mcp_server
from .python import PythonTools, static_problem

__all__ = ["Binding", "McpSessions", "PythonTools", "mcp_server", "resolve", "static_problem"]


def resolve(tool: Tool, registry: Mapping[str, Callable[..., Any]],
            sessions: McpSessions | None = None) -> Binding:
    """The binding for ``tool``; raises :class:`ToolError` naming what cannot be resolved."""
    if tool.binding.startswith("python:"):
        from .python import PythonBinding

        return PythonBinding.resolve(tool, registry)
    if tool.binding.startswith("mcp://"):
        return McpBinding.resolve(tool, sessions or McpSessions({}))
    if tool.binding.startswith(("http://", "https://")):
        from .http import HttpBinding

        return HttpBinding(tool)
    raise ToolError(
        f"binding {tool.binding!r} of {tool.name}: this kind of binding is not available in "
        "this runtime; bind the tool to \"python:…\", \"mcp://SERVER/TOOL\" or an http(s) URL",
        tool=str(tool.iri))
