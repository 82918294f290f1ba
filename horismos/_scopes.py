"""SMART-on-FHIR scopes: which granted scope covers which commit, checked before any call.

Why a module: a scope is checked twice — a tool's declared ``horis:commitScope`` against what
its adapter is granted (before the tool is even asked), and each resource the tool decided to
write against the tool's commit scopes (before anything is sent) — and both must read scopes
the same way. A scope is ``CONTEXT/TYPE.PERMISSIONS``: context ``patient``, ``user`` or
``system``; type a resource type or ``*``; permissions ``read``, ``write``, ``*`` or the
SMART v2 letters ``cruds``. ``write`` is ``cud``, ``read`` is ``rs``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Scope", "covers", "needed_for"]

_FORM = re.compile(r"^(patient|user|system)/(\*|[A-Z][A-Za-z]*)\.(\*|read|write|[cruds]+)$")
_LETTERS = {"read": frozenset("rs"), "write": frozenset("cud"), "*": frozenset("cruds")}


@dataclass(frozen=True)
class Scope:
    """A SMART scope read into its parts, with its permissions as letters, so that ``write`` and
    ``cud`` (or ``*`` and ``cruds``) compare as the same grant."""

    context: str
    type: str
    allows: frozenset[str]

    @classmethod
    def parse(cls, text: str) -> Scope | None:
        m = _FORM.match(text.strip())
        if m is None:
            return None
        ctx, kind, perms = m.groups()
        return cls(ctx, kind, _LETTERS.get(perms, frozenset(perms)))


def covers(granted: str, needed: str) -> bool:
    """Whether the scope ``granted`` allows everything ``needed`` asks for."""
    g, n = Scope.parse(granted), Scope.parse(needed)
    if g is None or n is None:
        return False
    return g.context == n.context and g.type in ("*", n.type) and n.allows <= g.allows


def needed_for(scopes: tuple[str, ...], resource_type: str, letter: str) -> str:
    """The scope a commit of ``letter`` (``c`` create, ``u`` update) on a ``resource_type``
    needs, worded in the context of the tool's own commit scopes."""
    first = next((s for s in map(Scope.parse, scopes) if s is not None), None)
    ctx = first.context if first else "patient"
    return f"{ctx}/{resource_type}.{letter}"
