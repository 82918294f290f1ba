"""The catalog's three surfaces over one agent's tools (docs/catalog.md).

:class:`~horismos._catalog.ToolIndex` answers the static questions (which tools, their
schemas, the inventory); this adds the two that need a world: :meth:`Catalog.discover`
(:mod:`._discovery`) and :meth:`Catalog.call` (:mod:`._call`). Kept apart so that discovery and
the guarded call build on the index without the index importing them back.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rdflib import URIRef

from . import _loop
from ._call import CallResult, approval_fingerprint, guarded_call, reconcile_call
from ._catalog import ToolIndex
from ._discovery import Discovery, discover
from ._errors import UsageError
from ._idempotency import check_key
from ._policy import DEFAULT_ALLOW, allowed
from ._renamed_tools import former_tool
from ._world import given_world

if TYPE_CHECKING:
    # named as a user imports it, the package's public face: _agent builds the catalog, and
    # this module must not import it back (tests/test_import_cycles.py)
    from horismos import Agent

    from ._intents import Intent
    from ._model import Tool
    from ._trace import Trace
    from ._world import World

__all__ = ["Catalog"]


class Catalog(ToolIndex):
    """The three surfaces over one :class:`~horismos.Agent`: ``agent.catalog``."""

    def __init__(self, agent: Agent) -> None:
        """The catalog of ``agent``'s tools (``agent.catalog`` is one): typed as the agent a
        caller holds; the index below reads it through :class:`~._catalog.ToolHost`."""
        super().__init__(agent)

    def discover(
        self,
        query: str,
        world: World | None = None,
        focus: str | URIRef | None = None,
        *,
        include_blocked: bool = False,
        approvals: Iterable[str] = (),
        allow: Iterable[str] = DEFAULT_ALLOW,
    ) -> list[Discovery]:
        """The tools relevant to ``query``, ranked, each executable or blocked here."""
        return discover(
            self,
            query,
            None if world is None else given_world(world),
            focus,
            include_blocked=include_blocked,
            approvals=approvals,
            allow=allow,
        )

    def approve(self, name: str | URIRef, args: Mapping[str, Any]) -> str:
        """The approval fingerprint of exactly this payload (SHA-256 hex); raises UsageError
        when the arguments do not fit the tool's input schema."""
        return approval_fingerprint(self, self.tool(name), args)

    def call(
        self,
        name: str | URIRef,
        args: Mapping[str, Any],
        world: World,
        *,
        approval: str | None = None,
        allow: Iterable[str] = DEFAULT_ALLOW,
        trace: str | Path | Trace | None = None,
        idempotency_key: str | None = None,
    ) -> CallResult:
        """Run one guarded invocation; the result envelope says what happened (never raises
        for a refusal; raises UsageError for an unknown tool or policy name, or a malformed
        ``idempotency_key``).

        ``idempotency_key``: your name for this one call (a UUID, say), to retry it safely
        after its answer was lost: a call with a key a call was made with calls nothing and
        answers what that call answered (``result.replayed``), or is refused when its
        arguments differ (``idempotency_key_reused``) or that call is in flight or in doubt.
        From a coroutine, ``await agent.catalog.acall(...)``: this one raises UsageError there."""
        _loop.not_in_running_loop(
            "agent.catalog.call()", "write `await agent.catalog.acall(...)` there"
        )
        return _loop.run(  # as Agent.run: an answer a Ctrl-C came too late to stop is kept
            self.acall(
                name,
                args,
                world,
                approval=approval,
                allow=allow,
                trace=trace,
                idempotency_key=idempotency_key,
            )
        )

    async def acall(
        self,
        name: str | URIRef,
        args: Mapping[str, Any],
        world: World,
        *,
        approval: str | None = None,
        allow: Iterable[str] = DEFAULT_ALLOW,
        trace: str | Path | Trace | None = None,
        idempotency_key: str | None = None,
    ) -> CallResult:
        """:meth:`call`, in a running event loop."""
        if idempotency_key is not None and (problem := check_key(idempotency_key)) is not None:
            raise UsageError(problem)
        return await guarded_call(
            self,
            self.tool(name),
            args,
            given_world(world),
            approval=approval,
            allow=allowed(allow),
            trace=trace,
            idempotency_key=idempotency_key,
        )

    def reconcile(
        self,
        name: str | URIRef,
        args: Mapping[str, Any],
        world: World,
        *,
        verdict: str | None = None,
        operator: str | None = None,
    ) -> Intent | None:
        """Clear what an earlier call of this tool on the same subject left in doubt (it was
        sent and its outcome never landed), once a person has checked whether it acted: the
        intent cleared, or None when no call there was in doubt. The world records, with the
        clearing, who did it (``operator``, else the operating system's user), when, and what
        they found (``verdict``: ``"acted"`` or ``"not-acted"``), for a later review. A
        workflow step's hold there is cleared only once its instance has let go of the call
        (the intent returned then has no start and no arguments); while the instance still
        has it open, UsageError says to continue that instance. ``name`` may be the full IRI
        a tool had before it was renamed, for a call left in doubt under it
        (:meth:`tool_in_doubt`). Raises UsageError for a tool that is idempotent, arguments
        that do not fit, a verdict not one of those two, and when called from a coroutine
        (there, ``await asyncio.to_thread(agent.catalog.reconcile, ...)``)."""
        _loop.not_in_running_loop(
            "agent.catalog.reconcile()",
            "run it in a thread from there, `await asyncio.to_thread(agent.catalog.reconcile, "
            "name, args, world)`",
        )
        world = given_world(world)
        return asyncio.run(
            reconcile_call(
                self,
                self.tool_in_doubt(name, world),
                args,
                world,
                operator=operator,
                verdict=verdict,
            )
        )

    def tool_in_doubt(self, name: str | URIRef, world: World) -> Tool:
        """The tool ``name`` names; for the full IRI of a tool these definitions no longer
        have, the tool of theirs bound as a call recorded in doubt under that IRI was, as it
        was named then (a tool renamed since), so that call can be reconciled. Raises
        UsageError when it is neither."""
        try:
            return self.tool(name)
        except UsageError as e:
            missing = e
        iri = name if isinstance(name, URIRef) else None
        if iri is None:
            try:
                iri = self.definitions.expand(name)
            except (KeyError, UsageError):
                iri = None
        found = former_tool(self.definitions.tools, world.store, iri) if iri else None
        if found is None:
            raise UsageError(
                f"{missing}. A call left in doubt under a tool these definitions no longer "
                "have is reconciled by that tool's full IRI, once a tool of these definitions "
                "has the binding that call recorded (a call left in doubt before bindings were "
                "recorded cannot be: reconcile it with the definitions it was made under)"
            ) from None
        return found
