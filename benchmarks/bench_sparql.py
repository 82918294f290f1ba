"""Round trips per step on ``sparql:URL``, and steps per second, against a local ``oxigraph serve``.

    python benchmarks/bench_sparql.py [--patients 400] [--triples 50000] [--against REV]

The triage workflow (QueuePatient calls a tool that is not idempotent, so it announces an
intent; NotifyNurse's tool is idempotent) over every patient of a generated world, tools that
answer at once, two ways:

- *runner*: the runner driven directly, instance after instance, as ``bench_stores.py`` does
  (no trace, no claims): what the step path itself costs;
- *run --all*: ``Agent.run(world, all=True)`` in this process, as ``horismos run --all`` runs
  it: every read recorded for the trace, every commit fenced by the worker's lease, claims
  taken in batches.

Every HTTP request the store sends is counted by wrapping its transport (the lease's heartbeat
has a connection of its own and is not counted: it beats every few seconds, not per step).
Printed: queries and updates per step, all of the run's requests included (claims, each
instance's creation), steps per second, and per step the CPU time of this process and of the
server and the wall time spent waiting on requests: on a busy machine steps/s follows the CPU
the processes get, and the CPU figures say what an idle one would allow. ``--against REV``
runs the same in a copy of the code at git revision REV (``git archive``), in the same process
tree, for a before/after with ratios. Each side gets a fresh server; the figures depend on the
machine's load (printed).

``--processes K [K ...]`` then runs K ``run --all`` processes side by side against one server
(as K ``horismos run --all --store sparql:URL`` would): a client's CPU and the server's
overlap, so on a machine with cores to spare the aggregate rate exceeds one process's. Printed
per K: the aggregate steps/s (all steps over the time from the first process starting its run
to the last one finishing), requests and CPU per step summed over the processes, and two
checks made on the server afterwards: every patient got exactly one instance, run to its end
(the claims' exclusivity), and the digest kept in the store equals the one recomputed from
its quads. With ``--against REV`` each K is run for both codes, one after the other;
``--only-processes`` skips the single-process table.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from bench_stores import DEFINITIONS, TOOLS, Server, generate  # noqa: E402


class Counting:
    """The store's connection, counting requests by endpoint (and the time spent in them)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.counts: collections.Counter[str] = collections.Counter()
        self.seconds: collections.Counter[str] = collections.Counter()

    def request(self, method: str, target: str, *args: Any) -> Any:
        kind = "update" if target.endswith("/update") else "query"
        self.counts[kind] += 1
        t0 = time.perf_counter()
        try:
            return self.inner.request(method, target, *args)
        finally:
            self.seconds[kind] += time.perf_counter() - t0

    def handle_request(self, request: Any) -> Any:
        """The same, for code before horismos._stores.http1 (an httpx transport), for --against."""
        kind = "update" if request.url.path.endswith("/update") else "query"
        self.counts[kind] += 1
        t0 = time.perf_counter()
        try:
            return self.inner.handle_request(request)
        finally:
            self.seconds[kind] += time.perf_counter() - t0

    def close(self) -> None:
        self.inner.close()


def _cpu(pid: int) -> float:
    """Seconds of CPU the process ``pid`` has used (user + system)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def child(mode: str, world_file: Path, work: Path, url: str, server_pid: int) -> dict[str, Any]:
    """One mode over a freshly loaded world, in this process (the code on ``sys.path``)."""
    sys.path.insert(0, str(work))
    import ehr_client  # type: ignore[import-not-found]

    from horismos import Agent, World
    from horismos._environment import Environment
    from horismos._runner import Runner, focus_nodes
    from horismos._trace import Trace

    world = World.open(f"sparql:{url}")
    world.load(world_file)
    agent = Agent.from_files(*DEFINITIONS, tools={
        "ehr_client.assign_queue": ehr_client.assign_queue,
        "ehr_client.notify_nurse": ehr_client.notify_nurse})
    counting = Counting(world.store._http)  # type: ignore[attr-defined]
    world.store._http = counting  # type: ignore[attr-defined]
    t0, cpu0, server0 = time.perf_counter(), time.process_time(), _cpu(server_pid)
    if mode == "runner":
        wf = agent.workflow()
        runner = Runner(agent.definitions, agent._gate, world=world, trace=Trace(None),
                        registry=agent.tools, env=Environment())

        async def drive() -> int:
            done = 0
            for f in focus_nodes(agent.definitions, world, wf):
                inst = await runner.run_instance(wf, f)
                done += sum(1 for s in inst.steps if s.status == "completed")
            await runner.aclose()
            return done

        steps = asyncio.run(drive())
    else:
        run = agent.run(world, all=True, trace=work / "trace.jsonl")
        steps = sum(1 for inst in run.instances for s in inst.steps if s.status == "completed")
    seconds = time.perf_counter() - t0
    cpu, server_cpu = time.process_time() - cpu0, _cpu(server_pid) - server0
    world.close()
    return {"steps": steps, "seconds": seconds, "cpu": cpu, "server_cpu": server_cpu,
            **counting.counts, "waited": dict(counting.seconds)}


def side_by_side(world_file: Path, work: Path, url: str, index: int) -> dict[str, Any]:
    """One of K ``run --all`` processes: ready once imported and parsed, then runs on ``go``."""
    sys.path.insert(0, str(work))
    import ehr_client  # type: ignore[import-not-found]

    from horismos import Agent, World

    world = World.open(f"sparql:{url}")
    agent = Agent.from_files(*DEFINITIONS, tools={
        "ehr_client.assign_queue": ehr_client.assign_queue,
        "ehr_client.notify_nurse": ehr_client.notify_nurse})
    counting = Counting(world.store._http)  # type: ignore[attr-defined]
    world.store._http = counting  # type: ignore[attr-defined]
    print("ready", flush=True)
    sys.stdin.readline()
    t0, cpu0 = time.time(), time.process_time()
    run = agent.run(world, all=True, trace=work / f"trace-{index}.jsonl")
    t1, cpu = time.time(), time.process_time() - cpu0
    steps = sum(1 for inst in run.instances for s in inst.steps if s.status == "completed")
    world.close()
    return {"steps": steps, "start": t0, "end": t1, "cpu": cpu, **counting.counts,
            "waited": dict(counting.seconds)}


def checked(url: str, patients: int) -> tuple[bool, bool]:
    """After the processes: did each patient get exactly one instance, finished; does the
    digest kept in the store equal the one recomputed from its quads?"""
    from horismos import World
    from horismos._world import INSTANCES

    with World.open(f"sparql:{url}") as world:
        rows = world.store.select(  # type: ignore[attr-defined]
            "SELECT ?f (COUNT(?i) AS ?n) (SUM(IF(?s = horis:Completed, 1, 0)) AS ?done) WHERE "
            f"{{ GRAPH <{INSTANCES}> {{ ?i horis:focus ?f ; horis:status ?s }} }} GROUP BY ?f",
            {}, {"horis": "https://w3id.org/horismos#"})
        once = len(rows) == patients and all(
            int(r["n"]) == 1 and int(r["done"]) == 1 for r in rows)
        kept, recomputed = world.store.check_digest()  # type: ignore[attr-defined]
    return once, kept == recomputed


def measure_side_by_side(code: Path, k: int, patients: int, triples: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-sparql-k-") as tmp:
        work = Path(tmp)
        (work / "ehr_client.py").write_text(TOOLS.format(latency=0))
        generate(work / "ward.ttl", triples, patients)
        server = Server(work / "server")
        env = {**os.environ, "PYTHONPATH": str(code)}
        try:
            from horismos import World

            with World.open(f"sparql:{server.url}") as world:
                world.load(work / "ward.ttl")
            procs = [subprocess.Popen(
                [sys.executable, __file__, "--side", str(work / "ward.ttl"), str(work),
                 server.url, str(i)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                env=env) for i in range(k)]
            for p in procs:
                assert p.stdout is not None and p.stdout.readline().strip() == "ready"
            server0 = _cpu(server.process.pid)
            for p in procs:
                assert p.stdin is not None
                p.stdin.write("go\n")
                p.stdin.flush()
            outs = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
            server_cpu = _cpu(server.process.pid) - server0
            if any(p.returncode for p in procs):
                raise RuntimeError(f"a run --all process failed with K={k}")
            once, digest_ok = checked(server.url, patients)
        finally:
            server.stop()
    return {"steps": sum(o["steps"] for o in outs),
            "seconds": max(o["end"] for o in outs) - min(o["start"] for o in outs),
            "cpu": sum(o["cpu"] for o in outs), "server_cpu": server_cpu,
            "query": sum(o.get("query", 0) for o in outs),
            "update": sum(o.get("update", 0) for o in outs),
            "waited": sum(sum(o["waited"].values()) for o in outs),
            "once": once, "digest": digest_ok}


def measure(code: Path, mode: str, patients: int, triples: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-sparql-") as tmp:
        work = Path(tmp)
        (work / "ehr_client.py").write_text(TOOLS.format(latency=0))
        generate(work / "ward.ttl", triples, patients)
        server = Server(work / "server")
        try:
            done = subprocess.run(
                [sys.executable, __file__, "--child", mode, str(work / "ward.ttl"), str(work),
                 server.url, str(server.process.pid)], capture_output=True, text=True, check=False,
                env={**os.environ, "PYTHONPATH": str(code)})
            if done.returncode != 0:
                raise RuntimeError(f"{mode} at {code}: {done.stderr[-2000:]}")
            return json.loads(done.stdout.strip().splitlines()[-1])
        finally:
            server.stop()


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        mode, world_file, work, url, pid = sys.argv[2:7]
        print(json.dumps(child(mode, Path(world_file), Path(work), url, int(pid))))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--side":
        world_file, work, url, index = sys.argv[2:6]
        print(json.dumps(side_by_side(Path(world_file), Path(work), url, int(index))))
        return
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--patients", type=int, default=400)
    p.add_argument("--triples", type=int, default=50_000)
    p.add_argument("--against", metavar="REV",
                   help="also measure the code at this git revision, for a before/after")
    p.add_argument("--processes", type=int, nargs="*", default=[], metavar="K",
                   help="also run K run --all processes side by side on one server, per K")
    p.add_argument("--only-processes", action="store_true",
                   help="skip the single-process modes (with --processes)")
    args = p.parse_args()

    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; "
          f"{args.patients} patients ({args.patients * 2} steps), world of ~{args.triples:,} "
          "triples, tools answering at once")
    with tempfile.TemporaryDirectory(prefix="bench-sparql-code-") as tmp:
        codes = [("this", ROOT)]
        if args.against:
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.against,
                                      "horismos"], capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
            codes.insert(0, (args.against, Path(tmp)))
        if not args.only_processes:
            print(f"{'code':<14}{'mode':<12}{'queries/step':>14}{'updates/step':>14}"
                  f"{'steps/s':>10}{'client CPU':>12}{'server CPU':>12}{'in requests':>13}"
                  "  (ms/step)")
        results: dict[tuple[str, str], dict[str, Any]] = {}
        for mode in () if args.only_processes else ("runner", "run --all"):
            for name, code in codes:
                r = results[name, mode] = measure(code, mode, args.patients, args.triples)
                n = max(r["steps"], 1)
                waited = sum(r["waited"].values())
                print(f"{name:<14}{mode:<12}{r.get('query', 0) / n:>14.2f}"
                      f"{r.get('update', 0) / n:>14.2f}{n / r['seconds']:>10.0f}"
                      f"{r['cpu'] / n * 1e3:>12.2f}{r['server_cpu'] / n * 1e3:>12.2f}"
                      f"{waited / n * 1e3:>13.2f}")
        if args.against and not args.only_processes:
            print("ratios (this / before):")
            for mode in ("runner", "run --all"):
                old, new = results[args.against, mode], results["this", mode]
                rate = (new["steps"] / new["seconds"]) / (old["steps"] / old["seconds"])
                reqs = ((new.get("query", 0) + new.get("update", 0)) / new["steps"]) / (
                    (old.get("query", 0) + old.get("update", 0)) / old["steps"])
                print(f"  {mode:<12} requests/step x{reqs:.2f}, steps/s x{rate:.2f}")
        if args.processes:
            sys.path.insert(0, str(ROOT))
            print(f"K run --all processes on one server (load average "
                  f"{os.getloadavg()[0]:.2f}):")
            print(f"{'code':<14}{'K':<4}{'queries/step':>14}{'updates/step':>14}{'steps/s':>10}"
                  f"{'client CPU':>12}{'server CPU':>12}{'in requests':>13}  (ms/step)"
                  "  each patient once  digest")
            for k in args.processes:
                for name, code in codes:
                    r = measure_side_by_side(code, k, args.patients, args.triples)
                    n = max(r["steps"], 1)
                    print(f"{name:<14}{k:<4}{r['query'] / n:>14.2f}{r['update'] / n:>14.2f}"
                          f"{n / r['seconds']:>10.0f}{r['cpu'] / n * 1e3:>12.2f}"
                          f"{r['server_cpu'] / n * 1e3:>12.2f}{r['waited'] / n * 1e3:>13.2f}"
                          f"  {'yes' if r['once'] else 'NO':>17}"
                          f"  {'holds' if r['digest'] else 'BROKEN'}")


if __name__ == "__main__":
    main()
