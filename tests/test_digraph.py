"""The loader's graph walks (horismos/_digraph.py) against networkx, which they replace on the
load's path (its import was a fifth of every command's start): on random graphs, self-loops,
dangling edges and long chains included, the same reachability, the same shortest path
lengths, the same strongly connected components, the same dominators."""

from __future__ import annotations

from itertools import pairwise

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from horismos._digraph import (
    Digraph,
    add_edge,
    descendants,
    dominators,
    shortest_path,
    simple_cycles,
    strongly_connected,
)

edges = st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12)), max_size=40)


def both(pairs: list[tuple[int, int]], alone: int = 13) -> tuple[Digraph[int], nx.DiGraph]:
    ours: Digraph[int] = {alone: {}}
    theirs = nx.DiGraph()
    theirs.add_node(alone)
    for a, b in pairs:
        add_edge(ours, a, b)
        theirs.add_edge(a, b)
    return ours, theirs


@settings(max_examples=300, deadline=None)
@given(edges)
def test_descendants_and_shortest_paths_are_networkx_s(pairs: list[tuple[int, int]]) -> None:
    ours, theirs = both(pairs)
    assert set(ours) == set(theirs.nodes)
    for a in ours:
        assert descendants(ours, a) == nx.descendants(theirs, a) | (
            {a} if any(a in c and (len(c) > 1 or theirs.has_edge(a, a))
                       for c in nx.strongly_connected_components(theirs)) else set()
        )
        for b in ours:
            path = shortest_path(ours, a, b)
            if not nx.has_path(theirs, a, b):
                assert path is None
                continue
            assert path is not None and path[0] == a and path[-1] == b
            assert len(path) - 1 == nx.shortest_path_length(theirs, a, b)
            assert all(theirs.has_edge(x, y) for x, y in pairwise(path))


@settings(max_examples=300, deadline=None)
@given(edges)
def test_strongly_connected_components_are_networkx_s(pairs: list[tuple[int, int]]) -> None:
    ours, theirs = both(pairs)
    found = list(strongly_connected(ours))
    expected = nx.strongly_connected_components(theirs)
    assert sorted(map(sorted, found)) == sorted(map(sorted, expected))


def _rotated(cycle: list[int]) -> tuple[int, ...]:
    """A cycle ``[a, …]`` (networkx's, without the closing node) from its least node."""
    at = cycle.index(min(cycle))
    return tuple(cycle[at:] + cycle[:at])


@settings(max_examples=300, deadline=None)
@given(edges)
def test_simple_cycles_within_a_component_are_networkx_s(pairs: list[tuple[int, int]]) -> None:
    """Each elementary cycle once, closed, from its earliest node in the order given."""
    ours, theirs = both(pairs)
    for component in nx.strongly_connected_components(theirs):
        order = sorted(component)
        found = list(simple_cycles(ours, order))
        assert all(c[0] == c[-1] == min(c) for c in found), found
        assert all(theirs.has_edge(x, y) for c in found for x, y in pairwise(c))
        mine = [tuple(c[:-1]) for c in found]
        assert len(mine) == len(set(mine))
        expected = {_rotated(c) for c in nx.simple_cycles(theirs.subgraph(component))}
        assert set(mine) == expected


def test_simple_cycles_stop_after_their_limit_of_moves() -> None:
    """A complete graph of 12 nodes has ~10^8 cycles: the walk stops, what it found given."""
    complete: Digraph[int] = {}
    for a in range(12):
        for b in range(12):
            if a != b:
                add_edge(complete, a, b)
    found = list(simple_cycles(complete, list(range(12)), limit=1000))
    assert 0 < len(found) <= 1000


@settings(max_examples=300, deadline=None)
@given(edges)
def test_dominators_are_networkx_s(pairs: list[tuple[int, int]]) -> None:
    ours, theirs = both(pairs)
    for source in sorted(ours):
        idom = {source: source, **nx.immediate_dominators(theirs, source)}  # newer: no source
        expected: dict[int, set[int]] = {}
        for node in idom:
            chain, at = {node}, node
            while idom[at] != at:
                at = idom[at]
                chain.add(at)
            expected[node] = chain
        assert dominators(ours, source) == expected


def test_a_flow_of_thousands_of_steps_in_a_line_is_walked_without_recursion() -> None:
    line: Digraph[int] = {}
    for i in range(20_000):
        add_edge(line, i, i + 1)
    add_edge(line, 20_000, 0)  # and back: one component of every step
    (component,) = strongly_connected(line)
    assert len(component) == 20_001
    assert shortest_path(line, 5, 4) == [*range(5, 20_001), *range(0, 5)]
    assert len(descendants(line, 0)) == 20_001
