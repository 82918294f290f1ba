"""The Python entry point: definitions plus the callables that back them, ready to run."""

from __future__ import annotations

import functools
import inspect
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from rdflib import Graph, URIRef
from rdflib.term import Node

from . import _loop
from ._bindings import Hosts, Reach, mcp_server
from ._claims import NotHeld, Worker, busy_here
from ._definitions import Definitions, load_definitions
from ._definitions_model import name_fix
from ._driving import drive_here, runs_moved
from ._entailment import schema_of
from ._environment import Environment
from ._errors import AmbiguousName, AuthoringError, LeaseLost, NotAnIRI, UsageError
from ._gate import Gate
from ._hydrate import Hydrated
from ._individuals import place_individuals
from ._model import Adapter, McpServer, Workflow
from ._people import operator_name
from ._policy import DEFAULT_ALLOW, Policy, allowed, approve
from ._prechecks import Prechecks, refuse_unmet
from ._reads import RecordingStore
from ._records import InstanceRun, Run, StepRecord
from ._runner import Runner, focus_nodes
from ._stored_instances import (
    StoredInstance,
    batch_left,
    find_instance,
    finished_foci,
    instance_for,
    unfinished,
)
from ._stores import Change, Conflict, Store
from ._surfaces import Catalog
from ._trace import Trace
from ._waits import parse_facts, prepare
from ._world import World, given_world, holds_subject, states, traced_digest

__all__ = ["Agent"]

Entailment = Literal["rdfs", "owl-rl"]


def _names(given: Iterable[str] | str, said: str) -> Iterable[str]:
    """``"ehr_client"`` or ``"a,b"`` as its names, as ``allow=`` reads a string: iterated as it
    was, ``allow_modules="ehr_client"`` allowed the modules ``e``, ``h``, ``r``…, and the run
    then said the binding was in no module allowed. ``None`` is none, as leaving it out is;
    anything else but names (``allow_hosts=5``) is a UsageError, not Python's TypeError."""
    if given is None:
        return ()
    if isinstance(given, str):
        return [n.strip() for n in given.split(",") if n.strip()]
    names = list(given) if isinstance(given, Iterable) else None
    if names is None or not all(isinstance(n, str) for n in names):
        raise UsageError(
            f"{said}={given!r}: give a list of names, or one string of them between commas"
        )
    return names


def _plain_callback(name: str, callback: Callable[..., Any] | None) -> None:
    """Refuse an ``async def`` given as ``on_step`` or ``on_instance``: the run calls it as a
    plain function, so each call made a coroutine that never ran — nothing was reported, and
    only a RuntimeWarning said so."""
    if callback is None:
        return
    if inspect.iscoroutinefunction(callback) or (
        not inspect.isroutine(callback)
        and inspect.iscoroutinefunction(getattr(callback, "__call__", None))  # noqa: B004
    ):
        raise UsageError(
            f"{name} is an async function, and the run calls it as a plain one (its coroutine "
            f"would never run): give a plain def, and from it schedule the async work, e.g. "
            f"asyncio.get_running_loop().create_task(...)"
        )


class Agent:
    """Loaded, checked definitions and the Python callables registered for ``python:NAME``.

    A ``python:module.func`` binding resolves only inside a module named in ``allow_modules``
    (or a submodule of one): a Turtle file does not choose the code it runs. ``allow_modules``
    and ``allow_hosts`` take a list of names, or one string of them between commas. With
    ``allow_hosts`` HTTP bindings and MCP server URLs reach only those hosts; without it any
    host but link-local and cloud metadata addresses (:mod:`._bindings.reach`).

    ``entailment="rdfs"`` (the default) checks argument types against the ``rdfs:subClassOf``
    closure of the loaded ontology; ``"owl-rl"`` also infers the OWL 2 RL types of each node a
    run touches, from that node's neighbourhood (:mod:`horismos._entailment`).
    """

    def __init__(
        self,
        definitions: Definitions,
        *,
        tools: Mapping[str, Callable[..., Any]] | None = None,
        entailment: Entailment = "rdfs",
        mcp_servers: Mapping[str, McpServer | Mapping[str, Any]] | None = None,
        allow_modules: Iterable[str] | str = (),
        allow_hosts: Iterable[str] | str = (),
    ) -> None:
        if entailment not in ("rdfs", "owl-rl"):
            raise UsageError(f"entailment {entailment!r}: use 'rdfs' or 'owl-rl'")
        if definitions.errors:  # what a failed load made, for validate's later checks
            raise AuthoringError(definitions.errors, definitions=definitions)
        self.definitions = definitions
        allow_modules = _names(allow_modules, "allow_modules")
        allow_hosts = _names(allow_hosts, "allow_hosts")
        if mcp_servers is not None and not isinstance(mcp_servers, Mapping):
            raise UsageError(  # a list of them ended in "'list' object has no attribute 'items'"
                f"mcp_servers is a {type(mcp_servers).__name__}: give a mapping of each "
                'mcp://SERVER/… name to its server, e.g. mcp_servers={"ward": {"command": '
                '"python", "args": ["-m", "ward_server"]}}'
            )
        # what bindings may reach: these callables, these modules, these hosts
        self.tools = Reach(tools, allow_modules, Hosts(tuple(allow_hosts)) if allow_hosts else None)
        self.mcp_servers = {n: mcp_server(n, s) for n, s in (mcp_servers or {}).items()}
        self.entailment = entailment
        self._gate = Gate(definitions)
        self._prechecks = Prechecks(definitions)
        self._placed: weakref.WeakSet[Store] = weakref.WeakSet()

    @classmethod
    def from_files(
        cls,
        *paths: str | Path,
        tools: Mapping[str, Callable[..., Any]] | None = None,
        entailment: Entailment = "rdfs",
        mcp_servers: Mapping[str, McpServer | Mapping[str, Any]] | None = None,
        allow_modules: Iterable[str] | str = (),
        allow_hosts: Iterable[str] | str = (),
    ) -> Agent:
        """An agent over the definitions in ``paths`` (Turtle files, or folders of them: the
        workflows, their tools and the ontology), loaded and checked as `load_definitions`
        does; raises `AuthoringError` listing every error. ``tools`` maps the NAME of each
        ``python:NAME`` binding to its function, sync or async; the other options are the
        constructor's."""
        return cls(
            load_definitions(paths),
            tools=tools,
            entailment=entailment,
            mcp_servers=mcp_servers,
            allow_modules=allow_modules,
            allow_hosts=allow_hosts,
        )

    @property
    def catalog(self) -> Catalog:
        """The tool catalog: ``.list()``, ``.discover(...)``, ``.call(...)``, ``.approve(...)``
        (docs/catalog.md)."""
        return Catalog(self)

    def workflow(self, name: str | URIRef | None = None) -> Workflow:
        """The declared workflow ``name`` (an IRI or CURIE), or the only one when ``name`` is
        None; its ``.iri`` is what `wait_for_instances` takes. Raises UsageError when there is
        no such workflow, or several and none is named."""
        wfs = self.definitions.workflows
        if not wfs:  # "name the workflow to run (declared: none)" asked for a name none has
            raise UsageError(
                "these definitions declare no horis:Workflow: give the Turtle file that "
                "declares the workflow too (tools alone are called through the catalog: "
                "agent.catalog.call, horismos tools call)"
            )
        if name is None:
            if len(wfs) == 1:
                return next(iter(wfs.values()))
            names = ", ".join(self.definitions.name(w) for w in wfs) or "none"
            raise UsageError(f"name the workflow to run (declared: {names})")
        try:
            iri: URIRef | None = self._iri(name, role="workflow")
        except AmbiguousName as e:  # ':Triag' over files binding ':' to several namespaces
            if any(URIRef(c) in wfs for c in e.candidates):
                raise
            iri = None  # a misspelt name, not one to write in full: say which are declared
        if iri not in wfs:
            names = ", ".join(self.definitions.name(w) for w in wfs) or "none"
            raise UsageError(f"no workflow {name!s} (declared: {names})")
        return wfs[iri]

    def adapter(self, name: str | URIRef | None = None) -> Adapter:
        """A declared ``horis:Adapter`` by local name, CURIE or IRI (the only one, if one),
        for :meth:`World.hydrate`. The hosts this agent may reach apply to it."""
        adapters = self.definitions.adapters
        names = ", ".join(a.name for a in adapters.values()) or "none"
        if not adapters:  # "name the adapter (declared: none)" asked for a name none has
            raise UsageError(
                "these definitions declare no horis:Adapter: give the Turtle file that "
                "declares one (docs/adapters.md) to Agent.from_files"
            )
        if name is None:
            if len(adapters) == 1:
                return next(iter(adapters.values()))
            raise UsageError(f"name the adapter (declared: {names})")
        found = next((a for a in adapters.values() if name in (a.name, a.iri)), None)
        if found is None:
            try:
                found = adapters.get(self._iri(name))
            except UsageError:
                found = None
        if found is None:
            raise UsageError(f"no adapter {name!s} (declared: {names})")
        return found

    def hydrate(
        self,
        world: World,
        adapter: str | URIRef | None = None,
        ids: Iterable[str] = (),
        *,
        search: Iterable[str] = (),
    ) -> list[Hydrated]:
        """:meth:`World.hydrate` with this agent's adapter and the hosts it may reach."""
        return world.hydrate(
            self.adapter(adapter), ids, search=search, allow_hosts=self.tools.hosts.allowed
        )

    def _iri(self, name: str | URIRef, world: World | None = None, role: str = "name") -> URIRef:
        """``name`` as an IRI; ``role`` (focus, workflow) says which one in an error."""
        if isinstance(name, URIRef):
            return name
        # whether the world has the candidate as a subject: one triple asked, not the node's
        # every triple read (a hub of a knowledge graph holds millions)
        exists = None if world is None else functools.partial(holds_subject, world)
        try:
            return self.definitions.expand(name, exists)
        except AmbiguousName:
            raise
        except NotAnIRI as e:
            raise UsageError(
                f"{role} {name!r} is not an IRI: {e.why}; write it as <IRI> or as a CURIE "
                "with a declared prefix"
            ) from None
        except KeyError:
            raise UsageError(
                f"{role} {name!r} is neither an IRI nor a CURIE with a declared prefix — "
                + name_fix(self.definitions, name)
            ) from None

    def run(
        self,
        world: World,
        workflow: str | URIRef | None = None,
        focus: str | URIRef | None = None,
        *,
        all: bool = False,
        trace: str | Path | Trace | None = None,
        on_instance: Callable[[InstanceRun], None] | None = None,
        keep: bool = True,
        trace_snapshot: bool = False,
        allow: Iterable[str] = DEFAULT_ALLOW,
        on_step: Callable[[InstanceRun, StepRecord], None] | None = None,
        again: bool = True,
    ) -> Run:
        """Run one instance for ``focus``, or one per focus node with ``all=True`` — leaving
        out a node the world holds a finished instance of the workflow for, so a batch run
        again acts on none of them twice (a single ``focus`` starts another on purpose).

        ``keep=False`` keeps no per-instance records in the returned :class:`Run` (only how
        many ended in each status), and with no ``trace`` file no trace events either: a
        batch of 100,000 instances then runs in flat memory, each instance handed to
        ``on_instance`` as it ends. ``trace_snapshot=True`` embeds the
        world's N-Quads in the trace's header, for a small world whose trace should replay
        changed definitions against the world itself (docs/replay.md). ``allow`` names the
        side-effect classes steps may call (default: all but ExternalCommit); a step whose
        tool is outside it blocks with PolicyRefused, and one whose tool requires approval
        waits for it (:meth:`approve`). ``on_step`` is called with the instance and each step's
        record as soon as it has landed; an exception it raises ends the run there and reaches
        the caller, the step landed and the instance left running at its next step (go on with
        :meth:`resume`). ``again=False`` (a single ``focus``): if the focus
        has an instance of the workflow, unfinished or finished, drive nothing and answer it as
        it stands (the run's one instance, no steps; ``run.status`` is ``"running"`` for one
        another run drives now: another of this process, or another process holding its
        claim on a shared world) — what a client retrying after a timeout needs, rather than
        a second run and its calls; decided under the focus's claim on a shared world, so two
        such requests at once start one instance. An instance left running that no run
        drives (its process killed, its ``arun`` cancelled: what ``horismos instances`` says
        ``interrupted``) is continued from where it stopped, as ``again=True`` continues it on
        a world that outlives the process (in memory, ``again=True`` starts another instance:
        Python's runs of one focus may overlap): a call it was making is held in doubt
        (``OutcomeUnknown``), never made a second time.
        A failed instance answered so has ``run.error`` an :class:`InstanceFailed` whose
        ``cause`` is of the class that failed it (``OutcomeUnknown``: reconcile the call;
        ``ToolError``: the tool raised…), with its words, as the run that failed it raised.

        From a coroutine, ``await agent.arun(...)``: this one raises UsageError there.
        """
        _loop.not_in_running_loop("agent.run()", "write `await agent.arun(...)` there")
        return _loop.run(
            self.arun(
                world,
                workflow,
                focus,
                all=all,
                trace=trace,
                on_instance=on_instance,
                keep=keep,
                trace_snapshot=trace_snapshot,
                allow=allow,
                on_step=on_step,
                again=again,
            )
        )

    async def arun(
        self,
        world: World,
        workflow: str | URIRef | None = None,
        focus: str | URIRef | None = None,
        *,
        all: bool = False,
        trace: str | Path | Trace | None = None,
        on_instance: Callable[[InstanceRun], None] | None = None,
        keep: bool = True,
        trace_snapshot: bool = False,
        env: Environment | None = None,
        allow: Iterable[str] = DEFAULT_ALLOW,
        on_step: Callable[[InstanceRun, StepRecord], None] | None = None,
        again: bool = True,
    ) -> Run:
        """:meth:`run`, in a running event loop; ``env`` gives the clock and ids (a test's
        :class:`~horismos.Environment` subclass).
        ``on_step`` and ``on_instance`` are plain functions, called as the run goes.
        ``all=True`` runs its instances one after another, in this task; to run many foci at
        once, gather an ``arun`` per focus (``again=False`` makes each safe to ask again)."""
        world = given_world(world)
        _plain_callback("on_step", on_step)
        _plain_callback("on_instance", on_instance)
        if not again and all:
            raise UsageError(
                "again=False answers one focus's instance; all=True leaves out the foci "
                "whose instance finished already: give a focus, or leave again out"
            )
        wf = self.workflow(workflow)
        rules = Policy(allowed(allow))
        with self._refusable(world) as begun:
            types_of = self.types_in(world)
            foci = self._foci(world, wf, focus, all, types_of)
            # on a world other processes share, --all splits the focus nodes through claims, and a
            # single-focus run holds its focus's claim: no process takes over a live one's instance
            worker = Worker.join(world) if world.store.shared else None
            runner = self._runner(
                worker.world if worker else world,
                trace if trace is not None or keep else Trace(kept=False),
                env or Environment(),
                types_of,
                policy=rules,
            )
            runner.on_step = on_step
            if worker is not None:
                worker.settles_holds_of(runner)
            instances: list[InstanceRun] = []

            def finished(inst: InstanceRun) -> None:
                if keep:
                    instances.append(inst)
                if on_instance is not None:
                    on_instance(inst)

            held = worker is not None and not all
            # a world only this process writes has no claims: a second run of this process on
            # the focus would take over the first's instance as one a dead process left. In
            # memory, Python's runs of one focus may overlap (each its own instance): noted
            # beside each other, so again=False can tell a live run's instance from one left
            local = worker is None and not all
            # its instances outlive this process: kept by the store, or read from a file an
            # earlier run wrote (--out), the focus's unfinished one continued, not doubled
            outlived = world.store.persistent or world._kept_in_files
            alone = local and outlived
            here = drive_here(world.store, wf.iri, foci[0], beside=not alone) if local else None
            if alone and here is None and again:
                busy = busy_here(self.definitions.name(wf.iri), foci[0], self.definitions.name)
                _refused(runner, wf, foci, busy)
                raise busy
            try:
                await runner.check_before_first_step(wf, world)
                # a request repeated (again=False): the focus's instance as it stands, read
                # first without its claim (one another process drives is answered, not busy),
                # then under it, where none was found: two such requests start one instance
                found = None if again else instance_for(world.store, wf.iri, foci[0])
                won = False  # the focus's claim, on a shared world
                if held and (found is None or found.status == "running"):
                    try:
                        await worker.hold(wf, foci[0], name=self.definitions.name)  # type: ignore[union-attr]
                    except NotHeld:
                        if found is None:
                            raise
                        # a live process drives it: answered as it stands
                        return Run([found.as_found(world.store)], runner.trace)
                    won = True
                    found = None if again else instance_for(world.store, wf.iri, foci[0])
                # running, and no run drives it (no other run of this process on a world
                # only this one writes; its claim won on a shared one): its process, or its
                # arun, stopped mid-step. Answered "running" it was answered so for ever; it
                # is continued, as `run --focus` continues it (a call in doubt stays held)
                interrupted = (
                    found is not None
                    and found.status == "running"
                    and (won or (here is not None and here.alone))
                )
                if found is not None and not interrupted:
                    return Run([found.as_found(world.store)], runner.trace)
                if alone and here is None:  # the other run's first commit has not landed
                    raise busy_here(self.definitions.name(wf.iri), foci[0], self.definitions.name)
                # what a crash, a block or a wait left, on a world that outlives the process or
                # was read from a file another run wrote (--out, any batch): on a shared one,
                # read under the focus's claim (--all's workers read their batches). A single
                # focus in memory may have several instances (Python's own runs)
                asks = again and ((worker is None and (outlived or all)) or held)
                seen = runs_moved()  # what a batch reads below holds until it moves
                if worker is None and all:  # each focus one instance, as claims give a shared world
                    left, ended = (
                        batch_left(world.store, wf.iri, foci)
                        if asks
                        else ({}, finished_foci(world.store, wf.iri, foci))
                    )
                    foci = [f for f in foci if f in left or f not in ended]
                else:
                    # again=False found none above (the focus has no instance) or one to go on
                    left = unfinished(world.store, wf.iri, foci) if asks else {}
                    if interrupted and found is not None:
                        left = {foci[0]: found}
                if not all:
                    _not_waiting(self.definitions, left.get(foci[0]))
                runner.header(
                    wf,
                    foci,
                    world_digest=traced_digest(world, runner.trace),
                    snapshot=world.snapshot() if trace_snapshot else None,
                )
                begun.now = True
                if worker is not None and all:
                    await worker.run(runner, wf, foci, finished)
                    order = {f: i for i, f in enumerate(foci)}
                    instances.sort(key=lambda inst: order[inst.focus])
                else:
                    for f in foci:
                        stored = left.get(f)
                        # a batch's focus: no other run of this process drives it, or it is
                        # left out; once a single run began or ended, each is read again
                        mine = drive_here(world.store, wf.iri, f, batch=True) if all else None
                        if all and mine is None:
                            continue
                        try:
                            if all and runs_moved() != seen:
                                now_left, now_ended = batch_left(world.store, wf.iri, [f])
                                stored = now_left.get(f)
                                if stored is None and f in now_ended:
                                    continue
                            if stored is None:
                                finished(await runner.run_instance(wf, f))
                            elif stored.status != "waiting":  # settled by resume / wake
                                finished(await runner.continue_instance(stored))
                        finally:
                            if mine is not None:
                                mine.release()
            except NotHeld as e:  # before its first step: its trace says so, and who drives it
                _refused(runner, wf, foci, e)  # its trace written and closed
                raise
            except (Conflict, LeaseLost) as e:  # another writer moved on: its trace says so
                _stopped(runner, wf, foci, e, worker if held else None)
                raise
            except BaseException:
                # stopped short of its end event (a cancel, on_step raising, a store lost):
                # the events written stand, and the file is closed, not left to the collector
                runner.trace.close()
                raise
            finally:
                await runner.aclose()
                if here is not None:
                    here.release()
                if worker is not None:
                    worker.leave()  # the focus's claim given back with the lease
            runner.end(world_digest=traced_digest(world, runner.trace))
            return Run(instances, runner.trace, dict(runner.counts))

    def _runner(
        self,
        world: World,
        trace: str | Path | Trace | None,
        env: Environment,
        types_of: Callable[[Node], set[Node]] | None = None,
        *,
        recorded: bool = True,
        policy: Policy | None = None,
    ) -> Runner:
        """A runner over ``world`` writing ``trace``; with ``recorded`` (a live run) every read
        of the world is noted in the trace, else ``world`` already answers from a recording.
        ``policy``: side-effect classes allowed and approvals given (default: the defaults)."""
        store = RecordingStore(world.store, env, types_of) if recorded else world.store
        return Runner(
            self.definitions,
            self._gate,
            world=World(store),
            trace=trace if isinstance(trace, Trace) else Trace(trace),
            registry=self.tools,
            env=env,
            mcp_servers=self.mcp_servers,
            policy=policy,
            prechecks=self._prechecks,
        )

    def focus_list(
        self,
        world: World,
        workflow: Workflow,
        focus: str | URIRef | None = None,
        *,
        all: bool = False,
    ) -> list[URIRef]:
        """The focus nodes a run of ``workflow`` would take: ``focus`` (checked to be of the
        focus type) or, with ``all=True``, every node of the type in ``world``."""
        return self._foci(world, workflow, focus, all, self.types_in(world))

    def _foci(
        self,
        world: World,
        wf: Workflow,
        focus: str | URIRef | None,
        all: bool,
        types_of: Callable[[Node], set[Node]] | None = None,
    ) -> list[URIRef]:
        classes = self.definitions.classes_of(wf.focus_type)
        if all:
            if focus is not None:
                raise UsageError("give a focus or all=True (--all), not both")
            if types_of is not None:
                schema = schema_of(self.definitions.graph, world.store)
                return sorted(
                    (
                        n
                        for n in schema.focus_candidates(world.store, classes)
                        if types_of(n) & classes
                    ),
                    key=str,
                )
            return focus_nodes(self.definitions, world, wf)
        if focus is None:
            raise UsageError(
                f"name the focus node: an instance of {self.definitions.name(wf.focus_type)} "
                "(--focus; focus= in Python), or run them all (--all; all=True)"
            )
        node = self._iri(focus, world, "focus")
        types = types_of(node) if types_of is not None else world.store.types(node)
        if not types & classes:
            name = self.definitions.name
            if types:  # the node meant, in the wrong workflow: a nurse for a patient's
                what = f" (it is {' and '.join(sorted(name(t) for t in types))})"
            elif holds_subject(world, node) or states(world.store, node, "object"):
                what = " (the world gives it no class)"
            else:  # misspelt, or of another world: it said only "is not a :Patient"
                what = ": the world holds nothing about it — check its spelling"
            raise UsageError(
                f"focus {name(node)} is not a {name(wf.focus_type)} in the world{what}; give "
                "a node of the workflow's horis:focusType"
            )
        return [node]

    def place_individuals(self, world: World) -> Change | None:
        """The definitions' individuals into ``world`` (:mod:`horismos._individuals`), once a
        store per agent: reading them back costs what they number (about 2 ms for 200), which
        a service running one instance per event must not pay on every event. The change
        made, if any, for :meth:`take_back_individuals`."""
        if world.store in self._placed:
            return None
        placed = place_individuals(self.definitions.individuals, world)
        self._placed.add(world.store)
        return placed

    @contextmanager
    def _refusable(self, world: World) -> Iterator[_Begun]:
        """The definitions' individuals placed in ``world`` for a command that may yet be
        refused (a focus that is not one, a binding that does not resolve, a wait): taken back
        if it raises before it marks itself begun (its trace's header written), so a refused
        command leaves the world as it was."""
        placed = self.place_individuals(world)
        begun = _Begun()
        try:
            yield begun
        except BaseException:
            if not begun.now:
                self.take_back_individuals(world, placed)
            raise

    def take_back_individuals(self, world: World, placed: Change | None) -> None:
        """Undo ``placed`` for a command refused before it began (a focus that is not one, a
        binding that does not resolve, a call's argument of the wrong type): a refused command
        leaves the world as it was. Not on a shared world, where another process may be
        running on them meanwhile (they are the definitions' own, the same for every one)."""
        if placed is None or world.store.shared:
            return
        world.commit(Change(add=placed.remove, remove=placed.add))
        self._placed.discard(world.store)

    def types_in(self, world: World) -> Callable[[Node], set[Node]] | None:
        """With ``owl-rl``: a node's OWL-RL types in ``world``, derived from the node's own
        neighbourhood (never a copy of the world; see :mod:`horismos._entailment`); with
        ``rdfs``, ``None``: the asserted types, with subclasses entailed on the class side."""
        if self.entailment == "rdfs":
            return None
        return schema_of(self.definitions.graph, world.store).types_of(world.store)

    def resume(
        self,
        world: World,
        instance: str | URIRef,
        facts: str | Graph | None = None,
        *,
        trace: str | Path | Trace | None = None,
        allow: Iterable[str] = DEFAULT_ALLOW,
        on_step: Callable[[InstanceRun, StepRecord], None] | None = None,
        operator: str | None = None,
    ) -> Run:
        """Continue a waiting instance; ``facts`` (Turtle) answer its wait and land first,
        naming who gave them (``operator``, by default the operating system's user).
        From a coroutine, ``await agent.aresume(...)``: this one raises UsageError there."""
        _loop.not_in_running_loop("agent.resume()", "write `await agent.aresume(...)` there")
        return _loop.run(
            self.aresume(
                world,
                instance,
                facts,
                trace=trace,
                allow=allow,
                on_step=on_step,
                operator=operator,
            )
        )

    def approve(
        self,
        world: World,
        instance: str | URIRef,
        fingerprint: str,
        *,
        operator: str | None = None,
    ) -> dict[str, Any]:
        """Record a person's approval of one payload ``instance`` waits for (the fingerprint
        its brief shows); :meth:`resume` then calls the tool. ``operator``: who approves,
        recorded with the approval (by default the operating system's user). Returns what was
        approved (``tool``, ``payload``, ``fingerprint``, ``graph``, ``operator``, and
        ``code``: the code behind a ``python:`` binding that asked, which the approval holds
        for alone); raises
        UsageError for a fingerprint the instance does not wait for (or one whose approval
        lapsed: its step asked for other payloads since)."""
        world = given_world(world)
        refuse_unmet(self.definitions, world)  # the gate would reject what the call did
        iid = (
            find_instance(world.store, instance, "approve")
            if isinstance(instance, str)
            else instance
        )
        return approve(
            self.definitions, world, iid, fingerprint, self.mcp_servers, operator=operator
        )

    async def aresume(
        self,
        world: World,
        instance: str | URIRef,
        facts: str | Graph | None = None,
        *,
        trace: str | Path | Trace | None = None,
        env: Environment | None = None,
        allow: Iterable[str] = DEFAULT_ALLOW,
        on_step: Callable[[InstanceRun, StepRecord], None] | None = None,
        operator: str | None = None,
    ) -> Run:
        """Resume ``instance`` (its IRI, or the short id a run prints) in ``world``.

        The facts are a person's input: judged by the domain shapes of every node they touch,
        they land in their own named graph with human provenance, naming who gave them
        (``operator``, by default the operating system's user). An instance that is not
        waiting, or facts that break the shapes, raise before anything changes.
        """
        world = given_world(world)
        _plain_callback("on_step", on_step)
        env = env or Environment()
        # on a shared world the resumed instance is driven under a held claim, as a run's is
        worker = Worker.join(world) if world.store.shared else None
        # what prepare reads goes into the header's reads: the trace starts with it
        reads = World(
            RecordingStore((worker.world if worker else world).store, env, self.types_in(world))
        )
        try:
            with self._refusable(world) as begun:
                iid = (
                    find_instance(world.store, instance) if isinstance(instance, str) else instance
                )
                triples = parse_facts(self.definitions, facts)
                # before the facts are judged: a shape no answer can meet is said as what it
                # is, not as facts rejected (the properties the facts state land first)
                self._prechecks.refuse_unrunnable(world, {p for _, p, _ in triples})
                waiting = prepare(
                    self.definitions, self._gate, reads, iid, triples, reads.store.types
                )
                if triples:  # who answers the wait, recorded with the answer
                    waiting.operator = operator_name(operator)
                runner = self._runner(
                    reads, trace, env, recorded=False, policy=Policy(allowed(allow))
                )
                runner.on_step = on_step
                if worker is not None:
                    worker.settles_holds_of(runner)
                wf = self.definitions.workflows[waiting.workflow]
                here = drive_here(world.store, wf.iri, waiting.focus) if worker is None else None
                if worker is None and here is None:
                    await runner.aclose()
                    busy = busy_here(
                        self.definitions.name(wf.iri), waiting.focus, self.definitions.name
                    )
                    _refused(runner, wf, [waiting.focus], busy)
                    raise busy
                try:
                    await runner.check_bindings(wf)
                    if worker is not None:
                        try:
                            await worker.hold(wf, waiting.focus, name=self.definitions.name)
                        except NotHeld as e:
                            _refused(runner, wf, [waiting.focus], e)
                            raise
                    runner.header(
                        wf, [waiting.focus], world_digest=traced_digest(world, runner.trace)
                    )
                    begun.now = True
                    inst = (  # blocked where its endpoint was down: tried again from there
                        await runner.continue_instance(waiting.stored)
                        if waiting.stored.status == "blocked"
                        else await runner.resume_instance(waiting)
                    )
                except (Conflict, LeaseLost) as e:  # another writer moved on: its trace says so
                    _stopped(runner, wf, [waiting.focus], e, worker)
                    raise
                except BaseException:
                    runner.trace.close()  # stopped short of its end: closed, as a run's is
                    raise
                finally:
                    await runner.aclose()
                    if here is not None:
                        here.release()
        finally:
            if worker is not None:
                worker.leave()  # the focus's claim given back with the lease
        runner.end(world_digest=traced_digest(world, runner.trace))
        return Run([inst], runner.trace, dict(runner.counts))


def _refused(runner: Runner, wf: Workflow, foci: list[URIRef], e: NotHeld) -> None:
    """Write the trace of a run (or resume) ``e`` refused before its first step."""
    runner.refused(wf, foci, "not_held", str(e), e.node, e.holder)


def _stopped(
    runner: Runner,
    wf: Workflow,
    foci: list[URIRef],
    e: Conflict | LeaseLost,
    worker: Worker | None,
) -> None:
    """Close the trace of a run (or resume) another writer stopped mid-way: what stopped it,
    and which live process holds the focus's claim now, when the world says (a single
    focus's run on a shared world)."""
    holder = worker.holder(wf, foci[0]) if worker is not None and len(foci) == 1 else None
    kind = "conflict" if isinstance(e, Conflict) else "lease_lost"
    runner.stopped(kind, str(e), holder)
    runner.trace.close()  # a trace kept nowhere, or not begun: closed all the same


class _Begun:
    """Whether a command has begun: from its trace's header on, it may have acted."""

    __slots__ = ("now",)

    def __init__(self) -> None:
        self.now = False


def _not_waiting(defs: Definitions, stored: StoredInstance | None) -> None:
    """Refuse a single-focus run whose focus has an instance waiting: a wait is settled by
    ``resume`` or ``wake`` (an answer, an approval, its timeout), never by running again, and
    a run that drove no instance had nothing to report (a traceback at the command line)."""
    if stored is None or stored.status != "waiting":
        return
    at = f" at {defs.name(stored.current)}" if stored.current is not None else ""
    raise UsageError(
        f"{defs.name(stored.workflow)} for {defs.name(stored.focus)} has an instance waiting"
        f"{at} ({stored.instance}); running again does not settle a wait: answer it or approve "
        f"its call, then `horismos resume … --instance {stored.instance}` (or `horismos wake` "
        "once it is due)"
    )
