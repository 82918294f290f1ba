"""The ``horismos`` command line: one ``cmd_<name>(args) -> int`` per command.

Each command is a :class:`Command` in :data:`COMMANDS`: its name, one line of help, a function
that adds its options, and the function that runs it. Exit codes follow the product contract:
0 completed / valid, 1 failed / invalid, 2 usage or authoring error, 3 waiting, 4 blocked.
A :class:`HorismosError` is printed as a message, never as a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import importlib
import importlib.util
import inspect
import json
import logging
import os
import re
import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, TextIO

from rdflib import URIRef
from rdflib.term import Node
from rdflib.util import from_n3

from ._agent import Agent
from ._bindings import Hosts, Reach
from ._bindings.mcp import connection_problems
from ._catalog import check_inventory, inventory_text
from ._cli_digest import cmd_digest, digest_arguments
from ._cli_serve import cmd_serve, serve_arguments
from ._contract import (
    binding_problems,
    command_problems,
    credential_problems,
    unbound_arguments,
)
from ._definitions import Definitions, load_definitions
from ._diagram import draw
from ._errors import (
    AuthoringError,
    HorismosError,
    Problem,
    ShaclMessage,
    TraceError,
    UsageError,
)
from ._instances import STATUSES, due_waits, list_instances
from ._proposal import summary as proposal_summary
from ._records import InstanceRun, Run, StepRecord
from ._redact import redact_text
from ._replay import replay
from ._runner import focus_nodes
from ._stores import DEFAULT_STORE
from ._trace import read_trace
from ._traceview import prov_graph, timeline
from ._waits import summary as wait_summary
from ._world import World

__all__ = ["COMMANDS", "Command", "main"]

EXIT = {"completed": 0, "failed": 1, "waiting": 3, "blocked": 4}
EXIT_USAGE = 2
OUT_FORMATS = {".trig": "trig", ".nq": "nquads", ".nquads": "nquads"}


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


# -- validate -----------------------------------------------------------------------------

def _validate_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="FILE_OR_DIR",
                   help="Turtle files or folders of them (tools, workflows, ontologies)")
    p.add_argument("--connect", action="store_true",
                   help="also start or reach each MCP server the tools name, and check each "
                        "tool's input schema against its horis:takes")
    p.add_argument("--tools", action="append", default=[], metavar="MODULE",
                   help="as for run; with it (or --allow-module) each python: binding is "
                        "resolved and each registered function's parameters are checked "
                        "against its horis:takes")
    _reach_options(p)
    p.add_argument("--world", action="append", default=[], metavar="F",
                   help="world data (repeatable): an IRI a pattern uses is not reported as "
                        "undeclared when the world uses it")
    p.add_argument("--store", default=DEFAULT_STORE, metavar="STORE",
                   help="where the world lives, for --world or a persistent store: memory, "
                        "oxigraph (default), oxigraph:PATH or sparql:URL")


def cmd_validate(args: argparse.Namespace) -> int:
    """Print every authoring error and warning; 0 when the definitions can run, 1 otherwise."""
    try:
        defs = load_definitions(args.paths)
    except AuthoringError as e:
        for p in e.problems:
            print(p)
        print(f"invalid: {_counts(e.problems)}")
        return 1
    if args.world or args.store != DEFAULT_STORE:
        world = World.open(args.store)
        _load_world(world, args.world)
        used = {iri for iri in defs.undeclared if _world_uses(world, iri)}
        dropped = {id(p) for iri in used for p in defs.undeclared[iri]}
        defs.warnings = [p for p in defs.warnings if id(p) not in dropped]
        world.store.close()
    refused = asyncio.run(connection_problems(defs)) if args.connect else []
    refused += unbound_arguments(defs) + credential_problems(defs)
    defs.warnings = [*defs.warnings, *command_problems(defs)]
    if args.tools or args.allow_module:
        refused += binding_problems(defs, _reach(args))
    for p in [*defs.warnings, *refused]:
        print(p)
    if refused:
        print(f"invalid: {_counts([*defs.warnings, *refused])}")
        return 1
    warned = f" ({_plural(len(defs.warnings), 'warning')})" if defs.warnings else ""
    print(f"{_plural(len(defs.tools), 'tool')}, {_plural(len(defs.workflows), 'workflow')}, "
          f"{_plural(len(defs.steps), 'step')}: valid{warned}")
    return 0


def _world_uses(world: World, iri: URIRef) -> bool:
    """Whether any statement of the world has ``iri`` as its subject, predicate or object."""
    return any(world.store.select(f"SELECT * WHERE {{ {pattern} }} LIMIT 1", {"t": iri}, {})
               for pattern in ("?t ?p ?o", "?s ?t ?o", "?s ?p ?t"))


def _counts(problems: Sequence[Problem]) -> str:
    errors = sum(p.severity == "error" for p in problems)
    warnings = len(problems) - errors
    text = _plural(errors, "error")
    return text + (f", {_plural(warnings, 'warning')}" if warnings else "")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


# -- run ----------------------------------------------------------------------------------

def _run_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="FILE_OR_DIR",
                   help="Turtle files or folders: tools, workflows and the domain ontology")
    p.add_argument("--world", action="append", default=[], metavar="F",
                   help="world data (repeatable); without it the world is read from "
                        "FILE_OR_DIR when the store is in memory (memory, oxigraph)")
    p.add_argument("--workflow", metavar="IRI",
                   help="the workflow to run, as an IRI or CURIE (needed when several are "
                        "declared)")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--focus", metavar="IRI", help="run one instance for this node")
    which.add_argument("--all", action="store_true",
                       help="run one instance per node of the workflow's focus type")
    _execution_options(p, "run")


def _execution_options(p: argparse.ArgumentParser, what: str) -> None:
    """The options ``run`` and ``resume`` share: tools, trace, output world, store."""
    p.add_argument("--tools", action="append", default=[], metavar="MODULE",
                   help="a Python module (importable from the current directory) or .py file "
                        "whose public functions back python:NAME and python:MODULE.NAME "
                        "bindings (repeatable)")
    _reach_options(p)
    p.add_argument("--trace", metavar="PATH", help=f"write the {what}'s trace (JSON Lines) here")
    if what == "run":
        p.add_argument("--trace-snapshot", action="store_true",
                       help="embed the world's N-Quads in the trace (small worlds only), so a "
                            "replay decides changed definitions against the world itself")
    p.add_argument("--out", metavar="F",
                   help=f"write the world after the {what} to F (.trig or .nq)")
    p.add_argument("--entailment", choices=("rdfs", "owl-rl"), default="rdfs",
                   help="how argument types are entailed (default: rdfs)")
    p.add_argument("--store", default=DEFAULT_STORE, metavar="STORE",
                   help="where the world lives: memory, oxigraph (default), oxigraph:PATH "
                        "or sparql:URL")
    p.add_argument("--allow", default="ReadOnly,HostStateWrite", metavar="CLASSES",
                   help="side-effect classes steps may call (default: ReadOnly,HostStateWrite; "
                        "add ExternalCommit to allow it); a tool outside blocks its instance")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="print only the outcome, not each step")


def cmd_run(args: argparse.Namespace) -> int:
    """Run one instance (``--focus``) or one per focus node (``--all``); exit by its status."""
    out_format = _out_format(args.out) if args.out else None
    _writable("--trace", args.trace)
    agent = Agent.from_files(*args.paths, tools=_reach(args), entailment=args.entailment)
    with World.open(args.store) as world:  # an on-disk store is let go however the run ends
        if args.world:
            _load_world(world, args.world)
        elif not world.store.persistent:
            _load_world(world, args.paths)
        view = RunView(agent.definitions, quiet=args.quiet, world=world)
        if args.all and sys.stderr.isatty():
            view.total = len(focus_nodes(agent.definitions, world,
                                         agent.workflow(args.workflow)))
        try:
            run = agent.run(world, args.workflow, args.focus, all=args.all, trace=args.trace,
                            on_instance=view.instance, keep=not args.all,
                            trace_snapshot=args.trace_snapshot, allow=args.allow.split(","),
                            on_step=view.step)
        finally:
            view.clear_progress()
        view.summary(run, table=args.all)
        if args.out:
            _write_world(world, agent.definitions, args.out, out_format)
        return EXIT[run.status]


class WorldDataError(AuthoringError):
    """World data (``--world`` files) that cannot be read: told apart from the definitions."""


def _load_world(world: World, paths: Sequence[str]) -> None:
    try:
        world.load(*paths)
    except AuthoringError as e:
        raise WorldDataError(e.problems) from None


def _write_world(world: World, defs: Definitions, path: str, fmt: str | None) -> None:
    graph = world.graph
    for prefix, ns in defs.graph.namespaces():
        graph.bind(prefix, ns, override=False)
    text = graph.serialize(format=fmt)
    # rdflib writes a NaN or infinite double in N-Quads as "nan"/"inf", which nothing reads
    # back; its lexical forms are NaN, INF and -INF (TriG already writes those)
    text = _NON_FINITE.sub(lambda m: f'"{_LEXICAL[m.group(1)]}"^^<{m.group(2)}>', text)
    Path(path).write_text(text, encoding="utf-8")


_NON_FINITE = re.compile(r'"(nan|inf|-inf)"\^\^<(http://www\.w3\.org/2001/XMLSchema#'
                         r'(?:double|float))>')
_LEXICAL = {"nan": "NaN", "inf": "INF", "-inf": "-INF"}


def _out_format(path: str) -> str:
    fmt = OUT_FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise UsageError(f"--out {path}: name the file .trig (TriG) or .nq (N-Quads); the world "
                         "has named graphs, which Turtle cannot hold")
    _writable("--out", path)
    return fmt


def _writable(option: str, path: str | None) -> None:
    """Refuse an output file that cannot be written before anything runs, not after."""
    if path is None:
        return
    p = Path(path)
    folder = p.parent
    if p.is_dir():
        raise UsageError(f"{option} {path}: this is a folder; give a file name in it")
    if not folder.is_dir():
        raise UsageError(f"{option} {path}: the folder {folder} does not exist; create it "
                         "first")
    if not os.access(folder, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise UsageError(f"{option} {path}: not writable")


def load_tools(specs: Sequence[str]) -> dict[str, Callable[..., Any]]:
    """Each public function of each module, under ``NAME`` and ``MODULE.NAME``.

    A spec is a module name (the current directory is importable) or a ``.py`` file. A bare
    ``NAME`` defined by two modules is left out, so the binding must say which module.
    """
    tools: dict[str, Callable[..., Any]] = {}
    bare: dict[str, list[Callable[..., Any]]] = {}
    for spec in specs:
        module = _import_tools(spec)
        for name, func in vars(module).items():
            if name.startswith("_") or not inspect.isfunction(func):
                continue
            if func.__module__ != module.__name__:
                continue
            tools[f"{module.__name__}.{name}"] = func
            bare.setdefault(name, []).append(func)
    for name, funcs in bare.items():
        if len(funcs) == 1:
            tools.setdefault(name, funcs[0])
    return tools


def _import_tools(spec: str) -> ModuleType:
    path = Path(spec)
    if spec.endswith(".py") or os.sep in spec or "/" in spec:
        if not path.is_file():
            raise UsageError(f"--tools {spec}: no such Python file")
        name = path.stem
        if str(path.parent.resolve()) not in sys.path:
            sys.path.insert(0, str(path.parent.resolve()))
        found = importlib.util.spec_from_file_location(name, path)
        if found is None or found.loader is None:
            raise UsageError(f"--tools {spec}: cannot load it as a Python module")
        module = importlib.util.module_from_spec(found)
        sys.modules.setdefault(name, module)
        try:
            found.loader.exec_module(module)
        except Exception as e:
            if sys.modules.get(name) is module:
                del sys.modules[name]
            raise _import_failed(spec, e) from None
        return module
    _cwd_importable()
    try:
        return importlib.import_module(spec)
    except ModuleNotFoundError as e:
        if e.name is not None and spec.split(".")[0] != e.name.split(".")[0]:
            raise _import_failed(spec, e) from None  # the module itself imports a missing one
        raise UsageError(f"--tools {spec}: cannot import it ({e}); run from the folder that "
                         "holds it, or give the path of the .py file") from None
    except Exception as e:
        raise _import_failed(spec, e) from None


def _import_failed(spec: str, e: BaseException) -> UsageError:
    """A tools module that does not parse or raises while it is imported, located."""
    if isinstance(e, SyntaxError):
        where = f"{e.filename}:{e.lineno}" if e.filename else f"line {e.lineno}"
        text = f": {e.text.strip()}" if e.text and e.text.strip() else ""
        return UsageError(f"--tools {spec}: {where}: syntax error: {e.msg}{text}")
    frames = traceback.extract_tb(e.__traceback__)
    libs = tuple({sys.prefix, sys.base_prefix, str(Path(__file__).parent)})
    ours = [f for f in frames if not f.filename.startswith(("<", *libs))]  # the user's lines
    where = f" at {ours[-1].filename}:{ours[-1].lineno}" if ours else ""
    return UsageError(f"--tools {spec}: importing it raised {type(e).__name__}: {e}{where}; "
                      "fix the module (it runs top to bottom when --tools loads it)")


def _reach_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--allow-module", action="append", default=[], metavar="NAME",
                   help="let python:NAME.func bindings (and NAME.sub.func) import and call "
                        "code in module NAME (repeatable); without it a python: binding "
                        "reaches only the functions --tools registers")
    p.add_argument("--allow-host", action="append", default=[], metavar="HOST",
                   help="let HTTP bindings and MCP server URLs reach only these hosts "
                        "(repeatable; api.example.org, *.example.org, 10.0.0.0/8), with "
                        "allow-hosts in [tool.horismos] of ./pyproject.toml; link-local and "
                        "metadata addresses only when named")


def _reach(args: argparse.Namespace) -> Reach:
    """What bindings may reach: ``--tools`` functions, ``--allow-module`` modules, and the
    ``--allow-host`` hosts with the project's ``allow-hosts``."""
    calls = args.command in ("run", "resume", "replay") or (
        getattr(args, "action_run", None) is cmd_tools_call)
    if args.allow_module and calls:  # listing and validating import nothing
        _cwd_importable()
    hosts = [*args.allow_host, *_project_hosts()]
    return Reach(load_tools(args.tools), args.allow_module, Hosts(tuple(hosts)))


def _project_hosts() -> list[str]:
    """``allow-hosts`` under ``[tool.horismos]`` in the current folder's ``pyproject.toml``."""
    path = Path("pyproject.toml")
    if not path.is_file():
        return []
    import tomllib

    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise UsageError(f"{path}: cannot read [tool.horismos] from it ({e})") from None
    hosts = table.get("tool", {}).get("horismos", {}).get("allow-hosts", [])
    if not isinstance(hosts, list) or not all(isinstance(h, str) for h in hosts):
        raise UsageError(f"{path}: [tool.horismos] allow-hosts is a list of strings, e.g. "
                         "[\"api.example.org\", \"*.internal.example\"]")
    return hosts


def _cwd_importable() -> None:
    """Modules the user names are looked up in the current directory too (as ``python -m``)."""
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())


class RunView:
    """Prints each step as it lands (flushed, on a terminal and in a pipe, so a slow tool or a
    killed run leaves what happened so far); a progress bar on a terminal for ``--all``."""

    def __init__(self, defs: Definitions, *, quiet: bool = False,
                 out: TextIO | None = None, err: TextIO | None = None,
                 world: World | None = None) -> None:
        self.defs = defs
        self.world = world
        self._explained: dict[int, str] = {}
        exists = None if world is None else (
            lambda c: next(iter(world.store.outgoing(c)), None) is not None)
        self.name: Callable[[Node], str] = functools.cache(lambda node: defs.name(node, exists))
        self.quiet = quiet
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.total = 0  # > 0 draws the progress bar
        self.done = 0
        self.rows: list[tuple[str, str, str, str, str]] = []
        """The summary table's rows, taken as each instance ends (a batch keeps no records)."""

    def step(self, inst: InstanceRun, rec: StepRecord) -> None:
        """One step, as soon as it has landed."""
        if self.quiet:
            return
        self.clear_progress()
        self.out.write(self.step_line(inst, rec) + "\n")
        if rec.status == "waiting" and rec.brief:
            self.out.write("".join(f"    {line}\n" for line in rec.brief.splitlines()))
        self.out.flush()
        self._progress()

    def instance(self, inst: InstanceRun) -> None:
        self.done += 1
        n = self.name
        at = inst.current if inst.status != "completed" else (
            inst.steps[-1].step if inst.steps else None)
        self.rows.append((_short_id(inst.instance), n(inst.focus), inst.status,
                          n(at) if at else "-", self._why(inst)))
        self._progress()

    def step_line(self, inst: InstanceRun, rec: StepRecord) -> str:
        n = self.name
        who = f"[{_short_id(inst.instance)}] {n(inst.focus)}"
        if rec.kind == "ProposalStep":
            return f"{who}  {n(rec.step)}  {proposal_summary(rec, n)}"
        if rec.kind == "WaitStep":
            return f"{who}  {n(rec.step)}  {wait_summary(rec, n)}"
        if rec.kind == "DecisionStep":
            rule = rec.result[0].get("rule") if rec.result else None
            how = "otherwise" if rule is None else f"rule {rule + 1}"
            target = n(rec.next) if rec.next else "end"
            return f"{who}  {n(rec.step)}  decision: {how} -> {target}"
        call = n(rec.tool) if rec.tool else rec.kind
        if rec.args:
            first = sorted(rec.args[0].items())  # RDF keeps no order of horis:arg; be stable
            call += "(" + ", ".join(f"{k}={self._value(v)}" for k, v in first) + ")"
            if len(rec.args) > 1:
                call += f" and {len(rec.args) - 1} more call(s)"
        line = f"{who}  {n(rec.step)}  {call}  {rec.status.replace('_', ' ')}"
        if rec.status == "completed":
            line += f", {_plural(len(rec.effects), 'effect')}"
        elif rec.status == "blocked" and rec.error is None:
            line += f": {self._blocked(inst, rec)}"
        elif rec.status == "rejected":
            line += " by the gate: nothing landed"
            line += "".join(f"\n    {self._message(m)}" for m in rec.messages)
        elif rec.error is not None:
            line += f": {rec.error}"
        if rec.error is not None and rec.next is not None:
            line += f"\n    onError -> {n(rec.next)}"
        return line

    def _message(self, m: ShaclMessage) -> str:
        """A gate message with the value it rejected, as the author would write it."""
        if m.value is None:
            return str(m)
        return f"{m} (value: {self._value(m.value)})"

    def _value(self, n3: str) -> str:
        try:
            node = from_n3(n3)
        except Exception:
            return n3
        if isinstance(node, URIRef):
            return self.name(node)
        return node.n3(self.defs.graph.namespace_manager) if node is not None else n3

    def _progress(self) -> None:
        if self.total <= 0:
            return
        width = 30
        filled = width * self.done // self.total
        bar = "#" * filled + "." * (width - filled)
        self.err.write(f"\r[{bar}] {self.done}/{self.total} instances")
        self.err.flush()

    def clear_progress(self) -> None:
        if self.total > 0:
            self.err.write("\r\033[K")
            self.err.flush()

    def summary(self, run: Run, *, table: bool) -> None:
        n = self.name
        if not table:
            inst = run.instances[0]
            self.out.write(f"{n(inst.workflow)} {n(inst.focus)}: {self._outcome(inst)}\n")
            self.out.flush()
            return
        parts = ", ".join(f"{c} {s}" for s, c in sorted(run.counts.items()))
        self.out.write(f"\n{_plural(sum(run.counts.values()), 'instance')}"
                       f"{': ' + parts if parts else ''}\n")
        rows = [("id", "focus", "status", "stopped at", "why"), *self.rows]
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        for r in rows:
            line = "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)) + "  " + r[4]
            self.out.write(line.rstrip() + "\n")

    def _outcome(self, inst: InstanceRun) -> str:
        if inst.status == "completed":
            return f"completed after {_plural(len(inst.steps), 'step')}"
        at = f" at {self.name(inst.current)}" if inst.current else ""
        why = self._why(inst)
        return f"{inst.status}{at}" + (f": {why}" if why else "")

    def _blocked(self, inst: InstanceRun, rec: StepRecord) -> str:
        """Which part of the step's preconditions failed, with the values bound so far, asked
        of the world (the record keeps the failing pattern, as its trace does)."""
        if id(rec) in self._explained:
            return self._explained[id(rec)]
        text = f"this pattern does not hold: {_one_line(rec.blocked_by or '')}"
        step = self.defs.steps.get(rec.step)
        tool = getattr(step, "tool", None)
        for pre in (getattr(step, "requires", None), getattr(tool, "requires", None)):
            if self.world is None or pre is None or rec.blocked_by not in (
                    *(p.text for p in pre.patterns), " ".join(p.text for p in pre.patterns)):
                continue
            with contextlib.suppress(Exception):  # no diagnosis: the pattern stays shown
                text = self.world.store.explain(pre, dict(inst.variables))
            break
        self._explained[id(rec)] = text
        return text

    def _why(self, inst: InstanceRun) -> str:
        if inst.status == "waiting":
            return inst.brief.splitlines()[0] if inst.brief else ""
        if inst.status == "blocked" and inst.error is None:
            rec = next((r for r in reversed(inst.steps) if r.status == "blocked"), None)
            return self._blocked(inst, rec) if rec is not None else (
                f"this pattern does not hold: {_one_line(inst.blocked_by or '')}")
        if inst.error is not None:
            cause = getattr(inst.error, "cause", inst.error)
            values = [self._value(m.value) for m in getattr(cause, "messages", ())
                      if m.value is not None]
            rejected = f" (value{'s' if len(values) > 1 else ''}: {', '.join(values)})"
            return _one_line(str(inst.error)) + (rejected if values else "")
        return ""


def _short_id(instance: URIRef) -> str:
    return str(instance).rsplit(":", 1)[-1][:8]


def _one_line(text: str) -> str:
    return " ".join(text.split())


# -- replay -------------------------------------------------------------------------------

def _replay_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("trace", metavar="TRACE_OR_DIR",
                   help="a recorded trace (.jsonl), or a folder: every *.jsonl in it is replayed")
    p.add_argument("paths", nargs="+", metavar="FILE_OR_DIR",
                   help="the Turtle definitions to replay against: tools, workflows, ontology")
    p.add_argument("--tools", action="append", default=[], metavar="MODULE",
                   help="as for run; needed only with --reexecute-idempotent (recorded "
                        "results are substituted, no tool is called)")
    _reach_options(p)
    p.add_argument("--reexecute-idempotent", action="store_true",
                   help="call horis:idempotent tools again and compare their results with the "
                        "record (non-idempotent tools are never called)")


def cmd_replay(args: argparse.Namespace) -> int:
    """Replay each trace; one line per trace; 0 when all replay the same to their end, 1
    otherwise (a divergence, a refused trace, or one whose recording stopped mid-run)."""
    agent = Agent.from_files(*args.paths, tools=_reach(args))
    source = Path(args.trace)
    if not source.exists():
        raise UsageError(f"{source}: no such trace or folder of traces")
    traces = sorted(source.glob("*.jsonl")) if source.is_dir() else [source]
    if not traces:
        raise UsageError(f"{source}: no *.jsonl traces in this folder")
    same = True
    for path in traces:
        recorded = _recorded_definitions(path)
        if recorded and recorded != agent.definitions.digest:
            print(f"note: {path}: the definitions changed since it was recorded ({recorded}, "
                  f"now {agent.definitions.digest}); replaying to show where they diverge",
                  file=sys.stderr)
        try:
            report = replay(path, agent, reexecute_idempotent=args.reexecute_idempotent)
        except TraceError as e:
            print(f"REFUSED   {e}")
            same = False
            continue
        print(report)
        same = same and not report.diverged and report.complete
    return 0 if same else 1


def _recorded_definitions(path: Path) -> str | None:
    """The definitions digest in a trace's header line, read before the trace is checked."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.loads(f.readline()).get("definitions_digest")
    except (OSError, ValueError, AttributeError):
        return None


# -- trace --------------------------------------------------------------------------------

def _trace_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    show = sub.add_parser("show", help="print a readable timeline: step, tool, args, verdict, "
                                       "time", description="print a trace as a timeline")
    show.add_argument("trace", metavar="TRACE")
    show.set_defaults(action_run=cmd_trace_show)
    export = sub.add_parser("export", help="write the run as PROV-O Turtle",
                            description="write the run as PROV-O Turtle: a prov:Activity per "
                                        "step with its plan, what it used, the effect graph it "
                                        "generated, and when")
    export.add_argument("trace", metavar="TRACE")
    export.add_argument("--format", choices=("prov",), default="prov",
                        help="prov: PROV-O as Turtle (the default)")
    export.add_argument("--output", "-o", metavar="F", help="write here instead of stdout")
    export.set_defaults(action_run=cmd_trace_export)


def cmd_trace(args: argparse.Namespace) -> int:
    return args.action_run(args)


def _read_trace(path: str) -> list[dict[str, Any]]:
    if not Path(path).is_file():
        raise UsageError(f"{path}: no such trace file")
    return read_trace(path)


def cmd_trace_show(args: argparse.Namespace) -> int:
    """Print the trace's timeline, after checking its hash chain and version."""
    for line in timeline(_read_trace(args.trace)):
        print(line)
    return 0


def cmd_trace_export(args: argparse.Namespace) -> int:
    """Write the trace as PROV-O Turtle to ``--output`` or stdout."""
    text = prov_graph(_read_trace(args.trace)).serialize(format="turtle")
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


# -- resume -------------------------------------------------------------------------------

def _resume_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="FILE_OR_DIR",
                   help="the Turtle definitions the instance runs with")
    p.add_argument("--world", action="append", default=[], metavar="F",
                   help="the world the run committed to, e.g. the run's --out (repeatable); "
                        "not needed with a persistent --store")
    p.add_argument("--instance", required=True, metavar="IRI",
                   help="the waiting instance: its IRI (urn:horismos:instance:…, as the brief "
                        "shows it) or the short id the run printed")
    p.add_argument("--facts", metavar="TURTLE_OR_FILE",
                   help="Turtle that answers the wait, or a file of it ('-' reads stdin); the "
                        "definitions' prefixes are declared. Without it the wait's horis:until "
                        "and horis:timeout are only checked again")
    _execution_options(p, "resume")


def cmd_resume(args: argparse.Namespace) -> int:
    """Land the facts answering a waiting instance and continue it; exit by its status."""
    out_format = _out_format(args.out) if args.out else None
    _writable("--trace", args.trace)
    agent = Agent.from_files(*args.paths, tools=_reach(args),
                             entailment=args.entailment)
    facts = args.facts
    if facts == "-":
        facts = sys.stdin.read()
    elif facts is not None and len(facts) < 1024 and "\n" not in facts and Path(facts).is_file():
        facts = Path(facts).read_text(encoding="utf-8")
    elif facts is not None and facts.strip() and not any(c.isspace() for c in facts.strip()):
        # Turtle always has a space between terms: a single word is a file that is not there
        raise UsageError(f"--facts {facts}: no such file; give a Turtle file that exists, "
                         "'-' for stdin, or the facts themselves, e.g. --facts ':a :b :c .'")
    with World.open(args.store) as world:  # an on-disk store is let go however it ends
        _load_world(world, args.world)
        view = RunView(agent.definitions, quiet=args.quiet, world=world)
        run = agent.resume(world, args.instance, facts, trace=args.trace,
                           allow=args.allow.split(","), on_step=view.step)
        view.summary(run, table=False)
        if args.out:
            _write_world(world, agent.definitions, args.out, out_format)
        return EXIT[run.status]


# -- instances and wake -------------------------------------------------------------------

def _instances_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="*", metavar="FILE_OR_DIR",
                   help="the Turtle definitions, to write names as CURIEs (optional)")
    p.add_argument("--world", action="append", default=[], metavar="F",
                   help="the world the runs committed to, e.g. a run's --out (repeatable); "
                        "not needed with a persistent --store")
    p.add_argument("--store", default=DEFAULT_STORE, metavar="STORE",
                   help="where the world lives: oxigraph:PATH or sparql:URL (or memory, "
                        "oxigraph with --world)")
    p.add_argument("--status", choices=STATUSES, help="list only the instances in this status")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="text for people (the default) or JSON")


def _world_of(args: argparse.Namespace) -> World:
    world = World.open(args.store)
    if not args.world and not world.store.persistent:
        raise UsageError(f"--store {args.store} starts empty: give the world the runs committed "
                         "to with --world F (a run's --out), or a persistent --store "
                         "(oxigraph:PATH, sparql:URL)")
    _load_world(world, args.world)
    return world


def cmd_instances(args: argparse.Namespace) -> int:
    """List the world's instances: id, workflow, focus, status, current step, since when."""
    name: Callable[[Any], str] = (load_definitions(args.paths).name if args.paths
                                  else lambda node: str(node))
    world = _world_of(args)
    rows = list_instances(world.store, args.status)
    if args.format == "json":
        print(json.dumps([{"instance": str(r.instance), "workflow": str(r.workflow),
                           "focus": str(r.focus), "status": r.status,
                           "step": str(r.current) if r.current else None, "since": r.since}
                          for r in rows], indent=2))
        return 0
    if not rows:
        print("no " + (f"{args.status} " if args.status else "") + "instances in this world")
        return 0
    table = [("id", "workflow", "focus", "status", "step", "since")]
    table += [(_short_id(r.instance), name(r.workflow), name(r.focus), r.status,
               name(r.current) if r.current else "-", (r.since or "-")[:19])
              for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    for row in table:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    return 0


def _wake_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="FILE_OR_DIR",
                   help="the Turtle definitions the instances run with")
    p.add_argument("--world", action="append", default=[], metavar="F",
                   help="the world the runs committed to (repeatable); write it back with "
                        "--out. Not needed with a persistent --store, what a timer should use")
    p.add_argument("--store", default=DEFAULT_STORE, metavar="STORE",
                   help="where the world lives: oxigraph:PATH or sparql:URL (or memory, "
                        "oxigraph with --world and --out)")
    p.add_argument("--tools", action="append", default=[], metavar="MODULE",
                   help="as for run: the functions the steps after the waits call")
    p.add_argument("--traces", metavar="DIR",
                   help="write each resumed instance's trace into DIR (one .jsonl each)")
    p.add_argument("--out", metavar="F", help="write the world afterwards to F (.trig or .nq)")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="print only each resumed instance's outcome")


def cmd_wake(args: argparse.Namespace) -> int:
    """Resume every wait that is due: past its horis:timeout, or its horis:until holds now.

    Waits that are not due are left untouched, so it can run from cron or a systemd timer as
    often as wanted. 0 when every resumed instance went on (or none was due), 1 when one
    failed."""
    import datetime as dt

    out_format = _out_format(args.out) if args.out else None
    agent = Agent.from_files(*args.paths, tools=load_tools(args.tools))
    world = _world_of(args)
    due = due_waits(agent.definitions, world.store, dt.datetime.now(dt.UTC))
    if not due:
        print("no wait is due")
    failed = False
    view = RunView(agent.definitions, quiet=args.quiet, world=world)
    for iid in due:
        trace = None
        if args.traces:
            Path(args.traces).mkdir(parents=True, exist_ok=True)
            stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
            trace = Path(args.traces) / f"wake-{_short_id(iid)}-{stamp}.jsonl"
        run = agent.resume(world, iid, None, trace=trace, on_step=view.step)
        view.summary(run, table=False)
        failed = failed or run.status == "failed"
    if args.out:
        _write_world(world, agent.definitions, args.out, out_format)
    return 1 if failed else 0


# -- approve ------------------------------------------------------------------------------

def _approve_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="FILE_OR_DIR",
                   help="the Turtle definitions the instance runs with")
    p.add_argument("--world", action="append", default=[], metavar="F",
                   help="the world the run committed to, e.g. the run's --out (repeatable); "
                        "not needed with a persistent --store")
    p.add_argument("--instance", required=True, metavar="IRI",
                   help="the instance waiting for approval (its IRI or short id)")
    p.add_argument("--fingerprint", required=True, metavar="HEX",
                   help="the fingerprint of the exact payload to approve, as its brief shows")
    p.add_argument("--out", metavar="F", help="write the world with the approval to F")
    p.add_argument("--store", default=DEFAULT_STORE, metavar="STORE",
                   help="where the world lives: memory, oxigraph (default), oxigraph:PATH "
                        "or sparql:URL")


def cmd_approve(args: argparse.Namespace) -> int:
    """Record a person's approval of one exact payload a waiting instance's step would send."""
    out_format = _out_format(args.out) if args.out else None
    agent = Agent.from_files(*args.paths)
    world = World.open(args.store)
    world.load(*args.world)
    done = agent.approve(world, args.instance, args.fingerprint)
    n = agent.definitions.name
    print(f"approved {n(URIRef(done['tool']))} for {done['instance']}: "
          f"{json.dumps(done['payload'], sort_keys=True, ensure_ascii=False)} "
          f"(fingerprint {done['fingerprint']}); resume the instance to call it")
    if args.out:
        _write_world(world, agent.definitions, args.out, out_format)
    return 0


# -- graph --------------------------------------------------------------------------------

def _graph_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="FILE_OR_DIR",
                   help="Turtle files or folders of them")
    p.add_argument("--format", choices=("mermaid", "dot"), default="mermaid",
                   help="diagram language (default: mermaid)")
    p.add_argument("--workflow", metavar="IRI",
                   help="draw only this workflow (IRI or CURIE); default: all of them")


def cmd_graph(args: argparse.Namespace) -> int:
    """Print the workflow as a Mermaid flowchart or a Graphviz digraph."""
    defs = load_definitions(args.paths)
    if not defs.workflows:
        raise UsageError(f"{' '.join(args.paths)}: no horis:Workflow is declared, so there is "
                         "nothing to draw; include the file that declares the workflow")
    if args.workflow:
        workflows = [Agent(defs).workflow(args.workflow)]
    else:
        workflows = [defs.workflows[k] for k in sorted(defs.workflows, key=str)]
    sys.stdout.write(draw(defs, workflows, args.format))
    return 0


# -- tools --------------------------------------------------------------------------------

EXIT_CALL = {"completed": 0, "failed": 1, "rejected": 1, "timed_out": 1, "blocked": 4,
             "refused": 5}


def _tools_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", required=True, metavar="ACTION")

    def action(name: str, help: str, run: Callable[[argparse.Namespace], int],
               epilog: str | None = None) -> argparse.ArgumentParser:
        a = sub.add_parser(name, help=help, description=help, epilog=epilog)
        a.set_defaults(action_run=run)
        return a

    def common(a: argparse.ArgumentParser, *, fmt: bool = True) -> None:
        a.add_argument("paths", nargs="+", metavar="FILE_OR_DIR",
                       help="Turtle files or folders: tools and the domain ontology")
        a.add_argument("--tools", action="append", default=[], metavar="MODULE",
                       help="as for run: a module or .py file whose public functions back "
                            "python:NAME and python:MODULE.NAME bindings (repeatable)")
        _reach_options(a)
        if fmt:
            a.add_argument("--format", choices=("text", "json"), default="text",
                           help="text for people (the default) or JSON")

    def context(a: argparse.ArgumentParser, world_help: str) -> None:
        a.add_argument("--world", action="append", default=[], metavar="F", help=world_help)
        a.add_argument("--store", default=DEFAULT_STORE, metavar="STORE",
                       help="where the world lives: memory, oxigraph (default), "
                            "oxigraph:PATH or sparql:URL")
        a.add_argument("--approval", action="append", default=[], metavar="FINGERPRINT",
                       help="an approval printed by `tools approve` (for tools with "
                            "horis:requiresApproval)")
        a.add_argument("--allow", default="ReadOnly,HostStateWrite", metavar="CLASSES",
                       help="side-effect classes a call may have, comma-separated "
                            "(default: ReadOnly,HostStateWrite; add ExternalCommit to allow "
                            "it)")

    listing = action("list", "the static catalog: each tool's schemas, lane, side effect, "
                     "approval, dependencies and base readiness", cmd_tools_list)
    common(listing)
    found = action("discover", "the tools relevant to QUERY, ranked, each executable or "
                   "blocked here, with why", cmd_tools_discover,
                   epilog="exit codes: 0 some tool shown, 1 none")
    found.add_argument("query", metavar="QUERY", help="what the tool should do, in words")
    common(found)
    context(found, "world data (repeatable); with it, tool preconditions and --focus are "
                   "checked")
    found.add_argument("--focus", metavar="IRI",
                       help="a node of the world: bind it to each argument of its class")
    found.add_argument("--include-blocked", action="store_true",
                       help="show blocked tools too, with why_blocked")
    call = action("call", "run one tool outside a workflow: schema, types, preconditions, "
                  "policy and approval checked, then the same binding, SHACL gate and "
                  "transaction as a step", cmd_tools_call,
                  epilog="exit codes: 0 completed, 1 failed, timed out or rejected by the "
                         "gate, 2 usage error, 4 blocked by a precondition, 5 refused "
                         "(schema, argument type, policy, approval, environment, binding); "
                         "nothing changes unless it completes")
    call.add_argument("name", metavar="NAME", help="the tool: short name, CURIE or IRI")
    common(call)
    call.add_argument("--args", required=True, metavar="JSON",
                      help="the arguments as a JSON object, or @FILE holding one")
    context(call, "world data (repeatable); without it the world is read from FILE_OR_DIR "
                  "when the store is in memory (memory, oxigraph)")
    call.add_argument("--out", metavar="F", help="write the world after the call (.trig, .nq)")
    call.add_argument("--trace", metavar="PATH", help="write the call's trace (JSON Lines)")
    approve = action("approve", "print the approval fingerprint of exactly this call: "
                     "SHA-256 of the tool IRI and the canonical JSON of its arguments",
                     cmd_tools_approve)
    approve.add_argument("name", metavar="NAME", help="the tool: short name, CURIE or IRI")
    common(approve, fmt=False)
    approve.add_argument("--args", required=True, metavar="JSON",
                         help="the arguments as a JSON object, or @FILE holding one")
    inventory = action("inventory", "write the machine-readable tool inventory, or check "
                       "one", cmd_tools_inventory,
                       epilog="exit codes: 0 written or up to date, 1 drifted")
    common(inventory, fmt=False)
    where = inventory.add_mutually_exclusive_group()
    where.add_argument("--output", "-o", metavar="F", help="write it here instead of stdout")
    where.add_argument("--check", metavar="F",
                       help="compare with this inventory; print the differences and exit 1 "
                            "when the declared tools have drifted from it")


def cmd_tools(args: argparse.Namespace) -> int:
    return args.action_run(args)


def _catalog_agent(args: argparse.Namespace) -> Agent:
    return Agent.from_files(*args.paths, tools=_reach(args))


def _json_args(text: str) -> Any:
    source = "--args"
    if text.startswith("@"):
        source = text[1:]
        try:
            text = Path(source).read_text(encoding="utf-8")
        except OSError as e:
            raise UsageError(f"--args {text}: cannot read it ({e.strerror})") from None
    try:
        return json.loads(text)
    except ValueError as e:
        raise UsageError(f"{source}: not JSON ({e}); write an object such as "
                         "'{\"patient\": \":patient42\"}'") from None


def cmd_tools_list(args: argparse.Namespace) -> int:
    """Print the static catalog: no world, no focus, no approvals."""
    entries = _catalog_agent(args).catalog.list()
    if args.format == "json":
        print(json.dumps([e.to_json() for e in entries], indent=2, ensure_ascii=False))
    else:
        print("\n".join(e.text() for e in entries) or "no tools are declared")
    return 0


def cmd_tools_discover(args: argparse.Namespace) -> int:
    """Print the tools matching the query, ranked; 0 when any is shown, 1 when none."""
    agent = _catalog_agent(args)
    world = None
    if args.world or args.store != DEFAULT_STORE:
        world = World.open(args.store)
        _load_world(world, args.world)
    found = agent.catalog.discover(args.query, world, args.focus, include_blocked=True,
                                   approvals=args.approval, allow=args.allow.split(","))
    shown = [d for d in found if args.include_blocked or d.availability == "executable"]
    if args.format == "json":
        print(json.dumps([d.to_json() for d in shown], indent=2, ensure_ascii=False))
    elif shown:
        print("\n".join(d.text(i) for i, d in enumerate(shown, 1)))
    else:
        hidden = len(found) - len(shown)
        print(f"no executable tool matches {args.query!r}"
              + (f" ({_plural(hidden, 'blocked tool')}; --include-blocked shows "
                 f"{'it' if hidden == 1 else 'them'})" if hidden else ""))
    return 0 if shown else 1


def cmd_tools_call(args: argparse.Namespace) -> int:
    """Run one guarded call; print its receipt or its JSON envelope; exit by its status."""
    out_format = _out_format(args.out) if args.out else None
    _writable("--trace", args.trace)
    payload = _json_args(args.args)
    if len(args.approval) > 1:
        raise UsageError("give one --approval to a call: it approves one exact payload")
    agent = _catalog_agent(args)
    world = World.open(args.store)
    if args.world:
        _load_world(world, args.world)
    elif not world.store.persistent:
        _load_world(world, args.paths)
    result = agent.catalog.call(args.name, payload, world,
                                approval=args.approval[0] if args.approval else None,
                                allow=args.allow.split(","), trace=args.trace)
    if args.out:
        _write_world(world, agent.definitions, args.out, out_format)
        result.artifacts.append({"type": "world", "path": args.out})
    if args.format == "json":
        print(json.dumps(result.to_json(), indent=2, ensure_ascii=False))
    else:
        print(result.receipt(kept=bool(args.out) or world.store.persistent))
    return EXIT_CALL[result.status]


def cmd_tools_approve(args: argparse.Namespace) -> int:
    """Print the fingerprint that approves exactly this tool with exactly these arguments."""
    agent = _catalog_agent(args)
    print(agent.catalog.approve(args.name, _json_args(args.args)))
    return 0


def cmd_tools_inventory(args: argparse.Namespace) -> int:
    """Write the inventory (stdout or --output), or --check a file against the declarations."""
    inventory = _catalog_agent(args).catalog.inventory()
    n = _plural(len(inventory["tools"]), "tool")
    if args.check:
        drift = check_inventory(inventory, args.check)
        if not drift:
            print(f"{args.check}: up to date ({n})")
            return 0
        print("\n".join(drift))
        print(f"{args.check}: the declared tools have drifted from this inventory; if the "
              "change is intended, regenerate it with `horismos tools inventory "
              f"{' '.join(args.paths)} --output {args.check}`")
        return 1
    if args.output:
        Path(args.output).write_text(inventory_text(inventory), encoding="utf-8")
        print(f"wrote {args.output} ({n})")
    else:
        sys.stdout.write(inventory_text(inventory))
    return 0


# -- load ---------------------------------------------------------------------------------

def _load_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="RDF files or folders of them: Turtle (.ttl), N-Triples (.nt), "
                        "N-Quads (.nq) or TriG (.trig)")
    p.add_argument("--store", required=True, metavar="STORE",
                   help="the world to load into: oxigraph:PATH (on disk) or sparql:URL")


def cmd_load(args: argparse.Namespace) -> int:
    """Parse each file with pyoxigraph straight into the store, a progress bar on a terminal."""
    import time

    from ._sources import RDF_SUFFIXES, expand_paths

    path, bar = None, None
    try:
        world = World.open(args.store)
        if not world.store.persistent:
            raise UsageError(f"--store {args.store} keeps nothing after this process; load into "
                             "oxigraph:PATH or sparql:URL")
        for path in expand_paths(args.files, RDF_SUFFIXES):
            size, t0 = max(path.stat().st_size, 1), time.perf_counter()
            bar = _load_bar(path, size) if sys.stderr.isatty() else None
            n = world.store.load_file(path, bar)
            took = time.perf_counter() - t0
            print(("\r" if bar else "") + f"loaded {n:,} quads from {path} in {took:.1f} s "
                  f"({n / max(took, 1e-9):,.0f} quads/s)" + " " * 20, file=sys.stderr)
        world.store.close()
    except SyntaxError as e:
        print(("\n" if bar else "") + f"horismos load: {path}:{e.lineno}: {e.msg}",
              file=sys.stderr)
        return 1
    except (HorismosError, OSError) as e:
        print(("\n" if bar else "") + f"horismos load: error: {e}", file=sys.stderr)
        return 1
    return 0


def _load_bar(path: Path, size: int) -> Callable[[int], None]:
    shown = [-1]

    def bar(done: int) -> None:
        percent = done * 100 // size
        if percent != shown[0]:
            shown[0] = percent
            filled = percent * 30 // 100
            print(f"\r{path.name} [{'#' * filled}{'.' * (30 - filled)}] {percent:3d}% "
                  f"{done / 1e6:,.1f}/{size / 1e6:,.1f} MB", end="", file=sys.stderr, flush=True)

    return bar


# -- the program --------------------------------------------------------------------------

COMMANDS: list[Command] = [
    Command("validate", "check Turtle definitions: errors and warnings with file and line",
            _validate_arguments, cmd_validate),
    Command("run", "run a workflow for one focus node or for all of them",
            _run_arguments, cmd_run),
    Command("resume", "resume a waiting instance with the facts that answer its wait",
            _resume_arguments, cmd_resume),
    Command("instances", "list the world's workflow instances: id, workflow, focus, status, "
            "step, since when", _instances_arguments, cmd_instances),
    Command("wake", "resume every wait that is due (its timeout passed, or its horis:until "
            "holds): for cron or a systemd timer", _wake_arguments, cmd_wake),
    Command("approve", "approve the exact payload a waiting instance's step would send",
            _approve_arguments, cmd_approve),
    Command("replay", "replay recorded traces against definitions; report the first "
            "divergence", _replay_arguments, cmd_replay),
    Command("trace", "read a trace: show its timeline, or export it as PROV-O",
            _trace_arguments, cmd_trace),
    Command("graph", "draw workflows as a Mermaid or Graphviz diagram",
            _graph_arguments, cmd_graph),
    Command("tools", "the tool catalog: list, discover, call, approve, inventory",
            _tools_arguments, cmd_tools),
    Command("load", "load RDF files into a persistent or remote world (--store)",
            _load_arguments, cmd_load),
    Command("digest", "print the world's digest; --check recomputes it from every quad",
            digest_arguments, cmd_digest),
    Command("serve", "serve the tool catalog to agents over MCP (stdio or streamable HTTP)",
            serve_arguments, cmd_serve),
]


def parser() -> argparse.ArgumentParser:
    from . import __version__

    top = argparse.ArgumentParser(
        prog="horismos",
        description="Run ontology-driven workflows: Turtle-declared tools fired by the runtime "
                    "behind a SHACL effect gate, every run traced.",
        epilog="exit codes: 0 completed or valid, 1 failed or invalid, 2 usage or authoring "
               "error, 3 waiting, 4 blocked")
    top.add_argument("--version", action="version", version=f"horismos {__version__}")
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for c in COMMANDS:
        p = sub.add_parser(c.name, help=c.help, description=c.help)
        c.arguments(p)
        p.set_defaults(func=c.run)
    return top


class _OneLine(logging.Filter):
    """rdflib logs a traceback for each ill-typed literal it reads (``"abc"^^xsd:integer``):
    say it once, in one line."""

    def __init__(self) -> None:
        super().__init__()
        self.said: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[1] is not None:
            why = str(record.exc_info[1])
            text = record.getMessage()
            if text.startswith("Failed to convert Literal"):
                datatype = text.partition("Datatype=")[2].partition(",")[0]
                text = f"an ill-typed literal of datatype <{datatype}> is kept as text"
            record.msg, record.args = f"horismos: warning: {text}: {why}", ()
            record.exc_info = record.exc_text = None
        if record.getMessage() in self.said:
            return False
        self.said.add(record.getMessage())
        return True


def _one_line_rdflib_warnings() -> None:
    logger = logging.getLogger("rdflib.term")
    if not any(isinstance(f, _OneLine) for f in logger.filters):
        logger.addFilter(_OneLine())


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run the command; returns the exit code."""
    args = parser().parse_args(argv)
    _one_line_rdflib_warnings()
    try:
        return args.func(args)
    except BrokenPipeError:  # e.g. `horismos run … | head`: the reader has all it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except AuthoringError as e:
        what = "world data" if isinstance(e, WorldDataError) else "definitions"
        print(f"horismos {args.command}: {_counts(e.problems)} in the {what}:",
              file=sys.stderr)
        for p in e.problems:
            print(f"  {p}", file=sys.stderr)
        return EXIT_USAGE
    except HorismosError as e:
        print(f"horismos {args.command}: error: {redact_text(str(e))}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as e:  # a file the command reads or writes; never a traceback
        where = f"{e.filename}: " if e.filename else ""
        print(f"horismos {args.command}: error: {where}{e.strerror or e}", file=sys.stderr)
        return EXIT_USAGE
