"""``python:dotted.path.func`` and ``python:name`` (registered with ``tools={...}``)."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import queue
import threading
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
        # Daemon threads of our own, not the loop's default executor: asyncio.run() joins that
        # executor on exit, so a timed-out call would hold the run until it returned.
        # Abandoned, a call runs on in its thread; its late result has no future left to land
        # in and is discarded.
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        func = self.func

        def work() -> None:
            try:
                outcome: tuple[Any, BaseException | None] = (func(**args), None)
            except BaseException as e:  # handed to the awaiting step, never swallowed here
                outcome = (None, e)
            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody is waiting
                loop.call_soon_threadsafe(_settle, future, *outcome)

        _THREADS.submit(work)
        return await future


class _Threads:
    """Daemon threads kept for sync tool calls: starting a thread per call cost more than
    most tools (0.3-0.5 ms a step, far more on a busy machine). A call that hangs keeps its
    thread; the next call then gets another, so a hung tool never blocks the rest."""

    def __init__(self) -> None:
        self._tasks: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0

    def submit(self, task: Callable[[], None]) -> None:
        with self._lock:
            start = self._idle == 0
            if not start:
                self._idle -= 1
        if start:
            threading.Thread(target=self._serve, name="horismos-tool", daemon=True).start()
        self._tasks.put(task)

    def _serve(self) -> None:
        while True:
            self._tasks.get()()
            with self._lock:
                if self._idle >= _IDLE_THREADS:
                    return
                self._idle += 1


_IDLE_THREADS = 4
_THREADS = _Threads()


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():  # cancelled by the step's timeout: the late outcome is discarded
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)
