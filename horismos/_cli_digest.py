"""``horismos digest``: the world's digest, and the operator's check that it is still true.

Why a command: the digest a trace records is kept up to date by each write Horismos makes,
never recomputed in a run. Writes that bypass Horismos (a SPARQL client on the same server, a
restored backup) are not counted, so an operator recomputes it on demand (``--check``), folds
a ``sparql:`` store's per-update deltas into one value when it checks (``--fold``), or adopts
the recomputed value after such a write on purpose (``--rebase``).
"""

from __future__ import annotations

import argparse
import sys

from ._cli_common import load_world
from ._errors import UsageError
from ._stores import DEFAULT_STORE
from ._world import World

__all__ = ["cmd_digest", "digest_arguments"]


def digest_arguments(p: argparse.ArgumentParser) -> None:
    """``horismos digest``'s options."""
    p.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="RDF files or folders to digest (with an in-memory --store only)",
    )
    p.add_argument(
        "--store",
        default=DEFAULT_STORE,
        metavar="STORE",
        help=f"the world: oxigraph:PATH, journal:PATH, sparql:URL, or (with FILEs) memory or "
        f"oxigraph; default {DEFAULT_STORE}",
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "--check",
        action="store_true",
        help="recompute the digest from every quad and compare it with the kept "
        "one; exit 1 when they differ",
    )
    mode.add_argument(
        "--fold",
        action="store_true",
        help="as --check, then keep the digest as one value (sparql: replaces "
        "the per-update deltas); only when they agree",
    )
    mode.add_argument(
        "--rebase",
        action="store_true",
        help="make the recomputed digest the kept one, after writes that "
        "bypassed Horismos on purpose",
    )


def cmd_digest(args: argparse.Namespace) -> int:
    """Prints the fingerprint; 0 when it holds, 1 when the check finds it does not."""
    with World.open(args.store, create=False) as world:
        if args.files:
            if world.store.persistent:
                raise UsageError(
                    f"--store {args.store} already holds its world: digest it "
                    "without FILEs, or load them first with horismos load"
                )
            load_world(world, args.files)
        elif not world.store.persistent:
            raise UsageError(
                f"--store {args.store} starts empty, so its digest names no world: give the "
                "files to digest (horismos digest world.ttl), or the store that holds the "
                "world (--store oxigraph:PATH, journal:PATH or sparql:URL)"
            )
        if not (args.check or args.fold or args.rebase):
            print(world.digest())
            return 0
        if args.check:
            kept, recomputed = world.store.check_digest()
        else:
            kept, recomputed = world.store.rebase_digest(only_if_equal=args.fold)
        print(recomputed.fingerprint)
        if kept != recomputed and not args.rebase:
            print(
                f"horismos digest: the kept digest {kept.fingerprint} does not match "
                f"{recomputed.fingerprint}, recomputed from the {args.store} store's quads: "
                "something wrote to it without going through Horismos. Find out what; "
                "--rebase then makes the recomputed digest the kept one",
                file=sys.stderr,
            )
            return 1
        done = "checked" if args.check else "checked and folded" if args.fold else "rebased"
        was = f" (was {kept.fingerprint})" if kept != recomputed else ""
        print(f"horismos digest: {done}{was}", file=sys.stderr)
        return 0
