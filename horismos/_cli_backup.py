"""``horismos backup``: a copy of an on-disk world that opens to what its store held at one
moment between commits.

Why a command: copying an ``oxigraph:PATH`` folder by hand, or with ``oxigraph backup``,
beside a process that has it open (or after one was killed) may leave out the last commits,
which RocksDB keeps only in its log until a flush; restored, an intent among them was gone,
and the tool it guarded was called again. A ``journal:PATH`` folder copied while a process
commits may pair a new snapshot with an old journal. This command opens the store as any
other does (a store another process holds is waited for up to ``HORISMOS_LOCK_WAIT``, else
refused, exit 2, and backed up again in a moment) and copies it under its lock.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ._world import World

__all__ = ["backup_arguments", "cmd_backup"]


def backup_arguments(p: argparse.ArgumentParser) -> None:
    """``horismos backup``'s options."""
    p.add_argument(
        "dest",
        metavar="DEST",
        help="a folder that does not exist yet: the backup, which opens as the store does "
        "(--store oxigraph:DEST or journal:DEST)",
    )
    p.add_argument(
        "--store",
        required=True,
        metavar="STORE",
        help="the world to back up: oxigraph:PATH or journal:PATH",
    )


def cmd_backup(args: argparse.Namespace) -> int:
    """0 once the backup is complete in DEST; 2 (a usage or store error) leaves no DEST."""
    dest = Path(args.dest)
    with World.open(args.store, create=False) as world:
        # the copy's own digest, read with it under the store's lock: read after, a commit
        # landing between described a world the copy does not hold
        digest = world.store.backup(dest).fingerprint
    kind = args.store.partition(":")[0]
    print(f"backed up {args.store} into {dest} ({digest}); open it with --store {kind}:{dest}")
    return 0
