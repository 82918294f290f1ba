"""The HTTP clients a run asks its ranking models through: one an endpoint, kept for the run.

Why apart from :mod:`._proposal`: a client is bound to the event loop it first sends on and
holds connections open, so it lives as long as the run that made it and is closed with it
(:meth:`ModelClients.aclose`, called by the runner's ``aclose`` as an HTTP binding's client is
closed). A ProposalStep built a client for every model ask — a TLS context read from the CA
bundle, ~27 ms of CPU, and a new connection — inside the step's ``horis:timeout``: a workflow
ranking the candidates of 1,000 instances spent half a minute of CPU on TLS contexts alone,
and a short timeout could run out before the request left, said as "no connection was made"
of a healthy server. Now a run's asks of one endpoint share one client, whose kept-alive
connection the next ask reuses (a ranking is a read, safe to send on a kept connection, as an
idempotent tool's call is: :mod:`._bindings.http`), and the TLS context is built once a
process (:mod:`._tls`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._tls import verifying_context

if TYPE_CHECKING:  # imported when a model is asked, not on every command's import (~50 ms)
    import httpx

__all__ = ["ModelClients"]


class ModelClients:
    """One run's clients of its ranking models' endpoints, made at the first ask of each."""

    def __init__(self) -> None:
        self._clients: dict[str, httpx.AsyncClient] = {}

    def client(self, base: str) -> httpx.AsyncClient:
        """The client of the endpoint at ``base`` (made now if this run has not asked it yet):
        called before a step's timeout starts, so that making it is not counted in it. Each
        request gives its own timeout (steps asking one endpoint may give different ones)."""
        client = self._clients.get(base)
        if client is None:
            import httpx

            client = self._clients[base] = httpx.AsyncClient(verify=verifying_context())
        return client

    async def aclose(self) -> None:
        clients, self._clients = self._clients, {}
        for client in clients.values():
            await client.aclose()
