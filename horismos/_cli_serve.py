"""``horismos serve``: the tool catalog as an MCP server, over stdio or streamable HTTP.

Why a command of its own: ``tools call`` answers one call from a person; an agent needs a
long-lived endpoint that lists the tools, discovers them and answers every call as the
catalog's guarded call against one world (:mod:`._serve`, docs/serving.md).
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from ._agent import Agent
from ._cli_common import (
    load_world,
    load_world_beside,
    open_for_writing,
    output_folder,
    reach,
    reach_options,
    reached,
)
from ._cli_validate import run_warnings
from ._errors import UsageError
from ._outside_policy import every_outside_policy
from ._serve import ServedTools
from ._served_memory import forgotten_at_exit
from ._signing import signer_from_env
from ._stores import DEFAULT_STORE
from ._world import World

__all__ = ["cmd_serve", "serve_arguments"]


def serve_arguments(p: argparse.ArgumentParser) -> None:
    """``horismos serve``'s options."""
    p.add_argument(
        "paths",
        nargs="+",
        metavar="FILE_OR_DIR",
        help="Turtle files or folders: tools, workflows and the domain ontology",
    )
    p.add_argument(
        "--tools",
        action="append",
        default=[],
        metavar="MODULE",
        help="as for run: a module or .py file whose public functions back "
        "python:NAME and python:MODULE.NAME bindings (repeatable)",
    )
    reach_options(p)
    p.add_argument(
        "--world",
        action="append",
        default=[],
        metavar="F",
        help="world data (repeatable); without it the world is read from "
        "FILE_OR_DIR when the store is in memory (memory, oxigraph)",
    )
    p.add_argument(
        "--store",
        default=DEFAULT_STORE,
        metavar="STORE",
        help="where the world lives: memory, oxigraph (default; in memory, it ends "
        "with the server), oxigraph:PATH, journal:PATH or sparql:URL",
    )
    p.add_argument(
        "--allow",
        default="ReadOnly,HostStateWrite",
        metavar="CLASSES",
        help="side-effect classes served and callable (default: "
        "ReadOnly,HostStateWrite; add ExternalCommit to serve those tools)",
    )
    p.add_argument(
        "--trace-dir", metavar="DIR", help="write one trace (JSON Lines) per call into DIR"
    )
    p.add_argument(
        "--run-workflow",
        action="store_true",
        help="also serve run_workflow (workflow, focus): an agent may start a "
        "workflow and read its status or brief, never drive its steps",
    )
    p.add_argument(
        "--no-again",
        dest="again",
        action="store_false",
        help='with --run-workflow: refuse run_workflow\'s "again": true, so an agent can '
        "start a workflow for a focus once and never run it again (an operator runs it "
        "again with `horismos run --focus`)",
    )
    p.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default="stdio",
        help="stdio (default: the client starts this process) or streamable HTTP",
    )
    p.add_argument(  # None when not given: an explicit default is told from none
        "--host",
        help="with --transport http: the address to listen on (default 127.0.0.1); with "
        "stdio, the default transport, a usage error",
    )
    p.add_argument(
        "--port",
        type=int,
        help="with --transport http: the port (default 8765); with stdio, the default "
        "transport, a usage error",
    )


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve until the client goes away (stdio) or the process is stopped (http)."""
    if args.transport == "stdio" and (args.host is not None or args.port is not None):
        given = " ".join(
            f"{o} {v}" for o, v in (("--host", args.host), ("--port", args.port)) if v is not None
        )  # `--port 8765`, the default port, served stdio and said nothing
        raise UsageError(
            f"{given}: --host and --port are for --transport http; add --transport http to "
            "serve over HTTP (over stdio, the default, the client starts this process and "
            "talks on its stdin and stdout)"
        )
    args.host = "127.0.0.1" if args.host is None else args.host
    args.port = 8765 if args.port is None else args.port
    if not 0 < args.port < 65536:
        raise UsageError(f"--port {args.port}: a TCP port is 1-65535")
    signer_from_env()  # a bad trace key refused now, not by every call once serving
    if not args.again and not args.run_workflow:
        raise UsageError("--no-again is for --run-workflow: it refuses run_workflow's again")
    if args.trace_dir is not None:  # refused now, not as an internal error on every call
        output_folder("--trace-dir", args.trace_dir)
    agent = Agent.from_files(*args.paths, tools=reach(args, calls=True))
    # a path that holds no store is refused (a typo served an empty world), unless --world
    # is to fill it, as for run
    with open_for_writing(args.store, "serve", create=bool(args.world)) as world:
        beside: World | None = world  # what the warnings are held to (run_warnings)
        if args.world:
            load_world_beside(world, args.world, args.store, "serve's calls")
        elif not world.store.persistent:
            load_world(world, args.paths)
            beside = None  # the definitions' own files: the load has weighed them
        reached(world)  # a store that cannot be reached is said at start, not by every call
        for problem in run_warnings(agent.definitions, beside):  # as `run` says them
            print(problem, file=sys.stderr)
        if args.run_workflow:  # a step --allow leaves out: said before an agent's run acts
            for problem in every_outside_policy(agent.definitions, args.allow):
                print(problem, file=sys.stderr)
        served = ServedTools(
            agent,
            world,
            allow=args.allow,
            trace_dir=args.trace_dir,
            run_workflow=args.run_workflow,
            again=args.again,
        )
        for name, why in sorted(served.skipped.items()):
            print(f"horismos serve: not serving {name}: {why}", file=sys.stderr)
        forgotten = forgotten_at_exit(
            world.store.persistent, served.tools.values(), served.run_workflow
        )
        if forgotten is not None:
            print(forgotten, file=sys.stderr)
        own = "discover" + (", run_workflow" if served.run_workflow else "")
        print(
            f"horismos serve: {len(served.tools)} tool(s), and {own}", file=sys.stderr, flush=True
        )
        try:
            if args.transport == "stdio":
                asyncio.run(served.serve_stdio())
            else:
                asyncio.run(served.serve_http(args.host, args.port))
        except KeyboardInterrupt:
            pass
    return 0
