"""A decision rule that holds only where an earlier rule of the same decision going elsewhere
holds: the earlier one is always taken first, so it is never taken.

Why: two ``horis:when`` rules copied from one another, the second meant to test another
value (``FILTER (?a > 1000)`` twice, the second meant ``FILTER (?a < 100)``), sent no claim
to the second rule's step, and the definitions validated. So did tiers left in the wrong
order: ``?this :amount ?a . FILTER (?a > 1000)`` to a review, then ``FILTER (?a > 2000)`` to
an escalation, which only a claim the review had already taken could reach.

Three forms are said, each certain: patterns that are the same text, spaces aside;
patterns that are the same triples, one of them ``?this :p ?v``, whose FILTERs bound ``?v``
alone, by ``>``, ``>=``, ``<`` or ``<=`` with a number (two bounds ANDed, in one FILTER or
two), the later rule's range lying within the earlier's; and an earlier rule of triples alone
(no FILTER, no OPTIONAL) every one of which the later rule asks too, term for term, with more
of its own: the general case left before the particular (``?this :inDepartment :Engineering``
to the base bundle, then ``?this :inDepartment :Engineering ; :hasRole :engineer`` to the
engineers' one: no engineer got theirs). What two other patterns hold is not compared.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from rdflib import RDF, URIRef, Variable
from rdflib.term import Node

from ._datatypes import numeric_literal
from ._hazards import Hazard
from ._held_waits import plain_triples
from ._model import DecisionStep, Rule, Step

__all__ = ["shadowed_rules"]

_THIS = Variable("this")
_PLACE = Variable("_ranged")
"""What the compared variable is renamed to, so two rules naming it apart compare equal."""
_FLIP = {">": "<", ">=": "<=", "<": ">", "<=": ">="}


@dataclass(frozen=True)
class _Bound:
    value: Decimal
    strict: bool
    text: str
    """As written: ``1000``, ``-5.5``."""


@dataclass(frozen=True)
class _Range:
    """What a rule holds for: ``var``, bound by ``?this prop var`` among ``triples``,
    between ``low`` and ``high`` (None: unbounded)."""

    triples: frozenset[tuple[Any, Any, Any]]
    prop: URIRef
    var: str
    low: _Bound | None
    high: _Bound | None

    def text(self) -> str:
        """The range as a FILTER would write it; ``any ?v`` when unbounded."""
        said = []
        if self.low is not None:
            said.append(f"?{self.var} {'>' if self.low.strict else '>='} {self.low.text}")
        if self.high is not None:
            said.append(f"?{self.var} {'<' if self.high.strict else '<='} {self.high.text}")
        return " && ".join(said) or f"any ?{self.var}"

    def within(self, other: _Range) -> bool:
        """Whether every value in this range is in ``other``'s, of the same triples."""
        if (self.triples, self.prop) != (other.triples, other.prop):
            return False
        return _tighter(self.low, other.low, 1) and _tighter(self.high, other.high, -1)


def _tighter(mine: _Bound | None, theirs: _Bound | None, sign: int) -> bool:
    """Whether ``mine`` bounds at least as tightly as ``theirs`` (a lower bound for ``sign``
    1, an upper for -1)."""
    if theirs is None:
        return True
    if mine is None:
        return False
    if mine.value != theirs.value:
        return (mine.value - theirs.value) * sign > 0
    return mine.strict or not theirs.strict


def shadowed_rules(
    steps: Mapping[URIRef, Step], name: Callable[[Node], str]
) -> Iterator[tuple[DecisionStep, Rule, Hazard]]:
    """Each decision's rule that an earlier rule going to another step shadows, with the
    warning to give at the later rule."""
    for step in sorted(steps.values(), key=lambda s: str(s.iri)):
        if not isinstance(step, DecisionStep):
            continue
        seen: dict[str, Rule] = {}
        ranged: list[tuple[Rule, _Range]] = []
        plain: list[tuple[Rule, frozenset[tuple[Any, Any, Any]]]] = []
        for rule in step.rules:
            text = " ".join(sorted(" ".join(p.text.split()) for p in rule.requires.patterns))
            first = seen.setdefault(text, rule)
            if first is not rule:
                if first.next != rule.next:
                    yield step, rule, _same(step, rule, first, name)
                continue
            asked, alone = _asked(rule)
            wider = next(
                (r for r, t in plain if r.next != rule.next and asked is not None and t < asked),
                None,
            )
            if alone and asked is not None:
                plain.append((rule, asked))
            if wider is not None:
                yield step, rule, _particular(step, rule, wider, name)
                continue
            mine = _range(rule)
            if mine is None:
                continue
            earlier = next((r for r in ranged if mine.within(r[1])), None)
            bounded = mine.low is not None or mine.high is not None
            if earlier is not None and earlier[0].next != rule.next and bounded:
                yield step, rule, _narrower(step, rule, mine, *earlier, name)
            ranged.append((rule, mine))


def _same(step: DecisionStep, rule: Rule, first: Rule, name: Callable[[Node], str]) -> Hazard:
    return Hazard(
        step.iri,
        f"this horis:when rule is the same pattern as the one of horis:order {first.order:g} "
        f"before it, which goes to {name(first.next)}: it holds only when that one does, "
        f"which is taken first, so {name(rule.next)} is never taken by it",
        "make this rule test what it was meant to (another value, another property), or remove it",
    )


def _particular(step: DecisionStep, rule: Rule, first: Rule, name: Callable[[Node], str]) -> Hazard:
    asked = " ".join(" ".join(p.text.split()) for p in first.requires.patterns)
    return Hazard(
        step.iri,
        f"this horis:when rule asks all that the rule of horis:order {first.order:g} before it "
        f"asks ({asked}), and more: it holds only when that one does, which is taken first and "
        f"goes to {name(first.next)}, so {name(rule.next)} is never taken by it",
        f"give this rule a lower horis:order than {first.order:g}, so that the particular case "
        "is tried before the general one, or make it test what it was meant to",
    )


def _asked(rule: Rule) -> tuple[frozenset[tuple[Any, Any, Any]] | None, bool]:
    """The triples ``rule``'s pattern asks of every solution (its basic graph patterns, a
    FILTER over them aside), and whether they are all it asks; None for another pattern."""
    top = rule.requires.select.algebra.get("p")
    top = top.p if getattr(top, "name", None) == "Project" else top
    filtered = getattr(top, "name", None) == "Filter"
    triples = plain_triples(top.p if filtered else top)
    if not triples:
        return None, False
    return frozenset(triples), not filtered


def _narrower(
    step: DecisionStep,
    rule: Rule,
    mine: _Range,
    first: Rule,
    theirs: _Range,
    name: Callable[[Node], str],
) -> Hazard:
    return Hazard(
        step.iri,
        f"this horis:when rule holds for {name(mine.prop)} of ?this only where {mine.text()}, "
        f"within {theirs.text()} of the rule of horis:order {first.order:g} before it, which "
        f"goes to {name(first.next)}: it holds only when that one does, which is taken first, "
        f"so {name(rule.next)} is never taken by it",
        f"give this rule a lower horis:order than {first.order:g}, so that the narrower range "
        "is tried first, or make it test the range it was meant to",
    )


def _range(rule: Rule) -> _Range | None:
    """What ``rule`` holds for, when it is one of the simple forms: the pattern's triples
    with one ``?this :p ?v``, and a FILTER of bounds on ``?v`` ANDed, or no FILTER (any value
    of ``?v``, the one variable of its triples read once, so); None for any other."""
    top = rule.requires.select.algebra.get("p")
    top = top.p if getattr(top, "name", None) == "Project" else top
    filtered = getattr(top, "name", None) == "Filter"
    triples = plain_triples(top.p if filtered else top)
    if not triples:
        return None
    bounds = _bounds(top.expr) if filtered else []
    if bounds is None:
        return None
    objects = [o for _, _, o in triples]
    compared = {v for v, _, _ in bounds} if filtered else {o for o in objects if _once(o, triples)}
    if len(compared) != 1:
        return None
    var = compared.pop()
    reads = [t for t in triples if var in t]
    if len(reads) != 1:
        return None
    s, prop, o = reads[0]
    if s != _THIS or o != var or not isinstance(prop, URIRef) or prop == RDF.type:
        return None
    low: _Bound | None = None
    high: _Bound | None = None
    for _, op, bound in bounds:
        if op.startswith(">"):
            low = bound if low is None or _tighter(bound, low, 1) else low
        else:
            high = bound if high is None or _tighter(bound, high, -1) else high
    renamed = frozenset((a, b, _PLACE if c == var else c) for a, b, c in triples)
    return _Range(renamed, prop, str(var), low, high)


def _once(term: Any, triples: list[tuple[Any, Any, Any]]) -> bool:
    """Whether ``term`` is a variable other than ?this written once in ``triples``."""
    if not isinstance(term, Variable) or term == _THIS:
        return False
    return sum(term in t for t in triples) == 1


def _bounds(expr: Any) -> list[tuple[Variable, str, _Bound]] | None:
    """``expr`` as bounds ``(?v, op, number)`` that must all hold, ``op`` one of ``>``,
    ``>=``, ``<``, ``<=`` read with ``?v`` on the left; None for any other expression."""
    name = getattr(expr, "name", None)
    if name == "ConditionalAndExpression":
        found: list[tuple[Variable, str, _Bound]] = []
        for part in [expr.expr, *(expr.other or ())]:
            more = _bounds(part)
            if more is None:
                return None
            found += more
        return found
    if name != "RelationalExpression" or expr.op not in _FLIP:
        return None
    left, op, right = expr.expr, str(expr.op), expr.other
    if isinstance(right, Variable):
        left, op, right = right, _FLIP[op], left
    number = _number(right, strict=op in (">", "<"))
    if not isinstance(left, Variable) or number is None:
        return None
    return [(left, op, number)]


def _number(term: Any, *, strict: bool) -> _Bound | None:
    """A numeric literal, or one negated (``-5.5``), as a bound; None for anything else."""
    found = numeric_literal(term)
    return None if found is None else _Bound(found[0], strict, found[1])
