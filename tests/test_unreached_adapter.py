"""An adapter-bound step whose system of record is down when it commits, and that declares
no ``horis:onError``: nothing was sent, so its instance is blocked there (``not_sent``), not
failed for good, as an HTTP-bound step's is; once the server answers again, ``resume``
commits it, once. A step that declares ``horis:onError`` still takes it. A real FHIR server
(tests/servers/fhir_server.py) on 127.0.0.1, stopped and started again on its port.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from forked import horismos_forked
from listening import dropping
from pharmacy_ehr import ALLOW, completing
from rdflib import URIRef
from servers.fhir_server import FhirServer

from horismos import Agent, Unreachable, World

SETTLE = """
:Settle a horis:WaitStep ;
    horis:reason "the commit did not land: a pharmacist decides" ;
    horis:wake horis:OperatorInput ;
    horis:delivery horis:Silent .
"""


def hydrated(
    tmp_path: Path, fhir: FhirServer, on_error: bool = False, quick: str | None = None,
    store: str = "memory",
) -> tuple[Agent, World]:
    """``quick``: the tool's timeout (``"100ms"``), its decision made on the loop's thread
    (judged of the function alone, no thread woken)."""
    return completing(tmp_path, fhir, timeout=quick or "2s", inline=quick is not None,
                      on_error="; horis:onError :Settle" if on_error else "", extra=SETTLE,
                      store=store)


def patient(fhir: FhirServer) -> URIRef:
    return URIRef(f"{fhir.base}/Patient/p1")


def stored(tmp_path: Path, fhir: FhirServer, quick: str) -> Path:
    """The project (complete.py beside it) hydrated into ``oxigraph:store``, the tool's
    timeout ``quick``, for ``horismos run`` in a process of its own: the store's folder."""
    store = tmp_path / "store"
    _, world = hydrated(tmp_path, fhir, quick=quick, store=f"oxigraph:{store}")
    world.close()
    (tmp_path / "complete.py").write_text(
        "def complete(request):\n    return {**request, 'status': 'completed'}\n"
    )
    return store


def run_alone(tmp_path: Path, fhir: FhirServer) -> subprocess.CompletedProcess[str]:
    """``horismos run`` of :Complete on the patient, in a process of its own."""
    return horismos_forked(
        tmp_path, "run", "pharmacy.ttl", "--store", "oxigraph:store", "--workflow",
        ":Complete", "--focus", f"<{patient(fhir)}>", "--tools", "complete.py",
        "--allow", ",".join(ALLOW), "--allow-host", "127.0.0.1", timeout=120,
    )  # fmt: skip


def test_a_commit_to_a_server_that_is_down_blocks_and_resume_commits_it_once(
    tmp_path: Path, fhir: FhirServer
) -> None:
    agent, world = hydrated(tmp_path, fhir)
    fhir.stop()
    run = agent.run(world, ":Complete", patient(fhir), allow=ALLOW)
    assert run.status == "blocked", run.error
    (step,) = run.steps
    assert step.status == "blocked" and isinstance(step.error, Unreachable)
    assert "blocked, not failed" in str(step.error)
    (listed,) = world.instances()
    assert listed.status == "blocked" and listed.error_kind == "not_sent"
    assert agent.resume(world, run.instance, allow=ALLOW).status == "blocked"  # still down
    assert fhir.writes() == []
    fhir.start()
    done = agent.resume(world, run.instance, allow=ALLOW)
    assert done.status == "completed", done.error
    assert fhir.writes() == [("PUT", "/MedicationRequest/mr1")]  # once
    assert fhir.current("MedicationRequest", "mr1")["status"] == "completed"


def test_a_declared_on_error_still_fires_when_the_server_is_down(
    tmp_path: Path, fhir: FhirServer
) -> None:
    agent, world = hydrated(tmp_path, fhir, on_error=True)
    fhir.stop()
    run = agent.run(world, ":Complete", patient(fhir), allow=ALLOW)
    assert run.status == "waiting"
    assert [s.status for s in run.steps] == ["failed", "waiting"]
    (receipt,) = run.steps[0].receipts
    assert receipt["outcome"] == "failed" and "nothing was sent" in receipt["message"]
    assert fhir.writes() == []


def test_a_commit_whose_connection_is_never_made_blocks_in_a_process_of_its_own(
    tmp_path: Path, fhir: FhirServer
) -> None:
    # A host that drops what is sent to it, and `horismos run` in a process of its own (one
    # per event): its first commit spent more than horis:timeout of its deadline (twice that)
    # loading the HTTP client, so the deadline came before httpx's own connect timeout, while
    # the connection was still being made, and the step failed for good, "was not sent"; in
    # a process that had committed before, httpx's came first, and the same outage was
    # blocked. Nothing was sent either way. (The client is now made before the deadline
    # starts: whichever comes first, the step is blocked.)
    store = stored(tmp_path, fhir, "100ms")
    fhir.stop()
    with dropping(fhir.port):
        ran = run_alone(tmp_path, fhir)
    assert ran.returncode == 4, ran.stdout + ran.stderr  # blocked
    assert "nothing was sent" in ran.stdout and "blocked, not failed" in ran.stdout, ran.stdout
    world = World.open(f"oxigraph:{store}")
    (listed,) = world.instances()
    assert listed.status == "blocked" and listed.error_kind == "not_sent"  # resumed later
    world.close()
    assert fhir.writes() == []


def test_the_first_commit_of_a_process_of_its_own_is_not_timed_loading_the_client(
    tmp_path: Path, fhir: FhirServer
) -> None:
    # `horismos run` in a process of its own, a short horis:timeout, a healthy server: the
    # first commit of a process loaded the HTTP client (httpx, httpcore, the CA bundle: ~0.15 s
    # of CPU) within its deadline (twice horis:timeout, 100 ms here), which ran out before the
    # request left; the step was blocked, "no connection was made", and nothing was sent.
    # The client is made before the deadline starts, so the deadline times the request.
    stored(tmp_path, fhir, "50ms")
    ran = run_alone(tmp_path, fhir)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert fhir.writes() == [("PUT", "/MedicationRequest/mr1")]
    assert fhir.current("MedicationRequest", "mr1")["status"] == "completed"
