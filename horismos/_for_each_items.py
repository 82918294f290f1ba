"""Where a ``horis:forEach`` step's items come from, and whether anything gives them.

A forEach step calls its tool once per solution of its ``horis:requires``: the items are the
values of the variables that give its tool's arguments (``?line`` of ``?this :hasLine
?line``). When no tool writes the property that reaches them and the world holds no
statement of it (the world's orders list their lines under ``:line``), the step has no
solution for any instance: the run found it out at the step, every instance blocked there.
The property is noted here, with the warning to give, and ``validate --world`` (and ``run``
before its first step) says it when the world holds no statement of it
(:attr:`~._definitions_model.Definitions.unwritten`); of no world nothing is said, since the
world's data may well bring it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import cast

from rdflib import RDF, URIRef
from rdflib.term import Variable

from ._define_patterns import PatternReading
from ._model import ActionStep, ProposalStep, WaitStep
from ._preconditions import group_triples
from ._term_checks import written_needle
from ._term_kinds import algebra_triples
from ._vocab import HORIS

__all__ = ["ForEachItems"]


class ForEachItems(PatternReading):
    """The check that a ``horis:forEach`` step's items come from something."""

    def check_for_each_items(self, widen: Callable[[URIRef], Iterable[URIRef]]) -> None:
        """For each ``horis:forEach`` step, each property its pattern needs (outside
        ``OPTIONAL``, ``UNION`` and negations) to reach a variable that gives its tool an
        argument, other than ``?this``, that no tool's effect writes (nor entails: ``widen``),
        no loaded file states and no wait's ``horis:until`` reads (an answer's facts may give
        it): kept in :attr:`Definitions.unwritten` with its warning, at the pattern's line
        that names it. Read once, at load; nothing of it is on the run's step path."""
        written = {  # a tool found wrong (its timeout) still writes what its effect says
            x
            for t in self.writers()
            if t.effect is not None
            for a in t.effect.asserts
            for x in (a.property, *widen(a.property))
        }
        answered = {
            p
            for s in self.defs.steps.values()
            if isinstance(s, WaitStep) and s.until is not None
            for _, p, _ in algebra_triples(s.until.select.algebra)
        }
        for step in sorted(self.defs.steps.values(), key=lambda s: str(s.iri)):
            if not isinstance(step, ActionStep) or not step.for_each or step.tool is None:
                continue
            pre = step.requires
            if pre is None:
                continue
            items = step.arg_vars - {"this"}
            said: set[URIRef] = set()
            for s, p, o in group_triples(pre.select.algebra, every=True):
                if (
                    not isinstance(p, URIRef)
                    or p == RDF.type
                    or p in said
                    or p in written
                    or p in answered
                    or str(p).startswith(str(HORIS))
                    or (None, p, None) in self.g
                ):
                    continue
                item = next(
                    (str(v) for v in (o, s) if isinstance(v, Variable) and str(v) in items), None
                )
                if item is None:
                    continue
                said.add(p)
                name = self.n(p)
                self.defs.unwritten.setdefault(p, []).append(
                    self.placed_in_text(
                        "warning",
                        written_needle(p) or re.escape(name),
                        step.iri,
                        f"horis:forEach calls {self.n(step.tool.iri)} once per ?{item}, which the "
                        f"pattern reaches through {name}; no tool's effect writes {name} and "
                        "the world holds no statement of it, so the step has no item for any "
                        "instance, and every instance stops there, blocked",
                        f"load the data that holds {name}, write in the pattern the property "
                        "the world's data gives them by, or have a step before it write "
                        f"{name}",
                        (step.iri, HORIS.requires),
                    )
                )
        self.note_unproposed(written, answered)

    def note_unproposed(self, written: set[URIRef], answered: set[URIRef]) -> None:
        """For each ProposalStep, each property its ``horis:candidates`` query needs (outside
        ``OPTIONAL``, ``UNION`` and negations) to reach its options (``horis:as``) that no
        tool's effect writes (``written``), no loaded file states and no wait's until reads
        (``answered``): kept in :attr:`Definitions.unwritten`, said as the forEach items
        are, given a world that holds no statement of it. Why: ``?option a :Runbook ;
        :appliesTo ?svc`` where the world's runbooks say ``:forService`` gave no candidate
        for any incident, and every instance went to the fallback, or stopped blocked."""
        for owner, cands, algebra in self.queries:
            step = self.defs.steps.get(cast(URIRef, owner))
            if not isinstance(step, ProposalStep):
                continue
            option = Variable(step.as_var)
            said: set[URIRef] = set()
            for s, p, o in group_triples(algebra, every=True):
                if (
                    not isinstance(p, URIRef)
                    or p == RDF.type
                    or p in said
                    or p in written
                    or p in answered
                    or option not in (s, o)
                    or str(p).startswith(str(HORIS))
                    or (None, p, None) in self.g
                ):
                    continue
                said.add(p)
                name = self.n(p)
                then = (
                    f"goes to its horis:fallback {self.n(step.fallback)}"
                    if step.fallback is not None
                    else "stops there, blocked"
                )
                self.defs.unwritten.setdefault(p, []).append(
                    self.placed_in_text(
                        "warning",
                        written_needle(p) or re.escape(name),
                        step.iri,
                        f"the horis:candidates query reaches ?{step.as_var} through {name}; no "
                        f"tool's effect writes {name} and the world holds no statement of it, "
                        f"so the proposal has no option for any instance, and every instance "
                        f"{then}",
                        f"load the data that holds {name}, or write in the query the property "
                        "the world's data gives the options by",
                        (cands, HORIS.query),
                    )
                )
