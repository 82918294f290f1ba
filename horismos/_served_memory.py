"""What ``horismos serve`` says at start when the world it serves ends with it.

Why: the default store is in memory, read from ``--world`` or the definitions each time the
server starts. An MCP host starts a server per session over stdio, and one restarted after
a crash starts afresh: the idempotency key a call recorded, a call held in doubt, an approval
used and a finished ``run_workflow`` instance were gone with the process that kept them. An
agent retrying with its key, or asking ``run_workflow`` again, on the server started anew
billed a second time, while the documentation called both safe to retry, and nothing said
that the safety lasted only as long as one process.
"""

from __future__ import annotations

from collections.abc import Iterable

from ._model import Tool

__all__ = ["forgotten_at_exit"]


def forgotten_at_exit(persistent: bool, tools: Iterable[Tool], run_workflow: bool) -> str | None:
    """The warning for a served world that is not ``persistent``, when a served tool that is
    not idempotent or ``run_workflow`` relies on what the world records; ``None`` otherwise."""
    if persistent:
        return None
    acting = sorted(t.name for t in tools if not t.idempotent)
    if not acting and not run_workflow:
        return None
    what = ", ".join([*acting, *(["run_workflow"] if run_workflow else [])])
    return (
        "horismos serve: warning: the world is kept in this process's memory and ends with "
        "it: the idempotency keys, calls in doubt, approvals used and finished instances its "
        f"calls record are forgotten when it stops, so {what} called again on a server started "
        "anew (an MCP host starts one per session over stdio) acts again; serve a store that "
        "outlives it to keep them: --store journal:PATH (or oxigraph:PATH, sparql:URL), with "
        "--world to fill it the first time"
    )
