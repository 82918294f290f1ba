"""A ``sparql:`` commit's text, each term converted once, held against the general conversions.

``SparqlStore.apply`` turns each quad into one tuple of strings (``_stores/sparql_text.py``):
its terms as the update writes them and its N-Quads line as the digest hashes it; it then
deduplicates, computes the delta and writes the update from those strings. Whatever it is
given — literals Oxigraph keeps or rewrites, unicode and escapes, bookkeeping graphs, blank
nodes — the texts must be those ``quad_block``/``nt`` and ``nquad_line`` write for the quads as
``canonical`` gives them, two quads must be one text exactly when Oxigraph stores them as one,
and on a real server a random sequence of commits must keep the digest true.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oxigraph_server import ServerPool
from rdflib import BNode, Literal, URIRef
from test_commit_path import GRAPHS, PREDICATES, literal

from horismos import World
from horismos._stores import Change, Conflict
from horismos._stores.base import is_world_quad, nquad_line
from horismos._stores.ox_commit import quad_block
from horismos._stores.ox_terms import canonical, to_ox_quad
from horismos._stores.sparql_text import block, has_blank, nt, texted

IRIS = [URIRef("urn:test:a"), URIRef("http://example.org/b#c"), URIRef("urn:x:é")]
plain_quad = st.tuples(
    st.sampled_from(IRIS),
    st.sampled_from(PREDICATES),
    st.one_of(st.sampled_from(IRIS), literal),
    st.sampled_from(GRAPHS),
)


def _term(t: Any) -> str:
    return f"_:{t}" if isinstance(t, BNode) else nt(t)


def _spelled_out(text: str) -> str:
    """``block``'s text with each ``s p o ; p o .`` written as one line a triple."""
    out, subject = [], ""
    for line in text.split("\n"):
        if line.startswith("  "):
            line = f"{subject} {line[2:]}"
        elif line.startswith(("<", "_:")):
            subject = line.split(" ", 1)[0]
        out.append(line[:-2] + " ." if line.endswith(" ;") else line)
    return "\n".join(out)


@settings(max_examples=300, deadline=None)
@given(st.lists(plain_quad, max_size=8))
def test_a_quad_is_written_and_hashed_as_the_general_conversions_write_it(quads):
    done = texted(quads)
    general = canonical(quads)
    assert [q.line for q in done] == [nquad_line(*c) for c in general]
    assert _spelled_out(block(done)) == quad_block(general, _term)
    store = ox.Store()  # and the server reads the same quads from either text
    store.update(f"INSERT DATA {{ {block(done)} }}")
    spelled = ox.Store()
    spelled.update(f"INSERT DATA {{ {quad_block(general, _term)} }}")
    assert set(store) == set(spelled)
    assert [q.world for q in done] == [is_world_quad(c) for c in general]
    for a, qa in zip(done, general, strict=True):  # one text exactly when stored as one
        for b, qb in zip(done, general, strict=True):
            assert (a.key == b.key) == (to_ox_quad(qa) == to_ox_quad(qb))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([*IRIS, BNode("x1")]), st.sampled_from(PREDICATES),
                          st.one_of(st.sampled_from([*IRIS, BNode("x2")]), literal),
                          st.sampled_from(GRAPHS)), max_size=6))
def test_a_blank_node_is_found_wherever_it_is(quads):
    assert has_blank(quads) == any(isinstance(t, BNode) for q in quads for t in q)
    if has_blank(quads):  # written as its label, as the update's template always wrote it
        assert _spelled_out(block(texted(quads))) == quad_block(canonical(quads), _term)


@pytest.fixture(scope="module")
def served(oxigraph_pool: ServerPool) -> Iterator[World]:
    world = World.open(oxigraph_pool.fresh())
    yield world
    world.close()
    oxigraph_pool.release()


change = st.tuples(st.lists(plain_quad, max_size=5), st.lists(st.integers(0, 30), max_size=4),
                   st.booleans())


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(change, min_size=1, max_size=5))
def test_commits_on_a_server_keep_its_digest_true(served, changes):
    """Guarded commits (the runner's: they remove quads that are stored and add new ones) and
    unguarded ones (anything: literals Oxigraph rewrites, quads twice, quads already stored,
    quads removed that are not): the kept digest is the recomputed one, the world holds what
    an embedded Oxigraph store given the same commits holds, and a commit whose guard no
    longer holds lands nothing."""
    mirror = World.open("oxigraph")
    mirror.store.load(served.store.quads())
    instance, version = URIRef(f"urn:test:i:{uuid.uuid4().hex}"), URIRef("urn:test:version")
    state = URIRef("urn:test:state")
    old = (instance, version, Literal(0), state)
    served.commit(Change(add=[old]))
    mirror.commit(Change(add=[old]))
    for n, (add, picks, guarded) in enumerate(changes, 1):
        stored = sorted((q for q in served.store.quads() if q[0] != instance), key=str)
        remove = list(dict.fromkeys(stored[i % len(stored)] for i in picks)) if stored else []
        if guarded:
            effect = URIRef(f"urn:test:effect:{uuid.uuid4().hex}")
            new = (instance, version, Literal(n), state)
            c = Change(add=[*((s, p, o, effect) for s, p, o, _ in add), new],
                       remove=[*remove, old], expect=(old,))
            old = new
        else:
            c = Change(add=add, remove=remove)
        served.commit(c)
        mirror.commit(c)
        with pytest.raises(Conflict):  # the version moved on: nothing lands
            served.commit(Change(add=add, expect=((instance, version, Literal(-1), state),)))
    kept, recomputed = served.store.check_digest()
    assert kept == recomputed == mirror.store.digest()
    assert sorted(map(str, served.store.quads())) == sorted(map(str, mirror.store.quads()))
