"""The individuals written with the definitions, placed in the world they run against.

An ontology often declares individuals as well as classes: an enumeration (``:SEV1 a
:Severity``), a code list, a default owner. Preconditions, argument types and the gate read
the world, and a world given on its own (``--world``, a persistent store) does not hold the
definitions; without this, ``?sev a :Severity`` never matches and the gate rejects every
``:SEV1`` as "not a :Severity".

So when a world is opened for a run, the definitions' individuals are placed in it, in a named
graph of their own (:data:`DEFINITIONS`), and kept equal to them: a run whose definitions are
unchanged writes nothing; one whose definitions changed replaces what changed, in one commit.
The cost is the size of the individuals, never the size of the world or of the ontology.

An individual is a named node typed with a class that is not vocabulary (RDF, RDFS, OWL, SHACL,
XSD, ``horis:``); all its statements come with it except ``horis:`` ones and those whose value
is a blank node (a blank node has no name to keep it equal to across runs). Class and property
declarations (the TBox) stay out: the runtime reads them from the definitions.
"""

from __future__ import annotations

from rdflib import OWL, RDF, RDFS, SH, XSD, BNode, Graph, URIRef
from rdflib.term import Node

from ._stores import Change
from ._stores.ox_terms import canonical
from ._vocab import NS
from ._world import World

__all__ = ["DEFINITIONS", "individuals", "place_individuals"]

DEFINITIONS = URIRef("urn:horismos:definitions")
"""The named graph that holds the definitions' individuals in a world."""

_VOCABULARY = (str(RDF), str(RDFS), str(OWL), str(SH), str(XSD), NS)

Triple = tuple[Node, Node, Node]


def individuals(graph: Graph) -> frozenset[Triple]:
    """The statements about the individuals declared in ``graph`` (see the module docstring)."""
    named = {
        s
        for s, c in graph.subject_objects(RDF.type)
        if isinstance(s, URIRef)
        and isinstance(c, URIRef)
        and not str(c).startswith(_VOCABULARY)
        and not str(s).startswith(NS)
    }
    named -= {
        s for s in named for c in graph.objects(s, RDF.type) if str(c).startswith(NS)
    }  # tools, steps, workflows: definitions, not data
    found = [
        (s, p, o, None)
        for s in named
        for p, o in graph.predicate_objects(s)
        if not str(p).startswith(NS) and not isinstance(o, BNode)
    ]
    return frozenset((s, p, o) for s, p, o, _ in canonical(found))  # as every store keeps them


def place_individuals(triples: frozenset[Triple], world: World) -> Change | None:
    """Make the world's :data:`DEFINITIONS` graph hold exactly ``triples``; the change that
    made it so (None: it held them), so a command refused afterwards can take it back."""
    rows = world.store.select(
        f"SELECT ?s ?p ?o WHERE {{ GRAPH <{DEFINITIONS}> {{ ?s ?p ?o }} }}", {}, {}
    )
    held = {(r["s"], r["p"], r["o"]) for r in rows}
    add = triples - held
    remove = held - triples
    if not add and not remove:
        return None
    change = Change(
        add=[(*t, DEFINITIONS) for t in sorted(add, key=_key)],
        remove=[(*t, DEFINITIONS) for t in sorted(remove, key=_key)],
    )
    world.commit(change)
    return change


def _key(t: Triple) -> tuple[str, ...]:
    return tuple(x.n3() for x in t)
