"""A type test in a pattern that misses the subclasses of its class.

A run follows ``rdfs:subClassOf`` where it checks a class itself: a workflow runs for the
nodes of its focus type or of any subclass, and a class-typed argument takes a node of any
subclass (:meth:`~._definitions.Definitions.classes_of`). A pattern does not: it is matched
against the world, which holds the types its nodes were given and not the class hierarchy
(the definitions' classes stay out of it, :mod:`._individuals`), and ``--entailment`` types
only the focus, the arguments and the values the gate judges. So the rule ``?this a
:LabResult ; :value ?v . FILTER (?v > 6.0)`` of a workflow run for every ``:LabResult``
never held for ``:k1 a :PotassiumResult``: a critical result was filed instead of escalated,
and validate said valid.

A warning wherever a pattern writes ``?x a C`` (or ``rdf:type``) for a class the definitions
give subclasses it does not test ``?x`` with too, naming a few of them: a world may well type
each node with its superclasses too. Where ``?x`` is ``?this`` and the workflow's focus type
is ``C`` or a subclass of it, the test can only refuse a focus the run chose, for a reason
nobody meant, so the way out is to drop it; elsewhere ``?x a/rdfs:subClassOf* C`` follows
the subclasses, where the world holds the ontology's ``rdfs:subClassOf`` statements (a
property path: the store runs such a pattern as a query, :mod:`._patterns` having no plan
for it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from rdflib import RDF, URIRef, Variable
from rdflib.term import Node

from ._term_kinds import algebra_triples

__all__ = ["MissedSubclasses", "missed_subclasses"]

_SHOWN = 3
"""The subclasses a message names; more are said with an ellipsis."""


@dataclass(frozen=True)
class MissedSubclasses:
    """A type test that misses its class's subclasses, in words; the loader locates it at the
    line that writes ``cls`` and warns."""

    cls: URIRef
    """The class the pattern tests, where its line is found."""
    message: str
    hint: str


def missed_subclasses(
    algebra: Any,
    subclasses: Mapping[URIRef, frozenset[URIRef]],
    runs_for: Mapping[URIRef, URIRef],
    pred: str,
    name: Callable[[Node], str],
) -> Iterator[MissedSubclasses]:
    """Each ``?x a C`` of a parsed pattern whose class has subclasses; ``subclasses`` maps a
    class to itself and its subclasses, ``runs_for`` each workflow that reaches the pattern
    (its step's) to its focus type, and ``pred`` is how the pattern is named
    (``horis:requires``)."""
    said: set[tuple[Any, URIRef]] = set()
    tests = [(s, cls) for s, p, cls in algebra_triples(algebra) if p == RDF.type]
    for s, cls in tests:
        if not isinstance(cls, URIRef) or (s, cls) in said:
            continue
        # the classes the pattern tests ?x with itself are no slip: `{ ?x a :Adjuster }
        # UNION { ?x a :Senior }` names the subclass meant, as the hint says to
        named = {c for x, c in tests if x == s}
        missed = subclasses.get(cls, frozenset()) - named
        if not missed:
            continue
        said.add((s, cls))
        subject = f"?{s}" if isinstance(s, Variable) else name(s) if isinstance(s, URIRef) else "[]"
        test, c = f"{subject} a {name(cls)}", name(cls)
        focus = next(
            ((wf, f) for wf, f in sorted(runs_for.items()) if f in subclasses[cls]),
            None,
        )
        if subject != "?this" or focus is None:
            yield MissedSubclasses(
                cls,
                f"{pred}: {test} matches only nodes typed {c} itself, not those typed with a "
                f"subclass ({_some(missed, name)}): a pattern sees the types the world states, "
                "not the rdfs:subClassOf closure, whatever the --entailment",
                f"write {subject} a/rdfs:subClassOf* {c} with the ontology's rdfs:subClassOf "
                "statements in the world (load the ontology there too), or test the subclass "
                "meant",
            )
            continue
        wf, f = focus
        refused = subclasses.get(f, frozenset({f})) - {cls}
        yield MissedSubclasses(
            cls,
            f"{pred}: {test} matches only nodes typed {c} itself, not those typed with a "
            f"subclass ({_some(missed, name)}): a pattern sees the types the world states, not "
            f"the rdfs:subClassOf closure, whatever the --entailment; {name(wf)} runs for every "
            f"{name(f)}, subclasses included, so for a focus typed {_some(refused, name)} the "
            "pattern never holds",
            f"drop {test}: the focus type {name(f)} already makes ?this one"
            + ("" if f == cls else f" (a subclass of {c})"),
        )


def _some(classes: frozenset[URIRef], name: Callable[[Node], str]) -> str:
    """A few of ``classes`` by name, sorted so the message is stable."""
    names = sorted(name(c) for c in classes)
    return ", ".join(names[:_SHOWN]) + (", …" if len(names) > _SHOWN else "")
