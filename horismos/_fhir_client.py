"""The HTTP side of a FHIR adapter: reads for hydration, one request per commit.

Why its own module: it is the only code that talks to a system of record, so the rules the
HTTP binding keeps hold here too, in one place — the host must be one this process may reach
(:mod:`._bindings.reach`, ``--allow-host``), the bearer token is read from the environment
variable the adapter names and never shown, redirects are not followed, and a commit marks
when its request left and when its whole answer came (:mod:`._attempt`), so a commit that
timed out after sending, or whose answer was cut short, is an unknown outcome that is never
resent.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from contextlib import suppress
from functools import cache
from http import HTTPStatus
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ._attempt import answered, httpx_trace
from ._bindings.gateways import SAID_BYTES
from ._bindings.limits import body_within, body_within_async
from ._bindings.reach import Hosts
from ._errors import NotSent, ResultTooLarge, ToolError, Unreachable
from ._model import Adapter
from ._redact import redact_text, url_credentials
from ._tls import verifying_context
from ._unreachable import tls_refused, why_unreachable

if TYPE_CHECKING:  # imported where a request is made, not on every command's import
    import httpx

__all__ = ["FhirClient", "adapter_host_problem", "adapter_problem"]

_MAX_PAGES = 100
"""Search pages followed at most: a search that needs more is too broad to hydrate."""

_MAX_READ_BYTES = 16 << 20
"""The largest answer a hydration read accepts (one resource or one search page): a server
that answers more is not read on, so a hostile or broken one cannot fill this process."""


def adapter_host_problem(adapter: Adapter, hosts: Hosts, *, resolve: bool = True) -> str | None:
    """Why ``adapter``'s host may not be reached from this process (the outbound-host
    policy), or None; ``resolve=False``: no look-up (the catalog's)."""
    problem = hosts.problem(adapter.base_url, resolve=resolve)
    if problem is not None:
        return f"adapter {adapter.name} is refused before any request: {problem}"
    return None


def adapter_problem(adapter: Adapter, hosts: Hosts) -> str | None:
    """Why no request to ``adapter`` may be sent from this process, or None: its host outside
    the outbound-host policy (:func:`adapter_host_problem`, which the catalog says too), a
    base URL carrying credentials (``?access_token=…``: every request, error and trace would
    copy it), or its token variable unset. Said before a run's first step, as an HTTP
    binding's are, and by each request; it was said only by each commit, once the tool had
    decided, failing the step."""
    secrets = url_credentials(adapter.base_url)
    if secrets:  # as an HTTP binding's URL: validate says it at the horis:baseUrl
        return (
            f"the horis:baseUrl of adapter {adapter.name} carries credentials "
            f"({', '.join(secrets)}), which every request would copy into "
            "traces and errors; declare the token's variable with horis:tokenFromEnv instead"
        )
    problem = adapter_host_problem(adapter, hosts)
    if problem is not None:
        return problem
    var = adapter.token_env
    if var and not os.environ.get(var):
        return (
            f"adapter {adapter.name} reads its token from environment variable {var}, "
            f"which is not set; export {var}=… first"
        )
    return None


class FhirClient:
    """One adapter's connection: ``hosts`` is what this process may reach; ``max_bytes``:
    the largest answer to a commit read (the committing tool's ``horis:maxResultBytes``)."""

    def __init__(
        self,
        adapter: Adapter,
        hosts: Hosts | None = None,
        timeout: float | None = None,
        max_bytes: int = _MAX_READ_BYTES,
    ) -> None:
        self.adapter = adapter
        self.hosts = hosts or Hosts()
        self.timeout = timeout or adapter.timeout
        self.max_bytes = max_bytes

    def headers(self) -> dict[str, str]:
        problem = adapter_problem(self.adapter, self.hosts)
        if problem is not None:
            raise NotSent(problem)
        headers = {"Accept": "application/fhir+json", "Content-Type": "application/fhir+json"}
        var = self.adapter.token_env
        if var:
            headers["Authorization"] = f"Bearer {os.environ[var]}"
        return headers

    # -- reads (hydration) ----------------------------------------------------------------

    def read(self, ref: str) -> dict[str, Any]:
        """``GET BASE/Type/id``: the resource, its ``meta.versionId`` set from the ETag."""
        with self._sync() as client:
            body, etag = self._get(client, f"{self.adapter.base_url}/{ref.strip('/')}")
        if not isinstance(body, dict) or body.get("resourceType") in (None, "Bundle"):
            raise ToolError(f"adapter {self.adapter.name}: GET {ref} did not answer one resource")
        if etag and not (body.get("meta") or {}).get("versionId"):
            body["meta"] = {
                **(body.get("meta") or {}),
                "versionId": etag.removeprefix("W/").strip('"'),
            }
        return body

    def search(self, query: str) -> list[dict[str, Any]]:
        """``GET BASE/Type?params``, every page: the matching resources."""
        url: str | None = f"{self.adapter.base_url}/{query.lstrip('/')}"
        found: list[dict[str, Any]] = []
        with self._sync() as client:
            for _ in range(_MAX_PAGES):
                if url is None:
                    return found
                body, _ = self._get(client, url)
                if not isinstance(body, dict) or body.get("resourceType") != "Bundle":
                    raise ToolError(
                        f"adapter {self.adapter.name}: search {query} did not answer a Bundle"
                    )
                found += [
                    e["resource"]
                    for e in body.get("entry") or []
                    if isinstance(e.get("resource"), dict)
                    and (e.get("search") or {}).get("mode", "match") == "match"
                ]
                url = next(
                    (
                        link.get("url")
                        for link in body.get("link") or []
                        if link.get("relation") == "next"
                    ),
                    None,
                )
                if url is not None:
                    self._own_page(query, url)
        raise ToolError(
            f"adapter {self.adapter.name}: search {query} has more than "
            f"{_MAX_PAGES} pages; narrow it"
        )

    def _own_page(self, query: str, url: Any) -> None:
        """A search's ``next`` link is the server's to write, and the token goes wherever it
        points: followed off the adapter's own origin (a proxy's internal name, a hostile
        server), it sent the bearer token to a host ``--allow-host`` refuses. So a page is
        read only from the scheme, host and port of ``horis:baseUrl``."""
        if _origin(url) != _origin(self.adapter.base_url):
            raise ToolError(
                f"adapter {self.adapter.name}: search {query}: the server's next page is "
                f"{redact_text(str(url))!r}, outside {self.adapter.base_url} (horis:baseUrl), "
                "so it is not read and the token is not sent there; nothing was hydrated. "
                "Have the server write its paging links under its base URL, or narrow the "
                "search to one page (e.g. _count)"
            )

    def _sync(self) -> httpx.Client:
        import httpx

        return httpx.Client(
            timeout=self.timeout,
            follow_redirects=False,
            verify=verifying_context(),
            headers=self.headers(),
        )

    def _get(self, client: httpx.Client, url: str) -> tuple[Any, str | None]:
        import httpx

        try:
            with client.stream("GET", url) as response:
                body = body_within(response, _MAX_READ_BYTES)
        except (httpx.ConnectError, httpx.ConnectTimeout) as e:  # "[Errno 111] …" alone
            raise ToolError(
                f"adapter {self.adapter.name}: GET {url}: the server cannot be reached: "
                f"{redact_text(why_unreachable(e))}; check the adapter's horis:baseUrl, and "
                "start the server if it is not running"
            ) from None
        except httpx.HTTPError as e:
            raise ToolError(
                f"adapter {self.adapter.name}: GET {url} failed: "
                f"{type(e).__name__}: {redact_text(str(e))}"
            ) from None
        if body is None:
            raise ToolError(
                f"adapter {self.adapter.name}: GET {url} answered more than "
                f"{_MAX_READ_BYTES:,} bytes, more than a hydration read takes; hydrate "
                "fewer resources per search (e.g. _count) or by id"
            )
        if response.status_code != 200:
            raise ToolError(
                f"adapter {self.adapter.name}: GET {url} answered "
                f"{response.status_code} {response.reason_phrase}: "
                f"{_text(body)}"
            )
        try:
            return json.loads(body), response.headers.get("etag")
        except (ValueError, UnicodeDecodeError):
            raise ToolError(f"adapter {self.adapter.name}: GET {url} did not answer JSON") from None

    # -- one commit -----------------------------------------------------------------------

    def opened(self) -> httpx.AsyncClient:
        """A client for one commit, on a connection of its own (a commit is never sent on a
        kept one, where a reply meant for another request may wait: :mod:`._bindings.http`).
        Made before the commit's deadline starts (:class:`~._adapter_step.AdapterCommit`): the
        first of a process imports httpx, httpcore and the asynchronous network backend and
        reads the CA bundle, ~0.15 s of CPU (0.3-0.5 s on a busy host), which the deadline
        counted as the request's own time."""
        import httpx

        _network_backend()
        return httpx.AsyncClient(
            timeout=self.timeout, follow_redirects=False, verify=verifying_context()
        )

    async def send(
        self,
        method: str,
        url: str,
        body: Mapping[str, Any],
        headers: Mapping[str, str],
        client: httpx.AsyncClient | None = None,
    ) -> dict[str, Any]:
        """Send one commit through ``client`` (from :meth:`opened`; closed here), or one made
        now; its answer as ``{status, etag, location, body}`` whatever the
        status (a 412 is an answer, not an error), and a 503's ``text``. Raises
        :class:`NotSent` when the request never left (:class:`Unreachable` when its
        connection was refused or never made: a later try may reach it), and lets a timeout
        through for the caller to judge."""
        import httpx

        if client is None:
            client = self.opened()
        async with client:
            sent_headers = {**self.headers(), **headers, "Prefer": "return=representation"}
            try:
                async with client.stream(
                    method,
                    url,
                    content=json.dumps(body),
                    headers=sent_headers,
                    extensions={"trace": httpx_trace},
                ) as response:
                    content = await body_within_async(response, self.max_bytes)
                    # the whole answer, as for an HTTP binding: a 201 whose body is cut off or
                    # stalls was accepted, and what it made is not known (it was reconciled
                    # as failed, "not sent", and created again by the next run)
                    answered()
            except (httpx.ConnectError, httpx.ConnectTimeout) as e:
                # down for now, a later try may reach it (a step without horis:onError is
                # blocked, not failed, as an HTTP binding's is); a certificate refused is
                # no better later
                raise (NotSent if tls_refused(e) else Unreachable)(
                    f"adapter {self.adapter.name}: {method} {url} failed: "
                    f"{type(e).__name__}: {redact_text(str(e))} (nothing was "
                    "sent)"
                ) from None
            except httpx.TimeoutException:
                raise TimeoutError from None
        status = response.status_code
        if content is None and 200 <= status < 300:
            # accepted, but what it made cannot be read: nothing can be projected from it
            raise ResultTooLarge(
                f"{method} {url} was accepted ({status}) but its answer is larger than "
                f"{self.max_bytes:,} bytes (horis:maxResultBytes), so what it made is not "
                "known here",
                limit=self.max_bytes,
            )
        try:
            data = json.loads(content) if content else None
        except (ValueError, UnicodeDecodeError):
            data = None
        answer = {
            "status": status,
            "etag": response.headers.get("etag"),
            "location": response.headers.get("location"),
            "body": data,
        }
        if status == HTTPStatus.SERVICE_UNAVAILABLE and content:
            # what a gateway said (Envoy's reset is no answer: _bindings.gateways.no_answer),
            # kept only for a 503 so no other answer's record grows
            answer["text"] = content[:SAID_BYTES].decode("utf-8", "replace")
        return answer


def _origin(url: Any) -> tuple[str, str | None, int | None] | None:
    """Scheme, host and port of ``url`` (the scheme's own port when none is written)."""
    if not isinstance(url, str):
        return None
    try:
        parts = urlsplit(url)
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme.lower())
    except ValueError:  # a port that is no number
        return None
    return parts.scheme.lower(), parts.hostname, port


@cache
def _network_backend() -> None:
    """Import what httpx imports at its first asynchronous connection (httpcore's anyio
    backend, anyio's asyncio one: ~25 ms), so that a commit's deadline does not count it.
    Where their modules are named otherwise (another version), the first connection imports
    them, as before."""
    with suppress(ImportError):
        import anyio._backends._asyncio  # noqa: F401
        import httpcore._backends.anyio  # noqa: F401


def _text(body: bytes, limit: int = 200) -> str:
    text = body[:limit].decode("utf-8", "replace").strip()
    return repr(text) if text else "(empty body)"
