"""Before the first step: can every step give its tool's arguments, and every binding take them?

A run that learns at its third step that a function takes ``pid`` where the Turtle says
``patient`` has already acted twice. These checks read only the definitions and the registered
callables (nothing is imported, nothing is called): ``validate`` prints them located at the
step or the binding, and the start of every run refuses on any of them.
"""

from __future__ import annotations

import difflib
import inspect
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from rdflib import Literal, URIRef

from ._bindings import static_problem
from ._bindings.function_source import (
    FunctionNode,
    Returned,
    function_of,
    not_dicts,
    returned,
    source_signature,
)
from ._bindings.python import signature_problems
from ._bindings.python_source import allowed_binding
from ._definitions_model import Definitions, every_tool
from ._digraph import descendants
from ._errors import Problem, ToolError
from ._hazards import flow_graph
from ._model import ActionStep, ProposalStep, Step, Tool
from ._near_names import nearest_variable
from ._redact import redact_url, url_credentials
from ._returned_values import returned_value_problems
from ._sources import Where
from ._vocab import HORIS

__all__ = [
    "binding_problems",
    "command_problems",
    "credential_problems",
    "no_dict_problems",
    "returned_key_problems",
    "server_problems",
    "sometimes_unbound",
    "unbound_arguments",
]


_VARIABLE = re.compile(r"\w+")
"""What a SPARQL variable may be named (its VARNAME, near enough: no hyphen, no dot)."""


def unbound_arguments(defs: Definitions) -> list[Problem]:
    """Each required argument of a step's tool that no pattern variable or ``horis:bind``
    gives: the focus ``?this``, the ``horis:as`` variable of a ProposalStep whose choice leads
    to the step (:func:`carried_variables`), or a variable the step's own ``horis:requires``
    binds. A variable its text names only inside ``FILTER NOT EXISTS`` or ``MINUS`` binds
    nothing, so it gives nothing."""
    return [p for p in _argument_sources(defs) if p.severity == "error"]


def sometimes_unbound(defs: Definitions) -> list[Problem]:
    """Each required argument read from a variable the step's pattern binds only in some
    solutions (an ``OPTIONAL``'s, one side of a ``UNION``'s): a warning, since the step
    fails whenever that part does not match."""
    return [p for p in _argument_sources(defs) if p.severity == "warning"]


def carried_variables(
    steps: Mapping[URIRef, Step], only: Callable[[ProposalStep], bool] = lambda _: True
) -> dict[URIRef, set[str]]:
    """The ``horis:as`` variables each step can be given by the run: a ProposalStep's is set
    only when the model chooses, and the step then goes to its ``horis:next``, so it reaches
    that step and those after it (by any edge), never its ``horis:fallback`` branch or another
    workflow. Why: counted as bound everywhere, ``?option`` bound in the operator's branch, or
    in another workflow's step, validated and failed the run. ``only``: the proposals whose
    choices are counted."""
    flow = flow_graph(steps)
    carried: dict[URIRef, set[str]] = {}
    for step in steps.values():
        if isinstance(step, ProposalStep) and step.next is not None and only(step):
            for later in {step.next} | descendants(flow, step.next):
                carried.setdefault(later, set()).add(step.as_var)
    return carried


def _argument_sources(defs: Definitions) -> list[Problem]:
    """The errors of :func:`unbound_arguments` and the warnings of :func:`sometimes_unbound`,
    in the steps' order."""
    carried = carried_variables(defs.steps)
    # the choices of proposals whose candidates could not be read: their error says why, and
    # an argument meant to be given that choice (?mechanic, as "mech") is not another mistake
    unread = carried_variables(defs.steps, only=lambda p: p.query is None)
    found = []
    for step in sorted(defs.steps.values(), key=lambda s: str(s.iri)):
        if not isinstance(step, ActionStep) or step.tool is None:
            continue
        pre = step.requires
        given = {"this"} | carried.get(step.iri, set()) | (pre.binds if pre is not None else set())
        for arg in sorted(step.tool.args, key=lambda a: a.name):
            var = step.var_for(arg.name)
            if arg.optional or var in given:
                continue
            if any(nearest_variable(var, [c]) == c for c in unread.get(step.iri, ())):
                continue
            if pre is not None and var in pre.may_bind:
                found.append(
                    defs._sources.problem(
                        "warning",
                        step.iri,
                        f'argument "{arg.name}" of {defs.name(step.tool.iri)} is required, but '
                        f"?{var} is bound only when an OPTIONAL or one side of a UNION "
                        "matches: the step fails whenever it does not",
                        f"bind ?{var} outside the OPTIONAL, or declare the argument "
                        "horis:optional true",
                    )
                )
                continue
            at = None
            if var != arg.name:
                how = f"horis:bind names ?{var}, which nothing binds"
                at = next(  # at the horis:bind that names it
                    (
                        (b, HORIS.var, None)
                        for b in defs.graph.objects(step.iri, HORIS.bind)
                        if str(defs.graph.value(b, HORIS.arg)) == arg.name
                    ),
                    None,
                )
            elif pre is not None and var in pre.variables:
                how = f"?{var} appears only inside FILTER NOT EXISTS or MINUS, which bind nothing"
            else:
                how = f"no pattern variable ?{var} and no horis:bind give it"
                if pre is not None:  # at the pattern the variable is missing from
                    at = (step.iri, HORIS.requires, None)
            choosers = _choosers(defs, var)
            if choosers:  # a choice made elsewhere: say why it does not reach here
                how += (
                    f" here: ?{var} is the choice of {', '.join(choosers)}, given only to "
                    "the steps its horis:next leads to, not this one"
                )
            near = nearest_variable(var, sorted(given))
            meant = f"did you mean ?{near}? " if near else ""
            chosen = _untaken_choice(defs, step, carried.get(step.iri, set()))
            if chosen is not None and (near is None or near == chosen[0]):
                # the option a proposal chose reaches this step and no argument takes it:
                # what the argument was meant to be given, not a variable to go and bind
                choice, by = chosen
                hint = (
                    f"{meant}the option {by} chooses reaches this step as ?{choice} "
                    f'(horis:as "{choice}"), and no argument takes it: write horis:bind '
                    f'[ horis:arg "{arg.name}" ; horis:var "{choice}" ]'
                )
            else:
                # a name no SPARQL variable can have ("queue-level") is given by horis:bind only
                use = (
                    f"use ?{var} in a triple pattern of the step's horis:requires, bind "
                    if _VARIABLE.fullmatch(var)
                    else f'"{var}" is no SPARQL variable name, so no pattern can name it: bind '
                )
                hint = (
                    f'{meant}{use}the argument with horis:bind [ horis:arg "{arg.name}" ; '
                    'horis:var "…" ], or declare it horis:optional true'
                )
            found.append(
                defs._sources.problem(
                    "error",
                    step.iri,
                    f'argument "{arg.name}" of {defs.name(step.tool.iri)} is required, but {how}',
                    hint,
                    at=at,
                )
            )
    return found


def _untaken_choice(
    defs: Definitions, step: ActionStep, carried: set[str]
) -> tuple[str, str] | None:
    """The one option a proposal chose that reaches ``step`` (``carried``) and that no
    argument of its tool is given, with the proposals that choose it (``:ProposeFlight``);
    None when there is none, or several to choose from."""
    taken = step.arg_vars
    untaken = sorted(carried - taken)
    if len(untaken) != 1:
        return None
    (choice,) = untaken
    return choice, " and ".join(_choosers(defs, choice))


def _choosers(defs: Definitions, var: str) -> list[str]:
    """The proposals whose choice is ``?var`` (``horis:as``), by name."""
    return sorted(
        defs.name(p.iri)
        for p in defs.steps.values()
        if isinstance(p, ProposalStep) and p.as_var == var
    )


def binding_problems(
    defs: Definitions,
    registry: Mapping[str, Callable[..., Any]],
    tools: Iterable[Tool] | None = None,
) -> list[Problem]:
    """Each ``python:`` binding that cannot resolve to a registered or allowed callable (an
    allowed module's found and its source read, never imported: :mod:`._bindings.python_source`),
    or whose registered function's parameters do not fit the declared arguments; of ``tools``
    (one workflow's, as a run refuses them), else of every declared tool."""
    problems = []
    chosen = defs.tools.values() if tools is None else {t.iri: t for t in tools}.values()
    for tool in sorted(chosen, key=lambda t: str(t.iri)):
        if not tool.binding.startswith("python:"):
            continue
        at = (tool.iri, HORIS.binding, Literal(tool.binding))
        target = tool.binding[len("python:") :]
        why = static_problem(tool, registry)
        defined = None  # an allowed module's function: read from its source, not imported
        if why is None and target not in registry:
            missing, defined = allowed_binding(target)
            why = f'binding "{tool.binding}" of {tool.name}: {missing}' if missing else None
        found = [why] if why is not None else []
        func = registry.get(target)
        source: tuple[FunctionNode, Path, int] | None = None
        signature: Callable[..., Any] | inspect.Signature | None = None
        if func is not None:
            source, signature = function_of(func), func
        elif defined is not None:
            node, file = defined
            source, signature = (node, file, 1), source_signature(node)
        if signature is not None:
            found += [
                f'binding "{tool.binding}" of {tool.name} does not fit its horis:takes: {p}'
                for p in signature_problems(tool, signature)
            ]
        problems += [defs._sources.problem("error", tool.iri, p, at=at) for p in found]
        if source is not None and not found:
            returns = returned(*source)
            problems += (
                returned_key_problems(defs, tool, returns, at)
                or returned_value_problems(defs, tool, returns, at)
                or no_dict_problems(defs, tool, not_dicts(*source), at)
            )
    return problems


def no_dict_problems(
    defs: Definitions, tool: Tool, returns: list[tuple[str, Path, int]], at: Where
) -> list[Problem]:
    """A function every ``return`` of which is certainly no dict (:func:`not_dicts`: ``None``,
    a list, a string) where ``tool``'s effect requires a value the tool returns: every call
    acts, and the gate rejects its result, nothing of it landing — an error. One with no
    ``return`` at all is a warning: what it calls may always raise. A string is the answer of
    an effect with a ``horis:fromText`` assertion, so that is left alone."""
    effect = tool.effect
    if not returns or effect is None or effect.text_key is not None:
        return []
    missing = [a for a in effect.asserts if a.value is None and not a.optional]
    if not missing:
        return []
    said, file, line = returns[0]
    keys = ", ".join(f'"{a.key}"' for a in missing)
    # no return at all: None, unless what it calls always raises (a stand-in for a service
    # that fails), which cannot be told from its source: a warning
    implicit = said.endswith("(it has no return)")
    return [
        defs._sources.problem(
            "warning" if implicit else "error",
            tool.iri,
            f'binding "{tool.binding}" of {tool.name}: its function returns {said} '
            f"({file.name}:{line}), which the gate rejects after the call has acted, nothing "
            "of it landing: "
            + "; ".join(
                f"{defs.name(a.property)} is required by the effect and comes in the result's "
                f'key "{a.key}"'
                for a in missing
            ),
            f"return a dict with the keys the effect declares ({keys}), or declare them "
            "horis:optional true",
            at=at,
        )
    ]


def returned_key_problems(
    defs: Definitions, tool: Tool, returns: list[Returned | None], at: Where
) -> list[Problem]:
    """The dicts ``tool``'s function returns, written out in its source, that the gate
    rejects whatever their values (:mod:`._bindings.function_source`): a key the effect does
    not declare, or none for a value it requires. Every call that returns one has acted, and
    nothing of it lands. An error when every ``return`` is such a dict, else a warning."""
    effect = tool.effect
    if effect is None or effect.text_key is not None:
        return []
    returnable = [a for a in effect.asserts if a.value is None]
    rejected = []
    for r in returns:
        if r is None:
            continue
        given = [effect.assertion(k, defs.expand) for k in r.keys]
        undeclared = [k for k, a in zip(r.keys, given, strict=True) if a is None]
        missing = [a for a in returnable if not a.optional and all(g is not a for g in given)]
        if undeclared or missing:
            rejected.append((r, undeclared, missing))
    if not rejected:
        return []
    r, undeclared, missing = rejected[0]
    every = len(rejected) == len(returns)
    shown = "{" + ", ".join(f'"{k}": …' for k in r.keys) + "}"
    why = [
        f'{defs.name(a.property)} is required by the effect and no key gives it ("{a.key}")'
        for a in missing
    ] + [f'"{k}" is no key of the effect' for k in undeclared]
    if len(missing) == len(undeclared) == 1:
        fix = (
            f'write horis:key "{undeclared[0]}" on the effect\'s assertion of '
            f'{defs.name(missing[0].property)}, or return "{missing[0].key}"'
        )
    else:
        keys = ", ".join(f'"{a.key}"' for a in returnable)
        fix = (
            f"return the keys the effect declares ({keys}), or declare what it returns "
            "(horis:key, horis:optional true)"
        )
    return [
        defs._sources.problem(
            "error" if every else "warning",
            tool.iri,
            f'binding "{tool.binding}" of {tool.name}: '
            + ("its function returns " if every else "one of its function's returns is ")
            + f"{shown} ({r.where()}), which the gate rejects after the call has acted, "
            f"nothing of it landing: {'; '.join(why)}",
            fix,
            at=at,
        )
    ]


def server_problems(defs: Definitions, passed: Iterable[str] = ()) -> list[Problem]:
    """Each ``mcp://SERVER/TOOL`` binding naming no server: none declared by a
    ``horis:McpServer`` of that local name, nor in ``passed`` (those an ``Agent`` is given
    from Python, which is why loading does not refuse it). Without this the definitions
    validated and the run refused at its start, naming no file or line. No server is reached."""
    known = sorted({*defs.mcp_servers, *passed})
    problems = []
    for tool in every_tool(defs):
        if tool.mcp_address is None:
            continue
        server, remote = tool.mcp_address
        at = (tool.iri, HORIS.binding, None)
        if not server or not remote:
            problems.append(
                defs._sources.problem(
                    "error",
                    tool.iri,
                    f'binding "{tool.binding}" names no '
                    + ("MCP server" if not server else "tool of the server"),
                    'write "mcp://SERVER/TOOL": SERVER the local name of a horis:McpServer, '
                    "TOOL the name the server lists it by",
                    at=at,
                )
            )
            continue
        if server in known:
            continue
        close = difflib.get_close_matches(server, known, n=1)
        declare = (
            f':{server} a horis:McpServer ; horis:command "python" ; horis:args ( … ) . '
            f'(stdio) or :{server} a horis:McpServer ; horis:url "http://…/mcp" . '
            "(streamable HTTP)"
        )
        problems.append(
            defs._sources.problem(
                "error",
                tool.iri,
                f'binding "{tool.binding}" names MCP server "{server}", which no '
                "horis:McpServer declares (declared: "
                + (", ".join(f'"{k}"' for k in known) or "none")
                + ")",
                (
                    f'did you mean "mcp://{close[0]}/{remote}"? Or declare it: '
                    if close
                    else "declare it: "
                )
                + declare,
                at=at,
            )
        )
    return problems


def credential_problems(defs: Definitions) -> list[Problem]:
    """Each HTTP binding, MCP server or adapter (``horis:baseUrl``) URL that carries
    credentials (user info, a query value named like a secret): they would be copied into
    traces and errors."""
    hint = (
        "send it as a header read from the environment: horis:header [ horis:name "
        '"Authorization" ; horis:fromEnv "API_TOKEN" ]'
    )
    found = [
        (t.iri, HORIS.binding, t.binding, t.name)
        for t in every_tool(defs)
        if t.binding.startswith(("http://", "https://"))
    ]
    found += [
        (s.iri, HORIS.url, s.url, f'MCP server "{s.name}"')
        for s in defs.mcp_servers.values()
        if s.url is not None
    ]
    found += [  # as written: the adapter's base_url has lost its trailing "/"
        (a.iri, HORIS.baseUrl, str(written), f"adapter {a.name}")
        for a in defs.adapters.values()
        for written in defs.graph.objects(a.iri, HORIS.baseUrl)
    ]
    problems = []
    for node, pred, url, who in sorted(found, key=lambda f: str(f[0])):
        secrets = url_credentials(url)
        if secrets:
            problems.append(
                defs._sources.problem(
                    "error",
                    node,
                    f"the URL of {who} ({redact_url(url)}) carries credentials "
                    f"({', '.join(secrets)}), which would be copied into traces and errors",
                    hint
                    if pred != HORIS.baseUrl
                    else "drop them from horis:baseUrl and read the token from the environment: "
                    'horis:tokenFromEnv "EHR_TOKEN" (sent as Authorization: Bearer)',
                    at=(node, pred, Literal(url)),
                )
            )
    return problems


def command_problems(defs: Definitions) -> list[Problem]:
    """Each ``horis:CommandBinding`` a tool uses whose program is not found here, whose root
    is not a folder, or whose interpreter is given a script that is not in the working
    directory (:func:`~._bindings.command.script`): warnings, since the machine that runs it
    may differ."""
    from ._bindings.command import CommandBinding, script

    problems = []
    looked: set[URIRef] = set()  # a command several tools use is looked in once
    for tool in every_tool(defs):
        if tool.command is None:
            continue
        binding = CommandBinding(tool, tool.command)
        try:
            binding.program()
        except ToolError as e:
            problems.append(
                defs._sources.problem(
                    "warning",
                    tool.command.iri,
                    str(e),
                    "install the program, or name it by its path",
                )
            )
        if not Path(tool.command.root).is_dir():
            problems.append(
                defs._sources.problem(
                    "warning",
                    tool.command.iri,
                    f"horis:root {tool.command.root!r} of command "
                    f"{tool.command.name!r} is not a folder here (relative roots are read from the "
                    "current directory)",
                    "create it, or give an absolute path",
                )
            )
        elif tool.command.iri not in looked:
            looked.add(tool.command.iri)
            path = script(tool.command)
            if path is not None and not path.exists():
                problems.append(
                    defs._sources.problem(
                        "warning",
                        tool.command.iri,
                        f"command {tool.command.name!r} runs {tool.command.argv[0]} on "
                        f"{tool.command.argv[1]!r}, which is not in the working directory "
                        f"(horis:root, then horis:workdir): there is no "
                        f"{str(path.absolute())!r}, so every call would fail, the script "
                        "never run",
                        "put the script there, or correct its path in horis:argv (relative "
                        "to the working directory) or horis:root",
                        at=(tool.command.iri, HORIS.argv, None),
                    )
                )
    return problems
