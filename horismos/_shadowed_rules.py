"""A decision rule written again, word for word, after an earlier rule of the same decision
that goes elsewhere: it holds exactly when the earlier one does, which is always taken first,
so it is never taken.

Why: two ``horis:when`` rules copied from one another, the second meant to test another
value (``FILTER (?a > 1000)`` twice, the second meant ``FILTER (?a < 100)``), sent no claim
to the second rule's step, and the definitions validated. Only patterns that are the same
text, spaces aside, are said: what two different patterns hold is not compared.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from rdflib import URIRef

from ._model import DecisionStep, Rule, Step

__all__ = ["shadowed_rules"]


def shadowed_rules(steps: Mapping[URIRef, Step]) -> Iterator[tuple[DecisionStep, Rule, Rule]]:
    """Each decision's rule, and the earlier rule with the same pattern that shadows it,
    when the two go to different steps."""
    for step in sorted(steps.values(), key=lambda s: str(s.iri)):
        if not isinstance(step, DecisionStep):
            continue
        seen: dict[str, Rule] = {}
        for rule in step.rules:
            text = " ".join(sorted(" ".join(p.text.split()) for p in rule.requires.patterns))
            first = seen.setdefault(text, rule)
            if first is not rule and first.next != rule.next:
                yield step, rule, first
