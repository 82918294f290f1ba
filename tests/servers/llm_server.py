"""A local model server for tests: the Anthropic Messages and OpenAI chat-completions wire formats.

It listens on 127.0.0.1 (a free port) in a background thread and answers each request with the
next scripted behaviour:

- ``{"text": "..."}`` — a well-formed reply whose message content is that text;
- ``{"stall": True}`` — no answer until the server is closed (the client's timeout fires);
- ``{"status": 500, "body": "..."}`` — an HTTP error;
- ``{"tool_calls": [{"name": "...", "arguments": {...}}]}`` — (OpenAI only) the model calls
  functions: ``finish_reason`` ``tool_calls``, each with an id and its arguments as JSON text.

A request's ``tools`` are held to OpenAI's rule for a function's name (letters, digits, ``_``
and ``-``, at most 64): another is answered 400, as the real API answers it.

``POST /v1/messages`` speaks Anthropic (``x-api-key`` and ``anthropic-version`` required when
the server has a key), ``POST /v1/chat/completions`` speaks OpenAI (``Authorization: Bearer``).
Every request is kept in :attr:`LlmServer.requests` with its path, headers and JSON body, and
every connection accepted is counted in :attr:`LlmServer.connections`: it speaks HTTP/1.1 and
keeps a connection open for the next request, as a real endpoint does (closed when the server
is, so a server stopped answers nothing more on it).

Run it on its own with ``python tests/servers/llm_server.py TEXT`` to answer TEXT forever.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import sys
import threading
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["LlmServer"]

_FUNCTION_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")


class LlmServer:
    """A scripted model endpoint; ``with LlmServer([...], key="k") as s: s.url``; on ``port``
    (one a server stopped before had: the same endpoint started again), else a free one."""

    def __init__(self, script: Iterable[dict[str, Any]] = (), *, key: str | None = None,
                 repeat: dict[str, Any] | None = None, port: int = 0) -> None:
        self.script = list(script)
        self.repeat = repeat
        self.key = key
        self.requests: list[dict[str, Any]] = []
        self._release = threading.Event()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # a connection kept open for the next request

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                server._answer(self, body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._http = _Server(("127.0.0.1", port), Handler)
        # polled every 10 ms: a close waited up to 0.5 s at serve_forever's default
        self._thread = threading.Thread(target=self._http.serve_forever,
                                        kwargs={"poll_interval": 0.01}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._http.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def connections(self) -> int:
        """How many connections the server has accepted."""
        return self._http.accepted

    def __enter__(self) -> LlmServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self._release.set()
        self._http.shutdown()
        self._http.server_close()
        self._http.drop_open()

    def _next(self) -> dict[str, Any]:
        with self._lock:
            if self.script:
                return self.script.pop(0)
        if self.repeat is not None:
            return self.repeat
        return {"status": 500, "body": "the test scripted no more answers"}

    def _answer(self, h: BaseHTTPRequestHandler, body: Any) -> None:
        path = h.path.rstrip("/")
        headers = {k.lower(): v for k, v in h.headers.items()}
        with self._lock:
            self.requests.append({"path": path, "headers": headers, "body": body})
        if path == "/v1/messages":
            problem = self._check_anthropic(headers, body)
        elif path == "/v1/chat/completions":
            problem = self._check_openai(headers, body)
        else:
            problem = (404, f"no endpoint {path}")
        if problem is not None:
            return _send(h, problem[0], {"error": {"message": problem[1]}})
        behaviour = self._next()
        if behaviour.get("stall"):
            self._release.wait(60)
            return None
        if "status" in behaviour:
            return _send(h, behaviour["status"], {"error": {"message": behaviour.get("body")}})
        if "tool_calls" in behaviour:
            calls = [{"id": f"call_{i}", "type": "function",
                      "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}}
                     for i, c in enumerate(behaviour["tool_calls"])]
            return _send(h, 200, {
                "id": "chatcmpl-test", "object": "chat.completion", "created": 0,
                "model": body["model"],
                "choices": [{"index": 0, "finish_reason": "tool_calls",
                             "message": {"role": "assistant", "content": None,
                                         "tool_calls": calls}}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}})
        text = behaviour["text"]
        if path == "/v1/messages":
            return _send(h, 200, {
                "id": "msg_test", "type": "message", "role": "assistant",
                "model": body["model"], "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 10}})
        return _send(h, 200, {
            "id": "chatcmpl-test", "object": "chat.completion", "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}})

    def _check_anthropic(self, headers: dict[str, str], body: Any) -> tuple[int, str] | None:
        if self.key is not None and headers.get("x-api-key") != self.key:
            return 401, "invalid x-api-key"
        if "anthropic-version" not in headers:
            return 400, "anthropic-version header is required"
        if not isinstance(body, dict) or not {"model", "max_tokens", "messages"} <= body.keys():
            return 400, "model, max_tokens and messages are required"
        return None

    def _check_openai(self, headers: dict[str, str], body: Any) -> tuple[int, str] | None:
        if self.key is not None and headers.get("authorization") != f"Bearer {self.key}":
            return 401, "invalid bearer token"
        if not isinstance(body, dict) or not {"model", "messages"} <= body.keys():
            return 400, "model and messages are required"
        for i, tool in enumerate(body.get("tools") or []):
            name = str((tool.get("function") or {}).get("name"))
            if not _FUNCTION_NAME.fullmatch(name):
                return 400, (f"Invalid 'tools[{i}].function.name': string does not match "
                             "pattern. Expected a string that matches the pattern "
                             "'^[a-zA-Z0-9_-]{1,64}$'.")
        return None


class _Server(ThreadingHTTPServer):
    """Counts the connections it accepts, and keeps the open ones to close with the server."""

    daemon_threads = True

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.accepted = 0
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._lock:
            self.accepted += 1
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def drop_open(self) -> None:
        with self._lock:
            open_now, self._open = list(self._open), set()
        for s in open_now:
            with contextlib.suppress(OSError):  # closed by its client already
                s.shutdown(socket.SHUT_RDWR)


def _send(h: BaseHTTPRequestHandler, status: int, payload: dict[str, Any]) -> None:
    data = json.dumps(payload).encode()
    h.send_response(status)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", str(len(data)))
    h.end_headers()
    h.wfile.write(data)


if __name__ == "__main__":
    with LlmServer(repeat={"text": sys.argv[1] if len(sys.argv) > 1 else "{}"}) as s:
        print(s.url, flush=True)
        threading.Event().wait()
