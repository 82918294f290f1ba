"""The catalog served to agents over MCP: every call a guarded call, nothing the SDK decides.

Why the SDK's low-level server and not its decorator server: the decorator server builds an
input model from each function's signature and silently drops fields it does not know, so an
agent that passes ``status`` or a misspelt argument would be served as if it had not. Here the
arguments reach :func:`~horismos._call.guarded_call` exactly as they came over the wire, and
the catalog refuses an unknown field or a result field by name, checks types, preconditions,
policy and approval, runs the binding, gates the result and commits it (docs/serving.md).

What an agent sees:

- ``discover``: intent text (and optionally a focus) → the catalog's ranked discovery, each
  tool ``executable`` or ``blocked`` with ``why_selected`` / ``why_blocked``;
- one MCP tool per catalog tool the serving policy allows, its input schema the catalog's
  closed schema, its output schema the call envelope whose ``result`` is the effect's schema;
- with ``--run-workflow``, ``run_workflow`` (workflow, focus): the run's status and, for a
  wait, its brief — an agent may start a workflow, never drive its steps. Asked again for a
  focus that has an instance (an agent retrying after a timeout), it answers that instance
  as it stands and runs nothing, unless the agent passes ``again: true``.

Approval is never the model's to give: there is no argument that carries one. A call that
needs one answers ``approval_required`` with the payload's fingerprint and keeps the request
in the world; an operator records the approval with ``horismos approve … --instance
urn:horismos:served:FINGERPRINT --fingerprint FINGERPRINT``; the agent's next call with the
same payload finds it and uses it up, once the call holds its subject
(:meth:`ServedTools._take`).

A call may carry the client's idempotency key in its request's ``_meta``
(``io.horismos/idempotency-key``): a retry with it is answered what the call first made with
it answered, and calls nothing (:mod:`._idempotency`). A call is shielded from its request's
cancellation, so a client that gives up does not leave a call that reached its tool unlanded;
so is a run ``run_workflow`` began, which goes on to a stop.

Calls on one served world are serialized (one lock per server), so two clients racing for the
same precondition cannot both pass it and both commit. Each call writes its own trace
(``--trace-dir``): a trace per call, not per session.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import difflib
import errno
import functools
import itertools
import re
import socket
import sys
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast, get_args

from rdflib import XSD, Literal, URIRef
from rdflib.term import Node

from ._bindings import code_of
from ._bindings.mcp import servers_in_force
from ._bindings.wire import json_value
from ._call import CallResult, CallStatus, approval_fingerprint, guarded_call
from ._call_arguments import RESULT_FIELDS, check_arguments
from ._catalog import binding_problem, effect_schema, input_schema
from ._discovery import near_words
from ._errors import AuthoringError, InstanceFailed, RunError, ToolError, UsageError
from ._idempotency import MCP_META_KEY, check_key, key_node
from ._model import McpServer, Tool
from ._policy import (
    DEFAULT_ALLOW,
    SERVED_PREFIX,
    Pending,
    allowed,
    canonical_json,
    code_for,
    given_for,
    given_keyed,
    implementation,
    server_of,
)
from ._preconditions import why_blocked
from ._stores import Change, Conflict
from ._trace import Trace, drop_if_empty, own_file
from ._vocab import HORIS, NS, PROV
from ._world import holds_subject

if TYPE_CHECKING:
    from mcp import types as mcp_types
    from mcp.server.lowlevel import Server

    from ._agent import Agent
    from ._world import World

__all__ = ["RESERVED", "ServedTools"]

RESERVED = ("discover", "run_workflow")
"""Names of the server's own tools; a declared tool with one of them is refused at start."""
_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
_STATUSES = list(get_args(CallStatus))  # partial too: its outputSchema said no status it had
_NS = {"horis": NS, "prov": str(PROV)}


_LISTEN_FIX = {
    errno.EADDRINUSE: "give a free port",
    errno.EACCES: "give a port from 1024 up, which needs no privilege",
}
"""What to change when ``serve`` cannot listen, by why."""

_OTHER_HOST = "give an address of this machine (127.0.0.1, 0.0.0.0) or a name that resolves to one"
"""Any other refusal is the host's (not this machine's, or no such name): "give a free port"
sent a user with a mistyped --host looking for a busy port."""


def _error_json(error: RunError) -> dict[str, str]:
    """A run's error as ``run_workflow`` answers it: its kind and words, and for a failed
    instance the kind of what failed it (``cause``: ``outcome_unknown`` is a call held in
    doubt, for ``tools reconcile``; ``tool_error``, the tool raised…), the same when the
    instance is answered as it stands. Its kind alone was ``failed``, and an agent told the
    two apart only by parsing the words."""
    out = {"kind": error.kind, "message": str(error)}
    if isinstance(error, InstanceFailed):
        out["cause"] = error.cause.kind
    return out


class ServedTools:
    """The tools one server offers over one world, and how each call is answered."""

    def __init__(
        self,
        agent: Agent,
        world: World,
        *,
        allow: Iterable[str] | str = DEFAULT_ALLOW,
        trace_dir: str | Path | None = None,
        run_workflow: bool = False,
        again: bool = True,
    ) -> None:
        self.agent, self.world = agent, world
        self.run_workflow = run_workflow and bool(agent.definitions.workflows)
        self.again = again
        """Whether ``run_workflow`` takes ``"again": true`` (``serve --no-again``: never)."""
        self.allow = allowed(allow)
        self.trace_dir = Path(trace_dir) if trace_dir is not None else None
        self.lock = asyncio.Lock()
        self._calls = itertools.count(1)
        self._codes: dict[URIRef, str | None] = {}  # the code behind each tool (_code)
        self.skipped: dict[str, str] = {}
        """Declared tools not served, and why (policy, or a binding that cannot resolve)."""
        self.tools: dict[str, Tool] = {}
        for entry in agent.catalog.list():
            tool = agent.catalog.tool(URIRef(entry.iri))
            if entry.side_effect not in self.allow:
                self.skipped[entry.name] = (
                    f"side effect {entry.side_effect} is outside "
                    f"--allow {','.join(sorted(self.allow))}"
                )
            elif entry.readiness == "catalog_only":
                why = binding_problem(tool, agent.tools, agent.catalog._sessions())
                self.skipped[entry.name] = "its binding cannot be resolved in this process" + (
                    f": {why}" if why else ""
                )
            elif not _NAME.match(entry.name) or entry.name in RESERVED:
                raise UsageError(
                    f"tool {entry.name} <{entry.iri}> cannot be served under its "
                    "short name: an MCP tool name is 1-128 letters, digits, '_', "
                    f"'-' or '.', and {', '.join(RESERVED)} is the server's own; "
                    "rename the tool's IRI"
                )
            else:
                self.tools[entry.name] = tool

    # -- what the server lists ----------------------------------------------------------------

    def listing(self) -> list[mcp_types.Tool]:
        from mcp import types

        defs = self.agent.definitions
        out = [
            types.Tool(
                name="discover",
                description="Find the tools relevant to what you want to do, ranked, each "
                "executable or blocked here with why_selected and why_blocked. "
                "Discovery grants nothing: every call is checked again.",
                input_schema=_DISCOVER_INPUT,
                output_schema=_DISCOVER_OUTPUT,
            )
        ]
        if self.run_workflow:
            names = sorted(defs.name(w) for w in defs.workflows)
            out.append(
                types.Tool(
                    name="run_workflow",
                    description="Start a workflow for one focus node and run it as far as it "
                    "goes; answers its status and, when it waits, its brief. The "
                    "runtime, not the caller, decides every step. Asked again for a focus "
                    "that has an instance, it answers that instance and runs nothing (safe "
                    "to retry), "
                    + ('unless "again" is true. ' if self.again else '"again" is refused here. ')
                    + "Workflows: "
                    + ", ".join(names),
                    input_schema=_RUN_INPUT,
                    output_schema=_RUN_OUTPUT,
                )
            )
        for name, tool in sorted(self.tools.items()):
            text = [t for t in (tool.label, tool.comment) if t]
            if tool.requires_approval:
                text.append(
                    "Requires an operator's approval of the exact arguments: the "
                    "first call answers approval_required with a fingerprint."
                )
            out.append(
                types.Tool(
                    name=name,
                    title=tool.label,
                    description=" ".join(text) or name,
                    input_schema=input_schema(tool, defs),
                    output_schema=output_schema(tool, defs),
                )
            )
        return out

    # -- a call ---------------------------------------------------------------------------------

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        meta: Mapping[str, Any] | None = None,
    ) -> mcp_types.CallToolResult:
        """Answer one ``tools/call``; ``meta``: its ``params._meta``, where a client puts
        the call's idempotency key (:data:`~._idempotency.MCP_META_KEY`)."""
        import anyio
        from mcp import MCPError, types

        args: Any = {} if arguments is None else arguments
        key = (meta or {}).get(MCP_META_KEY)
        if name == "discover":
            return await self._discover(args)
        runs = name == "run_workflow" and self.run_workflow
        tool = None if runs else self.tools.get(name)
        if tool is None and not runs:
            names = ["discover", *sorted(self.tools)]
            why = self.skipped.get(name)
            # a model's near miss (ehr.asign_queue): the one it meant, as the catalog says it,
            # not left to be picked out of a list of every served tool
            close = [] if why else difflib.get_close_matches(str(name), names, n=1)
            raise MCPError(
                types.INVALID_PARAMS,
                f"no tool named {name!r} is served"
                + (f" ({why})" if why else "")
                + (f"; did you mean {close[0]}?" if close else "")
                + f"; served: {', '.join(names)}",
            )
        problem = None if key is None else check_key(key)
        if problem is not None:
            raise MCPError(types.INVALID_PARAMS, f"_meta {MCP_META_KEY}: {problem}")
        try:
            if tool is None:
                return await self._run_workflow(args)
            # a client that gives up (its timeout, a dropped connection) cancels its request:
            # still waiting its turn, it is dropped and nothing is called; once its turn has
            # come, the call lands what its tool answered all the same, or a call that acted
            # would be left in flight, and a retry with its key could not be answered
            async with self.lock:  # check, call, gate and commit as one, for every client
                with anyio.CancelScope(shield=True):
                    result, approval = await self._guarded(tool, args, key)
        except AuthoringError as e:  # the world lost what a shape requires since serve began
            return types.CallToolResult(content=[types.TextContent(text=str(e))], is_error=True)
        structured = {**result.to_json(), "result": _landed(tool, result), "approval": approval}
        return types.CallToolResult(
            content=[types.TextContent(text=_receipt(result, approval))],
            structured_content=structured,
            is_error=result.status != "completed",
        )

    async def _guarded(
        self, tool: Tool, args: Any, key: str | None = None
    ) -> tuple[CallResult, dict[str, Any] | None]:
        catalog = self.agent.catalog
        fp = None
        if tool.requires_approval and isinstance(args, Mapping):
            try:
                fp = approval_fingerprint(catalog, tool, args, self.world)
            except UsageError:
                fp = None  # the guarded call refuses the same arguments, by name
        trace = self._trace_path(tool)
        try:
            result = await guarded_call(
                catalog,
                tool,
                args,
                self.world,
                approval=None,
                allow=self.allow,
                trace=trace or Trace(kept=False),  # else no digest asked
                take_approval=None if fp is None else lambda: self._take(fp, tool, key),
                idempotency_key=key,
            )
        finally:
            drop_if_empty(trace)
        approval = None
        if fp is not None and result.error is not None and result.error.kind == "approval":
            approval = self._request(tool, args, fp)
            # the guarded call's words are for the command line (tools approve, --approval);
            # over MCP an operator approves the request kept in the world
            result._reworded(
                f"{tool.name} requires approval (horis:requiresApproval) of this exact payload "
                f"and none is recorded; {approval['how']}"
            )
        return result, approval

    def _take(self, fp: str, tool: Tool, key: str | None = None) -> str | None:
        """Find an approval of ``fp`` recorded for served calls and use it up: ``fp``, or None
        when none is left. The guarded call takes it once it holds the call's subject (on a
        shared world, its claim), so of two servers taking one approval the later reads it
        used (:func:`~._call.guarded_call`).

        Used up before the call can reach the tool, as an intent is written before a
        non-idempotent call: a crash after the tool acted must not leave the approval usable
        for a second call (a call refused after it was taken uses it up too). The mark is
        required absent as well, for a store that judges that in the commit's transaction.

        ``key``: the call's idempotency key. Taken by a call of an idempotent tool given one,
        the approval records it (``horis:usedWithKey``): should that call get no answer (its
        key left free), its retry with the key is the call the approval allowed, safe to
        make again, and uses it again instead of asking a person for another."""
        keyed = key_node(key) if key is not None and tool.idempotent else None
        if keyed is not None and self._taken_with(fp, tool, keyed):
            return fp
        given = self._recorded(fp, tool)
        if given is None:
            return None
        spent = (given[0], HORIS.usedUp, Literal(True), given[1])
        linked = [] if keyed is None else given_keyed([spent], keyed)
        try:
            self.world.commit(
                Change(
                    add=[(given[0], PROV.invalidatedAtTime, _now(), given[1]), spent, *linked],
                    absent=(spent,),
                )
            )
        except Conflict:
            return None  # another call used it first: this one has none
        return fp

    def _trace_path(self, tool: Tool) -> Path | None:
        return self._trace_path_named(tool.name)

    def _trace_path_named(self, what: str) -> Path | None:
        if self.trace_dir is None:
            return None
        self.trace_dir.mkdir(parents=True, exist_ok=True)
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
        # a file of its own: two servers writing into one folder counted their calls from
        # 1 each, and the later of two calls in one second truncated the other's trace
        return own_file(self.trace_dir, f"{stamp}-{next(self._calls):05d}-{what}")

    def _taken_with(self, fp: str, tool: Tool, key: URIRef) -> bool:
        """Whether an approval of ``fp`` for served calls, given for the tool as it is defined
        now, was taken by the call given the idempotency key whose node is ``key``."""
        rows = self.world.store.select(
            "SELECT ?a WHERE { ?a horis:instance ?i ; horis:usedWithKey ?k }",
            {"i": URIRef(SERVED_PREFIX + fp), "k": key},
            _NS,
        )
        now, code = implementation(tool, self._server(tool)), self._code(tool)
        return any(self._holds(r["a"], now, code) for r in rows)

    def _recorded(self, fp: str, tool: Tool) -> tuple[URIRef, URIRef] | None:
        """The oldest unused approval of ``fp`` for served calls (its node and graph) given
        for the tool as it is defined now (:func:`~._policy.implementation`)."""
        rows = self.world.store.select(
            """SELECT ?a ?g WHERE {
            ?a horis:instance ?i ; a horis:Approval ; horis:fingerprint ?fp ;
               prov:startedAtTime ?at .
            ?g prov:wasGeneratedBy ?a .
            FILTER NOT EXISTS { ?a prov:invalidatedAtTime ?used } } ORDER BY ?at ?a""",
            {"i": URIRef(SERVED_PREFIX + fp), "fp": Literal(fp)},
            _NS,
        )
        now, code = implementation(tool, self._server(tool)), self._code(tool)
        for r in rows:
            if self._holds(r["a"], now, code):
                return r["a"], r["g"]  # type: ignore[return-value]
        return None

    def _holds(self, approval: Node, now: str, code: str | None) -> bool:
        """Whether ``approval`` holds for the tool as defined now (``now``, its
        :func:`~._policy.implementation`) and for the code this server runs (``code``):
        one that names none holds, as it did."""
        store = self.world.store
        return given_for(store, approval) in (None, now) and code_for(store, approval) in (
            None,
            code,
        )

    def _code(self, tool: Tool) -> str | None:
        """The code behind ``tool`` here (:func:`~._bindings.code_of`), named once a server:
        what its requests name and its approvals are held to."""
        if tool.iri not in self._codes:
            self._codes[tool.iri] = code_of(tool, self.agent.tools)
        return self._codes[tool.iri]

    def _server(self, tool: Tool) -> McpServer | None:
        """The MCP server ``tool``'s binding names: part of what an approval was given for."""
        return server_of(tool, servers_in_force(self.agent.definitions, self.agent.mcp_servers))

    def _request(self, tool: Tool, args: Mapping[str, Any], fp: str) -> dict[str, Any]:
        """Keep the request in the world (once per payload and definition of the tool: an
        approval is of the tool as its request showed it) for ``horismos approve``; the typed
        answer the agent gets."""
        instance = URIRef(SERVED_PREFIX + fp)
        _, payload, _ = check_arguments(tool, self.agent.definitions, args, self.world)
        server, code = self._server(tool), self._code(tool)
        asked = self.world.store.select(
            "SELECT ?a WHERE { ?a horis:instance ?i ; horis:implementation ?impl . "
            "?g prov:wasGeneratedBy ?a "
            'FILTER (STRSTARTS(STR(?g), "urn:horismos:approval:")) }',
            {"i": instance, "impl": Literal(implementation(tool, server))},
            _NS,
        )
        # once per payload, definition and code: an approval is of the code that asked
        if not any(code_for(self.world.store, r["a"]) == code for r in asked):
            pending = Pending(tool, instance, ((payload, fp),), server=server, code=code)
            brief = (
                f"{tool.name} was called over MCP with a payload that needs approval. "
                f"Payload: {canonical_json(payload)} Fingerprint: {fp}"
            )
            graph = URIRef(f"urn:horismos:approval:{uuid.uuid4().hex}")
            self.world.commit(Change(add=pending.quads(graph, instance, _now(), brief)))
        return {
            "required": True,
            "fingerprint": fp,
            "tool": str(tool.iri),
            "payload": payload,
            "instance": str(instance),
            "how": f"an operator runs: horismos approve FILE_OR_DIR… --store STORE "
            f"--instance {instance} --fingerprint {fp}; then call again with "
            "exactly these arguments",
        }

    async def _discover(self, args: Any) -> mcp_types.CallToolResult:
        from mcp import types

        problem = _discover_problem(args)
        if problem is not None:
            return types.CallToolResult(content=[types.TextContent(text=problem)], is_error=True)
        async with self.lock:
            try:
                found = self.agent.catalog.discover(
                    args["query"],
                    self.world,
                    args.get("focus"),
                    include_blocked=bool(args.get("include_blocked", False)),
                    allow=self.allow,
                )
            except UsageError as e:
                return types.CallToolResult(content=[types.TextContent(text=str(e))], is_error=True)
        shown = [d for d in found if d.entry.name in self.tools]
        text = "\n".join(d.text(i) for i, d in enumerate(shown, 1)) or (
            f"no served tool matches {args['query']!r}"
            + near_words(self.tools.values(), str(args["query"]))
        )
        return types.CallToolResult(
            content=[types.TextContent(text=text)],
            structured_content={"tools": [d.to_json() for d in shown]},
        )

    async def _run_workflow(self, args: Any) -> mcp_types.CallToolResult:
        import anyio
        from mcp import types

        problem = _closed_problem("run_workflow", _RUN_INPUT, args)
        if problem is None and not isinstance(args.get("again", False), bool):
            problem = 'run_workflow: "again" is true or false'
        if problem is None and args.get("again") and not self.again:
            problem = (
                'run_workflow: "again": true is refused by this server (serve --no-again): '
                "a focus's workflow runs once here; ask without it to be answered the "
                "instance as it stands, and ask an operator to run it again"
            )
        if problem is not None:
            return types.CallToolResult(content=[types.TextContent(text=problem)], is_error=True)
        # a client that gives up cancels its request: still waiting its turn, nothing runs;
        # once the run has begun it goes on to a stop as a catalog call does, or a step's
        # tool that acted had its answer dropped, the instance left running at the step with
        # its intent open, and every retry was answered "running" with the call held in doubt
        async with self.lock:
            trace = self._trace_path_named("run_workflow")
            try:
                with anyio.CancelScope(shield=True):
                    run = await self.agent.arun(
                        self.world,
                        args["workflow"],
                        args["focus"],
                        allow=self.allow,
                        trace=trace or Trace(kept=False),  # no digest asked
                        again=args.get("again", False),
                    )
            except (UsageError, ToolError) as e:  # ToolError: a binding, or a proposal's
                # model, refused before the first step (a host outside --allow-host), as `run`
                # refuses it; it reached the agent as "Internal server error"
                return types.CallToolResult(content=[types.TextContent(text=str(e))], is_error=True)
            finally:
                drop_if_empty(trace)
        inst = run.instances[0]
        ran = bool(inst.steps)  # a run drives a step at least; one found is read, not driven
        # a CURIE only where it reads back as the node, the world telling ':' apart (as `run`)
        name = functools.partial(
            self.agent.definitions.name, exists=functools.partial(holds_subject, self.world)
        )
        out = {
            "status": inst.status,
            "ran": ran,
            "instance": str(inst.instance),
            "workflow": str(inst.workflow),
            "focus": str(inst.focus),
            "steps": [
                {"step": str(r.step), "tool": str(r.tool) if r.tool else None, "status": r.status}
                for r in inst.steps
            ],
            "brief": inst.brief,
            "blocked_by": inst.blocked_by,
            "error": _error_json(inst.error) if inst.error else None,
        }
        lines = [
            f"{name(inst.workflow)} for {name(inst.focus)}: {inst.status} "
            f"({len(inst.steps)} step{'' if len(inst.steps) == 1 else 's'})"
        ]
        lines += [f"  {name(r.step)}: {r.status}" for r in inst.steps]
        if not ran:
            lines.append(
                f"  not run again: instance {inst.instance} is this focus's, as it stands"
                + (f" at {name(inst.current)}" if inst.current is not None else "")
                + ('; pass "again": true to run it again' if self.again else "")
                + (
                    " (a wait is answered by an operator, not by running again)"
                    if inst.status == "waiting"
                    else ""
                )
            )
        blocked = None
        rec = next((r for r in reversed(inst.steps) if r.status == "blocked"), None)
        # which part, with its values, as `run` says; a typed refusal (the policy) is no
        # pattern and is said as itself (inst.error), as `run` says it, below
        if rec is not None and rec.blocked_by and rec.error is None:
            step = self.agent.definitions.steps.get(rec.step)
            tool = getattr(step, "tool", None)
            blocked = why_blocked(
                (getattr(step, "requires", None), getattr(tool, "requires", None)),
                rec.blocked_by,
                self.world.store.explain,
                inst.variables,
            )
        lines += [
            f"  {x}" for x in (inst.brief, blocked, str(inst.error) if inst.error else None) if x
        ]
        return types.CallToolResult(
            content=[types.TextContent(text="\n".join(lines))],
            structured_content=out,
            is_error=inst.status == "failed",
        )

    # -- the server -------------------------------------------------------------------------------

    def server(self) -> Server:
        from mcp import types
        from mcp.server.lowlevel import Server

        from . import __version__

        async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
            return types.ListToolsResult(tools=self.listing())

        async def call_tool(
            ctx: Any,
            params: types.CallToolRequestParams,
        ) -> types.CallToolResult:
            return await self.call(params.name, params.arguments, params.meta)

        return Server(
            "horismos",
            version=__version__,
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            instructions="Domain tools held to an ontology: call discover first; "
            "every call is checked (arguments, preconditions, policy, "
            "approval) and its result gated before it lands.",
        )

    async def serve_stdio(self) -> None:
        from mcp.server.stdio import stdio_server

        server = self.server()
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    async def serve_http(self, host: str, port: int) -> None:
        import uvicorn

        app = self.server().streamable_http_app(host=host)
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
        # bound here, not by uvicorn: a port in use is then an error that says so, before
        # the address is announced (uvicorn logged it and exited as if serving had ended)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as e:
            sock.close()
            raise UsageError(
                f"--host {host} --port {port}: cannot listen there ({e.strerror}); "
                + _LISTEN_FIX.get(e.errno or 0, _OTHER_HOST)
            ) from None
        print(
            f"horismos serve: MCP over streamable HTTP at http://{host}:{port}/mcp",
            file=sys.stderr,
            flush=True,
        )
        await uvicorn.Server(config).serve(sockets=[sock])


# -- schemas --------------------------------------------------------------------------------

_DISCOVER_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "what the tool should do, in words"},
        "focus": {
            "type": "string",
            "format": "iri",
            "description": "a node of the world (IRI or CURIE): bound to each argument "
            "of its class, and the preconditions checked with it",
        },
        "include_blocked": {
            "type": "boolean",
            "description": "list blocked tools too, with why_blocked",
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}
_DISCOVER_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {"tools": {"type": "array", "items": {"type": "object"}}},
    "required": ["tools"],
}


_RUN_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "workflow": {
            "type": "string",
            "format": "iri",
            "description": "the workflow to start (IRI or CURIE)",
        },
        "focus": {
            "type": "string",
            "format": "iri",
            "description": "the node of the world it runs for (IRI or CURIE)",
        },
        "again": {
            "type": "boolean",
            "description": "false (default): if this focus has an instance of the workflow, "
            "finished or not, answer it as it stands and run nothing (a request retried "
            "after a timeout runs once); true: run it again (continue its unfinished "
            "instance, or start another once it finished), its tools under the serving policy",
        },
    },
    "required": ["workflow", "focus"],
    "additionalProperties": False,
}
_RUN_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "status": {"enum": ["completed", "waiting", "blocked", "failed", "running"]},
        "ran": {
            "type": "boolean",
            "description": "false: the focus's instance was found and answered as it stands",
        },
        "instance": {"type": "string"},
        "workflow": {"type": "string"},
        "focus": {"type": "string"},
        "steps": {"type": "array"},
        "brief": {"type": ["string", "null"]},
        "blocked_by": {"type": ["string", "null"]},
        "error": {"type": ["object", "null"]},
    },
    "required": ["status", "ran", "instance", "steps"],
}


def _closed_problem(name: str, schema: Mapping[str, Any], args: Any) -> str | None:
    """Unknown, missing or non-string arguments of one of the server's own tools."""
    if not isinstance(args, Mapping):
        return f"{name} takes a JSON object"
    props = schema["properties"]
    unknown = [k for k in args if k not in props]
    if unknown:
        return (
            f"{name}: unknown argument{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(repr(k) for k in unknown)}; it takes {', '.join(props)}"
        )
    for key in schema["required"]:
        if not isinstance(args.get(key), str) or not args[key].strip():
            return f'{name}: "{key}" is required: {props[key]["description"]}'
    return None


def _discover_problem(args: Any) -> str | None:
    problem = _closed_problem("discover", _DISCOVER_INPUT, args)
    if problem is not None:
        return problem
    if "focus" in args and not isinstance(args["focus"], str):
        return 'discover: "focus" is an IRI or CURIE, a string'
    if "include_blocked" in args and not isinstance(args["include_blocked"], bool):
        return 'discover: "include_blocked" is true or false'
    return None


def output_schema(tool: Tool, defs: Any) -> dict[str, Any]:
    """The call envelope as the agent gets it: ``result`` is what landed, in the effect's own
    schema (``null`` unless completed); ``approval`` the typed approval request, if any."""
    effect = effect_schema(tool, defs)
    result: dict[str, Any] = (
        {"type": "null"} if effect is None else {"anyOf": [effect, {"type": "null"}]}
    )
    return {
        "type": "object",
        "properties": {
            "status": {"enum": _STATUSES},
            "result": result,
            "content": {"type": "array", "items": {"type": "object"}},
            "artifacts": {"type": "array", "items": {"type": "object"}},
            "effects": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}},
            "gate": {"type": ["object", "null"]},
            "error": {"type": ["object", "null"]},
            "approval": {"type": ["object", "null"]},
        },
        "required": [
            "status",
            "result",
            *(
                f
                for f in RESULT_FIELDS
                if f in ("content", "artifacts", "effects", "gate", "error")
            ),
            "approval",
        ],
        "additionalProperties": False,
    }


def _landed(tool: Tool, result: CallResult) -> dict[str, Any] | None:
    """The returned fields, read back from the effects that landed, keyed as the effect
    schema keys them: so ``result`` always fits the output schema."""
    if result.status != "completed" or tool.effect is None:
        return None
    out: dict[str, Any] = {}
    for a in tool.effect.asserts:
        if a.value is not None:
            continue
        values = [
            json_value(o if isinstance(o, URIRef) else cast(Literal, o).toPython())
            for _, p, o in result.effects
            if p == a.property
        ]
        if values:
            out[a.key] = values if a.many else values[0]
    return out


def _receipt(result: CallResult, approval: dict[str, Any] | None) -> str:
    text = result.receipt()
    if approval is not None:
        text += f"\n  approval_required: fingerprint {approval['fingerprint']}\n  {approval['how']}"
    return text


def _now() -> Literal:
    return Literal(dt.datetime.now(dt.UTC).isoformat(), datatype=XSD.dateTime)
