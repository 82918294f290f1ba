"""A variable named once in a pattern beside one of a near name that is used: a misspelling.

Why: ``?this :suppliedBy ?supplier . ?suplier :active true .`` parses, and ``?suplier`` is a
variable of its own, joined with nothing: the triple holds when any supplier anywhere is
active, so the pattern no longer restricts ``?supplier`` at all. A ``horis:forEach`` step
over it called its tool (not idempotent) on the inactive supplier too, the candidates query
of a proposal offered trials for another condition, and ``validate`` said "valid". SPARQL
has no declarations, so the only sign is in the text: a name written once, one slip away
from a name the pattern (or the run, or the step's arguments) uses. A name written once is
common and meant (``?this :queuedAt ?t`` in a guard), so only a near name that is used
elsewhere makes it a slip, and only names long enough that a slip is not another short name
(``?a`` beside ``?b``) are compared.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Set
from itertools import pairwise
from typing import Any

from rdflib.term import Variable

from ._near_names import slip_distance

__all__ = ["cut_pair", "lone_variables"]

# what SPARQL text holds that is not a variable: strings, IRIs and comments
_SKIPPED = re.compile(
    r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\''
    r"|<[^<>\"{}|^`\\\s]*>|#[^\n]*"
)
_VARIABLE = re.compile(r"(?<![\w:])[?$]([A-Za-z_]\w*)")


def _near(lone: str, used: str) -> bool:
    """``lone`` is a slip of ``used``: the same name in another case, or one edit away from a
    name of four characters or more (two from one of seven or more). One that begins the other
    (``?t`` beside ``?this``) is another name, not a slip."""
    if lone == used:
        return False
    if lone.lower() == used.lower():
        return True
    if min(len(lone), len(used)) < 4:
        return False
    return slip_distance(lone, used) <= (2 if min(len(lone), len(used)) >= 7 else 1)


def _components(triples: Iterable[tuple[Any, Any, Any]]) -> dict[str, str]:
    """Each variable of ``triples`` to a representative of the variables it is joined with
    through them (a triple joins the variables it names)."""
    parent: dict[str, str] = {}

    def root(v: str) -> str:
        while parent.setdefault(v, v) != v:
            v = parent[v]
        return v

    for triple in triples:
        names = [str(t) for t in triple if isinstance(t, Variable)]
        for v in names:
            root(v)
        for a, b in pairwise(names):
            parent[root(a)] = root(b)
    return {v: root(v) for v in parent}


def lone_variables(
    text: str, triples: Iterable[tuple[Any, Any, Any]], given: Set[str], used: Set[str]
) -> list[tuple[str, str, bool]]:
    """Each variable ``text`` names once, with the variable it most likely misspells and
    whether every triple naming it names no other variable: one the
    text names twice or more, or one of ``used`` (``given``, what the run binds, and the
    arguments its step takes from the pattern). Only where the slip cut the pattern, as read
    through its ``triples``: every triple naming the lone variable names no other (a test of
    the whole world), or the lone variable is joined with a variable of ``given`` and the one
    meant is not (it was cut off from the focus). A variable of ``used`` is never lone."""
    counts = Counter(_VARIABLE.findall(_SKIPPED.sub(" ", text)))
    known = {v for v, n in counts.items() if n > 1} | set(used)
    triples = list(triples)
    joined = _components(triples)
    anchored = {joined[v] for v in given if v in joined}
    found = []
    for var, n in counts.items():
        if n != 1 or var in used:
            continue
        near = sorted((k for k in known if _near(var, k)), key=lambda k: (slip_distance(var, k), k))
        if not near:
            continue
        own = [t for t in triples if Variable(var) in t]
        alone = bool(own) and all(
            not isinstance(t, Variable) or t == Variable(var) for triple in own for t in triple
        )
        cut = joined.get(var) in anchored and joined.get(near[0]) not in anchored
        if alone or cut:
            found.append((var, near[0], alone))
    return found


def cut_pair(
    text: str, triples: Iterable[tuple[Any, Any, Any]], anchor: str, targets: Set[str]
) -> tuple[str, str, str] | None:
    """A variable of ``targets`` (a step's argument, a proposal's options) that ``triples``
    (those every solution matches) join with nothing holding ``anchor`` (?this), where the
    part holding it names a variable once and the part holding ``anchor`` names another
    once: two names of what was meant to be one, ``?this :affects ?svc . ?option :appliesTo
    ?service``. As (the target, the lone variable beside it, the lone variable beside
    ``anchor``), the first of each as written; None when there is none.

    Why: the names are not near each other, so :func:`lone_variables` did not see the slip;
    every runbook applying to any service was a candidate, whatever the incident, the model
    chose one for a service the incident did not touch, and the rollback acted on it. A
    target joined with nothing of ``anchor`` and naming no variable once is meant (``?nurse
    :onDuty true``: any nurse on duty)."""
    order = [v for v in _VARIABLE.findall(_SKIPPED.sub(" ", text))]
    counts = Counter(order)
    triples = list(triples)
    joined = _components(triples)
    if anchor not in joined:
        return None
    home = joined[anchor]
    lone = [v for v in dict.fromkeys(order) if counts[v] == 1 and v in joined]
    beside_anchor = [v for v in lone if joined[v] == home and v != anchor]
    if not beside_anchor:
        return None
    for target in sorted(targets):
        part = joined.get(target)
        if part is None or part == home:
            continue
        beside = [v for v in lone if joined[v] == part and v not in targets]
        if beside:
            return target, beside[0], beside_anchor[0]
    return None
