"""Workflows drawn as diagrams (Mermaid or Graphviz DOT), from the loaded definitions only.

Edges: ``horis:next`` solid, ``horis:onError`` dashed, DecisionStep rules labelled with their
pattern, ``horis:otherwise`` labelled ``otherwise``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from rdflib import URIRef

from ._definitions import Definitions
from ._model import ActionStep, DecisionStep, ProposalStep, Step, WaitStep, Workflow

__all__ = ["Format", "draw"]

Format = Literal["mermaid", "dot"]
_LABEL_CHARS = 40


@dataclass(frozen=True)
class _Edge:
    source: str
    target: URIRef
    label: str | None = None
    dashed: bool = False


def draw(defs: Definitions, workflows: Iterable[Workflow], fmt: Format = "mermaid") -> str:
    """The steps reachable from each workflow's start, and the edges between them."""
    wfs = list(workflows)
    ids: dict[URIRef, str] = {}
    steps: list[Step] = []
    for wf in wfs:
        todo = [wf.start]
        while todo:
            iri = todo.pop()
            if iri in ids or iri not in defs.steps:
                continue
            ids[iri] = f"s{len(ids)}"
            steps.append(defs.steps[iri])
            todo.extend(reversed([e.target for e in _edges(defs, defs.steps[iri], "")]))
    edges = [e for step in steps for e in _edges(defs, step, ids[step.iri])]
    edges = [e for e in edges if e.target in ids]
    if fmt == "dot":
        return _dot(defs, wfs, steps, ids, edges)
    return _mermaid(defs, wfs, steps, ids, edges)


def _edges(defs: Definitions, step: Step, source: str) -> list[_Edge]:
    out: list[_Edge] = []
    if isinstance(step, DecisionStep):
        for rule in step.rules:
            text = " ".join(" ".join(p.text.split()) for p in rule.requires.patterns)
            if len(text) > _LABEL_CHARS:
                text = text[: _LABEL_CHARS - 1] + "…"
            out.append(_Edge(source, rule.next, f"when {text}"))
        if step.otherwise is not None:
            out.append(_Edge(source, step.otherwise, "otherwise"))
    if step.next is not None:
        out.append(_Edge(source, step.next))
    if isinstance(step, ProposalStep) and step.fallback is not None:
        out.append(_Edge(source, step.fallback, "fallback", dashed=True))
    if isinstance(step, WaitStep) and step.on_timeout is not None:
        out.append(_Edge(source, step.on_timeout, "onTimeout", dashed=True))
    if step.on_error is not None:
        out.append(_Edge(source, step.on_error, "onError", dashed=True))
    return out


def _label(defs: Definitions, step: Step) -> list[str]:
    lines = [defs.name(step.iri)]
    if isinstance(step, ActionStep) and step.tool is not None:
        lines.append(f"tool {defs.name(step.tool.iri)}")
    elif not isinstance(step, ActionStep):
        lines.append(type(step).__name__)
    return lines


# -- Mermaid ------------------------------------------------------------------------------

def _m(text: str) -> str:
    return text.replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")


def _mermaid(defs: Definitions, wfs: list[Workflow], steps: list[Step], ids: dict[URIRef, str],
             edges: list[_Edge]) -> str:
    out = ["flowchart TD"]
    for i, wf in enumerate(wfs):
        text = f"{_m(defs.name(wf.iri))}<br/>for each {_m(defs.name(wf.focus_type))}"
        out.append(f'    w{i}(["{text}"])')
        if wf.start in ids:
            out.append(f"    w{i} --> {ids[wf.start]}")
    for step in steps:
        text = "<br/>".join(_m(t) for t in _label(defs, step))
        shape = '{"%s"}' if isinstance(step, DecisionStep) else '["%s"]'
        out.append(f"    {ids[step.iri]}{shape % text}")
    for e in edges:
        arrow = "-.->" if e.dashed else "-->"
        label = f'|"{_m(e.label)}"|' if e.label else ""
        out.append(f"    {e.source} {arrow}{label} {ids[e.target]}")
    return "\n".join(out) + "\n"


# -- Graphviz DOT -------------------------------------------------------------------------

def _d(text: str) -> str:
    return '"' + re.sub(r'(["\\])', r"\\\1", text).replace("\n", "\\n") + '"'


def _dot(defs: Definitions, wfs: list[Workflow], steps: list[Step], ids: dict[URIRef, str],
         edges: list[_Edge]) -> str:
    title = ", ".join(defs.name(wf.iri) for wf in wfs) or "workflows"
    out = [f"digraph {_d(title)} {{", "    node [shape=box, style=rounded];"]
    for i, wf in enumerate(wfs):
        label = f"{defs.name(wf.iri)}\nfor each {defs.name(wf.focus_type)}"
        out.append(f"    w{i} [shape=oval, label={_d(label)}];")
        if wf.start in ids:
            out.append(f"    w{i} -> {ids[wf.start]};")
    for step in steps:
        shape = ", shape=diamond" if isinstance(step, DecisionStep) else ""
        out.append(f"    {ids[step.iri]} [label={_d(chr(10).join(_label(defs, step)))}{shape}];")
    for e in edges:
        attrs = []
        if e.label:
            attrs.append(f"label={_d(e.label)}")
        if e.dashed:
            attrs.append("style=dashed")
        suffix = f" [{', '.join(attrs)}]" if attrs else ""
        out.append(f"    {e.source} -> {ids[e.target]}{suffix};")
    out.append("}")
    return "\n".join(out) + "\n"
