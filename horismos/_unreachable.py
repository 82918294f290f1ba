"""Why a server (a SPARQL store, a task broker) cannot be reached, said in words.

Why: the system's text, "[Errno 111] Connection refused" or redis's "Error 111 connecting to
127.0.0.1:1. Connection refused.", names neither what is wrong in a user's words nor what to
check; the error that says it may sit under a library's own (kombu's over redis's), so the
chain of causes is read to find it.
"""

from __future__ import annotations

import errno
import socket
import ssl

__all__ = ["blocked_until_answered", "tls_refused", "why_unreachable"]

_WORDS = {
    errno.ECONNREFUSED: "nothing listens at that address and port (the connection was refused)",
    errno.EHOSTUNREACH: "no route leads to its host (the host is down, or a firewall drops it)",
    errno.ENETUNREACH: "no network leads to its host",
    errno.ECONNRESET: "it dropped the connection",
}


def why_unreachable(e: BaseException) -> str:
    """What the first cause of ``e`` the words know says, else ``e``'s own text."""
    seen: BaseException | None = e
    for _ in range(8):  # a chain is a few links long; never a loop followed forever
        if seen is None:
            break
        if isinstance(seen, socket.gaierror):
            return "its host name is not known (check the spelling, and the DNS)"
        if isinstance(seen, TimeoutError):
            return "it did not answer in time"
        if isinstance(seen, OSError) and seen.errno in _WORDS:
            return _WORDS[seen.errno]
        seen = seen.__cause__ or seen.__context__
    return str(e) or type(e).__name__


def tls_refused(e: BaseException) -> bool:
    """Whether the connection ``e`` stopped was refused by TLS (a certificate not trusted, a
    handshake failed): the endpoint answered, and will answer the same later, where one
    refused or never made (down for now) may answer a later try. An HTTP binding and a FHIR
    adapter's commit tell the two apart by it."""
    seen: BaseException | None = e
    for _ in range(8):  # a chain is a few links long; never a loop followed forever
        if seen is None:
            return False
        if isinstance(seen, ssl.SSLError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def blocked_until_answered(step: str, again: str, instance: str, focus: str) -> str:
    """What a step blocked because its endpoint was not reached says of it and of what tries
    it again (``again``: "calls it again", "asks it again"): the same words whether the
    step calls a tool or asks a ranking model, each command that goes on named."""
    return (
        f"its endpoint is down for now, so {step} is blocked, not failed: once the endpoint "
        f"answers, `horismos resume … --instance {instance}` {again} (as `horismos run … "
        f"--focus {focus}` and each pass of `horismos wake` do)"
    )
