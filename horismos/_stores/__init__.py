"""World stores, chosen by name; each kind behind :class:`~horismos._stores.base.Store`.

=================  =========================================================================
``memory``         rdflib ``Dataset`` in this process
``oxigraph``       pyoxigraph in this process's memory
``oxigraph:PATH``  pyoxigraph on disk (RocksDB), transactional; one process at a time
``journal:PATH``   pyoxigraph in memory, each commit appended to a journal on disk first;
                   one process at a time (``?sync=commit``: each commit fsynced)
``sparql:URL``     a SPARQL 1.1 Query/Update server (e.g. ``oxigraph serve``), shared by
                   any number of processes
=================  =========================================================================

The registry imports a backend only when it is asked for.
"""

from __future__ import annotations

from pathlib import Path

from .base import RUNTIME, Change, Conflict, Store, StoreError

__all__ = [
    "DEFAULT_STORE",
    "RUNTIME",
    "STORE_NAMES",
    "Change",
    "Conflict",
    "Store",
    "StoreError",
    "open_store",
    "outlives_process",
]

DEFAULT_STORE = "oxigraph"
"""The embedded store a world gets when none is named (see docs/stores.md for why)."""

STORE_NAMES = "memory, oxigraph, oxigraph:PATH, journal:PATH or sparql:URL"


def outlives_process(name: str) -> bool:
    """Whether the store ``name`` names keeps the world after this process ends: one given a
    path or a URL (``oxigraph:PATH``, ``journal:PATH``, ``sparql:URL``), not ``memory`` or
    ``oxigraph``; what to tell of a run cut short."""
    return ":" in name


def open_store(name: str, *, create: bool = True) -> Store:
    """The store ``name`` names; an unknown or incomplete name is a :class:`UsageError`.

    Without ``create``, ``oxigraph:PATH`` or ``journal:PATH`` names a store that exists: a
    command that only reads a world or acts on one made before refuses a mistyped path
    instead of starting an empty world there (see
    :class:`~horismos._stores.oxigraph.OxigraphStore`). ``journal:PATH?sync=commit`` fsyncs
    each commit (:mod:`horismos._stores.journal`). A PATH starting with ``~`` is under the
    home folder, as in a shell."""
    from .._errors import UsageError

    kind, sep, arg = name.partition(":")
    if kind in ("oxigraph", "journal") and arg.startswith("~"):
        arg = str(Path(arg).expanduser())  # no shell expands the ~ after "oxigraph:"
    if kind == "memory" and not sep:
        from .memory import MemoryStore

        return MemoryStore()
    if kind == "oxigraph" and (not sep or arg):
        from .oxigraph import OxigraphStore

        return OxigraphStore(arg or None, create=create)
    if kind == "journal" and arg:
        from .journal import JournalStore

        path, _, option = arg.partition("?sync=")
        return JournalStore(path, create=create, sync=option or "os")
    if kind == "sparql" and arg.startswith(("http://", "https://")):
        from .sparql import SparqlStore

        return SparqlStore(arg)
    hint = " (sparql:URL takes an http:// or https:// URL)" if kind == "sparql" else ""
    raise UsageError(f"unknown store {name!r}: use {STORE_NAMES}{hint}")
