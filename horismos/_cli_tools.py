"""``horismos tools``: the catalog's surfaces on the command line — list, discover, a
guarded call, approve a payload, and the inventory CI holds the declared tools against
(docs/catalog.md)."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from rdflib import XSD, Literal, URIRef

from . import _loop
from ._agent import Agent
from ._bindings import code_of
from ._bindings.mcp import servers_in_force
from ._call import guarded_call, refused_before_store
from ._catalog import check_inventory, inventory_text
from ._cli_common import (
    fresh_trace,
    in_memory,
    load_world,
    open_for_writing,
    output_format,
    plural,
    reach,
    reach_options,
    world_data,
    writable,
    write_world,
)
from ._cli_lent_world import LentWorld, end_lend
from ._discovery import near_words
from ._errors import UsageError
from ._idempotency import check_key
from ._model import Tool
from ._people import operator_name
from ._policy import (
    allowed,
    fresh_approval,
    given_holds_for,
    given_issue,
    given_issued,
    given_tool,
    given_used,
    implementation,
    server_of,
)
from ._reconciled import VERDICTS
from ._redact import redact_text
from ._sources import RDF_SUFFIXES
from ._stores import DEFAULT_STORE, Change
from ._stores.base import INSTANCE
from ._stores.ox_folder import StoreHeld
from ._trace import Trace
from ._unreadable import STDIN_NOT_READ, why_unreadable
from ._world import World

__all__ = [
    "EXIT_CALL",
    "cmd_tools",
    "cmd_tools_approve",
    "cmd_tools_call",
    "cmd_tools_discover",
    "cmd_tools_inventory",
    "cmd_tools_list",
    "cmd_tools_reconcile",
    "tools_arguments",
]


EXIT_CALL = {
    "completed": 0,
    "failed": 1,
    "rejected": 1,
    "timed_out": 1,
    "partial": 1,  # an adapter's commit accepted in part: not what was asked
    "blocked": 4,
    "refused": 5,
}


def tools_arguments(p: argparse.ArgumentParser) -> None:
    """``horismos tools`` and its actions' options."""
    sub = p.add_subparsers(dest="action", required=True, metavar="ACTION")

    def action(
        name: str, help: str, run: Callable[[argparse.Namespace], int], epilog: str | None = None
    ) -> argparse.ArgumentParser:
        a = sub.add_parser(name, help=help, description=help, epilog=epilog)
        a.set_defaults(action_run=run)
        return a

    def common(a: argparse.ArgumentParser, *, fmt: bool = True) -> None:
        a.add_argument(
            "paths",
            nargs="+",
            metavar="FILE_OR_DIR",
            help="Turtle files or folders: tools and the domain ontology",
        )
        a.add_argument(
            "--tools",
            action="append",
            default=[],
            metavar="MODULE",
            help="as for run: a module or .py file whose public functions back "
            "python:NAME and python:MODULE.NAME bindings (repeatable)",
        )
        reach_options(a)
        if fmt:
            a.add_argument(
                "--format",
                choices=("text", "json"),
                default="text",
                help="text for people (the default) or JSON",
            )

    def one_call(
        a: argparse.ArgumentParser,
        fmt: bool = True,
        args_help: str = "the arguments as a JSON object, or @FILE holding one",
    ) -> None:
        """The tool and its arguments: what ``call``, ``approve`` and ``reconcile`` name."""
        a.add_argument("name", metavar="NAME", help="the tool: short name, CURIE or IRI")
        common(a, fmt=fmt)
        a.add_argument("--args", required=True, metavar="JSON", help=args_help)

    def context(a: argparse.ArgumentParser, world_help: str) -> None:
        a.add_argument("--world", action="append", default=[], metavar="F", help=world_help)
        a.add_argument(
            "--store",
            default=DEFAULT_STORE,
            metavar="STORE",
            help="where the world lives: memory, oxigraph (default), oxigraph:PATH, "
            "journal:PATH or sparql:URL",
        )
        a.add_argument(
            "--approval",
            action="append",
            default=[],
            metavar="FINGERPRINT",
            help="an approval `tools approve` issued in this world and printed (for tools "
            "with horis:requiresApproval); the call it allows uses it up, in a world kept "
            "by --store or written back by --out",
        )
        a.add_argument(
            "--allow",
            default="ReadOnly,HostStateWrite",
            metavar="CLASSES",
            help="side-effect classes a call may have, comma-separated "
            "(default: ReadOnly,HostStateWrite; add ExternalCommit to allow "
            "it)",
        )

    listing = action(
        "list",
        "the static catalog: each tool's schemas, lane, side effect, "
        "approval, dependencies and base readiness",
        cmd_tools_list,
    )
    common(listing)
    found = action(
        "discover",
        "the tools relevant to QUERY, ranked, each executable or blocked here, with why",
        cmd_tools_discover,
        epilog="exit codes: 0 some tool shown, 1 none",
    )
    found.add_argument("query", metavar="QUERY", help="what the tool should do, in words")
    common(found)
    context(found, "world data (repeatable); with it, tool preconditions and --focus are checked")
    found.add_argument(
        "--focus", metavar="IRI", help="a node of the world: bind it to each argument of its class"
    )
    found.add_argument(
        "--include-blocked", action="store_true", help="show blocked tools too, with why_blocked"
    )
    call = action(
        "call",
        "run one tool outside a workflow: schema, types, preconditions, "
        "policy and approval checked, then the same binding, SHACL gate and "
        "transaction as a step",
        cmd_tools_call,
        epilog="exit codes: 0 completed, 1 failed, timed out or rejected by the "
        "gate, 2 usage error (an approval used up, an idempotency key first given to "
        "other arguments), 4 blocked by a precondition, 5 refused "
        "(schema, argument type, policy, approval missing, for another payload, not "
        "issued by `tools approve` in this world or issued for the tool as it was defined "
        "before, environment, binding, an earlier "
        "call of a tool that is not idempotent in doubt: see `tools reconcile`); "
        "nothing changes unless it completes; a call answered again under its "
        "idempotency key exits as the first did",
    )
    one_call(call)
    context(
        call,
        "world data (repeatable); without it the world is read from FILE_OR_DIR "
        "when the store is in memory (memory, oxigraph)",
    )
    call.add_argument("--out", metavar="F", help="write the world after the call (.trig, .nq)")
    call.add_argument(
        "--trace",
        metavar="PATH",
        help="write the call's trace (JSON Lines) to this file, a new one: a file that "
        "already holds something (an earlier trace) is refused, never written over",
    )
    call.add_argument(
        "--idempotency-key",
        metavar="KEY",
        help="your name for this one call (a UUID, say): run again with the same key and "
        "arguments after its answer was lost, it calls nothing and prints what the first "
        "call answered (replayed); the same key with other arguments is refused, exit 2. "
        "Kept in the world: give a persistent --store, or --out and go on from that file",
    )
    approve = action(
        "approve",
        "issue a fresh approval of exactly this call, good for one call, into the world the "
        "call will use, and print it: the fingerprint (SHA-256 of the tool IRI and the "
        "canonical JSON of its arguments), a dot and an id",
        cmd_tools_approve,
    )
    one_call(approve, fmt=False)
    approve.add_argument(
        "--world",
        action="append",
        default=[],
        metavar="F",
        help="world data (repeatable): the world the call will use, written back with --out",
    )
    approve.add_argument(
        "--store",
        default=DEFAULT_STORE,
        metavar="STORE",
        help="where the world lives: oxigraph:PATH, journal:PATH or sparql:URL, the store "
        "the call will use (or memory, oxigraph with --world and --out)",
    )
    approve.add_argument(
        "--operator",
        metavar="NAME",
        help="who approves, recorded with the approval (default: the operating system's user "
        "running this command)",
    )
    approve.add_argument(
        "--out", metavar="F", help="write the world with the approval to F (.trig, .nq)"
    )
    reconcile = action(
        "reconcile",
        "clear an earlier call of a tool that is not idempotent left in doubt (sent, its "
        "outcome never landed: the process stopped, the lease was lost, the tool did not "
        "answer, or the gate rejected what it answered), once you have checked with the "
        "system it acts on whether it took effect; calls of the tool on that subject are "
        "refused until then",
        cmd_tools_reconcile,
        epilog="exit codes: 0 cleared, 1 no call there was in doubt, 2 usage error",
    )
    one_call(
        reconcile,
        args_help="the arguments of the call in doubt (its subject is what counts), as a "
        "JSON object, or @FILE holding one",
    )
    reconcile.add_argument(
        "--verdict",
        choices=VERDICTS,
        help="what you found when you checked with the system the tool acts on: the call in "
        "doubt took effect (acted) or did not (not-acted); recorded with the clearing, for "
        "whoever reviews it later (left out, it clears all the same and the record says no "
        "verdict given)",
    )
    reconcile.add_argument(
        "--operator",
        metavar="NAME",
        help="who clears it, recorded with the clearing (default: the operating system's "
        "user running this command)",
    )
    reconcile.add_argument(
        "--store",
        required=True,
        metavar="STORE",
        help="where the world lives: oxigraph:PATH, journal:PATH or sparql:URL (a world in "
        "memory ends with its process, and what it held in doubt with it)",
    )
    inventory = action(
        "inventory",
        "write the machine-readable tool inventory, or check one",
        cmd_tools_inventory,
        epilog="exit codes: 0 written or up to date, 1 drifted",
    )
    common(inventory, fmt=False)
    where = inventory.add_mutually_exclusive_group()
    where.add_argument("--output", "-o", metavar="F", help="write it here instead of stdout")
    where.add_argument(
        "--check",
        metavar="F",
        help="compare with this inventory; print the differences and exit 1 "
        "when the declared tools have drifted from it",
    )


def cmd_tools(args: argparse.Namespace) -> int:
    """Run the ``tools`` action named on the command line."""
    return args.action_run(args)


def _catalog_agent(args: argparse.Namespace) -> Agent:
    return Agent.from_files(*args.paths, tools=reach(args, calls=args.action == "call"))


def _json_args(text: str) -> Any:
    source = "--args"
    if text.startswith("@"):
        source = text[1:]
        if source == "-":
            raise UsageError(
                f"--args @-: {STDIN_NOT_READ[0]}; give the JSON itself (--args "
                '\'{"patient": ":patient42"}\') or @FILE, a file holding it'
            )
        try:
            text = Path(source).read_text(encoding="utf-8")
        except OSError as e:
            what, hint = why_unreadable(e)
            raise UsageError(f"--args {text}: {what}; {hint}") from None
        except UnicodeDecodeError:
            raise UsageError(f"--args {text}: not UTF-8 text, so not JSON") from None
    try:
        return json.loads(text, object_pairs_hook=_no_repeated_keys)
    except _RepeatedKey as e:
        raise UsageError(
            f"{source}: the argument {e} is given twice; give each argument once"
        ) from None
    except ValueError as e:
        raise UsageError(
            f'{source}: not JSON ({e}); write an object such as \'{{"patient": ":patient42"}}\''
        ) from None
    except RecursionError:
        raise UsageError(f"{source}: nested too deeply to be arguments") from None


class _RepeatedKey(Exception):
    pass


def _no_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are each given once: the stdlib keeps the last of two, so a
    call would have gone out with a value its caller may not have meant."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _RepeatedKey(json.dumps(key))
        out[key] = value
    return out


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
    if Path(args.query).suffix in RDF_SUFFIXES:  # it was searched for, and matched no tool
        raise UsageError(
            f"{args.query} names a file, where the QUERY comes first: horismos tools discover "
            f"'WORDS' {args.query} …"
        )
    agent = _catalog_agent(args)
    world = lent = None
    if args.world or args.store != DEFAULT_STORE:
        world = open_for_writing(args.store, "tools discover", create=False)
        if world.store.persistent and args.world:  # read beside the store, then taken back
            lent = LentWorld(world)
        else:
            load_world(world, args.world)
    try:
        if lent is not None:
            lent.lend(args.world, args.store, "discovery")
        found = agent.catalog.discover(
            args.query,
            world,
            args.focus,
            include_blocked=True,
            approvals=[a for a in args.approval if world is None or _taken(world, a, agent)],
            allow=args.allow.split(","),
        )
    finally:
        end_lend(lent, "tools discover")  # discovery writes nothing to the store
    shown = [d for d in found if args.include_blocked or d.availability == "executable"]
    if args.format == "json":
        print(json.dumps([d.to_json() for d in shown], indent=2, ensure_ascii=False))
    elif shown:
        print("\n".join(d.text(i) for i, d in enumerate(shown, 1)))
    else:
        hidden = len(found) - len(shown)
        print(
            f"no executable tool matches {args.query!r}"
            + ("" if found else near_words(agent.definitions.tools.values(), args.query))
            + (
                f" ({plural(hidden, 'blocked tool')}; --include-blocked shows "
                f"{'it' if hidden == 1 else 'them'})"
                if hidden
                else ""
            )
        )
    return 0 if shown else 1


def _taken(world: World, approval: str, agent: Agent) -> bool:
    """Whether ``tools call`` takes ``approval`` in ``world``: one ``tools approve`` did not
    issue there, or issued for a tool since rebound, allows nothing."""
    tool = agent.definitions.tools.get(cast(URIRef, given_tool(world.store, approval)))
    servers = servers_in_force(agent.definitions, agent.mcp_servers)
    return given_issued(world.store, approval) and (
        tool is None or given_holds_for(world.store, approval, tool, server_of(tool, servers))
    )


def cmd_tools_call(args: argparse.Namespace) -> int:
    """Run one guarded call; print its receipt or its JSON envelope; exit by its status."""
    out_format = output_format(args.out) if args.out else None
    fresh_trace("--trace", args.trace, args.out)
    payload = _json_args(args.args)
    if len(args.approval) > 1:
        raise UsageError("give one --approval to a call: it approves one exact payload")
    agent = _catalog_agent(args)
    key = args.idempotency_key
    if key is not None and (problem := check_key(key)) is not None:
        raise UsageError(problem)
    allow = allowed(args.allow)
    catalog = agent.catalog
    tool = catalog.tool(args.name)
    # a store not made yet is made only to load --world into, as for run: a mistyped path
    # was a new empty store the call committed into
    # what a process stopped mid-call lent and never took back is not read as the store's
    try:
        world = open_for_writing(args.store, "tools call", create=bool(args.world))
    except StoreHeld as e:  # another process has the store: its trace says so, as run's does
        if args.trace:
            refused_before_store(
                agent.definitions.digest,
                tool,
                payload,
                args.trace,
                args.store,
                "store_held",
                str(e),
                e.holder,
            )
        raise
    # kept only with the effects of a call made now: told by the call's completed commit
    lent = LentWorld(world) if args.world and world.store.persistent else None
    if args.world and lent is None:
        load_world(world, args.world)
    elif not world.store.persistent:
        load_world(world, args.paths)
    if args.approval and not world.store.persistent and not args.out:
        _approval_kept_nowhere(world, args.approval[0])
    try:
        if lent is not None:
            lent.lend(args.world, args.store, "a call")
        # catalog.call's path, with an --approval taken only when issued; on the kept loop,
        # which keeps the answer of a call a Ctrl-C came too late to stop (a tool called
        # inline): asyncio.run dropped it, and the call that landed was said to be in doubt
        result = _loop.run(
            guarded_call(
                catalog,
                tool,
                payload,
                world,
                approval=args.approval[0] if args.approval else None,
                allow=allow,
                trace=args.trace or Trace(kept=False),  # else no digest asked
                idempotency_key=key,
                issued_only=True,
                lent=lent,
            )
        )
    finally:  # refused, failed, answered again under its key, or stopped before its commit
        end_lend(lent, "tools call")
    if args.out:
        write_world(world, agent.definitions, args.out, out_format)
        result.artifacts.append({"type": "world", "path": args.out})
    for note in result.notes:  # as a command's other failures are told, after its outcome
        print(f"horismos tools call: note: {redact_text(note)}", file=sys.stderr)
    kept = bool(args.out) or world.store.persistent
    if args.format == "json":
        if not kept:
            result.not_kept()
        print(json.dumps(result.to_json(), indent=2, ensure_ascii=False))
    else:
        print(result.receipt(kept=kept))
    if result.error is not None and result.error.kind in _REPEATED:
        return 2  # a usage error: an approval or a key repeated; a fresh one is needed
    return EXIT_CALL[result.status]


_REPEATED = ("approval_used", "idempotency_key_reused")
"""Refusals of a call that repeated what names one call only, exiting 2 (a usage error)."""


def _approval_kept_nowhere(world: World, approval: str) -> None:
    """Refuse a call that would use up ``approval`` in a world kept nowhere: read from
    ``--world`` files, not written back (no ``--out``), the use lands in no file, and the same
    approval allowed the call again from the same file — a script that retried it charged on
    every try. ``tools approve`` refuses to issue into such a world, and ``wake`` to call in
    one, for the same reason. An approval not issued there, or used up already, is left to the
    call, which refuses it as ever."""
    if given_issued(world.store, approval) and given_used(world.store, approval) is None:
        raise UsageError(
            "--approval: the world is read from --world files and not written back (no "
            "--out), so the use of this approval would be kept nowhere and it would allow the "
            "call again from the same files; give --out F (then call from F), or a "
            "persistent --store. Nothing was called"
        )


def cmd_tools_reconcile(args: argparse.Namespace) -> int:
    """Clear a call left in doubt; say what it was, or that there was none."""
    payload = _json_args(args.args)
    agent = _catalog_agent(args)
    # its call's --world data, if it was killed, taken back
    world = open_for_writing(args.store, "tools reconcile", create=False)
    try:
        if not world.store.persistent and not world.store.shared:
            raise UsageError(
                f"--store {args.store}: a world in memory holds no call in doubt once its "
                "process has ended; give the store the call ran against (oxigraph:PATH, "
                "journal:PATH or "
                "sparql:URL)"
            )
        tool = agent.catalog.tool_in_doubt(args.name, world)  # a former name's too
        operator = operator_name(args.operator)
        cleared = agent.catalog.reconcile(
            tool.iri, payload, world, verdict=args.verdict, operator=operator
        )
    finally:
        world.close()
    recorded = {"operator": operator, "verdict": args.verdict}
    if args.format == "json":
        print(
            json.dumps(
                {"cleared": cleared is not None}
                | (
                    {"started": cleared.started, "args": json.loads(cleared.args), **recorded}
                    if cleared is not None
                    else {}
                ),
                indent=2,
                ensure_ascii=False,
            )
        )
        return 0 if cleared is not None else 1
    if cleared is None:
        print(f"no call of {tool.name} with these arguments is in doubt; nothing changed")
        return 1
    if not cleared.started:  # what a step's call held, its instance gone on without it
        print(
            f"cleared the hold workflow instance {agent.definitions.name(cleared.instance)} "
            f"left on calls of {tool.name} with these arguments: it may be called again"
        )
    else:
        print(
            f"cleared the call of {tool.name} in doubt (started {cleared.started}, arguments "
            f"{cleared.args}): it may be called again"
        )
    verdict = f"verdict: {args.verdict}" if args.verdict else "no --verdict given"
    shown = str(cleared.instance).startswith(INSTANCE)  # not a catalog call's
    print(
        f"recorded in the world: cleared by {operator} ({verdict})"
        + ("; `horismos instances` shows it on its instance" if shown else "")
    )
    return 0


def cmd_tools_approve(args: argparse.Namespace) -> int:
    """Issue an approval of exactly this tool with exactly these arguments: recorded in the
    world the call will use, which takes no other (:func:`~._policy.given_issue`); print it."""
    out_format = output_format(args.out) if args.out else None
    agent = _catalog_agent(args)
    tool = agent.catalog.tool(args.name)
    approval = fresh_approval(agent.catalog.approve(tool.iri, _json_args(args.args)))
    # as for run: a store not made yet is made only to load --world into (a mistyped path
    # was a new store holding an approval no call would find)
    with open_for_writing(args.store, "tools approve", create=bool(args.world)) as world:  # let go
        # F beside a persistent store only for writing --out: the approval is what lands.
        # Without --out nothing reads F: it is only refused if it brings an approval record
        beside = bool(args.world) and world.store.persistent
        lent = LentWorld(world) if beside and args.out else None
        try:
            if lent is not None:
                lent.lend(args.world, args.store, "approval")
            elif beside:
                world_data(
                    args.world,
                    args.store,
                    "approval",
                    "horismos tools approve",
                    world.store,
                )
            elif args.world:
                load_world(world, args.world)
            elif not world.store.persistent:  # the world the call reads from FILE_OR_DIR too
                load_world(world, args.paths)
            _issue(args, agent, tool, world, approval, out_format)
        finally:
            end_lend(lent, "tools approve")
    print(approval)
    return 0


def _issue(
    args: argparse.Namespace,
    agent: Agent,
    tool: Tool,
    world: World,
    approval: str,
    out_format: str | None,
) -> None:
    """Record ``approval`` of ``tool`` in ``world``, and write ``--out``."""
    if not world.store.persistent and not args.out:  # issued, and kept nowhere
        raise UsageError(
            f"{in_memory(args.store)} keeps nothing after this process, and a call takes "
            "only an approval issued in the world it uses: give the persistent --store "
            "the call will use (oxigraph:PATH, journal:PATH, sparql:URL), or --world F "
            "--out F2 and call with --world F2"
        )
    at = Literal(dt.datetime.now(dt.UTC).isoformat(), datatype=XSD.dateTime)
    # what the call's binding is, as a workflow's approval records it: rebound to other
    # code or another endpoint, the tool is not what was approved
    servers = servers_in_force(agent.definitions, agent.mcp_servers)
    now = implementation(tool, server_of(tool, servers))
    code = code_of(tool, agent.tools)
    operator = operator_name(args.operator)
    world.commit(Change(add=given_issue(approval, tool, at, now, code, operator)))
    if args.out:
        write_world(world, agent.definitions, args.out, out_format)


def cmd_tools_inventory(args: argparse.Namespace) -> int:
    """Write the inventory (stdout or --output), or --check a file against the declarations."""
    writable("--output", args.output)
    inventory = _catalog_agent(args).catalog.inventory()
    n = plural(len(inventory["tools"]), "tool")
    if args.check:
        drift = check_inventory(inventory, args.check)
        if not drift:
            print(f"{args.check}: up to date ({n})")
            return 0
        print("\n".join(drift))
        print(
            f"{args.check}: the declared tools have drifted from this inventory; if the "
            "change is intended, regenerate it with `horismos tools inventory "
            f"{' '.join(args.paths)} --output {args.check}`"
        )
        return 1
    if args.output:
        Path(args.output).write_text(inventory_text(inventory), encoding="utf-8")
        print(f"wrote {args.output} ({n})")
    else:
        sys.stdout.write(inventory_text(inventory))
    return 0
