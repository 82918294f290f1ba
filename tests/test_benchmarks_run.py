"""Every benchmark still runs, at its smallest size.

The benchmarks time what a step does by reaching into the package's private modules (the
runner's commit, the stored instances' look-ups, the store's encoding). Three of them had
crashed for several sessions after those modules were split (``bench_commit``,
``bench_short_id``, ``bench_unfinished``: an ``AttributeError`` on the first use), and one
option of ``bench_scale`` never ran; nothing said so until someone ran them for a figure.
Each runs here in a process of its own, with sizes small enough to take a second or two:
its figures are not judged (the machine is shared, and speed is measured by running the
benchmarks, never by a test), only that it measures without failing and prints them.

Left out: ``bench_peers`` (LangGraph, the ``bench`` extra; its Horismos side runs through
``bench_apply``, ``bench_trace`` and others), ``bench_distributed`` (a Redis broker),
``bench_viewer`` (a browser), ``bench_sparql`` and ``bench_stores`` (servers of their own),
``bench_lanes``, ``bench_lanes_scale``, ``bench_startup`` and ``bench_individuals`` (tens of
seconds even at their smallest), ``chaos_once`` (servers of its own, twenty seconds a store a
round).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from forked import horismos_forked

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"

SMALLEST = [
    "bench_adapters.py --requests 5",
    "bench_apply.py --prescriptions 30 --rounds 1",
    "bench_bindings.py --instances 5",
    "bench_churn.py --world 3000 --steps 2000 --window 500",
    "bench_command.py --calls 3 --megabytes 2",
    "bench_commit.py --prescriptions 30 --rounds 1",
    "bench_copy_graphs.py --graphs 3000",
    "bench_degree.py --prescriptions 30 --degrees 0 100",
    "bench_digest.py --steps 2000 --triples 3000 --flush-every 1000",
    "bench_gate_sparql.py --calls 5 --rounds 1",
    "bench_history.py --instances 20 40 --reps 1 --waiting 3",
    "bench_idempotency.py --store memory oxigraph:PATH journal:PATH --keys 0 10 --calls 4 "
    "--rounds 1",
    "bench_journal_open.py --mb 2 --rounds 1",
    "bench_journal_rotation.py --triples 3000",
    "bench_limits.py --mb 2",
    "bench_load.py --copies 1 --runs 1",
    "bench_load_small.py --stores oxigraph:PATH --sizes 300 600 --reps 2",
    "bench_open_after_kill.py --sizes 300 --reps 1",
    "bench_preconditions.py --prescriptions 30 --rounds 1",
    "bench_replay.py --patients 10 --stores memory",
    "bench_run.py --patients 10 --no-shape-too",
    "bench_run_memory.py --instances 40",
    "bench_scale.py --sizes 3000 6000 --runs 8 --rounds 1 --all-steps 300 --owl",
    "bench_short_id.py --instances 30 --reps 1",
    "bench_store_drop.py --quads 3000 --rounds 1",
    "bench_trace.py --prescriptions 30 --rounds 1",
    "bench_trace_memory.py --prescriptions 20",
    "bench_unfinished.py --others 20 --foci 1 10 --reps 1",
    "bench_update_data.py --sizes 300 600 --updates 5 --others 2",
    "bench_wake.py --waiting 100 --history 0 100 --reps 1",
    "bench_world_terms.py --patients 300 --suspects 5",
    "fuzz_memory_queries.py --queries 50",
]


@pytest.mark.parametrize("command", SMALLEST, ids=lambda c: c.split()[0])
def test_the_benchmark_runs_and_prints_its_figures(tmp_path: Path, command: str) -> None:
    script, *args = command.split()
    done = horismos_forked(tmp_path, *args, script=BENCHMARKS / script, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.stdout.strip(), done.stderr[-3000:]
