"""An MCP server for the binding tests and the benchmark, written with the SDK's ``MCPServer``.

    python tests/servers/mcp_server.py                 # stdio
    python tests/servers/mcp_server.py --http PORT     # streamable HTTP on 127.0.0.1:PORT/mcp
    python tests/servers/mcp_server.py --http PORT --json   # answering each request in JSON
    python tests/servers/mcp_server.py --http PORT --sse    # in an event stream past 10 ms
    python tests/servers/mcp_server.py --http PORT --token VAR  # "Bearer $VAR" or 401
    python tests/servers/mcp_server.py --http PORT --legacy  # no server/discover: a session id
    python tests/servers/mcp_server.py --http PORT --redirect-calls  # acts, stops listening, 307

Each tool plays one part: a good answer, an answer with more than the contract, a tool error,
a slow answer, prose instead of JSON, a crash in the middle of a call. ``echo`` answers with the
arguments exactly as they arrived on the wire, before the SDK drops the ones it does not know.

    python tests/servers/mcp_server.py --ledger FILE [--slow-start SECONDS [--slow-on N]]

With ``--ledger`` it writes a line ``start`` to FILE as it starts, and ``record`` one line
``record PATIENT`` per call: the side effects a test counts. With ``--slow-start`` its N-th
start (counted in the ledger; the first by default) sleeps that long before it serves: a
server slow to start, or to start again.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
import threading
import time
from typing import Any, TypedDict

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError

server = MCPServer("horismos-test")
_calls = itertools.count(1)
_received: dict[str, Any] = {}


async def _remember_arguments(ctx: Any, call_next: Any) -> Any:
    if ctx.method == "tools/call" and ctx.params is not None:
        _received["last"] = ctx.params.get("arguments")
    return await call_next(ctx)


server.middleware.append(_remember_arguments)


class Queued(TypedDict):
    queueRef: str
    internal: str


class Scored(TypedDict):
    score: int


@server.tool()
def assign(patient: str, queue: str) -> Queued:
    """A queue reference the effect declares, and an internal field it does not."""
    n = next(_calls)
    return {"queueRef": f"Q-{queue.rsplit('#', 1)[-1]}-{os.getpid()}-{n}",
            "internal": "server bookkeeping"}


@server.tool()
def echo(patient: str) -> dict[str, Any]:
    """The arguments as they arrived, keys sorted, as one JSON string."""
    return {"received": json.dumps(_received.get("last"), sort_keys=True)}


@server.tool()
def greeting(patient: str) -> dict[str, Any]:
    """What the environment Horismos started the server with says."""
    return {"greeting": os.environ.get("CLINIC_GREETING", "(unset)")}


@server.tool()
def score(patient: str, level: int, urgent: bool = False) -> Scored:
    return {"score": level * (2 if urgent else 1)}


@server.tool()
def needs_ward(patient: str, ward: str) -> dict[str, Any]:
    return {"ward": ward}


@server.tool()
def leaky(patient: str) -> dict[str, Any]:
    """No output schema: every field it returns is judged by the gate."""
    return {"queueRef": "Q-leaky", "diagnosis": "not yours to write"}


@server.tool(structured_output=False)
def text_json(patient: str) -> str:
    return json.dumps({"queueRef": "Q-from-text"})


@server.tool(structured_output=False)
def prose(patient: str) -> str:
    return "I queued them, probably."


@server.tool()
def fail(patient: str) -> dict[str, Any]:
    raise ToolError("the queue service is down")


@server.tool()
async def slow(patient: str) -> dict[str, Any]:
    await asyncio.sleep(2)
    return {"queueRef": "Q-late"}


@server.tool()
async def slow_noted(patient: str) -> dict[str, Any]:
    """``slow``, noting ``slow PATIENT`` in the ledger as the call arrives: a test cancels
    its caller once the call is known to be under way."""
    with open(_option("--ledger"), "a", encoding="utf-8") as ledger:
        ledger.write(f"slow {patient}\n")
    await asyncio.sleep(2)
    return {"queueRef": "Q-late"}


@server.tool()
def locked(patient: str) -> dict[str, Any]:
    """Answers with the server's own JSON-RPC error -32000, the code the SDK also gives a
    connection that closed."""
    raise MCPError(code=-32000, message="the ledger is locked by another clerk")


@server.tool()
def die(patient: str) -> dict[str, Any]:
    """The process exits while the call is in flight."""
    print("dying in the middle of a call", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool()
def leave(patient: str) -> dict[str, Any]:
    """Answers, then the process exits: a server gone between two calls."""
    threading.Timer(0.2, os._exit, (0,)).start()
    return {}


@server.tool()
def record(patient: str) -> dict[str, Any]:
    """A side effect a test counts: one line in the ledger per call."""
    with open(_option("--ledger"), "a", encoding="utf-8") as ledger:
        ledger.write(f"record {patient}\n")
    return {"queueRef": f"R-{os.getpid()}"}


@server.tool()
def record_then_die(patient: str) -> dict[str, Any]:
    """The call arrives and acts (a ledger line), then the process exits before answering."""
    with open(_option("--ledger"), "a", encoding="utf-8") as ledger:
        ledger.write(f"record {patient}\n")
    os._exit(3)


def _option(name: str, default: str = "") -> str:
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def _slow_start() -> None:
    path = _option("--ledger")
    if not path:
        return
    starts = 0
    if os.path.exists(path):
        with open(path, encoding="utf-8") as ledger:
            starts = sum(line == "start\n" for line in ledger)
    with open(path, "a", encoding="utf-8") as ledger:
        ledger.write("start\n")
    if starts + 1 == int(_option("--slow-on", "1")):
        time.sleep(float(_option("--slow-start", "0")))


@server.tool(structured_output=False)
def iri_with_space(patient: str) -> str:
    """A class-typed value that is no IRI, for p1 only."""
    ward = "a b>" if patient.endswith("#p1") else "w1"
    return json.dumps({"ward": f"{patient.rsplit('#', 1)[0]}#{ward}"})


@server.tool(structured_output=False)
def surrogate(patient: str) -> str:
    """A lone surrogate in the JSON text, for p1 only: escaped, as JSON allows it."""
    return '{"ref": "\\ud800"}' if patient.endswith("#p1") else '{"ref": "R-2"}'


@server.tool()
def noop(patient: str) -> dict[str, Any]:
    return {}


@server.tool()
async def huge(patient: str, size: int) -> dict[str, Any]:
    """An answer of about ``size`` bytes, to test the result cap; slow enough that a server
    run with ``--sse`` has committed to an event stream when it answers."""
    await asyncio.sleep(0.05)
    return {"queueRef": "x" * size}


if __name__ == "__main__":
    refuse = os.environ.get("HORIS_TEST_REFUSE_IF")
    if refuse and os.path.exists(refuse):  # a server that no longer starts, on cue
        print("refusing to start: " + refuse, file=sys.stderr, flush=True)
        sys.exit(1)
    _slow_start()
    if len(sys.argv) >= 3 and sys.argv[1] == "--http":
        server.settings.log_level = "WARNING"
        if "--sse" in sys.argv[3:]:  # a request running past 10 ms is answered as an event
            from mcp.server import _streamable_http_modern

            _streamable_http_modern._SSE_PING_INTERVAL = 0.01
        extra = sys.argv[3:]
        if "--token" in extra:  # a remote server that wants a bearer token on every request
            import uvicorn

            wanted = f"Bearer {os.environ[extra[extra.index('--token') + 1]]}".encode()
            app = server.streamable_http_app(json_response="--json" in extra)

            async def guarded(scope: Any, receive: Any, send: Any) -> None:
                if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") \
                        != wanted:
                    await send({"type": "http.response.start", "status": 401, "headers": []})
                    await send({"type": "http.response.body", "body": b""})
                    return
                await app(scope, receive, send)

            uvicorn.run(guarded, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
        elif "--redirect-calls" in extra:  # a tools/call is acted on, then answered 307 to
            import uvicorn  # its own URL once the server no longer listens: gone meanwhile

            app = server.streamable_http_app(json_response=True)
            listening: list[Any] = []

            async def redirecting(scope: Any, receive: Any, send: Any) -> None:
                if scope["type"] != "http" or scope["method"] != "POST":
                    await app(scope, receive, send)
                    return
                first = await receive()
                given = iter([first])

                async def again() -> Any:
                    return next(given, None) or await receive()

                if b'"tools/call"' not in first.get("body", b""):
                    await app(scope, again, send)
                    return

                async def swallowed(message: Any) -> None:
                    pass

                await app(scope, again, swallowed)  # it acts: the ledger line
                for s in listening[0].servers:
                    s.close()  # a connection to it is refused from here on
                await send({"type": "http.response.start", "status": 307, "headers": [
                    (b"location", b"/mcp"), (b"connection", b"close"),
                    (b"content-length", b"0")]})
                await send({"type": "http.response.body", "body": b""})

            listening.append(uvicorn.Server(uvicorn.Config(
                redirecting, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")))
            listening[0].run()
        elif "--legacy" in extra:  # a server of before the 2026 protocol: one session, by id
            import uvicorn

            app = server.streamable_http_app(json_response="--json" in extra)

            async def legacy(scope: Any, receive: Any, send: Any) -> None:
                if scope["type"] != "http" or scope["method"] != "POST":
                    await app(scope, receive, send)
                    return
                first = await receive()
                if b'"server/discover"' in first.get("body", b""):  # unknown: the client
                    asked = json.loads(first["body"])  # falls back to initialize
                    error = {"code": -32601, "message": "Method not found"}
                    body = json.dumps({"jsonrpc": "2.0", "id": asked["id"], "error": error})
                    await send({"type": "http.response.start", "status": 200,
                                "headers": [(b"content-type", b"application/json")]})
                    await send({"type": "http.response.body", "body": body.encode()})
                    return
                given = iter([first])

                async def again() -> Any:
                    return next(given, None) or await receive()

                await app(scope, again, send)

            uvicorn.run(legacy, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
        else:
            asyncio.run(server.run_streamable_http_async(
                host="127.0.0.1", port=int(sys.argv[2]), json_response="--json" in extra))
    else:
        server.run()
