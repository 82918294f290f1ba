"""A domain shape whose ``sh:targetClass`` nothing the world holds is of: it judges nothing.

A shape targeting ``:Server`` where every host the world holds is a ``:Host`` loaded without
a word — the class is declared, so no check of names objects — and the modeler believed the
hosts were constrained: the shape never judged one, and the gate let through what it was
written to refuse. ``validate --world`` reads the world's classes as it streams it
(:mod:`._world_terms`); a shape whose target class, and every subclass of it, the world types
no node with is a warning at its ``sh:targetClass`` line, naming the world's classes it may
have meant.

Only beside a world, and one holding data of the class's ontology: without it, a class may
simply have no data yet. Nor for a class a tool's argument or returned value, or a
workflow's focus, is of: a run brings such nodes (a result the gate judges by the shape, an
event's focus), whatever the world holds now.
"""

from __future__ import annotations

from collections.abc import Iterator, Set

from rdflib import RDF, URIRef
from rdflib.namespace import SH

from ._definitions_model import Definitions
from ._errors import Problem
from ._near_names import closest_term
from ._shacl import deactivated
from ._terms import split_iri

__all__ = ["unused_targets"]

_AUTHORING = "https://w3id.org/horismos/shapes#"
"""The namespace of ``horis-shapes.ttl``'s shapes, which judge definitions, not the world."""

_SHOWN = 4
"""The world's classes a warning names at most."""


def unused_targets(defs: Definitions, typed: Set[str]) -> list[Problem]:
    """A warning for each domain shape's ``sh:targetClass`` that no node of the world
    (``typed``: the IRIs of the classes it types nodes with) nor of the definitions is of,
    through any subclass, and that no tool or workflow brings nodes of. Only where the world
    types some node with a class of its namespace: a world holding no data of an ontology
    loaded beside it (another workflow's) says nothing of that ontology's shapes."""
    g = defs.graph
    world = set(typed) | {str(o) for _, p, o in defs.individuals if p == RDF.type}
    brought = set(_brought(defs))
    targeted: set[URIRef] = {c for c in g.objects(None, SH.targetClass) if isinstance(c, URIRef)}
    out = []
    for shape, cls in sorted(g.subject_objects(SH.targetClass), key=str):
        if (
            not isinstance(shape, URIRef)
            or not isinstance(cls, URIRef)
            or shape.startswith(_AUTHORING)
            or cls in defs.undeclared  # said already: no loaded ontology declares it
            or deactivated(g, shape)
        ):
            continue
        kinds = defs.classes_of(cls)
        if any(str(k) in world for k in kinds) or kinds & brought:
            continue
        ns = split_iri(cls)[0]
        used = sorted(URIRef(c) for c in typed if c.startswith(ns) and len(c) > len(ns))
        if not used:  # the world holds no data of this ontology: the shape is another domain's
            continue
        near = closest_term(cls, used)
        # the classes it may have meant: the nearest in spelling, then those no shape judges
        meant = [near] if near is not None else []
        meant += [
            c
            for c in used
            if c not in meant and not ({c} | defs.superclasses.get(c, frozenset())) & targeted
        ]
        shown = ", ".join(defs.name(c) for c in meant[:_SHOWN]) + (
            f" and {len(meant) - _SHOWN} more" if len(meant) > _SHOWN else ""
        )
        out.append(
            defs._sources.problem(
                "warning",
                shape,
                f"shape {defs.name(shape)} targets {defs.name(cls)}, but no node of the world is "
                f"of {defs.name(cls)} (nor of a subclass of it), and no tool's argument or "
                "result is: the shape never judges anything, so the data it was written to "
                "constrain goes unchecked",
                hint=(f"did you mean {defs.name(near)}? " if near is not None else "")
                + (
                    f"the world's nodes are of {shown}: write sh:targetClass with the class "
                    "of the nodes the shape is to judge"
                    if meant
                    else "write sh:targetClass with the class of the nodes the shape is to "
                    f"judge, or type them {defs.name(cls)} in the world"
                ),
                at=(shape, SH.targetClass, cls),
            )
        )
    return out


def _brought(defs: Definitions) -> Iterator[URIRef]:
    """The classes a run brings nodes of, whatever the world holds: each tool argument's and
    returned node's class, and each workflow's focus type."""
    for tool in defs.tools.values():
        for arg in tool.args:
            if arg.is_class:
                yield arg.type
        if tool.effect is not None:
            for a in tool.effect.asserts:
                if a.is_class and a.type is not None:
                    yield a.type
    for workflow in defs.workflows.values():
        yield workflow.focus_type
