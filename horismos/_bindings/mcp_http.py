"""The MCP SDK's streamable HTTP transport with a cap on each message the server sends.

The SDK reads a JSON answer whole (``response.aread()``) and buffers one server-sent event up
to a fixed 1 MiB, whatever the tools bound to the server may return: a server answering with a
huge or endless JSON body fills the process's memory before the binding's own size check runs,
and an answer between 1 MiB and the binding's cap fails as a lost connection. This transport is
the SDK's own (``streamable_http_client`` with the client ``create_mcp_http_client`` builds, so
timeouts, headers and redirect handling are unchanged) with a response hook that wraps each
response body before the SDK reads it:

- a JSON body is held until it ends, at most ``limit`` bytes;
- an event stream is passed on one whole event at a time (an event ends at a blank line), each
  at most ``limit`` bytes.

Past ``limit`` the response is closed at once (the rest is never read) and, for the POST of a
JSON-RPC request, the SDK reads in its place a JSON-RPC error for that request
(:data:`~horismos._bindings.mcp_stdio.TOO_LARGE`), which
:class:`~horismos._bindings.mcp.McpSession` turns into :class:`~horismos.ResultTooLarge`: only
the pending call fails, the session keeps serving. Any other response (the GET stream of
server-initiated messages) fails as a read error, which the SDK treats as a dropped stream.
Bodies are asked for uncompressed (``Accept-Encoding: identity``) so the bytes counted are the
bytes the SDK parses.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from .mcp_stdio import TOO_LARGE

__all__ = ["capped_http_client"]

_LINE_END = re.compile(rb"\r\n|\r|\n")


@asynccontextmanager
async def capped_http_client(
    url: str, limit: int, headers: Mapping[str, str] | None = None
) -> AsyncGenerator[Any, None]:
    """``mcp.client.streamable_http.streamable_http_client(url)``, with each server message
    capped at ``limit`` bytes, and ``headers`` (the server's ``horis:header``) on every
    request."""

    async def cap(response: httpx2.Response) -> None:
        kind = response.headers.get("content-type", "").lower()
        if kind.startswith("text/event-stream"):
            response.stream = _CappedEvents(response.stream, limit, response.request)
        else:
            response.stream = _CappedBody(response.stream, limit, response.request)

    client = create_mcp_http_client(headers={**(headers or {}), "Accept-Encoding": "identity"})
    client.event_hooks = {"request": [], "response": [cap]}
    async with (
        client,
        streamable_http_client(url, http_client=client, max_sse_event_size=limit) as streams,
    ):
        yield streams


def _error_for(request: httpx2.Request, limit: int) -> bytes | None:
    """The JSON-RPC error that answers ``request`` in place of an oversized reply; None when
    ``request`` is not the POST of a JSON-RPC request (nothing waits on an answer to it)."""
    if request.method != "POST":
        return None
    try:
        sent = json.loads(request.content)
    except (ValueError, httpx2.RequestNotRead):  # not JSON, or a streamed body (not the SDK's)
        return None
    if not isinstance(sent, dict) or "method" not in sent or sent.get("id") is None:
        return None
    error = {"code": TOO_LARGE, "message": f"answer larger than {limit:,} bytes"}
    return json.dumps({"jsonrpc": "2.0", "id": sent["id"], "error": error}).encode()


class _Capped(httpx2.AsyncByteStream):
    """A response body read from ``upstream`` and closed as soon as a message passes ``limit``."""

    def __init__(self, upstream: Any, limit: int, request: httpx2.Request) -> None:
        self._upstream = upstream
        self._limit = limit
        self._request = request
        self._closed = False

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            await self._upstream.aclose()

    async def _overflow(self) -> bytes:
        """Stop reading; what the SDK reads instead, or a read error when nothing waits."""
        await self.aclose()
        too_large = _error_for(self._request, self._limit)
        if too_large is None:
            raise httpx2.ReadError(f"the server sent a message of more than {self._limit:,} bytes")
        return too_large


class _CappedBody(_Capped):
    """One JSON message: held until the body ends, so an oversized one can be replaced."""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        body: list[bytes] = []
        size = 0
        async for chunk in self._upstream:
            size += len(chunk)
            if size > self._limit:
                yield await self._overflow()
                return
            body.append(chunk)
        for chunk in body:
            yield chunk


class _CappedEvents(_Capped):
    """An event stream passed on whole events, each held until its blank line ends it."""

    async def _overflow_event(self) -> bytes:
        """:meth:`_overflow`'s answer as the event the SDK reads in its place."""
        return b"event: message\ndata: " + await self._overflow() + b"\n\n"

    async def __aiter__(self) -> AsyncIterator[bytes]:
        event: list[bytes] = []
        size = 0
        blank = True  # nothing yet on the current line
        after_cr = False  # the last byte was a CR, so a LF first in the next chunk ends no line
        async for chunk in self._upstream:
            start, pos = 0, 1 if after_cr and chunk[:1] == b"\n" else 0
            for end in _LINE_END.finditer(chunk, pos):
                if end.start() == pos and blank:  # a blank line: the event is complete
                    size += end.end() - start
                    if size > self._limit:
                        yield await self._overflow_event()
                        return
                    event.append(chunk[start : end.end()])
                    yield b"".join(event)
                    event, size, start = [], 0, end.end()
                blank, pos = True, end.end()
            if pos < len(chunk):
                blank = False
            after_cr = chunk[-1:] == b"\r"
            size += len(chunk) - start
            if size > self._limit:
                yield await self._overflow_event()
                return
            if start < len(chunk):
                event.append(chunk[start:])
        if event:
            yield b"".join(event)
