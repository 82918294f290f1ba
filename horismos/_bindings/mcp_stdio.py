"""The MCP SDK's stdio transport with a cap on each message the server sends.

The SDK reads a server's stdout by appending each chunk to the line so far, so one 60 MB
answer costs minutes (the copy is quadratic) and a gigabyte before a single byte reaches the
binding's own size check. This transport reads bytes, keeps a line's chunks in a list (linear),
and drops a line as soon as it passes ``limit``: the call it answers gets a JSON-RPC error
instead (:data:`TOO_LARGE`), which :class:`~horismos._bindings.mcp.McpSession` turns into
:class:`~horismos.ResultTooLarge`. Spawning and the shutdown sequence are the SDK's own
(private helpers of ``mcp.client.stdio``, so ``mcp`` is pinned to a minor release), but for
one thing: on Linux the server dies with the process that started it (``PR_SET_PDEATHSIG``,
set by a few lines of Python that then exec the server). In a session of its own, a server
outlived a ``kill -9`` of its Horismos process and finished the call it was making: the tool
acted after its step was found in doubt, when an operator who checked meanwhile saw nothing yet
and cleared it, and the next call acted a second time.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from typing import IO, Any, TextIO, cast

import anyio
import mcp_types as types
from mcp.client import stdio as sdk
from mcp.shared.message import SessionMessage

__all__ = ["TOO_LARGE", "capped_stdio_client"]

TOO_LARGE = -32099
"""The JSON-RPC error code a dropped oversized answer is delivered as."""

_ID = re.compile(rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')

_DIES_WITH_PARENT = """\
import ctypes, os, signal, sys
try:
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
except Exception:
    pass
if os.getppid() != int(sys.argv[1]):  # it died before the line above
    os.kill(os.getpid(), signal.SIGKILL)
os.execvp(sys.argv[2], sys.argv[2:])
"""
"""Run between the fork and the server, which it becomes (the same process): it has the
server killed when the thread that started it dies (the process, killed or ended)."""


async def _spawn(command: str, args: list[str], env: dict[str, str], errlog: Any, cwd: Any) -> Any:
    """The SDK's spawn, in a session of its own; on Linux, a server found on ``PATH`` is
    started through :data:`_DIES_WITH_PARENT` (one that is not is left to the SDK, which
    says so as it always did)."""
    if sys.platform.startswith("linux") and shutil.which(command, path=env.get("PATH")):
        return await anyio.open_process(
            [sys.executable, "-I", "-S", "-c", _DIES_WITH_PARENT, str(os.getpid()), command, *args],
            env=env,
            stderr=errlog,
            cwd=cwd,
            start_new_session=True,
        )
    return await sdk._create_platform_compatible_process(
        command=command, args=args, env=env, errlog=errlog, cwd=cwd
    )


@asynccontextmanager
async def capped_stdio_client(
    server: sdk.StdioServerParameters,
    errlog: IO[bytes] | Any,
    limit: int,
    ended: Callable[[], None] | None = None,
) -> AsyncGenerator[Any, None]:
    """``mcp.client.stdio.stdio_client``, with each server message capped at ``limit`` bytes.
    ``ended`` is called once the server's stdout is closed (it exited, say): the SDK's session
    notices only when a request is next written, and a call written to a server already gone
    was counted as sent, in doubt for a tool that is not idempotent."""
    command = await sdk._get_executable_command(server.command)
    process = await _spawn(
        command,
        server.args,
        sdk.get_default_environment() | (server.env or {}),
        cast(TextIO, errlog),  # any file with a fileno will do
        server.cwd,
    )
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    writer_done = anyio.Event()

    async def deliver(line: list[bytes], size: int, head: bytes) -> None:
        if size > limit:
            found = _ID.search(head)
            if found is None:
                await read_writer.send(
                    ValueError(f"the server sent a message of more than {limit:,} bytes")
                )
                return
            raw = found.group(1)
            rid: int | str = int(raw) if raw[:1] != b'"' else raw[1:-1].decode()
            await read_writer.send(
                SessionMessage(
                    types.JSONRPCError(
                        jsonrpc="2.0",
                        id=rid,
                        error=types.ErrorData(
                            code=TOO_LARGE, message=f"answer larger than {limit:,} bytes"
                        ),
                    )
                )
            )
        else:
            await read_writer.send(sdk._parse_line(b"".join(line).decode(server.encoding)))

    async def stdout_reader() -> None:
        assert process.stdout is not None
        try:
            async with read_writer:
                try:
                    line: list[bytes] = []
                    size, head = 0, b""
                    async for chunk in process.stdout:
                        start = 0
                        while True:
                            end = chunk.find(b"\n", start)
                            piece = chunk[start:] if end < 0 else chunk[start:end]
                            if len(head) < 256:
                                head += piece[:256]
                            size += len(piece)
                            if size <= limit:
                                line.append(piece)
                            else:
                                line.clear()  # past the cap: the rest is only counted
                            if end < 0:
                                break
                            await deliver(line, size, head)
                            line, size, head, start = [], 0, b"", end + 1
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return
                finally:
                    await sdk._drain_stdout(process)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError):
            pass
        finally:
            if ended is not None:
                ended()

    async def stdin_writer() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for message in write_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((data + "\n").encode(server.encoding))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_writer.aclose()
        finally:
            writer_done.set()

    async def shutdown() -> None:
        read_stream.close()
        write_stream.close()
        with anyio.move_on_after(sdk._WRITER_FLUSH_TIMEOUT):
            await writer_done.wait()
        await sdk._stop_server_process(process)
        await sdk._aclose_all(read_stream, write_stream, read_writer, write_reader)
        await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(stdout_reader)
        tg.start_soon(stdin_writer)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await shutdown()
            tg.cancel_scope.cancel()
