"""Workflows drawn as diagrams (Mermaid or Graphviz DOT), from the loaded definitions only.

Edges: ``horis:next`` solid, ``horis:onError`` dashed, DecisionStep rules labelled with their
pattern, ``horis:otherwise`` labelled ``otherwise``. :func:`layout` is the same steps and edges
as data, for the rendered diagrams of :mod:`horismos._diagram_svg`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from rdflib import URIRef

from ._definitions import Definitions
from ._model import ActionStep, DecisionStep, ProposalStep, Step, WaitStep, Workflow

__all__ = ["Edge", "EdgeKind", "Format", "Layout", "dot_text", "draw", "layout", "step_label"]

Format = Literal["mermaid", "dot"]
EdgeKind = Literal["next", "rule", "otherwise", "fallback", "onTimeout", "onError"]
_LABEL_CHARS = 40


@dataclass(frozen=True)
class Edge:
    """One way out of a step: ``source`` is the drawn id of the step, ``target`` the IRI of
    the step it leads to."""

    source: str
    target: URIRef
    label: str | None = None
    dashed: bool = False
    kind: EdgeKind = "next"


@dataclass(frozen=True)
class Layout:
    """The steps reachable from each workflow's start (``ids`` names each ``s0``, ``s1``…),
    and the edges between them."""

    workflows: tuple[Workflow, ...]
    steps: tuple[Step, ...]
    ids: dict[URIRef, str]
    edges: tuple[Edge, ...]


def draw(defs: Definitions, workflows: Iterable[Workflow], fmt: Format = "mermaid") -> str:
    """The steps reachable from each workflow's start, and the edges between them."""
    lay = layout(defs, workflows)
    wfs, steps, ids, edges = list(lay.workflows), list(lay.steps), lay.ids, list(lay.edges)
    if fmt == "dot":
        return _dot(defs, wfs, steps, ids, edges)
    return _mermaid(defs, wfs, steps, ids, edges)


def layout(defs: Definitions, workflows: Iterable[Workflow]) -> Layout:
    """What :func:`draw` draws, as data."""
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
    return Layout(tuple(wfs), tuple(steps), ids, tuple(edges))


def _edges(defs: Definitions, step: Step, source: str) -> list[Edge]:
    out: list[Edge] = []
    if isinstance(step, DecisionStep):
        for rule in step.rules:
            text = " ".join(" ".join(p.text.split()) for p in rule.requires.patterns)
            if len(text) > _LABEL_CHARS:
                text = text[: _LABEL_CHARS - 1] + "…"
            out.append(Edge(source, rule.next, f"when {text}", kind="rule"))
        if step.otherwise is not None:
            out.append(Edge(source, step.otherwise, "otherwise", kind="otherwise"))
    if step.next is not None:
        out.append(Edge(source, step.next))
    if isinstance(step, ProposalStep) and step.fallback is not None:
        out.append(Edge(source, step.fallback, "fallback", dashed=True, kind="fallback"))
    if isinstance(step, WaitStep) and step.on_timeout is not None:
        out.append(Edge(source, step.on_timeout, "onTimeout", dashed=True, kind="onTimeout"))
    if step.on_error is not None:
        out.append(Edge(source, step.on_error, "onError", dashed=True, kind="onError"))
    return out


def step_label(defs: Definitions, step: Step) -> list[str]:
    """The lines a step's box shows: its name, and its tool or its kind."""
    lines = [defs.name(step.iri)]
    if isinstance(step, ActionStep) and step.tool is not None:
        lines.append(f"tool {defs.name(step.tool.iri)}")
    elif not isinstance(step, ActionStep):
        lines.append(type(step).__name__)
    return lines


# -- Mermaid ------------------------------------------------------------------------------


def _m(text: str) -> str:
    return text.replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")


def _mermaid(
    defs: Definitions,
    wfs: list[Workflow],
    steps: list[Step],
    ids: dict[URIRef, str],
    edges: list[Edge],
) -> str:
    out = ["flowchart TD"]
    for i, wf in enumerate(wfs):
        text = f"{_m(defs.name(wf.iri))}<br/>for each {_m(defs.name(wf.focus_type))}"
        out.append(f'    w{i}(["{text}"])')
        if wf.start in ids:
            out.append(f"    w{i} --> {ids[wf.start]}")
    for step in steps:
        text = "<br/>".join(_m(t) for t in step_label(defs, step))
        shape = '{"%s"}' if isinstance(step, DecisionStep) else '["%s"]'
        out.append(f"    {ids[step.iri]}{shape % text}")
    for e in edges:
        arrow = "-.->" if e.dashed else "-->"
        label = f'|"{_m(e.label)}"|' if e.label else ""
        out.append(f"    {e.source} {arrow}{label} {ids[e.target]}")
    return "\n".join(out) + "\n"


# -- Graphviz DOT -------------------------------------------------------------------------


def dot_text(text: str) -> str:
    """``text`` as a quoted DOT string."""
    return '"' + re.sub(r'(["\\])', r"\\\1", text).replace("\n", "\\n") + '"'


def _dot(
    defs: Definitions,
    wfs: list[Workflow],
    steps: list[Step],
    ids: dict[URIRef, str],
    edges: list[Edge],
) -> str:
    title = ", ".join(defs.name(wf.iri) for wf in wfs) or "workflows"
    out = [f"digraph {dot_text(title)} {{", "    node [shape=box, style=rounded];"]
    for i, wf in enumerate(wfs):
        label = f"{defs.name(wf.iri)}\nfor each {defs.name(wf.focus_type)}"
        out.append(f"    w{i} [shape=oval, label={dot_text(label)}];")
        if wf.start in ids:
            out.append(f"    w{i} -> {ids[wf.start]};")
    for step in steps:
        shape = ", shape=diamond" if isinstance(step, DecisionStep) else ""
        text = dot_text(chr(10).join(step_label(defs, step)))
        out.append(f"    {ids[step.iri]} [label={text}{shape}];")
    for e in edges:
        attrs = []
        if e.label:
            attrs.append(f"label={dot_text(e.label)}")
        if e.dashed:
            attrs.append("style=dashed")
        suffix = f" [{', '.join(attrs)}]" if attrs else ""
        out.append(f"    {e.source} -> {ids[e.target]}{suffix};")
    out.append("}")
    return "\n".join(out) + "\n"
