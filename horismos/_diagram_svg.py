"""Workflow diagrams as SVG, laid out by Graphviz's ``dot``, with what traces say happened.

Why Graphviz, as a subprocess: it is the layout engine made for directed graphs, Debian ships
it (``graphviz``), and its SVG carries the ids we give nodes and edges, so the HTML viewer can
link a step to its node. A missing ``dot`` is a :class:`~horismos.ProgramMissing` saying what
to install, never a traceback.

Step kinds are told apart by shape (action: rounded box, decision: diamond, proposal: hexagon,
wait: double ellipse); ``onError``, ``fallback`` and ``onTimeout`` edges by colour and dash.
With :class:`~horismos._run_counts.RunCounts` each node says how often it ran and how many
instances stopped there (blocked, failed, waiting), each edge how often it was taken, and
fill and line width grow with those counts: a heat map of where instances went.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterable, Mapping

from ._definitions import Definitions
from ._diagram import Edge, EdgeKind, Layout, dot_text, layout, step_label
from ._errors import ProgramMissing, UsageError
from ._model import DecisionStep, ProposalStep, Step, WaitStep, Workflow
from ._run_counts import RunCounts

__all__ = ["KIND_SHAPES", "node_ids", "render_svg", "styled_dot", "svg_diagram"]

KIND_SHAPES = {
    "ActionStep": ('shape=box, style="rounded,filled"', "#fff8dc"),
    "DecisionStep": ('shape=diamond, style="filled"', "#e0f0ff"),
    "ProposalStep": ('shape=hexagon, style="filled"', "#efe6ff"),
    "WaitStep": ('shape=ellipse, peripheries=2, style="filled"', "#eef1f4"),
}
_EDGE_STYLE: dict[EdgeKind, str] = {
    "next": 'color="#333333"',
    "rule": 'color="#1f5fa8", fontcolor="#1f5fa8"',
    "otherwise": 'color="#555555", fontcolor="#555555"',
    "fallback": 'color="#c46a00", fontcolor="#c46a00", style=dashed',
    "onTimeout": 'color="#7a3db8", fontcolor="#7a3db8", style=dotted',
    "onError": 'color="#c0392b", fontcolor="#c0392b", style=dashed',
}
_ENDED_COLOUR = {"failed": "#c0392b", "blocked": "#d68910", "waiting": "#2e86c1"}
_TIMEOUT_S = 60


def kind_of(step: Step) -> str:
    """The step's kind as the trace names it (``ActionStep``…)."""
    for cls in (DecisionStep, ProposalStep, WaitStep):
        if isinstance(step, cls):
            return cls.__name__
    return "ActionStep"


def node_ids(lay: Layout) -> dict[str, str]:
    """The SVG element id of each step's node, by step IRI."""
    return {str(iri): f"step-{sid}" for iri, sid in lay.ids.items()}


def svg_diagram(
    defs: Definitions, workflows: Iterable[Workflow], counts: RunCounts | None = None
) -> tuple[str, dict[str, str]]:
    """The workflows as SVG, with ``counts`` overlaid; and each step's node id by IRI."""
    lay = layout(defs, workflows)
    return render_svg(styled_dot(defs, lay, counts)), node_ids(lay)


def styled_dot(defs: Definitions, lay: Layout, counts: RunCounts | None = None) -> str:
    """DOT text for ``lay``: kinds and edge kinds styled apart, ``counts`` written on it."""
    title = ", ".join(defs.name(wf.iri) for wf in lay.workflows) or "workflows"
    out = [
        f"digraph {dot_text(title)} {{",
        '    graph [fontname="Helvetica", nodesep=0.5, ranksep=0.55, bgcolor="white"];',
        '    node [fontname="Helvetica", fontsize=11, color="#444444"];',
        '    edge [fontname="Helvetica", fontsize=9, arrowsize=0.8];',
    ]
    top = (
        max([1, *counts.visits.values(), *counts.edges.values(), *counts.started.values()])
        if counts
        else 1
    )
    for i, wf in enumerate(lay.workflows):
        text = f"{defs.name(wf.iri)}\nfor each {defs.name(wf.focus_type)}"
        started = counts.started.get(str(wf.iri), 0) if counts else 0
        if counts:
            text += f"\n{started} started"
        out.append(
            f'    w{i} [id="workflow-{i}", class="workflow", shape=oval, style=filled, '
            f'fillcolor="#f4f4f4", label={dot_text(text)}];'
        )
        if wf.start in lay.ids:
            attrs = [f'id="edge-w{i}-{lay.ids[wf.start]}"', 'color="#333333"']
            if counts:
                attrs += [f"label={dot_text(f'×{started}')}", f"penwidth={_width(started, top)}"]
            out.append(f"    w{i} -> {lay.ids[wf.start]} [{', '.join(attrs)}];")
    for step in lay.steps:
        out.append(_node(defs, lay, step, counts, top))
    taken: set[tuple[str, str]] = set()
    iris = {sid: str(iri) for iri, sid in lay.ids.items()}
    for e in lay.edges:
        out.append(_edge(lay, e, iris[e.source], counts, top, taken))
    out.append("}")
    return "\n".join(out) + "\n"


def _node(defs: Definitions, lay: Layout, step: Step, counts: RunCounts | None, top: int) -> str:
    sid = lay.ids[step.iri]
    kind = kind_of(step)
    shape, fill = KIND_SHAPES[kind]
    lines = step_label(defs, step)
    attrs = [f'id="step-{sid}"', f'class="step {kind}"', shape]
    if counts is not None:
        iri = str(step.iri)
        visits = counts.visits.get(iri, 0)
        ended: Mapping[str, int] = counts.ended.get(iri, {})
        lines.append(f"ran ×{visits}")
        stopped = [f"{ended[s]} {s}" for s in ("blocked", "failed", "waiting") if ended.get(s)]
        if stopped:
            lines.append(", ".join(stopped))
            worst = next(s for s in ("failed", "blocked", "waiting") if ended.get(s))
            attrs += [f'color="{_ENDED_COLOUR[worst]}"', "penwidth=2.5"]
        if visits == 0:
            attrs += ['fontcolor="#888888"']
            fill = "#ffffff"
        else:  # heat: warmer the more often it ran
            fill = _heat(visits, top)
    attrs += [f'fillcolor="{fill}"', f"label={dot_text(chr(10).join(lines))}"]
    return f"    {sid} [{', '.join(attrs)}];"


def _edge(
    lay: Layout,
    e: Edge,
    source: str,
    counts: RunCounts | None,
    top: int,
    taken: set[tuple[str, str]],
) -> str:
    target = lay.ids[e.target]
    attrs = [f'id="edge-{e.source}-{target}-{e.kind}"', f'class="{e.kind}"', _EDGE_STYLE[e.kind]]
    label = e.label or ""
    if counts is not None:
        # Two edges to the same step (a rule and otherwise): the trace says only where the
        # instance went, so the first edge there gets the count.
        n = 0 if (source, str(e.target)) in taken else counts.edges.get((source, str(e.target)), 0)
        taken.add((source, str(e.target)))
        label = f"{label} ×{n}".strip()
        attrs.append(f"penwidth={_width(n, top)}")
        if n == 0:
            attrs.append('color="#bbbbbb"')
    if label:
        attrs.append(f"label={dot_text(label)}")
    return f"    {e.source} -> {target} [{', '.join(attrs)}];"


def _width(n: int, top: int) -> str:
    return f"{1 + 4 * n / top:.2f}" if n else "1"


def _heat(n: int, top: int) -> str:
    """From a pale to a strong orange as ``n`` nears ``top``."""
    t = n / top
    pale, strong = (0xFF, 0xF3, 0xE0), (0xF5, 0x9E, 0x42)
    return "#" + "".join(f"{round(a + (b - a) * t):02x}" for a, b in zip(pale, strong, strict=True))


def render_svg(dot: str, instead: str = "or use --format mermaid or dot for text") -> str:
    """``dot -Tsvg`` of ``dot``, as an ``<svg>`` element (no XML prolog) to put in a page;
    ``instead`` is what the command can do without Graphviz, said when it is missing."""
    program = shutil.which("dot")
    if program is None:
        raise ProgramMissing(
            "drawing SVG needs Graphviz's dot program, which is not installed: install "
            "Graphviz (Debian/Ubuntu: apt-get install graphviz; macOS: brew install graphviz), "
            f"{instead}",
            program="dot",
            package="graphviz",
        )
    try:
        p = subprocess.run(
            [program, "-Tsvg"],
            input=dot,
            capture_output=True,
            text=True,
            timeout=_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise UsageError(
            f"Graphviz's dot did not lay out the diagram within {_TIMEOUT_S} s; "
            "draw one workflow at a time (--workflow)"
        ) from None
    if p.returncode != 0:
        raise UsageError(f"Graphviz's dot refused the diagram: {p.stderr.strip()}")
    svg = p.stdout
    at = svg.find("<svg")
    return re.sub(r"<!--.*?-->\n?", "", svg[at:], flags=re.S) if at >= 0 else svg
