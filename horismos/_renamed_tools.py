"""Renamed tools: a call left in doubt under a tool's former IRI still holds back its calls.

A call that may have acted is kept at a node named after its tool's IRI and what it acts on
(:func:`~._stores.base.doubt_node`). A modeler who renames the tool — another IRI, the same
``horis:binding`` — while a call of it is in doubt made a tool that node does not hold, and its
next call charged again. So:

1. a call kept in doubt records the binding it was made through
   (:func:`~._intents.binding_mark`), with the whole intent at its doubt node: a step's call
   left in doubt (:func:`~._intents.doubt_marks`), a catalog call's intent. Never with the
   two quads a step holds the node by while it calls (:func:`~._intents.holds`), which every
   call of such a tool writes and removes: a workflow step's normal path writes nothing
   more (a catalog call's intent carries one quad more, written and removed with it);
2. where a lane starts (a run's first call of a tool that is not idempotent, each catalog
   call) one query reads the tools and bindings so recorded (:func:`recorded_bindings`: one
   predicate of the instances graph, as many rows as there are such doubts, whatever the
   size of the world), and :func:`former_names` finds the tools of the current definitions
   bound as a recorded doubt of another IRI was;
3. a call of such a tool requires the node of each former IRI on its subject free too
   (``Change.absent``, in the transaction that puts it at its own), and, held there, fails or
   is refused as under its own name, saying the former IRI and how to clear it
   (:func:`renamed_message`); ``tools reconcile`` takes the former IRI (:func:`former_tool`).

Any other tool bound the same is held so too: the same code, on the same subject. The
bindings are read once a runner, so a doubt left under a former name by a process of the
earlier definitions after a run's first such call holds that run's calls only from its next
run on. Doubts written before bindings were recorded cannot be recognised after a rename:
reconcile them before renaming a tool. A tool whose binding changed and whose IRI stayed is
held at its own node, as before.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from rdflib import URIRef
from rdflib.term import Node

from ._intents import Intent, doubt_key, doubt_keys, doubt_place, earlier_said, reconcile_args
from ._model import Tool
from ._stores import Store
from ._stores.base import doubt_node
from ._vocab import NS
from ._world import INSTANCES

__all__ = [
    "as_former",
    "former_names",
    "former_nodes",
    "former_tool",
    "kept_at",
    "recorded_bindings",
    "renamed_message",
]

_RECORDED = (
    f"SELECT DISTINCT ?tool ?binding WHERE {{ GRAPH <{INSTANCES}> "
    "{ ?n horis:calledBinding ?binding ; horis:tool ?tool } }"
)


def recorded_bindings(store: Store) -> list[tuple[URIRef, str]]:
    """The tools calls in doubt (or being made by the catalog) were kept under, with the
    binding each recorded: answered from the instances graph's index of one predicate."""
    rows = store.select(_RECORDED, {}, {"horis": NS})
    return [
        (tool, str(row["binding"]))
        for row in rows
        if isinstance(tool := row.get("tool"), URIRef) and "binding" in row
    ]


def former_names(
    tools: Iterable[Tool], recorded: Sequence[tuple[URIRef, str]]
) -> dict[URIRef, tuple[URIRef, ...]]:
    """For each tool that is not idempotent and is bound as a call recorded under another IRI
    was, those IRIs: its calls are held at their doubt nodes too."""
    if not recorded:
        return {}
    by_binding: dict[str, list[URIRef]] = {}
    for iri, binding in recorded:
        by_binding.setdefault(binding, []).append(iri)
    found: dict[URIRef, tuple[URIRef, ...]] = {}
    for tool in tools:
        if tool.idempotent:
            continue
        others = tuple(sorted(i for i in by_binding.get(tool.binding, ()) if i != tool.iri))
        if others:
            found[tool.iri] = others
    return found


def former_nodes(
    formers: Sequence[URIRef], tool: Tool, calls: Iterable[Mapping[str, Any]]
) -> list[URIRef]:
    """The doubt nodes, under each of ``formers``, of ``calls`` of ``tool`` (their arguments
    as the trace writes them), on every key such a call was kept at (:func:`doubt_keys`)."""
    keys = dict.fromkeys(key for args in calls for key in doubt_keys(tool, args))
    return [doubt_node(former, key) for key in keys for former in formers]


def as_former(tool: Tool, iri: URIRef) -> Tool:
    """``tool`` as it was named ``iri``: its calls kept at that IRI's doubt nodes."""
    return replace(tool, iri=iri, name=str(iri))


def kept_at(
    tool: Tool, formers: Sequence[URIRef], node: URIRef, calls: Iterable[Mapping[str, Any]]
) -> tuple[URIRef, Node] | None:
    """Under which IRI (``tool``'s own, or one of ``formers``) and on which key one of
    ``calls`` is kept at ``node``; None when at neither."""
    for args in calls:
        key = doubt_key(tool, args)
        for kept in doubt_keys(tool, args):  # today's key, then those versions before kept
            for iri in (tool.iri, *formers):
                if doubt_node(iri, kept) == node:
                    return iri, key
    return None


def renamed_message(
    tool: Tool,
    former: URIRef,
    key: Node,
    name: Callable[[Node], str],
    earlier: Intent | None,
    *,
    persistent: bool,
) -> str:
    """Why a call of ``tool`` on ``key`` is not made while one kept under its former IRI
    ``former`` (the same binding) is in doubt there, and the command that clears it."""
    on, was = doubt_place(key, name), earlier_said(earlier, name)
    given = None if earlier is None else reconcile_args(tool, key, earlier.args, name)
    command = f"horismos tools reconcile {shlex.quote(str(former))} … --args {given or 'JSON'}"
    return (
        f"{tool.name} is not idempotent and may already have acted{on}: a call there made "
        f"under its former name <{former}>{was} was sent and its outcome never landed (it "
        f"had the same binding, {tool.binding}), so further calls of {tool.name}{on} are not "
        "made. Check with the system it acts on whether "
        "that call took effect, record what happened in the world if it did, then clear it "
        f"with `{command}` on the same store"
        + ("" if persistent else " (a world kept in memory clears when its process restarts)")
    )


def former_tool(tools: Mapping[URIRef, Tool], store: Store, iri: URIRef) -> Tool | None:
    """The tool of the current definitions a call recorded in doubt under ``iri`` — a tool
    they no longer have — was made through (bound the same), as it was named then, to
    reconcile that call; None when no call recorded under ``iri`` names a binding of one."""
    bindings = {binding for tool, binding in recorded_bindings(store) if tool == iri}
    bound = sorted(
        (t for t in tools.values() if not t.idempotent and t.binding in bindings),
        key=lambda t: str(t.iri),
    )
    return as_former(bound[0], iri) if bound else None
