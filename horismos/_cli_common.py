"""What the ``horismos`` commands share: exit codes, the command record, reading and writing
worlds, loading ``--tools`` modules and what bindings may reach.

Kept apart from :mod:`._cli` (the program: parser and error handling) and from the command
modules (``_cli_run``, ``_cli_trace``, ``_cli_tools``, …) so each of those imports only this and
the library, never each other.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import os
import re
import shutil
import stat
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, cast

import pyoxigraph as ox
from rdflib import RDF, URIRef

from ._bindings import Hosts, Reach, allowed_host
from ._bindings.python import import_raised
from ._definitions import Definitions
from ._durable_files import fsync_folder
from ._errors import AuthoringError, Problem, UsageError
from ._lends import take_back_abandoned
from ._os_words import detail, written
from ._policy import approval_nodes, approval_record_terms, holds_approval_record
from ._sources import RDF_SUFFIXES, expand_paths
from ._stored_instances import short_id
from ._stores import DEFAULT_STORE, Store
from ._stores.base import Quad
from ._stores.ox_files import parse_file
from ._trace import refuse_written
from ._unreadable import each_opens
from ._world import World, unindexed

__all__ = [
    "EXIT",
    "EXIT_USAGE",
    "OUT_FORMATS",
    "Command",
    "WorldDataError",
    "counts",
    "cwd_importable",
    "fresh_trace",
    "host_option",
    "load_tools",
    "load_world",
    "load_world_beside",
    "one_line",
    "output_folder",
    "output_format",
    "plural",
    "reach",
    "reach_options",
    "reached",
    "short_id",
    "world_data",
    "world_of",
    "writable",
    "write_world",
    "written_back",
]


EXIT = {"completed": 0, "failed": 1, "waiting": 3, "blocked": 4, "running": 6}
"""A command's exit code by its instance's status; ``running`` only for one another process
drives, answered as it stands (``run --focus --no-again``)."""


EXIT_USAGE = 2


OUT_FORMATS = {".trig": "trig", ".nq": "nquads", ".nquads": "nquads"}


@dataclass(frozen=True)
class Command:
    """One row of the command table: the parser, ``--help`` and the generated CLI reference are
    all made from these rows, so a command is added in one place."""

    name: str
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def counts(problems: Sequence[Problem]) -> str:
    """ "2 errors, 1 warning": how every command summarises the problems it found."""
    errors = sum(p.severity == "error" for p in problems)
    warnings = len(problems) - errors
    text = plural(errors, "error")
    return text + (f", {plural(warnings, 'warning')}" if warnings else "")


def plural(n: int, word: str) -> str:
    """``n`` and ``word``, plural unless ``n`` is 1: said once, not at each message."""
    return f"{n} {word}{'' if n == 1 else 's'}"


class WorldDataError(AuthoringError):
    """World data (``--world`` files) that cannot be read: told apart from the definitions."""


def load_world(world: World, paths: Sequence[str]) -> None:
    """Load ``--world`` files, their problems raised as the world's, not the definitions'."""
    try:
        world.load(*paths)
    except AuthoringError as e:
        raise WorldDataError(e.problems) from None


def load_world_beside(world: World, paths: Sequence[str], store: str, who: str) -> None:
    """:func:`load_world`, refused before anything lands when ``world`` is the persistent
    ``--store`` ``store`` and the files bring an approval record (``who``: what takes only
    the approvals the store holds, "a resume").

    Why: a run, a resume, a wake and serve's calls take the approvals their world holds, and
    on a persistent store that is the store's record of who approved what. Given beside it,
    ``--world F`` holding a few hand-written triples (the fingerprint is public) approved the
    caller's own call: a resume ran a tool nobody approved, and serve completed one for any
    client. A command that only reads (``instances``, ``validate``) landed F in the store
    all the same, for the next resume. A file is read for it by the load's own parser
    (:func:`~._stores.ox_files.parse_file`: its base IRI, its quads), and one that does not
    parse is refused with the load's error before anything lands: a scan of its own passed a
    file it could not parse, which the load then took. A named pipe, which can be read only
    once, is parsed once and what was checked lands (:func:`world_data`)."""
    if not (paths and world.store.persistent):
        load_world(world, paths)
        return
    files = each_opens(expand_paths(paths, RDF_SUFFIXES))
    if all(stat.S_ISREG(f.stat().st_mode) for f in files):
        try:  # read as the load reads it: the same parser, base and quads
            held = _says_of_approvals(world, (q for f in files for q in parse_file(f)))
        except SyntaxError:  # the load's own error, nothing landed: not a load part-way
            world_data(paths, store, who, "horismos approve")  # raises the file's error
            raise
        if held:
            raise approvals_refused(paths, store, who, "horismos approve")
        load_world(world, paths)
        return
    # a named pipe is read once: parsed, checked, and what was checked lands
    quads = world_data(paths, store, who, "horismos approve", world.store)
    unindexed(world.store)  # as World.load does: instances it brings have no short id
    world.store.load(quads)
    unindexed(world.store)


def _says_of_approvals(world: World, quads: Iterable[ox.Quad]) -> bool:
    """Whether parsed ``quads`` state an approval record, or say anything of an approval or
    request for one that ``world``'s store holds (:func:`~._policy.approval_nodes`, asked
    once about the runtime's nodes the quads name)."""
    named: set[str] = set()
    for q in quads:
        s, o, g = q.subject, q.object, q.graph_name
        subject = "" if isinstance(s, ox.Triple) else s.value
        value = "" if isinstance(o, ox.Triple) else o.value
        graph = "" if isinstance(g, ox.DefaultGraph) else g.value
        if approval_record_terms(subject, q.predicate.value, value, graph):
            return True
        named.update(t.value for t in (s, o) if type(t) is ox.NamedNode)
    return bool(approval_nodes(world.store, named))


def approvals_refused(paths: Sequence[str], store: str, who: str, issue: str) -> UsageError:
    """The refusal of ``--world`` files ``paths`` that hold an approval record, given beside
    the persistent ``--store`` ``store`` (``issue``: the command that issues approvals)."""
    return UsageError(
        f"--world {' '.join(paths)}: holds an approval record, and {who} on --store {store} "
        f"takes only the approvals the store holds; approvals are issued with `{issue} … "
        f"--store {store}`. Nothing was loaded"
    )


def world_data(
    paths: Sequence[str], store: str, who: str, issue: str, beside: Store | None = None
) -> list[Quad]:
    """The quads of the ``--world`` files ``paths``, parsed once, refused if they hold an
    approval record (``who`` is what counts only the persistent ``--store`` ``store``'s;
    ``issue``, the command that issues them there), or say anything of an approval or a
    request for one the store ``beside`` holds (:func:`~._policy.approval_nodes`): before a
    lend or a load, and in place of one where nothing would read them."""
    with World.open("oxigraph") as given:  # in memory; its quads read out once, as landed
        load_world(given, paths)
        quads = list(given.store.quads())
    held: frozenset[str] = frozenset()
    if beside is not None:
        named = (str(t) for q in quads for t in (q[0], q[2]) if isinstance(t, URIRef))
        held = approval_nodes(beside, named)
    if holds_approval_record(quads, held):
        raise approvals_refused(paths, store, who, issue)
    return quads


def waiting_instance_arguments(p: argparse.ArgumentParser, instance_help: str) -> None:
    """The arguments that name a stopped instance and where it lives, as ``resume`` and
    ``approve`` take them: the definitions it runs with, the world it committed to, its IRI."""
    p.add_argument(
        "paths",
        nargs="+",
        metavar="FILE_OR_DIR",
        help="the Turtle definitions the instance runs with",
    )
    p.add_argument(
        "--world",
        action="append",
        default=[],
        metavar="F",
        help="the world the run committed to, e.g. the run's --out (repeatable); "
        "not needed with a persistent --store",
    )
    p.add_argument("--instance", required=True, metavar="IRI", help=instance_help)


@contextmanager
def written_back(
    world: World, defs: Definitions, path: str | None, fmt: str | None
) -> Iterator[None]:
    """Write the world to ``--out`` (``path``) when the block ends, and when it raises after a
    commit (an error or Ctrl-C part-way): what the steps before it did, tools called, is then
    in the file the next command goes on from, not done again by it. A block refused before
    anything changed writes nothing."""
    if path is None:
        yield
        return
    before = world.store.digest()
    try:
        yield
    except BaseException:
        if world.store.digest() != before:
            write_world(world, defs, path, fmt)
        raise
    write_world(world, defs, path, fmt)


def write_world(world: World, defs: Definitions, path: str, fmt: str | None) -> None:
    """Write the world to ``--out`` with the definitions' prefixes, non-finite doubles in the
    lexical form a reader parses back."""
    graph = world.graph
    for prefix, ns in defs.graph.namespaces():
        graph.bind(prefix, ns, override=False)
    text = graph.serialize(format=cast(str, fmt))
    # rdflib writes a NaN or infinite double in N-Quads as "nan"/"inf", which nothing reads
    # back; its lexical forms are NaN, INF and -INF (TriG already writes those)
    text = _NON_FINITE.sub(lambda m: f'"{_LEXICAL[m.group(1)]}"^^<{m.group(2)}>', text)
    # written beside it, then put in its place: a write cut short (a full disk, a size
    # limit, a kill) truncated the file, and where --out is the --world the command read
    # (going on from that file), everything it held was lost with it
    target = Path(os.path.realpath(path))
    temp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        if target.exists() and not target.is_file():  # a pipe, /dev/null: written into
            target.write_text(text, encoding="utf-8")
            return
        with temp.open("w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        if target.exists():
            shutil.copymode(target, temp)
        os.replace(temp, target)
    except OSError as e:
        with suppress(OSError):
            temp.unlink()
        what = (written(e) or (detail(e), ""))[0]
        raise UsageError(
            f"--out {path} could not be written ({what}); it was left as it was. What this "
            "command did is in no file: any tool it called has acted, and running it again "
            "from the same world calls that tool again. Check what its tools did before "
            "going on"
        ) from None
    # the rename too, so that a power cut does not bring the old file back; the new one is in
    # place and whole already, so a folder that cannot be fsynced is no reason to fail
    with suppress(OSError):
        fsync_folder(target.parent)


_NON_FINITE = re.compile(
    r'"(nan|inf|-inf)"\^\^<(http://www\.w3\.org/2001/XMLSchema#'
    r"(?:double|float))>"
)


_LEXICAL = {"nan": "NaN", "inf": "INF", "-inf": "-INF"}


def output_format(path: str) -> str:
    """The format an ``--out`` file is written in, from its name; checked before the run, so a
    bad name is not found after its work is done."""
    fmt = OUT_FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise UsageError(
            f"--out {path}: name the file .trig (TriG) or .nq (N-Quads); the world "
            "has named graphs, which Turtle cannot hold"
        )
    writable("--out", path)
    return fmt


def writable(option: str, path: str | None) -> None:
    """Refuse an output file that cannot be written before anything runs, not after."""
    if path is None:
        return
    _not_stdout(option, path, "a file", "a file name")
    p = Path(path)
    folder = p.parent
    if p.is_dir():
        raise UsageError(f"{option} {path}: this is a folder; give a file name in it")
    if not folder.is_dir():
        raise UsageError(f"{option} {path}: the folder {folder} does not exist; create it first")
    if not os.access(folder, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise UsageError(f"{option} {path}: not writable")


def fresh_trace(option: str, path: str | None, out: str | None = None) -> None:
    """Refuse a trace file that already holds something, before anything runs: a trace may be
    the only record of the run that wrote it, and ``run --trace run.jsonl`` given again wrote
    the new run over it without a word. ``--out`` writes a world over its file on purpose (a
    resume goes on from the file it read); a derived page or export (``-o``, ``--html``) is
    written again from its trace; a trace cannot be. An empty file (``mktemp``'s) is taken:
    it records nothing. Folders of traces (``--traces``, ``--trace-dir``) never write over one
    (:func:`horismos._trace.own_file`). ``out``: the command's ``--out``, which must be
    another file: the world written after the run replaced the trace it had just written."""
    writable(option, path)
    if path is None:
        return
    if out is not None and Path(out).resolve() == Path(path).resolve():
        raise UsageError(
            f"{option} {path} and --out {out} name the same file: the world written after the "
            "run would replace its trace; give each a file of its own"
        )
    refuse_written(f"{option} {path}", path)


def _not_stdout(option: str, path: str, writes: str, give: str) -> None:
    """Refuse ``-`` for an option that writes ``writes``: it is not stdout there, as it is
    elsewhere (``--trace -`` wrote a file named "-", ``--html -`` a folder named "-")."""
    if path == "-":
        raise UsageError(f"{option} -: {option} writes {writes}, not stdout; give {give}")


def output_folder(option: str, path: str) -> Path:
    """A folder a command writes one file into for each thing it does (a trace per instance
    woken or per task, a page per trace), made before it does any: a file by that name was
    found only at the first file written, after that thing was done (``wake`` had resumed an
    instance, and the world that held it was never written to ``--out``)."""
    _not_stdout(option, path, "files into a folder", "a folder name")
    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(
            f"{option} {path}: cannot be the folder to write into ({e.strerror}); give a "
            "folder, or a name for a new one"
        ) from None
    if not os.access(folder, os.W_OK):
        raise UsageError(f"{option} {path}: not writable")
    return folder


def load_tools(specs: Sequence[str]) -> dict[str, Callable[..., Any]]:
    """Each public function of each module, under ``NAME`` and ``MODULE.NAME``.

    A spec is a module name (the current directory is importable) or a ``.py`` file. A bare
    ``NAME`` defined by two modules is left out, so the binding must say which module.
    """
    tools: dict[str, Callable[..., Any]] = {}
    bare: dict[str, list[Callable[..., Any]]] = {}
    for spec in specs:
        module = _import_tools(spec)
        own, foreign = 0, {}
        for name, func in vars(module).items():
            if name.startswith("_") or not inspect.isfunction(func):
                continue
            if func.__module__ != module.__name__:
                foreign[name] = func.__module__
                continue
            own += 1
            tools[f"{module.__name__}.{name}"] = func
            bare.setdefault(name, []).append(func)
        if not own and foreign:
            raise _none_of_its_own(spec, foreign)
    for name, funcs in bare.items():
        if len(funcs) == 1:
            tools.setdefault(name, funcs[0])
    return tools


def _none_of_its_own(spec: str, foreign: dict[str, str]) -> UsageError:
    """A tools module whose every function comes from another module: each ``python:``
    binding of it said "registered: none", and to register the function with --tools, which
    had been done."""
    names = sorted(foreign)
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    where = ", ".join(sorted(set(foreign.values())))
    return UsageError(
        f"--tools {spec}: it defines no function of its own: {shown} "
        f"{'comes' if len(names) == 1 else 'come'} from {where} (imported, or made there by "
        "a decorator), and --tools registers only the functions a module defines, so that a "
        "Turtle file reaches nothing it imports; give --tools the module that defines them, "
        "or define them here (a decorator keeps a function its own with functools.wraps)"
    )


def _import_tools(spec: str) -> ModuleType:
    path = Path(spec)
    if path.suffix in RDF_SUFFIXES:  # read as the module "NAME.ttl": "No module named NAME"
        kind = "a Turtle" if path.suffix == ".ttl" else "an RDF"
        raise UsageError(
            f"--tools {spec}: {kind} file, not Python: give it among the definitions' "
            "FILE_OR_DIR arguments, without --tools; --tools takes a Python module or a .py "
            "file whose functions back python: bindings"
        )
    if spec.endswith(".py") or os.sep in spec or "/" in spec:
        if path.is_dir():
            raise _a_folder(spec, path)
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
        except (Exception, SystemExit) as e:  # sys.exit() too: its code was ours, unexplained
            if sys.modules.get(name) is module:
                del sys.modules[name]
            raise _import_failed(spec, e) from None
        return module
    cwd_importable()
    try:
        module = importlib.import_module(spec)
    except ModuleNotFoundError as e:
        if e.name is not None and spec.split(".")[0] != e.name.split(".")[0]:
            raise _import_failed(spec, e) from None  # the module itself imports a missing one
        raise UsageError(
            f"--tools {spec}: cannot import it ({e}); run from the folder that "
            "holds it, or give the path of the .py file"
        ) from None
    except (Exception, SystemExit) as e:
        raise _import_failed(spec, e) from None
    if getattr(module, "__file__", None) is None:  # NAME/ with no NAME.py beside it
        raise _a_folder(spec, path)
    return module


def _a_folder(spec: str, path: Path) -> UsageError:
    """A folder imported as an empty namespace package: no function, every ``python:``
    binding unbound; Python prefers ``NAME.py`` beside ``NAME/``, so only this is refused."""
    return UsageError(
        f"--tools {spec}: this is a folder, not a Python module; give a .py file in it "
        f"(--tools {path / 'NAME.py'}) or a module's name"
    )


def _import_failed(spec: str, e: BaseException) -> UsageError:
    """A tools module that does not parse or raises while it is imported, located."""
    if isinstance(e, SyntaxError):
        where = f"{e.filename}:{e.lineno}" if e.filename else f"line {e.lineno}"
        text = f": {e.text.strip()}" if e.text and e.text.strip() else ""
        return UsageError(f"--tools {spec}: {where}: syntax error: {e.msg}{text}")
    return UsageError(
        f"--tools {spec}: importing it {import_raised(e)}; "
        "fix the module (it runs top to bottom when --tools loads it)"
    )


def reach_options(p: argparse.ArgumentParser) -> None:
    """The options that say what a run's tools may reach (modules, hosts), shared by every
    command that calls tools so each lane keeps the same policy."""
    p.add_argument(
        "--allow-module",
        action="append",
        default=[],
        metavar="NAME",
        help="let python:NAME.func bindings (and NAME.sub.func) import and call "
        "code in module NAME (repeatable); without it a python: binding "
        "reaches only the functions --tools registers",
    )
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        type=host_option,
        metavar="HOST",
        help="let HTTP bindings and MCP server URLs reach only these hosts "
        "(repeatable; api.example.org, *.example.org, 10.0.0.0/8), with "
        "allow-hosts in [tool.horismos] of ./pyproject.toml; link-local and "
        "metadata addresses only when named",
    )


def host_option(text: str) -> str:
    """An ``--allow-host`` value, refused as argparse reads it: ``validate``, which builds no
    host policy, said "valid" of ``--allow-host https://api.example.org`` that ``run``
    then refused."""
    try:
        return allowed_host(text)
    except UsageError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def reach(args: argparse.Namespace, *, calls: bool) -> Reach:
    """What bindings may reach: ``--tools`` functions, ``--allow-module`` modules, and the
    ``--allow-host`` hosts with the project's ``allow-hosts``. ``calls``: the command calls
    tools, so an ``--allow-module`` module is looked up in the current folder too (listing
    and validating import nothing)."""
    if args.allow_module and calls:
        cwd_importable()
    return Reach(load_tools(args.tools), args.allow_module, Hosts(tuple(allowed_hosts(args))))


def allowed_hosts(args: argparse.Namespace) -> list[str]:
    """``--allow-host`` hosts and the project's ``allow-hosts``."""
    return [*args.allow_host, *_project_hosts()]


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
        raise UsageError(
            f"{path}: [tool.horismos] allow-hosts is a list of strings, e.g. "
            '["api.example.org", "*.internal.example"]'
        )
    return hosts


def cwd_importable() -> None:
    """Modules the user names are looked up in the current directory too (as ``python -m``)."""
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())


def one_line(text: str) -> str:
    """``text`` with its whitespace and line breaks collapsed: a message that fits one line of
    stderr."""
    return " ".join(text.split())


def in_memory(store: str) -> str:
    """How a message names ``--store store``, a store in this process's memory: the default
    is said to be one, for a command line that never wrote ``--store`` (a bare "--store
    oxigraph" named an option the user had not given, and not why it keeps nothing)."""
    what = "the default: the world" if store == DEFAULT_STORE else "the world"
    return f"--store {store} ({what} in this process's memory)"


def open_for_writing(store: str, command: str, *, create: bool = True) -> World:
    """The world at ``--store store``, opened for ``horismos command`` to write: every command
    that writes a store opens it here, so what a process that is gone lent it and never took
    back (:func:`~._lends.take_back_abandoned`) is taken back first, saying so. Else a quad the
    command wrote that the lend also held was removed by a later take-back, and the lend was
    read as the store's own facts."""
    world = World.open(store, create=create)
    try:
        taken = take_back_abandoned(world)
    except BaseException:
        world.close()
        raise
    if taken:
        cause = (
            "its process stopped, or lost its lease, before it could"
            if world.store.shared
            else "its process stopped before it could"
        )
        print(
            f"horismos {command}: note: took back {taken} quad{'' if taken == 1 else 's'} of "
            f"--world data an earlier command lent the store and never took back ({cause})",
            file=sys.stderr,
        )
    return world


def world_of(args: argparse.Namespace, writes: str | None = None) -> World:
    """The world of a command that reads one made before (``--store``, with ``--world``);
    ``writes``: the command's name, when it writes the store (:func:`open_for_writing`)."""
    world = (
        World.open(args.store, create=False)
        if writes is None
        else open_for_writing(args.store, writes, create=False)
    )
    if not args.world and not world.store.persistent:
        raise UsageError(
            f"{in_memory(args.store)} starts empty: give the world the runs committed "
            "to with --world F (a run's --out), or a persistent --store "
            "(oxigraph:PATH, journal:PATH, sparql:URL)"
        )
    try:
        # a command that reads only lands F in the store too: no approval it brings is kept
        load_world_beside(world, args.world, args.store, f"horismos {writes or args.command}")
    except BaseException:
        world.close()
        raise
    return world


_PROBE = URIRef("urn:horismos:probe")


def reached(world: World) -> None:
    """One read of ``world``'s store now: a long-lived command (``serve``, ``worker``) whose
    store cannot be reached says so at start and exits, as ``run`` does, where it had started
    and then failed every call or task it took (a :class:`StoreError` from a ``sparql:``
    server that is down)."""
    next(iter(world.store.objects(_PROBE, RDF.type)), None)
