"""An in-memory store that had many quads removed is copied afresh, and nothing a user can see
changes (horismos._stores.churn).

pyoxigraph's in-memory store keeps every quad it was ever given, removed ones too, and walks
them to answer a pattern on their terms: a node whose value is replaced on every step made
every lookup on it cost its history. The store copies itself when that pays; these tests hold
the copy to being invisible: the same quads, digest, named graphs and blank nodes, reads
started before it unchanged, commits after it as before.
"""

from __future__ import annotations

import pyoxigraph as ox
import pytest
from rdflib import RDF, BNode, Literal, Namespace, URIRef
from test_loops import fetcher, paging, write

from horismos import Agent, World
from horismos._stores import RUNTIME, Change, Conflict, churn, copy_behind, open_store

FEED = Namespace("http://example.org/feed#")
EX = "http://example.org/ward#"
WARD, BEDS, KIND, G = (URIRef(EX + n) for n in ("w1", "freeBeds", "Ward", "g"))


@pytest.fixture
def small_floors(monkeypatch: pytest.MonkeyPatch) -> None:
    """Copy after a few dozen removals, not a thousand: the rules, at a test's size."""
    monkeypatch.setattr(churn, "HOT_FLOOR", 16)
    monkeypatch.setattr(churn, "DEAD_FLOOR", 64)
    monkeypatch.setattr(churn, "BALANCE", 1)


def replace_beds(store, times: int, start: int = 0) -> None:
    """A ward's free-bed count replaced ``times`` times, one commit each."""
    for n in range(start, start + times):
        store.apply(
            Change(add=[(WARD, BEDS, Literal(n + 1), G)], remove=[(WARD, BEDS, Literal(n), G)])
        )


def held(store) -> list[str]:
    return sorted(store.lines())


def test_a_node_replaced_many_times_gets_the_store_copied_and_reads_the_same(
    small_floors: None,
) -> None:
    store = open_store("oxigraph")
    blank = BNode("b0")
    store.apply(
        Change(
            add=[
                (WARD, RDF.type, KIND, None),
                (WARD, BEDS, Literal(0), G),
                (blank, URIRef(EX + "note"), Literal("kept"), None),
            ]
        )
    )
    emptied = URIRef(EX + "emptied")
    store.apply(Change(add=[(WARD, URIRef(EX + "x"), Literal(1), emptied)]))
    store.apply(Change(remove=[(WARD, URIRef(EX + "x"), Literal(1), emptied)]))
    first = store._store
    started = store.lines()  # a read begun before the copy
    seen = [next(started)]

    replace_beds(store, 400)

    assert store._store is not first, "the store was never copied"
    assert list(store.objects(WARD, BEDS)) == [Literal(400)]
    assert store.types(WARD) == {KIND}
    # everything held, as a fresh store given the same changes holds it
    twin = open_store("oxigraph")
    twin.apply(
        Change(
            add=[(WARD, RDF.type, KIND, None), (blank, URIRef(EX + "note"), Literal("kept"), None)]
        )
    )
    twin.apply(Change(add=[(WARD, BEDS, Literal(400), G)]))
    assert held(store) == held(twin)
    assert store.digest() == store.recompute_digest() == twin.digest()
    # a blank node is the same node after the copy, and an emptied graph still a graph
    assert [str(s) for s, *_ in store.quads() if isinstance(s, BNode)] == ["b0"]
    assert any(g.value == str(emptied) for g in store._store.named_graphs())
    # the read begun before the copy still sees its own moment: 0 free beds
    seen += started
    assert sum('"0"^^' in line for line in seen) == 1
    assert not any('"400"^^' in line for line in seen)


def test_commits_after_a_copy_land_and_conflict_as_before(small_floors: None) -> None:
    store = open_store("oxigraph")
    store.apply(Change(add=[(WARD, BEDS, Literal(0), G)]))
    first = store._store
    replace_beds(store, 200)
    assert store._store is not first
    replace_beds(store, 5, start=200)
    assert list(store.objects(WARD, BEDS)) == [Literal(205)]
    with pytest.raises(Conflict, match="no longer stored"):
        store.apply(Change(add=[(WARD, BEDS, Literal(7), G)], expect=[(WARD, BEDS, Literal(3), G)]))
    assert held(store) == [
        f'<{WARD}> <{BEDS}> "205"^^<http://www.w3.org/2001/XMLSchema#integer> <{G}> .'
    ]
    assert store.digest() == store.recompute_digest()


def test_a_run_looping_on_one_instance_ends_as_it_would_without_copies(
    small_floors: None, tmp_path
) -> None:
    """The instance's state is replaced every step: the store is copied during the run, and
    the run ends as it would without (the loop stops at its budget, each page landed once)."""
    write(tmp_path, paging(" ; horis:maxSteps 300"))
    calls: list[object] = []
    agent = Agent.from_files(tmp_path / "defs.ttl", tools={"fetch": fetcher(calls)})
    world = World.from_files(tmp_path / "world.ttl")
    first = world.store._store

    run = agent.run(world, all=True)

    assert world.store._store is not first, "the store was never copied"
    assert [i.status for i in run.instances] == ["failed", "failed"]
    assert len(calls) == 600
    pages = sorted(int(o) for s, p, o, _ in world.store.quads() if p == FEED.page)
    assert pages == list(range(1, 601))
    assert world.digest() == world.store.recompute_digest().fingerprint


def test_a_store_written_by_updates_is_copied_too(small_floors: None) -> None:
    """Claims are taken and given back by SPARQL updates, which say nothing of what they
    removed: each counts as one removal, so a serving process's store is still copied."""
    store = open_store("oxigraph")
    store.apply(Change(add=[(WARD, RDF.type, KIND, None)]))
    first = store._store
    for n in range(100):
        store.update(f"INSERT DATA {{ GRAPH <{G}> {{ <{WARD}> <{BEDS}> {n} }} }}")
        store.update(f"DELETE DATA {{ GRAPH <{G}> {{ <{WARD}> <{BEDS}> {n} }} }}")
    assert store._store is not first, "the store was never copied"
    assert held(store) == [f"<{WARD}> <{RDF.type}> <{KIND}> ."]


def test_subjects_removed_once_are_not_counted_forever(
    small_floors: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plain run removes a few quads of each instance, then never again: counting each
    subject for the process's life grew with every instance run. The rarely removed are
    forgotten past a bound, and a subject removed again and again keeps its count (the store
    is still copied for it)."""
    monkeypatch.setattr(churn, "KEPT_SUBJECTS", 100)
    monkeypatch.setattr(churn, "RARE", 3)
    monkeypatch.setattr(churn, "HOT_FLOOR", 900)  # no copy, so no fresh count, before then
    monkeypatch.setattr(churn, "DEAD_FLOOR", 10**6)
    store = open_store("oxigraph")
    store.apply(Change(add=[(WARD, BEDS, Literal(0), G)]))
    first = store._store
    for n in range(1000):
        once = URIRef(f"{EX}instance{n}")
        store.apply(Change(add=[(once, BEDS, Literal(n), G)]))
        store.apply(
            Change(
                add=[(WARD, BEDS, Literal(n + 1), G)],
                remove=[(WARD, BEDS, Literal(n), G), (once, BEDS, Literal(n), G)],
            )
        )
        assert len(store._churn._by_subject) <= 101
    assert store._store is not first, "the store was never copied for the ward"
    assert held(store) == [
        f'<{WARD}> <{BEDS}> "1000"^^<http://www.w3.org/2001/XMLSchema#integer> <{G}> .'
    ]


def test_an_on_disk_store_is_never_copied(small_floors: None, tmp_path) -> None:
    store = open_store(f"oxigraph:{tmp_path / 'db'}")
    try:
        store.apply(Change(add=[(WARD, BEDS, Literal(0), G)]))
        first = store._store
        replace_beds(store, 200)
        assert store._store is first
    finally:
        store.close()


def test_a_copy_is_taken_a_slice_a_commit_not_whole_inside_one(small_floors: None) -> None:
    """Copied inside the commit that made it due, one step of a run in a world of 3,000,000
    quads waited 15-40 s for the whole world to be copied. The copy is now taken behind the
    commits: none copies more than a slice beyond twice its own change, what lands meanwhile
    (a commit, an update) is replayed onto the copy, and reads see the store as before."""
    store = open_store("oxigraph")
    claims = f"{RUNTIME}claims"  # a claim's bookkeeping: outside the digest
    filler = [(URIRef(f"{EX}bed{n}"), RDF.type, KIND, G) for n in range(5000)]
    store.apply(Change(add=[*filler, (WARD, BEDS, Literal(0), G)]))
    first, copied, n = store._store, [], 0
    while store._store is first:
        replace_beds(store, 1, start=n)
        n += 1
        behind = getattr(store, "_behind", None)
        if behind is not None:
            copied.append(len(behind.fresh))
        if len(copied) == 10:  # an update lands mid-copy, its NOW() as it ran
            store.update(
                f"INSERT {{ GRAPH <{claims}> {{ <{WARD}> <{EX}at> ?t }} }} "
                "WHERE { BIND(NOW() AS ?t) }"
            )
            copied.append(len(store._behind.fresh))
        assert list(store.objects(WARD, BEDS)) == [Literal(n)]
        assert n < 1000, "the store was never copied"
    # taken over that many commits, each a slice and its own change twice: 0 commits, the
    # whole world (5,001 quads) copied inside one
    assert len(copied) > 5000 // (copy_behind.SLICE + 4), len(copied)
    steps = [b - a for a, b in zip([0, *copied], copied, strict=False)]
    assert max(steps) <= copy_behind.SLICE + 2 * 2, max(steps)
    twin = open_store("oxigraph")
    at = list(first.quads_for_pattern(ox.NamedNode(str(WARD)), ox.NamedNode(f"{EX}at"), None))
    twin.load([*filler, (WARD, BEDS, Literal(n), G)])
    twin.update(f"INSERT DATA {{ GRAPH <{claims}> {{ <{WARD}> <{EX}at> {at[0].object} }} }}")
    assert sorted(map(str, store._store)) == sorted(map(str, twin._store))
    assert store.digest() == store.recompute_digest() == twin.digest()


def test_a_commit_cut_short_while_a_copy_is_under_way_is_never_undone(
    small_floors: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A commit interrupted (a Ctrl-C, any exception) after it landed and before the copy
    under way had followed it: the copy was put in the store's place later all the same,
    without that commit — a value written reverted many commits on (on ``journal:PATH`` its
    snapshot then lost it on disk too). The copy is dropped instead, and begun again."""
    store = open_store("oxigraph")
    filler = [(URIRef(f"{EX}bed{n}"), RDF.type, KIND, G) for n in range(500)]
    store.apply(Change(add=[*filler, (WARD, BEDS, Literal(0), G)]))
    n = 0
    while store._behind is None:
        replace_beds(store, 1, start=n)
        n += 1
        assert n < 2000, "no copy began"
    first = store._store

    follow, once = store._behind.follow, []

    def interrupted(*landed: object) -> bool:
        if once:
            return follow(*landed)
        once.append(True)
        raise KeyboardInterrupt

    monkeypatch.setattr(store._behind, "follow", interrupted)
    with pytest.raises(KeyboardInterrupt):
        replace_beds(store, 1, start=n)
    n += 1
    assert list(store.objects(WARD, BEDS)) == [Literal(n)]  # it landed
    while store._store is first:  # a copy begun again, put in place
        replace_beds(store, 1, start=n)
        n += 1
        assert list(store.objects(WARD, BEDS)) == [Literal(n)]
        assert n < 4000, "the store was never copied"
    twin = open_store("oxigraph")
    twin.load([*filler, (WARD, BEDS, Literal(n), G)])
    assert sorted(map(str, store._store)) == sorted(map(str, twin._store))
    assert store.digest() == store.recompute_digest() == twin.digest()


def test_an_update_taking_rows_in_their_order_drops_a_copy_under_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``DELETE … WHERE { SELECT … LIMIT 1 }`` replayed onto a copy under way took another row
    there (a copy's rows come in another order): one value lost and one brought back when the
    copy was put in place. Such an update drops the copy, begun again when due."""
    monkeypatch.setattr(copy_behind, "SLICE", 8)
    store = open_store("oxigraph")
    store.apply(Change(add=[(WARD, BEDS, Literal(i), G) for i in range(50)]))
    for i in range(0, 50, 3):  # a history: values removed and put back
        store.apply(Change(remove=[(WARD, BEDS, Literal(i), G)]))
        store.apply(Change(add=[(WARD, BEDS, Literal(i), G)]))
    monkeypatch.setattr(store._churn, "due", lambda live: True)
    store.apply(Change(remove=[(WARD, BEDS, Literal(0), G)]))  # the copy begins
    monkeypatch.setattr(store._churn, "due", lambda live: False)
    assert store._behind is not None
    store.update(f"DELETE {{ GRAPH <{G}> {{ <{WARD}> <{BEDS}> ?o }} }} WHERE {{ "
                 f"SELECT ?o WHERE {{ GRAPH <{G}> {{ <{WARD}> <{BEDS}> ?o }} }} LIMIT 1 }}")
    held_then = sorted(store.objects(WARD, BEDS))
    first = store._store
    for n in range(200):  # a copy under way would be put in place by now
        store.apply(Change(add=[(URIRef(f"{EX}f{n}"), BEDS, Literal(n), G)]))
    monkeypatch.setattr(store._churn, "due", lambda live: True)
    for n in range(200, 400):  # one begun again is
        store.apply(Change(add=[(URIRef(f"{EX}f{n}"), BEDS, Literal(n), G)],
                           remove=[(URIRef(f"{EX}f{n - 200}"), BEDS, Literal(n - 200), G)]))
        monkeypatch.setattr(store._churn, "due", lambda live: False)
    assert store._store is not first, "the store was never copied"
    assert sorted(store.objects(WARD, BEDS)) == held_then


class _Lengths:
    """A pyoxigraph store that counts the times its quads are counted (``len``: a pass over
    every quad it holds)."""

    def __init__(self, inner: ox.Store) -> None:
        self.inner, self.counted = inner, 0

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def __len__(self) -> int:
        self.counted += 1
        return len(self.inner)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.inner)

    def __contains__(self, quad: object) -> bool:
        return quad in self.inner


def test_a_step_does_not_count_the_world_to_learn_whether_a_copy_is_due(
    small_floors: None, tmp_path
) -> None:
    """Whether a copy pays is judged against the quads the store holds. They were counted by a
    pass over the store inside the step that first passed a floor, and again after each copy
    (3 s at 3,000,000 quads): they are now kept from the file loaded, and through a copy."""
    (tmp_path / "world.nt").write_text(
        "".join(f"<{EX}bed{n}> <{RDF.type}> <{KIND}> .\n" for n in range(300))
    )
    store = open_store("oxigraph")
    store.load_file(tmp_path / "world.nt")
    store.apply(Change(add=[(WARD, BEDS, Literal(0), G)]))
    store._store = counting = _Lengths(store._store)
    replace_beds(store, 300)
    assert store._store is not counting, "the store was never copied"
    store._store = again = _Lengths(store._store)
    replace_beds(store, 300, start=300)
    assert (counting.counted, again.counted) == (0, 0)  # a pass before the first, one after
    assert store._held() == len(store._store) == 301


class _Listings(_Lengths):
    """A pyoxigraph store that counts the times the list of its graph names is read, and
    the times its quads are walked (a copy's pass)."""

    def __init__(self, inner: ox.Store) -> None:
        super().__init__(inner)
        self.listed = self.walked = 0

    def named_graphs(self):  # type: ignore[no-untyped-def]
        self.listed += 1
        return self.inner.named_graphs()

    def __iter__(self):  # type: ignore[no-untyped-def]
        self.walked += 1
        return iter(self.inner)


def graph_names(store) -> set[str]:
    return {g.value for g in store._store.named_graphs()}


def test_a_copy_lists_the_graph_names_only_when_a_graph_is_held_empty(small_floors: None) -> None:
    """Each copy began by reading the list of the store's graph names whole, inside the commit
    that made it due (~0.25-0.4 s at 300,000 graphs; a pharmacy run names two). A name comes
    with its graph's quads; the names are now counted (inside Oxigraph), and listed only when
    the counts say the store held an empty graph, which the copy then holds too: once, when
    the copy holds the rest (a world that took one catalog call holds an empty graph, and the
    copy was begun again, its quads all taken twice)."""
    store = open_store("oxigraph")
    beds = [(URIRef(f"{EX}bed{n}"), RDF.type, KIND, URIRef(f"{EX}g{n}")) for n in range(300)]
    store.apply(Change(add=[*beds, (WARD, BEDS, Literal(0), G)]))
    names = graph_names(store)
    store._store = listing = _Listings(store._store)
    replace_beds(store, 400)
    assert store._store is not listing, "the store was never copied"
    assert listing.listed == 0
    assert graph_names(store) == names and len(names) == 301
    store.apply(Change(remove=[beds[0]]))  # g0 held empty
    store._store = listing = _Listings(store._store)
    replace_beds(store, 400, start=400)
    assert store._store is not listing, "the store was never copied"
    assert listing.listed == 1  # once, when the copy held the rest
    assert listing.walked == 1  # the quads taken once: the copy was not begun again
    assert graph_names(store) == names
    assert list(store.objects(WARD, BEDS)) == [Literal(800)]


def _copying_with_an_empty_graph():  # type: ignore[no-untyped-def]
    """A store of 300 one-quad graphs, ``g0`` held empty, with a copy under way; and the
    ward's free-bed count, as :func:`replace_beds` left it."""
    store = open_store("oxigraph")
    beds = [(URIRef(f"{EX}bed{n}"), RDF.type, KIND, URIRef(f"{EX}g{n}")) for n in range(300)]
    store.apply(Change(add=[*beds, (WARD, BEDS, Literal(0), G)]))
    store.apply(Change(remove=[beds[0]]))  # g0 held empty
    n = 0
    while store._behind is None:  # until a copy is under way
        replace_beds(store, 1, start=n)
        n += 1
    return store, n


def test_an_update_the_copy_under_way_refuses_drops_the_copy_and_lands(small_floors) -> None:
    """An empty graph reaches the copy only when it holds the rest, so a ``DROP GRAPH`` of
    one replayed onto it meanwhile was refused there, and the commit that replayed it raised
    though it had landed. The copy is now dropped, and begun again when due."""
    store, n = _copying_with_an_empty_graph()
    store.update(f"DROP GRAPH <{EX}g0>")
    assert f"{EX}g0" not in graph_names(store)
    replace_beds(store, 400, start=n)  # the commit that replays the update onto the copy too
    assert list(store.objects(WARD, BEDS)) == [Literal(n + 400)]
    assert len(graph_names(store)) == 300


def test_an_update_reading_which_graphs_there_are_mid_copy_writes_into_the_empty_ones(
        small_floors) -> None:
    """An empty graph reached the copy only once it held the rest, so an update replayed
    onto it meanwhile that reads which graphs there are (``GRAPH ?g {}``) wrote nothing into
    the empty one there, and that write was lost when the copy took the store's place. The
    copy now holds every graph the store names before such an update runs."""
    store, n = _copying_with_an_empty_graph()
    first = store._store
    store.update(f"INSERT {{ GRAPH ?g {{ <{WARD}> <{EX}seen> true }} }} WHERE {{ GRAPH ?g {{}} }}")
    replace_beds(store, 400, start=n)
    assert store._store is not first, "the store was never copied"
    seen = URIRef(f"{EX}seen")
    assert (WARD, seen, Literal(True), URIRef(f"{EX}g0")) in set(store.quads())
    assert sum(1 for q in store.quads() if q[1] == seen) == 301  # every graph, g0 too
