"""The literals of a SPARQL text put in the form the stores keep them, as Oxigraph reads them.

Oxigraph keeps a literal's value, not its lexical form (``1.50`` is held as ``"1.5"``,
``'1'^^xsd:boolean`` as ``true``), and its parser reads a query's literals the same way, so
``{ ?s ?p 1.50 }`` matches what it holds. The ``memory`` store holds literals in Oxigraph's
form too (:func:`.ox_terms.canonical`), but rdflib matches a pattern term for term and keeps
an expression's literal as written: the prepared query or update is rewritten once, when it
is prepared, never per evaluation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rdflib import Literal

from .ox_terms import stored_literals

__all__ = ["in_stored_form", "read_otherwise"]


def in_stored_form(parts: list[Any]) -> None:
    """Each literal in ``parts`` (a translated query's algebra, an update's operations) put in
    place in the form the store keeps it, as Oxigraph's parser puts every literal it reads: a
    pattern's (rdflib compares terms, so ``DELETE WHERE { :a :p 1.50 }`` matched nothing where
    the store holds ``1.5``) and an expression's (Oxigraph's ``STR(1.50)`` is ``"1.5"``)."""
    literals: list[Literal] = []
    _walk(parts, literals.append)
    stored = stored_literals(literals)
    if stored:
        _walk(parts, lambda lit: stored.get(lit, lit))


def read_otherwise(parts: list[Any]) -> bool:
    """Whether :func:`in_stored_form` would change ``parts``: a query none of whose literals
    it changes is asked as it was prepared (and only read here)."""
    literals: list[Literal] = []
    _walk(parts, literals.append)
    return bool(stored_literals(literals))


def _walk(value: Any, visit: Callable[[Literal], Any]) -> Any:
    """``value`` with each literal within it given to ``visit`` and replaced by what it returns
    (when it returns one): dicts and lists changed in place, tuples made anew, and nothing
    written where nothing changes (a query another thread evaluates is only read). An ``EXISTS``
    keeps its translated pattern as an attribute, not an item: attributes are walked too."""
    if isinstance(value, Literal):
        found = visit(value)
        return found if isinstance(found, Literal) else value
    if isinstance(value, dict):
        for key, item in value.items():
            walked = _walk(item, visit)
            if walked is not item:
                value[key] = walked
        # a copy: an expression another thread evaluates sets its ``ctx`` attribute
        for item in list(getattr(value, "__dict__", {}).values()):
            if isinstance(item, dict):
                _walk(item, visit)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            walked = _walk(item, visit)
            if walked is not item:
                value[i] = walked
    elif isinstance(value, tuple):
        walked_items = tuple(_walk(item, visit) for item in value)
        if any(w is not v for w, v in zip(walked_items, value, strict=True)):
            return walked_items
    return value
