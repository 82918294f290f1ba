"""A loopback FHIR R4 server on 127.0.0.1: the versioned REST semantics adapters rely on.

Why not a real FHIR server: the tests must run in seconds in CI without a JVM start per test
module; this server implements exactly the parts of the FHIR R4 RESTful API an adapter depends
on, as the specification words them:

- read ``GET /Type/id`` with ``ETag: W/"n"`` and ``meta.versionId``; ``404`` when unknown;
- search ``GET /Type?field=value`` (``_id``, or equality on a top-level field, a reference's
  ``reference`` string included) as a ``searchset`` Bundle;
- update ``PUT /Type/id`` honouring ``If-Match`` (``412 Precondition Failed`` on a stale
  version), create ``POST /Type`` (``201`` with ``Location`` and ``ETag``);
- ``POST /`` of a ``batch`` Bundle (each entry on its own, per-entry ``response.status``) or
  of a ``transaction`` Bundle (all or nothing: the first failing entry fails the whole
  request with its status and an OperationOutcome).

For fault tests: :meth:`FhirServer.stop` takes the server down (connections refused) and
:meth:`FhirServer.start` brings it back on its port, its resources kept;
:meth:`FhirServer.remote_update` is a concurrent update by another client,
``delay`` makes the server apply a write and then answer late (an unknown outcome for a client
that times out), ``cut`` answer a write it applied with its status and half its body, then
drop the connection (``"drop"``) or go silent for 5 s first (``"stall"``), ``gateway`` answer a
write it applied with that status (502, 504; 503 with Envoy's text as ``gateway_said``) and a
page, as a proxy in front of it would,
``token`` requires
``Authorization: Bearer TOKEN``. Every request is kept in ``log`` as ``(method, path)`` so a
test sees what was, and was not, sent.
"""

from __future__ import annotations

import copy
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

__all__ = ["FhirServer", "serve_fhir"]

_REASONS = {200: "OK", 201: "Created", 400: "Bad Request", 401: "Unauthorized",
            404: "Not Found", 409: "Conflict", 412: "Precondition Failed"}


class _Failed(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _outcome(message: str) -> dict[str, Any]:
    return {"resourceType": "OperationOutcome",
            "issue": [{"severity": "error", "code": "processing", "diagnostics": message}]}


class FhirServer:
    """The resources (every version of each), the request log and the fault knobs."""

    def __init__(self) -> None:
        self.versions: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self.log: list[tuple[str, str]] = []
        self.delay = 0.0
        self.padding = 0  # bytes of narrative added to each answer: a server that answers huge
        self.token: str | None = None
        self.cut: str | None = None  # "drop" / "stall": a write applied, its answer cut short
        self.gateway: int | None = None  # 502 / 504: a write applied, a proxy's page answered
        self.gateway_said: bytes | None = None  # the proxy's text/plain body, as Envoy's 503
        self.lock = threading.Lock()
        self.base = ""
        self._next_id = 0
        self._port = 0
        self._serving: tuple[ThreadingHTTPServer, threading.Thread] | None = None

    # -- what tests call ------------------------------------------------------------------

    def put(self, resource: dict[str, Any]) -> dict[str, Any]:
        """Store ``resource`` as a new version (a seed, or another client's update)."""
        with self.lock:
            return self._store(copy.deepcopy(resource))

    def remote_update(self, kind: str, rid: str, **fields: Any) -> dict[str, Any]:
        """Another client updates ``kind/rid`` now: a new version with ``fields`` changed."""
        current = copy.deepcopy(self.current(kind, rid))
        current.update(fields)
        return self.put(current)

    def current(self, kind: str, rid: str) -> dict[str, Any]:
        return self.versions[(kind, rid)][-1]

    def writes(self) -> list[tuple[str, str]]:
        return [r for r in self.log if r[0] in ("PUT", "POST")]

    @property
    def port(self) -> int:
        """The port it listens on (0 before its first :meth:`start`), kept across a stop."""
        return self._port

    def start(self) -> None:
        """Listen on 127.0.0.1, in a thread: on a free port the first time, on the same port
        after :meth:`stop` (a system of record down, then back, its resources kept)."""
        httpd = ThreadingHTTPServer(("127.0.0.1", self._port), _handler(self))
        httpd.daemon_threads = True
        self._port = httpd.server_address[1]
        self.base = f"http://127.0.0.1:{self._port}/fhir"
        # polled every 10 ms: a stop waited up to 0.5 s at serve_forever's default
        thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01},
                                  daemon=True)
        thread.start()
        self._serving = (httpd, thread)

    def stop(self) -> None:
        """Stop listening: a connection is refused from now on, nothing sent."""
        if self._serving is not None:
            httpd, thread = self._serving
            self._serving = None
            httpd.shutdown()
            httpd.server_close()
            thread.join(5)

    # -- semantics ------------------------------------------------------------------------

    def _store(self, resource: dict[str, Any]) -> dict[str, Any]:
        kind = resource["resourceType"]
        rid = resource.get("id")
        if not rid:
            self._next_id += 1
            rid = resource["id"] = f"srv{self._next_id}"
        history = self.versions.setdefault((kind, rid), [])
        resource["meta"] = {**resource.get("meta", {}), "versionId": str(len(history) + 1),
                            "lastUpdated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        history.append(resource)
        return resource

    def read(self, kind: str, rid: str) -> dict[str, Any]:
        history = self.versions.get((kind, rid))
        if not history:
            raise _Failed(404, f"{kind}/{rid} is not known")
        return history[-1]

    def search(self, kind: str, query: str) -> dict[str, Any]:
        params = parse_qsl(query)
        found = []
        for (k, rid), history in sorted(self.versions.items()):
            res = history[-1]
            if k == kind and all(_matches(res, p, v) for p, v in params if p != "_count"):
                found.append({"fullUrl": f"{self.base}/{k}/{rid}", "resource": res,
                              "search": {"mode": "match"}})
        return {"resourceType": "Bundle", "type": "searchset", "total": len(found),
                "entry": found}

    def write(self, method: str, path: str, body: dict[str, Any],
              if_match: str | None) -> tuple[int, dict[str, Any]]:
        parts = [p for p in path.split("/") if p]
        if method == "POST" and len(parts) == 1:
            if body.get("resourceType") != parts[0]:
                raise _Failed(400, f"POST /{parts[0]} with a {body.get('resourceType')}")
            body.pop("id", None)
            return 201, self._store(body)
        if method == "PUT" and len(parts) == 2:
            kind, rid = parts
            if body.get("resourceType") != kind or body.get("id") != rid:
                raise _Failed(400, f"PUT /{kind}/{rid} with {body.get('resourceType')}/"
                              f"{body.get('id')}")
            history = self.versions.get((kind, rid))
            if if_match is not None:
                have = history[-1]["meta"]["versionId"] if history else None
                want = if_match.removeprefix("W/").strip('"')
                if have != want:
                    raise _Failed(412, f"{kind}/{rid} is at version {have}, not {want}")
            return (200 if history else 201), self._store(body)
        raise _Failed(400, f"{method} {path} is not supported")

    def bundle(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        kind = body.get("type")
        if kind not in ("batch", "transaction"):
            raise _Failed(400, f"a Bundle of type {kind!r} cannot be posted; batch or "
                          "transaction")
        saved = copy.deepcopy((self.versions, self._next_id))
        out = []
        for entry in body.get("entry", []):
            req = entry.get("request", {})
            try:
                status, res = self.write(req.get("method", ""), "/" + req.get("url", ""),
                                         copy.deepcopy(entry.get("resource", {})),
                                         req.get("ifMatch"))
            except _Failed as e:
                if kind == "transaction":  # all or nothing
                    self.versions, self._next_id = saved
                    raise
                out.append({"response": {"status": f"{e.status} {_REASONS.get(e.status, '')}",
                                         "outcome": _outcome(str(e))}})
                continue
            v = res["meta"]["versionId"]
            where = f"{res['resourceType']}/{res['id']}/_history/{v}"
            out.append({"resource": res, "response": {
                "status": f"{status} {_REASONS[status]}", "location": where,
                "etag": f'W/"{v}"', "lastModified": res["meta"]["lastUpdated"]}})
        return 200, {"resourceType": "Bundle", "type": f"{kind}-response", "entry": out}


def _matches(res: dict[str, Any], param: str, value: str) -> bool:
    if param == "_id":
        return res.get("id") == value
    have = res.get(param)
    if isinstance(have, dict):
        return have.get("reference") == value
    return str(have).lower() == value.lower() if isinstance(have, bool) else have == value


def _handler(server: FhirServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _answer(self, status: int, body: dict[str, Any]) -> None:
            if server.padding and body.get("resourceType") != "OperationOutcome":
                body = {**body, "text": {"status": "generated", "div": "x" * server.padding}}
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/fhir+json")
            self.send_header("Content-Length", str(len(data)))
            meta = body.get("meta", {})
            if body.get("resourceType") not in ("Bundle", "OperationOutcome") and meta:
                v = meta["versionId"]
                self.send_header("ETag", f'W/"{v}"')
                self.send_header("Location",
                                 f"{server.base}/{body['resourceType']}/{body['id']}"
                                 f"/_history/{v}")
            self.end_headers()
            self.wfile.write(data)

        def _handle(self, method: str) -> None:
            url = urlsplit(self.path)
            path = url.path.removeprefix("/fhir")
            with server.lock:
                server.log.append((method, path))
            if server.token and self.headers.get("Authorization") != f"Bearer {server.token}":
                self._answer(401, _outcome("a bearer token is required"))
                return
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length)) if length else {}
                with server.lock:
                    parts = [p for p in path.split("/") if p]
                    if method == "GET" and len(parts) == 2:
                        status, out = 200, server.read(*parts)
                    elif method == "GET" and len(parts) == 1:
                        status, out = 200, server.search(parts[0], url.query)
                    elif method == "POST" and not parts:
                        status, out = server.bundle(body)
                    else:
                        status, out = server.write(method, path, body,
                                                   self.headers.get("If-Match"))
                    out = copy.deepcopy(out)
            except _Failed as e:
                status, out = e.status, _outcome(str(e))
            except ValueError as e:
                status, out = 400, _outcome(f"not JSON: {e}")
            if server.delay and method in ("PUT", "POST"):
                time.sleep(server.delay)  # applied, answered late: the client cannot know
            if server.gateway and method in ("PUT", "POST"):  # applied; a proxy's answer
                page = b"<html><body>upstream did not answer in time</body></html>"
                kind = "text/html"
                if server.gateway_said is not None:
                    page, kind = server.gateway_said, "text/plain"
                self.send_response(server.gateway)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)
                return
            if server.cut and method in ("PUT", "POST"):  # applied; the answer's status and
                data = json.dumps(out).encode()  # half its body, then nothing more
                self.send_response(status)
                self.send_header("Content-Type", "application/fhir+json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                if server.cut == "stall":
                    time.sleep(5)
                self.close_connection = True
                with suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)
                return
            with suppress(BrokenPipeError, ConnectionResetError):
                self._answer(status, out)

        def do_GET(self) -> None:
            self._handle("GET")

        def do_PUT(self) -> None:
            self._handle("PUT")

        def do_POST(self) -> None:
            self._handle("POST")

    return Handler


@contextmanager
def serve_fhir() -> Iterator[FhirServer]:
    """A running server on a free port of 127.0.0.1; ``server.base`` is its base URL."""
    fhir = FhirServer()
    fhir.start()
    try:
        yield fhir
    finally:
        fhir.stop()


def main() -> None:
    """Serve on a fixed port with seed resources, until interrupted (examples/fhir/README.md):
    ``python tests/servers/fhir_server.py --port 8089 --seed examples/fhir/seed.json``."""
    import argparse

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, default=8089)
    p.add_argument("--seed", help="a JSON list of resources to store first")
    p.add_argument("--token-env", help="require the bearer token held by this variable")
    args = p.parse_args()
    import os

    fhir = FhirServer()
    if args.token_env:
        fhir.token = os.environ[args.token_env]
    if args.seed:
        with open(args.seed, encoding="utf-8") as f:
            for resource in json.load(f):
                fhir.put(resource)
    httpd = ThreadingHTTPServer(("127.0.0.1", args.port), _handler(fhir))
    fhir.base = f"http://127.0.0.1:{args.port}/fhir"
    print(f"FHIR R4 test server at {fhir.base}", flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()


if __name__ == "__main__":
    main()
