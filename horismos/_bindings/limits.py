"""One cap on every binding's result: ``horis:maxResultBytes``, 1 MiB unless the tool says.

A tool that answers 60 MB would otherwise be parsed, judged, written to the world and traced:
minutes of work and a trace of hundreds of megabytes for a value nobody declared room for.
The cap is the size of the result's JSON form, the same measure for a Python return value, an
HTTP body and an MCP answer. It is measured as the value arrives (an HTTP body as it is read,
stopping at the cap; a Python value or an MCP result walked once, stopping as soon as the
count passes the cap) and never by serialising the value. Past it, the call raises
:class:`~horismos.ResultTooLarge`: nothing of the result lands, and the trace records the
error, not the value.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from .._errors import ResultTooLarge
from .._model import Tool

if TYPE_CHECKING:  # httpx is imported where a request is made (~50 ms a command)
    import httpx

__all__ = [
    "DEFAULT_MAX_RESULT_BYTES",
    "body_within",
    "body_within_async",
    "check_result",
    "json_size",
    "too_large",
]

DEFAULT_MAX_RESULT_BYTES = 1 << 20
"""1 MiB: the cap of a tool that declares no ``horis:maxResultBytes``."""


def json_size(value: Any, limit: int) -> int:
    """About the length of ``value`` as JSON (UTF-8 text, no spaces); counting stops once it
    passes ``limit``, so the answer is then only known to be larger."""
    size = 0
    stack = [value]
    while stack and size <= limit:
        v = stack.pop()
        kind = type(v)  # the exact JSON types first: no ABC check for what most results hold
        if kind is dict:
            size += 2 + 2 * len(v)
            for k, x in v.items():
                stack.append(x)
                stack.append(str(k))
        elif kind is int or kind is float:
            size += len(repr(v))
        elif isinstance(v, str):
            size += _text_size(v, limit - size) + 2
        elif isinstance(v, bytes | bytearray):
            size += len(v) + 2
        elif isinstance(v, bool) or v is None:
            size += 5
        elif isinstance(v, int | float):
            size += len(repr(v))
        elif isinstance(v, Mapping):
            size += 2 + 2 * len(v)  # braces, colons and commas
            for k, x in v.items():
                stack.append(x)
                stack.append(str(k))
        elif isinstance(v, list | tuple | set | frozenset):
            size += 2 + len(v)
            stack.extend(v)
        else:  # an rdflib term, a date, a Decimal: its text
            stack.append(str(v))
    return size


def _text_size(text: str, room: int) -> int:
    if len(text) > room:  # every character takes at least one byte: too large already
        return len(text)
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def too_large(tool: Tool, where: str) -> ResultTooLarge:
    """The one error for a result over the tool's cap, however its binding noticed (whole, or
    as it streamed in), so every binding words the refusal alike."""
    limit = tool.max_result_bytes
    return ResultTooLarge(
        f"{where} answered more than {limit:,} bytes, the cap of {tool.name} "
        f"(horis:maxResultBytes, default {DEFAULT_MAX_RESULT_BYTES:,}); the result is refused "
        "and nothing landed",
        limit=limit,
        tool=str(tool.iri),
    )


def check_result(tool: Tool, value: Any, where: str) -> Any:
    """``value``, or :class:`ResultTooLarge` when its JSON form is past the tool's cap."""
    if value is not None and json_size(value, tool.max_result_bytes) > tool.max_result_bytes:
        raise too_large(tool, where)
    return value


def body_within(response: httpx.Response, limit: int) -> bytes | None:
    """A streamed response's body, or None once it is past ``limit`` bytes (by its declared
    length, or as it is read: the rest is never read)."""
    if _declared_over(response, limit):
        return None
    return _joined(response.iter_bytes(), limit)


async def body_within_async(response: httpx.Response, limit: int) -> bytes | None:
    """:func:`body_within` for an async client's streamed response."""
    if _declared_over(response, limit):
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _declared_over(response: httpx.Response, limit: int) -> bool:
    declared = response.headers.get("content-length")
    return declared is not None and declared.isdigit() and int(declared) > limit


def _joined(chunks: Iterator[bytes], limit: int) -> bytes | None:
    kept: list[bytes] = []
    size = 0
    for chunk in chunks:
        size += len(chunk)
        if size > limit:
            return None
        kept.append(chunk)
    return b"".join(kept)
