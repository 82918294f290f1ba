"""World stores compared: load rate, bytes per triple, committed steps per second, workers.

    python benchmarks/bench_stores.py [--triples 1000000] [--patients 300]
                                      [--backends memory oxigraph oxigraph:PATH sparql]
                                      [--worker-patients 400] [--latency 0 10]

For each backend, in a fresh process so memory figures do not mix:

- *load*: a generated Turtle world of ``--triples`` triples (observations, plus ``--patients``
  patients for the triage workflow) read by ``World.load`` — pyoxigraph's parser on every
  backend. Bytes per triple: the process's RSS growth for in-memory stores; the store
  directory's size on disk for ``oxigraph:PATH`` and for the server's ``--location`` (after a
  flush; RocksDB compresses, so it is far below the in-memory figure).
- *steps*: the triage workflow (two gated, committed steps per patient) for every patient of
  that world, driven by the runner directly, its trace kept in memory (no file); ``--digest``
  times a recomputation of the world's digest from scratch (``horismos digest --check``), the
  kept one costing nothing.

Then one and two ``horismos run --all --store sparql:URL`` processes on one ``oxigraph serve``
over ``--worker-patients`` patients, whole processes timed (start-up included), with tools
that answer at once and tools that take ``--latency`` milliseconds, as an EHR call would.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from horismos import World

ROOT = Path(__file__).resolve().parent.parent
DEFINITIONS = [ROOT / "workflows" / "triage.ttl", ROOT / "ontologies" / "ehr.ttl"]
TOOLS = """
import itertools, time
_n = itertools.count()
LATENCY = {latency}


def assign_queue(patient, queue):
    time.sleep(LATENCY)
    return {{"queueRef": f"Q-{{str(queue).rsplit('#', 1)[-1].upper()}}-{{next(_n)}}"}}


def notify_nurse(patient, nurse, ref):
    time.sleep(LATENCY)
    return {{"assignedNurse": nurse}}
"""


def generate(path: Path, triples: int, patients: int) -> int:
    """A Turtle world: ``patients`` triage patients, then observations up to ``triples``."""
    lines = ["@prefix : <http://example.org/ehr#> .",
             "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .",
             "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .",
             ":urgent a :AcuityLevel .", ":routine a :AcuityLevel .",
             ":nurse1 a :Nurse ; rdfs:label \"Nurse 1\" ; :onDuty true ."]
    count = 4
    for i in range(patients):
        lines.append(f':p{i} a :Patient ; rdfs:label "Patient {i}" ; '
                     f':acuity :{"urgent" if i % 3 == 0 else "routine"} .')
        count += 3
    with path.open("w") as f:
        f.write("\n".join(lines) + "\n")
        i = 0
        while count + 5 <= triples:
            f.write(f':o{i} a :Observation ; :of :p{i % max(patients, 1)} ; :code "C{i % 997}" '
                    f'; :value "{i * 0.37:.2f}"^^xsd:decimal ; rdfs:label "Observation {i}" .\n')
            i += 1
            count += 5
    return count


def _rss() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS"))


def _pid_rss(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS"))


def _du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``oxigraph serve --location DIR`` on a free port."""

    def __init__(self, location: Path) -> None:
        import httpx

        self.location = location
        port = _free_port()
        self.url = f"http://127.0.0.1:{port}"
        exe = Path(sys.executable).parent / "oxigraph"
        self.process = subprocess.Popen(
            [str(exe if exe.exists() else "oxigraph"), "serve", "--location", str(location),
             "--bind", f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(500):
            try:
                httpx.get(self.url + "/query", params={"query": "ASK {}"}, timeout=1)
                return
            except httpx.HTTPError:
                time.sleep(0.02)
        raise RuntimeError("oxigraph serve did not start")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait()


@contextlib.contextmanager
def filled_world(kind: str, tmp: str, quads: list[tuple]) -> Iterator[World]:
    """A fresh world of ``kind`` (``sparql``: a fresh ``oxigraph serve``; ``oxigraph:PATH``,
    ``journal:PATH``: a disk store in a new folder under ``tmp``; else the store so named)
    holding ``quads``, added in batches; closed, its server stopped, on leaving."""
    from horismos import World  # the tree on PYTHONPATH, as the children import theirs
    from horismos._stores import Change

    server = None
    where = Path(tempfile.mkdtemp(dir=tmp))
    if kind == "sparql":
        server = Server(where)
        world = World.open(f"sparql:{server.url}")
    else:
        on_disk = {"oxigraph:PATH": f"oxigraph:{where}", "journal:PATH": f"journal:{where}/j"}
        world = World.open(on_disk.get(kind, kind))
    try:
        for i in range(0, len(quads), 20_000):
            world.store.apply(Change(add=quads[i : i + 20_000]))
        yield world
    finally:
        world.store.close()
        if server is not None:
            server.stop()


# -- one backend, in a child process ------------------------------------------------------

def child(backend: str, world_file: Path, workdir: Path, url: str | None, server_pid: int,
          digest: bool) -> dict:
    sys.path.insert(0, str(workdir))
    from horismos import Agent, World
    from horismos._environment import Environment
    from horismos._runner import Runner, focus_nodes
    from horismos._trace import Trace

    store = {"oxigraph:PATH": f"oxigraph:{workdir / 'world'}",
             "sparql": f"sparql:{url}"}.get(backend, backend)
    world = World.open(store)
    server_before = _pid_rss(server_pid) if server_pid else 0
    rss0, t0 = _rss(), time.perf_counter()
    world.load(world_file)
    load_s = time.perf_counter() - t0
    quads = sum(1 for _ in world.store.quads())
    out: dict = {"backend": backend, "quads": quads, "load_s": load_s}
    if backend in ("memory", "oxigraph"):
        out["bytes"], out["bytes_how"] = _rss() - rss0, "RSS growth"
    elif backend == "oxigraph:PATH":
        world.store._store.flush()  # type: ignore[attr-defined]
        out["bytes"], out["bytes_how"] = _du(workdir / "world"), "on disk"
    else:
        out["bytes"], out["bytes_how"] = _du(workdir / "server"), "server on disk"
        out["server_rss"] = _pid_rss(server_pid) - server_before
    import ehr_client  # type: ignore[import-not-found]

    agent = Agent.from_files(*DEFINITIONS, tools={
        "ehr_client.assign_queue": ehr_client.assign_queue,
        "ehr_client.notify_nurse": ehr_client.notify_nurse})
    wf = agent.workflow()
    foci = focus_nodes(agent.definitions, world, wf)
    runner = Runner(agent.definitions, agent._gate, world=world, trace=Trace(None),
                    registry=agent.tools, env=Environment())

    async def drive() -> int:
        done = 0
        for f in foci:
            inst = await runner.run_instance(wf, f)
            done += sum(1 for s in inst.steps if s.status == "completed")
        await runner.aclose()
        return done

    t0 = time.perf_counter()
    steps = asyncio.run(drive())
    out.update(steps=steps, steps_s=time.perf_counter() - t0, instances=len(foci))
    if digest:
        t0 = time.perf_counter()
        world.store.recompute_digest()  # what --check costs; world.digest() is kept: O(1)
        out["digest_s"] = time.perf_counter() - t0
    world.store.close()
    return out


def bench_backend(backend: str, world_file: Path, digest: bool) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-stores-") as tmp:
        work = Path(tmp)
        (work / "ehr_client.py").write_text(TOOLS.format(latency=0))
        server = Server(work / "server") if backend == "sparql" else None
        try:
            cmd = [sys.executable, __file__, "--child", backend, str(world_file), str(work),
                   server.url if server else "-", str(server.process.pid if server else 0),
                   "1" if digest else "0"]
            done = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise RuntimeError(f"{backend}: {done.stderr[-2000:]}")
            return json.loads(done.stdout.strip().splitlines()[-1])
        finally:
            if server:
                server.stop()


# -- workers ------------------------------------------------------------------------------

def bench_workers(patients: int, workers: int, latency_ms: float,
                  ) -> tuple[float, float, int]:
    """Seconds for ``workers`` processes to run --all over ``patients`` (whole processes, and
    from the first step's start to the last step's end as the store records them), and the
    steps committed."""
    import httpx

    with tempfile.TemporaryDirectory(prefix="bench-workers-") as tmp:
        work = Path(tmp)
        generate(work / "ward.ttl", 4 + patients * 3, patients)
        (work / "ehr_client.py").write_text(TOOLS.format(latency=latency_ms / 1000))
        server = Server(work / "server")
        try:
            store = f"sparql:{server.url}"
            horismos = [sys.executable, "-m", "horismos"]
            subprocess.run([*horismos, "load", "ward.ttl", "--store", store], cwd=work,
                           check=True, capture_output=True)
            t0 = time.perf_counter()
            procs = [subprocess.Popen(
                [*horismos, "run", *map(str, DEFINITIONS), "--all", "--store", store,
                 "--tools", "ehr_client.py", "-q"], cwd=work, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL) for _ in range(workers)]
            codes = [p.wait() for p in procs]
            elapsed = time.perf_counter() - t0
            if any(codes):
                raise RuntimeError(f"workers exited {codes}")
            r = httpx.post(server.url + "/query", data={"query": """
                PREFIX prov: <http://www.w3.org/ns/prov#>
                SELECT (COUNT(?a) AS ?n) (MIN(?s) AS ?first) (MAX(?e) AS ?last) WHERE {
                    GRAPH ?g { ?a <https://w3id.org/horismos#step> ?x ;
                                  prov:startedAtTime ?s ; prov:endedAtTime ?e }
                    FILTER(STRSTARTS(STR(?g), 'urn:horismos:effect:')) }"""},
                headers={"Accept": "application/sparql-results+json"})
            row = {k: v["value"] for k, v in r.json()["results"]["bindings"][0].items()}
            span = (dt.datetime.fromisoformat(row["last"])
                    - dt.datetime.fromisoformat(row["first"])).total_seconds()
            return elapsed, span, int(row["n"])
        finally:
            server.stop()


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        backend, world_file, work, url, pid, digest = sys.argv[2:8]
        print(json.dumps(child(backend, Path(world_file), Path(work),
                               None if url == "-" else url, int(pid), digest == "1")))
        return
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--triples", type=int, default=1_000_000)
    p.add_argument("--patients", type=int, default=300)
    p.add_argument("--backends", nargs="+",
                   default=["memory", "oxigraph", "oxigraph:PATH", "sparql"])
    p.add_argument("--worker-patients", type=int, default=400)
    p.add_argument("--latency", type=float, nargs="*", default=[0.0, 10.0],
                   help="tool latencies (ms) for the workers comparison (none: skip it)")
    p.add_argument("--digest", action="store_true",
                   help="also time one canonical digest of the whole world per backend")
    args = p.parse_args()

    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="bench-world-") as tmp:
        world_file = Path(tmp) / "world.ttl"
        n = generate(world_file, args.triples, args.patients)
        print(f"world: {n:,} triples, {world_file.stat().st_size / 1e6:.1f} MB of Turtle, "
              f"{args.patients} patients")
        print(f"{'backend':<15}{'load':>14}{'bytes/triple':>14}  {'(measured as)':<16}"
              f"{'steps/s':>9}{'steps':>7}" + ("  digest" if args.digest else ""))
        for backend in args.backends:
            r = bench_backend(backend, world_file, args.digest)
            extra = f"  {r['digest_s']:.1f} s" if "digest_s" in r else ""
            server = (f"  (server RSS +{r['server_rss'] / r['quads']:.0f} B/triple)"
                      if "server_rss" in r else "")
            print(f"{backend:<15}{r['quads'] / r['load_s']:>10,.0f} t/s"
                  f"{r['bytes'] / r['quads']:>14.0f}  {r['bytes_how']:<16}"
                  f"{r['steps'] / r['steps_s']:>9.0f}{r['steps']:>7}{extra}{server}")
    if not args.latency:
        return
    print(f"workers on one oxigraph serve, {args.worker_patients} patients "
          f"({args.worker_patients * 2} steps); steps/s over the run (and whole processes):")
    for latency in args.latency:
        one, span1, steps1 = bench_workers(args.worker_patients, 1, latency)
        two, span2, steps2 = bench_workers(args.worker_patients, 2, latency)
        print(f"  tools {latency:g} ms: 1 worker {steps1 / span1:.0f} ({steps1 / one:.0f}), "
              f"2 workers {steps2 / span2:.0f} ({steps2 / two:.0f}) -> "
              f"{(steps2 / span2) / (steps1 / span1):.2f}x ({one / two:.2f}x)")


if __name__ == "__main__":
    main()
