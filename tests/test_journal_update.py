"""An update on ``journal:PATH`` is kept as its text and replayed at the next open, so one that
would write something else then is refused before anything is written: here an RDF
collection ``( … )`` in a triple, which mints a blank node per member each time it runs, as
``BNODE()``, ``[]`` and ``_:`` do (``INSERT DATA`` alone is kept as the quads it wrote, and
takes them). A parenthesis that is not a collection (an expression, a
function's arguments, ``IN``, a ``VALUES`` row, a property path, ``()``, one inside an IRI, a
string or a comment) is kept, and the update replays to the same world.
"""

from __future__ import annotations

import os

import pytest

from horismos import World
from horismos._errors import UsageError
from horismos._stores.journal import JOURNAL

WHERE = "WHERE { ?s <urn:t:q> ?o }"

COLLECTIONS = [
    "INSERT { <urn:t:a> <urn:t:p> (1 2) } WHERE {}",
    "INSERT { (<urn:t:x>) <urn:t:p> <urn:t:o> } WHERE {}",
    f"INSERT {{ ?s <urn:t:p> ( ?o ) }} {WHERE}",
    f"INSERT {{ ?s <urn:t:p> <urn:t:o> , (1) }} {WHERE}",
    f"INSERT {{ ?s a ('x') }} {WHERE}",
    f"INSERT {{ GRAPH <urn:t:g> {{ ?s <urn:t:p> (() 2) }} }} {WHERE}",
    f"INSERT {{ ?s <urn:t:p> ?o ; <urn:t:r> (1 2) }} {WHERE}",
    f"INSERT {{ ?s <urn:t:p> 'a' . (1) <urn:t:r> 2 }} {WHERE}",
    "INSERT { ?s <urn:t:p> ?o } WHERE { ?s <urn:t:q> ?o FILTER(?o > 1) ?s <urn:t:r> (1) }",
]

KEPT = [
    "INSERT { ?s <urn:t:p> ?n } WHERE { ?s <urn:t:q> ?o FILTER(?o IN (1, 2)) "
    "BIND((?o + 1) * 2 AS ?n) }",
    "INSERT { ?c <urn:t:p> ?f } WHERE { VALUES (?c ?f) { (<urn:t:a> 1) (<urn:t:b> 2) } }",
    "INSERT { ?s <urn:t:p> ?o } WHERE { ?s (<urn:t:q>|<urn:t:r>)/^(<urn:t:u>)* ?o }",
    "INSERT { ?s <urn:t:p> ?o } WHERE { ?s !(<urn:t:r>) ?o ; <urn:t:q> ?o }",
    "INSERT { <urn:t:n> <urn:t:count> ?n } WHERE { { SELECT ?s (COUNT(*) AS ?n) "
    "WHERE { ?s ?p ?o } GROUP BY ?s (STR(?s)) HAVING (COUNT(?o) > 0) ORDER BY DESC(?s) } }",
    "INSERT DATA { <urn:t:a(b)> <urn:t:p> '(1 2)' , () , \"\"\"( x )\"\"\" } # (a b)",
    "DELETE { ?s <urn:t:q> ?o } WHERE { ?s <urn:t:q> ?o "
    "FILTER(STRSTARTS(STR(?o), '(') || CONTAINS(LCASE(STR(?s)), 'x')) }",
    "INSERT { ?s <urn:t:p> true } WHERE { ?s a <urn:t:T> "
    "FILTER NOT EXISTS { ?s <urn:t:p> ( ) } }",
    "INSERT { ?s <urn:t:p> \"1\"^^<urn:t:d> } WHERE { ?s <urn:t:q> ?o . "
    "FILTER(?o = \"x\"@en-GB) }",
    "INSERT DATA { <urn:t:limit> <urn:t:p> 'no LIMIT, no OFFSET' } # LIMIT 1",
]


@pytest.mark.parametrize("update", COLLECTIONS)
def test_an_update_writing_an_rdf_collection_is_refused_before_anything_is_written(
    tmp_path, update
):
    with World.open(f"journal:{tmp_path / 'store'}") as world:
        size = (tmp_path / "store" / JOURNAL).stat().st_size
        with pytest.raises(UsageError, match=r"\(an RDF collection\) would write something"):
            world.store.update(update)
        assert (tmp_path / "store" / JOURNAL).stat().st_size == size
        assert list(world.store.quads()) == []


@pytest.mark.parametrize(
    ("update", "quads"),
    [
        ("INSERT DATA { <urn:t:a> <urn:t:p> (1 2) }", 5),
        ("INSERT DATA { (<urn:t:x>) <urn:t:p> <urn:t:o> . [] <urn:t:p> _:b }", 4),
    ],
)
def test_insert_data_of_blank_nodes_is_kept_as_the_quads_it_wrote(tmp_path, update, quads):
    """``INSERT DATA`` is kept as the quads it wrote (a commit's record), not as its text:
    its blank nodes, new at each run, replay as the nodes it made."""
    with World.open(f"journal:{tmp_path / 'store'}") as world:
        world.store.update(update)
        world.store.update(update)  # new nodes again: twice the quads
        held = set(world.store.quads())
    assert len(held) == 2 * quads
    with World.open(f"journal:{tmp_path / 'store'}") as world:
        assert set(world.store.quads()) == held
        kept, recomputed = world.store.check_digest()
        assert kept == recomputed


IN_ROW_ORDER = [
    "DELETE { ?s <urn:t:q> ?o } WHERE { { SELECT ?s ?o WHERE { ?s <urn:t:q> ?o } LIMIT 1 } }",
    "DELETE { ?s <urn:t:q> ?o } WHERE { { SELECT ?s ?o WHERE { ?s <urn:t:q> ?o } OFFSET 1 } }",
    "INSERT { <urn:t:a> <urn:t:p> ?v } WHERE "
    "{ { SELECT (SAMPLE(?o) AS ?v) WHERE { ?s <urn:t:q> ?o } } }",
    "INSERT { <urn:t:a> <urn:t:p> ?v } WHERE "
    "{ { SELECT (group_concat(STR(?o)) AS ?v) WHERE { ?s <urn:t:q> ?o } } }",
]


@pytest.mark.parametrize("update", IN_ROW_ORDER)
def test_an_update_taking_rows_in_their_order_is_refused_before_anything_is_written(
    tmp_path, update
):
    """Replayed when the store opens, such an update takes the rows in the order the store
    then gives them, which need not be the one it had: another row removed, another value
    written (it was kept and replayed)."""
    with World.open(f"journal:{tmp_path / 'store'}") as world:
        world.store.update("INSERT DATA { <urn:t:a> <urn:t:q> 1 . <urn:t:b> <urn:t:q> 2 }")
        size = (tmp_path / "store" / JOURNAL).stat().st_size
        held = set(world.store.quads())
        with pytest.raises(UsageError, match=r"another order when the update is replayed"):
            world.store.update(update)
        assert (tmp_path / "store" / JOURNAL).stat().st_size == size
        assert set(world.store.quads()) == held


@pytest.mark.parametrize("update", KEPT)
def test_parentheses_that_mint_no_blank_node_are_kept_and_replay(tmp_path, update):
    from horismos._stores.update_text import pinned

    assert pinned(update) == update  # nothing refused, nothing rewritten
    seed = ("INSERT DATA { <urn:t:a> <urn:t:q> 1 . <urn:t:b> <urn:t:q> '(y)' . "
            "<urn:t:a> a <urn:t:T> . <urn:t:a> <urn:t:u> <urn:t:b> }")
    world = World.open(f"journal:{tmp_path / 'store'}")
    world.store.update(seed)
    world.store.update(update)
    held = set(world.store.quads())
    os.close(world.store._fd)  # type: ignore[attr-defined]  # as if killed: no snapshot, so
    os.close(world.store._lock_fd)  # type: ignore[attr-defined]  # the open replays the text
    world.store._fd = -1  # type: ignore[attr-defined]
    with World.open(f"journal:{tmp_path / 'store'}") as world:
        assert set(world.store.quads()) == held


def test_a_function_named_by_its_iri_after_filter_is_no_collection():
    from horismos._stores.update_text import pinned

    text = "DELETE { ?s <urn:t:q> ?o } WHERE { ?s <urn:t:q> ?o FILTER <urn:t:fn>(?o) }"
    assert pinned(text) == text
    assert "NOW()" not in pinned("INSERT { <urn:t:a> <urn:t:at> ?t } WHERE { BIND(NOW() AS ?t) }")
