"""The tool catalog: what tools exist, what is runnable here, and whether a call may run.

Three questions, three surfaces (docs/catalog.md):

- :meth:`Catalog.list` — the static catalog: identity, input and effect schemas, binding lane,
  side-effect class, approval, dependencies and a base readiness. It reads no world, no focus
  and no approvals, so it never says ``executable`` or ``blocked``.
- :meth:`Catalog.discover` — relevance and runnability in a context (:mod:`._discovery`).
- :meth:`Catalog.call` — a guarded invocation outside a workflow (:mod:`._call`).

This module answers the first (:class:`ToolIndex`); discovery and the call build on it, and
:class:`~horismos.Catalog` (:mod:`._surfaces`) puts the three together, so nothing here
imports what calls it. It reads the agent through :class:`ToolHost`, never ``Agent`` itself.

The inventory is the list without readiness (a property of the process it is computed in, not
of the declarations), with a content digest, for CI to hold the declared tools against.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol
from urllib.parse import urlsplit

from rdflib import RDFS, XSD, URIRef
from rdflib.term import Node

from ._bindings import McpSessions, hosts_of, resolve, static_problem
from ._definitions import Definitions
from ._errors import ToolError, UsageError
from ._fhir_client import adapter_host_problem
from ._literals import INTEGER_TYPES, NUMBER_TYPES
from ._model import Arg, Assertion, McpServer, Tool
from ._policy import DEFAULT_ALLOW, canonical_json, side_effect
from ._redact import redact_url
from ._unreadable import why_unreadable

if TYPE_CHECKING:
    from ._environment import Environment
    from ._policy import Policy
    from ._runner import Runner
    from ._stores import Change
    from ._trace import Trace
    from ._world import World

__all__ = [
    "INVENTORY_VERSION",
    "ToolEntry",
    "ToolHost",
    "ToolIndex",
    "check_inventory",
]

Lane = Literal["python", "mcp", "http", "command"]
Readiness = Literal["catalog_only", "context_loadable", "model_callable"]

INVENTORY_VERSION = 1

_FORMATS = {
    XSD.dateTime: "date-time",
    XSD.dateTimeStamp: "date-time",
    XSD.date: "date",
    XSD.time: "time",
    XSD.duration: "duration",
    XSD.dayTimeDuration: "duration",
    XSD.yearMonthDuration: "duration",
    XSD.anyURI: "uri",
}
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class ToolEntry:
    """One tool as the static catalog shows it; :meth:`to_json` has exactly the list keys."""

    name: str
    iri: str
    label: str | None
    description: str | None
    input_schema: dict[str, Any]
    effect_schema: dict[str, Any] | None
    lane: Lane
    side_effect: str
    requires_approval: bool
    dependencies: dict[str, Any]
    readiness: Readiness
    signature: str = field(default="", compare=False)
    """The arguments as an author reads them (``patient: :Patient, ref?: xsd:string``)."""

    def to_json(self, *, readiness: bool = True) -> dict[str, Any]:
        """The entry as JSON, as ``horismos tools list --format json`` prints it."""
        out: dict[str, Any] = {
            "name": self.name,
            "iri": self.iri,
            "label": self.label,
            "description": self.description,
            "input_schema": self.input_schema,
            "effect_schema": self.effect_schema,
            "lane": self.lane,
            "side_effect": self.side_effect,
            "requires_approval": self.requires_approval,
            "dependencies": self.dependencies,
        }
        if readiness:
            out["readiness"] = self.readiness
        return out

    def text(self) -> str:
        """Two or three lines for ``horismos tools list``."""
        flags = [self.lane, self.side_effect, self.readiness]
        if self.requires_approval:
            flags.append("requires approval")
        lines = [f"{self.name}  {'  '.join(flags)}"]
        if self.label or self.description:
            lines.append(f"    {self.label or self.description}")
        lines.append(f"    args: {self.signature or 'none'}")
        return "\n".join(lines)


# -- what a tool declares -----------------------------------------------------------------


def lane(tool: Tool) -> Lane:
    """How a tool is reached, read from its binding's scheme: the lane its catalog entry
    shows, so a reader knows what a call sets going before making one."""
    if tool.binding.startswith("mcp://"):
        return "mcp"
    if tool.binding.startswith(("http://", "https://")):
        return "http"
    if tool.binding.startswith("cmd:"):
        return "command"
    return "python"


def arg_schema(arg: Arg, defs: Definitions) -> dict[str, Any]:
    """The JSON Schema of one argument: class-typed ones are IRIs naming the class."""
    t = defs.name(arg.type)
    if arg.is_class:
        return {
            "type": "string",
            "format": "iri",
            "description": f"the IRI (or CURIE) of a node of class {t} <{arg.type}> in the world",
        }
    desc = f"a literal of datatype {t}"
    if arg.type == RDFS.Literal:
        return {"description": "any literal"}
    if arg.type in INTEGER_TYPES:
        return {"type": "integer", "description": desc}
    if arg.type in NUMBER_TYPES:
        return {"type": "number", "description": desc}
    if arg.type == XSD.boolean:
        return {"type": "boolean", "description": desc}
    if arg.type in _FORMATS:
        return {"type": "string", "format": _FORMATS[arg.type], "description": desc}
    return {"type": "string", "description": desc}


def input_schema(tool: Tool, defs: Definitions) -> dict[str, Any]:
    """``horis:takes`` as a closed JSON Schema object; required = the non-optional args.

    A ``horis:sent false`` argument is there too: the caller names the node (the effect's
    subject, say) even though the binding never receives it, and its schema says so.
    """
    args = ordered_args(tool)
    return {
        "type": "object",
        "properties": {a.name: _input_arg_schema(a, defs) for a in args},
        "required": [a.name for a in args if not a.optional],
        "additionalProperties": False,
    }


def _input_arg_schema(arg: Arg, defs: Definitions) -> dict[str, Any]:
    schema = arg_schema(arg, defs)
    if not arg.sent:
        schema["description"] = (
            f"{schema['description']}; read by the runtime, not sent to "
            "the tool's binding (horis:sent false)"
        )
        schema["x-horis-sent"] = False
    return schema


def ordered_args(tool: Tool) -> list[Arg]:
    """The arguments by name: a graph keeps no declaration order, and schemas must be stable."""
    return sorted(tool.args, key=lambda a: a.name)


def _assertion_schema(a: Assertion, defs: Definitions) -> dict[str, Any]:
    p = defs.name(a.property)
    assert a.type is not None
    if a.is_class:
        one: dict[str, Any] = {
            "type": "string",
            "format": "iri",
            "description": f"{p}: the IRI of a node of class {defs.name(a.type)}",
        }
    else:
        one = arg_schema(Arg(a.key, a.type, False), defs)
        one["description"] = f"{p}: {one['description']}"
    if a.many:
        one = {"type": "array", "items": one, "description": one["description"]}
    one["x-horis-property"] = str(a.property)
    return one


def effect_schema(tool: Tool, defs: Definitions) -> dict[str, Any] | None:
    """What the tool may return (a closed object) and what the runtime writes beside it."""
    if tool.effect is None:
        return None
    asserts = sorted(tool.effect.asserts, key=lambda a: (a.key, str(a.property)))
    returned = [a for a in asserts if a.value is None]
    fixed = [a for a in asserts if a.value is not None]
    return {
        "type": "object",
        "description": f"what {tool.name} may write on the node of its "
        f'"{tool.effect.subject}" argument',
        "properties": {a.key: _assertion_schema(a, defs) for a in returned},
        "required": [a.key for a in returned if not a.optional],
        "additionalProperties": False,
        "x-horis-subject": tool.effect.subject,
        "x-horis-runtime-writes": [
            {"property": str(a.property), "value": defs.name(a.value)}  # type: ignore[arg-type]
            for a in fixed
        ],
        "x-horis-shapes": sorted(str(s) for s in tool.effect.shapes),
    }


def mcp_server_name(tool: Tool) -> str | None:
    """The server an ``mcp://`` binding names, or None (for another binding, or one written
    without a server)."""
    address = tool.mcp_address
    return (address[0] or None) if address is not None else None


def env_vars(tool: Tool, servers: Mapping[str, McpServer]) -> list[str]:
    """Environment variables the tool reads: its headers', its ``horis:url`` MCP server's
    headers' and its adapter's token (left out, such a variable unset was no ``env`` refusal,
    and ``discover`` said the tool executable), and its MCP server's or its command's
    ``${VAR}``."""
    names = {h.env for h in tool.headers}
    server = servers.get(mcp_server_name(tool) or "")
    if server is not None:
        names.update(h.env for h in server.headers)
    if tool.adapter is not None and tool.adapter.token_env:  # the system of record's token
        names.add(tool.adapter.token_env)
    declared = [
        *(server.env if server is not None else ()),
        *(tool.command.env if tool.command is not None else ()),
    ]
    for _, value in declared:
        names.update(_ENV_REF.findall(value))
    return sorted(names)


def missing_env(tool: Tool, servers: Mapping[str, McpServer]) -> list[str]:
    """The environment variables the tool needs that are not set: said before a call, not as
    the call's failure."""
    return [v for v in env_vars(tool, servers) if v not in os.environ]


def dependencies(tool: Tool, servers: Mapping[str, McpServer]) -> dict[str, Any]:
    """What the tool depends on outside Horismos (its binding, server, environment and host),
    with any secret in the binding's URL redacted: the catalog entry shows it."""
    urls = (reached_url(tool, servers), tool.adapter.base_url if tool.adapter else None)
    hosts = [h for h in dict.fromkeys(urlsplit(u).hostname for u in urls if u) if h]
    return {
        "binding": redact_url(tool.binding),
        "mcp_server": mcp_server_name(tool),
        "env": env_vars(tool, servers),
        "hosts": hosts,
    }


def reached_url(tool: Tool, servers: Mapping[str, McpServer]) -> str | None:
    """The URL a call connects to: an HTTP binding's, or its MCP server's ``horis:url``."""
    if tool.binding.startswith(("http://", "https://")):
        return tool.binding
    server = servers.get(mcp_server_name(tool) or "")
    return server.url if server is not None else None


def binding_problem(
    tool: Tool,
    registry: Mapping[str, Any],
    sessions: McpSessions,
) -> str | None:
    """Why the binding cannot be resolved in this process, or None: nothing is imported and
    no network is touched. An adapter-bound tool's system of record is held to the host
    policy too, as an HTTP binding's URL is."""
    if tool.adapter is not None:
        refused = adapter_host_problem(tool.adapter, hosts_of(registry), resolve=False)
        if refused is not None:
            return refused
    if tool.binding.startswith("python:"):
        return static_problem(tool, registry)
    url = reached_url(tool, sessions.servers)
    refused = hosts_of(registry).problem(url, resolve=False) if url is not None else None
    if refused is not None:
        return refused
    try:
        resolve(tool, registry, sessions)
    except ToolError as e:
        return str(e)
    return None


def readiness(tool: Tool, unresolved: bool) -> Readiness:
    """``catalog_only``: the binding cannot be resolved here; ``context_loadable``: it can, but
    a call needs more than its arguments (an approval, or ExternalCommit allowed);
    ``model_callable``: a call with valid arguments may run under the default policy."""
    if unresolved:
        return "catalog_only"
    if tool.requires_approval or side_effect(tool) not in DEFAULT_ALLOW:
        return "context_loadable"
    return "model_callable"


# -- the catalog ----------------------------------------------------------------------------


class ToolHost(Protocol):
    """What the catalog needs of the agent whose tools it lists and calls: its definitions,
    its registry and MCP servers, how it reads types, and a runner for a guarded call. The
    :class:`~horismos.Agent` is one; the catalog never imports it."""

    @property
    def definitions(self) -> Definitions: ...
    @property
    def tools(self) -> Mapping[str, Any]: ...
    @property
    def mcp_servers(self) -> Mapping[str, McpServer]: ...
    def types_in(self, world: World) -> Callable[[Node], set[Node]] | None: ...
    def place_individuals(self, world: World) -> Change | None: ...
    def take_back_individuals(self, world: World, placed: Change | None) -> None: ...
    def _runner(
        self,
        world: World,
        trace: str | Path | Trace | None,
        env: Environment,
        types_of: Callable[[Node], set[Node]] | None = None,
        *,
        recorded: bool = True,
        policy: Policy | None = None,
    ) -> Runner: ...


class ToolIndex:
    """The static catalog over one host's tools: find a tool by name, its entry, the list and
    the inventory. :class:`~horismos.Catalog` adds discovery and the guarded call."""

    def __init__(self, agent: ToolHost) -> None:
        self.agent = agent
        self.definitions = agent.definitions

    def _sessions(self) -> McpSessions:
        """The MCP servers a call may open (declared, then passed from Python); none open."""
        return McpSessions.for_definitions(self.definitions, self.agent.mcp_servers)

    def tool(self, name: str | URIRef) -> Tool:
        """A tool by short name (``ehr.assign_queue``), CURIE or IRI."""
        tools = self.definitions.tools
        if isinstance(name, URIRef) and name in tools:
            return tools[name]
        text = str(name).strip()
        named = [t for t in tools.values() if t.name == text]
        if len(named) > 1:  # tools of two namespaces, one local name: which is meant?
            raise UsageError(
                f"{text!r} names {len(named)} tools: "
                + ", ".join(sorted(f"<{t.iri}>" for t in named))
                + "; give the tool's IRI"
            )
        if named:
            return named[0]
        try:
            iri = self.definitions.expand(text)
        except KeyError:
            iri = None
        if iri in tools:
            return tools[iri]
        names = sorted(t.name for t in tools.values())
        close = difflib.get_close_matches(text.lstrip(":"), names, n=1)
        hint = (
            f"; did you mean {close[0]}?"
            if close
            else (f" (declared: {', '.join(names)})" if names else " (no tools are declared)")
        )
        raise UsageError(f"no tool named {text!r}{hint}")

    def _entry(self, tool: Tool, sessions: McpSessions | None = None) -> ToolEntry:
        sessions = sessions or self._sessions()
        unresolved = binding_problem(tool, self.agent.tools, sessions) is not None
        defs = self.definitions
        return ToolEntry(
            name=tool.name,
            iri=str(tool.iri),
            label=tool.label,
            description=tool.comment,
            input_schema=input_schema(tool, defs),
            effect_schema=effect_schema(tool, defs),
            lane=lane(tool),
            side_effect=side_effect(tool),
            requires_approval=tool.requires_approval,
            dependencies=dependencies(tool, sessions.servers),
            readiness=readiness(tool, unresolved),
            signature=", ".join(
                f"{a.name}{'?' if a.optional else ''}: {defs.name(a.type)}"
                for a in ordered_args(tool)
            ),
        )

    def list(self) -> list[ToolEntry]:
        """Every declared tool, by short name: no world, no focus, no approvals consulted."""
        sessions = self._sessions()
        tools = sorted(self.definitions.tools.values(), key=lambda t: (t.name, str(t.iri)))
        return [self._entry(t, sessions) for t in tools]

    def inventory(self) -> dict[str, Any]:
        """The machine-readable schema inventory: ``inventory_version``, ``digest``, ``tools``."""
        return inventory_of(self.list())


# -- the inventory ----------------------------------------------------------------------------


def inventory_of(entries: Sequence[ToolEntry]) -> dict[str, Any]:
    """The inventory of ``entries`` with a digest of their content, so a consumer can tell an
    unchanged inventory from a changed one without comparing it whole."""
    tools = [e.to_json(readiness=False) for e in entries]
    digest = "sha256:" + hashlib.sha256(canonical_json(tools).encode()).hexdigest()
    return {"inventory_version": INVENTORY_VERSION, "digest": digest, "tools": tools}


def inventory_text(inventory: Mapping[str, Any]) -> str:
    """How an inventory is written to a file: indented, keys sorted, newline at the end."""
    return json.dumps(inventory, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def check_inventory(current: Mapping[str, Any], path: str | Path) -> list[str]:
    """What differs between the declared tools and the inventory file: empty when none.

    The first lines say which tools were added, removed or changed; a unified diff of the
    two JSON texts follows.
    """
    path = Path(path)
    try:
        recorded = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(
            f"--check {path}: no such file; write it with "
            f"`horismos tools inventory FILE_OR_DIR… --output {path}`"
        ) from None
    except ValueError as e:
        raise UsageError(f"--check {path}: not JSON ({e})") from None
    except OSError as e:
        what, hint = why_unreadable(e)
        raise UsageError(f"--check {path}: {what}; {hint}") from None
    if not isinstance(recorded, dict) or not isinstance(recorded.get("tools"), list):
        raise UsageError(
            f"--check {path}: not an inventory (a JSON object with "
            "inventory_version, digest and tools)"
        )
    if recorded == dict(current):
        return []
    # pydantic's models are built on import (~150 ms): only a check that differs pays it
    from ._envelopes import InventoryProblem, read_inventory

    lines: list[str] = []
    try:
        read_inventory(recorded)
    except InventoryProblem as e:  # still compared below: say where it breaks the schema too
        lines += [f"not a valid inventory: {p}" for p in e.problems]
    if recorded.get("inventory_version") != current["inventory_version"]:
        lines.append(
            f"inventory_version: {recorded.get('inventory_version')!r} in the file, "
            f"{current['inventory_version']} now"
        )
    old: dict[Any, Any] = {
        t.get("iri"): t for t in recorded.get("tools") or [] if isinstance(t, dict)
    }
    new = {t["iri"]: t for t in current["tools"]}
    for iri in sorted(set(new) - set(old)):
        lines.append(f"added: {new[iri]['name']} <{iri}>")
    for iri in sorted(set(old) - set(new)):
        lines.append(f"removed: {old[iri].get('name')} <{iri}>")
    for iri in sorted(set(old) & set(new)):
        changed = sorted(
            k for k in set(old[iri]) | set(new[iri]) if old[iri].get(k) != new[iri].get(k)
        )
        if changed:
            lines.append(f"changed: {new[iri]['name']}: {', '.join(changed)}")
    body = recorded.get("tools")
    if (
        body is not None
        and canonical_json(body) == canonical_json(current["tools"])
        and (recorded.get("digest") != current["digest"])
    ):
        lines.append(
            f"digest: {recorded.get('digest')} in the file does not match its tools "
            f"({current['digest']})"
        )
    lines.extend(
        difflib.unified_diff(
            inventory_text(recorded).splitlines(),
            inventory_text(current).splitlines(),
            fromfile=str(path),
            tofile="declared tools",
            lineterm="",
        )
    )
    return lines


def types_in(agent: ToolHost, world: World) -> Callable[[Node], set[Node]]:
    """A node's types in ``world``, read as the agent's runs read them (its entailment)."""
    return agent.types_in(world) or world.store.types
