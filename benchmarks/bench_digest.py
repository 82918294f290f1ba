"""The maintained world digest: what it costs per commit and per load, and what a long run on
``oxigraph:PATH`` does to memory and to RocksDB's files.

    python benchmarks/bench_digest.py [--steps 20000] [--triples 300000] [--flush-every N]

- *commit*: ``--steps`` commits shaped like a step's (a few effect quads in a graph of their
  own, the instance's version replaced, guarded by the old one) on ``memory``, ``oxigraph``
  and ``oxigraph:PATH``: µs per commit, RSS and (on disk) the store directory's size and its
  write-ahead log every 2,000 commits.
- *load*: a generated N-Triples world of ``--triples`` triples loaded into an empty store
  (Oxigraph's loader, then the digest in one pass over the store) and then a second file of
  10% into the same store (checked quad by quad); the recomputation from scratch.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

from rdflib import Literal, URIRef

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from horismos import World  # noqa: E402
from horismos._stores import Change  # noqa: E402
from horismos._world import INSTANCES  # noqa: E402

EX = "http://example.org/bench#"
VERSION = URIRef("https://w3id.org/horismos#version")


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def dir_mb(path: Path, suffix: str = "") -> float:
    return sum(f.stat().st_size for f in path.rglob(f"*{suffix}") if f.is_file()) / 1e6


def commits(name: str, steps: int, flush_every: int, where: Path | None) -> None:
    world = World.open(name)
    inst = URIRef(EX + "instance")
    world.commit(Change(add=[(inst, VERSION, Literal(0), INSTANCES)]))
    t0, rss0 = time.perf_counter(), rss_mb()
    for i in range(steps):
        graph = URIRef(f"{EX}effect{i}")
        node = URIRef(f"{EX}patient{i % 1000}")
        world.commit(Change(
            add=[(node, URIRef(EX + "queuedAt"), Literal(f"2026-12-01T00:00:{i % 60:02d}Z"),
                  graph),
                 (node, URIRef(EX + "ref"), Literal(f"Q-{i}"), graph),
                 (graph, URIRef(EX + "step"), URIRef(EX + "Queue"), graph),
                 (inst, VERSION, Literal(i + 1), INSTANCES)],
            remove=[(inst, VERSION, Literal(i), INSTANCES)],
            expect=((inst, VERSION, Literal(i), INSTANCES),)))
        if flush_every and (i + 1) % flush_every == 0 and world.store.persistent:
            world.store._store.flush()
        if (i + 1) % 2000 == 0:
            took = time.perf_counter() - t0
            disk = (f"  dir {dir_mb(where):7.1f} MB  wal {dir_mb(where, '.log'):6.1f} MB"
                    if where else "")
            print(f"  {name:>14} {i + 1:>7,} commits  {took / (i + 1) * 1e6:6.0f} µs/commit  "
                  f"RSS +{rss_mb() - rss0:6.1f} MB{disk}", flush=True)
    kept, recomputed = world.store.check_digest()
    assert kept == recomputed
    world.close()


def loads(triples: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        big, more = Path(tmp) / "big.nt", Path(tmp) / "more.nt"
        with big.open("w") as f:
            for i in range(triples):
                f.write(f'<{EX}s{i // 10}> <{EX}p{i % 10}> "value {i}" .\n')
        with more.open("w") as f:
            for i in range(triples - triples // 20, triples + triples // 20):  # half new
                f.write(f'<{EX}s{i // 10}> <{EX}p{i % 10}> "value {i}" .\n')
        for name in ("oxigraph", f"oxigraph:{tmp}/db"):
            with World.open(name) as world:
                t0 = time.perf_counter()
                world.load(big)
                t1 = time.perf_counter()
                world.load(more)
                t2 = time.perf_counter()
                world.store.recompute_digest()
                t3 = time.perf_counter()
                print(f"  {name.split(':')[0] + (':PATH' if ':' in name else ''):>14} "
                      f"load {triples:,} into empty {t1 - t0:5.2f} s "
                      f"({triples / (t1 - t0):,.0f}/s)  +{triples // 10:,} checked "
                      f"{t2 - t1:5.2f} s ({triples // 10 / (t2 - t1):,.0f}/s)  "
                      f"recompute {t3 - t2:5.2f} s ({triples * 1.05 / (t3 - t2):,.0f} quads/s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=20_000)
    ap.add_argument("--triples", type=int, default=300_000)
    ap.add_argument("--flush-every", type=int, default=0,
                    help="flush the on-disk store every N commits (0: as the store does)")
    args = ap.parse_args()
    print(f"commits ({args.steps:,}; peak RSS so far "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3:.0f} MB)")
    for name in ("memory", "oxigraph"):
        commits(name, args.steps, 0, None)
    with tempfile.TemporaryDirectory() as tmp:
        commits(f"oxigraph:{tmp}/db", args.steps, args.flush_every, Path(tmp) / "db")
    print("loads")
    loads(args.triples)


if __name__ == "__main__":
    main()
