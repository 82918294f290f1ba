"""A hydration and an adapter step's landing both replace a resource's projection; neither may
undo the other or leave the two mixed.

Real components: a loopback FHIR server (tests/servers/fhir_server.py), a real Agent and World;
only the interleaving is forced, by running the adapter step at the exact point inside the
hydration (after its remote read; between its read of the stored projection and its commit).

1. A hydration whose GET answered version 1 before an adapter commit landed version 2 landed
   version 1 over it: the world went back to an older version of the resource.
2. An adapter commit landing between the hydration's read of the stored projection and its
   commit: the hydration removed quads no longer there and added its own, and the projection
   graph held two versions at once (two ``horis:sourceVersion``, two ``fhir:status``).
3. The same, the other way round, for a catalog call of the adapter tool (``tools call``,
   ``Catalog.call``): its landing was not guarded at all, so a hydration between its read of
   the stored projection and its commit left two versions in one graph.
4. An adapter step's (or a catalog call's) landing reads the projection it replaces only after
   the system of record accepted its commit: a newer version hydrated in between was read as
   what the commit replaced, and the commit's older version landed over it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pharmacy_ehr import ALLOW, complete, completing
from rdflib import URIRef
from servers.fhir_server import FhirServer

import horismos._adapter_step as adapter_module
import horismos._hydrate as hydrate_module
from horismos import HORIS, Agent, World, replay
from horismos._fhir import projection_graph
from horismos._fhir_client import FhirClient

FHIR = "http://hl7.org/fhir/"


def setup(tmp_path: Path, fhir: FhirServer) -> tuple[Agent, World]:
    return completing(tmp_path, fhir, timeout="5s")


def projected(world: World, fhir: FhirServer, ref: str, predicate: URIRef) -> list[str]:
    """Every value ``predicate`` has in ``ref``'s projection graph, about the graph or the
    resource (a projection holds one of each)."""
    node = URIRef(f"{fhir.base}/{ref}")
    graph = projection_graph(node)
    found = world.graph.graph(graph)
    return sorted(str(o) for s in (graph, node) for o in found.objects(s, predicate))


def run_adapter_step(agent: Agent, world: World, fhir: FhirServer) -> None:
    """The other writer: an adapter step whose commit is accepted (version 1 → 2) and lands."""
    run = agent.run(world, ":Complete", URIRef(f"{fhir.base}/Patient/p1"), allow=ALLOW)
    assert run.status == "completed", run.error
    assert fhir.current("MedicationRequest", "mr1")["meta"]["versionId"] == "2"


def only_once(action: Callable[[], None]) -> Callable[[], None]:
    done: list[bool] = []

    def once() -> None:
        if not done:
            done.append(True)
            action()

    return once


def newer_hydration(agent: Agent, world: World, fhir: FhirServer) -> Callable[[], None]:
    """The other writer, once: another client updates the resource (version 3) and a
    hydration lands that."""

    def hydration() -> None:
        fhir.remote_update("MedicationRequest", "mr1", status="on-hold")
        (h,) = agent.hydrate(world, "ehr", ["MedicationRequest/mr1"])
        assert h.version == "3" and not h.kept

    return only_once(hydration)


def after_the_read(monkeypatch: pytest.MonkeyPatch, other: Callable[[], None]) -> None:
    """``other`` runs once the adapter commit's landing has read the stored projection it
    replaces, before its own commit."""
    real = adapter_module.replaced

    def replaced(*args: Any) -> Any:
        got = real(*args)
        other()
        return got

    monkeypatch.setattr(adapter_module, "replaced", replaced)


def test_a_hydration_read_before_an_accepted_commit_does_not_land_the_older_version(
        tmp_path: Path, fhir: FhirServer, monkeypatch: pytest.MonkeyPatch) -> None:
    agent, world = setup(tmp_path, fhir)
    other = only_once(lambda: run_adapter_step(agent, world, fhir))

    class Late(FhirClient):
        def read(self, ref: str) -> dict[str, Any]:
            got = super().read(ref)  # the remote answers version 1 ...
            if ref == "MedicationRequest/mr1":
                other()  # ... and then the adapter step's commit lands version 2
            return got

    monkeypatch.setattr(hydrate_module, "FhirClient", Late)
    done = agent.hydrate(world, "ehr", ["MedicationRequest/mr1"])
    assert projected(world, fhir, "MedicationRequest/mr1", HORIS.sourceVersion) == ["2"]
    assert projected(world, fhir, "MedicationRequest/mr1", URIRef(FHIR + "status")) == [
        "completed"]
    (h,) = done
    assert h.kept and h.version == "2"  # hydrate says it kept the newer stored projection


def test_an_accepted_commit_landing_inside_a_hydration_leaves_no_mixed_projection(
        tmp_path: Path, fhir: FhirServer, monkeypatch: pytest.MonkeyPatch) -> None:
    agent, world = setup(tmp_path, fhir)
    other = only_once(lambda: run_adapter_step(agent, world, fhir))
    real = hydrate_module.replaced
    reads: list[Any] = []

    def replaced(*args: Any) -> Any:
        reads.append(args[1])
        got = real(*args)  # the hydration has read the stored projection (version 1) ...
        other()  # ... and the adapter step's commit lands version 2 before its own commit
        return got

    monkeypatch.setattr(hydrate_module, "replaced", replaced)
    done = agent.hydrate(world, "ehr", ["MedicationRequest/mr1"])
    assert projected(world, fhir, "MedicationRequest/mr1", HORIS.sourceVersion) == ["2"]
    assert projected(world, fhir, "MedicationRequest/mr1", URIRef(FHIR + "status")) == [
        "completed"]
    assert len(projected(world, fhir, "MedicationRequest/mr1", HORIS.readAt)) == 1
    (h,) = done
    assert h.kept and h.version == "2"
    assert len(reads) == 2  # its guarded commit conflicted: it read again and decided again


def test_a_hydration_still_replaces_a_projection_nobody_changed_meanwhile(
        tmp_path: Path, fhir: FhirServer) -> None:
    agent, world = setup(tmp_path, fhir)
    fhir.remote_update("MedicationRequest", "mr1", status="on-hold")
    (h,) = agent.hydrate(world, "ehr", ["MedicationRequest/mr1"])
    assert not h.kept and h.version == "2"
    assert projected(world, fhir, "MedicationRequest/mr1", HORIS.sourceVersion) == ["2"]
    assert projected(world, fhir, "MedicationRequest/mr1", URIRef(FHIR + "status")) == [
        "on-hold"]
    assert len(projected(world, fhir, "MedicationRequest/mr1", HORIS.readAt)) == 1


def test_a_hydration_landing_inside_an_adapter_step_leaves_no_mixed_projection(
        tmp_path: Path, fhir: FhirServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The other way round: the adapter step's commit was accepted (version 2), it has read
    the stored projection it replaces (version 1), and before its step lands, another client
    updates the resource (version 3) and a hydration lands that. The step's landing removed
    version 1's quads, no longer there, and added its own: two versions in one graph. Read
    again, version 3 is neither the step's nor the one it replaced, so it is newer: kept."""
    agent, world = setup(tmp_path, fhir)
    # the step has read the stored projection (version 1), and a hydration lands version 3
    # before the step's own commit
    after_the_read(monkeypatch, newer_hydration(agent, world, fhir))
    trace = tmp_path / "run.jsonl"
    run = agent.run(world, ":Complete", URIRef(f"{fhir.base}/Patient/p1"), allow=ALLOW,
                    trace=trace)
    assert run.status == "completed", run.error
    assert [r["outcome"] for r in run.steps[0].receipts] == ["accepted"]
    assert len(fhir.writes()) == 1  # the remote commit was made once, never again
    # the hydration's projection, newer than the accepted commit's, whole and kept: nothing of
    # the step's version 2 beside it, nor over it
    assert projected(world, fhir, "MedicationRequest/mr1", HORIS.sourceVersion) == ["3"]
    assert projected(world, fhir, "MedicationRequest/mr1", URIRef(FHIR + "status")) == [
        "on-hold"]
    assert len(projected(world, fhir, "MedicationRequest/mr1", HORIS.readAt)) == 1
    # its landing read again after the conflict: the replay is handed the same answers
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    assert any(r[0] == "c!" for e in events for r in e.get("reads") or [])
    sent = len(fhir.log)
    report = replay(trace, Agent.from_files(tmp_path / "pharmacy.ttl",
                                            tools={"complete": complete}))
    assert not report.diverged, str(report)
    assert len(fhir.log) == sent


def call_complete(agent: Agent, world: World, fhir: FhirServer) -> Any:
    """A catalog call of the adapter tool (what ``horismos tools call t.complete`` makes)."""
    request = {"request": URIRef(f"{fhir.base}/MedicationRequest/mr1").n3()}
    return agent.catalog.call("t.complete", request, world, allow=list(ALLOW))


def test_a_hydration_landing_inside_a_catalog_call_leaves_the_newer_projection_alone(
        tmp_path: Path, fhir: FhirServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The catalog call's commit was accepted (version 2) and it has read the stored
    projection it replaces (version 1); before it lands, another client updates the resource
    (version 3) and a hydration lands that. The call's landing, unguarded, removed version
    1's quads, no longer there, and added its own beside version 3's."""
    agent, world = setup(tmp_path, fhir)
    # the call has read the stored projection (version 1), and a hydration lands version 3
    # before the call's own commit
    after_the_read(monkeypatch, newer_hydration(agent, world, fhir))
    called = call_complete(agent, world, fhir)
    assert called.status == "completed", called.error
    assert len(fhir.writes()) == 1  # the remote commit was made once, never again
    # one projection, the newer: version 3, not the call's version 2 beside it or over it
    assert projected(world, fhir, "MedicationRequest/mr1", HORIS.sourceVersion) == ["3"]
    assert projected(world, fhir, "MedicationRequest/mr1", URIRef(FHIR + "status")) == [
        "on-hold"]
    assert len(projected(world, fhir, "MedicationRequest/mr1", HORIS.readAt)) == 1


def test_a_catalog_call_lands_over_an_older_read_hydrated_meanwhile(
        tmp_path: Path, fhir: FhirServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hydration whose GET answered version 1 before the catalog call's commit, landing
    between the call's read of the stored projection and its commit: the call's accepted
    version 2 lands over it, whole (unguarded, the hydration's read time stayed beside it)."""
    agent, world = setup(tmp_path, fhir)
    stale = FhirClient(agent.adapter("ehr")).read("MedicationRequest/mr1")  # version 1

    class Stale(FhirClient):
        def read(self, ref: str) -> dict[str, Any]:
            return stale if ref == "MedicationRequest/mr1" else super().read(ref)

    def hydration() -> None:
        with monkeypatch.context() as m:
            m.setattr(hydrate_module, "FhirClient", Stale)
            (h,) = agent.hydrate(world, "ehr", ["MedicationRequest/mr1"])
        assert h.version == "1" and not h.kept

    after_the_read(monkeypatch, only_once(hydration))
    called = call_complete(agent, world, fhir)
    assert called.status == "completed", called.error
    assert len(fhir.writes()) == 1
    assert projected(world, fhir, "MedicationRequest/mr1", HORIS.sourceVersion) == ["2"]
    assert projected(world, fhir, "MedicationRequest/mr1", URIRef(FHIR + "status")) == [
        "completed"]
    assert len(projected(world, fhir, "MedicationRequest/mr1", HORIS.readAt)) == 1


def newer_before_the_landing_reads(agent: Agent, world: World, fhir: FhirServer,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Once the commit is accepted (version 2) and before its landing reads the stored
    projection it replaces, another client updates the resource (version 3) and a hydration
    lands that: what the landing first reads is already newer than its commit."""
    real = adapter_module.replaced
    other = newer_hydration(agent, world, fhir)

    def replaced(*args: Any) -> Any:
        other()  # version 3 lands before the landing has read anything ...
        return real(*args)  # ... so it reads version 3, not the version 1 it replaced

    monkeypatch.setattr(adapter_module, "replaced", replaced)


def test_a_newer_projection_landed_before_an_adapter_step_reads_it_is_kept(
        tmp_path: Path, fhir: FhirServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The step's commit was made from version 1 (If-Match) and accepted as version 2; version
    3 was landed before its landing read the stored projection. Read first, version 3 raised
    no conflict and the step landed its version 2 over it: the world went back a version.
    Neither the version the commit was made from nor its own, version 3 is newer: kept."""
    agent, world = setup(tmp_path, fhir)
    newer_before_the_landing_reads(agent, world, fhir, monkeypatch)
    trace = tmp_path / "run.jsonl"
    run = agent.run(world, ":Complete", URIRef(f"{fhir.base}/Patient/p1"), allow=ALLOW,
                    trace=trace)
    assert run.status == "completed", run.error
    (receipt,) = run.steps[0].receipts
    assert receipt["outcome"] == "accepted" and receipt["expected_version"] == "1"
    assert len(fhir.writes()) == 1  # the remote commit was made once, never again
    assert projected(world, fhir, "MedicationRequest/mr1", HORIS.sourceVersion) == ["3"]
    assert projected(world, fhir, "MedicationRequest/mr1", URIRef(FHIR + "status")) == [
        "on-hold"]
    assert len(projected(world, fhir, "MedicationRequest/mr1", HORIS.readAt)) == 1
    sent = len(fhir.log)
    report = replay(trace, Agent.from_files(tmp_path / "pharmacy.ttl",
                                            tools={"complete": complete}))
    assert not report.diverged, str(report)
    assert len(fhir.log) == sent


def test_a_newer_projection_landed_before_a_catalog_call_reads_it_is_kept(
        tmp_path: Path, fhir: FhirServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same for a catalog call, which lands through its own path (a call, not a step)."""
    agent, world = setup(tmp_path, fhir)
    newer_before_the_landing_reads(agent, world, fhir, monkeypatch)
    called = call_complete(agent, world, fhir)
    assert called.status == "completed", called.error
    assert len(fhir.writes()) == 1
    assert projected(world, fhir, "MedicationRequest/mr1", HORIS.sourceVersion) == ["3"]
    assert projected(world, fhir, "MedicationRequest/mr1", URIRef(FHIR + "status")) == [
        "on-hold"]
    assert len(projected(world, fhir, "MedicationRequest/mr1", HORIS.readAt)) == 1
