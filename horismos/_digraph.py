"""Reachability in the small directed graphs a load checks: a workflow's flow, a class hierarchy.

Why not networkx: these textbook walks (reachability, a shortest path, strongly connected
components, dominators) are all the loader asks of a graph library, and importing networkx
was ~120 ms of every command's start (a fifth of it), before a single definition was read. A
graph here is a mapping from each node to its successors, in the order they were added, so
every walk (and the loop a warning shows) is the same on every load.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Iterator, Mapping, Sequence
from typing import TypeVar

__all__ = [
    "Digraph",
    "add_edge",
    "descendants",
    "dominators",
    "shortest_path",
    "simple_cycles",
    "strongly_connected",
]

N = TypeVar("N", bound=Hashable)

Digraph = dict[N, dict[N, None]]
"""Each node's successors, as the keys of a dict: ordered, and each edge once."""


def add_edge(graph: Digraph[N], a: N, b: N) -> None:
    """The edge ``a → b``, both nodes added if new."""
    graph.setdefault(a, {})[b] = None
    graph.setdefault(b, {})


def descendants(graph: Mapping[N, Mapping[N, None]], source: N) -> set[N]:
    """Every node a path from ``source`` reaches (``source`` only when it is on a cycle)."""
    seen: set[N] = set()
    todo = list(graph.get(source, ()))
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(graph.get(node, ()))
    return seen


def dominators(graph: Mapping[N, Mapping[N, None]], source: N) -> dict[N, set[N]]:
    """For each node a path from ``source`` reaches, the nodes every path from ``source`` to it
    passes, itself among them: the iterative data-flow walk, to a fixed point."""
    order, seen = [source], {source}
    for node in order:  # the list grows as it is walked: breadth first, each node once
        for nxt in graph.get(node, ()):
            if nxt not in seen:
                seen.add(nxt)
                order.append(nxt)
    into: dict[N, list[N]] = {n: [] for n in order}
    for node in order:
        for nxt in graph.get(node, ()):
            into[nxt].append(node)
    dom = {n: set(order) for n in order}
    dom[source] = {source}
    changed = True
    while changed:
        changed = False
        for node in order[1:]:
            now = {node} | set.intersection(*(dom[p] for p in into[node]))
            if now != dom[node]:
                dom[node], changed = now, True
    return dom


def shortest_path(graph: Mapping[N, Mapping[N, None]], source: N, target: N) -> list[N] | None:
    """A path from ``source`` to ``target`` with the fewest edges (breadth first, successors
    in their order), both ends included; None when there is none."""
    parent: dict[N, N | None] = {source: None}
    queue = deque([source])
    while queue:
        node = queue.popleft()
        if node == target:
            path = [node]
            while (back := parent[path[-1]]) is not None:
                path.append(back)
            return path[::-1]
        for nxt in graph.get(node, ()):
            if nxt not in parent:
                parent[nxt] = node
                queue.append(nxt)
    return None


def simple_cycles(
    graph: Mapping[N, Mapping[N, None]], order: Sequence[N], limit: int = 20_000
) -> Iterator[list[N]]:
    """Each elementary cycle through the nodes of ``order`` alone, once, as ``[a, …, a]``
    from its earliest node in ``order``: a walk from each node through the later ones only.
    A flow has a handful; a dense one could have exponentially many, so the walk stops after
    ``limit`` moves, the cycles found by then given."""
    rank = {n: i for i, n in enumerate(order)}
    moves = 0
    for start in order:
        first = rank[start]
        path, on_path = [start], {start}
        work = [iter(graph.get(start, ()))]
        while work:
            nxt = next(work[-1], None)
            if nxt is None:
                work.pop()
                on_path.discard(path.pop())
                continue
            moves += 1
            if moves > limit:
                return
            if nxt == start:
                yield [*path, start]
            elif nxt in rank and rank[nxt] > first and nxt not in on_path:
                path.append(nxt)
                on_path.add(nxt)
                work.append(iter(graph.get(nxt, ())))


def strongly_connected(graph: Mapping[N, Mapping[N, None]]) -> Iterator[set[N]]:
    """The graph's strongly connected components (Tarjan's algorithm, without recursion: a
    flow of thousands of steps in a line would pass Python's recursion limit)."""
    index: dict[N, int] = {}
    low: dict[N, int] = {}
    stack: list[N] = []
    on_stack: set[N] = set()
    for root in graph:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(graph.get(root, ())))]
        while work:
            node, successors = work[-1]
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(graph.get(nxt, ()))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    yield component
