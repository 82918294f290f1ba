"""Whether an allowed module defines a ``python:module.func`` binding's function, read from
its source file, never imported.

Why: ``validate --allow-module ehr_client`` said "valid" of ``python:ehr_client.asign_queue``
and of ``python:ehr_clinet.assign_queue``, and ``run`` with the same flag refused at its
start ("'ehr_client' has no callable 'asign_queue'"). Validating imports nothing (a Turtle
file must not choose code that runs, and an allowed module may act when imported), so the
module is found as ``run`` would import it (the path, then the current folder) and its
source parsed: a function it neither defines, assigns nor imports at its top level is not
there. Whatever a module may make at import in ways not written (``from x import *``, a
module ``__getattr__``, ``globals()``, ``setattr``), or a module with no Python source
(compiled, built in), is left to the run.
"""

from __future__ import annotations

import ast
import difflib
import importlib.machinery
import importlib.util
import os
import sys
from pathlib import Path

from .function_source import FunctionNode, bound_names, sole_def

__all__ = ["allowed_binding"]

_UNWRITTEN = ("import *", "__getattr__", "globals()", "setattr(", "exec(", "vars()")
"""Source text by which a module may hold names its top level does not write."""


def allowed_binding(target: str) -> tuple[str | None, tuple[FunctionNode, Path] | None]:
    """What the source of ``module.func`` (a ``python:`` binding's target in an allowed
    module) says, its file found and read once, never imported: why it cannot be what a run
    calls (its module is found nowhere, or its source defines no ``func``), else None; and,
    when there is no such why, the ``def`` of ``func`` and its file
    (:func:`~.function_source.sole_def`), else None. Either is None when it cannot be told
    without importing it (the module already imported has its function to ask)."""
    module_name, _, attr = target.rpartition(".")
    if not module_name:
        return None, None
    loaded = sys.modules.get(module_name)
    if loaded is not None:  # already imported: asking it imports nothing
        return (
            None if hasattr(loaded, attr) else f"{module_name!r} has no callable {attr!r}"
        ), None
    try:
        spec = _spec(module_name)
    except (ImportError, ValueError, OSError):  # a parent that cannot be read: the run's to say
        return None, None
    if spec is None:
        here = sorted(p.stem for p in Path.cwd().glob("*.py"))
        close = difflib.get_close_matches(module_name, here, n=1)
        return (
            f"no module {module_name!r} is found on the path or in the current folder, where "
            "a run looks for it: "
            + (
                f'did you mean "python:{close[0]}.{attr}"?'
                if close
                else f"run from the folder that holds {module_name.replace('.', '/')}.py, or "
                "install it"
            )
        ), None
    read = _written(spec)
    if read is None:
        return None, None
    origin, tree = read
    names = set(bound_names(tree))
    if attr in names:
        node = sole_def(tree, attr)
        return None, (None if node is None else (node, Path(origin)))
    public = sorted(n for n in names if not n.startswith("_"))
    close = difflib.get_close_matches(attr, public, n=1)
    hint = f'; did you mean "python:{module_name}.{close[0]}"?' if close else ""
    return f"{module_name!r} ({origin}) defines no {attr!r}{hint}", None


def _written(spec: importlib.machinery.ModuleSpec) -> tuple[str, ast.Module] | None:
    """A found module's source file and syntax tree; None when it has no Python source, or
    its source may make names in ways not written (:data:`_UNWRITTEN`)."""
    origin = spec.origin
    if origin is None or not origin.endswith(".py"):
        return None
    try:
        source = Path(origin).read_text(encoding="utf-8")
        tree = ast.parse(source)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return None
    if any(mark in source for mark in _UNWRITTEN):
        return None
    return origin, tree


def _spec(module_name: str) -> importlib.machinery.ModuleSpec | None:
    """Where ``module_name`` would be imported from, its parents found and not run."""
    top, *rest = module_name.split(".")
    if top in sys.modules:
        spec = getattr(sys.modules[top], "__spec__", None)
    else:  # as a run looks: the current folder first (cwd_importable), then the path
        spec = importlib.machinery.PathFinder.find_spec(
            top, [os.getcwd()]
        ) or importlib.util.find_spec(top)
    name = top
    for part in rest:
        if spec is None or spec.submodule_search_locations is None:
            return None
        name = f"{name}.{part}"
        spec = importlib.machinery.PathFinder.find_spec(name, list(spec.submodule_search_locations))
    return spec
