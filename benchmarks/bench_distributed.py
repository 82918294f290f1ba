"""Instances placed by Celery: 1 → 2 workers, the store's write capacity, a projection.

    python benchmarks/bench_distributed.py [--patients 80] [--latency 0 50] [--rounds 300]

Needs ``pip install -e '.[test]'`` (Celery, the ``oxigraph`` server) and Debian's
``redis-server``. Prints figures; asserts nothing.

1. *workers*: ``--patients`` triage patients in a fresh ``oxigraph serve`` world, ``horismos
   submit --all`` onto a fresh ``redis-server``, then 1 and then 2 ``horismos worker``
   processes; timed from the first task taken to the last instance stopped (read from the
   world), so worker start-up is left out. Tools answer at once, or after ``--latency`` ms.
2. *per instance*: the store requests, updates among them, and broker commands one instance
   costs (counted on a worker driving instances in this process).
3. *store*: guarded updates per second (the runner's commit: a ``DELETE/INSERT … WHERE``
   expecting the instance's version, plus its receipt check), one client and two clients at
   once, over ``--rounds`` rounds; and the broker's round trips per second (PING).
4. *projection*: throughput for 10 and 100 workers on separate machines, each the 1-worker
   rate, capped by what the store and the broker can take per instance.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
DEFINITIONS = [str(ROOT / "workflows" / "triage.ttl"), str(ROOT / "ontologies" / "ehr.ttl")]
EHR = "http://example.org/ehr#"
TOOLS = """
import time
LATENCY = {latency}


def assign_queue(patient, queue):
    time.sleep(LATENCY)
    return {{"queueRef": "Q-" + str(queue).rsplit('#', 1)[-1].upper()}}


def notify_nurse(patient, nurse, ref):
    time.sleep(LATENCY)
    return {{"assignedNurse": nurse}}
"""


def ward(folder: Path, patients: int, latency_ms: float) -> None:
    lines = ["@prefix : <http://example.org/ehr#> .", ":urgent a :AcuityLevel .",
             ":routine a :AcuityLevel .", ":nurse1 a :Nurse ; :onDuty true ."]
    lines += [f":p{i:04d} a :Patient ; :acuity :{'urgent' if i % 3 == 0 else 'routine'} ."
              for i in range(patients)]
    (folder / "ward.ttl").write_text("\n".join(lines) + "\n")
    (folder / "ehr_client.py").write_text(TOOLS.format(latency=latency_ms / 1000))


def horismos(cwd: Path, *args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "horismos", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        sys.exit(f"horismos {args[0]} failed: {done.stderr[-3000:]}")


def stopped(store: str) -> int:
    from horismos import World
    with World.open(store) as world:
        rows = world.store.select("""SELECT (COUNT(?i) AS ?n) WHERE {
            GRAPH <urn:horismos:instances> { ?i horis:status ?s FILTER(?s != horis:Running) }
            }""", {}, {"horis": "https://w3id.org/horismos#"})
        return int(rows[0]["n"])


def alive(procs: list[subprocess.Popen[bytes]], folder: Path, deadline: float) -> None:
    for i, p in enumerate(procs):
        if p.poll() is not None:
            sys.exit(f"worker {i} stopped: {(folder / f'w{i}.log').read_text()[-2000:]}")
    if time.monotonic() > deadline:
        sys.exit("the instances did not all stop within 600 s")


def workers_round(patients: int, latency_ms: float, n_workers: int, concurrency: int) -> float:
    """Instances per second with ``n_workers`` worker processes of ``concurrency`` threads."""
    from oxigraph_server import OxigraphServer
    from redis_server import RedisServer

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        ward(folder, patients, latency_ms)
        server = OxigraphServer(folder / "db")
        broker = RedisServer(folder / "redis")
        procs: list[subprocess.Popen[bytes]] = []
        try:
            horismos(folder, "load", "ward.ttl", "--store", server.store)
            horismos(folder, "submit", *DEFINITIONS, "--store", server.store, "--broker",
                     broker.url, "--all")
            for i in range(n_workers):
                procs.append(subprocess.Popen(
                    [sys.executable, "-m", "horismos", "worker", *DEFINITIONS, "--store",
                     server.store, "--broker", broker.url, "--tools", "ehr_client.py",
                     "--concurrency", str(concurrency)],
                    cwd=folder, stdout=subprocess.DEVNULL,
                    stderr=(folder / f"w{i}.log").open("wb")))
            deadline = time.monotonic() + 600
            while broker.queued() == patients:  # the clock starts at the first task taken
                alive(procs, folder, deadline)
                time.sleep(0.005)
            started = time.monotonic()
            while stopped(server.store) < patients:
                alive(procs, folder, deadline)
                time.sleep(0.05)
            return patients / (time.monotonic() - started)
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                p.wait(30)
            server.stop()
            broker.stop()


def per_instance(patients: int) -> tuple[float, float]:
    """Store requests and updates one instance costs, driven in this process."""
    from oxigraph_server import OxigraphServer

    from horismos import Agent
    from horismos._queue import InstanceDriver
    from horismos._stores.sparql import SparqlStore

    counts = {"requests": 0, "updates": 0}
    original = SparqlStore._request

    def counted(self, method, path, *args, **kwargs):  # type: ignore[no-untyped-def]
        counts["requests"] += 1
        counts["updates"] += path == "/update"
        return original(self, method, path, *args, **kwargs)

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        ward(folder, patients, 0)
        server = OxigraphServer(folder / "db")
        try:
            horismos(folder, "load", "ward.ttl", "--store", server.store)
            sys.path.insert(0, str(folder))
            import ehr_client  # type: ignore[import-not-found]

            agent = Agent.from_files(*DEFINITIONS, tools={
                "ehr_client.assign_queue": ehr_client.assign_queue,
                "ehr_client.notify_nurse": ehr_client.notify_nurse})
            driver = InstanceDriver(agent, server.store)
            wf = str(agent.workflow().iri)
            driver.drive(wf, f"{EHR}p0000")  # joins, places individuals: not counted
            SparqlStore._request = counted  # type: ignore[method-assign]
            try:
                for i in range(1, patients):
                    driver.drive(wf, f"{EHR}p{i:04d}")
            finally:
                SparqlStore._request = original  # type: ignore[method-assign]
                driver.close()
        finally:
            server.stop()
    n = patients - 1
    return counts["requests"] / n, counts["updates"] / n


def guarded_updates(url: str, rounds: int, clients: int) -> float:
    """Guarded commits per second, ``clients`` threads each on its own instance."""
    from rdflib import Literal, URIRef

    from horismos._stores import Change
    from horismos._stores.sparql import SparqlStore

    graph = URIRef("urn:horismos:instances")
    version = URIRef("https://w3id.org/horismos#version")

    def client(k: int) -> None:
        store = SparqlStore(url)
        inst = URIRef(f"urn:bench:instance:{k}")
        store.apply(Change(add=[(inst, version, Literal(0), graph)]))
        for v in range(rounds):
            store.apply(Change(add=[(inst, version, Literal(v + 1), graph)],
                               remove=[(inst, version, Literal(v), graph)],
                               expect=[(inst, version, Literal(v), graph)]))
        store.close()

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return clients * rounds / (time.monotonic() - started)


def store_capacity(rounds: int) -> dict[int, float]:
    from oxigraph_server import OxigraphServer

    with tempfile.TemporaryDirectory() as tmp:
        server = OxigraphServer(Path(tmp) / "db")
        try:
            return {c: guarded_updates(server.url, rounds, c) for c in (1, 2)}
        finally:
            server.stop()


def broker_round_trips(seconds: float = 1.0) -> float:
    from redis_server import RedisServer

    with tempfile.TemporaryDirectory() as tmp:
        broker = RedisServer(Path(tmp) / "redis")
        try:
            with socket.create_connection(("127.0.0.1", broker.port)) as s:
                n, deadline = 0, time.monotonic() + seconds
                while time.monotonic() < deadline:
                    s.sendall(b"PING\r\n")
                    s.recv(16)
                    n += 1
            return n / seconds
        finally:
            broker.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--patients", type=int, default=80)
    ap.add_argument("--latency", type=float, nargs="+", default=[0.0, 50.0])
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 4],
                    help="threads per worker process")
    args = ap.parse_args()
    if shutil.which("redis-server") is None:
        sys.exit("redis-server is not installed: apt-get install redis-server")
    print(f"machine: {os.cpu_count()} cores; {args.patients} triage patients (2 gated steps "
          "each); workers on this machine")
    rates: dict[float, float] = {}
    for concurrency in args.concurrency:
        for latency in args.latency:
            one = workers_round(args.patients, latency, 1, concurrency)
            two = workers_round(args.patients, latency, 2, concurrency)
            rates[latency] = max(rates.get(latency, 0.0), one)
            print(f"workers of {concurrency} thread(s), tools {latency:g} ms: 1 worker "
                  f"{one:.1f} inst/s, 2 workers {two:.1f} inst/s ({two / one:.2f}x)")
    requests, updates = per_instance(min(args.patients, 40))
    broker_cmds = 6  # LPUSH by submit; BRPOP, unacked HSET+ZADD on delivery; HDEL+ZREM on ack
    print(f"per instance: {requests:.1f} store requests ({updates:.1f} updates), "
          f"about {broker_cmds} broker commands")
    capacity = store_capacity(args.rounds)
    print(f"oxigraph serve: {capacity[1]:.0f} guarded updates/s (1 client), "
          f"{capacity[2]:.0f}/s (2 clients)")
    print("fuseki: not measured here (its jar comes from Maven Central, which this machine "
          "does not reach)")
    pings = broker_round_trips()
    print(f"redis-server: {pings:.0f} round trips/s (1 client; it serves many clients at once)")
    store_cap = max(capacity.values()) / updates  # instances/s the store's writes allow
    broker_cap = pings * 4 / broker_cmds  # pipelining across clients: ~4x one client's rate
    for latency, one in rates.items():  # per machine: its best 1-worker rate
        for n in (10, 100):
            wanted = n * one
            got = min(wanted, store_cap, broker_cap)
            limit = ("workers" if got == wanted else
                     "the store's writes" if got == store_cap else "the broker")
            print(f"projection, tools {latency:g} ms, {n} workers: {got:.0f} inst/s "
                  f"(workers alone {wanted:.0f}; store allows {store_cap:.0f}, broker "
                  f"{broker_cap:.0f}); limited by {limit}")


if __name__ == "__main__":
    main()
