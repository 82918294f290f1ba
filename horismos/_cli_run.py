"""``horismos run`` and ``resume``: drive instances and print each step as it lands.

:class:`RunView` is what a person watching a run sees: one line a step, flushed as it lands,
a progress bar for ``--all`` on a terminal, and the summary table with why each instance
stopped where it did.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from rdflib import Literal, URIRef
from rdflib.term import Node
from rdflib.util import from_n3

from ._agent import Agent
from ._cli_common import (
    EXIT,
    fresh_trace,
    in_memory,
    load_world,
    load_world_beside,
    one_line,
    open_for_writing,
    output_format,
    plural,
    reach,
    reach_options,
    short_id,
    waiting_instance_arguments,
    writable,
    written_back,
)
from ._cli_validate import run_warnings
from ._definitions import Definitions
from ._environment import Environment
from ._errors import HorismosError, OutcomeUnknown, Problem, ShaclMessage, UsageError
from ._intents import held_by_rejected
from ._model import ActionStep, Workflow
from ._outside_policy import outside_policy
from ._policy import Policy, allowed
from ._preconditions import why_blocked
from ._proposal import misconfigured
from ._proposal import summary as proposal_summary
from ._records import InstanceRun, Run, StepRecord
from ._runner import focus_nodes
from ._stored_instances import find_instance, read_instance
from ._stores import DEFAULT_STORE
from ._stores.ox_folder import StoreHeld
from ._trace import Trace, drop_if_empty, own_file, records_refusal
from ._unreadable import why_unreadable
from ._waits import summary as wait_summary
from ._world import World, holds_subject

__all__ = [
    "RunView",
    "cmd_resume",
    "cmd_run",
    "resume_arguments",
    "run_arguments",
    "store_held_trace",
]


def run_arguments(p: argparse.ArgumentParser) -> None:
    """``horismos run``'s options."""
    p.add_argument(
        "paths",
        nargs="+",
        metavar="FILE_OR_DIR",
        help="Turtle files or folders: tools, workflows and the domain ontology",
    )
    p.add_argument(
        "--world",
        action="append",
        default=[],
        metavar="F",
        help="world data (repeatable); without it the world is read from "
        "FILE_OR_DIR when the store is in memory (memory, oxigraph)",
    )
    p.add_argument(
        "--workflow",
        metavar="IRI",
        help="the workflow to run, as an IRI or CURIE (needed when several are declared)",
    )
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--focus", metavar="IRI", help="run one instance for this node")
    which.add_argument(
        "--all",
        action="store_true",
        help="run one instance per node of the workflow's focus type, leaving out a node "
        "the world holds a finished instance of it for (--focus starts another on purpose)",
    )
    p.add_argument(
        "--no-again",
        dest="again",
        action="store_false",
        help="with --focus: if the focus has an instance of the workflow, run nothing and "
        "print it as it stands, exiting by its status (6: another process is running it "
        "now), writing no --trace; one whose process was killed mid-step is gone on with. "
        "A --trace file holding an earlier attempt's trace is kept: a retry that runs "
        "writes the next free numbered file (t-2.jsonl). "
        "What a script that retries after a timeout gives, so a retry never runs the "
        "workflow a second time",
    )
    _execution_options(p, "run")


def _execution_options(p: argparse.ArgumentParser, what: str) -> None:
    """The options ``run`` and ``resume`` share: tools, trace, output world, store."""
    p.add_argument(
        "--tools",
        action="append",
        default=[],
        metavar="MODULE",
        help="a Python module (importable from the current directory) or .py file "
        "whose public functions back python:NAME and python:MODULE.NAME "
        "bindings (repeatable)",
    )
    reach_options(p)
    p.add_argument(
        "--trace",
        metavar="PATH",
        help=f"write the {what}'s trace (JSON Lines) to this file, a new one: a file that "
        "already holds something (an earlier trace) is refused, never written over (one "
        "recording a refusal, exit 6, gets the next numbered file beside it: t-2.jsonl)",
    )
    if what == "run":
        p.add_argument(
            "--trace-snapshot",
            action="store_true",
            help="embed the world's N-Quads in the trace (small worlds only), so a "
            "replay decides changed definitions against the world itself",
        )
    p.add_argument(
        "--out", metavar="F", help=f"write the world after the {what} to F (.trig or .nq)"
    )
    p.add_argument(
        "--entailment",
        choices=("rdfs", "owl-rl"),
        default="rdfs",
        help="how argument types are entailed (default: rdfs)",
    )
    p.add_argument(
        "--store",
        default=DEFAULT_STORE,
        metavar="STORE",
        help="where the world lives: memory, oxigraph (default), oxigraph:PATH, journal:PATH "
        "or sparql:URL",
    )
    p.add_argument(
        "--allow",
        default="ReadOnly,HostStateWrite",
        metavar="CLASSES",
        help="side-effect classes steps may call (default: ReadOnly,HostStateWrite; "
        "add ExternalCommit to allow it); a tool outside blocks its instance",
    )
    p.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print only the outcome: not each step, nor the warnings validate gives",
    )


def cmd_run(args: argparse.Namespace) -> int:
    """Run one instance (``--focus``) or one per focus node (``--all``); exit by its status."""
    out_format = output_format(args.out) if args.out else None
    if args.all and not args.again:  # before anything is loaded: the command is not one
        raise UsageError(
            "--no-again answers one focus's instance; --all leaves out the foci whose "
            "instance finished already: give --focus NODE, or leave --no-again out"
        )
    # a retry-safe run given again, or any run given again after it was refused (exit 6,
    # "ask again later") with the --trace that recorded the refusal: the next numbered trace
    again = args.trace and (not args.again or records_refusal(args.trace))
    trace = _retry_trace(args) if again else args.trace
    try:
        fresh_trace("--trace", trace, args.out)
        return _run(args, trace, out_format)
    finally:  # a numbered trace no event was written to: no trace, as none was made before
        if trace != args.trace:
            drop_if_empty(Path(trace))


def _retry_trace(args: argparse.Namespace) -> str:
    """Where ``run --no-again --trace T`` writes its trace: ``T``, unless ``T`` holds one
    already, most likely the first attempt's: then ``T-2`` (``T-3``, …, the first free, made
    at once, as ``wake --traces`` and ``serve --trace-dir`` take theirs). A retry-safe run is
    the one whose command is given again as it was, and it exited 2 (``T`` is never written
    over), so the wrapper's retry after a timeout ran nothing. So is a run or resume given
    again after it was refused because another run drove its focus (exit 6, whose ``T``
    records that refusal)."""
    path = Path(args.trace)
    try:
        written = path.is_file() and path.stat().st_size > 0
    except OSError:
        written = False
    if not written:
        return str(args.trace)
    writable("--trace", args.trace)  # its folder, as for any --trace
    if args.out is not None and Path(args.out).resolve() == path.resolve():
        fresh_trace("--trace", args.trace, args.out)  # refused: the same file
    return str(own_file(path.parent, path.stem, path.suffix))


def _run(args: argparse.Namespace, trace: str | None, out_format: str | None) -> int:
    """:func:`cmd_run` once its ``--trace`` is settled (``trace``, where it is written)."""
    agent = Agent.from_files(*args.paths, tools=reach(args, calls=True), entailment=args.entailment)
    # which workflow, before the world is read and the warnings of every workflow printed:
    # `run workflows/ --focus …` said some thirty warnings, then to name the workflow
    agent.workflow(args.workflow)
    # a store not made yet is made only to load --world into: else the run would find no
    # focus in it and leave an empty store behind at what may be a mistyped path
    try:
        opened = open_for_writing(args.store, "run", create=bool(args.world))
    except StoreHeld as e:  # another process has the store: its trace says so, and which
        _store_held(agent, args, trace, e)
        raise
    with opened as world:  # let go
        beside: World | None = world  # what the warnings are held to (run_warnings)
        if args.world:
            load_world_beside(world, args.world, args.store, "a run")
            # an earlier run's --out: its focus's unfinished instance is continued, not doubled
            world._kept_in_files = True
        elif not world.store.persistent:
            load_world(world, args.paths)
            beside = None  # the definitions' own files: the load has weighed them
        # what `validate --world` warns of: a modeler sees it before a call. It refuses what
        # validate would; quiet, the run's own check before its first step refuses the same
        if not args.quiet:
            for problem in run_warnings(agent.definitions, beside):
                print(problem, file=sys.stderr)
            # a step this run's --allow leaves out: said before the steps ahead of it act
            workflow = agent.workflow(args.workflow)
            for problem in outside_policy(agent.definitions, workflow, args.allow):
                print(problem, file=sys.stderr)
        view = RunView(agent.definitions, quiet=args.quiet, world=world)
        if args.all and sys.stderr.isatty():
            view.total = len(focus_nodes(agent.definitions, world, agent.workflow(args.workflow)))
        with written_back(world, agent.definitions, args.out, out_format):
            try:
                run = agent.run(
                    world,
                    args.workflow,
                    args.focus,
                    all=args.all,
                    trace=trace or Trace(kept=False),  # else no digest asked
                    on_instance=view.instance,
                    keep=not args.all,
                    trace_snapshot=args.trace_snapshot,
                    allow=args.allow.split(","),
                    on_step=view.step,
                    again=args.again,
                )
            finally:
                view.clear_progress()
        view.summary(run, table=args.all, answered=not args.again)
        if trace and not args.again and not run.instances[0].steps:
            _no_trace_written(trace, run.instances[0], args.trace)
        elif trace != args.trace:  # said on stderr: stdout's lines are the run's, as ever
            print(
                f"horismos run: note: {args.trace} holds an earlier run's trace, never written "
                f"over: this run's trace is {trace}",
                file=sys.stderr,
            )
        if args.all and not sum(run.counts.values()):  # "0 instances" alone reads as done
            workflow = agent.workflow(args.workflow)
            cls = agent.definitions.name(workflow.focus_type)
            nodes = len(focus_nodes(agent.definitions, world, workflow))
            print(
                f"no instance was run: each of the {nodes} nodes of {cls} already has an "
                f"instance of {agent.definitions.name(workflow.iri)}, done or being run, "
                "waiting for `horismos resume` or `horismos wake`, or blocked (`horismos "
                "run … --focus NODE` continues a blocked one) (`horismos instances` lists "
                "them)"
                if nodes
                else f"no node of {cls} (horis:focusType) is in the world: check that the "
                f"world data types its nodes {cls}, in the namespace the definitions use",
                file=sys.stderr,
            )
        return EXIT[run.status]


def _store_held(agent: Agent, args: argparse.Namespace, trace: str | None, e: StoreHeld) -> None:
    """Write the ``--trace`` of a run refused because another process holds its on-disk
    store open, as a run refused because another drives its focus writes one: a header (the
    store named as given), a ``refused`` event of kind ``store_held`` with the ``holder``
    when the system says which process it is, and ``end: refused``. The second of two runs
    on one ``oxigraph:PATH`` left no trace, and a reviewer of the event could not tell it had
    come at all. A focus that does not read as a name is left out of it (nothing ran on it)."""
    if not trace:
        return
    workflow = agent.workflow(args.workflow)
    try:
        foci = [agent.definitions.expand(args.focus)] if args.focus else []
    except (KeyError, HorismosError):
        foci = []
    store_held_trace(agent, trace, e, args.store, allowed(args.allow.split(",")), workflow, foci)


def _resume_store_held(
    agent: Agent, args: argparse.Namespace, trace: str | None, e: StoreHeld
) -> None:
    """Write the ``--trace`` of a resume refused because another process holds its on-disk
    store open, as a run so refused writes one (:func:`_store_held`): the second of two
    commands on one ``oxigraph:PATH`` left no trace where it was a resume. The instance's
    workflow and focus are read from the store, which was never opened: the header names the
    instance as given, and the workflow only when the definitions declare one."""
    if not trace:
        return
    store_held_trace(
        agent, trace, e, args.store, allowed(args.allow.split(",")), instance=args.instance
    )


def store_held_trace(
    agent: Agent,
    trace: str | Path,
    e: StoreHeld,
    store: str,
    allow: frozenset[str],
    workflow: Workflow | None = None,
    foci: Sequence[URIRef] = (),
    instance: str | None = None,
) -> None:
    """Write ``trace`` for a ``run``, ``resume`` or ``wake`` refused because another
    process holds its store (``store``, as given) open: header, ``refused`` (kind
    ``store_held``, its ``holder`` when known) and ``end: refused``, from what is known
    without the store (:meth:`Runner.refused`). Without a ``workflow`` (a resume or a wake,
    whose instances' workflows the store would say), the definitions' only one, if so."""
    if workflow is None:
        declared = list(agent.definitions.workflows.values())
        workflow = declared[0] if len(declared) == 1 else None
    runner = agent._runner(
        World.open("memory"),
        str(trace),
        Environment(),
        recorded=False,
        policy=Policy(allow),
    )
    runner.refused(
        workflow,
        list(foci),
        "store_held",
        str(e),
        foci[0] if foci else None,
        e.holder,
        store=store,
        instance=instance,
    )


def _no_trace_written(trace: str, inst: InstanceRun, given: str) -> None:
    """Say that ``--trace`` was not written: ``--no-again`` answered the focus's instance as
    it stands, and a trace records a run's steps from the world it started on (what replay
    decides again), so where nothing ran there is nothing to record. A wrapper that keeps
    each run's trace found no file and no word why. Its steps are in the trace of the run
    that made them, or ``horismos instances``. ``given``: the ``--trace`` given, when it held
    an earlier run's trace (``trace`` then the numbered file this run did not write): kept."""
    if Path(trace).is_file() and Path(trace).stat().st_size:  # a trace after all: not said
        return
    kept = f"; {given}, an earlier run's trace, is kept as it was" if given != trace else ""
    print(
        f"horismos run: note: no trace written to {given}: nothing ran (--no-again answered "
        f"instance {short_id(inst.instance)} as it stands); a trace records a run's steps, and "
        f"this instance's are in the trace of the run that made them{kept}",
        file=sys.stderr,
    )


def resume_arguments(p: argparse.ArgumentParser) -> None:
    """``horismos resume``'s options."""
    waiting_instance_arguments(
        p,
        "the waiting instance: its IRI (urn:horismos:instance:…, as the brief "
        "shows it) or the short id the run printed (on a store that outlives the process, "
        "the first id its index lacks files every instance in it, once)",
    )
    p.add_argument(
        "--facts",
        metavar="TURTLE_OR_FILE",
        help="Turtle that answers the wait, or a file of it ('-' reads stdin); the "
        "definitions' prefixes are declared. Without it the wait's horis:until "
        "and horis:timeout are only checked again",
    )
    p.add_argument(
        "--operator",
        metavar="NAME",
        help="who gives the --facts, recorded with them (default: the operating system's "
        "user running this command)",
    )
    _execution_options(p, "resume")


def cmd_resume(args: argparse.Namespace) -> int:
    """Land the facts answering a waiting instance and continue it; exit by its status."""
    # given again after a refusal its --trace recorded (exit 6): the next numbered trace
    trace = _retry_trace(args) if args.trace and records_refusal(args.trace) else args.trace
    try:
        fresh_trace("--trace", trace, args.out)
        return _resume(args, trace)
    finally:  # a numbered trace no event was written to: no trace, as none was made before
        if trace != args.trace:
            drop_if_empty(Path(trace))


def _resume(args: argparse.Namespace, trace: str | None) -> int:
    """:func:`cmd_resume` once its ``--trace`` is settled (``trace``, where it is written)."""
    out_format = output_format(args.out) if args.out else None
    agent = Agent.from_files(*args.paths, tools=reach(args, calls=True), entailment=args.entailment)
    facts = args.facts
    if facts == "-":
        facts = sys.stdin.read()
    elif facts is not None and len(facts) < 1024 and "\n" not in facts and Path(facts).is_file():
        try:
            facts = Path(facts).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise UsageError(
                f"--facts {facts}: not UTF-8 text; give the facts as a Turtle file (UTF-8)"
            ) from None
        except OSError as e:
            what, hint = why_unreadable(e)
            raise UsageError(f"--facts {facts}: {what}; {hint}") from None
    elif facts is not None and len(facts) < 1024 and Path(facts).is_dir():
        raise UsageError(f"--facts {facts}: this is a folder; give the Turtle file in it")
    elif facts is not None and facts.strip() and not any(c.isspace() for c in facts.strip()):
        # Turtle always has a space between terms: a single word is a file that is not there
        raise UsageError(
            f"--facts {facts}: no such file; give a Turtle file that exists, "
            "'-' for stdin, or the facts themselves, e.g. --facts ':a :b :c .'"
        )
    try:
        opened = open_for_writing(args.store, "resume", create=False)
    except StoreHeld as e:  # another process has the store: its trace says so, as run's does
        _resume_store_held(agent, args, trace, e)
        raise
    with opened as world:  # let go however
        load_world_beside(world, args.world, args.store, "a resume")
        if not args.out and not world.store.persistent:
            _approval_kept_nowhere(agent.definitions, world, args.instance)
        if not args.quiet:  # as `run` says it: before the steps ahead of the blocked one act
            for problem in _resumed_outside_policy(agent.definitions, world, args):
                print(problem, file=sys.stderr)
        view = RunView(agent.definitions, quiet=args.quiet, world=world)
        with written_back(world, agent.definitions, args.out, out_format):
            run = agent.resume(
                world,
                args.instance,
                facts,
                trace=trace or Trace(kept=False),  # else no digest asked
                allow=args.allow.split(","),
                on_step=view.step,
                operator=args.operator,
            )
            view.summary(run, table=False)
        if not args.out and not world.store.persistent:  # resumed from the file, acts again
            print(
                f"horismos resume: note: {in_memory(args.store)} keeps nothing after this "
                "process, so what this resume did is not kept: the instance is still where "
                f"{' '.join(args.world) or 'the files'} left it. Give --out F to keep it "
                "(and go on from F), or a persistent --store",
                file=sys.stderr,
            )
        if trace != args.trace:  # said on stderr, as run says it
            print(
                f"horismos resume: note: {args.trace} holds an earlier refused resume's trace, "
                f"never written over: this resume's trace is {trace}",
                file=sys.stderr,
            )
        return EXIT[run.status]


def _resumed_outside_policy(
    defs: Definitions, world: World, args: argparse.Namespace
) -> list[Problem]:
    """What :func:`outside_policy` says of the steps ahead of where the resumed instance
    stands (one instance read: its state). Nothing for an instance that is not there: the
    resume says so itself."""
    try:
        stored = read_instance(world.store, find_instance(world.store, args.instance))
    except UsageError:
        return []
    workflow = defs.workflows.get(stored.workflow) if stored is not None else None
    if stored is None or workflow is None:
        return []
    return outside_policy(defs, workflow, args.allow, stored.current)


def _approval_kept_nowhere(defs: Definitions, world: World, instance: str) -> None:
    """Refuse to resume an instance waiting for approval of its call in a world kept nowhere
    (read from ``--world`` files, no ``--out``): the approval's use lands in no file, so the
    same approval allowed the call again from the same file — one approval, a charge for every
    resume. Refused before anything is called; ``wake`` refuses such a world outright."""
    try:
        stored = read_instance(world.store, find_instance(world.store, instance))
    except UsageError:  # no such instance: the resume says so, as ever
        return
    step = defs.steps.get(stored.current) if stored and stored.current is not None else None
    if stored is not None and stored.status == "waiting" and isinstance(step, ActionStep):
        raise UsageError(
            f"instance {stored.instance} waits for approval of its call, and the world is read "
            "from --world files and not written back (no --out): the approval's use would be "
            "kept nowhere, and it would allow the call again from the same files. Give --out F "
            "(then go on from F), or a persistent --store. Nothing was called"
        )


class RunView:
    """Prints each step as it lands (flushed, on a terminal and in a pipe, so a slow tool or a
    killed run leaves what happened so far); a progress bar on a terminal for ``--all``."""

    def __init__(
        self,
        defs: Definitions,
        *,
        quiet: bool = False,
        out: TextIO | None = None,
        err: TextIO | None = None,
        world: World | None = None,
    ) -> None:
        self.defs = defs
        self.world = world
        # the last blocked record explained, and how: its step line and its instance's
        # outcome line both say it, and it is asked of the world once
        self._explained: tuple[StepRecord, str] | None = None
        exists = None if world is None else functools.partial(holds_subject, world)
        self.name: Callable[[Node], str] = functools.cache(lambda node: defs.name(node, exists))
        self.quiet = quiet
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.total = 0  # > 0 draws the progress bar
        self.done = 0
        self._warned: set[tuple[Node, str]] = set()
        """The misconfigured models said already (:meth:`_misconfigured`), once a run."""
        self.rows: list[tuple[str, str, str, str, str]] = []
        """The summary table's rows, taken as each instance ends (a batch keeps no records)."""

    def step(self, inst: InstanceRun, rec: StepRecord) -> None:
        """One step, as soon as it has landed."""
        if rec.kind == "ProposalStep":
            self._misconfigured(rec)
        if self.quiet:
            return
        self.clear_progress()
        self.out.write(self.step_line(inst, rec) + "\n")
        if rec.status == "waiting" and rec.brief:
            self.out.write("".join(f"    {line}\n" for line in rec.brief.splitlines()))
        self.out.flush()
        self._progress()

    def _misconfigured(self, rec: StepRecord) -> None:
        """Say on stderr, once a run for each step and message, even with ``--quiet``, that a
        proposal took its fallback because its model's endpoint is misconfigured (a base URL
        without ``/v1``, a wrong key): a setting to change, which every instance of the run
        would otherwise take to an operator without a word."""
        said = misconfigured(rec)
        if said is None or (rec.step, said) in self._warned:
            return
        self._warned.add((rec.step, said))
        self.clear_progress()
        to = f" -> {self.name(rec.next)}" if rec.next else ""
        self.err.write(f"horismos: warning: {self.name(rec.step)} took its fallback{to}: {said}\n")
        self.err.flush()

    def instance(self, inst: InstanceRun) -> None:
        self.done += 1
        n = self.name
        at = (
            inst.current
            if inst.status != "completed"
            else (inst.steps[-1].step if inst.steps else None)
        )
        self.rows.append(
            (
                short_id(inst.instance),
                n(inst.focus),
                inst.status,
                n(at) if at else "-",
                self._why(inst),
            )
        )
        self._progress()

    def step_line(self, inst: InstanceRun, rec: StepRecord) -> str:
        n = self.name
        who = f"[{short_id(inst.instance)}] {n(inst.focus)}"
        if rec.kind in ("WaitStep", "DecisionStep") and rec.status == "failed" and rec.error:
            # stopped before it waited or decided (a loop back to it with nothing done, the
            # step budget): its summary would read "None", or "otherwise -> end"
            return f"{who}  {n(rec.step)}  failed: {rec.error}"
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
            line += f", {plural(len(rec.effects), 'effect')}"
        elif rec.status == "blocked" and rec.error is None:
            line += f": {self._blocked(inst, rec)}"
        elif rec.status == "rejected":
            line += " by the gate: nothing landed"
            line += "".join(f"\n    {self._message(m)}" for m in rec.messages)
            line += "".join(f"\n    held in doubt: {said}" for said in self._held(rec))
        elif rec.error is not None:
            line += f": {rec.error}"
            line += "".join(f"\n    held in doubt: {said}" for said in self._unanswered(rec))
        if rec.receipts:  # an adapter commit: each effect's remote outcome
            line += "\n    remote: " + "; ".join(
                f"{r['ref']} {r['outcome']}"
                + (f" (version {r['version']})" if r.get("version") else "")
                for r in rec.receipts
            )
        if rec.error is not None and rec.next is not None:
            line += f"\n    onError -> {n(rec.next)}"
        return line

    def _held(self, rec: StepRecord) -> list[str]:
        """What a rejected step left in doubt: each call of a tool that is not idempotent
        that answered (so may have acted) and of which nothing landed. The runner holds
        further calls there in every lane until `tools reconcile`; the run said only
        "nothing landed", and the operator learned of the doubt from the next run's refusal."""
        tool = self.defs.tools.get(URIRef(rec.tool)) if rec.tool else None
        return held_by_rejected(
            tool,
            rec.args[: len(rec.result)],  # the calls that answered
            self.name,
            persistent=self.world is not None and self.world.store.persistent,
        )

    def _unanswered(self, rec: StepRecord) -> list[str]:
        """What a step failed with ``OutcomeUnknown`` left held in doubt, where its error does
        not say how to clear it: a call timed out or cut off once sent, or a tool raising
        ``OutcomeUnknown`` itself ("sent the charge, lost the answer"). The run said only the
        tool's words, and the operator learned of the doubt, and of `tools reconcile`, from
        the next run's refusal. The calls that answered are held with the one that did not."""
        if not isinstance(rec.error, OutcomeUnknown) or "tools reconcile" in str(rec.error):
            return []
        tool = self.defs.tools.get(URIRef(rec.tool)) if rec.tool else None
        return held_by_rejected(
            tool,
            rec.args[: len(rec.result) + 1],
            self.name,
            persistent=self.world is not None and self.world.store.persistent,
        )

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
        if not isinstance(node, Literal):  # not a term's N3 (a value RDF cannot carry, shown
            return n3  # as Python writes it): read as a blank node's label, it was "_:'P1…'"
        return node.n3(self.defs.graph.namespace_manager)

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

    def summary(self, run: Run, *, table: bool, answered: bool = False) -> None:
        """The outcome line (``table``: the batch's table). ``answered`` (``--no-again``): an
        instance with no step was found, not run, and is said so: it read "completed after 0
        steps", as if a run had done nothing."""
        n = self.name
        if not table:
            inst = run.instances[0]
            if answered and not inst.steps:
                outcome = self._outcome(inst) if inst.status != "completed" else "completed"
                if inst.status == "running":
                    outcome += ": another process is running it now; ask again later"
                self.out.write(
                    f"{n(inst.workflow)} {n(inst.focus)}: {outcome} (not run again, "
                    f"--no-again: instance {short_id(inst.instance)} as it stands)\n"
                )
            else:
                self.out.write(f"{n(inst.workflow)} {n(inst.focus)}: {self._outcome(inst)}\n")
            self.out.flush()
            return
        parts = ", ".join(f"{c} {s}" for s, c in sorted(run.counts.items()))
        self.out.write(  # a blank line after the steps; with --quiet there are none
            ("" if self.quiet else "\n")
            + f"{plural(sum(run.counts.values()), 'instance')}{': ' + parts if parts else ''}\n"
        )
        if not self.rows:  # a header over no rows says nothing
            return
        rows = [("id", "focus", "status", "stopped at", "why"), *self.rows]
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        for r in rows:
            line = "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)) + "  " + r[4]
            self.out.write(line.rstrip() + "\n")

    def _outcome(self, inst: InstanceRun) -> str:
        if inst.status == "completed":
            return f"completed after {plural(len(inst.steps), 'step')}"
        at = f" at {self.name(inst.current)}" if inst.current else ""
        why = self._why(inst)
        return f"{inst.status}{at}" + (f": {why}" if why else "")

    def _blocked(self, inst: InstanceRun, rec: StepRecord) -> str:
        """Which part of the step's preconditions failed, with the values bound so far, asked
        of the world (the record keeps the failing pattern, as its trace does)."""
        if self._explained is not None and self._explained[0] is rec:
            return self._explained[1]
        step = self.defs.steps.get(rec.step)
        tool = getattr(step, "tool", None)
        text = why_blocked(
            (getattr(step, "requires", None), getattr(tool, "requires", None)),
            rec.blocked_by,
            self.world.store.explain if self.world is not None else None,
            inst.variables,
        )
        self._explained = (rec, text)
        return text

    def _why(self, inst: InstanceRun) -> str:
        if inst.status == "waiting":
            if inst.brief:
                return inst.brief.splitlines()[0]
            # a horis:Silent wait publishes no brief: its reason, as its step line says it
            wait = inst.steps[-1].detail.get("wait", {}) if inst.steps else {}
            return one_line(str(wait.get("reason") or ""))
        if inst.status == "blocked" and inst.error is None:
            rec = next((r for r in reversed(inst.steps) if r.status == "blocked"), None)
            return (
                self._blocked(inst, rec)
                if rec is not None
                else (f"this pattern does not hold: {one_line(inst.blocked_by or '')}")
            )
        if inst.error is not None:
            cause = getattr(inst.error, "cause", inst.error)
            values = [
                self._value(m.value) for m in getattr(cause, "messages", ()) if m.value is not None
            ]
            rejected = f" (value{'s' if len(values) > 1 else ''}: {', '.join(values)})"
            return one_line(str(inst.error)) + (rejected if values else "")
        return ""
