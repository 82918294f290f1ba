"""Reading an RDF list (``( :a :b )``) from a graph without trusting it to be one.

Its own concept, below every reader of shapes: the shape checks say how a list fails to end,
the effect checks and the slips read a shape's ``sh:in`` through it, and a closed shape's
``sh:ignoredProperties`` is read through it once for the gate's compiler and the authoring
checks alike (:func:`~._shacl_constraints.closed_properties`). The walk never raises (rdflib's
did, on a list whose rest comes back to itself)."""

from __future__ import annotations

from rdflib import RDF, Graph, URIRef
from rdflib.term import Node

__all__ = ["list_head", "list_members", "unended_list"]


def unended_list(g: Graph, head: Node) -> str | None:
    """How the RDF list at ``head`` fails to be one, walking its cells to ``rdf:nil``: a cell
    with no ``rdf:rest`` or two, no ``rdf:first`` or two, a rest that is no cell, a cycle;
    None when it is one. A cell is named by its member (a blank node's label says nothing)."""
    return _list_walk(g, head)[0]


def list_members(g: Graph, head: Node) -> list[Node]:
    """The members of the RDF list at ``head``; none when it is no list (:func:`unended_list`
    says how, and the shape checks say so at its line): rdflib's walk raised on a list whose
    rest comes back to itself, a traceback where validate should have told the line."""
    why, members = _list_walk(g, head)
    return [] if why is not None else members


def _list_walk(g: Graph, head: Node) -> tuple[str | None, list[Node]]:
    """:func:`unended_list`'s why, and the members met on the way (all of them when there is
    no why): one walk answers both."""
    seen: set[Node] = set()
    members: list[Node] = []
    cell = head
    while cell != RDF.nil:
        firsts, rests = list(g.objects(cell, RDF.first)), list(g.objects(cell, RDF.rest))
        shown = (
            cell.n3()
            if isinstance(cell, URIRef) or len(firsts) != 1
            else (f"the cell of {firsts[0].n3()}")
        )
        if cell in seen:
            return f"it comes back to {shown} and never ends", members
        seen.add(cell)
        if len(firsts) != 1:
            return f"the cell {shown} holds {len(firsts)} rdf:first, not one", members
        members.append(firsts[0])
        if len(rests) != 1:
            return f"{shown} has " + (
                "no rdf:rest, so the list never reaches rdf:nil"
                if not rests
                else f"{len(rests)} rdf:rest"
            ), members
        cell = rests[0]
        if cell != RDF.nil and (cell, RDF.first, None) not in g:
            return f"an rdf:rest leads to {cell.n3()}, which is neither a cell nor rdf:nil", members
    return None, members


def list_head(g: Graph, cell: Node) -> Node:
    """The first cell of the RDF list ``cell`` is a cell of: what a shape's ``sh:and``,
    ``sh:or`` or ``sh:xone`` names."""
    head, walked = cell, {cell}
    while (prev := g.value(predicate=RDF.rest, object=head)) is not None and prev not in walked:
        head = prev
        walked.add(head)
    return head
