"""A store that fails the commit ending a call the tool was sent: say that it may have acted.

Why its own module: the step's commit and a catalog call's commit both end a call, and both
met a store gone away (a SPARQL server stopped, a full disk) with only the store's own error —
"cannot be reached … start the server". Read alone, that says nothing happened, while the tool
had been called and may have charged: someone who then made the charge by hand made it twice.
Nothing else changes: the call is held as before (a tool that is not idempotent announced it
before it was sent, so running again does not call it a second time), and the error is still
the store's, exit 2, with what happened to the call said after it. A commit refused because
the process's lease on a shared store ran out meanwhile (:class:`~horismos.LeaseLost`: it was
paused, or away from the store) is the same: it said only that "nothing of it landed".
"""

from __future__ import annotations

import json

from ._errors import LeaseLost, OutcomeUnknown
from ._intents import doubt_key, reconcile_args, reconcile_in_python
from ._model import Tool
from ._records import StepRecord
from ._stores import StoreError
from ._stores.base import QueryRefused

__all__ = ["unrecorded"]


def may_have_acted(rec: StepRecord) -> bool:
    """Whether ``rec``'s tool was called by this process and may have acted: it answered (a
    result, landed or rejected by the gate), or never answered. Not a call never sent, nor
    one the tool answered with an error, which is believed (docs/deployment.md)."""
    if rec.tool is None or not rec.attempts:
        return False
    return rec.status in ("completed", "rejected", "timed_out", "partial") or isinstance(
        rec.error, OutcomeUnknown
    )


def unrecorded(
    e: StoreError | LeaseLost, rec: StepRecord, tool: Tool | None
) -> StoreError | LeaseLost:
    """``e``, the store's failure (or the lease's) while ending ``rec``'s call of ``tool``
    (judging its result, committing it), with what came of the call and what to do about it
    when the tool was called and may have acted; else ``e`` itself (a pattern the store
    refused is the step's to fail, as before)."""
    if tool is None or isinstance(e, QueryRefused) or not may_have_acted(rec):
        return e
    if tool.idempotent:
        after = (
            f"{tool.name} was called before this, but what came of the call was not recorded; "
            "it is idempotent, so running again calls it again"
        )
    else:
        after = (
            f"{tool.name} was called and may have acted, but what came of the call was not "
            "recorded. Check with the system it acts on whether it took effect: "
            f"{'' if isinstance(e, LeaseLost) or e.repeats else 'once the store is back, '}"
            "the call is held in doubt "
            f"and {tool.name} is not called again on "
            "that subject until `horismos tools reconcile` clears it "
            f"({reconcile_in_python(tool, _given(tool, rec))} in Python)"
        )
    if isinstance(e, LeaseLost):
        return LeaseLost(f"{e}\n  {after}")
    return StoreError(f"{e}\n  {after}", status=e.status)


def _given(tool: Tool, rec: StepRecord) -> str | None:
    """The arguments that clear ``rec``'s one call in doubt, as ``tools reconcile`` takes
    them, each node by its full IRI (no definitions here to name it by); None for several
    calls (a forEach step's), or arguments that cannot be told."""
    if len(rec.args) != 1:
        return None
    (call,) = rec.args
    return reconcile_args(tool, doubt_key(tool, call), json.dumps([call]), lambda n: n.n3())
