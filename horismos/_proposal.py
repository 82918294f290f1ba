"""Proposal steps: the graph yields the options, a model only ranks them.

A :class:`~horismos._model.ProposalStep` runs in four moves:

1. its ``horis:candidates`` SELECT runs in the world with ``?this`` (and the instance's other
   variables) bound; every candidate comes from the graph;
2. a candidate that would not satisfy the next step's ``horis:requires`` with the candidate
   bound as the ``horis:as`` variable is dropped, and recorded as dropped;
3. the ranking model, chosen by the ``horis:model`` prefix (``lexical:``, ``anthropic:``,
   ``openai:``), sees the candidates' ids, labels and descriptions and answers JSON
   ``{"ranking": [ids, best first], "confidence": 0..1}`` — asked through the runner's
   :class:`~horismos._environment.Environment`, so replay hands back the recorded reply instead;
4. an id that is not a candidate, malformed output, a timeout, a failed call or a confidence
   under ``horis:confidence`` goes to ``horis:fallback``; otherwise the top id is the choice.
   A model whose endpoint was not reached (nothing sent) goes to the fallback too; with
   neither fallback nor ``horis:onError``, the step is blocked and asked again later.

The choice, its confidence and the full ranking land in a named graph of their own with model
provenance, and reach later steps as the ``horis:as`` variable.

A person answering at the fallback is held to the same options (:func:`check_answer`): facts
that name a node of the candidates' kind which was not a legal candidate are refused before
anything lands, and the refusal lists the legal options.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from rdflib import RDF, RDFS, XSD, BNode, Literal, URIRef
from rdflib.term import Node
from rdflib.util import from_n3

from ._activities import activity_graph
from ._attempt import Attempt, httpx_trace
from ._bindings.reach import Hosts
from ._definitions import Definitions
from ._errors import NotSent, RunError, Unreachable, UsageError
from ._model import ActionStep, ProposalStep
from ._model_clients import ModelClients
from ._records import InstanceRun, StepRecord
from ._redact import redact_url
from ._stored_instances import short_id
from ._stores import Store
from ._unreachable import blocked_until_answered, tls_refused, why_unreachable
from ._vocab import HORIS, PROV

if TYPE_CHECKING:  # imported when a model is asked (ask), not on every command's import
    import httpx

__all__ = [
    "Candidate",
    "ProposalContext",
    "RankRequest",
    "Ranking",
    "Reply",
    "Unusable",
    "ask",
    "check_answer",
    "endpoint",
    "judge_reply",
    "lexical_rank",
    "misconfigured",
    "propose",
    "refused_model",
    "summary",
    "unkeyed",
]

DEFAULT_MODEL = "lexical:bm25"
DEFAULT_TIMEOUT = 30.0
ANTHROPIC_URL = "https://api.anthropic.com"
OPENAI_URL = "https://api.openai.com/v1"

SYSTEM_PROMPT = (
    "You rank the options of one step of a workflow. The options were produced by the "
    "system; you may not add, rename or merge any. Rank them by the criterion given, best "
    "first. Answer with one JSON object and nothing else: "
    '{"ranking": ["<option id>", ...], "confidence": <number from 0 to 1>} where ranking '
    "lists option ids exactly as given and confidence is how sure you are that the first "
    "option is the right choice."
)


@dataclass(frozen=True)
class Candidate:
    """One option from the graph: its id as the model sees it, the node, and its words."""

    id: str
    node: Node
    label: str = ""
    comment: str = ""

    def to_json(self) -> dict[str, str]:
        return {"id": self.id, "node": self.node.n3(), "label": self.label, "comment": self.comment}


@dataclass(frozen=True)
class RankRequest:
    """Everything a ranking model is told: the criterion, the focus and the options."""

    model: str
    rank_by: str
    focus: str
    candidates: tuple[Candidate, ...]
    timeout: float = DEFAULT_TIMEOUT

    @property
    def provider(self) -> str:
        return self.model.partition(":")[0]

    @property
    def model_name(self) -> str:
        return self.model.partition(":")[2]

    def prompt(self) -> str:
        lines = [
            f"Rank by: {self.rank_by or 'the best fit for the focus'}",
            "",
            f"Focus: {self.focus}",
            "",
            "Options:",
        ]
        for c in self.candidates:
            lines.append(f"- id: {c.id}")
            if c.label:
                lines.append(f"  label: {c.label}")
            if c.comment:
                lines.append(f"  description: {c.comment}")
        return "\n".join(lines)


@dataclass(frozen=True)
class Reply:
    """What asking the model gave: its text, or that it timed out, failed, or cannot be asked.

    ``error`` is a failed call (the step falls back); ``unavailable`` means the model cannot
    be asked at all as configured (unknown provider, missing key): the step fails.
    ``misconfigured``: the failed call was the endpoint refusing the request as addressed or
    keyed (HTTP 404, 401, 403: a base URL without ``/v1``, a wrong key), which no retry
    mends; the step still falls back, as the docs promise of an HTTP error, and says so
    plainly (:func:`misconfigured`). ``unreachable``: the failed call never reached the
    endpoint (its connection refused or never made: nothing was sent), which a later try may;
    a step with neither ``horis:fallback`` nor ``horis:onError`` is blocked for it, not
    failed. Each recorded only when true: a trace recorded before replays its reply as it was.
    """

    text: str | None = None
    timeout: bool = False
    error: str | None = None
    unavailable: str | None = None
    misconfigured: bool = False
    unreachable: bool = False

    def to_json(self) -> dict[str, Any]:
        if self.text is not None:
            return {"text": self.text}
        if self.timeout:
            return {"timeout": True}
        if self.unavailable is not None:
            return {"unavailable": self.unavailable}
        if self.misconfigured:
            return {"error": self.error or "", "misconfigured": True}
        if self.unreachable:
            return {"error": self.error or "", "unreachable": True}
        return {"error": self.error or ""}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Reply:
        return cls(
            text=data.get("text"),
            timeout=bool(data.get("timeout")),
            error=data.get("error"),
            unavailable=data.get("unavailable"),
            misconfigured=data.get("misconfigured") is True,
            unreachable=data.get("unreachable") is True,
        )


@dataclass(frozen=True)
class Ranking:
    """The options best first and how sure the ranker is of the first: what BM25 and a model's
    checked answer both come to, so the step judges them the same way against
    ``horis:confidence``."""

    ids: tuple[str, ...]
    confidence: float


class Unusable(Exception):
    """The reply cannot be used; ``reason`` is ``malformed``, ``invented``, ``timeout`` or
    ``error``."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


# -- asking a model -----------------------------------------------------------------------


async def ask(request: RankRequest, clients: ModelClients | None = None) -> Reply:
    """Ask the request's provider, within its timeout; never raises. ``clients``: the run's
    (:mod:`._model_clients`), whose client of the endpoint is made, if it must be, before the
    timeout starts; without them, one for this ask alone."""
    if clients is None:
        clients = ModelClients()
        try:
            return await ask(request, clients)
        finally:
            await clients.aclose()
    import httpx  # here, not on every command's import (~50 ms): only a ranking asks

    try:
        complete = _provider(request, clients)
    except _Unavailable as e:
        return Reply(unavailable=str(e))
    # the request marks when it leaves (_post): a timeout before then is one while its
    # connection was still being made, as for an action step's HTTP call (_attempt)
    with Attempt(acts=False) as attempt:
        try:
            text = await asyncio.wait_for(complete(request), request.timeout)
        except (httpx.ConnectError, httpx.ConnectTimeout) as e:
            # nothing was sent: down for now, a later try may reach it (a certificate
            # refused is no better later, a failed call as any other)
            said = f"{type(e).__name__}: {why_unreachable(e)} (nothing was sent)"
            return Reply(error=said, unreachable=not tls_refused(e))
        except (TimeoutError, httpx.TimeoutException):
            if not attempt.sent and endpoint(request.model) is not None:
                # the step's timeout came before the connection's own (a host that drops
                # what is sent to it): the same outage as a ConnectTimeout, told the same
                return Reply(
                    error=f"no connection was made within {request.timeout:g}s "
                    "(horis:timeout; nothing was sent)",
                    unreachable=True,
                )
            return Reply(timeout=True)
        except httpx.HTTPError as e:
            return Reply(error=f"{type(e).__name__}: {e}")
        except _Misconfigured as e:
            return Reply(error=str(e), misconfigured=True)
        except _CallFailed as e:
            return Reply(error=str(e))
    return Reply(text=text)


class _Unavailable(Exception):
    pass


class _CallFailed(Exception):
    pass


class _Misconfigured(_CallFailed):
    """The endpoint refused the request as addressed or keyed (:data:`_MISCONFIGURED`)."""


_MISCONFIGURED = {
    404: "no such endpoint",
    401: "the key was not accepted",
    403: "the key is not allowed this",
}
"""The HTTP statuses a model's endpoint answers a request it will never answer otherwise:
the URL or the key is wrong (a setting), not the model failing to answer (a retry may)."""

_BASE_VARIABLE = {"anthropic": "ANTHROPIC_BASE_URL", "openai": "OPENAI_BASE_URL"}
_KEY_VARIABLE = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}


def _what_to_change(provider: str, base: str, status: int) -> str:
    """What to change when ``provider``'s endpoint at ``base`` answered ``status``: for a 404
    the base URL (an OpenAI-compatible server serves ``/v1/chat/completions``, so a base URL
    without ``/v1`` asked for ``/chat/completions``, which such a server does not have; the
    Messages API path already starts with ``/v1``), for a 401 or 403 the key."""
    variable = _BASE_VARIABLE.get(provider, "the base URL")
    if status != 404:
        key = _KEY_VARIABLE.get(provider, "the key")
        return f"check {key} (and that {variable}={redact_url(base)} is the server it is for)"
    if provider == "openai" and not base.endswith("/v1"):
        return f"{variable} is {redact_url(base)}: did you mean {redact_url(base + '/v1')}?"
    if provider == "anthropic" and base.endswith("/v1"):
        return f"{variable} is {redact_url(base)}: did you mean {redact_url(base[:-3])}?"
    return f"check {variable} ({redact_url(base)}) and the model's name"


def endpoint(model: str) -> str | None:
    """The URL ``model`` is asked at, as the environment says now (``ANTHROPIC_BASE_URL``,
    ``OPENAI_BASE_URL``, or the provider's own); None for a ranker that runs in this process
    (``lexical:``) or a provider nobody knows. One reading for asking and for the host check,
    so the host checked is the host asked."""
    provider = model.partition(":")[0]
    if provider == "anthropic":
        return os.environ.get("ANTHROPIC_BASE_URL", ANTHROPIC_URL).rstrip("/")
    if provider == "openai":
        return os.environ.get("OPENAI_BASE_URL", OPENAI_URL).rstrip("/")
    return None


def refused_model(step: ProposalStep, hosts: Hosts, name: str) -> NotSent | None:
    """Why the host policy (``--allow-host``, ``allow_hosts=``, ``allow-hosts``) forbids
    asking ``step``'s model, or None: refused before any step fires, as an HTTP binding's
    host is, so a model the operator did not allow is never sent the candidates. So is a
    model whose key the environment lacks (:func:`unkeyed`), as an HTTP header's variable
    is: the steps before the proposal had acted when it failed."""
    model = step.model or DEFAULT_MODEL
    url = endpoint(model)
    problem = None if url is None else hosts.problem(url)
    if url is not None and problem is None and (why := unkeyed(model, url)) is not None:
        return NotSent(
            f"{name}: the ranking model {model} cannot be asked, refused before any step "
            f"fires: {why}",
            step=str(step.iri),
        )
    if url is None or problem is None:
        return None
    return NotSent(
        f"{name}: the ranking model {model} at {redact_url(url)} is refused before any "
        f"request: {problem}",
        step=str(step.iri),
    )


def unkeyed(model: str, base: str) -> str | None:
    """What the model's provider needs from the environment and lacks (its key, for the
    public endpoint), as :func:`_provider` finds it when the step is reached. Asked before
    the first step as well: a run whose model has no key acted at every step before the
    proposal, then failed there."""
    provider = model.partition(":")[0]
    if provider in ("anthropic", "claude") and base == ANTHROPIC_URL:
        if not os.environ.get("ANTHROPIC_API_KEY"):
            return (
                f'horis:model "{model}" needs ANTHROPIC_API_KEY in the environment (or '
                "ANTHROPIC_BASE_URL for a local server)"
            )
    elif provider == "openai" and base == OPENAI_URL and not os.environ.get("OPENAI_API_KEY"):
        return (
            f'horis:model "{model}" needs OPENAI_API_KEY in the environment (or '
            "OPENAI_BASE_URL for a local server such as vLLM or Ollama)"
        )
    return None


def _provider(request: RankRequest, clients: ModelClients) -> Any:
    """How to ask ``request``'s model: a coroutine function of the request, its endpoint's
    client made already (outside the step's timeout)."""
    provider = request.provider
    if provider == "lexical":
        return _lexical
    base = endpoint(request.model)
    if (
        provider in ("anthropic", "openai")
        and base is not None
        and (why := unkeyed(request.model, base)) is not None
    ):
        raise _Unavailable(why)  # the words validate and run's start give (unkeyed)
    if provider == "anthropic" and base is not None:
        key = os.environ.get("ANTHROPIC_API_KEY")
        client = clients.client(base)
        return lambda r: _anthropic(r, client, base, key)
    if provider == "openai" and base is not None:
        key = os.environ.get("OPENAI_API_KEY")
        client = clients.client(base)
        return lambda r: _openai(r, client, base, key)
    raise _Unavailable(
        f'horis:model "{request.model}": unknown provider {provider!r}; write '
        '"lexical:bm25", "anthropic:MODEL" or "openai:MODEL"'
    )


async def _post(
    client: httpx.AsyncClient,
    url: str,
    headers: dict[str, str],
    body: dict[str, Any],
    timeout: float,
    provider: str = "",
    base: str = "",
) -> Any:
    response = await client.post(
        url, headers=headers, json=body, timeout=timeout, extensions={"trace": httpx_trace}
    )
    status = response.status_code
    if status in _MISCONFIGURED:
        raise _Misconfigured(
            f"{redact_url(url)} answered HTTP {status} ({_MISCONFIGURED[status]}): the model's "
            "endpoint is misconfigured, not a model that failed to answer; "
            f"{_what_to_change(provider, base, status)} (it said: {response.text[:300]})"
        )
    if status >= 400:
        raise _CallFailed(f"{redact_url(url)} answered HTTP {status}: {response.text[:300]}")
    try:
        return response.json()
    except ValueError:
        raise _CallFailed(
            f"{redact_url(url)} answered a body that is not JSON: {response.text[:300]}"
        ) from None


async def _anthropic(
    request: RankRequest, client: httpx.AsyncClient, base: str, key: str | None
) -> str:
    headers = {"anthropic-version": "2023-06-01"}
    if key:
        headers["x-api-key"] = key
    data = await _post(
        client,
        f"{base}/v1/messages",
        headers,
        {
            "model": request.model_name,
            "max_tokens": 1024,
            "temperature": 0,
            "system": SYSTEM_PROMPT,
            "messages": [{"role": "user", "content": request.prompt()}],
        },
        request.timeout,
        "anthropic",
        base,
    )
    try:
        return "".join(b["text"] for b in data["content"] if b.get("type") == "text")
    except (KeyError, TypeError) as e:
        raise _CallFailed(f"the Messages API answer has no text content ({e!r})") from None


async def _openai(
    request: RankRequest, client: httpx.AsyncClient, base: str, key: str | None
) -> str:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    data = await _post(
        client,
        f"{base}/chat/completions",
        headers,
        {
            "model": request.model_name,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": request.prompt()},
            ],
        },
        request.timeout,
        "openai",
        base,
    )
    try:
        content = data["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as e:
        raise _CallFailed(f"the chat-completions answer has no message content ({e!r})") from None
    if not isinstance(content, str):
        raise _CallFailed("the chat-completions answer's message content is not text")
    return content


# -- the offline lexical ranker -------------------------------------------------------------

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    (
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "has",
        "have",
        "i",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "so",
        "that",
        "the",
        "their",
        "this",
        "to",
        "was",
        "we",
        "with",
        "would",
        "you",
        "your",
    )
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _terms(text: str) -> list[str]:
    out = []
    for w in _WORD.findall(_CAMEL.sub(" ", text).lower()):
        if w in _STOP:
            continue
        if len(w) > 4 and w.endswith("ies"):
            w = w[:-3] + "y"
        elif len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        out.append(w)
    return out


def lexical_rank(query: str, docs: Mapping[str, str], k1: float = 1.2, b: float = 0.75) -> Ranking:
    """BM25 over ``docs`` (id → text) against ``query``; deterministic, ties in id order.

    Confidence is how clearly the best beats the runner-up, ``s1 / (s1 + s2)``: 1 when only
    one option matches, 0.5 on a tie, 0 when nothing matches.
    """
    q = set(_terms(query))
    tokens = {i: _terms(t) for i, t in docs.items()}
    n = len(docs)
    avg = sum(len(t) for t in tokens.values()) / n if n else 0.0
    df = Counter(w for t in tokens.values() for w in set(t))
    scores: dict[str, float] = {}
    for i, toks in tokens.items():
        tf = Counter(toks)
        s = 0.0
        for w in q:
            if tf[w]:
                idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
                norm = 1 - b + b * (len(toks) / avg if avg else 1)
                s += idf * tf[w] * (k1 + 1) / (tf[w] + k1 * norm)
        scores[i] = s
    order = sorted(docs, key=lambda i: (-scores[i], i))
    top = scores[order[0]] if order else 0.0
    second = scores[order[1]] if len(order) > 1 else 0.0
    confidence = 0.0 if top <= 0 else top / (top + second)
    return Ranking(tuple(order), round(confidence, 4))


async def _lexical(request: RankRequest) -> str:
    docs = {
        c.id: f"{c.label} {c.comment}" if (c.label or c.comment) else _local(c.id)
        for c in request.candidates
    }
    r = lexical_rank(f"{request.rank_by} {request.focus}", docs)
    return json.dumps({"ranking": list(r.ids), "confidence": r.confidence})


def _local(iri: str) -> str:
    return re.split(r"[#/:]", iri)[-1]


# -- judging a reply ------------------------------------------------------------------------


def judge_reply(reply: Reply, ids: list[str]) -> Ranking:
    """The ranking in ``reply``, or :class:`Unusable` saying why it cannot be used."""
    if reply.timeout:
        raise Unusable("timeout", "the model did not answer in time")
    if reply.text is None:
        raise Unusable("error", f"the model could not be asked: {reply.error}")
    data = _json_object(reply.text)
    if data is None:
        raise Unusable("malformed", f"the answer is not a JSON object: {reply.text[:200]!r}")
    ranking, confidence = data.get("ranking"), data.get("confidence")
    if not isinstance(ranking, list) or not ranking or not all(isinstance(i, str) for i in ranking):
        raise Unusable("malformed", 'the answer\'s "ranking" is not a non-empty list of ids')
    if len(set(ranking)) != len(ranking):
        raise Unusable("malformed", 'the answer\'s "ranking" names an option twice')
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, int | float)
        or not 0 <= confidence <= 1
    ):
        raise Unusable("malformed", 'the answer\'s "confidence" is not a number from 0 to 1')
    known = set(ids)
    invented = [i for i in ranking if i not in known]
    if invented:
        raise Unusable(
            "invented",
            f"the answer ranks {invented[0]!r}, which is not one of the "
            "candidates; a model may only rank the options the graph gives",
        )
    return Ranking(tuple(ranking), float(confidence))


def _json_object(text: str) -> dict[str, Any] | None:
    body = text.strip()
    fence = re.match(r"^```(?:json)?\s*(.*?)\s*```$", body, re.S)
    if fence:
        body = fence.group(1)
    for candidate in (body, body[body.find("{") : body.rfind("}") + 1]):
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(data, dict):
            return data
    return None


# -- the step -------------------------------------------------------------------------------


class Ranker(Protocol):
    """Where a proposal step's time, ids and model reply come from: the runner's environment,
    live or replayed from a trace."""

    def now(self) -> dt.datetime: ...
    def new_id(self) -> str: ...
    async def _rank(
        self, step: ProposalStep, request: RankRequest, clients: ModelClients
    ) -> Reply: ...


class ProposalContext(Protocol):
    """What a proposal step reads from the runner that drives it. The runner passes itself;
    this module never imports it, so step kinds sit below the runner."""

    @property
    def defs(self) -> Definitions: ...
    @property
    def store(self) -> Store: ...
    @property
    def env(self) -> Ranker: ...
    @property
    def blocks_unreached(self) -> bool: ...
    @property
    def models(self) -> ModelClients: ...


async def propose(
    runner: ProposalContext, inst: InstanceRun, step: ProposalStep, variables: dict[str, Node]
) -> tuple[StepRecord, URIRef | None, list[tuple]]:
    """Run ``step``: the record, the step to continue at, and the quads to commit with it."""
    defs, store = runner.defs, runner.store
    name = defs.name(step.iri)
    rec = StepRecord(step.iri, "ProposalStep", "completed", inst.instance)
    started = rec.started = runner.env.now()
    model = step.model or DEFAULT_MODEL
    detail: dict[str, Any] = {
        "model": model,
        "rank_by": step.rank_by,
        "as": step.as_var,
        "threshold": step.confidence,
    }
    rec.detail["proposal"] = detail

    def fail(message: str) -> tuple[StepRecord, URIRef | None, list[tuple]]:
        rec.status, rec.error = "failed", RunError(f"{name}: {message}", step=str(step.iri))
        detail["outcome"] = "failed"
        return rec, step.on_error, []

    if not step.query:
        return fail(
            "horis:candidates gives no horis:query; write horis:candidates "
            '[ horis:query "SELECT ?option WHERE { … }" ]'
        )
    try:
        rows = store.select(
            step.query,
            {k: v for k, v in variables.items() if re.search(rf"[?$]{k}\b", step.query)},
            dict(step.namespaces),
        )
    except Exception as e:
        return fail(f"the horis:candidates query does not run: {e}")
    nodes = _options(rows, step.as_var)
    candidates = [_candidate(store, n) for n in nodes]
    kept, dropped = _check_next(runner, step, candidates, variables)
    detail["candidates"] = [c.to_json() for c in kept]
    detail["dropped"] = dropped
    if not kept:
        return _no_candidates(rec, step, detail, bool(candidates))
    request = RankRequest(
        model,
        step.rank_by or "",
        _describe(store, variables["this"]),
        tuple(kept),
        step.timeout if step.timeout is not None else DEFAULT_TIMEOUT,
    )
    reply = await runner.env._rank(step, request, runner.models)
    if reply.unavailable is not None:
        return fail(reply.unavailable)
    if (
        reply.unreachable
        and step.fallback is None
        and step.on_error is None
        and runner.blocks_unreached
    ):
        return _unreached(rec, step, detail, reply, name, inst, defs)
    by_id = {c.id: c for c in kept}
    chosen: Candidate | None = None
    ranking: Ranking | None = None
    try:
        ranking = judge_reply(reply, list(by_id))
    except Unusable as e:
        detail["outcome"], detail["message"] = e.reason, str(e)
        if reply.misconfigured:  # a setting to change: said apart (misconfigured())
            detail["misconfigured"] = True
    else:
        detail["ranking"] = [by_id[i].node.n3() for i in ranking.ids]
        detail["confidence"] = ranking.confidence
        if step.confidence is not None and ranking.confidence < step.confidence:
            detail["outcome"] = "low_confidence"
            detail["message"] = (
                f"confidence {ranking.confidence:g} is under the step's "
                f"horis:confidence {step.confidence:g}"
            )
        else:
            chosen = by_id[ranking.ids[0]]
            detail["outcome"] = "chosen"
    detail["choice"] = chosen.node.n3() if chosen else None
    rec.result = [
        {
            "choice": detail["choice"],
            "confidence": detail.get("confidence"),
            "outcome": detail["outcome"],
        }
    ]
    quads = _record(
        runner, inst, step, model, started, kept, ranking, chosen, detail.get("message")
    )
    rec.graph = quads[0][3]
    if chosen is not None:
        variables[step.as_var] = chosen.node
        return rec, step.next, quads
    if step.fallback is None:
        rec.status = "failed"
        rec.error = RunError(
            f"{name}: {detail['message']}, and the step declares no "
            "horis:fallback; add horis:fallback :SomeStep (e.g. a wait for an "
            "operator)",
            step=str(step.iri),
        )
        return rec, step.on_error, quads
    return rec, step.fallback, quads


def _unreached(
    rec: StepRecord,
    step: ProposalStep,
    detail: dict[str, Any],
    reply: Reply,
    name: str,
    inst: InstanceRun,
    defs: Definitions,
) -> tuple[StepRecord, URIRef | None, list[tuple]]:
    """The step blocked, to be asked again, when its model's endpoint was not reached
    (nothing sent) and it declares neither ``horis:fallback`` nor ``horis:onError``: failed,
    the instance was over for good, though nothing of the step or the world was wrong, as an
    action step's call to an endpoint down is (:meth:`._action_steps.ActionSteps._unreached`).
    Nothing of the ranking lands: none was made."""
    model = detail["model"]
    url = endpoint(model)
    at = f" at {redact_url(url)}" if url else ""
    rec.error = Unreachable(
        f"{name}: the ranking model {model}{at} was not reached: {reply.error}; "
        + blocked_until_answered(
            name, "asks it again", short_id(inst.instance), defs.name(inst.focus)
        ),
        step=str(step.iri),
    )
    detail["outcome"], detail["message"], detail["choice"] = "unreachable", str(reply.error), None
    rec.result = [{"choice": None, "confidence": None, "outcome": "unreachable"}]
    rec.status, rec.blocked_by = "blocked", str(rec.error)
    return rec, None, []


def _no_candidates(
    rec: StepRecord, step: ProposalStep, detail: dict[str, Any], some_dropped: bool
) -> tuple[StepRecord, URIRef | None, list[tuple]]:
    why = (
        "every candidate was dropped by the next step's horis:requires"
        if some_dropped
        else "the horis:candidates query gives no option"
    )
    detail["outcome"], detail["message"], detail["choice"] = "no_candidates", why, None
    rec.result = [{"choice": None, "confidence": None, "outcome": "no_candidates"}]
    if step.fallback is not None:
        return rec, step.fallback, []
    rec.status, rec.blocked_by = "blocked", f"{why}: {step.query}"
    return rec, None, []


def _options(rows: list[dict[str, Node]], as_var: str) -> list[Node]:
    seen: dict[str, Node] = {}
    for row in rows:
        node = row.get("option", row.get(as_var))
        if node is None and len(row) == 1:
            node = next(iter(row.values()))
        if node is None or isinstance(node, BNode):
            continue
        seen.setdefault(str(node), node)
    return [seen[k] for k in sorted(seen)]


def _candidate(store: Any, node: Node) -> Candidate:
    label = comment = ""
    if isinstance(node, URIRef):
        label = " / ".join(sorted(str(v) for v in store.objects(node, RDFS.label)))
        comment = " / ".join(sorted(str(v) for v in store.objects(node, RDFS.comment)))
    return Candidate(str(node), node, label, comment)


def _check_next(
    runner: ProposalContext,
    step: ProposalStep,
    candidates: list[Candidate],
    variables: dict[str, Node],
) -> tuple[list[Candidate], list[dict[str, str]]]:
    nxt = runner.defs.steps.get(step.next) if step.next is not None else None
    if not isinstance(nxt, ActionStep) or nxt.requires is None:
        return candidates, []
    kept, dropped = [], []
    for c in candidates:
        bound = {**variables, step.as_var: c.node}
        if runner.store.solutions(nxt.requires, bound):
            kept.append(c)
        else:
            dropped.append(
                {
                    "id": c.id,
                    "node": c.node.n3(),
                    "failing": runner.store.failing(nxt.requires, bound),
                }
            )
    return kept, dropped


def _describe(store: Any, focus: Node) -> str:
    words = [str(v) for p in (RDFS.label, RDFS.comment) for v in sorted(store.objects(focus, p))]
    return f"{focus} — {' — '.join(words)}" if words else str(focus)


def _record(
    runner: ProposalContext,
    inst: InstanceRun,
    step: ProposalStep,
    model: str,
    started: Any,
    kept: list[Candidate],
    ranking: Ranking | None,
    chosen: Candidate | None,
    message: str | None,
) -> list[tuple]:
    """The proposal's own named graph: what was considered, ranked and chosen, by a model."""
    rid = runner.env.new_id()
    graph = URIRef(f"urn:horismos:proposal:{rid}")
    activity = URIRef(f"urn:horismos:activity:{rid}")
    choice = URIRef(f"urn:horismos:choice:{rid}")
    ended = runner.env.now()
    triples = activity_graph(
        graph,
        activity,
        step.iri,
        inst.instance,
        HORIS.ModelProvenance,
        f"{step.iri.fragment or step.iri} ranked by {model}",
        Literal(started.isoformat(), datatype=XSD.dateTime),
        Literal(ended.isoformat(), datatype=XSD.dateTime),
    )
    triples += [(activity, PROV.used, c.node) for c in kept]
    if message:
        triples.append((activity, HORIS.error, Literal(message)))
    if ranking is not None:
        seq = URIRef(f"urn:horismos:ranking:{rid}")
        by_id = {c.id: c.node for c in kept}
        triples += [
            (choice, RDF.type, PROV.Entity),
            (choice, PROV.wasGeneratedBy, activity),
            (choice, HORIS.name, Literal(step.as_var)),
            (choice, HORIS.confidence, Literal(ranking.confidence, datatype=XSD.double)),
            (choice, RDF.value, seq),
            (seq, RDF.type, RDF.Seq),
        ]
        triples += [(seq, RDF[f"_{n}"], by_id[i]) for n, i in enumerate(ranking.ids, 1)]
        if chosen is not None:
            triples.append((choice, HORIS.value, chosen.node))
    return [(s, p, o, graph) for s, p, o in triples]


def check_answer(
    defs: Definitions,
    store: Store,
    instance: URIRef,
    at: URIRef,
    facts: list[tuple[Node, Node, Node]],
    types_of: Callable[[Node], set[Node]],
) -> None:
    """Refuse facts answering ``instance`` at the fallback ``at`` of a proposal that chose
    nothing, when they name an option that was not one of its legal candidates.

    An option is named when a fact's object is a node of the candidates' kind (a class one of
    them has): a node the query did not give, or one the next step's precondition dropped. It
    must be one of the candidates the model was shown. Raises :class:`UsageError` listing
    those.
    """
    proposals = [s for s in defs.steps.values() if isinstance(s, ProposalStep) and s.fallback == at]
    if not proposals or not facts:
        return
    rows = store.select(
        """
        SELECT ?a ?started ?option ?chosen WHERE {
            ?a horis:instance ?i ; horis:step ?s ; prov:startedAtTime ?started .
            ?g prov:wasGeneratedBy ?a .
            FILTER (STRSTARTS(STR(?g), "urn:horismos:proposal:"))
            OPTIONAL { ?a prov:used ?option }
            OPTIONAL { ?c prov:wasGeneratedBy ?a ; horis:value ?chosen } }""",
        {"i": instance, "s": proposals[0].iri},
        {"horis": str(HORIS), "prov": str(PROV)},
    )
    if not rows:
        return
    latest = max(str(r["started"]) for r in rows)
    last = [r for r in rows if str(r["started"]) == latest]
    if any(r.get("chosen") is not None for r in last):
        return  # it chose: the instance reached this wait another way
    legal = sorted({r["option"] for r in last if r.get("option") is not None}, key=str)
    kinds = {t for c in legal for t in types_of(c)}
    named = sorted(
        {
            o
            for _, _, o in facts
            if isinstance(o, URIRef) and o not in legal and types_of(o) & kinds
        },
        key=str,
    )
    if not named:
        return
    options = ", ".join(_shown(defs, store, c) for c in legal) or "none"
    raise UsageError(
        f"the facts name {', '.join(defs.name(n) for n in named)}, which is not one of the "
        f"options {defs.name(proposals[0].iri)} gave for this instance; answer with one of "
        f"the legal options: {options}. Nothing landed"
    )


def _shown(defs: Definitions, store: Store, node: Node) -> str:
    label = next(iter(sorted(str(v) for v in store.objects(node, RDFS.label))), "")
    return defs.name(node) + (f" — {label}" if label else "")


def misconfigured(rec: StepRecord) -> str | None:
    """The message of a proposal step whose model's endpoint refused the request as
    addressed or keyed (:class:`Reply`'s ``misconfigured``), or None: the step took its
    fallback, as for any failed call, and the command line says it on stderr too, where a
    run of many instances each sent to an operator read as a model having a bad day."""
    d = rec.detail.get("proposal")
    if rec.kind != "ProposalStep" or not isinstance(d, dict) or not d.get("misconfigured"):
        return None
    return str(d.get("message", ""))


def summary(rec: StepRecord, name: Any) -> str:
    """One line for a proposal step, as ``horismos run`` prints it; ``name`` shortens IRIs."""
    d = rec.detail.get("proposal", {})
    then = f" -> {name(rec.next)}" if rec.next else ""
    outcome = d.get("outcome")
    dropped = len(d.get("dropped", ()))
    more = f", {dropped} dropped" if dropped else ""
    if outcome == "chosen":
        return (
            f"proposal: {name(from_n3(d['choice']))} (confidence {d['confidence']:g}{more}){then}"
        )
    if rec.error is not None:
        return f"proposal {'blocked' if rec.status == 'blocked' else 'failed'}: {rec.error}{then}"
    return f"proposal: {str(outcome).replace('_', ' ')}: {d.get('message', '')}{more}{then}"
