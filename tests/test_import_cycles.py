"""Data flows one way inside the package (load → model → run → trace): no module imports,
directly or through others, a module that imports it back. Every import counts, including
those inside functions and under ``TYPE_CHECKING``: a cycle there is the same tangle to a
reader, only postponed."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

import horismos

PACKAGE = Path(horismos.__file__).parent


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _exists(name: str) -> bool:
    path = PACKAGE.parent / name.replace(".", "/")
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def import_graph() -> nx.DiGraph:
    """Module → module it imports, over every ``.py`` file in ``horismos/``."""
    graph = nx.DiGraph()
    for path in sorted(PACKAGE.rglob("*.py")):
        here = _module(path)
        package = here if path.name == "__init__.py" else here.rpartition(".")[0]
        graph.add_node(here)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target.split(".")[0] != "horismos":
                    continue
                for alias in node.names:  # `from . import x` imports the module x
                    sub = f"{target}.{alias.name}"
                    graph.add_edge(here, sub if _exists(sub) else target)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "horismos":
                        graph.add_edge(here, alias.name)
    # the package's own __init__ re-exports the public API from everything: not a cycle
    graph.remove_node("horismos")
    return graph


def test_no_import_cycle_inside_the_package() -> None:
    cycles = [sorted(c) for c in nx.strongly_connected_components(import_graph()) if len(c) > 1]
    assert not cycles, (
        "import cycles inside horismos/ (each group imports itself through the others): "
        + "; ".join(" ↔ ".join(c) for c in cycles)
        + ". Make the lower module take what it needs (a Protocol it declares, or plain "
        "values) instead of importing the module that calls it.")


def test_the_check_sees_a_cycle() -> None:
    """The graph is built from real imports: a known back edge shows up as a cycle."""
    graph = import_graph()
    assert graph.has_edge("horismos._runner", "horismos._waits")
    graph.add_edge("horismos._waits", "horismos._runner")
    assert any(len(c) > 1 for c in nx.strongly_connected_components(graph))
