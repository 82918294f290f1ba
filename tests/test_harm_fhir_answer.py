"""A commit the system of record accepted, whose answer was cut short, is in doubt.

The adapter counted a commit answered once the answer's status line and headers had come: a
``201 Created`` whose body was then cut off (the connection dropped) or stalled past the
timeout was reconciled as *failed* — "was not sent", it said of the stalled one — so the call
was not held in doubt, and the next run created the dispense again. The HTTP binding counts a
call answered only once its whole answer has come; so does a commit now, and such a commit is
*unknown*. Real processes: the loopback FHIR server (tests/servers/fhir_server.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from servers.fhir_server import FhirServer, serve_fhir

from horismos import Agent, World

TOKEN_VAR = "HORISMOS_TEST_FHIR_TOKEN"

DEFS = """\
@prefix :      <http://example.org/pharmacy#> .
@prefix fhir:  <http://hl7.org/fhir/> .
@prefix horis: <https://w3id.org/horismos#> .

:ehr a horis:Adapter ;
    horis:baseUrl "{base}" ;
    horis:tokenFromEnv "{token_var}" ;
    horis:grantedScope "patient/MedicationDispense.write" ;
    horis:mapping horis:FhirJsonLd .

:t.record a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type fhir:Patient ] ] ;
    horis:adapter :ehr ;
    horis:commitScope "patient/MedicationDispense.write" ;
    horis:binding "python:record" ;
    horis:timeout "1s" .

:Dispense a horis:Workflow ; horis:focusType fhir:Patient ; horis:start :Record .
:Record a horis:ActionStep ; horis:tool :t.record ;
    horis:bind [ horis:arg "patient" ; horis:var "this" ] .
"""


def record(patient: dict[str, Any]) -> dict[str, Any]:
    """Decide: a dispense is created (a POST, which nothing on the server makes conditional)."""
    return {"resourceType": "MedicationDispense", "status": "completed",
            "subject": {"reference": f"Patient/{patient['id']}"}}


@pytest.fixture
def fhir(monkeypatch: pytest.MonkeyPatch) -> Iterator[FhirServer]:
    with serve_fhir() as server:
        server.token = "s3cret-token"
        monkeypatch.setenv(TOKEN_VAR, server.token)
        server.put({"resourceType": "Patient", "id": "p1"})
        yield server


def posts(server: FhirServer) -> int:
    return sum(1 for method, _ in server.log if method == "POST")


@pytest.mark.parametrize("cut", ["drop", "stall"])
def test_a_create_whose_answer_was_cut_short_is_not_made_again(
    tmp_path: Path, fhir: FhirServer, cut: str
) -> None:
    path = tmp_path / "pharmacy.ttl"
    path.write_text(DEFS.format(base=fhir.base, token_var=TOKEN_VAR), encoding="utf-8")
    agent = Agent.from_files(path, tools={"record": record})
    world = World.open("memory")
    agent.hydrate(world, "ehr", ["Patient/p1"])
    allow = ["ReadOnly", "HostStateWrite", "ExternalCommit"]

    fhir.cut = cut
    first = agent.run(world, focus=f"{fhir.base}/Patient/p1", allow=allow)
    assert posts(fhir) == 1
    step = first.instances[0].steps[-1]
    assert [r["outcome"] for r in step.receipts] == ["unknown"], step.receipts
    assert not any("was not sent" in r.get("message", "") for r in step.receipts)

    fhir.cut = None
    again = agent.run(world, focus=f"{fhir.base}/Patient/p1", allow=allow)
    assert posts(fhir) == 1, again.instances[0].steps  # the dispense is not created twice
