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
"""

from __future__ import annotations

import gc
import json
import os
import resource
import runpy
import signal
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
    """Become the command: its folder, environment and files, then ``horismos`` run as
    ``__main__``. Its ``SystemExit`` (or an uncaught exception) ends this process as it ends a
    fresh one: with the interpreter's own shutdown."""
    requests.close()  # the protocol's pipes are the zygote's alone
    os.close(replies)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
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
    script = request.get("script")
    if script:
        sys.argv = [script, *request["args"]]
        sys.path[0] = os.path.dirname(script)
        runpy.run_path(script, run_name="__main__")
    else:
        sys.argv = ["horismos", *request["args"]]
        sys.path[0] = os.getcwd()  # as ``python -m`` puts it
        runpy.run_module("horismos", run_name="__main__", alter_sys=True)


def serve() -> None:
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
        pid = os.fork()
        if pid == 0:
            child(request, requests, replies)
            sys.exit(0)
        os.write(replies, f"{pid}\n".encode())
        _, status = os.waitpid(pid, 0)
        os.write(replies, f"{os.waitstatus_to_exitcode(status)}\n".encode())


if __name__ == "__main__":
    serve()
