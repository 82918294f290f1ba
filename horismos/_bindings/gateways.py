"""An HTTP status a gateway answers for a tool behind it that never answered itself.

A 502 Bad Gateway or a 504 Gateway Timeout is a proxy's or load balancer's word that the
server behind it gave no answer it could pass on: the request may have reached the tool and
acted, as a call that times out here may have. Read as the tool's own error, a charge behind a
gateway that timed out was believed not made, and each rerun charged again. So the HTTP
binding, an MCP server reached over HTTP and an adapter's commit take such a status for no
answer (:mod:`horismos._attempt`): a tool that is not idempotent is held in doubt
(:class:`~horismos.OutcomeUnknown`; an adapter's commit is *unknown*), an idempotent one is
tried again as after a lost connection. A 500 or a 503 stays the server's own answer that it
did not do what was asked (a 503 from a gateway with no server to send to: nothing was sent).
"""

from __future__ import annotations

from http import HTTPStatus

__all__ = ["GATEWAY_FAILED", "gateway_said"]

GATEWAY_FAILED = frozenset({HTTPStatus.BAD_GATEWAY, HTTPStatus.GATEWAY_TIMEOUT})


def gateway_said(status: int) -> str:
    """A gateway's failure as an error says it: whose answer it is (what follows from it, the
    caller says: a call in doubt, a commit unknown)."""
    return f"{status} {HTTPStatus(status).phrase} (a gateway's answer: the tool's own never came)"
