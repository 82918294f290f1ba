"""Ctrl-C while the command line is still starting: one line, not a traceback.

Why: ``horismos`` spends most of its first second importing (rdflib, pyoxigraph, the
runtime), before :func:`horismos._cli.main` and its handlers exist. A Ctrl-C there, the
moment a person notices a mistyped command, printed a 20-line traceback from deep inside
``dataclasses`` or an import. When the process is the command line, and only then,
``horismos/__init__.py`` installs :func:`interrupted` as the interpreter's hook for an
exception nothing caught, first thing, and puts the one it found back when its imports are
done or one failed (:func:`started`): a program that imports Horismos keeps its own hook
throughout, and a later Ctrl-C of its own is no "horismos" line. ``__main__`` covers the
rest of the start. The interpreter still ends the process by SIGINT, as for any Ctrl-C
nothing handled.
"""

from __future__ import annotations

import os
import sys
from types import TracebackType

__all__ = ["INTERRUPTED", "interrupted", "started"]

_ITS_OWN = sys.excepthook
"""The hook in place before Horismos started to import."""

INTERRUPTED = "\nhorismos: interrupted while starting; nothing was done"


def interrupted(
    kind: type[BaseException], error: BaseException, trace: TracebackType | None
) -> None:
    """Say in one line that a Ctrl-C stopped the start; anything else as the hook before."""
    if issubclass(kind, KeyboardInterrupt):
        print(INTERRUPTED, file=sys.stderr)
        return
    _ITS_OWN(kind, error, trace)


def started() -> None:
    """The imports are done: the hook that was there is back."""
    if sys.excepthook is interrupted:
        sys.excepthook = _ITS_OWN


_CONSOLE_SCRIPTS = {"horismos", "horismos.exe", "horismos-script.py", "horismos-script.pyw"}
"""What the ``horismos`` console script's ``sys.argv[0]`` is named: the script pip writes on
POSIX, and on Windows its launcher ``horismos.exe`` (run as a zip application) or the
``horismos-script.py``/``.pyw`` an older launcher runs beside it."""


def _is_the_command_line(argv: list[str], orig_argv: list[str]) -> bool:
    """``python -m horismos`` (runpy imports the package with ``argv[0]`` set to "-m") or
    the ``horismos`` console script (``argv[0]`` its path, named as pip names it), not a
    program importing Horismos: a user's ``horismos.py`` is one."""
    first = argv[0] if argv else ""
    if first == "-m":
        return _module_run(orig_argv[1:]) in ("horismos", "horismos.__main__")
    return os.path.basename(first) in _CONSOLE_SCRIPTS


_TAKES_VALUE = {"-W", "-X", "--check-hash-based-pycs"}
"""The interpreter's options before ``-m`` whose value is the next argument when not joined."""


def _module_run(options: list[str]) -> str | None:
    """The module ``python [options] -m MODULE …`` runs, read as the interpreter reads its
    options: flags joined (``-Im horismos``, ``-mhorismos``) and an option's value
    (``-X dev``) as well as apart; None when a script or ``-c`` comes first. Looking for
    "-m" followed by "horismos" missed ``-Im horismos``."""
    at = 0
    while at < len(options) and options[at].startswith("-") and options[at] != "-":
        option = options[at]
        at += 1
        if option in _TAKES_VALUE:
            at += 1
            continue
        if option.startswith("--"):
            continue
        for i, flag in enumerate(option[1:], 1):
            if flag in "cmWX":  # the rest of the cluster, or else the next argument, is its value
                value = option[i + 1 :] or (options[at] if at < len(options) else "")
                if flag == "m":
                    return value
                if flag == "c":
                    return None
                if not option[i + 1 :]:
                    at += 1
                break
    return None


if _is_the_command_line(getattr(sys, "argv", None) or [], sys.orig_argv):
    sys.excepthook = interrupted
