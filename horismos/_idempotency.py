"""Idempotency keys: a catalog call retried with the key of a call that completed calls nothing.

A served call (MCP ``tools/call``) or a ``horismos tools call`` whose answer was lost after
the tool acted — a dropped connection, a client's timeout — cannot be told from a second
call meant on purpose: both carry the same payload. So the caller names the call, as an API
with side effects asks of its clients (Stripe's ``Idempotency-Key``, AWS's ``ClientToken``):
the first call with key K records K, its payload's fingerprint and, once it has one, what it
answered; a retry with K and the same payload is answered that, marked replayed, and nothing
is called; K with another payload is refused, saying so.

The record lives at a node named from the key (:func:`key_node`), in a graph of its own, so
a retry finds it by one look-up and never by a scan. It lands with the call's first commit —
a tool that is not idempotent, with its intent, before it is called; any other tool, with
its effects — and that commit requires the record's type absent (``Change.absent``), as an
approval's use is recorded: of two calls with one key, one lands and the other is refused.
On a shared world the call claims its key with its subject and holds both until its commit
(:func:`._call._hold`): the store judges "absent" on a snapshot, and two calls racing on two
subjects both landed. The
answer lands with the call's final commit. A call left in doubt keeps its record without an
answer: a retry with K is answered that it is in doubt, as the call's doubt node says, and
after ``tools reconcile`` that the key's call was settled by hand (a new key calls again).
An idempotent tool's call records nothing that got no answer (timed out, never sent), nor
one whose process stopped before its commit: calling it again is safe, so a retry with K
does, as after a call refused before it was made.

Within one process (calls awaited at once, or made from threads) a key being called is held
(:func:`take_key`) from its look-up to the call's last commit: an idempotent tool records its
key with its effects, after it is called, so of two calls given one key for two payloads both
were called, and the second refused only once its tool had acted.

Keys are kept as long as the world is: nothing expires them.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rdflib import RDF, RDFS, Literal, URIRef

from ._stores import Store
from ._stores.base import Quad
from ._vocab import HORIS, PROV

__all__ = [
    "MCP_META_KEY",
    "KeyRecord",
    "check_key",
    "key_answer",
    "key_node",
    "key_record",
    "read_key",
    "release_key",
    "take_key",
]

MCP_META_KEY = "io.horismos/idempotency-key"
"""Where an MCP ``tools/call`` request carries its key: in its ``params._meta``."""

_MAX_LENGTH = 255


def check_key(key: Any) -> str | None:
    """What is wrong with ``key`` as an idempotency key, or None: text of 1 to 255
    characters, as a client makes one (a UUID, say)."""
    if not isinstance(key, str) or not key.strip():
        return "an idempotency key is a non-empty string (a UUID, say), one per intended call"
    if len(key) > _MAX_LENGTH:
        return f"an idempotency key is at most {_MAX_LENGTH} characters; got {len(key)}"
    return None


def key_node(key: str) -> URIRef:
    """Where the call made with ``key`` is recorded: named by the key, found by one look-up."""
    return URIRef(f"urn:horismos:key:{hashlib.sha256(key.encode()).hexdigest()[:32]}")


@dataclass(frozen=True)
class KeyRecord:
    """The call a key was first given to, as recorded: the payload's fingerprint, when it
    started, and what it answered (None while it is in flight or in doubt)."""

    fingerprint: str
    started: str
    answer: dict[str, Any] | None


def key_record(key: str, fingerprint: str, started: Literal) -> list[Quad]:
    """The quads recording that the call whose payload (tool and arguments) has
    ``fingerprint`` was made with ``key``; the commit carrying them requires the first absent
    (one call a key)."""
    node = key_node(key)
    return [
        (node, RDF.type, HORIS.IdempotencyKey, node),
        (node, RDFS.label, Literal(key), node),
        # no horis:tool: a query for a tool's open intents (every catalog call asks one)
        # would read each key's too; the fingerprint is of the tool's IRI and the payload
        (node, HORIS.fingerprint, Literal(fingerprint), node),
        (node, PROV.startedAtTime, started, node),
    ]


def key_answer(key: str, answer: Mapping[str, Any]) -> list[Quad]:
    """The quad recording what the call made with ``key`` answered (its envelope's JSON)."""
    node = key_node(key)
    text = json.dumps(answer, sort_keys=True, ensure_ascii=False)
    return [(node, HORIS.answer, Literal(text), node)]


_READ = frozenset({HORIS.fingerprint, HORIS.answer, PROV.startedAtTime})


def read_key(store: Store, key: str) -> KeyRecord | None:
    """The call made with ``key``, if any: one look-up of the key's node (one query on a
    ``sparql:`` store, where a look-up a property was three round trips), never a scan."""
    found: dict[Any, Any] = {}
    for _, p, o in store.outgoing(key_node(key), _READ):
        found.setdefault(p, o)
    fingerprint = found.get(HORIS.fingerprint)
    if fingerprint is None:
        return None
    answer = found.get(HORIS.answer)
    return KeyRecord(
        str(fingerprint),
        str(found.get(PROV.startedAtTime) or ""),
        json.loads(str(answer)) if answer is not None else None,
    )


_CALLING: set[tuple[object, str]] = set()
_CALLING_LOCK = threading.Lock()


def _scope(store: Store) -> object:
    """Whose keys a key is among: its world's. A world other processes share is named by its
    store (two handles on one ``sparql:`` world are one world); any other by the store
    object, so one process serving two worlds with keys such as order ids keeps them apart."""
    return store.name if store.shared else id(store)


def take_key(store: Store, key: str) -> bool:
    """Hold ``key`` of the world in ``store`` for a call this process makes now; False when
    another call here holds it (see the module's docstring). :func:`release_key` gives it
    back."""
    held = (_scope(store), key)
    with _CALLING_LOCK:
        if held in _CALLING:
            return False
        _CALLING.add(held)
        return True


def release_key(store: Store, key: str) -> None:
    """Give back ``key``, held by :func:`take_key`, once the call's last commit has landed."""
    with _CALLING_LOCK:
        _CALLING.discard((_scope(store), key))
