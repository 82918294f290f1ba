"""Each message an MCP server sends over streamable HTTP is capped, as over stdio: an answer
just under the cap lands, one far past it is refused as :class:`ResultTooLarge` after reading
no more than the cap, and the session keeps serving. Against the real test server (SDK
``MCPServer``) on 127.0.0.1, answering in server-sent events and in JSON.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from conftest import PREFIXES
from listening import mcp_http_server
from rdflib import Namespace

from horismos import Agent, ResultTooLarge, World

EX = Namespace("http://example.org/clinic#")


@pytest.fixture(scope="module", params=["sse", "json"])
def url(request: pytest.FixtureRequest) -> Iterator[str]:
    with mcp_http_server(f"--{request.param}") as served:
        yield served


class _Counted(httpx2.AsyncByteStream):
    def __init__(self, upstream: Any, read: list[int]) -> None:
        self.upstream, self.read = upstream, read

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.upstream:
            self.read[0] += len(chunk)
            yield chunk

    async def aclose(self) -> None:
        await self.upstream.aclose()


@pytest.fixture
def received(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Bytes of response bodies read off the network, whoever reads them."""
    read = [0]
    send = httpx2.AsyncHTTPTransport.handle_async_request

    async def counted(self: Any, request: httpx2.Request) -> httpx2.Response:
        response = await send(self, request)
        response.stream = _Counted(response.stream, read)
        return response

    monkeypatch.setattr(httpx2.AsyncHTTPTransport, "handle_async_request", counted)
    return read


def agent(folder: Path, url: str, world: str, cap: int | None = None) -> tuple[Agent, World]:
    limit = f"horis:maxResultBytes {cap} ;" if cap is not None else ""
    (folder / "d.ttl").write_text(PREFIXES + f"""
:Patient a owl:Class .
:size a owl:DatatypeProperty .
:ref a owl:DatatypeProperty .
:remote a horis:McpServer ; horis:url "{url}" .
:t.huge a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ;
                  horis:arg [ horis:name "size" ; horis:type xsd:integer ] ] ;
    horis:effect [ horis:subject "patient" ;
                   horis:asserts [ horis:property :ref ; horis:key "queueRef" ;
                                   horis:type xsd:string ] ] ;
    {limit} horis:binding "mcp://remote/huge" ; horis:timeout "60s" .
:Flow a horis:Workflow ; horis:focusType :Patient ; horis:start :Big .
:Big a horis:ActionStep ; horis:tool :t.huge ; horis:requires "?this :size ?size ." ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
""")
    (folder / "w.ttl").write_text(PREFIXES + world)
    return Agent.from_files(folder / "d.ttl"), World.from_files(folder / "w.ttl")


def test_an_answer_just_under_the_cap_lands(tmp_path: Path, url: str) -> None:
    # the default cap (1 MiB) allows a message of 2 MiB + 64 KiB: the result travels twice
    a, world = agent(tmp_path, url, ":p1 a :Patient ; :size 1000000 .\n")
    run = a.run(world, all=True)
    assert run.status == "completed", run.error
    assert len(str(world.graph.value(EX.p1, EX.ref))) == 1_000_000


def test_an_answer_far_past_the_cap_is_refused_unread_and_the_session_serves_on(
        tmp_path: Path, url: str, received: list[int]) -> None:
    limit = 2 * 10_000 + 64 * 1024  # the message cap for a tool capped at 10,000 bytes
    a, world = agent(tmp_path, url, f":p1 a :Patient ; :size {50 * limit} .\n"
                                    ":p2 a :Patient ; :size 100 .\n", cap=10_000)
    run = a.run(world, all=True)
    errors = [s.error for i in run.instances for s in i.steps if s.error is not None]
    assert len(errors) == 1 and isinstance(errors[0], ResultTooLarge), errors
    assert "horis:maxResultBytes" in str(errors[0])
    assert world.graph.value(EX.p1, EX.ref) is None
    assert str(world.graph.value(EX.p2, EX.ref)) == "x" * 100  # the same session, after
    assert received[0] < 3 * limit, f"{received[0]:,} bytes read for a {50 * limit:,}-byte answer"


class _Chunks(httpx2.AsyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks, self.read, self.closed = chunks, 0, False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            self.read += len(chunk)
            yield chunk

    async def aclose(self) -> None:
        self.closed = True


CALL = httpx2.Request("POST", "http://127.0.0.1/mcp",
                      json={"jsonrpc": "2.0", "id": 7, "method": "tools/call"})
ERROR = (b'{"jsonrpc": "2.0", "id": 7, "error": '
         b'{"code": -32099, "message": "answer larger than 5,000 bytes"}}')


def _pieces(stream: httpx2.AsyncByteStream) -> list[bytes]:
    async def read() -> list[bytes]:
        return [piece async for piece in stream]

    return asyncio.run(read())


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_an_event_stream_passes_unchanged_one_whole_event_at_a_time(newline: bytes) -> None:
    from horismos._bindings.mcp_http import _CappedEvents

    events = [b"event: message" + newline + b'data: {"n": %d}' % n + newline * 2
              for n in range(30)]
    data = b"".join(events)
    rnd = random.Random(7)
    for _ in range(100):
        cuts = sorted(rnd.sample(range(1, len(data)), 40))
        chunks = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
        pieces = _pieces(_CappedEvents(_Chunks(chunks), 64, CALL))
        assert b"".join(pieces) == data
        # each event whole in one piece (a CRLF split after its CR may trail into the next)
        assert all(any(e.rstrip(b"\r\n") in p for p in pieces) for e in events)


def test_an_event_past_the_cap_is_replaced_by_the_error_and_the_rest_never_read() -> None:
    from horismos._bindings.mcp_http import _CappedBody, _CappedEvents

    big = b"data: " + b"x" * 100_000 + b"\n\n"
    upstream = _Chunks([b"data: 1\n\n", *(big[i:i + 1000] for i in range(0, len(big), 1000))])
    pieces = _pieces(_CappedEvents(upstream, 5000, CALL))
    assert pieces == [b"data: 1\n\n", b"event: message\ndata: " + ERROR + b"\n\n"]
    assert upstream.closed and upstream.read < 7000
    upstream = _Chunks([b"x" * 1000] * 100)
    assert _pieces(_CappedBody(upstream, 5000, CALL)) == [ERROR]
    assert upstream.closed and upstream.read < 7000
    with pytest.raises(httpx2.ReadError, match="more than 5,000 bytes"):
        _pieces(_CappedBody(_Chunks([b"x" * 1000] * 100), 5000, httpx2.Request("GET", CALL.url)))
