"""``horismos instances``, ``wake`` and ``approve``: operating the instances a world holds
(list them, resume the waits that are due, approve the payload a step would send)."""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rdflib import URIRef

from ._agent import Agent
from ._bindings.code_identity import code_said
from ._cli_common import (
    EXIT,
    EXIT_USAGE,
    in_memory,
    load_world,
    one_line,
    open_for_writing,
    output_folder,
    output_format,
    reach,
    reach_options,
    short_id,
    waiting_instance_arguments,
    world_of,
    write_world,
    written_back,
)
from ._cli_lent_world import LentWorld, end_lend
from ._cli_run import RunView, store_held_trace
from ._definitions import Definitions, load_definitions
from ._due_waits import due_waits_at, unreached_blocked
from ._errors import Problem, ToolError, Unreachable, UsageError
from ._held_doubts import HeldDoubt, held_doubts
from ._instances import STATUSES, InstanceSummary
from ._intents import open_intent
from ._model import ActionStep, WaitStep
from ._outside_policy import outside_policy
from ._policy import SERVED_PREFIX, allowed
from ._reconciled import Reconciled, reconciliations
from ._stores import DEFAULT_STORE, Store
from ._stores.ox_folder import StoreHeld
from ._terms import PREFIXED_LOCAL, split_iri
from ._trace import Trace, drop_if_empty, own_file
from ._vocab import NS
from ._world import World, holds_subject

__all__ = [
    "approve_arguments",
    "cmd_approve",
    "cmd_instances",
    "cmd_wake",
    "instances_arguments",
    "wake_arguments",
]


def instances_arguments(p: argparse.ArgumentParser) -> None:
    """``horismos instances``'s options."""
    p.add_argument(
        "paths",
        nargs="*",
        metavar="FILE_OR_DIR",
        help="the Turtle definitions, to write names with their prefixes (optional: without "
        "them, : is the namespace the listed workflows share)",
    )
    p.add_argument(
        "--world",
        action="append",
        default=[],
        metavar="F",
        help="the world the runs committed to, e.g. a run's --out (repeatable); "
        "not needed with a persistent --store",
    )
    p.add_argument(
        "--store",
        default=DEFAULT_STORE,
        metavar="STORE",
        help="where the world lives: oxigraph:PATH, journal:PATH or sparql:URL (or memory, "
        "oxigraph with --world)",
    )
    p.add_argument("--status", choices=STATUSES, help="list only the instances in this status")
    p.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text for people (the default) or JSON",
    )


def cmd_instances(args: argparse.Namespace) -> int:
    """List the world's instances: id, workflow, focus, status, current step, since when, and
    why (a failed one's error, a blocked one's pattern, a running one no process drives, and
    with the definitions, what a waiting one waits for)."""
    defs = load_definitions(args.paths) if args.paths else None
    world = world_of(args)
    try:
        return _list(args, defs, world)
    finally:  # let go: a command run in-process (tests, a caller) held the store open
        world.close()


_WHY_WIDTH = 240
"""The longest ``why`` the table prints, cut with an ellipsis: a gate rejection's error names
every message, and one row must stay one line (``--format json`` has the whole text)."""


def _list(args: argparse.Namespace, defs: Definitions | None, world: World) -> int:
    """:func:`cmd_instances` on the world opened."""
    # a focus is a node of the world: its CURIE is the one the world holds (as `run` prints it)
    exists = functools.partial(holds_subject, world)
    rows = world.instances(args.status)
    name: Callable[[Any], str] = functools.cache(
        (lambda node: defs.name(node, exists)) if defs else _names_without_definitions(rows)
    )
    shared = world.store.shared
    # whether a process drives each running row now (InstanceSummary.live)
    live = {r.instance: r.live for r in rows if r.live is not None}
    cleared = reconciliations(world.store)  # the few there are, read once
    doubts = held_doubts(world.store)  # likewise
    # the calls `tools call` (or serve) left held in doubt: no instance's, so no row had them
    calls = [] if args.status else [d for held in doubts.values() for d in held if d.catalog_call]

    def call_said(d: HeldDoubt) -> str:
        return d.said(name, defs.tools.get(d.tool) if defs else None, shared)

    if args.format == "json":
        print(
            json.dumps(
                [
                    {
                        "instance": str(r.instance),
                        "workflow": str(r.workflow),
                        "focus": str(r.focus),
                        "status": r.status,
                        "step": str(r.current) if r.current else None,
                        "since": r.since,
                        "why": _why(r, live, shared, name, defs, world.store),
                        "error_kind": r.error_kind,
                        "started_by": r.started_by,
                        "live": live.get(r.instance),
                        "reconciled": [
                            {
                                "at": c.at,
                                "operator": c.operator,
                                "verdict": c.verdict,
                                "tool": str(c.tool),
                                "call_started": c.started or None,
                                "args": json.loads(c.args),
                            }
                            for c in cleared.get(r.instance, ())
                        ],
                        "in_doubt": [
                            {
                                "tool": str(d.tool),
                                "step": str(d.step) if d.step else None,
                                "call_started": d.started or None,
                                "args": json.loads(d.args),
                            }
                            for d in doubts.get(r.instance, ())
                        ],
                    }
                    for r in rows
                ]
                + [
                    {
                        "instance": str(d.instance),
                        "workflow": None,
                        "focus": None,
                        "status": "in_doubt",
                        "step": None,
                        "since": d.started or None,
                        "why": call_said(d),
                        "error_kind": "outcome_unknown",
                        "started_by": d.started_by,
                        "live": None,
                        "reconciled": [],
                        "in_doubt": [
                            {
                                "tool": str(d.tool),
                                "step": None,
                                "call_started": d.started or None,
                                "args": json.loads(d.args),
                            }
                        ],
                        "catalog_call": True,
                    }
                    for d in calls
                ],
                indent=2,
            )
        )
        return 0
    if not rows and not calls:
        print("no " + (f"{args.status} " if args.status else "") + "instances in this world")
        return 0
    table = [("id", "workflow", "focus", "status", "step", "since", "by", "why")]
    table += [
        (
            short_id(r.instance),
            name(r.workflow),
            name(r.focus),
            "interrupted" if r.interrupted else r.status,
            name(r.current) if r.current else "-",
            (r.since or "-")[:19],
            r.started_by or "-",
            _short(
                _held(r, doubts.get(r.instance, []), name, defs),
                _cleared(cleared.get(r.instance, [])),
                _kind_first(r, _why(r, live, shared, name, defs, world.store)),
            ),
        )
        for r in rows
    ]
    table += [
        (
            short_id(d.instance),
            "(tools call)",
            "-",
            "in_doubt",
            "-",
            (d.started or "-")[:19],
            d.started_by or "-",
            _short(call_said(d)),
        )
        for d in calls
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    for row in table:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    return 0


def _kind_first(row: InstanceSummary, why: str | None) -> str | None:
    """A failed row's why after its error's kind (``outcome_unknown: t.bill was called…``),
    as the trace's timeline says it: the row said the words alone, cut short, and a call held
    in doubt read as any other failure until its words were read through."""
    if row.error_kind and why:
        return f"{row.error_kind}: {why}"
    return why


def _why(
    row: InstanceSummary,
    live: dict[URIRef, bool],
    shared: bool,
    name: Callable[[Any], str],
    defs: Definitions | None,
    store: Store,
) -> str | None:
    """The row's why: a failed or blocked instance's own, a running one's who drives it, and,
    given the definitions, what a waiting one waits for."""
    if row.status == "waiting" and defs is not None and row.why is None:
        return _waits_for(row, defs, store)
    if row.instance not in live:
        return row.why
    return _running_why(row, live[row.instance], shared, name)


def _waits_for(row: InstanceSummary, defs: Definitions, store: Store) -> str | None:
    """What a waiting instance waits for, as the step it waits at says it: a wait's
    ``horis:reason`` (what ``run``'s table says of it), or the approval of a tool's call. The
    row said ``-``, and the operator listing waits to answer them had to find the run's output
    to learn what each asked. An approval wait whose approved call was announced (its intent
    is open: the resume that made it was killed mid-call, or is making it now) is no longer
    waiting for anyone: the row said it waited for approval, and the call made was shown
    nowhere (one intent read, for such a row only)."""
    step = defs.steps.get(row.current) if row.current is not None else None
    if isinstance(step, WaitStep):
        return step.reason
    tool = step.tool if isinstance(step, ActionStep) else None
    if tool is None or not tool.requires_approval:
        return None
    made = open_intent(store, row.instance)
    if made is not None:
        return (
            f"its approved call of {tool.name} was made (started {made.started[:19] or '-'}) "
            "and its result never landed: the process that made it stopped mid-call (or, on a "
            "shared store, is making it now), so it may have acted; `horismos resume … "
            f"--instance {short_id(row.instance)}` holds it in doubt without calling again, "
            "then check with the system it acts on and `horismos tools reconcile` it"
        )
    return (
        f"waits for approval of its call of {tool.name}: its brief (the run's output) shows the "
        f"payload and fingerprint; `horismos approve … --instance {short_id(row.instance)} "
        "--fingerprint HEX`, then `horismos resume`"
    )


def _running_why(row: InstanceSummary, live: bool, shared: bool, name: Callable[[Any], str]) -> str:
    """What a running instance's row says of who drives it, and for one nobody drives, how to
    go on with it: both read ``running`` before, a live run's and one a killed process left
    alike, and only the second needs an operator."""
    if live:
        return "a process with a live lease is running it now"
    if shared:  # a focus's claim is taken under a single-focus run, or by run --all's workers
        return (
            "no live process holds its claim: it stopped mid-step; "
            f"`horismos run … --focus {name(row.focus)}` continues it"
        )
    return (
        "no process is running it (none other has this store open): it stopped mid-step; "
        f"`horismos resume … --instance {short_id(row.instance)}` continues it"
    )


def _held(
    row: InstanceSummary,
    doubts: list[HeldDoubt],
    name: Callable[[Any], str],
    defs: Definitions | None,
) -> str:
    """What a row says first of the calls its instance left held in doubt that nobody has
    cleared: the latest, with the command that clears it. An instance whose step's result the
    gate rejected and that went on by ``horis:onError`` was listed ``completed -``, the doubt
    said nowhere but in the run's output; a failed one whose error is the doubt
    (``outcome_unknown``) says it already where its words name the command (a step refused
    for an earlier call in doubt), and not where they are a timeout's or the tool's own
    (``OutcomeUnknown("sent the charge, lost the answer")``): that row said nothing of
    clearing it."""
    if not doubts or (row.error_kind == "outcome_unknown" and "tools reconcile" in (row.why or "")):
        return ""
    last = doubts[-1]
    more = f" (and {len(doubts) - 1} more: --format json)" if len(doubts) > 1 else ""
    return last.said(name, defs.tools.get(last.tool) if defs else None) + more


def _cleared(records: list[Reconciled]) -> str:
    """What a row says first of the calls in doubt its instance left that a person has
    cleared since: the latest, by whom, when, on what finding (its error still says to clear
    it, as it did when written), or nothing."""
    if not records:
        return ""
    more = len(records) - 1
    return records[-1].said() + (f" (and {more} before)" if more else "")


def _short(*why: str | None) -> str:
    """The parts of ``why`` given, on one line, cut at :data:`_WHY_WIDTH`; ``-`` for none."""
    text = one_line("; ".join(w for w in why if w))
    if not text:
        return "-"
    return text if len(text) <= _WHY_WIDTH else text[: _WHY_WIDTH - 1].rstrip() + "…"


def _names_without_definitions(rows: list[InstanceSummary]) -> Callable[[Any], str]:
    """How ``instances`` names nodes when given no definitions, as it does with them in the
    usual case: ``:`` is the namespace the listed workflows share (the one their definitions
    bind it to, ``:Triage :patient44 :QueuePatient``), ``horis:`` is Horismos's, and any
    other node is ``<IRI>``. Workflows of several namespaces each get a prefix named after
    their namespace's last segment (``ehr:``, ``travel:``), when those names differ."""
    spaces = sorted({_namespace(str(r.workflow)) for r in rows} - {""})
    prefixes: dict[str, str] = {NS: "horis"}
    if len(spaces) == 1:
        prefixes[spaces[0]] = ""
    else:
        named = {ns: _last_segment(ns) for ns in spaces}
        if all(named.values()) and len(set(named.values())) == len(named):
            prefixes.update((ns, p) for ns, p in named.items() if ns not in prefixes)

    def name(node: Any) -> str:
        text = str(node)
        prefix = prefixes.get(_namespace(text))
        local = text[len(_namespace(text)) :]
        if prefix is not None and PREFIXED_LOCAL.fullmatch(local):
            return f"{prefix}:{local}"
        return f"<{text}>"

    return name


def _namespace(iri: str) -> str:
    """Where a prefix would end (:func:`split_iri`), or "" when that is inside the
    authority (``http://example.org``)."""
    ns = split_iri(iri)[0]
    return ns if len(ns) > iri.find("//") + 2 else ""


def _last_segment(namespace: str) -> str:
    """``ehr`` of ``http://example.org/ehr#``: a prefix a person would have written."""
    last = namespace.rstrip("#/").rsplit("/", 1)[-1]
    return last if re.fullmatch(r"[A-Za-z][\w-]*", last) else ""


def wake_arguments(p: argparse.ArgumentParser) -> None:
    """``horismos wake``'s options."""
    p.epilog = (
        "exit codes: 0 every woken instance went on (or none was due, or it waits again), "
        "1 one failed, 2 usage error, or one not woken as its binding was not reached (an "
        "MCP server down: it stays waiting and the next pass wakes it), or one blocked "
        "where its endpoint was down still not reaching it (the next pass tries it "
        "again), 4 one was blocked "
        "(as run and resume exit for it), or not woken, its binding or proposal model "
        "refused (a host outside --allow-host)"
    )
    p.add_argument(
        "paths",
        nargs="+",
        metavar="FILE_OR_DIR",
        help="the Turtle definitions the instances run with",
    )
    p.add_argument(
        "--world",
        action="append",
        default=[],
        metavar="F",
        help="the world the runs committed to (repeatable); write it back with "
        "--out. Not needed with a persistent --store, what a timer should use",
    )
    p.add_argument(
        "--store",
        default=DEFAULT_STORE,
        metavar="STORE",
        help="where the world lives: oxigraph:PATH, journal:PATH or sparql:URL (or memory, "
        "oxigraph with --world and --out)",
    )
    p.add_argument(
        "--tools",
        action="append",
        default=[],
        metavar="MODULE",
        help="as for run: the functions the steps after the waits call",
    )
    reach_options(p)
    p.add_argument(
        "--allow",
        default="ReadOnly,HostStateWrite",
        metavar="CLASSES",
        help="as for run: side-effect classes the steps after the waits may call (default: "
        "ReadOnly,HostStateWrite; add ExternalCommit to allow it)",
    )
    p.add_argument(
        "--traces",
        metavar="DIR",
        help="write each resumed instance's trace into DIR (one .jsonl each)",
    )
    p.add_argument("--out", metavar="F", help="write the world afterwards to F (.trig or .nq)")
    p.add_argument(
        "-q", "--quiet", action="store_true", help="print only each resumed instance's outcome"
    )


def cmd_wake(args: argparse.Namespace) -> int:
    """Resume every wait that is due: past its horis:timeout, or its horis:until holds now.

    Waits that are not due are left untouched, so it can run from cron or a systemd timer as
    often as wanted. 0 when every resumed instance went on (or none was due, or it waits
    again), else as ``run`` and ``resume`` exit for the worst of them: 1 when one failed, 4
    when one was blocked (a step the policy refuses, or its binding or proposal model refused
    before its first step, leaving it waiting: cron must hear of it, as of a failure), 2 when
    one was not woken as its binding was not reached (an MCP server down, the error ``run``
    exits 2 for): it stays waiting, and the next pass wakes it. One another
    process is driving (or has settled since) is skipped, said on stderr, and the others are
    woken. ``--out`` is written however the pass ends, so no woken instance's calls are lost."""
    import datetime as dt

    out_format = output_format(args.out) if args.out else None
    # checked once: a misspelt class skipped every due wait, each as if another process had
    # it, and the command exited 0 having woken nothing
    allow = allowed(args.allow)
    traces = output_folder("--traces", args.traces) if args.traces else None
    agent = Agent.from_files(*args.paths, tools=reach(args, calls=True))
    try:
        world = world_of(args, writes="wake")
    except StoreHeld as e:  # another process has the store: a trace says so, as run's does
        if traces is not None:  # no instance read: one file for the pass, none woken
            stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
            store_held_trace(agent, own_file(traces, f"wake-{stamp}"), e, args.store, allow)
        raise
    if not world.store.persistent and not args.out:  # it woke, called, and kept nothing
        raise UsageError(
            f"{in_memory(args.store)} keeps nothing after this process, so what the waits "
            "woken do would be lost and done again next time: give --out F (then go on "
            "from F), or a persistent --store"
        )
    due: list[tuple[URIRef, WaitStep | None]] = [
        *due_waits_at(agent.definitions, world.store, dt.datetime.now(dt.UTC)),
        *((iid, None) for iid in unreached_blocked(world.store)),  # tried again each pass
    ]
    if not due:
        print("no wait is due")
    ended: set[str] = set()
    said: set[str] = set()  # a step two woken instances reach is said once
    view = RunView(agent.definitions, quiet=args.quiet, world=world)
    with written_back(world, agent.definitions, args.out, out_format):
        for iid, at in due:
            if not args.quiet and at is not None:  # as `resume` says it: before the steps
                # ahead of the wait act
                for problem in _woken_outside_policy(agent.definitions, at, args.allow):
                    if str(problem) not in said:
                        said.add(str(problem))
                        print(problem, file=sys.stderr)
            trace: Path | Trace = Trace(kept=False)  # without --traces: no digest asked
            kept: Path | None = None
            if traces is not None:  # a file of its own: a pass in the same second as the
                # one before (cron every second, a rerun by hand) wrote over that one's trace
                stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
                trace = kept = own_file(traces, f"wake-{short_id(iid)}-{stamp}")
            try:
                run = agent.resume(world, iid, None, trace=trace, on_step=view.step, allow=allow)
            except UsageError as e:  # another process drives it, or settled it since: the
                # other due waits are still this pass's to wake (one refusal stopped them all)
                print(f"{short_id(iid)}  skipped: {e}", file=sys.stderr)
                continue
            except Unreachable as e:  # an MCP server down: nothing of the instance is wrong,
                # and nothing changed; the next pass wakes it once the server answers
                print(
                    f"{short_id(iid)}  not woken, its binding not reached: {e}; it stays "
                    "waiting, and the next pass wakes it",
                    file=sys.stderr,
                )
                ended.add("unreached")
                continue
            except ToolError as e:  # its binding or proposal model refused before its first
                # step (a host outside --allow-host): it stays waiting, as the policy left it,
                # and the others are woken
                print(f"{short_id(iid)}  blocked, not woken: {e}", file=sys.stderr)
                ended.add("blocked")
                continue
            finally:  # refused before its header: no trace, as before own_file made one
                drop_if_empty(kept)
            view.summary(run, table=False)
            unreached = run.status == "blocked" and isinstance(
                run.instances[-1].error if run.instances else None, Unreachable
            )  # its endpoint still down: the next pass tries it again
            ended.add("unreached" if unreached else run.status)
    # a wait woken into another wait went on, as the timer meant: only these are news; an
    # instance not reached exits as the error it is in run and resume, under a blocked one
    # (which needs a person, where the next pass retries it)
    return next((_WAKE_EXIT[s] for s in ("failed", "blocked", "unreached") if s in ended), 0)


def _woken_outside_policy(defs: Definitions, at: WaitStep, allow: str) -> list[Problem]:
    """What :func:`outside_policy` says of the steps ahead of the wait an instance is woken
    from: a woken instance went on past the wait and blocked at a step ``--allow`` leaves
    out, after the steps before it had acted, and only ``run`` and ``resume`` said so. Read
    from the definitions alone (the workflow holding the wait step), nothing from the world."""
    workflow = next((w for w in defs.workflows.values() if at.iri in w.steps), None)
    return [] if workflow is None else outside_policy(defs, workflow, allow, at.iri)


_WAKE_EXIT = {**EXIT, "unreached": EXIT_USAGE}
"""How ``wake`` exits for the worst of its instances: as ``run`` does, and, for one whose
binding was not reached, as ``run`` and ``resume`` exit for that error."""


def approve_arguments(p: argparse.ArgumentParser) -> None:
    """``horismos approve``'s options."""
    waiting_instance_arguments(
        p,
        "the instance waiting for approval (its IRI, or the short id the run printed)",
    )
    p.add_argument(
        "--fingerprint",
        required=True,
        metavar="HEX",
        help="the fingerprint of the exact payload to approve, as its brief shows",
    )
    p.add_argument("--out", metavar="F", help="write the world with the approval to F")
    p.add_argument(
        "--operator",
        metavar="NAME",
        help="who approves, recorded with the approval (default: the operating system's user "
        "running this command)",
    )
    p.add_argument(
        "--store",
        default=DEFAULT_STORE,
        metavar="STORE",
        help="where the world lives: memory, oxigraph (default), oxigraph:PATH, journal:PATH "
        "or sparql:URL",
    )


def _approved(agent: Agent, world: World, args: argparse.Namespace) -> dict[str, Any]:
    """The approval ``args`` ask for, recorded in ``world`` with the ``--world`` data beside
    it. On a persistent store that data is lent (:class:`~._cli_lent_world.LentWorld`) and
    kept once the approval has landed: an approval refused (a fingerprint the instance does
    not wait for, an instance not found) left it loaded, the store changed by a refusal."""
    if not (args.world and world.store.persistent):
        load_world(world, args.world)
        return agent.approve(world, args.instance, args.fingerprint, operator=args.operator)
    lent = LentWorld(world)
    try:
        lent.lend(args.world, args.store, "resume")  # counts only the store's approvals
        done = agent.approve(world, args.instance, args.fingerprint, operator=args.operator)
        lent.kept()  # approved: the data stays, as loaded
        return done
    finally:
        end_lend(lent, "approve")  # refused or stopped: taken back (after keep: nothing)


def cmd_approve(args: argparse.Namespace) -> int:
    """Record a person's approval of one exact payload a waiting instance's step would send."""
    out_format = output_format(args.out) if args.out else None
    agent = Agent.from_files(*args.paths)
    with open_for_writing(args.store, "approve", create=False) as world:  # let go however
        done = _approved(agent, world, args)
        if not world.store.persistent and not args.out:  # it said "approved", and kept nothing
            raise UsageError(
                f"{in_memory(args.store)} keeps nothing after this process, so the approval "
                "would be lost: give --out F (then resume with --world F), or the "
                "persistent --store the instance is in"
            )
        n = agent.definitions.name
        served = str(done["instance"]).startswith(SERVED_PREFIX)
        print(
            f"approved {n(URIRef(done['tool']))} for {done['instance']} by {done['operator']}: "
            f"{json.dumps(done['payload'], sort_keys=True, ensure_ascii=False)} "
            f"(fingerprint {done['fingerprint']}"
            + (f", run by {code_said(done['code'])}" if "code" in done else "")
            + "); "
            + (
                "the agent may now call it again with exactly these arguments"
                if served
                else "resume the instance to call it"
                + (" with that code" if "code" in done else "")
            )
        )
        if args.out:
            write_world(world, agent.definitions, args.out, out_format)
    return 0
