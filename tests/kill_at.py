"""``python kill_at.py ARGS…`` runs ``horismos ARGS…`` and SIGKILLs itself at one commit
boundary: ``KILL_AT=before:N`` just before its Nth store commit is applied, ``after:N`` just
after it landed. The process dies there as it would on a power cut or an OOM kill, with no
guessing of the moment: a test walks N from 1 until the command ends on its own, and so
kills it at every commit boundary it has (before and after an intent, inside the call that
follows it, before and after the step's own commit). ``KILL_AT=pause:N`` stops it instead
(SIGSTOP) just after its Nth commit landed, as a machine put to sleep or a VM paused would:
the test lets its lease run out, does what others would meanwhile, then SIGCONTs it."""

from __future__ import annotations

import os
import runpy
import signal
import sys
from typing import Any


def _arm(when: str, nth: int) -> None:
    from horismos._stores.memory import MemoryStore
    from horismos._stores.oxigraph import OxigraphStore
    from horismos._stores.sparql import SparqlStore

    applied = [0]

    def die() -> None:
        os.kill(os.getpid(), signal.SIGSTOP if when == "pause" else signal.SIGKILL)

    for cls in (MemoryStore, OxigraphStore, SparqlStore):
        def apply(self: Any, change: Any, _apply: Any = cls.apply) -> Any:
            applied[0] += 1
            if when == "before" and applied[0] == nth:
                die()
            digest = _apply(self, change)
            if when in ("after", "pause") and applied[0] == nth:
                die()
            return digest

        cls.apply = apply  # type: ignore[method-assign]


if __name__ == "__main__":
    spec = os.environ.get("KILL_AT")
    if spec:
        when, _, nth = spec.partition(":")
        _arm(when, int(nth))
    sys.argv = ["horismos", *sys.argv[1:]]
    runpy.run_module("horismos", run_name="__main__")
