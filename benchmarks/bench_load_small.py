"""What loading a small file into a world that already holds a large one costs, by world size.

    python benchmarks/bench_load_small.py [--sizes 30000 1000000] [--triples 10] [--reps 7]
                                          [--stores sparql oxigraph:PATH]

``horismos load`` of a few triples into a world that holds millions is what a service does
when a record arrives: it should cost what it adds, not what the world holds. For each store
(``sparql``: a fresh ``oxigraph serve`` per size; ``oxigraph:PATH``: a folder per size) the
pharmacy world (benchmarks/pharmacy/) of each size is loaded once, then ``--reps`` files of
``--triples`` new triples each are loaded into it, each through a fresh ``World.open`` as a
process of its own would (the open is timed apart). Printed per store and size: the median
load and open, and the load's ratio to the smallest world's.

The load into a non-empty world first asks whether the world holds data. On ``sparql:`` that
was one ``ASK { { ?s ?p ?o } UNION { GRAPH ?g { … } FILTER … } }``, which Oxigraph answered by
reading the whole default graph: 0.33 s at a million triples against 0.02 s at 30,000.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "pharmacy"))
sys.path.insert(0, str(HERE))

from bench_stores import Server  # noqa: E402
from pharmacy_tools import prescriptions_for, world_quads  # noqa: E402

from horismos import World  # noqa: E402


def write_world(triples: int, path: Path) -> None:
    with path.open("w") as f:
        for s, p, o, _ in world_quads(prescriptions_for(triples)):
            f.write(f"{s.n3()} {p.n3()} {o.n3()} .\n")


def small_file(folder: Path, rep: int, triples: int) -> Path:
    path = folder / f"small{rep}.ttl"
    path.write_text("@prefix : <http://example.org/pharmacy#> .\n" + "".join(
        f":arrived{rep}x{i} a :Patient .\n" for i in range(triples)))
    return path


def measure(store: str, folder: Path, triples: int, reps: int) -> tuple[float, float]:
    loads, opens = [], []
    for rep in range(reps):
        path = small_file(folder, rep, triples)
        t0 = time.perf_counter()
        world = World.open(store)
        t1 = time.perf_counter()
        added = world.store.load_file(path)
        t2 = time.perf_counter()
        world.close()
        assert added == triples, added
        opens.append(t1 - t0)
        loads.append(t2 - t1)
    return statistics.median(loads), statistics.median(opens)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[30_000, 1_000_000])
    parser.add_argument("--triples", type=int, default=10)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--stores", nargs="+", default=["sparql", "oxigraph:PATH"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for kind in args.stores:
            results = {}
            for size in args.sizes:
                world_file = folder / f"world{size}.nt"
                if not world_file.exists():
                    write_world(size, world_file)
                server = None
                if kind == "sparql":
                    server = Server(folder / f"server-{size}")
                    store = f"sparql:{server.url}"
                else:
                    store = f"oxigraph:{folder / f'store-{size}'}"
                try:
                    world = World.open(store)
                    t0 = time.perf_counter()
                    world.load(world_file)
                    world.close()
                    print(f"{kind}: {size:,} triples loaded in {time.perf_counter() - t0:.1f} s",
                          flush=True)
                    sub = folder / f"small-{kind.split(':')[0]}-{size}"
                    sub.mkdir()
                    results[size] = measure(store, sub, args.triples, args.reps)
                finally:
                    if server is not None:
                        server.stop()
            print(f"{kind}: {args.triples} new triples loaded into a world of (median of "
                  f"{args.reps}, each through a fresh World.open):")
            base = results[args.sizes[0]][0]
            for size, (load, opened) in results.items():
                print(f"  {size:>10,} triples: load {load * 1000:7.1f} ms (x{load / base:.2f}), "
                      f"open {opened * 1000:6.1f} ms")


if __name__ == "__main__":
    main()
