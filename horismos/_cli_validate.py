"""``horismos validate``: every authoring error and warning, with file and line, before
anything runs. A world (``--world``, ``--store``) quiets warnings about IRIs it uses; a world
file's own properties and classes are held to the ontology (:mod:`._world_terms`)."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Iterable
from dataclasses import replace

from rdflib import URIRef

from ._bindings.mcp import connection_problems
from ._bindings.reach import Hosts
from ._cli_common import (
    WorldDataError,
    allowed_hosts,
    counts,
    load_world_beside,
    plural,
    reach,
    reach_options,
)
from ._contract import (
    binding_problems,
    command_problems,
    credential_problems,
    server_problems,
    sometimes_unbound,
    unbound_arguments,
)
from ._definitions import Definitions, load_definitions
from ._errors import AuthoringError, Problem
from ._gate import pattern_problems, shape_problems
from ._item_gaps import item_gaps
from ._model_keys import unkeyed_models
from ._prechecks import unmeetable_errors, unmet_properties, unstated
from ._several_solutions import several_solutions
from ._stores import DEFAULT_STORE
from ._unreached_hosts import unreached_hosts
from ._untyped_values import untyped_values
from ._world import World, states
from ._world_terms import world_term_problems

__all__ = ["cmd_validate", "run_warnings", "validate_arguments"]


def validate_arguments(p: argparse.ArgumentParser) -> None:
    """``horismos validate``'s options."""
    p.add_argument(
        "paths",
        nargs="+",
        metavar="FILE_OR_DIR",
        help="Turtle files or folders of them (tools, workflows, ontologies)",
    )
    p.add_argument(
        "--connect",
        action="store_true",
        help="also start or reach each MCP server the tools name, and check each "
        "tool's input schema against its horis:takes",
    )
    p.add_argument(
        "--tools",
        action="append",
        default=[],
        metavar="MODULE",
        help="as for run; with it (or --allow-module) each python: binding is "
        "resolved, and each function's parameters are checked against its horis:takes and "
        "the dicts it returns against its horis:effect (an allowed module's read from its "
        "source, not imported)",
    )
    reach_options(p)
    p.add_argument(
        "--world",
        action="append",
        default=[],
        metavar="F",
        help="world data (repeatable): an IRI a pattern, a horis:type, a horis:property or "
        "a horis:focusType uses is not reported as undeclared when the world uses it; a "
        "property or class of the ontology's namespaces the world uses and the ontology does "
        "not declare is a warning at the world file's line, as is a value naming no "
        "individual of its property's range (:acuity :urgnt where :urgent is one)",
    )
    p.add_argument(
        "--store",
        default=DEFAULT_STORE,
        metavar="STORE",
        help="where the world lives, for --world or a persistent store: memory, "
        "oxigraph (default), oxigraph:PATH, journal:PATH or sparql:URL",
    )


def cmd_validate(args: argparse.Namespace) -> int:
    """Print every authoring error and warning; 0 when the definitions can run, 1 otherwise."""
    try:
        defs = load_definitions(args.paths)
    except AuthoringError as e:
        found = list(e.problems)
        if e.definitions is not None and (args.world or args.store != DEFAULT_STORE):
            # the load's warnings as they stand beside the world, and the world's own, as
            # for definitions without an error: a term only the world uses was said to be
            # used by no loaded data, and a world file's misspelt term was not said
            try:
                beside = _beside_world(e.definitions, args)
            except WorldDataError as w:  # said with the definitions' errors, not for them
                found += w.problems
            else:
                found = [p for p in found if p.severity == "error"] + beside
        problems = sorted([*found, *_found_beyond(e, args)], key=_placed)
        for p in problems:
            print(p)
        print(f"invalid: {counts(problems)}")
        return 1
    if args.world or args.store != DEFAULT_STORE:
        defs.warnings = _beside_world(defs, args)
    # a server nothing declares is reported at the binding's line, before the connections
    refused = _after_load(defs, asyncio.run(connection_problems(defs)) if args.connect else ())
    refused += [p for p in defs.warnings if p.severity == "error"]  # what the world decided
    defs.warnings = [
        *(p for p in defs.warnings if p.severity == "warning"),
        *command_problems(defs),
        *sometimes_unbound(defs),
        *unkeyed_models(defs),
    ]
    if args.tools or args.allow_module:
        for p in binding_problems(defs, reach(args, calls=False)):
            (refused if p.severity == "error" else defs.warnings).append(p)
    refused += unreached_hosts(defs, Hosts(tuple(allowed_hosts(args))))
    for p in sorted([*defs.warnings, *refused], key=_placed):  # by file and line, as said
        print(p)
    if refused:
        print(f"invalid: {counts([*defs.warnings, *refused])}")
        return 1
    for note in _not_reached(defs, args):
        print(note)
    warned = f" ({plural(len(defs.warnings), 'warning')})" if defs.warnings else ""
    print(
        f"{plural(len(defs.tools), 'tool')}, {plural(len(defs.workflows), 'workflow')}, "
        f"{plural(len(defs.steps), 'step')}: valid{warned}"
    )
    return 0


def _beside_world(defs: Definitions, args: argparse.Namespace) -> list[Problem]:
    """The load's warnings as they stand beside the world ``args`` give (``--world``,
    ``--store``), with what the world itself shows: errors among them where the world
    decides one (a property a shape requires that it states nowhere)."""
    world = World.open(args.store, create=False)
    try:
        load_world_beside(world, args.world, args.store, "horismos validate")
        found = beside_world(defs, world)
        # a forEach item the world gives without a property its pattern joins on it
        found += item_gaps(defs, world.store, args.world)
        # a step that is no forEach, given several calls for a focus the world holds
        found += several_solutions(defs, world.store)
        # a value of a property held to sh:class that the world never types so
        found += untyped_values(defs, world.store, args.world)
    finally:
        world.store.close()
    # the world's own facts: a property or class of the ontology's namespaces misspelt
    return found + world_term_problems(defs, args.world)


def _not_reached(defs: Definitions, args: argparse.Namespace) -> list[str]:
    """What ``valid`` did not check, and the option that checks it: a modeler read "valid"
    of a binding naming a function its module does not define, or an MCP tool whose schema
    is not the one declared, and met it at the first run."""
    bindings = sorted({t.binding for t in defs.tools.values()}, key=str)
    python = [b for b in bindings if b.startswith("python:")]
    mcp = [b for b in bindings if b.startswith("mcp://")]
    notes = []
    if python and not (args.tools or args.allow_module):
        shown = ", ".join(python[:3]) + (f" and {len(python) - 3} more" if len(python) > 3 else "")
        notes.append(
            f"note: {plural(len(python), 'python: binding')} not resolved ({shown}): give "
            "--tools FILE.py or --allow-module MODULE to check each against its function"
        )
    if mcp and not args.connect:
        notes.append(
            f"note: {plural(len(mcp), 'MCP tool')} not reached: give --connect to check each "
            "server's input schema against horis:takes"
        )
    return notes


def _found_beyond(e: AuthoringError, args: argparse.Namespace) -> list[Problem]:
    """What the checks after a load find in what it made of the definitions before it
    failed, errors and warnings: a modeler sees every node's mistakes in one pass, not a
    second set once the first is mended. A step or shape the load already found wrong is
    left at that (an argument its broken pattern gives is not "unbound", nor "bound only by
    an OPTIONAL"); a binding's own text, and what this machine lacks to run a tool or a
    model, is judged of every tool and step however else it is wrong (an ill-typed
    horis:value hid the undeclared server its binding names). Nothing is said twice at one
    line."""
    defs = e.definitions
    if defs is None:
        return []
    wrong = {p.node for p in e.problems if p.severity == "error"}
    said = {(p.file, p.line) for p in e.problems}
    own = [
        *_bindings_judged(defs),
        *command_problems(defs),
        *unkeyed_models(defs),
        *unreached_hosts(defs, Hosts(tuple(allowed_hosts(args)))),
    ]
    found = [p for p in own if (p.file, p.line) not in said]
    checked = [*unbound_arguments(defs), *sometimes_unbound(defs), *shape_problems(defs)]
    if args.tools or args.allow_module:
        checked += binding_problems(defs, reach(args, calls=False))
    found += [p for p in checked if p.node not in wrong and (p.file, p.line) not in said]
    said |= {(p.file, p.line) for p in found}
    # an expression is judged on its own: a shape's other slip says nothing of it
    return found + [p for p in pattern_problems(defs) if (p.file, p.line) not in said]


def _after_load(defs: Definitions, connected: Iterable[Problem] = ()) -> list[Problem]:
    """The errors the checks after a load find: servers (then ``connected``, what trying
    them found), unbound arguments, credentials in URLs, shapes neither engine loads."""
    return [
        *server_problems(defs),
        *connected,
        *unbound_arguments(defs),
        *credential_problems(defs),
        *shape_problems(defs),
    ]


def _bindings_judged(defs: Definitions) -> list[Problem]:
    """The errors of :func:`_after_load` a binding's text alone gives (a server nothing
    declares, credentials in a URL): nothing else said of its tool makes them follow."""
    return [*server_problems(defs), *credential_problems(defs)]


def _placed(p: Problem) -> tuple[str, int]:
    """Where a problem is: its file, then its line (the load's order, kept for one line)."""
    return (p.file or "~", p.line or 0)


def beside_world(defs: Definitions, world: World) -> list[Problem]:
    """The load's warnings as they stand beside ``world``: none about an undeclared IRI the
    world uses, none about a property only a step's own tool writes that the world holds
    values of (:attr:`Definitions.own_writes`) — and, where that was a step's only guard against
    a rerun, that nothing stops it (:attr:`Definitions.stated_reruns`) —, one about each node
    the definitions name and
    the world does not hold, and one about each declared property a shape requires that no
    tool writes and the world states nowhere (:attr:`Definitions.unwritten`)."""
    used = {iri for iri in defs.undeclared if _world_uses(world, iri)}
    unmet = unmet_properties(defs, world)
    # a node the definitions name and do not hold is said once, by _unheld, beside a world;
    # a property a shape requires and the world states nowhere, once, as the error it is
    dropped = {
        id(p) for iri in used | defs.unheld.keys() | {*unmet} for p in defs.undeclared.get(iri, ())
    }
    # a step that requires what only its tool writes is re-run for nodes the world gave it
    held = set(defs.own_writes) - set(unstated(world, defs.own_writes))
    dropped |= {id(p) for prop in held for p in defs.own_writes[prop]}
    # a property only entailment would give, read where the world states it after all
    stated = set(defs.derived_reads) - set(unstated(world, defs.derived_reads))
    dropped |= {id(p) for prop in stated for p in defs.derived_reads[prop]}
    kept = [p for p in defs.warnings if id(p) not in dropped]
    # a guard on what only the world states is a condition of the domain: no rerun guard
    kept += [p for prop in held for p in defs.stated_reruns.get(prop, ())]
    unwritten = [p for prop in unstated(world, defs.unwritten) for p in defs.unwritten[prop]]
    return kept + _unheld(defs, world) + unwritten + unmeetable_errors(defs, unmet)


def run_warnings(defs: Definitions, world: World | None) -> list[Problem]:
    """What ``validate --world`` warns of, for ``run`` to say before it runs; raises
    :class:`AuthoringError` when ``validate --world`` would refuse the definitions beside
    ``world`` (a property a shape requires that no tool writes and the world does not hold:
    every result the gate judges by it is rejected after its tool has acted), so no tool is
    called. ``world`` None: the world was read from the definitions' own files (no
    ``--world``), which the load has already weighed, as ``validate`` of those files does:
    held to a world made of them, every term the definitions name is "used by the world",
    their own typos included, so a run said none of the warnings ``validate`` gave (an
    argument typed ``:Nurs``) — and a property the load found no file to use is not held."""
    if world is None:
        unmet = {id(w) for pairs in defs.unmeetable.values() for w, _ in pairs}
        loaded = [p for p in defs.warnings if id(p) not in unmet]
        loaded += unmeetable_errors(defs, list(defs.unmeetable))
    else:
        loaded = beside_world(defs, world)
    refused = [p for p in loaded if p.severity == "error"]
    if refused:
        raise AuthoringError(refused)
    return [*loaded, *command_problems(defs), *sometimes_unbound(defs)]


def _unheld(defs: Definitions, world: World) -> list[Problem]:
    """The warnings about nodes the definitions name and the world does not hold either
    (:attr:`Definitions.unheld`), each with the node the world holds under that name in
    another case, when there is one (``:urgent`` for ``:Urgent``): a few look-ups per node
    missing, usually none."""
    found: list[Problem] = []
    for iri, problems in sorted(defs.unheld.items(), key=lambda kv: str(kv[0])):
        if _world_uses(world, iri):
            continue
        near = next((c for c in _other_cases(iri) if _world_uses(world, c)), None)
        for p in problems:
            if near is not None:
                hint = f"did you mean {defs.name(near)}?"
            else:  # the definitions' own near name (:major for :majr), when they have one
                hint = p.hint or (
                    "check the spelling against the world's data, or load the data that holds it"
                )
            found.append(replace(p, hint=hint))
    return found


def _other_cases(iri: URIRef) -> list[URIRef]:
    """The spellings of ``iri`` in another case a world most likely holds instead, in the
    order they are tried: its local name in lower case, with its first letter's case
    turned, capitalised, in upper case; then the whole IRI in lower case.

    Why a few candidates, each a look-up with the node bound, and not every node of the
    world compared in lower case: no index answers "equal but for case", so that query read
    every quad twice (7 s at a million triples, for each node missing). A service validates
    its definitions against a world of millions of triples before it starts."""
    text = str(iri)
    cut = max(text.rfind("#"), text.rfind("/"), text.rfind(":")) + 1
    head, local = text[:cut], text[cut:]
    spellings = [
        head + local.lower(),
        head + local[:1].swapcase() + local[1:],
        head + local[:1].upper() + local[1:].lower(),
        head + local.upper(),
        text.lower(),
    ]
    return [URIRef(c) for c in dict.fromkeys(spellings) if c != text]


def _world_uses(world: World, iri: URIRef) -> bool:
    """Whether any statement of the world has ``iri`` as its subject, predicate or object."""
    return any(states(world.store, iri, place) for place in ("subject", "predicate", "object"))
