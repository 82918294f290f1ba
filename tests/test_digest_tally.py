"""A store's digest folded in batches (``Tally``) and a commit's delta hashed when read
(``Digest.of_change_later``) stand in for the eager sums they replaced: held equal to them."""

from __future__ import annotations

import copy
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from horismos._digest import _FOLD_AT, _SUMMED, ZERO, Digest, Tally, sum_of_texts

LINES = [f"<urn:s{i}> <urn:p> <urn:o> ." for i in range(12)]
line = st.sampled_from(LINES)
change = st.tuples(st.lists(line, max_size=5), st.lists(line, max_size=5))


@settings(max_examples=200, deadline=None)
@given(st.lists(change, max_size=12), st.sampled_from([ZERO, Digest.of_lines(LINES[:3])]))
def test_a_tally_is_the_sum_of_the_deltas_it_was_given(changes, base):
    tally = Tally(base)
    expected = base
    for i, (plus, minus) in enumerate(changes):
        tally.move(plus, minus)
        expected = expected + Digest.of_change(plus, minus)
        if i % 3 == 2:  # read part-way: folding then going on changes nothing
            assert tally.value() == expected
    assert tally.value() == expected


def test_a_line_added_then_removed_is_never_hashed_and_a_full_tally_folds(monkeypatch):
    hashed: list[str] = []
    real = Digest.of_change.__func__  # type: ignore[attr-defined]

    def counting(cls, plus, minus):
        hashed.extend(plus + minus)
        return real(cls, plus, minus)

    monkeypatch.setattr(Digest, "of_change", classmethod(counting))
    tally = Tally()
    tally.move([LINES[0], LINES[1]], [])
    tally.move([LINES[2]], [LINES[1]])  # the state a step replaces at the next
    assert tally.value() == Digest.of_lines([LINES[0], LINES[2]])
    assert sorted(hashed) == sorted([LINES[0], LINES[2]])
    many = [f"<urn:s{i}> <urn:q> <urn:o> ." for i in range(_FOLD_AT)]
    tally.move(many, [])
    assert not tally._net  # folded on reaching a chunk, not kept growing
    assert tally.value() == Digest.of_lines([LINES[0], LINES[2], *many])


@settings(max_examples=100, deadline=None)
@given(change)
def test_a_deferred_delta_equals_the_eager_one_however_it_is_read(c):
    plus, minus = c
    eager = Digest.of_change(plus, minus)
    assert Digest.of_change_later(plus, minus) == eager
    assert hash(Digest.of_change_later(plus, minus)) == hash(eager)
    assert bool(Digest.of_change_later(plus, minus)) == bool(eager)
    assert Digest.of_change_later(plus, minus) + eager == eager + eager
    later = Digest.of_change_later(plus, minus)
    assert pickle.loads(pickle.dumps(later)) == eager == copy.deepcopy(later)
    assert later.fingerprint == eager.fingerprint and later.to_text() == eager.to_text()


def test_a_digest_is_immutable_and_checks_its_size():
    with pytest.raises(AttributeError):
        ZERO.state = bytes(2048)  # type: ignore[misc]
    with pytest.raises(ValueError, match="2048 bytes"):
        Digest(b"short")
    assert Digest() == ZERO and Digest(ZERO.state) == ZERO and ZERO != "lthash16:"


def test_a_digest_summed_in_chunks_is_the_sum_of_its_lines():
    """Lines are expanded and summed a chunk at a time: a set spanning several chunks, or a
    change larger than one, digests as the sum of its lines one by one."""
    lines = [f"<urn:s{i}> <urn:q> \"{i}\" ." for i in range(2 * _SUMMED + 7)]
    one_by_one = ZERO
    for line in lines:
        one_by_one = one_by_one + Digest.of_lines([line])
    assert Digest.of_lines(lines) == one_by_one
    half = len(lines) // 2
    assert Digest.of_change(lines, lines[:half]) == Digest.of_lines(lines[half:])
    assert Digest.of_change(lines[:3], lines) == -Digest.of_lines(lines[3:])


def test_digests_summed_from_their_texts_equal_their_sum():
    """A store's deltas, read back as text, sum as the digests they are, across chunks; a
    text that is not a digest's state is refused."""
    deltas = [Digest.of_lines([f"<urn:s{i}> <urn:q> <urn:o> ."]) for i in range(_SUMMED + 5)]
    total = ZERO
    for d in deltas:
        total = total + d
    assert sum_of_texts(d.to_text() for d in deltas) == total
    assert sum_of_texts([]) == ZERO
    with pytest.raises(ValueError):
        sum_of_texts(["AAAA"])
