"""What a runner is given and what it keeps while it drives instances: one base for its parts.

The runner is one class composed of parts, each a module of one concept: recording a step
(:mod:`._step_records`), calling a tool and gating its result (:mod:`._tool_calls`), an action
step with its holds and doubts (:mod:`._action_steps`), and driving instances
(:mod:`._runner`). Each part inherits the one below it and calls only what it inherits, so no
part imports the runner; methods resolve on the one class, so a step pays no extra call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from rdflib import URIRef

from ._bindings import Binding, McpSessions
from ._definitions import Definitions
from ._environment import Environment
from ._gate import Gate
from ._model import McpServer
from ._model_clients import ModelClients
from ._policy import Policy
from ._prechecks import Prechecks
from ._process_identity import RanBy, ran_by, started_by_terms
from ._records import InstanceRun, StepRecord
from ._stores.base import ReadAhead
from ._trace import TRACE_VERSION, Trace
from ._world import World

__all__ = ["RunnerState"]


class RunnerState:
    """A runner's inputs and per-run state (:class:`~._runner.Runner` composes its parts on it)."""

    _ran_by: RanBy | None
    _started_by: list[tuple[URIRef, Any]]

    @property
    def ran_by(self) -> RanBy | None:
        """The process that runs this run (host, pid, lane: :mod:`._process_identity`), as its
        trace's header records it and each instance it starts stores it; a replay's is the
        recorded one (None for a trace recorded before: nothing of it written)."""
        return self._ran_by

    @ran_by.setter
    def ran_by(self, said: RanBy | None) -> None:
        self._ran_by = said
        self._started_by = started_by_terms(said)  # the terms built once a run

    def __init__(
        self,
        defs: Definitions,
        gate: Gate,
        *,
        world: World,
        trace: Trace,
        registry: Mapping[str, Callable[..., Any]],
        env: Environment,
        mcp_servers: Mapping[str, McpServer] | None = None,
        policy: Policy | None = None,
        prechecks: Prechecks | None = None,
    ) -> None:
        """``world`` is the world as this run reads it: a live run's store records every
        answer in the trace (:class:`~horismos._reads.RecordingStore`), a replay's serves the
        recorded ones (:class:`~horismos._reads.ReplayedStore`). ``policy``: what its steps
        may call (:mod:`._policy`). ``prechecks``: the agent's answers to the checks before
        a first step that depend on its definitions alone (:mod:`._prechecks`)."""
        self.defs = defs
        self.prechecks = prechecks if prechecks is not None else Prechecks(defs)
        self.policy = policy or Policy()  # side effects allowed, approvals given (_policy)
        self.gate = gate
        self.world = world
        self.store = world.store
        self.trace = trace
        self.registry = registry
        self.env = env
        self._bindings: dict[URIRef, Binding] = {}
        self.mcp = McpSessions.for_definitions(defs, mcp_servers)  # one session a server a run
        self.models = ModelClients()  # one HTTP client a ranking model's endpoint a run
        # per instance while it is driven, dropped when it stops: a batch stays flat in memory
        self._pending: dict[URIRef, list[tuple]] = {}
        self._dropped: dict[URIRef, list[tuple]] = {}  # projections an adapter commit replaces
        self._state: dict[URIRef, list[tuple]] = {}
        # a new instance's type, workflow and focus, until its first commit lands them
        self._fresh: dict[URIRef, list[tuple]] = {}
        self.ran_by = ran_by()
        self._recovered: set[URIRef] = set()  # instances whose state was read from the store
        self._intent_at: dict[URIRef, URIRef] = {}  # a catalog call's intent node (call_tool)
        self._keyed: dict[URIRef, list[tuple]] = {}  # a catalog call's idempotency key record
        # the former IRIs of the tools renamed while a call of theirs was in doubt, read once
        # a runner, at its first call of a tool that is not idempotent (_renamed_tools)
        self._formers: dict[URIRef, tuple[URIRef, ...]] | None = None
        self.calls_in_doubt = 5
        """Which rules hold calls of a tool that is not idempotent in doubt (see _intents), as
        a trace's header says: 5, as 4, and a call with no subject is kept by its integers'
        and decimals' values across their datatypes (``12`` and ``12.0`` one key), and looked
        for under the keys versions before kept it at (:func:`._intents.former_doubt_keys`);
        4, as 3, and a call kept in doubt records the binding it was
        made through, which the run reads once, at its first such call, so that a tool renamed
        since is held under its former IRI too (:mod:`._renamed_tools`); 3, as 2, and an
        adapter-bound step's commit whose outcome is unknown (before, only its own instance's
        intent stood in the way, and the next run sent a create again); 2, a call that may
        have acted and never landed — sent and never answered, or answered and its result not
        landed (the gate rejected it, a later call of its horis:forEach failed) — and a step
        holds the node it acts on while it calls; 1 (``true``), recorded before answered calls
        were held: only a step never answered, all of its calls; 0 (absent), recorded before
        any was. A replay follows the trace's, or
        its commits and reads would not be the recorded ones."""
        self.approvals_bound = 4
        """Whether an approval holds only for the tool's definition it was given for (see
        :func:`._policy.implementation`), as a trace's header says: 4, as 3, and an approval
        not used yet lapses when its step asks for other payloads (:func:`._policy.pending`);
        3, its MCP server's
        declaration included, and a request records how many approvals each payload asks
        for (``horis:approvalsAsked``); 2, recorded before requests counted them; 1
        (``true``), before the server counted; 0 (absent), before approvals were bound at
        all: made none of those reads, and its requests recorded none."""
        self.names_shapes = True
        """Whether a rejection by the domain shapes says so, as a trace's header says; one
        recorded before said the result broke the tool's declared effect, and an instance it
        failed holds those words (``horis:error``), which its replay must write again."""
        self.blocked_at = True
        """Whether a blocked instance stores since when (``horis:blockedAt``), as a trace's
        header says; one recorded before stored no time, and its replay must not either."""
        self.failed_at = True
        """Whether a failed instance stores since when (``horis:failedAt``: its failing
        step's start, no second reading of the clock), as a trace's header says; one
        recorded before stored no time (``instances`` said ``-``), and its replay must not
        either."""
        self.error_kinds = True
        """Whether a failed instance stores its error's kind (``horis:errorKind``), as a
        trace's header says, so one read back (``again=False``) answers the error's class;
        one recorded before stored none, and its replay must not either."""
        self.block_kinds = True
        """Whether a blocked instance stores why, by kind, as a failed one does
        (``horis:errorKind``: ``precondition`` for a pattern that does not hold, else its
        refusal's, ``policy``, ``broken_already``, ``in_flight``), as a trace's header says;
        one recorded before stored none, and its replay must not either."""
        self.blocks_unreached = True
        """Whether a step whose call did not reach its endpoint (:class:`~horismos.Unreachable`:
        nothing was sent) and that declares no ``horis:onError`` blocks its instance, to be
        tried again once the endpoint answers, as a trace's header says; one recorded before
        failed it for good, and its replay must too."""
        self.settled_holders: (
            Callable[[list[URIRef], float, URIRef], Awaitable[list[list[list[str]]]]] | None
        )
        self.settled_holders = None
        """On a world other processes share: who holds each doubt node, read once every hold
        that raced with this step's (landed at the time given) has landed too, and which of
        them decided to call (:meth:`._claims.Worker.settled_holders`); see
        :func:`._intents.yields_to`."""
        self.keep_subject: Callable[[URIRef], Callable[[], object]] | None = None
        """On a world other processes share: hold a subject, as a catalog call being made
        does, until what this returns is called (:func:`._claims.keep_subject`): a step's call
        abandoned at its timeout keeps its subject so while its function acts on."""
        self.holds_settled = 0
        """Which holds a step settles, then asks who else holds (a live run on a shared world,
        or the replay of one, as its header says; the answers are recorded): 4, as 3, and a
        step that goes first reads its preconditions again before it calls
        (:meth:`_gone_since_read`); 3, those on any node but its focus, and those on its
        focus too when the tool is called by steps of several workflows (each run holds only
        its own workflow's claim on the focus) or by a step on a node that need not be its
        focus (whose hold settles, while the run whose focus it is holds only its claim
        there); 2, recorded before the latter; 1 (``true``), before the focus was: any node
        but its focus; 0, none."""
        self.trace_version = TRACE_VERSION
        """Which quads a step's activity writes, as a trace's header says: 3, the eight that
        say something (:func:`_activity`); 2, recorded before, four more that the vocabulary
        entails or another quad repeats (:func:`_activity_v2`), which its replay must write
        again to reach its recorded digests."""
        self._types_of = self.store.types
        self._aheads: dict[URIRef, ReadAhead] = {}
        self._policies: dict[URIRef, dict[str, Any]] = {}
        self.counts: dict[str, int] = {}
        """How many instances this run left in each status."""
        self.on_step: Callable[[InstanceRun, StepRecord], None] | None = None
        """Called with each step's record once it has landed (``horismos run`` prints it)."""

    @property
    def binds_doubts(self) -> bool:
        """Whether a call kept in doubt records the binding it was made through and a tool
        renamed since is held under its former IRI too (``calls_in_doubt`` 4 on)."""
        return self.calls_in_doubt > 3

    @property
    def keys_across(self) -> bool:
        """Whether a call with no subject is kept in doubt by its numbers' values across their
        datatypes (:func:`._intents.doubt_key`; ``calls_in_doubt`` 5 on): a replay of a run
        recorded before writes its marks where that run did."""
        return self.calls_in_doubt > 4
