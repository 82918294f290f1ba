"""A file put in place by a rename, kept through a power cut.

Why: ``os.replace`` of a fully written, fsynced file makes the new file whole or absent, but
the rename itself is an entry of the folder, which the system may still hold only in memory:
a power cut after it can bring the old file back. A store's snapshot and journal and a
command's ``--out`` are replaced that way; each fsyncs the folder after its rename, with this.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["fsync_folder"]


def fsync_folder(folder: Path) -> None:
    """Flush ``folder``'s entries (a rename into it) to the disk."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
