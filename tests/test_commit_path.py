"""The commit path's conversions, held against the general ones they stand in for.

``OxigraphStore.apply`` converts each quad once (``encode_quads``: terms kept by identity, lines
written from cached texts). Whatever it is given — literals Oxigraph keeps or rewrites, blank
nodes, bookkeeping graphs, the same objects again in later commits — the quad it lands and
the line it hashes must be those of the quads as ``canonical`` gives them, converted and
written the general way; and the digest it keeps must be the recomputed one.
"""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rdflib import XSD, BNode, Literal, URIRef

from horismos import World
from horismos._stores import RUNTIME, Change
from horismos._stores.base import nquad_line
from horismos._stores.ox_terms import (
    _TERMS,
    _kept_as_is,
    canonical,
    datetime_literal,
    encode_quads,
    normalised,
    ox_line,
    to_ox_quad,
)

NODES = [URIRef("urn:test:a"), URIRef("http://example.org/b#c"), BNode("x1")]
PREDICATES = [URIRef("urn:test:p"), URIRef("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")]
GRAPHS = [None, URIRef("urn:test:g"), URIRef(RUNTIME + "claims")]
literal = st.one_of(
    st.text(max_size=12).map(Literal),
    st.text(max_size=8).map(lambda s: Literal(s, lang="EN")),
    st.integers(-(10**12), 10**12).map(Literal),
    st.sampled_from(["071", "+5", "-0", "1.50", "abc"]).map(
        lambda s: Literal(s, datatype=XSD.integer)
    ),
    st.sampled_from(["1.50", "2", "0.0"]).map(lambda s: Literal(s, datatype=XSD.decimal)),
    st.sampled_from(["true", "false", "1", "0"]).map(lambda s: Literal(s, datatype=XSD.boolean)),
    st.datetimes(timezones=st.one_of(st.none(), st.timezones(), st.just(dt.UTC))).map(
        lambda v: Literal(v.isoformat(), datatype=XSD.dateTime)
    ),
    st.datetimes(timezones=st.just(dt.UTC)).map(datetime_literal),
    st.text(alphabet="0123456789-+TZ:.", max_size=25).map(
        lambda s: Literal(s, datatype=XSD.dateTime)
    ),
    st.text(max_size=6).map(lambda s: Literal(s, datatype=XSD.string)),
)
quad = st.tuples(
    st.sampled_from(NODES),
    st.sampled_from(PREDICATES),
    st.one_of(st.sampled_from(NODES), literal),
    st.sampled_from(GRAPHS),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(quad, max_size=8), st.integers(0, 3))
def test_a_quad_lands_and_digests_as_the_general_conversion_writes_it(quads, repeats):
    """Each encoded quad is the canonical quad, converted as ``to_ox_quad`` converts it, its
    line as ``nquad_line`` writes it (and as ``ox_line`` writes the quad once stored), None
    in a bookkeeping graph; the same on the next commits of the same objects."""
    expected = [
        (
            c,
            to_ox_quad(c),
            None if c[3] is not None and str(c[3]).startswith(RUNTIME) else nquad_line(*c),
        )
        for c in canonical(quads)
    ]
    for _ in range(1 + repeats):  # again: from the terms and quads kept by identity
        assert encode_quads(quads) == expected
    for _, as_ox, line in expected:  # what a recomputation hashes once it is stored
        if line is not None:
            assert ox_line(normalised([as_ox])[0]) == line


def test_a_commit_of_many_quads_encodes_as_few_do_and_leaves_the_caches_small():
    """A world written in one change (thousands of quads, literals Oxigraph rewrites among
    them, the same objects again at the end) encodes as the general conversion writes it,
    and the term caches hold a few hundred entries after it, not its every term: they were
    held until two more commits, the first of which, a step's, spent ~100 ms freeing them."""
    quads = [
        (URIRef(f"urn:test:s{i}"), PREDICATES[i % 2], literal, GRAPHS[i % 3])
        for i in range(5_000)
        for literal in [Literal(f"0{i}", datatype=XSD.integer) if i % 7 else Literal(i)]
    ]
    quads += quads[:300]  # the same objects again, after the caches turned over
    expected = [
        (
            c,
            to_ox_quad(c),
            None if c[3] is not None and str(c[3]).startswith(RUNTIME) else nquad_line(*c),
        )
        for c in canonical(quads)
    ]
    assert encode_quads(quads) == expected
    assert len(_TERMS.now) + len(_TERMS.before) < 2_000
    world = World.open("oxigraph")
    world.commit(Change(add=quads))
    kept, recomputed = world.store.check_digest()
    assert kept == recomputed


@settings(max_examples=200, deadline=None)
@given(st.datetimes(timezones=st.one_of(st.none(), st.timezones(), st.just(dt.UTC))))
def test_a_datetime_literal_is_the_parsed_one_and_kept_as_is(value):
    """The runtime's timestamps built from the value equal those parsed from its
    ``isoformat()``, and Oxigraph keeps them as they are."""
    built = datetime_literal(value)
    parsed = Literal(value.isoformat(), datatype=XSD.dateTime)
    assert built == parsed and str(built) == str(parsed) and built.datatype == XSD.dateTime
    assert _kept_as_is(built)
    assert encode_quads([(NODES[0], PREDICATES[0], built, None)]) == encode_quads(
        [(NODES[0], PREDICATES[0], parsed, None)]
    )


def test_many_commits_of_fresh_and_recurring_terms_keep_the_digest_true():
    """Past the caches' generations (hundreds of commits): state replaced each commit, fresh
    graphs and times, a literal Oxigraph rewrites; kept digest equals the recomputed one."""
    world = World.open("oxigraph")
    node, version = URIRef("urn:test:instance"), URIRef("urn:test:version")
    state = [(node, version, Literal(0), URIRef("urn:test:state"))]
    world.commit(Change(add=state))
    for i in range(1, 600):
        graph = URIRef(f"urn:test:effect:{i}")
        new = [(node, version, Literal(i), URIRef("urn:test:state"))]
        world.commit(
            Change(
                add=[
                    (
                        node,
                        PREDICATES[0],
                        datetime_literal(
                            dt.datetime(2026, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=i)
                        ),
                        graph,
                    ),
                    (node, PREDICATES[0], Literal(f"{i}.50", datatype=XSD.decimal), graph),
                    (graph, PREDICATES[1], NODES[1], graph),
                    *new,
                ],
                remove=state,
                expect=tuple(state),
            )
        )
        state = new
    kept, recomputed = world.store.check_digest()
    assert kept == recomputed
    assert World.from_snapshot(world.snapshot(), "memory").digest() == world.digest()


@pytest.mark.parametrize("on_disk", [False, True])
def test_a_graph_said_fresh_counts_each_quad_once_even_when_it_is_not(on_disk, tmp_path):
    """``Change.fresh`` is a hint: a graph said fresh that holds quads already (a replayed
    id, an emptied graph) or a quad given twice still lands and digests each quad once."""
    world = World.open(f"oxigraph:{tmp_path / 'w'}" if on_disk else "oxigraph")
    graph, other = URIRef("urn:test:effect:1"), URIRef("urn:test:effect:2")
    old, new = ((NODES[0], PREDICATES[0], Literal(text), graph) for text in ("stored", "new"))
    world.commit(Change(add=[old]))
    world.commit(Change(add=[old, new, new], fresh=(graph,)))
    world.commit(Change(remove=[old, new]))  # the graph is empty, and still named
    world.commit(Change(add=[old], fresh=(graph,)))
    twice = (NODES[0], PREDICATES[0], NODES[1], other)
    world.commit(Change(add=[twice, twice], fresh=(other,)))
    kept, recomputed = world.store.check_digest()
    assert kept == recomputed
    assert len(list(world.store.quads())) == 2
