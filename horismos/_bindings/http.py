"""``http://…`` / ``https://…``: a JSON POST of the declared arguments; the answer is the result.

Strict: the response body must be one JSON object (any field outside the effect makes the gate
reject it), the answer must be 2xx (redirects are not followed), TLS is verified, and at most
the tool's ``horis:maxResultBytes`` (1 MiB by default, :mod:`.limits`) are read. Request
headers come from environment variables named in the Turtle (``horis:header [ horis:name
"Authorization" ; horis:fromEnv "API_TOKEN" ]``); their values are never written to the
trace or to an error message, and the URL is shown with any credential in it masked
(:mod:`horismos._redact`); a URL that carries one is refused before any call, since
credentials belong in those environment headers.

A connection that cannot be made is :class:`~horismos.Unreachable` (a :class:`~horismos.NotSent`:
the endpoint is down for now, and nothing was sent); the request counts as sent when
its headers start to go out, and as answered once the whole response has arrived: a 200 whose
body is cut off or stalls may be a success the caller never received.

A call of a tool that is not idempotent has a connection of its own, closed once it is
answered: on a kept-alive connection a server that answered one request twice (a proxy
replaying a response, a handler writing its reply twice) left the extra reply waiting there,
and the next call was handed it as its own answer — a refused charge landed as paid, with
another call's reference. An idempotent tool keeps its connections alive: a new one a call
doubled a local step's time (1.5 ms to 3.5 ms, benchmarks/bench_bindings.py) and costs a TLS
handshake a call against a remote endpoint, and an answer misread there is a read to repeat,
not an act to undo.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

import httpx

from .. import _attempt
from .._errors import NotSent, ToolError, ToolTimeout, Unreachable, UnreadableAnswer
from .._model import Tool
from .._redact import redact_text, redact_url, url_credentials
from .._tls import verifying_context
from .._unreachable import tls_refused
from .base import Binding
from .gateways import gateway_said, no_answer
from .limits import body_within_async, too_large
from .reach import Hosts
from .wire import json_arguments

__all__ = ["HttpBinding"]


class HttpBinding(Binding):
    """One endpoint, one client for the run; one connection per call of a tool that is not
    idempotent (see the module's doc)."""

    kind = "http"

    def __init__(self, tool: Tool, hosts: Hosts | None = None) -> None:
        self.tool = tool
        self.hosts = hosts or Hosts()
        self._host_checked = False
        self.url = tool.binding
        self.shown = redact_url(tool.binding)
        self._client: httpx.AsyncClient | None = None

    async def check(self) -> None:
        self._check_host()
        secrets = url_credentials(self.url)
        if secrets:
            raise ToolError(
                f"{self.tool.name}: the binding URL {self.shown} carries credentials "
                f"({', '.join(secrets)}), which would be copied into traces and errors; take "
                "them out and send them as a header read from the environment: horis:header "
                '[ horis:name "Authorization" ; horis:fromEnv "API_TOKEN" ]',
                tool=str(self.tool.iri),
            )
        self._headers()

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json"}
        for h in self.tool.headers:
            value = os.environ.get(h.env)
            if value is None:
                raise NotSent(
                    f"{self.tool.name}: header {h.name} is read from environment variable "
                    f"{h.env}, which is not set; export {h.env}=… before running",
                    tool=str(self.tool.iri),
                )
            headers[h.name] = value
        return headers

    def _check_host(self) -> None:
        problem = self.hosts.problem(self.url)
        if problem is not None:
            raise NotSent(
                f"{self.tool.name} is refused before any request: {problem}",
                tool=str(self.tool.iri),
            )
        self._host_checked = True

    async def call(self, args: Mapping[str, Any]) -> Any:
        if not self._host_checked:
            self._check_host()
        headers = self._headers()
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=self.tool.timeout,
                follow_redirects=False,
                verify=verifying_context(),
                # httpx's own limits, but none kept alive for a tool that acts (module doc)
                limits=httpx.Limits(
                    max_connections=100,
                    max_keepalive_connections=20 if self.tool.idempotent else 0,
                ),
            )
        where = f"POST {self.shown}"
        try:
            async with self._client.stream(
                "POST",
                self.url,
                json=json_arguments(self.tool, args),
                headers=headers,
                extensions={"trace": _attempt.httpx_trace},
            ) as response:
                body = await body_within_async(response, self.tool.max_result_bytes)
                gateway = no_answer(response.status_code, body or b"")  # no answer (.gateways)
                if not gateway:
                    _attempt.answered()  # the whole answer: a body cut off or stalled may hide
                if body is None:  # a success, so until here the call was sent, not answered
                    raise too_large(self.tool, where)
        except (httpx.ConnectError, httpx.ConnectTimeout) as e:
            # down for now, a later try may reach it (a step without horis:onError is
            # blocked, not failed); a certificate refused is no better later
            raise (NotSent if tls_refused(e) else Unreachable)(
                f"{where} failed: {type(e).__name__}: {redact_text(str(e))} (nothing was sent)"
            ) from None
        except httpx.TimeoutException:
            raise ToolTimeout(
                f"{where} did not answer within {self.tool.timeout:g}s (horis:timeout)"
            ) from None
        except httpx.HTTPError as e:
            raise ToolError(
                f"{where} failed: {type(e).__name__}: {redact_text(str(e))}",
            ) from None
        status = response.status_code
        if gateway:
            raise ToolError(f"{where} answered {gateway_said(status)}: {_preview(body)}")
        if not 200 <= status < 300:
            hint = ""
            if 300 <= status < 400:
                hint = (
                    f" (redirects are not followed; bind the tool to "
                    f"{redact_url(response.headers.get('location', 'the final URL'))})"
                )
            raise ToolError(
                f"{where} answered {status} {response.reason_phrase}{hint}: {_preview(body)}"
            )
        if status == 204 or not body.strip():
            return None
        try:
            data = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            kind = response.headers.get("content-type", "no content type")
            raise UnreadableAnswer(f"{where} answered {kind}, not JSON: {_preview(body)}") from None
        if not isinstance(data, dict):
            raise UnreadableAnswer(
                f"{where} answered a JSON {type(data).__name__}, not an object of "
                "the effect's fields"
            )
        return data

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def _preview(body: bytes, limit: int = 200) -> str:
    text = body[:limit].decode("utf-8", "replace").strip()
    return repr(text + ("…" if len(body) > limit else "")) if text else "(empty body)"
