"""``python:dotted.path.func`` and ``python:name`` (registered with ``tools={...}``)."""

from __future__ import annotations

import asyncio
import functools
import importlib
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from .._errors import ToolError
from .._model import Tool
from .base import Binding

__all__ = ["PythonBinding"]


class PythonBinding(Binding):
    """A plain function, sync (run in a worker thread) or async (cancelled on timeout)."""

    kind = "python"

    def __init__(self, func: Callable[..., Any]) -> None:
        self.func = func
        self.is_async = inspect.iscoroutinefunction(func)

    @classmethod
    def resolve(cls, tool: Tool, registry: Mapping[str, Callable[..., Any]]) -> PythonBinding:
        target = tool.binding[len("python:"):]
        if target in registry:
            return cls(registry[target])
        module_name, _, attr = target.rpartition(".")
        if not module_name:
            known = ", ".join(sorted(registry)) or "none"
            raise ToolError(
                f"binding \"python:{target}\" of {tool.name}: no callable named {target!r} is "
                f"registered (registered: {known}); pass tools={{\"{target}\": func}} to Agent, "
                "use --tools MODULE, or write a dotted path python:module.func",
                tool=str(tool.iri))
        try:
            module = importlib.import_module(module_name)
        except ImportError as e:
            raise ToolError(
                f"binding \"python:{target}\" of {tool.name}: cannot import {module_name!r} "
                f"({e}); make the module importable or register the function with tools={{...}}",
                tool=str(tool.iri)) from None
        func = getattr(module, attr, None)
        if not callable(func):
            raise ToolError(
                f"binding \"python:{target}\" of {tool.name}: {module_name!r} has no callable "
                f"{attr!r}", tool=str(tool.iri))
        return cls(func)

    async def call(self, args: Mapping[str, Any]) -> Any:
        if self.is_async:
            return await self.func(**args)
        loop = asyncio.get_running_loop()
        # A timed-out sync call keeps its thread until it returns; its result is discarded.
        return await loop.run_in_executor(None, functools.partial(self.func, **args))
