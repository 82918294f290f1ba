"""What the tests of an adapter against the loopback FHIR server (tests/servers/fhir_server.py)
share: the pharmacy's system of record (the ``fhir`` fixture in conftest.py seeds it), the
Turtle its definitions open with (the prefixes and the ``:ehr`` adapter), and the two tools
decided in Python that most of them run: completing a medication request (one conditional
update) and recording a dispense (a create, which nothing on the server makes conditional).

Each test file adds its own lines (the scopes it is granted, its tool's timeout, an
``horis:onError``) around these pieces; they were copied from file to file before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from servers.fhir_server import FhirServer

from horismos import Agent, World

TOKEN_VAR = "HORISMOS_TEST_FHIR_TOKEN"
TOKEN = "s3cret-token"
ALLOW = ("ReadOnly", "HostStateWrite", "ExternalCommit")  # an adapter tool commits externally

PATIENT = {"resourceType": "Patient", "id": "p1", "name": [{"family": "Chalmers"}]}


def medication_request(rid: str) -> dict[str, Any]:
    """An active order for the patient: what the pharmacy completes."""
    return {"resourceType": "MedicationRequest", "id": rid, "status": "active",
            "intent": "order", "subject": {"reference": "Patient/p1"}}


# ``.format(base=server.base, token_var=TOKEN_VAR, granted=...)``: ``granted`` is Turtle (a
# literal, or several)
EHR = """\
@prefix :      <http://example.org/pharmacy#> .
@prefix fhir:  <http://hl7.org/fhir/> .
@prefix horis: <https://w3id.org/horismos#> .

:ehr a horis:Adapter ;
    horis:baseUrl "{base}" ;
    horis:tokenFromEnv "{token_var}" ;
    horis:grantedScope {granted} ;
    horis:mapping horis:FhirJsonLd .
"""

# ``.format(base=..., token_var=..., timeout=..., inline=..., on_error=...)``: the focus patient's
# request completed
COMPLETE_DEFS = EHR.replace("{granted}", '"patient/MedicationRequest.write"') + """
:t.complete a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "request" ; horis:type fhir:MedicationRequest ] ] ;
    horis:adapter :ehr ;
    horis:commitScope "patient/MedicationRequest.write" ;
    horis:binding "python:complete" ;
    horis:timeout "{timeout}"{inline} .

:Complete a horis:Workflow ;
    horis:focusType fhir:Patient ;
    horis:start :CompleteStep .

:CompleteStep a horis:ActionStep ;
    horis:tool :t.complete ;
    horis:requires \"\"\"?request a fhir:MedicationRequest ; fhir:status "active" ;
                         fhir:subject [ fhir:reference ?this ] .\"\"\" {on_error} .
"""

# ``.format(base=..., token_var=...)``: a dispense of the focus patient recorded (a POST)
RECORD_DEFS = EHR.replace("{granted}", '"patient/MedicationDispense.write"') + """
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


def complete(request: dict[str, Any]) -> dict[str, Any]:
    """Decide: the request is completed (one conditional update)."""
    return {**request, "status": "completed"}


def record(patient: dict[str, Any]) -> dict[str, Any]:
    """Decide: a dispense is created (a POST, which nothing on the server makes conditional)."""
    return {"resourceType": "MedicationDispense", "status": "completed",
            "subject": {"reference": f"Patient/{patient['id']}"}}


def posts(server: FhirServer) -> int:
    return sum(1 for method, _ in server.log if method == "POST")


def completing(tmp_path: Path, server: FhirServer, *, timeout: str = "2s", inline: bool = False,
               on_error: str = "", extra: str = "", store: str = "memory") -> tuple[Agent, World]:
    """:Complete's agent, and a world (in ``store``) holding the patient and its request
    hydrated; ``inline``: the tool decides on the loop's thread (``horis:inline``);
    ``on_error`` ends :CompleteStep (``; horis:onError :X``), ``extra`` Turtle follows."""
    path = tmp_path / "pharmacy.ttl"
    path.write_text(COMPLETE_DEFS.format(
        base=server.base, token_var=TOKEN_VAR, timeout=timeout, on_error=on_error,
        inline=" ; horis:inline true" if inline else "") + extra, encoding="utf-8")
    agent = Agent.from_files(path, tools={"complete": complete})
    world = World.open(store)
    agent.hydrate(world, "ehr", ["Patient/p1", "MedicationRequest/mr1"])
    return agent, world


def recording(tmp_path: Path, server: FhirServer) -> tuple[Agent, World]:
    """:Dispense's agent, and a world holding the patient hydrated."""
    path = tmp_path / "pharmacy.ttl"
    path.write_text(RECORD_DEFS.format(base=server.base, token_var=TOKEN_VAR), encoding="utf-8")
    agent = Agent.from_files(path, tools={"record": record})
    world = World.open("memory")
    agent.hydrate(world, "ehr", ["Patient/p1"])
    return agent, world
