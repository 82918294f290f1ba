"""Discovery: which declared tools are relevant to an intent, and which can run here.

Matching is by token, never by whole-query substring. The query and each tool's name, label,
description and argument names are split into lowercase words (at non-alphanumerics and
camelCase humps); words in :data:`STOPWORDS` are dropped from the query. A query word matches
a tool word when their stems are equal, or when one stem is a prefix of the other and the
shorter has at least four letters (``queue`` ~ ``queued``, ``notify`` ~ ``notified``).
Results rank by the number of distinct query words matched, then by short name and IRI.

Each result is ``executable`` or ``blocked`` in the caller's context — the process (binding,
environment), the policy and approvals, and, when a world is given, the tool's preconditions
and the focus — with ``why_selected`` and ``why_blocked``. Discovery grants nothing: a call
is guarded again on its own (:mod:`._call`).
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from rdflib import URIRef
from rdflib.term import Node

from ._bindings import code_of
from ._bindings.wire import json_value
from ._catalog import ToolEntry, ToolIndex, binding_problem, missing_env, ordered_args, types_in
from ._definitions_model import name_fix
from ._errors import AmbiguousName, NotAnIRI, UsageError
from ._model import Tool
from ._policy import (
    DEFAULT_ALLOW,
    allowed,
    code_stale,
    fingerprint,
    given_print,
    given_used,
    how_to_approve,
    side_effect,
)
from ._world import holds_subject

if TYPE_CHECKING:
    from ._world import World

__all__ = ["STOPWORDS", "Discovery", "discover", "near_words", "tokens"]

STOPWORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "by",
        "do",
        "for",
        "from",
        "i",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "please",
        "some",
        "that",
        "the",
        "then",
        "this",
        "to",
        "up",
        "we",
        "with",
        "you",
        "your",
    }
)
"""Query words too common to say anything about a tool."""

Availability = Literal["executable", "blocked"]
_WORD = re.compile(r"[^A-Za-z0-9]+")
_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SUFFIXES = ("ing", "ed", "es", "s", "y")


def tokens(text: str | None) -> list[str]:
    """The lowercase words of ``text``, split at non-alphanumerics and camelCase humps."""
    if not text:
        return []
    return [w.lower() for w in _WORD.split(_HUMP.sub(" ", text)) if w]


def _stem(word: str) -> str:
    for s in _SUFFIXES:
        if word.endswith(s) and len(word) - len(s) >= 3:
            return word[: -len(s)]
    return word


def _matches(query: str, word: str) -> bool:
    a, b = _stem(query), _stem(word)
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    return len(short) >= 4 and long_.startswith(short)


@dataclass(frozen=True)
class Discovery:
    """One discovered tool: the catalog entry, how it matched, and whether it can run here."""

    entry: ToolEntry
    availability: Availability
    why_selected: tuple[dict[str, Any], ...]
    """One ``{"token", "fields"}`` per matched query word, in query order."""
    why_blocked: tuple[dict[str, str], ...] = ()
    """One ``{"reason", "message"}`` per obstacle; reasons: ``binding``, ``env``, ``policy``,
    ``argument``, ``precondition`` (with ``pattern``), ``approval``."""
    bound_args: dict[str, Any] = field(default_factory=dict)
    """Arguments the context fills (the focus, or the tool's preconditions), as call JSON."""
    shown: dict[str, str] = field(default_factory=dict, compare=False)
    """The same, as an author writes them (CURIEs), for the text view."""

    @property
    def matched(self) -> int:
        """How many of the query's words matched the tool."""
        return len(self.why_selected)

    def to_json(self) -> dict[str, Any]:
        """The finding as JSON, as ``horismos tools discover --format json`` prints it."""
        e = self.entry
        return {
            "name": e.name,
            "iri": e.iri,
            "label": e.label,
            "description": e.description,
            "lane": e.lane,
            "side_effect": e.side_effect,
            "requires_approval": e.requires_approval,
            "input_schema": e.input_schema,
            "availability": self.availability,
            "matched_tokens": self.matched,
            "why_selected": list(self.why_selected),
            "why_blocked": list(self.why_blocked),
            "bound_args": self.bound_args,
        }

    def text(self, rank: int) -> str:
        """The finding as ``horismos tools discover`` prints it, numbered ``rank``."""
        e = self.entry
        matched = "; ".join(f"{w['token']} ({', '.join(w['fields'])})" for w in self.why_selected)
        lines = [f"{rank}. {e.name}  {self.availability}  matched {self.matched}: {matched}"]
        if e.label or e.description:
            lines.append(f"   {e.label or e.description}")
        lines.append(f"   args: {e.signature or 'none'}")
        if self.shown:
            lines.append("   bound: " + ", ".join(f"{k}={v}" for k, v in self.shown.items()))
        lines.extend(
            f"   blocked ({b['reason']}): {' '.join(b['message'].split())}"
            for b in self.why_blocked
        )
        return "\n".join(lines)


def why_selected(tool: Tool, query: list[str]) -> tuple[dict[str, Any], ...]:
    """Which of the tool's fields each query token matched: the reason a search gives for a
    tool, so a person or model can judge the match."""
    fields = [
        ("name", tokens(tool.name)),
        ("label", tokens(tool.label)),
        ("description", tokens(tool.comment)),
    ]
    fields += [(f"argument {a.name}", tokens(a.name)) for a in ordered_args(tool)]
    out = []
    for q in query:
        where = [f for f, words in fields if any(_matches(q, w) for w in words)]
        if where:
            out.append({"token": q, "fields": where})
    return tuple(out)


def near_words(tools: Iterable[Tool], query: str) -> str:
    """For a query no tool matched: each of its words that no tool's words match, beside the
    closest word the tools do have (``qeue`` → ``queue``), as ``; did you mean …?``; empty
    when none is close. A misspelt word found nothing, and a person or a model was told only
    that: it is asked on the no-match path alone, never per discovery."""
    vocabulary = sorted(
        {
            w
            for t in tools
            for text in (t.name, t.label, t.comment, *(a.name for a in t.args))
            for w in tokens(text)
            if w not in STOPWORDS
        }
    )
    meant = []
    for q in dict.fromkeys(w for w in tokens(query) if w not in STOPWORDS):
        if any(_matches(q, w) for w in vocabulary):
            continue
        close = difflib.get_close_matches(q, vocabulary, n=1, cutoff=0.75)
        if close:
            meant.append(f"{close[0]!r} for {q!r}")
    return f"; did you mean {', '.join(meant)}?" if meant else ""


def discover(
    catalog: ToolIndex,
    query: str,
    world: World | None = None,
    focus: str | URIRef | None = None,
    *,
    include_blocked: bool = False,
    approvals: Iterable[str] = (),
    allow: Iterable[str] = DEFAULT_ALLOW,
) -> list[Discovery]:
    """The tools matching ``query``, best first; blocked ones only with ``include_blocked``."""
    words = list(dict.fromkeys(w for w in tokens(query) if w not in STOPWORDS))
    if not words:
        raise UsageError(
            f"query {query!r} has no words to match; describe what the tool "
            'should do, e.g. "assign patient queue"'
        )
    if focus is not None and world is None:
        raise UsageError(
            "a focus is a node of a world: give the world too (--world F, or the world "
            "argument in Python)"
        )
    usable = {  # a used-up approval allows nothing: tools call would refuse it
        given_print(a): a for a in approvals if world is None or given_used(world.store, a) is None
    }
    context = _Context(catalog, world, focus, usable, allowed(allow))
    found: list[Discovery] = []
    for tool in catalog.definitions.tools.values():
        selected = why_selected(tool, words)
        if not selected:
            continue
        blocked, bound = context.check(tool)
        found.append(
            Discovery(
                catalog._entry(tool, context.sessions),
                "blocked" if blocked else "executable",
                selected,
                tuple(blocked),
                {k: _json(v) for k, v in bound.items()},
                {k: context.defs.name(v, context.exists) for k, v in bound.items()},
            )
        )
    found.sort(key=lambda d: (-d.matched, d.entry.name, d.entry.iri))
    return [d for d in found if include_blocked or d.availability == "executable"]


class _Context:
    """What decides runnability here, gathered once for every tool discovered."""

    def __init__(
        self,
        catalog: ToolIndex,
        world: World | None,
        focus: str | URIRef | None,
        approvals: dict[str, str],
        allow: frozenset[str],
    ) -> None:
        self.catalog = catalog
        self.defs = catalog.definitions
        self.sessions = catalog._sessions()
        self.world = world
        self.approvals = approvals
        self.allow = allow
        self.types_of = types_in(catalog.agent, world) if world is not None else None
        # a CURIE whose prefix the files bind to several namespaces: the node the world has
        self.exists = functools.partial(holds_subject, world) if world is not None else None
        self.focus: URIRef | None = None
        self.focus_types: set[Node] = set()
        if focus is not None and self.types_of is not None:
            self.focus = (
                focus if isinstance(focus, URIRef) else _expand(self.defs, focus, self.exists)
            )
            self.focus_types = self.types_of(self.focus)
            assert world is not None
            if not self.focus_types and next(iter(world.store.outgoing(self.focus)), None) is None:
                # every tool would be blocked for it, which reads as "nothing matches"
                raise UsageError(
                    f"focus {self.defs.name(self.focus)} is no node of the world: it has no "
                    "triple there; give a node the world holds"
                )

    def check(self, tool: Tool) -> tuple[list[dict[str, str]], dict[str, Node]]:
        """Why ``tool`` cannot run here (empty when it can), and the arguments bound."""
        blocked: list[dict[str, str]] = []
        problem = binding_problem(tool, self.catalog.agent.tools, self.sessions)
        if problem:
            blocked.append({"reason": "binding", "message": problem})
        for var in missing_env(tool, self.sessions.servers):
            blocked.append(
                {
                    "reason": "env",
                    "message": f"environment variable {var} is not "
                    f"set; export {var}=… before calling {tool.name}",
                }
            )
        side = side_effect(tool)
        if side not in self.allow:
            allowed = ", ".join(sorted(self.allow)) or "nothing"
            blocked.append(
                {
                    "reason": "policy",
                    "message": f"its side effect is {side}, which "
                    f"the policy does not allow (allowed: {allowed})",
                }
            )
        bound: dict[str, Node] = {}
        if self.world is not None:
            blocked.extend(self._world(tool, bound))
        payload = {k: _json(v) for k, v in bound.items()}
        if tool.requires_approval:
            complete = all(a.name in bound for a in ordered_args(tool) if not a.optional)
            given = self.approvals.get(fingerprint(tool.iri, payload)) if complete else None
            if given is None:
                blocked.append(
                    {
                        "reason": "approval",
                        "message": (
                            f"{tool.name} runs only with an approval of its exact arguments: "
                            + how_to_approve(tool.name)
                        ),
                    }
                )
            elif (stale := self._other_code(tool, given)) is not None:
                blocked.append({"reason": "approval", "message": stale})
        return blocked, bound

    def _other_code(self, tool: Tool, approval: str) -> str | None:
        """Why ``approval`` does not hold for the code behind ``tool`` here, as the call
        would refuse it (``approval_stale``); None when it holds: issued naming no code, or
        the code this catalog's tools resolve to. Listed executable, it was refused."""
        if self.world is None:
            return None
        return code_stale(
            self.world.store, tool, approval, lambda: code_of(tool, self.catalog.agent.tools)
        )

    def _world(self, tool: Tool, bound: dict[str, Node]) -> list[dict[str, str]]:
        """Bind the focus, then check the tool's preconditions in the world."""
        assert self.world is not None and self.types_of is not None
        name = self.defs.name
        if self.focus is not None:
            for a in ordered_args(tool):
                if a.is_class and self.focus_types & self.defs.classes_of(a.type):
                    bound[a.name] = self.focus
            if not bound:
                has = ", ".join(sorted(name(t) for t in self.focus_types)) or (
                    "no rdf:type in the world"
                )
                takes = (
                    ", ".join(f"{a.name}: {name(a.type)}" for a in ordered_args(tool) if a.is_class)
                    or "no node arguments"
                )
                return [
                    {
                        "reason": "argument",
                        "message": (
                            f"no argument of {tool.name} takes the focus "
                            f"{name(self.focus)} ({has}); it takes {takes}"
                        ),
                    }
                ]
        if tool.requires is None:
            return []
        store = self.world.store
        solutions = store.solutions(tool.requires, bound)
        if not solutions:
            pattern = store.failing(tool.requires, bound)
            return [
                {
                    "reason": "precondition",
                    "pattern": pattern,
                    "message": (
                        f"this pattern of {tool.name} does not hold"
                        + (
                            f" for {', '.join(f'{k}={name(v)}' for k, v in bound.items())}"
                            if bound
                            else ""
                        )
                        + f": {' '.join(pattern.split())}"
                    ),
                }
            ]
        for a in ordered_args(tool):  # what every solution agrees on, the context fills
            values = {s.get(a.name) for s in solutions}
            if a.name not in bound and len(values) == 1 and None not in values:
                bound[a.name] = values.pop()  # type: ignore[assignment]
        return []


def _expand(defs: Any, name: str, exists: Callable[[URIRef], bool] | None) -> URIRef:
    """The focus ``name`` as an IRI; a CURIE whose prefix the files bind to several
    namespaces means the one ``exists`` (the world) has, as for ``run --focus``."""
    try:
        return defs.expand(name, exists)
    except NotAnIRI as e:
        raise UsageError(f"focus {name!r} is not an IRI: {e.why}") from None
    except AmbiguousName:
        raise
    except KeyError:
        raise UsageError(
            f"focus {name!r} is neither an IRI nor a CURIE with a declared prefix — "
            + name_fix(defs, name)
        ) from None


def _json(node: Node) -> Any:
    if isinstance(node, URIRef):
        return str(node)
    return json_value(node.toPython()) if hasattr(node, "toPython") else str(node)
