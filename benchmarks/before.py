"""The package of another checkout, imported beside this one for a before/after comparison.

    --before PATH    (bench_apply, bench_commit, bench_trace)

Its imports are relative, so PATH/horismos copied under another name imports as a second,
independent package: both are measured in one process, alternating, under the same load.
"""

from __future__ import annotations

import atexit
import importlib
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any


def before_package(path: Path) -> str:
    """PATH/horismos copied and importable as ``horismos_before``; that name."""
    tmp = Path(tempfile.mkdtemp(prefix="bench-before-"))
    atexit.register(shutil.rmtree, tmp, True)  # the copy is imported by then: not left in /tmp
    shutil.copytree(path / "horismos", tmp / "horismos_before")
    sys.path.insert(0, str(tmp))
    return "horismos_before"


def found_in(package: str, name: str, *modules: str) -> Any:
    """``name`` from the first of ``modules`` of ``package`` that has it: code moves between
    private modules from one commit to another, and ``--before`` imports older code."""
    for module in modules:
        try:
            found = getattr(importlib.import_module(f"{package}.{module}"), name, None)
        except ModuleNotFoundError as e:
            if e.name != f"{package}.{module}":  # the module is there; something it imports is not
                raise
            continue
        if found is not None:
            return found
    raise ImportError(f"none of {package}'s {', '.join(modules)} has {name}")
