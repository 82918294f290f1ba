"""An adapter-bound tool's step: decide, check, commit conditionally, reconcile per effect.

Why apart from the runner: a tool that writes to an external system of record keeps a
different contract from one whose effects land in the world only (docs/adapters.md). Its
binding *decides* — returns the FHIR resources to write, from the hydrated resources it is
given — and this module commits that decision:

1. the tool's ``horis:commitScope`` must be granted by its adapter, and every decided write
   must fall under the tool's commit scopes — else :class:`~horismos.ScopeRefused`, before
   anything is sent; and every decided resource, as it would land, must pass the SHACL gate's
   domain shapes — else :class:`~horismos.GateRejected`, before anything is sent (the system
   of record validates too, but a write the world's own shapes refuse never leaves);
2. each update carries the version the world's projection holds (``If-Match: W/"n"``); a
   resource that says it is at another version is a conflict seen before sending;
3. the request goes out once (never resent: a commit that was sent and got no answer is an
   *unknown* outcome), through the run's :class:`~horismos._environment.Environment`, so the
   remote answer is recorded and a replay is handed it back instead of sending;
4. the answer is read back into one receipt per effect — accepted, conflicted, failed,
   unknown — and only accepted effects land, each as the new projection of its resource with
   ``horis:AdapterProvenance``, its remote id, version and location.

The runner hands in what it owns through :class:`StepHost` (it never is imported here).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from rdflib import URIRef
from rdflib.term import Node

from ._attempt import Attempt
from ._bindings.gateways import gateway_said, no_answer
from ._bindings.reach import Hosts
from ._errors import (
    GateRejected,
    NotSent,
    OutcomeUnknown,
    PartialCommit,
    RemoteConflict,
    ResultTooLarge,
    RunError,
    ScopeRefused,
    ToolError,
    ToolTimeout,
    Unreachable,
)
from ._fhir import (
    Outcome,
    PlanError,
    Receipt,
    Request,
    Write,
    plan,
    projection_graph,
    projection_of,
    projection_quads,
    receipts,
    resource_iri,
    stale,
    timestamp,
    to_triples,
    unanswered,
)
from ._fhir_client import FhirClient
from ._gate import Verdict
from ._hydrate import replaced
from ._model import ActionStep, Adapter, Tool
from ._scopes import covers, needed_for
from ._stores import Store
from ._vocab import HORIS

__all__ = ["AdapterCommit", "CommitOutcome", "StepHost", "check_scopes", "made_from"]

Quad = tuple[Node, Node, Node, URIRef | None]  # as a Change takes them


class StepHost(Protocol):
    """What the runner lends an adapter step."""

    store: Store

    def now(self) -> dt.datetime: ...

    def judge_resource(self, subject: Node, triples: list[tuple[Node, Node, Node]]) -> Verdict: ...

    async def remote(self, send: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]: ...


@dataclass
class CommitOutcome:
    """What a step's commits came to: every receipt, the quads the accepted ones land (and
    the projections they replace), and the error the step takes, if any."""

    receipts: list[Receipt] = field(default_factory=list)
    add: list[Quad] = field(default_factory=list)
    remove: list[Quad] = field(default_factory=list)
    errors: list[RunError] = field(default_factory=list)
    unreached: list[Unreachable] = field(default_factory=list)
    """Why each commit whose system of record was down for now (its connection refused or
    never made: nothing sent) did not go out; its receipts say ``failed``."""
    unsent: int = 0
    """How many of the receipts are those commits'."""

    @property
    def only_unreached(self) -> Unreachable | None:
        """Why nothing of the step went out, when every commit's system of record was down
        (nothing sent, nothing else refused): the step may be blocked and tried again, as an
        HTTP binding's is when its endpoint is down; else None."""
        if not self.unreached or self.errors:
            return None
        if self.unsent != len(self.receipts):  # another commit was answered, or refused
            return None
        return self.unreached[0]

    @property
    def accepted(self) -> list[Receipt]:
        return [r for r in self.receipts if r.outcome == "accepted"]

    def error(self, tool: Tool, step: ActionStep) -> RunError | None:
        """The step's error: None when every effect was accepted; :class:`PartialCommit` when
        some were; else what kept the others out."""
        others = [r for r in self.receipts if r.outcome != "accepted"]
        if not others and not self.errors:
            return None
        where = {"step": str(step.iri), "tool": str(tool.iri)}
        split = [(r.ref, r.outcome) for r in others] + [("(decision)", e.kind) for e in self.errors]
        if self.accepted:
            named = "; ".join(f"{ref} {outcome}" for ref, outcome in split)
            return PartialCommit(
                f"{tool.name}: {len(self.accepted)} effect(s) accepted and landed "
                f"({', '.join(r.ref for r in self.accepted)}), the others did not: {named}; "
                "nothing is claimed atomic across systems (horis:onPartial, else "
                "horis:onError, is where the workflow goes on from)",
                accepted=[r.ref for r in self.accepted],
                others=split,
                **where,
            )
        conflicted = [r for r in others if r.outcome == "conflicted"]
        if conflicted:
            return RemoteConflict(
                f"{tool.name}: "
                + "; ".join(_said(r) for r in conflicted)
                + " — the system of record changed since the world's projection was hydrated; "
                "nothing landed: hydrate again, then decide again",
                resources=[r.ref for r in conflicted],
                **where,
            )
        unknown = [r for r in others if r.outcome == "unknown"]
        if unknown:
            seen = ToolTimeout(unknown[0].message or "no answer", **where)
            return OutcomeUnknown(
                f"{tool.name}: the commit of {', '.join(r.ref for r in unknown)} was sent and "
                "no answer came back, so it may have acted; it is not sent again: read the "
                "resource from the system of record (hydrate it) to settle what happened",
                cause=seen,
                running=None,
                **where,
            )
        if self.errors:
            return self.errors[0]
        return ToolError(f"{tool.name}: " + "; ".join(_said(r) for r in others), **where)


def _said(r: Receipt) -> str:
    status = f" {r.status}" if r.status else ""
    return f"{r.method} {r.ref} was {r.outcome}{status}" + (f": {r.message}" if r.message else "")


def check_scopes(tool: Tool, step: ActionStep) -> None:
    """The tool's commit scopes against what its adapter grants: refused before any call."""
    adapter = tool.adapter
    assert adapter is not None
    where = {"step": str(step.iri), "tool": str(tool.iri)}
    if not tool.commit_scopes:
        raise ScopeRefused(
            f"{tool.name} commits to {adapter.name} but declares no "
            "horis:commitScope; declare the scope it commits under, e.g. "
            'horis:commitScope "patient/MedicationDispense.write"',
            missing="(none declared)",
            granted=adapter.scopes,
            **where,
        )
    for scope in tool.commit_scopes:
        if not any(covers(g, scope) for g in adapter.scopes):
            raise ScopeRefused(
                f"{tool.name} commits under scope {scope}, which adapter {adapter.name} is not "
                f"granted (granted: {', '.join(adapter.scopes) or 'none'}); nothing was sent. "
                f'Grant it (horis:grantedScope "{scope}") or narrow the tool',
                missing=scope,
                granted=adapter.scopes,
                **where,
            )


class AdapterCommit:
    """One adapter-bound step's commits, one per call of its binding."""

    def __init__(
        self, host: StepHost, tool: Tool, step: ActionStep, hosts: Hosts, activity: URIRef
    ) -> None:
        assert tool.adapter is not None
        self.host = host
        self.store = host.store
        self.tool = tool
        self.step = step
        self.adapter: Adapter = tool.adapter
        self.client = FhirClient(self.adapter, hosts, tool.timeout, tool.max_result_bytes)
        self.activity = activity
        self.outcome = CommitOutcome()

    # -- what the decision is given ---------------------------------------------------------

    def arguments(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """The binding's arguments: a hydrated resource as the JSON its system gave."""
        out = dict(args)
        for name, value in args.items():
            if isinstance(value, URIRef):
                found = next(self.store.objects(projection_graph(value), HORIS.sourceJson), None)
                if found is not None:
                    out[name] = json.loads(str(found))
        return out

    def _projected(self, ref: str) -> str | None:
        kind, rid = ref.split("/", 1)
        node = resource_iri(self.adapter.base_url, kind, rid)
        found = next(self.store.objects(projection_graph(node), HORIS.sourceVersion), None)
        return None if found is None else str(found)

    # -- one decision, committed ------------------------------------------------------------

    async def commit(self, decided: Any, call: int) -> None:
        """Plan, check and send one call's decision; its receipts are added to ``outcome``."""
        where = {"step": str(self.step.iri), "tool": str(self.tool.iri)}
        try:
            request = plan(decided, self._projected)
        except PlanError as e:
            self.outcome.errors.append(ToolError(f"{self.tool.name}: {e}", **where))
            return
        if request is None:
            return
        for w in request.writes:
            letter = "u" if w.method == "PUT" else "c"
            need = needed_for(self.tool.commit_scopes, w.kind, letter)
            if not any(covers(s, need) for s in self.tool.commit_scopes):
                self.outcome.errors.append(
                    ScopeRefused(
                        f"{self.tool.name} decided to {'update' if letter == 'u' else 'create'} "
                        f"{w.ref}, which needs scope {need}; its horis:commitScope "
                        f"({', '.join(self.tool.commit_scopes)}) does not cover it, so nothing of "
                        "this call was sent",
                        missing=need,
                        granted=self.tool.commit_scopes,
                        **where,
                    )
                )
                return
        for w in request.writes:
            rejected = self._judged(w, where)
            if rejected is not None:
                self.outcome.errors.append(rejected)
                return
        mismatched = dict(stale(request))
        if mismatched:  # seen before sending: nothing of this request goes out
            got = [
                Receipt(
                    w.ref,
                    w.method,
                    "conflicted",
                    None,
                    w.expected,
                    message=(
                        f"the decision is at version {mismatched[w]}, the projection at "
                        f"{w.expected}; not sent"
                        if w in mismatched
                        else "not sent: another write of the same request conflicted"
                    ),
                )
                for w in request.writes
            ]
        else:
            got = await self._send(request)
        base = self.adapter.base_url
        for r in got:
            r.call = call
            if r.location and "://" not in r.location:
                r.location = f"{base}/{r.location.lstrip('/')}"
            self.outcome.receipts.append(r)
        self._land([r for r in got if r.outcome == "accepted"])

    def _judged(self, w: Write, where: dict[str, str]) -> GateRejected | None:
        """The decided resource as its projection would be, against the domain shapes that
        target it; a projection is replaced whole, so the old one is not in its after-view."""
        res = w.resource if w.resource.get("id") else {**w.resource, "id": "new"}
        base = self.adapter.base_url
        subject = resource_iri(base, w.kind, str(res["id"]))
        verdict = self.host.judge_resource(subject, to_triples(res, base))
        if verdict.conforms:
            return None
        return GateRejected(
            f"{self.tool.name} decided {w.ref}, which breaks the domain shapes: "
            + "; ".join(str(m) for m in verdict.messages)
            + "; nothing of this call was sent",
            messages=verdict.messages,
            **where,
        )

    async def _send(self, request: Request) -> list[Receipt]:
        method, url, body, headers = request.http(self.adapter.base_url)
        loop = asyncio.get_running_loop()

        async def send() -> dict[str, Any]:
            # the client is made before the deadline starts: the first commit of a process
            # loads it (FhirClient.opened), which the deadline counted as the request's time;
            # a short horis:timeout ran out before the request left, said as no connection
            # made to a healthy server. (Only a live run sends: a replay makes no client.)
            client = self.client.opened()
            deadline.reschedule(loop.time() + self.tool.timeout * 2)
            return await self.client.send(method, url, body, headers, client)

        with Attempt() as attempt:
            try:
                async with asyncio.timeout(None) as deadline:
                    response = await self.host.remote(send)
            except NotSent as e:
                return self._unsent(request, e)
            except ResultTooLarge as e:  # it was accepted: what it did is not known here
                return unanswered(request, "unknown", str(e))
            except (TimeoutError, asyncio.CancelledError) as e:
                if attempt.sent and not attempt.answered:
                    return unanswered(
                        request,
                        "unknown",
                        f"{method} {_path(url)} was sent "
                        f"and not answered within {self.tool.timeout:g}s",
                    )
                if isinstance(e, TimeoutError) and not attempt.sent:
                    # the commit's deadline came before the connection's own (a host that
                    # drops what is sent to it): the same outage as a ConnectTimeout
                    return self._unsent(
                        request,
                        Unreachable(
                            f"adapter {self.adapter.name}: {method} {url}: no connection was "
                            f"made within {self.tool.timeout * 2:g}s (nothing was sent)"
                        ),
                    )
                return unanswered(request, "failed", f"{method} {_path(url)} was not sent")
            except Exception as e:
                outcome: Outcome = "unknown" if attempt.sent and not attempt.answered else "failed"
                return unanswered(request, outcome, f"{type(e).__name__}: {e}")
        if no_answer(response["status"], response.get("text", "")):  # none of the server's
            said = gateway_said(response["status"])
            return unanswered(request, "unknown", f"{method} {_path(url)} was answered {said}")
        return receipts(request, response)

    def _unsent(self, request: Request, e: NotSent) -> list[Receipt]:
        """The receipts of a commit that never left, each ``failed``; one whose system of
        record was down for now (:class:`Unreachable`) is counted as such, so a step none of
        whose commits left may be blocked (:attr:`CommitOutcome.only_unreached`)."""
        got = unanswered(request, "failed", f"not sent: {e}")
        if isinstance(e, Unreachable):
            self.outcome.unreached.append(e)
            self.outcome.unsent += len(got)
        return got

    def _land(self, accepted: Sequence[Receipt]) -> None:
        at = timestamp(self.host.now().isoformat())
        for r in accepted:
            res = r.resource
            if not res or not res.get("id"):
                continue
            node = resource_iri(self.adapter.base_url, res["resourceType"], res["id"])
            self.outcome.remove += replaced(
                self.store, projection_graph(node), self.adapter.base_url
            )
            self.outcome.add += projection_quads(
                self.adapter.iri, self.adapter.base_url, res, at, r.location, self.activity
            )


def made_from(tool: Tool | None, receipts: Iterable[Mapping[str, Any]]) -> dict[URIRef, str]:
    """The version each accepted update of ``tool``'s was made from (the ``If-Match`` it was
    sent with), by the projection graph it replaces; as the step records its ``receipts``.

    Its landing reads the projection it replaces only after the system of record answered: a
    projection stored then at a version neither this one nor the commit's own is newer, landed
    meanwhile (:func:`horismos._hydrate.land_projections` keeps it). A create, or an update of
    a resource the world had no projection of, was made from no known version: not named."""
    if tool is None or tool.adapter is None:
        return {}
    out: dict[URIRef, str] = {}
    for r in receipts:
        ref, base = str(r.get("ref") or ""), r.get("expected_version")
        graph = projection_of(tool.adapter.base_url, ref)
        if r.get("outcome") == "accepted" and base is not None and graph is not None:
            out[graph] = str(base)
    return out


def _path(url: str) -> str:
    return url.split("://", 1)[-1].split("/", 1)[-1]
