"""An effect hung on the wrong argument: its subject's class is not the properties' domain.

``horis:subject`` names the argument whose node the effect's triples hang on. Naming the
wrong one (``"queue"`` for ``"patient"`` on a tool taking both) was valid: every call wrote
``:urgent :queuedAt …`` and ``:urgent :queueRef …`` on the acuity level, shared by every
patient, the step completed, and the next step, which looked for ``?this :queueRef``,
blocked — or, with entailment, the acuity level became a ``:Patient``. The ontology says
so: each asserted property's ``rdfs:domain`` is a class the subject's is unrelated to.

A warning (``rdfs:domain`` entails rather than constrains, and a modeller may mean it), at the
``horis:subject``, naming the argument to write when another one's class fits. Only declared
(IRI) domains count, and a subject class that is a sub- or superclass of the domain fits, so
a broader or narrower typing is never flagged. One look-up per asserted property.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from rdflib import OWL, RDFS, Graph, URIRef

from ._model import Arg, Assertion

__all__ = ["DomainMismatch", "subject_outside_domain"]

_ANY = frozenset({OWL.Thing, RDFS.Resource})


@dataclass(frozen=True)
class DomainMismatch:
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

    def related(cls: URIRef, domain: URIRef) -> bool:
        return cls in subclasses.get(domain, (domain,)) or domain in subclasses.get(cls, (cls,))

    domains: dict[URIRef, list[URIRef]] = {}
    for a in asserts:
        ds = [d for d in g.objects(a.property, RDFS.domain) if isinstance(d, URIRef)]
        ds = [d for d in ds if d not in _ANY]
        if ds:
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
        f"{' and '.join(name(d) for d in wanted)}: every call would write "
        f"{'it' if len(off) == 1 else 'them'} on the {subject.name} node",
        f'write horis:subject "{fits[0]}", the argument of {name(domains[off[0]][0])}'
        if len(fits) == 1
        else f"name the argument whose node {props} describe"
        + (f" ({', '.join(repr(f) for f in fits)})" if fits else "")
        + ", or correct the property's rdfs:domain",
    )
