"""An HTTP status a gateway answers for a tool behind it that never answered itself.

A 502 Bad Gateway or a 504 Gateway Timeout is a proxy's or load balancer's word that the
server behind it gave no answer it could pass on: the request may have reached the tool and
acted, as a call that times out here may have. Read as the tool's own error, a charge behind a
gateway that timed out was believed not made, and each rerun charged again. So the HTTP
binding, an MCP server reached over HTTP and an adapter's commit take such a status for no
answer (:mod:`horismos._attempt`): a tool that is not idempotent is held in doubt
(:class:`~horismos.OutcomeUnknown`; an adapter's commit is *unknown*), an idempotent one is
tried again as after a lost connection.

A 503 is most often the service's own refusal, or a gateway's with no server to send to:
nothing was done. But Envoy (and so Istio and the meshes built on it) answers a 503 of its own
when the connection to the server behind it was reset or closed after the request was passed
on — a server that crashed mid-call — its body saying ``upstream connect error or
disconnect/reset before headers. reset reason: connection termination`` (or ``remote reset``,
``local reset``, ``protocol error``; ``retried and the latest reset reason: …`` after its own
retries). Read as a refusal, a charge whose server died after charging was believed not made,
and a rerun charged again. Such a 503 is no answer either (:func:`no_answer`), unless its
reason says the request never left Envoy or was never processed: the connection could not be
made (``connection failure``, ``local connection failure``, ``remote connection failure``,
``connection timeout``, and no earlier try, ``retried``), the circuit breaker was open
(``overflow``), or the server refused the HTTP/2 stream (``remote refused stream reset``).
Envoy's ``no healthy upstream`` had no server to send to, and any other 503 stays the
service's refusal. Where the body leaves it unclear, it is no answer: a call held in doubt is
reconciled by a person, one wrongly read as refused is made twice.
"""

from __future__ import annotations

from http import HTTPStatus

__all__ = ["GATEWAY_FAILED", "SAID_BYTES", "gateway_said", "no_answer"]

GATEWAY_FAILED = frozenset({HTTPStatus.BAD_GATEWAY, HTTPStatus.GATEWAY_TIMEOUT})
"""The statuses that are always a gateway's answer, whatever their body."""

SAID_BYTES = 1024
"""How much of a 503's body :func:`no_answer` reads: Envoy's own answer is one short line."""

_RESET = "reset before headers"
"""What Envoy's 503 says when the server behind it was or may have been sent the request."""

_NEVER_SENT = ("connection failure", "local connection failure", "remote connection failure",
               "connection timeout", "overflow", "local refused stream reset",
               "remote refused stream reset")  # fmt: skip
"""Envoy's reset reasons for a request it never passed on: the connection could not be made
(``connection timeout``: in time), the circuit breaker was open, or an HTTP/2 stream was
refused (``REFUSED_STREAM``: "closed prior to any processing having occurred", RFC 9113 §8.7)."""


def no_answer(status: int, body: bytes | str = b"") -> bool:
    """Whether ``status`` with ``body`` (its start is enough: :data:`SAID_BYTES`) is a
    gateway's answer that the tool's own never came, so the call may have acted: a 502, a 504,
    or Envoy's 503 for a connection reset once the request was passed on (module's doc)."""
    if status in GATEWAY_FAILED:
        return True
    if status != HTTPStatus.SERVICE_UNAVAILABLE:
        return False
    raw = body[:SAID_BYTES]
    text = (raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw).lower()
    if _RESET not in text:
        return False
    if "retried" in text:  # an earlier try may have been passed on, whatever the last one met
        return True
    _, found, reason = text.partition("reset reason:")
    return not (found and reason.strip().startswith(_NEVER_SENT))


def gateway_said(status: int) -> str:
    """A gateway's failure as an error says it: whose answer it is (what follows from it, the
    caller says: a call in doubt, a commit unknown)."""
    if status == HTTPStatus.SERVICE_UNAVAILABLE:
        return (
            f"{status} {HTTPStatus(status).phrase} (a gateway's answer that the connection to "
            "the tool was reset after the request was sent: the tool's own never came)"
        )
    return f"{status} {HTTPStatus(status).phrase} (a gateway's answer: the tool's own never came)"
