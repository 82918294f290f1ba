"""Reading a trace: a timeline for people, PROV-O for machines.

Both read the events as recorded (after :func:`~horismos.read_trace` has checked them); neither
needs the definitions the run used.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, cast

from rdflib import RDF, RDFS, XSD, BNode, Graph, Literal, URIRef
from rdflib.term import Node
from rdflib.util import from_n3

from ._vocab import HORIS, PROV

__all__ = ["prov_graph", "short", "timeline"]

RUNTIME = URIRef("urn:horismos:runtime")
"""The agent a decision step is associated with: the runtime itself decided."""

_STATUS = {
    "completed": HORIS.Completed,
    "blocked": HORIS.Blocked,
    "waiting": HORIS.Waiting,
    "failed": HORIS.Failed,
}


def timeline(events: Iterable[Mapping[str, Any]]) -> Iterator[str]:
    """One line per event worth reading: the run, each instance, each step, the end; each
    given as its event is read."""
    kind = None
    for e in events:
        kind = e.get("type")
        if kind == "header":
            focus = e.get("focus") or []
            yield (
                f"run of {short(e.get('workflow'))} for {len(focus)} focus node(s), "
                f"recorded {e.get('started', '?')} (trace_version "
                f"{e.get('trace_version')})"
            )
            yield f"  world {e.get('world_digest')}"
            yield f"  definitions {e.get('definitions_digest')}"
        elif kind == "instance":
            yield f"instance {short(e.get('instance'))[:8]} for {short(e.get('focus'))}"
        elif kind == "step":
            yield "  " + _step_line(e)
        elif kind == "end":  # ``instances``: how many ended each way
            counts = e.get("instances") or {}
            shown = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
            yield f"end: {e.get('status')} ({shown or 'no instances'})"
            if e.get("world_digest"):
                yield f"  world {e.get('world_digest')}"
        else:
            yield f"{kind} (event {e.get('seq')})"
    if kind is not None and kind != "end":
        yield "no end event: the recording stopped here (its process died, or the file was cut)"


def _step_line(e: Mapping[str, Any]) -> str:
    clock = e.get("clock") or []
    when = _time_of_day(clock[0]) if clock else " " * 12
    took = sum((e.get("timings") or {}).values()) * 1000
    what = short(e.get("step"))
    if e.get("tool"):
        tool = short(e["tool"])
        what += "  " + (
            "; ".join(
                f"{tool}(" + ", ".join(f"{k}={_value(v)}" for k, v in c.items()) + ")"
                for c in e.get("args") or []
            )
            or tool
        )
    status = e.get("status", "?")
    if status == "blocked":
        failing = " ".join(str((e.get("precondition") or {}).get("failing") or "").split())
        verdict = f"blocked: {failing}"
    elif e.get("kind") == "DecisionStep":
        verdict = f"{status} -> {short(e.get('next')) if e.get('next') else 'end'}"
    elif e.get("kind") == "ProposalStep" and e.get("proposal"):
        d = e["proposal"]
        chose = (
            f"chose {_value(d['choice'])}"
            if d.get("choice")
            else "no choice: " + str(d.get("outcome")).replace("_", " ")
        )
        conf = f" (confidence {d['confidence']})" if d.get("confidence") is not None else ""
        verdict = f"{chose}{conf} -> {short(e.get('next')) if e.get('next') else 'end'}"
    elif e.get("kind") == "WaitStep" and e.get("wait"):
        d = e["wait"]
        verdict = f"{d.get('outcome', status)}" + (f": {d['reason']}" if d.get("reason") else "")
    elif status == "completed":
        verdict = "gate ok  completed"
    elif status == "rejected":
        verdict = "gate rejected: " + "; ".join(
            m.get("message", "") for m in (e.get("gate") or {}).get("messages", [])
        )
    else:
        verdict = f"{status}: {(e.get('error') or {}).get('message', '')}"
    return f"{when}  {what}  {verdict}  {took:.1f} ms"


def prov_graph(events: Iterable[Mapping[str, Any]]) -> Graph:
    """The run as PROV-O: a ``prov:Activity`` per step, with its plan, what it used, when, and
    the effect graph it generated."""
    g = Graph()
    g.bind("prov", PROV)
    g.bind("horis", HORIS)
    last: dict[str, URIRef] = {}
    ended: dict[str, URIRef | None] = {}  # each instance's status, by how its last step left it
    for e in events:
        kind = e.get("type")
        if kind == "instance":
            inst = URIRef(e["instance"])
            g.add((inst, RDF.type, HORIS.Instance))
            g.add((inst, HORIS.workflow, URIRef(e["workflow"])))
            g.add((inst, HORIS.focus, URIRef(e["focus"])))
        elif kind == "step":
            act = _activity(e)
            prev = last.get(e["instance"])
            if prev is not None:
                g.add((act, PROV.wasInformedBy, prev))
            last[e["instance"]] = act
            _add_step(g, act, e)
            ended[e["instance"]] = _ended_as(e)
        elif kind == "end":  # its ``instances`` counts statuses; each one's is its last step's
            for instance, left in ended.items():
                if left is not None:
                    g.add((URIRef(instance), HORIS.status, left))
    return g


def _ended_as(step: Mapping[str, Any]) -> URIRef | None:
    """The status an instance is left in when ``step`` is its last: None while it goes on
    (a trace cut short leaves it so), else completed, blocked, waiting or failed."""
    if step.get("next"):
        return None
    return _STATUS.get(step.get("status", "failed"), HORIS.Failed)


def _activity(e: Mapping[str, Any]) -> URIRef:
    if e.get("graph"):
        # the IRI the runner gave the activity in the world's own provenance
        return URIRef(str(e["graph"]).replace("urn:horismos:effect:", "urn:horismos:activity:"))
    inst = str(e["instance"]).rsplit(":", 1)[-1]
    return URIRef(f"urn:horismos:activity:{inst}-{e.get('seq')}")


def _add_step(g: Graph, act: URIRef, e: Mapping[str, Any]) -> None:
    step, status = URIRef(e["step"]), e.get("status", "failed")
    agent = URIRef(e["tool"]) if e.get("tool") else RUNTIME
    g.add((act, RDF.type, PROV.Activity))
    g.add((act, RDF.type, HORIS.StepExecution))
    g.add((act, RDFS.label, Literal(f"{short(step)}: {status}")))
    g.add((act, HORIS.step, step))
    g.add((act, HORIS.instance, URIRef(e["instance"])))
    g.add((step, RDF.type, PROV.Plan))
    g.add((agent, RDF.type, PROV.SoftwareAgent))
    if e.get("tool"):
        g.add((act, HORIS.tool, agent))
    g.add((act, PROV.wasAssociatedWith, agent))
    assoc = BNode()
    g.add((act, PROV.qualifiedAssociation, assoc))
    g.add((assoc, RDF.type, PROV.Association))
    g.add((assoc, PROV.agent, agent))
    g.add((assoc, PROV.hadPlan, step))
    for call in e.get("args") or []:
        for name, text in call.items():
            _add_usage(g, act, name, cast("Node | None", from_n3(text)))
    clock = e.get("clock") or []
    if clock:
        g.add((act, PROV.startedAtTime, Literal(clock[0], datatype=XSD.dateTime)))
        g.add((act, PROV.endedAtTime, Literal(clock[-1], datatype=XSD.dateTime)))
    if e.get("graph"):
        effect = URIRef(e["graph"])
        g.add((act, PROV.generated, effect))
        g.add((effect, RDF.type, PROV.Entity))
        g.add((effect, PROV.wasGeneratedBy, act))
    if e.get("precondition", {}).get("failing"):
        g.add((act, HORIS.blockedBy, Literal(e["precondition"]["failing"])))
    if e.get("error"):
        g.add((act, HORIS.error, Literal(e["error"].get("message", ""))))


def _add_usage(g: Graph, act: URIRef, name: str, value: Node | None) -> None:
    """``prov:used`` the argument's node (a literal is wrapped in an entity with prov:value)."""
    if isinstance(value, URIRef):
        entity: Node = value
    else:
        entity = BNode()
        g.add((entity, PROV.value, value if value is not None else Literal("")))
    g.add((entity, RDF.type, PROV.Entity))
    g.add((act, PROV.used, entity))
    usage = BNode()
    g.add((act, PROV.qualifiedUsage, usage))
    g.add((usage, RDF.type, PROV.Usage))
    g.add((usage, PROV.entity, entity))
    g.add((usage, HORIS.name, Literal(name)))


def short(iri: Any) -> str:
    """The local name of an IRI (after ``#``, ``/`` or ``:``), for lines people read."""
    text = str(iri)
    for sep in ("#", "/", ":"):
        if sep in text:
            return text.rsplit(sep, 1)[-1] or text
    return text


def _value(n3: str) -> str:
    return short(n3[1:-1]) if n3.startswith("<") and n3.endswith(">") else n3


def _time_of_day(iso: str) -> str:
    try:
        return dt.datetime.fromisoformat(iso).strftime("%H:%M:%S.%f")[:-3]
    except ValueError:
        return iso
