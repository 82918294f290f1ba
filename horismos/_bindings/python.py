"""``python:dotted.path.func`` and ``python:name`` (registered with ``tools={...}``)."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import threading
from collections.abc import Callable, Mapping
from typing import Any

from .. import _attempt
from .._errors import NotSent, ToolError
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
            raise NotSent(
                f"binding \"python:{target}\" of {tool.name}: no callable named {target!r} is "
                f"registered (registered: {known}); pass tools={{\"{target}\": func}} to Agent, "
                "use --tools MODULE, or write a dotted path python:module.func",
                tool=str(tool.iri))
        try:
            module = importlib.import_module(module_name)
        except ImportError as e:
            raise NotSent(
                f"binding \"python:{target}\" of {tool.name}: cannot import {module_name!r} "
                f"({e}); make the module importable or register the function with tools={{...}}",
                tool=str(tool.iri)) from None
        func = getattr(module, attr, None)
        if not callable(func):
            raise NotSent(
                f"binding \"python:{target}\" of {tool.name}: {module_name!r} has no callable "
                f"{attr!r}", tool=str(tool.iri))
        return cls(func)

    async def call(self, args: Mapping[str, Any]) -> Any:
        _attempt.sent()  # the function is entered: from here on it may act
        try:
            result = await self._call(args)
        except asyncio.CancelledError:
            raise
        except (SystemExit, KeyboardInterrupt, GeneratorExit) as e:
            # the tool's own doing, not the process's: that step fails, the run goes on
            _attempt.answered()
            what = f"{type(e).__name__}({e})" if str(e) else type(e).__name__
            raise ToolError(f"the tool raised {what}; a tool returns a result or raises an "
                            "Exception, it does not stop the process") from None
        except BaseException:
            _attempt.answered()  # it raised: an answer, though not a result
            raise
        _attempt.answered()
        return result

    async def _call(self, args: Mapping[str, Any]) -> Any:
        if self.is_async:
            return await self.func(**args)
        # A daemon thread, not the loop's default executor: asyncio.run() joins that executor
        # on exit, so a timed-out call would hold the run until it returned. Abandoned, the
        # thread runs on; its late result has no future left to land in and is discarded.
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()

        def work() -> None:
            try:
                outcome: tuple[Any, BaseException | None] = (self.func(**args), None)
            except BaseException as e:  # handed to the awaiting step, never swallowed here
                outcome = (None, e)
            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody is waiting
                loop.call_soon_threadsafe(_settle, future, *outcome)

        name = getattr(self.func, "__name__", "call")
        threading.Thread(target=work, name=f"horismos-tool-{name}", daemon=True).start()
        return await future


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():  # cancelled by the step's timeout: the late outcome is discarded
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)
