"""``python:NAME`` (a registered callable) and ``python:module.func`` (in an allowed module).

A Turtle file names code; it must not choose it. ``horis:binding "python:os.system"`` would
otherwise run whatever a definitions file asks for. So a ``python:`` binding resolves only to
a callable the user registered (``tools={...}``, ``--tools FILE``) or to a callable inside a
module the user allowed by name (``allow_modules=[...]``, ``--allow-module NAME``, which also
allows its submodules). Nothing is imported to list, validate or discover tools:
:func:`static_problem` answers from the registry and the allow-list alone.

Before the first step, :meth:`PythonBinding.check` holds the function's parameters against the
declared arguments (those sent: ``horis:sent false`` ones never reach it), so a mismatch is
found before any tool has acted, not after.

A sync function runs on a worker thread, so a call that hangs can be abandoned at its
``horis:timeout``. A tool declared ``horis:inline true`` (quick, CPU-only) is called on the
event loop's thread instead: no thread to wake, which on a busy machine cost milliseconds a
call; its timeout is judged when it returns (:meth:`PythonBinding._inline`).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import difflib
import importlib
import inspect
import queue
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, cast

from .. import _attempt
from .._errors import NotSent, ToolError, ToolTimeout
from .._model import Tool
from .._outcomes import message_of
from .base import Binding
from .code_identity import code_identity
from .limits import check_result
from .python_values import as_recorded
from .reach import Reach

__all__ = ["PythonBinding", "import_raised", "signature_problems", "static_problem"]

_P = inspect.Parameter


def _allowed(registry: Mapping[str, Any], module: str) -> bool:
    return isinstance(registry, Reach) and registry.allows(module)


def static_problem(tool: Tool, registry: Mapping[str, Callable[..., Any]]) -> str | None:
    """Why ``tool``'s ``python:`` binding cannot resolve here, found without importing
    anything; None when it is registered or its module is allowed."""
    target = tool.binding[len("python:") :]
    if target in registry:
        return None
    module_name = target.rpartition(".")[0]
    if module_name and _allowed(registry, module_name):
        return None
    return _unresolved(tool, target, registry)


def _unresolved(tool: Tool, target: str, registry: Mapping[str, Any]) -> str:
    head = f'binding "python:{target}" of {tool.name}:'
    moved = _under_another_module(target, registry)
    if moved is not None:
        return f"{head} {moved}"
    close = difflib.get_close_matches(target, list(registry), n=1)
    if close:
        return f"{head} no callable named {target!r} is registered; did you mean {close[0]!r}?"
    known = ", ".join(sorted(registry)) or "none"
    module_name = target.rpartition(".")[0]
    if not module_name:
        return (
            f"{head} no callable named {target!r} is registered (registered: {known}); "
            f'pass tools={{"{target}": func}} to Agent or use --tools MODULE'
        )
    return (
        f"{head} it is neither registered (registered: {known}) nor in a module you "
        f"allowed; a Turtle file cannot choose the code it runs: register the function "
        f"(--tools MODULE or FILE.py, tools={{...}}) or allow its module "
        f'(--allow-module {module_name}, allow_modules=["{module_name}"])'
    )


def _under_another_module(target: str, registry: Mapping[str, Any]) -> str | None:
    """What to write when ``MODULE.NAME`` is not registered but ``NAME`` is, under another
    module: the file given to ``--tools`` was renamed (a copy of the example's), and the
    did-you-mean of the whole name would say to rename the binding only."""
    module_name, _, name = target.rpartition(".")
    if not module_name:
        return None
    found = sorted(
        key
        for key in registry
        if "." in key and key.rpartition(".")[2] == name and key.rpartition(".")[0] != module_name
    )
    if not found:
        return None
    other = found[0].rpartition(".")[0]
    file = "" if "." in module_name else f" (--tools {module_name}.py: a file's module is its name)"
    return (
        f"no callable named {target!r} is registered, but {found[0]!r} is: the binding names "
        f"module {module_name!r}, the function was registered from {other!r} — write "
        f'"python:{found[0]}", or register the function under {module_name!r}{file}'
    )


def signature_problems(tool: Tool, func: Callable[..., Any] | inspect.Signature) -> list[str]:
    """How ``func``'s parameters (or those its source declares: a signature) disagree with
    the arguments ``tool`` declares and sends."""
    try:
        signature = func if isinstance(func, inspect.Signature) else inspect.signature(func)
    except (TypeError, ValueError):  # a builtin without a signature: nothing to hold it to
        return []
    params = list(signature.parameters.values())
    sent = {a.name: a for a in tool.args if a.sent}
    unsent = {a.name for a in tool.args if not a.sent}
    by_name = {p.name: p for p in params if p.kind in (_P.POSITIONAL_OR_KEYWORD, _P.KEYWORD_ONLY)}
    takes_any = any(p.kind == _P.VAR_KEYWORD for p in params)
    problems: list[str] = []
    unmatched = [n for n in sent if n not in by_name]
    spare = [n for n in by_name if n not in sent and n not in unsent]
    suggested: set[str] = set()  # named in a did-you-mean: not reported twice
    for name in unmatched if not takes_any else []:
        close = difflib.get_close_matches(name, spare, n=1, cutoff=0.5) or (
            spare if len(spare) == len(unmatched) == 1 else []
        )
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        suggested.update(close)
        problems.append(
            f'the function has no parameter {name!r} for the declared argument "{name}"{hint}'
        )
    for p in params:
        required = p.default is _P.empty
        if p.kind == _P.POSITIONAL_ONLY and required:
            problems.append(
                f"parameter {p.name!r} is positional-only; arguments are passed by name"
            )
        elif p.kind in (_P.POSITIONAL_OR_KEYWORD, _P.KEYWORD_ONLY) and required:
            if p.name in unsent:
                problems.append(
                    f"parameter {p.name!r} has no default, but argument "
                    f'"{p.name}" is horis:sent false and never passed'
                )
            elif p.name not in sent:
                if p.name not in suggested:
                    problems.append(
                        f"parameter {p.name!r} has no default and no declared argument gives it"
                    )
            elif sent[p.name].optional:
                problems.append(
                    f"parameter {p.name!r} has no default, but argument "
                    f'"{p.name}" is horis:optional and may be left out'
                )
    return problems


def import_raised(e: BaseException) -> str:
    """What importing a module of the user's did, in words, at the last line of theirs it ran
    (not Python's, an installed package's nor Horismos's): ``raised RuntimeError: … at
    tools.py:3``, or ``called sys.exit(3) at tools.py:9`` for a script whose ``main()`` is
    not under ``if __name__ == "__main__"``; a bare exit code was the command's own, silent
    (exit 3 read as "waiting")."""
    frames = traceback.extract_tb(e.__traceback__)
    libs = tuple({sys.prefix, sys.base_prefix, str(Path(__file__).parent.parent)})
    ours = [f for f in frames if not f.filename.startswith(("<", *libs))]
    where = f" at {ours[-1].filename}:{ours[-1].lineno}" if ours else ""
    if isinstance(e, SystemExit):
        return f"called sys.exit({e.code!r}){where}"
    return f"raised {type(e).__name__}: {e}{where}"


class PythonBinding(Binding):
    """A plain function: sync, run in a worker thread (or, ``horis:inline``, on the loop's
    own); or async, cancelled on timeout."""

    kind = "python"

    def __init__(self, func: Callable[..., Any], tool: Tool | None = None) -> None:
        self.func = func
        self.tool = tool
        # an object whose __call__ is an async def (a client instance) is async too: called
        # in a thread as a sync one, its coroutine was never awaited and the step failed
        self.is_async = inspect.iscoroutinefunction(func) or (
            not inspect.isroutine(func)
            and inspect.iscoroutinefunction(getattr(func, "__call__", None))  # noqa: B004
        )
        if tool is not None and tool.inline and self.is_async:  # before any call: refused
            raise NotSent(
                f'binding "{tool.binding}" of {tool.name} is an async function, which runs on '
                "the event loop already and is cancelled at its horis:timeout; horis:inline "
                "is for sync functions: remove it",
                tool=str(tool.iri),
            )
        self.inline = tool is not None and tool.inline
        # named once, as it is loaded, for a tool whose calls need an approval (_policy)
        self.code = code_identity(func) if tool is not None and tool.requires_approval else None
        # worded once, not per call: where a result over the cap came from
        self._where = f'{tool.name} ("{tool.binding}")' if tool is not None else ""

    @classmethod
    def resolve(cls, tool: Tool, registry: Mapping[str, Callable[..., Any]]) -> PythonBinding:
        target = tool.binding[len("python:") :]
        if target in registry:
            return cls(registry[target], tool)
        problem = static_problem(tool, registry)
        if problem is not None:  # never resolved, so never called: a retry is harmless
            raise NotSent(problem, tool=str(tool.iri))
        module_name, _, attr = target.rpartition(".")
        try:
            module = importlib.import_module(module_name)
        except ImportError as e:
            raise NotSent(
                f'binding "python:{target}" of {tool.name}: cannot import {module_name!r} '
                f"({e}); make the module importable or register the function with --tools",
                tool=str(tool.iri),
            ) from None
        except (Exception, SystemExit) as e:  # its own code failed as it ran: a traceback
            raise NotSent(
                f'binding "python:{target}" of {tool.name}: importing {module_name!r} '
                f"{import_raised(e)}; fix the module (it runs top to bottom when first imported)",
                tool=str(tool.iri),
            ) from None
        func = getattr(module, attr, None)
        if not callable(func):
            public = [
                n
                for n in dir(module)
                if not n.startswith("_") and callable(getattr(module, n, None))
            ]
            close = difflib.get_close_matches(attr, public, n=1)
            hint = f'; did you mean "python:{module_name}.{close[0]}"?' if close else ""
            raise NotSent(
                f'binding "python:{target}" of {tool.name}: {module_name!r} has no callable '
                f"{attr!r}{hint}",
                tool=str(tool.iri),
            )
        return cls(func, tool)

    async def check(self) -> None:
        if self.tool is None:
            return
        problems = signature_problems(self.tool, self.func)
        if problems:
            raise ToolError(
                f'binding "{self.tool.binding}" of {self.tool.name} does not fit '
                "its horis:takes: " + "; ".join(problems),
                tool=str(self.tool.iri),
            )

    async def call(self, args: Mapping[str, Any]) -> Any:
        if self.inline:
            return self._inline(args)
        _attempt.sent()  # the function is entered: from here on it may act
        try:
            result = await self._run(args)
            if type(result) is not dict and inspect.isawaitable(result):
                # a plain function handing back an awaitable: a decorator without its async
                # (``def wrapper(**kw): return tool(**kw)``), a lambda around an async tool.
                # Awaited, as the async tool it wraps: it failed "returned coroutine" with
                # the coroutine never run, and a tool that is not idempotent held in doubt
                result = await result
        except asyncio.CancelledError:
            raise
        except BaseException as e:
            _attempt.answered()  # it raised: an answer, though not a result
            if not isinstance(e, Exception):
                # SystemExit, KeyboardInterrupt, a BaseException of its own: the tool's own
                # doing, not the process's, so that step fails and the run goes on (one of
                # its own classes reached the user as a traceback, the trace left unended)
                raise _stopped(e) from None
            raise
        _attempt.answered()
        result = as_recorded(result)  # as the trace records it: the same on replay
        if self.tool is not None:
            check_result(self.tool, result, self._where)
        return result

    def _inline(self, args: Mapping[str, Any]) -> Any:
        """The call on the loop's own thread (``horis:inline``): no thread to wake, nothing
        else on the loop runs meanwhile, and nothing can abandon it. Its timeout is judged
        once it returns: a late answer, result or error, is a :class:`ToolTimeout` with the
        answer discarded, sent and never answered in time, as a worker thread's call
        abandoned at its timeout is (a tool that is not idempotent: its outcome unknown)."""
        tool = cast(Tool, self.tool)
        _attempt.sent()
        start = time.perf_counter()
        try:
            result = self.func(**args)
        except KeyboardInterrupt:  # on this thread it is the person at the terminal: stop
            raise
        except BaseException as e:
            late = _late(tool, start)
            if late is not None:
                raise late from None
            _attempt.answered()
            if not isinstance(e, Exception):  # SystemExit, a BaseException of its own
                raise _stopped(e) from None
            raise
        late = _late(tool, start)
        if late is not None:
            raise late
        _attempt.answered()
        result = as_recorded(result)
        check_result(tool, result, self._where)
        return result

    async def _run(self, args: Mapping[str, Any]) -> Any:
        if self.is_async:
            return await self.func(**args)
        # Daemon threads of our own, not the loop's default executor: asyncio.run() joins that
        # executor on exit, so a timed-out call would hold the run until it returned.
        # Abandoned, a call runs on in its thread; its late result has no future left to land
        # in and is discarded.
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        func = self.func
        # the caller's context variables (a request's id, a tracing span) as an async tool
        # sees them: a sync tool's thread began with none, so its logs lost the request
        context = contextvars.copy_context()
        done = threading.Event()
        handoff = threading.Lock()
        outcomes: list[tuple[Any, BaseException | None]] = []
        awaited = [False]  # the step went back to the loop: the outcome goes through it

        def work() -> None:
            try:
                outcome: tuple[Any, BaseException | None] = (context.run(func, **args), None)
            except BaseException as e:  # handed to the awaiting step, never swallowed here
                outcome = (None, e)
            with handoff:
                outcomes.append(outcome)
                through_loop = awaited[0]
            done.set()
            if through_loop:
                with contextlib.suppress(RuntimeError):  # the loop is gone: nobody is waiting
                    loop.call_soon_threadsafe(_settle, future, *outcome)

        _THREADS.submit(work)
        _attempt.runs_until(done)  # abandoned at its timeout, it acts on until it returns
        # Most calls return at once: wait a moment for the answer here, the GIL released, so
        # the worker runs without contending for it and no loop wake-up is needed. On a busy
        # machine, handing the answer back through the loop cost milliseconds a call. The
        # moment is short (at most _GRACE, a quarter of the timeout), so the timeout still
        # holds and nothing else on the loop waits for long.
        grace = min(_GRACE, self.tool.timeout / 4) if self.tool is not None else _GRACE
        done.wait(grace)
        with handoff:
            if not outcomes:
                awaited[0] = True
        if outcomes:
            result, error = outcomes[0]
            if error is not None:
                raise error
            return result
        return await future


_GRACE = 0.002  # seconds a sync call is waited for in place before the step awaits it


def _stopped(e: BaseException) -> ToolError:
    """A tool that raised SystemExit and the like: its own doing, not the process's, so that
    step fails and the run goes on."""
    said = message_of(e)
    what = f"{type(e).__name__}({said})" if said else type(e).__name__
    return ToolError(
        f"the tool raised {what}; a tool returns a result or raises an "
        "Exception, it does not stop the process"
    )


def _late(tool: Tool, start: float) -> ToolTimeout | None:
    """An inline call that answered after its ``horis:timeout``: its answer is discarded."""
    took = time.perf_counter() - start
    if took <= tool.timeout:
        return None
    return ToolTimeout(
        f"{tool.name} answered after {took:.3g}s, past its horis:timeout of {tool.timeout:g}s; "
        "a horis:inline tool cannot be abandoned mid-call, so its answer is discarded and "
        "nothing of it lands",
        tool=str(tool.iri),
    )


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
