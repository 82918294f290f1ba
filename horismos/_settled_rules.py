"""A decision rule that holds whenever its decision is reached: the rules after it and
``horis:otherwise`` are never taken.

Why: ``horis:when [ horis:order 1 ; horis:requires "?this :assessedAmount ?a" ;
horis:next :PayOut ]`` after the step whose tool writes ``:assessedAmount`` (meant: ``FILTER
(?a > 1000)`` as well) sent every claim to the payout, none to the denial the otherwise
named; so did ``?this a :Claim`` in a workflow for claims. The definitions validated.

Only what is certain is said, as for a wait (:mod:`._held_waits`): the rule must be a plain
basic graph pattern, each triple ``?this :p ?v`` (``?v`` used once) with ``:p`` written on
every way to the decision, or ``?this a C`` with C the horis:focusType of every workflow
that reaches it, a class with no subclass.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping

from rdflib import RDF, URIRef, Variable
from rdflib.term import Node

from ._hazards import Hazard
from ._held_waits import Written, focus_read, plain_triples
from ._model import DecisionStep, Rule, Step, Workflow
from ._vocab import HORIS

__all__ = ["settled_rules"]


def settled_rules(
    steps: Mapping[URIRef, Step],
    workflows: Mapping[URIRef, Workflow],
    written: Written,
    name: Callable[[Node], str],
    classes_of: Callable[[URIRef], Iterable[URIRef]],
) -> Iterator[tuple[DecisionStep, Rule, Hazard]]:
    """Each decision's first rule that always holds there and has rules or an otherwise
    after it, with the warning to give at that rule. ``written``: what every way to a step
    has written (:func:`~._held_waits.written_before`). ``classes_of``: a class and its
    subclasses (a focus of a subclass is typed the focus type only where entailment says
    so: then ``?this a C`` is not certain)."""
    held = written[0]
    focus: dict[URIRef, set[URIRef]] = {}
    for wf in sorted(workflows.values(), key=lambda w: str(w.iri)):
        for s in wf.reachable():
            if isinstance(s, DecisionStep):
                plain = set(classes_of(wf.focus_type)) <= {wf.focus_type}
                focus.setdefault(s.iri, set()).add(wf.focus_type if plain else URIRef(""))
    for iri in sorted(focus, key=str):
        step = steps[iri]
        assert isinstance(step, DecisionStep)
        for i, rule in enumerate(step.rules):
            why = _always(rule, held[iri], focus[iri], name)
            if why is None:
                continue
            after = [name(r.next) for r in step.rules[i + 1 :]]
            if step.otherwise is not None:
                after.append(f"horis:otherwise {name(step.otherwise)}")
            if after:
                yield (
                    step,
                    rule,
                    Hazard(
                        iri,
                        f"this horis:when rule always holds when {name(iri)} is reached ({why}): "
                        f"every instance goes to {name(rule.next)}, and what comes after it "
                        f"({', '.join(after)}) is never taken",
                        "test what tells the cases apart (a value: FILTER (?a > 1000)), or "
                        "make this the horis:otherwise",
                        HORIS.when,
                    ),
                )
            break


def _always(
    rule: Rule, written: set[URIRef], focus: set[URIRef], name: Callable[[Node], str]
) -> str | None:
    """Why ``rule`` always holds, or None when it may not."""
    triples = plain_triples(rule.requires.select.algebra.get("p"))
    if not triples:
        return None
    this = Variable("this")
    objects = [o for _, _, o in triples]
    props, typed = [], []
    for s, p, o in triples:
        if s == this and p == RDF.type and isinstance(o, URIRef) and focus == {o}:
            typed.append(o)
        elif focus_read((s, p, o), objects) and p in written:
            props.append(p)
        else:
            return None
    said = []
    if props:
        said.append(
            "a step before it writes "
            + ", ".join(sorted(name(p) for p in set(props)))
            + " on every way to it"
        )
    if typed:
        said.append(f"every focus is a {name(typed[0])}")
    return "; ".join(said)
