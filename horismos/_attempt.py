"""How far one call of a tool got — sent to it, answered by it — which decides a retry.

A tool that is not idempotent may be called again only when the failed call provably never
reached it; when it was sent and nothing came back (a timeout, a lost connection) it may have
acted, and its outcome is unknown. Only the binding knows when its request leaves (an HTTP
request's headers go out, an MCP ``tools/call`` is written, a Python function is entered) and
when an answer arrives, so it marks both on the :class:`Attempt` the runner opens around each
call; the runner reads them when the call fails. The marks travel with the call's recorded
outcome (see :mod:`._outcomes`), so replay decides the same way without reaching the tool.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Attempt", "answered", "any_sent", "current", "httpx_trace", "runs_until", "sent"]


@dataclass
class Attempt:
    """One call: ``sent`` once the request left, ``answered`` once a reply (even an error)
    arrived. Opened with ``with Attempt() as attempt:`` around the call."""

    sent: bool = False
    answered: bool = False
    acts: bool = True
    """False for a request that cannot act (a ranking model asked): its sending is no tool
    called, which a command failing later would say running it again calls again."""
    running: threading.Event | None = None
    """Set when the call's own thread returns, for a call that goes on there whether or not
    anyone still waits for it (a sync Python tool abandoned at its timeout)."""
    _token: Token[Attempt | None] | None = field(default=None, repr=False, compare=False)

    def __enter__(self) -> Attempt:
        self._token = _CURRENT.set(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._token is not None:
            _CURRENT.reset(self._token)
            self._token = None


_CURRENT: ContextVar[Attempt | None] = ContextVar("horismos_attempt", default=None)


_sent_here = False
"""True once a call of this process was sent: a command failing after that says what running
it again would call again."""


def any_sent() -> bool:
    """Whether any call of this process has been sent to its tool (which may have acted)."""
    return _sent_here


def current() -> Attempt | None:
    """The attempt of the call under way in this task, if any."""
    return _CURRENT.get()


def sent() -> None:
    """The binding's mark: the request is leaving now; from here on the tool may act."""
    _mark(answered=False)


def answered() -> None:
    """The binding's mark: the tool answered (a result or an error it reported)."""
    _mark(answered=True)


def _mark(*, answered: bool) -> None:
    """The call under way was sent (and ``answered``), as was one of this process."""
    global _sent_here
    attempt = _CURRENT.get()
    if attempt is None or attempt.acts:
        _sent_here = True
    if attempt is not None:
        attempt.sent = True
        attempt.answered = attempt.answered or answered


async def httpx_trace(event: str, info: Mapping[str, Any]) -> None:
    """httpx's trace hook (``extensions={"trace": httpx_trace}``): the request leaves when its
    headers start to go out. Until then its connection was still being made, so a deadline
    running out there is a call never sent, as a connection refused is."""
    if event.endswith(".send_request_headers.started"):
        sent()


def runs_until(done: threading.Event) -> None:
    """The binding's mark: the call runs in a thread of its own, which sets ``done`` when it
    returns; abandoned at a timeout, it goes on acting until then."""
    attempt = _CURRENT.get()
    if attempt is not None:
        attempt.running = done
