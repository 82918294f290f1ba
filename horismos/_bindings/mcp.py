"""``mcp://SERVER/TOOL``: a tool on an MCP server, narrowed to the contract the Turtle declares.

A run holds one :class:`McpSessions`: one session per server, opened on first use (at the
latest when the run starts and checks its bindings), reused by every step and instance, closed
when the run ends. The server's tool list is read once per session.

Narrowing, both ways:

- in: the MCP tool's ``input_schema`` must accept every declared argument with a compatible
  JSON type, and every argument it requires must be declared — else the tool is refused before
  any call. A call sends exactly the declared arguments: servers built with the SDK silently
  drop unknown ones, so Horismos never sends any. An argument declared ``horis:sent false``
  is never sent, so it is left out of the comparison.
- out: ``structured_content``, else — when one ``horis:asserts`` is ``horis:fromText true`` —
  the text content, whole, as that string property, else a JSON object in the text content.
  Fields the server's ``output_schema`` declares but the effect does not are dropped (and
  named in the trace);
  any other field outside the effect stays, so the SHACL gate rejects the result.

A server that does not start, a tool it lacks and a schema that refuses the contract are
:class:`~horismos.NotSent`: the call never left. It counts as sent when ``tools/call`` is
written, and as answered when a reply (a result or an MCP error) comes back. Over HTTP it is
not sent while its POST is still connecting: a POST that could not connect (the server gone
since the last call) is :class:`~horismos.Unreachable`, and the session is started again
before the next call; one whose ``horis:timeout`` ran out before it connected was never sent
and is stopped before it is; one answered 404 on a session the server no longer knows (it was
started again) was refused unread: Unreachable too, and the session is started again
(:mod:`.mcp_http`).
"""

from __future__ import annotations

import asyncio
import difflib
import json
import os
import re
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from rdflib import RDFS, XSD, URIRef

from .. import _attempt
from .._errors import (
    NotSent,
    Problem,
    ResultTooLarge,
    ToolError,
    Unreachable,
    UnreadableAnswer,
    Unstartable,
    UsageError,
)
from .._literals import INTEGER_TYPES
from .._model import Arg, Assertion, McpServer, Tool
from .._redact import redact_url
from .._unreachable import why_unreachable
from .._vocab import HORIS
from .base import Binding
from .limits import DEFAULT_MAX_RESULT_BYTES, check_result, too_large
from .reach import Hosts
from .wire import json_arguments, json_object

if TYPE_CHECKING:
    from mcp import Client

    from .._definitions import Definitions
    from .mcp_http import Leaving

__all__ = [
    "CONNECT_TIMEOUT",
    "McpBinding",
    "McpSessions",
    "Narrowed",
    "connection_problems",
    "input_problems",
    "mcp_server",
    "narrow",
    "servers_in_force",
]

CONNECT_TIMEOUT = 30.0
"""Seconds a server gets to start and answer the handshake and the tool list."""

_CONNECTION_CLOSED = -32000
_SDK_CLOSED = ("Connection closed", "SSE stream ", "server answered a request with 202")
"""How the messages begin of the errors the SDK makes up under -32000 for a call whose answer
can never come (the connection closed, an event stream that failed or ended, a 202 to a
request): said as a closed connection. A server answering with its own JSON-RPC error -32000
(the JSON-RPC range for server errors, which many use for any) says something else; its call
was held in doubt, as one whose connection closed is, and was said as "closed the
connection", naming nothing the server said."""
_PARSE_ERROR = -32700
"""What the SDK answers a request with when it cannot parse the server's answer to it (our
own requests are JSON it wrote, so no server answers them so)."""
_ENVELOPE = 64 * 1024
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_NUMBERS = {XSD.decimal, XSD.double, XSD.float}


def mcp_server(name: str, spec: McpServer | Mapping[str, Any]) -> McpServer:
    """A server passed from Python: an :class:`McpServer`, ``dict(command=, args=, env=)``
    for stdio or ``dict(url=)`` for streamable HTTP."""
    if isinstance(spec, McpServer):
        return (
            spec
            if spec.name == name
            else McpServer(spec.iri, name, spec.command, spec.args, spec.env, spec.url)
        )
    unknown = sorted(set(spec) - {"command", "args", "env", "url"})
    if unknown:
        raise UsageError(
            f"MCP server {name!r}: unknown key(s) {', '.join(unknown)}; give "
            "command=, args=, env= (stdio) or url= (streamable HTTP)"
        )
    command, url = spec.get("command"), spec.get("url")
    if (command is None) == (url is None):
        raise UsageError(
            f"MCP server {name!r}: give exactly one of command= (stdio) or url= (streamable HTTP)"
        )
    args = spec.get("args") or ()
    if isinstance(args, str):
        raise UsageError(
            f'MCP server {name!r}: args= is a list of strings, e.g. ["-m", "my_server"]'
        )
    env = dict(spec.get("env") or {})
    return McpServer(
        URIRef(f"urn:horismos:mcp-server:{name}"),
        name,
        command,
        tuple(str(a) for a in args),
        tuple((str(k), str(v)) for k, v in env.items()),
        url,
    )


class Narrowed(dict[str, Any]):
    """An MCP tool's result with the fields its output schema offers beyond the effect
    removed; ``narrowed`` names them for the trace."""

    narrowed: tuple[str, ...] = ()


class McpSession:
    """One live session, held open by a task of its own so the SDK's transport is entered
    and left in the same task, whichever steps use it in between."""

    def __init__(
        self,
        server: McpServer,
        cwd: Path | None,
        limit: int = 2 * DEFAULT_MAX_RESULT_BYTES + _ENVELOPE,
    ) -> None:
        self.server = server
        self.cwd = cwd
        self.limit = limit  # bytes of one message (see mcp_stdio and mcp_http)
        self.tools: dict[str, Any] = {}
        self.alive = False
        self._client: Client | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._failure: BaseException | None = None
        self._stderr: IO[bytes] | None = None
        self._gone = False  # its stdout closed: the server exited (see _ended)

    def describe(self) -> str:
        s = self.server
        how = redact_url(s.url) if s.url is not None else " ".join([s.command or "", *s.args])
        return f'MCP server "{s.name}" ({how})'

    @property
    def dead(self) -> bool:
        """Started, and then failed to open or lost its connection."""
        return self._ready.is_set() and not self.alive

    def start(self) -> None:
        target = self._target()
        if self.server.url is None:
            self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 -- closed by aclose()
        self._task = asyncio.create_task(self._hold(target), name=f"mcp:{self.server.name}")

    async def ready(self, timeout: float) -> None:
        """Wait for the handshake and the tool list; a waiter cancelled meanwhile (a step's
        timeout) leaves the session starting for the next one."""
        try:
            await asyncio.wait_for(self._ready.wait(), timeout)
        except TimeoutError:
            raise Unreachable(
                f"{self.describe()} did not answer the MCP handshake within "
                f"{timeout:g}s{self._stderr_tail()}"
            ) from None
        if not self.alive:
            # a stdio server is a process started here: one that exits before answering has
            # a mistyped horis:args, an ImportError or a crash to fix, not a network to wait on
            down = self.server.url is not None and _down(self._failure)
            if down:  # "ConnectError: All connection attempts failed", to check horis:command
                raise Unreachable(
                    f"{self.describe()} could not start: it cannot be reached: "
                    f"{_unreached(self._failure)} — check its horis:url, and start the server "
                    "if it is not running"
                )
            raise Unstartable(
                f"{self.describe()} could not start: {_reason(self._failure)}"
                f"{self._stderr_tail()} — check its horis:command and horis:args, "
                "or horis:url"
            )

    def _target(self) -> Any:
        from mcp import StdioServerParameters

        s = self.server
        if s.url is not None:
            return s.url, {h.name: self._from_env(h.name, h.env) for h in s.headers}
        env: dict[str, str] = {}
        for name, value in s.env:

            def expand(m: re.Match[str], n: str = name) -> str:
                return self._from_env(n, m.group(1))

            env[name] = _ENV_REF.sub(expand, value)
        command = s.command or ""
        if command in ("python", "python3"):
            command = sys.executable  # the interpreter Horismos runs in, with its packages
        return StdioServerParameters(command=command, args=list(s.args), env=env, cwd=self.cwd)

    def _from_env(self, name: str, var: str) -> str:
        value = os.environ.get(var)
        if value is None:
            raise Unstartable(
                f"{self.describe()} could not start: environment variable {var} (for its {name}) "
                f"is not set; export {var}=… before running"
            )
        return value

    async def _hold(self, target: Any) -> None:
        from mcp import Client

        try:
            if isinstance(target, tuple):  # (url, headers)
                from .mcp_http import capped_http_client

                url, headers = target
                client = Client(capped_http_client(url, self.limit, headers), cache=None)
            else:
                from .mcp_stdio import capped_stdio_client

                stdio = capped_stdio_client(target, self._stderr, self.limit, self._ended)
                client = Client(stdio, cache=None)
            async with client:
                self.tools = await _list_tools(client)
                # not alive if it exited as the list was read: never written to (_ended)
                self._client, self.alive = client, not self._gone
                self._ready.set()
                await self._stop.wait()
        except Exception as e:
            self._failure = e
        finally:
            self.alive = False
            self._ready.set()

    def _ended(self) -> None:
        """The server's stdout closed: it is gone, so the next use starts it again rather than
        write a call to it (:meth:`McpSessions.get`). Remembered: a server that answered
        the tool list and exited may close its stdout before :meth:`_hold` has read the list,
        which then marked it alive, and the next call was written to no one and held in doubt."""
        self._gone, self.alive = True, False

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        from mcp import MCPError

        from .mcp_http import (
            GATEWAY,
            LEAVING,
            NOT_CONNECTED,
            SESSION_GONE,
            UNREADABLE,
            UNSENT,
            Leaving,
        )
        from .mcp_stdio import TOO_LARGE

        assert self._client is not None
        leaving = Leaving()  # marked by an HTTP client as the call's POST goes (mcp_http)
        token = LEAVING.set(leaving)
        unsent = False  # proven never to have left: the one case not marked sent, below
        try:
            result = await self._client.call_tool(name, arguments)
        except MCPError as e:
            ours = e.data == UNSENT  # said by mcp_http, not by the server: never sent
            if ours and e.code == NOT_CONNECTED:  # its POST made no connection: nothing left
                unsent, self.alive = True, False  # gone: the next call starts the session again
                raise Unreachable(
                    f"{self.describe()} could not be reached for the call to "
                    f'"{name}": {e.message} (nothing was sent)'
                ) from None
            if ours and e.code == SESSION_GONE:  # refused unread: the server is a new process
                unsent, self.alive = True, False  # the next call opens a session it knows
                raise Unreachable(
                    f"{self.describe()} no longer knows this session (started again since "
                    f'the last call?) and refused the call to "{name}" unread (404): '
                    "nothing was done, and the session is opened again for the next call"
                ) from None
            if e.code == GATEWAY:  # no answer of the server's: sent, not answered
                raise ToolError(
                    f'{self.describe()}: the call to "{name}" was answered {e.message}'
                ) from None
            if e.code == TOO_LARGE:
                _attempt.answered()
                raise ResultTooLarge(
                    f'{self.describe()} answered "{name}" with more than {self.limit:,} bytes',
                    limit=self.limit,
                ) from None
            if e.code in (UNREADABLE, _PARSE_ERROR):  # a 2xx no client reads: it may have
                _attempt.answered()  # acted (the SDK's parse error: an event that is no JSON)
                said = (
                    e.message if e.code == UNREADABLE else f"what it could not parse: {e.message}"
                )
                raise UnreadableAnswer(
                    f'{self.describe()} answered the call to "{name}" with {said}: no '
                    "answer an MCP client reads, so what the call did is not known"
                ) from None
            if e.code == _CONNECTION_CLOSED:
                self.alive = False
                unsent = _stopped_unsent(leaving)
                if not e.message.startswith(_SDK_CLOSED):  # the server's own, same code:
                    raise ToolError(  # in doubt as a closed connection is, said as it said
                        f'{self.describe()} answered the call to "{name}" with its own error: '
                        f"{e.message} (MCP error {e.code}, the code the MCP SDK also gives a "
                        "connection that closed, so what the call did is not known)"
                    ) from None
                raise ToolError(
                    f"{self.describe()} closed the connection "
                    + ("before" if unsent else "during")
                    + f' the call to "{name}"{self._stderr_tail()}'
                    + (" (nothing was sent)" if unsent else "")
                ) from None
            _attempt.answered()
            raise ToolError(
                f'{self.describe()} refused the call to "{name}": {e.message} (MCP error {e.code})'
            ) from None
        except ToolError:
            unsent = _stopped_unsent(leaving)
            raise
        except Exception as e:
            unsent = _stopped_unsent(leaving)
            raise ToolError(
                f'{self.describe()}: the call to "{name}" failed: {_reason(e)}'
                + (" (nothing was sent)" if unsent else "")
            ) from None
        except BaseException:  # its horis:timeout (cancelled), or the run stopped
            unsent = _stopped_unsent(leaving)
            raise
        finally:
            LEAVING.reset(token)
            if not unsent:  # written, or perhaps: from here on the tool may act
                _attempt.sent()
        _attempt.answered()
        return result

    def _stderr_tail(self, limit: int = 800) -> str:
        """The end of what the server wrote to stderr, read without moving the offset the
        server's own writes share."""
        if self._stderr is None or self._stderr.closed:
            return ""
        fd = self._stderr.fileno()
        size = os.fstat(fd).st_size
        tail = os.pread(fd, limit, max(0, size - limit)).decode("utf-8", "replace").strip()
        return f"; its stderr ends with: {tail}" if tail else ""

    async def aclose(self) -> None:
        self._stop.set()
        if self._task is not None:
            if not self._ready.is_set():  # still waiting for the handshake, which has no end
                self._task.cancel()  # of its own: the server is stopped (its shutdown shielded)
            await asyncio.gather(self._task, return_exceptions=True)
        self._client = None
        if self._stderr is not None:
            self._stderr.close()


def _stopped_unsent(leaving: Leaving) -> bool:
    """Whether a call that failed with no answer provably never left: its POST was handed to
    the HTTP client and its headers had not started out (a timeout while it connects, the
    session failing meanwhile). It is then stopped before its first byte, should it connect
    later. Otherwise (a stdio call, one whose POST was never seen) it may have been written:
    counted sent."""
    if leaving.unsent:
        leaving.abandoned = True
        return True
    return False


def servers_in_force(
    defs: Definitions, extra: Mapping[str, McpServer] | None = None
) -> dict[str, McpServer]:
    """The MCP servers a binding ``mcp://NAME/…`` reaches: those declared in Turtle, then
    those passed from Python (``Agent(mcp_servers=…)``), which win by name. Every lane asks
    this one — the sessions, and what an approval is given for (``_policy.server_of``) — so
    an approval given in one lane holds for the same server in another."""
    return {**defs.mcp_servers, **(extra or {})}


class McpSessions:
    """The MCP sessions of one run, by server name."""

    def __init__(
        self,
        servers: Mapping[str, McpServer],
        folders: Mapping[str, Path] | None = None,
        caps: Mapping[str, int] | None = None,
    ) -> None:
        self.servers = dict(servers)
        self._folders = dict(folders or {})
        self._caps = dict(caps or {})  # server -> the largest horis:maxResultBytes bound to it
        self._open: dict[str, McpSession] = {}
        self._lock: asyncio.Lock | None = None

    @classmethod
    def for_definitions(
        cls, defs: Definitions, extra: Mapping[str, McpServer] | None = None
    ) -> McpSessions:
        """Servers declared in Turtle (each started in the folder of the file declaring it),
        then those passed from Python, which win by name."""
        folders: dict[str, Path] = {}
        for name, server in defs.mcp_servers.items():
            file, _ = defs._sources.locate(server.iri)
            if file is not None:
                folders[name] = Path(file).resolve().parent
        for name in extra or {}:
            folders.pop(name, None)
        caps: dict[str, int] = {}
        for tool in defs.tools.values():
            if tool.mcp_address is not None:
                named = tool.mcp_address[0]
                caps[named] = max(caps.get(named, 0), tool.max_result_bytes)
        return cls(servers_in_force(defs, extra), folders, caps)

    async def get(self, name: str) -> McpSession:
        """The open session to ``name``; opens it (again, if it died) on first use."""
        session = self._open.get(name)
        if session is None or not session.alive:
            if self._lock is None:
                self._lock = asyncio.Lock()
            async with self._lock:
                session = self._open.get(name)
                if session is not None and session.dead:
                    del self._open[name]
                    await session.aclose()
                    session = None
                if session is None:
                    # an answer carries the result twice (structured and as text) in an envelope
                    cap = self._caps.get(name, DEFAULT_MAX_RESULT_BYTES)
                    session = McpSession(
                        self.servers[name], self._folders.get(name), 2 * cap + _ENVELOPE
                    )
                    session.start()
                    self._open[name] = session
            try:
                await session.ready(CONNECT_TIMEOUT)
            except ToolError:
                if self._open.get(name) is session:
                    del self._open[name]
                await session.aclose()
                raise
        return session

    async def aclose(self) -> None:
        sessions, self._open = list(self._open.values()), {}
        for session in sessions:
            await session.aclose()


class McpBinding(Binding):
    """One declared tool bound to one tool of one server."""

    kind = "mcp"

    def __init__(
        self, tool: Tool, server: str, name: str, sessions: McpSessions, hosts: Hosts | None = None
    ) -> None:
        self.tool = tool
        self.hosts = hosts or Hosts()
        self.server = server
        self.name = name
        self.sessions = sessions
        self._session: McpSession | None = None
        self._remote: Any = None
        self._unread = False  # check() found the effect reading a field the tool never returns

    @classmethod
    def resolve(
        cls,
        tool: Tool,
        sessions: McpSessions,
        hosts: Hosts | None = None,
    ) -> McpBinding:
        server, name = tool.mcp_address or ("", "")
        if not server or not name:
            raise ToolError(
                f'binding "{tool.binding}" of {tool.name}: write "mcp://SERVER/TOOL"',
                tool=str(tool.iri),
            )
        if server not in sessions.servers:
            known = ", ".join(sorted(sessions.servers)) or "none"
            raise ToolError(
                f'binding "{tool.binding}" of {tool.name}: no MCP server named "{server}" '
                f"is declared (declared: {known}); declare :{server} a horis:McpServer with "
                f'horis:command or horis:url, or pass mcp_servers={{"{server}": …}} to Agent',
                tool=str(tool.iri),
            )
        return cls(tool, server, name, sessions, hosts)

    opens = True

    async def check(self) -> None:
        """The session opened and the tool checked as :meth:`open` does, then the effect held
        to the server's output schema (:func:`output_problems`): a returned value read from a
        field the tool never returns refuses the run before any call, as ``validate
        --connect`` says; it called the tool for every instance (one not idempotent held in
        doubt on each) and the gate refused every answer. An optional assertion is left to
        ``validate``'s warning: its answer lands without it."""
        await self.open()
        remote = self._remote
        schema = (remote.output_schema if remote is not None else None) or {}
        offered = schema.get("properties") or {}
        unread = [
            (why, hint)
            for a, why, hint in output_problems(self.tool, self.name, offered, _iri, schema)
            if not a.optional
        ]
        if unread:
            self._unread = True
            raise NotSent(
                f"{self.tool.name} is refused before any call: "
                + "; ".join(f"{why} — {hint}" for why, hint in unread),
                tool=str(self.tool.iri),
            )

    def refusal_problems(self, defs: Definitions) -> list[Problem]:
        """The effect's assertions :meth:`check` refused, each at its ``horis:asserts``
        line and in prefixed names, as ``validate --connect`` says them: ``run`` said them at
        the effect's line, with full IRIs."""
        if not self._unread:
            return []
        remote = self._remote
        schema = (remote.output_schema if remote is not None else None) or {}
        offered = schema.get("properties") or {}
        return [
            unread_problem(defs, self.tool, a, why, hint)
            for a, why, hint in output_problems(self.tool, self.name, offered, defs.name, schema)
            if not a.optional
        ]

    async def open(self) -> None:
        """The server's session, started (again, if it died) within :data:`CONNECT_TIMEOUT`,
        and the bound tool checked against what it offers."""
        self._accept(await self._open())

    def refused_at(self) -> URIRef | None:
        """Where the contract its server refused is written: ``horis:binding`` when the
        server answered and offers no tool of this name, ``horis:takes`` when its input
        schema does not fit; None when the server did not answer."""
        session = self.sessions._open.get(self.server)
        if session is None or not session.alive:
            return None
        if self._unread:
            return HORIS.effect
        return HORIS.binding if self.name not in session.tools else HORIS.takes

    async def output_schema(self) -> Mapping[str, Any] | None:
        """The output schema the server declares for the bound tool (None: it declares
        none), once the tool has passed :meth:`check`'s checks."""
        schema: Mapping[str, Any] | None = self._accept(await self._open()).output_schema
        return schema

    async def _open(self) -> McpSession:
        url = self.sessions.servers[self.server].url
        problem = self.hosts.problem(url) if url is not None and self._session is None else None
        if problem is not None:
            raise NotSent(
                f"{self.tool.name} (mcp://{self.server}/{self.name}) is refused "
                f"before any request: {problem}",
                tool=str(self.tool.iri),
            )
        try:
            return await self.sessions.get(self.server)
        except ToolError as e:  # the server did not start or answer: nothing was sent
            # down for now (a later try may reach it), or declared so it cannot start (no such
            # program, an environment variable unset, a handshake refused): a person's to fix
            raise (type(e) if isinstance(e, (Unreachable, Unstartable)) else NotSent)(
                f"{self.tool.name} (mcp://{self.server}/{self.name}): {e}", tool=str(self.tool.iri)
            ) from None

    def _accept(self, session: McpSession) -> Any:
        """The server's tool, checked against the declared arguments once per session."""
        if session is self._session:
            return self._remote
        remote = session.tools.get(self.name)
        if remote is None:
            offered = ", ".join(sorted(session.tools)) or "none"
            near = difflib.get_close_matches(self.name, list(session.tools), n=1)
            meant = f"; did you mean mcp://{self.server}/{near[0]}?" if near else ""
            raise NotSent(
                f'{session.describe()} has no tool "{self.name}" (bound by '
                f"{self.tool.name}); it offers: {offered}{meant}",
                tool=str(self.tool.iri),
            )
        problems = input_problems(self.tool, remote.input_schema)
        if problems:
            raise NotSent(
                f"{self.tool.name} is refused before any call: the input schema of "
                f'"{self.name}" on {session.describe()} does not fit horis:takes: '
                + "; ".join(problems)
                + ". Declare the arguments the server takes, with "
                "matching types, or bind another tool",
                tool=str(self.tool.iri),
            )
        self._session, self._remote = session, remote
        return remote

    async def call(self, args: Mapping[str, Any]) -> Any:
        session = await self._open()
        remote = self._accept(session)
        where = f'"{self.name}" on {session.describe()}'
        try:
            result = await session.call(self.name, json_arguments(self.tool, args))
        except ResultTooLarge:
            raise too_large(self.tool, where) from None
        if result.is_error:
            raise ToolError(f"{where} reported an error: {_text(result)[:2000] or 'no message'}")
        data = result.structured_content
        text_key = self.tool.effect.text_key if self.tool.effect is not None else None
        if data is None:
            texts = [b.text for b in result.content if getattr(b, "type", None) == "text"]
            if not texts and not result.content:
                return None
            check_result(self.tool, texts, where)  # before any of it is parsed
            if text_key is not None and texts:  # declared: the text, whole, is one string
                return {text_key: "\n".join(texts)}
            data = next((o for o in map(json_object, texts) if o is not None), None)
            if data is None:
                raise UnreadableAnswer(
                    f"{where} returned neither structured content nor a JSON object "
                    f"in its text ({_text(result)[:200]!r}); it must answer with the "
                    "effect's fields as a JSON object, or declare horis:fromText "
                    "true on the horis:asserts (xsd:string) the text lands as"
                )
        if not isinstance(data, dict):
            raise UnreadableAnswer(
                f"{where} returned {type(data).__name__} as structured content; "
                "it must be a JSON object of the effect's fields"
            )
        check_result(self.tool, data, where)
        return narrow(self.tool, data, remote.output_schema)


async def connection_problems(defs: Definitions) -> list[Problem]:
    """Every ``mcp://`` tool checked against its live server, as ``validate --connect`` shows:
    servers that do not start, tools they lack, input schemas that refuse the contract."""
    sessions = McpSessions.for_definitions(defs)
    problems: list[Problem] = []
    started: dict[str, McpSession | None] = {}
    try:
        for tool in defs.tools.values():
            if tool.mcp_address is None:
                continue
            server, remote = tool.mcp_address
            if server not in sessions.servers or not remote:
                continue  # nothing to reach: _contract.server_problems names it at its line
            if server not in started:
                started[server] = await _start(defs, sessions, server, problems)
            session = started[server]
            if session is None:
                continue  # said once, at the server's declaration
            try:  # the checks a call makes first, then the schema of what it answers
                schema = await McpBinding.resolve(tool, sessions).output_schema()
            except ToolError as e:
                # a tool the server lacks is the binding's slip; a schema that does not fit,
                # the horis:takes's
                at = HORIS.binding if remote not in session.tools else HORIS.takes
                problems.append(
                    defs._sources.problem("error", tool.iri, str(e), at=(tool.iri, at, None))
                )
                continue
            offered = (schema or {}).get("properties") or {}
            for a, why, hint in output_problems(tool, remote, offered, defs.name, schema):
                problems.append(unread_problem(defs, tool, a, why, hint))
    finally:
        await sessions.aclose()
    return problems


def unread_problem(defs: Definitions, tool: Tool, a: Assertion, why: str, hint: str) -> Problem:
    """An assertion of ``tool``'s effect the server's output schema does not give, at its
    ``horis:asserts`` line: an error, or a warning for an optional one (its answer lands
    without it). One wording for ``validate --connect`` and ``run``."""
    node = next(
        (
            n
            for e in defs.graph.objects(tool.iri, HORIS.effect)
            for n in defs.graph.objects(e, HORIS.asserts)
            if (n, HORIS.property, a.property) in defs.graph
        ),
        None,
    )
    return defs._sources.problem(
        "warning" if a.optional else "error",
        tool.iri,
        why,
        hint,
        at=(node, HORIS.property, a.property) if node is not None else None,
    )


async def _start(
    defs: Definitions, sessions: McpSessions, server: str, problems: list[Problem]
) -> McpSession | None:
    """The session to ``server``, or None when it does not start: then one error at the
    server's own ``horis:command`` or ``horis:url``, where the fix is, naming the tools it
    leaves unreachable. It was one error per tool, each at the tool's first line."""
    try:
        return await sessions.get(server)
    except ToolError as e:
        declared = sessions.servers[server]
        users = sorted(t.name for t in defs.tools.values() if (t.mcp_address or ("",))[0] == server)
        bound = f"{', '.join(users)} {'is' if len(users) == 1 else 'are'} bound to"
        head, started, tail = str(e).partition(" could not start")
        pred = HORIS.url if declared.url is not None else HORIS.command
        problems.append(
            defs._sources.problem(
                "error",
                declared.iri,
                f"{head}, which {bound},{started}{tail}" if started else f"{e} ({bound} it)",
                at=(declared.iri, pred, None),
            )
        )
        return None


def _iri(term: Any) -> str:
    """A property as a message with no namespace bindings names it: its IRI, bracketed."""
    return f"<{term}>"


def output_problems(
    tool: Tool,
    remote: str,
    offered: Mapping[str, Any],
    name: Callable[[Any], str],
    schema: Mapping[str, Any] | None = None,
) -> list[tuple[Assertion, str, str]]:
    """The effect's returned values read from a field the server's output schema does not
    list (``offered``: its properties; nothing is judged without them): the gate then found
    no such field after the tool had acted, and refused the answer. Each with the field
    meant, when one name is close or one field is left unclaimed. A field listed with a JSON
    type no value of the assertion's ``horis:type`` comes as (``"account": integer`` for an
    ``xsd:string``) is said too: the gate refused each answer as well (``schema``, the whole
    output schema, resolves its ``$ref``s)."""
    if not offered or tool.effect is None:
        return []
    returned = [a for a in tool.effect.asserts if a.value is None and not a.from_text]
    claimed = {a.key for a in returned} | {str(a.property) for a in returned}
    free = [f for f in offered if f not in claimed]
    found = []
    for a in returned:
        field = a.key if a.key in offered else str(a.property)
        if field in offered:
            mistyped = _mistyped(
                tool, a, field, offered[field], schema or {"properties": offered}, name
            )
            if mistyped is not None:
                found.append((a, *mistyped))
            continue
        near = difflib.get_close_matches(a.key, free, n=1) or (free if len(free) == 1 else [])
        found.append(
            (
                a,
                f"{tool.name}'s effect reads {a.key!r} for {name(a.property)}, a field "
                f'"{remote}" never returns (its output schema gives: '
                + ", ".join(f'"{f}"' for f in offered)
                + "): the gate would refuse every answer, after the tool had acted",
                f'write horis:key "{near[0]}" on the assertion (the field its value comes in)'
                if near
                else "write horis:key with the field the value comes in",
            )
        )
    return found


_JSON_DATATYPE = {
    "string": "xsd:string",
    "integer": "xsd:integer",
    "number": "xsd:decimal",
    "boolean": "xsd:boolean",
}


def _lands_from(a: Assertion) -> set[str] | None:
    """The JSON types a returned value may come as and still be of ``a``'s ``horis:type``
    once the gate makes it a literal (:func:`~.._literals.typed_literal`: text takes any
    datatype but ``xsd:string``'s own, a number a numeric one, a boolean only
    ``xsd:boolean``); None where any may (no type, ``rdfs:Literal``, several values)."""
    if a.many:
        return None
    if a.is_class:
        return {"string"}  # an IRI or a CURIE
    if a.type is None or a.type == RDFS.Literal:
        return None
    if a.type == XSD.string:
        return {"string"}
    if a.type == XSD.boolean:
        return {"boolean", "string"}
    if a.type in INTEGER_TYPES or a.type in _NUMBERS:
        return {"integer", "number", "string"}
    return {"string"}


def _mistyped(
    tool: Tool,
    a: Assertion,
    field: str,
    sub: Any,
    schema: Mapping[str, Any],
    name: Callable[[Any], str],
) -> tuple[str, str] | None:
    """Why, and what to write, when the output schema gives ``field`` only JSON types no
    value of ``a``'s type comes as; None when one may."""
    wanted = _lands_from(a)
    given = _accepted(sub, schema)
    if wanted is None or not given or given & wanted or given <= {"null"}:
        return None
    kinds = "/".join(sorted(given))
    meant = next((_JSON_DATATYPE[t] for t in sorted(given) if t in _JSON_DATATYPE), None)
    what = "nodes (IRIs, answered as strings)" if a.is_class else name(a.type)
    answer = f'have the server answer "{field}" as a string'
    return (
        f'{tool.name}\'s effect lands "{field}" as {name(a.property)}, of {what}, but the '
        f'server\'s output schema gives "{field}" as JSON {kinds}, which lands as no value '
        "of it: the gate would refuse every answer, after the tool had acted",
        f"declare the assertion's horis:type {meant} (and the property's range to match), "
        f"or {answer}"
        if meant is not None and not a.is_class
        else answer,
    )


def narrow(
    tool: Tool,
    data: Mapping[str, Any],
    output_schema: Mapping[str, Any] | None,
) -> Narrowed:
    """``data`` without the fields the server's output schema declares and the effect does not.

    A field the schema does not declare is kept, so the gate rejects it as undeclared.
    """
    declared = set()
    if tool.effect is not None:
        for a in tool.effect.asserts:
            declared |= {a.key, str(a.property)}
    offered = set((output_schema or {}).get("properties") or {})
    out = Narrowed()
    dropped = []
    for key, value in data.items():
        if key not in declared and key in offered:
            dropped.append(key)
        else:
            out[key] = value
    out.narrowed = tuple(dropped)
    return out


def input_problems(tool: Tool, schema: Mapping[str, Any]) -> list[str]:
    """What keeps ``schema`` (an MCP tool's input schema) from taking the declared arguments."""
    problems: list[str] = []
    props = schema.get("properties") or {}
    extra = schema.get("additionalProperties", False)
    for arg in tool.args:
        if not arg.sent:  # never sent, so the server need not take it
            continue
        if arg.name in props:
            sub = props[arg.name]
        elif extra is not False and extra is not None:
            sub = extra
        else:
            names = ", ".join(f'"{p}"' for p in props) or "none"
            problems.append(f'it has no argument "{arg.name}" (it takes: {names})')
            continue
        wanted = _wanted(arg)
        accepted = _accepted(sub, schema)
        if wanted is not None and accepted is not None and not wanted & accepted:
            problems.append(
                f'argument "{arg.name}" would be sent as JSON '
                f"{'/'.join(sorted(wanted - {'number'} or wanted))} but the server "
                f"takes {'/'.join(sorted(accepted)) or 'nothing'}"
            )
        elif arg.is_class:
            listed = _listed(sub, schema)
            if listed and not any(isinstance(v, str) and _IRI.match(v) for v in listed):
                shown = ", ".join(json.dumps(v) for v in listed[:6])
                problems.append(
                    f'argument "{arg.name}" is a node, sent as its IRI, but the server takes '
                    f"only {shown}{', …' if len(listed) > 6 else ''}, no IRI among them: "
                    f'every call would be refused — declare "{arg.name}" a string '
                    "(horis:type xsd:string) read from a property holding one of those codes"
                )
    declared = {a.name: a for a in tool.args}
    for name in schema.get("required") or ():
        required = declared.get(name)
        if required is None:
            problems.append(f'it requires "{name}", which horis:takes does not declare')
        elif not required.sent:
            problems.append(f'it requires "{name}", which horis:takes declares horis:sent false')
        elif required.optional:
            problems.append(f'it requires "{name}", which horis:takes declares horis:optional true')
    return problems


def _wanted(arg: Arg) -> set[str] | None:
    """The JSON types a value of the argument may be sent as; None for any."""
    if arg.is_class:
        return {"string"}
    if arg.type == RDFS.Literal:
        return None
    if arg.type in INTEGER_TYPES:
        return {"integer", "number"}
    if arg.type in _NUMBERS:
        return {"number"}
    if arg.type == XSD.boolean:
        return {"boolean"}
    return {"string"}


def _accepted(schema: Any, root: Mapping[str, Any], depth: int = 0) -> set[str] | None:
    """The JSON types a (sub)schema accepts; None when it does not constrain the type."""
    if not isinstance(schema, Mapping) or depth > 20:
        return set() if schema is False else None
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part) if isinstance(target, Mapping) else None
        return _accepted(target, root, depth + 1)
    types: set[str] | None = None
    t = schema.get("type")
    if isinstance(t, str):
        types = {t}
    elif isinstance(t, list):
        types = {str(x) for x in t}
    for key in ("anyOf", "oneOf"):
        subs = schema.get(key)
        if isinstance(subs, list):
            union: set[str] | None = set()
            for sub in subs:
                a = _accepted(sub, root, depth + 1)
                union = None if a is None or union is None else union | a
            if union is not None:
                types = union if types is None else types & union
    for sub in schema.get("allOf") or ():
        a = _accepted(sub, root, depth + 1)
        if a is not None:
            types = a if types is None else types & a
    values = schema.get("enum", [schema["const"]] if "const" in schema else None)
    if types is None and isinstance(values, list):
        types = {_json_type(v) for v in values}
    return types


_IRI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S")
"""The start of an absolute IRI (``http://…``, ``urn:…``): what a node is sent as."""


def _listed(schema: Any, root: Mapping[str, Any], depth: int = 0) -> list[Any]:
    """The values a (sub)schema's ``enum`` or ``const`` allows, through ``$ref`` and the
    branches of ``anyOf``/``oneOf`` (each branch must list, else any value may come); none
    when it allows any (``Literal["a", "b"]`` in a Python server is such an enum)."""
    if not isinstance(schema, Mapping) or depth > 20:
        return []
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part) if isinstance(target, Mapping) else None
        return _listed(target, root, depth + 1)
    if "const" in schema:
        return [schema["const"]]
    values = schema.get("enum")
    if isinstance(values, list):
        return list(values)
    for key in ("anyOf", "oneOf"):
        subs = schema.get(key)
        if isinstance(subs, list) and subs:
            found: list[Any] = []
            for sub in subs:
                more = _listed(sub, root, depth + 1)
                if not more:
                    return []
                found += more
            return found
    return []


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "null" if value is None else "object"


async def _list_tools(client: Client) -> dict[str, Any]:
    tools: dict[str, Any] = {}
    cursor: str | None = None
    for _ in range(100):
        page = await client.list_tools(cursor=cursor)
        tools.update((t.name, t) for t in page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _text(result: Any) -> str:
    return " ".join(b.text for b in result.content if getattr(b, "type", None) == "text").strip()


def _down(e: BaseException | None) -> bool:
    """Whether an HTTP session failed to open as a server down for now fails: a connection
    refused or dropped, a network error, the stream closed before answering. Not one declared
    so it cannot work (a handshake refused, an HTTP error status): trying later gets the same
    answer."""
    if e is None:  # it closed before answering
        return True
    if isinstance(e, BaseExceptionGroup):
        return all(_down(x) for x in e.exceptions)
    import httpx2
    from mcp import MCPError

    if isinstance(e, MCPError):
        return e.code == _CONNECTION_CLOSED
    return isinstance(
        e, ConnectionError | TimeoutError | httpx2.NetworkError | httpx2.TimeoutException
    )


def _unreached(e: BaseException | None) -> str:
    """Why a server :func:`_down` was not reached, in words (:func:`why_unreachable`), from
    the first error inside the SDK's exception groups."""
    while isinstance(e, BaseExceptionGroup) and e.exceptions:
        e = e.exceptions[0]
    return "it closed before answering" if e is None else why_unreachable(e)


def _reason(e: BaseException | None) -> str:
    """The innermost causes of an error the SDK may wrap in exception groups."""
    if e is None:
        return "it closed before answering"
    if isinstance(e, BaseExceptionGroup):
        return "; ".join(dict.fromkeys(_reason(x) for x in e.exceptions))
    from mcp import MCPError

    if isinstance(e, MCPError):
        return "it closed the connection" if e.code == _CONNECTION_CLOSED else e.message
    if isinstance(e, FileNotFoundError):
        return f"no such program: {e.filename or e}"
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
