"""``horismos hydrate``: project resources of a system of record into a world.

Why a command: an operator prepares the world a run decides against — the patients and
medication requests it needs, each with the version it was read at — and re-hydrates after a
conflict or an unknown outcome to see what the system of record now holds. The world is a
persistent ``--store`` or a file (``--world F --out F``), as for ``horismos run``.
"""

from __future__ import annotations

import argparse
import json

from ._cli_common import (
    allowed_hosts,
    host_option,
    in_memory,
    load_world_beside,
    open_for_writing,
    output_format,
    write_world,
)
from ._definitions import load_definitions
from ._errors import UsageError
from ._stores import DEFAULT_STORE

__all__ = ["cmd_hydrate", "hydrate_arguments"]


def hydrate_arguments(p: argparse.ArgumentParser) -> None:
    """``horismos hydrate``'s options."""
    p.add_argument(
        "paths",
        nargs="+",
        metavar="FILE_OR_DIR",
        help="Turtle definitions declaring the horis:Adapter",
    )
    p.add_argument(
        "--adapter",
        metavar="NAME",
        help="the adapter's local name, CURIE or IRI (default: the only one)",
    )
    p.add_argument(
        "--id",
        action="append",
        default=[],
        metavar="TYPE/ID",
        dest="ids",
        help="a resource to hydrate, e.g. Patient/p1 (repeatable)",
    )
    p.add_argument(
        "--search",
        action="append",
        default=[],
        metavar="QUERY",
        help="a search whose matches to hydrate, e.g. "
        "'MedicationRequest?status=active' (repeatable)",
    )
    p.add_argument(
        "--store",
        default=DEFAULT_STORE,
        metavar="STORE",
        help="the world: oxigraph:PATH, journal:PATH or sparql:URL keep it; with memory give --out",
    )
    p.add_argument(
        "--world",
        action="append",
        default=[],
        metavar="F",
        help="world data to start from (repeatable), e.g. a previous --out",
    )
    p.add_argument("--out", metavar="F", help="write the world after hydration (.trig, .nq)")
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        type=host_option,
        metavar="HOST",
        help="reach only these hosts (repeatable), with allow-hosts in "
        "[tool.horismos] of ./pyproject.toml",
    )
    p.add_argument("--format", choices=("text", "json"), default="text")


def cmd_hydrate(args: argparse.Namespace) -> int:
    """Prints one line per resource: its id, version and projection graph, and whether the
    world's own projection was kept (it changed after the read began)."""
    defs = load_definitions(args.paths)
    adapters = defs.adapters
    names = ", ".join(a.name for a in adapters.values()) or "none"
    if not adapters:  # "name the adapter with --adapter (declared: none)" named none to give
        raise UsageError(
            "the definitions given declare no horis:Adapter: add the Turtle file that "
            "declares one (docs/adapters.md)"
        )
    if args.adapter is None:
        if len(adapters) != 1:
            raise UsageError(f"name the adapter with --adapter (declared: {names})")
        adapter = next(iter(adapters.values()))
    else:
        named = next((a for a in adapters.values() if args.adapter in (a.name, str(a.iri))), None)
        if named is None:
            raise UsageError(f"no adapter {args.adapter} (declared: {names})")
        adapter = named
    fmt = output_format(args.out) if args.out else None
    hosts = allowed_hosts(args)
    with open_for_writing(args.store, "hydrate") as world:
        if not world.store.persistent and not args.out:
            raise UsageError(
                f"{in_memory(args.store)} keeps nothing after this process: give "
                "--out F (then horismos run --world F), or a persistent --store"
            )
        # beside a persistent store, F lands in it (and stays, whatever the hydration does):
        # refused if it brings an approval record, as for every other command but `load`
        load_world_beside(world, args.world, args.store, "horismos hydrate")
        done = world.hydrate(adapter, args.ids, search=args.search, allow_hosts=hosts)
        if args.out:
            write_world(world, defs, args.out, fmt)
    if args.format == "json":
        print(
            json.dumps(
                [
                    {
                        "resource": str(h.resource),
                        "id": h.remote_id,
                        "version": h.version,
                        "read_at": h.read_at,
                        "graph": str(h.graph),
                        "kept": h.kept,
                    }
                    for h in done
                ],
                indent=2,
            )
        )
    else:
        for h in done:
            kept = (
                "  (kept: the world's projection changed after this read began)" if h.kept else ""
            )
            print(
                f"{h.remote_id}  version {h.version or '-'}  read {h.read_at[:19]}  "
                f"→ <{h.graph}>{kept}"
            )
    return 0
