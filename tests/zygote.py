"""``python zygote.py``: a process with the command line imported, forked once per command.

A ``horismos`` process spends ~0.3 s of CPU importing before it reads its first file, and the
suite starts about a thousand of them: a quarter of its CPU. This process imports what every
command imports once; each command a test runs through :mod:`forked` is then a child forked
from it, in the test's folder, with the test's environment and its own stdin, stdout and
stderr. The child is a process of its own, as ``python -m horismos ARGS`` is: its own pid, its
exit code or the signal that killed it, its ``atexit`` handlers and interpreter shutdown, its
children; a kill (``tests/kill_at.py``'s SIGKILL at a commit) kills it alone. What it does not
do is start an interpreter: :mod:`forked` falls back to a fresh ``python -m horismos`` when a
test's environment sets an interpreter's start-up variable (``PYTHONHASHSEED``,
``PYTHONIOENCODING``, …) other than this process was started with, and tests of start-up itself
start their own.

Protocol: one JSON request a line on stdin (``args``, ``cwd``, ``env``, ``stdin``, ``stdout``,
``stderr``: file paths; ``script``: a file to run as ``__main__`` instead of the ``horismos``
module; ``file_size``: RLIMIT_FSIZE, and ``ignore``: signals ignored, both set before the
command runs, as a ``preexec_fn`` sets them between a fresh one's fork and exec); for each,
two lines on stdout: the child's pid, then its exit code as
:attr:`subprocess.Popen.returncode` says it (``-N`` for signal N). One command at a time.

A request with ``"spawn": true`` starts a command that runs beside the tests instead (a server,
a worker, a command a test signals mid-run), for :class:`forked.Popen`. Its stdin, stdout and
stderr come as three file descriptors over the Unix socket whose number ``argv[1]`` gives, sent
right after the request line (``SCM_RIGHTS``): the very pipes ``subprocess.Popen`` made. The
zygote forks a go-between that forks the command and ends; the command, orphaned, becomes the
child of the test process (which made itself a child subreaper for that moment), so the test
waits for it, signals it and reads its exit code as it does any child's. One line answers: the
command's pid.
"""

from __future__ import annotations

import gc
import io
import json
import os
import resource
import runpy
import signal
import socket
import sys
from typing import Any, BinaryIO

import rdflib.plugins.sparql  # noqa: F401  # what a command with a SPARQL precondition parses

import horismos._cli  # noqa: F401  # what every command imports
from horismos import _shipped_vocabulary, _sparql_parse


def warm() -> None:
    """Build what a command that loads definitions builds on its first load from the package's
    own files alone (no input, no environment, no module more): SPARQL's grammar copied without
    its comment rule, the shipped vocabulary and authoring shapes read and compiled. A child
    starts with them as a fresh process holds them after that first load (~0.1 s of CPU a
    command). Then every object made so far is frozen out of the collector's reach
    (``gc.freeze``): they live as long as the process anyway, and a child's collections no
    longer walk each of them, writing to every page it shares with this process (~0.1 s more).
    """
    _sparql_parse._uncommented()
    _shipped_vocabulary.vocabulary_graph()
    _shipped_vocabulary.compiled_authoring_shapes()
    _shipped_vocabulary.property_homes()
    gc.collect()
    gc.freeze()


def child(request: dict[str, Any], requests: BinaryIO, replies: int) -> None:
    """Become the command: its files, signals and limits, then as :func:`become` says. Its
    ``SystemExit`` (or an uncaught exception) ends this process as it ends a fresh one: with
    the interpreter's own shutdown."""
    requests.close()  # the protocol's pipes are the zygote's alone
    os.close(replies)
    for fd, (name, flags) in enumerate(
        (("stdin", os.O_RDONLY), ("stdout", os.O_WRONLY), ("stderr", os.O_WRONLY))
    ):
        opened = os.open(request[name], flags)
        os.dup2(opened, fd)
        os.close(opened)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for signum in request.get("ignore", ()):
        signal.signal(signum, signal.SIG_IGN)
    if request.get("file_size") is not None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (request["file_size"],) * 2)
    become(request)


def fresh_stdio() -> None:
    """``sys.stdin``, ``sys.stdout`` and ``sys.stderr`` made anew over 0, 1 and 2, as a starting
    interpreter makes them: the zygote's were made over its own files (a pipe, a temporary
    file), and a text stream remembers what its file was (a stderr made over a file then seeks
    on a pipe: ``Illegal seek``)."""
    for fd, name in enumerate(("stdin", "stdout", "stderr")):
        old = getattr(sys, name)
        buffered = open(fd, "rb" if fd == 0 else "wb", closefd=False)  # noqa: SIM115
        stream = io.TextIOWrapper(buffered, encoding=old.encoding, errors=old.errors,
                                  newline="\n", line_buffering=fd == 2 or os.isatty(fd))
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def become(request: dict[str, Any]) -> None:
    """From its folder on: the command's environment and standard streams, then ``horismos``
    (or the script) run as ``__main__``."""
    fresh_stdio()
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    script = request.get("script")
    if script:
        sys.argv = [script, *request["args"]]
        sys.path[0] = os.path.dirname(script)
        runpy.run_path(script, run_name="__main__")
    else:
        sys.argv = ["horismos", *request["args"]]
        sys.path[0] = os.getcwd()  # as ``python -m`` puts it
        runpy.run_module("horismos", run_name="__main__", alter_sys=True)


def spawned(request: dict[str, Any], fds: list[int], requests: BinaryIO,
            channel: socket.socket, replies: int, said: int) -> None:
    """Become a command started beside the tests: its session or process group as
    ``subprocess.Popen`` would set them, its three descriptors as 0, 1 and 2 and none of the
    protocol's, SIGINT as a fresh interpreter sets it, the signals ``ignore`` names ignored and
    ``file_size`` set as :func:`child` sets them, then as :func:`become` says."""
    requests.close()
    channel.close()
    os.close(replies)
    os.close(said)
    if request.get("start_new_session"):
        os.setsid()
    elif request.get("process_group", -1) >= 0:
        os.setpgid(0, request["process_group"])
    for fd, given in enumerate(fds):
        os.dup2(given, fd)
    for given in fds:
        os.close(given)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for signum in request.get("ignore", ()):
        signal.signal(signum, signal.SIG_IGN)
    if request.get("file_size") is not None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (request["file_size"],) * 2)
    become(request)


def spawn(request: dict[str, Any], requests: BinaryIO, channel: socket.socket,
          replies: int) -> None:
    """Start a command that runs beside the tests, orphaned to the test process (see the module
    docstring), and answer its pid once the go-between has ended, and so the orphaning is
    done. The command's own end (``SystemExit`` or an uncaught exception) leaves this function
    and ends the process as :func:`child`'s does."""
    _, fds, _, _ = socket.recv_fds(channel, 1, 3)
    pipe_r, pipe_w = os.pipe()
    between = os.fork()
    if between == 0:
        try:
            os.close(pipe_r)
            pid = os.fork()
        except BaseException:  # the go-between never goes back to serving requests
            os._exit(1)
        if pid == 0:
            spawned(request, fds, requests, channel, replies, pipe_w)
            sys.exit(0)
        os.write(pipe_w, f"{pid}\n".encode())
        os._exit(0)
    for fd in (*fds, pipe_w):
        os.close(fd)
    os.waitpid(between, 0)
    with os.fdopen(pipe_r, "rb") as said:
        pid = said.read().strip() or b"0"
    os.write(replies, pid + b"\n")


def serve() -> None:
    channel = socket.socket(fileno=int(sys.argv[1]))
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.dup(1)
    # the protocol's pipes are not the commands' files: a child takes its own over 0, 1 and 2
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.close(devnull)
    warm()
    for line in requests:
        request = json.loads(line)
        if request.get("spawn"):
            spawn(request, requests, channel, replies)
            continue
        pid = os.fork()
        if pid == 0:
            child(request, requests, replies)
            sys.exit(0)
        os.write(replies, f"{pid}\n".encode())
        _, status = os.waitpid(pid, 0)
        os.write(replies, f"{os.waitstatus_to_exitcode(status)}\n".encode())


if __name__ == "__main__":
    serve()
