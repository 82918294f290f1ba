"""An adapter-bound step whose system of record is down when it commits, and that declares
no ``horis:onError``: nothing was sent, so its instance is blocked there (``not_sent``), not
failed for good, as an HTTP-bound step's is; once the server answers again, ``resume``
commits it, once. A step that declares ``horis:onError`` still takes it. A real FHIR server
(tests/servers/fhir_server.py) on 127.0.0.1, stopped and started again on its port.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from forked import horismos_forked
from listening import dropping
from pharmacy_ehr import ALLOW, PATIENT, TOKEN, TOKEN_VAR, completing, medication_request
from rdflib import URIRef
from servers.fhir_server import FhirServer, _handler

from horismos import Agent, Unreachable, World

SETTLE = """
:Settle a horis:WaitStep ;
    horis:reason "the commit did not land: a pharmacist decides" ;
    horis:wake horis:OperatorInput ;
    horis:delivery horis:Silent .
"""


class Ehr:
    """A FHIR server on 127.0.0.1 that can be stopped and started again on its port, its
    resources kept meanwhile."""

    def __init__(self) -> None:
        self.fhir = FhirServer()
        self.fhir.token = TOKEN
        self._httpd: ThreadingHTTPServer | None = None
        self.port = 0
        self.start()
        self.fhir.base = f"http://127.0.0.1:{self.port}/fhir"

    def start(self) -> None:
        httpd = ThreadingHTTPServer(("127.0.0.1", self.port), _handler(self.fhir))
        httpd.daemon_threads = True
        self.port = httpd.server_address[1]
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        self._httpd = httpd

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None


@pytest.fixture
def ehr(monkeypatch: pytest.MonkeyPatch) -> Iterator[Ehr]:
    e = Ehr()
    monkeypatch.setenv(TOKEN_VAR, TOKEN)
    e.fhir.put(PATIENT)
    e.fhir.put(medication_request("mr1"))
    yield e
    e.stop()


def hydrated(
    tmp_path: Path, ehr: Ehr, on_error: bool = False, quick: str | None = None,
    store: str = "memory",
) -> tuple[Agent, World]:
    """``quick``: the tool's timeout (``"100ms"``), its decision made on the loop's thread
    (judged of the function alone, no thread woken)."""
    return completing(tmp_path, ehr.fhir, timeout=quick or "2s", inline=quick is not None,
                      on_error="; horis:onError :Settle" if on_error else "", extra=SETTLE,
                      store=store)


def patient(ehr: Ehr) -> URIRef:
    return URIRef(f"{ehr.fhir.base}/Patient/p1")


def _kept(tmp_path: Path, ehr: Ehr, quick: str) -> Path:
    """The pharmacy hydrated into an on-disk store (its path), and the tool's function in
    complete.py, for `horismos run` in a process of its own (:func:`_run_alone`)."""
    store = tmp_path / "store"
    _, world = hydrated(tmp_path, ehr, quick=quick, store=f"oxigraph:{store}")
    world.close()
    (tmp_path / "complete.py").write_text(
        "def complete(request):\n    return {**request, 'status': 'completed'}\n"
    )
    return store


def _run_alone(tmp_path: Path, ehr: Ehr) -> subprocess.CompletedProcess[str]:
    """`horismos run` of :Complete for the patient, on the store :func:`_kept` made."""
    return horismos_forked(
        tmp_path, "run", "pharmacy.ttl", "--store", "oxigraph:store", "--workflow",
        ":Complete", "--focus", f"<{patient(ehr)}>", "--tools", "complete.py",
        "--allow", ",".join(ALLOW), "--allow-host", "127.0.0.1", timeout=120,
    )  # fmt: skip


def test_a_commit_to_a_server_that_is_down_blocks_and_resume_commits_it_once(
    tmp_path: Path, ehr: Ehr
) -> None:
    agent, world = hydrated(tmp_path, ehr)
    ehr.stop()
    run = agent.run(world, ":Complete", patient(ehr), allow=ALLOW)
    assert run.status == "blocked", run.error
    (step,) = run.steps
    assert step.status == "blocked" and isinstance(step.error, Unreachable)
    assert "blocked, not failed" in str(step.error)
    (listed,) = world.instances()
    assert listed.status == "blocked" and listed.error_kind == "not_sent"
    assert agent.resume(world, run.instance, allow=ALLOW).status == "blocked"  # still down
    assert ehr.fhir.writes() == []
    ehr.start()
    done = agent.resume(world, run.instance, allow=ALLOW)
    assert done.status == "completed", done.error
    assert ehr.fhir.writes() == [("PUT", "/MedicationRequest/mr1")]  # once
    assert ehr.fhir.current("MedicationRequest", "mr1")["status"] == "completed"


def test_a_declared_on_error_still_fires_when_the_server_is_down(tmp_path: Path, ehr: Ehr) -> None:
    agent, world = hydrated(tmp_path, ehr, on_error=True)
    ehr.stop()
    run = agent.run(world, ":Complete", patient(ehr), allow=ALLOW)
    assert run.status == "waiting"
    assert [s.status for s in run.steps] == ["failed", "waiting"]
    (receipt,) = run.steps[0].receipts
    assert receipt["outcome"] == "failed" and "nothing was sent" in receipt["message"]
    assert ehr.fhir.writes() == []


def test_a_commit_whose_connection_is_never_made_blocks_in_a_process_of_its_own(
    tmp_path: Path, ehr: Ehr
) -> None:
    # A host that drops what is sent to it, and `horismos run` in a process of its own (one
    # per event): its first commit spent more than horis:timeout of its deadline (twice that)
    # loading the HTTP client, so the deadline came before httpx's own connect timeout, while
    # the connection was still being made, and the step failed for good, "was not sent"; in
    # a process that had committed before, httpx's came first, and the same outage was
    # blocked. Nothing was sent either way. (The client is now made before the deadline
    # starts: whichever comes first, the step is blocked.)
    store = _kept(tmp_path, ehr, quick="100ms")
    ehr.stop()
    with dropping(ehr.port):
        ran = _run_alone(tmp_path, ehr)
    assert ran.returncode == 4, ran.stdout + ran.stderr  # blocked
    assert "nothing was sent" in ran.stdout and "blocked, not failed" in ran.stdout, ran.stdout
    world = World.open(f"oxigraph:{store}")
    (listed,) = world.instances()
    assert listed.status == "blocked" and listed.error_kind == "not_sent"  # resumed later
    world.close()
    assert ehr.fhir.writes() == []


def test_the_first_commit_of_a_process_of_its_own_is_not_timed_loading_the_client(
    tmp_path: Path, ehr: Ehr
) -> None:
    # `horismos run` in a process of its own, a short horis:timeout, a healthy server: the
    # first commit of a process loaded the HTTP client (httpx, httpcore, the CA bundle: ~0.15 s
    # of CPU) within its deadline (twice horis:timeout, 100 ms here), which ran out before the
    # request left; the step was blocked, "no connection was made", and nothing was sent.
    # The client is made before the deadline starts, so the deadline times the request.
    _kept(tmp_path, ehr, quick="50ms")
    ran = _run_alone(tmp_path, ehr)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ehr.fhir.writes() == [("PUT", "/MedicationRequest/mr1")]
    assert ehr.fhir.current("MedicationRequest", "mr1")["status"] == "completed"
