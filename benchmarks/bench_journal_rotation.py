"""How long a ``journal:PATH`` rotation (the snapshot dump when the journal outgrows it)
holds the store's lock, and what a thread committing meanwhile sees.

    python benchmarks/bench_journal_rotation.py [--triples 1000000] [--before PATH]

In a fresh process per checkout: a world of ``--triples`` triples loaded from a generated
N-Triples file (its own snapshot), then a thread committing one small change after another
while the main thread rotates: under the lock only the switch to ``journal.next`` and the
dump's start (this tree), or the whole dump (``--before``, e.g. ``/work/main``). Prints the
time the lock was held, the rotation's end to end, the commits that landed during it and the
longest a commit took.
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
ROTATE = """
import json, sys, threading, time
from pathlib import Path
from rdflib import Literal, URIRef
from horismos._stores import Change, open_store

store = open_store("journal:" + sys.argv[1])
store.load_file(Path(sys.argv[2]))
stop, took, during = threading.Event(), [], [0]
rotating = threading.Event()

def commit():
    i = 0
    while not stop.is_set():
        i += 1
        started = time.perf_counter()
        quad = (URIRef(f"urn:bench:c{i}"), URIRef("urn:bench:p"), Literal(i), None)
        store.apply(Change(add=[quad]))
        took.append(time.perf_counter() - started)
        during[0] += rotating.is_set()

committer = threading.Thread(target=commit)
committer.start()
time.sleep(0.5)
took.clear()
rotating.set()
started = time.perf_counter()
with store._lock:
    (store._rotate_behind if hasattr(store, "_rotate_behind") else store._rotate)()
    held = time.perf_counter() - started
with store._lock:
    if hasattr(store, "_settle"):
        store._settle()
    whole = time.perf_counter() - started
rotating.clear()
stop.set()
committer.join()
print(json.dumps({"held": held, "whole": whole, "commits": during[0], "longest": max(took)}))
store.close()
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triples", type=int, default=1_000_000)
    parser.add_argument("--before", type=Path)
    args = parser.parse_args()
    trees = {"this tree": ROOT} | ({"before": args.before} if args.before else {})
    with tempfile.TemporaryDirectory(prefix="bench-rotation-") as tmp:
        world = Path(tmp) / "world.nt"
        with world.open("w") as f:
            for i in range(args.triples):
                f.write(f'<urn:bench:s{i // 10}> <urn:bench:p{i % 10}> "value {i}" .\n')
        for name, tree in trees.items():
            folder = Path(tmp) / name.replace(" ", "-")
            done = subprocess.run(
                [sys.executable, "-c", ROTATE, str(folder), str(world)],
                env={**os.environ, "PYTHONPATH": str(tree)}, cwd=tmp,
                capture_output=True, text=True, check=True,
            )
            got = json.loads(done.stdout)
            print(
                f"{name:9}: {args.triples:,} triples, lock held {got['held'] * 1000:,.1f} ms, "
                f"rotation {got['whole']:.2f} s, {got['commits']:,} commits landed during it, "
                f"longest commit {got['longest'] * 1000:,.1f} ms"
            )


if __name__ == "__main__":
    main()
