"""The ``horis:`` vocabulary and authoring shapes shipped in the package, read once.

The loader checks what authors write against them: which kinds of node each ``horis:``
property belongs on, how a kind of node is said in a sentence."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import cache
from importlib import resources
from typing import cast

import pyoxigraph as ox
from rdflib import RDFS, SH, Graph, URIRef
from rdflib.term import Node

from ._model import ActionStep, DecisionStep, ProposalStep, WaitStep
from ._shacl import CompiledShape
from ._shacl_graph import compiled_all
from ._stores.ox_terms import from_ox
from ._vocab import HORIS, NS

__all__ = [
    "STEP_CLASSES",
    "authoring_shapes",
    "compiled_authoring_shapes",
    "kind_names",
    "property_homes",
    "taken_inside",
    "vocabulary_graph",
]


STEP_CLASSES = {
    HORIS.ActionStep: ActionStep,
    HORIS.DecisionStep: DecisionStep,
    HORIS.ProposalStep: ProposalStep,
    HORIS.WaitStep: WaitStep,
}


@cache
def vocabulary_graph() -> Graph:
    """The shipped ``horis:`` ontology."""
    return _package_graph("horis.ttl")


@cache
def authoring_shapes() -> Graph | None:
    """The shipped shapes that check what authors write, read once; None when the file is not
    there, so the checks they drive are skipped rather than every load failing."""
    try:
        return _package_graph("horis-shapes.ttl")
    except FileNotFoundError:
        return None


@cache
def compiled_authoring_shapes() -> Mapping[Node, CompiledShape] | None:
    """The authoring shapes compiled (:func:`~._shacl_graph.compiled_all`), once: ~12 ms."""
    shapes = authoring_shapes()
    return None if shapes is None else compiled_all(shapes)


_AUTHORED = (
    HORIS.Tool,
    HORIS.Workflow,
    *STEP_CLASSES,
    HORIS.McpServer,
    HORIS.CommandBinding,
    HORIS.Adapter,
)
"""The kinds of node authors declare, each of which takes its own horis: properties."""


@cache
def property_homes() -> dict[URIRef, frozenset[URIRef]]:
    """The kinds of node (:data:`_AUTHORED`) each ``horis:`` property is written on, read
    from the vocabulary (its ``rdfs:domain``) and the authoring shapes (a shape's
    ``sh:targetClass`` and the ``sh:path`` of its property shapes), ``horis:Step`` standing
    for every step class. A property neither says (``horis:requires``, ``horis:name``) is
    written on several kinds of node and has no entry."""
    homes: dict[URIRef, set[URIRef]] = {}

    def add(prop: Node | None, cls: Node) -> None:
        if not isinstance(prop, URIRef) or not str(prop).startswith(NS):
            return
        kinds = STEP_CLASSES if cls == HORIS.Step else (cls,) if cls in _AUTHORED else ()
        homes.setdefault(prop, set()).update(cast("tuple[URIRef, ...]", kinds))

    for prop, cls in vocabulary_graph().subject_objects(RDFS.domain):
        add(prop, cls)
    shapes = authoring_shapes()
    if shapes is not None:
        for shape, cls in shapes.subject_objects(SH.targetClass):
            for pshape in shapes.objects(shape, SH.property):
                add(shapes.value(pshape, SH.path), cls)
    return {p: frozenset(k) for p, k in homes.items() if k}


@cache
def taken_inside() -> dict[URIRef, tuple[URIRef, ...]]:
    """The ``horis:`` properties a node written as the value of each ``horis:`` property
    takes (``horis:when [ … ]``: ``horis:next``, ``horis:order`` and ``horis:requires``),
    read from the paths of the authoring shapes that judge its values
    (``sh:targetObjectsOf``), which list every term the loader reads there. The vocabulary
    gives these nodes no class, so no ``rdfs:domain`` says it. What a term the vocabulary
    does not have, written in such a node, is told the place takes: "see
    ontologies/horis.ttl" left the author to find a rule's terms among a hundred."""
    shapes = authoring_shapes()
    if shapes is None:
        return {}
    taken: dict[URIRef, set[URIRef]] = {}
    for shape, prop in shapes.subject_objects(SH.targetObjectsOf):
        for pshape in shapes.objects(shape, SH.property):
            path = shapes.value(pshape, SH.path)
            if isinstance(prop, URIRef) and isinstance(path, URIRef):
                taken.setdefault(prop, set()).add(path)
    return {prop: tuple(sorted(inner, key=str)) for prop, inner in taken.items()}


def _package_graph(name: str) -> Graph:
    """A shipped Turtle file as an rdflib graph, its prefixes bound. Read by Oxigraph's parser,
    the very triples rdflib's gives (tests/test_startup.py) in a quarter of the time: rdflib's
    took ~40 ms of every process that loads definitions, for the two shipped files."""
    res = resources.files("horismos") / "ontology" / name
    if not res.is_file():
        raise FileNotFoundError(name)
    graph = Graph()
    quads = ox.parse(res.read_bytes(), format=ox.RdfFormat.TURTLE)
    graph.addN((from_ox(q.subject), from_ox(q.predicate), from_ox(q.object), graph) for q in quads)
    for prefix, namespace in quads.prefixes.items():
        graph.bind(prefix, namespace)
    return graph


def kind_names(kinds: Iterable[URIRef], name: Callable[[Node], str]) -> str:
    """``a tool``, ``an action step``, ``a step`` (every step kind), ``a tool, a proposal
    step or a wait step``: kinds of node as a sentence says them, by their rdfs:label in the
    vocabulary."""
    kinds = set(kinds)
    if set(STEP_CLASSES) <= kinds:
        kinds = (kinds - set(STEP_CLASSES)) | {HORIS.Step}
    said = []
    for k in sorted(kinds, key=lambda k: (k != HORIS.Tool, str(k))):
        label = str(vocabulary_graph().value(k, RDFS.label) or name(k))
        label = label if label[:2].isupper() else label[:1].lower() + label[1:]
        said.append(("an " if label[:1] in "aeiou" else "a ") + label)
    return " or ".join([", ".join(said[:-1]), said[-1]] if len(said) > 1 else said)
