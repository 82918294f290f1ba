"""Hydration reads the adapter's own server, and sends its token nowhere else.

A search follows the Bundle's ``next`` links, which the server writes. One pointing at another
host (a proxy's internal name, a hostile or compromised server) was followed with the
adapter's bearer token, to a host ``--allow-host`` refuses — even a cloud metadata address.
Real HTTP servers on two loopback addresses: the system of record, and the host it points at.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from forked import horismos_forked
from listening import serve_in_thread

from horismos import Agent, ToolError, World

TOKEN_VAR = "HORISMOS_TEST_FHIR_TOKEN"
TOKEN = "s3cret-token"

DEFS = """\
@prefix :      <http://example.org/pharmacy#> .
@prefix horis: <https://w3id.org/horismos#> .
:ehr a horis:Adapter ;
    horis:baseUrl "{base}" ;
    horis:tokenFromEnv "{token_var}" ;
    horis:grantedScope "patient/MedicationRequest.read" ;
    horis:mapping horis:FhirJsonLd .
"""


class _Server:
    """One HTTP server on ``host``: answers every GET with ``answer(path)`` and records the
    path and Authorization header of each request."""

    def __init__(self, host: str, answer: Any) -> None:
        self.seen: list[tuple[str, str | None]] = []
        seen, reply = self.seen, answer

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                seen.append((self.path, self.headers.get("Authorization")))
                body = json.dumps(reply(self.path)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/fhir+json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer((host, 0), Handler)
        self.base = f"http://{host}:{self.httpd.server_address[1]}"
        self.close = serve_in_thread(self.httpd)


def _bundle(entries: list[dict[str, Any]], next_url: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "resourceType": "Bundle",
        "type": "searchset",
        "entry": [{"resource": r, "search": {"mode": "match"}} for r in entries],
    }
    if next_url:
        out["link"] = [{"relation": "next", "url": next_url}]
    return out


REQUEST = {"resourceType": "MedicationRequest", "id": "mr1", "status": "active",
           "meta": {"versionId": "1"}}


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[_Server, _Server]]:
    monkeypatch.setenv(TOKEN_VAR, TOKEN)
    elsewhere = _Server("127.0.0.2", lambda path: _bundle([], None))
    ehr = _Server(
        "127.0.0.1",
        lambda path: _bundle([REQUEST], f"{elsewhere.base}/fhir/MedicationRequest?page=2"),
    )
    yield ehr, elsewhere
    ehr.close()
    elsewhere.close()


def _defs(tmp_path: Path, ehr: _Server) -> Path:
    path = tmp_path / "ehr.ttl"
    path.write_text(DEFS.format(base=f"{ehr.base}/fhir", token_var=TOKEN_VAR), encoding="utf-8")
    return path


def test_a_next_link_to_another_host_is_not_followed_with_the_token(
    tmp_path: Path, servers
) -> None:
    ehr, elsewhere = servers
    agent = Agent.from_files(_defs(tmp_path, ehr), allow_hosts=["127.0.0.1"])
    world = World.open("memory")
    before = world.digest()

    with pytest.raises(ToolError) as caught:
        agent.hydrate(world, "ehr", search=["MedicationRequest?status=active"])

    assert elsewhere.seen == []  # neither the request nor the token left for the other host
    assert [path for path, _ in ehr.seen] == ["/fhir/MedicationRequest?status=active"]
    message = str(caught.value)
    assert elsewhere.base in message and "next" in message and ehr.base in message
    assert world.digest() == before  # all of the hydration lands, or none


def test_hydrate_on_the_command_line_says_so_without_a_traceback(tmp_path: Path, servers) -> None:
    ehr, elsewhere = servers
    _defs(tmp_path, ehr)
    p = horismos_forked(tmp_path, "hydrate", "ehr.ttl", "--search",
                        "MedicationRequest?status=active", "--out", "world.trig",
                        "--allow-host", "127.0.0.1", timeout=120)
    assert p.returncode != 0, p.stdout + p.stderr
    assert "Traceback" not in p.stderr and elsewhere.base in p.stderr, p.stderr
    assert elsewhere.seen == []
