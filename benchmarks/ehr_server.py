"""The triage example's stand-in EHR (``examples/triage/ehr_client.py``) served over the wire,
so ``bench_replay.py`` can measure runs whose tools sit behind an HTTP or an MCP binding.

    python benchmarks/ehr_server.py --http    # JSON over HTTP on 127.0.0.1; prints the port
    python benchmarks/ehr_server.py           # MCP over stdio (the SDK's MCPServer)

Both serve ``assign_queue`` and ``notify_nurse`` by calling the same ``ehr_client`` functions
the ``python:`` binding calls: class-typed arguments arrive as IRI strings, and the answers
(``{"queueRef": "Q-<LEVEL>-<n>"}``, ``{"assignedNurse": <the nurse IRI>}``) go back as JSON.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypedDict

from rdflib import URIRef

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples" / "triage"))

import ehr_client

__all__ = ["main"]


class Queued(TypedDict):
    queueRef: str


class Paged(TypedDict):
    assignedNurse: str


def assign_queue(patient: str, queue: str) -> Queued:
    """Queue the patient; the EHR answers with a reference for the queue entry."""
    return {"queueRef": str(ehr_client.assign_queue(URIRef(patient), URIRef(queue))["queueRef"])}


def notify_nurse(patient: str, nurse: str, ref: str) -> Paged:
    """Page the nurse about the queue entry ``ref``; the pager confirms who was paged."""
    paged = ehr_client.notify_nurse(URIRef(patient), URIRef(nurse), ref)
    return {"assignedNurse": str(paged["assignedNurse"])}


_TOOLS: dict[str, Callable[..., Any]] = {"/assign_queue": assign_queue,
                                          "/notify_nurse": notify_nurse}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"     # keep-alive: the binding reuses one connection
    disable_nagle_algorithm = True    # headers and body go out at once, not 40 ms apart

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        tool = _TOOLS.get(self.path)
        try:
            status, data = (200, json.dumps(tool(**json.loads(body))).encode()) if tool else (
                404, b'{"error": "no such tool"}')
        except (TypeError, ValueError) as e:
            status, data = 400, json.dumps({"error": str(e)}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _serve_http() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)  # the parent reads the port from this line
    server.serve_forever()


def _serve_mcp() -> None:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("ehr")
    server.tool()(assign_queue)
    server.tool()(notify_nurse)
    server.run()


def main() -> None:
    if sys.argv[1:] == ["--http"]:
        _serve_http()
    else:
        _serve_mcp()


if __name__ == "__main__":
    main()
