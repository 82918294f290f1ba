"""A wait's ``horis:until`` or a decision's rule that holds whatever the world holds.

Why: ``:ManagerReview horis:until "OPTIONAL { ?this :managerApproved ?ok }"`` (meant: read
the manager's answer) held the moment it was reached — an ``OPTIONAL`` never fails — so no
expense waited for the manager, and the payout went ahead for the one the audit flagged;
the same ``OPTIONAL { ?this :auditScore ?s . FILTER (?s >= 80) }`` as a rule sent every
expense to the payout, and the rules after it and ``horis:otherwise`` were never taken. The
definitions validated.

Only a pattern that names ?this is judged (one that does not is said by the focus checks),
and only one with nothing in it that can fail (:func:`~._term_kinds.always_holds`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from rdflib import URIRef
from rdflib.term import Node

from ._hazards import Hazard
from ._model import DecisionStep, Rule, Step, WaitStep
from ._term_kinds import always_holds
from ._vocab import HORIS

__all__ = ["vacuous_rules", "vacuous_waits"]


def vacuous_waits(steps: Mapping[URIRef, Step], name: Callable[[Node], str]) -> Iterator[Hazard]:
    """A warning at each wait whose ``horis:until`` holds whatever the world holds."""
    for wait in sorted(steps.values(), key=lambda s: str(s.iri)):
        if not isinstance(wait, WaitStep) or wait.until is None:
            continue
        if "this" not in wait.until.variables or not always_holds(wait.until.select.algebra):
            continue
        yield Hazard(
            wait.iri,
            "horis:until holds whatever the world holds (an OPTIONAL never fails, and nothing "
            "else in it can): the wait never waits, and every instance goes straight on"
            + (f" to {name(wait.next)}" if wait.next is not None else ""),
            "write what the answer must be outside the OPTIONAL, e.g. horis:until "
            '"?this :approved true ."',
            HORIS.until,
        )


def vacuous_rules(
    steps: Mapping[URIRef, Step], name: Callable[[Node], str]
) -> Iterator[tuple[DecisionStep, Rule, Hazard]]:
    """A warning at each decision rule whose ``horis:requires`` holds whatever the world
    holds, with its decision and rule (for the loader to place it at the rule)."""
    for decision in sorted(steps.values(), key=lambda s: str(s.iri)):
        if not isinstance(decision, DecisionStep):
            continue
        for rule in sorted(decision.rules, key=lambda r: r.order):
            pre = rule.requires
            if "this" not in pre.variables or not always_holds(pre.select.algebra):
                continue
            yield (
                decision,
                rule,
                Hazard(
                    decision.iri,
                    "this horis:when rule holds whatever the world holds (an OPTIONAL never "
                    f"fails, and nothing else in it can): every instance goes to "
                    f"{name(rule.next)}, and the rules after it and horis:otherwise are never "
                    "taken",
                    "write what must hold outside the OPTIONAL, e.g. "
                    '"?this :score ?s . FILTER (?s >= 80)"',
                ),
            )
            break  # the rules after it are never tried
