"""Reading a trace: a timeline for people, PROV-O for machines.

Both read the events as recorded (after :func:`~horismos.read_trace` has checked them); neither
needs the definitions the run used. Given them, the timeline names IRIs as every other command
does (``:patient42``), and the export reads the names gate messages record (``:patient42``)
back as IRIs. Without them, the export keeps only the names recorded in full, and the
timeline names the terms of the namespace of the run's workflow (of a catalog call's tool) as
``:``, as the definitions most often do and as the gate's messages, recorded with their
prefixes, already name them, saying once under the header what ``:`` is
(:func:`_header_names`); any other IRI in full. A trace records no prefixes, and a bare local
name (``urgent``) could be any namespace's: the timeline named every term ``<http://…#Apply>``
where, given the definitions, it printed ``:Apply``.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, cast

from rdflib import RDF, RDFS, SH, XSD, BNode, Literal, URIRef
from rdflib.term import Node
from rdflib.util import from_n3

from ._event_shape import reading
from ._people import person_triples
from ._process_identity import started_by_text
from ._run_counts import instance_status
from ._stores import outlives_process
from ._terms import iri_problem, split_iri
from ._vocab import HORIS, PROV

__all__ = ["bracketed", "prov_turtle", "short", "timeline"]

RUNTIME = URIRef("urn:horismos:runtime")
"""The agent a decision step is associated with: the runtime itself decided."""

_STATUS = {
    "completed": HORIS.Completed,
    "blocked": HORIS.Blocked,
    "waiting": HORIS.Waiting,
    "failed": HORIS.Failed,
}


def bracketed(iri: str) -> str:
    """An IRI as ``<IRI>``: how the timeline names one with no definitions to name it by."""
    return f"<{iri}>"


_LOCAL_NAME = re.compile(r"[\w-]+(?:\.[\w-]+)*")
"""A local name that reads back unchanged after ``:`` (no trailing dot, no punctuation)."""


def _header_names(header: Mapping[str, Any]) -> tuple[str, Callable[[str], str]] | None:
    """For a trace read without the definitions: the namespace of the run's workflow (of a
    catalog call's tool), and a namer writing its terms as ``:local``, every other IRI as
    ``<IRI>``; None when the header names neither (a ``serve`` trace's runs are many)."""
    named = header.get("call") or header.get("workflow")
    if not isinstance(named, str) or iri_problem(named) is not None:
        return None
    ns = split_iri(named)[0]
    if not ns or ns == named:
        return None

    def name(iri: str) -> str:
        local = iri[len(ns) :] if iri.startswith(ns) else ""
        return f":{local}" if _LOCAL_NAME.fullmatch(local) else bracketed(iri)

    return ns, name


Held = Callable[[Mapping[str, Any], Mapping[str, Any]], list[str]]
"""What a caller with the definitions says a step left held in doubt: given the run's header and
the step's event, the words of each call held (:func:`timeline`'s ``held``)."""


def timeline(
    events: Iterable[Mapping[str, Any]],
    source: str = "the trace",
    name: Callable[[str], str] = bracketed,
    held: Held | None = None,
    first_step: Callable[[str], str | None] | None = None,
) -> Iterator[str]:
    """One line per event worth reading: the run, each instance, each step, the end; each
    given as its event is read, every IRI as ``name`` gives it (the definitions' CURIE, or
    ``<IRI>``). Under a step, indented, what a reviewer asks of it that its line cannot
    hold: the gate's messages, failed attempts, receipts, the onError edge, a proposal's
    ranking, an approval; of a trace that stops, the instances it left mid-step; and, with
    ``held`` (which needs the definitions: a trace does not record whether a tool is
    idempotent), the calls a step left held in doubt; with ``first_step`` (a workflow's IRI:
    the name of its first step, which the definitions say), the step an instance cut short
    before its first step's event was at. An event whose values are of shapes no
    run writes is a :class:`~horismos.TraceError` (:func:`~horismos._event_shape.reading`)."""
    kind = None
    header: Mapping[str, Any] = {}
    store = None  # where the run's world was kept, as its header says
    running: dict[str, tuple[str | None, str | None]] = {}  # instance: its focus, its step
    began: dict[str, str] = {}  # an instance this run started: its workflow
    calling = None  # a catalog call's tool, until an event says how the call went
    short_names = name is bracketed  # no definitions: the header's namespace as ``:``
    for index, e in enumerate(events):
        kind = e.get("type")
        said: list[str] = []
        if kind == "header":
            header, store = e, e.get("store")
            calling = e.get("call")
            derived = _header_names(e) if short_names else None
            if derived is not None:
                ns, name = derived
                said = [
                    f"  : is <{ns}>, the namespace of its {'tool' if calling else 'workflow'} "
                    "(give the definitions to name every term by their prefixes)"
                ]
        elif kind in ("step", "refused", "replayed"):
            calling = None
        with reading(e, index, source):
            doubts = held(header, e) if held is not None and kind == "step" else []
            lines = _event_lines(e, name, doubts)
            lines[1:1] = said
            _follow(e, running, name)
            if kind == "instance" and "continued_at" not in e:
                began[str(e.get("instance"))] = str(e.get("workflow"))
        yield from lines
        if kind == "stopped":  # another writer moved on: the instances it left mid-step
            for instance, (focus, at) in running.items():
                yield (
                    f"  instance {short(instance)[:8]}"
                    + (f" for {focus}" if focus else "")
                    + (f" was at {at}" if at else " was at its first step")
                    + ": what that step did is not in the trace (nothing of it landed), and a"
                    " call it sent may have acted; " + _where_to_look(store)
                )
    if kind is not None and kind != "end":
        yield "no end event: the recording stopped here (its process died, or the file was cut)"
        for instance, (focus, at) in running.items():
            yield (
                f"  instance {short(instance)[:8]}"
                + (f" for {focus}" if focus else "")
                + " was still running"
                + (f", at {at}" if at else _first_step(began.get(instance), name, first_step))
                + ": what that step did is not in the trace, and a call it sent may have acted; "
                + _where_to_look(store)
            )
        if calling is not None:  # a `tools call` killed mid-call: "no end event" was all
            yield (
                f"  the call of {name(str(calling))} was being made: what it did is not in the "
                "trace, and it may have acted; " + _call_held(store)
            )


def _first_step(
    workflow: str | None,
    name: Callable[[str], str],
    first_step: Callable[[str], str | None] | None,
) -> str:
    """Where an instance a stopped trace left before its first step's event was: that step
    by name when the definitions say it, else the first step of its workflow. The line said
    "at its first step", and a reviewer had to open the workflow to learn which step that
    was, the one whose call may have acted."""
    step = first_step(workflow) if first_step is not None and workflow is not None else None
    if step is not None:
        return f", at {step} (its first step)"
    if workflow is not None:
        return f", at the first step of {name(workflow)}"
    return ", at its first step"


def _call_held(store: object) -> str:
    """Where a reviewer finds a catalog call a stopped trace left mid-call: held in doubt
    in the store named, if it outlives the process (a call's trace from before its header
    named the store says where to look)."""
    if store is None:
        return (
            "a store that outlives its process holds it in doubt: `horismos instances --store "
            "STORE` lists it"
        )
    if isinstance(store, str) and outlives_process(store):
        return f"`horismos instances --store {store}` lists it, held in doubt"
    return _where_to_look(store)


def _where_to_look(store: object) -> str:
    """Where a reviewer finds what became of an instance a stopped trace left mid-step: the
    store the run kept its world in, which holds the instance and any call it left in doubt;
    or, for a world the process kept in memory, that it went with the process."""
    if isinstance(store, str) and outlives_process(store):
        return (
            f"`horismos instances --store {store}` lists it, and a run again on that store "
            "says whether its call is held in doubt"
        )
    return (
        f"the run kept its world in memory ({store}), which went with its process, so "
        "nothing holds that call in doubt: check with the system its tool acts on before "
        "running it again"
    )


def _follow(
    e: Mapping[str, Any],
    running: dict[str, tuple[str | None, str | None]],
    name: Callable[[str], str],
) -> None:
    """Keep ``running`` (the instances that go on past the events read so far: each one's
    focus, when the trace says it, and the step it was at) up to date with event ``e``, so
    that of a trace cut short the timeline says which instances were mid-step."""
    kind, instance = e.get("type"), e.get("instance")
    if not isinstance(instance, str):
        return
    focus = running.get(instance, (None, None))[0]
    if kind == "instance":
        step = e.get("step") if "continued_at" in e else None
        running[instance] = (name(str(e.get("focus"))), name(str(step)) if step else None)
    elif kind == "resume":  # a resume's trace names no focus: its instance was left before
        running[instance] = (focus, name(str(e.get("step"))))
    elif kind == "step":
        if instance_status(e) == "running":
            running[instance] = (focus, name(str(e["next"])) if e.get("next") else None)
        else:
            running.pop(instance, None)


def _event_lines(
    e: Mapping[str, Any], name: Callable[[str], str], doubts: list[str] | None = None
) -> list[str]:
    """The timeline's lines of one event; a step's ``doubts`` (the calls it left held in
    doubt) under its gate's messages, as ``run`` printed them."""
    kind = e.get("type")
    if kind == "header":  # of a run, or of one call of ``tools call`` (its ``call``)
        what = (
            f"catalog call of {name(e['call'])} ({_caller(e)})"
            if "call" in e
            # refused before its store was opened, so before its instance was read
            else f"resume of instance {e['instance']}"
            + (f" of {name(str(e['workflow']))}" if e.get("workflow") else "")
            if e.get("instance")
            else f"run of {name(str(e.get('workflow')))} for "
            f"{len(e.get('focus') or [])} focus node(s)"
            if e.get("workflow")
            else "run of no workflow read (its store was never opened)"
        )
        lent = e.get("lent")  # quads lent the store for the call: in its world digest
        return [
            f"{what}, recorded {e.get('started', '?')} (trace_version {e.get('trace_version')})",
            (
                f"  world {e['world_digest']}"
                + (f" (with {lent} quads of --world lent for the call)" if lent else "")
                if e.get("world_digest")
                else "  world digest not recorded"
                + (
                    f": {e['store']} is a world other processes write meanwhile"
                    # a store on disk one process opens at a time: its digest is recorded
                    # by every run but one refused before it opened it (another held it)
                    if str(e.get("store") or "").startswith("sparql:")
                    else ""
                )
            ),
            f"  definitions {e.get('definitions_digest')}",
            *_process_lines(e),
            *_policy_lines(e),
        ]
    if kind == "taken_back":  # the call kept nothing: the quads lent for it left the store
        return [
            f"taken back: {e.get('quads')} quads lent for the call",
            f"  world {e.get('world_digest')}",
        ]
    if kind == "instance":
        line = f"instance {short(e.get('instance'))[:8]} for {name(str(e.get('focus')))}"
        if "continued_at" in e:  # left by another process: where this run took it up
            at = name(str(e["step"])) if e.get("step") else "its end"
            status = f" ({e['status']})" if e.get("status") else ""
            line += f", continued at {at}{status}"
        return [line]
    if kind == "resume":  # a wait answered: by which facts (none: woken by time or rule)
        facts = e.get("facts") or []
        who = f" (given by {e['operator']})" if facts and e.get("operator") else ""
        return [
            f"resume of instance {short(e.get('instance'))[:8]} at {name(str(e.get('step')))}"
            + (f", answered{who} by:" if facts else ", with no facts")
        ] + [f"    {_named_terms(str(f), name)}" for f in facts]
    if kind == "stopped":  # another writer moved the instance on, or took the claims
        by = f" (the focus is held by process {e['holder']})" if e.get("holder") else ""
        return [f"stopped: {e.get('kind')}: {e.get('message')}{by}"]
    if kind == "refused" and "tool" not in e:  # a run refused before its first step
        return [f"refused before its first step: {e.get('kind')}: {e.get('message')}"]
    if kind == "refused":  # a catalog call refused before any call: why
        return [f"  refused {name(str(e.get('tool')))}: {e.get('kind')}: {e.get('message')}"]
    if kind == "replayed":  # a catalog call answered again under its idempotency key
        return [
            f"  replayed {name(str(e.get('tool')))}: answered as the call first made with its"
            f" idempotency key {e.get('key')} ({e.get('first_started')}), not called"
        ]
    if kind == "step":
        return [
            "  " + _step_line(e, name),
            *_retried_lines(e),
            *_gate_lines(e, name),
            *(f"    held in doubt: {said}" for said in doubts or ()),
            *_routed_lines(e, name),
            *_proposal_lines(e, name),
            *_approval_lines(e),
        ]
    if kind == "end":  # ``instances``: how many ended each way (a call's has none)
        counts = e.get("instances") or {}
        shown = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        lines = [
            f"end: {e.get('status')} ({shown or 'no instances'})"
            if "instances" in e
            else f"end: {e.get('status')}"
        ]
        if e.get("world_digest"):
            lines.append(f"  world {e.get('world_digest')}")
        return lines
    return [f"{kind} (event {e.get('seq')})"]


def _caller(header: Mapping[str, Any]) -> str:
    """What made a catalog call, as its header records the process: the command (``tools
    call``, ``serve``: its lane) or a Python program (a host and no lane). Every call's trace
    said "(horismos tools call)", a served call's and ``catalog.call``'s too, under a "ran
    by process serve@…" line. A trace of a build before the process was recorded says
    neither, and was made by one of the two commands."""
    lane = header.get("lane")
    if lane:
        return f"horismos {lane}"
    if header.get("host") is not None:
        return "catalog.call from Python"
    return "horismos tools call or serve"


def _process_lines(header: Mapping[str, Any]) -> list[str]:
    """The process that wrote the trace (``lane@host:pid``): of two traces of one event
    delivered twice, which process ran which. None for a trace recorded before it was."""
    said = started_by_text(header.get("host"), header.get("pid"), header.get("lane"))
    return [f"  ran by process {said}"] if said else []


def _policy_lines(header: Mapping[str, Any]) -> list[str]:
    """The side-effect classes the run allowed (``--allow``): a step blocked by the policy in
    one trace and called in the next differ by it, and the timeline did not say it."""
    policy = header.get("policy")
    allow = policy.get("allow") if isinstance(policy, Mapping) else None
    if not isinstance(allow, list):
        return []
    return ["  policy allows " + (", ".join(str(a) for a in allow) or "nothing")]


def _step_line(e: Mapping[str, Any], name: Callable[[str], str]) -> str:
    clock = e.get("clock") or []
    when = _time_of_day(clock[0]) if clock else " " * 12
    took = sum((e.get("timings") or {}).values()) * 1000
    # a catalog call's step is the call itself (``urn:horismos:call:ID``), which no definitions
    # name: by its short id, as ``instances`` names an instance, not as a whole IRI beside the
    # tool's CURIE
    step = str(e.get("step"))
    what = f"call {short(step)[:8]}" if e.get("kind") == "ToolCall" else name(step)
    if e.get("tool"):
        tool = name(e["tool"])
        what += "  " + (
            "; ".join(
                f"{tool}(" + ", ".join(f"{k}={_value(v, name)}" for k, v in c.items()) + ")"
                for c in e.get("args") or []
            )
            or tool
        )
    status = e.get("status", "?")
    if status == "blocked":
        failing = " ".join(str((e.get("precondition") or {}).get("failing") or "").split())
        # no failing pattern: the policy, a call in doubt or a shape broken already blocked
        # it, which its error says; the line said "blocked:" and nothing more
        verdict = f"blocked: {failing}" if failing else f"blocked{_error(e)}"
    elif e.get("kind") == "DecisionStep":
        verdict = f"{status} -> {name(e['next']) if e.get('next') else 'end'}"
    elif e.get("kind") == "ProposalStep" and e.get("proposal"):
        d = e["proposal"]
        chose = (
            f"chose {_value(d['choice'], name)}"
            if d.get("choice")
            else "no choice: " + str(d.get("outcome")).replace("_", " ")
        )
        conf = f" (confidence {d['confidence']})" if d.get("confidence") is not None else ""
        verdict = f"{chose}{conf} -> {name(e['next']) if e.get('next') else 'end'}"
    elif e.get("kind") == "WaitStep" and e.get("wait"):
        d = e["wait"]
        verdict = f"{d.get('outcome', status)}" + (f": {d['reason']}" if d.get("reason") else "")
    elif status == "waiting" and e.get("approval"):  # an ActionStep's payload to approve
        verdict = "waiting for approval"
    elif status == "completed":
        verdict = "gate ok  completed"
    elif status == "rejected":
        verdict = "gate rejected: " + "; ".join(
            m.get("message", "") for m in (e.get("gate") or {}).get("messages", [])
        )
    else:
        verdict = f"{status}{_error(e)}"
    return f"{when}  {what}  {verdict}  {took:.1f} ms"


def _error(e: Mapping[str, Any]) -> str:
    """A step's recorded error as its line ends: `` (kind): message``. The kind
    (``outcome_unknown``, ``tool_error``, ``policy``, ...) is what tells a call held in doubt
    from a tool that raised, and what a handler of the instance read back matches on; the
    timeline printed the words alone."""
    error = e.get("error") or {}
    kind = f" ({error['kind']})" if error.get("kind") else ""
    return f"{kind}: {error.get('message', '')}"


def _routed_lines(e: Mapping[str, Any], name: Callable[[str], str]) -> list[str]:
    """What ``run`` printed under a step and the timeline left out: an adapter commit's
    receipts (each effect's remote outcome, which says what the system of record kept), and
    the ``horis:onError`` edge a failed step took."""
    lines = []
    receipts = e.get("receipts")
    if isinstance(receipts, list) and receipts:
        lines.append(
            "    remote: "
            + "; ".join(
                f"{r.get('ref')} {r.get('outcome')}"
                + (f" (version {r['version']})" if r.get("version") else "")
                for r in receipts
                if isinstance(r, Mapping)
            )
        )
    if e.get("error") and e.get("next") and e.get("kind") == "ActionStep":
        lines.append(f"    onError -> {name(str(e['next']))}")
    return lines


def _approval_lines(e: Mapping[str, Any]) -> list[str]:
    """An approval a step waits for (each payload and its fingerprint, which `approve`
    takes), or the approved payloads a step called its tool on, with who approved each and
    when: the timeline said "waiting:" and nothing more, and of the call made once approved,
    not that it was approved, nor (before ``approved``) by whom."""
    asked = e.get("approval")
    if e.get("status") == "waiting" and isinstance(asked, Mapping):
        prints = asked.get("fingerprints") or []
        payloads = asked.get("payloads") or []
        return [
            f"    payload {json.dumps(p, sort_keys=True)}: fingerprint {f}"
            for f, p in zip(prints, payloads, strict=False)
        ]
    if e.get("status") in ("blocked", "waiting"):
        return []
    approved = e.get("approved")  # who approved each, and when (a trace recorded before: none)
    if isinstance(approved, list) and approved:
        return [
            f"    called on approval: fingerprint {a.get('fingerprint')}, approved by "
            f"{a.get('by') or 'nobody named'} at {a.get('at') or 'an unrecorded time'}"
            for a in approved
            if isinstance(a, Mapping)
        ]
    used = (e.get("policy") or {}).get("approvals")
    if isinstance(used, list) and used:
        return [f"    called on approval: fingerprint {', '.join(map(str, used))}"]
    return []


def _proposal_lines(e: Mapping[str, Any], name: Callable[[str], str]) -> list[str]:
    """A proposal's ranking, against its threshold, and the candidates its conditions
    dropped: the timeline gave the choice and its confidence alone, so a reviewer asking why
    a flight was chosen, or why a person was asked, could not see what it was chosen over."""
    d = e.get("proposal")
    if e.get("kind") != "ProposalStep" or not isinstance(d, Mapping):
        return []
    lines = []
    ranking = d.get("ranking")
    if isinstance(ranking, list) and ranking:
        by = f" by {d['rank_by']}" if d.get("rank_by") else ""
        at = d.get("threshold")
        threshold = f" (horis:confidence {at})" if at is not None else ""
        lines.append(
            f"    {d.get('model', 'the model')} ranked{by}: "
            + ", ".join(_value(str(r), name) for r in ranking)
            + threshold
        )
    for dropped in d.get("dropped") or []:
        if isinstance(dropped, Mapping):
            failing = " ".join(str(dropped.get("failing") or "").split())
            lines.append(
                f"    dropped {_value(str(dropped.get('node')), name)}"
                + (f": this does not hold of it: {failing}" if failing else "")
            )
    return lines


def _retried_lines(e: Mapping[str, Any]) -> list[str]:
    """A retried step's attempts that did not answer, one a line: a step that completed on
    its second attempt read as one clean call, the pager's first failure nowhere but in the
    JSON."""
    outcomes = e.get("outcomes") or []
    calls = len(e.get("args") or []) or 1
    if not isinstance(outcomes, list) or e.get("attempts", 0) <= calls:
        return []
    return [
        f"    attempt {n} of {len(outcomes)}: {_outcome(o)}"
        for n, o in enumerate(outcomes, 1)
        if isinstance(o, Mapping) and "returned" not in o
    ]


def _outcome(o: Mapping[str, Any]) -> str:
    """A tool outcome that was not an answer, as a reviewer reads it: what was raised, and
    how far the call got (never sent, or sent and never answered)."""
    how = (
        " (never sent)"
        if o.get("sent") is False
        else " (sent, no answer)"
        if o.get("answered") is False
        else ""
    )
    if o.get("timeout"):
        return "timed out" + how
    return f"{o.get('error', 'failed')}: {o.get('message', '')}{how}"


def _gate_lines(e: Mapping[str, Any], name: Callable[[str], str]) -> list[str]:
    """A rejected step's gate messages, one a line, with the focus node, the path and the
    value refused, as ``run`` printed them: the summary line gives the messages' text alone,
    and a reviewer needs which node and what value the tool sent back."""
    if e.get("status") != "rejected":
        return []
    lines = []
    for m in (e.get("gate") or {}).get("messages", []):
        where = " ".join(str(m[k]) for k in ("focus", "path") if m.get(k))
        value = f" (value: {_named_terms(str(m['value']), name)})" if m.get("value") else ""
        lines.append(f"    {where + ': ' if where else ''}{m.get('message', '')}{value}")
    return lines


_TERM = re.compile(r'("(?:[^"\\]|\\.)*")(?:\^\^<([^>]*)>|(@[A-Za-z0-9-]+))?|<([^>]*)>')
"""A literal (its datatype IRI or language tag apart) or an IRI, in a fact as the trace
records it."""


def _named_terms(fact: str, name: Callable[[str], str]) -> str:
    """An N-Triples fact with its IRIs (a literal's datatype too) as ``name`` gives them."""

    def named(m: re.Match[str]) -> str:
        if m.group(4) is not None:
            return name(m.group(4))
        text, datatype, tag = m.group(1, 2, 3)
        return text + (f"^^{name(datatype)}" if datatype else tag or "")

    return _TERM.sub(named, fact)


Expand = Callable[[str], "URIRef | None"]
"""The IRI a name recorded in a gate message stands for (``:patient42``, ``<IRI>``), or None
when it cannot be told: the trace records names as the run wrote them, with the definitions'
prefixes, and no prefixes."""


def prov_turtle(
    events: Iterable[Mapping[str, Any]],
    source: str = "the trace",
    expand: Expand | None = None,
) -> Iterator[str]:
    """The run as PROV-O Turtle, a piece per event as it is read: a ``prov:Activity`` per
    step, with its plan, what it used, when, the effect graph it generated, and, where the
    gate refused what a tool returned, the gate's report (:func:`_gate_triples`). Nothing but
    each instance's last activity and status is held, so a long run's export costs what one
    event does, not an rdflib graph of all of them (~1 KB a triple). ``expand``: how the
    gate messages' names are read back as IRIs (the definitions', when given)."""
    yield "".join(f"@prefix {p}: <{ns}> .\n" for p, ns in _PREFIXES) + "\n"
    last: dict[str, URIRef] = {}
    ended: dict[str, URIRef | None] = {}  # each instance's status, by how its last step left it
    said: set[tuple[Node, Node, Node]] = set()  # each plan's and agent's type, said once
    for index, e in enumerate(events):
        with reading(e, index, source):
            triples = _prov_triples(e, last, ended, said, expand)
        if triples:
            yield _turtle(triples)


def _prov_triples(
    e: Mapping[str, Any],
    last: dict[str, URIRef],
    ended: dict[str, URIRef | None],
    said: set[tuple[Node, Node, Node]],
    expand: Expand | None = None,
) -> list[tuple[Node, Node, Node]]:
    """What one event says in PROV-O; ``last``, ``ended`` and ``said`` carried from event to
    event (see :func:`prov_turtle`)."""
    kind = e.get("type")
    triples: list[tuple[Node, Node, Node]] = []
    if kind == "instance":
        inst = _iri(e["instance"])
        triples += [
            (inst, RDF.type, HORIS.Instance),
            (inst, HORIS.workflow, _iri(e["workflow"])),
            (inst, HORIS.focus, _iri(e["focus"])),
        ]
    elif kind == "step":
        act = _activity(e)
        for t in _step_triples(act, e, expand):
            if t[2] not in _SAID_ONCE or t not in said:
                triples.append(t)
                if t[2] in _SAID_ONCE:
                    said.add(t)
        prev = last.get(e["instance"])
        if prev is not None:
            triples.append((act, PROV.wasInformedBy, prev))
        last[e["instance"]] = act
        ended[e["instance"]] = _STATUS.get(instance_status(e))  # None: it goes on
    elif kind == "resume" and e.get("graph"):  # a person's answer to a wait: facts landed
        triples += _answer_triples(e, last.get(e["instance"]))
        last[e["instance"]] = cast(URIRef, triples[0][0])  # the answer's activity
    elif kind == "end":  # its ``instances`` counts statuses; each one's is its last step's
        triples += [
            (URIRef(instance), HORIS.status, left)
            for instance, left in ended.items()
            if left is not None
        ]
    return triples


_PREFIXES = (
    ("prov", str(PROV)),
    ("horis", str(HORIS)),
    ("rdfs", str(RDFS)),
    ("xsd", str(XSD)),
    ("sh", str(SH)),
)
_SAID_ONCE = frozenset({PROV.Plan, PROV.SoftwareAgent})
"""The types of a step's plan and agent, the same every time it runs."""
_CURIE = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def _iri(text: object) -> URIRef:
    """An IRI the trace names, as a term; a ValueError for text no IRI is (an edited trace's,
    which :func:`~horismos._event_shape.reading` reports), which Turtle could not write."""
    if not isinstance(text, str) or iri_problem(text) is not None:
        raise ValueError(f"{str(text)[:60]!r} is not an IRI")
    return URIRef(text)


def _turtle(triples: list[tuple[Node, Node, Node]]) -> str:
    """``triples`` as Turtle statements, a subject's together, with the export's prefixes."""
    by_subject: dict[Node, dict[Node, list[Node]]] = {}
    for s, p, o in triples:
        by_subject.setdefault(s, {}).setdefault(p, []).append(o)
    return "".join(
        _term(s)
        + " "
        + " ;\n    ".join(
            ("a" if p == RDF.type else _term(p)) + " " + " , ".join(map(_term, objects))
            for p, objects in edges.items()
        )
        + " .\n\n"
        for s, edges in by_subject.items()
    )


def _term(t: Node) -> str:
    """A term as Turtle writes it: a CURIE of the export's prefixes where one reads back as
    the IRI, else rdflib's N-Triples form (escaped as that must be)."""
    if isinstance(t, URIRef):
        for prefix, ns in _PREFIXES:
            if t.startswith(ns) and _CURIE.fullmatch(t[len(ns) :]):
                return f"{prefix}:{t[len(ns) :]}"
    elif isinstance(t, Literal) and t.datatype == XSD.dateTime and t.language is None:
        return Literal(str(t)).n3() + "^^xsd:dateTime"
    return t.n3()


_RECORD = re.compile(r"^urn:horismos:[a-z]+:(?!.*:)")
"""A step's record in the world: ``urn:horismos:<kind>:<id>`` (an effect, a wait, a person's
input, a proposal, an approval request), generated by ``urn:horismos:activity:<id>``."""


def _activity(e: Mapping[str, Any]) -> URIRef:
    if e.get("graph"):
        # the IRI the runner gave the activity in the world's own provenance; a wait's graph
        # kept its own name, and the export said the wait generated itself
        return _iri(_RECORD.sub("urn:horismos:activity:", str(e["graph"]), count=1))
    inst = str(e["instance"]).rsplit(":", 1)[-1]
    return _iri(f"urn:horismos:activity:{inst}-{e.get('seq')}")


def _step_triples(
    act: URIRef, e: Mapping[str, Any], expand: Expand | None = None
) -> list[tuple[Node, Node, Node]]:
    """What a step event says in PROV-O of its activity ``act``."""
    triples: list[tuple[Node, Node, Node]] = []
    add = triples.append
    step, status = _iri(e["step"]), e.get("status", "failed")
    agent = _iri(e["tool"]) if e.get("tool") else RUNTIME
    add((act, RDF.type, PROV.Activity))
    add((act, RDF.type, HORIS.StepExecution))
    add((act, RDFS.label, Literal(f"{short(step)}: {status}")))
    add((act, HORIS.step, step))
    add((act, HORIS.instance, _iri(e["instance"])))
    add((step, RDF.type, PROV.Plan))
    add((agent, RDF.type, PROV.SoftwareAgent))
    if e.get("tool"):
        add((act, HORIS.tool, agent))
    add((act, PROV.wasAssociatedWith, agent))
    assoc = BNode()
    add((act, PROV.qualifiedAssociation, assoc))
    add((assoc, RDF.type, PROV.Association))
    add((assoc, PROV.agent, agent))
    add((assoc, PROV.hadPlan, step))
    for call in e.get("args") or []:
        for name, text in call.items():
            triples += _usage(act, name, cast("Node | None", from_n3(text)))
    clock = e.get("clock") or []
    if clock:
        add((act, PROV.startedAtTime, Literal(clock[0], datatype=XSD.dateTime)))
        add((act, PROV.endedAtTime, Literal(_ended(e, clock), datatype=XSD.dateTime)))
    if e.get("graph"):
        effect = _iri(e["graph"])
        add((act, PROV.generated, effect))
        add((effect, RDF.type, PROV.Entity))
        add((effect, PROV.wasGeneratedBy, act))
    if e.get("precondition", {}).get("failing"):
        add((act, HORIS.blockedBy, Literal(e["precondition"]["failing"])))
    if e.get("error"):
        add((act, HORIS.error, Literal(e["error"].get("message", ""))))
    triples += _gate_triples(act, e, expand)
    return triples


_AFTER_THE_OUTCOME = frozenset({"commit", "trace"})
"""A step's timings spent recording its outcome: after the moment a completed step's last
clock value (its effects' time) stands for, so left out of a failed step's end too."""


def _ended(e: Mapping[str, Any], clock: list[Any]) -> str:
    """When the step's activity ended: its last clock value when it took one after its start
    (a completed step stamps its effects), else its start plus the time it recorded spending
    (``timings``: preconditions, arguments, the tool's attempts, the gate). A failed,
    rejected, timed-out or blocked step takes no second clock value (a replay substitutes
    the recorded ones in order: one more would be a new trace version), and the export said
    it ended when it began, an activity of no duration where a tool had been waited on for
    seconds. A trace with no timings (an edited one) keeps its start."""
    if len(clock) > 1:
        return str(clock[-1])
    took = sum(
        v
        for k, v in (e.get("timings") or {}).items()
        if k not in _AFTER_THE_OUTCOME and isinstance(v, int | float) and not isinstance(v, bool)
    )
    try:
        began = dt.datetime.fromisoformat(str(clock[0]))
    except ValueError:
        return str(clock[0])
    return (began + dt.timedelta(seconds=took)).isoformat() if took > 0 else str(clock[0])


def _gate_triples(
    act: URIRef, e: Mapping[str, Any], expand: Expand | None
) -> list[tuple[Node, Node, Node]]:
    """The gate's verdict on what a step's tool returned, where it refused it: a SHACL
    ``sh:ValidationReport`` that the activity generated (a ``prov:Entity``), with one
    ``sh:ValidationResult`` per message: its focus node, path, value, message and shape, and
    the message as the run printed it (``rdfs:label``). The export carried only the error's
    one line, and a reviewer's PROV tools could not find what was refused, on which node.

    A name the trace records as a CURIE of the definitions' prefixes becomes an IRI through
    ``expand`` (the definitions, given); without them, one recorded as ``<IRI>`` does, and
    a CURIE whose local name is that of exactly one IRI among the step's arguments (the
    node an effect's subject is); any other is left to the label."""
    gate = e.get("gate")
    if not isinstance(gate, Mapping):
        return []
    messages = [m for m in gate.get("messages") or [] if isinstance(m, Mapping)]
    if gate.get("conforms", True) is not False and not messages:
        return []
    report = URIRef(f"{act}:gate")
    triples: list[tuple[Node, Node, Node]] = [
        (act, PROV.generated, report),
        (report, RDF.type, PROV.Entity),
        (report, RDF.type, SH.ValidationReport),
        (report, PROV.wasGeneratedBy, act),
        (report, SH.conforms, Literal(gate.get("conforms") is True)),
    ]
    named = _named_in(e)
    for m in messages:
        result = BNode()
        focus, path = m.get("focus"), m.get("path")
        said = f"{focus} {path}: " if path else f"{focus}: "
        triples += [
            (report, SH.result, result),
            (result, RDF.type, SH.ValidationResult),
            (result, SH.resultSeverity, SH.Violation),
            (result, SH.resultMessage, Literal(str(m.get("message", "")))),
            (result, RDFS.label, Literal(said + str(m.get("message", "")))),
        ]
        for key, prop in _NAMED_FIELDS:
            iri = _recorded_iri(m.get(key), expand, named)
            if iri is not None:
                triples.append((result, prop, iri))
        if isinstance(m.get("value"), str):
            triples.append((result, SH.value, _recorded_value(m["value"])))
    return triples


_NAMED_FIELDS = (("focus", SH.focusNode), ("path", SH.resultPath), ("shape", SH.sourceShape))
"""A gate message's fields that name a node, and the SHACL result's property for each."""


def _named_in(e: Mapping[str, Any]) -> dict[str, set[URIRef]]:
    """The IRIs among a step's arguments, by local name (:func:`_gate_triples`)."""
    named: dict[str, set[URIRef]] = {}
    for call in e.get("args") or []:
        if not isinstance(call, Mapping):
            continue
        for text in call.values():
            if isinstance(text, str) and text.startswith("<") and text.endswith(">"):
                iri = text[1:-1]
                if iri_problem(iri) is None:
                    named.setdefault(short(iri), set()).add(URIRef(iri))
    return named


def _recorded_iri(
    name: object, expand: Expand | None, named: Mapping[str, set[URIRef]]
) -> URIRef | None:
    """The IRI a gate message's recorded ``name`` stands for, or None (:func:`_gate_triples`)."""
    if not isinstance(name, str) or not name:
        return None
    if name.startswith("<") and name.endswith(">"):
        return URIRef(name[1:-1]) if iri_problem(name[1:-1]) is None else None
    if expand is not None:
        return expand(name)
    if ":" in name:
        found = named.get(name.split(":", 1)[1], set())
        return next(iter(found)) if len(found) == 1 else None
    return None


def _recorded_value(text: str) -> Node:
    """A gate message's value as recorded (N-Triples), as a term; text that is none (a value
    RDF cannot carry, shown as Python writes it) as a plain literal of that text."""
    try:
        term = from_n3(text)
    except Exception:  # rdflib raises what its parser meets: any is "not a term"
        return Literal(text)
    if isinstance(term, URIRef) and iri_problem(str(term)) is not None:
        return Literal(text)
    return term if isinstance(term, URIRef | Literal) else Literal(text)


def _answer_triples(e: Mapping[str, Any], wait: URIRef | None) -> list[tuple[Node, Node, Node]]:
    """A resume's answer as the world records it: the activity of the input graph's id, of
    human provenance, generating that graph, informed by the wait it answered. The export
    left it out, so the step after a wait seemed to follow the wait with nothing between."""
    graph = _iri(e["graph"])
    act = _iri(_RECORD.sub("urn:horismos:activity:", str(e["graph"]), count=1))
    step = _iri(e["step"])
    triples: list[tuple[Node, Node, Node]] = [
        (act, RDF.type, PROV.Activity),
        (act, RDFS.label, Literal(f"answer to {short(step)}")),
        (act, HORIS.step, step),
        (act, HORIS.instance, _iri(e["instance"])),
        (act, HORIS.provenance, HORIS.HumanProvenance),
        (act, PROV.generated, graph),
        (graph, RDF.type, PROV.Entity),
        (graph, PROV.wasGeneratedBy, act),
    ]
    clock = e.get("clock") or []
    if clock:
        when = Literal(clock[0], datatype=XSD.dateTime)
        triples += [(act, PROV.startedAtTime, when), (act, PROV.endedAtTime, when)]
    if wait is not None:
        triples.append((act, PROV.wasInformedBy, wait))
    if e.get("operator"):  # who answered, as the world records it
        triples += person_triples(act, str(e["operator"]))
    return triples


def _usage(act: URIRef, name: str, value: Node | None) -> list[tuple[Node, Node, Node]]:
    """``prov:used`` the argument's node (a literal is wrapped in an entity with prov:value)."""
    triples: list[tuple[Node, Node, Node]] = []
    add = triples.append
    if isinstance(value, URIRef):
        entity: Node = value
    else:
        entity = BNode()
        add((entity, PROV.value, value if value is not None else Literal("")))
    add((entity, RDF.type, PROV.Entity))
    add((act, PROV.used, entity))
    usage = BNode()
    add((act, PROV.qualifiedUsage, usage))
    add((usage, RDF.type, PROV.Usage))
    add((usage, PROV.entity, entity))
    add((usage, HORIS.name, Literal(name)))
    return triples


def short(iri: Any) -> str:
    """The local name of an IRI (after ``#``, ``/`` or ``:``), for lines people read."""
    text = str(iri)
    for sep in ("#", "/", ":"):
        if sep in text:
            return text.rsplit(sep, 1)[-1] or text
    return text


def _value(n3: str, name: Callable[[str], str]) -> str:
    """An argument or choice as recorded (N3), its IRI as ``name`` gives it."""
    return name(n3[1:-1]) if n3.startswith("<") and n3.endswith(">") else n3


def _time_of_day(iso: str) -> str:
    try:
        return dt.datetime.fromisoformat(iso).strftime("%H:%M:%S.%f")[:-3]
    except ValueError:
        return iso
