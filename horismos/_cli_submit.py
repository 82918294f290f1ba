"""``horismos submit``: enqueue (workflow, focus) instances for ``horismos worker`` processes.

Why: a service, a cron job or a person hands work to the workers from anywhere the broker is
reachable; the definitions are read here only to resolve the workflow and, for ``--all``, the
focus nodes in the world. Statuses come from the world (``--wait`` polls it; ``horismos
instances`` lists it), never from the engine.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from ._agent import Agent
from ._cli_common import open_for_writing
from ._errors import UsageError
from ._queue import blocked_states, stop_reasons, submit_instances, wait_past
from ._redact import redact_url

__all__ = ["cmd_submit", "submit_arguments"]

EXIT = {"completed": 0, "failed": 1, "waiting": 3, "blocked": 4}
_SHOWN = 10  # failed or blocked instances named after the counts
_STALE = "blocked as before"  # a blocked instance no task has gone on with since submitted


def submit_arguments(p: argparse.ArgumentParser) -> None:
    """``horismos submit``'s options."""
    p.add_argument(
        "paths",
        nargs="+",
        metavar="FILE_OR_DIR",
        help="the Turtle definitions the workers run (to resolve the workflow and focus nodes)",
    )
    p.add_argument(
        "--store",
        required=True,
        metavar="sparql:URL",
        help="the shared world the workers drive instances in",
    )
    p.add_argument(
        "--broker",
        required=True,
        metavar="URL",
        help="the Celery broker the workers take tasks from: redis://HOST:PORT/DB",
    )
    p.add_argument(
        "--workflow",
        metavar="IRI",
        help="the workflow, as an IRI or CURIE (needed when several are declared)",
    )
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--focus", metavar="IRI", help="submit one instance for this node")
    which.add_argument(
        "--all",
        action="store_true",
        help="submit one instance per node of the workflow's focus type",
    )
    p.add_argument(
        "--wait",
        type=float,
        nargs="?",
        const=600.0,
        metavar="SECONDS",
        help="then wait (default 600 s) until every submitted instance has stopped (one "
        "blocked before: until a task has gone on with it), reading statuses from the world; "
        "exit by the worst",
    )


def cmd_submit(args: argparse.Namespace) -> int:
    """Hand instances to the workers through the broker, refusing a world the workers cannot
    all reach; with ``--wait``, exit as the worst of them ended."""
    agent = Agent.from_files(*args.paths)
    with open_for_writing(args.store, "submit") as world:
        if not world.store.shared:
            raise UsageError(
                f"--store {args.store} is not shared by other processes: the "
                "workers need one world they all reach, a sparql:URL store"
            )
        wf = agent.workflow(args.workflow)
        foci = agent.focus_list(world, wf, args.focus, all=args.all)
        # read before the tasks go: a blocked instance is waited for until a task goes on
        # with it, not answered with the block a worker found before
        since = blocked_states(world, wf.iri, foci) if args.wait is not None else None
        sent = submit_instances(args.broker, wf.iri, foci)
        print(
            f"horismos submit: {sent} instance{'s' * (sent != 1)} of "
            f"{agent.definitions.name(wf.iri)} submitted",
            file=sys.stderr,
            flush=True,
        )
        if args.wait is None:
            return 0
        statuses, untaken = wait_past(world, wf.iri, foci, timeout=args.wait, since=since)
        stale = set(untaken)
        stopped = [f for f, s in statuses.items() if s in ("failed", "blocked") and f not in stale]
        reasons = stop_reasons(world, wf.iri, stopped[:_SHOWN])
        for f in stale:  # no task went on with it yet: its block is the one of before
            statuses[f] = _STALE
    counts = Counter(s or "not started" for s in statuses.values())
    print(", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    for focus in stopped[:_SHOWN]:  # which, and why: a count alone sent them to look it up
        why = " ".join(reasons.get(focus, "").split())  # a pattern's lines, on one
        print(f"  {agent.definitions.name(focus)}: {statuses[focus]}" + (f": {why}" if why else ""))
    if len(stopped) > _SHOWN:
        print(f"  … {len(stopped) - _SHOWN} more: horismos instances --store {args.store}")
    if set(counts) == {"not started"}:  # "see horismos instances", which listed none
        print(
            f"horismos submit: none was started within {args.wait:g}s: is a worker taking "
            f"tasks from {redact_url(args.broker)}? Start one: horismos worker FILE_OR_DIR… "
            f"--store {args.store} --broker {redact_url(args.broker)} (--tools …)",
            file=sys.stderr,
        )
        return 1
    if counts.keys() & {"running", "not started", _STALE}:
        stale_said = (
            f" ({_STALE}: no worker went on with {'them' if counts[_STALE] > 1 else 'it'} yet)"
            if _STALE in counts
            else ""
        )
        print(
            f"horismos submit: not all stopped within {args.wait:g}s{stale_said}; see "
            f"horismos instances --store {args.store}",
            file=sys.stderr,
        )
        return 1
    worst = next(s for s in ("failed", "blocked", "waiting", "completed") if s in counts)
    return EXIT[worst]
