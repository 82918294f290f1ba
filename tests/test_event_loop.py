"""A sync run on this thread's kept event loop behaves as ``asyncio.run`` did, run after run:
nothing one run leaves on the loop reaches the next, and Ctrl-C still unwinds the run."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import multiprocessing
import signal
import threading
import time

import pytest

from horismos import _loop

VAR: contextvars.ContextVar[str] = contextvars.ContextVar("test_loop_var", default="unset")


async def _loop_now() -> asyncio.AbstractEventLoop:
    return asyncio.get_running_loop()


def test_runs_return_and_raise_like_asyncio_run() -> None:
    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    async def fail() -> None:
        raise ValueError("no")

    assert _loop.run(answer()) == 42
    with pytest.raises(ValueError, match="no"):
        _loop.run(fail())
    assert _loop.run(answer()) == 42


def test_an_idle_loop_is_reused_and_is_current_only_during_a_run() -> None:
    first = _loop.run(_loop_now())
    assert _loop.run(_loop_now()) is first
    assert not first.is_running()
    with pytest.raises(RuntimeError):  # no current loop between runs, as after asyncio.run
        asyncio.get_running_loop()


def test_a_context_variable_a_run_sets_stays_in_that_run() -> None:
    async def set_it() -> str:
        VAR.set("set by a run")
        return VAR.get()

    assert _loop.run(set_it()) == "set by a run"
    assert VAR.get() == "unset"
    assert _loop.run(_read_var()) == "unset"


async def _read_var() -> str:
    return VAR.get()


def test_a_task_left_running_is_cancelled_at_the_end_of_its_run() -> None:
    cancelled = threading.Event()

    async def leave_a_task() -> asyncio.AbstractEventLoop:
        async def forever() -> None:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                cancelled.set()
                raise

        asyncio.get_running_loop().create_task(forever())
        await asyncio.sleep(0)
        return asyncio.get_running_loop()

    loop = _loop.run(leave_a_task())
    assert cancelled.is_set()
    assert loop.is_closed()  # torn down as asyncio.run would, not reused
    assert _loop.run(_loop_now()) is not loop


def test_a_timer_a_run_leaves_never_fires_in_a_later_run() -> None:
    fired: list[str] = []

    async def leave_a_timer() -> None:
        asyncio.get_running_loop().call_later(0.01, fired.append, "late")

    _loop.run(leave_a_timer())

    async def wait() -> None:
        await asyncio.sleep(0.05)

    _loop.run(wait())
    assert fired == []


def test_an_async_generator_left_open_is_closed_at_the_end_of_its_run() -> None:
    closed = threading.Event()
    kept: list[object] = []

    async def gen():  # type: ignore[no-untyped-def]
        try:
            yield 1
            yield 2
        finally:
            closed.set()

    async def leave_it_open() -> None:
        g = gen()
        kept.append(g)  # still referenced: only the end of the run closes it
        await g.__anext__()

    _loop.run(leave_it_open())
    assert closed.is_set()


def test_called_from_a_running_loop_it_raises_as_asyncio_run() -> None:
    async def nested() -> None:
        inner = _loop_now()
        try:
            _loop.run(inner)
        finally:
            inner.close()

    with pytest.raises(RuntimeError, match="running event loop"):
        asyncio.run(nested())


def test_each_thread_has_its_own_loop() -> None:
    loops: list[asyncio.AbstractEventLoop] = []

    def work() -> None:
        for _ in range(20):
            loops.append(_loop.run(_loop_now()))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(loops) == 80
    assert len({id(loop) for loop in loops}) == 4


def _child(queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    async def answer() -> int:
        await asyncio.sleep(0)
        return 7

    queue.put(_loop.run(answer()))


def test_a_forked_process_makes_its_own_loop_and_leaves_the_parents_alone() -> None:
    parent = _loop.run(_loop_now())
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_child, args=(queue,))
    child.start()
    assert queue.get(timeout=30) == 7
    child.join(30)
    assert child.exitcode == 0
    # the parent's loop still works after the child ran (and exited) with its own
    assert _loop.run(_loop_now()) is parent

    async def wake_from_a_thread() -> str:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[str] = loop.create_future()
        threading.Thread(
            target=lambda: loop.call_soon_threadsafe(done.set_result, "woken")
        ).start()
        return await asyncio.wait_for(done, 5)

    assert _loop.run(wake_from_a_thread()) == "woken"


@pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread(), reason="SIGINT: main thread"
)
def test_ctrl_c_cancels_the_run_which_unwinds_before_keyboard_interrupt() -> None:
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        pytest.skip("SIGINT is handled by someone else here")
    unwound = threading.Event()

    async def interrupted() -> None:
        try:
            signal.raise_signal(signal.SIGINT)
            await asyncio.sleep(5)
        finally:
            unwound.set()

    with pytest.raises(KeyboardInterrupt):
        _loop.run(interrupted())
    assert unwound.is_set()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert _loop.run(_read_var()) == "unset"  # and the next run goes on as usual


@pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread(), reason="SIGINT: main thread"
)
def test_ctrl_c_caught_on_a_tools_thread_cancels_the_run_it_waits_in() -> None:
    """A signal is handled on the main thread, but the kernel may catch it on any (a tool's
    thread raising it, or handed one sent to the process): the handler then waited for the
    main thread to wake, and a run awaiting a sync tool's thread slept in ``select`` until
    that tool returned — ``horismos tools call`` took the tool's 30 s to hear a Ctrl-C. The
    loop is now woken by the signal itself, wherever it lands."""
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        pytest.skip("SIGINT is handled by someone else here")
    release, finished = threading.Event(), threading.Event()

    async def awaits_a_tool() -> None:
        loop = asyncio.get_running_loop()
        answered: asyncio.Future[None] = loop.create_future()

        def tool() -> None:
            time.sleep(0.2)  # the run awaits its answer in select by then
            signal.raise_signal(signal.SIGINT)  # caught on this thread, not the main one
            release.wait(30)  # a tool that goes on acting
            finished.set()
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                loop.call_soon_threadsafe(lambda: answered.done() or answered.set_result(None))

        threading.Thread(target=tool, daemon=True).start()
        await answered

    try:
        with pytest.raises(KeyboardInterrupt):
            _loop.run(awaits_a_tool())
        assert not finished.is_set(), "the run heard the Ctrl-C only once the tool returned"
    finally:
        release.set()
    assert signal.set_wakeup_fd(-1) == -1  # and no signal wakes the loop between runs
    assert _loop.run(_read_var()) == "unset"
