"""A backup written whole or not at all: into a fresh folder beside its destination, renamed
into place once complete.

Why: a backup cut short (a full disk, a kill) must not be left where a restore would take it
for a whole one; and a destination that already exists is refused rather than merged into,
for a world restored from a mix of two backups opens to neither.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

from .._durable_files import fsync_folder
from .._errors import UsageError
from .._os_words import written
from .base import StoreError

__all__ = ["into_fresh_folder"]


def into_fresh_folder(dest: Path, what: str, write: Callable[[Path], None]) -> None:
    """Call ``write`` with a folder path that does not exist yet, beside ``dest``, then rename
    it to ``dest``; anything ``write`` left is removed when it fails."""
    if dest.exists() or dest.is_symlink():
        raise UsageError(f"{dest} already exists: back up into a new folder, or remove it first")
    if not dest.parent.is_dir():
        raise UsageError(f"{dest.parent} is no folder: create it first, or name another")
    temp = dest.with_name(f".{dest.name}.partial-{os.getpid()}")
    try:
        write(temp)
        fsync_folder(temp)
        os.rename(temp, dest)
        fsync_folder(dest.parent)
    except OSError as e:
        shutil.rmtree(temp, ignore_errors=True)
        disk = written(e)
        hint = disk[1] if disk else "check that the destination is writable"
        raise StoreError(
            f"backup of {what} into {dest} failed, nothing was kept there ({e}): {hint}; "
            "the store itself is untouched"
        ) from None
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
