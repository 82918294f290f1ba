"""``horismos load``: RDF files into a persistent or remote world, once, with a progress bar
for big files; runs then cost what they touch, not what the world holds."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from ._cli_common import counts, in_memory, open_for_writing
from ._errors import AuthoringError, HorismosError, UsageError
from ._loaded_answers import loaded_answers, waiting_foci
from ._unreadable import each_opens, load_failed, os_failure
from ._world import unindexed
from ._world_syntax import syntax_problem

__all__ = ["cmd_load", "load_arguments"]


def load_arguments(p: argparse.ArgumentParser) -> None:
    """``horismos load``'s options."""
    p.epilog = (
        "exit codes: 0 every file loaded; 1 a file missing, unreadable or not RDF (said at "
        "its line), or a store that could not write it (the files before it stay loaded, none "
        "of that file's quads); 2 usage error, or a store that cannot be opened"
    )
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="RDF files or folders of them: Turtle (.ttl), N-Triples (.nt), "
        "N-Quads (.nq) or TriG (.trig)",
    )
    p.add_argument(
        "--store",
        required=True,
        metavar="STORE",
        help="the world to load into: oxigraph:PATH or journal:PATH (on disk), or sparql:URL",
    )


def cmd_load(args: argparse.Namespace) -> int:
    """Parse each file with pyoxigraph straight into the store, a progress bar on a terminal."""
    import time

    from ._sources import RDF_SUFFIXES, expand_paths

    path, bar = None, None
    try:
        files = each_opens(expand_paths(args.files, RDF_SUFFIXES))  # before a store is made
        world = open_for_writing(args.store, "load")
        if not world.store.persistent:
            raise UsageError(
                f"{in_memory(args.store)} keeps nothing after this process; load into "
                "oxigraph:PATH, journal:PATH or sparql:URL"
            )
        # what the files bring is not in the short-id index: said before and after, for
        # another process's short id missed meanwhile may index every instance again
        unindexed(world.store)
        foci = waiting_foci(world.store)  # facts for one of them: said, as load checks none
        try:
            for path in files:
                size, t0 = max(path.stat().st_size, 1), time.perf_counter()
                bar = _load_bar(path, size) if sys.stderr.isatty() else None
                try:
                    n = world.store.load_file(path, bar)
                except OSError as e:  # the file's read error, or the store's write error
                    raise load_failed(path, e, world.store.name) from None
                took = time.perf_counter() - t0
                print(
                    ("\r" if bar else "") + f"loaded {n:,} quads from {path} in {took:.1f} s "
                    f"({n / max(took, 1e-9):,.0f} quads/s)" + " " * 20,
                    file=sys.stderr,
                )
                answered = loaded_answers(path, foci)
                if answered is not None:
                    print(f"horismos load: {answered}", file=sys.stderr)
        finally:
            unindexed(world.store)
        world.store.close()
    except SyntaxError as e:  # said as every command that reads world data says it
        said = str(syntax_problem(path, e)) if path is not None else e.msg
        print(("\n" if bar else "") + f"horismos load: {said}", file=sys.stderr)
        return 1
    except AuthoringError as e:  # a file missing or unreadable: listed as every command does
        print(
            ("\n" if bar else "") + f"horismos load: {counts(e.problems)} in the files:",
            file=sys.stderr,
        )
        for p in e.problems:
            print(f"  {p}", file=sys.stderr)
        return 1
    except UsageError as e:  # what was asked cannot be done: exit 2, as every command
        print(("\n" if bar else "") + f"horismos load: error: {e}", file=sys.stderr)
        return 2
    except HorismosError as e:
        print(("\n" if bar else "") + f"horismos load: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:  # a path the system refuses: said in words, as every command says it
        print(("\n" if bar else "") + f"horismos load: error: {os_failure(e)}", file=sys.stderr)
        return 1
    return 0


def _load_bar(path: Path, size: int) -> Callable[[int], None]:
    shown = [-1]

    def bar(done: int) -> None:
        percent = done * 100 // size
        if percent != shown[0]:
            shown[0] = percent
            filled = percent * 30 // 100
            print(
                f"\r{path.name} [{'#' * filled}{'.' * (30 - filled)}] {percent:3d}% "
                f"{done / 1e6:,.1f}/{size / 1e6:,.1f} MB",
                end="",
                file=sys.stderr,
                flush=True,
            )

    return bar
