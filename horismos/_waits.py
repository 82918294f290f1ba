"""Wait steps: an instance stops until the world answers, and resumes — maybe in another process.

Entering a :class:`~horismos._model.WaitStep`:

- if its ``horis:until`` pattern already holds, the instance does not wait and moves on;
- otherwise the wait begins: an activity in a named graph of its own records when it began and,
  with ``horis:delivery horis:Final``, the brief published for the operator; it is committed
  with the instance's new state (``horis:Waiting``) in one change, then traced.

Resuming (:func:`prepare` checks, :meth:`Runner.resume_instance` lands and continues):

1. the instance's state — workflow, focus, current step, version, variables — is read back from
   the world graph, so a fresh process can resume what another one left waiting;
2. the answering facts are checked like a person's input: the domain shapes that target each
   node they touch must still hold (the gate's SHACL path), and they may not write runtime
   state; a violation raises and nothing changes;
3. the facts land in their own named graph (provenance: human), then the wait is settled: past
   its ``horis:timeout`` (the runtime clock against the recorded start) it continues at
   ``horis:onTimeout`` (else ``horis:next``); when ``horis:until`` holds, or the wait declares
   none, at ``horis:next``; otherwise it keeps waiting.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from rdflib import RDF, RDFS, XSD, BNode, Graph, Literal, URIRef, Variable
from rdflib.term import Node
from rdflib.util import from_n3

from ._activities import activity_graph
from ._compared_kinds import now_compared_in
from ._datatypes import NUMERIC, literal_hint, range_refusing, turtle_term
from ._definitions_model import Definitions
from ._errors import GateRejected, ShaclMessage, UsageError
from ._gate import Gate
from ._model import ActionStep, ProposalStep, Step, WaitStep
from ._near_names import closest_term
from ._people import person_triples
from ._preconditions import group_triples
from ._proposal import check_answer
from ._records import InstanceRun, StepRecord
from ._stored_instances import OpenWait, StoredInstance, open_wait, read_instance
from ._stores import Change, Conflict, Store
from ._term_kinds import object_kind
from ._turtle_syntax import parser_reason
from ._vocab import HORIS, NS, PROV
from ._world import (
    INSTANCES,
    World,
    states,
)
from ._world_data import runtime_term

__all__ = [
    "WaitContext",
    "Waiting",
    "focus_label",
    "parse_facts",
    "prepare",
    "summary",
    "wait_step",
]

_NS = {"horis": NS, "prov": str(PROV), "rdfs": str(RDFS)}


class Clock(Protocol):
    """Where a wait's time and ids come from: the runner's environment, live or replayed."""

    def now(self) -> dt.datetime: ...
    def new_id(self) -> str: ...


class WaitContext(Protocol):
    """What a wait step and a resume read from the runner that drives them. The runner passes
    itself; this module never imports it, so step kinds sit below the runner."""

    @property
    def defs(self) -> Definitions: ...
    @property
    def store(self) -> Store: ...
    @property
    def world(self) -> World: ...
    @property
    def env(self) -> Clock: ...


# -- the step --------------------------------------------------------------------------------


def wait_step(
    runner: WaitContext,
    inst: InstanceRun,
    step: WaitStep,
    variables: dict[str, Node],
) -> tuple[StepRecord, URIRef | None, list[tuple]]:
    """Begin the wait, or — for an instance resumed at it — settle it."""
    rec = StepRecord(step.iri, "WaitStep", "completed", inst.instance)
    detail: dict[str, Any] = {
        "reason": step.reason,
        "wake": sorted(str(w) for w in step.wake),
        "delivery": str(step.delivery) if step.delivery else None,
        "until": _until_text(step),
        "timeout": step.timeout,
    }
    rec.detail["wait"] = detail
    begun = open_wait(runner.store, inst.instance, step.iri)
    if begun is not None:
        return _settle(runner, step, variables, rec, detail, begun)
    if step.until is not None and runner.store.solutions(step.until, variables):
        detail["outcome"] = "until_held"
        return rec, step.next, []
    started = runner.env.now()
    wid = runner.env.new_id()
    graph = URIRef(f"urn:horismos:wait:{wid}")
    activity = URIRef(f"urn:horismos:activity:{wid}")
    brief = compose_brief(runner, inst, step, variables) if step.delivery == HORIS.Final else None
    detail.update(outcome="waiting", started=started.isoformat(), brief=brief)
    rec.status, rec.brief, rec.graph = "waiting", brief, graph
    triples = activity_graph(
        graph,
        activity,
        step.iri,
        inst.instance,
        HORIS.SystemProvenance,
        f"{step.iri.fragment or step.iri} waits",
        _time(started),
    )
    if step.reason:
        triples.append((activity, HORIS.reason, Literal(step.reason)))
    if brief:
        triples.append((activity, HORIS.brief, Literal(brief)))
    return rec, None, [(s, p, o, graph) for s, p, o in triples]


def _settle(
    runner: WaitContext,
    step: WaitStep,
    variables: dict[str, Node],
    rec: StepRecord,
    detail: dict[str, Any],
    wait: OpenWait,
) -> tuple[StepRecord, URIRef | None, list[tuple]]:
    now = runner.env.now()
    detail.update(started=wait.started.isoformat(), resumed=now.isoformat())
    rec.graph = wait.graph
    close = [(wait.activity, PROV.endedAtTime, _time(now), wait.graph)]
    if step.timeout is not None and (now - wait.started).total_seconds() >= step.timeout:
        detail["outcome"] = "timed_out"
        rec.status = "timed_out"
        return rec, step.on_timeout or step.next, close
    if step.until is None or runner.store.solutions(step.until, variables):
        detail["outcome"] = "ended"
        return rec, step.next, close
    detail.update(outcome="still_waiting", brief=wait.brief)
    rec.status, rec.brief = "waiting", wait.brief
    return rec, None, []


def focus_label(store: Store, focus: Node) -> str:
    """The focus's ``rdfs:label`` said beside it in a brief (a wait's, an approval's), the
    first in order when it has several; ``""`` for none."""
    return min((str(v) for v in store.objects(focus, RDFS.label)), default="")


def compose_brief(
    runner: WaitContext, inst: InstanceRun, step: WaitStep, variables: dict[str, Node]
) -> str:
    """What the operator is told: why, about what, what was proposed, how to answer."""
    n = runner.defs.name
    focus = variables["this"]
    label = focus_label(runner.store, focus)
    lines = [
        step.reason or f"{n(step.iri)} waits for the world to change.",
        f"Instance {inst.instance} ({n(inst.workflow)} for {n(focus)}"
        f"{' — ' + label if label else ''}) waits at {n(step.iri)}.",
    ]
    proposal = next(
        (r.detail["proposal"] for r in reversed(inst.steps) if "proposal" in r.detail), None
    )
    if proposal is not None:
        lines += _proposal_lines(runner.defs, proposal)
    if step.until is not None:
        lines.append(f"It continues when this holds: {_until_text(step)}")
    if step.timeout is not None:
        target = step.on_timeout or step.next
        lines.append(
            f"Without an answer within {_duration(step.timeout)} it continues at "
            f"{n(target) if target else 'the end'}."
        )
    lines.append(f"Answer with: horismos resume … --instance {inst.instance} --facts '<Turtle>'")
    return "\n".join(lines)


def _proposal_lines(defs: Definitions, proposal: dict[str, Any]) -> list[str]:
    labels = {c["node"]: c["label"] for c in proposal.get("candidates", ())}
    ranking = proposal.get("ranking")
    lines = []
    if proposal.get("message"):
        lines.append(f"The proposal did not decide: {proposal['message']}.")
    if ranking:
        lines.append(f"{proposal['model']} ranked (confidence {proposal['confidence']:g}):")
        for i, node in enumerate(ranking, 1):
            term = from_n3(node)
            name = defs.name(term) if isinstance(term, URIRef) else node
            lines.append(f"  {i}. {name}" + (f" — {labels[node]}" if labels.get(node) else ""))
    elif proposal.get("candidates"):
        lines.append(
            "Candidates: "
            + ", ".join(defs.name(from_n3(c["node"])) for c in proposal["candidates"])  # type: ignore[arg-type]
        )
    return lines


def _until_text(step: WaitStep) -> str | None:
    if step.until is None:
        return None
    return " ".join(" ".join(p.text.split()) for p in step.until.patterns)


def _duration(seconds: float) -> str:
    for unit, size in (("h", 3600), ("m", 60), ("s", 1)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


def _time(value: dt.datetime) -> Literal:
    return Literal(value.isoformat(), datatype=XSD.dateTime)


# -- resuming --------------------------------------------------------------------------------


@dataclass
class Waiting:
    """An instance to resume as stored — waiting, or running when its process died — and the
    checked facts that answer its wait; nothing written yet."""

    stored: StoredInstance
    step: Step
    facts: list[tuple[Node, Node, Node]]
    operator: str | None = None
    """Who gave the facts (:func:`~._people.operator_name`), recorded with them as their
    activity's ``prov:wasAssociatedWith`` and in the trace's resume event; None: nobody is
    named (a replay of a trace recorded before answers named one)."""

    @property
    def version(self) -> int:
        return self.stored.version

    @property
    def workflow(self) -> URIRef:
        return self.stored.workflow

    @property
    def focus(self) -> URIRef:
        return self.stored.focus

    def instance_run(self) -> InstanceRun:
        return self.stored.instance_run()

    def land(self, runner: WaitContext) -> dict[str, Any]:
        """Commit the facts in their own named graph (provenance: human); the trace fields."""
        now = read_instance(runner.store, self.stored.instance)
        if now is None or now.version != self.version or now.status != self.stored.status:
            raise UsageError(
                f"instance {self.stored.instance} changed while it was being "
                "resumed (another process resumed it); read it again"
            )
        fields: dict[str, Any] = {
            "instance": str(self.stored.instance),
            "step": str(self.step.iri),
            "status": self.stored.status,
            "version": self.version,
            "facts": sorted(_nt(t) for t in self.facts),
            "graph": None,
        }
        if not self.facts:
            return fields
        fid = runner.env.new_id()
        at = _time(runner.env.now())
        graph = URIRef(f"urn:horismos:input:{fid}")
        activity = URIRef(f"urn:horismos:activity:{fid}")
        meta = activity_graph(
            graph,
            activity,
            self.step.iri,
            self.stored.instance,
            HORIS.HumanProvenance,
            f"answer to {self.step.iri.fragment or self.step.iri}",
            at,
            at,
            kinds=(),
        )
        if self.operator is not None:  # who answered: an incident's first question
            meta += person_triples(activity, self.operator)
            fields["operator"] = self.operator
        iid = self.stored.instance
        guard = (
            (iid, HORIS.version, Literal(self.version), INSTANCES),
            (iid, HORIS.status, HORIS.Waiting, INSTANCES),
        )
        try:  # guarded in the same update: a resume racing this one lands nothing
            runner.world.commit(
                Change(add=[(s, p, o, graph) for s, p, o in [*self.facts, *meta]], expect=guard)
            )
        except Conflict:
            raise UsageError(
                f"instance {iid} changed while it was being resumed (another "
                "process resumed it); read it again"
            ) from None
        fields["graph"] = str(graph)
        return fields


def prepare(
    defs: Definitions,
    gate: Gate,
    world: World,
    iid: URIRef,
    facts: list[tuple[Node, Node, Node]],
    types_of: Callable[[Node], set[Node]] | None = None,
) -> Waiting:
    """Check that ``iid`` can be resumed and that ``facts`` (:func:`parse_facts`' triples)
    may answer it; writes nothing.

    A waiting instance resumes with facts or without. A *running* one is an instance whose
    process stopped mid-run (a crash): on a store no other process writes, it is continued
    from its stored step, without facts. So is a *blocked* one whose call did not reach its
    endpoint (``not_sent``: nothing was sent), its step tried again. Raises
    :class:`UsageError` for any other instance or facts that write runtime state,
    :class:`GateRejected` for facts that break the domain shapes.
    """
    stored = read_instance(world.store, iid)
    if stored is None and not world.store.select(
        f"SELECT ?i WHERE {{ GRAPH <{INSTANCES}> {{ ?i a horis:Instance }} }} LIMIT 1", {}, _NS
    ):
        raise UsageError(
            "this world holds no workflow instances, so there is none to resume; "
            "give the world the run committed to (the same --store, or the run's "
            "--out as --world)"
        )
    if stored is None:
        raise UsageError(
            f"the world holds no instance {iid}; resume needs the world the run "
            "committed to (the same --store, or the --out of the run as --world)"
        )
    step = defs.steps.get(stored.current) if stored.current is not None else None
    if stored.status == "running" and step is not None and stored.workflow in defs.workflows:
        if facts:
            raise UsageError(
                f"instance {iid} is running, not waiting, so it takes no facts; "
                "resume it without facts to continue it after its process died"
            )
        if world.store.shared:
            raise UsageError(
                f"instance {iid} is running, and on a shared store another "
                "process may be driving it; once none is (its lease ran out: "
                f"`horismos instances` lists it interrupted), `horismos run … --focus "
                f"{defs.name(stored.focus)}` continues it, as `run --all` workers do"
            )
        return Waiting(stored, step, [])
    if (
        stored.status == "blocked"
        and stored.error_kind == "not_sent"
        and isinstance(step, (ActionStep, ProposalStep))
        and stored.workflow in defs.workflows
    ):  # its call (or model) did not reach its endpoint (nothing sent): resumed, the step is
        # tried again
        if facts:
            raise UsageError(
                f"instance {iid} is blocked at {defs.name(step.iri)}, whose call did not "
                "reach its endpoint, so it takes no facts; resume it without facts once the "
                "endpoint answers, and the step is tried again"
            )
        return Waiting(stored, step, [])
    if stored.status == "blocked":
        # what a blocked step says to do (widen --allow, wait for a call to land) is done
        # by running its focus again, which continues it: say so, not only what resume is not
        at = f" at {defs.name(stored.current)}" if stored.current is not None else ""
        raise UsageError(
            f"instance {iid} is blocked{at}, not waiting, so there is nothing to resume; "
            f"`horismos run … --focus {defs.name(stored.focus)}` (with the --allow its "
            "step needs) continues it, checking the step's preconditions, policy and calls "
            "in flight anew"
        )
    if stored.status != "waiting":
        raise UsageError(
            f"instance {iid} is {stored.status}, not waiting; only an instance "
            "stopped at a horis:WaitStep can be resumed"
        )
    if isinstance(step, ActionStep) and stored.workflow in defs.workflows:
        if facts:  # it waits for an approval of its call (see _policy), not for the world
            raise UsageError(
                f"instance {iid} waits at {defs.name(step.iri)} for approval of "
                "its call, not for facts; record the approval with `horismos "
                "approve … --instance … --fingerprint …`, then resume without "
                "facts"
            )
        return Waiting(stored, step, [])
    if not isinstance(step, WaitStep) or stored.workflow not in defs.workflows:
        raise UsageError(
            f"instance {iid} waits at {stored.current}, which the loaded "
            "definitions do not declare as a horis:WaitStep of "
            f"{defs.name(stored.workflow)}; load the definitions it ran with"
        )
    _check_terms(defs, facts)
    _check_focus(defs, step, stored.focus, facts)
    _check_spelling(defs, world.store, facts)
    _check_ranges(defs, facts)
    _check_zones(defs, facts)
    check_answer(
        defs,
        world.store,
        iid,
        step.iri,
        facts,  # a person picks a legal option
        types_of or (lambda n: set(world.store.objects(n, RDF.type))),
    )
    _judge(defs, gate, world.store, facts, types_of)
    return Waiting(stored, step, facts)


def _fact_prefixes(defs: Definitions) -> dict[str, str]:
    """The prefixes a person's facts are read with: the merged graph's, and each prefix a file
    binds to one namespace only; one the files bind to several is bound to :data:`_UNCLEAR`.
    Why the files' too: the merged graph keeps one prefix per namespace, so where the ontology
    writes ``ct:`` and the workflow ``:`` for the same namespace, ``:ann :consent true .`` (as
    the brief and the workflow write it) was refused as not Turtle, "the prefix : has not been
    declared", while the message said the definitions' prefixes are declared."""
    bound = {p: str(ns) for p, ns in defs.graph.namespace_manager.namespaces()}
    for prefix, spaces in defs._sources.prefixes().items():
        if len(spaces) > 1:  # which one a name under it means is told by the facts or none
            bound[prefix] = f"{_UNCLEAR}{prefix}:"
        elif prefix not in bound:
            bound[prefix] = spaces[0]
    return bound


_UNCLEAR = "urn:horismos:unclear-prefix:"
"""Where a prefix the files bind to several namespaces is bound while the facts are read: a
term under it is one the facts named with that prefix without declaring it themselves (their
own ``@prefix`` overrides this one)."""


def _unclear_prefix(defs: Definitions, used: set[str]) -> str | None:
    """Why facts that named terms under the prefixes ``used`` (bound to :data:`_UNCLEAR`)
    cannot be read, or None: which node a name under one means cannot be told. Why: read with
    the merged graph's one binding, ``:ann :consent true .`` landed ``<…repl#ann>
    <…repl#consent> true`` — nodes nothing holds — where the trial's patient was meant; the
    wait kept waiting, exit 3, no word."""
    if not used:
        return None
    prefix, spaces = min(used), defs._sources.prefixes()
    where = "; ".join(
        f"<{ns}> in "
        + ", ".join(str(f.path) for f in defs._sources.files if f.namespaces.get(prefix) == ns)
        for ns in spaces[prefix]
    )
    return (
        f"the facts use the prefix {prefix}:, which the definitions' files bind to more "
        f"than one namespace ({where}), so which node a name under it means cannot be "
        f"told — declare it before the facts (@prefix {prefix}: <…> .), or write full IRIs"
    )


def parse_facts(defs: Definitions, facts: str | Graph | None) -> list[tuple[Node, Node, Node]]:
    """The triples of ``facts`` (Turtle with the definitions' prefixes declared, or a graph),
    in a fixed order; :class:`UsageError` saying where Turtle that does not parse stops."""
    if facts is None:
        return []
    if isinstance(facts, Graph):
        g = facts
    else:
        g = Graph()
        prefixes = "".join(f"@prefix {p}: <{ns}> .\n" for p, ns in _fact_prefixes(defs).items())
        try:
            g.parse(data=prefixes + facts, format="turtle")
        except Exception as e:
            raise UsageError(
                f"the facts are not valid Turtle: {_syntax_why(prefixes, facts, e)}; "
                "write triples such as ':booking7 :operatorChoice :FL200 .' (the "
                "definitions' prefixes are declared for you)"
            ) from None
        used = {
            str(t)[len(_UNCLEAR) :].partition(":")[0]
            for triple in g
            for t in (*triple, getattr(triple[2], "datatype", None))
            if isinstance(t, URIRef) and t.startswith(_UNCLEAR)
        }
        unclear = _unclear_prefix(defs, used)
        if unclear is not None:
            raise UsageError(unclear)
    return sorted(g, key=lambda t: tuple(x.n3() for x in t))


def _syntax_why(prefixes: str, facts: str, e: Exception) -> str:
    """Where the facts stop being Turtle, in the facts' own lines (rdflib's parser can fail
    without a position, e.g. an IndexError for a missing final '.'; pyoxigraph's says where)."""
    import pyoxigraph

    shift = prefixes.count("\n")
    try:
        for _ in pyoxigraph.parse((prefixes + facts).encode(), format=pyoxigraph.RdfFormat.TURTLE):
            pass
    except SyntaxError as oe:
        # its own position counts the prefixes put before the facts: the line is said below
        msg = parser_reason(oe)
        line = (oe.lineno or shift + 1) - shift
        text = facts.splitlines()[line - 1].strip() if 0 < line <= len(facts.splitlines()) else ""
        hint = " (each statement ends with ' .')" if "end" in msg.lower() else ""
        return f"line {line}, column {oe.offset}: {msg}{hint}" + (
            f", at: {text[:60]}" if text else ""
        )
    except Exception:
        pass
    return str(getattr(e, "_why", None) or e)


def _check_terms(defs: Definitions, triples: list[tuple[Node, Node, Node]]) -> None:
    """Refuse facts writing runtime state, as ``World.load_data`` refuses it (one predicate:
    :func:`~horismos._world_data.runtime_term`): a ``horis:`` term, or a runtime node as
    subject or object (``<g> prov:wasGeneratedBy <an approval>`` gave one approval a second
    graph, and a forEach two calls on it). A skolemised blank node of the world's data is the
    world's, and facts may speak of it."""
    for s, p, o in triples:
        if runtime_term(s) or runtime_term(p) or runtime_term(o):
            raise UsageError(
                f"the facts write {defs.name(s)} {defs.name(p)} {defs.name(o)}: "
                "runtime state "
                "(horis: terms, urn:horismos: nodes) is written by the runtime "
                "only; give facts about the domain"
            )


def _check_spelling(
    defs: Definitions, store: Store, triples: list[tuple[Node, Node, Node]]
) -> None:
    """A property, or a class after ``a``, that neither the definitions nor the world name,
    close to one the definitions do (``:operatorChoise`` for ``:operatorChoice``): refused
    before anything lands, with the term meant. Let through, the facts landed under a
    property nothing reads, and the instance kept waiting with nothing saying why. A new
    term with no near one is let through: the world may take terms no ontology declares."""
    written = {p for _, p, _ in triples} | {o for _, p, o in triples if p == RDF.type}
    for term in sorted((t for t in written if isinstance(t, URIRef)), key=str):
        if (
            term == RDF.type
            or _named(defs.graph, term)
            or any(states(store, term, place) for place in ("predicate", "object"))
        ):
            continue
        meant = closest_term(term, defs.nodes, cutoff=0.8)
        if meant is not None:
            raise UsageError(
                f"the facts use {defs.name(term)}, which neither the definitions nor the world "
                f"name, so nothing would read what they say of it: did you mean "
                f"{defs.name(meant)}? (nothing landed)"
            )


def _check_focus(
    defs: Definitions, step: WaitStep, focus: Node, triples: list[tuple[Node, Node, Node]]
) -> None:
    """Facts giving another node than the instance's focus a property the wait's
    ``horis:until`` reads of ``?this``, and the focus none (``:ada :managerSignOff true`` to
    resume :bob's wait): refused before anything lands. Let through, :bob kept waiting, and
    :ada's sign-off stood in the world: her own wait, once reached, found its until holding
    and went on with no manager asked."""
    if step.until is None or not triples:
        return
    read = {
        p
        for s, p, _ in group_triples(step.until.select.algebra)
        if s == Variable("this") and isinstance(p, URIRef) and p != RDF.type
    }
    for prop in sorted(read):
        given = [(s, o) for s, p, o in triples if p == prop]
        if not given or any(s == focus for s, _ in given):
            continue
        other, value = given[0]
        name = defs.name
        raise UsageError(
            f"the facts give {name(other)} {name(prop)} {turtle_term(value, name)}, which the "
            f"wait's horis:until reads of ?this, but this instance waits for {name(focus)}: "
            f"nothing in them ends its wait, and {name(other)}'s own wait would find it "
            f"answered when reached, with no one asked (nothing landed) — write "
            f"{name(focus)} for {name(other)}, or resume the instance of {name(other)} once "
            "it waits"
        )


def _check_ranges(defs: Definitions, triples: list[tuple[Node, Node, Node]]) -> None:
    """A fact giving a property a value of the other kind than its range: a literal of a
    datatype its built-in ``rdfs:range`` is not (``:c1 :documentsReceived "true"``, a string,
    where the range is ``xsd:boolean``), a literal where its values are nodes, or a node
    where they are literals. Refused before anything lands, with what to write. Let through,
    it landed, the wait's ``horis:until ?this :documentsReceived true`` never matched it, and
    the instance kept waiting ("this does not hold yet") until its timeout denied the claim.
    Numbers are compared by value, so one numeric datatype for another is let through."""
    g, name = defs.graph, defs.name
    for s, p, o in triples:
        if not isinstance(p, URIRef) or p == RDF.type:
            continue
        kind = object_kind(g, p)
        said = f"the facts give {name(s)} {name(p)} {turtle_term(o, name)}"
        if isinstance(o, Literal) and kind == "node":
            raise UsageError(
                f"{said}, a literal, where the values of {name(p)} are nodes: nothing reading "
                f"{name(p)} would match it (nothing landed) — write the node meant, with its "
                "prefix"
            )
        if isinstance(o, URIRef) and kind == "literal":
            raise UsageError(
                f"{said}, a node, where the values of {name(p)} are literals: nothing reading "
                f"{name(p)} would match it (nothing landed) — write a literal"
            )
        if not isinstance(o, Literal) or kind != "literal":
            continue
        given = o.datatype or (RDF.langString if o.language else XSD.string)
        ranges = [r for r in g.objects(p, RDFS.range) if isinstance(r, URIRef)]
        refused = range_refusing(given, ranges)
        if refused is None or (given in NUMERIC and refused in NUMERIC):
            continue
        raise UsageError(
            f"{said}, a literal of {name(given)}, where the rdfs:range of {name(p)} is "
            f"{name(refused)}: nothing reading {name(p)} as its range would match it (nothing "
            f"landed) — {literal_hint(o, refused, name)}"
        )


_ZONED = re.compile(r".*(?:Z|[+-][0-9]{2}:[0-9]{2})\s*")


def _check_zones(defs: Definitions, triples: list[tuple[Node, Node, Node]]) -> None:
    """A fact giving a date-time with no time zone (``:r1 :parcelArrivedAt
    "2026-12-07T10:00:00"``) to a property a pattern of the definitions compares with
    ``NOW()``: SPARQL orders a date-time without a zone against one with a zone, as ``NOW()``
    is, in neither store, so ``FILTER (?t <= NOW())`` never held — the parcel had arrived,
    the wait went on until its timeout, and the return was rejected. Refused before anything
    lands, with the time zone to add. Read only when facts give such a date-time."""
    loose = [
        (s, p, o)
        for s, p, o in triples
        if isinstance(o, Literal)
        and o.datatype == XSD.dateTime
        and isinstance(p, URIRef)
        and not _ZONED.fullmatch(str(o))
    ]
    if not loose:
        return
    compared = now_compared_in(defs.steps.values())
    for s, p, o in loose:
        where = compared.get(p)
        if where is None:
            continue
        name = defs.name
        raise UsageError(
            f"the facts give {name(s)} {name(p)} {turtle_term(o, name)}, a date-time with no "
            f"time zone, and {name(where)} compares {name(p)} with NOW(), which has one: "
            "SPARQL never orders the two, so that comparison would never hold (nothing landed) "
            f'— write "{str(o).strip()}Z" for UTC, or the offset it was taken in '
            f'("{str(o).strip()}+01:00")'
        )


def _named(g: Graph, term: URIRef) -> bool:
    """Whether ``g`` writes ``term`` anywhere: as subject, predicate or object."""
    return any(t in g for t in ((term, None, None), (None, term, None), (None, None, term)))


def _judge(
    defs: Definitions,
    gate: Gate,
    store: Store,
    triples: list[tuple[Node, Node, Node]],
    types_of: Callable[[Node], set[Node]] | None,
) -> None:
    """Each node the facts touch, after them, against the domain shapes that target it."""
    asserted: dict[Node, set[Node]] = {}
    for s, p, o in triples:
        if p == RDF.type:
            asserted.setdefault(s, set()).add(o)
    world_types = types_of or (lambda n: set(store.objects(n, RDF.type)))

    def types(node: Node) -> set[Node]:
        return world_types(node) | asserted.get(node, set())

    messages: list[ShaclMessage] = []
    for subject in sorted({s for s, _, _ in triples if not isinstance(s, BNode)}, key=str):
        added = [t for t in triples if t[0] == subject]
        # what the shapes judging it name, as a step's gate reads: not the whole node
        need = gate.reads(None, subject, types(subject))
        verdict = gate.domain(subject, added, store.outgoing(subject, need), types, world=store)
        messages.extend(verdict.messages)
    if messages:
        raise GateRejected(
            "the facts break the domain shapes, so none of them landed: "
            + "; ".join(str(m) for m in messages),
            messages=tuple(messages),
        )


def _nt(t: tuple[Node, Node, Node]) -> str:
    return " ".join(x.n3() for x in t) + " ."


def summary(rec: StepRecord, name: Callable[[Node], str]) -> str:
    """One line for a wait step, as ``horismos run`` prints it; ``name`` shortens IRIs."""
    d = rec.detail.get("wait", {})
    then = f" -> {name(rec.next)}" if rec.next else ""
    outcome = d.get("outcome")
    if outcome == "waiting":
        return "waiting" + ("" if d.get("brief") else f": {d.get('reason') or 'for the world'}")
    if outcome == "still_waiting":
        return f"still waiting: this does not hold yet: {d.get('until')}"
    return {
        "until_held": "no wait: until already holds",
        "ended": "wait ended",
        "timed_out": "wait timed out",
    }.get(str(outcome), str(outcome)) + then
