"""``trace view``, ``replay --html`` and ``graph --format svg|html``: runs to look at.

Why in one module: the three write the same kind of page (:mod:`horismos._viewer`) and the
same diagram (:mod:`horismos._diagram_svg`); ``horismos/_cli.py`` only hands them its parsed
arguments. Each page is built whole before the file is written, so a refused trace or a
missing Graphviz leaves no half-written file behind.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from rdflib import URIRef

from ._cli_common import plural, writable
from ._definitions import Definitions, load_definitions
from ._diagram import layout
from ._diagram_svg import node_ids, render_svg, styled_dot
from ._errors import ProgramMissing, UsageError
from ._model import Workflow
from ._run_counts import ENDED, RunCounts, count_runs
from ._trace import iter_trace, read_trace
from ._unreadable import readable_file
from ._viewer import Diagram, diagram_page, trace_page

if TYPE_CHECKING:
    from ._replay import ReplayReport

__all__ = [
    "cmd_trace_view",
    "diagram_said",
    "graph_rendered",
    "refuse_undeclared",
    "replay_page",
    "replay_summary",
    "said_written",
    "view_arguments",
]


def view_arguments(sub: Any) -> None:
    """Adds ``trace view`` to the ``trace`` command's sub-parsers."""
    view = sub.add_parser(
        "view",
        help="write the run as one self-contained HTML page: instances, timeline, "
        "each step's arguments, outcome, gate verdict and effects",
        description="write the run as one self-contained HTML page (no network; open it from "
        "file://): instances, a timeline, each step's arguments, outcome, gate "
        "verdict and effects; with the definitions, the workflow diagram with the "
        "trace's counts",
    )
    view.add_argument("trace", metavar="TRACE")
    view.add_argument(
        "paths",
        nargs="*",
        metavar="FILE_OR_DIR",
        help="the Turtle definitions, to add the workflow diagram (needs Graphviz's dot)",
    )
    view.add_argument("--output", "-o", required=True, metavar="F", help="the HTML file to write")
    view.set_defaults(action_run=cmd_trace_view)


def cmd_trace_view(args: argparse.Namespace) -> int:
    """Write the trace's viewer page to ``--output``."""
    writable("--output", args.output)
    events = read_trace(readable_file(args.trace))
    diagram = None
    if args.paths and "call" in events[0]:  # a call's trace: no workflow to draw
        print(
            f"note: {args.trace} records a direct tool call (horismos tools call), which has "
            "no workflow to draw: the page is written without a diagram",
            file=sys.stderr,
        )
    elif args.paths:
        defs = load_definitions(args.paths)
        wf = _workflow_of(defs, events, args.paths)
        # its --format mermaid was said: trace view has none; the page needs no diagram
        instead = "or give no definitions, for the page without its diagram"
        diagram = _diagram(defs, [wf], count_runs([events]), instead)
    _write(args.output, trace_page(events, source=Path(args.trace).name, diagram=diagram))
    said_written(args.output, "trace view", plural(len(events), "event"))
    return 0


def replay_summary(report: ReplayReport) -> dict[str, Any]:
    """What the replay page shows of ``report``: its verdict, and the first divergence."""
    d = report.first_divergence
    out: dict[str, Any] = {
        "verdict": str(report),
        "diverged": report.diverged,
        "complete": report.complete,
        "steps": report.steps,
    }
    if d is not None:
        out.update(event=d.event, field=d.field, recorded=d.recorded, now=d.now, message=str(d))
    return out


def replay_page(report: ReplayReport, trace: Path, defs: Definitions, output: Path) -> Path:
    """Write the replay report of ``trace`` to ``output``: the run's viewer, the verdict, and
    the first divergence with both sides."""
    events = read_trace(trace)
    diagram = None
    wf = defs.workflows.get(URIRef(str(events[0].get("workflow"))))
    if wf is not None:
        try:
            diagram = _diagram(defs, [wf], count_runs([events]))
        except ProgramMissing as e:  # the replay decided, and said so: its page too, undrawn
            print(  # (it exited 2 after "same", told to use a --format replay has not)
                f"note: {output}: written without the workflow diagram, which needs "
                f"Graphviz's {e.program} program: install Graphviz (Debian/Ubuntu: apt-get "
                f"install {e.package}; macOS: brew install {e.package})",
                file=sys.stderr,
            )
    _write(
        output,
        trace_page(events, source=trace.name, diagram=diagram, replay=replay_summary(report)),
    )
    # on stderr: replay's stdout is its verdict, one line a trace, which scripts read
    said_written(output, f"replay report of {trace.name}", stream=sys.stderr)
    return output


def graph_rendered(
    args: argparse.Namespace, defs: Definitions, workflows: Sequence[Workflow]
) -> int:
    """``graph --format svg|html`` (``--trace`` adds the counts): to ``--output`` or stdout."""
    counts = None
    traces = traces_given(args.trace or ())
    if traces:
        for t in traces:
            readable_file(t)
            _drawn(defs, workflows, t)
        counts = count_runs(iter_trace(t) for t in traces)  # one event at a time
    diagram = _diagram(defs, workflows, counts)
    if args.format == "svg":
        text = diagram.svg
    else:
        title = "Workflow " + ", ".join(defs.name(wf.iri) for wf in workflows)
        text = diagram_page(
            title,
            diagram,
            _count_rows(defs, workflows, counts, diagram.nodes),
            [Path(t).name for t in traces],
        )
    if args.output:
        _write(args.output, text)
        said_written(args.output, diagram_said(defs, workflows, args.format))
    else:
        sys.stdout.write(text)
    return 0


def diagram_said(defs: Definitions, workflows: Sequence[Workflow], fmt: str) -> str:
    """What ``graph --output`` wrote, for :func:`said_written`: its format and workflows."""
    return f"{fmt} diagram of {', '.join(defs.name(wf.iri) for wf in workflows)}"


def said_written(
    path: str | Path, what: str, detail: str | None = None, *, stream: TextIO | None = None
) -> None:
    """Say what a command that writes a file wrote where: ``trace view``, ``graph -o`` and
    ``replay --html`` printed nothing on success, so a user could not tell a page written
    from a command that did nothing. On stdout, as ``backup`` and ``tools inventory
    --output`` say theirs, unless ``stream`` is given."""
    said = f"wrote {what} to {path}" + (f" ({detail})" if detail else "")
    print(said, file=stream or sys.stdout)


def traces_given(paths: Sequence[str]) -> list[str]:
    """The traces ``--trace`` names, a folder's ``*.jsonl`` in name order as ``replay`` reads
    one: `wake --traces DIR` writes a trace per instance, and a folder was refused ("this is a
    folder, not a file"), while a shell glob after one ``--trace`` was not an option at all."""
    out: list[str] = []
    for path in paths:
        if Path(path).is_dir():
            found = sorted(str(p) for p in Path(path).glob("*.jsonl"))
            if not found:
                raise UsageError(f"{path}: no *.jsonl traces in this folder")
            out += found
        else:
            out.append(path)
    return out


def _diagram(
    defs: Definitions,
    workflows: Sequence[Workflow],
    counts: RunCounts | None,
    instead: str = "or use --format mermaid or dot for text",
) -> Diagram:
    lay = layout(defs, workflows)
    return Diagram(render_svg(styled_dot(defs, lay, counts), instead), node_ids(lay))


def _count_rows(
    defs: Definitions,
    workflows: Sequence[Workflow],
    counts: RunCounts | None,
    nodes: Mapping[str, str],
) -> list[dict[str, Any]]:
    if counts is None:
        return []
    rows = []
    for step in layout(defs, workflows).steps:
        iri = str(step.iri)
        ended: Mapping[str, int] = counts.ended.get(iri, {})
        statuses: Mapping[str, int] = counts.statuses.get(iri, {})
        rows.append(
            {
                "step": iri,
                "name": defs.name(step.iri),
                "node": nodes.get(iri),
                "ran": counts.visits.get(iri, 0),
                "completed": statuses.get("completed", 0),
                **{s: ended.get(s, 0) for s in ENDED},
            }
        )
    return rows


def _drawn(defs: Definitions, workflows: Sequence[Workflow], trace: str) -> None:
    """Refuse a ``--trace`` of a workflow not drawn: its counts landed nowhere, and the
    diagram said "0 started" of the workflow drawn, as if its runs had never begun. Only the
    header is read; a catalog call's trace, of no workflow, counts nothing and is let be."""
    recorded = next(iter_trace(trace), {}).get("workflow")
    if recorded is None:
        return
    iri = URIRef(str(recorded))
    if any(wf.iri == iri for wf in workflows):
        return
    if iri in defs.workflows:
        raise UsageError(
            f"--trace {trace} records {defs.name(iri)}, which is not drawn (--workflow "
            f"{', '.join(defs.name(wf.iri) for wf in workflows)}); draw it with --workflow "
            f"{defs.name(iri)}"
        )
    refuse_undeclared(defs, f"--trace {trace}", iri)


def refuse_undeclared(defs: Definitions, trace: str, recorded: object) -> None:
    """Refuse a trace (named ``trace`` as the command was given it) whose header records a
    workflow ``defs`` do not declare: the wrong files were given, said so for ``graph
    --trace`` and ``replay`` alike. A trace of no workflow (a catalog call's) passes."""
    if recorded is not None and URIRef(str(recorded)) not in defs.workflows:
        raise UsageError(
            f"{trace} records the workflow <{recorded}>, which these definitions do not "
            "declare; give the files it was recorded with"
        )


def _workflow_of(
    defs: Definitions, events: Sequence[Mapping[str, Any]], paths: Sequence[str]
) -> Workflow:
    iri = URIRef(str(events[0].get("workflow")))
    wf = defs.workflows.get(iri)
    if wf is None:
        raise UsageError(
            f"{' '.join(paths)}: these definitions do not declare the trace's "
            f"workflow <{iri}>; give the files it was recorded with"
        )
    return wf


def _write(path: str | Path, text: str) -> None:
    Path(path).write_text(text, encoding="utf-8")
