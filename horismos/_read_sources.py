"""Every file parsed on its own and merged in written order; a file that does not parse is
an :class:`AuthoringError` at its line.

Parsing is apart from :mod:`._sources`, which says where a node of what parsed was written,
and from :mod:`._turtle_syntax`, which says where a slip is in what did not.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from rdflib import Graph, URIRef
from rdflib.plugins.parsers.notation3 import BadSyntax

from ._errors import AuthoringError, Problem
from ._iri_slips import iri_slips
from ._sources import RDF_SUFFIXES, ParsedFile, Sources, expand_paths, literal_warnings_off
from ._turtle_syntax import (
    SYNTAX_HINT,
    UNBOUND,
    bracket_slip,
    last_written_line,
    line_parse_error,
    near,
    not_utf8,
    printable,
    runaway_string,
    sparql_variable,
    syntax_hint,
    syntax_line,
)
from ._unreadable import unreadable

__all__ = ["read_sources"]


def read_sources(paths: Iterable[str | Path], *, extra: Iterable[Graph] = ()) -> Sources:
    """Parse every file; a syntax error anywhere is an :class:`AuthoringError` naming the line."""
    merged = Graph()
    sources = Sources(merged)
    problems: list[Problem] = []
    unbound_prefixes: list[tuple[int, str]] = []
    # each prefix and namespace given the merged graph so far: given again (rdflib's own, by
    # every file) it changes nothing, yet rdflib searched for a free "default<N>" each time
    given: set[tuple[str, URIRef]] = set()
    for path in expand_paths(paths, RDF_SUFFIXES):
        if path.suffix == ".jsonl":  # read as Turtle, its first line was a syntax error
            problems.append(
                Problem(
                    "error",
                    "a trace (one JSON event a line, what --trace writes), not Turtle",
                    file=str(path),
                    hint=f"give it where a trace goes: horismos replay {path} FILE_OR_DIR…, "
                    f"trace show|view {path}, or graph … --trace {path}",
                )
            )
            continue
        g = Graph()
        fmt = RDF_SUFFIXES.get(path.suffix, "turtle")
        try:
            with literal_warnings_off():
                g.parse(path, format=fmt)
        except BadSyntax as e:
            unbound = UNBOUND.search(str(e._why))
            line = syntax_line(e)
            slip = None if unbound else bracket_slip(e)
            if slip is not None:
                at, what, hint = slip
                problems.append(
                    Problem(
                        "error",
                        f"Turtle syntax error: {what}{near(path, at)}",
                        file=str(path),
                        line=at,
                        hint=hint,
                    )
                )
                continue
            runaway = None if unbound else runaway_string(e)
            if runaway is not None:
                opened, ran_to = runaway
                problems.append(
                    Problem(
                        "error",
                        f"Turtle syntax error: the string opened at line {opened} runs on to "
                        f"line {ran_to}, so the statements between are read as its text"
                        f"{near(path, opened)}",
                        file=str(path),
                        line=opened,
                        hint='close it with """ where its text ends',
                    )
                )
                continue
            problems.append(
                Problem(
                    "error",
                    f"Turtle syntax error: {printable(str(e._why))}{near(path, line)}",
                    file=str(path),
                    line=line,
                    hint=f"declare the prefix at the top of the file: @prefix {unbound[1]}: <…> ."
                    if unbound
                    else syntax_hint(e, line),
                )
            )
            if unbound:
                unbound_prefixes.append((len(problems) - 1, unbound[1]))
            continue
        except IndexError:  # rdflib's Turtle parser reads past the end of a cut-off statement
            text = path.read_bytes()
            line = last_written_line(text, len(text))
            problems.append(
                Problem(
                    "error",
                    f"Turtle syntax error: the file ends inside a statement{near(path, line)}",
                    file=str(path),
                    line=line,
                    hint=SYNTAX_HINT,
                )
            )
            continue
        except UnicodeDecodeError as e:
            problems.append(not_utf8(path, e))
            continue
        except OSError as e:  # not its syntax: the file cannot be read at all
            problems.append(unreadable(path, e))
            continue
        except Exception as e:  # other parsers raise their own types
            variable = sparql_variable(path) if fmt in ("turtle", "trig") else None
            if variable is not None:
                problems.append(variable)
                continue
            located = line_parse_error(path, fmt) if fmt in ("nquads", "nt") else None
            if located is not None:
                problems.append(located)
                continue
            problems.append(
                Problem(
                    "error",
                    f"cannot parse as {fmt}: {e}",
                    file=str(path),
                    hint="check the file's syntax and extension",
                )
            )
            continue
        slips = iri_slips(path, g)  # rdflib reads a control character into an IRI
        if slips:
            problems.extend(slips)
            continue
        for prefix, ns in g.namespace_manager.namespaces():
            if (prefix, ns) not in given:
                given.add((prefix, ns))
                merged.namespace_manager.bind(prefix, ns, override=False, replace=False)
        _merge_in_order(merged, g)
        sources.files.append(ParsedFile(path, g))
    for g in extra:
        _merge_in_order(merged, g)
    for at, prefix in unbound_prefixes:  # another file may say what the prefix stands for
        known = dict(merged.namespace_manager.namespaces()).get(prefix)
        if known is not None:
            hint = f"declare the prefix at the top of the file: @prefix {prefix}: <{known}> ."
            problems[at] = replace(problems[at], hint=hint)
    if problems:
        raise AuthoringError(problems)
    return sources


def _merge_in_order(into: Graph, g: Graph) -> None:
    """Add ``g``'s triples to ``into`` keeping, for each subject and predicate, the order of
    their objects: the order they were written in (rdflib keeps it per subject and predicate,
    not for the graph as a whole). ``into += g`` took the graph's order, which follows the
    hashes of fresh blank-node labels, so an effect's assertions and a tool's arguments came
    out in another order in each process: an approval, which records how the tool is defined,
    was refused by the process that checked it about half the time."""
    into.addN(
        (s, p, o, into) for s in dict.fromkeys(g.subjects()) for p, o in g.predicate_objects(s)
    )
