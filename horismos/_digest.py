"""The world digest: a hash of a set of quads that is updated by the quads a change touches.

Why not hash the sorted world: a run would then read, sort and hash every quad of the world
twice, whatever it touched (a 60,000-triple world cost 1.3 s a run). A *set-homomorphic*
hash is instead a sum: the digest of a set is the sum of its members' hashes, so adding a quad
adds its hash and removing it subtracts it, in O(size of the change), in any order, on any
store. Equal sets give equal digests whatever the insertion order.

The construction is LtHash (Bellare–Micciancio's "add" hash, as parameterised by Lewi et al.,
"Securing Update Propagation with Homomorphic Hashing", 2019, and used in Facebook's folly
``LtHash``): each quad's N-Quads line is expanded by an extendable-output function (BLAKE3)
to 2048 bytes, read as 1024 lanes of 16 bits, and added lane-wise modulo 2^16. Finding two
different sets with the same sum reduces to the Short Integer Solution lattice problem; the
paper estimates ~200 bits of security for LtHash16 with 1024 lanes, so the digest is tamper
evidence: nobody can craft a different world with the same digest. Its short form
(:attr:`Digest.fingerprint`) is SHA-256 of the 2048-byte state.

Limits, by design:
- It hashes a SET. Adding a quad that is already stored must not be added to the digest
  again (the store would not hold it twice), and removing one that is not stored must not be
  subtracted: every delta counts only the quads that really were added or removed.
- Quads are hashed as the store holds them (literals in Oxigraph's canonical form) and blank
  nodes by their label, so worlds are skolemised at load (see :mod:`horismos._skolem`).
- It says whether two worlds are equal, not where they differ.
"""

from __future__ import annotations

import base64
import hashlib
import sys
from collections.abc import Iterable
from functools import cache
from itertools import islice
from typing import TYPE_CHECKING, Any, cast

import blake3

if TYPE_CHECKING:
    import numpy as np

__all__ = ["LANES", "ZERO", "Digest", "Tally", "sum_of_texts"]

LANES = 1024
"""16-bit lanes in a digest's state."""
_BYTES = 2 * LANES
_SUMMED = 128
"""Lines expanded into one buffer and summed by numpy at a time: 256 KB, which stays in the
CPU's caches. One buffer of a whole fold (4,096 lines, 8 MB) cost 1.1 µs a line against
0.77, and evicted the rest of the run's data on the way."""
_FOLD_AT = 4096  # pending lines at which a tally folds them into its digest
_LANE = "<u2"  # numpy's little-endian uint16 on every machine, so persisted states travel


@cache
def _numpy() -> Any:
    """numpy, imported when a digest of more than a few lines is first summed: ~60 ms of the
    start of every command, and validate, graph or trace show never sum one."""
    import numpy

    return numpy


_INTEGER_LINES = 4096
"""Lines a process sums with Python's integers (:func:`_summed`) before numpy is imported
for the rest: ~6 µs a line where numpy takes ~1 but ~60 ms to import, so a command run once
per event (a few steps' commits, a small world loaded) never imports it, and a long-lived
process spends at most ~25 ms on the way to it."""
_integer_lines = 0


def _by_integers(lines: int) -> bool:
    """Whether to sum ``lines`` lines with Python's integers: numpy not imported yet, and the
    process's :data:`_INTEGER_LINES` not spent (then counted). Either way the same state."""
    global _integer_lines
    if "numpy" in sys.modules or _integer_lines + lines > _INTEGER_LINES:
        return False
    _integer_lines += lines
    return True


_EVEN = int.from_bytes(b"\xff\xff\x00\x00" * (LANES // 2), "little")
"""A state's even lanes, read as one integer: each lane in a 32-bit slot of its own."""
_BORROW = int.from_bytes(b"\x00\x00\x01\x00" * (LANES // 2), "little")
"""2^16 in every slot: what a subtracted lane is taken from, so that no slot borrows."""


def _summed(plus: Iterable[bytes], minus: Iterable[bytes] = ()) -> bytes:
    """The states of ``plus`` less those of ``minus``, lane-wise modulo 2^16, with Python's
    integers: the even and the odd lanes each spread to 32-bit slots, so that a lane's carry
    stays in its slot's upper half (which holds up to 65,535 states' carries) and is dropped
    by the last mask. numpy's sum, exactly (tests/test_digest.py)."""
    even = odd = 0
    for state in plus:
        x = int.from_bytes(state, "little")
        even += x & _EVEN
        odd += (x >> 16) & _EVEN
    for state in minus:
        x = int.from_bytes(state, "little")
        even += _BORROW - (x & _EVEN)
        odd += _BORROW - ((x >> 16) & _EVEN)
    return ((even & _EVEN) | ((odd & _EVEN) << 16)).to_bytes(_BYTES, "little")


class Digest:
    """The LtHash16 state of a set of quads (2048 bytes); ``+`` and ``-`` combine states.

    Immutable. The delta a commit returns (:meth:`of_change_later`) hashes its lines only
    when its state is first read: the store folds the same lines into its own digest in
    batches, and nothing on a step's path reads that delta."""

    __slots__ = ("_lines", "_state")
    _state: bytes | None
    _lines: tuple[list[str], list[str]] | None

    def __init__(self, state: bytes = bytes(_BYTES)) -> None:
        if len(state) != _BYTES:
            raise ValueError(f"a digest state is {_BYTES} bytes, not {len(state)}")
        object.__setattr__(self, "_state", state)
        object.__setattr__(self, "_lines", None)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a Digest is immutable: cannot set {name}")

    def __reduce__(self) -> tuple[type[Digest], tuple[bytes]]:
        return Digest, (self.state,)

    @property
    def state(self) -> bytes:
        """The 2048 bytes: 1024 little-endian 16-bit lanes."""
        state = self._state
        if state is None:  # a deferred delta: its lines hashed now, once
            assert self._lines is not None
            state = Digest.of_change(*self._lines).state
            object.__setattr__(self, "_state", state)
            object.__setattr__(self, "_lines", None)
        return state

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Digest):
            return NotImplemented
        return self.state == other.state

    def __hash__(self) -> int:
        return hash(self.state)

    @classmethod
    def of_lines(cls, lines: Iterable[str]) -> Digest:
        """The digest of a set given as N-Quads lines (no newline), each line counted once
        per time it is given: pass each member of the set once."""
        it = iter(lines)
        chunk = list(islice(it, _SUMMED))
        if len(chunk) < _SUMMED and _by_integers(len(chunk)):  # every line, and few
            return cls(_summed(_expansions(chunk)))
        np = _numpy()
        total = np.zeros(LANES, dtype=_LANE)
        while chunk:
            total += np.add.reduce(_expanded(chunk), axis=0, dtype=_LANE)
            chunk = list(islice(it, _SUMMED))
        return cls(total.tobytes())

    @classmethod
    def of_change(cls, plus: list[str], minus: list[str]) -> Digest:
        """The delta of a change that added the quads of ``plus`` and removed those of
        ``minus`` (:meth:`of_lines` of one less that of the other), in one buffer and one sum
        for each side."""
        if len(plus) + len(minus) > _SUMMED:
            return cls.of_lines(plus) - cls.of_lines(minus)
        if not plus and not minus:
            return ZERO
        if _by_integers(len(plus) + len(minus)):
            return cls(_summed(_expansions(plus), _expansions(minus)))
        lanes = _expanded([*plus, *minus])
        add = _numpy().add.reduce
        total = add(lanes[: len(plus)], axis=0, dtype=_LANE)
        if minus:
            total -= add(lanes[len(plus) :], axis=0, dtype=_LANE)
        return cls(total.tobytes())

    @classmethod
    def of_change_later(cls, plus: list[str], minus: list[str]) -> Digest:
        """:meth:`of_change`, computed when its state is first read (the lists are kept:
        the caller must not change them)."""
        if not plus and not minus:
            return ZERO
        delta = object.__new__(cls)
        object.__setattr__(delta, "_state", None)
        object.__setattr__(delta, "_lines", (plus, minus))
        return delta

    def __add__(self, other: Digest) -> Digest:
        return Digest(_combined((self.state, other.state), ()))

    def __sub__(self, other: Digest) -> Digest:
        return Digest(_combined((self.state,), (other.state,)))

    def __neg__(self) -> Digest:
        return Digest(_combined((), (self.state,)))

    def __bool__(self) -> bool:
        """False for the digest of the empty set (and of a delta that changed nothing)."""
        return any(self.state)

    def to_text(self) -> str:
        """The state as base64 (2,732 characters): how a store persists it."""
        return base64.b64encode(self.state).decode("ascii")

    @classmethod
    def from_text(cls, text: str) -> Digest:
        """The digest whose state ``text`` holds: what :meth:`to_text` wrote."""
        return cls(base64.b64decode(text.encode("ascii"), validate=True))

    @property
    def fingerprint(self) -> str:
        """A short name for the state, for traces and the CLI: ``lthash16:`` + SHA-256 hex."""
        return "lthash16:" + hashlib.sha256(self.state).hexdigest()

    def __repr__(self) -> str:
        return f"Digest({self.fingerprint})"

    def __str__(self) -> str:
        return self.fingerprint


ZERO = Digest()
"""The digest of the empty set."""


def sum_of_texts(texts: Iterable[str]) -> Digest:
    """The sum of digests given as :meth:`Digest.to_text` writes them, added a chunk at a
    time in one numpy sum each: a store that keeps one delta per commit reads them all to
    know its digest, and adding them one :class:`Digest` at a time cost ~48 µs each."""
    np = _numpy()
    total = np.zeros(LANES, dtype=_LANE)
    it = iter(texts)
    while chunk := list(islice(it, _SUMMED)):
        states = b"".join(Digest.from_text(t).state for t in chunk)  # each one checked
        lanes = np.frombuffer(states, dtype=_LANE).reshape(-1, LANES)
        total += np.add.reduce(lanes, axis=0, dtype=_LANE)
    return Digest(total.tobytes())


def _combined(plus: tuple[bytes, ...], minus: tuple[bytes, ...]) -> bytes:
    """States added and subtracted lane-wise: by numpy once it is imported (~4 µs), else by
    Python's integers (~12 µs) rather than importing numpy for it."""
    if "numpy" not in sys.modules:
        return _summed(plus, minus)
    np = _numpy()
    total = np.zeros(LANES, dtype=_LANE)
    for state in plus:
        total += np.frombuffer(state, dtype=_LANE)
    for state in minus:
        total -= np.frombuffer(state, dtype=_LANE)  # uint16: wraps
    return cast(bytes, total.tobytes())


def _expansions(lines: list[str]) -> list[bytes]:
    """Each line's 2048-byte BLAKE3 expansion: its digest's state. One hasher reset for each
    line: building one per line was a third of the hashing."""
    hasher = blake3.blake3()
    reset, update, expand = hasher.reset, hasher.update, hasher.digest
    out = []
    for line in lines:
        reset()
        update(line.encode())
        out.append(expand(_BYTES))
    return out


def _expanded(lines: list[str]) -> np.ndarray:
    """:func:`_expansions` as rows of lanes, for numpy's sum."""
    return _numpy().frombuffer(b"".join(_expansions(lines)), dtype=_LANE).reshape(-1, LANES)


class Tally:
    """A digest kept by a store as changes land: their lines are counted (added +1, removed
    -1) and hashed into the digest only when it is read or a few thousand are pending.

    Why: a step's commit is ~20 lines, each ~0.5-2 µs of BLAKE3 expansion, plus ~7 µs of numpy
    for its sum. Batched, a fold of ~4,096 lines sums them 128 at a time, and a line added then
    removed before the fold (the instance state each step replaces at the next, the intent
    a step removes) counts zero and is never hashed: about a third of a run's lines. The
    value is exactly the sum of the deltas it was given, in any order. Not thread-safe: the
    store calls it under its lock."""

    __slots__ = ("_base", "_net")

    def __init__(self, base: Digest = ZERO) -> None:
        self._base = base
        self._net: dict[str, int] = {}

    def move(self, plus: Iterable[str], minus: Iterable[str]) -> None:
        """Count the lines a change added (``plus``) and removed (``minus``)."""
        net = self._net
        for line in plus:
            count = net.pop(line, 0) + 1
            if count:
                net[line] = count
        for line in minus:
            count = net.pop(line, 0) - 1
            if count:
                net[line] = count
        if len(net) >= _FOLD_AT:
            self._fold()

    def value(self) -> Digest:
        """The digest: the base and every pending line folded in."""
        if self._net:
            self._fold()
        return self._base

    def reset(self, base: Digest) -> None:
        """Start again from ``base`` (pending lines dropped)."""
        self._base, self._net = base, {}

    def _fold(self) -> None:
        net = self._net
        # a line is nearly always counted once either way: those taken as they are, the rest
        # repeated after (a ``range`` for every line was ~17k instructions of a step's ~2M)
        plus = [line for line, n in net.items() if n == 1]
        minus = [line for line, n in net.items() if n == -1]
        if len(plus) + len(minus) < len(net):
            plus += [line for line, n in net.items() if n > 1 for _ in range(n)]
            minus += [line for line, n in net.items() if n < -1 for _ in range(-n)]
        self._base = self._base + Digest.of_change(plus, minus)
        self._net = {}
