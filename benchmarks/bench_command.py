"""What a command binding costs, and what its output limits hold: a ``cmd:`` call that answers
``{}`` (the floor: start a process, drain it, gate, commit), and one whose program writes N MB
to stderr before answering, drained under a 64 KiB retention.

    python benchmarks/bench_command.py [--calls 20] [--megabytes 200]

Prints the median time of a small call, the time and throughput of draining the big writer,
and the peak resident memory of this process before and after it: the retention, not the
output, bounds what the process holds.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import tempfile
import textwrap
import time
from pathlib import Path

from horismos import Agent, World

DEFS = """\
@prefix :      <http://example.org/bench#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl:   <http://www.w3.org/2002/07/owl#> .
@prefix xsd:   <http://www.w3.org/2001/XMLSchema#> .
:Patient a owl:Class .
:small a horis:CommandBinding ; horis:argv ( "python" "small.py" ) ; horis:root "{root}" .
:big a horis:CommandBinding ; horis:argv ( "python" "big.py" "{mb}" ) ; horis:root "{root}" ;
    horis:retainBytes 65536 ; horis:quotaBytes 100000000000 .
:bench.small a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:binding "cmd:small" .
:bench.big a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "patient" ; horis:type :Patient ] ] ;
    horis:binding "cmd:big" ; horis:timeout "5m" .
"""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--calls", type=int, default=20)
    p.add_argument("--megabytes", type=int, default=200)
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "small.py").write_text("print('{}')\n")
        (root / "big.py").write_text(textwrap.dedent("""
            import sys
            block = b"x" * (1 << 20)
            for _ in range(int(sys.argv[1])):
                sys.stderr.buffer.write(block)
            print("{}")
        """))
        (root / "defs.ttl").write_text(DEFS.format(root=root, mb=a.megabytes))
        (root / "world.ttl").write_text("@prefix : <http://example.org/bench#> .\n"
                                        ":p1 a :Patient .\n")
        agent = Agent.from_files(root / "defs.ttl")
        world = World.from_files(root / "world.ttl")
        times = []
        for _ in range(a.calls):
            t0 = time.perf_counter()
            result = agent.catalog.call("bench.small", {"patient": ":p1"}, world)
            times.append(time.perf_counter() - t0)
            assert result.ok, result.receipt()
        print(f"small cmd: call: median {statistics.median(times) * 1000:.1f} ms over "
              f"{a.calls} calls (process start, drain, gate, commit, trace)")
        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t0 = time.perf_counter()
        result = agent.catalog.call("bench.big", {"patient": ":p1"}, world)
        took = time.perf_counter() - t0
        assert result.ok, result.receipt()
        capture = next(x for x in result.artifacts if x["type"] == "output_capture")
        rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(f"{a.megabytes} MB writer: {took:.2f} s ({a.megabytes / took:.0f} MB/s), "
              f"{capture['emitted_bytes']:,} bytes emitted, {capture['dropped_bytes']:,} "
              f"dropped; peak RSS {rss0 / 1024:.0f} MB before, {rss1 / 1024:.0f} MB after")


if __name__ == "__main__":
    main()
