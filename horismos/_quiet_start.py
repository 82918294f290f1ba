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


def _is_the_command_line() -> bool:
    """``python -m horismos`` (runpy imports the package with ``sys.argv[0]`` set to "-m")
    or the ``horismos`` console script (``sys.argv[0]`` its path), not a program importing
    Horismos."""
    argv = getattr(sys, "argv", None) or [""]
    if argv[0] == "-m":
        given = sys.orig_argv  # python [options] -m horismos …
        at = given.index("-m") if "-m" in given else None
        return "-mhorismos" in given or (at is not None and given[at + 1 : at + 2] == ["horismos"])
    return os.path.splitext(os.path.basename(argv[0]))[0] == "horismos"


if _is_the_command_line():
    sys.excepthook = interrupted
