"""The memory and time of opening a ``journal:PATH`` whose journal is large (a process killed
before its rotation: up to 4x the snapshot, 64 MB at least).

    python benchmarks/bench_journal_open.py [--mb 200] [--before PATH]

Writes a journal of ``--mb`` MB of commit records (each a step's worth: 20 quads removed, 20
added, over 1,000 states that recur, so the world stays small and what is measured is the
journal's own cost), then opens it in a fresh process and prints that process's peak RSS
above what it held before opening, and the open's wall time. With ``--before PATH`` the same
folder is opened by the package of another checkout too (e.g. ``/work/main``), alternating.
The opener exits without closing: the folder is not rotated, so every open reads it whole.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OPEN = """
import json, os, sys, time
from horismos._stores.journal import JournalStore

def kb(field):  # this process's own figures (ru_maxrss carries the parent's over exec)
    status = open("/proc/self/status").read()
    return int(status.split(field + ":")[1].split()[0])

before = kb("VmRSS")
started = time.perf_counter()
store = JournalStore(sys.argv[1], create=False)
took = time.perf_counter() - started
peak = kb("VmHWM")
print(json.dumps({"quads": len(store), "seconds": took, "rss_mb": (peak - before) / 1024}))
os._exit(0)  # no close: no snapshot, so the next open replays the same journal
"""


def state(i: int) -> bytes:
    """The N-Quads of state ``i``: 20 quads of one subject, as a step's effects."""
    return b"".join(
        b'<urn:bench:s%d> <urn:bench:p%d> "value %d of state %d" <urn:bench:g> .\n'
        % (i, k, k, i)
        for k in range(20)
    )


def write_journal(folder: Path, megabytes: int) -> int:
    """A journal of about ``megabytes`` MB of commit records; how many records."""
    sys.path.insert(0, str(ROOT))
    from horismos._stores.journal import JOURNAL, _record

    folder.mkdir()
    states, n = 1000, 0
    with (folder / JOURNAL).open("wb") as f:
        f.write(b"# horismos journal after snapshot 0\n")
        while f.tell() < megabytes << 20:
            previous = state((n - 1) % states) if n else b""
            f.write(_record(b"C", previous, state(n % states)))
            n += 1
    return n


def open_with(tree: Path, folder: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, "-c", OPEN, str(folder)], env=env, capture_output=True, text=True,
        check=True, cwd=folder.parent,  # not this checkout's: ``-c`` imports from the cwd first
    )
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--before", type=Path)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-journal-") as tmp:
        folder = Path(tmp) / "store"
        records = write_journal(folder, args.mb)
        size = (folder / "journal").stat().st_size
        print(f"journal: {size / 2**20:.0f} MB, {records:,} records")
        trees = {"this tree": ROOT} | ({"before": args.before} if args.before else {})
        for round_ in range(args.rounds):
            for name, tree in trees.items():
                got = open_with(tree, folder)
                print(
                    f"round {round_ + 1}, {name:9}: peak RSS +{got['rss_mb']:,.0f} MB, "
                    f"{got['seconds']:.1f} s, {got['quads']:,} quads held"
                )


if __name__ == "__main__":
    main()
