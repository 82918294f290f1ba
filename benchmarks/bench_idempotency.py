"""What an idempotency key costs a catalog call, and what a retry answered by it costs.

    python benchmarks/bench_idempotency.py [--store memory oxigraph:PATH journal:PATH]
                                           [--keys 0 1000 10000] [--calls 200] [--rounds 5]
                                           [--before PATH]

Per store, a world holding ``--keys`` keys recorded already (calls made with a key before;
as many calls without one in the tree of ``--before``),
then ``--calls`` calls of a tool that is not idempotent, each on an order of its own:

- ``no key``: the calls as before keys existed;
- ``key``: each with a fresh key (the key's record lands with the intent, its answer with the
  effects: no commit more, a few quads more);
- ``replay``: each again with its key: answered from the key's node, nothing called.

Printed: the median per call (µs) over ``--rounds`` rounds, alternating. Neither ``key`` nor
``replay`` should grow with ``--keys``: a key is found by its node, never by a scan.
``--before PATH``: ``no key`` for the horismos package of PATH too, measured in the same
process, alternating (``before.py``). Run it with ``PYTHONPATH`` set to the tree.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from before import before_package  # noqa: E402

DEFINITIONS = """
@prefix : <http://example.org/bill#> .
@prefix horis: <https://w3id.org/horismos#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
:Order a owl:Class .
:billRef a owl:DatatypeProperty .
:t.bill a horis:Tool ;
    horis:takes [ horis:arg [ horis:name "order" ; horis:type :Order ] ] ;
    horis:effect [ horis:subject "order" ;
                   horis:asserts [ horis:property :billRef ; horis:type xsd:string ] ] ;
    horis:binding "python:bill" ;
    horis:idempotent false .
"""
ALLOW = ["ReadOnly", "HostStateWrite", "ExternalCommit"]


def bill(order: Any) -> dict[str, str]:
    return {"billRef": f"B-{order}"}


def world_of(package: str, store: str, orders: int, folder: Path) -> tuple[Any, Any]:
    """An agent of ``package`` and a world of ``store`` holding ``orders`` orders."""
    horismos = importlib.import_module(package)
    defs = folder / "defs.ttl"
    defs.write_text(DEFINITIONS)
    agent = horismos.Agent.from_files(defs, tools={"bill": bill})
    where = store.replace("PATH", str(folder / "store"))
    world = horismos.World.open(where)
    data = folder / "orders.ttl"
    data.write_text("".join(f"<http://example.org/bill#o{i}> a <http://example.org/bill#Order> .\n"
                            for i in range(orders)))
    world.load(data)
    return agent, world


def per_call(agent: Any, world: Any, orders: range, key: str | None) -> float:
    """The median µs of a call of t.bill on each of ``orders``, keyed ``key``-N when given."""
    times = []
    for i in orders:
        more = {} if key is None else {"idempotency_key": f"{key}-{i}"}
        t0 = time.perf_counter()
        result = agent.catalog.call("t.bill", {"order": f":o{i}"}, world, allow=ALLOW, **more)
        times.append(time.perf_counter() - t0)
        assert result.status == "completed", result.receipt()
    return statistics.median(times) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", nargs="+", default=["memory", "oxigraph:PATH"])
    ap.add_argument("--keys", nargs="+", type=int, default=[0, 1000])
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--before", type=Path)
    args = ap.parse_args()
    packages = ["horismos"] + ([before_package(args.before)] if args.before else [])
    print(f"{'store':14} {'keys':>6} {'no key':>9} {'before':>9} {'key':>9} {'replay':>9}  µs/call")
    for store in args.store:
        for keys in args.keys:
            n, rounds = args.calls, args.rounds
            figures: dict[str, list[float]] = {"no key": [], "before": [], "key": [], "replay": []}
            with tempfile.TemporaryDirectory() as tmp:
                worlds = {}
                for p in packages:
                    folder = Path(tmp) / p
                    folder.mkdir()
                    worlds[p] = world_of(p, store, keys + 2 * n * rounds, folder)
                for p, (a, w) in worlds.items():  # the calls made before, on orders of their own
                    if keys:  # with keys, in this tree; as many without, in the one before
                        per_call(a, w, range(keys), "earlier" if p == "horismos" else None)
                base = keys
                for r in range(rounds):
                    for p in packages:  # alternating: the same load for before and after
                        a, w = worlds[p]
                        at = base + (n * rounds if p != "horismos" else 0) + r * n
                        if p == "horismos":
                            figures["no key"].append(per_call(a, w, range(at, at + n // 2), None))
                            keyed = range(at + n // 2, at + n)
                            figures["key"].append(per_call(a, w, keyed, f"r{r}"))
                            figures["replay"].append(per_call(a, w, keyed, f"r{r}"))
                        else:
                            figures["before"].append(per_call(a, w, range(at, at + n // 2), None))
                for _, w in worlds.values():
                    w.close()
            shown = {k: f"{statistics.median(v):9.0f}" if v else f"{'-':>9}"
                     for k, v in figures.items()}
            print(f"{store:14} {keys:>6} {shown['no key']} {shown['before']} {shown['key']} "
                  f"{shown['replay']}")


if __name__ == "__main__":
    main()
