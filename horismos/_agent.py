"""The Python entry point: definitions plus the callables that back them, ready to run."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from rdflib import RDF, Graph, URIRef
from rdflib.term import Node

from ._bindings import mcp_server
from ._catalog import Catalog
from ._claims import Worker
from ._definitions import Definitions, load_definitions
from ._errors import AmbiguousName, UsageError
from ._gate import Gate
from ._individuals import place_individuals
from ._model import McpServer, Workflow
from ._records import InstanceRun, Run, StepRecord
from ._runner import Environment, Runner, focus_nodes
from ._trace import Trace
from ._waits import find_instance, prepare
from ._world import World

__all__ = ["Agent"]

Entailment = Literal["rdfs", "owl-rl"]


class Agent:
    """Loaded, checked definitions and the Python callables registered for ``python:NAME``.

    ``entailment="rdfs"`` (the default) checks argument types against the ``rdfs:subClassOf``
    closure of the loaded ontology; ``"owl-rl"`` also infers types with owlrl over the
    ontology and the world, once per run.
    """

    def __init__(self, definitions: Definitions, *,
                 tools: Mapping[str, Callable[..., Any]] | None = None,
                 entailment: Entailment = "rdfs",
                 mcp_servers: Mapping[str, McpServer | Mapping[str, Any]] | None = None) -> None:
        if entailment not in ("rdfs", "owl-rl"):
            raise UsageError(f"entailment {entailment!r}: use 'rdfs' or 'owl-rl'")
        self.definitions = definitions
        self.tools: dict[str, Callable[..., Any]] = dict(tools or {})
        self.mcp_servers = {n: mcp_server(n, s) for n, s in (mcp_servers or {}).items()}
        self.entailment = entailment
        self._gate = Gate(definitions)

    @classmethod
    def from_files(cls, *paths: str | Path, tools: Mapping[str, Callable[..., Any]] | None = None,
                   entailment: Entailment = "rdfs",
                   mcp_servers: Mapping[str, McpServer | Mapping[str, Any]] | None = None,
                   ) -> Agent:
        return cls(load_definitions(paths), tools=tools, entailment=entailment,
                   mcp_servers=mcp_servers)

    @property
    def catalog(self) -> Catalog:
        """The tool catalog: ``.list()``, ``.discover(...)``, ``.call(...)``, ``.approve(...)``
        (docs/catalog.md)."""
        return Catalog(self)

    def workflow(self, name: str | URIRef | None = None) -> Workflow:
        wfs = self.definitions.workflows
        if name is None:
            if len(wfs) == 1:
                return next(iter(wfs.values()))
            names = ", ".join(self.definitions.name(w) for w in wfs) or "none"
            raise UsageError(f"name the workflow to run (declared: {names})")
        iri = self._iri(name)
        if iri not in wfs:
            names = ", ".join(self.definitions.name(w) for w in wfs) or "none"
            raise UsageError(f"no workflow {name!s} (declared: {names})")
        return wfs[iri]

    def _iri(self, name: str | URIRef, world: World | None = None) -> URIRef:
        if isinstance(name, URIRef):
            return name
        exists = None if world is None else (
            lambda c: next(iter(world.store.outgoing(c)), None) is not None)
        try:
            return self.definitions.expand(name, exists)
        except AmbiguousName:
            raise
        except KeyError:
            raise UsageError(f"{name!r} is neither an IRI nor a CURIE with a declared prefix"
                             ) from None

    def run(self, world: World, workflow: str | URIRef | None = None,
            focus: str | URIRef | None = None, *, all: bool = False,
            trace: str | Path | None = None,
            on_instance: Callable[[InstanceRun], None] | None = None,
            on_step: Callable[[InstanceRun, StepRecord], None] | None = None) -> Run:
        """Run one instance for ``focus``, or one per focus node with ``all=True``.

        ``on_step`` is called with each step's record as soon as it has landed, ``on_instance``
        with each instance when it stops."""
        return asyncio.run(self.arun(world, workflow, focus, all=all, trace=trace,
                                     on_instance=on_instance, on_step=on_step))

    async def arun(self, world: World, workflow: str | URIRef | None = None,
                   focus: str | URIRef | None = None, *, all: bool = False,
                   trace: str | Path | Trace | None = None,
                   on_instance: Callable[[InstanceRun], None] | None = None,
                   env: Environment | None = None,
                   on_step: Callable[[InstanceRun, StepRecord], None] | None = None) -> Run:
        wf = self.workflow(workflow)
        if env is None or not env.replaying:  # a replayed world has them as they were
            place_individuals(self.definitions.individuals, world)
        entailed = self._entailed(world)
        foci = self._foci(world, wf, focus, all, entailed)
        # on a world other processes share, --all splits the focus nodes through claims
        worker = Worker.join(world) if all and world.store.shared else None
        runner = Runner(self.definitions, self._gate, world=worker.world if worker else world,
                        trace=trace if isinstance(trace, Trace) else Trace(trace),
                        registry=self.tools, env=env or Environment(),
                        types_of=entailed_types(entailed), mcp_servers=self.mcp_servers)
        runner.on_step = on_step
        instances: list[InstanceRun] = []
        try:
            if not runner.env.replaying:  # replay reaches a binding only to re-execute a call
                await runner.check_bindings(wf)
            runner.header(wf, foci)
            if worker is not None:
                instances = await worker.run(runner, wf, foci, on_instance)
            else:
                for f in foci:
                    inst = await runner.run_instance(wf, f)
                    instances.append(inst)
                    if on_instance is not None:
                        on_instance(inst)
        finally:
            await runner.aclose()
            if worker is not None:
                worker.leave()
        run = Run(instances, runner.trace)
        runner.trace.emit("end", status=run.status,
                          instances={str(i.instance): i.status for i in instances},
                          world_digest=world.digest())
        runner.trace.close()
        return run

    def _foci(self, world: World, wf: Workflow, focus: str | URIRef | None,
              all: bool, entailed: Graph | None = None) -> list[URIRef]:
        classes = self.definitions.classes_of(wf.focus_type)
        if all:
            if focus is not None:
                raise UsageError("give a focus or all=True (--all), not both")
            if entailed is not None:
                return sorted({s for c in classes for s in entailed.subjects(RDF.type, c)
                               if isinstance(s, URIRef)}, key=str)
            return focus_nodes(self.definitions, world, wf)
        if focus is None:
            raise UsageError(f"name the focus node: an instance of "
                             f"{self.definitions.name(wf.focus_type)} (or run with --all)")
        node = self._iri(focus, world)
        types = set((entailed if entailed is not None else world.store).objects(node, RDF.type))
        if not types & classes:
            raise UsageError(f"focus {self.definitions.name(node)} is not a "
                             f"{self.definitions.name(wf.focus_type)} in the world; give a node "
                             "of the workflow's horis:focusType")
        return [node]

    def _entailed(self, world: World) -> Graph | None:
        """With ``owl-rl``: the ontology and the world with every OWL-RL entailment added."""
        if self.entailment == "rdfs":
            return None
        import owlrl

        g = Graph()
        g += self.definitions.graph
        for s, p, o, _ in world.store.quads():
            g.add((s, p, o))
        owlrl.DeductiveClosure(owlrl.OWLRL_Semantics).expand(g)
        return g

    def resume(self, world: World, instance: str | URIRef, facts: str | Graph | None = None,
               *, trace: str | Path | Trace | None = None,
               on_step: Callable[[InstanceRun, StepRecord], None] | None = None) -> Run:
        """Continue a waiting instance; ``facts`` (Turtle) answer its wait and land first."""
        return asyncio.run(self.aresume(world, instance, facts, trace=trace, on_step=on_step))

    async def aresume(self, world: World, instance: str | URIRef,
                      facts: str | Graph | None = None, *,
                      trace: str | Path | Trace | None = None,
                      env: Environment | None = None,
                      on_step: Callable[[InstanceRun, StepRecord], None] | None = None) -> Run:
        """Resume ``instance`` (its IRI, or the short id a run prints) in ``world``.

        The facts are a person's input: judged by the domain shapes of every node they touch,
        they land in their own named graph with human provenance. An instance that is not
        waiting, or facts that break the shapes, raise before anything changes.
        """
        if env is None or not env.replaying:
            place_individuals(self.definitions.individuals, world)
        types_of = entailed_types(self._entailed(world))
        iid = find_instance(world.store, instance) if isinstance(instance, str) else instance
        waiting = prepare(self.definitions, self._gate, world, iid, facts, types_of)
        wf = self.definitions.workflows[waiting.workflow]
        runner = Runner(self.definitions, self._gate, world=world,
                        trace=trace if isinstance(trace, Trace) else Trace(trace),
                        registry=self.tools, env=env or Environment(),
                        types_of=types_of, mcp_servers=self.mcp_servers)
        runner.on_step = on_step
        try:
            if not runner.env.replaying:
                await runner.check_bindings(wf)
            runner.header(wf, [waiting.focus])
            inst = await runner.resume_instance(waiting)
        finally:
            await runner.aclose()
        run = Run([inst], runner.trace)
        runner.trace.emit("end", status=run.status, instances={str(iid): inst.status},
                          world_digest=world.digest())
        runner.trace.close()
        return run


def entailed_types(entailed: Graph | None) -> Callable[[Node], set[Node]] | None:
    if entailed is None:
        return None
    return lambda n: set(entailed.objects(n, RDF.type))
