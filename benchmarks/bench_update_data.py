"""What a user's ``INSERT DATA`` of one triple costs as the world grows: flat, where it was a
pass over the world (the digest recomputed after each update, or folded on ``sparql:``).

    python benchmarks/bench_update_data.py [--sizes 30000 300000] [--updates 200]

For each size, a generated world of that many triples is loaded into ``oxigraph`` (in
memory), ``oxigraph:PATH`` and ``journal:PATH`` (on disk), then ``--updates`` updates of
one triple each are timed: ``INSERT DATA`` (a commit of its quads, the digest moved by
them) and, for contrast, the same triple written by ``INSERT { … } WHERE {}`` (any other
update: the digest recomputed from the whole world). The median per update is printed, and
the digest checked against a recomputation at the end.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from horismos import World  # noqa: E402

EX = "http://example.org/bench#"


def world_file(folder: Path, triples: int) -> Path:
    path = folder / f"world-{triples}.nt"
    with path.open("w", encoding="utf-8") as f:
        for i in range(triples):
            f.write(f'<{EX}s{i // 10}> <{EX}p{i % 10}> "value {i}" .\n')
    return path


def median_ms(world: World, texts: list[str]) -> float:
    times = []
    for text in texts:
        start = time.perf_counter()
        world.store.update(text)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[30_000, 300_000])
    parser.add_argument("--updates", type=int, default=200)
    parser.add_argument("--others", type=int, default=5, help="updates of another form")
    args = parser.parse_args()
    print(f"{'store':<14} {'triples':>9} {'INSERT DATA ms':>15} {'INSERT…WHERE ms':>16}")
    for triples in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            source = world_file(folder, triples)
            for kind in ("oxigraph", "oxigraph:PATH", "journal:PATH"):
                name = kind.replace("PATH", str(folder / kind.partition(":")[0]))
                world = World.from_files(source, store=name)
                try:
                    data = median_ms(
                        world,
                        [
                            f'INSERT DATA {{ <{EX}event{i}> <{EX}seen> "{i}" }}'
                            for i in range(args.updates)
                        ],
                    )
                    other = median_ms(
                        world,
                        [
                            f'INSERT {{ <{EX}other{i}> <{EX}seen> "{i}" }} WHERE {{}}'
                            for i in range(args.others)
                        ],
                    )
                    kept, recomputed = world.store.check_digest()
                    assert kept == recomputed, kind
                finally:
                    world.close()
                print(f"{kind:<14} {triples:>9,} {data:>15.3f} {other:>16.1f}", flush=True)


if __name__ == "__main__":
    main()
