"""The ``horismos`` command line: one ``cmd_<name>(args) -> int`` per command.

Each command is a :class:`Command` in :data:`COMMANDS`: its name, one line of help, a function
that adds its options, and the function that runs it. Exit codes follow the product contract:
0 completed / valid, 1 failed / invalid, 2 usage or authoring error, 3 waiting, 4 blocked.
A :class:`HorismosError` is printed as a message, never as a traceback.

This module is the program (the command table, the parser, error handling). Each group of
commands lives in its own module, the way ``horismos --help`` lists them: ``_cli_validate``,
``_cli_run`` (run, resume), ``_cli_instances`` (instances, wake, approve), ``_cli_trace``
(replay, trace, graph), ``_cli_tools``, ``_cli_load``, ``_cli_digest``; what they share is in
``_cli_common``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
from collections.abc import Sequence
from difflib import get_close_matches
from types import TracebackType

from ._attempt import any_sent
from ._claims import NotHeld
from ._cli_backup import backup_arguments, cmd_backup
from ._cli_common import EXIT, EXIT_USAGE, Command, WorldDataError, counts
from ._cli_digest import cmd_digest, digest_arguments
from ._cli_hydrate import cmd_hydrate, hydrate_arguments
from ._cli_instances import (
    approve_arguments,
    cmd_approve,
    cmd_instances,
    cmd_wake,
    instances_arguments,
    wake_arguments,
)
from ._cli_load import cmd_load, load_arguments
from ._cli_run import cmd_resume, cmd_run, resume_arguments, run_arguments
from ._cli_serve import cmd_serve, serve_arguments
from ._cli_submit import cmd_submit, submit_arguments
from ._cli_tools import cmd_tools, tools_arguments
from ._cli_trace import (
    cmd_graph,
    cmd_replay,
    cmd_trace,
    graph_arguments,
    replay_arguments,
    trace_arguments,
)
from ._cli_validate import cmd_validate, validate_arguments
from ._cli_worker import cmd_worker, worker_arguments
from ._errors import AuthoringError, HorismosError
from ._loop import stop_main
from ._policy import allowed
from ._process_identity import in_lane
from ._quiet_start import INTERRUPTED
from ._redact import redact_text
from ._stores import outlives_process
from ._unreadable import os_failure

__all__ = ["COMMANDS", "main"]


COMMANDS: list[Command] = [
    Command(
        "validate",
        "check Turtle definitions: errors and warnings with file and line",
        validate_arguments,
        cmd_validate,
    ),
    Command("run", "run a workflow for one focus node or for all of them", run_arguments, cmd_run),
    Command(
        "resume",
        "resume a waiting instance with the facts that answer its wait",
        resume_arguments,
        cmd_resume,
    ),
    Command(
        "instances",
        "list the world's workflow instances: id, workflow, focus, status, step, since when, "
        "the process that started it (lane@host:pid), and why (a failed one's error, a "
        "blocked one's pattern or refusal, each after its kind; a running one no process "
        "drives: interrupted; given the definitions, what a waiting one waits for); and each "
        "call `tools call` left held in doubt, with the command that clears it",
        instances_arguments,
        cmd_instances,
    ),
    Command(
        "wake",
        "resume every wait that is due (its timeout passed, or its horis:until "
        "holds), and every instance blocked where its endpoint was down: for cron or a "
        "systemd timer",
        wake_arguments,
        cmd_wake,
    ),
    Command(
        "approve",
        "approve the exact payload a waiting instance's step would send",
        approve_arguments,
        cmd_approve,
    ),
    Command(
        "replay",
        "replay recorded traces against definitions; report the first divergence",
        replay_arguments,
        cmd_replay,
    ),
    Command(
        "trace",
        "read a trace: show its timeline, view it as HTML, or export it as PROV-O",
        trace_arguments,
        cmd_trace,
    ),
    Command(
        "graph",
        "draw workflows as Mermaid, DOT, SVG or HTML, with traces' counts",
        graph_arguments,
        cmd_graph,
    ),
    Command(
        "tools",
        "the tool catalog: list, discover, call, approve, inventory",
        tools_arguments,
        cmd_tools,
    ),
    Command(
        "load",
        "load RDF files into a persistent or remote world (--store)",
        load_arguments,
        cmd_load,
    ),
    Command(
        "digest",
        "print the world's digest; --check recomputes it from every quad",
        digest_arguments,
        cmd_digest,
    ),
    Command(
        "backup",
        "copy an oxigraph:PATH or journal:PATH world into a new folder, as of one moment "
        "between commits",
        backup_arguments,
        cmd_backup,
    ),
    Command(
        "hydrate",
        "project resources of a system of record (a horis:Adapter) into the "
        "world, with their versions",
        hydrate_arguments,
        cmd_hydrate,
    ),
    Command(
        "worker",
        "take submitted instances from a Celery broker and drive them in a shared world",
        worker_arguments,
        cmd_worker,
    ),
    Command(
        "submit",
        "enqueue instances for horismos worker processes: one focus or --all",
        submit_arguments,
        cmd_submit,
    ),
    Command(
        "serve",
        "serve the tool catalog to agents over MCP (stdio or streamable HTTP)",
        serve_arguments,
        cmd_serve,
    ),
]


def _command_word(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names: its first word that is no option, as no option of
    ``horismos`` itself takes a value."""
    return next((a for a in argv if not a.startswith("-")), None)


def parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The command line's parser. Given the ``argv`` it will parse, the options of the one
    command it names (its first word that is no option) are the only ones added: adding every
    command's was ~12 ms of each process's start, for options it never reads. Without
    ``argv``, or naming no command, every command's (``horismos --help``, the reference)."""
    from . import __version__

    given = _command_word(argv or ())
    named = given if any(c.name == given for c in COMMANDS) else None

    top = argparse.ArgumentParser(
        prog="horismos",
        description="Run ontology-driven workflows: Turtle-declared tools fired by the runtime "
        "behind a SHACL effect gate, every run traced.",
        epilog="exit codes: 0 completed or valid, 1 failed or invalid, 2 usage or authoring "
        "error, 3 waiting, 4 blocked, 5 a tools call refused, 6 another run drives the focus "
        "now (ask again later)",
    )
    top.add_argument("--version", action="version", version=f"horismos {__version__}")
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for c in COMMANDS:
        p = sub.add_parser(c.name, help=c.help, description=c.help)
        if named in (None, c.name):
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
                # Python's reason ("[<class 'decimal.ConversionSyntax'>]") said nothing to
                # the user: the literal, what it means, and where to find it, do
                datatype = text.partition("Datatype=")[2].partition(",")[0]
                text = (
                    f"an ill-typed literal {_lexical(record.exc_info[2])}^^<{datatype}> (its "
                    "text is no value of its datatype) is kept as text, and no comparison with "
                    "a value of its datatype holds for it — `horismos validate` (with --world "
                    "for the world's files) names its file and line"
                )
            else:
                text = f"{text}: {why}"
            record.msg, record.args = f"horismos: warning: {text}", ()
            record.exc_info = record.exc_text = None
        if record.getMessage() in self.said:
            return False
        self.said.add(record.getMessage())
        return True


def _lexical(tb: TracebackType | None) -> str:
    """The text of the literal rdflib failed to convert, quoted, from the frame that caught
    the failure (rdflib's message names the datatype only); ``"…"`` where it is not there."""
    lexical = tb.tb_frame.f_locals.get("lexical") if tb is not None else None
    return json.dumps(lexical, ensure_ascii=False) if isinstance(lexical, str) else '"…"'


def _one_line_rdflib_warnings() -> None:
    logger = logging.getLogger("rdflib.term")
    if not any(isinstance(f, _OneLine) for f in logger.filters):
        logger.addFilter(_OneLine())


class _Terminate:
    """SIGTERM handled as Ctrl-C is: what systemd, Kubernetes, ``timeout`` and ``kill`` send
    to stop a process. Python's default ends it at once, with no ``finally`` and no ``atexit``:
    a run stopped mid-instance, and an on-disk store never got its digest written back, so the
    next command, even a read, re-hashed the whole world (13.8 s at a million triples). Now
    the run stops between two steps, the store is closed, and the exit code is 143."""

    def __init__(self) -> None:
        self.received = False

    def __call__(self, signum: int, frame: object) -> None:
        self.received = True
        if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # a background job's, nohup's
            stop_main()  # what Ctrl-C would do, had it not been ignored
        else:
            signal.raise_signal(signal.SIGINT)  # whatever Ctrl-C does here, the run's or Python's


def _on_sigterm() -> _Terminate | None:
    """Install :class:`_Terminate` for SIGTERM, where a process may and nobody else has."""
    if threading.current_thread() is not threading.main_thread():
        return None
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return None  # an embedding program's own
    terminate = _Terminate()
    signal.signal(signal.SIGTERM, terminate)
    return terminate


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run the command; returns the exit code. Run as the process's own
    command (``argv`` not given), a Ctrl-C once the command has ended is ignored: it could
    only cut short the process's exit (a store's close, its snapshot half written) and turn
    the exit code the command chose into a death by SIGINT."""
    if argv is None:
        try:
            return _main_argv(sys.argv[1:])
        finally:
            _ignore_late_interrupts()
    return _main_argv(argv)


def _ignore_late_interrupts() -> None:
    if (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    ):
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _main_argv(argv: Sequence[str]) -> int:
    try:  # the command not started yet: nothing to say of what stays
        top = parser(argv)
        _misspelt_command(top, argv)
        args, unknown = top.parse_known_args(argv)
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        return 130
    if unknown:
        _unrecognized(top, args, unknown)
    _one_line_rdflib_warnings()
    terminate = _on_sigterm()
    try:
        return _main(args, terminate)
    finally:
        if terminate is not None and signal.getsignal(signal.SIGTERM) is terminate:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _misspelt_command(top: argparse.ArgumentParser, argv: Sequence[str]) -> None:
    """Exit 2 naming the command meant for a misspelt one (``horismos rnu``): argparse lists
    all sixteen and leaves the reader to find it. Options and no command (``horismos
    --all -q``) are named too, unless the help or the version is asked for (``-h``, or
    ``--vers``: argparse takes a prefix of three letters or more), which argparse answers."""
    asked = any(
        a == "-h" or (len(a) >= 3 and ("--help".startswith(a) or "--version".startswith(a)))
        for a in argv
    )
    given = _command_word(argv)
    names = [c.name for c in COMMANDS]
    if given is None and argv and not asked:  # argparse said only "… arguments are required"
        top.error(
            f"unrecognized arguments: {' '.join(argv)}; name a command first "
            "(horismos --help lists them)"
        )
    if given is None or given in names:
        return
    close = get_close_matches(given, names, 1)  # asked for help too: still the command meant
    if close:
        top.error(f"{given!r} is no command: did you mean {close[0]}? (horismos --help lists them)")


def _unrecognized(
    top: argparse.ArgumentParser, args: argparse.Namespace, unknown: list[str]
) -> None:
    """Exit 2 naming the arguments the command does not take, with its usage, and the option
    meant for a misspelt one (``--wrld``: the top-level usage was printed, no option named)."""
    command = top
    while True:  # the innermost command given: `run`, `tools call`
        subs = [a for a in command._actions if isinstance(a, argparse._SubParsersAction)]
        name = getattr(args, subs[0].dest, None) if subs else None
        if name not in (subs[0].choices if subs else {}):
            break
        command = subs[0].choices[name]
    options = [o for a in command._actions for o in a.option_strings if o.startswith("--")]
    meant = [
        f"{u} (did you mean {close[0]}?)" if (close := get_close_matches(u, options, 1)) else u
        for u in unknown
        if u.startswith("-")
    ]
    command.error(f"unrecognized arguments: {' '.join(meant or unknown)}")


def _command(args: argparse.Namespace) -> str:
    """The command as its words name it: ``run``, ``tools call``."""
    return f"{args.command} {getattr(args, 'action', '')}".strip()


_COMMITS = {"run", "resume", "wake", "tools call"}
"""Commands an interrupt can stop with a world half-changed."""

_WRITTEN_BACK = {"run", "resume", "wake"}
"""Commands that write ``--out`` when an interrupt stops them after a commit: an interrupted
``run --all --out F`` was said to have written nothing to F, which it had written."""


def _what_stays(args: argparse.Namespace) -> str:
    """What an interrupted command leaves, for its last line: a world that outlives the
    process keeps every commit, and a step interrupted mid-call left its intent, so the
    instance, continued, does not call a tool that is not idempotent again — but `run --focus`
    on a focus whose instance finished starts another; a world in this process's memory is
    gone, and running again calls again what was called."""
    store = getattr(args, "store", None)
    command = _command(args)
    kept = store is None or outlives_process(store)
    if command not in _COMMITS:
        return "what had been committed stays"
    out = getattr(args, "out", None)
    if not kept and out and command in _WRITTEN_BACK:  # _cli_common.written_back wrote it
        return (
            f"the world was in this process's memory (--store {store}): what had landed by "
            f"then, if anything, was written to --out {out}, so go on from it (--world "
            f"{out}); running the same command again from the files calls again the tools "
            "already called"
        )
    if not kept:
        return (
            f"the world was in this process's memory (--store {store}), so nothing of it was "
            "kept, nor written to --out: running the same command again starts from the files "
            "and calls again the tools already called (keep a run's world with a persistent "
            "--store, oxigraph:PATH, journal:PATH or sparql:URL)"
        )
    focus = getattr(args, "focus", None)
    if command == "run" and focus is not None:
        # the instance may have finished all the same (a tool called inline cannot be stopped
        # mid-call: its result lands, and the run stops after it), and `run --focus` on a
        # focus whose instance finished starts another: told only that running again
        # continues, a person did, and a tool that is not idempotent acted twice
        return (
            "what had been committed stays (an instance stopped mid-step is continued by "
            "running the same command again; one that had finished is not: running again "
            "starts another and calls its tools again, so first see where it stands: "
            f"`horismos instances{f' --store {store}' if store else ''}`)"
        )
    if command != "tools call":
        return (
            "what had been committed stays (an instance stopped mid-step is continued by "
            "running the same command again)"
        )
    # no instance to continue: a call stopped once sent is in doubt, and the same call
    # again is refused (a tool that is not idempotent), not made
    keyed = (
        "; a call whose outcome landed answers again as recorded under the same --idempotency-key"
        if getattr(args, "idempotency_key", None)
        else ""
    )
    return (
        "what had been committed stays (a call stopped once its tool was sent, before its "
        "outcome landed, is in doubt: a tool that is not idempotent is not called there "
        f"again until `horismos tools reconcile` clears it{keyed})"
    )


def _notes(args: argparse.Namespace, e: BaseException) -> None:
    """The notes on ``e`` a line each, after its own message: what else failed as the command
    stopped (a world that could not close), said where it no longer replaces why it stopped."""
    said = _command(args)
    for note in getattr(e, "__notes__", ()):
        print(f"horismos {said}: {redact_text(str(note))}", file=sys.stderr)


def _main(args: argparse.Namespace, terminate: _Terminate | None) -> int:
    """Run the parsed command; every error a user can meet becomes a message and an exit
    code, never a traceback."""
    for stream in (sys.stdout, sys.stderr):  # text no terminal can show (a lone surrogate in a
        reconfigure = getattr(stream, "reconfigure", None)  # trace) printed escaped, no traceback
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    # named as its words are, as argparse names it: `horismos tools call: error: …`, where
    # `horismos tools:` left a script running several tools actions to guess which failed
    said = _command(args)
    try:
        if isinstance(getattr(args, "allow", None), str):  # said as typed, before any loading
            allowed(args.allow, said="--allow ")
        with in_lane(_command(args)):  # what a run's trace and its instances record of it
            return args.func(args)
    except BrokenPipeError:  # e.g. `horismos run … | head`: the reader has all it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except AuthoringError as e:
        what = "world data" if isinstance(e, WorldDataError) else "definitions"
        print(f"horismos {said}: {counts(e.problems)} in the {what}:", file=sys.stderr)
        for p in sorted(e.problems, key=lambda p: (p.file or "~", p.line or 0)):  # as validate
            print(f"  {p}", file=sys.stderr)
        _notes(args, e)
        return EXIT_USAGE
    except NotHeld as e:  # not the user's mistake: another run has the focus now
        print(f"horismos {said}: error: {redact_text(str(e))}", file=sys.stderr)
        return EXIT["running"]
    except HorismosError as e:
        print(f"horismos {said}: error: {redact_text(str(e))}", file=sys.stderr)
        _notes(args, e)
        return EXIT_USAGE
    except OSError as e:  # a file the command reads or writes; never a traceback
        print(f"horismos {said}: error: {os_failure(e)}", file=sys.stderr)
        if _command(args) in _COMMITS and any_sent():
            # a trace or --out that could not be written after tools were called: "run the
            # command again" alone had a world kept in memory call them all again
            print(
                f"horismos {said}: note: tools were called before this, so before "
                f"running it again: {_what_stays(args)}",
                file=sys.stderr,
            )
        _notes(args, e)
        return EXIT_USAGE
    except UnicodeDecodeError as e:  # a file read as text that is not UTF-8
        print(
            f"horismos {said}: error: an input is not UTF-8 text ({e.reason} at byte "
            f"{e.start}); give text files in UTF-8",
            file=sys.stderr,
        )
        _notes(args, e)
        return EXIT_USAGE
    except RecursionError as e:  # JSON or RDF nested past what Python's parsers follow
        print(
            f"horismos {said}: error: an input is nested too deeply to be read",
            file=sys.stderr,
        )
        _notes(args, e)
        return EXIT_USAGE
    except KeyboardInterrupt as e:
        terminated = terminate is not None and terminate.received
        print(
            f"\nhorismos {said}: {'terminated' if terminated else 'interrupted'}; "
            + _what_stays(args),
            file=sys.stderr,
        )
        _notes(args, e)
        return 143 if terminated else 130
