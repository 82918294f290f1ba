"""An MCP server over streamable HTTP whose tool acts, and whose answer is then replaced.

    python tests/servers/mcp_mangled.py PORT LEDGER MODE

``charge`` appends its order to LEDGER (it acted), then the HTTP answer to that POST is, by
MODE: ``html`` a 200 ``text/html`` page (a proxy's), ``202`` a 202 Accepted with no body,
``garbage`` a 200 ``application/json`` body that is no JSON, ``event`` a 200 event stream whose
one event is no JSON, ``502`` / ``504`` a gateway's page with that status (a proxy in front of
the server that gave up on it), ``500`` the server's own JSON-RPC error, ``envoy-reset`` /
``envoy-retried`` / ``envoy-unhealthy`` / ``envoy-refused`` Envoy's local 503 for a connection
reset (after a retry), no healthy upstream, a connection that could not be made, ``503-json``
the server's own 503 with a JSON-RPC error saying ``the bank is closed``. Every other request
is answered by the SDK's server as usual (JSON answers).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer

PORT, LEDGER, MODE = int(sys.argv[1]), sys.argv[2], sys.argv[3]
server = MCPServer("bank")


@server.tool()
def charge(order: str) -> dict[str, Any]:
    with open(LEDGER, "a", encoding="utf-8") as f:
        f.write(order + "\n")
    return {"paymentRef": "P-" + order.rsplit("#", 1)[-1]}


app = server.streamable_http_app(json_response=True)
ANSWERS = {
    "html": (200, b"text/html", b"<html><body>done</body></html>"),
    "202": (202, None, b""),
    "garbage": (200, b"application/json", b"{not json"),
    "event": (200, b"text/event-stream", b"event: message\ndata: {not json\n\n"),
    "502": (502, b"text/html", b"<html><body>Bad Gateway</body></html>"),
    "504": (504, b"text/html", b"<html><body>Gateway Timeout</body></html>"),
    "500": (500, b"text/plain", b"Internal Server Error"),
    "envoy-reset": (503, b"text/plain", b"upstream connect error or disconnect/reset before "
                    b"headers. reset reason: connection termination"),
    "envoy-retried": (503, b"text/plain", b"upstream connect error or disconnect/reset before "
                      b"headers. retried and the latest reset reason: connection failure"),
    "envoy-unhealthy": (503, b"text/plain", b"no healthy upstream"),
    "envoy-refused": (503, b"text/plain", b"upstream connect error or disconnect/reset before "
                      b"headers. reset reason: connection failure"),
    "503-json": (503, b"application/json", b'{"jsonrpc": "2.0", "id": ID, "error": '
                 b'{"code": -32001, "message": "the bank is closed"}}'),
}


async def mangled(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] != "http" or scope["method"] != "POST":
        await app(scope, receive, send)
        return
    chunks = []
    while True:
        message = await receive()
        chunks.append(message)
        if not message.get("more_body"):
            break
    body = b"".join(m.get("body", b"") for m in chunks)
    given = iter(chunks)

    async def again() -> Any:
        return next(given, None) or await receive()

    if b'"tools/call"' not in body:
        await app(scope, again, send)
        return

    async def dropped(message: Any) -> None:
        pass

    await app(scope, again, dropped)  # the tool acts; what it answered is never sent
    status, kind, text = ANSWERS[MODE]
    text = text.replace(b"ID", json.dumps(json.loads(body)["id"]).encode())
    headers = [(b"content-type", kind)] if kind else []
    if MODE.startswith("envoy"):
        headers.append((b"server", b"envoy"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": text})


uvicorn.run(mangled, host="127.0.0.1", port=PORT, log_level="warning")
