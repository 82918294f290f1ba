"""What ``OxigraphStore.apply`` costs alone, on the changes a real run commits.

    python benchmarks/bench_apply.py [--prescriptions 500] [--rounds 5] [--before PATH]

Runs bench_peers.py's Horismos workload once (``run --all`` over N prescriptions), recording
every change the in-memory store is given (the world's load, each instance's creation, each
intent, each step's effects + provenance + state), then replays those changes into fresh
stores, timing ``apply`` only: conversion, the store's checks and writes, the digest's
bookkeeping, and the digest read once at the end (as a run's end event reads it), so lines
a store folds later are paid for too. The digest is checked against a recomputation.

``--before PATH``: also replay with the horismos package of PATH (a git worktree of main,
say), alternating round by round, and print the ratio. The changes are recorded with this
package's runner and replayed by both, so both land exactly the same quads.

CPU time (``process_time``) per committed step: less sensitive to a shared machine's load
than wall-clock, still best compared within one process as here.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_peers
from before import before_package

from horismos._stores import Change
from horismos._stores.oxigraph import OxigraphStore


def recorded(n: int) -> list[Change]:
    """The changes one bench_peers Horismos run of ``n`` prescriptions commits, in order."""
    changes: list[Change] = []
    real = OxigraphStore.apply

    def recording(self: OxigraphStore, change: Change) -> Any:
        changes.append(change)
        return real(self, change)

    OxigraphStore.apply = recording  # type: ignore[method-assign]
    try:
        bench_peers.horismos_rate(n)
    finally:
        OxigraphStore.apply = real  # type: ignore[method-assign]
    return changes


def one_round(store_class: Any, changes: list[Change]) -> float:
    """CPU seconds to apply ``changes`` to a fresh store and read its digest."""
    store = store_class()
    t0 = time.process_time()
    for change in changes:
        store.apply(change)
    store.digest()
    spent = time.process_time() - t0
    kept, recomputed = store.check_digest()
    assert kept == recomputed, "the kept digest drifted from the recomputed one"
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prescriptions", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--before", type=Path, help="a checkout whose horismos to compare with")
    args = parser.parse_args()
    changes = recorded(args.prescriptions)
    steps = 3 * args.prescriptions
    stores = {"horismos": OxigraphStore}
    if args.before:
        stores["before"] = importlib.import_module(
            f"{before_package(args.before)}._stores.oxigraph"
        ).OxigraphStore
    spent: dict[str, list[float]] = {name: [] for name in stores}
    for r in range(1, args.rounds + 1):
        for name, store_class in stores.items():
            spent[name].append(one_round(store_class, changes) / steps * 1e6)
            print(f"round {r} {name}: {len(changes)} changes, {spent[name][-1]:.1f} µs a step")
    for name in stores:
        print(f"{name}: median {statistics.median(spent[name]):.1f} µs of apply a step")
    if args.before:
        ratios = [b / a for a, b in zip(spent["horismos"], spent["before"], strict=True)]
        print(f"before/after per round: {', '.join(f'{x:.2f}x' for x in ratios)}; "
              f"median {statistics.median(ratios):.2f}x")


if __name__ == "__main__":
    main()
