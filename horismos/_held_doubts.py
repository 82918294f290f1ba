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
there yet) and a catalog call being made (``horis:status horis:Running``) are not doubts.
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

__all__ = ["HeldDoubt", "held_doubts"]


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

    def said(self, name: Callable[[Node], str], tool: Tool | None) -> str:
        """One line: what is held, since when, and the command that clears it once checked
        (its ``--args`` written out when the tool's definition is at hand)."""
        shown = tool.name if tool is not None else name(self.tool)
        given = None
        if tool is not None:
            for key in _keys(tool, self.args):
                given = reconcile_args(tool, key, self.args, name)
                break
        at = f" at {name(self.step)}" if self.step is not None else ""
        clear = f"`horismos tools reconcile {shown} …"
        clear += f" --args {given}`" if given else f"` (arguments {self.args})"
        return (
            f"call of {shown}{at} held in doubt since {self.started[:19] or '(not kept)'}: "
            f"once checked, {clear}"
        )


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
        f"""SELECT ?d ?i ?tool ?step ?started ?args WHERE {{ GRAPH <{INSTANCES}> {{
            ?d a horis:StepExecution ; horis:instance ?i ; horis:tool ?tool .
            FILTER (STRSTARTS(STR(?d), "{DOUBT}"))
            FILTER NOT EXISTS {{ ?d horis:status ?running }}
            OPTIONAL {{ ?d horis:step ?step }}
            OPTIONAL {{ ?d prov:startedAtTime ?started }}
            OPTIONAL {{ ?d rdfs:comment ?args }} }} }}""",
        {},
        {"horis": NS, "prov": str(PROV), "rdfs": str(RDFS)},
    ):
        instance = cast(URIRef, r["i"])
        step = r.get("step")
        found.setdefault(instance, []).append(
            HeldDoubt(
                instance,
                cast(URIRef, r["tool"]),
                step if isinstance(step, URIRef) else None,
                str(r.get("started", "")),
                str(r.get("args", "[]")),
            )
        )
    for doubts in found.values():
        doubts.sort(key=lambda d: d.started)
    return found
