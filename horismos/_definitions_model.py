"""The loaded definitions, typed: what the runner, the catalog and the CLI are given.

Kept apart from the loader that builds it (:mod:`._definitions`) so the loader's parts can
name the result they fill in without importing the loader."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

from rdflib import Graph, URIRef
from rdflib.term import Node

from ._errors import AmbiguousName, NotAnIRI, Problem, UsageError
from ._model import ActionStep, Adapter, Command, McpServer, Step, Tool, Workflow
from ._shacl import Targets, domain_targets, superclasses_of
from ._sources import Sources
from ._terms import PREFIXED_LOCAL, iri_problem

__all__ = ["Definitions", "every_tool", "name_fix"]


@dataclass
class Definitions:
    """Everything the runner needs, typed; ``graph`` is the merged definitions graph."""

    graph: Graph
    _sources: Sources
    """Where each node came from (files, lines, prefixes), for the checks to place a problem:
    an internal index; :meth:`locate` is how a caller asks where a node is written."""
    tools: dict[URIRef, Tool] = field(default_factory=dict)
    workflows: dict[URIRef, Workflow] = field(default_factory=dict)
    steps: dict[URIRef, Step] = field(default_factory=dict)
    mcp_servers: dict[str, McpServer] = field(default_factory=dict)
    adapters: dict[URIRef, Adapter] = field(default_factory=dict)
    """The declared systems of record (``horis:Adapter``), by IRI."""
    commands: dict[str, Command] = field(default_factory=dict)
    """``horis:CommandBinding`` nodes by local name, as ``cmd:NAME`` bindings name them."""
    warnings: list[Problem] = field(default_factory=list)
    subclasses: dict[URIRef, frozenset[URIRef]] = field(default_factory=dict)
    digest: str = ""
    undeclared: dict[URIRef, list[Problem]] = field(default_factory=dict)
    """IRIs that nothing loaded declares — used in a pattern, as a class of a horis:type, as
    an effect's horis:property or as a horis:focusType — and the warnings about them."""
    unheld: dict[URIRef, list[Problem]] = field(default_factory=dict)
    """Nodes a pattern or a fixed effect value names that the definitions do not hold
    (``:Urgent`` for ``:urgent``): only world data can, so they are said to be missing only
    against a world (``horismos validate --world``), with the warnings to give then."""
    unmeetable: dict[URIRef, list[tuple[Problem, Problem]]] = field(default_factory=dict)
    """Properties a domain shape requires of the nodes some step's tool lands, that nothing
    declares and no tool's effect writes, each with its warning and the error it becomes
    beside a world that holds no statement of it: then the gate rejects every such result,
    after the tool has acted, so ``run`` refuses before any tool is called."""
    unwritten: dict[URIRef, list[Problem]] = field(default_factory=dict)
    """Properties a domain shape requires of the nodes some step's tool lands, that the files
    declare but no tool's effect writes, and those a ``horis:forEach`` step's pattern reaches
    its items through that nothing loaded writes or states (:mod:`._for_each_items`), each
    with the warning to give beside a world that holds no statement of it. Only a warning,
    and only then: a declared property is what world data and other systems (an import, an
    operator's answer to a wait) bring, between runs and between steps."""
    stated_reruns: dict[URIRef, list[Problem]] = field(default_factory=dict)
    """Properties a step's only guard against a rerun tests, that no tool writes and no file
    states (:mod:`._guard_writes` warns of the guard), each with the warning that nothing
    stops the step on a second run (:mod:`._rerun_guards`): given beside a world that states
    the property, where the guard's warning is dropped as a condition of the domain."""
    own_writes: dict[URIRef, list[Problem]] = field(default_factory=dict)
    """Properties a step's pattern requires of the node its tool writes, that only that
    tool writes (:mod:`._own_writes`), each with its warning: kept among the warnings, and
    dropped beside a world that holds values of it (re-running for nodes that have it)."""
    derived_reads: dict[URIRef, list[Problem]] = field(default_factory=dict)
    """Properties a pattern reads that no tool writes and no file states, which the ontology
    relates to another (an inverse, a subproperty: :mod:`._derived_reads`), each with its
    warning: kept among the warnings, and dropped beside a world that states the property."""
    individuals: frozenset[tuple[Node, Node, Node]] = frozenset()
    """Statements about the individuals declared with the definitions (``_individuals``)."""
    errors: tuple[Problem, ...] = ()
    """The loader's errors, when it gave up (:attr:`AuthoringError.definitions`): definitions
    with any are only checked further, never run (:class:`~horismos.Agent` refuses them)."""
    broken_tools: dict[URIRef, Tool] = field(default_factory=dict)
    """Tools the loader found wrong but could read (their arguments are right), as written,
    when it gave up: checked further with the rest (the MCP server a binding names), never
    run. Left out, a tool's other mistakes were said only once its first was mended."""
    _legacy_digest: str | None = field(default=None, init=False, repr=False, compare=False)
    """:func:`legacy_definitions_digest`, once asked for (it is slow)."""

    def locate(self, node: Node | None) -> tuple[str | None, int | None]:
        """The file and line where ``node`` is first written as a subject, or else mentioned
        (``(None, None)`` when no file loaded writes it): where to look to change it."""
        return self._sources.locate(node)

    @cached_property
    def nodes(self) -> frozenset[Node]:
        """Every subject and object the definitions write (:meth:`Sources.nodes`, gathered
        once): ``resume`` matches each fact's term neither they nor the world name against
        them for a did-you-mean."""
        return self._sources.nodes()

    @cached_property
    def superclasses(self) -> dict[URIRef, frozenset[URIRef]]:
        """Each class's superclasses (:func:`~._shacl.superclasses_of` of :attr:`subclasses`),
        derived once: the gate, the loader's checks and the world's checks each derived them
        again. Asked for only once :attr:`subclasses` is closed (the loader sets it first)."""
        return superclasses_of(self.subclasses)

    @cached_property
    def domain_targets(self) -> Targets:
        """Which domain shapes judge a node, by its class, itself and the properties it is the
        subject of (:func:`~._shacl.domain_targets`), found once for the gate, the loader's
        checks and the world's checks, which each walked every node shape again for it (one
        walk per tool for the returned-values check). Asked for only once :attr:`subclasses`
        is closed: the loader reads it after its subclass closure, and the graph is not
        changed after that."""
        return domain_targets(self.graph, self.superclasses)

    @cached_property
    def tools_in_several(self) -> frozenset[URIRef]:
        """The tools steps of more than one workflow call: two runs of two workflows on one
        focus each hold their own workflow's claim on it, so only a settled hold keeps the
        second off a call the first is making there (``Runner._announce``)."""
        seen: dict[URIRef, set[URIRef]] = {}
        for workflow in self.workflows.values():
            for step in workflow.reachable():
                if isinstance(step, ActionStep) and step.tool is not None:
                    seen.setdefault(step.tool.iri, set()).add(workflow.iri)
        return frozenset(t for t, w in seen.items() if len(w) > 1)

    @cached_property
    def tools_off_focus(self) -> frozenset[URIRef]:
        """The tools some step calls on a node that need not be its focus (the effect's
        subject bound from another variable than ``?this``): such a step's hold settles, and
        a run whose focus that node is holds only its own workflow's claim there, so its step
        on the focus must settle and mark too, or a hold of the other landing late lets both
        call (``Runner._announce``)."""
        return frozenset(
            step.tool.iri
            for workflow in self.workflows.values()
            for step in workflow.reachable()
            if isinstance(step, ActionStep)
            and step.tool is not None
            and step.tool.effect is not None
            and step.tool.effect.subject
            and step.var_for(step.tool.effect.subject) != "this"
        )

    def expand(self, name: str, exists: Callable[[URIRef], bool] | None = None) -> URIRef:
        """An IRI from a full IRI, ``<IRI>`` or a CURIE with the files' prefixes.

        Files may bind one prefix (often ``:``) to different namespaces: the CURIE then means
        the IRI the definitions — or ``exists``, e.g. the world — have, and when that is not
        exactly one it raises :class:`AmbiguousName` listing the IRIs (a :class:`KeyError`,
        like a name that does not resolve at all)."""
        if not isinstance(name, str):  # focus=42 from Python: an AttributeError said nothing
            raise UsageError(
                f"{name!r} is not a name: give a string, a CURIE such as ':patient42' or a "
                f"full IRI (given: {type(name).__name__})"
            )
        name = name.strip()
        if name.startswith("<") and name.endswith(">"):
            return _checked_iri(name, name[1:-1])
        if "://" in name or name.startswith("urn:"):
            return _checked_iri(name, name)
        if ":" in name:
            prefix, local = name.split(":", 1)
            _checked_iri(name, local)
            found = self._sources.expand(prefix, local)
            if len(found) > 1 and exists is not None:
                held = [c for c in found if exists(c)]
                if not held:  # a typo (:patient99), which no full IRI would mend
                    raise AmbiguousName(name, [str(c) for c in found], held=False)
                found = held
            if len(found) == 1:
                return found[0]
            if found:
                raise AmbiguousName(name, [str(c) for c in found])
        raise KeyError(name)

    def classes_of(self, cls: URIRef) -> frozenset[URIRef]:
        """``cls`` and every class entailed to be a subclass of it."""
        return self.subclasses.get(cls, frozenset((cls,)))

    def name(self, node: Node, exists: Callable[[URIRef], bool] | None = None) -> str:
        """``node`` as a CURIE that reads back as it (see :meth:`Sources.name`), else ``<IRI>``."""
        return self._sources.name(node, exists)


def _checked_iri(name: str, text: str) -> URIRef:
    """``text`` (written as ``name``) as an IRI; :class:`NotAnIRI` for text no IRI is, before
    rdflib makes a term of it that no store can hold (and logs a warning on stderr)."""
    why = iri_problem(text)
    if why is not None:
        raise NotAnIRI(name, why)
    return URIRef(text)


def name_fix(defs: Definitions, name: str) -> str:
    """How to write ``name``, which :meth:`Definitions.expand` could not read: with the empty prefix
    when the files declare it and ``name`` has no prefix (``patient42``: ``:patient42``),
    else with a prefix they declare."""
    prefixes = defs._sources.prefixes()
    if ":" not in name and "" in prefixes and PREFIXED_LOCAL.fullmatch(name):
        return f"did you mean :{name}? a name in the files' empty prefix is written so"
    # rdflib binds rdf:, brick:, schema: … in every graph: not what a node is named with
    bound = {p for p, _ in Graph().namespaces()}
    ours = ["", *sorted(p for p in prefixes if p not in bound and p not in ("", "_"))]
    known = ", ".join(f"{p}:" for p in ours if p in prefixes)
    prefix = name.split(":", 1)[0]
    if not known:
        return "write it as a full IRI, <…>: the files declare no prefix to name it with"
    if ":" in name:
        return f"the files declare no prefix {prefix}:; write <IRI>, or one of: {known}"
    return f"write it as <IRI> or as a CURIE with a declared prefix ({known})"


def every_tool(defs: Definitions) -> list[Tool]:
    """The tools, with those the loader found wrong (:attr:`Definitions.broken_tools`), in
    the order of their IRIs: what a binding's own text, or what a tool writes, is judged of
    however else a tool is wrong (a zero ``horis:timeout`` changes neither)."""
    return sorted([*defs.tools.values(), *defs.broken_tools.values()], key=lambda t: str(t.iri))
