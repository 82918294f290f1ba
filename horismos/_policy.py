"""One policy for every tool call, whether a workflow step or ``tools call`` makes it.

Two questions stand between a call and its binding, in this order:

1. **Policy** — is the tool's side-effect class (``horis:sideEffect``) among those the caller
   allows (``--allow``, ``allow=``; by default everything but ``ExternalCommit``)? If not, the
   call is refused with :class:`~horismos.PolicyRefused`: ``tools call`` exits refused, a step
   blocks its instance with that typed reason.
2. **Approval** — a tool with ``horis:requiresApproval true`` runs only with an approval of
   the exact payload: the SHA-256 fingerprint of the tool's IRI and the canonical JSON of its
   arguments (class-typed ones as full IRIs), the same fingerprint ``tools approve`` prints.
   ``tools call`` takes it as ``--approval``, only as ``tools approve`` issued it into the
   world (a one-time id after a dot, recorded by :func:`given_issue`), and the call uses it
   up: its use is recorded in the world
   (``urn:horismos:given:…``) in the commit that announces the call (or lands its effects),
   so a retry given the same approval is refused, in this process or another. A step
   without one stops its instance *waiting for approval*: the brief shows each payload and
   its fingerprint, the request is kept in the world (graph ``urn:horismos:approval:…``),
   ``horismos approve --instance … --fingerprint …``
   records a person's approval of one of them (``urn:horismos:input:…``, human provenance),
   and ``resume`` continues; the call uses the approval up (``prov:invalidatedAtTime``), so a
   loop back with the same payload waits again — a tool that is not idempotent in the commit
   announcing its call, before it is sent, so a process killed mid-call leaves it used. An
   approval holds for that instance and that payload only: if the world changed and the step
   would now send other arguments, it waits again for a new one.

The step's trace event records the policy in force and the fingerprints used (``policy``).
"""

from __future__ import annotations

import datetime as dt
import difflib
import hashlib
import json
import secrets
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from rdflib import RDF, RDFS, XSD, Literal, URIRef
from rdflib.term import Node

from ._bindings.code_identity import code_said
from ._bindings.mcp import servers_in_force
from ._bindings.wire import json_value
from ._errors import PolicyRefused, UsageError
from ._model import ActionStep, McpServer, Tool
from ._people import operator_name, person_triples
from ._stores import Change, Conflict, Store
from ._stores.base import INSTANCES, OWN
from ._stores.ox_terms import nt
from ._vocab import HORIS, NS, PROV

if TYPE_CHECKING:
    from ._definitions import Definitions
    from ._world import World

__all__ = [
    "DEFAULT_ALLOW",
    "SERVED_PREFIX",
    "SIDE_EFFECTS",
    "Pending",
    "Policy",
    "allowed",
    "approval_nodes",
    "approval_record_terms",
    "approve",
    "approvers",
    "canonical_json",
    "code_for",
    "code_stale",
    "fingerprint",
    "fresh_approval",
    "given_code",
    "given_issue",
    "given_issued",
    "given_keyed",
    "given_print",
    "given_used",
    "given_used_with",
    "holds_approval_record",
    "how_to_approve",
    "payload",
    "pending",
    "refusal",
    "server_of",
    "side_effect",
]

_NS = {"horis": NS, "prov": str(PROV), "rdfs": str(RDFS)}

SIDE_EFFECTS = ("ReadOnly", "HostStateWrite", "ExternalCommit")
"""The ``horis:SideEffectClass`` values, from least to most reach."""
DEFAULT_ALLOW = frozenset({"ReadOnly", "HostStateWrite"})
"""What a call may do unless the caller widens the policy: everything but ExternalCommit."""


_TIMES = "({n} calls of this payload: approve it {n} times)"
"""The brief's line under a fingerprint that several calls of a step send (a ``forEach``), for
the operator to read; :func:`approve` reads the count from ``horis:approvalsAsked``."""


def _asked(request: Mapping[str, Node], fp: str) -> int:
    """How many approvals of ``fp`` a request asks for, as it recorded them
    (``horis:approvalsAsked``). Not from its brief: that is prose for a person, and a change
    of its wording or a translation made ``approve`` count one where a ``forEach`` asked for
    several, or what a line that looked like the count said.

    A request recorded before the count was (a world or trace of an earlier build) asks for
    one: never more than it asked, since it lists the payload at all. A ``forEach`` that
    wanted more, once resumed with that one approval, asks again for the calls still
    lacking one, counted."""
    counts = request.get("counts")
    if counts is None:
        return 1
    return int(json.loads(str(counts)).get(fp, 1))


SERVED_PREFIX = "urn:horismos:served:"
"""The "instance" a served call's approval is kept under: this prefix and the fingerprint
(``horismos serve``, whose agents call again once an operator has approved)."""


def side_effect(tool: Tool) -> str:
    """ExternalCommit for a tool bound to a ``horis:Adapter``, whatever it declares (a
    ``horis:sideEffect horis:ReadOnly`` there let a default policy commit to the EHR; validate
    refuses it); else ``horis:sideEffect``'s local name; HostStateWrite for a tool with an
    effect or one that is not idempotent, else ReadOnly. A tool that is not idempotent acts
    when called, effect declared or not (it sends a message, starts a job): counted
    read-only, a ``--allow ReadOnly`` policy let it."""
    if tool.adapter is not None:
        return "ExternalCommit"
    if tool.side_effect is not None:
        return str(tool.side_effect)[len(str(HORIS)) :]
    return "HostStateWrite" if tool.effect is not None or not tool.idempotent else "ReadOnly"


def allowed(allow: Iterable[str] | str, said: str = "allow=") -> frozenset[str]:
    """Side-effect class names from ``"ReadOnly,HostStateWrite"`` or an iterable of them.
    ``said`` is how the caller wrote them, for the error: ``allow=`` in Python, ``--allow ``
    on the command line (whose users wrote no ``allow=``)."""
    given = (
        allow.split(",")
        if isinstance(allow, str)
        else list(allow)  # once: a generator is read only once
        if isinstance(allow, Iterable)
        else None
    )
    if given is None or not all(isinstance(n, str) for n in given):
        # allow=None (meaning the default?) was "'NoneType' object is not iterable"
        raise UsageError(
            f"{said}{allow!r}: give the side-effect classes to allow, a list of names or one "
            'string of them between commas ("ReadOnly,HostStateWrite" is the default: leave '
            "it out for that)"
        )
    names = [n.strip() for n in given]
    names = [n.removeprefix("horis:") for n in names if n]
    unknown = [n for n in names if n not in SIDE_EFFECTS]
    if unknown:
        meant = [difflib.get_close_matches(n, list(SIDE_EFFECTS), n=1) for n in unknown]
        raise UsageError(
            f"{said}{', '.join(unknown)}: a policy names side-effect classes: "
            + ", ".join(SIDE_EFFECTS)
            + "".join(f"; did you mean {m[0]}?" for m in meant if m)
        )
    return frozenset(names)


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, UTF-8 kept: equal values, equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def fingerprint(tool: URIRef | str, payload: Mapping[str, Any]) -> str:
    """The approval fingerprint: SHA-256 hex of the tool's IRI, a newline, and the canonical
    JSON of the normalized arguments (class-typed ones as full IRIs)."""
    return hashlib.sha256(f"{tool}\n{canonical_json(dict(payload))}".encode()).hexdigest()


@dataclass(frozen=True)
class Policy:
    """What a run or a call may do: side-effect classes allowed, and approvals given up front
    (fingerprints) besides those recorded in the world."""

    allow: frozenset[str] = DEFAULT_ALLOW
    approvals: frozenset[str] = frozenset()
    """Fingerprints whose approval the caller has used up already (a served call's)."""
    given: frozenset[str] = frozenset()
    """Approvals given on the command line (``--approval``): each allows the one call whose
    commit records its use (:func:`given_use`)."""

    def to_json(self) -> dict[str, Any]:
        return {"allow": sorted(self.allow)}


def fresh_approval(fp: str) -> str:
    """An approval of the payload whose fingerprint is ``fp``, for one call: ``fp``, a dot and
    an id of its own. The fingerprint alone approves one call too, once per world; the id lets
    a person approve the same payload again, each approval used up by the call it allows."""
    return f"{fp}.{secrets.token_hex(8)}"


def given_print(approval: str) -> str:
    """The fingerprint an approval given on the command line is of (before its id, if any)."""
    return approval.strip().lower().partition(".")[0]


_GIVEN = "urn:horismos:given:"
"""Where the records of approvals given on the command line are (:func:`_given_node`)."""


def _given_node(approval: str) -> URIRef:
    """Where the use of an approval given on the command line is recorded: named by the
    approval itself, so the second call given it finds the first's record by one look-up."""
    digest = hashlib.sha256(approval.strip().lower().encode()).hexdigest()[:32]
    return URIRef(f"{_GIVEN}{digest}")


def given_use(approval: str, at: Literal) -> list[tuple]:
    """The quads recording that a call used up ``approval`` at ``at``; the commit carrying
    them requires the ``horis:usedUp`` one absent (two processes never both use it). Only
    these two: the approval's node holds what it is already (:func:`given_issue`, which a
    call checks first), and a commit that names a stored quad again as added is counted
    twice in a ``sparql:`` store's digest (a runner's commit adds only new quads)."""
    node = _given_node(approval)
    return [
        (node, PROV.invalidatedAtTime, at, node),
        (node, HORIS.usedUp, Literal(True), node),
    ]


def given_issue(
    approval: str,
    tool: Tool,
    at: Literal,
    now: str,
    code: str | None = None,
    operator: str | None = None,
) -> list[tuple]:
    """The quads recording that ``tools approve`` issued ``approval`` (a person's, for
    ``tool``) at ``at``, in the node its use will be recorded at (:func:`given_use`): the
    command line's ``--approval`` is taken only when issued so, as a served call's approval
    is only one ``approve`` recorded. The approval text alone proved nothing: its fingerprint
    is public (any caller computes it) and its id any text after a dot. ``now``: the tool's
    :func:`implementation`, recorded as :func:`approve` records it, so the approval holds
    only while the tool is so defined (:func:`given_holds_for`). ``code``: the code behind
    it (:attr:`~._bindings.base.Binding.code`), when ``tools approve`` was given it
    (``--tools``): the approval then holds for that code alone (:func:`given_code`).
    ``operator``: who issues it (:func:`~._people.operator_name`)."""
    node = _given_node(approval)
    named = [(node, HORIS.code, Literal(code), node)] if code is not None else []
    return [
        *named,
        *((s, p, o, node) for s, p, o in person_triples(node, operator_name(operator))),
        (node, RDF.type, HORIS.Approval, node),
        (node, HORIS.fingerprint, Literal(given_print(approval)), node),
        (node, HORIS.tool, tool.iri, node),
        (node, HORIS.provenance, HORIS.HumanProvenance, node),
        (node, RDFS.label, Literal(f"approval of {tool.name} issued by tools approve"), node),
        (node, PROV.startedAtTime, at, node),
        (node, HORIS.implementation, Literal(now), node),
    ]


def how_to_approve(tool_name: str) -> str:
    """How a CLI caller gets an approval of one call, said the same in every refusal and in
    discovery: issued into the world the call will use, then passed as ``--approval``."""
    return (
        f"run `horismos tools approve {tool_name} FILE_OR_DIR… --args JSON --store S` (or "
        "`--world F --out F2`, then call with `--world F2`) with exactly these arguments, "
        "into the world the call uses, and pass what it prints as --approval"
    )


def given_issued(store: Store, approval: str) -> bool:
    """Whether ``tools approve`` issued ``approval`` in this world (:func:`given_issue`)."""
    node = _given_node(approval)
    issued = next(iter(store.objects(node, PROV.startedAtTime)), None)
    return issued is not None and Literal(given_print(approval)) in store.objects(
        node, HORIS.fingerprint
    )


def given_holds_for(store: Store, approval: str, tool: Tool, server: McpServer | None) -> bool:
    """Whether ``approval``, issued by ``tools approve``, holds for ``tool`` as it is defined
    now (``server``: the MCP server its binding names, :func:`server_of`): it was issued for
    this :func:`implementation`, or before approvals given on the command line recorded one
    (it holds, as one :func:`approve` recorded then does)."""
    issued_for = given_for(store, _given_node(approval))
    return issued_for is None or issued_for == implementation(tool, server)


def given_code(store: Store, approval: str) -> str | None:
    """The code ``approval`` (given on the command line) was issued for; None when ``tools
    approve`` named none (it was not given the code, or the binding names what it reaches):
    it holds whatever the code, as it did."""
    return code_for(store, _given_node(approval))


def code_stale(
    store: Store, tool: Tool, approval: str, code: Callable[[], str | None]
) -> str | None:
    """Why ``approval``, which ``tools approve`` issued, does not hold for a call whose
    binding runs ``code()`` (the same ``python:`` name, another ``--tools`` file, or this one
    edited), and what to do; None when it holds: issued naming no code (as before approvals
    named any), or for this code. Judged alike by the call that refuses it and by discovery,
    which lists the tool blocked rather than executable; ``code`` is asked only when the
    approval names one (resolving a binding may import its module)."""
    issued_for = given_code(store, approval)
    if issued_for is None:
        return None
    now = code()
    if now is None or now == issued_for:
        return None
    return (
        f"the approval given was issued for other code behind {tool.name}: "
        f"{code_said(issued_for)}, where this call runs {code_said(now)}; it does not hold "
        "for this code. Approve again with the --tools this call is given: "
        + how_to_approve(tool.name)
    )


def given_tool(store: Store, approval: str) -> Node | None:
    """The tool ``approval`` (given on the command line) was issued or used for."""
    return next(iter(store.objects(_given_node(approval), HORIS.tool)), None)


def holds_approval_record(quads: Iterable[tuple], held: frozenset[str] = frozenset()) -> bool:
    """Whether ``quads`` state any approval record: one ``tools approve`` issued or a call
    used up (:func:`given_issue`, :func:`given_use`), or a served call's (:func:`approve`).
    A call on a persistent store takes only the approvals the store held: world data given
    beside it that brought its own would approve the caller's call (the fingerprint is
    public, and the issuance record is a few triples anyone can write). ``held``: the
    approvals the store holds (:func:`approval_nodes`), of which the quads may say nothing
    either."""
    return any(
        approval_record_terms(str(q[0]), str(q[1]), str(q[2]), str(q[3]), held) for q in quads
    )


_TYPE, _APPROVAL = str(RDF.type), str(HORIS.Approval)


def approval_record_terms(
    s: str, p: str, o: str, g: str, held: frozenset[str] = frozenset()
) -> bool:
    """:func:`holds_approval_record` of one quad, given its terms' text (an IRI's, a literal's
    lexical form, a blank node's label; ``""`` for the default graph): a file can be scanned
    as it is parsed, its quads never made rdflib terms.

    A quad about an approval the store holds (``held``, its subject or its object) is one
    too: an approval is found by what its node says (``horis:instance``,
    ``horis:fingerprint``, the graph it was generated for), so two triples naming an unused
    approval given for another instance or payload — ``<approval> horis:instance <mine> ;
    horis:fingerprint "…"`` — approved the caller's call, no ``horis:Approval`` written."""
    return (
        s.startswith(_GIVEN)
        or g.startswith(_GIVEN)
        or s.startswith(_REQUESTS)
        or g.startswith(_REQUESTS)
        or (p == _TYPE and o == _APPROVAL)
        or (bool(held) and (s in held or o in held))
    )


_REQUESTS = "urn:horismos:approval:"
"""The graphs a request for approval is kept in (:meth:`Pending.quads`): what ``approve``
reads the payload it shows, the count it allows and the definition it binds to from."""


def approval_nodes(store: Store, among: Iterable[str]) -> frozenset[str]:
    """Those of the IRIs ``among`` (world data's subjects and objects) that name an approval
    ``store`` holds (a person's, a served call's, one ``tools approve`` issued) or a request
    for approval it keeps, for :func:`approval_record_terms`: every node with a
    ``horis:fingerprint`` but an idempotency key's. A request is as much the store's record
    as an approval: a second ``rdfs:comment`` on one made ``approve`` show a person another
    payload than the fingerprint approved (the call then sent the real one), and a second
    ``horis:approvalsAsked`` let more approvals be given than calls asked. The runtime names
    every such node under ``urn:horismos:``, so only those of ``among`` are asked about: what
    the data touches, never every approval the store ever held."""
    named = sorted({iri for iri in among if iri.startswith(OWN)})
    found: set[str] = set()
    for start in range(0, len(named), _ASKED_AT_ONCE):
        values = " ".join(nt(URIRef(iri)) for iri in named[start : start + _ASKED_AT_ONCE])
        rows = store.select(
            f"SELECT DISTINCT ?a WHERE {{ VALUES ?a {{ {values} }} ?a horis:fingerprint ?fp "
            "FILTER NOT EXISTS { ?a a horis:IdempotencyKey } }",
            {},
            _NS,
        )
        found.update(str(r["a"]) for r in rows)
    return frozenset(found)


_ASKED_AT_ONCE = 500  # IRIs in one query's VALUES


def given_used(store: Store, approval: str) -> str | None:
    """When a call used up ``approval`` (given on the command line), or None if none has."""
    at = next(iter(store.objects(_given_node(approval), PROV.invalidatedAtTime)), None)
    return None if at is None else str(at)


def given_keyed(use: Sequence[tuple], key: URIRef) -> list[tuple]:
    """The quads recording that the approval uses ``use`` (:func:`given_use`'s
    ``horis:usedUp`` quads) were made by the call given idempotency ``key`` (its node)."""
    return [(q[0], HORIS.usedWithKey, key, q[3]) for q in use]


def given_used_with(store: Store, approval: str, key: URIRef) -> bool:
    """Whether the call that used up ``approval`` was given the idempotency key whose node is
    ``key`` (:func:`given_keyed`)."""
    return key in store.objects(_given_node(approval), HORIS.usedWithKey)


def implementation(tool: Tool, server: McpServer | None = None) -> str:
    """What a call of ``tool`` does, as its definition says — its binding (and a command's
    argv, a request's headers, an adapter, the MCP ``server`` an ``mcp://`` binding names), its
    side-effect class, whether it is idempotent, the effect it writes — as a SHA-256 hex
    digest. An approval records it, and holds only while the tool is still so defined: a person
    who approved a dry run has not approved the same tool rebound to move money. The binding
    ``mcp://bank/charge`` says only which server by name: the server's command, arguments,
    environment and URL say what it reaches, so editing them rebinds the tool too. The
    fingerprint stays the payload's alone, as documented, so ``tools approve`` computes it
    without a world."""
    effect = tool.effect
    described = {
        "binding": tool.binding,
        "side_effect": side_effect(tool),
        "idempotent": tool.idempotent,
        "effect": None
        if effect is None
        else {
            "subject": effect.subject,
            # sorted: the order they are written in says nothing of what the call does, so
            # an approval outlives a file rearranged (and never depends on the parser's order)
            "asserts": sorted(
                (
                    [str(a.property), a.key, str(a.value), str(a.type), a.optional, a.many]
                    for a in effect.asserts
                ),
                key=repr,
            ),
            "shapes": sorted(str(s) for s in effect.shapes),
        },
        "command": None
        if tool.command is None
        else [
            list(tool.command.argv),
            tool.command.root,
            tool.command.workdir,
            sorted((list(e) for e in tool.command.env), key=repr),
        ],
        "headers": sorted(([h.name, h.env] for h in tool.headers), key=repr),
        "adapter": None if tool.adapter is None else [str(tool.adapter.iri), tool.adapter.base_url],
    }
    if server is not None:  # only then: the digests of tools bound elsewhere stay as they were
        described["mcp_server"] = [
            server.command,
            list(server.args),
            sorted((list(e) for e in server.env), key=repr),
            server.url,
        ]
    return hashlib.sha256(canonical_json(described).encode()).hexdigest()


def payload(tool: Tool, args: Mapping[str, Node]) -> dict[str, Any]:
    """The arguments as the approval fingerprint reads them: IRIs as strings, literals as JSON
    values — what ``tools approve NAME --args JSON`` normalizes the same call to."""
    return {
        name: str(v) if isinstance(v, URIRef) else _approved_value(cast(Literal, v).toPython())
        for name, v in args.items()
    }


def _approved_value(value: Any) -> Any:
    """A literal's value as a person approves it: its JSON value, except a decimal no JSON
    number of Python's holds (``100.000000000000001`` is the float ``100.0``), which is its exact
    text. Rounded, two amounts would share one payload and one fingerprint, and an approval of
    what the brief showed would let a call with another amount through."""
    if isinstance(value, Decimal) and value != value.to_integral_value():
        as_float = float(value)
        if Decimal(repr(as_float)) != value:
            return str(value)
        return as_float
    return json_value(value)


def refusal(policy: Policy, tool: Tool) -> PolicyRefused | None:
    """Why the policy refuses any call of ``tool``, or None."""
    side = side_effect(tool)
    if side in policy.allow:
        return None
    allowed = ", ".join(sorted(policy.allow)) or "nothing"
    return PolicyRefused(
        f"{tool.name} has side effect {side}, which the policy does not allow (allowed: "
        f"{allowed}); widen it with --allow {','.join(sorted(policy.allow | {side}))} "
        "(allow= in Python) if that is intended",
        side_effect=side,
        allowed=tuple(sorted(policy.allow)),
        tool=str(tool.iri),
    )


@dataclass(frozen=True)
class Pending:
    """A step's calls that need approval and have none: each payload with its fingerprint."""

    tool: Tool
    step: URIRef
    calls: tuple[tuple[dict[str, Any], str], ...]
    stale: bool = False
    """An approval of one of these payloads was given for an earlier definition of the tool."""
    bound: bool = True
    """The request records the tool's :func:`implementation` (a trace recorded before
    approvals were bound to it replays without)."""
    server: McpServer | None = None
    """The MCP server the tool's binding names, part of its :func:`implementation`."""
    counted: bool = True
    """The request records how many approvals each payload asks for (``horis:approvalsAsked``;
    a trace recorded before they were counted replays without)."""
    code: str | None = None
    """The code behind the tool now (:attr:`~._bindings.base.Binding.code`), which the request
    records and an approval of it is then held to; None where the definition says it."""
    other_code: str | None = None
    """The other code an approval of one of these payloads was given for, when it was."""
    lapsed: tuple[str, ...] = ()
    """The payloads (canonical JSON) of approvals at this step that lapsed as it asked for
    these: given for a request the step no longer makes (see :func:`pending`)."""

    def brief(
        self,
        name: Callable[[Node], str],
        instance: URIRef,
        workflow: URIRef,
        focus: URIRef,
        label: str = "",
    ) -> str:
        """What the approver is told; ``label``: the focus's rdfs:label, said beside it as
        the wait brief says it (an approver read ``:bob`` alone, where a wait said who)."""
        lines = [
            f"{self.tool.name} requires approval (horis:requiresApproval) of the exact "
            "payload before it is called.",
            *(
                [
                    f"An approval was given for an earlier definition of {self.tool.name} (its "
                    "binding, its MCP server, effect or side effect has changed since): it "
                    "does not hold for this one."
                ]
                if self.stale
                else []
            ),
            *(
                [
                    f"An approval was given for other code behind {self.tool.name}: the run "
                    f"that asked for it ran {code_said(self.other_code)}, this one runs "
                    f"{code_said(self.code)}. It does not hold for this code: approve again "
                    "below if this is the code to run, or resume with the code that was "
                    "approved (--tools)."
                ]
                if self.other_code is not None and self.code is not None
                else []
            ),
            *(
                f"An approval given for {shown} lapsed: {name(self.step)} no longer sends "
                "that payload, so it is not used should the step send it again; approve "
                "what it sends now."
                for shown in self.lapsed
            ),
            f"Instance {instance} ({name(workflow)} for {name(focus)}"
            f"{' — ' + label if label else ''}) waits at {name(self.step)} for approval.",
            *([f"Code: {code_said(self.code)}"] if self.code is not None else []),
        ]
        calls = Counter(fp for _, fp in self.calls)
        shown: dict[str, dict[str, Any]] = {}
        for body, fp in self.calls:
            shown.setdefault(fp, body)
        for fp, body in shown.items():
            lines.append(f"Payload: {canonical_json(body)}")
            lines.append(f"Fingerprint: {fp}")
            if calls[fp] > 1:
                lines.append(_TIMES.format(n=calls[fp]))
        lines.append(
            f"Approve with: horismos approve … --instance {instance} --fingerprint "
            f"{self.calls[0][1]}; then: horismos resume … --instance {instance}"
        )
        return "\n".join(lines)

    def quads(self, graph: URIRef, instance: URIRef, at: Literal, brief: str) -> list[tuple]:
        """The request as kept in the world, for ``approve`` to check a fingerprint against."""
        req = URIRef(str(graph).replace("urn:horismos:approval:", "urn:horismos:activity:"))
        triples: list[tuple[Node, Node, Node]] = [
            (graph, RDF.type, PROV.Entity),
            (graph, PROV.wasGeneratedBy, req),
            (req, RDF.type, HORIS.StepExecution),
            (req, RDF.type, PROV.Activity),
            (req, HORIS.instance, instance),
            (req, HORIS.step, self.step),
            (req, HORIS.tool, self.tool.iri),
            (req, PROV.startedAtTime, at),
            (req, HORIS.brief, Literal(brief)),
            (
                req,
                RDFS.comment,
                Literal(
                    json.dumps(
                        {fp: body for body, fp in self.calls}, sort_keys=True, ensure_ascii=False
                    )
                ),
            ),
            (req, RDFS.label, Literal(f"{self.step.fragment or self.step} waits for approval")),
        ]
        triples += [(req, HORIS.fingerprint, Literal(fp)) for _, fp in self.calls]
        if self.bound:
            triples.append(
                (req, HORIS.implementation, Literal(implementation(self.tool, self.server)))
            )
        if self.counted:
            asked = Counter(fp for _, fp in self.calls)
            triples.append((req, HORIS.approvalsAsked, Literal(json.dumps(asked, sort_keys=True))))
        if self.code is not None:
            triples.append((req, HORIS.code, Literal(self.code)))
        return [(s, p, o, graph) for s, p, o in triples]


def pending(
    policy: Policy,
    store: Store,
    instance: URIRef,
    step: ActionStep,
    tool: Tool,
    calls: Sequence[Mapping[str, Node]],
    at: Literal,
    bound: int = 3,
    servers: Mapping[str, McpServer] | None = None,
    code: str | None = None,
) -> tuple[list[str | None], Pending | None, list[tuple], list[tuple[str, Node]]]:
    """The fingerprint approving each call (None for a tool that needs none), the calls still
    waiting for an approval, if any, the quads that use up the recorded approvals these
    calls take (a person approves one call, so a loop that comes back with the same payload
    waits for a new approval instead of acting again), and those approvals: each
    fingerprint and the node recording who gave it (:func:`approvers`). ``bound``, as a
    trace's header says: 0, approvals hold whatever the tool's definition; 1, for its
    definition without its MCP server (a trace recorded before the server counted); 2, with
    it (``servers``); 3, and the request records how many approvals each payload asks for
    (before, a trace's did not); 4, and an approval not used yet at this step of a payload
    the step no longer sends lapses (``horis:lapsed``, used up with these quads): it
    answered a request the step has since superseded (the amount was 100, approved; the
    world changed it to 150, approved and charged), and a loop back to the old payload took
    it, a call nobody had approved then.
    ``code``: the code behind the tool now (:attr:`~._bindings.base.Binding.code`): an
    approval given for a request other code made does not hold (one recorded before
    approvals named the code holds, as it did)."""
    if not tool.requires_approval:
        return [None] * len(calls), None, [], []
    server = server_of(tool, servers or {}) if bound > 1 else None
    prints = [fingerprint(tool.iri, payload(tool, c)) for c in calls]
    recorded = _recorded(store, instance)
    stale, other = False, None
    if bound and recorded:  # only approvals of the tool as it is defined now (implementation)
        now = implementation(tool, server)
        for fp in set(prints) & recorded.keys():
            held = [g for g in recorded[fp] if given_for(store, g.approval) in (None, now)]
            stale = stale or len(held) < len(recorded[fp])
            if code is not None:  # and of the code behind it now, each asked once
                named = [(g, code_for(store, g.approval)) for g in held]
                other = next((was for _, was in reversed(named) if was not in (None, code)), other)
                held = [g for g, was in named if was in (None, code)]
            recorded[fp] = held
    lapse, lapsed = _lapsing(store, step.iri, recorded, set(prints), at) if bound > 3 else ([], ())
    missing, taking = [], Counter[str]()
    given = {given_print(a): a for a in policy.given}
    spent: list[tuple] = []
    taken: list[tuple[str, Node]] = []
    for c, fp in zip(calls, prints, strict=True):
        if fp in policy.approvals:
            continue
        if fp in given:  # one call each: a second call of the payload needs its own
            approval = given.pop(fp)
            spent += given_use(approval, at)
            taken.append((fp, _given_node(approval)))
            continue
        taking[fp] += 1  # a call each: calls of one payload in a forEach need one each
        if taking[fp] > len(recorded.get(fp, ())):
            missing.append((payload(tool, c), fp))
    if missing:
        pend = Pending(
            tool,
            step.iri,
            tuple(missing),
            stale,
            bound > 0,
            server,
            bound > 2,
            code,
            other,
            lapsed,
        )
        return list(prints), pend, lapse, []
    used = [
        (node, PROV.invalidatedAtTime, at, graph)
        for fp, n in taking.items()
        for node, graph, _ in recorded[fp][:n]
    ]
    taken += [(fp, g.approval) for fp, n in taking.items() for g in recorded[fp][:n]]
    return list(prints), None, used + spent + lapse, taken


def approvers(store: Store, taken: Sequence[tuple[str, Node]]) -> list[dict[str, Any]]:
    """Who gave each approval a call takes (``taken``, from :func:`pending`) and when: what
    the step's trace event says under ``approved``, so an incident's reviewer reads it there,
    not by looking each fingerprint up in the world. ``by`` is the operator's name as
    ``approve`` (``--operator``, ``operator=``) or ``tools approve`` recorded it, None for an
    approval recorded before either named one; ``at`` when it was given. Read only for a
    call made on approval, through :meth:`~horismos._stores.base.Store.noted`: a trace
    recorded before replays without these reads."""
    out = []
    for fp, node in taken:
        at = next(iter(store.noted(node, PROV.startedAtTime)), None)
        person = next(iter(store.noted(node, PROV.wasAssociatedWith)), None)
        name = next(iter(store.noted(person, RDFS.label)), None) if person is not None else None
        out.append(
            {
                "fingerprint": fp,
                "approval": str(node),
                "by": None if name is None else str(name),
                "at": None if at is None else str(at),
            }
        )
    return out


def _lapsing(
    store: Store, step: URIRef, recorded: Mapping[str, list[_Given]], prints: set[str], at: Literal
) -> tuple[list[tuple], tuple[str, ...]]:
    """The quads that let lapse the approvals not used yet that were given at ``step`` for a
    payload it no longer sends (``prints``: the fingerprints it sends now), and those
    payloads, as the brief shows them. Only approvals of other payloads are looked at (one
    look-up each for its step): none, the usual, costs nothing."""
    quads: list[tuple] = []
    shown: list[str] = []
    for fp in sorted(recorded.keys() - prints):
        for g in recorded[fp]:
            if next(iter(store.objects(g.approval, HORIS.step)), None) != step:
                continue  # another step's: it answers that step's request
            quads += [
                (g.approval, PROV.invalidatedAtTime, at, g.graph),
                (g.approval, HORIS.lapsed, Literal(True), g.graph),
            ]
            body = next(iter(store.objects(g.approval, RDFS.comment)), None)
            shown.append(str(body) if body is not None else f"fingerprint {fp}")
    return quads, tuple(dict.fromkeys(shown))


def server_of(tool: Tool, servers: Mapping[str, McpServer]) -> McpServer | None:
    """The MCP server ``tool``'s ``mcp://SERVER/…`` binding names, as declared (None for
    another binding, or a server nobody declares: such a call is refused before it is sent)."""
    address = tool.mcp_address
    return servers.get(address[0]) if address is not None else None


def code_for(store: Store, approval: Node) -> str | None:
    """The code an approval was given for (:attr:`~._bindings.base.Binding.code`, as the
    request it answered recorded it); None when it names none: the tool's definition says what
    it reaches, or it was recorded before approvals named the code (it holds, as it did)."""
    found = next(iter(store.objects(approval, HORIS.code)), None)
    return str(found) if found is not None else None


def given_for(store: Store, approval: Node) -> str | None:
    """The :func:`implementation` an approval was given for; None when it was recorded before
    approvals said (it holds, as it always did)."""
    found = next(iter(store.objects(approval, HORIS.implementation)), None)
    return str(found) if found is not None else None


class _Given(NamedTuple):
    """An approval recorded: its node, the graph it was recorded in, and whether a call has
    used it up (``prov:invalidatedAtTime``)."""

    approval: Node
    graph: Node
    used: bool


def _recorded(
    store: Store, instance: URIRef, since: Node | None = None, *, used: bool = False
) -> dict[str, list[_Given]]:
    """The approvals recorded for ``instance`` and not used yet (with ``used``, those used up
    too, so said), given at ``since`` or later: fingerprint -> approvals, oldest first."""
    # a run's reads are recorded by their query's text: the run's (not used) is kept as it was
    which, more = (
        ("OPTIONAL { ?a prov:invalidatedAtTime ?used }", " ?used")
        if used
        else ("FILTER NOT EXISTS { ?a prov:invalidatedAtTime ?used }", "")
    )
    rows = store.select(
        f"""SELECT ?a ?g ?fp ?at{more} WHERE {{
        ?a horis:instance ?i ; a horis:Approval ; horis:fingerprint ?fp ;
           prov:startedAtTime ?at .
        ?g prov:wasGeneratedBy ?a . {which} }} ORDER BY ?at ?a""",
        {"i": instance},
        _NS,
    )
    # one approval is one, however many graphs say they were generated by it: a second
    # `<g> prov:wasGeneratedBy <approval>` (in facts answering another instance's wait, say)
    # gave it a second row, and a forEach sending its payload twice made both calls on it
    found: dict[str, dict[Node, _Given]] = {}
    for r in rows:
        if since is None or _after(r["at"], since):
            given = found.setdefault(str(r["fp"]), {})
            held = given.get(r["a"])
            given[r["a"]] = (
                held._replace(graph=_own_graph(held.graph, r["g"]))
                if held is not None
                else _Given(r["a"], r["g"], r.get("used") is not None)
            )
    return {fp: list(given.values()) for fp, given in found.items()}


def _own_graph(held: Node, graph: Node) -> Node:
    """Of two graphs said to be generated by one approval, the one ``approve`` recorded it in
    (``urn:horismos:input:…``), where its use is recorded too."""
    if not str(held).startswith("urn:horismos:input:") and str(graph).startswith(
        "urn:horismos:input:"
    ):
        return graph
    return held


def approve(
    defs: Definitions,
    world: World,
    instance: URIRef,
    fp: str,
    servers: Mapping[str, McpServer] | None = None,
    operator: str | None = None,
) -> dict[str, Any]:
    """Record a person's approval of one payload an instance waits for; the payload.
    ``servers``: the MCP servers besides the definitions' (``Agent(mcp_servers=…)``);
    ``operator``: who approves (:func:`~._people.operator_name`), recorded as the approval's
    ``prov:wasAssociatedWith``.

    Raises :class:`UsageError` when the instance waits for no approval, or for none with that
    fingerprint (the message lists those it waits for).
    """
    fp = given_print(fp)  # what `tools approve` prints reads as its fingerprint too
    rows = _requests(world.store, instance)
    if not rows:
        raise UsageError(
            f"instance {instance} waits for no approval; only an instance whose "
            "step calls a tool with horis:requiresApproval true, stopped waiting "
            "for approval, can be approved"
        )
    latest = max(rows, key=lambda r: str(r["started"]))
    payloads: dict[str, Any] = json.loads(str(latest["payloads"]))
    if fp not in payloads:
        waiting = "; ".join(f"{k} for {canonical_json(v)}" for k, v in payloads.items())
        lapsed = _lapsed(world.store, instance, fp)
        raise UsageError(
            f"instance {instance} waits for no approval with fingerprint {fp}; "
            f"it waits for: {waiting}. An approval holds for one exact payload"
            + (
                f"; the approval of {fp} given at {lapsed} lapsed when "
                f"{defs.name(latest['step'])} asked for other payloads since: should it send "
                "that payload again, it asks for it again"
                if lapsed is not None
                else ""
            )
        )
    if fingerprint(str(latest["tool"]), payloads[fp]) != fp:
        # what is shown and recorded as approved is the request's payload: one whose
        # fingerprint is another's would have a person approve other arguments than the call
        # then sends (a request's record changed in the store since the runtime wrote it)
        raise UsageError(
            f"instance {instance}'s request for approval shows the payload "
            f"{canonical_json(payloads[fp])} under fingerprint {fp}, which is not that "
            "payload's: the store's record of the request was changed since it was made, so "
            "nothing is approved. Run the instance again from a world whose record is its own"
        )
    served = str(instance).startswith(SERVED_PREFIX)
    if not served and not _waits_at(world.store, instance, latest["step"]):
        # its request was answered: an approval recorded now would lie unused until the
        # workflow came back to the step, and let that call go out with nobody asked
        raise UsageError(
            f"instance {instance} is not waiting for approval now: the request at "
            f"{defs.name(latest['step'])} was answered and the instance went on. An approval "
            "is of the call a waiting instance asks for; should it come back to that step, it "
            "waits again with the payload's fingerprint: approve it then"
        )
    # the n-th approval of this payload given for this request has one name, so two given at
    # once (two operators, two processes) are one: the later commit finds it made and is
    # refused, where both landed and the spare one let a later call out that nobody approved
    since = _recorded(world.store, instance, latest["started"], used=True).get(fp, [])
    made = len(since)
    new_id = hashlib.sha256(f"{latest['request']} {fp} {made}".encode()).hexdigest()[:32]
    at = Literal(dt.datetime.now(dt.UTC).isoformat(), datatype=XSD.dateTime)
    graph = URIRef(f"urn:horismos:input:{new_id}")
    node = URIRef(f"urn:horismos:activity:{new_id}")
    triples: list[tuple[Node, Node, Node]] = [
        (graph, RDF.type, PROV.Entity),
        (graph, PROV.wasGeneratedBy, node),
        (node, RDF.type, HORIS.Approval),
        (node, RDF.type, PROV.Activity),
        (node, HORIS.instance, instance),
        (node, HORIS.step, latest["step"]),
        (node, HORIS.tool, latest["tool"]),
        (node, HORIS.fingerprint, Literal(fp)),
        (node, HORIS.provenance, HORIS.HumanProvenance),
        (node, PROV.startedAtTime, at),
        (node, PROV.endedAtTime, at),
        (node, RDFS.comment, Literal(canonical_json(payloads[fp]))),
        (node, RDFS.label, Literal(f"approval of {defs.name(latest['tool'])}")),
        *person_triples(node, approver := operator_name(operator)),
    ]
    code = latest.get("code")
    if code is not None:  # the code that asked: the approval holds for it alone
        triples.append((node, HORIS.code, code))
    approved = defs.tools.get(cast(URIRef, latest["tool"]))
    asked = latest.get("asked")
    if approved is not None:  # holds while the tool is so defined (see implementation)
        server = server_of(approved, servers_in_force(defs, servers))
        now = implementation(approved, server)
        if asked is not None and str(asked) != now:
            raise UsageError(
                f"{defs.name(latest['tool'])} is defined differently in the definitions given "
                "here than when instance "
                f"{instance} asked for approval (its binding, its MCP server, effect or side "
                "effect has changed): an approval is of the tool as the request showed it. "
                "Approve with the definitions the instance ran with, or resume it with these "
                "first: it then asks again, for the tool as they define it"
            )
        triples.append((node, HORIS.implementation, Literal(now)))
    elif asked is not None:
        # definitions that do not define the tool (a folder given without its tools file):
        # the approval is of the tool as the request showed it. Recorded with none, it held
        # for any later definition, and a resume with the tool rebound called other code
        now = str(asked)
        triples.append((node, HORIS.implementation, Literal(now)))
    else:
        now = None
    # the approvals given since the request, not used yet, for the tool as it is now: the
    # request asked for those it lacked then (a forEach's calls of one payload, one each)
    given = [
        g.approval
        for g in since
        if not g.used and given_for(world.store, g.approval) in (None, now)
    ]
    wanted = 1 if served else _asked(latest, fp)
    if len(given) >= wanted:  # a second approve of one call would approve a second call
        raise UsageError(
            f"the payload with fingerprint {fp} is approved already for {instance} "
            + (
                "and that approval is not used yet: the agent calls again with exactly these "
                "arguments to use it"
                if served
                else f"({len(given)} approval{'s' if len(given) > 1 else ''} for the "
                f"{wanted} call{'s' if wanted > 1 else ''} it waits for): resume the instance"
            )
            + "; an approval is good for one call, so approving again would let one more "
            "call go out"
        )
    try:
        world.commit(
            Change(
                add=[(s, p, o, graph) for s, p, o in triples],
                absent=((node, RDF.type, HORIS.Approval, graph),),
            )
        )
    except Conflict:
        raise UsageError(
            f"another approval of the payload with fingerprint {fp} for {instance} was "
            "recorded while this one was: only one of them is kept, so this one was not. Run "
            "approve again if the instance still asks for more"
        ) from None
    return {
        "instance": str(instance),
        "tool": str(latest["tool"]),
        "fingerprint": fp,
        "payload": payloads[fp],
        "graph": str(graph),
        "operator": approver,
        **({"code": str(code)} if code is not None else {}),
    }


def _requests(store: Store, instance: URIRef) -> list[dict[str, Node]]:
    """The approval requests the instance's steps left, newest last by start time."""
    return store.select(
        """SELECT ?request ?step ?tool ?started ?payloads ?asked ?counts ?code WHERE {
        ?request horis:instance ?i ; horis:step ?step ; horis:tool ?tool ;
           horis:fingerprint ?fp ; prov:startedAtTime ?started ; rdfs:comment ?payloads .
        ?g prov:wasGeneratedBy ?request .
        FILTER (STRSTARTS(STR(?g), "urn:horismos:approval:"))
        OPTIONAL { ?request horis:implementation ?asked }
        OPTIONAL { ?request horis:approvalsAsked ?counts }
        OPTIONAL { ?request horis:code ?code } }""",
        {"i": instance},
        _NS,
    )


def _lapsed(store: Store, instance: URIRef, fp: str) -> str | None:
    """When the approval of ``fp`` given for ``instance`` that lapsed was given, if one did
    (:func:`pending`)."""
    rows = store.select(
        """SELECT ?at WHERE { ?a horis:instance ?i ; horis:fingerprint ?fp ;
           horis:lapsed true ; prov:startedAtTime ?at } ORDER BY DESC(?at) LIMIT 1""",
        {"i": instance, "fp": Literal(fp)},
        _NS,
    )
    return str(rows[0]["at"]) if rows else None


def _waits_at(store: Store, instance: URIRef, step: Node) -> bool:
    """Whether ``instance`` is waiting at ``step`` now (for an approval, at an ActionStep)."""
    return bool(
        store.select(
            f"""SELECT ?i WHERE {{ GRAPH <{INSTANCES}> {{
            ?i horis:status horis:Waiting ; horis:currentStep ?step }} }} LIMIT 1""",
            {"i": instance, "step": step},
            _NS,
        )
    )


def _after(at: Node, since: Node) -> bool:
    """Whether the time ``at`` is at or after ``since`` (both ``xsd:dateTime`` literals)."""
    a, b = cast(Literal, at).toPython(), cast(Literal, since).toPython()
    if isinstance(a, dt.datetime) and isinstance(b, dt.datetime):
        return a >= b
    return str(at) >= str(since)
