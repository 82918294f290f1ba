"""Typed, immutable models of what authors declare: tools, workflows and steps.

Built once from the loaded graph by :mod:`horismos._definitions`; the runner reads only these.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from rdflib import URIRef
from rdflib.term import Node

from ._vocab import HORIS

if TYPE_CHECKING:
    from ._preconditions import Precondition

__all__ = [
    "DEFAULT_MAX_STEPS",
    "ActionStep",
    "Adapter",
    "Arg",
    "Assertion",
    "Command",
    "DecisionStep",
    "Effect",
    "Header",
    "McpServer",
    "ProposalStep",
    "Rule",
    "Step",
    "Tool",
    "WaitStep",
    "Workflow",
    "ways_out",
]


@dataclass(frozen=True, slots=True)
class Arg:
    """One declared argument; ``sent`` False: read from the graph, never passed to the binding."""

    name: str
    type: URIRef
    is_class: bool
    optional: bool = False
    sent: bool = True


@dataclass(frozen=True, slots=True)
class Assertion:
    """One property the effect may write: a fixed ``value`` or a returned value of ``type``."""

    property: URIRef
    key: str
    value: Node | None = None
    type: URIRef | None = None
    is_class: bool = False
    optional: bool = False
    many: bool = False
    from_text: bool = False
    """``horis:fromText``: a tool's text-only answer lands, whole, as this (string) value."""


@dataclass(frozen=True, slots=True)
class Effect:
    """What a tool's result may write, and on which argument's node: the gate reads it to file the
    result as triples and to judge them before any lands."""

    subject: str
    asserts: tuple[Assertion, ...]
    shapes: tuple[URIRef, ...] = ()

    @property
    def text_key(self) -> str | None:
        """The key a text-only answer lands under, when one assertion is ``horis:fromText``."""
        return next((a.key for a in self.asserts if a.from_text), None)

    def assertion(self, key: str, expand: Callable[[str], URIRef]) -> Assertion | None:
        """The assertion a result's ``key`` files its value under, as the gate files it: the
        first declared whose key or property IRI ``key`` is, else the one whose property
        ``key`` names as a CURIE (``expand``, a KeyError for none); None for a key the
        effect does not declare."""
        for a in self.asserts:
            if key == a.key or key == str(a.property):
                return a
        try:
            iri = expand(key)
        except KeyError:
            return None
        return next((a for a in self.asserts if a.property == iri), None)


@dataclass(frozen=True, slots=True)
class Header:
    """A request header a tool or MCP server sends, named with the environment variable its
    value comes from: the secret is read when the call is made, never written in the Turtle."""

    name: str
    env: str


@dataclass(frozen=True)
class Tool:
    """A declared tool (``horis:Tool``): what it takes, what it may write, how it is reached and
    what calling it may cost (idempotence, retries, approval). Built once at load; every lane
    that calls it reads this one model."""

    iri: URIRef
    name: str
    label: str | None
    comment: str | None
    args: tuple[Arg, ...]
    effect: Effect | None
    binding: str
    timeout: float
    idempotent: bool = False
    inline: bool = False
    """``horis:inline``: a sync Python function called on the event loop's thread, no worker
    thread; its timeout is then judged after it returns (it cannot be abandoned mid-call)."""
    retries: int = 0
    side_effect: URIRef | None = None
    requires_approval: bool = False
    requires: Precondition | None = None
    headers: tuple[Header, ...] = ()
    max_result_bytes: int = 1 << 20  # limits.DEFAULT_MAX_RESULT_BYTES
    """``horis:maxResultBytes``: the largest result accepted, as JSON bytes (default 1 MiB)."""
    adapter: Adapter | None = None
    """``horis:adapter``: the system of record its decided resources are committed to."""
    commit_scopes: tuple[str, ...] = ()
    """``horis:commitScope``: the scopes an adapter-bound tool commits under."""
    command: Command | None = None
    """The ``horis:CommandBinding`` a ``cmd:NAME`` binding names."""

    def arg(self, name: str) -> Arg | None:
        """The argument ``name`` the tool takes; None when it takes none of that name."""
        return next((a for a in self.args if a.name == name), None)

    @property
    def mcp_address(self) -> tuple[str, str] | None:
        """The server and tool names of an ``mcp://SERVER/TOOL`` binding (either may be
        empty when the binding is written short); None for any other binding."""
        if not self.binding.startswith("mcp://"):
            return None
        server, _, name = self.binding[len("mcp://") :].partition("/")
        return server, name


@dataclass(frozen=True)
class Step:
    """What every kind of step has: where it goes next, and on an error. The runner tells the
    kinds apart by their subclass; a step is never built as a bare ``Step``."""

    iri: URIRef
    next: URIRef | None = None
    on_error: URIRef | None = None


@dataclass(frozen=True)
class ActionStep(Step):
    """A step that calls a tool once its ``horis:requires`` holds, with arguments bound from the
    pattern's solution (once per solution with ``horis:forEach``)."""

    tool: Tool | None = None
    requires: Precondition | None = None
    binds: tuple[tuple[str, str], ...] = ()  # (argument name, pattern variable)
    for_each: bool = False
    on_partial: URIRef | None = None
    """``horis:onPartial``: where an adapter commit that partly succeeded goes (else onError)."""
    each_run: bool = False
    """``horis:eachRun``: its tool is meant to act again on every run of the same focus (a
    notice sent each time), so ``validate`` does not ask for a guard against a rerun
    (:mod:`._rerun_guards`). The runtime never reads it."""

    def var_for(self, arg: str) -> str:
        """The pattern variable that binds the tool's argument ``arg`` (its own name unless
        ``horis:binds`` renames it)."""
        return self._vars.get(arg, arg)

    @cached_property
    def arg_vars(self) -> frozenset[str]:
        """The pattern variables its tool's arguments are bound from (:meth:`var_for` of each;
        none without a tool), made once: the loader's checks of what a pattern binds, what a
        forEach iterates and which proposal's choice a step takes each gathered them again."""
        if self.tool is None:
            return frozenset()
        return frozenset(self.var_for(a.name) for a in self.tool.args)

    @cached_property
    def _vars(self) -> dict[str, str]:
        """:attr:`binds` as a dict, made once: asked for each argument of every step."""
        return dict(self.binds)


@dataclass(frozen=True)
class Rule:
    """One ``horis:when`` of a DecisionStep: the pattern that sends an instance to ``next``. Kept
    sorted by ``order`` so the first rule that holds wins, the same way every run."""

    requires: Precondition
    next: URIRef
    order: float = 0


@dataclass(frozen=True)
class DecisionStep(Step):
    """A step that only chooses where to go from what the world holds: its rules, tried in order,
    else ``otherwise``. It calls no tool and changes nothing, so a cycle of them alone would
    never end (the loader refuses one)."""

    rules: tuple[Rule, ...] = ()
    otherwise: URIRef | None = None


RANKERS = ("lexical", "anthropic", "openai")
"""The ``horis:model`` providers a ProposalStep can name (``provider:model``)."""


@dataclass(frozen=True)
class ProposalStep(Step):
    """A step that has a ranker (BM25, or a model) choose one of the options its query finds,
    going to ``fallback`` when the choice is not sure enough (:mod:`horismos._proposal`)."""

    query: str | None = None
    rank_by: str | None = None
    model: str | None = None
    confidence: float | None = None
    fallback: URIRef | None = None
    as_var: str = "option"
    timeout: float | None = None
    """``horis:timeout`` for the model's answer (None: the default)."""
    namespaces: tuple[tuple[str, str], ...] = ()
    """The prefixes its candidates query is read with: its own file's, over the merged ones."""


@dataclass(frozen=True)
class WaitStep(Step):
    """A step where an instance stops until the world answers, maybe in another process: until a
    pattern holds, or past a timeout (:mod:`horismos._waits`)."""

    reason: str | None = None
    wake: tuple[URIRef, ...] = ()
    delivery: URIRef | None = None
    until: Precondition | None = None
    timeout: float | None = None
    on_timeout: URIRef | None = None


DEFAULT_MAX_STEPS = 1000
"""The steps one instance may run when its workflow declares no ``horis:maxSteps``."""


@dataclass(frozen=True)
class Workflow:
    """A declared workflow: the class of node it runs for, where it starts, its steps by IRI, and
    the step budget that ends a runaway instance. The steps are left out of equality, and so
    of the hash (a dict cannot be hashed): a workflow is known by its IRI and header."""

    iri: URIRef
    focus_type: URIRef
    start: URIRef
    steps: dict[URIRef, Step] = field(default_factory=dict, compare=False)
    max_steps: int = DEFAULT_MAX_STEPS

    def reachable(self, start: URIRef | None = None) -> list[Step]:
        """The steps an instance of this workflow can reach from its start (or from
        ``start``, where a resumed instance stands), in a stable order: what must be able to
        run (bindings resolved) before the first step fires."""
        seen: dict[URIRef, Step] = {}
        todo = [self.start if start is None else start]
        while todo:
            iri = todo.pop()
            step = self.steps.get(iri)
            if step is None or iri in seen:
                continue
            seen[iri] = step
            todo.extend(t for _, t in ways_out(step))
        return [seen[k] for k in sorted(seen, key=str)]


def ways_out(step: Step) -> Iterator[tuple[URIRef, URIRef]]:
    """``(predicate, target)`` for each edge ``step`` may go on by: its next, its error
    branch, an adapter step's partial branch, a decision's rules and otherwise, a proposal's
    fallback, a wait's timeout. The one list of a step's exits: what an instance can reach,
    and every walk of the flow the authoring checks make."""
    ways: list[tuple[URIRef, URIRef | None]] = [
        (HORIS.next, step.next),
        (HORIS.onError, step.on_error),
        (HORIS.onPartial, getattr(step, "on_partial", None)),
    ]
    if isinstance(step, DecisionStep):
        ways += [(HORIS.when, r.next) for r in step.rules] + [(HORIS.otherwise, step.otherwise)]
    if isinstance(step, ProposalStep):
        ways.append((HORIS.fallback, step.fallback))
    if isinstance(step, WaitStep):
        ways.append((HORIS.onTimeout, step.on_timeout))
    return ((p, t) for p, t in ways if t is not None)


@dataclass(frozen=True)
class McpServer:
    """An MCP server that ``mcp://NAME/TOOL`` bindings name: started as a program spoken to over
    its standard input, or reached at a URL. Declared once for every tool it serves."""

    iri: URIRef
    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    url: str | None = None
    headers: tuple[Header, ...] = ()
    """Request headers for a ``horis:url`` server (a bearer token, say), their values read
    from the environment when the session opens."""


@dataclass(frozen=True)
class Adapter:
    """A system of record (``horis:Adapter``): where it is, how to authenticate (the name of
    an environment variable, never the secret), the scopes it is granted, and the mapping of
    its resources to RDF."""

    iri: URIRef
    name: str
    base_url: str
    token_env: str | None = None
    scopes: tuple[str, ...] = ()
    mapping: URIRef | None = None
    timeout: float = 30.0


@dataclass(frozen=True)
class Command:
    """A ``horis:CommandBinding``: what ``cmd:NAME`` runs, where, with what, and how much of
    its output is kept (:mod:`horismos._bindings.command`)."""

    iri: URIRef
    name: str
    argv: tuple[str, ...]
    root: str
    workdir: str = ""
    env: tuple[tuple[str, str], ...] = ()
    """(name, value) pairs; a value ``${VAR}`` is read from the environment at call time."""
    preview_bytes: int = 4096
    retain_bytes: int = 1 << 20
    quota_bytes: int = 64 << 20
    min_free_bytes: int = 100 << 20
    capture_dir: str | None = None
