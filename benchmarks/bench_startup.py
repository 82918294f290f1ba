"""What one ``horismos`` process costs from start to exit: services run one per event.

    python benchmarks/bench_startup.py [--reps 7] [--before PATH]

Each invocation is a process of its own (``python -m horismos …``, from a scratch folder so
that only ``PYTHONPATH`` says which package is imported), timed from start to exit: its wall
time and the CPU time it and its children spent (user + system). Bytecode is compiled once,
into a scratch ``PYTHONPYCACHEPREFIX``, before anything is timed, as an installed package has
it. The invocations:

- ``python -c pass``: the interpreter alone, the floor;
- ``import horismos``: the library's import alone;
- ``--version`` and ``--help``;
- ``validate workflows ontologies``;
- the README's run: ``run workflows/triage.ttl ontologies/ehr.ttl --world
  examples/triage/world.ttl --tools examples/triage/ehr_client.py --focus :patient42``;
- the same run against an ``oxigraph:PATH`` store that already holds the world (the
  per-event lane; a fresh copy of the store for each run, copied outside the timing);
- ``wake`` of that store (nothing due), and ``tools call`` of one tool on it.

``--before PATH`` times the ``horismos`` package of another checkout (PATH/horismos, e.g. a
git worktree of main) too, alternating with this one's invocation by invocation, and prints
the ratio of the medians. The inputs (workflows, ontologies, world, tools) are this
checkout's for both.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRIAGE = [
    str(ROOT / "workflows" / "triage.ttl"),
    str(ROOT / "ontologies" / "ehr.ttl"),
]
TOOLS = ["--tools", str(ROOT / "examples" / "triage" / "ehr_client.py")]
FOCUS = ["--focus", ":patient42"]


def invocations(store: Callable[[], str]) -> list[tuple[str, Callable[[], list[str]]]]:
    """(name, the arguments after ``python``), each made just before its run."""
    cli = ["-m", "horismos"]
    return [
        ("python -c pass", lambda: ["-c", "pass"]),
        ("import horismos", lambda: ["-c", "import horismos"]),
        ("--version", lambda: [*cli, "--version"]),
        ("--help", lambda: [*cli, "--help"]),
        ("validate", lambda: [*cli, "validate", str(ROOT / "workflows"), str(ROOT / "ontologies")]),
        (
            "run --world (README)",
            lambda: [*cli, "run", *TRIAGE, "--world", str(ROOT / "examples/triage/world.ttl"),
                     *TOOLS, *FOCUS],
        ),
        (
            "run --store oxigraph:",
            lambda: [*cli, "run", *TRIAGE, "--store", store(), *TOOLS, *FOCUS],
        ),
        ("wake --store oxigraph:", lambda: [*cli, "wake", *TRIAGE, "--store", store()]),
        (
            "tools call --store oxigraph:",
            lambda: [*cli, "tools", "call", "ehr.assign_queue", *TRIAGE, *TOOLS, "--store",
                     store(), "--args", '{"patient": ":patient42", "queue": ":urgent"}'],
        ),
    ]


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one process (CPU: user + system of the children reaped)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *argv], env=env, cwd=cwd, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 3):  # 3: a run left waiting
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}:\n{done.stderr.decode()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=7, help="runs of each invocation (median)")
    ap.add_argument("--before", type=Path, help="another checkout, timed alternately")
    args = ap.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    try:
        packages = {"this": ROOT}
        if args.before is not None:
            packages["before"] = args.before.resolve()
        envs = {}
        for label, path in packages.items():
            env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
            env.update(PYTHONPATH=str(path), PYTHONPYCACHEPREFIX=str(scratch / f"pyc-{label}"))
            where = subprocess.run(
                [sys.executable, "-c", "import horismos; print(horismos.__file__)"],
                env=env, cwd=scratch, capture_output=True, text=True, check=True,
            ).stdout.strip()
            if not where.startswith(str(path)):
                raise SystemExit(f"PYTHONPATH={path} imports horismos from {where}")
            envs[label] = env

        # the store holding the world, loaded once; each run gets a fresh copy
        loaded = scratch / "loaded"
        subprocess.run(
            [sys.executable, "-m", "horismos", "load", "--store", f"oxigraph:{loaded}",
             str(ROOT / "examples" / "triage" / "world.ttl")],
            env=envs["this"], cwd=scratch, capture_output=True, check=True,
        )
        copies = iter(range(10**6))

        def store() -> str:
            copy = scratch / f"store-{next(copies)}"
            shutil.copytree(loaded, copy)
            return f"oxigraph:{copy}"

        figures: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for name, make in invocations(store):
            for env in envs.values():  # a warm-up each: bytecode compiled, files cached
                timed(make(), env, scratch)
            for _ in range(args.reps):
                for label, env in envs.items():  # alternating: the same load on both
                    figures.setdefault((name, label), []).append(timed(make(), env, scratch))

        print(f"median of {args.reps} processes each, ms (wall / CPU user+sys)")
        head = f"{'invocation':<30}{'wall':>8}{'cpu':>8}"
        if "before" in envs:
            head += f"{'before wall':>13}{'cpu':>8}{'wall ratio':>12}"
        print(head)
        for name, _ in invocations(store):
            wall = statistics.median(w for w, _ in figures[(name, "this")]) * 1e3
            cpu = statistics.median(c for _, c in figures[(name, "this")]) * 1e3
            line = f"{name:<30}{wall:>8.0f}{cpu:>8.0f}"
            if "before" in envs:
                bw = statistics.median(w for w, _ in figures[(name, "before")]) * 1e3
                bc = statistics.median(c for _, c in figures[(name, "before")]) * 1e3
                line += f"{bw:>13.0f}{bc:>8.0f}{wall / bw:>12.2f}"
            print(line)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
