"""The MCP SDK's streamable HTTP transport with a cap on each message the server sends.

The SDK reads a JSON answer whole (``response.aread()``) and buffers one server-sent event up
to a fixed 1 MiB, whatever the tools bound to the server may return: a server answering with a
huge or endless JSON body fills the process's memory before the binding's own size check runs,
and an answer between 1 MiB and the binding's cap fails as a lost connection. This transport is
the SDK's own (``streamable_http_client`` with a client made as ``create_mcp_http_client`` makes
it, from the SDK's own timeouts, so timeouts, headers and redirect handling are unchanged) with
a response hook that wraps each response body before the SDK reads it:

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

The same hook reads a request's answer that says it succeeded (a 2xx) with nothing an MCP
client reads: a 202 Accepted (no answer follows), a body neither JSON nor an event stream (a
proxy's HTML page), a JSON body that does not parse. The SDK delivered each as a JSON-RPC
error of its own making, which read as the server refusing the call, so a tool that had acted
was not held in doubt and a rerun called it again. Here each is answered instead with the
error :data:`UNREADABLE`, which :class:`~horismos._bindings.mcp.McpSession` turns into
:class:`~horismos.UnreadableAnswer`, as the HTTP binding does a 2xx it cannot read. A request
answered 502 or 504 by a gateway in front of the server, or by Envoy's 503 for a connection
reset after the request was passed on, is answered with :data:`GATEWAY`, which the session
takes for no answer at all (:mod:`.gateways`); the start of a 503's body is read here to tell
(the SDK still reads the whole body after, a server's own JSON-RPC error in it included).

A ``tools/call`` whose POST could not connect — the server gone between two calls (connection
refused), a name that does not resolve, no TLS handshake, the connect timeout — never left
this process: httpx2 raises ``ConnectError`` and ``ConnectTimeout`` only while it makes the
connection, before any byte of the request is written. The SDK let the error end the whole
transport, and the call read as "closed the connection during the call", sent with no answer,
so a tool that is not idempotent was held in doubt for a call that reached no one. The client
here answers that one request instead with the error :data:`NOT_CONNECTED`, which the session
takes for :class:`~horismos.Unreachable` (and starts again before the next call). A request
whose connection was made and then failed (reset, a read timeout) is untouched: it may have
been read, and stays a call with no answer.

A server of the protocol before 2026 keeps a session by id; started again between two calls,
it knows no such session and answers the next call 404, as the MCP spec bids, without acting
on it. The SDK read that as the server refusing the call, and the session stayed open, so
every later call of the run was refused the same. That answer is delivered as
:data:`SESSION_GONE`, which the session takes for :class:`~horismos.Unreachable` (nothing
done; ``horis:retries`` tries again) and starts again before the next call.

A call whose ``horis:timeout`` runs out while its POST is still connecting (a host that drops
the connection attempt: the SDK's own connect timeout is 30 s) never left either. The session
hands each call a :class:`Leaving` (in :data:`LEAVING`: the SDK sends each request's POST in a
copy of its caller's context), which this client marks when it is handed the POST and when the
request's headers start to go out (httpx2's ``trace`` extension); a caller that gives up before
then marks it abandoned, and the POST is stopped before its first byte if it connects later.
The caller counts its call as sent unless its :class:`Leaving` says otherwise, so a POST never
seen here (the SDK no longer passing the context on) is a call sent.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import asynccontextmanager
from contextvars import ContextVar
from http import HTTPStatus
from typing import Any

import httpx2
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

from .gateways import GATEWAY_FAILED, SAID_BYTES, gateway_said, no_answer
from .mcp_stdio import TOO_LARGE

__all__ = [
    "GATEWAY",
    "LEAVING",
    "NOT_CONNECTED",
    "SESSION_GONE",
    "UNREADABLE",
    "UNSENT",
    "Leaving",
    "capped_http_client",
]

UNREADABLE = -32098
"""The JSON-RPC error code a request's unreadable 2xx answer is delivered as."""
GATEWAY = -32097
"""The JSON-RPC error code a request answered by a gateway's failure (:mod:`.gateways`) is
delivered as: the SDK made it "Server returned an error response", the server's refusal."""
NOT_CONNECTED = -32096
"""The JSON-RPC error code a ``tools/call`` whose POST could not connect is delivered as: it
never left (see the module's doc)."""
SESSION_GONE = -32095
"""The JSON-RPC error code a ``tools/call`` answered 404 on a session is delivered as: the
server does not know the session (restarted since, or it ended it), and per the MCP spec
refuses the request unread (see the module's doc)."""
UNSENT = secrets.token_hex(16)
"""The ``data`` of the errors :data:`NOT_CONNECTED` and :data:`SESSION_GONE` this client
answers a call with: their codes lie in JSON-RPC's range for a server's own errors, and a
server refusing a call it read with one of them is a call sent, not one never sent (a second
call of a tool that is not idempotent). A server cannot say this process's token."""


class Leaving:
    """How far one ``tools/call``'s POST got, as the client sending it saw (module's doc)."""

    seen = False
    """This client was handed the POST."""
    sent = False
    """Its headers started to go out: from here on the server may act on it."""
    abandoned = False
    """Its caller gave up before it was sent: it is stopped before its first byte."""

    @property
    def unsent(self) -> bool:
        """Provably never left: handed to this client, and never written."""
        return self.seen and not self.sent


LEAVING: ContextVar[Leaving | None] = ContextVar("horismos_mcp_leaving", default=None)
"""The :class:`Leaving` of the call under way in this context, if any."""


class _Abandoned(Exception):
    """Its caller gave up on the call while its POST was connecting."""


_UNCONNECTED = (httpx2.ConnectError, httpx2.ConnectTimeout, httpx2.PoolTimeout, _Abandoned)
"""Raised before a request is written: no connection was made (or none came free), or its
caller gave up before it was."""

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
        status = response.status_code
        success = 200 <= status < 300
        if status in GATEWAY_FAILED or status == HTTPStatus.SERVICE_UNAVAILABLE:
            failed = _error_for(response.request, limit, GATEWAY, gateway_said(status))
            # a 503 says in its body whether it is a gateway's (read only for a request)
            if failed is not None and (
                status in GATEWAY_FAILED or no_answer(status, await _start_of(response))
            ):
                await _answer_with(response, failed)
                return
        if status == 404 and "mcp-session-id" in response.request.headers:
            gone = _error_for(response.request, limit, SESSION_GONE, "404, no such session", UNSENT)
            if gone is not None and _calls(response.request):
                await _answer_with(response, gone)
                return
        if success and (status == 202 or not kind.startswith(_READ)):
            said = (
                "202 Accepted, saying no answer follows"
                if status == 202
                else f"{status} {kind or 'with no content type'}"
            )
            unread = _error_for(response.request, limit, UNREADABLE, said)
            if unread is not None:  # a request waits on it: the SDK reads this in its place
                await _answer_with(response, unread)
                return
        if kind.startswith("text/event-stream"):
            response.stream = _CappedEvents(response.stream, limit, response.request, success)
        else:
            response.stream = _CappedBody(response.stream, limit, response.request, success)

    client = _Client(
        # create_mcp_http_client's timeouts, which makes a plain AsyncClient
        timeout=httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT),
        headers={**(headers or {}), "Accept-Encoding": "identity"},
    )
    client.event_hooks = {"request": [], "response": [cap]}
    async with (
        client,
        streamable_http_client(url, http_client=client, max_sse_event_size=limit) as streams,
    ):
        yield streams


class _Client(httpx2.AsyncClient):
    """The SDK's client, but a ``tools/call`` it could not connect for is answered with
    :data:`NOT_CONNECTED` rather than raise: raised, the error ended the SDK's transport and
    every call on it read as a lost connection (see the module's doc)."""

    async def send(self, request: httpx2.Request, **kwargs: Any) -> httpx2.Response:
        call = _calls(request)
        leaving = LEAVING.get() if call else None
        if leaving is not None:
            leaving.seen = True

            async def trace(event: str, info: Mapping[str, Any]) -> None:
                if event.endswith(".send_request_headers.started"):
                    if leaving.abandoned:
                        raise _Abandoned("the call's caller gave up before it connected")
                    leaving.sent = True

            request.extensions["trace"] = trace
        try:
            return await super().send(request, **kwargs)
        except _UNCONNECTED as e:
            said = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
            unsent = _error_for(request, 0, NOT_CONNECTED, said, UNSENT) if call else None
            if unsent is None:  # the handshake's, the event stream's: the SDK's to handle
                raise
            return httpx2.Response(
                200, headers={"content-type": "application/json"}, content=unsent, request=request
            )


def _calls(request: httpx2.Request) -> bool:
    """Whether ``request`` is the POST of a ``tools/call``."""
    try:
        sent = json.loads(request.content) if request.method == "POST" else None
    except (ValueError, httpx2.RequestNotRead):
        return False
    return isinstance(sent, dict) and sent.get("method") == "tools/call"


async def _answer_with(response: httpx2.Response, error: bytes) -> None:
    """Replace ``response`` with the JSON-RPC ``error`` for the SDK to read; the rest of its
    body is never read."""
    if isinstance(response.stream, httpx2.AsyncByteStream):
        await response.stream.aclose()
    response.status_code = 200
    response.headers["content-type"] = "application/json"
    response.stream = httpx2.ByteStream(error)


async def _start_of(response: httpx2.Response) -> bytes:
    """The first :data:`~.gateways.SAID_BYTES` (or so) of ``response``'s body, read now; the
    body stays whole for the SDK, which reads a JSON-RPC error in it (see the module's doc)."""
    upstream = response.stream
    if not isinstance(upstream, httpx2.AsyncByteStream):  # not an async client's
        return b""
    rest = aiter(upstream)
    held: list[bytes] = []
    size = 0
    while size < SAID_BYTES:
        try:
            chunk = await anext(rest)
        except StopAsyncIteration:
            break
        held.append(chunk)
        size += len(chunk)
    response.stream = _Held(held, rest, upstream)
    return b"".join(held)


class _Held(httpx2.AsyncByteStream):
    """A body whose start was read already (:func:`_start_of`): that start, then the rest."""

    def __init__(self, held: list[bytes], rest: AsyncIterator[bytes], upstream: Any) -> None:
        self._held = held
        self._rest = rest
        self._upstream = upstream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._held:
            yield chunk
        async for chunk in self._rest:
            yield chunk

    async def aclose(self) -> None:
        close = getattr(self._rest, "aclose", None)
        if close is not None:
            await close()
        await self._upstream.aclose()


_READ = ("application/json", "text/event-stream")
"""The answers the SDK reads."""


def _error_for(
    request: httpx2.Request,
    limit: int,
    code: int = TOO_LARGE,
    message: str | None = None,
    data: str | None = None,
) -> bytes | None:
    """The JSON-RPC error that answers ``request`` in place of an oversized reply (or, with
    ``code`` and ``message``, of one it cannot read; ``data``: its ``data``); None when
    ``request`` is not the POST of a JSON-RPC request (nothing waits on an answer to it)."""
    if request.method != "POST":
        return None
    try:
        sent = json.loads(request.content)
    except (ValueError, httpx2.RequestNotRead):  # not JSON, or a streamed body (not the SDK's)
        return None
    if not isinstance(sent, dict) or "method" not in sent or sent.get("id") is None:
        return None
    error: dict[str, Any] = {
        "code": code,
        "message": message or f"answer larger than {limit:,} bytes",
    }
    if data is not None:
        error["data"] = data
    return json.dumps({"jsonrpc": "2.0", "id": sent["id"], "error": error}).encode()


class _Capped(httpx2.AsyncByteStream):
    """A response body read from ``upstream`` and closed as soon as a message passes ``limit``;
    in a 2xx answer to a request (``success``), a message that is no JSON object is replaced
    by the error :data:`UNREADABLE` (see the module's doc)."""

    def __init__(
        self, upstream: Any, limit: int, request: httpx2.Request, success: bool = False
    ) -> None:
        self._upstream = upstream
        self._limit = limit
        self._request = request
        self._closed = False
        self._success = success

    def _unreadable(self, message: bytes) -> bytes | None:
        """What the SDK reads in place of ``message`` when it is no JSON object in a 2xx
        answer to a request; None otherwise."""
        if not self._success or _json_object(message):
            return None
        said = f"{_preview(message)}, not JSON"
        return _error_for(self._request, self._limit, UNREADABLE, said)

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
    """One JSON message: held until the body ends, so an oversized or unreadable one can be
    replaced."""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        body: list[bytes] = []
        size = 0
        async for chunk in self._upstream:
            size += len(chunk)
            if size > self._limit:
                yield await self._overflow()
                return
            body.append(chunk)
        whole = b"".join(body)
        yield self._unreadable(whole) or whole


def _json_object(body: bytes) -> bool:
    try:
        return isinstance(json.loads(body), dict)
    except (ValueError, UnicodeDecodeError):
        return False


def _preview(body: bytes, limit: int = 80) -> str:
    text = body[:limit].decode("utf-8", "replace").strip()
    return repr(text + ("…" if len(body) > limit else "")) if text else "an empty body"


class _CappedEvents(_Capped):
    """An event stream passed on whole events, each held until its blank line ends it."""

    def _unreadable_event(self, event: bytes) -> bytes | None:
        """The event the SDK reads in place of a message ``event`` whose data is no JSON
        object (:meth:`_Capped._unreadable`); None for any other event (a priming event with
        no data, a comment, another kind)."""
        lines = _LINE_END.split(event)
        kinds = [line[6:].strip() for line in lines if line.startswith(b"event:")]
        data = [line[5:].removeprefix(b" ") for line in lines if line.startswith(b"data:")]
        if not data or (kinds and kinds[-1] != b"message"):
            return None
        unread = self._unreadable(b"\n".join(data))
        return None if unread is None else b"event: message\ndata: " + unread + b"\n\n"

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
                    whole = b"".join(event)
                    unread = self._unreadable_event(whole)
                    if unread is not None:
                        await self.aclose()
                        yield unread
                        return
                    yield whole
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
