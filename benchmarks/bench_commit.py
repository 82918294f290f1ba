"""What a step's commit costs, alone: its quads built, converted, checked, digested, written.

    python benchmarks/bench_commit.py [--prescriptions 2000] [--rounds 3] [--store oxigraph]
                                      [--filler 0] [--before PATH]

The pharmacy workload of bench_peers.py (decide, dispense, notify a prescription), with the
tool calls, preconditions and gate left out: for each prescription the runner creates its
instance (a commit), then for each of the three steps builds the effects the tool's answer
makes and commits them as the runner does (``Runner._effect_quads``, then
``Runner._finish_step``: provenance, the instance's new state replacing the old, guarded by
its version); ``dispense`` is not idempotent, so its intent is announced first (a commit
too). Timed: the effect quads built plus ``_finish_step``'s own ``commit`` timing (state
quads built, the change landed, the digest moved), and each intent's commit. The trace event
``_finish_step`` writes is not timed. The world is checked against its recomputed digest at
the end of each round.

``--store oxigraph:PATH``: a fresh on-disk store each round. ``--filler N``: the store holds N
quads of other data first (bulk-loaded, then reopened as a process per event finds it), to see
whether a commit costs more in a bigger world: it should not, a commit touching only its quads.

``--before PATH``: also run the horismos package of PATH (a git worktree of main, say),
imported under another name, alternating with this one round by round, so both are measured
under the same load on a shared machine; prints the ratio.

Prints µs per step commit (median of rounds; a step's commit includes its share of the
intent), µs per instance creation, and committed steps per second of commit work alone.
"""

from __future__ import annotations

import argparse
import importlib
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rdflib import RDF, Literal, Namespace, URIRef

HERE = Path(__file__).resolve().parent / "peers"
sys.path.insert(0, str(HERE))
RX = Namespace("http://example.org/pharmacy#")
HORIS = Namespace("https://w3id.org/horismos#")

import pharmacy_tools  # noqa: E402
from before import before_package, found_in  # noqa: E402


def package(name: str) -> dict[str, Any]:
    """What the benchmark uses of a horismos package imported as ``name``."""
    return {
        "Agent": importlib.import_module(name).Agent,
        "World": importlib.import_module(name).World,
        "InstanceRun": importlib.import_module(f"{name}._records").InstanceRun,
        "StepRecord": importlib.import_module(f"{name}._records").StepRecord,
        "Environment": found_in(name, "Environment", "_environment", "_runner"),
        "Change": importlib.import_module(f"{name}._stores").Change,
        "INSTANCES": importlib.import_module(f"{name}._world").INSTANCES,
        # what an instance's creation files its short id under (None: code before it)
        "short_id_quad": _short_id_quad(name),
    }


def _short_id_quad(package: str) -> Any:
    try:
        return found_in(package, "short_id_quad", "_stored_instances", "_waits")
    except ImportError:  # code from before instances were filed by short id
        return None



def one_round(h: dict[str, Any], agent: Any, n: int, store: str, filler: Path | None,
              scratch: Path) -> tuple[float, float, int]:
    """Seconds of step commits, seconds of instance creations, steps committed; an on-disk
    store in a folder of ``scratch``, removed after."""
    folder = Path(tempfile.mkdtemp(dir=scratch))
    if store == "oxigraph:PATH":
        store = f"oxigraph:{folder}"
    world = h["World"].open(store)
    if filler is not None:
        world.store.load_file(filler)
        if store.startswith("oxigraph:"):
            world.close()
            world = h["World"].open(store)
    world.store.load(
        q
        for i in range(n)
        for q in [
            (RX[f"rx{i}"], RDF.type, RX.Prescription, None),
            (RX[f"rx{i}"], RX.refillsLeft, Literal(1 + i % 3), None),
        ]
    )
    env = h["Environment"]()
    runner = agent._runner(world, None, env)
    wf = agent.workflow(None)
    steps = [agent.definitions.steps[RX[s]] for s in ("Decide", "Dispense", "Notify")]
    results = {
        RX.Decide: lambda: {"refillApproved": True},
        RX.Dispense: lambda: pharmacy_tools.dispense(None),
        RX.Notify: lambda: {"notifiedBy": "sms"},
    }
    step_time = create_time = 0.0
    done = 0
    for i in range(n):
        rx = RX[f"rx{i}"]
        iid = URIRef(f"urn:horismos:instance:{env.new_id()}")
        inst = h["InstanceRun"](iid, wf.iri, rx, "completed", wf.start)
        t0 = time.perf_counter()
        created = [(iid, RDF.type, HORIS.Instance), (iid, HORIS.workflow, wf.iri),
                   (iid, HORIS.focus, rx)]
        filed = [h["short_id_quad"](iid)] if h["short_id_quad"] else []
        runner.world.commit(h["Change"](  # as Runner.run_instance commits it
            add=[(*t, h["INSTANCES"]) for t in created] + filed
            + runner._state_quads(inst, "running", 0, wf.start)))
        create_time += time.perf_counter() - t0
        inst.variables["this"] = rx
        for version, step in enumerate(steps, 1):
            tool = step.tool
            started = env.now()
            stamp = runner._stamp(started)  # as the runner builds it: known to the store
            rec = h["StepRecord"](step.iri, "ActionStep", "completed", iid, tool=tool.iri)
            rec.args = [{"rx": rx.n3()}]
            t0 = time.perf_counter()
            if not tool.idempotent:
                runner._announce(inst, step, tool, stamp, rec.args)
            t1 = time.perf_counter()
            effects = [*runner.gate.triples(tool, rx, results[step.iri]()),
                       *runner.gate.fixed(tool, rx, stamp)]
            graph = URIRef(f"urn:horismos:effect:{env.new_id()}")
            rec.effects, rec.graph = effects, graph
            t2 = time.perf_counter()
            quads = runner._effect_quads(inst, step, tool, graph, effects, started, stamp)
            runner._pending.setdefault(iid, []).extend(quads)
            t3 = time.perf_counter()
            inst.current = step.next
            runner._finish_step(inst, rec, version, "running" if step.next else "completed",
                                step.next)
            step_time += (t1 - t0) + (t3 - t2) + rec.timings["commit"]
            done += 1
        runner._state.pop(iid, None)
    kept, recomputed = world.store.check_digest()
    assert kept == recomputed, "the kept digest drifted from the recomputed one"
    world.close()
    shutil.rmtree(folder)
    return step_time, create_time, done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prescriptions", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--store", default="oxigraph")
    parser.add_argument("--filler", type=int, default=0,
                        help="quads of other data the store holds first")
    parser.add_argument("--before", type=Path, help="a checkout whose horismos to compare with")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-commit-") as scratch:
        measure(args, Path(scratch))


def measure(args: argparse.Namespace, scratch: Path) -> None:
    """The rounds, and the figures printed; files (the filler, the stores) in ``scratch``."""
    filler = None
    if args.filler:
        filler = scratch / "filler.nq"
        with filler.open("w") as f:
            for i in range(args.filler):
                f.write(f'<urn:filler:s{i}> <urn:filler:p{i % 7}> "v{i}" '
                        f"<urn:filler:g{i // 20}> .\n")
    names = ["horismos"] + ([before_package(args.before)] if args.before else [])
    agents = {}
    for name in names:
        h = package(name)
        agents[name] = (h, h["Agent"].from_files(HERE / "refill.ttl", HERE / "pharmacy.ttl",
                                                 allow_modules=["pharmacy_tools"]))
    per_step: dict[str, list[float]] = {name: [] for name in names}
    per_create: dict[str, list[float]] = {name: [] for name in names}
    for r in range(1, args.rounds + 1):
        for name in names:
            h, agent = agents[name]
            steps_s, create_s, steps = one_round(
                h, agent, args.prescriptions, args.store, filler, scratch
            )
            per_step[name].append(steps_s / steps * 1e6)
            per_create[name].append(create_s / args.prescriptions * 1e6)
            print(f"round {r} {name}: {steps} step commits, {per_step[name][-1]:.0f} µs each; "
                  f"{args.prescriptions} instance creations, {per_create[name][-1]:.0f} µs each")
    for name in names:
        step_us = statistics.median(per_step[name])
        print(f"{name}: median {step_us:.0f} µs per step commit, "
              f"{statistics.median(per_create[name]):.0f} µs per instance creation "
              f"({1e6 / step_us:,.0f} step commits/s) on {args.store}"
              + (f" beside {args.filler:,} quads" if args.filler else ""))
    if args.before:
        ratios = [b / a for a, b in zip(per_step["horismos"], per_step[names[1]], strict=True)]
        print(f"before/after per round: {', '.join(f'{x:.2f}x' for x in ratios)}; "
              f"median {statistics.median(ratios):.2f}x")


if __name__ == "__main__":
    main()
