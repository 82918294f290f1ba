"""The world digest: kept by every store as it changes, equal to a recomputation from scratch.

A set-homomorphic hash (LtHash16) is only as good as the deltas fed to it: these tests drive
random loads, commits (removals, duplicates, quads already stored, guarded commits that lose
their race) and reopenings through every store kind, the SPARQL one on a real ``oxigraph
serve``, and compare the kept digest with one recomputed from what the store holds.
"""

from __future__ import annotations

import random
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import EX as CLINIC
from conftest import TRIAGE, WARD
from forked import horismos_forked
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rdflib import XSD, BNode, Literal, URIRef

from horismos import World
from horismos._digest import ZERO, Digest
from horismos._stores import Change, Conflict
from horismos._stores.base import nquad_line
from horismos._stores.ox_terms import canonical
from horismos._world import INSTANCES

EX = "urn:test:"
G = URIRef(EX + "g")
S = [URIRef(f"{EX}s{i}") for i in range(4)]
P = [URIRef(f"{EX}p{i}") for i in range(2)]
OBJECTS = [URIRef(f"{EX}o0"), Literal("x"), Literal("hallo", lang="DE"),
     Literal("1.50", datatype=XSD.decimal), Literal("1.5", datatype=XSD.decimal),  # one value
     Literal("071", datatype=XSD.integer), Literal('a "quoted"\nline')]
GRAPHS = [None, G, INSTANCES]
UNIVERSE = [(s, p, o, g) for s in S for p in P for o in OBJECTS for g in GRAPHS]

quad = st.sampled_from(UNIVERSE)
file_text = st.lists(st.sampled_from(range(len(UNIVERSE))), max_size=8).map(
    lambda picks: "".join(nquad_line(*UNIVERSE[i]) + "\n" for i in picks))
operation = st.one_of(
    st.tuples(st.just("load"), file_text, st.booleans()),
    st.tuples(st.just("commit"), st.lists(quad, max_size=6), st.lists(quad, max_size=4)),
    st.tuples(st.just("guarded"), st.integers(0, 2**16), st.booleans()),
    st.tuples(st.just("reopen")),
)

KINDS = ["memory", "oxigraph", "oxigraph:PATH", "sparql"]


class Opened:
    """A world of one kind that can be closed and opened again on the same data."""

    def __init__(self, kind: str, pool: object | None, dir: Path) -> None:
        self.kind = kind
        self.name = {"oxigraph:PATH": f"oxigraph:{dir}/world",
                     "sparql": pool.fresh() if pool else ""}.get(kind, kind)  # type: ignore[attr-defined]
        self.world = World.open(self.name)

    def reopen(self) -> None:
        if self.kind in ("oxigraph:PATH", "sparql"):
            self.world.close()
            self.world = World.open(self.name)


def stored(world: World) -> set[tuple]:
    return set(world.store.quads())


def check(world: World) -> None:
    kept, recomputed = world.store.check_digest()
    assert kept == recomputed == world.store.digest(), world.store.name
    assert world.digest() == recomputed.fingerprint


def play(world_of: Opened, ops: list[tuple], tmp: Path) -> None:
    for n, op in enumerate(ops):
        world = world_of.world
        if op[0] == "load":
            _, text, blank = op
            if blank:  # a blank node, skolemised by the file's content
                text += f'_:b <{EX}p0> "blank" .\n<{EX}s0> <{EX}p1> _:b .\n'
            path = tmp / f"load{n}.nq"
            path.write_text(text, encoding="utf-8")
            world.load(path)
        elif op[0] == "commit":
            _, add, remove = op
            world.commit(Change(add=add, remove=remove))
        elif op[0] == "guarded":  # as the runner commits: removes what it read, adds new quads
            _, seed, holds = op
            rng = random.Random(seed)
            have = sorted(stored(world), key=str)
            fresh = [q for q in dict.fromkeys(canonical(UNIVERSE)) if q not in stored(world)]
            guard = (S[0], P[1], Literal(f"guard {n}"), INSTANCES)
            if holds:
                world.commit(Change(add=[guard]))
            before = world.store.digest()
            kept = rng.sample(have, min(1, len(have)))  # in both: the state a step keeps
            change = Change(add=rng.sample(fresh, min(3, len(fresh))) + kept,
                            remove=rng.sample(have, min(2, len(have))) + kept, expect=(guard,))
            if holds:
                world.commit(change)
            else:
                with pytest.raises(Conflict):
                    world.commit(change)
                assert world.store.digest() == before  # nothing landed, nothing counted
        else:
            world_of.reopen()
        check(world_of.world)


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> Iterator[tuple[str, object | None]]:
    pool = request.getfixturevalue("oxigraph_pool") if request.param == "sparql" else None
    yield request.param, pool


@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(ops=st.lists(operation, min_size=1, max_size=8))
def test_the_kept_digest_equals_a_recomputation_after_any_sequence_of_writes(
        kind, ops, tmp_path_factory):
    name, pool = kind
    # pytest's own directory, removed by a later session: never under a store still open
    opened = Opened(name, pool, tmp_path_factory.mktemp("digest"))
    try:
        with tempfile.TemporaryDirectory() as tmp:
            play(opened, ops, Path(tmp))
        # the same content on another kind of store, added in another order: the same digest
        content = list(stored(opened.world))
        random.Random(len(content)).shuffle(content)
        other = World.open("memory" if name != "memory" else "oxigraph")
        for q in content:
            other.commit(Change(add=[q]))
        assert other.digest() == opened.world.digest()
    finally:
        opened.world.close()
        if pool is not None:
            pool.release()  # type: ignore[attr-defined]


def test_runs_keep_the_digest_true_on_every_store(build, recorder):
    """Real runs — instances created, steps committed under their version guard, a step that
    blocks — leave a kept digest equal to the recomputed one; the trace names it on a store
    only this process writes."""
    agent, world = build(TRIAGE, tools={"assign": recorder.tool("assign", {"ref": "R-7"})})

    run = agent.run(world, all=True)

    check(world)
    if world.store.shared:  # others write meanwhile: the trace names no world digest
        assert run.trace.events[-1]["world_digest"] is None
        return
    assert run.trace.events[-1]["world_digest"] == world.digest()
    assert run.trace.events[0]["world_digest"] != world.digest()


def test_a_digest_is_a_sum_of_its_quads_hashes_in_any_order():
    lines = [nquad_line(*q) for q in dict.fromkeys(canonical(UNIVERSE))]
    whole = Digest.of_lines(lines)
    assert whole == Digest.of_lines(reversed(lines)) == sum(
        (Digest.of_lines([line]) for line in lines), ZERO)
    assert whole - Digest.of_lines(lines[:5]) == Digest.of_lines(lines[5:])
    assert Digest.from_text(whole.to_text()) == whole and len(whole.to_text()) == 2732
    assert whole.fingerprint.startswith("lthash16:") and len(whole.fingerprint) == 9 + 64
    assert not ZERO and whole and whole != Digest.of_lines(lines[1:])


def test_a_commit_returns_the_delta_it_made_counting_only_real_changes(tmp_path):
    world = World.open("oxigraph")
    a, b = (S[0], P[0], Literal("a"), None), (S[0], P[0], Literal("b"), None)
    assert world.commit(Change(add=[a, a])) == Digest.of_lines([nquad_line(*a)])
    assert world.commit(Change(add=[a])) == ZERO  # already stored: nothing to count
    assert world.commit(Change(remove=[b])) == ZERO  # never stored
    assert world.commit(Change(add=[b], remove=[a])) == (
        Digest.of_lines([nquad_line(*b)]) - Digest.of_lines([nquad_line(*a)]))
    check(world)


def test_the_same_file_loaded_twice_on_any_store_gives_one_digest(tmp_path, oxigraph_pool):
    path = tmp_path / "w.ttl"
    path.write_text(f"@prefix : <{EX}> .\n:a :p [ :q [ :r 1 ] ] ; :s ( 1 2 ) .\n",
                    encoding="utf-8")
    digests = set()
    for name in ("memory", "oxigraph", f"oxigraph:{tmp_path / 'db'}", oxigraph_pool.fresh()):
        with World.open(name) as world:
            world.load(path)
            once = world.digest()
            world.load(path)  # the same blank nodes: the same IRIs, nothing new
            assert world.digest() == once
            assert not any(isinstance(t, BNode) for q in world.store.quads() for t in q)
            digests.add(once)
    oxigraph_pool.release()
    assert len(digests) == 1


def test_an_on_disk_digest_survives_reopening_and_a_lost_digest_is_recomputed(tmp_path):
    name = f"oxigraph:{tmp_path / 'db'}"
    with World.open(name) as world:
        world.commit(Change(add=[(S[0], P[0], Literal("kept"), None)]))
        kept = world.digest()
    with World.open(name) as world:
        assert world.digest() == kept
        # as after a crash (runtime_only: a user's update would have the digest written again)
        world.store.update("CLEAR GRAPH <urn:horismos:runtime:digest>", runtime_only=True)
    with World.open(name) as world:
        assert world.digest() == kept


def test_a_process_that_dies_mid_run_leaves_no_stale_digest_on_disk(tmp_path):
    name = f"oxigraph:{tmp_path / 'db'}"
    with World.open(name) as world:  # a digest written on close
        world.commit(Change(add=[(S[0], P[0], Literal("before"), None)]))
    script = (f"import os\nfrom rdflib import Literal, URIRef\nfrom horismos import World\n"
              f"from horismos._stores import Change\nw = World.open({name!r})\n"
              f"w.commit(Change(add=[(URIRef('{S[1]}'), URIRef('{P[0]}'), Literal('after'), "
              f"None)]))\nw.store._store.flush()\nos._exit(0)\n")  # dies without closing
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
    with World.open(name) as world:
        assert (S[1], P[0], Literal("after"), None) in stored(world)
        check(world)


def test_blank_node_worlds_load_and_digest_in_linear_time(tmp_path):
    """Issue 13 item 9: 2,000 blank nodes took 134 s in canonical relabelling, a 10,000-deep
    chain never finished; both are now one pass (no timing asserted: it simply finishes)."""
    many = tmp_path / "many.ttl"
    many.write_text(f"@prefix : <{EX}> .\n" + "".join(
        f':n{i} :has [ :label "{i % 7}" ; :next [ :value {i % 3} ] ] .\n' for i in range(1000)),
        encoding="utf-8")
    deep = tmp_path / "deep.ttl"
    deep.write_text(f"@prefix : <{EX}> .\n" + "".join(
        f"_:c{i} :next _:c{i + 1} .\n" for i in range(10_000)), encoding="utf-8")
    for path, count in ((many, 4000), (deep, 10_000)):
        world = World.from_files(path)
        assert len(list(world.store.quads())) == count
        check(world)
        assert World.from_snapshot(world.snapshot()).digest() == world.digest()


def test_a_one_step_run_in_a_world_of_2000_blank_nodes_finishes(build, recorder):
    """Issue 13 item 9: this run took 134 s, all of it relabelling blank nodes for digests."""
    blanks = "".join(f':p1 :note [ :text "note {i}" ; :by [ :name "n{i % 5}" ] ] .\n'
                     for i in range(1000))
    agent, world = build(TRIAGE, WARD + blanks,
                         tools={"assign": recorder.tool("assign", {"ref": "R-7"})})

    run = agent.run(world, focus=str(CLINIC.p1))

    assert run.status == "completed"
    check(world)


def test_horismos_digest_prints_checks_and_folds(tmp_path, oxigraph_pool):
    store = oxigraph_pool.fresh()
    world = World.open(store)
    world.commit(Change(add=[(S[0], P[0], Literal("one"), None)]))
    world.commit(Change(add=[(S[1], P[0], Literal("two"), None)]))

    def digest(*args: str) -> subprocess.CompletedProcess[str]:
        return horismos_forked(".", "digest", "--store", store, *args, timeout=60)

    shown = digest()
    assert shown.returncode == 0 and shown.stdout.strip() == world.digest()
    assert digest("--check").returncode == 0
    folded = digest("--fold")
    assert folded.returncode == 0 and world.digest() == shown.stdout.strip()
    # another writer, not through Horismos (a SPARQL client of the server): found, named,
    # exit 1, no traceback
    httpx.post(store.removeprefix("sparql:") + "/update",
               content=f'INSERT DATA {{ <{EX}x> <{EX}p> "sneaked in" }}'.encode(),
               headers={"Content-Type": "application/sparql-update"}).raise_for_status()
    # and a user's updates through Horismos after it: neither counts it as Horismos's (a
    # DELETE/INSERT WHERE was followed by a fold of the store as it stood)
    world.store.update(f'DELETE {{ ?s <{P[0]}> "two" }} INSERT {{ ?s <{P[0]}> "2" }} '
                       f'WHERE {{ ?s <{P[0]}> "two" }}')
    world.store.update(f'INSERT DATA {{ <{EX}y> <{EX}p> "three" }}')
    bad = digest("--check")
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert "does not match" in bad.stderr and "--rebase" in bad.stderr
    assert digest("--fold").returncode == 1  # folds only a digest that checks
    assert digest("--rebase").returncode == 0 and digest("--check").returncode == 0
    world.close()
    oxigraph_pool.release()
    unknown = horismos_forked(".", "digest", "--store", "nope", timeout=60)
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr


def test_horismos_digest_of_no_world_is_a_usage_error_saying_what_to_give(tmp_path):
    """Without files, an in-memory store holds nothing: its digest named no world, yet it was
    printed, exit 0, as if it were the digest of one."""
    (tmp_path / "w.ttl").write_text("<urn:x:a> <urn:x:b> <urn:x:c> .\n", encoding="utf-8")

    def digest(*args: str) -> subprocess.CompletedProcess[str]:
        return horismos_forked(tmp_path, "digest", *args, timeout=60)

    for store in ([], ["--store", "memory"]):
        empty = digest(*store)
        assert (empty.returncode, empty.stdout) == (2, ""), empty.stdout + empty.stderr
        assert "starts empty" in empty.stderr and "horismos digest world.ttl" in empty.stderr
        assert "Traceback" not in empty.stderr
    of_file = digest("w.ttl")
    assert of_file.returncode == 0 and of_file.stdout.startswith("lthash16:")


def test_two_folds_at_once_keep_the_digest_true(oxigraph_pool, monkeypatch):
    """Two `horismos digest --fold` (or a fold and a load into an empty world) at the same
    moment: each read the same deltas and replaced them by a base value of its own, so the
    kept digest counted the world twice. Both read here before either writes. A fold that
    finds its deltas gone since (one fold after another, each having read a commit the other
    did not see) changes nothing, and the commit's delta stays."""
    import threading

    from horismos._stores.sparql import SparqlStore

    store = oxigraph_pool.fresh()
    world = World.open(store)
    for i in range(3):
        world.commit(Change(add=[(S[i], P[0], Literal(f"value {i}"), None)]))
    read_all = SparqlStore._read_all
    both_read = threading.Barrier(2, timeout=30)

    def read_then_wait(self):
        seen = read_all(self)
        both_read.wait()
        return seen

    monkeypatch.setattr(SparqlStore, "_read_all", read_then_wait)
    worlds = [World.open(store) for _ in range(2)]
    folds = [threading.Thread(target=w.store.rebase_digest, kwargs={"only_if_equal": True})
             for w in worlds]
    for t in folds:
        t.start()
    for t in folds:
        t.join(timeout=60)
    monkeypatch.setattr(SparqlStore, "_read_all", read_all)

    kept, recomputed = world.store.check_digest()
    assert kept == recomputed

    # one after the other, the second having read a commit the first did not see: the first
    # lands, the second (its deltas gone) changes nothing, the commit's delta stays counted
    first = worlds[0].store._read_all()
    world.commit(Change(add=[(S[3], P[1], Literal("late"), None)]))
    second = worlds[1].store._read_all()
    for w, seen in ((worlds[0], first), (worlds[1], second)):
        monkeypatch.setattr(SparqlStore, "_read_all", lambda self, seen=seen: seen)
        w.store.rebase_digest()
    monkeypatch.setattr(SparqlStore, "_read_all", read_all)
    kept, recomputed = world.store.check_digest()
    assert kept == recomputed
    for w in (world, *worlds):
        w.close()
    oxigraph_pool.release()


@settings(max_examples=60, deadline=None)
@given(
    plus=st.lists(st.text(max_size=30), max_size=20),
    minus=st.lists(st.text(max_size=30), max_size=20),
)
def test_a_sum_by_integers_is_numpys_to_the_bit(plus, minus):
    """A process that has not imported numpy sums a small change, and adds, subtracts or
    negates states, with Python's integers: the very state numpy's sum gives, wrapping at
    2^16 in each lane as numpy's uint16 does, whatever the lines and however many."""
    import numpy as np

    from horismos import _digest

    def lanes(lines: list[str]) -> np.ndarray:
        return np.add.reduce(_digest._expanded(lines), axis=0, dtype="<u2") if lines else 0

    expected = (np.zeros(1024, dtype="<u2") + lanes(plus) - lanes(minus)).astype("<u2").tobytes()
    ups, downs = _digest._expansions(plus), _digest._expansions(minus)
    assert _digest._summed(ups, downs) == expected
    assert _digest._summed((), (expected,)) == (-np.frombuffer(expected, "<u2")).tobytes()
    assert _digest._summed((expected, *downs), ups) == bytes(2048)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_digest, "_by_integers", lambda lines: True)
        assert Digest.of_change(plus, minus).state == expected
        assert Digest.of_lines(plus) == Digest(_digest._summed(ups))


def test_a_one_focus_run_never_imports_numpy(tmp_path):
    """A command run once per event (the README's run, its world loaded from a file) sums
    its world's digest and its commits without numpy: ~60 ms of every such process."""
    code = (
        "import sys\n"
        "from horismos._cli import main\n"
        f"root = {str(Path(__file__).parent.parent)!r}\n"
        "rc = main(['run', f'{root}/workflows/triage.ttl', f'{root}/ontologies/ehr.ttl',\n"
        "  '--world', f'{root}/examples/triage/world.ttl', '--tools',\n"
        "  f'{root}/examples/triage/ehr_client.py', '--focus', ':patient42'])\n"
        "print('numpy' in sys.modules, rc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, check=True).stdout
    assert out.splitlines()[-1] == "False 0"
