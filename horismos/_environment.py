"""Where a run's time, ids and tool outcomes come from: live, the clock and the tools; in a
replay, the trace.

The runner asks an :class:`Environment` for each, never the clock or a tool directly, so
replay is the same runner with another environment (:mod:`._replay`), as Temporal's worker is.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from . import _attempt
from ._bindings import Binding
from ._model import ProposalStep, Tool
from ._model_clients import ModelClients
from ._outcomes import encode, outcome_of
from ._proposal import RankRequest, Reply, ask

__all__ = ["Environment"]


class Environment:
    """Where the clock, fresh ids and tool outcomes come from in a live run.

    Every value handed out is noted until the runner takes it (:meth:`handed`) into the trace
    event it belongs to, so replay can hand the same values back in the same order.

    ``agent.arun(..., env=...)`` takes one: a test subclasses it and overrides :meth:`now`
    and :meth:`new_id` for a fixed clock and ids (calling :meth:`note` with the value, as
    they do, so the trace records it). The other methods are the runner's, called by it.
    """

    def __init__(self) -> None:
        self._handed: dict[str, list[Any]] = {}
        self._said: tuple[dt.datetime, str] | None = None  # the last time now() handed out

    def now(self) -> dt.datetime:
        """The time now, in UTC: every stamp a step writes, and what a wait's timeout is
        judged against."""
        value = dt.datetime.now(dt.UTC)
        self._said = (value, self.note("clock", value.isoformat()))
        return value

    def text(self, value: dt.datetime) -> str:
        """``value.isoformat()``: as noted, when it is the time :meth:`now` last handed out
        (a step's stamps are; serialising it again cost ~4 µs a stamp)."""
        said = self._said
        return said[1] if said is not None and said[0] is value else value.isoformat()

    def new_id(self) -> str:
        """A fresh id: a random (version 4) UUID's 32 hex digits, as ``uuid.uuid4().hex``
        writes them, without building a ``UUID`` object (~4 µs an id)."""
        raw = bytearray(os.urandom(16))
        raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
        raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
        return self.note("ids", raw.hex())

    def call_order(self, args: list[dict[str, Any]]) -> list[int] | None:
        """The order to make a step's calls in (``args`` as the trace writes them), when not
        the order their precondition's solutions came in: a live run takes those as they
        come."""
        return None

    async def _invoke(
        self,
        tool: Tool,
        binding: Callable[[], Binding],
        args: Mapping[str, Any],
        deadline: asyncio.Timeout | None = None,
    ) -> Any:
        """Call ``tool`` through its binding. ``deadline``: the call's ``horis:timeout``,
        entered by the runner; held off while the binding opens (:meth:`Binding.open`), then
        started afresh, so it times the call alone."""
        try:
            b = binding()
            if b.opens:
                await _opened(b, tool, deadline)
            result = await b.call(args)
        except (asyncio.CancelledError, Exception) as e:
            self.note("outcomes", outcome_of(e, own_timeouts=True))
            raise
        if deadline is not None and deadline.expired():
            # it caught the cancellation its timeout sent and answered after it: no answer in
            # time, discarded as a thread's or an inline tool's late answer is (it landed, the
            # step taking past its horis:timeout), and recorded so for replay
            late = _attempt.current()
            if late is not None:
                late.answered = False
            self.note("outcomes", outcome_of(asyncio.CancelledError()))
            raise TimeoutError(f"{tool.name} answered after its horis:timeout")
        self.note("outcomes", {"returned": encode(result)})
        return result

    def _code(self, binding: Callable[[], Binding]) -> str | None:
        """The code behind a tool whose call needs an approval (:attr:`Binding.code`),
        recorded as ``code``: a replay hands it back, resolving no binding."""
        code = binding().code
        return None if code is None else self.note("code", code)

    async def remote(self, send: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
        """Send one commit to a system of record; its answer (or how it failed) is recorded
        as ``remote``, so a replay hands it back instead of sending (see _adapter_step)."""
        try:
            answer = await send()
        except (asyncio.CancelledError, Exception) as e:
            self.note("remote", outcome_of(e))
            raise
        self.note("remote", {"returned": encode(answer)})
        return answer

    async def held_by(
        self, read: Callable[[], Awaitable[list[list[list[str]]]]]
    ) -> list[list[list[str]]]:
        """Who holds each of a step's doubt nodes once its hold has settled on a shared world
        (other processes decide it), recorded as ``holders``: a replay hands it back."""
        return self.note("holders", await read())

    async def _rank(self, step: ProposalStep, request: RankRequest, clients: ModelClients) -> Reply:
        """Ask the step's model to rank the candidates, through the run's ``clients``; replay
        hands back the recorded reply."""
        reply = await ask(request, clients)
        self.note("rankings", reply.to_json())
        return reply

    def note(self, kind: str, value: Any) -> Any:
        """Note ``value`` as handed out (~9 a step: no empty list made for each, as
        ``setdefault`` would)."""
        handed = self._handed.get(kind)
        if handed is None:
            self._handed[kind] = [value]
        else:
            handed.append(value)
        return value

    def handed(self) -> dict[str, list[Any]]:
        """What was handed out since the last call (``clock``, ``ids``, ``outcomes``)."""
        out, self._handed = self._handed, {}
        return out


async def _opened(binding: Binding, tool: Tool, deadline: asyncio.Timeout | None) -> None:
    """Open ``binding`` with ``deadline`` held off meanwhile, then set to ``tool``'s full
    ``horis:timeout`` from now."""
    if deadline is None:
        await binding.open()
        return
    deadline.reschedule(None)
    await binding.open()
    deadline.reschedule(asyncio.get_running_loop().time() + tool.timeout)
