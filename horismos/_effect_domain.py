"""An effect hung on the wrong argument: its subject's class is not the properties' domain.

``horis:subject`` names the argument whose node the effect's triples hang on. Naming the
wrong one (``"queue"`` for ``"patient"`` on a tool taking both) was valid: every call wrote
``:urgent :queuedAt …`` and ``:urgent :queueRef …`` on the acuity level, shared by every
patient, the step completed, and the next step, which looked for ``?this :queueRef``,
blocked — or, with entailment, the acuity level became a ``:Patient``. The ontology says
so: each asserted property's ``rdfs:domain`` is a class the subject's is unrelated to.

A warning (``rdfs:domain`` entails rather than constrains, and a modeller may mean it), at the
``horis:subject``, naming the argument to write when another one's class fits. Declared
domains count: a class, or a union of classes (``rdfs:domain [ owl:unionOf (:Patient
:Nurse) ]``, what an ontology writes for a property two classes share; the subject fits one
of them). A subject class that is a sub- or superclass of the domain fits, so a broader or
narrower typing is never flagged. Other class expressions are not judged. One look-up per
asserted property.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from rdflib import OWL, RDFS, Graph, URIRef
from rdflib.collection import Collection
from rdflib.term import Node

from ._model import Arg, Assertion

__all__ = ["DomainMismatch", "subject_outside_domain"]

_ANY = frozenset({OWL.Thing, RDFS.Resource})

_Domain = tuple[URIRef, ...]
"""A declared domain: the classes a subject may be one of (one, or an ``owl:unionOf``'s)."""


def _domains(g: Graph, prop: URIRef) -> list[_Domain]:
    """``prop``'s declared domains that say something (not ``owl:Thing``)."""
    out: list[_Domain] = []
    for d in g.objects(prop, RDFS.domain):
        classes = (d,) if isinstance(d, URIRef) else _union(g, d)
        if classes and not _ANY.intersection(classes):
            out.append(classes)
    return out


def _union(g: Graph, node: Node) -> _Domain:
    """The classes of ``node``'s ``owl:unionOf`` list when all are named; else none."""
    members = g.value(node, OWL.unionOf)
    if members is None:
        return ()
    classes = [c for c in Collection(g, members) if isinstance(c, URIRef)]
    return tuple(classes) if len(classes) == len(Collection(g, members)) else ()


@dataclass(frozen=True)
class DomainMismatch:
    """The warning's words for an effect hung on the wrong argument; the loader places it at the
    ``horis:subject``, which this module cannot locate."""

    message: str
    hint: str


def subject_outside_domain(
    g: Graph,
    subject: Arg,
    args: Iterable[Arg],
    asserts: Iterable[Assertion],
    subclasses: Mapping[URIRef, frozenset[URIRef]],
    name: Callable[[URIRef], str],
) -> DomainMismatch | None:
    """The mismatch when ``subject``'s class is unrelated to the domain of an asserted
    property; ``subclasses`` maps a class to itself and its subclasses."""

    def related(cls: URIRef, domain: _Domain) -> bool:
        return any(
            cls in subclasses.get(d, (d,)) or d in subclasses.get(cls, (cls,)) for d in domain
        )

    def said(domain: _Domain) -> str:
        return " or ".join(name(d) for d in domain)

    domains: dict[URIRef, list[_Domain]] = {}
    for a in asserts:
        if ds := _domains(g, a.property):
            domains[a.property] = ds
    off = sorted(
        (p for p, ds in domains.items() if not all(related(subject.type, d) for d in ds)), key=str
    )
    if not off:
        return None
    wanted = sorted({d for p in off for d in domains[p]}, key=str)
    fits = [
        a.name
        for a in args
        if a.is_class
        and a.name != subject.name
        and all(related(a.type, d) for ds in domains.values() for d in ds)
    ]
    props = ", ".join(name(p) for p in off)
    return DomainMismatch(
        f'horis:subject "{subject.name}" hangs the effect on a node of {name(subject.type)}, '
        f"but {props} {'has' if len(off) == 1 else 'have'} rdfs:domain "
        f"{' and '.join(said(d) for d in wanted)}: every call would write "
        f"{'it' if len(off) == 1 else 'them'} on the {subject.name} node",
        f'write horis:subject "{fits[0]}", the argument of {said(domains[off[0]][0])}'
        if len(fits) == 1
        else f"name the argument whose node {props} describe"
        + (f" ({', '.join(repr(f) for f in fits)})" if fits else "")
        + ", or correct the property's rdfs:domain",
    )
