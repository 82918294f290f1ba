"""Every process a ``cmd:`` program starts ends with its call, wherever it went.

A process group is not enough: a descendant that calls ``setsid`` (``setsid curl … &``) or
double-forks to daemonize leaves the group, and outlived the kill of a call found failed or
in doubt, so it could still act — the charge made after the operator had checked, cleared
the step and called again.

On Linux the program therefore runs under a **shepherd**: the child that ``subprocess``
forks, before it would exec the program, makes itself a child subreaper
(``PR_SET_CHILD_SUBREAPER``), starts the program and stays. Every orphan below it — a
double-forked daemon, a ``setsid`` grandchild whose parent exited — is re-parented to the
shepherd instead of to init, so the whole tree stays in its reach. When the program exits,
or when Horismos asks (:data:`STOP`, :data:`KILL`), or when Horismos itself dies, the
shepherd walks its descendants (``/proc/<pid>/task/<tid>/children``), signals every one,
reaps, and repeats until it has no child left; then it exits with the program's own status
(dying by the program's signal, when one killed it), so Horismos reads the program's end as
before.

The shepherd is the child ``subprocess`` forks anyway; it starts the program with
``posix_spawn`` (no second copy of the memory map), so a call that ends soon costs about what
it did (``benchmarks/bench_command.py``: 2-3 ms more for a program that answers at once).
Being a fork, though, it holds this process's memory as it was, and every page Horismos
writes afterwards is copied: a call that outlasts :data:`HANDOVER` has its shepherd exec a
fresh interpreter running this file (``python -I -S shepherd.py PID``), which keeps the
subreaper role, the blocked signals and the children, and lets the memory go.

Out of reach still: a process started on the program's behalf by something outside its tree
(``systemd-run``, ``at``, a container runtime, a request to a daemon that was already
running), and a ``kill -9`` of the shepherd itself (Horismos then kills the process group,
the program with it, but an orphan that left the group is re-parented to init). Elsewhere
than Linux, the process group alone is killed. This module imports nothing beyond what an
interpreter started with ``-I -S`` loads cheaply.

The shepherd is told by signals, each blocked and read with ``sigwaitinfo`` so that none can
interrupt a sweep: ``SIGTERM`` (a timeout: SIGTERM to all, SIGKILL after a short grace),
``SIGUSR1`` (a quota breach, or Horismos gone: SIGKILL at once) and ``SIGCHLD``.
"""

from __future__ import annotations

import contextlib
import gc
import os
import resource
import signal
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn

__all__ = ["KILL", "STOP", "TERM_GRACE", "available", "start"]

TERM_GRACE = 0.2
"""Seconds between SIGTERM and SIGKILL: a program that ignores SIGTERM dies."""
HANDOVER = 1.0
"""Seconds a shepherd runs as a fork of Horismos before it execs a fresh interpreter."""
STOP = signal.SIGTERM
"""To the shepherd: SIGTERM to every process of the call, SIGKILL after :data:`TERM_GRACE`."""
KILL = signal.SIGUSR1
"""To the shepherd: SIGKILL to every process of the call, at once."""

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_WATCHED = {signal.SIGCHLD, STOP, KILL}
_prctl: Any = None


def available() -> bool:
    """Whether programs run under a shepherd here: Linux, with libc's ``prctl``."""
    global _prctl
    if _prctl is None and sys.platform.startswith("linux"):
        import ctypes  # here, not at the top: the exec'd shepherd never needs it

        with contextlib.suppress(OSError, AttributeError):
            _prctl = ctypes.CDLL(None, use_errno=True).prctl
    return _prctl is not None


def start(parent: int, argv: Sequence[str], env: Mapping[str, str]) -> Callable[[], None] | None:
    """The ``preexec_fn`` that runs ``argv`` (its program a path) with ``env`` under a shepherd,
    or None where there is none (:func:`available`): ``subprocess`` then execs the program as
    the leader of its group. ``parent`` is this process: when it dies, so does everything the
    call started."""
    if not available():
        return None
    prctl = _prctl

    def shepherd() -> None:
        """Runs in the child ``subprocess`` forked, its stdio and working directory set; never
        returns. The program inherits only stdio. One that cannot be executed raises here,
        before any of it ran: ``subprocess`` then raises ``SubprocessError`` in the caller."""
        gc.disable()  # a collection here would write to every page it shares with Horismos
        unblocked = signal.pthread_sigmask(signal.SIG_BLOCK, _WATCHED)
        prctl(_PR_SET_CHILD_SUBREAPER, 1)
        prctl(_PR_SET_PDEATHSIG, int(KILL))  # Horismos gone: everything dies at once
        if os.getppid() != parent:  # it went between the fork and the line above: die before
            os.kill(os.getpid(), signal.SIGKILL)  # the program starts (KILL is blocked here)
        for fd in _open_fds():
            if fd > 2:
                with contextlib.suppress(OSError):  # the listing's own, closed by now
                    os.set_inheritable(fd, False)
        program = os.posix_spawn(argv[0], list(argv), dict(env), setsigmask=unblocked)
        try:  # nothing after the spawn may raise: subprocess would report "never ran"
            for fd in _open_fds():  # the program's pipes, subprocess's error pipe: not ours
                with contextlib.suppress(OSError):
                    os.close(fd)
        except OSError:  # no listing (the table full): close them all blindly
            os.closerange(0, os.sysconf("SC_OPEN_MAX"))
        finally:
            tend(program, forked=True)

    return shepherd


def tend(program: int, *, forked: bool) -> NoReturn:
    """The shepherd's life: wait for the program's exit or a request, clear every descendant,
    exit as the program did. ``forked``: still a fork of Horismos, to hand over."""
    status: list[int] = []
    try:
        _clear(program, status, gently=_wait(program, status, forked=forked))
    except BaseException:
        with contextlib.suppress(BaseException):
            _clear(program, status, gently=False)
    finally:
        _relay(status)


def _wait(program: int, status: list[int], *, forked: bool) -> bool:
    """Until the program exits (False) or Horismos asks for a stop: True for a gentle one
    (SIGTERM first), False for SIGKILL at once. Orphans that exit meanwhile are reaped. A
    fork hands over after :data:`HANDOVER`."""
    until = time.monotonic() + HANDOVER if forked else None
    while True:
        if until is None:
            signo = signal.sigwaitinfo(_WATCHED).si_signo
        else:
            info = signal.sigtimedwait(_WATCHED, max(0.0, until - time.monotonic()))
            if info is None:
                _hand_over(program)
                until = None
                continue
            signo = info.si_signo
        if signo == STOP:
            return True
        if signo == KILL:
            return False
        _reap(program, status, block=False)
        if status:
            return False


def _hand_over(program: int) -> None:
    """Exec a fresh interpreter that carries on here; if it cannot be (a frozen application,
    whose executable is no interpreter; this file inside an archive), the fork carries on."""
    if not getattr(sys, "frozen", False) and os.path.isfile(__file__):
        with contextlib.suppress(OSError):
            os.execve(sys.executable, [sys.executable, "-I", "-S", __file__, str(program)], {})


def _clear(program: int, status: list[int], *, gently: bool) -> None:
    """Every descendant signalled and reaped, until none is left. The walk repeats because a
    process may fork between the walk and its signal; a killed parent's child is re-parented
    here and found by the next walk."""
    if gently:
        _signal_all(signal.SIGTERM)
        deadline = time.monotonic() + TERM_GRACE
        while (left := deadline - time.monotonic()) > 0:
            signal.sigtimedwait({signal.SIGCHLD}, left)
            if not _reap(program, status, block=False):
                return
    while True:
        _signal_all(signal.SIGKILL)
        if not _reap(program, status, block=True):
            return


def _reap(program: int, status: list[int], *, block: bool) -> bool:
    """Every exited child reaped (waiting for one first when ``block``); the program's wait
    status kept. False once no child is left."""
    flags = 0 if block else os.WNOHANG
    while True:
        try:
            pid, code = os.waitpid(-1, flags)
        except ChildProcessError:
            return False
        if pid == 0:
            return True
        if pid == program:
            status.append(code)
        flags = os.WNOHANG


def _signal_all(sig: int) -> None:
    for pid in _descendants():
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def _descendants() -> list[int]:
    """This process's descendants, parents before children."""
    me = os.getpid()
    tree = None if os.path.exists(f"/proc/{me}/task/{me}/children") else _tree()
    found, frontier = [], [me]
    while frontier:
        pid = frontier.pop()
        kids = _children(pid) if tree is None else tree.get(pid, [])
        found += kids
        frontier += kids
    return found


def _tree() -> dict[int, list[int]]:
    """Each process's children, from every ``/proc/<pid>/stat``: for a kernel built without
    the ``children`` files (``CONFIG_PROC_CHILDREN``)."""
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            tree.setdefault(ppid, []).append(int(entry))
    return tree


def _children(pid: int) -> list[int]:
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    kids: list[int] = []
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                kids += map(int, f.read().split())
        except OSError:
            continue
    return kids


def _open_fds() -> list[int]:
    return [int(fd) for fd in os.listdir("/proc/self/fd")]


def _relay(status: list[int]) -> NoReturn:
    """Exit as the program did: its exit status, or death by its signal (no core file). A
    program whose end was not seen (the shepherd failed) died by SIGKILL as far as anyone can
    tell: it may have acted and did not answer, never a success."""
    code = status[0] if status else int(signal.SIGKILL)  # the wait status of a SIGKILL death
    if os.WIFSIGNALED(code):
        sig = os.WTERMSIG(code)
        with contextlib.suppress(BaseException):
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            if sig not in (signal.SIGKILL, signal.SIGSTOP):
                signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {sig})
            os.kill(os.getpid(), sig)
    os._exit(os.WEXITSTATUS(code) if os.WIFEXITED(code) else 1)


if __name__ == "__main__":  # a handed-over shepherd
    tend(int(sys.argv[1]), forked=False)
