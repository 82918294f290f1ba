"""``horismos replay``, ``trace`` and ``graph``: reading what happened, and what can happen.
Replay re-decides a recorded run with today's definitions; ``trace`` shows or exports one;
``graph`` draws the workflows. Their HTML and SVG pages (``replay --html``, ``trace view``,
``graph --format svg|html``) are written by :mod:`horismos._cli_viewer`."""

from __future__ import annotations

import argparse
import functools
import json
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from rdflib import URIRef

from ._agent import Agent
from ._bindings.python import static_problem
from ._cli_common import output_folder, reach, reach_options, writable
from ._cli_viewer import (
    diagram_said,
    graph_rendered,
    refuse_undeclared,
    replay_page,
    said_written,
    view_arguments,
)
from ._definitions import Definitions, load_definitions, same_definitions
from ._diagram import draw
from ._errors import TraceError, UsageError
from ._intents import held_by_rejected
from ._replay import replay
from ._signing import unchecked_signatures
from ._stores import outlives_process
from ._trace import iter_trace
from ._traceview import bracketed, prov_turtle, timeline
from ._unreadable import readable_file

__all__ = [
    "cmd_graph",
    "cmd_replay",
    "cmd_trace",
    "cmd_trace_export",
    "cmd_trace_show",
    "graph_arguments",
    "replay_arguments",
    "trace_arguments",
]


def replay_arguments(p: argparse.ArgumentParser) -> None:
    """``horismos replay``'s options."""
    p.add_argument(
        "trace",
        metavar="TRACE_OR_DIR",
        help="a recorded trace (.jsonl), or a folder: every *.jsonl in it is replayed "
        "(a direct tool call's trace, which replay does not replay, is skipped)",
    )
    p.add_argument(
        "paths",
        nargs="+",
        metavar="FILE_OR_DIR",
        help="the Turtle definitions to replay against: tools, workflows, ontology",
    )
    p.add_argument(
        "--tools",
        action="append",
        default=[],
        metavar="MODULE",
        help="as for run; needed only with --reexecute-idempotent (recorded "
        "results are substituted, no tool is called)",
    )
    reach_options(p)
    p.add_argument(
        "--reexecute-idempotent",
        action="store_true",
        help="call horis:idempotent tools again and compare their results with the "
        "record (never a non-idempotent tool, one needing approval, or one outside the "
        "default policy ReadOnly,HostStateWrite: their results are the record's)",
    )
    p.add_argument(
        "--html",
        metavar="F",
        help="also write the report as an HTML page (for a folder of traces, F is a "
        "folder: one page per trace)",
    )


def _not_a_trace_file(path: Path) -> str:
    """Why ``path``, not a regular file, is no trace replay reads, by what it is: everything
    not a file was "a named pipe (or a device)", a link to nothing and a folder too."""
    if path.is_symlink() and not path.exists():
        return (
            f"a symbolic link to {path.readlink()}, which does not exist; give the trace it "
            "should point to"
        )
    if path.is_dir():
        return "a folder, not a trace; give the traces in it, or rename it"
    what = "a named pipe" if stat.S_ISFIFO(path.stat().st_mode) else "a device (or a socket)"
    return (
        f"{what}, which replay reads twice, its header then its events; save the trace to a "
        "file and give that"
    )


def cmd_replay(args: argparse.Namespace) -> int:
    """Replay each trace; one line per trace; 0 when all replay the same to their end, 1
    otherwise (a divergence, a refused trace, or one whose recording stopped mid-run)."""
    agent = Agent.from_files(*args.paths, tools=reach(args, calls=True))
    if args.reexecute_idempotent:  # said now, not as a divergence of every trace
        unreached = sorted(
            t.name
            for t in agent.definitions.tools.values()
            if t.idempotent
            and t.binding.startswith("python:")
            and static_problem(t, agent.tools) is not None
        )
        if unreached:
            raise UsageError(
                "--reexecute-idempotent calls the idempotent tools again, and the python: "
                f"bindings of {', '.join(unreached)} do not resolve here: give --tools "
                "MODULE (or --allow-module NAME) as for run"
            )
    source = Path(readable_file(args.trace) if args.trace == "-" else args.trace)
    if not source.exists():
        raise UsageError(f"{source}: no such trace or folder of traces")
    traces = sorted(source.glob("*.jsonl")) if source.is_dir() else [source]
    for path in traces:  # a pipe's header was read, then it waited for a second writer
        if not path.is_file():  # forever, and SIGTERM did not end the wait; one in a folder too
            raise UsageError(f"{path}: {_not_a_trace_file(path)}")
    if not traces:
        raise UsageError(f"{source}: no *.jsonl traces in this folder")
    if args.html and source.is_dir():  # before any replay, as every output is
        output_folder("--html", args.html)
    elif args.html:
        writable("--html", args.html)
    for path in traces:  # before any replay: a usage error, not each trace's divergence
        _declared(agent.definitions, path)
    skipped = {p: why for p in traces if (why := _not_a_run(p))} if source.is_dir() else {}
    if skipped and len(skipped) == len(traces):
        raise UsageError(
            f"{source}: no trace in this folder records a run replay can replay (direct tool "
            "calls, runs refused before their first step): read each with `horismos trace "
            "show FILE FILE_OR_DIR…`"
        )
    same = True
    for path in traces:
        if path in skipped:  # a folder of serve's traces holds both: the runs' verdict stands
            print(f"SKIPPED   {path}: {skipped[path]}; `horismos trace show` reads it")
            continue
        recorded = _recorded_definitions(path)
        if recorded and not same_definitions(agent.definitions, recorded):
            print(
                f"note: {path}: the definitions changed since it was recorded ({recorded}, "
                f"now {agent.definitions.digest}); replaying to show where they diverge",
                file=sys.stderr,
            )
        unchecked = unchecked_signatures(_recorded_header(path))
        if unchecked:
            print(f"note: {path}: {unchecked}", file=sys.stderr)
        try:
            report = replay(path, agent, reexecute_idempotent=args.reexecute_idempotent)
        except TraceError as e:
            print(f"REFUSED   {e}")
            same = False
            continue
        print(report)
        if args.html:
            html = Path(args.html) / f"{path.stem}.html" if source.is_dir() else Path(args.html)
            replay_page(report, path, agent.definitions, html)
        same = same and not report.diverged and report.complete
    return 0 if same else 1


def _recorded_definitions(path: Path) -> str | None:
    """The definitions digest in a trace's header line."""
    digest = _recorded_header(path).get("definitions_digest")
    return digest if isinstance(digest, str) else None


def _not_a_run(path: Path) -> str | None:
    """Why the trace at ``path`` records no run to replay, from its first two lines (checked
    when read): a direct tool call's, or a run refused before its first step's; None for a
    run's."""
    if "call" in _recorded_header(path):
        return "a direct tool call's trace (horismos tools call), not a run: replay replays runs"
    try:
        with open(path, encoding="utf-8") as f:
            f.readline()
            second = json.loads(f.readline() or "{}")
    except (OSError, ValueError):
        return None
    if isinstance(second, dict) and second.get("type") == "refused":
        return "a run refused before its first step (another run drove its focus): nothing ran"
    return None


def _recorded_header(path: Path) -> dict[str, Any]:
    """A trace's header line, read before the trace is checked (one that is not text, or
    not a JSON object, is reported when the trace is read)."""
    try:
        with open(path, encoding="utf-8") as f:
            header = json.loads(f.readline())
    except (OSError, ValueError):
        return {}
    return header if isinstance(header, dict) else {}


def _declared(defs: Definitions, path: Path) -> None:
    """Refuse a trace of a workflow the definitions do not declare (another workflow's, or
    the same under another IRI): replay said ``DIVERGED … (definitions changed since
    recording)``, exit 1, as if the files had been edited, when the wrong files were given.
    A catalog call's trace, of no workflow, is refused by the replay itself."""
    recorded = _recorded_header(path).get("workflow")
    refuse_undeclared(defs, str(path), recorded if isinstance(recorded, str) else None)


def trace_arguments(p: argparse.ArgumentParser) -> None:
    """``horismos trace`` and its actions' options."""
    sub = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    show = sub.add_parser(
        "show",
        help="print a readable timeline: step, tool, args, verdict, time",
        description="print a trace as a timeline",
    )
    show.add_argument("trace", metavar="TRACE")
    show.add_argument(
        "paths",
        nargs="*",
        metavar="FILE_OR_DIR",
        help="the definitions it was recorded with, to name IRIs by their prefixes "
        "(:patient42) as run does, and say which calls a rejected result left held in doubt; "
        "without them each IRI is printed in full, <IRI>",
    )
    show.set_defaults(action_run=cmd_trace_show)
    export = sub.add_parser(
        "export",
        help="write the run as PROV-O Turtle",
        description="write the run as PROV-O Turtle: a prov:Activity per "
        "step with its plan, what it used, the effect graph it "
        "generated, when it started and ended, and the gate's SHACL report where it refused "
        "what a tool returned",
    )
    export.add_argument("trace", metavar="TRACE")
    export.add_argument(
        "paths",
        nargs="*",
        metavar="FILE_OR_DIR",
        help="the definitions it was recorded with, to write each gate message's focus node, "
        "path and shape as IRIs (:patient42 as the trace records it); without them, only "
        "those the trace records in full or that name one of the step's arguments",
    )
    export.add_argument(
        "--format", choices=("prov",), default="prov", help="prov: PROV-O as Turtle (the default)"
    )
    export.add_argument("--output", "-o", metavar="F", help="write here instead of stdout")
    export.set_defaults(action_run=cmd_trace_export)
    view_arguments(sub)


def cmd_trace(args: argparse.Namespace) -> int:
    """Run the ``trace`` action named on the command line."""
    return args.action_run(args)


def cmd_trace_show(args: argparse.Namespace) -> int:
    """Print the trace's timeline, each event's line once its hash chain and version are
    checked; an edited event stops it there, with the error."""
    name = bracketed
    held = None
    first_step = None
    if args.paths:
        defs = load_definitions(args.paths)

        def name(iri: str) -> str:
            return defs.name(URIRef(iri))

        def first_step(workflow: str) -> str | None:
            wf = defs.workflows.get(URIRef(workflow))
            return defs.name(wf.start) if wf is not None else None

        held = functools.partial(held_in_doubt, defs)

    events = iter_trace(readable_file(args.trace))
    for line in timeline(events, args.trace, name, held, first_step):
        print(line)
    if Path(args.trace).is_file():  # a pipe's header cannot be read again
        unchecked = unchecked_signatures(_recorded_header(Path(args.trace)))
        if unchecked:
            print(f"note: {args.trace}: {unchecked}", file=sys.stderr)
    return 0


def held_in_doubt(
    defs: Definitions, header: Mapping[str, Any], step: Mapping[str, Any]
) -> list[str]:
    """The calls a rejected step left held in doubt, in ``run``'s words: each call of a tool
    that is not idempotent that answered (so may have acted) and of which nothing landed, by a
    run that held such calls (header ``calls_in_doubt`` 2 on). ``run`` said it under the step;
    the timeline showed only the gate's messages, and a reviewer of the trace did not learn
    that further calls there were refused until someone reconciled it."""
    if step.get("status") != "rejected" or int(header.get("calls_in_doubt") or 0) < 2:
        return []
    outcomes = step.get("outcomes") or []
    calls = [
        call
        for call, outcome in zip(step.get("args") or [], outcomes, strict=False)
        if isinstance(call, dict) and isinstance(outcome, dict) and "returned" in outcome
    ]
    store = header.get("store")
    return held_by_rejected(
        defs.tools.get(URIRef(str(step.get("tool")))),
        calls,
        defs.name,
        persistent=isinstance(store, str) and outlives_process(store),
    )


def cmd_trace_export(args: argparse.Namespace) -> int:
    """Write the trace as PROV-O Turtle to ``--output`` or stdout, each event's as it is read.
    An event the export cannot take (an edit, a step IRI Turtle cannot write) stops it with
    the error and nothing written: stdout gets nothing until the whole export is made (half
    a document piped into a file looked like an export), and ``--output`` is left as it was
    (the export is written beside it and moved over it once whole)."""
    writable("--output", args.output)
    trace = readable_file(args.trace)
    expand = _expander(load_definitions(args.paths)) if args.paths else None
    if not args.output:
        # made once into an unnamed temporary file, then copied: the trace is read once (a
        # trace still growing cannot export events never checked) and memory stays flat
        with tempfile.TemporaryFile("w+", encoding="utf-8") as made:
            made.writelines(prov_turtle(iter_trace(trace), args.trace, expand))
            made.seek(0)
            shutil.copyfileobj(made, sys.stdout)
        return 0
    pieces = prov_turtle(iter_trace(trace), args.trace, expand)
    out = Path(args.output)
    part = out.with_name(f".{out.name}.part")
    try:
        with part.open("w", encoding="utf-8") as f:
            f.writelines(pieces)
        part.replace(out)
    finally:
        part.unlink(missing_ok=True)
    return 0


def _expander(defs: Definitions) -> Callable[[str], URIRef | None]:
    """How the export reads a gate message's recorded name back as an IRI: as the
    definitions' prefixes write it, else (a name they cannot read, one meaning several IRIs)
    not at all."""

    def expand(name: str) -> URIRef | None:
        try:
            return defs.expand(name)
        except (KeyError, UsageError):
            return None

    return expand


def graph_arguments(p: argparse.ArgumentParser) -> None:
    """``horismos graph``'s options."""
    p.add_argument(
        "paths", nargs="+", metavar="FILE_OR_DIR", help="Turtle files or folders of them"
    )
    p.add_argument(
        "--format",
        choices=("mermaid", "dot", "svg", "html"),
        default="mermaid",
        help="diagram language (default: mermaid); svg and html are drawn by Graphviz's dot",
    )
    p.add_argument(
        "--trace",
        action="append",
        metavar="TRACE",
        help="with svg or html: write on each step and edge how often the traced "
        "runs took it, and where instances blocked, failed or wait (repeatable; a folder: "
        "each *.jsonl in it, as wake --traces writes them)",
    )
    p.add_argument("--output", "-o", metavar="F", help="write here instead of stdout")
    p.add_argument(
        "--workflow",
        metavar="IRI",
        help="draw only this workflow (IRI or CURIE); default: all of them",
    )


def cmd_graph(args: argparse.Namespace) -> int:
    """Print the workflow as a Mermaid flowchart or a Graphviz digraph."""
    writable("--output", args.output)
    defs = load_definitions(args.paths)
    if not defs.workflows:
        raise UsageError(
            f"{' '.join(args.paths)}: no horis:Workflow is declared, so there is "
            "nothing to draw; include the file that declares the workflow"
        )
    if args.workflow:
        workflows = [Agent(defs).workflow(args.workflow)]
    else:
        workflows = [defs.workflows[k] for k in sorted(defs.workflows, key=str)]
    if args.format in ("svg", "html"):
        return graph_rendered(args, defs, workflows)
    if args.trace:
        raise UsageError("--trace draws counts on a rendered diagram: add --format svg or html")
    text = draw(defs, workflows, args.format)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        said_written(args.output, diagram_said(defs, workflows, args.format))
    else:
        sys.stdout.write(text)
    return 0
