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
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice

import blake3
import numpy as np

__all__ = ["LANES", "ZERO", "Digest"]

LANES = 1024
"""16-bit lanes in a digest's state."""
_BYTES = 2 * LANES
_CHUNK = 4096  # lines hashed per numpy sum: one huge buffer was 5x slower than chunks
_LANE = np.dtype("<u2")  # little-endian on every machine, so persisted states travel
_SUM = np.add.reduce


@dataclass(frozen=True, eq=True)
class Digest:
    """The LtHash16 state of a set of quads (2048 bytes); ``+`` and ``-`` combine states."""

    state: bytes = bytes(_BYTES)

    def __post_init__(self) -> None:
        if len(self.state) != _BYTES:
            raise ValueError(f"a digest state is {_BYTES} bytes, not {len(self.state)}")

    @classmethod
    def of_lines(cls, lines: Iterable[str]) -> Digest:
        """The digest of a set given as N-Quads lines (no newline), each line counted once
        per time it is given: pass each member of the set once."""
        total = np.zeros(LANES, dtype=_LANE)
        it = iter(lines)
        while chunk := list(islice(it, _CHUNK)):
            buf = b"".join(blake3.blake3(line.encode()).digest(_BYTES) for line in chunk)
            total += np.frombuffer(buf, dtype=_LANE).reshape(-1, LANES).sum(axis=0, dtype=_LANE)
        return cls(total.tobytes())

    @classmethod
    def of_change(cls, plus: list[str], minus: list[str]) -> Digest:
        """The delta of a change that added the quads of ``plus`` and removed those of
        ``minus`` (:meth:`of_lines` of one less that of the other). A commit's handful of
        lines: one hasher reset for each (building one per line was a third of its hashing),
        one buffer, one sum for each side."""
        if len(plus) + len(minus) > _CHUNK:
            return cls.of_lines(plus) - cls.of_lines(minus)
        if not plus and not minus:
            return ZERO
        hasher = blake3.blake3()
        reset, update, expand = hasher.reset, hasher.update, hasher.digest
        out = []
        for line in plus:
            reset()
            update(line.encode())
            out.append(expand(_BYTES))
        for line in minus:
            reset()
            update(line.encode())
            out.append(expand(_BYTES))
        lanes = np.frombuffer(b"".join(out), dtype=_LANE).reshape(-1, LANES)
        total = _SUM(lanes[: len(plus)], axis=0, dtype=_LANE)
        if minus:
            total -= _SUM(lanes[len(plus) :], axis=0, dtype=_LANE)
        return cls(total.tobytes())

    @property
    def _lanes(self) -> np.ndarray:
        return np.frombuffer(self.state, dtype=_LANE)

    def __add__(self, other: Digest) -> Digest:
        return Digest((self._lanes + other._lanes).tobytes())  # uint16: wraps

    def __sub__(self, other: Digest) -> Digest:
        return Digest((self._lanes - other._lanes).tobytes())  # uint16: wraps

    def __neg__(self) -> Digest:
        return Digest((-self._lanes).tobytes())

    def __bool__(self) -> bool:
        """False for the digest of the empty set (and of a delta that changed nothing)."""
        return any(self.state)

    def to_text(self) -> str:
        """The state as base64 (2,732 characters): how a store persists it."""
        return base64.b64encode(self.state).decode("ascii")

    @classmethod
    def from_text(cls, text: str) -> Digest:
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
