"""Bindings: how a declared tool reaches the code that does the work.

Each kind sits behind :class:`~horismos._bindings.base.Binding`; :func:`resolve` picks one by the
``horis:binding`` scheme.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .._errors import ToolError
from .._model import Tool
from .base import Binding

__all__ = ["Binding", "resolve"]


def resolve(tool: Tool, registry: Mapping[str, Callable[..., Any]]) -> Binding:
    """The binding for ``tool``; raises :class:`ToolError` naming what cannot be resolved."""
    if tool.binding.startswith("python:"):
        from .python import PythonBinding

        return PythonBinding.resolve(tool, registry)
    raise ToolError(
        f"binding {tool.binding!r} of {tool.name}: this kind of binding is not available in "
        "this runtime yet; bind the tool to \"python:…\"", tool=str(tool.iri))
