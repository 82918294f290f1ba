"""Intents: a non-idempotent tool's call is announced in the instance state before it is made.

A process can die between calling a tool and committing what it returned. For an idempotent
tool that is harmless: the resumed instance calls it again. For any other the call may already
have acted (a ticket issued, a payment sent), so it must not be made twice. Hence:

1. before the call, the runner commits an *intent* into the instance state graph — a
   ``horis:StepExecution`` with its step, tool, arguments and start time and no end — guarded
   by the instance's ``horis:version``;
2. the step's final commit (effects and new state, or the error) removes it in the same
   transaction;
3. a resumed instance that finds an intent at its current step therefore knows a call was in
   flight when the process stopped: it does not call again, and the step fails with
   :class:`~horismos.OutcomeUnknown`, taking ``horis:onError`` (or failing the instance) so an
   operator can find out what happened and reconcile.

Intents live in ``urn:horismos:instances`` with the rest of the state, so a trace's snapshot
holds one when a run starts from a crashed instance, and replay decides the same way.

A catalog call (``horismos tools call``, ``serve``) has no instance to resume, and the next call
of the same tool on the same subject is what would act twice: a person or an agent calling
again after a crash or a timeout. So a call's intent is kept at a node named after the tool and
the subject (:func:`call_intent_node`), the key its claim holds on a shared world too. It goes
with the call's commit as a step's does, and stays when the process stops mid-call or the
outcome is unknown (sent, never answered): the next call there is refused until an operator,
having checked, clears it (``horismos tools reconcile``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rdflib import RDF, RDFS, Literal, URIRef
from rdflib.term import Node

from ._errors import OutcomeUnknown
from ._stores import Store
from ._stores.base import Quad
from ._vocab import HORIS, NS, PROV
from ._world import INSTANCES

__all__ = ["Intent", "announce", "call_intent_node", "open_intent", "read_intent"]

# rdflib answers RDF.type, PROV.x and the like through a metaclass __getattr__ on each use
_TYPE, _COMMENT, _STEP_EXECUTION = RDF.type, RDFS.comment, HORIS.StepExecution
_ACTIVITY, _STARTED = PROV.Activity, PROV.startedAtTime


@dataclass(frozen=True)
class Intent:
    """A call announced for ``step`` of an instance, as stored."""

    instance: URIRef
    step: URIRef
    tool: URIRef
    started: str
    args: str
    quads: tuple[Quad, ...]

    def unknown(self, name: str, step_name: str) -> OutcomeUnknown:
        return OutcomeUnknown(
            f"{name} was called at {step_name} (started {self.started}, arguments "
            f"{self.args}) and the process stopped before its result was committed. It is not "
            "idempotent, so it is not called again: check with the system it acts on whether "
            "the call took effect, and record the outcome in the world (horis:onError is "
            "where the workflow goes on from)",
            step=str(self.step),
            tool=str(self.tool),
        )


def _node(instance: URIRef) -> URIRef:
    return URIRef(f"{instance}:intent")


def call_intent_node(tool: URIRef, key: Node) -> URIRef:
    """Where a catalog call of ``tool`` on ``key`` (its subject, else the tool) keeps its
    intent: the same node for every call there, so the next one finds it."""
    digest = hashlib.sha256(f"{tool}\n{key.n3()}".encode()).hexdigest()[:32]
    return URIRef(f"urn:horismos:call-intent:{digest}")


def announce(
    instance: URIRef,
    step: URIRef,
    tool: URIRef,
    started: Literal,
    args: Sequence[dict[str, Any]],
    node: URIRef | None = None,
) -> Intent:
    """The intent to call ``tool`` at ``step`` with ``args`` (as the trace shows them), kept
    at the instance's intent node or at ``node``."""
    node = node or _node(instance)
    text = json.dumps(list(args), sort_keys=True, ensure_ascii=False)
    triples = [
        (node, _TYPE, _STEP_EXECUTION),
        (node, _TYPE, _ACTIVITY),
        (node, HORIS.instance, instance),
        (node, HORIS.step, step),
        (node, HORIS.tool, tool),
        (node, _STARTED, started),
        (node, _COMMENT, Literal(text)),
    ]
    return Intent(
        instance, step, tool, str(started), text, tuple((s, p, o, INSTANCES) for s, p, o in triples)
    )


def open_intent(store: Store, instance: URIRef) -> Intent | None:
    """The intent an instance left when its process stopped mid-call, if any."""
    return read_intent(store, _node(instance), instance)


def read_intent(store: Store, node: URIRef, instance: URIRef | None = None) -> Intent | None:
    """The intent stored at ``node``, if any (its instance as stored, unless given)."""
    if next(iter(store.objects(node, HORIS.step)), None) is None:  # the usual, cheap answer
        return None
    rows = store.select(
        f"SELECT ?p ?o WHERE {{ GRAPH <{INSTANCES}> {{ ?n ?p ?o }} }}", {"n": node}, {"horis": NS}
    )
    if not rows:
        return None
    values = {r["p"]: r["o"] for r in rows}
    quads = tuple((node, r["p"], r["o"], INSTANCES) for r in rows)
    return Intent(
        instance or values.get(HORIS.instance),  # type: ignore[arg-type]
        values.get(HORIS.step),  # type: ignore[arg-type]
        values.get(HORIS.tool),  # type: ignore[arg-type]
        str(values.get(PROV.startedAtTime, "")),
        str(values.get(RDFS.comment, "[]")),
        quads,
    )
