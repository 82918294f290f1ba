"""The event loop a sync entry point (``Agent.run``, ``Agent.resume``) runs its coroutine on.

``asyncio.run`` makes a new event loop for every call and tears it down after: an epoll
instance and a socket pair opened and closed, a SIGINT handler installed through a path that
formats the task's repr twice, and two more loop passes to shut down async generators and the
default executor. That was 100-250 µs of every run — a fifth of a three-step run's budget for a
service that runs one instance per event.

:func:`run` keeps one loop per thread instead, and reuses it only when the run left nothing
on it: no task, no scheduled callback, no async generator, no default executor, no file
descriptor but the loop's own. A run that leaves any of those behind has its loop torn down
exactly as ``asyncio.run`` would (leftover tasks cancelled, async generators closed, the default
executor joined, the loop closed), and the next run gets a fresh one; so what a tool leaves
behind never reaches another run. Everything else ``asyncio.run`` does is done per run too:
the coroutine runs as a task in a copy of the caller's context (a ContextVar a run sets does
not leak into the next), the loop is the thread's current one only while it runs, and in the
main thread Ctrl-C cancels the run's task, so its ``finally`` blocks (bindings closed, claims
released) run before ``KeyboardInterrupt`` is raised — unless the run had ended by then (it
waited no more: its last tool called inline, which no Ctrl-C stops, then its commit), when its
result is returned, not dropped as asyncio drops it. A signal the kernel catches on another
thread (a sync tool's) wakes the loop, so the run hears it at once, not once that tool
returns. Called from a running loop it raises as ``asyncio.run`` does. A process forked from
one holding a loop never touches the inherited loop (its epoll instance is shared with the
parent's): it makes its own.
"""

from __future__ import annotations

import asyncio
import atexit
import contextvars
import os
import signal
import threading
from collections.abc import Coroutine
from types import FrameType
from typing import Any, TypeVar

from ._errors import UsageError

__all__ = ["not_in_running_loop", "run", "stop_main"]

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coro)``, on this thread's kept loop when the last run left it idle."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # none: the usual case
        pass
    else:
        return asyncio.run(coro)  # raises: a sync entry point called from a coroutine
    kept = _LOCAL.__dict__.get("kept")
    if kept is None or kept.pid != os.getpid() or kept.loop.is_closed():
        if kept is not None and kept.pid != os.getpid():
            _INHERITED.append(kept)  # never closed here: that would unregister the parent's fds
        kept = _LOCAL.kept = _Kept()
    try:
        return kept.run(coro)
    finally:
        if not kept.idle():
            kept.close()


def not_in_running_loop(call: str, instead: str) -> None:
    """Refuse a sync entry point (``call``, e.g. ``agent.run()``) on a thread whose event loop is
    running — called from a coroutine, where it cannot wait for its own loop — saying what to
    write there (``instead``). It raised asyncio's ``RuntimeError: asyncio.run() cannot be
    called from a running event loop`` with a "coroutine was never awaited" warning, which
    named neither the call nor its async form."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # none: the usual case
        return
    raise UsageError(
        f"{call} was called from a coroutine, inside a running event loop, where it cannot wait "
        f"for its own: {instead}"
    )


def stop_main() -> None:
    """Stop the main thread as a first Ctrl-C would, where Ctrl-C itself is ignored: the run on
    its loop is cancelled (it unwinds through its ``finally`` blocks), or, with no run on,
    ``KeyboardInterrupt`` is raised. Called from a signal handler, so on the main thread.
    A shell starts a background job (``horismos run --all … &`` in a script) and ``nohup`` its
    command with SIGINT ignored; SIGTERM, routed through SIGINT, was then ignored too, and
    ``docker stop`` or ``kill`` left the run going until SIGKILL ended it mid-instance."""
    if _MAIN_RUN:
        _MAIN_RUN[-1](signal.SIGINT, None)
    else:
        raise KeyboardInterrupt()


class _Interrupt:
    """The SIGINT handler while a run's task is on the loop: the first Ctrl-C cancels the
    task (it unwinds through its ``finally`` blocks), a second one raises at once. A plain
    object with a short repr: ``signal`` looks its handlers up in an enum, and a failed lookup
    formats the handler's repr, which for ``asyncio.Runner``'s partial is the task's repr."""

    def __init__(self, loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any]) -> None:
        self.loop = loop
        self.task = task
        self.count = 0

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        self.count += 1
        if self.count == 1 and not self.task.done():
            self.task.cancel()
            self.loop.call_soon_threadsafe(lambda: None)  # wake a loop blocked in select
            return
        raise KeyboardInterrupt()

    def __repr__(self) -> str:
        return "<horismos run interrupt>"


async def _kept(coro: Coroutine[Any, Any, T], ended: list[T]) -> T:
    """``coro``, its result kept in ``ended`` as it returns. A Ctrl-C cancels the run's task,
    and the cancellation reaches it only where it next waits; a run that waits no more — its
    last step's tool called in place (``horis:inline``), which a Ctrl-C cannot stop, then
    its commit — ends with its result dropped by asyncio, the task marked cancelled. The
    command said "interrupted" of an instance (a call) that had finished and landed, and
    running it again, as told, charged a second time."""
    value = await coro
    ended.append(value)
    return value


class _Kept:
    """One thread's loop, made in this process."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.loop = asyncio.new_event_loop()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """``coro`` as a task in a copy of the current context, as ``asyncio.Runner.run``."""
        loop = self.loop
        main = threading.current_thread() is threading.main_thread()
        ended: list[T] = []  # what ``coro`` returned, should a Ctrl-C's cancellation drop it
        task = loop.create_task(
            _kept(coro, ended) if main else coro, context=contextvars.copy_context()
        )
        interrupt: _Interrupt | None = None
        if main:
            interrupt = _Interrupt(loop, task)  # Ctrl-C's, and SIGTERM's through stop_main
            if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
                try:
                    signal.signal(signal.SIGINT, interrupt)
                except ValueError:  # not allowed here (an embedding interpreter)
                    interrupt = None
        woken = None
        if interrupt is not None:
            _MAIN_RUN.append(interrupt)
            woken = _wake_on_signals(loop)
        asyncio.set_event_loop(loop)
        try:
            return loop.run_until_complete(task)
        except asyncio.CancelledError:
            if interrupt is not None and interrupt.count > 0 and task.uncancel() == 0:
                if ended:  # it had run to its end: nothing was stopped, and it says what landed
                    return ended[0]
                raise KeyboardInterrupt() from None
            raise
        finally:
            if woken is not None:
                _sleep_through_signals(woken)
            if interrupt is not None:
                _MAIN_RUN.remove(interrupt)
                if signal.getsignal(signal.SIGINT) is interrupt:
                    signal.signal(signal.SIGINT, signal.default_int_handler)
            asyncio.set_event_loop(None)

    def idle(self) -> bool:
        """Whether the loop holds nothing a run left: only then may the next run reuse it.
        Read from asyncio's own selector loop; any other loop (or a change of asyncio's
        internals) counts as not idle, so it is closed after each run as ``asyncio.run`` does."""
        loop = self.loop
        try:
            return (
                not loop.is_closed()
                and not asyncio.all_tasks(loop)
                and not loop._ready  # type: ignore[attr-defined]
                # a timer cancelled (a timeout that did not fire) waits in the heap until
                # asyncio drops it; it never runs
                and all(h.cancelled() for h in loop._scheduled)  # type: ignore[attr-defined]
                and not loop._asyncgens  # type: ignore[attr-defined]
                and loop._default_executor is None  # type: ignore[attr-defined]
                and len(loop._selector.get_map()) == 1  # type: ignore[attr-defined]
            )
        except AttributeError:
            return False

    def close(self) -> None:
        """Tear the loop down as ``asyncio.run`` does at its end."""
        loop = self.loop
        if loop.is_closed():
            return
        try:
            _cancel_all_tasks(loop)
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            loop.close()

    def __del__(self) -> None:
        # the thread that kept it has ended: close its loop (nothing runs on it any more)
        if self.pid == os.getpid() and not self.loop.is_closed() and not self.loop.is_running():
            self.loop.close()


def _wake_on_signals(loop: asyncio.AbstractEventLoop) -> int | None:
    """Have every signal the process catches wake ``loop`` meanwhile: the loop's own self-pipe
    (``signal.set_wakeup_fd``, as asyncio's ``add_signal_handler`` does), which it reads and
    ignores. Returns the descriptor, for :func:`_sleep_through_signals`; None where one is set
    already (an embedding program's, or this loop's own ``add_signal_handler``'s: left as it
    is) or the loop has no self-pipe.

    A signal's handler runs on the main thread, but the kernel may catch it on any thread (a
    tool's thread raising it, or one it hands a signal sent to the process): the handler then
    waits for the main thread to run, and a run awaiting a sync tool's thread sleeps in
    ``select`` until that tool returns. A Ctrl-C or SIGTERM during a 30 s tool was heard 30 s
    later, the prompt given back only once the tool had finished."""
    try:
        fd: int = loop._csock.fileno()  # type: ignore[attr-defined]
        before = signal.set_wakeup_fd(fd, warn_on_full_buffer=False)
    except (AttributeError, ValueError, OSError):  # no self-pipe; a descriptor refused
        return None
    if before != -1:
        signal.set_wakeup_fd(before)
        return None
    return fd


def _sleep_through_signals(fd: int) -> None:
    """Undo :func:`_wake_on_signals`, unless the wakeup descriptor has been changed since."""
    now = signal.set_wakeup_fd(-1)
    if now != fd:
        signal.set_wakeup_fd(now)


def _cancel_all_tasks(loop: asyncio.AbstractEventLoop) -> None:
    """What ``asyncio.run`` does with the tasks a run left: cancelled and waited for, an
    exception other than the cancellation reported to the loop's exception handler."""
    left = asyncio.all_tasks(loop)
    if not left:
        return
    for task in left:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
    for task in left:
        if not task.cancelled() and task.exception() is not None:
            loop.call_exception_handler(
                {
                    "message": "unhandled exception during a run's shutdown",
                    "exception": task.exception(),
                    "task": task,
                }
            )


def _close_main() -> None:
    """At exit, the main thread's kept loop is closed (as ``asyncio.run`` left none open)."""
    kept = _LOCAL.__dict__.get("kept")
    if kept is not None and kept.pid == os.getpid():
        kept.close()


_LOCAL = threading.local()
_INHERITED: list[_Kept] = []  # loops of a parent process, kept so that nothing closes them
_MAIN_RUN: list[_Interrupt] = []  # the main thread's run on its loop, for stop_main
atexit.register(_close_main)
