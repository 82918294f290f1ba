"""Two lends of the same ``--world`` data on a store processes share (``sparql:``), one landing
between another command's read of which lends hold that data and that command's commit.

A command that ends a lend reads which lends hold what it lent, then commits: a call that
completed drops every lend's copy of what it read (the data stays with its effects), a
take-back leaves what another lend still holds. A lend that came to share the data in between
kept a copy neither had read, so its take-back later removed what the completed call had read,
or the other lend's take-back removed what its own call was still reading. And a lend that
read the data as another's, then landed after that lend had ended, kept as lent what was the
store's own. Each is now refused at its commit and read again (``_lends.Sharing``).

Driven in one process, two handles on a real ``oxigraph serve``, each moment placed by the test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import EX, PREFIXES, ward_store
from in_process import horismos_in_process
from oxigraph_server import OxigraphServer
from test_tools_store_lanes import LENT, project, types_of

import horismos._cli_lent_world as lent_world
import horismos._lends as lends
from horismos import World
from horismos._cli_lent_world import LentWorld
from horismos._stores import Change, Conflict


@pytest.fixture
def store(tmp_path: Path, shared_ward: list[str]) -> list[str]:
    """``--store sparql:…`` of a real server holding the ward, and ``more.ttl`` beside, which
    brings :p9 and :w9."""
    (tmp_path / "more.ttl").write_text(LENT, encoding="utf-8")
    return shared_ward


@pytest.fixture
def lender(tmp_path: Path, store: list[str]) -> Iterator[Callable[[], LentWorld]]:
    """A command's lend of ``more.ttl`` (not yet made), on its own handle on the store."""
    opened: list[World] = []

    def make() -> LentWorld:
        opened.append(World.open(store[1]))
        return LentWorld(opened[-1])

    yield make
    for world in opened:
        world.store.close()


def lend(lent: LentWorld, tmp_path: Path, store: list[str]) -> None:
    lent.lend([str(tmp_path / "more.ttl")], store[1], "a call")


def after_bs_first_read(monkeypatch: pytest.MonkeyPatch, act: Callable[[], None]) -> list[bool]:
    """Run ``act`` once, right after a lend's first read of which lends hold its data (B's
    lend: a completion's or a take-back's read names its own lend, ``but``, and passes);
    the list says whether it ran."""
    real = lent_world.lent_elsewhere
    done: list[bool] = []

    def read_then_act(*args: Any, **kwargs: Any) -> Any:
        found = real(*args, **kwargs)
        if kwargs.get("but") is None and not done:
            done.append(True)
            act()
        return found

    monkeypatch.setattr(lent_world, "lent_elsewhere", read_then_act)
    return done


def lent_data_stored(store: list[str]) -> bool:
    return EX.Patient in types_of(store, EX.p9) and EX.Ward in types_of(store, EX.w9)


def test_a_lend_landing_as_a_call_completes_leaves_what_the_call_read(
        tmp_path: Path, store: list[str], lender: Callable[[], LentWorld]) -> None:
    """A's call completes: it reads which lends hold :p9 and :w9 (only its own), and B's lend
    of them lands before A commits. A's commit is refused and reads again, so it drops B's
    copies too: B's take-back leaves what A read."""
    a, b = lender(), lender()
    lend(a, tmp_path, store)
    read = a.record

    def read_then_b_lends() -> Any:
        change = read()
        if not b.count():
            lend(b, tmp_path, store)
            assert b.count() == 3  # found stored through A's lend
        return change

    a.record = read_then_b_lends  # type: ignore[method-assign]
    a.kept()
    assert b.count() == 3, "B's lend never came between"
    b.take_back()
    assert lent_data_stored(store)


def test_a_lend_that_read_the_data_as_anothers_and_landed_after_it_ended_lends_nothing(
        tmp_path: Path, store: list[str], lender: Callable[[], LentWorld],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """B reads :p9 and :w9 as stored through A's lend; A's call completes, the data now the
    store's own; then B's lend would land, holding it as lent, and B's take-back would remove
    it from under A's effects. B's commit is refused and reads again: nothing to lend."""
    a, b = lender(), lender()
    lend(a, tmp_path, store)
    completed = after_bs_first_read(monkeypatch, a.kept)
    lend(b, tmp_path, store)
    assert completed and b.count() == 0
    assert b.take_back() == 0 and lent_data_stored(store)


def test_a_lend_that_read_the_data_as_missing_and_landed_after_anothers_call_lends_nothing(
        tmp_path: Path, store: list[str], lender: Callable[[], LentWorld],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """B reads :p9 and :w9 as missing; A lends them and A's call completes, the data now the
    store's own; then B's lend would land, holding it as its own lend, and B's take-back would
    remove it from under A's effects. B's commit requires what it adds still absent: refused,
    it reads again and has nothing to lend."""
    a, b = lender(), lender()

    def a_lends_and_completes() -> None:
        lend(a, tmp_path, store)
        a.kept()

    completed = after_bs_first_read(monkeypatch, a_lends_and_completes)
    lend(b, tmp_path, store)
    assert completed and b.count() == 0
    assert b.take_back() == 0 and lent_data_stored(store)


def test_a_lend_landing_as_another_is_taken_back_keeps_what_it_lent(
        tmp_path: Path, store: list[str], lender: Callable[[], LentWorld],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A's call failed: its take-back reads that no other lend holds :p9 and :w9, and B's lend
    of them lands before A commits. A's take-back is refused and reads again, so it leaves
    them for B's call; B's take-back, the last, removes them."""
    a, b = lender(), lender()
    lend(a, tmp_path, store)
    real = lends.lent_elsewhere

    def read_then_b_lends(*args: Any, **kwargs: Any) -> Any:
        found = real(*args, **kwargs)
        if not b.count():
            lend(b, tmp_path, store)
        return found

    monkeypatch.setattr(lends, "lent_elsewhere", read_then_b_lends)
    assert a.take_back() == 0
    assert lent_data_stored(store)
    monkeypatch.setattr(lends, "lent_elsewhere", real)
    assert b.take_back() == 3  # :p9 a :Patient, :w9 a :Ward, :w9 :capacity 4
    assert EX.Patient not in types_of(store, EX.p9)


def test_a_lend_landing_as_a_tools_call_completes_leaves_what_the_call_read(
        tmp_path: Path, store: list[str], lender: Callable[[], LentWorld],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """As the first test, through ``tools call --world`` with its approval: the call's last
    commit (its approval's use, its lend's record) is refused when B's lend lands after its
    read, and reads again; the store's digest still checks."""
    defs = project(tmp_path)
    args = ("--args", '{"patient": ":p9", "ward": ":w9"}')
    issued = horismos_in_process(tmp_path, "tools", "approve", "c.transfer", *defs, *store, *args)
    assert issued.returncode == 0, issued.stderr
    b = lender()
    read = LentWorld.record

    def read_then_b_lends(self: LentWorld) -> Any:
        change = read(self)
        if self is not b and not b.count():
            lend(b, tmp_path, store)
        return change

    monkeypatch.setattr(LentWorld, "record", read_then_b_lends)
    done = horismos_in_process(tmp_path, "tools", "call", "c.transfer", *defs, *store,
                               "--world", "more.ttl", *args, "--approval", issued.stdout.strip())
    assert done.returncode == 0 and b.count() == 3, done.stdout + done.stderr
    b.take_back()
    assert lent_data_stored(store)
    checked = horismos_in_process(tmp_path, "digest", *store, "--check")
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_call_whose_every_read_meets_a_new_lend_still_lands_its_approvals_use(
        tmp_path: Path, store: list[str], lender: Callable[[], LentWorld],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A lend lands after each of the completed call's reads: the last read lands unguarded,
    for the tool has acted, and its approval, used, answers a second call with it no more."""
    defs = project(tmp_path)
    args = ("--args", '{"patient": ":p9", "ward": ":w9"}')
    issued = horismos_in_process(tmp_path, "tools", "approve", "c.transfer", *defs, *store, *args)
    assert issued.returncode == 0, issued.stderr
    read = LentWorld.record
    others: list[LentWorld] = []

    def read_then_another_lends(self: LentWorld) -> Any:
        change = read(self)
        if self not in others:
            others.append(lender())
            lend(others[-1], tmp_path, store)
        return change

    monkeypatch.setattr(LentWorld, "record", read_then_another_lends)
    call = ("tools", "call", "c.transfer", *defs, *store, "--world", "more.ttl", *args,
            "--approval", issued.stdout.strip())
    done = horismos_in_process(tmp_path, *call)
    assert done.returncode == 0 and len(others) == 5, done.stdout + done.stderr
    monkeypatch.setattr(LentWorld, "record", read)
    again = horismos_in_process(tmp_path, *call)
    assert again.returncode == 2 and "refused (approval_used)" in again.stdout, again.stdout
    assert (tmp_path / "calls.log").read_text() == str(EX.p9) + "\n"  # called once


def test_a_take_back_that_cannot_land_tells_the_calls_outcome_and_leaves_it_to_the_next_command(
        tmp_path: Path, store: list[str], lender: Callable[[], LentWorld],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A refused call's take-back meets a new lend of the same data after each of its reads,
    and gives up: the call's refusal is still what the command says and exits with, a note
    says the data stays lent for now, and the next command that opens the store for writing
    takes it back. The take-back's Conflict, raised inside the command's ``finally``, was what
    the user saw instead of the refusal."""
    defs = project(tmp_path)
    read = lends.Sharing.read
    others: list[LentWorld] = []

    def read_then_another_lends(
            cls: type[lends.Sharing], s: Any, of: list[Any]) -> lends.Sharing:
        sharing = read(s, of)
        if len(others) < lends.LEND_ATTEMPTS and not lending:
            lending.append(True)
            others.append(lender())
            lend(others[-1], tmp_path, store)
            lending.clear()
        return sharing

    lending: list[bool] = []
    monkeypatch.setattr(lends.Sharing, "read", classmethod(read_then_another_lends))
    call = ("tools", "call", "c.transfer", *defs, *store, "--world", "more.ttl",
            "--args", '{"patient": ":p9", "ward": ":w9"}')
    refused = horismos_in_process(tmp_path, *call)
    assert refused.returncode == 5, refused.stdout + refused.stderr
    assert "refused (approval)" in refused.stdout, refused.stdout + refused.stderr
    assert len(others) == lends.LEND_ATTEMPTS
    assert "could not be taken back" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr
    monkeypatch.setattr(lends.Sharing, "read", read)
    for other in others:
        other.take_back()  # each leaves the data: the refused call's lend still holds it
    assert lent_data_stored(store)
    issued = horismos_in_process(tmp_path, "tools", "approve", "c.transfer", *defs, *store,
                                 "--args", '{"patient": ":p1", "ward": ":w1"}')
    assert issued.returncode == 0, issued.stderr
    assert "took back 3 quads" in issued.stderr, issued.stderr
    assert not lent_data_stored(store)
    checked = horismos_in_process(tmp_path, "digest", *store, "--check")
    assert checked.returncode == 0, checked.stdout + checked.stderr


def lends_recorded(store: list[str]) -> int:
    """How many quads the store's lends' graph holds: none once every lend has ended."""
    with World.open(store[1], create=False) as world:
        return len(world.store.select(
            f"SELECT * WHERE {{ GRAPH <{lends.LENDS}> {{ ?s ?p ?o }} }}", {}, {}))


def test_lends_sharing_other_data_do_not_hold_back_a_completion(
        tmp_path: Path, store: list[str], lender: Callable[[], LentWorld]) -> None:
    """A's call completes while another lend comes to share data A never lent (``other.ttl``,
    lent by V first) after A's read of which lends hold its own. One count for the whole store
    refused A's commit for it, and a completion that met such a lend at each of its reads
    landed its last unguarded, the window open to a lend of its own data. Counted per lend,
    A's commit lands at its first read; once every lend has ended, their counts are gone with
    their records."""
    other = tmp_path / "other.ttl"
    other.write_text(PREFIXES + ":p8 a :Patient .\n", encoding="utf-8")
    a, v, sharer = lender(), lender(), lender()
    lend(a, tmp_path, store)
    v.lend([str(other)], store[1], "a call")
    read = a.record
    reads: list[Any] = []

    def read_then_another_shares() -> Any:
        reads.append(read())
        if not sharer.count():
            sharer.lend([str(other)], store[1], "a call")
            assert sharer.count() == 1  # found stored through V's lend: shared with it
        return reads[-1]

    a.record = read_then_another_shares  # type: ignore[method-assign]
    a.kept()
    assert sharer.count() == 1, "the other lend never came between"
    assert len(reads) == 1  # A read which lends hold its data once
    assert lent_data_stored(store)
    assert v.take_back() == 0  # :p8 left to the lend sharing it
    assert sharer.take_back() == 1
    assert types_of(store, EX.p8) == set() and lent_data_stored(store)
    assert lends_recorded(store) == 0


def test_a_lend_sharing_data_another_lend_came_to_share_meanwhile_counts_on_it_too(
        tmp_path: Path, store: list[str], lender: Callable[[], LentWorld],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """C reads the data as held by A's lend only; B lends it too (counted on A) and B's
    completion reads which lends hold it; then C lands, counting on A alone. B's completion
    landed unrefused, missed C's copies, and C's take-back removed what B's completed call
    had read. C reads the holders again after their counts, and counts on B too: B's
    completion, as read before C, is refused, and read again it drops C's copies."""
    a, b, c = lender(), lender(), lender()
    lend(a, tmp_path, store)
    read: list[Any] = []

    def b_lends_and_reads() -> None:
        lend(b, tmp_path, store)
        read.append(b.record())  # B's completion reads, before C lands

    after_bs_first_read(monkeypatch, b_lends_and_reads)  # C's first read
    lend(c, tmp_path, store)
    assert read and b.count() == 3 and c.count() == 3
    (stale,) = read
    with pytest.raises(Conflict):
        b.world.commit(Change(remove=stale.remove, expect=stale.expect, absent=stale.absent))
    b.kept()  # read again: C's copies go with B's record
    assert c.take_back() == 0 and a.take_back() == 0
    assert lent_data_stored(store), "C's take-back removed what B's completed call read"


def test_a_take_back_on_a_store_that_stopped_answering_says_so_and_raises_nothing(
        tmp_path: Path) -> None:
    """The take-back runs in a command's ``finally``: a store gone (the server down) made it
    raise, in place of what the command did, once for the take-back and once more for the
    lease it gives back. Both are told in its note; the record and the lease stay, for the
    next command to take back once the lease has run out."""
    server = OxigraphServer(tmp_path / "db")
    try:
        store = ward_store(tmp_path, server.store)
        (tmp_path / "more.ttl").write_text(LENT, encoding="utf-8")
        with World.open(store[1]) as world:
            lent = LentWorld(world)
            lend(lent, tmp_path, store)
            assert lent.count() == 3
            server.stop()
            assert lent.take_back() == 0
            note = lent.left_note() or ""
            assert "could not be taken back" in note, note
            assert "the lease of the lend could not be given back" in note, note
        server.start()
        assert lent_data_stored(store)  # still lent: the record stays
    finally:
        server.stop()


def test_a_calls_last_commit_keeps_what_it_expects_itself() -> None:
    """A completed call's last commit through the lend (``tools call --world``) dropped what
    the call's own change expected (the projections an adapter commit replaces, as read), so it
    landed over a projection another writer had replaced meanwhile."""
    world = World.open("memory")
    read = (EX.p9, EX.status, EX.active, EX.g)  # what the call read, and is gone since
    landed = (EX.p9, EX.status, EX.completed, EX.g)
    with pytest.raises(Conflict):
        LentWorld(world).land_with(Change(add=[landed], expect=(read,)))
    assert not list(world.store.objects(EX.p9, EX.status))
