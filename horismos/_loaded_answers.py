"""Facts ``horismos load`` brings about the focus of an instance waiting in the store.

Why: ``load`` reads no definitions, so it cannot hold facts to what ``resume --facts`` holds
them to (a property's ``rdfs:range``, a date-time's zone, the domain shapes). A manager's
sign-off loaded as ``:bob :managerSignOff "yes"`` (a string, where the range is
``xsd:boolean``) landed; the wait's ``horis:until ?this :managerSignOff true`` never matched
it, and the wait timed out into an escalation although the manager had said yes. ``load``
says so where a file it loaded names a waiting instance's focus, with the ``resume`` that
checks them.

Read only at ``load``, never on a run's step path: one query for the waiting instances (to
a bound), and each file's subjects only when some wait and the file is small enough to be
facts, not a bulk import.
"""

from __future__ import annotations

import stat
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph as ox
from rdflib import URIRef

from ._stored_instances import short_id
from ._stores import Store
from ._stores.ox_files import parse_file
from ._vocab import NS
from ._world import INSTANCES

__all__ = ["WaitingFocus", "loaded_answers", "waiting_foci"]

_BOUND = 10_000
"""Waiting instances read at most: past it, the load says nothing of the others."""

_FACTS_BYTES = 16 * 1024 * 1024
"""A file past this is a bulk import, not the facts answering a wait: its subjects not read."""


@dataclass(frozen=True)
class WaitingFocus:
    """An instance waiting in the store: its short id and the step it waits at."""

    instance: str
    step: str | None


def waiting_foci(store: Store) -> dict[str, list[WaitingFocus]]:
    """The foci (as IRI strings) of the instances waiting in ``store``, each with its
    instances; empty for a store that holds none."""
    rows = store.select(
        f"""SELECT ?i ?f ?step WHERE {{ GRAPH <{INSTANCES}> {{
            ?i horis:status horis:Waiting ; horis:focus ?f .
            OPTIONAL {{ ?i horis:currentStep ?step }} }} }} LIMIT {_BOUND}""",
        {},
        {"horis": NS},
    )
    foci: dict[str, list[WaitingFocus]] = {}
    for row in rows:
        step = row.get("step")
        foci.setdefault(str(row["f"]), []).append(
            WaitingFocus(short_id(URIRef(str(row["i"]))), str(step) if step else None)
        )
    return foci


def loaded_answers(path: Path, foci: dict[str, list[WaitingFocus]]) -> str | None:
    """What to say of ``path``, just loaded, where it gives facts about a waiting instance's
    focus (see the module's doc); None where it names none, or is too large to be facts."""
    if not foci:
        return None
    mode = path.stat().st_mode
    if not stat.S_ISREG(mode) or path.stat().st_size > _FACTS_BYTES:
        return None
    named: list[str] = []
    for quad in parse_file(path):
        subject = quad.subject
        if (
            isinstance(subject, ox.NamedNode)
            and subject.value in foci
            and subject.value not in named
        ):
            named.append(subject.value)
    if not named:
        return None
    focus = named[0]
    waiting = foci[focus][0]
    at = f" at <{waiting.step}>" if waiting.step else ""
    more = f" (and {len(named) - 1} more waiting foci)" if len(named) > 1 else ""
    return (
        f"warning: {path} gives facts about <{focus}>{more}, whose instance "
        f"{waiting.instance} waits{at}; load reads no definitions, so it did not hold them "
        'to the ranges, time zones and shapes `resume --facts` checks (a "yes" for an '
        "xsd:boolean lands, and a wait for true never matches it) — to answer a wait, give "
        f"the facts to `horismos resume DEFS… --store STORE --instance {waiting.instance} "
        f"--facts {path}`, which refuses such a value before anything lands"
    )
