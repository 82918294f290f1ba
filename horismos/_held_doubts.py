"""The calls held in doubt now, as an operator lists them.

A call of a tool that is not idempotent that was sent and whose outcome never landed is kept
at its doubt node (:mod:`._intents`) until ``horismos tools reconcile`` clears it, and every
lane refuses further calls of that tool on that subject meanwhile. When the gate rejected
what the tool answered and the step went on by ``horis:onError``, the instance completed and
``horismos instances`` listed it ``completed -``: a reviewer asking "is anything held in
doubt, and whose call was it?" had no command that said so, only the run's output (gone with
its process) and the next run's refusal. This module reads them back, for ``instances`` to
show on the instance whose call it was, as :mod:`._reconciled` reads the calls cleared.

Only the doubt nodes are read (found by their type in the instances graph, the few there
are), never the world; a step's hold on a node while its call is in flight (no tool named
there yet) is not a doubt. A catalog call's intent says it is being made (``horis:status
horis:Running``) whether its process lives or was killed mid-call: it is read too, marked
``in_flight``, for ``instances`` to list beside the instances (a ``tools call`` killed
mid-call held its tool on its subject, and ``instances`` said "no instances in this world").
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

from rdflib import RDFS, URIRef
from rdflib.term import Node

from ._intents import doubt_key, reconcile_args
from ._model import Tool
from ._stores import Store
from ._stores.base import DOUBT, INSTANCES
from ._vocab import NS, PROV

__all__ = ["CALL", "HeldDoubt", "held_doubts"]

CALL = "urn:horismos:call:"
"""What a catalog call's IRI starts with (``Runner.call_tool``'s)."""


@dataclass(frozen=True)
class HeldDoubt:
    """One call held in doubt: the ``instance`` (or ``urn:horismos:call:…``) that made it,
    its ``tool``, the ``step`` it was made at (None for a catalog call's), when it had
    ``started`` (``""`` when not kept), its ``args`` as the trace writes them."""

    instance: URIRef
    tool: URIRef
    step: URIRef | None
    started: str
    args: str
    in_flight: bool = False
    """A catalog call whose intent still says it is being made: its process was killed
    mid-call (or, on a world other processes share, is making it now)."""
    started_by: str | None = None
    """A catalog call's: the process that made it, ``lane@host:pid`` (None when its intent
    recorded none: made before it was, or a step's, whose instance says it)."""

    @property
    def catalog_call(self) -> bool:
        """Made by ``tools call`` (or a ``serve`` tool call), not by a workflow's step."""
        return str(self.instance).startswith(CALL)

    def said(self, name: Callable[[Node], str], tool: Tool | None, shared: bool = True) -> str:
        """One line: what is held, since when, and the command that clears it once checked
        (its ``--args`` written out when the tool's definition is at hand). ``shared``: the
        store is one other processes share (``sparql:``), where a catalog call being made may
        be live; any other opens in one process at a time, so the one that made it stopped."""
        shown = tool.name if tool is not None else name(self.tool)
        given = None
        if tool is not None:
            for key in _keys(tool, self.args):
                given = reconcile_args(tool, key, self.args, name)
                break
        at = f" at {name(self.step)}" if self.step is not None else ""
        clear = f"`horismos tools reconcile {shown} …"
        clear += f" --args {given}`" if given else f"` (arguments {self.args})"
        since = self.started[:19] or "(not kept)"
        if self.in_flight and not shared:  # none other has the store open: its process stopped
            return (
                f"call of {shown} (horismos tools call) held in doubt since {since}: its "
                "process stopped mid-call (none other has this store open), so it may have "
                f"acted; once checked, {clear}"
            )
        if self.in_flight:  # its intent says it is being made: nobody can, once it stopped
            return (
                f"call of {shown} (horismos tools call) being made since {since}, or its "
                "process stopped mid-call and it is held in doubt: once that process has "
                f"stopped and the call is checked, {clear}"
            )
        return f"call of {shown}{at} held in doubt since {since}: once checked, {clear}"


def _keys(tool: Tool, args: str) -> list[Node]:
    """The doubt keys of the recorded calls ``args`` (none when they cannot be read)."""
    try:
        calls = json.loads(args)
    except ValueError:
        return []
    return [
        doubt_key(tool, c)
        for c in (calls if isinstance(calls, list) else [calls])
        if isinstance(c, dict)
    ]


def held_doubts(store: Store) -> dict[URIRef, list[HeldDoubt]]:
    """The calls held in doubt now, by the instance (or catalog call) that made them, oldest
    first. One query over the doubt nodes, however many instances are listed."""
    found: dict[URIRef, list[HeldDoubt]] = {}
    for r in store.select(
        f"""SELECT ?d ?i ?tool ?step ?started ?args ?running ?by WHERE {{
            GRAPH <{INSTANCES}> {{
            ?d a horis:StepExecution ; horis:instance ?i ; horis:tool ?tool .
            FILTER (STRSTARTS(STR(?d), "{DOUBT}"))
            OPTIONAL {{ ?d horis:status ?running }}
            OPTIONAL {{ ?d horis:startedBy ?by }}
            OPTIONAL {{ ?d horis:step ?step }}
            OPTIONAL {{ ?d prov:startedAtTime ?started }}
            OPTIONAL {{ ?d rdfs:comment ?args }} }} }}""",
        {},
        {"horis": NS, "prov": str(PROV), "rdfs": str(RDFS)},
    ):
        instance = cast(URIRef, r["i"])
        if "running" in r and not str(instance).startswith(CALL):
            continue  # a step's call in flight: not a doubt (only a catalog call says it so)
        step = r.get("step")
        found.setdefault(instance, []).append(
            HeldDoubt(
                instance,
                cast(URIRef, r["tool"]),
                # a catalog call's intent names the call as its step: it has no other
                step if isinstance(step, URIRef) and step != instance else None,
                str(r.get("started", "")),
                str(r.get("args", "[]")),
                in_flight="running" in r,
                started_by=str(r["by"]) if "by" in r else None,
            )
        )
    for doubts in found.values():
        doubts.sort(key=lambda d: d.started)
    return found
