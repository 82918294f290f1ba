"""What an adapter costs: hydrating N resources, then dispensing each with one conditional
FHIR transaction, against the loopback FHIR server on 127.0.0.1 (tests/servers/fhir_server.py).

    python benchmarks/bench_adapters.py [--requests 200]

Prints the time to hydrate (per resource; one search, one commit), the median and mean time of
an adapter-bound step (decision, scope and version checks, the HTTP round trip, reconciling,
landing the new projections), the quads a resource's projection holds, and the time to
re-hydrate the same resources (each projection replaced).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "examples" / "fhir"))

from pharmacy import dispense  # noqa: E402
from servers.fhir_server import serve_fhir  # noqa: E402

from horismos import Agent, World  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--requests", type=int, default=200)
    n = p.parse_args().requests
    with serve_fhir() as fhir, tempfile.TemporaryDirectory() as tmp:
        for i in range(n):
            fhir.put({"resourceType": "MedicationRequest", "id": f"mr{i}", "status": "active",
                      "intent": "order", "subject": {"reference": f"Patient/p{i}"},
                      "medicationCodeableConcept": {"text": "amoxicillin 500 mg"}})
        ttl = (ROOT / "examples" / "fhir" / "pharmacy.ttl").read_text().replace(
            "http://127.0.0.1:8089/fhir", fhir.base).replace(
            'horis:tokenFromEnv "EHR_TOKEN" ;', "")
        path = Path(tmp) / "pharmacy.ttl"
        path.write_text(ttl)
        agent = Agent.from_files(path, tools={"pharmacy.dispense": dispense})
        world = World.open("memory")
        t0 = time.perf_counter()
        agent.hydrate(world, "ehr", search=["MedicationRequest?status=active"])
        hydrate = time.perf_counter() - t0
        quads = sum(1 for _ in world.store.quads())
        t0 = time.perf_counter()
        agent.hydrate(world, "ehr", search=["MedicationRequest?status=active"])
        rehydrate = time.perf_counter() - t0
        steps: list[float] = []

        def timed(inst: Any, rec: Any) -> None:
            steps.append(sum(rec.timings.values()))

        t0 = time.perf_counter()
        run = agent.run(world, ":Dispense", all=True, on_step=timed,
                        allow=("ReadOnly", "HostStateWrite", "ExternalCommit"))
        total = time.perf_counter() - t0
        assert run.counts == {"completed": n}, run.counts
    print(f"{n} medication requests")
    print(f"hydrate     {hydrate * 1e3:8.1f} ms  ({hydrate / n * 1e3:.2f} ms a resource, "
          f"{quads / n:.0f} quads a projection)")
    print(f"re-hydrate  {rehydrate * 1e3:8.1f} ms  ({rehydrate / n * 1e3:.2f} ms a resource)")
    print(f"dispense    {total * 1e3:8.1f} ms  (step median {statistics.median(steps) * 1e3:.2f}"
          f" ms, mean {statistics.mean(steps) * 1e3:.2f} ms; one transaction each)")


if __name__ == "__main__":
    main()
