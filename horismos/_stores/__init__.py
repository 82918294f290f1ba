"""World stores, chosen by name; each kind behind :class:`~horismos._stores.base.Store`."""

from __future__ import annotations

from .base import Change, Store

__all__ = ["Change", "Store", "open_store"]


def open_store(name: str) -> Store:
    """``memory`` today; the registry imports a backend only when it is asked for."""
    kind, _, arg = name.partition(":")
    if kind == "memory" and not arg:
        from .memory import MemoryStore

        return MemoryStore()
    from .._errors import UsageError

    raise UsageError(f"unknown store {name!r}: use 'memory'")
