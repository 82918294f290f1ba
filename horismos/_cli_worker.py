"""``horismos worker``: a Celery worker that drives submitted instances against a shared world.

Why a command of its own: a worker is a long-lived process an operator starts on each machine
(systemd, a container), with the definitions and tools its tasks need; ``horismos submit``
and the Python API only enqueue. See :mod:`horismos._queue` for what a task does and why
redelivery is safe, and docs/deployment.md for a deployment.
"""

from __future__ import annotations

import argparse
import logging
import sys

from ._agent import Agent
from ._cli_common import (
    cwd_importable,
    open_for_writing,
    output_folder,
    reach,
    reach_options,
    reached,
)
from ._cli_validate import run_warnings
from ._errors import UsageError
from ._outside_policy import every_outside_policy
from ._policy import allowed
from ._queue import VISIBILITY, InstanceDriver, broker_answers, celery_app, serve
from ._signing import signer_from_env

__all__ = ["cmd_worker", "worker_arguments"]


def worker_arguments(p: argparse.ArgumentParser) -> None:
    """``horismos worker``'s options."""
    p.add_argument(
        "paths",
        nargs="+",
        metavar="FILE_OR_DIR",
        help="Turtle files or folders: tools, workflows and the domain ontology",
    )
    p.add_argument(
        "--store",
        required=True,
        metavar="sparql:URL",
        help="the shared world every worker drives instances in (sparql:URL)",
    )
    p.add_argument(
        "--broker",
        required=True,
        metavar="URL",
        help="the Celery broker tasks are taken from: redis://HOST:PORT/DB",
    )
    p.add_argument(
        "--tools",
        action="append",
        default=[],
        metavar="MODULE",
        help="a Python module or .py file whose public functions back python: "
        "bindings (repeatable)",
    )
    reach_options(p)
    p.add_argument(
        "--allow",
        default="ReadOnly,HostStateWrite",
        metavar="CLASSES",
        help="side-effect classes steps may call (default: ReadOnly,HostStateWrite)",
    )
    p.add_argument(
        "--entailment",
        choices=("rdfs", "owl-rl"),
        default="rdfs",
        help="how argument types are entailed (default: rdfs)",
    )
    p.add_argument("--traces", metavar="DIR", help="write one trace per task here (TASK-ID.jsonl)")
    p.add_argument(
        "--visibility-timeout",
        type=float,
        default=VISIBILITY,
        metavar="SECONDS",
        help="seconds before a task a worker took but did not finish goes to another "
        f"worker (default {VISIBILITY:g}); longer than an instance usually runs",
    )
    p.add_argument(
        "-c",
        "--concurrency",
        type=int,
        default=4,
        metavar="N",
        help="tasks this process runs at once, each in a thread (default 4)",
    )
    p.add_argument("--name", metavar="NAME", help="the worker's Celery node name")
    p.add_argument("-v", "--verbose", action="store_true", help="log each task as it ends")


def cmd_worker(args: argparse.Namespace) -> int:
    """Serve tasks until SIGTERM / Ctrl-C (a task under way is finished first)."""
    allow = allowed(args.allow)  # before the worker says it is taking tasks
    signer_from_env()  # as a bad trace key: refused now, not by every task taken
    if args.allow_module:
        cwd_importable()
    if args.concurrency < 1:
        raise UsageError("--concurrency must be 1 or more")
    if args.visibility_timeout <= 0:
        raise UsageError("--visibility-timeout must be a positive number of seconds")
    traces = output_folder("--traces", args.traces) if args.traces else None
    agent = Agent.from_files(*args.paths, tools=reach(args, calls=True), entailment=args.entailment)
    app = celery_app(args.broker, visibility_timeout=args.visibility_timeout)
    # said before opening (oxigraph:PATH made a store); only of a kind that is one: a typo of
    # a kind ("sparq:http://…") is an unknown store, said by World.open
    if args.store.partition(":")[0] in ("memory", "oxigraph", "journal"):
        raise UsageError(
            f"--store {args.store} is not shared by other processes: workers "
            "need one world they all reach, a sparql:URL store"
        )
    with open_for_writing(args.store, "worker") as world:
        reached(world)  # a store down is said now, as `run` says it, not by every task taken
        warnings = run_warnings(agent.definitions, world)
    # a step --allow leaves out, in any workflow a task may name: said before a task acts
    warnings += every_outside_policy(agent.definitions, args.allow)
    driver = InstanceDriver(agent, args.store, allow=allow, traces=traces)
    driver.check()  # what the definitions ask (a model's host) is said before the broker
    broker_answers(app)  # a refusal (password, DB number) or a wrong address is said now
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        stream=sys.stderr,
        format="%(asctime)s %(message)s",
    )
    for problem in warnings:  # as `run` says them, once
        print(problem, file=sys.stderr)
    print(
        f"horismos worker: taking tasks from {_redacted(args.broker)} for {args.store}",
        file=sys.stderr,
        flush=True,
    )
    serve(
        app,
        driver,
        concurrency=args.concurrency,
        name=args.name,
        loglevel="INFO" if args.verbose else "WARNING",
    )
    return 0


def _redacted(url: str) -> str:
    scheme, sep, rest = url.partition("://")
    return f"{scheme}{sep}{rest.rpartition('@')[2]}" if sep else url
